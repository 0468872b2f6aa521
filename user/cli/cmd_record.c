// SPDX-License-Identifier: MIT
/*
 * `mtrace-user record` and the top-level form `mtrace-user [OPTIONS] -- CMD`:
 * command-line parsing for the capture workflow. Both take the same options;
 * record writes bundles, the top-level form decodes them to Perfetto.
 */
#include "commands.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "cli_msg.h"
#include "cli_output.h"
#include "decode_bundle.h"
#include "record_decode.h"
#include "trigger/trigger.h"

/* DECODE: the top-level form, which decodes to Perfetto instead of keeping bundles. */
static void usage(FILE *out, int decode)
{
	if (decode)
		fprintf(out,
			"usage: mtrace-user [OPTIONS] [--trigger SPEC]... (-p PID | --system-wide | -- CMD [ARGS])\n"
			"\n"
			"Traces CMD (started held before exec until tracing is armed), process PID\n"
			"(all its threads, also those created later) or every CPU, takes a snapshot\n"
			"when a trigger fires, on Ctrl-C, or when the target exits, and decodes it\n"
			"into a Perfetto trace ('mtrace-user record' writes the bundle instead).\n"
			"\n"
			"Target and output:\n"
			"  -p, --pid PID          trace a running process\n"
			"  -a, --system-wide      trace every task on every CPU\n"
			"  -o, --output FILE      Perfetto trace to write (default %s); with\n"
			"                         --snapshots N the files are FILE-1 ... FILE-N (before\n"
			"                         the extension)\n"
			"      --keep-bundle FILE keep the snapshot bundles too, numbered like the traces\n"
			"      --allow-missing    exit 0 even when traced code had no binary (else 3)\n",
			DECODE_DEFAULT_PERFETTO);
	else
		fprintf(out,
			"usage: mtrace-user record [OPTIONS] [--trigger SPEC]... (-p PID | --system-wide | [--] CMD [ARGS])\n"
			"\n"
			"Traces CMD (started held before exec until tracing is armed), process PID\n"
			"(all its threads, also those created later) or every CPU, and writes a\n"
			"snapshot bundle when a trigger fires, on Ctrl-C, or when the target exits\n"
			"(decode it with 'mtrace-user decode'). The top-level form takes the same\n"
			"options and decodes each snapshot straight to a Perfetto trace:\n"
			"       mtrace-user [OPTIONS] [--trigger SPEC]... (-p PID | --system-wide | -- CMD [ARGS])\n"
			"(-o: the trace, default %s; --keep-bundle FILE keeps the bundles too).\n"
			"\n"
			"Target and output:\n"
			"  -p, --pid PID          trace a running process\n"
			"  -a, --system-wide      trace every task on every CPU\n"
			"  -o, --output FILE      bundle to write (default %s); with --snapshots N\n"
			"                         the files are FILE-1 ... FILE-N (before the extension)\n",
			DECODE_DEFAULT_PERFETTO, MT_CAPTURE_DEFAULT_OUTPUT);
	fputs("  -n, --snapshots N      re-arm after each snapshot until N were taken (default 1);\n"
	      "                         SIGUSR1 takes a snapshot and re-arms, Ctrl-C takes the last\n"
	      "      --portable         copy the mapped executables and libraries into the\n"
	      "                         bundle, so that it decodes on another machine\n"
	      "                         (--embed is the same)\n"
	      "Triggers (first to fire wins; without any: Ctrl-C or target exit):\n"
	      "  -t, --trigger SPEC     uprobe:PATH:SYMBOL[+OFF]   uprobe:PATH:0xADDR\n"
	      "                         uretprobe:PATH:SYMBOL      kprobe:SYMBOL[+OFF]\n"
	      "                         slow:PATH:SYMBOL>DURATION  (e.g. >200us)\n"
	      "                         filters: ,tid=N  ,hit=N  ,if=argN==VALUE (== != < <= > >=)\n"
	      "      --freeze PATH      auto (kfunc when usable, default), notify (BPF ring buffer,\n"
	      "                         then the freeze ioctl) or sigstop (stop the thread first)\n"
	      "Trace content:\n"
	      "  -b, --buffer-size SIZE PT ring per CPU, a power of two from 4K to 256M\n"
	      "                         (default 4M; units K, M, G)\n"
	      "  -k, --kernel           trace kernel code too (CAP_SYS_ADMIN)\n"
	      "      --timing PRESET    low (TSC+MTC), normal (+CYC, default), high (+no RET\n"
	      "                         compression); features this CPU lacks are dropped\n"
	      "      --mtc-freq N       MTC frequency encoding 0-15 (CPUID-checked)\n"
	      "      --cyc[=N]          cycle-accurate mode, CYC threshold encoding N (default 1)\n"
	      "      --psb-freq N       PSB frequency encoding 0-15 (CPUID-checked)\n"
	      "      --no-retcomp       no RET compression: a timing point at every return\n"
	      "      --dry-run          check everything and print what would be traced, where\n"
	      "                         each probe lands and where the snapshot goes; then exit\n"
	      "                         without arming, launching or writing anything\n"
	      "  -q, --quiet            no progress messages\n"
	      "  -h, --help             this help\n"
	      "\n"
	      "Examples:\n",
	      out);
	if (decode)
		fputs("  mtrace-user -- ./server --port 8080            trace.pftrace on Ctrl-C or exit\n"
		      "  mtrace-user -t uprobe:./app:fail -- ./app      trace.pftrace when fail() runs\n"
		      "  mtrace-user -p 1234 -n 3 -o slow.pftrace -t 'slow:/usr/bin/app:handle>2ms'\n",
		      out);
	else
		fputs("  mtrace-user record -- ./server --port 8080        trace.mtrace on Ctrl-C or exit\n"
		      "  mtrace-user record -t uprobe:./app:fail -- ./app  trace.mtrace when fail() runs\n"
		      "  mtrace-user record -p 1234 -n 3 -o slow.mtrace -t 'slow:/usr/bin/app:handle>2ms'\n",
		      out);
}

