// SPDX-License-Identifier: MIT
/*
 * The decoder against the PT generator's ground truth: for each test
 * program, the generator single-steps it, writes the PT a CPU would have
 * written and every call and return it executed; the decoded call and
 * return sequence of every thread must equal it exactly.
 *
 * Calls are BEGIN events that are no tail call, inferred, asynchronous or
 * inline frame, with the call's target; returns are END events flagged MT_EV_RET,
 * with the address returned to.
 */
#include "test_decode_fixture.h"
#include "test_decode_steps.h"

#include "decode/decode.h"
#include "out_text/textout.h"

/* Times the decoder clamped, over all runs so far. */
static uint64_t clamped;

/*
 * Runs the generator (on PROG, or a random walk over it with WALK) with
 * EXTRA options and compares; with TE, also the times of the steps. 0 if
 * the decode equals the truth, else -1 with the difference in MSG. With
 * WRAPPED (a single CPU whose ring kept only the newest data) the truth's
 * "visible CPU TID INDEX" line says from which instruction on the trace
 * can be decoded; earlier steps are not compared.
 */
static int run_and_compare(const char *prog, const char *extra, int walk, int wrapped,
			   struct time_err *te, char *msg, size_t msglen)
{
	char ptgen[1200], progs[1200], line[256];
	struct steps truth = { 0 }, got = { 0 };
	uint64_t overflows, n_clamped;
	int ret = 0;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o %s.mtrace -t %s.truth %s '%s/%s' >/dev/null", ptgen, extra, prog, prog,
	      walk ? "--walk" : "--", progs, prog);
	snprintf(line, sizeof(line), "%s.truth", prog);
	steps_read_truth(fx_path(line), &truth, wrapped);
	MT_ASSERT(truth.n > 0);

	snprintf(line, sizeof(line), "%s.mtrace", prog);
	overflows = steps_decode(fx_path(line), &got, &n_clamped, &truth);
	/* Without CYC times are lower bounds, with CYC exact: none may leave
	 * the exact bounds of its stretch (it would mean the bounds are
	 * wrong). */
	MT_ASSERT_EQ(n_clamped, 0);
	clamped += n_clamped;
	if (overflows)
		steps_compare_around_gaps("truth", &truth, "decoded", &got, overflows);
	else
		ret = steps_diff(prog, "truth", &truth, "decoded", &got, te, msg, msglen);
	free(truth.v);
	free(got.v);
	return ret;
}

static void check_run(const char *prog, const char *extra, int walk, int wrapped,
		      struct time_err *te)
{
	char msg[512];

	MT_ASSERT_MSG(run_and_compare(prog, extra, walk, wrapped, te, msg, sizeof(msg)) == 0, "%s",
		      msg);
}

static void check_program(const char *prog, const char *extra)
{
	check_run(prog, extra, 0, 0, NULL);
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

/*
 * Nine threads on two CPUs, each thread's steps the truth's. The merge
 * that puts all threads' events in time order looks up one thread's next
 * event for each event it passes on, and each thread once when it starts:
 * it scanned every thread for every event, so that a process's hundreds
 * of threads made the replay hundreds of times slower (64 threads: 2,800
 * instructions an event in the merge alone).
 */
MT_TEST(many_threads_merged_in_one_look_per_event)
{
	struct steps truth = { 0 }, got = { 0 }, ordered = { 0 };
	/* Not late_inferred: in time order, one merge once every stream is
	 * decoded. */
	struct mt_decode_sink sink = { NULL, collect, NULL, &ordered, 0 };
	char ptgen[1200], progs[1200], msg[512];
	const struct mt_decode_opts opts = { .jobs = 2 };
	const char *path = fx_path("threads8.mtrace");
	struct mt_decode_stats st;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' --cpus 2 --slice 500 -o threads8.mtrace -t threads8.truth -- '%s/threads' 8"
	      " >/dev/null", ptgen, progs);
	steps_read_truth(fx_path("threads8.truth"), &truth, 0);
	steps_decode(path, &got, NULL, &truth);
	MT_ASSERT_MSG(steps_diff("threads 8", "truth", &truth, "decoded", &got, NULL, msg,
				 sizeof(msg)) == 0, "%s", msg);

	st = steps_decode_into(path, &opts, &sink, NULL);
	MT_ASSERT_EQ(st.threads, 9);
	MT_ASSERT(st.events > 1000);
	MT_ASSERT_MSG(st.merge_looks <= st.events + st.threads,
		      "%" PRIu64 " looks for %" PRIu64 " events of %" PRIu64 " threads",
		      st.merge_looks, st.events, st.threads);
	MT_ASSERT_EQ(ordered.n, got.n);
	free(truth.v);
	free(got.v);
	free(ordered.v);
}

