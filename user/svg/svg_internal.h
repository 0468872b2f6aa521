/* SPDX-License-Identifier: MIT */
/* State shared by the SVG's collector (svg.c) and writer (svg_write.c). */
#ifndef MTRACE_SVG_INTERNAL_H
#define MTRACE_SVG_INTERNAL_H

#include "svg/svg.h"
#include "util/mt_index_map.h"
#include "util/util.h"

/* A flame graph node: one stack prefix. Node 0 holds every thread; its
 * children are the threads, theirs the outermost frames. */
struct mt_svg_node {
	uint32_t name;		/* index in mt_svg.names */
	uint32_t parent, child, next;	/* first child, next sibling; 0: none */
	uint64_t value;		/* inclusive time of its calls, ns */
	uint64_t x;		/* its start on the graph's axis, at layout */
};

/* A flame chart rectangle: one call. */
struct mt_svg_call {
	uint64_t begin, end;
	uint32_t name, lane, depth;
};

struct mt_svg_open {
	uint64_t begin;
	uint32_t name;
	uint32_t node;		/* graph */
};

struct mt_svg_thread {
	uint32_t pid, tid, lane;
	uint32_t root;		/* its graph node */
	uint32_t max_depth;	/* chart: frames deep */
	struct mt_svg_open *stack;
	size_t depth, cap;
};

struct mt_svg {
	enum mt_svg_kind kind;
	struct mt_names names;	/* of functions, and of the threads' rows */
	struct mt_svg_node *nodes;
	size_t nnodes, capnodes;
	struct mt_svg_call *calls;
	size_t ncalls, capcalls;
	struct mt_svg_thread *threads;
	size_t nthreads, capthreads;
	struct mt_index_map thread_ids;	/* (pid, tid) -> index in threads */
	uint64_t first, last;
	int have_time;
	int oom;
};

#endif
