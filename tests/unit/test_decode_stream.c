// SPDX-License-Identifier: MIT
/*
 * The replay that follows the decoding (a sink that takes inferred frames
 * late): it gives the same calls and returns as the replay that waits for
 * every stream, frees the log behind it, and gets through however small
 * its window and however many streams share one job.
 */
#include "test_decode_steps.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/* Decodes PATH into GOT with JOBS and WINDOW, the replay following the
 * decoding or not (LATE); returns the stats. */
static struct mt_decode_stats decode(const char *path, struct steps *got, unsigned int jobs,
				     size_t window, int late)
{
	struct mt_decode_opts o = { .jobs = jobs, .stream_window = window };
	struct mt_decode_sink sink = { NULL, collect, NULL, got, late };
	struct mt_decode_stats st;
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_decode_run(d, &sink), 0);
	st = *mt_decode_get_stats(d);
	mt_decode_free(d);
	mt_bundle_close(r);
	return st;
}

/* The steps of PATH decoded in PT windows of WINDOW bytes and in one;
 * returns the stats of the former. */
static struct mt_decode_stats in_windows(const char *path, size_t window,
					 const struct steps *whole)
{
	const struct mt_decode_opts o = { .pt_window = window };
	struct mt_decode_stats st = steps_decode_same(path, whole, &o, "windows");

	MT_ASSERT_EQ(st.errors, 0);
	return st;
}

static const char *walk(const char *name, const char *extra)
{
	char ptgen[1200], progs[1200];
	const char *out = fx_path(name);

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o '%s' --walk '%s/indirect-nopie' >/dev/null", ptgen, extra, out, progs);
	return out;
}

/* The same steps both ways; while following, each of the two streams
 * holds at most its window, what it logs between two hand-overs (256 KiB)
 * and a segment, while waiting holds all of it. (A stream the replay had
 * just freed log for, not yet woken, looked stuck: streams then ran on
 * past their window, to 0.98 MB here and up to 4.3 MB under valgrind.) */
MT_TEST(following_frees_the_log_and_changes_nothing)
{
	const char *b = walk("w2.mtrace", "--insns 8000000 --cpus 2 --seed 5");
	struct steps all = { 0 }, follow = { 0 };
	struct mt_decode_stats sa = decode(b, &all, 1, 0, 0);
	struct mt_decode_stats sf = decode(b, &follow, 1, 64 << 10, 1);
	char msg[512];

	MT_ASSERT_MSG(steps_diff("walk", "waiting", &all, "following", &follow, NULL, msg,
				 sizeof(msg)) == 0, "%s", msg);
	MT_ASSERT(all.n > 10000);
	MT_ASSERT_EQ(sa.log_bytes, sf.log_bytes);
	MT_ASSERT_EQ(sa.log_peak, sa.log_bytes);
	printf("# log %" PRIu64 " bytes, held at most %" PRIu64 " following; let run on %" PRIu64
	       " times\n", sf.log_bytes, sf.log_peak, sf.stuck_runs);
	MT_ASSERT(sf.log_peak <= 2 * ((64 << 10) + (256 << 10) + (128 << 10)));
	/* No segment of this walk outgrows the window: nothing is stuck. */
	MT_ASSERT_EQ(sf.stuck_runs, 0);
	MT_ASSERT(sf.log_peak * 3 < sf.log_bytes);
	free(all.v);
	free(follow.v);
}

/* A sink that fails at its first event, as a full disk does. */
static int refuse(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)ctx, (void)pid, (void)tid, (void)ns, (void)ev;
	return -ENOSPC;
}

/* Once the output has failed, the streams stop being decoded: before,
 * they ran to their ends, ten times as slowly as a whole decode (nothing
 * consumed the switch table they read). Counted in instructions, not time. */
