// SPDX-License-Identifier: MIT
/*
 * Perfetto writer: the protobuf output is parsed back by an independent
 * reader (tests/perfetto/pf_reader.c) that replays trace_processor's import
 * rules; each case then checks what a user would see.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/mt_heap.h"
#include "../lib/mt_test.h"
#include "../perfetto/pf_testutil.h"
#include "perfetto/pf_writer.h"

#define PID 100
#define TID 101

/* Opens @name with @o (NULL: defaults) and declares process PID with
 * thread TID; returns the thread handle. */
static int open_one(struct pf_writer **w, const char *name, const struct pf_options *o)
{
	static const char *const argv[] = { "./app", "--serve", "8080" };
	char err[256];
	int t;

	MT_ASSERT_MSG(pf_writer_open(w, pft_path(name), o, err, sizeof(err)) == 0, "open: %s", err);
	MT_ASSERT_EQ(pf_writer_add_process(*w, PID, "app", argv, 3), 0);
	t = pf_writer_add_thread(*w, PID, TID, "main");
	MT_ASSERT(t >= 0);
	return t;
}

static int32_t fn(struct pf_writer *w, const char *sym)
{
	struct pf_frame f = { .symbol = sym, .binary = "/usr/bin/app", .addr = 0x401000 };
	int32_t id = pf_writer_intern(w, &f);

	MT_ASSERT(id >= 0);
	return id;
}

static void close_ok(struct pf_writer *w, uint64_t end, struct pf_stats *st)
{
	char err[256];

	MT_ASSERT_MSG(pf_writer_close(w, end, st, err, sizeof(err)) == 0, "close: %s", err);
}

MT_TEST(call_return_round_trip)
{
	struct pf_frame fr = { .symbol = "handle_request", .binary = "/usr/bin/app",
			       .addr = 0x401136, .file = "src/app.c", .line = 42 };
	struct pfr_trace t;
	struct pf_writer *w;
	struct pf_stats st;
	const struct pfr_track *proc, *thr;
	const struct pfr_event *e;
	int th = open_one(&w, "rt.pftrace", NULL);
	int32_t f = pf_writer_intern(w, &fr), g = fn(w, "parse");

	MT_ASSERT(f >= 0 && f != g);
	MT_ASSERT_EQ(pf_writer_intern(w, &fr), f);
	MT_ASSERT_EQ(pf_begin(w, th, 1000000000000ull, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1000000000100ull, g, 0), 0);
	MT_ASSERT_EQ(pf_end(w, th, 1000000000350ull), 0);
	MT_ASSERT_EQ(pf_end(w, th, 1000000090000ull), 0);
	close_ok(w, 0, &st);
	MT_ASSERT_EQ(st.events, 4);
	MT_ASSERT_EQ(st.truncated, 0);

	pft_read_clean(pft_path("rt.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 4);
	MT_ASSERT_EQ(t.nseqs, 1);
	MT_ASSERT_EQ(t.cleared, 1);
	thr = pfr_thread_track(&t, TID);
	MT_ASSERT(thr && thr->pid == PID);
	MT_ASSERT_STREQ(thr->name, "main");
	MT_ASSERT_EQ(thr->open, 0);
	MT_ASSERT_EQ(thr->max_depth, 2);
	proc = NULL;
	for (size_t i = 0; i < t.ntracks; i++)
		if (t.tracks[i].kind == PFR_TRACK_PROCESS)
			proc = &t.tracks[i];
	MT_ASSERT(proc && proc->pid == PID);
	MT_ASSERT_STREQ(proc->name, "app");
	MT_ASSERT_EQ(proc->ncmdline, 3);
	MT_ASSERT_STREQ(proc->cmdline[2], "8080");

	e = &t.events[0];
	MT_ASSERT_EQ(e->type, 1);
	MT_ASSERT_EQ(e->ts, 1000000000000ull);
	MT_ASSERT_STREQ(e->name, "handle_request");
	MT_ASSERT_STREQ(e->src_file, "src/app.c");
	MT_ASSERT_EQ(e->src_line, 42);
	MT_ASSERT_STREQ(e->src_function, "handle_request (/usr/bin/app 0x401136)");
	MT_ASSERT_EQ(e->nannots, 0);
	e = &t.events[1];
	MT_ASSERT_STREQ(e->name, "parse");
	MT_ASSERT(e->src_file == NULL);
	MT_ASSERT_EQ(e->depth, 1);
	MT_ASSERT_EQ(t.events[2].type, 2);
	MT_ASSERT(t.events[2].name == NULL);
	MT_ASSERT_EQ(t.events[2].ts, 1000000000350ull);
	MT_ASSERT_EQ(t.events[3].ts, 1000000090000ull);
	pfr_free(&t);
}

/* After interning, a call is 17 bytes and a return 12 while the delta is
 * under 128 ns and the iid under 128: regressions in compactness fail here. */
MT_TEST(packet_sizes)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "size.pftrace", NULL);
	int32_t f = fn(w, "f");
	uint64_t ts = 5000;

	for (int i = 0; i < 10; i++) {
		MT_ASSERT_EQ(pf_begin(w, th, ts += 10, f, 0), 0);
		MT_ASSERT_EQ(pf_end(w, th, ts += 100), 0);
	}
	MT_ASSERT_EQ(pf_begin(w, th, ts += 200, f, 0), 0);
	MT_ASSERT_EQ(pf_end(w, th, ts += 20000), 0);
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("size.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 22);
	for (size_t i = 2; i < 20; i++)
		MT_ASSERT_EQ(t.events[i].packet_bytes, t.events[i].type == 1 ? 17 : 12);
	MT_ASSERT_EQ(t.events[20].packet_bytes, 18);	/* 2-byte delta */
	MT_ASSERT_EQ(t.events[21].packet_bytes, 14);	/* 3-byte delta */
	pfr_free(&t);
}

MT_TEST(interning_many_names)
{
	enum { N = 5000 };	/* past the iid map's direct part */
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "names.pftrace", NULL);
	int th2 = pf_writer_add_thread(w, PID, TID + 1, "worker");
	static int32_t ids[N];
	char name[32];
	uint64_t ts = 1;

	MT_ASSERT(th2 >= 0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		ids[i] = fn(w, name);
	}
	/* Each name used three times on thread 1, every other one on thread 2. */
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < N; i++) {
			MT_ASSERT_EQ(pf_begin(w, th, ++ts, ids[i], 0), 0);
			MT_ASSERT_EQ(pf_end(w, th, ++ts), 0);
			if (r == 0 && i % 2 == 0) {
				MT_ASSERT_EQ(pf_begin(w, th2, ts, ids[i], 0), 0);
				MT_ASSERT_EQ(pf_end(w, th2, ts), 0);
			}
		}
	}
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("names.pftrace"), &t);
	/* One definition per name per sequence, never repeated. */
	MT_ASSERT_EQ(t.interned_names, N + N / 2);
	MT_ASSERT_EQ(pft_thread_events(&t, TID), 3 * 2 * N);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < N; i += 97) {
			snprintf(name, sizeof(name), "fn_%d", i);
			MT_ASSERT_STREQ(pft_thread_event(&t, TID, (size_t)(r * N + i) * 2)->name, name);
		}
	}
	snprintf(name, sizeof(name), "fn_%d", N - 2);
	MT_ASSERT_STREQ(pft_thread_event(&t, TID + 1, N - 2)->name, name);
	pfr_free(&t);
}

