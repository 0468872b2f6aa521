// SPDX-License-Identifier: MIT
/* One open bundle through the decoder into the requested output (decode_bundle.h). */
#include "decode_bundle.h"

#include "binary_args.h"
#include "cli_msg.h"
#include "cli_output.h"
#include "decode_report.h"
#include "decode/decode.h"
#include "out_perfetto/pfout.h"
#include "out_text/textout.h"
#include "files/gzout.h"
#include "files/outfile.h"
#include "narrow_args.h"
#include "svg/svg.h"
#include "util/text.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A one-line progress bar on stderr, redrawn at most ten times a second
 * and erased when the CPU streams are done. */
struct progress_bar {
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
	fprintf(stderr, "\r" CLI_PREFIX "decoding [%s] %3u%% of %.1f MiB of PT", bar, pct,
		total / 1048576.0);
}

/* After a failed write: what became of the file the user had, which only
 * a temporary beside it spared (a device or FIFO was written in place). */
static void tell_kept(const struct mt_outfile *of, const char *output)
{
	if (output && !of->in_place && !access(output, F_OK))
		cli_err("%s was left as it was before", output);
}

/* "OUTPUT: write failed[: E's text]", in the trace writer's words. */
static void tell_write_failed(const char *output, int e)
{
	cli_err("%s: write failed%s%s", cli_output_name(output), e ? ": " : "", e ? strerror(e) : "");
}

/* "wrote OUTPUT: [WHAT]B bytes": what OF holds on disk, and BYTES, what
 * was written to it, when compression made that differ. */
static void print_written(const char *output, const struct mt_outfile *of, const char *what,
			  uint64_t bytes)
{
	long long size = mt_outfile_size(of);

	if (size < 0 || (uint64_t)size == bytes)
		cli_err("wrote %s: %s%" PRIu64 " bytes", cli_output_name(output), what, bytes);
	else
		cli_err("wrote %s: %s%lld bytes (%" PRIu64 " before compression)",
			cli_output_name(output), what, size, bytes);
}

/* The end of an output written through stdio, WRITTEN bytes: kept
 * (committed, and told unless Q is quiet) when everything went well, else
 * removed with the old file left as it was. E: an errno, 0; TOLD: the
 * failure was told already. */
static int finish_output(struct mt_outfile *of, const char *output, int failed, int told, int e,
			 const struct decode_request *q, uint64_t written)
{
	char err[PATH_MAX + 128];

	if ((failed && !told) || e)
		tell_write_failed(output, e);
	if (!failed && !e && !mt_outfile_commit(of, err, sizeof(err))) {
		if (!q->quiet)
			print_written(output, of, "", written);
		return 0;
	}
	if (failed || e)
		mt_outfile_abort(of);
	else
		cli_err("%s", err);
	tell_kept(of, output);
	return CLI_EXIT_FAIL;
}

/* Text to OF, or to standard output when the request names no file (no
 * "wrote" line then: the text is read there). */
static int run_text(struct mt_decode *d, struct mt_bundle_reader *r, const char *name,
		    const struct decode_request *q, struct mt_outfile *of, struct decode_report *rep)
{
	const char *output = decode_output_name(q);
	struct mt_textout t = { d, stdout };
	struct mt_decode_sink sink, inner;
	uint64_t written = 0;
	int rc, e = 0;

	(void)r;
	if (!output)
		of = NULL;
	if (of) {
		t.out = mt_fopen_write(of->write_path, mt_gz_named(output), &written,
				       &cli_reporter);
		if (!t.out) {
			cli_err("cannot write %s: %s", output, strerror(errno));
			mt_outfile_abort(of);
			return CLI_EXIT_FAIL;
		}
	}
	inner = mt_textout_sink(&t);
	sink = decode_report_sink(rep, &inner);
	rc = narrow_run(d, name, q, &sink, NULL);
	if (fflush(t.out) || ferror(t.out))
		e = errno ? errno : EIO;
	if (t.out != stdout && fclose(t.out) && !e)
		e = errno;
	if (of)
		return finish_output(of, output, rc, narrow_told(d, rc), e, q, written);
	if ((rc && !narrow_told(d, rc)) || e)
		tell_write_failed(NULL, e);
	return rc || e ? CLI_EXIT_FAIL : 0;
}

