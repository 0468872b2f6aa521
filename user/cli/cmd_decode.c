// SPDX-License-Identifier: MIT
/* `mtrace-user decode BUNDLE`: a snapshot bundle to a Perfetto trace or text. */
#include "commands.h"

#include "binary_args.h"
#include "capture/capture.h"
#include "cli_input.h"
#include "cli_msg.h"
#include "cli_output.h"
#include "decode_bundle.h"
#include "narrow_args.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user decode [OPTIONS] BUNDLE|PERF.DATA\n\n"
		"Decodes a snapshot bundle (a file, or - for standard input), or a perf.data\n"
		"recorded with perf record -e intel_pt//, into every traced thread's calls and\n"
		"returns.\n\n"
		"  -o, --output FILE     where to write (default: trace.pftrace, or trace.json for\n"
		"                        --format=json; text: stdout; - for stdout, not a terminal\n"
		"                        for perfetto); never one of the inputs; a .gz name\n"
		"                        gives gzip-compressed output\n"
		"  -f, --format FORMAT   perfetto (default), json (Chrome JSON), text, or svg (a\n"
		"                        self-contained interactive flame graph, trace.svg)\n"
		"      --svg KIND        graph (stacks merged by inclusive time, default) or\n"
		"                        chart (each thread's calls in time order); implies\n"
		"                        --format svg\n"
		"%s"
		"      --allow-missing   exit 0 even when traced code had no binary (else 3)\n"
		"      --max-decompressed SIZE  refuse bundles declaring more than SIZE bytes\n"
		"                        decompressed (default: 64 times the file, at least 256M,\n"
		"                        at most the machine's memory)\n"
		"  -j, --jobs N          decoding threads (default: online CPUs): N streams at\n"
		"                        once; a busy stream (all, with threads to spare) on two,\n"
		"                        one busy stream in pieces on up to four more\n"
		"      --keep-open       leave calls still running at the snapshot's end open\n"
		"                        instead of ending them there marked truncated\n"
		"  -q, --quiet           no warnings or statistics (the missing-code account stays)\n"
		"\nExit status: 0 decoded, 1 failed (an older output file is kept), 2 bad usage,\n"
		"3 decoded but traced code had no binary (see the summary).\n\n%s",
		binary_help, narrow_help);
}

enum {
	OPT_KEEP_OPEN = 256,
	OPT_ALLOW_MISSING,
	OPT_MAX_DECOMPRESSED,
	OPT_SVG,
};

struct decode_args {
	const char *bundle;
	struct decode_request q;
	struct mt_bundle_limits lim;
	const char *format, *svg;	/* as given, NULL when not */
};

/* One option; 0, -1 for --help, or an exit status (OPTS and ARGV name a
 * bad one). */
static int take(int c, char *arg, char **argv, const struct option *opts, struct decode_args *a)
{
	char err[MT_CAPTURE_ERRLEN];
	long v;
	int rc;

	switch (c) {
	case 'o': a->q.output = arg; return 0;
	case 'f':
		a->format = arg;
		if (decode_format_parse(arg, &a->q.format)) {
			cli_err("unknown format '%s' (perfetto, json, text, svg)", arg);
			return CLI_EXIT_USAGE;
		}
		return 0;
	case OPT_SVG:
		if (strcmp(arg, "graph") && strcmp(arg, "chart")) {
			cli_err("--svg wants graph or chart, not '%s'", arg);
			return CLI_EXIT_USAGE;
		}
		a->svg = arg;
		a->q.svg_chart = arg[0] == 'c';
		return 0;
	case 'j':
		if (mt_capture_parse_uint(arg, "--jobs", 1, 1024, &v, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_EXIT_USAGE;
		}
		a->q.jobs = (unsigned int)v;
		return 0;
	case 'q': a->q.quiet = 1; return 0;
	case OPT_KEEP_OPEN: a->q.keep_open = 1; return 0;
	case OPT_ALLOW_MISSING: a->q.allow_missing = 1; return 0;
	case OPT_MAX_DECOMPRESSED:
		if (mt_capture_parse_size(arg, &a->lim.max_total_raw, err, sizeof(err))) {
			cli_err("--max-decompressed: %s", err);
			return CLI_EXIT_USAGE;
		}
		if (!a->lim.max_total_raw) {
			cli_err("--max-decompressed wants a size above 0, not '%s'", arg);
			return CLI_EXIT_USAGE;
		}
		return 0;
	case 'h': usage(stdout); return -1;
	default:
		if ((rc = binary_option(c, arg, &a->q)) < 0)
			rc = narrow_option(c, arg, &a->q);
		return rc >= 0 ? rc : cli_bad_option(c, argv, opts, "decode");
	}
}

static int parse(int argc, char **argv, struct decode_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "keep-open", no_argument, NULL, OPT_KEEP_OPEN },
		{ "allow-missing", no_argument, NULL, OPT_ALLOW_MISSING },
		{ "max-decompressed", required_argument, NULL, OPT_MAX_DECOMPRESSED },
		{ "svg", required_argument, NULL, OPT_SVG },
		BINARY_OPTIONS,
		NARROW_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(a, 0, sizeof(*a));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:f:j:qh", opts, NULL)) != -1)
		if ((rc = take(c, optarg, argv, opts, a)))
			return rc;
	/* --svg asks for an SVG: it needs no --format, and contradicts another. */
	if (a->svg && !a->format)
		a->q.format = DECODE_SVG;
	if (a->svg && a->q.format != DECODE_SVG) {
		cli_err("--svg %s is for --format svg, not --format %s", a->svg, a->format);
		return CLI_EXIT_USAGE;
	}
	if ((a->q.output && (rc = cli_check_name("-o", a->q.output))) ||
	    (rc = cli_one_bundle(argc, argv, "decode")))
		return rc;
	a->bundle = argv[optind];
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	struct mt_bundle_reader *r;
	struct decode_args a;
	const char *output;
	int rc = parse(argc, argv, &a);

	if (rc) {
		decode_request_free(&a.q);
		return rc < 0 ? 0 : rc;
	}
	output = decode_output_name(&a.q);
	/* Before anything is opened for writing: the input is never the output. */
	if ((rc = cli_check_not_input(output ? output : "-", a.bundle)) ||
	    (a.q.format == DECODE_PERFETTO &&
	     (rc = cli_check_binary_output(output ? output : "-", "a Perfetto trace")))) {
		decode_request_free(&a.q);
		return rc;
	}
	binary_warn(&a.q);
	if (cli_open_input(a.bundle, &a.lim, a.q.symfs, a.q.quiet, &r, &a.q.perf_data)) {
		decode_request_free(&a.q);
		return CLI_EXIT_FAIL;
	}
	rc = decode_bundle(r, cli_input_name(a.bundle), &a.q);
	mt_bundle_close(r);
	decode_request_free(&a.q);
	return rc;
}
