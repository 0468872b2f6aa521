# SPDX-License-Identifier: MIT
#
# Benchmarks: bench/bench_NAME.c -> $(O)/bench/bench_NAME, built optimised
# against the release libmtrace. Each compares mtrace with a baseline
# measured in the same run (absolute times on shared machines mean little)
# and reports each figure as one line
#   RESULT <figure>|<value>|<target>|<met|not met>
# `make bench` runs them all and prints one table of those lines.
# BENCH_ARGS is passed to each benchmark.
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS += $(BENCH_SRCS:bench/%.c=$(O)/bench/%)

$(O)/bench/%: $(O)/rel/bench/%.o $(O)/rel/libmtrace.a
	@mkdir -p $(@D)
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_REL) -o $@ $^ $(LDLIBS_USER)

bench: $(BENCH_BINS)
	$(Q)bench/run.sh $(BENCH_BINS)

# bench_decode makes its random-walk bundles with the PT generator, and
# traces workload_disasm (a real program over Capstone) with it. Built like
# a program users trace: optimised, with symbols, bound at load time (no
# lazy-binding resolver to single-step through).
$(O)/bench/workload_disasm: bench/workload_disasm.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -Wl,-z,now -o $@ $< -lcapstone

$(O)/bench/bench_decode: | $(O)/rel/tests/ptgen/ptgen $(O)/bench/workload_disasm \
	$(O)/rel/tests/ptgen/programs/threads

# bench_perf generates its walks with the PT generator and runs mtrace-user and perf.
$(O)/bench/bench_perf: | $(O)/rel/tests/ptgen/ptgen $(O)/mtrace-user
