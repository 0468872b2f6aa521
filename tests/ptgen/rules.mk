# SPDX-License-Identifier: MIT
#
# PT generator (test tool): single-steps small programs, generates the PT
# packets user-only tracing would produce, and checks them with libipt.
#   $(O)/san/tests/ptgen/ptg_roundtrip   round-trip test (in TEST_PROGRAMS)
#   $(O)/rel/tests/ptgen/ptgen           the generator command line tool
#   $(O)/rel/tests/ptgen/ptg_bench       generator speed against libipt's decoder
# Test programs are built into programs/ next to each binary, with -O1
# -fno-inline (small, readable call trees; inline.c: -O2) and -z now (no
# lazy-binding resolver to single-step through), except lazyplt.

PTG_DIR := tests/ptgen
PTG_MAINS := $(PTG_DIR)/ptgen.c $(PTG_DIR)/ptg_roundtrip.c $(PTG_DIR)/ptg_bench.c
PTG_LIB_SRCS := $(filter-out $(PTG_MAINS),$(wildcard $(PTG_DIR)/ptg_*.c))
PTG_PROGRAMS := $(basename $(notdir $(wildcard $(PTG_DIR)/programs/*.c)))
PTG_CXX_PROGRAMS := $(basename $(notdir $(wildcard $(PTG_DIR)/programs/*.cc)))

PTG_PROG_FLAGS := -Wall -Wextra -Werror -g -O1 -fno-inline -Wl,-z,now
PTG_PROG_CFLAGS := -std=gnu11 $(PTG_PROG_FLAGS)
# Sibling-call optimisation is what makes tail calls; -O1 leaves it off.
PTG_PROG_CFLAGS_tailcall := -foptimize-sibling-calls
# This one runs the lazy-binding resolver on purpose (the last -z wins).
PTG_PROG_CFLAGS_lazyplt := -Wl,-z,lazy
# The inline frames test needs code inlined as an optimising build does.
PTG_PROG_CFLAGS_inline := -O2 -finline

define ptg_variant
# The library the dlopen program loads, next to it.
$(O)/$(1)/tests/ptgen/programs/libptgdl.so: $(PTG_DIR)/programs/lib/ptgdl.c
	@mkdir -p $$(@D)
	@echo '  CC      $$@'
	$(Q)$(CC) $(PTG_PROG_CFLAGS) -fPIC -shared -o $$@ $$<

$(O)/$(1)/tests/ptgen/programs/dlopen: $(O)/$(1)/tests/ptgen/programs/libptgdl.so

$(O)/$(1)/tests/ptgen/programs/%: $(PTG_DIR)/programs/%.c
	@mkdir -p $$(@D)
	@echo '  CC      $$@'
	$(Q)$(CC) $(PTG_PROG_CFLAGS) $$(PTG_PROG_CFLAGS_$$*) -o $$@ $$< -lpthread

# C++ programs (exceptions).
$(O)/$(1)/tests/ptgen/programs/%: $(PTG_DIR)/programs/%.cc
	@mkdir -p $$(@D)
	@echo '  CXX     $$@'
	$(Q)$(CXX) -std=gnu++17 $(PTG_PROG_FLAGS) -o $$@ $$<

# The random-walk tests need an executable that is not position independent.
$(O)/$(1)/tests/ptgen/programs/%-nopie: $(PTG_DIR)/programs/%.c
	@mkdir -p $$(@D)
	@echo '  CC      $$@'
	$(Q)$(CC) $(PTG_PROG_CFLAGS) -fno-pie -no-pie -o $$@ $$< -lpthread

$(O)/$(1)/tests/ptgen/ptg_roundtrip: $(O)/$(1)/$(PTG_DIR)/ptg_roundtrip.o \
		$(PTG_LIB_SRCS:%.c=$(O)/$(1)/%.o) $(O)/$(1)/libmtrace.a \
		$(PTG_PROGRAMS:%=$(O)/$(1)/tests/ptgen/programs/%) \
		$(PTG_CXX_PROGRAMS:%=$(O)/$(1)/tests/ptgen/programs/%) \
		$(O)/$(1)/tests/ptgen/programs/indirect-nopie \
		$(O)/$(1)/tests/ptgen/programs/libptgdl.so
	@echo '  LD      $$@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_$(2)) -o $$@ $$(filter %.o %.a,$$^) $(LDLIBS_USER)

$(O)/$(1)/tests/ptgen/ptgen: $(O)/$(1)/$(PTG_DIR)/ptgen.o $(PTG_LIB_SRCS:%.c=$(O)/$(1)/%.o) \
		$(O)/$(1)/libmtrace.a
	@echo '  LD      $$@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_$(2)) -o $$@ $$(filter %.o %.a,$$^) $(LDLIBS_USER)
endef

$(O)/rel/tests/ptgen/ptg_bench: $(O)/rel/$(PTG_DIR)/ptg_bench.o \
		$(PTG_LIB_SRCS:%.c=$(O)/rel/%.o) $(O)/rel/libmtrace.a
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_REL) -o $@ $(filter %.o %.a,$^) $(LDLIBS_USER)

$(eval $(call ptg_variant,san,SAN))
$(eval $(call ptg_variant,rel,REL))

TEST_PROGRAMS += $(O)/san/tests/ptgen/ptg_roundtrip
BENCH_BINS += $(O)/rel/tests/ptgen/ptg_bench

# The generator in the VM guest: its kernel mode walks the guest kernel's own
# text, captured there (tests/vm/guest/tests.d/05-kcore-kwalk.sh), and the
# end-to-end test feeds its walks to the simulated rings (70-e2e.sh). The rig
# packs every program in $(O)/vm/bin with the libraries it needs.
$(O)/vm/bin/ptgen: $(O)/rel/tests/ptgen/ptgen
	@mkdir -p $(@D)
	@echo '  CP      $@'
	$(Q)cp $< $@

TEST_PREREQS += $(O)/vm/bin/ptgen
