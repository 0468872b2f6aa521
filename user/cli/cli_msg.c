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

int cli_bad_option(int c, char **argv, const char *help_cmd)
{
	const char *opt = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };
	size_t len;

	/* A long option is named as typed; a short one alone, not its group ("-qz"). */
	if (strncmp(opt, "--", 2) || (optopt && c != ':'))
		opt = optopt ? shortopt : opt;
	len = strcspn(opt, "=");
	if (c == ':')
		cli_err("option '%.*s' needs a value (see 'mtrace-user %s%s--help')", (int)len, opt,
			help_cmd, *help_cmd ? " " : "");
	else
		cli_err("unknown option '%.*s' (see 'mtrace-user %s%s--help')", (int)len, opt,
			help_cmd, *help_cmd ? " " : "");
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
