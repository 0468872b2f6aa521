// SPDX-License-Identifier: MIT
/* `mtrace-user decode BUNDLE`: a snapshot bundle to a Perfetto trace or text. */
#include "commands.h"

#include "bundle/bundle.h"
#include "decode/decode.h"
#include "decode/pfout.h"
#include "decode/textout.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user decode [OPTIONS] BUNDLE\n\n"
		"Decodes a snapshot bundle into every traced thread's calls and returns.\n\n"
		"  -o, --output FILE     where to write (default: trace.pftrace, or trace.json for\n"
		"                        --format=json; text: stdout);\n"
		"                        a .gz name gives gzip-compressed output\n"
		"  -f, --format FORMAT   perfetto (default), json (Chrome JSON) or text\n"
		"      --debug-path PATH separate debug files: directories searched by build-id\n"
		"                        and .gnu_debuglink (default :.debug:/usr/lib/debug)\n"
		"  -j, --jobs N          decode N CPU streams at once (default: online CPUs)\n"
		"      --embedded-only   use only binaries embedded in the bundle\n"
		"      --keep-open       leave calls still running at the snapshot's end open\n"
		"                        instead of ending them there marked truncated\n"
		"  -q, --quiet           no warnings about missing binaries\n");
}

static void print_warning(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "mtrace-user decode: warning: %s\n", msg);
}

struct decode_args {
	const char *bundle, *output, *format, *debug_path;
	unsigned int jobs;
	int quiet, embedded_only, keep_open;
};

static int parse(int argc, char **argv, struct decode_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "debug-path", required_argument, NULL, 'd' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "embedded-only", no_argument, NULL, 'E' },
		{ "keep-open", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	memset(a, 0, sizeof(*a));
	a->format = "perfetto";
	while ((c = getopt_long(argc, argv, "o:f:j:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->output = optarg;
			break;
		case 'f':
			a->format = optarg;
			break;
		case 'd':
			a->debug_path = optarg;
			break;
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 1024) {
				fprintf(stderr, "mtrace-user decode: --jobs wants 1..1024, not '%s'\n",
					optarg);
				return 2;
			}
			a->jobs = (unsigned int)v;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'E':
			a->embedded_only = 1;
			break;
		case 'K':
			a->keep_open = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	a->bundle = argv[optind];
	if (strcmp(a->format, "perfetto") && strcmp(a->format, "json") &&
	    strcmp(a->format, "text")) {
		fprintf(stderr, "mtrace-user decode: unknown format '%s' (perfetto, json, text)\n",
			a->format);
		return 2;
	}
	return 0;
}

static int run_text(struct mt_decode *d, const char *output)
{
	struct mt_textout t = { d, stdout };
	struct mt_decode_sink sink;
	int rc;

	if (output && strcmp(output, "-")) {
		t.out = fopen(output, "w");
		if (!t.out) {
			fprintf(stderr, "mtrace-user decode: %s: %s\n", output, strerror(errno));
			return 1;
		}
	}
	sink = mt_textout_sink(&t);
	rc = mt_decode_run(d, &sink);
	if (t.out != stdout && fclose(t.out))
		rc = -1;
	if (rc)
		fprintf(stderr, "mtrace-user decode: writing %s failed\n", output ? output : "stdout");
	return rc ? 1 : 0;
}

static int run_perfetto(struct mt_decode *d, struct mt_bundle_reader *r, const char *output,
			int json, int keep_open)
{
	struct mt_decode_sink sink;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_stats st;
	struct pf_writer *w;
	int rc;

	pf_options_init(&o);
	o.format = json ? PF_FORMAT_JSON : PF_FORMAT_PROTO;
	o.keep_open_frames = keep_open;
	if (pf_writer_open(&w, output, &o) < 0) {
		fprintf(stderr, "mtrace-user decode: %s\n", pf_last_error());
		return 1;
	}
	rc = mt_pfout_init(&po, d, r, w, &sink);
	if (!rc)
		rc = mt_decode_run(d, &sink);
	if (rc)
		fprintf(stderr, "mtrace-user decode: %s\n",
			po.err[0] ? po.err : pf_writer_error(w));
	if (pf_writer_close(w, po.last_ns, &st) < 0 && !rc) {
		fprintf(stderr, "mtrace-user decode: %s\n", pf_last_error());
		rc = -1;
	}
	mt_pfout_fini(&po);
	if (!rc)
		fprintf(stderr, "mtrace-user decode: wrote %s: %" PRIu64 " events, %" PRIu64
				" bytes\n", output, st.events, st.bytes);
	return rc ? 1 : 0;
}

int cmd_decode(int argc, char **argv)
{
	struct mt_decode_opts dopts = { 0 };
	struct mt_bundle_reader *r;
	struct decode_args a;
	struct mt_decode *d;
	char err[512];
	const struct mt_decode_stats *s;
	int rc = parse(argc, argv, &a);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (mt_bundle_open(&r, a.bundle, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-user decode: %s\n", err);
		return 1;
	}
	dopts.debug_path = a.debug_path;
	dopts.jobs = a.jobs;
	dopts.embedded_only = a.embedded_only;
	dopts.warn = a.quiet ? NULL : print_warning;
	if (mt_decode_open(&d, r, &dopts, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-user decode: %s: %s\n", a.bundle, err);
		mt_bundle_close(r);
		return 1;
	}
	if (!strcmp(a.format, "text")) {
		rc = run_text(d, a.output);
	} else {
		bool json = !strcmp(a.format, "json");

		rc = run_perfetto(d, r, a.output ? a.output : json ? "trace.json" : "trace.pftrace",
				  json, a.keep_open);
	}
	s = mt_decode_get_stats(d);
	if (!a.quiet)
		fprintf(stderr, "mtrace-user decode: %" PRIu64 " bytes of PT from %" PRIu64
				" CPUs, %" PRIu64 " threads, %" PRIu64 " instructions, %" PRIu64
				" events, %" PRIu64 " decode errors, %" PRIu64 " overflows\n",
			s->pt_bytes, s->cpus, s->threads, s->insns, s->events, s->errors,
			s->overflows);
	mt_decode_free(d);
	mt_bundle_close(r);
	return rc;
}
