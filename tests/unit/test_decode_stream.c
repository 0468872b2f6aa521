// SPDX-License-Identifier: MIT
/*
 * The replay that follows the decoding (a sink that takes inferred frames
 * late): it gives the same calls and returns as the replay that waits for
 * every stream, frees the log behind it, and gets through however small
 * its window and however many streams share one job.
 */
#include "test_decode_steps.h"

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

static const char *walk(const char *name, const char *extra)
{
	char ptgen[1200], progs[1200];
	const char *out = fx_path(name);

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o '%s' --walk '%s/indirect-nopie' >/dev/null", ptgen, extra, out, progs);
	return out;
}

/* The same steps both ways; while following, each of the two streams
 * holds at most its window, what it logs between two hand-overs (256 KiB;
 * twice, when the replay cannot go on until the next one) and a segment,
 * while waiting holds all of it. */
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
	printf("# log %" PRIu64 " bytes, held at most %" PRIu64 " following\n", sf.log_bytes,
	       sf.log_peak);
	MT_ASSERT(sf.log_peak <= 2 * ((64 << 10) + 2 * (256 << 10) + (128 << 10)));
	MT_ASSERT(sf.log_peak * 3 < sf.log_bytes);
	free(all.v);
	free(follow.v);
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