MT_TEST(threads_processes_global_order)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int a = open_one(&w, "mt.pftrace", NULL), b, c;
	int32_t f = fn(w, "f"), g = fn(w, "g");
	uint64_t last = 0;

	MT_ASSERT_EQ(pf_writer_add_process(w, 200, "other", NULL, 0), 0);
	b = pf_writer_add_thread(w, PID, 102, "worker");
	c = pf_writer_add_thread(w, 200, 201, "other-main");
	MT_ASSERT(b >= 0 && c >= 0 && a != b && b != c);
	/* Interleaved in time, with a zero-length call on each thread. */
	MT_ASSERT_EQ(pf_begin(w, a, 10, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, b, 10, g, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, c, 11, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, a, 12, g, 0), 0);
	MT_ASSERT_EQ(pf_end(w, a, 12), 0);
	MT_ASSERT_EQ(pf_begin(w, b, 12, f, 0), 0);
	MT_ASSERT_EQ(pf_end(w, b, 12), 0);
	MT_ASSERT_EQ(pf_end(w, c, 15), 0);
	MT_ASSERT_EQ(pf_end(w, b, 20), 0);
	MT_ASSERT_EQ(pf_end(w, a, 30), 0);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("mt.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 10);
	MT_ASSERT_EQ(t.nseqs, 3);
	for (size_t i = 0; i < t.nevents; i++) {
		MT_ASSERT(t.events[i].ts >= last);
		MT_ASSERT(t.events[i].seq >= 1 && t.events[i].seq <= 3);
		last = t.events[i].ts;
	}
	/* The zero-length call keeps BEGIN before END and nests under f. */
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 1)->ts, 12);
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 1)->type, 1);
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 1)->depth, 1);
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 2)->type, 2);
	MT_ASSERT_EQ(pft_thread_event(&t, 201, 0)->ts, 11);
	MT_ASSERT_EQ(pfr_thread_track(&t, 201)->pid, 200);
	MT_ASSERT_EQ(pft_thread_events(&t, 102), 4);
	pfr_free(&t);
}

/*
 * A process has hundreds of threads, each calling a few functions: the
 * writer's interning state for a thread grows with the functions it uses,
 * not to a table of 4,096 ids per sequence (16 KiB a thread, twice with
 * inferred frames). A high function id still works, on its own thread.
 */
MT_TEST(many_threads_cost_little_memory)
{
	enum { THREADS = 500 };
	struct pf_options o;
	struct pfr_trace t;
	struct pf_writer *w;
	int32_t f, g = -1;
	size_t before;
	int h[THREADS + 1];
	char name[16];

	pf_options_init(&o);
	o.late_inferred = 1;
	h[0] = open_one(&w, "threads.pftrace", &o);
	f = fn(w, "f");
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		g = fn(w, name);
	}
	before = heap_bytes();
	for (int i = 1; i <= THREADS; i++) {
		h[i] = pf_writer_add_thread(w, PID, TID + i, "worker");
		MT_ASSERT(h[i] >= 0);
		/* Written late (at the close), then straight away. */
		MT_ASSERT_EQ(pf_begin(w, h[i], 10, f, PF_BEGIN_INFERRED), 0);
		MT_ASSERT_EQ(pf_begin(w, h[i], 10, f, 0), 0);
		MT_ASSERT_EQ(pf_end(w, h[i], 11), 0);
		MT_ASSERT_EQ(pf_begin(w, h[i], 12, f, 0), 0);
		MT_ASSERT_EQ(pf_end(w, h[i], 13), 0);
	}
	if (HEAP_COUNTED)
		MT_ASSERT_MSG(heap_bytes() - before < THREADS * 2048, "%zu bytes for %d threads",
			      heap_bytes() - before, THREADS);
	MT_ASSERT_EQ(pf_begin(w, h[0], 14, g, 0), 0);
	MT_ASSERT_EQ(pf_end(w, h[0], 15), 0);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("threads.pftrace"), &t);
	/* The inferred frame, f twice, and the inferred frame's end. */
	MT_ASSERT_EQ(pft_thread_events(&t, TID + THREADS), 6);
	MT_ASSERT_EQ(pft_thread_events(&t, TID), 2);
	MT_ASSERT_STREQ(pft_thread_event(&t, TID, 0)->name, "g4999");
	pfr_free(&t);
}