enum {
	OPT_TIMING = 256,
	OPT_MTC_FREQ,
	OPT_CYC,
	OPT_PSB_FREQ,
	OPT_NO_RETCOMP,
	OPT_EMBED,
	OPT_FREEZE,
	OPT_KEEP_BUNDLE,
	OPT_ALLOW_MISSING,
	OPT_DRY_RUN,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "system-wide", no_argument, NULL, 'a' },
	{ "output", required_argument, NULL, 'o' },
	{ "snapshots", required_argument, NULL, 'n' },
	{ "trigger", required_argument, NULL, 't' },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "kernel", no_argument, NULL, 'k' },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "mtc-freq", required_argument, NULL, OPT_MTC_FREQ },
	{ "cyc", optional_argument, NULL, OPT_CYC },
	{ "psb-freq", required_argument, NULL, OPT_PSB_FREQ },
	{ "no-retcomp", no_argument, NULL, OPT_NO_RETCOMP },
	{ "portable", no_argument, NULL, OPT_EMBED },
	{ "embed", no_argument, NULL, OPT_EMBED },
	{ "freeze", required_argument, NULL, OPT_FREEZE },
	{ "keep-bundle", required_argument, NULL, OPT_KEEP_BUNDLE },
	{ "allow-missing", no_argument, NULL, OPT_ALLOW_MISSING },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int bad(const char *err)
{
	fprintf(stderr, "mtrace-user: %s\n", err);
	return 2;
}

