# SPDX-License-Identifier: MIT
# Programs the host tests run: tests/host/targets/ -> $(O)/tests/host/targets/.
# Targets are plain optimised programs (what users trace); the trigger test
# driver links the sanitized libmtrace so the loader runs under ASan/UBSan.
HOST_TARGET_DIR := $(O)/tests/host/targets
HOST_TARGET_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer

$(HOST_TARGET_DIR)/trig_target: tests/host/targets/trig_target.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(HOST_TARGET_CFLAGS) -o $@ $< -lpthread -ldl

$(HOST_TARGET_DIR)/libtrig_lib.so: tests/host/targets/trig_lib.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(HOST_TARGET_CFLAGS) -fPIC -shared -o $@ $<

$(HOST_TARGET_DIR)/trigger_driver: $(O)/san/tests/host/targets/trigger_driver.o $(O)/san/libmtrace.a
	@mkdir -p $(@D)
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_SAN) -o $@ $^ $(LDLIBS_USER)

TEST_PREREQS += $(HOST_TARGET_DIR)/trig_target $(HOST_TARGET_DIR)/libtrig_lib.so \
	$(HOST_TARGET_DIR)/trigger_driver