MT_TEST(rejects_out_of_order_and_orphan_end)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "order.pftrace", NULL);
	int32_t f = fn(w, "f");

	MT_ASSERT_EQ(pf_end(w, th, 5), -PF_ENOFRAME);
	MT_ASSERT(strstr(pf_writer_error(w), "no open frame"));
	MT_ASSERT_EQ(pf_begin(w, th, 100, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 99, f, 0), -PF_EORDER);
	MT_ASSERT(strstr(pf_writer_error(w), "before the last event"));
	MT_ASSERT_EQ(pf_end(w, th, 50), -PF_EORDER);
	MT_ASSERT_EQ(pf_begin(w, th, 120, 12345, 0), -PF_EINVAL);
	MT_ASSERT_EQ(pf_begin(w, th, 120, f, 0x80), -PF_EINVAL);
	MT_ASSERT_EQ(pf_begin(w, 7, 120, f, 0), -PF_EINVAL);
	MT_ASSERT_EQ(pf_end(w, -1, 120), -PF_EINVAL);
	MT_ASSERT_EQ(pf_instant(w, th, 120, NULL), -PF_EINVAL);
	/* The writer stays usable. */
	MT_ASSERT_EQ(pf_end(w, th, 130), 0);
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("order.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 2);
	MT_ASSERT_EQ(t.events[1].ts, 130);
	pfr_free(&t);
}

MT_TEST(declaration_errors)
{
	struct pf_writer *w;
	int th = open_one(&w, "decl.pftrace", NULL);

	(void)th;
	MT_ASSERT_EQ(pf_writer_add_process(w, PID, "again", NULL, 0), -PF_EEXIST);
	MT_ASSERT_EQ(pf_writer_add_thread(w, PID, TID, "again"), -PF_EEXIST);
	MT_ASSERT_EQ(pf_writer_add_thread(w, 999, 1000, "orphan"), -PF_ENOPROC);
	MT_ASSERT(strstr(pf_writer_error(w), "process 999 not declared"));
	MT_ASSERT_EQ(pf_writer_add_process(w, 5, "x", NULL, 2), -PF_EINVAL);
	MT_ASSERT_EQ(pf_writer_intern(w, NULL), -PF_EINVAL);
	MT_ASSERT_STREQ(pf_strerror(-PF_EORDER), "event out of time order");
	MT_ASSERT_STREQ(pf_strerror(99), "unknown error");
	close_ok(w, 0, NULL);
}

MT_TEST(open_errors)
{
	struct pf_writer *w = (struct pf_writer *)1;
	struct pf_options o;
	char err[256];

	pf_options_init(&o);
	o.max_depth = 0;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("x.pftrace"), &o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(w == NULL);
	MT_ASSERT_STREQ(err, "max_depth must be 1..512 (Perfetto keeps no deeper slices)");
	o.max_depth = PF_MAX_DEPTH + 1;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("x.pftrace"), &o, NULL, 0), -PF_EINVAL);
	pf_options_init(&o);
	o.clock_id = 64;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("x.pftrace"), &o, err, sizeof(err)), -PF_EINVAL);
	MT_ASSERT_STREQ(err, "clock_id must be a builtin Perfetto clock (1..63)");
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("no/such/dir/t.pftrace"), NULL, err, sizeof(err)),
		     -EIO);
	MT_ASSERT(strstr(err, "cannot create "));
	MT_ASSERT(strstr(err, "no/such/dir/t.pftrace: No such file or directory"));
	MT_ASSERT_EQ(pf_writer_close(NULL, 0, NULL, err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "no writer");
}

MT_TEST(inferred_frames_at_snapshot_start)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "inf.pftrace", NULL);
	int32_t outer = fn(w, "main"), mid = fn(w, "serve"), leaf = fn(w, "read");
	const struct pfr_event *e;

	/* Data starts inside main > serve: inferred, outermost first. */
	MT_ASSERT_EQ(pf_begin(w, th, 1000, outer, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1000, mid, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1000, leaf, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1100, leaf, PF_BEGIN_INFERRED), -PF_EINFERRED);
	MT_ASSERT_EQ(pf_end(w, th, 1200), 0);
	MT_ASSERT_EQ(pf_end(w, th, 1300), 0);
	MT_ASSERT_EQ(pf_end(w, th, 1400), 0);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("inf.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 6);
	e = pft_thread_event(&t, TID, 0);
	MT_ASSERT_STREQ(e->name, "main");
	MT_ASSERT_EQ(e->depth, 0);
	MT_ASSERT_EQ(pft_annot(e, "inferred_start")->u, 1);
	e = pft_thread_event(&t, TID, 1);
	MT_ASSERT_STREQ(e->name, "serve");
	MT_ASSERT_EQ(e->depth, 1);
	pft_annot(e, "inferred_start");
	e = pft_thread_event(&t, TID, 2);
	MT_ASSERT_STREQ(e->name, "read");
	MT_ASSERT_EQ(e->depth, 2);
	MT_ASSERT(pfr_annot(e, "inferred_start") == NULL);
	pfr_free(&t);
}

