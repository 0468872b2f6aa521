// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mtrace_freeze() kfunc for BPF programs, callable by the trigger
 * program type only: kprobe programs (kprobe, uprobe; the bpf/ triggers).
 * - 6.10+: registered for the kprobe hook, with a filter as well;
 * - 6.7-6.9: only the common hook reaches kprobe programs, and it reaches
 *   every program type, so the set carries a filter refusing all others
 *   (struct btf_kfunc_id_set gained .filter in 6.5; __bpf_kfunc_start_defs,
 *   6.7, is the feature test);
 * - 6.3-6.6: no filter can be detected, so the kfunc is not registered
 *   (the common hook would expose it to every program type); 6.1/6.2
 *   have no __bpf_kfunc at all. There user space freezes with the ioctl.
 * Registration needs module BTF (CONFIG_DEBUG_INFO_BTF_MODULES and pahole
 * at build time); a kernel that dropped it (BTF mismatch) may still return
 * 0, so the capability is advertised only once /sys/kernel/btf/mtrace, made
 * when the kernel accepted the module's BTF, exists.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/namei.h>

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

#ifdef __bpf_kfunc_start_defs
#define MTRACE_KFUNC_FILTER	1

static int trigger_progs_only(const struct bpf_prog *prog, u32 kfunc_id)
{
	if (!btf_id_set8_contains(&mtrace_kfunc_ids, kfunc_id))
		return 0;
	return prog->type == BPF_PROG_TYPE_KPROBE ? 0 : -EACCES;
}
#endif

static const struct btf_kfunc_id_set mtrace_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &mtrace_kfunc_ids,
#ifdef MTRACE_KFUNC_FILTER
	.filter = trigger_progs_only,
#endif
};

static bool module_btf_loaded(void)
{
	struct path path;

	if (kern_path("/sys/kernel/btf/" KBUILD_MODNAME, LOOKUP_FOLLOW, &path))
		return false;
	path_put(&path);
	return true;
}

/*
 * Kernels before 6.10 have no kprobe hook and refuse it with -EINVAL; the
 * common hook is their only way to uprobe programs, taken only with the
 * filter.
 */
int mtrace_kfunc_register(void)
{
	int err = register_btf_kfunc_id_set(BPF_PROG_TYPE_KPROBE,
					    &mtrace_kfunc_set);

#ifdef MTRACE_KFUNC_FILTER
	if (err == -EINVAL)
		err = register_btf_kfunc_id_set(BPF_PROG_TYPE_UNSPEC,
						&mtrace_kfunc_set);
#endif
	if (!err && !module_btf_loaded())
		err = -ENOENT;
	mtrace_kfunc_ok = !err;
	return err;
}

#else

int mtrace_kfunc_register(void)
{
	return 0;
}

#endif
