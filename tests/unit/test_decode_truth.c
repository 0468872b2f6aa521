// SPDX-License-Identifier: MIT
/*
 * The decoder against the PT generator's ground truth: for each test
 * program, the generator single-steps it, writes the PT a CPU would have
 * written and every call and return it executed; the decoded call and
 * return sequence of every thread must equal it exactly.
 *
 * Calls are BEGIN events that are no tail call, inferred or asynchronous
 * frame, with the call's target; returns are END events flagged MT_EV_RET,
 * with the address returned to.
 */
#include "test_decode_fixture.h"

#include "decode/decode.h"


struct step {
	uint32_t tid;
	char kind;		/* 'c' call, 'r' return */
	uint64_t to;
	uint64_t index;		/* truth: the thread's instruction index */
};

struct steps {
	struct step *v;
	size_t n, cap;
};

static void add_step(struct steps *s, uint32_t tid, char kind, uint64_t to, uint64_t index)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		MT_ASSERT(s->v);
	}
	s->v[s->n++] = (struct step){ tid, kind, to, index };
}

static int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)pid, (void)ns;
	if (ev->kind == MT_EV_BEGIN && ev->arg >= MT_FN_FIRST_USER &&
	    !(ev->flags & (MT_EV_TAIL | MT_EV_INFERRED | MT_EV_ASYNC)))
		add_step(ctx, tid, 'c', ev->addr, 0);
	else if (ev->kind == MT_EV_END && (ev->flags & MT_EV_RET))
		add_step(ctx, tid, 'r', ev->addr, 0);
	return 0;
}

/* Prints the steps of TID around a mismatch, to see what went wrong. */
static void show_context(const struct steps *t, size_t a, const struct steps *g, size_t b,
			 uint32_t tid)
{
	const struct steps *s[2] = { t, g };
	size_t at[2] = { a, b };

	for (int k = 0; k < 2; k++) {
		size_t i = at[k], back = 0;

		while (i > 0 && back < 6)
			back += s[k]->v[--i].tid == tid;
		printf("# %s:", k ? "decoded" : "truth");
		for (int shown = 0; i < s[k]->n && shown < 12; i++) {
			if (s[k]->v[i].tid != tid)
				continue;
			printf(" %s%c%" PRIx64, i == at[k] ? ">" : "", s[k]->v[i].kind, s[k]->v[i].to);
			shown++;
		}
		printf("\n");
	}
}

/* The generator tool and its programs, found next to this test binary
 * (O/san/tests/unit/THIS → O/rel/tests/ptgen/ptgen, O/san/tests/ptgen/). */
