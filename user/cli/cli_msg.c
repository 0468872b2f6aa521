// SPDX-License-Identifier: MIT
/* One prefix, one line; cleanup on fatal signals (cli_msg.h). */
#include "cli_msg.h"

#include "files/outfile.h"
#include "util/text.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_err(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	/* Messages quote paths, names and specs from bundles and binaries:
	 * no control character of theirs reaches the terminal. */
	fputs(CLI_PREFIX, stderr);
	if (n >= 0)
		mt_fputs_visible(msg, stderr);
	else
		fputs("(out of memory formatting a message)", stderr);
	fputc('\n', stderr);
	free(msg);
}

static void report(void *ctx, enum mt_severity sev, const char *msg)
{
	static const char *const prefix[MT_SEV_NR] = {
		[MT_SEV_INFO] = "", [MT_SEV_NOTE] = "note: ", [MT_SEV_WARNING] = "warning: ",
	};

	(void)ctx;
	cli_err("%s%s", sev < MT_SEV_NR ? prefix[sev] : "", msg);
}

const struct mt_reporter cli_reporter = { .report = report };

int cli_capture_status(int e)
{
	if (!e)
		return CLI_EXIT_OK;
	return e == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

/* The options of OPTS whose names begin with the LEN bytes of NAME, as
 * "--a, --b" in LIST (LISTLEN bytes); how many. */
static size_t long_candidates(const struct option *opts, const char *name, size_t len,
			      char *list, size_t listlen)
{
	size_t n = 0, used = 0;

	list[0] = '\0';
	for (const struct option *o = opts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (used < listlen)
			used += (size_t)snprintf(list + used, listlen - used, "%s--%s", n ? ", " : "",
						 o->name);
		n++;
	}
	return n;
}

/* The long option that ARG ("--NAME[=VALUE]") selected: NAME itself, or
 * the first it abbreviates (getopt_long() takes abbreviations of options
 * that do the same as one). */
static const struct option *selected_long(const struct option *opts, const char *arg)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	const struct option *first = NULL;

	for (const struct option *o = opts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (!o->name[len])
			return o;
		if (!first)
			first = o;
	}
	return first;
}

int cli_bad_option(int c, char **argv, const struct option *opts, const char *help_cmd)
{
	/* What getopt_long() just read; within a group of short options
	 * ("-zq") the element may be an earlier one, so a short option is
	 * named by optopt alone. */
	const char *arg = argv[optind - 1];
	const struct option *o = strncmp(arg, "--", 2) ? NULL : selected_long(opts, arg);
	char help[128], list[512];
	size_t len;

	snprintf(help, sizeof(help), "see 'mtrace-user %s%s--help'", help_cmd, *help_cmd ? " " : "");
	/* An unknown or ambiguous long option: getopt_long() leaves optopt 0,
	 * which no short option is. */
	if (c == '?' && !optopt) {
		len = strcspn(arg, "=");
		if (len > 2 && long_candidates(opts, arg + 2, len - 2, list, sizeof(list)) > 1)
			cli_err("option '%.*s' is ambiguous: %s (%s)", (int)len, arg, list, help);
		else
			cli_err("unknown option '%.*s' (%s)", (int)len, arg, help);
	} else if (o && o->val == optopt && c == ':') {
		cli_err("option '--%s' needs a value (%s)", o->name, help);
	} else if (o && o->val == optopt && o->has_arg == no_argument && strchr(arg, '=')) {
		cli_err("option '--%s' takes no value (%s)", o->name, help);
	} else if (c == ':') {
		cli_err("option '-%c' needs a value (%s)", optopt, help);
	} else {
		cli_err("unknown option '-%c' (%s)", optopt, help);
	}
	return CLI_EXIT_USAGE;
}

int cli_help_only(int argc, char **argv, const char *cmd, void (*usage)(FILE *out))
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	/* The first option ends it: --help, or a bad one. */
	if ((c = getopt_long(argc, argv, ":h", opts, NULL)) == -1)
		return 0;
	if (c != 'h')
		return cli_bad_option(c, argv, opts, cmd);
	usage(stdout);
	return -1;
}

int cli_check_name(const char *what, const char *name)
{
	if (*name)
		return 0;
	cli_err("empty file name for %s", what);
	return CLI_EXIT_USAGE;
}

static void die_of_signal(int sig)
{
	mt_outfile_remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);	/* the exit status still says which signal ended us */
}

void cli_remove_outputs_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = die_of_signal }, old;

	sigemptyset(&sa.sa_mask);
	/* An ignored signal stays ignored (nohup, a background job's SIGINT). */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}
