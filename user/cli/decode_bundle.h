/* SPDX-License-Identifier: MIT */
/*
 * One open bundle decoded into a Perfetto trace, Chrome JSON, text or SVG: the
 * work of `mtrace-user decode`, shared with the top-level form that decodes
 * its snapshots straight after recording them.
 */
#ifndef MTRACE_CLI_DECODE_BUNDLE_H
#define MTRACE_CLI_DECODE_BUNDLE_H

#include "bundle/bundle.h"
#include "narrow/narrow.h"
#include "decode/binfile.h"

#include <stddef.h>

#define DECODE_DEFAULT_PERFETTO "trace.pftrace"
#define DECODE_DEFAULT_JSON "trace.json"
#define DECODE_DEFAULT_SVG "trace.svg"

#define DECODE_MAX_LIST 256	/* --cpu, --tid entries */

enum decode_format { DECODE_PERFETTO, DECODE_JSON, DECODE_TEXT, DECODE_SVG, DECODE_FORMAT_NR };

struct decode_request {
	const char *output;		/* NULL: the format's default (text: stdout) */
	enum decode_format format;
	const char *debug_path;		/* NULL: the default search path */
	unsigned int jobs;		/* 0: one per online CPU */
	int quiet;			/* no warnings, no statistics */
	int embedded_only, keep_open;
	int svg_chart;			/* --svg=chart: a flame chart, not a graph */
	/* Narrowing (narrow/narrow.h); CPUs and threads are skipped while decoding. */
	struct mt_narrow_opts narrow;
	char *function_demangled;	/* a mangled --function demangled; narrow.function then */
	const char *window_opt;		/* the option that set narrow's window */
	uint32_t cpus[DECODE_MAX_LIST], tids[DECODE_MAX_LIST];
	size_t ncpus, ntids;
	int allow_missing;		/* exit 0 even when traced code had no binary */
	const char *symfs;		/* root directory for the recorded paths */
	int perf_data;			/* the input is a perf.data, not a bundle */
	struct mt_path_map *path_maps;	/* --path-map OLD=NEW, in order */
	size_t npath_maps, path_maps_cap;
};

/* "perfetto", "json", "text", "svg" (decode_bundle.c's table); -1 for another name. */
int decode_format_parse(const char *name, enum decode_format *f);

/* The output file the request writes; NULL: standard output. */
const char *decode_output_name(const struct decode_request *q);

/* Frees what parsing the options allocated (the --path-map list, a
 * demangled --function). */
void decode_request_free(struct decode_request *q);

/*
 * Decodes R (called NAME in messages) as Q asks; returns the exit status
 * (cli_msg.h). The output is written atomically (files/outfile.h): on any
 * failure or Ctrl-C an older file of that name stays as it was.
 */
int decode_bundle(struct mt_bundle_reader *r, const char *name, const struct decode_request *q);

#endif