MT_TEST(open_frames_truncated_at_close)
{
	struct pfr_trace t;
	struct pf_writer *w;
	struct pf_stats st;
	int th = open_one(&w, "trunc.pftrace", NULL);
	int th2 = pf_writer_add_thread(w, PID, 102, "idle");
	int32_t f = fn(w, "f"), g = fn(w, "g");

	MT_ASSERT_EQ(pf_begin(w, th, 10, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th2, 15, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 20, g, 0), 0);
	/* An end time before the last event is raised to it. */
	close_ok(w, 5, &st);
	MT_ASSERT_EQ(st.truncated, 3);
	MT_ASSERT_EQ(st.events, 6);

	pft_read_clean(pft_path("trunc.pftrace"), &t);
	MT_ASSERT_EQ(pfr_thread_track(&t, TID)->open, 0);
	MT_ASSERT_EQ(pfr_thread_track(&t, 102)->open, 0);
	for (size_t i = 3; i < 6; i++) {
		MT_ASSERT_EQ(t.events[i].type, 2);
		MT_ASSERT_EQ(t.events[i].ts, 20);
		pft_annot(&t.events[i], "truncated");
		MT_ASSERT_EQ(pft_annot(&t.events[i], "truncated")->u, 1);
	}
	pfr_free(&t);

	/* With an explicit snapshot end later than the last event. */
	th = open_one(&w, "trunc2.pftrace", NULL);
	f = fn(w, "f");
	MT_ASSERT_EQ(pf_begin(w, th, 10, f, 0), 0);
	close_ok(w, 500, NULL);
	pft_read_clean(pft_path("trunc2.pftrace"), &t);
	MT_ASSERT_EQ(t.events[1].ts, 500);
	pfr_free(&t);
}

