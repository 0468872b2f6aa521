// SPDX-License-Identifier: MIT
/*
 * The context-switch sideband: which thread a CPU runs at a time, and
 * where the trace after an exact TSC ends at the latest (the CPU's next
 * switch to another process or the idle task, when one process is
 * traced; never in system-wide mode).
 */
#include "../lib/mt_heap.h"
#include "../lib/mt_test.h"
#include "test_bundle_sample.h"

#include "bundle/bundle.h"
#include "decode/sideband.h"

#include <stdlib.h>

/* Target pid 7: threads 7 and 8. Other process 9; idle 0. */
static const struct mt_bundle_switch_entry sw[] = {
	{ .tsc = 100, .cpu = 0, .prev_pid = 9, .prev_tid = 9, .next_pid = 7, .next_tid = 7 },
	{ .tsc = 200, .cpu = 0, .prev_pid = 7, .prev_tid = 7, .next_pid = 7, .next_tid = 8 },
	{ .tsc = 300, .cpu = 0, .prev_pid = 7, .prev_tid = 8, .next_pid = 0, .next_tid = 0 },
	{ .tsc = 400, .cpu = 0, .prev_pid = 0, .prev_tid = 0, .next_pid = 7, .next_tid = 7 },
	{ .tsc = 500, .cpu = 0, .prev_pid = 7, .prev_tid = 7, .next_pid = 9, .next_tid = 9 },
	{ .tsc = 250, .cpu = 1, .prev_pid = 0, .prev_tid = 0, .next_pid = 7, .next_tid = 8 },
};

/* A table written to a bundle (RAW: uncompressed); the caller closes and
 * unlinks it. */
static struct mt_bundle_reader *table_bundle(const struct mt_bundle_switch_entry *v, size_t n,
					     int raw, char *path, size_t len)
{
	struct mt_bundle_writer_opts opts = { .size = sizeof(opts), .no_compression = raw };
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char err[512];

	sample_tmp(path, len, "switches");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, &opts, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_switches(w, v, n), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	return r;
}

/* The table above, held in memory or (STREAMED) read from a bundle by
 * each view. */
struct fixture {
	struct mt_sideband sb;
	struct mt_bundle_reader *r;
	char path[256];
};

static void open_fx(struct fixture *f, uint32_t target, int streamed)
{
	struct mt_task fallback = { target, target };
	char err[512];

	f->r = NULL;
	if (streamed) {
		f->r = table_bundle(sw, sizeof(sw) / sizeof(sw[0]), 0, f->path, sizeof(f->path));
		MT_ASSERT_EQ(mt_sideband_open(&f->sb, f->r, fallback, err, sizeof(err)), 0);
		/* Each CPU's records are in time order: none held. */
		MT_ASSERT(f->sb.from == f->r);
		return;
	}
	mt_sideband_init(&f->sb, fallback);
	MT_ASSERT_EQ(mt_sideband_add(&f->sb, sw, sizeof(sw) / sizeof(sw[0])), 0);
	MT_ASSERT_EQ(mt_sideband_finish(&f->sb), 0);
}

static void close_fx(struct fixture *f)
{
	mt_sideband_fini(&f->sb);
	if (f->r) {
		mt_bundle_close(f->r);
		unlink(f->path);
	}
}

/* Each query with a view of its own: QUERY (mt_sideband_task or
 * mt_sideband_traced_task) at TSC. */
static struct mt_task ask(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc,
			  struct mt_task (*query)(struct mt_sb_view *v, uint64_t tsc))
{
	struct mt_sb_view v;
	struct mt_task t;

	mt_sb_view_open(&v, sb, cpu);
	t = query(&v, tsc);
	MT_ASSERT_EQ(v.err, 0);
	mt_sb_view_close(&v);
	return t;
}

static struct mt_task task_at(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	return ask(sb, cpu, tsc, mt_sideband_task);
}

static uint64_t trace_off(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	struct mt_sb_view v;
	uint64_t t;

	mt_sb_view_open(&v, sb, cpu);
	t = mt_sideband_trace_off(&v, tsc);
	MT_ASSERT_EQ(v.err, 0);
	mt_sb_view_close(&v);
	return t;
}

