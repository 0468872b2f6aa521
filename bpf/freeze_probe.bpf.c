// SPDX-License-Identifier: GPL-2.0-only
/*
 * Minimal trigger: a uprobe whose every hit freezes the mtrace snapshot
 * through the module's kfunc, in the probed thread's context. Used by the
 * module's VM test; the full trigger programs sit next to it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Exported by mtrace.ko (module BTF); see include/uapi/linux/mtrace.h. */
extern int mtrace_freeze(__u64 cookie) __ksym;

const volatile __u64 freeze_cookie;

int freeze_result = 1;	/* 1: never ran */
__u32 hits;

SEC("uprobe")
int freeze_on_hit(struct pt_regs *ctx)
{
	freeze_result = mtrace_freeze(freeze_cookie);
	hits++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
