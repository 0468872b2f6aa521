# SPDX-License-Identifier: MIT
#
# mtrace build. `make` builds everything this machine can build:
#   mtrace-user and libmtrace (user/), the BPF trigger objects and their
#   skeletons (bpf/), and mtrace.ko against KDIR (kmod/, via Kbuild).
# `make check` runs every test suite; `make help` lists the targets.

VERSION := $(shell cat VERSION)
O ?= build
KDIR ?= /lib/modules/$(shell uname -r)/build
PREFIX ?= /usr/local
DESTDIR ?=
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
# BTF used to generate vmlinux.h for the CO-RE BPF programs.
VMLINUX_BTF ?= $(firstword $(wildcard /sys/kernel/btf/vmlinux) \
	$(wildcard $(O)/kernels/*/usr/src/linux-headers-*/vmlinux))

ifeq ($(V),1)
Q :=
else
Q := @
endif

CPPFLAGS_USER := -D_GNU_SOURCE -Iinclude -Iuser -I$(O)/bpf -DMTRACE_VERSION='"$(VERSION)"'
CFLAGS_USER := -std=gnu11 -Wall -Wextra -Werror -g -fno-omit-frame-pointer -MMD -MP
CFLAGS_REL := -O2
# Tests run against an ASan/UBSan build of the same sources.
CFLAGS_SAN := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
LDLIBS_USER := -lbpf -lipt -ldw -lelf -liberty -lcapstone -ldeflate -lzstd -lz -lpthread -lm