/* The SVG is built in memory and written once the decode is done. */
static int run_svg(struct mt_decode *d, struct mt_bundle_reader *r, const char *name,
		   const struct decode_request *q, struct mt_outfile *of, struct decode_report *rep)
{
	const char *output = decode_output_name(q);
	struct mt_svg *g = mt_svg_new(q->svg_chart ? MT_SVG_CHART : MT_SVG_GRAPH);
	struct mt_decode_sink sink, inner;
	char title[256];
	FILE *out = NULL;
	uint64_t written = 0;
	int rc, e = 0;

	(void)r;
	if (!g) {
		cli_err("out of memory");
		mt_outfile_abort(of);
		return CLI_EXIT_FAIL;
	}
	inner = mt_svg_sink(g, mt_decode_label, d);
	sink = decode_report_sink(rep, &inner);
	rc = narrow_run(d, name, q, &sink, NULL);
	if (!rc) {
		out = mt_fopen_write(of->write_path, output && mt_gz_named(output), &written,
				     &cli_reporter);
		e = out ? 0 : errno;
	}
	snprintf(title, sizeof(title), "%s: %s", name, q->svg_chart ? "flame chart" : "flame graph");
	if (out && mt_svg_write(g, out, title))
		e = errno ? errno : EIO;
	if (out && fclose(out) && !e)
		e = errno;
	mt_svg_free(g);
	return finish_output(of, output, rc, narrow_told(d, rc), e, q, written);
}

static int run_perfetto(struct mt_decode *d, struct mt_bundle_reader *r, const char *name,
			const struct decode_request *q, struct mt_outfile *of,
			struct decode_report *rep)
{
	int json = q->format == DECODE_JSON;
	const char *output = decode_output_name(q);
	struct mt_decode_sink sink, inner;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_stats st;
	struct pf_writer *w;
	char err[PATH_MAX + 128], events[32];
	uint64_t end = UINT64_MAX;
	int rc;