/* One option into o; 0, or the exit status of a usage error. */
static int take_option(int c, const char *arg, struct mt_capture_opts *o, const char **trig,
		       char *err, size_t errlen)
{
	long v;

	switch (c) {
	case 'p':
		if (o->pid)
			return bad("-p given twice: one process is traced (with all its threads)");
		if (mt_capture_parse_uint(arg, "pid", 1, 0x7fffffff, &v, err, errlen))
			return bad(err);
		o->pid = (pid_t)v;
		return 0;
	case 'a': o->system_wide = 1; return 0;
	case 'o':
		o->output = arg;
		return cli_check_name("-o", arg);
	case 'n':
		if (mt_capture_parse_uint(arg, "--snapshots", 1, MT_CAPTURE_MAX_SNAPSHOTS, &v, err,
					  errlen))
			return bad(err);
		o->snapshots = (unsigned int)v;
		return 0;
	case 't': trig[o->nr_triggers++] = arg; return 0;
	case 'b':
		return mt_capture_parse_size(arg, &o->buffer_size, err, errlen) ? bad(err) : 0;
	case 'k': o->kernel = 1; return 0;
	case OPT_TIMING:
		return mt_capture_parse_timing(arg, &o->timing, err, errlen) ? bad(err) : 0;
	case OPT_MTC_FREQ:
		if (mt_capture_parse_uint(arg, "--mtc-freq", 0, 15, &v, err, errlen))
			return bad(err);
		o->mtc_freq = (int)v;
		return 0;
	case OPT_CYC:
		v = 1;
		if (arg && mt_capture_parse_uint(arg, "--cyc threshold", 0, 15, &v, err, errlen))
			return bad(err);
		o->cyc_thresh = (int)v;
		return 0;
	case OPT_PSB_FREQ:
		if (mt_capture_parse_uint(arg, "--psb-freq", 0, 15, &v, err, errlen))
			return bad(err);
		o->psb_freq = (int)v;
		return 0;
	case OPT_NO_RETCOMP: o->no_retcomp = 1; return 0;
	case OPT_EMBED: o->embed = 1; return 0;
	case OPT_FREEZE:
		if (!strcmp(arg, "auto"))
			o->freeze = MT_TRIGGER_FREEZE_AUTO;
		else if (!strcmp(arg, "notify"))
			o->freeze = MT_TRIGGER_FREEZE_PREFER_NOTIFY;
		else if (!strcmp(arg, "sigstop"))
			o->freeze = MT_TRIGGER_FREEZE_PREFER_SIGSTOP;
		else
			return bad("invalid --freeze path: expected auto, notify or sigstop");
		return 0;
	case 'q': o->quiet = 1; return 0;
	case OPT_DRY_RUN: o->dry_run = 1; return 0;
	default:
		return -1;	/* getopt's '?' or ':': the caller names the option */
	}
}

/* Both forms: `record` (DECODE 0) and the top-level one (DECODE 1). */
static int record_main(int argc, char **argv, int decode)
{
	struct mt_capture_opts o;
	const char **trig = calloc((size_t)argc, sizeof(*trig));
	const char *keep_bundle = NULL;
	bool allow_missing = false;
	char err[MT_CAPTURE_ERRLEN];
	int c, rc = 0;

	if (!trig)
		return bad("out of memory");
	mt_capture_opts_init(&o);
	if (decode)
		o.output = DECODE_DEFAULT_PERFETTO;
	o.triggers = trig;
	optind = 1;
	opterr = 0;
	/* '+': the first non-option starts the command, whose options are its own. */
	while (!rc && (c = getopt_long(argc, argv, "+:p:ao:n:t:b:kqh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, decode);
			free(trig);
			return 0;
		}
		if (c == OPT_KEEP_BUNDLE && decode)
			rc = cli_check_name("--keep-bundle", keep_bundle = optarg);
		else if (c == OPT_KEEP_BUNDLE)
			rc = bad("--keep-bundle is for 'mtrace-user [OPTIONS] -- CMD'; record always writes its bundle");
		else if (c == OPT_ALLOW_MISSING && decode)
			allow_missing = true;
		else if (c == OPT_ALLOW_MISSING)
			rc = bad("--allow-missing is for 'mtrace-user [OPTIONS] -- CMD' and decode; record does not decode");
		else if ((rc = take_option(c, optarg, &o, trig, err, sizeof(err))) < 0)
			rc = cli_bad_option(c, argv, long_opts, decode ? "" : "record");
	}
	if (!rc) {
		/* A bare trailing "--" still names an (empty) command, for a precise message. */
		if (optind < argc || !strcmp(argv[optind - 1], "--"))
			o.argv = argv + optind;
		rc = cli_check_binary_output(o.output, decode ? "a Perfetto trace" : "a snapshot bundle");
		if (!rc && keep_bundle)
			rc = cli_check_binary_output(keep_bundle, "a snapshot bundle");
	}
	if (!rc) {
		if (decode) {
			rc = record_decode(&o, keep_bundle, allow_missing);
		} else {
			unsigned int taken;
			int e = mt_capture_record(&o, &cli_reporter, &taken, err, sizeof(err));

			if (e)
				cli_err("%s", err);
			rc = cli_capture_status(e);
		}
	}
	free(trig);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	return record_main(argc, argv, 0);
}

int cmd_trace(int argc, char **argv)
{
	return record_main(argc, argv, 1);
}
