# SPDX-License-Identifier: MIT
#
# Test build rules. Every test program prints one line per case,
# "PASS name", "FAIL name: why" or "SKIP name: why"; tests/check.sh runs the
# suites and tallies those lines into the closing "N passed, N failed" line.
#
# Suites:
#   unit  ASan/UBSan binaries in TEST_PROGRAMS (tests/unit/test_*.c and
#         whatever tests/*/rules.mk fragments add)
#   host  scripts tests/host/*.sh (CLI, BPF on the host kernel, install)
#   kmod  module compile check against Debian 6.1 and 6.12 headers, W=1
#   vm    the QEMU rig, tests/vm/run.sh
#   fuzz  each libFuzzer target tests/fuzz/fuzz_*.c for FUZZ_SECONDS over its
#         seed corpus tests/fuzz/corpus/NAME/

TEST_PROGRAMS :=
TEST_PREREQS := $(O)/mtrace-user $(O)/san/mtrace-user

# Test sources include "mt_test.h" and their own directory's headers.
$(O)/san/tests/%.o $(O)/fuzz/tests/%.o: CPPFLAGS_USER += -Itests/lib -I$(dir $*)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/san/tests/unit/%)
TEST_PROGRAMS += $(UNIT_BINS)

$(O)/san/tests/unit/%: $(O)/san/tests/unit/%.o $(O)/san/tests/lib/mt_test_main.o $(O)/san/libmtrace.a
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_SAN) -o $@ $^ $(LDLIBS_USER)

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/bin/%)

$(O)/fuzz/bin/%: $(O)/fuzz/tests/fuzz/%.o $(O)/fuzz/libmtrace.a
	@mkdir -p $(@D)
	@echo '  LD      $@'
	$(Q)$(CLANG) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS_USER)

-include $(wildcard tests/*/rules.mk)

# The decoder's ground-truth test runs the PT generator tool.
$(O)/san/tests/unit/test_decode_truth: | $(O)/rel/tests/ptgen/ptgen
# So does the comparison with perf's decoder.
$(O)/san/tests/unit/test_perf_judge: | $(O)/rel/tests/ptgen/ptgen
$(O)/san/tests/unit/test_perfdata: | $(O)/rel/tests/ptgen/ptgen
$(O)/san/tests/unit/test_perfetto_decode_late: | $(O)/rel/tests/ptgen/ptgen
$(O)/san/tests/unit/test_decode_stream: | $(O)/rel/tests/ptgen/ptgen
$(O)/san/tests/unit/test_perfdata_dir: | $(O)/rel/tests/ptgen/ptgen

TEST_PREREQS += $(TEST_PROGRAMS) $(FUZZ_BINS)
FUZZ_SECONDS ?= 30
CHECK_ENV = O=$(O) TEST_PROGRAMS="$(TEST_PROGRAMS)" FUZZ_BINS="$(FUZZ_BINS)" FUZZ_SECONDS=$(FUZZ_SECONDS)

check: $(TEST_PREREQS)
	$(Q)$(CHECK_ENV) tests/check.sh unit host fuzz kmod vm

check-unit: $(TEST_PROGRAMS)
	$(Q)$(CHECK_ENV) tests/check.sh unit

check-host: $(TEST_PREREQS)
	$(Q)$(CHECK_ENV) tests/check.sh host

check-vm: $(TEST_PREREQS)
	$(Q)$(CHECK_ENV) tests/check.sh vm

check-kmod:
	$(Q)$(CHECK_ENV) tests/check.sh kmod

check-fuzz: $(FUZZ_BINS)
	$(Q)$(CHECK_ENV) tests/check.sh fuzz
