// SPDX-License-Identifier: MIT
/*
 * The context-switch sideband: which thread a CPU runs at a time, and
 * where the trace after an exact TSC ends at the latest (the CPU's next
 * switch to another process or the idle task, when one process is
 * traced; never in system-wide mode).
 */
#include "../lib/mt_test.h"

#include "decode/sideband.h"

/* Target pid 7: threads 7 and 8. Other process 9; idle 0. */
static const struct mt_bundle_switch_entry sw[] = {
	{ .tsc = 100, .cpu = 0, .prev_pid = 9, .prev_tid = 9, .next_pid = 7, .next_tid = 7 },
	{ .tsc = 200, .cpu = 0, .prev_pid = 7, .prev_tid = 7, .next_pid = 7, .next_tid = 8 },
	{ .tsc = 300, .cpu = 0, .prev_pid = 7, .prev_tid = 8, .next_pid = 0, .next_tid = 0 },
	{ .tsc = 400, .cpu = 0, .prev_pid = 0, .prev_tid = 0, .next_pid = 7, .next_tid = 7 },
	{ .tsc = 500, .cpu = 0, .prev_pid = 7, .prev_tid = 7, .next_pid = 9, .next_tid = 9 },
	{ .tsc = 250, .cpu = 1, .prev_pid = 0, .prev_tid = 0, .next_pid = 7, .next_tid = 8 },
};

static struct mt_sideband open_sb(uint32_t target)
{
	struct mt_sideband sb;

	/* Out of order on purpose: the sideband sorts. */
	MT_ASSERT_EQ(mt_sideband_init(&sb, sw, sizeof(sw) / sizeof(sw[0]),
				      (struct mt_task){ target, target }), 0);
	return sb;
}

MT_TEST(task_at_a_time)
{
	struct mt_sideband sb = open_sb(7);

	MT_ASSERT_EQ(mt_sideband_task(&sb, 0, 50).tid, 9);	/* before the first: its prev */
	MT_ASSERT_EQ(mt_sideband_task(&sb, 0, 100).tid, 7);	/* a record's own time: next */
	MT_ASSERT_EQ(mt_sideband_task(&sb, 0, 299).tid, 8);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 0, 350).tid, 0);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 1, 260).tid, 8);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 2, 260).tid, 7);	/* no records: fallback */
	mt_sideband_fini(&sb);
}

MT_TEST(trace_off_skips_switches_inside_the_target)
{
	struct mt_sideband sb = open_sb(7);

	/* 7 -> 8 keeps TraceEn on; 8 -> idle clears it. */
	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 0, 100), 300);
	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 0, 250), 300);
	/* Strictly later than the time asked about. */
	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 0, 300), 500);
	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 0, 500), UINT64_MAX);
	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 1, 0), UINT64_MAX);
	mt_sideband_fini(&sb);
}

MT_TEST(system_wide_trace_stays_on)
{
	struct mt_sideband sb = open_sb(0);

	MT_ASSERT_EQ(mt_sideband_trace_off(&sb, 0, 100), UINT64_MAX);
	mt_sideband_fini(&sb);
}

/* Records of one CPU at one time keep their file order: the later one is
 * the task from then on, however many there are (the sort is by index). */
MT_TEST(equal_times_keep_file_order)
{
	struct mt_bundle_switch_entry many[64];
	struct mt_sideband sb;

	for (uint32_t i = 0; i < 64; i++)
		many[i] = (struct mt_bundle_switch_entry){ .tsc = i % 2 ? 100 : 50, .cpu = 63 - i % 3,
							   .prev_tid = i, .next_tid = 1000 + i };
	MT_ASSERT_EQ(mt_sideband_init(&sb, many, 64, (struct mt_task){ 0, 0 }), 0);
	/* CPU 63 holds i = 0, 3, 6, ..., 63: at 100 the last odd one, 63. */
	MT_ASSERT_EQ(mt_sideband_task(&sb, 63, 100).tid, 1063);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 63, 99).tid, 1060);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 61, 50).tid, 1062);
	MT_ASSERT_EQ(mt_sideband_task(&sb, 61, 49).tid, 2);
	mt_sideband_fini(&sb);
}
