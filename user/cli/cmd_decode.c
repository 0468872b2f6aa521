// SPDX-License-Identifier: MIT
/* `mtrace-user decode BUNDLE`: a snapshot bundle to a Perfetto trace or text. */
#include "commands.h"

#include "decode_bundle.h"
#include "narrow_args.h"
#include "perfdata/perfdata_import.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user decode [OPTIONS] BUNDLE|PERF.DATA\n\n"
		"Decodes a snapshot bundle, or a perf.data recorded with perf record -e intel_pt//,\n"
		"into every traced thread's calls and returns.\n\n"
		"  -o, --output FILE     where to write (default: trace.pftrace, or trace.json for\n"
		"                        --format=json; text: stdout);\n"
		"                        a .gz name gives gzip-compressed output\n"
		"  -f, --format FORMAT   perfetto (default), json (Chrome JSON), text, or svg (a\n"
		"                        self-contained interactive flame graph, trace.svg)\n"
		"      --svg KIND        graph (stacks merged by inclusive time, default) or\n"
		"                        chart (each thread's calls in time order)\n"
		"      --debug-path PATH separate debug files: directories searched by build-id\n"
		"                        and .gnu_debuglink (default :.debug:/usr/lib/debug)\n"
		"  -j, --jobs N          decode N CPU streams at once (default: online CPUs)\n"
		"      --embedded-only   use only binaries embedded in the bundle\n"
		"      --keep-open       leave calls still running at the snapshot's end open\n"
		"                        instead of ending them there marked truncated\n"
		"  -q, --quiet           no warnings about missing binaries\n"
		"      --symfs DIR       perf.data input: binaries under DIR (as perf --symfs)\n\n%s",
		narrow_help);
}

struct decode_args {
	const char *bundle;
	struct decode_request q;
	struct perfdata_import_opts perf;
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
		{ "svg", required_argument, NULL, 'S' },
		NARROW_OPTIONS,
		{ "symfs", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->q.who = "mtrace-user decode";
	while ((c = getopt_long(argc, argv, "o:f:j:qh", opts, NULL)) != -1) {
		if ((rc = narrow_option(c, optarg, a->q.who, &a->q)) >= 0) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'o':
			a->q.output = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "perfetto")) {
				a->q.format = DECODE_PERFETTO;
			} else if (!strcmp(optarg, "json")) {
				a->q.format = DECODE_JSON;
			} else if (!strcmp(optarg, "text")) {
				a->q.format = DECODE_TEXT;
			} else if (!strcmp(optarg, "svg")) {
				a->q.format = DECODE_SVG;
			} else {
				fprintf(stderr, "mtrace-user decode: unknown format '%s' (perfetto, json, text, svg)\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (strcmp(optarg, "graph") && strcmp(optarg, "chart")) {
				fprintf(stderr, "mtrace-user decode: --svg wants graph or chart, not '%s'\n",
					optarg);
				return 2;
			}
			a->q.svg_chart = optarg[0] == 'c';
			break;
		case 'd':
			a->q.debug_path = optarg;
			break;
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 1024) {
				fprintf(stderr, "mtrace-user decode: --jobs wants 1..1024, not '%s'\n",
					optarg);
				return 2;
			}
			a->q.jobs = (unsigned int)v;
			break;
		case 'q':
			a->q.quiet = 1;
			break;
		case 'E':
			a->q.embedded_only = 1;
			break;
		case 'K':
			a->q.keep_open = 1;
			break;
		case 'Y':
			a->perf.symfs = optarg;
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
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	struct mt_bundle_reader *r;
	struct decode_args a;
	char err[512];
	int rc = parse(argc, argv, &a);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (perfdata_is_perf_data(a.bundle)) {
		struct perfdata_import_stats st;

		if (perfdata_import_open(a.bundle, &a.perf, &r, &st, err, sizeof(err)) < 0) {
			fprintf(stderr, "mtrace-user decode: %s\n", err);
			return 1;
		}
		if (st.warning[0] && !a.q.quiet)
			fprintf(stderr, "mtrace-user decode: warning: %s: %s\n", a.bundle, st.warning);
	} else if (mt_bundle_open(&r, a.bundle, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-user decode: %s\n", err);
		return 1;
	}
	rc = decode_bundle(r, a.bundle, &a.q);
	mt_bundle_close(r);
	return rc;
}
