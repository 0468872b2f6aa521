// SPDX-License-Identifier: MIT
/*
 * The decoder replays each thread once when the Perfetto writer takes
 * inferred frames as they are found (decode.h's late_inferred), and twice
 * when they must come first. Both traces of the same bundle must import
 * alike: for every generated program, the events of every track, in the
 * importer's order (time, then file position), with their names, depths
 * and annotations, and no import rule broken.
 */
#include "../lib/mt_test.h"
#include "../perfetto/pf_testutil.h"
#include "test_decode_steps.h"

#include "out_perfetto/pfout.h"

/* Decodes BUNDLE to a protobuf trace at OUT, one replay or two, the
 * writer on the merge's thread or on its own (SINK_THREAD, decode.h). */
static void decode_to(const char *bundle, const char *out, int late, int sink_thread)
{
	const struct mt_decode_opts dopts = { .sink_thread = sink_thread };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	struct mt_decode_sink sink;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_writer *w;
	char err[512];

	pf_options_init(&o);
	o.late_inferred = late;
	MT_ASSERT_MSG(mt_bundle_open(&r, bundle, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &dopts, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(pf_writer_open(&w, out, &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_pfout_init(&po, d, r, w, &sink), 0);
	MT_ASSERT_EQ(sink.late_inferred, late);
	MT_ASSERT_MSG(mt_decode_run(d, &sink) == 0, "%s", po.err);
	MT_ASSERT_EQ(mt_pfout_finish(&po, mt_pfout_end_ns(&po)), 0);
	MT_ASSERT_MSG(pf_writer_close(w, mt_pfout_end_ns(&po), NULL, err, sizeof(err)) == 0, "%s",
		      err);
	mt_pfout_fini(&po);
	mt_decode_free(d);
	mt_bundle_close(r);
}

static int same_annots(const struct pfr_event *a, const struct pfr_event *b)
{
	if (a->nannots != b->nannots)
		return 0;
	for (int i = 0; i < a->nannots; i++)
		if (strcmp(a->annots[i].name, b->annots[i].name) || a->annots[i].u != b->annots[i].u)
			return 0;
	return 1;
}

static const char *str(const char *s)
{
	return s ? s : "";
}

/* The events of track UUID in T from index *I on, in order. */
static const struct pfr_event *next_on(const struct pfr_trace *t, uint64_t uuid, size_t *i)
{
	for (; *i < t->nevents; (*i)++)
		if (t->events[*i].track == uuid)
			return &t->events[(*i)++];
	return NULL;
}

/* B's track that is A's track K: the same thread, or the same name (the
 * tracks may be declared in another order). */
static uint64_t same_track(const struct pfr_trace *a, size_t k, const struct pfr_trace *b)
{
	const struct pfr_track *x = &a->tracks[k];

	for (size_t i = 0; i < b->ntracks; i++) {
		const struct pfr_track *y = &b->tracks[i];

		if (x->kind == y->kind && x->pid == y->pid && x->tid == y->tid &&
		    !strcmp(str(x->name), str(y->name)))
			return y->uuid;
	}
	mt_fail(__FILE__, __LINE__, "no track like A's %s in B", str(x->name));
	return 0;
}

static void compare_tracks(const struct pfr_trace *a, const struct pfr_trace *b, size_t *events)
{
	MT_ASSERT_EQ(a->ntracks, b->ntracks);
	for (size_t k = 0; k < a->ntracks; k++) {
		uint64_t uuid = a->tracks[k].uuid, buuid = same_track(a, k, b);
		size_t i = 0, j = 0, n = 0;
		const struct pfr_event *x, *y;

		for (;;) {
			x = next_on(a, uuid, &i);
			y = next_on(b, buuid, &j);
			if (!x || !y)
				break;
			MT_ASSERT_MSG(x->ts == y->ts && x->type == y->type && x->depth == y->depth &&
					      !strcmp(str(x->name), str(y->name)) &&
					      !strcmp(str(x->category), str(y->category)) &&
					      same_annots(x, y),
				      "track %" PRIu64 " event %zu: %d %s at %" PRIu64 " depth %d, late: "
				      "%d %s at %" PRIu64 " depth %d", uuid, n, x->type, str(x->name),
				      x->ts, x->depth, y->type, str(y->name), y->ts, y->depth);
			n++;
		}
		MT_ASSERT_MSG(!x && !y, "track %" PRIu64 ": one trace has more events after %zu",
			      uuid, n);
		*events += n;
	}
}

/* Generates PROG with EXTRA (a random walk over it with WALK), decodes it
 * both ways and compares; returns how many inferred frames it had. The
 * writer on a thread of its own writes the same trace (the same bytes
 * but where equal times of two threads meet, as for any replay that
 * follows the decoding). */
static size_t check(const char *prog, const char *extra, int walk)
{
	char ptgen[1200], progs[1200], bundle[300], two[320], one[320], apart[320];
	struct pfr_trace a, b, c;
	size_t events = 0, inferred = 0, events_apart = 0;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	snprintf(bundle, sizeof(bundle), "%s", fx_path(prog));
	strcat(bundle, ".mtrace");
	fx_sh("'%s' %s -o '%s' %s '%s/%s' >/dev/null", ptgen, extra, bundle, walk ? "--walk" : "--",
	      progs, prog);
	snprintf(two, sizeof(two), "%s.two.pftrace", bundle);
	snprintf(one, sizeof(one), "%s.one.pftrace", bundle);
	snprintf(apart, sizeof(apart), "%s.apart.pftrace", bundle);
	decode_to(bundle, two, 0, -1);
	decode_to(bundle, one, 1, -1);
	decode_to(bundle, apart, 1, 1);
	pft_read_clean(two, &a);
	pft_read_clean(one, &b);
	pft_read_clean(apart, &c);
	compare_tracks(&a, &b, &events);
	compare_tracks(&b, &c, &events_apart);
	MT_ASSERT(events > 0);
	MT_ASSERT_EQ(events_apart, events);
	for (size_t i = 0; i < b.nevents; i++)
		for (int k = 0; k < b.events[i].nannots; k++)
			inferred += !strcmp(b.events[i].annots[k].name, "inferred_start");
	pfr_free(&a);
	pfr_free(&b);
	pfr_free(&c);
	return inferred;
}

MT_TEST(every_program_imports_alike)
{
	static const char *const progs[] = { "tailcall", "recursion", "indirect", "plt",
					     "syscalls", "longjmp", "exceptions", "signals",
					     "dlopen" };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		check(progs[i], "", 0);
	check("jit", "--cpus 2", 0);
	check("threads", "--cpus 2", 0);
}

/* Gaps end stretches: each has inferred frames of its own. */
MT_TEST(overflows_import_alike)
{
	MT_ASSERT(check("recursion", "--overflow 1500:40", 0) > 1);
}

/* Starting mid-stack, a walk reveals callers again and again, up to the
 * cap per stretch, and its stacks go deeper than the writer's cap. */
MT_TEST(random_walks_import_alike)
{
	MT_ASSERT(check("indirect-nopie", "--insns 200000 --ring-size 20000", 1) > 1);
	check("indirect-nopie", "--insns 300000 --cpus 2 --seed 3", 1);
	check("indirect-nopie", "--insns 100000 --cyc --seed 2", 1);
}