/* 200k instructions of random walk, of which a 20 kB ring keeps the
 * newest: decoding starts mid-stack at the first PSB in the ring. */
MT_TEST(random_walk_with_ring_wrap)
{
	check_run("indirect-nopie", "--insns 200000 --ring-size 20000", 1, 1, NULL);
}

/* The text dump of the bundle at PATH decoded with JOBS workers. */
static char *text_with_jobs(const char *path, unsigned int jobs)
{
	struct mt_decode_opts o = { .jobs = jobs };
	struct mt_bundle_reader *r;
	struct mt_textout t;
	struct mt_decode_sink s;
	struct mt_decode *d;
	char err[512], *text;
	size_t len;

	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	t = (struct mt_textout){ d, open_memstream(&text, &len) };
	MT_ASSERT(t.out);
	s = mt_textout_sink(&t);
	MT_ASSERT_EQ(mt_decode_run(d, &s), 0);
	fclose(t.out);
	mt_decode_free(d);
	mt_bundle_close(r);
	return text;
}

/* Two CPU streams of one random walk decoded by two workers at once, which
 * share the section cache and so libipt's block cache: the output must be
 * the one worker's, whatever the workers' timing (a block running on into
 * the next function was cut or not, depending on which worker filled the
 * cache first: 1 run in 5 showed a tail call into _dl_relocate_static_pie). */
MT_TEST(parallel_workers_decode_as_one)
{
	char ptgen[1200], progs[1200];
	char *one;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' --insns 300000 --cpus 2 --seed 3 -o par.mtrace --walk '%s/indirect-nopie' "
	      ">/dev/null",
	      ptgen, progs);
	one = text_with_jobs(fx_path("par.mtrace"), 1);
	for (int i = 0; i < 10; i++) {
		char *two = text_with_jobs(fx_path("par.mtrace"), 2);

		MT_ASSERT_MSG(!strcmp(one, two), "run %d with 2 workers differs from 1 worker", i);
		free(two);
	}
	free(one);
}

/* An internal buffer overflow every 1500 instructions, losing 40: the
 * steps around each gap are decoded exactly. */
MT_TEST(overflows)
{
	check_program("recursion", "--overflow 1500:40");
}

/*
 * Times between timing packets are spread over the code in proportion to
 * the instructions run (decode/interp.h). The generator's clock gives
 * every instruction one cycle, so the truth has exact per-instruction
 * times. Timing by MTC alone (every 2^MTCFreq crystal ticks, 640 TSC ticks
 * at MTCFreq 3): no step may be off by more than an MTC period, the bound
 * the packets prove; the mean must be a tenth of it. Without the spread
 * the mean was 285 ticks (max 638) and 98.6 % of the steps shared their
 * predecessor's time; with it, 25.6 (max 592) and 12.7 %, the steps in
 * the intervals cut by a time-slice preemption, which are not spread.
 */
