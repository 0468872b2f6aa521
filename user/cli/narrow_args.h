/* SPDX-License-Identifier: MIT */
/*
 * decode's narrowing options (narrow/narrow.h), shared by the commands that
 * decode: their getopt entries, their help, their parsing into a
 * decode_request, and a run of the decoder through them.
 */
#ifndef MTRACE_CLI_NARROW_ARGS_H
#define MTRACE_CLI_NARROW_ARGS_H

#include "decode_bundle.h"

#include <getopt.h>

/* getopt_long entries; their short codes are taken from the caller's. */
#define NARROW_OPTIONS                                                   \
	{ "around-trigger", required_argument, NULL, 'A' },              \
	{ "time", required_argument, NULL, 'T' },                        \
	{ "tid", required_argument, NULL, 'I' },                         \
	{ "cpu", required_argument, NULL, 'C' },                         \
	{ "function", required_argument, NULL, 'F' },                    \
	{ "min-duration", required_argument, NULL, 'M' },                \
	{ "max-depth", required_argument, NULL, 'D' }

extern const char narrow_help[];

/* Option C with ARG into Q: 0, the exit status of a bad value (a line
 * said why), or -1 when C is none of them. */
int narrow_option(int c, const char *arg, struct decode_request *q);
/* The decoder's share of Q's narrowing (CPUs and threads) into O. */
void narrow_decode_opts(const struct decode_request *q, struct mt_decode_opts *o);
/* Runs D (decoding the bundle NAME) into SINK through Q's narrowing; *END
 * (if given) becomes where open frames end, the output's own choice capped
 * by the window. A failure of the decoder's own is told here, a sink's is
 * the caller's to tell. */
int narrow_run(struct mt_decode *d, const char *name, const struct decode_request *q,
	       const struct mt_decode_sink *sink, uint64_t *end);

#endif
