# SPDX-License-Identifier: MIT
#
# The end-to-end test (tests/vm/guest/tests.d/70-e2e.sh) and `make demo`:
#   $(O)/vm/bin/e2e_app     the traced program; built like the generator's
#                           test programs, and without sibling calls or jump
#                           tables, so that a walk of its code is its call tree
#   $(O)/vm/bin/e2e_check   checks the trace against the generator's truth
E2E_APP_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-inline \
	-fno-optimize-sibling-calls -fno-jump-tables -Wl,-z,now

$(O)/vm/bin/e2e_app: tests/e2e/app.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(E2E_APP_CFLAGS) -o $@ $< -lpthread

E2E_CHECK_SRCS := tests/e2e/check.c tests/perfetto/pf_reader.c tests/perfetto/pf_wire.c

$(O)/vm/bin/e2e_check: $(E2E_CHECK_SRCS) $(wildcard tests/perfetto/*.h)
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g -D_GNU_SOURCE -Itests/perfetto -o $@ \
		$(E2E_CHECK_SRCS) -lelf -lz

E2E_BINS := $(O)/vm/bin/e2e_app $(O)/vm/bin/e2e_check
TEST_PREREQS += $(E2E_BINS)
