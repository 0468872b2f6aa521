# SPDX-License-Identifier: MIT
# Guest programs for the VM rig: tests/vm/guest/src/NAME.c -> $(O)/vm/bin/NAME.
# Dynamically linked (PIE, like real targets); run.sh copies their libraries.
# Linked with libmtrace so that checkers can read bundles with the real reader.
VM_GUEST_SRCS := $(wildcard tests/vm/guest/src/*.c)
VM_GUEST_BINS := $(VM_GUEST_SRCS:tests/vm/guest/src/%.c=$(O)/vm/bin/%)

$(O)/vm/bin/%: tests/vm/guest/src/%.c $(BPF_SKELS) $(O)/rel/libmtrace.a $(wildcard tests/vm/guest/src/*.h)
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(CPPFLAGS_USER) -std=gnu11 -Wall -Wextra -Werror -O1 -g -o $@ $(filter %.c,$^) $(O)/rel/libmtrace.a $(LDLIBS_USER)

# pftrace_check replays Perfetto's import rules with the unit tests' reader.
$(O)/vm/bin/pftrace_check: tests/perfetto/pf_reader.c tests/perfetto/pf_wire.c $(wildcard tests/perfetto/pf_*.h)
$(O)/vm/bin/pftrace_check: private CPPFLAGS_USER += -Itests/perfetto

TEST_PREREQS += $(VM_GUEST_BINS)
