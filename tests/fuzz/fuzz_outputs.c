// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a bundle, as given and re-sealed with valid checksums
 * (as fuzz_decode does), decoded (with only the binaries it embeds)
 * into every output format: the Perfetto trace (protobuf and Chrome JSON),
 * the SVG flame graph and flame chart, the plain-text dump and the report,
 * text and JSON. Besides no sanitizer report: every writer succeeds, the
 * SVG is whole, and what the SVG and the report hold is UTF-8 without
 * control characters but for newlines.
 */
#include "bundle/bundle.h"
#include "decode/decode.h"
#include "out_perfetto/pfout.h"
#include "out_text/textout.h"
#include "perfetto/pf_writer.h"
#include "report/report.h"
#include "svg/svg.h"
#include "util/text.h"

#include "../unit/test_bundle_seal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_outputs: %s\n", what);
		abort();
	}
}

/* Memory for one output, checked and freed by done(). */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *begin(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	must(m->f != NULL, "open_memstream");
	return m->f;
}

/* Closes M; CLEAN: it must be UTF-8 without controls but newlines. */
static void done(struct mem *m, int clean, const char *what)
{
	must(fclose(m->f) == 0, what);
	for (const char *p = m->buf; clean && *p;) {
		size_t n = mt_utf8_seq_len(p);

		must(n && (*p == '\n' || !mt_is_control(mt_utf8_code_point(p, n))), what);
		p += n;
	}
	free(m->buf);
}

/* A decoder of R's bundle for one run; 0, or its error. */
static int run(struct mt_bundle_reader *r, struct mt_decode **d)
{
	struct mt_decode_opts o = { .jobs = 1, .embedded_only = 1 };
	char err[512];

	return mt_decode_open(d, r, &o, err, sizeof(err));
}

/* The trace as the CLI writes it (cli/decode_bundle.c), to /dev/null. */
static void perfetto(struct mt_bundle_reader *r, enum pf_format format)
{
	struct mt_decode_sink sink;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_writer *w;
	struct pf_stats st;
	struct mt_decode *d;
	char err[256];
	int rc;

	if (run(r, &d))
		return;
	pf_options_init(&o);
	o.format = format;
	o.late_inferred = format == PF_FORMAT_PROTO;
	must(pf_writer_open(&w, "/dev/null", &o, err, sizeof(err)) >= 0, "perfetto open");
	rc = mt_pfout_init(&po, d, r, w, &sink);
	if (!rc)
		rc = mt_decode_run(d, &sink);
	if (!rc)
		rc = mt_pfout_finish(&po, mt_pfout_end_ns(&po));
	must(!rc, "perfetto events");
	must(pf_writer_close(w, mt_pfout_end_ns(&po), &st, err, sizeof(err)) >= 0, "perfetto close");
	mt_pfout_fini(&po);
	mt_decode_free(d);
}

static void svg(struct mt_bundle_reader *r, enum mt_svg_kind kind)
{
	struct mt_svg *g = mt_svg_new(kind);
	struct mt_decode_sink s;
	struct mt_decode *d;
	struct mem m;

	must(g != NULL, "svg");
	if (run(r, &d)) {
		mt_svg_free(g);
		return;
	}
	s = mt_svg_sink(g, mt_decode_label, d);
	if (!mt_decode_run(d, &s)) {
		must(mt_svg_write(g, begin(&m), "fuzz") == 0, "svg write");
		fflush(m.f);
		must(m.len > 7 && !strcmp(m.buf + m.len - 7, "</svg>\n"), "svg not whole");
		done(&m, 1, "svg text");
	}
	mt_svg_free(g);
	mt_decode_free(d);
}

static void text(struct mt_bundle_reader *r)
{
	struct mt_textout t;
	struct mt_decode_sink s;
	struct mem m;

	if (run(r, &t.d))
		return;
	t.out = begin(&m);
	s = mt_textout_sink(&t);
	mt_decode_run(t.d, &s);
	done(&m, 0, "text");
	mt_decode_free(t.d);
}

static void report(struct mt_bundle_reader *r)
{
	struct mt_report *rep = mt_report_new();
	const struct mt_report_style style = { 0, 80, 8 };
	struct mt_decode_sink s;
	struct mt_decode *d;
	struct mem m;

	must(rep != NULL, "report");
	if (run(r, &d)) {
		mt_report_free(rep);
		return;
	}
	s = mt_report_sink(rep, mt_decode_label, d);
	if (!mt_decode_run(d, &s) && !mt_report_finish(rep, d, r)) {
		mt_report_text(begin(&m), &rep, 1, &style);
		done(&m, 1, "report text");
		mt_report_json(begin(&m), &rep, 1);
		done(&m, 1, "report json");
	}
	mt_report_free(rep);
	mt_decode_free(d);
}

static void outputs(const uint8_t *data, size_t size)
{
	struct mt_bundle_reader *r;
	char err[512];

	if (mt_bundle_open_mem(&r, data, size, err, sizeof(err)))
		return;
	perfetto(r, PF_FORMAT_PROTO);
	perfetto(r, PF_FORMAT_JSON);
	svg(r, MT_SVG_GRAPH);
	svg(r, MT_SVG_CHART);
	text(r);
	report(r);
	mt_bundle_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	outputs(data, size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (sample_reseal(copy, size))
		outputs(copy, size);
	free(copy);
	return 0;
}