MT_TEST(task_at_a_time)
{
	for (int streamed = 0; streamed < 2; streamed++) {
		struct fixture f;

		open_fx(&f, 7, streamed);
		MT_ASSERT_EQ(task_at(&f.sb, 0, 50).tid, 9);	/* before the first: its prev */
		MT_ASSERT_EQ(task_at(&f.sb, 0, 100).tid, 7);	/* a record's own time: next */
		MT_ASSERT_EQ(task_at(&f.sb, 0, 299).tid, 8);
		MT_ASSERT_EQ(task_at(&f.sb, 0, 350).tid, 0);
		MT_ASSERT_EQ(task_at(&f.sb, 1, 260).tid, 8);
		MT_ASSERT_EQ(task_at(&f.sb, 2, 260).tid, 7);	/* no records: fallback */
		close_fx(&f);
	}
}

/*
 * The trace runs only while a thread of the target does: at a time the
 * table gives to the idle task or another process, the trace is the
 * nearest of the target's threads (the simulated backend fed a worker's
 * bytes while a kernel thread had preempted it, and the whole stream went
 * to that thread, which has no code). In system-wide mode, the task.
 */
MT_TEST(traced_task_is_the_targets_nearest)
{
	for (int streamed = 0; streamed < 2; streamed++) {
		struct fixture f;

		open_fx(&f, 7, streamed);
		MT_ASSERT_EQ(ask(&f.sb, 0, 250, mt_sideband_traced_task).tid, 8);
		/* Idle from 300 to 400, between 8 and 7: the nearer one, the
		 * one before on a tie. */
		MT_ASSERT_EQ(ask(&f.sb, 0, 350, mt_sideband_traced_task).tid, 8);
		MT_ASSERT_EQ(ask(&f.sb, 0, 320, mt_sideband_traced_task).tid, 8);
		MT_ASSERT_EQ(ask(&f.sb, 0, 380, mt_sideband_traced_task).tid, 7);
		/* Before the first record (process 9 ran): the one after. */
		MT_ASSERT_EQ(ask(&f.sb, 0, 50, mt_sideband_traced_task).tid, 7);
		/* Process 9 from 500 on: the one before. */
		MT_ASSERT_EQ(ask(&f.sb, 0, 600, mt_sideband_traced_task).tid, 7);
		MT_ASSERT_EQ(ask(&f.sb, 2, 260, mt_sideband_traced_task).tid, 7);
		close_fx(&f);
		open_fx(&f, 0, streamed);
		MT_ASSERT_EQ(ask(&f.sb, 0, 350, mt_sideband_traced_task).tid, 0);
		close_fx(&f);
	}
}

MT_TEST(trace_off_skips_switches_inside_the_target)
{
	for (int streamed = 0; streamed < 2; streamed++) {
		struct fixture f;

		open_fx(&f, 7, streamed);
		/* 7 -> 8 keeps TraceEn on; 8 -> idle clears it. */
		MT_ASSERT_EQ(trace_off(&f.sb, 0, 100), 300);
		MT_ASSERT_EQ(trace_off(&f.sb, 0, 250), 300);
		/* Strictly later than the time asked about. */
		MT_ASSERT_EQ(trace_off(&f.sb, 0, 300), 500);
		MT_ASSERT_EQ(trace_off(&f.sb, 0, 500), UINT64_MAX);
		MT_ASSERT_EQ(trace_off(&f.sb, 1, 0), UINT64_MAX);
		close_fx(&f);
	}
}

MT_TEST(system_wide_trace_stays_on)
{
	for (int streamed = 0; streamed < 2; streamed++) {
		struct fixture f;

		open_fx(&f, 0, streamed);
		MT_ASSERT_EQ(trace_off(&f.sb, 0, 100), UINT64_MAX);
		close_fx(&f);
	}
}

/* The threads a decode can show: the target's that the records name,
 * first named first, and the fallback; every task system-wide. Read from
 * a bundle out of time order too (the table is then read twice). */
