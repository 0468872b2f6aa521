// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mtrace_freeze() kfunc for BPF programs. Kprobe-type programs (which
 * includes uprobes) may call module kfuncs through their own hook from
 * 6.10 and through the common hook before that (6.2+); 6.1 has no way, so
 * there the kfunc is left out and user space freezes through the ioctl.
 * Registration needs module BTF (CONFIG_DEBUG_INFO_BTF_MODULES and pahole
 * at build time); without it the kernel accepts the set but ignores it, so
 * users check /sys/kernel/btf/mtrace.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>

#include "mtrace_compat.h"
#include "mtrace_internal.h"

#ifdef MTRACE_HAVE_KFUNC

#ifdef __bpf_kfunc_start_defs
__bpf_kfunc_start_defs();
#else
__diag_push();
__diag_ignore_all("-Wmissing-prototypes",
		  "kfuncs are called from BPF programs only");
#endif

/* Freezes the armed snapshot; see MTRACE_IOC_FREEZE for the values. */
__bpf_kfunc int mtrace_freeze(u64 cookie)
{
	return mtrace_freeze_now(MTRACE_PATH_KFUNC, cookie);
}

#ifdef __bpf_kfunc_end_defs
__bpf_kfunc_end_defs();
#else
__diag_pop();
#endif

#ifdef BTF_KFUNCS_START
BTF_KFUNCS_START(mtrace_kfunc_ids)
BTF_ID_FLAGS(func, mtrace_freeze)
BTF_KFUNCS_END(mtrace_kfunc_ids)
#else
BTF_SET8_START(mtrace_kfunc_ids)
BTF_ID_FLAGS(func, mtrace_freeze)
BTF_SET8_END(mtrace_kfunc_ids)
#endif

static const struct btf_kfunc_id_set mtrace_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &mtrace_kfunc_ids,
};

/*
 * Kernels before 6.10 have no kprobe hook and refuse it with -EINVAL; the
 * common hook (any program type) is their only way to uprobe programs.
 */
int mtrace_kfunc_register(void)
{
	int err = register_btf_kfunc_id_set(BPF_PROG_TYPE_KPROBE,
					    &mtrace_kfunc_set);

	if (err == -EINVAL)
		err = register_btf_kfunc_id_set(BPF_PROG_TYPE_UNSPEC,
						&mtrace_kfunc_set);
	mtrace_kfunc_ok = !err;
	return err;
}

#else

int mtrace_kfunc_register(void)
{
	return 0;
}

#endif
