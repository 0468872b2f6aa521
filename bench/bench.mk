# SPDX-License-Identifier: MIT
#
# Benchmarks: bench/bench_NAME.c -> $(O)/bench/bench_NAME, built optimised
# against the release libmtrace. Each prints the ratio of mtrace's figure to
# a baseline measured in the same run (absolute times on shared machines
# mean little). `make bench` runs them all; BENCH_ARGS is passed to each.
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(O)/bench/%)

$(O)/bench/%: $(O)/rel/bench/%.o $(O)/rel/libmtrace.a
	@mkdir -p $(@D)
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_REL) -o $@ $^ $(LDLIBS_USER)

bench: $(BENCH_BINS)
	$(Q)set -e; for b in $(BENCH_BINS); do echo "== $$b"; $$b $(BENCH_ARGS); done
