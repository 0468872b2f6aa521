# SPDX-License-Identifier: MIT
# The uapi layout as x86-64, i386 and x32 see it (tests/unit/uapi_layout.c,
# compiled to assembly only; -m32/-mx32 need the gcc-multilib headers).
UAPI_ABIS := m64 m32 mx32

$(O)/uapi-layout/%.h: tests/unit/uapi_layout.c include/uapi/linux/mtrace.h
	@mkdir -p $(@D)
	@echo '  LAYOUT  $@'
	$(Q)$(CC) -$* -std=gnu11 -O0 -Iinclude -S -o $(@:.h=.s) $< || \
		{ echo "mtrace: cannot compile for -$* (install gcc-multilib: make deps)" >&2; exit 1; }
	$(Q)grep -o 'MT_[A-Z]*(.*)' $(@:.h=.s) > $@

$(O)/san/tests/unit/test_uapi_layout.o: $(UAPI_ABIS:%=$(O)/uapi-layout/%.h)
$(O)/san/tests/unit/test_uapi_layout.o: CPPFLAGS_USER += -I$(O)/uapi-layout
