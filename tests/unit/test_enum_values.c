// SPDX-License-Identifier: MIT
/*
 * Every value of the enums that cross a boundary (BPF record, ioctl ABI,
 * bundle file): names for each, the sentinels past the last value, and the
 * explicit mappings where two of them must differ.
 */
#include "mt_test.h"

#include "bundle/bundle.h"
#include "capture/capture_collect.h"
#include "trigger/trigger.h"
#include "uapi/linux/mtrace.h"

MT_TEST(trigger_kinds_are_bundle_reasons)
{
	static const char *const kinds[] = { NULL, "uprobe", "uretprobe", "kprobe", "slow" };
	static const char *const reasons[] = { NULL, "uprobe", "uretprobe", "kprobe",
					       "slow call" };

	MT_ASSERT_EQ(sizeof(kinds) / sizeof(kinds[0]), MT_TRIG_KIND_NR);
	for (int k = MT_TRIG_UPROBE; k < MT_TRIG_KIND_NR; k++) {
		MT_ASSERT_STREQ(mt_trigger_kind_name(k), kinds[k]);
		MT_ASSERT_STREQ(mt_bundle_reason_name(k), reasons[k]);
	}
	MT_ASSERT_STREQ(mt_trigger_kind_name(0), "unknown");
	MT_ASSERT_STREQ(mt_trigger_kind_name(MT_TRIG_KIND_NR), "unknown");
}

MT_TEST(bundle_reasons)
{
	static const char *const names[] = { NULL, "uprobe", "uretprobe", "kprobe", "slow call",
					     "user request", "target exit", "generator" };

	MT_ASSERT_EQ(sizeof(names) / sizeof(names[0]), MT_BUNDLE_REASON_NR);
	for (uint32_t r = 1; r < MT_BUNDLE_REASON_NR; r++)
		MT_ASSERT_STREQ(mt_bundle_reason_name(r), names[r]);
	MT_ASSERT(mt_bundle_reason_name(0) == NULL);
	MT_ASSERT(mt_bundle_reason_name(MT_BUNDLE_REASON_NR) == NULL);
	MT_ASSERT(mt_bundle_reason_name(UINT32_MAX) == NULL);
}

/* What capture records for each freeze path the module can report. */
MT_TEST(every_module_freeze_path_is_recorded)
{
	static const struct {
		uint32_t path;
		const char *name, *reason;
	} want[] = {
		{ MTRACE_PATH_KFUNC, "kfunc", "kprobe" },
		{ MTRACE_PATH_FALLBACK, "fallback", "kprobe" },
		{ MTRACE_PATH_MANUAL, "manual", "user request" },
		{ MTRACE_PATH_EXIT, "exit", "target exit" },
		{ MTRACE_PATH_POWER, "power", "user request" },
	};
	struct mt_trigger_spec spec = { .kind = MT_TRIG_KPROBE, .text = "kprobe:do_sys_open" };
	struct mt_collect_in in = { .specs = &spec, .nspecs = 1 };
	struct mt_collect_out out = { .skid_ns_trigger_cpu = 5 };

	MT_ASSERT_EQ(sizeof(want) / sizeof(want[0]), MT_BUNDLE_FREEZE_NR - 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct mtrace_status st = { .trigger = { .path = want[i].path, .cookie = 0,
							 .cpu = 1, .tid = 9 } };
		struct mt_bundle_trigger t;

		mt_collect_trigger(&in, &st, &out, &t);
		MT_ASSERT_STREQ(mt_bundle_freeze_name(t.d.freeze_path), want[i].name);
		MT_ASSERT_STREQ(mt_bundle_reason_name(t.d.reason), want[i].reason);
		MT_ASSERT_EQ(t.d.cpu, 1);
		MT_ASSERT_EQ(t.d.skid_ns, 5);
	}
	MT_ASSERT(mt_bundle_freeze_name(0) == NULL);
	MT_ASSERT(mt_bundle_freeze_name(MT_BUNDLE_FREEZE_NR) == NULL);
}

/* The BPF program's freeze methods and the module paths they end in. */
MT_TEST(freeze_methods_map_onto_module_paths)
{
	static const struct {
		enum mt_trig_freeze method;
		const char *name;
		uint32_t path;
	} want[] = {
		{ MT_TRIG_FREEZE_KFUNC, "kfunc", MTRACE_PATH_KFUNC },
		{ MT_TRIG_FREEZE_NOTIFY, "notify", MTRACE_PATH_FALLBACK },
		{ MT_TRIG_FREEZE_SIGSTOP, "sigstop", MTRACE_PATH_FALLBACK },
	};

	MT_ASSERT_EQ(sizeof(want) / sizeof(want[0]), MT_TRIG_FREEZE_NR - 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		MT_ASSERT_STREQ(mt_trigger_freeze_name(want[i].method), want[i].name);
		MT_ASSERT_EQ(mt_trigger_freeze_path(want[i].method), want[i].path);
	}
	MT_ASSERT_STREQ(mt_trigger_freeze_name(0), "unknown");
	MT_ASSERT_EQ(mt_trigger_freeze_path(0), 0);
	MT_ASSERT_STREQ(mt_trigger_freeze_name(MT_TRIG_FREEZE_NR), "unknown");
	MT_ASSERT_EQ(mt_trigger_freeze_path(MT_TRIG_FREEZE_NR), 0);
}

MT_TEST(section_types)
{
	static const char *const names[] = { NULL, "cpu", "pt-config", "pt-data", "trigger",
					     "switches", "maps", "threads", "clock", "file",
					     "ktext", "kallsyms", "modules" };

	MT_ASSERT_EQ(sizeof(names) / sizeof(names[0]), MT_BUNDLE_SEC_NR);
	for (uint32_t t = MT_BUNDLE_SEC_CPU; t < MT_BUNDLE_SEC_NR; t++)
		MT_ASSERT_STREQ(mt_bundle_section_name(t), names[t]);
	MT_ASSERT_STREQ(mt_bundle_section_name(MT_BUNDLE_SEC_END), "end");
	MT_ASSERT_STREQ(mt_bundle_section_name(MT_BUNDLE_SEC_NR), "unknown");
	MT_ASSERT_STREQ(mt_bundle_section_name(0), "unknown");
}
