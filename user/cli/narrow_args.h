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
/* Whether every CPU Q names has a trace in bundle R, and (once decoder D
 * is open) every thread it names is one D can show and a window around
 * the trigger has a trigger; else a line, starting with the input's NAME,
 * says what is not there and what there is, and the exit status (bad
 * usage) is returned. Checked before anything is decoded: a mistyped
 * number must not make an empty output in place of the user's file. */
int narrow_check_cpus(const struct decode_request *q, struct mt_bundle_reader *r,
		      const char *name);
int narrow_check_open(const struct decode_request *q, const struct mt_decode *d,
		      const char *name);
/* What narrow_run() returns when the narrowing left no call: nothing
 * is worth writing (and no older output should give way to it). */
#define NARROW_NOTHING_LEFT 0x6e6f

/* Runs D (decoding the bundle NAME) into SINK through Q's narrowing; *END
 * (if given) becomes where open frames end, the output's own choice capped
 * by the window. A failure of the decoder's own, and a narrowing that left
 * nothing, are told here (narrow_told()); a sink's is the caller's to tell. */
int narrow_run(struct mt_decode *d, const char *name, const struct decode_request *q,
	       const struct mt_decode_sink *sink, uint64_t *end);
/* Whether narrow_run()'s failure RC on D was told already. */
int narrow_told(const struct mt_decode *d, int rc);

#endif