MT_TEST(a_failed_output_stops_the_decoding)
{
	const char *b = walk("w2.mtrace", "--insns 8000000 --cpus 2 --seed 5");
	struct mt_decode_opts o = { .jobs = 2, .stream_window = 64 << 10 };
	struct mt_decode_sink sink = { NULL, refuse, NULL, NULL, 1 };
	struct steps all = { 0 };
	struct mt_decode_stats whole = decode(b, &all, 2, 64 << 10, 1);
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];
	uint64_t insns;

	MT_ASSERT_MSG(mt_bundle_open(&r, b, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_decode_run(d, &sink), -ENOSPC);
	insns = mt_decode_get_stats(d)->insns;
	printf("# %" PRIu64 " of %" PRIu64 " instructions decoded after the output failed\n",
	       insns, whole.insns);
	MT_ASSERT(insns * 4 < whole.insns);
	mt_decode_free(d);
	mt_bundle_close(r);
	free(all.v);
}

/* A sink that collects the steps and notes whether any call came on
 * another thread than the run's. */
struct elsewhere {
	struct steps steps;
	pthread_t run;
	int calls_elsewhere;
	int fail_at;	/* fails at this call (0: never) and counts the calls */
	int calls;
};

static int collect_elsewhere(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns,
			     const struct mt_ev *ev)
{
	struct elsewhere *e = ctx;

	e->calls_elsewhere += !pthread_equal(pthread_self(), e->run);
	if (++e->calls == e->fail_at)
		return -ENOSPC;
	return collect(&e->steps, pid, tid, ns, ev);
}

/* Runs a decode of PATH into E with JOBS jobs, the replay following the
 * decoding or not (LATE), the sink on a thread of its own or not
 * (SINK_THREAD); returns mt_decode_run()'s result, and the decoder's
 * message and instructions decoded. */
static int run_elsewhere(const char *path, struct elsewhere *e, unsigned int jobs, int late,
			 int sink_thread, char *msg, size_t msglen, uint64_t *insns)
{
	struct mt_decode_opts o = { .jobs = jobs, .sink_thread = sink_thread };
	struct mt_decode_sink sink = { NULL, collect_elsewhere, NULL, e, late };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];
	int rc;

	e->run = pthread_self();
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	rc = mt_decode_run(d, &sink);
	snprintf(msg, msglen, "%s", mt_decode_error(d));
	*insns = mt_decode_get_stats(d)->insns;
	mt_decode_free(d);
	mt_bundle_close(r);
	return rc;
}

/* With the sink's calls on a thread of their own, the sink gets the same
 * calls in the same order, all on that thread, whether the replay follows
 * the decoding or waits for it, with one job and with two. */
MT_TEST(a_sink_on_a_thread_of_its_own_gets_the_same_calls)
{
	const char *b = walk("w2.mtrace", "--insns 8000000 --cpus 2 --seed 5");
	char msg[512];
	uint64_t insns;

	for (int late = 0; late <= 1; late++) {
		for (unsigned int jobs = 1; jobs <= 2; jobs++) {
			struct elsewhere here = { 0 }, there = { 0 };

			MT_ASSERT_EQ(run_elsewhere(b, &here, jobs, late, -1, msg, sizeof(msg),
						   &insns), 0);
			MT_ASSERT_EQ(run_elsewhere(b, &there, jobs, late, 1, msg, sizeof(msg),
						   &insns), 0);
			MT_ASSERT_EQ(here.calls_elsewhere, 0);
			MT_ASSERT_EQ(there.calls_elsewhere, there.calls);
			MT_ASSERT_EQ(here.calls, there.calls);
			MT_ASSERT(here.steps.n > 10000);
			MT_ASSERT_MSG(steps_diff("walk", "on the run's thread", &here.steps,
						 "on the sink's", &there.steps, NULL, msg,
						 sizeof(msg)) == 0,
				      "late %d, %u jobs: %s", late, jobs, msg);
			free(here.steps.v);
			free(there.steps.v);
		}
	}
}

/* A sink on its own thread that fails ends the run with its value and
 * gets no call after it: at the first call, within the first block handed
 * over, after it (the decoding then stops soon after, a block of calls
 * later) and at the last call, when the merge has ended. */
