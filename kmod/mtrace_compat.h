/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences between the releases the module builds for
 * (Debian's 6.1 and 6.12 and current upstream), detected by the symbols
 * themselves rather than by version numbers. MSRs are accessed through the
 * 32-bit rdmsr_safe()/wrmsr_safe() forms, which kept their names when the
 * 64-bit helpers were renamed (rdmsrl -> rdmsrq, 6.16), so they need no shim.
 */
#ifndef MTRACE_COMPAT_H
#define MTRACE_COMPAT_H

#include <linux/btf.h>
#include <linux/mmzone.h>

/*
 * Largest buddy order. MAX_PAGE_ORDER (6.8+) is inclusive; the older
 * MAX_ORDER was exclusive until 6.4 and inclusive from 6.4 to 6.7, so
 * MAX_ORDER - 1 is right or one order conservative.
 */
#ifdef MAX_PAGE_ORDER
#define MTRACE_MAX_ORDER	MAX_PAGE_ORDER
#else
#define MTRACE_MAX_ORDER	(MAX_ORDER - 1)
#endif

/*
 * The mtrace_freeze kfunc needs module BTF and a kfunc hook that reaches
 * kprobe-type programs: the common hook exists from 6.2, the __bpf_kfunc
 * tag from 6.3, and 6.1 has neither, so the tag is the feature test. Which
 * hook the running kernel accepts is decided at load time.
 */
#if defined(__bpf_kfunc) && IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES)
#define MTRACE_HAVE_KFUNC	1
#endif

#endif /* MTRACE_COMPAT_H */
