# SPDX-License-Identifier: MIT
#
# The runner's own test cases (tests/lib/mt_test_selftest.c), run by
# tests/host/runner.sh: not in the unit suite, one of them fails on purpose.
$(O)/san/tests/lib/mt_test_selftest: $(O)/san/tests/lib/mt_test_selftest.o \
		$(O)/san/tests/lib/mt_test_main.o
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_SAN) -o $@ $^

TEST_PREREQS += $(O)/san/tests/lib/mt_test_selftest
