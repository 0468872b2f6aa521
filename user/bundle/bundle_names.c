// SPDX-License-Identifier: MIT
/* Names of the bundle's section types, trigger reasons and freeze paths,
 * and of PT configurations the decoder cannot follow. */
#include "bundle/bundle.h"

const char *mt_bundle_section_name(uint32_t type)
{
	switch (type) {
	case MT_BUNDLE_SEC_CPU: return "cpu";
	case MT_BUNDLE_SEC_PT_CONFIG: return "pt-config";
	case MT_BUNDLE_SEC_PT_DATA: return "pt-data";
	case MT_BUNDLE_SEC_TRIGGER: return "trigger";
	case MT_BUNDLE_SEC_SWITCHES: return "switches";
	case MT_BUNDLE_SEC_MAPS: return "maps";
	case MT_BUNDLE_SEC_THREADS: return "threads";
	case MT_BUNDLE_SEC_CLOCK: return "clock";
	case MT_BUNDLE_SEC_FILE: return "file";
	case MT_BUNDLE_SEC_KTEXT: return "ktext";
	case MT_BUNDLE_SEC_KALLSYMS: return "kallsyms";
	case MT_BUNDLE_SEC_MODULES: return "modules";
	case MT_BUNDLE_SEC_END: return "end";
	default: return "unknown";
	}
}

/* Tables sized by the enums' sentinels: a new value without a name is NULL, not out of bounds. */
static const char *const reason_names[MT_BUNDLE_REASON_NR] = {
	[MT_BUNDLE_REASON_UPROBE] = "uprobe",
	[MT_BUNDLE_REASON_URETPROBE] = "uretprobe",
	[MT_BUNDLE_REASON_KPROBE] = "kprobe",
	[MT_BUNDLE_REASON_SLOW_CALL] = "slow call",
	[MT_BUNDLE_REASON_USER] = "user request",
	[MT_BUNDLE_REASON_TARGET_EXIT] = "target exit",
	[MT_BUNDLE_REASON_GENERATOR] = "generator",
};

static const char *const freeze_names[MT_BUNDLE_FREEZE_NR] = {
	[MT_BUNDLE_FREEZE_KFUNC] = "kfunc",
	[MT_BUNDLE_FREEZE_FALLBACK] = "fallback",
	[MT_BUNDLE_FREEZE_MANUAL] = "manual",
	[MT_BUNDLE_FREEZE_EXIT] = "exit",
	[MT_BUNDLE_FREEZE_POWER] = "power",
};

const char *mt_bundle_reason_name(uint32_t reason)
{
	return reason < MT_BUNDLE_REASON_NR ? reason_names[reason] : NULL;
}

const char *mt_bundle_freeze_name(uint32_t path)
{
	return path < MT_BUNDLE_FREEZE_NR ? freeze_names[path] : NULL;
}

const char *mt_bundle_ctl_undecodable(uint64_t ctl)
{
	if (!(ctl & MT_RTIT_CTL_BRANCHEN))
		return "RTIT_CTL.BranchEn is clear (perf's branch=0): the trace holds no control flow";
	if (ctl & MT_RTIT_CTL_DISTNT)
		return "RTIT_CTL.DisTNT is set (perf's notnt): without TNT packets conditional "
		       "branches cannot be followed";
	if (ctl & MT_RTIT_CTL_EVENTEN)
		return "RTIT_CTL.EventEn is set (perf's event): event trace packets (CFE, EVD) "
		       "are not decoded";
	return NULL;
}
