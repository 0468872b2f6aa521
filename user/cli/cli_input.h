/* SPDX-License-Identifier: MIT */
/*
 * A bundle named on the command line: a file, "-" (standard input), a pipe
 * or a FIFO (files/infile.h), opened within the decompression limit; or a
 * perf.data in its place.
 */
#ifndef MTRACE_CLI_INPUT_H
#define MTRACE_CLI_INPUT_H

#include "bundle/bundle.h"

/* What messages call ARG ("standard input" for "-"). */
const char *cli_input_name(const char *arg);

/* Opens ARG into *R; 0, or 1 after printing why. */
int cli_open_bundle(const char *arg, const struct mt_bundle_limits *lim,
		    struct mt_bundle_reader **r);

/* Opens ARG, a bundle as cli_open_bundle() does or a perf.data (its
 * binaries looked for under SYMFS, NULL: as recorded), into *R; 0, or 1
 * after printing why. The import's warning is printed unless QUIET.
 * *PERF_DATA (PERF_DATA may be NULL) tells whether ARG was a perf.data. */
int cli_open_input(const char *arg, const struct mt_bundle_limits *lim, const char *symfs,
		   int quiet, struct mt_bundle_reader **r, int *perf_data);

/* Whether command CMD was given one bundle: one operand, not empty, left
 * at argv[optind] by getopt; 0, or the exit status of bad usage after a
 * line saying what is wrong. */
int cli_one_bundle(int argc, char **argv, const char *cmd);

/* Whether PATH, given to option OPT, is a name that exists (as a directory when DIR); 0,
 * or the exit status of bad usage after a line naming both. Options that
 * only add places to look would otherwise fall back silently on a typo. */
int cli_check_path(const char *opt, const char *path, int dir);

#endif
