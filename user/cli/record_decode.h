/* SPDX-License-Identifier: MIT */
/* The top-level form: record, then decode each snapshot straight to Perfetto. */
#ifndef MTRACE_CLI_RECORD_DECODE_H
#define MTRACE_CLI_RECORD_DECODE_H

#include "capture/capture.h"

#include <stdbool.h>

/*
 * Captures as `record` does, o->output naming the Perfetto trace (numbered
 * like the bundles with several snapshots), and decodes every snapshot
 * taken. The bundles are kept as KEEP_BUNDLE (numbered the same way) when
 * it is not NULL, else they are temporary. ALLOW_MISSING: as decode's
 * --allow-missing. Returns the exit status.
 */
int record_decode(const struct mt_capture_opts *o, const char *keep_bundle, bool allow_missing);

#endif