MT_TEST(keep_open_frames)
{
	struct pfr_trace t;
	struct pf_writer *w;
	struct pf_options o;
	struct pf_stats st;
	int th;
	int32_t f;

	pf_options_init(&o);
	o.keep_open_frames = 1;
	th = open_one(&w, "open.pftrace", &o);
	f = fn(w, "f");
	MT_ASSERT_EQ(pf_begin(w, th, 10, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 11, f, 0), 0);
	close_ok(w, 100, &st);
	MT_ASSERT_EQ(st.truncated, 0);
	pft_read_clean(pft_path("open.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 2);
	MT_ASSERT_EQ(pfr_thread_track(&t, TID)->open, 2);
	pfr_free(&t);
}

MT_TEST(gap_closes_frames_and_marks)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "gap.pftrace", NULL);
	int32_t f = fn(w, "f"), g = fn(w, "g");
	const struct pfr_event *e;

	MT_ASSERT_EQ(pf_begin(w, th, 10, f, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 20, g, 0), 0);
	MT_ASSERT_EQ(pf_gap(w, th, 30, "overflow"), 0);
	/* A new segment: its running frames are inferred again. */
	MT_ASSERT_EQ(pf_begin(w, th, 50, f, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_end(w, th, 60), 0);
	MT_ASSERT_EQ(pf_instant(w, th, 70, "syscall"), 0);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("gap.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 8);
	for (size_t i = 2; i < 4; i++) {
		e = pft_thread_event(&t, TID, i);
		MT_ASSERT_EQ(e->type, 2);
		MT_ASSERT_EQ(e->ts, 30);
		pft_annot(e, "truncated");
	}
	e = pft_thread_event(&t, TID, 4);
	MT_ASSERT_EQ(e->type, 3);
	MT_ASSERT_STREQ(e->name, "trace gap");
	MT_ASSERT_EQ(e->depth, 0);
	MT_ASSERT_STREQ(pft_annot(e, "reason")->s, "overflow");
	pft_annot(pft_thread_event(&t, TID, 5), "inferred_start");
	e = pft_thread_event(&t, TID, 7);
	MT_ASSERT_STREQ(e->name, "syscall");
	MT_ASSERT_EQ(e->type, 3);
	pfr_free(&t);
}

/* Nests @depth calls of one function at ts 1..depth and unwinds them. */
static void nest(struct pf_writer *w, int th, int32_t f, int depth)
{
	for (int i = 0; i < depth; i++)
		MT_ASSERT_EQ(pf_begin(w, th, (uint64_t)i + 1, f, 0), 0);
	for (int i = 0; i < depth; i++)
		MT_ASSERT_EQ(pf_end(w, th, (uint64_t)(depth + i) + 1), 0);
}

MT_TEST(depth_cap_is_visible)
{
	struct pfr_trace t;
	struct pf_writer *w;
	struct pf_options o;
	struct pf_stats st;
	const struct pfr_event *e;
	int th;

	pf_options_init(&o);
	o.max_depth = 4;
	th = open_one(&w, "cap.pftrace", &o);
	nest(w, th, fn(w, "recurse"), 10);
	close_ok(w, 0, &st);
	MT_ASSERT_EQ(st.hidden, 7);
	pft_read_clean(pft_path("cap.pftrace"), &t);
	MT_ASSERT_EQ(pfr_thread_track(&t, TID)->max_depth, 4);
	MT_ASSERT_EQ(t.nevents, 8);
	e = pft_thread_event(&t, TID, 3);
	MT_ASSERT_STREQ(e->name, "[deeper frames hidden]");
	MT_ASSERT_EQ(e->depth, 3);
	MT_ASSERT_EQ(e->ts, 4);
	e = pft_thread_event(&t, TID, 4);
	MT_ASSERT_EQ(e->type, 2);
	MT_ASSERT_EQ(e->ts, 17);	/* when the 4th level returns */
	MT_ASSERT_EQ(pft_annot(e, "hidden_frames")->u, 7);
	pfr_free(&t);

	/* Perfetto's own limit by default: 600 levels stay importable. */
	th = open_one(&w, "cap512.pftrace", NULL);
	nest(w, th, fn(w, "recurse"), 600);
	close_ok(w, 0, &st);
	MT_ASSERT_EQ(st.hidden, 89);
	pft_read_clean(pft_path("cap512.pftrace"), &t);
	MT_ASSERT_EQ(pfr_thread_track(&t, TID)->max_depth, 512);
	pfr_free(&t);
}

MT_TEST(depth_cap_with_truncation)
{
	struct pfr_trace t;
	struct pf_writer *w;
	struct pf_options o;
	struct pf_stats st;
	const struct pfr_event *e;
	int th;
	int32_t f;

	pf_options_init(&o);
	o.max_depth = 2;
	th = open_one(&w, "captr.pftrace", &o);
	f = fn(w, "f");
	for (int i = 0; i < 5; i++)
		MT_ASSERT_EQ(pf_begin(w, th, 10, f, 0), 0);
	MT_ASSERT_EQ(pf_instant(w, th, 11, "deep"), 0);	/* hidden as well */
	close_ok(w, 20, &st);
	MT_ASSERT_EQ(st.truncated, 5);
	MT_ASSERT_EQ(st.hidden, 4);
	pft_read_clean(pft_path("captr.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 4);
	e = pft_thread_event(&t, TID, 2);
	pft_annot(e, "truncated");
	MT_ASSERT_EQ(pft_annot(e, "hidden_frames")->u, 4);
	pfr_free(&t);
}

MT_TEST(trigger_on_its_own_track)
{
	struct pf_trigger tr = {
		.ts_ns = 250, .pid = PID, .tid = TID, .ip = 0x401234,
		.reason = "uprobe:/usr/bin/app:handle_request", .symbol = "handle_request",
		.freeze_path = "kfunc", .skid_ns = 830,
	};
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "trig.pftrace", NULL);
	int32_t f = fn(w, "f");
	const struct pfr_event *e = NULL;
	const struct pfr_track *tt, *proc = NULL;
	size_t at = 0;

	MT_ASSERT_EQ(pf_begin(w, th, 100, f, 0), 0);
	tr.ts_ns = 50;
	MT_ASSERT_EQ(pf_writer_set_trigger(w, &tr), -PF_EORDER);
	tr.ts_ns = 250;
	MT_ASSERT_EQ(pf_writer_set_trigger(w, &tr), 0);
	MT_ASSERT_EQ(pf_writer_set_trigger(w, &tr), -PF_EEXIST);
	MT_ASSERT_EQ(pf_begin(w, th, 250, f, 0), 0);
	MT_ASSERT_EQ(pf_end(w, th, 300), 0);
	MT_ASSERT_EQ(pf_end(w, th, 400), 0);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("trig.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 5);
	for (size_t i = 0; i < t.nevents; i++)
		if (t.events[i].type == 3)
			e = &t.events[i], at = i;
	MT_ASSERT(e);
	/* In time order: after the event at its timestamp, before later ones. */
	MT_ASSERT_EQ(at, 2);
	MT_ASSERT_EQ(e->ts, 250);
	MT_ASSERT_STREQ(e->name, "trigger");
	tt = pfr_track(&t, e->track);
	MT_ASSERT(tt && tt->kind == PFR_TRACK_PLAIN);
	MT_ASSERT_STREQ(tt->name, "mtrace trigger");
	for (size_t i = 0; i < t.ntracks; i++)
		if (t.tracks[i].kind == PFR_TRACK_PROCESS)
			proc = &t.tracks[i];
	MT_ASSERT(proc && tt->parent == proc->uuid);
	MT_ASSERT_STREQ(pft_annot(e, "reason")->s, "uprobe:/usr/bin/app:handle_request");
	MT_ASSERT_EQ(pft_annot(e, "tid")->u, TID);
	MT_ASSERT_EQ(pft_annot(e, "pid")->u, PID);
	MT_ASSERT_EQ(pft_annot(e, "ip")->kind, PFR_POINTER);
	MT_ASSERT_EQ(pft_annot(e, "ip")->u, 0x401234);
	MT_ASSERT_STREQ(pft_annot(e, "symbol")->s, "handle_request");
	MT_ASSERT_STREQ(pft_annot(e, "freeze_path")->s, "kfunc");
	MT_ASSERT_EQ(pft_annot(e, "skid_ns")->u, 830);
	pfr_free(&t);
}

/* A track of its own: named, outside every process, nesting like a
 * thread's, its events in the global order. */
MT_TEST(track_of_its_own)
{
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "track.pftrace", NULL);
	int32_t f = fn(w, "f"), g = fn(w, "[trace data]");
	int tr = pf_writer_add_track(w, "CPU 3 trace");
	const struct pfr_track *tt;

	MT_ASSERT(tr >= 0 && tr != th);
	MT_ASSERT_EQ(pf_begin(w, tr, 100, g, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 150, f, 0), 0);
	MT_ASSERT_EQ(pf_end(w, th, 200), 0);
	MT_ASSERT_EQ(pf_end(w, tr, 250), 0);
	MT_ASSERT_EQ(pf_end(w, tr, 260), -PF_ENOFRAME);
	close_ok(w, 0, NULL);

	pft_read_clean(pft_path("track.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 4);
	tt = pfr_track(&t, t.events[0].track);
	MT_ASSERT(tt && tt->kind == PFR_TRACK_PLAIN && !tt->parent);
	MT_ASSERT_STREQ(tt->name, "CPU 3 trace");
	MT_ASSERT_STREQ(t.events[0].name, "[trace data]");
	MT_ASSERT_EQ(t.events[3].track, t.events[0].track);
	MT_ASSERT_EQ(t.events[3].ts, 250);
	pfr_free(&t);
}

MT_TEST(trigger_after_last_event_and_unknown_process)
{
	struct pf_trigger tr = { .ts_ns = 900, .pid = 4242, .tid = 4243, .skid_ns = -1 };
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "trig2.pftrace", NULL);
	int32_t f = fn(w, "f");
	const struct pfr_event *e;

	MT_ASSERT_EQ(pf_writer_set_trigger(w, &tr), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 100, f, 0), 0);
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("trig2.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 3);
	/* The open frame ends at the last event; the trigger comes after. */
	MT_ASSERT_EQ(t.events[1].ts, 100);
	e = &t.events[2];
	MT_ASSERT_EQ(e->ts, 900);
	MT_ASSERT_EQ(pfr_track(&t, e->track)->parent, 0);
	MT_ASSERT_STREQ(pft_annot(e, "reason")->s, "unknown");
	MT_ASSERT(pfr_annot(e, "skid_ns") == NULL);
	MT_ASSERT(pfr_annot(e, "symbol") == NULL);
	pfr_free(&t);
}

MT_TEST(kernel_frames_and_odd_names)
{
	struct pf_frame k = { .symbol = "do_sys_open", .binary = "[kernel]",
			      .addr = 0xffffffff81234560ull, .flags = PF_FRAME_KERNEL };
	struct pf_frame bad = { .symbol = "bad\xff\xc3(\"x\")", .addr = 0x10 };
	struct pf_frame anon = { .addr = 0x7f0000001000ull };
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "kern.pftrace", NULL);
	int32_t fk = pf_writer_intern(w, &k), fb = pf_writer_intern(w, &bad);
	int32_t fa = pf_writer_intern(w, &anon);

	MT_ASSERT(fk >= 0 && fb >= 0 && fa >= 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1, fk, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 2, fb, 0), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 3, fa, 0), 0);
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("kern.pftrace"), &t);
	MT_ASSERT_STREQ(t.events[0].name, "do_sys_open [kernel]");
	MT_ASSERT_STREQ(t.events[0].src_function,
			"do_sys_open ([kernel] 0xffffffff81234560)");
	/* Invalid UTF-8 bytes each become U+FFFD. */
	MT_ASSERT_STREQ(t.events[1].name, "bad\xef\xbf\xbd\xef\xbf\xbd(\"x\")");
	MT_ASSERT_STREQ(t.events[2].name, "0x7f0000001000");
	MT_ASSERT_STREQ(t.events[2].src_function, "0x7f0000001000 (? 0x7f0000001000)");
	pfr_free(&t);
}