static void tool_paths(char *ptgen, char *progs, size_t len)
{
	char self[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *p;

	MT_ASSERT(n > 0);
	self[n] = 0;
	for (int i = 0; i < 3 && (p = strrchr(self, '/')); i++)
		*p = 0;	/* strip THIS, unit, tests: O/san */
	snprintf(progs, len, "%s/tests/ptgen/programs", self);
	p = strrchr(self, '/');
	MT_ASSERT(p);
	*p = 0;
	snprintf(ptgen, len, "%s/rel/tests/ptgen/ptgen", self);
	if (access(ptgen, X_OK) || access(progs, R_OK))
		mt_skip("needs %s and %s (make O=... %s)", ptgen, progs, ptgen);
}

/*
 * With overflows the packets of some instructions are lost; the decoded
 * steps must be the truth with (at most) one contiguous run removed per
 * overflow: everything before it and everything after it decoded exactly.
 * Single-threaded runs only.
 */
/* Whether the next 8 steps (or all that are left) agree. */
static int same_run(const struct steps *t, size_t a, const struct steps *g, size_t b)
{
	for (size_t k = 0; k < 8 && b + k < g->n; k++)
		if (a + k >= t->n || t->v[a + k].kind != g->v[b + k].kind ||
		    t->v[a + k].to != g->v[b + k].to)
			return 0;
	return 1;
}

static void check_around_gaps(const struct steps *truth, const struct steps *got,
			      uint64_t overflows)
{
	size_t a = 0, b = 0, runs = 0;

	while (b < got->n) {
		MT_ASSERT_MSG(a < truth->n, "decoded step %zu has no counterpart in the truth", b);
		if (truth->v[a].kind == got->v[b].kind && truth->v[a].to == got->v[b].to) {
			a++, b++;
			continue;
		}
		/* Skip the lost run: resume where the rest matches exactly. */
		runs++;
		MT_ASSERT_MSG(runs <= overflows, "more lost runs than overflows at decoded step %zu", b);
		while (a < truth->n && !same_run(truth, a, got, b))
			a++;
	}
	MT_ASSERT_MSG(got->n > truth->n / 2, "only %zu of %zu steps decoded", got->n, truth->n);
}

/* Times the decoder clamped, over all runs so far. */
static uint64_t clamped;

/* A thread of the truth: its tid (the decode must show no other). */
static int true_thread(const uint32_t *tids, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

/*
 * Compares every thread's decoded steps with the truth, in order; 0 if
 * equal, else -1 with the first difference in MSG (and its context
 * printed). A decoded thread the truth does not know is a difference.
 */
static int compare_threads(const char *prog, const struct steps *truth, const struct steps *got,
			   const uint32_t *tids, size_t ntids, char *msg, size_t len)
{
	for (size_t i = 0; i < got->n; i++)
		if (!true_thread(tids, ntids, got->v[i].tid))
			return snprintf(msg, len, "%s: decoded a step of thread %u, which did not run",
					prog, got->v[i].tid), -1;
	for (size_t i = 0; i < truth->n; i++) {
		uint32_t tid = truth->v[i].tid;
		size_t a = 0, b = 0, na = 0, nb = 0;

		if (i && truth->v[i - 1].tid == tid)
			continue;
		for (;;) {
			while (a < truth->n && truth->v[a].tid != tid)
				a++;
			while (b < got->n && got->v[b].tid != tid)
				b++;
			if (a == truth->n || b == got->n)
				break;
			if (truth->v[a].kind != got->v[b].kind || truth->v[a].to != got->v[b].to) {
				show_context(truth, a, got, b, tid);
				return snprintf(msg, len,
						"%s thread %u step %zu: truth %c 0x%" PRIx64
						", decoded %c 0x%" PRIx64, prog, tid, na,
						truth->v[a].kind, truth->v[a].to, got->v[b].kind,
						got->v[b].to), -1;
			}
			a++, b++, na++, nb++;
		}
		while (a < truth->n)
			na += truth->v[a++].tid == tid;
		while (b < got->n)
			nb += got->v[b++].tid == tid;
		if (na != nb)
			return snprintf(msg, len, "%s thread %u: %zu true steps, %zu decoded", prog,
					tid, na, nb), -1;
	}
	return 0;
}

/*
 * Runs the generator (on PROG, or a random walk over it with WALK) with
 * EXTRA options and compares; 0 if the decode equals the truth, else -1
 * with the difference in MSG. With WRAPPED (a single CPU whose ring kept
 * only the newest data) the truth's "visible CPU TID INDEX" line says from
 * which instruction on the trace can be decoded; earlier steps are not
 * compared.
 */
static int run_and_compare(const char *prog, const char *extra, int walk, int wrapped, char *msg,
			   size_t msglen)
{
	char ptgen[1200], progs[1200], err[512], line[256];
	struct steps truth = { 0 }, got = { 0 };
	struct mt_decode_sink sink = { NULL, collect, NULL, &got };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	uint64_t overflows;
	uint32_t tids[64];
	size_t i, ntids = 0;
	int ret = 0;
	FILE *f;

	tool_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o %s.mtrace -t %s.truth %s '%s/%s' >/dev/null", ptgen, extra, prog, prog,
	      walk ? "--walk" : "--", progs, prog);
	snprintf(line, sizeof(line), "%s.truth", prog);
	f = fopen(fx_path(line), "r");
	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long idx, tsc, from, to;
		char kind[16];
		unsigned tid, cpu;

		if (sscanf(line, "%15s %u %llu %llu %llx %llx", kind, &tid, &idx, &tsc, &from, &to) ==
			    6 &&
		    (!strcmp(kind, "call") || !strcmp(kind, "ret")))
			add_step(&truth, tid, kind[0], to, idx);
		if (sscanf(line, "thread %u", &tid) == 1 && ntids < sizeof(tids) / sizeof(tids[0]))
			tids[ntids++] = tid;
		if (wrapped && sscanf(line, "visible %u %u %llu", &cpu, &tid, &idx) == 3) {
			size_t out = 0;

			for (i = 0; i < truth.n; i++)
				if (truth.v[i].tid != tid || truth.v[i].index >= idx)
					truth.v[out++] = truth.v[i];
			truth.n = out;
		}
	}
	fclose(f);
	MT_ASSERT(truth.n > 0);
	/* A walk's truth has no thread lines: its one thread is the walker. */
	if (!ntids)
		tids[ntids++] = truth.v[0].tid;

	snprintf(line, sizeof(line), "%s.mtrace", prog);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(line), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, NULL, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_decode_run(d, &sink), 0);
	MT_ASSERT_EQ(mt_decode_get_stats(d)->errors, 0);
	/* Without CYC, times are lower bounds: none may leave the exact bounds
	 * of its stretch (it would mean the bounds are wrong). */
	if (!strstr(extra, "--cyc"))
		MT_ASSERT_EQ(mt_decode_get_stats(d)->clamped, 0);
	clamped += mt_decode_get_stats(d)->clamped;
	overflows = mt_decode_get_stats(d)->overflows;
	mt_decode_free(d);
	mt_bundle_close(r);
	if (overflows)
		check_around_gaps(&truth, &got, overflows);
	else
		ret = compare_threads(prog, &truth, &got, tids, ntids, msg, msglen);
	free(truth.v);
	free(got.v);
	return ret;
}

