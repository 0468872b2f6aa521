// SPDX-License-Identifier: MIT
/* `mtrace-user report BUNDLE...`: what the snapshots say, for a terminal
 * or (--json) a script (report/report.h). */
#include "commands.h"

#include "binary_args.h"
#include "cli_input.h"
#include "cli_msg.h"

#include "narrow_args.h"
#include "report/report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user report [OPTIONS] BUNDLE|PERF.DATA [...]\n\n"
		"Decodes snapshot bundles (or perf.data files recorded with perf record -e\n"
		"intel_pt//) and prints what they say: the trigger and the call stack at it,\n"
		"the slowest calls per function (count, total, p50, p99, max and the stack of\n"
		"the slowest), top functions by self and inclusive time, each thread's running\n"
		"/ syscall / descheduled / untraced shares, and the decode's health. With\n"
		"several bundles, also the triggering function's latency across them and what\n"
		"the slowest did differently from the median.\n\n"
		"      --json            JSON instead of text (every figure in ns)\n"
		"      --width N         text columns (default 80)\n"
		"      --top N           rows per table (default 8)\n"
		"      --color WHEN      auto (default: on a terminal), always or never\n"
		"%s"
		"  -j, --jobs N          decoding threads (as for decode)\n\n%s",
		binary_help, narrow_help);
}

struct report_args {
	int json, color;
	unsigned int width, top, jobs;
	struct decode_request q;	/* places to look and the narrowing, as decode takes them */
	int several;			/* more than one bundle to report */
};

static int number(const char *opt, const char *s, unsigned int lo, unsigned int hi,
		  unsigned int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || *end || x < (long)lo || x > (long)hi) {
		cli_err("--%s wants %u..%u, not '%s'", opt, lo, hi, s);
		return 2;
	}
	*v = (unsigned int)x;
	return 0;
}

static int parse(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "width", required_argument, NULL, 'w' },
		{ "top", required_argument, NULL, 't' },
		{ "color", required_argument, NULL, 'c' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		BINARY_OPTIONS,
		NARROW_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("NO_COLOR"), *term = getenv("TERM");
	int c, rc = 0;

	*a = (struct report_args){ .width = 80, .top = 8, };
	a->color = isatty(STDOUT_FILENO) && !(env && *env) && !(term && !strcmp(term, "dumb"));
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, ":j:h", opts, NULL)) != -1) {
		if ((rc = binary_option(c, optarg, &a->q)) >= 0 ||
		    (rc = narrow_option(c, optarg, &a->q)) >= 0)
			continue;
		rc = 0;
		switch (c) {
		case 'J': a->json = 1; break;
		case 'w': rc = number("width", optarg, 60, 1000, &a->width); break;
		case 't': rc = number("top", optarg, 1, 1000, &a->top); break;
		case 'j': rc = number("jobs", optarg, 1, 1024, &a->jobs); break;
		case 'c':
			if (!strcmp(optarg, "always") || !strcmp(optarg, "never"))
				a->color = optarg[0] == 'a';
			else if (strcmp(optarg, "auto"))
				rc = (cli_err("--color wants auto, always or never, not '%s'", optarg),
				      CLI_EXIT_USAGE);
			break;
		case 'h': usage(stdout); return 1;
		default: return cli_bad_option(c, argv, opts, "report");
		}
	}
	if (!rc && optind >= argc) {
		cli_err("report needs a bundle (see 'mtrace-user report --help')");
		rc = CLI_EXIT_USAGE;
	}
	for (int i = optind; !rc && i < argc; i++)
		rc = cli_check_name("a bundle", argv[i]);
	return rc;
}

/* A narrowing that names what one bundle lacks (a thread, a CPU, a
 * trigger): bad usage for one bundle; among several, where thread ids
 * differ from snapshot to snapshot, that bundle is left out as one that
 * cannot be read is. */
static int unmatched(const struct report_args *a, int rc)
{
	return a->several ? 1 : rc;
}

/* One bundle into a report; 0 or the exit status. */
static int collect(const char *path, const struct report_args *a, struct mt_report **out)
{
	struct mt_decode_opts o = { .jobs = a->jobs };
	const char *name = cli_input_name(path);	/* "-" is standard input */
	struct mt_bundle_reader *r;
	struct mt_decode_sink sink;
	struct mt_report *rep;
	struct mt_decode *d;
	char err[512];
	int rc;

	binary_decode_opts(&a->q, &o);
	narrow_decode_opts(&a->q, &o);
	if (cli_open_input(path, NULL, a->q.symfs, 0, &r, NULL))
		return CLI_EXIT_FAIL;
	if ((rc = narrow_check_cpus(&a->q, r, name))) {
		mt_bundle_close(r);
		return unmatched(a, rc);
	}
	if (mt_decode_open(&d, r, &o, err, sizeof(err)) < 0) {
		cli_err("%s: %s", name, err);
		mt_bundle_close(r);
		return 1;
	}
	if ((rc = narrow_check_open(&a->q, d, name))) {
		mt_decode_free(d);
		mt_bundle_close(r);
		return unmatched(a, rc);
	}
	rep = mt_report_new();
	if (!rep) {
		rc = -1;
	} else {
		rep->label = name;
		sink = mt_report_sink(rep, mt_decode_label, d);
		rc = narrow_run(d, name, &a->q, &sink, NULL);
		if (!rc)
			rc = mt_report_finish(rep, d, r);
	}
	if (rc && !narrow_told(d, rc))
		cli_err("%s: out of memory", name);
	mt_decode_free(d);
	mt_bundle_close(r);
	if (rc) {
		mt_report_free(rep);
		return 1;
	}
	*out = rep;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	struct mt_report **reps;
	int rc = parse(argc, argv, &a), n = 0;

	if (rc) {
		decode_request_free(&a.q);
		return rc == 1 ? 0 : rc;
	}
	binary_warn(&a.q);
	a.several = argc - optind > 1;
	reps = calloc((size_t)(argc - optind), sizeof(*reps));
	if (!reps) {
		decode_request_free(&a.q);
		return 1;
	}
	/* A bundle that cannot be read is told and left out: the others are
	 * still reported (the exit status says one failed). A bad argument
	 * stops everything. */
	for (int i = optind; i < argc && rc != CLI_EXIT_USAGE; i++) {
		int one = collect(argv[i], &a, &reps[n]);

		if (!one)
			n++;
		else if (!rc || one == CLI_EXIT_USAGE)
			rc = one;
	}
	if (rc != CLI_EXIT_USAGE && n) {
		struct mt_report_style s = { a.color, a.width, a.top };

		if (a.json)
			mt_report_json(stdout, reps, (size_t)n);
		else
			mt_report_text(stdout, reps, (size_t)n, &s);
		if (fflush(stdout))
			rc = 1;
	}
	for (int i = 0; i < n; i++)
		mt_report_free(reps[i]);
	free(reps);
	decode_request_free(&a.q);
	return rc;
}
