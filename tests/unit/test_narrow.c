// SPDX-License-Identifier: MIT
/*
 * Narrowing (narrow/narrow.h and the decoder's CPU and thread selection)
 * on bundles the PT generator makes: a random walk of a small program
 * with a trigger, and a two-thread program on two CPUs. The whole decode
 * is turned into calls (thread, function, begin, end, depth); an
 * independent model of each narrowing says which calls must remain and
 * where they begin and end; the narrowed decode must give exactly those.
 */
#include "test_decode_fixture.h"

#include "decode/decode.h"
#include "narrow/narrow.h"

#include <errno.h>
#include <inttypes.h>

struct call {
	uint32_t tid, fn;
	uint64_t b, e;		/* e: UINT64_MAX when still open at the end */
	int depth;		/* 1: outermost */
	long parent;		/* index, -1 for none */
	int inferred;
	char name[40];		/* function ids differ from one decode to another */
};

struct calls {
	struct call *v;
	size_t n, cap;
	/* per thread, the open calls (indexes), while collecting */
	struct {
		uint32_t tid;
		long stack[512];
		int depth;
	} th[8];
	int nth;
	uint64_t trigger_ns;
	int triggers;
};

static int th_index(struct calls *c, uint32_t tid)
{
	for (int i = 0; i < c->nth; i++)
		if (c->th[i].tid == tid)
			return i;
	MT_ASSERT(c->nth < 8);
	c->th[c->nth].tid = tid;
	c->th[c->nth].depth = 0;
	return c->nth++;
}

static int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct calls *c = ctx;
	int t = th_index(c, tid);

	(void)pid;
	if (ev->kind == MT_EV_BEGIN) {
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 1024;
			c->v = realloc(c->v, c->cap * sizeof(*c->v));
			MT_ASSERT(c->v);
		}
		MT_ASSERT(c->th[t].depth < 512);
		c->v[c->n] = (struct call){ tid, ev->arg, ns, UINT64_MAX, c->th[t].depth + 1,
					    c->th[t].depth ? c->th[t].stack[c->th[t].depth - 1] : -1,
					    !!(ev->flags & MT_EV_INFERRED), "" };
		c->th[t].stack[c->th[t].depth++] = (long)c->n++;
	} else if (ev->kind == MT_EV_END) {
		MT_ASSERT_MSG(c->th[t].depth > 0, "END without a call on thread %u", tid);
		c->v[c->th[t].stack[--c->th[t].depth]].e = ns;
	} else if (ev->kind == MT_EV_GAP) {
		while (c->th[t].depth)
			c->v[c->th[t].stack[--c->th[t].depth]].e = ns;
	}
	return 0;
}

static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t)
{
	struct calls *c = ctx;

	(void)t;
	c->trigger_ns = ns;
	c->triggers++;
	return 0;
}

/* The generator's bundle NAME of PROG with ARGS, made once. */
static const char *bundle_path(const char *name, const char *args, const char *prog)
{
	char ptgen[1200], progs[1200];
	const char *path = fx_path(name);

	if (!access(path, R_OK))
		return path;
	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' -o '%s.tmp' %s '%s/%s' >/dev/null && mv '%s.tmp' '%s'", ptgen, path, args,
	      progs, prog, path, path);
	return path;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The walk: one thread, a trigger at the 300th entry of classify. */
static const char *walk_bundle(void)
{
	return bundle_path("walk.mtrace", "--insns 30000 --trigger classify:300 --walk",
			   "indirect-nopie");
}

/* Decodes BUNDLE narrowed by NO (NULL: not) and the CPU and thread lists
 * into OUT; with SYM, *SYM_FN is its function id. */