MT_TEST(a_sink_failing_on_its_own_thread_ends_the_run)
{
	const char *b = walk("w2.mtrace", "--insns 8000000 --cpus 2 --seed 5");
	struct elsewhere whole = { 0 };
	uint64_t all, insns;
	char msg[512];

	MT_ASSERT_EQ(run_elsewhere(b, &whole, 2, 1, 1, msg, sizeof(msg), &all), 0);
	const int fail_at[] = { 1, 300, 5000, whole.calls };

	for (size_t i = 0; i < sizeof(fail_at) / sizeof(fail_at[0]); i++) {
		struct elsewhere e = { .fail_at = fail_at[i] };

		MT_ASSERT_EQ(run_elsewhere(b, &e, 2, 1, 1, msg, sizeof(msg), &insns), -ENOSPC);
		MT_ASSERT_EQ(e.calls, fail_at[i]);
		MT_ASSERT_MSG(!msg[0], "'%s'", msg);
		MT_ASSERT_MSG(fail_at[i] == whole.calls || insns * 4 < all,
			      "%" PRIu64 " of %" PRIu64 " instructions", insns, all);
		free(e.steps.v);
	}
	free(whole.steps.v);
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	MT_ASSERT_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The busiest stream's decoding thread's CPU time is its own: more than
 * nothing, less than the whole decode's (two streams and the replay). */
MT_TEST(busiest_stream_cpu_time)
{
	const char *b = walk("w2.mtrace", "--insns 8000000 --cpus 2 --seed 5");
	struct steps got = { 0 };
	uint64_t before = process_cpu_ns();
	struct mt_decode_stats st = decode(b, &got, 2, 0, 1);
	uint64_t spent = process_cpu_ns() - before;

	printf("# busiest stream %" PRIu64 " ns of %" PRIu64 " ns\n", st.stream_cpu_ns, spent);
	MT_ASSERT(st.stream_cpu_ns > 0);
	MT_ASSERT(st.stream_cpu_ns < spent);
	free(got.v);
}

/* Four streams, one job, a window smaller than a log chunk: the streams
 * take turns and nothing waits for ever. */
MT_TEST(four_streams_one_job_tiny_window)
{
	const char *b = walk("w4.mtrace", "--insns 1000000 --cpus 4 --seed 7");
	struct steps all = { 0 }, follow = { 0 };
	char msg[512];

	decode(b, &all, 1, 0, 0);
	decode(b, &follow, 1, 4096, 1);
	MT_ASSERT_MSG(steps_diff("walk", "waiting", &all, "following", &follow, NULL, msg,
				 sizeof(msg)) == 0, "%s", msg);
	free(follow.v);
	follow = (struct steps){ 0 };
	decode(b, &follow, 3, 4096, 1);
	MT_ASSERT_MSG(steps_diff("walk", "waiting", &all, "three jobs", &follow, NULL, msg,
				 sizeof(msg)) == 0, "%s", msg);
	free(all.v);
	free(follow.v);
}

/* PT read and decoded in windows: the same steps at the same times with a
 * window at every PSB, or every 64 KiB, as in one window, and a stream's
 * PT in memory is its window, not the stream. */
MT_TEST(pt_windows_change_nothing_and_bound_the_pt_held)
{
	const char *b = walk("wp.mtrace", "--insns 4000000 --cpus 2 --seed 9 --psb-freq 0");
	const struct mt_decode_opts one = { .pt_window = (size_t)1 << 30 };
	struct steps whole = { 0 };
	struct mt_decode_stats sw = steps_decode_with(b, &whole, &one, NULL);
	struct mt_decode_stats s1 = in_windows(b, 1, &whole);
	struct mt_decode_stats s64 = in_windows(b, 64 << 10, &whole);

	printf("# %" PRIu64 " bytes of PT in 2 streams: %" PRIu64 " windows at PSBs, %" PRIu64
	       " of 64 KiB; held %" PRIu64 ", %" PRIu64 " and %" PRIu64 " bytes\n",
	       sw.pt_bytes, s1.pt_windows, s64.pt_windows, sw.pt_held, s1.pt_held, s64.pt_held);
	MT_ASSERT(whole.n > 10000);
	MT_ASSERT_EQ(sw.pt_windows, 2);
	MT_ASSERT(sw.pt_held * 2 >= sw.pt_bytes);
	MT_ASSERT(s64.pt_windows >= sw.pt_bytes / (80 << 10));
	MT_ASSERT(s1.pt_windows > 4 * s64.pt_windows);
	/* A window runs on to the next PSB (2 KiB here) and through its
	 * PSB+; the buffer grows to a sixteenth more than it needs. */
	MT_ASSERT(s64.pt_held <= ((64 << 10) + (4 << 10)) * 17 / 16);
	MT_ASSERT(s64.pt_held * 4 < sw.pt_held);
	free(whole.v);
}

/* The scan runs ahead of the decoding only as far as it asks, and drops
 * what it can no longer ask for: with many enables (a switch every 300
 * instructions, a TSC packet each) and 16 KiB windows, the same steps as
 * in one window, and what the scan holds does not grow with the stream,
 * where in one window it holds every PSB and TSC packet. */
MT_TEST(scan_held_does_not_grow_with_the_stream)
{
	const struct mt_decode_opts one = { .pt_window = (size_t)1 << 30 };
	struct mt_decode_stats sw[2], s16[2];
	char extra[128];

	for (int i = 0; i < 2; i++) {
		struct steps whole = { 0 };
		const char *b;

		snprintf(extra, sizeof(extra), "--cpus 2 --slice 300 --seed 3 --psb-freq 0 --insns %d",
			 i ? 8000000 : 1000000);
		b = walk(i ? "ws8.mtrace" : "ws1.mtrace", extra);
		sw[i] = steps_decode_with(b, &whole, &one, NULL);
		s16[i] = in_windows(b, 16 << 10, &whole);
		printf("# %" PRIu64 " bytes of PT, %zu steps: the scan held %" PRIu64
		       " bytes in one window, %" PRIu64 " in %" PRIu64 " of 16 KiB\n",
		       sw[i].pt_bytes, whole.n, sw[i].scan_held, s16[i].scan_held,
		       s16[i].pt_windows);
		MT_ASSERT(whole.n > 100000);
		free(whole.v);
	}
	MT_ASSERT(sw[1].pt_bytes >= 6 * sw[0].pt_bytes);
	/* Its arrays grow by doubling. */
	MT_ASSERT(s16[1].scan_held <= 2 * s16[0].scan_held);
	MT_ASSERT(s16[1].scan_held * 8 < sw[1].scan_held);
}

/* The replay's queues of segments hold what is queued, not what they
 * ever queued: with a switch every 300 instructions on two streams, their
 * capacity stays within four times the most they held queued (doubling,
 * and a front dropped once it is half the queue). A stream's queue of
 * segments waiting for the other stream's watermark may never empty; it
 * kept everything once, 3.6 times as much at 24 M instructions as at 1 M. */
MT_TEST(segment_queues_do_not_grow_with_the_stream)
{
	const char *b = walk("wq24.mtrace", "--cpus 2 --slice 300 --seed 4 --insns 24000000");

	for (unsigned int jobs = 1; jobs <= 2; jobs++) {
		struct steps got = { 0 };
		struct mt_decode_stats st = decode(b, &got, jobs, 64 << 10, 1);

		printf("# %" PRIu64 " bytes of PT, %zu steps, %u jobs: segment queues held %" PRIu64
		       " bytes for %" PRIu64 " queued at most\n", st.pt_bytes, got.n, jobs,
		       st.seg_queues_held, st.seg_queues_peak);
		MT_ASSERT(got.n > 1000000);
		MT_ASSERT(st.seg_queues_peak > 0);
		MT_ASSERT(st.seg_queues_held <= 4 * st.seg_queues_peak + (64 << 10));
		free(got.v);
	}
}