MT_TEST(threads_named_by_the_records)
{
	struct mt_bundle_switch_entry unsorted[] = { sw[1], sw[0], sw[5] };
	char err[512], path[256];
	struct mt_bundle_reader *r;
	struct mt_sideband sb;
	struct fixture f;

	open_fx(&f, 7, 1);
	MT_ASSERT_EQ(f.sb.ntids, 2);
	MT_ASSERT(f.sb.tids[0] == 7 && f.sb.tids[1] == 8);
	close_fx(&f);
	open_fx(&f, 0, 1);
	MT_ASSERT_EQ(f.sb.ntids, 4);
	MT_ASSERT(f.sb.tids[0] == 9 && f.sb.tids[1] == 7 && f.sb.tids[2] == 8 && f.sb.tids[3] == 0);
	close_fx(&f);
	r = table_bundle(unsorted, 3, 0, path, sizeof(path));
	MT_ASSERT_EQ(mt_sideband_open(&sb, r, (struct mt_task){ 7, 42 }, err, sizeof(err)), 0);
	MT_ASSERT(!sb.from);	/* held: CPU 0's records are out of order */
	MT_ASSERT_EQ(sb.ntids, 3);
	MT_ASSERT(sb.tids[0] == 7 && sb.tids[1] == 8 && sb.tids[2] == 42);
	mt_sideband_fini(&sb);
	mt_bundle_close(r);
	unlink(path);
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
	/* Taken in over several calls, as the decoder streams them. */
	mt_sideband_init(&sb, (struct mt_task){ 0, 0 });
	for (size_t i = 0; i < 64; i += 5)
		MT_ASSERT_EQ(mt_sideband_add(&sb, many + i, i + 5 < 64 ? 5 : 64 - i), 0);
	MT_ASSERT_EQ(mt_sideband_finish(&sb), 0);
	/* CPU 63 holds i = 0, 3, 6, ..., 63: at 100 the last odd one, 63. */
	MT_ASSERT_EQ(task_at(&sb, 63, 100).tid, 1063);
	MT_ASSERT_EQ(task_at(&sb, 63, 99).tid, 1060);
	MT_ASSERT_EQ(task_at(&sb, 61, 50).tid, 1062);
	MT_ASSERT_EQ(task_at(&sb, 61, 49).tid, 2);
	mt_sideband_fini(&sb);
}

/* N records of 64 threads on 3 CPUs, 10 ticks apart; when SWAP, every
 * 1000th pair of a CPU swapped (a table not in time order). */
static struct mt_bundle_switch_entry *many_switches(size_t n, int swap)
{
	struct mt_bundle_switch_entry *v = malloc(n * sizeof(*v));

	MT_ASSERT(v);
	for (uint32_t i = 0; i < n; i++)
		v[i] = (struct mt_bundle_switch_entry){ .tsc = 10 * (uint64_t)i + 5, .cpu = i % 3,
							.prev_pid = 1, .prev_tid = 100 + (i + 63) % 64,
							.next_pid = 1, .next_tid = 100 + i % 64 };
	for (size_t i = 0; swap && i + 3 < n; i += 1000) {
		struct mt_bundle_switch_entry t = v[i];

		v[i] = v[i + 3];
		v[i + 3] = t;
	}
	return v;
}

/* CPU's task at T by the whole table, as the SDM's reader would. */
static uint32_t task_by_table(const struct mt_bundle_switch_entry *all, size_t n, uint32_t cpu,
			      uint64_t t)
{
	uint64_t best = 0, first = UINT64_MAX;
	uint32_t want = 0;

	for (size_t i = cpu; i < n; i += 3) {	/* swaps keep the CPU */
		MT_ASSERT_EQ(all[i].cpu, cpu);
		/* Before the first: the thread the first one switched out. */
		if (all[i].tsc < first && !best)
			first = all[i].tsc, want = all[i].prev_tid;
		if (all[i].tsc <= t && all[i].tsc >= best)
			best = all[i].tsc, want = all[i].next_tid;
	}
	return want;
}

/* The time of CPU's first record later than T that switches away from
 * process 1, by the whole table; UINT64_MAX if none. */
static uint64_t off_by_table(const struct mt_bundle_switch_entry *all, size_t n, uint32_t cpu,
			     uint64_t t)
{
	uint64_t best = UINT64_MAX;

	for (size_t i = cpu; i < n; i += 3)
		if (all[i].tsc > t && all[i].tsc < best && (all[i].next_pid != 1 || !all[i].next_tid))
			best = all[i].tsc;
	return best;
}