static void time_error(const char *extra, struct time_err *te)
{
	char opts[256];

	snprintf(opts, sizeof(opts), "--insns 100000 %s", extra);
	check_run("indirect-nopie", opts, 1, 0, te);
	MT_ASSERT(te->n > 1000);
	printf("# %s: %" PRIu64 " steps, time error max %" PRIu64 " ticks, mean %.1f, %.1f %% at "
	       "their predecessor's time\n",
	       extra, te->n, te->max, (double)te->sum / (double)te->n,
	       100.0 * (double)te->same / (double)te->n);
}

MT_TEST(times_interpolated_between_mtc)
{
	struct time_err te = { 0 };

	time_error("--mtc-freq 3", &te);
	MT_ASSERT_MSG(te.max <= 640, "max error %" PRIu64 " ticks > an MTC period", te.max);
	MT_ASSERT_MSG(te.sum <= 64 * te.n, "mean error %" PRIu64 " > 64 ticks", te.sum / te.n);
	MT_ASSERT_MSG(te.same * 5 < te.n, "%" PRIu64 " of %" PRIu64 " steps share a time", te.same,
		      te.n);
}

/*
 * Cycle-accurate mode (CycThresh 0): a CYC before every CYC-eligible
 * packet. The decoder computes each packet's time from the cycles and the
 * bundle's ratios (decode/blkdec.c), and the generator's instructions take
 * one cycle each, so the code between two packets, placed by instruction
 * count, gets its exact times too: every call and return must be at the
 * truth's time, to the nanosecond of the output (both through the bundle's
 * clock). Scheduling seeds 1-6 (seed 2 has a switch-in on a due PSB+,
 * where libipt's own estimate was off by up to 2,798 ticks), two CPUs,
 * 6-bit TNT only, no RET compression, a PSB+ every 2 KiB.
 */
MT_TEST(times_with_cyc_exact)
{
	static const char *const runs[] = {
		"--cyc",	    "--cyc --seed 2",	   "--cyc --seed 3",
		"--cyc --cpus 2 --seed 4", "--cyc --seed 5", "--cyc --seed 6",
		"--cyc --short-tnt --seed 2", "--cyc --no-retcomp", "--cyc --psb-freq 0 --seed 2",
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct time_err te = { 0 };

		time_error(runs[i], &te);
		MT_ASSERT_MSG(te.max == 0, "%s: max error %" PRIu64 " ticks", runs[i], te.max);
	}
}

/*
 * Cycle-accurate runs: libipt's time for a trace-disable can be later than
 * the thread's next switch-out (its cycles-per-TSC estimate spans a switch),
 * which once gave stretches to the thread on the CPU later, and an
 * enable's estimate can be later than the stretch after it (a signal
 * handler's then came after main's return); the decoder's own times from
 * the cycles must not do either. Programs that switch a lot
 * (syscalls through lazily bound PLT entries, vDSO calls, signals, threads,
 * code mapped later), on 1-4 CPUs, several scheduling seeds; every run
 * must decode exactly, with no thread that did not run.
 */
MT_TEST(cyc_switching_programs)
{
	static const char *const progs[] = { "lazyplt", "syscalls", "threads",
					     "signals", "dlopen",   "jit" };
	unsigned runs = 0, bad = 0;
	char extra[128], msg[512];

	clamped = 0;
	for (size_t p = 0; p < sizeof(progs) / sizeof(progs[0]); p++)
		for (unsigned cpus = 1; cpus <= 4; cpus++)
			for (unsigned seed = 1; seed <= 5; seed++) {
				snprintf(extra, sizeof(extra), "--cyc --cpus %u --seed %u", cpus,
					 seed);
				runs++;
				if (run_and_compare(progs[p], extra, 0, 0, NULL, msg, sizeof(msg))) {
					printf("# %s %s: %s\n", progs[p], extra, msg);
					bad++;
				}
			}
	printf("# %u of %u cycle-accurate runs decoded exactly, %" PRIu64 " times clamped\n",
	       runs - bad, runs, clamped);
	MT_ASSERT_MSG(!bad, "%u of %u cycle-accurate runs differ from the truth", bad, runs);
}
