// SPDX-License-Identifier: MIT
/* One open bundle through the decoder into the requested output (decode_bundle.h). */
#include "decode_bundle.h"
#include "narrow_args.h"

#include "decode/decode.h"
#include "decode/pfout.h"
#include "decode/textout.h"
#include "svg/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A one-line progress bar on stderr, redrawn at most ten times a second
 * and erased when the CPU streams are done. */
struct progress_bar {
	const char *who;
	double last;
	int shown;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void draw_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress_bar *p = ctx;
	unsigned int pct = total ? (unsigned int)(done * 100 / total) : 100;
	double t = now_s();
	char bar[31];

	if (done >= total) {
		if (p->shown)
			fputs("\r\033[K", stderr);	/* gives way to the summary lines */
		p->shown = 0;
		return;
	}
	if (t - p->last < 0.1)
		return;
	p->last = t;
	p->shown = 1;
	memset(bar, ' ', sizeof(bar) - 1);
	memset(bar, '#', pct * (sizeof(bar) - 1) / 100);
	bar[sizeof(bar) - 1] = '\0';
	fprintf(stderr, "\r%s: decoding [%s] %3u%% of %.1f MiB of PT", p->who, bar, pct,
		total / 1048576.0);
}

static void print_warning(void *ctx, const char *msg)
{
	const struct decode_request *q = ctx;

	fprintf(stderr, "%s: warning: %s\n", q->who, msg);
}

static int run_text(struct mt_decode *d, const struct decode_request *q)
{
	struct mt_textout t = { d, stdout };
	struct mt_decode_sink sink;
	int rc;

	if (q->output && strcmp(q->output, "-")) {
		t.out = fopen(q->output, "w");
		if (!t.out) {
			fprintf(stderr, "%s: %s: %s\n", q->who, q->output, strerror(errno));
			return 1;
		}
	}
	sink = mt_textout_sink(&t);
	rc = narrow_run(d, q, &sink, NULL);
	if (t.out != stdout && fclose(t.out))
		rc = -1;
	if (rc)
		fprintf(stderr, "%s: writing %s failed\n", q->who, q->output ? q->output : "stdout");
	return rc ? 1 : 0;
}

static int run_svg(struct mt_decode *d, const char *name, const struct decode_request *q)
{
	const char *output = q->output ? q->output : DECODE_DEFAULT_SVG;
	struct mt_svg *g = mt_svg_new(q->svg_chart ? MT_SVG_CHART : MT_SVG_GRAPH);
	struct mt_decode_sink sink;
	FILE *out;
	char title[256];
	int rc;

	if (!g)
		return 1;
	sink = mt_svg_sink(g, mt_decode_label, d);
	rc = narrow_run(d, q, &sink, NULL);
	out = rc ? NULL : fopen(output, "w");
	if (!rc && !out)
		fprintf(stderr, "%s: %s: %s\n", q->who, output, strerror(errno));
	snprintf(title, sizeof(title), "%s: %s", name, q->svg_chart ? "flame chart" : "flame graph");
	if (out && (mt_svg_write(g, out, title) | fclose(out))) {
		fprintf(stderr, "%s: writing %s failed\n", q->who, output);
		rc = -1;
	} else if (!out) {
		rc = -1;
	} else if (!q->quiet) {
		fprintf(stderr, "%s: wrote %s\n", q->who, output);
	}
	mt_svg_free(g);
	return rc ? 1 : 0;
}

static int run_perfetto(struct mt_decode *d, struct mt_bundle_reader *r,
			const struct decode_request *q)
{
	int json = q->format == DECODE_JSON;
	const char *output = q->output ? q->output
				       : json ? DECODE_DEFAULT_JSON : DECODE_DEFAULT_PERFETTO;
	struct mt_decode_sink sink;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_stats st;
	struct pf_writer *w;
	uint64_t end = UINT64_MAX;
	int rc;

	pf_options_init(&o);
	o.format = json ? PF_FORMAT_JSON : PF_FORMAT_PROTO;
	o.keep_open_frames = q->keep_open;
	if (pf_writer_open(&w, output, &o) < 0) {
		fprintf(stderr, "%s: %s\n", q->who, pf_last_error());
		return 1;
	}
	rc = mt_pfout_init(&po, d, r, w, &sink);
	if (!rc)
		rc = narrow_run(d, q, &sink, &end);
	end = end < mt_pfout_end_ns(&po) ? end : mt_pfout_end_ns(&po);
	if (!rc)
		rc = mt_pfout_finish(&po, end);
	if (rc)
		fprintf(stderr, "%s: %s\n", q->who, po.err[0] ? po.err : pf_writer_error(w));
	if (pf_writer_close(w, end, &st) < 0 && !rc) {
		fprintf(stderr, "%s: %s\n", q->who, pf_last_error());
		rc = -1;
	}
	mt_pfout_fini(&po);
	if (!rc)
		fprintf(stderr, "%s: wrote %s: %" PRIu64 " events, %" PRIu64 " bytes\n", q->who,
			output, st.events, st.bytes);
	return rc ? 1 : 0;
}

int decode_bundle(struct mt_bundle_reader *r, const char *name, const struct decode_request *q)
{
	struct progress_bar bar = { .who = q->who };
	/* The bar only on a terminal: logs and pipes get the summary lines. */
	int show_bar = !q->quiet && isatty(STDERR_FILENO);
	struct mt_decode_opts dopts = {
		.debug_path = q->debug_path,
		.jobs = q->jobs,
		.embedded_only = q->embedded_only,
		.warn = q->quiet ? NULL : print_warning,
		.warn_ctx = (void *)q,
		.progress = show_bar ? draw_progress : NULL,
		.progress_ctx = &bar,
	};
	const struct mt_decode_stats *s;
	struct mt_decode *d;
	char err[512];
	int rc;

	narrow_decode_opts(q, &dopts);
	if (mt_decode_open(&d, r, &dopts, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", q->who, name, err);
		return 1;
	}
	rc = q->format == DECODE_TEXT  ? run_text(d, q)
	     : q->format == DECODE_SVG ? run_svg(d, name, q)
				       : run_perfetto(d, r, q);
	s = mt_decode_get_stats(d);
	if (!q->quiet)
		fprintf(stderr, "%s: %" PRIu64 " bytes of PT from %" PRIu64 " CPUs, %" PRIu64
				" threads, %" PRIu64 " instructions, %" PRIu64 " events, %" PRIu64
				" decode errors, %" PRIu64 " overflows\n",
			q->who, s->pt_bytes, s->cpus, s->threads, s->insns, s->events, s->errors,
			s->overflows);
	mt_decode_free(d);
	return rc;
}