/* Names longer than a length byte, and one larger than the output buffer. */
MT_TEST(long_names)
{
	static const size_t lens[] = { 127, 128, 300, 20000, 3u << 20 };
	struct pfr_trace t;
	struct pf_writer *w;
	int th = open_one(&w, "long.pftrace", NULL);
	char *names[5];

	for (int i = 0; i < 5; i++) {
		struct pf_frame f = { .binary = "/usr/bin/app", .file = "a.c", .line = 1 };
		int32_t id;

		names[i] = malloc(lens[i] + 1);
		MT_ASSERT(names[i]);
		memset(names[i], 'a' + i, lens[i]);
		names[i][lens[i]] = 0;
		f.symbol = names[i];
		id = pf_writer_intern(w, &f);
		MT_ASSERT(id >= 0);
		MT_ASSERT_EQ(pf_begin(w, th, 10 + (uint64_t)i, id, 0), 0);
	}
	close_ok(w, 0, NULL);
	pft_read_clean(pft_path("long.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, 10);
	for (int i = 0; i < 5; i++) {
		MT_ASSERT_STREQ(t.events[i].name, names[i]);
		MT_ASSERT_EQ(strlen(t.events[i].src_function), lens[i] + strlen(" (/usr/bin/app 0x0)"));
		free(names[i]);
	}
	pfr_free(&t);
}

static void write_sample(const char *name, const struct pf_options *o)
{
	struct pf_writer *w;
	int th = open_one(&w, name, o);
	int32_t f = fn(w, "f"), g = fn(w, "g");

	for (uint64_t i = 0; i < 1000; i++) {
		MT_ASSERT_EQ(pf_begin(w, th, i * 100, f, 0), 0);
		MT_ASSERT_EQ(pf_begin(w, th, i * 100 + 10, g, 0), 0);
		MT_ASSERT_EQ(pf_end(w, th, i * 100 + 20), 0);
		MT_ASSERT_EQ(pf_end(w, th, i * 100 + 50), 0);
	}
	close_ok(w, 0, NULL);
}

MT_TEST(gzip_output)
{
	struct pfr_trace plain, gz;
	unsigned char magic[2] = { 0 };
	FILE *f;

	write_sample("s.pftrace", NULL);
	write_sample("s.pftrace.gz", NULL);
	f = fopen(pft_path("s.pftrace.gz"), "rb");
	MT_ASSERT(f);
	MT_ASSERT_EQ(fread(magic, 1, 2, f), 2);
	fclose(f);
	MT_ASSERT(magic[0] == 0x1f && magic[1] == 0x8b);
	pft_read_clean(pft_path("s.pftrace"), &plain);
	pft_read_clean(pft_path("s.pftrace.gz"), &gz);
	MT_ASSERT_EQ(gz.bytes, plain.bytes);
	MT_ASSERT_EQ(gz.nevents, 4000);
	for (size_t i = 0; i < gz.nevents; i++)
		MT_ASSERT_EQ(gz.events[i].ts, plain.events[i].ts);
	pfr_free(&plain);
	pfr_free(&gz);
}

/* The size warning, as the reporter gets it. */
struct heard {
	char msg[512];
	int n;
	enum mt_severity sev;
};

static void hear(void *ctx, enum mt_severity sev, const char *msg)
{
	struct heard *h = ctx;

	snprintf(h->msg, sizeof(h->msg), "%s", msg);
	h->sev = sev;
	h->n++;
}

MT_TEST(size_warning)
{
	struct heard h = { "", 0, MT_SEV_NR };
	const struct mt_reporter rep = { hear, &h };
	struct pf_writer *w;
	struct pf_options o;
	const char *msg = h.msg;
	int th;

	pf_options_init(&o);
	o.warn_events = 3;
	o.rep = &rep;
	th = open_one(&w, "warn.pftrace", &o);
	MT_ASSERT_EQ(pf_begin(w, th, 1, fn(w, "f"), 0), 0);
	MT_ASSERT_EQ(pf_end(w, th, 2), 0);
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, NULL, 0), 0);
	MT_ASSERT_EQ(h.n, 0);	/* 2 events: quiet */
	th = open_one(&w, "warn.pftrace", &o);
	for (uint64_t i = 0; i < 2; i++) {
		MT_ASSERT_EQ(pf_begin(w, th, i * 2, fn(w, "f"), 0), 0);
		MT_ASSERT_EQ(pf_end(w, th, i * 2 + 1), 0);
	}
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, NULL, 0), 0);
	MT_ASSERT_EQ(h.n, 1);
	MT_ASSERT_EQ(h.sev, MT_SEV_INFO);
	/* One line without the program's name: the caller adds what it wants. */
	MT_ASSERT(!strstr(msg, "mtrace-user") && !strchr(msg, '\n'));
	MT_ASSERT(strstr(msg, " has 4 events"));
	/* The advice names only options that exist (there is no --window). */
	MT_ASSERT(!strstr(msg, "--window"));
	MT_ASSERT(strstr(msg, "--buffer-size"));
	MT_ASSERT(strstr(msg, "trace_processor --httpd"));
}