	pf_options_init(&o);
	o.format = json ? PF_FORMAT_JSON : PF_FORMAT_PROTO;
	o.keep_open_frames = q->keep_open;
	o.name = cli_output_name(output);
	/* One replay per thread instead of two (decode.h's late_inferred). */
	o.late_inferred = !json;
	/* A FIFO's wait for its reader is told even with -q: it explains a
	 * command standing still, as an input FIFO's notice does. */
	o.rep = &cli_reporter;
	if (q->quiet)
		o.warn_events = 0;
	if (pf_writer_open(&w, of->write_path, &o, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		mt_outfile_abort(of);
		return CLI_EXIT_FAIL;
	}
	rc = mt_pfout_init(&po, d, r, w, &inner);
	sink = decode_report_sink(rep, &inner);
	if (!rc)
		rc = narrow_run(d, name, q, &sink, &end);
	end = end < mt_pfout_end_ns(&po) ? end : mt_pfout_end_ns(&po);
	if (!rc)
		rc = mt_pfout_finish(&po, end);
	if (rc && !narrow_told(d, rc))
		cli_err("%s", po.err[0] ? po.err : pf_writer_error(w));
	if (pf_writer_close(w, end, &st, err, sizeof(err)) < 0 && !rc) {
		cli_err("%s", err);
		rc = -1;
	}
	mt_pfout_fini(&po);
	if (!rc && mt_outfile_commit(of, err, sizeof(err))) {
		cli_err("%s", err);
		rc = -1;
	}
	if (rc) {
		mt_outfile_abort(of);
		tell_kept(of, output);
		return CLI_EXIT_FAIL;
	}
	snprintf(events, sizeof(events), "%" PRIu64 " event%s, ", st.events,
		 mt_plural(st.events, "", "s"));
	if (!q->quiet)
		print_written(output, of, events, st.bytes);
	return 0;
}

/*
 * The output formats: each is a sink (decode.h's mt_decode_sink) from its
 * own folder, and one entry here. RUN decodes D (of bundle R, called NAME)
 * into OF and returns the exit status.
 */
static const struct {
	const char *name;		/* --format NAME */
	const char *default_output;	/* NULL: standard output */
	int (*run)(struct mt_decode *d, struct mt_bundle_reader *r, const char *name,
		   const struct decode_request *q, struct mt_outfile *of, struct decode_report *rep);
} formats[] = {
	[DECODE_PERFETTO] = { "perfetto", DECODE_DEFAULT_PERFETTO, run_perfetto },
	[DECODE_JSON] = { "json", DECODE_DEFAULT_JSON, run_perfetto },
	[DECODE_TEXT] = { "text", NULL, run_text },
	[DECODE_SVG] = { "svg", DECODE_DEFAULT_SVG, run_svg },
};
_Static_assert(sizeof(formats) / sizeof(formats[0]) == DECODE_FORMAT_NR, "a format without an entry");

int decode_format_parse(const char *name, enum decode_format *f)
{
	for (size_t i = 0; i < DECODE_FORMAT_NR; i++)
		if (!strcmp(name, formats[i].name)) {
			*f = (enum decode_format)i;
			return 0;
		}
	return -1;
}

const char *decode_output_name(const struct decode_request *q)
{
	if (q->output)
		return strcmp(q->output, "-") ? q->output : NULL;
	return formats[q->format].default_output;
}

void decode_request_free(struct decode_request *q)
{
	free(q->path_maps);
	free(q->function_demangled);
}

int decode_bundle(struct mt_bundle_reader *r, const char *name, const struct decode_request *q)
{
	struct progress_bar bar = { 0 };
	/* The bar only on a terminal: logs and pipes get the summary lines. */
	int show_bar = !q->quiet && isatty(STDERR_FILENO);
	struct decode_report rep = { 0 };
	/* Listed once each at the end, not as they come. */
	const struct mt_reporter missing_rep = { decode_report_missing, &rep };
	struct mt_decode_opts dopts = {
		.jobs = q->jobs,
		.rep = q->quiet ? NULL : &cli_reporter,
		.missing = &missing_rep,
		.progress = show_bar ? draw_progress : NULL,
		.progress_ctx = &bar,
	};
	const char *output = decode_output_name(q);
	const struct mt_decode_stats *s;
	struct mt_outfile of;
	struct mt_decode *d;
	char err[PATH_MAX + 128];
	int rc, missing;

	/* The output first: a bad -o must fail before any decoding work. */
	if (mt_outfile_begin(&of, output ? output : "-", err, sizeof(err))) {
		cli_err("%s", err);
		return CLI_EXIT_FAIL;
	}
	if ((rc = narrow_check_cpus(q, r, name))) {
		mt_outfile_abort(&of);
		return rc;
	}
	binary_decode_opts(q, &dopts);
	narrow_decode_opts(q, &dopts);
	if (mt_decode_open(&d, r, &dopts, err, sizeof(err)) < 0) {
		cli_err("%s: %s", name, err);
		mt_outfile_abort(&of);
		decode_report_free(&rep);
		return CLI_EXIT_FAIL;
	}
	if ((rc = narrow_check_open(q, d, name))) {
		mt_decode_free(d);
		mt_outfile_abort(&of);
		return rc;
	}
	rc = formats[q->format].run(d, r, name, q, &of, &rep);
	s = mt_decode_get_stats(d);
	if (!q->quiet)
		cli_err("%" PRIu64 " bytes of PT from %" PRIu64 " CPU%s, %" PRIu64 " thread%s, %"
			PRIu64 " instruction%s, %" PRIu64 " event%s, %" PRIu64 " decode error%s, %"
			PRIu64 " overflow%s", s->pt_bytes, s->cpus, mt_plural(s->cpus, "", "s"),
			s->threads, mt_plural(s->threads, "", "s"), s->insns,
			mt_plural(s->insns, "", "s"), s->events, mt_plural(s->events, "", "s"),
			s->errors, mt_plural(s->errors, "", "s"), s->overflows,
			mt_plural(s->overflows, "", "s"));
	/* The account of missing code is no warning: -q does not hide it. */
	missing = rc ? 0 : decode_report_print(&rep, r, d, s, q, name);
	mt_decode_free(d);
	decode_report_free(&rep);
	return rc ? rc : missing;
}
