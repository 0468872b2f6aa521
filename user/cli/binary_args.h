/* SPDX-License-Identifier: MIT */
/*
 * Where the commands that decode find the traced binaries and their debug
 * files (--debug-path, --symfs, --path-map, --embedded-only): their getopt
 * entries, their help, their parsing into a decode_request, and the
 * decoder's options made from it. decode and report take them alike.
 */
#ifndef MTRACE_CLI_BINARY_ARGS_H
#define MTRACE_CLI_BINARY_ARGS_H

#include "decode_bundle.h"

#include <getopt.h>

/* Short codes above any character an option of the callers' takes. */
enum {
	BINARY_OPT_DEBUG_PATH = 0x300,
	BINARY_OPT_SYMFS,
	BINARY_OPT_PATH_MAP,
	BINARY_OPT_EMBEDDED_ONLY,
};

#define BINARY_OPTIONS                                                             \
	{ "debug-path", required_argument, NULL, BINARY_OPT_DEBUG_PATH },          \
	{ "symfs", required_argument, NULL, BINARY_OPT_SYMFS },                    \
	{ "path-map", required_argument, NULL, BINARY_OPT_PATH_MAP },              \
	{ "embedded-only", no_argument, NULL, BINARY_OPT_EMBEDDED_ONLY }

extern const char binary_help[];

/* Option C with ARG into Q (ARG may be cut in place): 0, the exit status of
 * a bad value (a line said why), or -1 when C is none of them. */
int binary_option(int c, char *arg, struct decode_request *q);
/* Warns, unless Q is quiet, of the places to look it names that are not
 * there (a typo would otherwise go unnoticed); once the options are read. */
void binary_warn(const struct decode_request *q);
/* Q's places to look into the decoder's options O. */
void binary_decode_opts(const struct decode_request *q, struct mt_decode_opts *o);

#endif
