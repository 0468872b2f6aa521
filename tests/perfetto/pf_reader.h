/* SPDX-License-Identifier: MIT */
/*
 * Test-side reader for the writer's Perfetto protobuf output. It parses the
 * file back with its own wire decoder (independent of the writer's encoder)
 * and replays the import rules of Perfetto's trace_processor that matter
 * for mtrace, recording every violation as an error string:
 *
 *  - framing: first byte 0x0A, only Trace.packet at top level, no truncation;
 *  - a sequence's first packet clears incremental state; interned data,
 *    defaults and events before that are errors;
 *  - every iid (event name, source location, annotation name) is defined on
 *    its sequence since the last clear;
 *  - timestamps resolve through the sequence's clock snapshot and the
 *    incremental clock 64 and are non-decreasing per sequence;
 *  - events are put in time order, equal times in file order, as the
 *    importer sorts them (the events array is in that order), and then
 *    every event's track has a descriptor; every END closes an open BEGIN
 *    on its track and carries no name; nesting never exceeds 512.
 * BEGINs still open at the end are counted, not errors: tests decide.
 */
#ifndef MTRACE_PF_READER_H
#define MTRACE_PF_READER_H

#include <stddef.h>
#include <stdint.h>

#define PFR_MAX_ANNOTS 12

struct pfr_annot {
	const char *name;
	enum { PFR_BOOL, PFR_UINT, PFR_INT, PFR_STRING, PFR_POINTER } kind;
	uint64_t u;		/* bool, uint, int (two's complement), pointer */
	const char *s;
};

struct pfr_event {
	uint32_t seq;
	uint64_t ts;		/* resolved, absolute */
	uint64_t track;
	int type;		/* 1 begin, 2 end, 3 instant */
	const char *name;	/* NULL when the event has none */
	const char *category;	/* the first of its categories, NULL if none */
	const char *src_file, *src_function;
	uint32_t src_line;
	int depth;		/* open slices on the track before this event */
	int nannots;
	struct pfr_annot annots[PFR_MAX_ANNOTS];
	size_t packet_bytes;	/* size of its packet, framing included */
	size_t file_index;	/* its place in the file among the events */
	int named;		/* it has a name (BEGIN, INSTANT) */
};

struct pfr_track {
	uint64_t uuid, parent;
	enum { PFR_TRACK_PLAIN, PFR_TRACK_PROCESS, PFR_TRACK_THREAD } kind;
	int32_t pid;
	int64_t tid;
	const char *name;	/* track name, process_name or thread_name */
	int ncmdline;
	const char *cmdline[8];
	int described;		/* a TrackDescriptor was seen */
	int open;		/* slices open at the end of the file */
	int max_depth;
};

struct pfr_trace {
	struct pfr_event *events;
	size_t nevents;
	struct pfr_track *tracks;
	size_t ntracks;
	size_t packets;
	size_t bytes;		/* decompressed size */
	int nseqs;		/* distinct sequence ids */
	int cleared;		/* packets with SEQ_INCREMENTAL_STATE_CLEARED */
	size_t interned_names;	/* event_names entries */
	char **errors;
	size_t nerrors;
	void *priv;		/* strings and the file data */
};

/* Reads @path (plain or gzip) into @t; -1 only when the file cannot be
 * read at all. Rule violations go to t->errors. */
int pfr_read(const char *path, struct pfr_trace *t);
void pfr_free(struct pfr_trace *t);

const struct pfr_track *pfr_track(const struct pfr_trace *t, uint64_t uuid);
/* The thread track of @tid, NULL if none. */
const struct pfr_track *pfr_thread_track(const struct pfr_trace *t, int64_t tid);
/* Annotation @name of @e, NULL if absent. */
const struct pfr_annot *pfr_annot(const struct pfr_event *e, const char *name);

#endif
