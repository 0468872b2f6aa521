// SPDX-License-Identifier: MIT
/*
 * Is the module's freeze kfunc callable? The module registers it only when
 * the kernel accepted the module's BTF (a module without BTF loads fine but
 * silently has no kfuncs), so the test is the kfunc's presence in
 * /sys/kernel/btf/mtrace, read as split BTF on top of vmlinux's.
 */
#include "trigger/trigger_internal.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MODULE_BTF "/sys/kernel/btf/mtrace"
#define FREEZE_KFUNC "mtrace_freeze"

bool mt_trigger_kfunc_available(char *why, size_t whylen)
{
	struct btf *vmlinux, *mod;
	bool found;

	if (access(MODULE_BTF, R_OK)) {
		snprintf(why, whylen, "%s: %s (module not loaded, or loaded without BTF)",
			 MODULE_BTF, strerror(errno));
		return false;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		snprintf(why, whylen, "kernel BTF unavailable: %s", strerror(errno));
		return false;
	}
	mod = btf__parse_split(MODULE_BTF, vmlinux);
	if (!mod) {
		snprintf(why, whylen, "cannot parse %s: %s", MODULE_BTF, strerror(errno));
		btf__free(vmlinux);
		return false;
	}
	found = btf__find_by_name_kind(mod, FREEZE_KFUNC, BTF_KIND_FUNC) > 0;
	if (!found)
		snprintf(why, whylen, "%s has no %s function", MODULE_BTF, FREEZE_KFUNC);
	btf__free(mod);
	btf__free(vmlinux);
	return found;
}