static void decode(const char *bundle, const struct mt_narrow_opts *no, const uint32_t *cpus,
		   size_t ncpus, const uint32_t *tids, size_t ntids, struct calls *out,
		   const char *sym, uint32_t *sym_fn)
{
	struct mt_decode_opts o = { .cpus = cpus, .ncpus = ncpus, .tids = tids, .ntids = ntids };
	struct mt_decode_sink sink = { NULL, collect, on_trigger, out, 0 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];
	int rc;

	memset(out, 0, sizeof(*out));
	MT_ASSERT_MSG(mt_bundle_open(&r, bundle, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	if (no && mt_narrow_active(no)) {
		struct mt_narrow n;
		struct mt_decode_sink ns;

		mt_narrow_init(&n, d, no, &sink);
		ns = mt_narrow_sink(&n);
		rc = mt_narrow_run(&n, &ns);
		mt_narrow_fini(&n);
	} else {
		rc = mt_decode_run(d, &sink);
	}
	MT_ASSERT_EQ(rc, 0);
	for (size_t i = 0; i < out->n; i++) {
		struct mt_func f = mt_decode_func(d, out->v[i].fn);

		snprintf(out->v[i].name, sizeof(out->v[i].name), "%s",
			 mt_func_label(&f, out->v[i].fn));
		if (sym && f.name && !strcmp(f.name, sym))
			*sym_fn = out->v[i].fn;	/* for the model */
	}
	mt_decode_free(d);
	mt_bundle_close(r);
}

/* The model: which calls of ALL remain under O, with their clipped times. */
struct want {
	uint64_t from, to;	/* resolved window */
	uint64_t min;
	unsigned int depth;
	long sym_fn;		/* -1: no function filter */
};

static int under_sym(const struct calls *a, long i, long sym_fn)
{
	for (; i >= 0; i = a->v[i].parent)
		if ((long)a->v[i].fn == sym_fn)
			return 1;
	return 0;
}

static void model(const struct calls *all, const struct want *w, struct calls *out)
{
	/* 1: kept; 2: something under it is kept (it is wanted as a caller). */
	char *keep = calloc(all->n ? all->n : 1, 1);

	MT_ASSERT(keep);
	memset(out, 0, sizeof(*out));
	/* Innermost first: a call comes after its callers. */
	for (size_t k = all->n; k-- > 0;) {
		const struct call *c = &all->v[k];
		uint64_t b = c->b > w->from ? c->b : w->from;
		uint64_t e = c->e < w->to ? c->e : w->to;
		int ok = c->b <= w->to && c->e >= w->from && e - b >= w->min &&
			 (!w->depth || c->depth <= (int)w->depth);
		int wanted = w->sym_fn < 0 || under_sym(all, (long)k, w->sym_fn) || keep[k] == 2;

		keep[k] = ok && wanted;
		if (keep[k] && c->parent >= 0)
			keep[c->parent] = 2;
	}
	for (size_t k = 0; k < all->n; k++) {
		struct call c = all->v[k];

		if (!keep[k])
			continue;
		c.b = c.b > w->from ? c.b : w->from;
		if (c.e > w->to)
			c.e = UINT64_MAX;	/* left open at the window's end */
		if (out->n == out->cap) {
			out->cap = out->cap ? out->cap * 2 : 1024;
			out->v = realloc(out->v, out->cap * sizeof(*out->v));
			MT_ASSERT(out->v);
		}
		out->v[out->n++] = c;
	}
	free(keep);
}

static void same_calls(const struct calls *want, const struct calls *got)
{
	size_t n = want->n < got->n ? want->n : got->n;

	for (size_t i = 0; i < n; i++) {
		const struct call *a = &want->v[i], *b = &got->v[i];

		MT_ASSERT_MSG(a->tid == b->tid && !strcmp(a->name, b->name) && a->b == b->b &&
				      a->e == b->e,
			      "call %zu: want tid %u %s [%" PRIu64 ", %" PRIu64 "], got tid %u %s [%" PRIu64
			      ", %" PRIu64 "]",
			      i, a->tid, a->name, a->b, a->e, b->tid, b->name, b->b, b->e);
	}
	MT_ASSERT_MSG(want->n == got->n, "%zu calls wanted, %zu kept", want->n, got->n);
}

/* Two worker threads on two CPUs. */
static const char *threads_bundle(void)
{
	return bundle_path("threads.mtrace", "--cpus 2 --", "threads");
}

/* Runs BUNDLE with O and checks it against the model W. */
static void check(const char *bundle, struct mt_narrow_opts *o, struct want *w, size_t *kept,
		  size_t *total)
{
	struct calls all, got, want;
	uint32_t fn = UINT32_MAX;

	decode(bundle, NULL, NULL, 0, NULL, 0, &all, o->function, &fn);
	MT_ASSERT_MSG(all.n > 400, "only %zu calls", all.n);
	if (o->function) {
		MT_ASSERT_MSG(fn != UINT32_MAX, "no call of %s in the walk", o->function);
		w->sym_fn = fn;
	}
	if (o->window && o->around_trigger) {
		w->from = all.trigger_ns + o->from;
		w->to = all.trigger_ns + o->to;
	}
	decode(bundle, o, NULL, 0, NULL, 0, &got, NULL, NULL);
	model(&all, w, &want);
	same_calls(&want, &got);
	MT_ASSERT_MSG(want.n > 0 && want.n < all.n, "%zu of %zu calls: not a narrowing", want.n,
		      all.n);
	*kept = want.n;
	*total = all.n;
	free(all.v);
	free(got.v);
	free(want.v);
}

#define WANT_ALL { 0, UINT64_MAX, 0, 0, -1 }

MT_TEST(around_trigger_keeps_the_window_and_the_trigger)
{
	struct mt_narrow_opts o = { .window = 1, .around_trigger = 1, .from = -2000, .to = 2000 };
	struct want w = WANT_ALL;
	struct calls got;
	size_t kept, total;

	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# --around-trigger 2us: %zu of %zu calls\n", kept, total);
	decode(walk_bundle(), &o, NULL, 0, NULL, 0, &got, NULL, NULL);
	MT_ASSERT_EQ(got.triggers, 1);
	free(got.v);
	/* A window that ends before the trigger leaves it out. */
	o.to = -1000;
	decode(walk_bundle(), &o, NULL, 0, NULL, 0, &got, NULL, NULL);
	MT_ASSERT_EQ(got.triggers, 0);
	free(got.v);
}

MT_TEST(absolute_time_window)
{
	struct mt_narrow_opts o = { 0 };
	struct want w = WANT_ALL;
	struct calls all;
	char err[128], spec[96];
	size_t kept, total;

	decode(walk_bundle(), NULL, NULL, 0, NULL, 0, &all, NULL, NULL);
	/* The middle third of the calls' span. */
	w.from = all.v[all.n / 3].b;
	w.to = all.v[2 * all.n / 3].b;
	free(all.v);
	snprintf(spec, sizeof(spec), "%" PRIu64 ",%" PRIu64, w.from, w.to);
	MT_ASSERT_EQ(mt_narrow_parse_time(spec, &o, err, sizeof(err)), 0);
	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# --time %s: %zu of %zu calls\n", spec, kept, total);
}

/* A window between two events (inside a long call, say) still holds the
 * calls open across it, from its start to its end. */
MT_TEST(window_without_an_event)
{
	struct mt_narrow_opts o = { 0 };
	struct want w = WANT_ALL;
	struct calls all;
	char err[128], spec[96];
	uint64_t *ts, gap = 0;
	size_t n = 0, kept, total;

	decode(walk_bundle(), NULL, NULL, 0, NULL, 0, &all, NULL, NULL);
	ts = malloc(2 * all.n * sizeof(*ts));
	MT_ASSERT(ts);
	for (size_t i = 0; i < all.n; i++) {
		ts[n++] = all.v[i].b;
		if (all.v[i].e != UINT64_MAX)
			ts[n++] = all.v[i].e;
	}
	qsort(ts, n, sizeof(*ts), cmp_u64);
	/* The widest stretch without an event, in the trace's middle half. */
	for (size_t i = n / 4; i + 1 < 3 * n / 4; i++)
		if (ts[i + 1] - ts[i] > gap) {
			gap = ts[i + 1] - ts[i];
			w.from = ts[i] + 1;
			w.to = ts[i + 1] - 1;
		}
	free(ts);
	free(all.v);
	MT_ASSERT_MSG(gap >= 3, "no stretch of 3 ns without an event");
	snprintf(spec, sizeof(spec), "%" PRIu64 ",%" PRIu64, w.from, w.to);
	MT_ASSERT_EQ(mt_narrow_parse_time(spec, &o, err, sizeof(err)), 0);
	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# --time %s, between two events: %zu of %zu calls\n", spec, kept, total);
}

MT_TEST(function_keeps_its_subtrees_and_callers)
{
	struct mt_narrow_opts o = { .function = "work_step" };
	struct want w = WANT_ALL;
	size_t kept, total;

	check(threads_bundle(), &o, &w, &kept, &total);
	printf("# --function work_step: %zu of %zu calls\n", kept, total);
}

MT_TEST(min_duration_folds_short_calls)
{
	struct mt_narrow_opts o = { .min_duration = 40 };
	struct want w = WANT_ALL;
	size_t kept, total;

	w.min = 40;
	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# --min-duration 40ns: %zu of %zu calls\n", kept, total);
}

MT_TEST(max_depth)
{
	struct mt_narrow_opts o = { .max_depth = 20 };
	struct want w = WANT_ALL;
	size_t kept, total;

	w.depth = 20;
	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# --max-depth 20: %zu of %zu calls\n", kept, total);
}

MT_TEST(all_combined)
{
	struct mt_narrow_opts o = { .window = 1, .around_trigger = 1, .from = -3000, .to = 0,
				    .function = "sub", .min_duration = 10, .max_depth = 30 };
	struct want w = WANT_ALL;
	size_t kept, total;

	w.min = 10;
	w.depth = 30;
	check(walk_bundle(), &o, &w, &kept, &total);
	printf("# combined: %zu of %zu calls\n", kept, total);
}

/* Two worker threads on two CPUs: --tid keeps one thread's calls exactly,
 * --cpu keeps exactly the calls of the threads that ran there. */
MT_TEST(tid_and_cpu_select_in_the_decoder)
{
	const char *b = threads_bundle();
	struct calls all, got;
	uint32_t tid, cpu = 1;
	size_t n = 0;

	decode(b, NULL, NULL, 0, NULL, 0, &all, NULL, NULL);
	MT_ASSERT(all.nth >= 2);
	tid = all.th[1].tid;
	decode(b, NULL, NULL, 0, &tid, 1, &got, NULL, NULL);
	for (size_t i = 0; i < all.n; i++)
		if (all.v[i].tid == tid) {
			MT_ASSERT(n < got.n);
			MT_ASSERT(!strcmp(got.v[n].name, all.v[i].name) && got.v[n].b == all.v[i].b &&
				  got.v[n].e == all.v[i].e);
			n++;
		}
	MT_ASSERT_EQ(got.n, n);
	MT_ASSERT(n > 0 && n < all.n);
	free(got.v);
	/* Only CPU 1: fewer calls, and none of a thread that never ran there. */
	decode(b, NULL, &cpu, 1, NULL, 0, &got, NULL, NULL);
	MT_ASSERT(got.n > 0 && got.n < all.n);
	printf("# --tid %u: %zu of %zu calls; --cpu 1: %zu\n", tid, n, all.n, got.n);
	free(got.v);
	free(all.v);
}

/* Runs the walk narrowed by O; returns mt_narrow_left_nothing() and its line in WHY. */
static int left_nothing(const struct mt_narrow_opts *o, char *why, size_t len)
{
	struct calls got;
	struct mt_decode_sink sink = { NULL, collect, on_trigger, &got, 0 }, ns;
	struct mt_decode_opts dopts = { 0 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	struct mt_narrow n;
	char err[512];
	int empty;

	memset(&got, 0, sizeof(got));
	why[0] = '\0';
	MT_ASSERT_MSG(mt_bundle_open(&r, walk_bundle(), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &dopts, err, sizeof(err)) == 0, "%s", err);
	mt_narrow_init(&n, d, o, &sink);
	ns = mt_narrow_sink(&n);
	MT_ASSERT_EQ(mt_narrow_run(&n, &ns), 0);
	empty = mt_narrow_left_nothing(&n, why, len);
	/* Nothing left exactly when the sink got no call. */
	MT_ASSERT_EQ(empty, got.n == 0);
	mt_narrow_fini(&n);
	mt_decode_free(d);
	mt_bundle_close(r);
	free(got.v);
	return empty;
}

/* A narrowing that leaves no call says why, with what the trace holds. */
MT_TEST(what_a_narrowing_that_left_nothing_says)
{
	struct mt_narrow_opts o = { .function = "classify" };
	struct calls all;
	char why[256], want[256];
	uint64_t first, last = 0;

	decode(walk_bundle(), NULL, NULL, 0, NULL, 0, &all, NULL, NULL);
	first = all.v[0].b;
	for (size_t i = 0; i < all.n; i++) {
		last = all.v[i].b > last ? all.v[i].b : last;
		last = all.v[i].e != UINT64_MAX && all.v[i].e > last ? all.v[i].e : last;
	}
	free(all.v);
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 0);
	o.function = "no_such_function";
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	MT_ASSERT_STREQ(why, "the trace holds no call of no_such_function");
	/* A name's start is not the name (only a C++ name's parameters may follow). */
	o.function = "classif";
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	o = (struct mt_narrow_opts){ .window = 1, .from = 0, .to = (int64_t)first - 1 };
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	snprintf(want, sizeof(want), "the window ends at %" PRIu64
		 " ns, before the trace's first event at %" PRIu64 " ns", first - 1, first);
	MT_ASSERT_STREQ(why, want);
	o = (struct mt_narrow_opts){ .window = 1, .from = (int64_t)last + 1, .to = INT64_MAX };
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	snprintf(want, sizeof(want), "the window starts at %" PRIu64
		 " ns, after the trace's last event at %" PRIu64 " ns", last + 1, last);
	MT_ASSERT_STREQ(why, want);
	o = (struct mt_narrow_opts){ .min_duration = 3000000000 };
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	MT_ASSERT_STREQ(why, "no call lasts 3s or longer");
	o.function = "classify";
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	MT_ASSERT_STREQ(why, "no call of classify or under it lasts 3s or longer");
	/* Every call of it below the depth kept: once "the trace holds no call". */
	o = (struct mt_narrow_opts){ .function = "classify", .max_depth = 1 };
	MT_ASSERT_EQ(left_nothing(&o, why, sizeof(why)), 1);
	MT_ASSERT_STREQ(why, "every call of classify nests deeper than --max-depth 1");
}

MT_TEST(parse_errors)
{
	struct mt_narrow_opts o = { 0 };
	char err[256];
	uint64_t v;

	MT_ASSERT_EQ(mt_narrow_parse_duration("2ms", &v), 0);
	MT_ASSERT_EQ(v, 2000000);
	MT_ASSERT_EQ(mt_narrow_parse_duration("1.5us", &v), 0);
	MT_ASSERT_EQ(v, 1500);
	MT_ASSERT_EQ(mt_narrow_parse_duration("7", &v), 0);
	MT_ASSERT_EQ(v, 7);
	MT_ASSERT_EQ(mt_narrow_parse_duration("2 ms", &v), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_duration("-1ms", &v), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_duration("ms", &v), -EINVAL);
	/* Too long is told apart from not a duration. */
	MT_ASSERT_EQ(mt_narrow_parse_duration("18446744073709551615", &v), -ERANGE);
	MT_ASSERT_EQ(mt_narrow_parse_duration("99999999999s", &v), -ERANGE);
	MT_ASSERT_EQ(mt_narrow_parse_duration("99999999999x", &v), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_time("T-2ms,T+1ms", &o, err, sizeof(err)), 0);
	MT_ASSERT(o.window && o.around_trigger && o.from == -2000000 && o.to == 1000000);
	MT_ASSERT_EQ(mt_narrow_parse_time("T-1ms,", &o, err, sizeof(err)), 0);
	MT_ASSERT(o.to == INT64_MAX);
	MT_ASSERT_EQ(mt_narrow_parse_time("5s,6s", &o, err, sizeof(err)), 0);
	MT_ASSERT(!o.around_trigger && o.from == 5000000000 && o.to == 6000000000);
	MT_ASSERT_EQ(mt_narrow_parse_time("6s,5s", &o, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_time("T-1ms,5s", &o, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_time("T*1ms,T", &o, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_narrow_parse_time("5s", &o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "FROM,TO"));
}