# Components are directories under user/; everything but user/cli/ forms libmtrace.
LIB_SRCS := $(filter-out user/cli/%,$(wildcard user/*/*.c))
CLI_SRCS := $(wildcard user/cli/*.c)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(O)/bpf/%.bpf.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(O)/bpf/%.skel.h)

.PHONY: all user bpf kmod check check-unit check-host check-vm check-kmod check-fuzz bench deps \
	install uninstall clean help demo
.DELETE_ON_ERROR:
.SECONDARY:

all: user kmod

help:
	@echo 'make              build mtrace-user, libmtrace, BPF objects and (if KDIR exists) mtrace.ko'
	@echo 'make KDIR=DIR     build the module against the kernel headers in DIR'
	@echo 'make deps         install every Debian package the build, tests and VM rig need'
	@echo 'make check        run every test suite (unit, host, kernel-compile, VM)'
	@echo 'make check-unit   unit tests only (ASan/UBSan)'
	@echo 'make check-host   host tests only (CLI, BPF triggers on this kernel, install)'
	@echo 'make check-vm     the QEMU VM suite only'
	@echo 'make check-kmod   compile the module against Debian 6.1 and 6.12 headers (W=1)'
	@echo 'make check-fuzz   run each libFuzzer target briefly (FUZZ_SECONDS=N, default 30)'
	@echo 'make bench        build and run the benchmarks in bench/'
	@echo 'make demo         the whole product in a QEMU guest (no Intel PT needed):'
	@echo '                  writes demo.pftrace and demo-summary.txt here'
	@echo 'make install      install mtrace-user, man page, BPF objects; module via DKMS'
	@echo 'make uninstall    undo make install'

deps:
	scripts/install-deps.sh

# ---- BPF -------------------------------------------------------------------
bpf: $(BPF_OBJS) $(BPF_SKELS)

$(O)/bpf/vmlinux.h:
	$(Q)mkdir -p $(@D)
	$(Q)test -n "$(VMLINUX_BTF)" || { echo "mtrace: no kernel BTF found for vmlinux.h (set VMLINUX_BTF=FILE)" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/bpf/vmlinux.h $(wildcard bpf/*.h) include/uapi/linux/mtrace.h
	@echo '  BPF     $@'
	$(Q)$(CLANG) -g -O2 -Wall -Werror -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 \
		-I$(O)/bpf -Ibpf -Iinclude -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	@echo '  SKEL    $@'
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- user space ------------------------------------------------------------
user: $(O)/mtrace-user

# Sources in a directory where any file includes a BPF skeleton need the
# skeletons generated before they compile (afterwards the .d files track
# them); the others do not wait for BPF.
SKEL_DIRS := $(sort $(dir $(shell grep -l 'skel\.h"' $(wildcard user/*/*.[ch] tests/*/*.[ch] \
	tests/*/*/*.[ch] bench/*.[ch]) /dev/null)))
SKEL_USERS := $(filter-out /dev/%,$(wildcard $(addsuffix *.c,$(SKEL_DIRS))))
$(foreach v,rel san fuzz,$(SKEL_USERS:%.c=$(O)/$(v)/%.o)): | $(BPF_SKELS)

# The decoder and the Perfetto writer run for every block and event: -O3
# there takes 3 % off the CPU time of a decode, output unchanged
# (docs/benchmarks.md). Elsewhere it buys nothing measurable.
$(O)/rel/user/decode/%.o $(O)/rel/user/perfetto/%.o $(O)/rel/user/out_perfetto/%.o: \
	CFLAGS_REL := -O3

$(O)/rel/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(CPPFLAGS_USER) $(CFLAGS_USER) $(CFLAGS_REL) -c $< -o $@

$(O)/san/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CC      $@'
	$(Q)$(CC) $(CPPFLAGS_USER) $(CFLAGS_USER) $(CFLAGS_SAN) -c $< -o $@

$(O)/rel/libmtrace.a: $(LIB_SRCS:%.c=$(O)/rel/%.o)
$(O)/san/libmtrace.a: $(LIB_SRCS:%.c=$(O)/san/%.o)
$(O)/rel/libmtrace.a $(O)/san/libmtrace.a:
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/mtrace-user: $(CLI_SRCS:%.c=$(O)/rel/%.o) $(O)/rel/libmtrace.a
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_REL) -o $@ $^ $(LDLIBS_USER)

$(O)/san/mtrace-user: $(CLI_SRCS:%.c=$(O)/san/%.o) $(O)/san/libmtrace.a
	@echo '  LD      $@'
	$(Q)$(CC) $(CFLAGS_USER) $(CFLAGS_SAN) -o $@ $^ $(LDLIBS_USER)

# ---- fuzzing (libFuzzer needs clang; a third build of libmtrace) ---------
CFLAGS_FUZZ := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer -MMD -MP \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

$(O)/fuzz/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CLANG   $@'
	$(Q)$(CLANG) $(CPPFLAGS_USER) $(CFLAGS_FUZZ) -c $< -o $@

$(O)/fuzz/libmtrace.a: $(LIB_SRCS:%.c=$(O)/fuzz/%.o)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- kernel module ---------------------------------------------------------
# Built in a copy under $(O) so that several kernels can be built side by
# side and the source tree stays free of Kbuild's objects.
kmod:
	$(Q)if [ -d "$(KDIR)" ]; then scripts/build-kmod.sh "$(KDIR)" $(O)/kmod/default; \
	else echo "mtrace: no kernel build directory at $(KDIR): skipping mtrace.ko (use make KDIR=...)"; fi

include tests/tests.mk
include bench/bench.mk

# The end-to-end scenario in the VM (tests/e2e/demo.sh); the PT bytes there
# come from the PT generator, as the guest has no Intel PT.
demo: $(O)/mtrace-user $(VM_GUEST_BINS) $(O)/vm/bin/ptgen $(E2E_BINS)
	$(Q)O=$(O) tests/e2e/demo.sh

# ---- install ---------------------------------------------------------------
install: user
	scripts/install.sh install "$(DESTDIR)" "$(PREFIX)" "$(O)" "$(VERSION)"

uninstall:
	scripts/install.sh uninstall "$(DESTDIR)" "$(PREFIX)" "$(O)" "$(VERSION)"

clean:
	rm -rf $(O)

-include $(shell find $(O)/rel $(O)/san $(O)/fuzz -name '*.d' 2>/dev/null)
