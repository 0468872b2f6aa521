/* SPDX-License-Identifier: MIT */
/* Helpers shared by the Perfetto writer tests: scratch files, trace checks. */
#ifndef MTRACE_PF_TESTUTIL_H
#define MTRACE_PF_TESTUTIL_H

#include "pf_reader.h"

/* A path for @name in a scratch directory removed at exit. */
const char *pft_path(const char *name);
/* Reads @path with pfr_read; fails the test if it cannot be read or any
 * import rule is broken (all errors are printed). */
void pft_read_clean(const char *path, struct pfr_trace *t);
/* The @n-th event (0-based) on the thread track of @tid; fails if absent. */
const struct pfr_event *pft_thread_event(const struct pfr_trace *t, int64_t tid, size_t n);
/* Annotation @name of @e; fails the test if absent. */
const struct pfr_annot *pft_annot(const struct pfr_event *e, const char *name);
/* Number of events on the thread track of @tid. */
size_t pft_thread_events(const struct pfr_trace *t, int64_t tid);

#endif
