/* SPDX-License-Identifier: MIT */
/*
 * Outputs named on the command line, checked before any work starts: "-"
 * is standard output, where a binary file must not land on a terminal.
 */
#ifndef MTRACE_CLI_OUTPUT_H
#define MTRACE_CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

/* What messages call OUTPUT: "standard output" for "-" (or NULL, a
 * format's default of standard output), else OUTPUT. */
const char *cli_output_name(const char *output);

/* Whether OUTPUT is standard output: "-", or a name of it (/dev/stdout). */
bool cli_output_is_stdout(const char *output);

/* Refuses to write WHAT, a binary format ("a Perfetto trace"), to OUTPUT
 * when that is a terminal: 0, or the exit status of bad usage after a
 * line saying what to do instead. */
int cli_check_binary_output(const char *output, const char *what);

/* Refuses OUTPUT when it is INPUT or, for a perf.data directory, one of
 * the files read from it: 0, or the exit status of bad usage after the
 * reason. Before anything is opened for writing. */
int cli_check_not_input(const char *output, const char *input);

/* Starts a command's summary of what it wrote to OUTPUT and returns
 * where the rest goes: standard output, or standard error (after the
 * messages' prefix) when the data went to standard output, which must
 * hold only the data. */
FILE *cli_summary_start(const char *output);

#endif
