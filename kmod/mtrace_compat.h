/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences between the releases the module builds for
 * (Debian's 6.1 and 6.12 and current upstream). Every version test of the
 * module lives here. MSRs are accessed through the 32-bit rdmsr_safe() /
 * wrmsr_safe() forms, which kept their names when the 64-bit helpers were
 * renamed (rdmsrl -> rdmsrq, 6.16), so they need no shim.
 */
#ifndef MTRACE_COMPAT_H
#define MTRACE_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

/* Largest buddy order: MAX_ORDER became inclusive in 6.4, renamed in 6.8. */
#if KERNEL_VERSION(6, 8, 0) <= LINUX_VERSION_CODE
#define MTRACE_MAX_ORDER	MAX_PAGE_ORDER
#elif KERNEL_VERSION(6, 4, 0) <= LINUX_VERSION_CODE
#define MTRACE_MAX_ORDER	MAX_ORDER
#else
#define MTRACE_MAX_ORDER	(MAX_ORDER - 1)
#endif

/* vm_flags became read-only behind accessors in 6.3. */
static inline void mtrace_vm_flags_mod(struct vm_area_struct *vma,
				       vm_flags_t set, vm_flags_t clear)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * Kprobe-type (and so uprobe) BPF programs can call module kfuncs through
 * the common hook from 6.2 and through the kprobe hook from 6.10.
 */
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE && \
	IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES)
#define MTRACE_HAVE_KFUNC	1
#if KERNEL_VERSION(6, 10, 0) <= LINUX_VERSION_CODE
#define MTRACE_KFUNC_PROG_TYPE	BPF_PROG_TYPE_KPROBE
#else
#define MTRACE_KFUNC_PROG_TYPE	BPF_PROG_TYPE_UNSPEC
#endif
/* 6.2 predates the tag; the kfunc also spells out __used noinline. */
#ifndef __bpf_kfunc
#define __bpf_kfunc
#endif
#endif

#endif /* MTRACE_COMPAT_H */