/*
 * A snapshot of a busy machine holds millions of switches. Open keeps
 * none; with each CPU's records in time order the sideband holds none
 * either, and a view keeps a window of them whatever the table's size,
 * read over from the start only when asked about a time before it. Out
 * of order, they are held, sorted. Either way the answers are the whole
 * table's.
 *
 * A process's threads switch among themselves for as long as it runs, so
 * where its tracing stops on a CPU (the next switch to another process)
 * is often far ahead of where the decoding is. Looking for it moved the
 * view there, and the decoding's next question, a little later, read the
 * CPU's records over from the start, for every segment (on 64 threads
 * over 7,748 switches, nine tenths of the decode's time). It is asked
 * here as decoding asks, and nothing is read over.
 */
MT_TEST(switches_held_by_window_not_by_table)
{
	const size_t n = 300000;

	for (int swap = 0; swap < 2; swap++) {
		struct mt_bundle_switch_entry *v = many_switches(n, swap);
		const struct mt_bundle_switch_entry *all;
		struct mt_bundle_reader *r;
		struct mt_sideband sb;
		struct mt_sb_view view;
		char path[256], err[512];
		size_t base, opened, held, most = 0, nall;

		/* Another process now and then, and not at all in the last
		 * third: the trace's end far ahead, then nowhere. */
		for (size_t i = 1000; i < 2 * n / 3; i += 45000)
			v[i].next_pid = v[i].next_tid = 2;
		base = heap_bytes();
		/* Uncompressed, so that what a view holds is its own (zstd's
		 * window is the writer's, at most 2^MT_BUNDLE_ZSTD_WINDOW_LOG_MAX). */
		r = table_bundle(v, n, !swap, path, sizeof(path));
		opened = heap_bytes();
		MT_ASSERT_MSG(opened - base < (256 << 10), "open holds %zu bytes", opened - base);
		MT_ASSERT_EQ(mt_bundle_switch_count(r), n);
		MT_ASSERT_EQ(mt_sideband_open(&sb, r, (struct mt_task){ 1, 1 }, err, sizeof(err)), 0);
		MT_ASSERT(sb.from == (swap ? NULL : r));
		held = heap_bytes() - opened;
		if (swap && HEAP_COUNTED)
			MT_ASSERT(held >= 16 * n);
		else if (!swap)
			MT_ASSERT_MSG(held < (16 << 10), "the sideband holds %zu bytes", held);

		MT_ASSERT_EQ(mt_bundle_switches(r, &all, &nall), 0);
		MT_ASSERT_EQ(nall, n);
		opened = heap_bytes();
		for (uint32_t cpu = 0; cpu < 3; cpu++) {
			mt_sb_view_open(&view, &sb, cpu);
			/* Forward, a little back now and then, as decoding asks. */
			for (uint64_t t = 0; t < 10 * n + 20; t += 7 + t / 64) {
				uint64_t back = t > 300 ? t - 300 : 0;

				MT_ASSERT_EQ(mt_sideband_task(&view, t).tid, task_by_table(all, n, cpu, t));
				MT_ASSERT_EQ(mt_sideband_task(&view, back).tid,
					     task_by_table(all, n, cpu, back));
				MT_ASSERT_EQ(mt_sideband_trace_off(&view, t), off_by_table(all, n, cpu, t));
				MT_ASSERT_EQ(mt_sideband_trace_off(&view, back),
					     off_by_table(all, n, cpu, back));
				if (heap_bytes() - opened > most)
					most = heap_bytes() - opened;
			}
			MT_ASSERT_EQ(view.rewinds, 0);
			/* Far back: read over (streamed), still right. */
			MT_ASSERT_EQ(mt_sideband_task(&view, 20).tid, task_by_table(all, n, cpu, 20));
			MT_ASSERT_EQ(view.rewinds, swap ? 0 : 1);
			MT_ASSERT_EQ(view.err, 0);
			mt_sb_view_close(&view);
		}
		/* Two readers' buffers: the view's, the trace-off answer's. */
		if (!swap)
			MT_ASSERT_MSG(most < (640 << 10), "a view held %zu bytes", most);
		mt_sideband_fini(&sb);
		mt_bundle_close(r);
		free(v);
		unlink(path);
	}
}

