// SPDX-License-Identifier: MIT
/* `mtrace-user decode BUNDLE`: a snapshot bundle to a Perfetto trace or text. */
#include "commands.h"

#include "decode_bundle.h"

#include <errno.h>
#include <getopt.h>
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
		"\n"
		"Narrowing (combine freely; applied before anything is written):\n"
		"      --around-trigger D  only the time D before the trigger and D after it\n"
		"      --time FROM,TO      only that window: nanoseconds on the trace's clock,\n"
		"                          or T, T-D, T+D around the trigger; an end may be empty\n"
		"      --tid TID[,TID...]  only these threads (others are not rebuilt)\n"
		"      --cpu CPU[,CPU...]  only these CPUs' trace (others are not decoded)\n"
		"      --function SYM      only calls of SYM, what they call, and their callers\n"
		"      --min-duration D    leave out calls shorter than D (their time stays in\n"
		"                          their caller)\n"
		"      --max-depth N       leave out frames nested deeper than N\n"
		"  Durations: a number with ns, us, ms or s (default ns).\n");
}

/* A comma-separated list of numbers into V (at most DECODE_MAX_LIST). */
static int parse_list(const char *opt, const char *s, uint32_t *v, size_t *n)
{
	const char *p = s;
	char *end;

	do {
		unsigned long x;

		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno || end == p || x > UINT32_MAX || (*end && *end != ',') ||
		    *n == DECODE_MAX_LIST) {
			fprintf(stderr, "mtrace-user decode: --%s wants numbers separated by commas "
					"(at most %d), not '%s'\n",
				opt, DECODE_MAX_LIST, s);
			return 2;
		}
		v[(*n)++] = (uint32_t)x;
		p = end + 1;
	} while (*end);
	return 0;
}

static int parse_duration(const char *opt, const char *s, uint64_t *ns)
{
	if (!mt_narrow_parse_duration(s, ns))
		return 0;
	fprintf(stderr, "mtrace-user decode: --%s wants a duration (e.g. 2ms), not '%s'\n", opt, s);
	return 2;
}

/* The narrowing options; 0, or the exit status of a bad one. */
static int parse_narrow(int c, const char *arg, struct decode_request *q)
{
	struct mt_narrow_opts *o = &q->narrow;
	char err[256];
	uint64_t v;
	char *end;

	switch (c) {
	case 'A':
		if (parse_duration("around-trigger", arg, &v))
			return 2;
		if (v > INT64_MAX)
			v = INT64_MAX;
		*o = (struct mt_narrow_opts){ 1, 1, -(int64_t)v, (int64_t)v, o->function,
					      o->min_duration, o->max_depth };
		return 0;
	case 'T':
		if (!mt_narrow_parse_time(arg, o, err, sizeof(err)))
			return 0;
		fprintf(stderr, "mtrace-user decode: %s\n", err);
		return 2;
	case 'I':
		return parse_list("tid", arg, q->tids, &q->ntids);
	case 'C':
		return parse_list("cpu", arg, q->cpus, &q->ncpus);
	case 'F':
		o->function = arg;
		return 0;
	case 'M':
		return parse_duration("min-duration", arg, &o->min_duration);
	case 'D':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || v < 1 || v > 4096) {
			fprintf(stderr, "mtrace-user decode: --max-depth wants 1..4096, not '%s'\n", arg);
			return 2;
		}
		o->max_depth = (unsigned int)v;
		return 0;
	}
	return -1;
}

struct decode_args {
	const char *bundle;
	struct decode_request q;
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
		{ "around-trigger", required_argument, NULL, 'A' },
		{ "time", required_argument, NULL, 'T' },
		{ "tid", required_argument, NULL, 'I' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "function", required_argument, NULL, 'F' },
		{ "min-duration", required_argument, NULL, 'M' },
		{ "max-depth", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->q.who = "mtrace-user decode";
	while ((c = getopt_long(argc, argv, "o:f:j:qh", opts, NULL)) != -1) {
		if ((rc = parse_narrow(c, optarg, &a->q)) >= 0) {
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
	if (mt_bundle_open(&r, a.bundle, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-user decode: %s\n", err);
		return 1;
	}
	rc = decode_bundle(r, a.bundle, &a.q);
	mt_bundle_close(r);
	return rc;
}
