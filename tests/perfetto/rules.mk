# SPDX-License-Identifier: MIT
#
# The Perfetto writer's unit tests (tests/unit/test_perfetto_*.c) share the
# trace reader and helpers in this directory.
PF_TEST_HELPERS := $(patsubst %.c,$(O)/san/%.o,$(wildcard tests/perfetto/*.c))
$(filter $(O)/san/tests/unit/test_perfetto_%,$(UNIT_BINS)): $(PF_TEST_HELPERS)