MT_TEST(write_error_is_reported)
{
	struct pf_writer *w;
	int th;

	if (access("/dev/full", W_OK))
		mt_skip("no /dev/full");
	char err[256];

	MT_ASSERT_EQ(pf_writer_open(&w, "/dev/full", NULL, NULL, 0), 0);
	MT_ASSERT_EQ(pf_writer_add_process(w, 1, "p", NULL, 0), 0);
	th = pf_writer_add_thread(w, 1, 1, "t");
	MT_ASSERT(th >= 0);
	MT_ASSERT_EQ(pf_begin(w, th, 1, fn(w, "f"), 0), 0);
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, err, sizeof(err)), -EIO);
	MT_ASSERT_STREQ(err, "/dev/full: write failed: No space left on device");
}

/* A write that fails while later events are encoded (the sink writes
 * full buffers on a thread of its own): a later call or the close reports
 * it, with the file's error, and nothing is written after it. */
MT_TEST(write_error_behind_the_encoding_is_reported)
{
	struct pf_writer *w;
	char err[256];
	int th, rc = 0;
	uint64_t i;

	if (access("/dev/full", W_OK))
		mt_skip("no /dev/full");
	MT_ASSERT_EQ(pf_writer_open(&w, "/dev/full", NULL, NULL, 0), 0);
	MT_ASSERT_EQ(pf_writer_add_process(w, 1, "p", NULL, 0), 0);
	th = pf_writer_add_thread(w, 1, 1, "t");
	MT_ASSERT(th >= 0);
	/* Some 8 MB of events: several buffers of 1 MiB. */
	for (i = 0; i < 1000000 && !rc; i++) {
		rc = pf_begin(w, th, 2 * i + 1, fn(w, "f"), 0);
		if (!rc)
			rc = pf_end(w, th, 2 * i + 2);
	}
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, err, sizeof(err)), -EIO);
	MT_ASSERT_STREQ(err, "/dev/full: write failed: No space left on device");
	printf("# the error stopped the events after %" PRIu64 " pairs\n", i);
	MT_ASSERT(rc != 0 && i < 1000000);
}

/*
 * Random call sequences, valid and invalid, on several threads with a small
 * depth cap: whatever the writer accepts, the file must import cleanly and
 * hold exactly the events it counted.
 */
MT_TEST(random_calls_keep_the_file_valid)
{
	struct pf_options o;
	struct pf_writer *w;
	struct pf_stats st;
	struct pfr_trace t;
	uint64_t seed = 0x243f6a8885a308d3ull, ts = 100;
	int th[3];
	int32_t f[5];
	char name[16];

	pf_options_init(&o);
	o.max_depth = 6;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("rand.pftrace"), &o, NULL, 0), 0);
	MT_ASSERT_EQ(pf_writer_add_process(w, 1, "p", NULL, 0), 0);
	for (int i = 0; i < 3; i++) {
		th[i] = pf_writer_add_thread(w, 1, 10 + i, "t");
		MT_ASSERT(th[i] >= 0);
	}
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = fn(w, name);
	}
	for (int i = 0; i < 20000; i++) {
		int k, rc, which;

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		k = (int)(seed % 3);
		which = (int)(seed >> 8) % 100;
		/* Mostly forward in time, sometimes back (must be refused). */
		ts = (seed >> 20) % 50 == 0 ? ts - 3 : ts + (seed >> 30) % 4;
		if (which < 45)
			rc = pf_begin(w, th[k], ts, f[(seed >> 40) % 5],
				      (seed >> 45) % 7 == 0 ? PF_BEGIN_INFERRED : 0);
		else if (which < 90)
			rc = pf_end(w, th[k], ts);
		else if (which < 95)
			rc = pf_instant(w, th[k], ts, "i");
		else
			rc = pf_gap(w, th[k], ts, "lost");
		MT_ASSERT_MSG(rc == 0 || rc == -PF_EORDER || rc == -PF_ENOFRAME ||
			      rc == -PF_EINFERRED, "call %d: %d (%s)", i, rc, pf_writer_error(w));
		if (rc == -PF_EORDER)
			ts += 3;
	}
	MT_ASSERT_EQ(pf_writer_close(w, 0, &st, NULL, 0), 0);
	pft_read_clean(pft_path("rand.pftrace"), &t);
	MT_ASSERT_EQ(t.nevents, st.events);
	for (int i = 0; i < 3; i++) {
		MT_ASSERT(pfr_thread_track(&t, 10 + i)->max_depth <= 6);
		MT_ASSERT_EQ(pfr_thread_track(&t, 10 + i)->open, 0);
	}
	MT_ASSERT(st.hidden > 0 && st.truncated > 0);
	pfr_free(&t);
}

