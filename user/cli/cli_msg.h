/* SPDX-License-Identifier: MIT */
/*
 * How mtrace-user speaks and ends: every message is one line on stderr
 * starting with "mtrace-user: ", whatever the subcommand; usage errors name
 * the bad argument in one line and point at --help instead of printing it;
 * the exit statuses; what a fatal signal cleans up.
 */
#ifndef MTRACE_CLI_MSG_H
#define MTRACE_CLI_MSG_H

#include "util/reporter.h"

#include <getopt.h>
#include <stdio.h>

#define CLI_PREFIX "mtrace-user: "

/* Exit statuses (mtrace-user(1)). */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,	/* the work could not be done */
	CLI_EXIT_USAGE = 2,	/* bad command line; nothing was done */
	CLI_EXIT_MISSING = 3,	/* decoded, but some traced code had no binary */
};

void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The library's reporter: "mtrace-user: [note: |warning: ]MESSAGE". */
extern const struct mt_reporter cli_reporter;

/* The exit status of a capture that returned E (capture.h): 0, 1 or 2. */
int cli_capture_status(int e);

/*
 * The one-line message for getopt_long()'s '?' or ':' (C) with opterr 0
 * and the long options OPTS, for the command HELP_CMD ("decode"; "" for
 * the top-level form): an unknown or ambiguous option (with the options
 * it may abbreviate), one that needs a value or takes none. Returns 2.
 */
int cli_bad_option(int c, char **argv, const struct option *opts, const char *help_cmd);

/*
 * The options of command CMD, which takes none but --help: 0 with optind
 * at the first operand (after a "--"), -1 after printing USAGE for
 * --help, or the exit status of a bad option after its message.
 */
int cli_help_only(int argc, char **argv, const char *cmd, void (*usage)(FILE *out));

/*
 * Refuses NAME, the file given for WHAT ("-o", "the bundle"), when it is
 * empty (as an unset variable in a script makes it): 0, or the exit
 * status of bad usage after a line naming WHAT.
 */
int cli_check_name(const char *what, const char *name);

/*
 * On SIGINT, SIGTERM and SIGHUP (where they have their default action):
 * remove unfinished output files (files/outfile.h), then die of the signal
 * as before. Called once, first thing in main().
 */
void cli_remove_outputs_on_signals(void);

#endif