static void check_run(const char *prog, const char *extra, int walk, int wrapped)
{
	char msg[512];

	MT_ASSERT_MSG(run_and_compare(prog, extra, walk, wrapped, msg, sizeof(msg)) == 0, "%s", msg);
}

static void check_program(const char *prog, const char *extra)
{
	check_run(prog, extra, 0, 0);
}

MT_TEST(tailcall)
{
	check_program("tailcall", "");
}

MT_TEST(recursion)
{
	check_program("recursion", "");
}

MT_TEST(indirect)
{
	check_program("indirect", "");
}

MT_TEST(plt)
{
	check_program("plt", "");
}

MT_TEST(syscalls)
{
	check_program("syscalls", "");
}

MT_TEST(longjmp)
{
	check_program("longjmp", "");
}

/* C++ exceptions unwound by libgcc through frames that never return. */
MT_TEST(cxx_exceptions)
{
	check_program("exceptions", "");
}

MT_TEST(signals)
{
	check_program("signals", "");
}

/* A library loaded with dlopen after main starts, called, and unloaded:
 * decoded from the bundle's maps records. */
MT_TEST(dlopen_dlclose)
{
	check_program("dlopen", "");
}

/* Anonymous code made executable with mprotect and unmapped again: decoded
 * from the copy the bundle carries for it. */
MT_TEST(jit_code)
{
	check_program("jit", "--cpus 2");
}

MT_TEST(threads_on_two_cpus)
{
	check_program("threads", "--cpus 2");
}

/* 200k instructions of random walk, of which a 20 kB ring keeps the
 * newest: decoding starts mid-stack at the first PSB in the ring. */
MT_TEST(random_walk_with_ring_wrap)
{
	check_run("indirect-nopie", "--insns 200000 --ring-size 20000", 1, 1);
}

/* An internal buffer overflow every 1500 instructions, losing 40: the
 * steps around each gap are decoded exactly. */
MT_TEST(overflows)
{
	check_program("recursion", "--overflow 1500:40");
}

/*
 * Cycle-accurate runs: libipt's time for a trace-disable can be later than
 * the thread's next switch-out (its cycles-per-TSC estimate spans a switch),
 * which once gave stretches to the thread on the CPU later, and an
 * enable's estimate can be later than the stretch after it (a signal
 * handler's then came after main's return). Programs that switch a lot
 * (syscalls through lazily bound PLT entries, vDSO calls, signals, threads,
 * code mapped later), on 1-4 CPUs, several scheduling seeds; every run
 * must decode exactly, with no thread that did not run.
 */
MT_TEST(cyc_switching_programs)
{
	static const char *const progs[] = { "lazyplt", "syscalls", "threads", "signals", "dlopen", "jit" };
	unsigned runs = 0, bad = 0;
	char extra[128], msg[512];

	clamped = 0;
	for (size_t p = 0; p < sizeof(progs) / sizeof(progs[0]); p++)
		for (unsigned cpus = 1; cpus <= 4; cpus++)
			for (unsigned seed = 1; seed <= 5; seed++) {
				snprintf(extra, sizeof(extra), "--cyc --cpus %u --seed %u", cpus,
					 seed);
				runs++;
				if (run_and_compare(progs[p], extra, 0, 0, msg, sizeof(msg))) {
					printf("# %s: %s\n", extra, msg);
					bad++;
				}
			}
	printf("# %u of %u cycle-accurate runs decoded exactly, %" PRIu64 " times clamped\n",
	       runs - bad, runs, clamped);
	MT_ASSERT_MSG(!bad, "%u of %u cycle-accurate runs differ from the truth", bad, runs);
}