/*
 * late_inferred: frames found open after other events (as the decoder's
 * one-pass replay finds them, innermost first) nest as if they had come
 * first: the importer sorts by time, equal times in file order.
 */
/* open_one() with late_inferred set. */
static int open_late(struct pf_writer **w, const char *name)
{
	struct pf_options o;

	pf_options_init(&o);
	o.late_inferred = 1;
	return open_one(w, name, &o);
}

MT_TEST(late_inferred_frames_nest_first)
{
	struct pf_writer *w;
	struct pfr_trace t;
	int th = open_late(&w, "late.pftrace");
	int32_t leaf, mid, top, callee;

	leaf = fn(w, "leaf"), mid = fn(w, "mid"), top = fn(w, "top"), callee = fn(w, "callee");
	MT_ASSERT_EQ(pf_begin(w, th, 100, leaf, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 100, callee, 0), 0);	/* held: at the first time */
	MT_ASSERT_EQ(pf_end(w, th, 110), 0);
	MT_ASSERT_EQ(pf_end(w, th, 120), 0);			/* leaf returns past... */
	MT_ASSERT_EQ(pf_begin(w, th, 100, mid, PF_BEGIN_INFERRED), 0);	/* ...into mid */
	MT_ASSERT_EQ(pf_end(w, th, 130), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 100, top, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_begin(w, th, 99, mid, PF_BEGIN_INFERRED), -PF_EINFERRED);
	close_ok(w, 140, NULL);
	pft_read_clean(pft_path("late.pftrace"), &t);
	MT_ASSERT_EQ(pft_thread_events(&t, TID), 8);
	MT_ASSERT_STREQ(pft_thread_event(&t, TID, 0)->name, "top");
	MT_ASSERT_STREQ(pft_thread_event(&t, TID, 1)->name, "mid");
	MT_ASSERT_STREQ(pft_thread_event(&t, TID, 2)->name, "leaf");
	MT_ASSERT_STREQ(pft_thread_event(&t, TID, 3)->name, "callee");
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 3)->depth, 3);
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 4)->ts, 110);
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 6)->ts, 130);	/* mid ends */
	MT_ASSERT_EQ(pft_thread_event(&t, TID, 6)->depth, 2);
	MT_ASSERT(pfr_annot(pft_thread_event(&t, TID, 7), "truncated"));	/* top, at close */
	MT_ASSERT(t.nseqs >= 2);
	pfr_free(&t);
}

/* With late inferred frames the cap leaves them their own 64 levels. */
MT_TEST(late_inferred_depth_cap_leaves_room)
{
	struct pf_writer *w;
	int th = open_late(&w, "latecap.pftrace");
	int32_t f = fn(w, "f");
	struct pfr_trace t;
	struct pf_stats st;

	MT_ASSERT_EQ(pf_begin(w, th, 10, f, PF_BEGIN_INFERRED), 0);
	for (int i = 0; i < 600; i++)
		MT_ASSERT_EQ(pf_begin(w, th, 11 + (uint64_t)i, f, 0), 0);
	for (int i = 0; i < 600; i++)
		MT_ASSERT_EQ(pf_end(w, th, 700 + (uint64_t)i), 0);
	for (int i = 1; i < PF_MAX_INFERRED; i++) {
		MT_ASSERT_EQ(pf_end(w, th, 1400 + (uint64_t)i), 0);
		MT_ASSERT_EQ(pf_begin(w, th, 10, f, PF_BEGIN_INFERRED), 0);
	}
	MT_ASSERT_EQ(pf_begin(w, th, 10, f, PF_BEGIN_INFERRED), -PF_EINVAL);
	close_ok(w, 2000, &st);
	pft_read_clean(pft_path("latecap.pftrace"), &t);
	MT_ASSERT(st.hidden > 0);
	MT_ASSERT(pfr_thread_track(&t, TID)->max_depth <= PF_MAX_DEPTH);
	MT_ASSERT_EQ(pfr_thread_track(&t, TID)->open, 0);
	pfr_free(&t);
}

MT_TEST(late_inferred_needs_protobuf)
{
	struct pf_options o;
	struct pf_writer *w;
	char err[256];

	pf_options_init(&o);
	o.late_inferred = 1;
	o.format = PF_FORMAT_JSON;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("late.json"), &o, err, sizeof(err)), -PF_EINVAL);
	MT_ASSERT(strstr(err, "protobuf"));
	o.format = PF_FORMAT_PROTO;
	o.max_depth = PF_MAX_INFERRED;
	MT_ASSERT_EQ(pf_writer_open(&w, pft_path("late.pftrace"), &o, err, sizeof(err)), -PF_EINVAL);
	MT_ASSERT(strstr(err, "max_depth"));
}
