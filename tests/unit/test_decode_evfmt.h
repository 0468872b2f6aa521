/* SPDX-License-Identifier: MIT */
/*
 * Call-stack events as compact text for exact comparisons in tests:
 * "TS:+F" begin (F = 'A' + id - MT_FN_FIRST_USER; "*" inferred, "~"
 * asynchronous entry, "^" tail call), "TS:-F" end ("!" truncated),
 * "TS:GAPn", "TS:In" (instant), "[sys]"/"[off]" for the synthetic frames.
 */
#ifndef TEST_DECODE_EVFMT_H
#define TEST_DECODE_EVFMT_H

#include "../lib/mt_test.h"

#include "decode/callstack.h"

static char evfmt_out[8192];
static int evfmt_begins, evfmt_ends;

static inline void evfmt_reset(void)
{
	evfmt_out[0] = 0;
	evfmt_begins = evfmt_ends = 0;
}

static inline void evfmt_emit(void *ctx, const struct mt_ev *ev)
{
	size_t n = strlen(evfmt_out);
	char name[16];

	(void)ctx;
	evfmt_begins += ev->kind == MT_EV_BEGIN;
	evfmt_ends += ev->kind == MT_EV_END;
	if (ev->arg == MT_FN_SYSCALL)
		snprintf(name, sizeof(name), "[sys]");
	else if (ev->arg == MT_FN_UNTRACED)
		snprintf(name, sizeof(name), "[off]");
	else if (ev->arg == MT_FN_UNKNOWN)
		snprintf(name, sizeof(name), "?");
	else
		snprintf(name, sizeof(name), "%c", (char)('A' + ev->arg - MT_FN_FIRST_USER));
	switch (ev->kind) {
	case MT_EV_BEGIN:
		snprintf(evfmt_out + n, sizeof(evfmt_out) - n, "%" PRIu64 ":+%s%s%s%s ", ev->ts,
			 name, ev->flags & MT_EV_INFERRED ? "*" : "",
			 ev->flags & MT_EV_ASYNC ? "~" : "", ev->flags & MT_EV_TAIL ? "^" : "");
		break;
	case MT_EV_END:
		snprintf(evfmt_out + n, sizeof(evfmt_out) - n, "%" PRIu64 ":-%s%s ", ev->ts, name,
			 ev->flags & MT_EV_TRUNCATED ? "!" : "");
		break;
	case MT_EV_GAP:
		snprintf(evfmt_out + n, sizeof(evfmt_out) - n, "%" PRIu64 ":GAP%u ", ev->ts, ev->arg);
		break;
	case MT_EV_INSTANT:
		snprintf(evfmt_out + n, sizeof(evfmt_out) - n, "%" PRIu64 ":I%u ", ev->ts, ev->arg);
		break;
	}
}

/* The events so far, without the trailing space. */
static inline const char *evfmt_text(void)
{
	size_t n = strlen(evfmt_out);

	if (n && evfmt_out[n - 1] == ' ')
		evfmt_out[n - 1] = 0;
	return evfmt_out;
}

#endif
