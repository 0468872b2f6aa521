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
#include "test_decode_steps.h"

#include "decode/decode.h"

/*
 * Runs the generator (on PROG, or a random walk over it with WALK) with
 * EXTRA options and compares. With WRAPPED (a single CPU whose ring kept
 * only the newest data) the truth's "visible CPU TID INDEX" line says from
 * which instruction on the trace can be decoded; earlier steps are not
 * compared.
 */
static void check_run(const char *prog, const char *extra, int walk, int wrapped)
{
	char ptgen[1200], progs[1200], line[256];
	struct steps truth = { 0 }, got = { 0 };
	uint64_t overflows;

	tool_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o %s.mtrace -t %s.truth %s '%s/%s' >/dev/null", ptgen, extra, prog, prog,
	      walk ? "--walk" : "--", progs, prog);
	snprintf(line, sizeof(line), "%s.truth", prog);
	steps_read_truth(fx_path(line), &truth, wrapped);
	MT_ASSERT(truth.n > 0);

	snprintf(line, sizeof(line), "%s.mtrace", prog);
	overflows = steps_decode(fx_path(line), &got);
	if (overflows)
		steps_compare_around_gaps("truth", &truth, "decoded", &got, overflows);
	else
		steps_compare(prog, "truth", &truth, "decoded", &got);
	free(truth.v);
	free(got.v);
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
