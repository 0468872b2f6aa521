// SPDX-License-Identifier: MIT
/* Collecting the calls for the SVG flame graph or chart; see svg.h. */
#include "svg/svg_internal.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mt_svg *mt_svg_new(enum mt_svg_kind kind)
{
	struct mt_svg *g = calloc(1, sizeof(*g));

	if (g)
		g->kind = kind;
	return g;
}

void mt_svg_free(struct mt_svg *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nthreads; i++)
		free(g->threads[i].stack);
	mt_names_free(&g->names);
	free(g->nodes);
	free(g->calls);
	free(g->threads);
	mt_index_map_free(&g->thread_ids);
	free(g);
}

/* The graph's child NAME of node PARENT, made when new. */
static uint32_t child(struct mt_svg *g, uint32_t parent, uint32_t name)
{
	uint32_t c;

	for (c = g->nodes[parent].child; c; c = g->nodes[c].next)
		if (g->nodes[c].name == name)
			return c;
	if (MT_ARRAY_GROW_TO(g->nodes, g->capnodes, g->nnodes + 1))
		return 0;
	c = (uint32_t)g->nnodes++;
	g->nodes[c] = (struct mt_svg_node){ .name = name, .parent = parent,
					     .next = g->nodes[parent].child };
	g->nodes[parent].child = c;
	return c;
}

/* The thread's state, with its own graph root under the top one. */
static struct mt_svg_thread *thread_of(struct mt_svg *g, uint32_t pid, uint32_t tid)
{
	struct mt_svg_thread *t;
	char label[48];
	uint32_t name;
	int added;

	if (!g->nnodes && MT_ARRAY_GROW_TO(g->nodes, g->capnodes, 1))
		return NULL;
	g->nnodes = g->nnodes ? g->nnodes : 1;	/* node 0: all threads */
	t = mt_index_map_slot(&g->thread_ids, mt_index_map_task(pid, tid), &g->threads,
			      &g->nthreads, &g->capthreads, sizeof(*t), &added);
	if (!t || !added)
		return t;
	/* Threads are named like functions so that the graph's nodes need
	 * nothing else; "thread N" cannot be a symbol. */
	snprintf(label, sizeof(label), "thread %u", tid);
	name = mt_names_add(&g->names, label);
	if (name == UINT32_MAX)
		return NULL;
	*t = (struct mt_svg_thread){ .pid = pid, .tid = tid, .lane = (uint32_t)(g->nthreads - 1) };
	t->root = child(g, 0, name);
	return t->root ? t : NULL;
}

static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_svg *g = ctx;
	struct mt_svg_thread *t = thread_of(g, pid, tid);
	struct mt_svg_open *f;

	if (!t)
		goto oom;
	if (!g->have_time)
		g->first = ns;
	g->have_time = 1;
	g->last = ns;
	if (ev->kind == MT_EV_BEGIN) {
		uint32_t name = mt_names_of(&g->names, ev->arg);
		uint32_t parent = t->depth ? t->stack[t->depth - 1].node : t->root;

		if (name == UINT32_MAX ||
		    MT_ARRAY_GROW_TO(t->stack, t->cap, t->depth + 1))
			goto oom;
		t->stack[t->depth] = (struct mt_svg_open){ ns, name, 0 };
		if (g->kind == MT_SVG_GRAPH && !(t->stack[t->depth].node = child(g, parent, name)))
			goto oom;
		t->depth++;
		return 0;
	}
	if (ev->kind != MT_EV_END && ev->kind != MT_EV_GAP)
		return 0;
	/* A gap ends every open frame, as an END ends one. */
	do {
		if (!t->depth)
			break;
		f = &t->stack[--t->depth];
		if (g->kind == MT_SVG_GRAPH) {
			g->nodes[f->node].value += ns - f->begin;
			continue;
		}
		if (MT_ARRAY_GROW_TO(g->calls, g->capcalls, g->ncalls + 1))
			goto oom;
		g->calls[g->ncalls++] = (struct mt_svg_call){ f->begin, ns, f->name, t->lane,
							      (uint32_t)t->depth };
		if (t->depth + 1 > t->max_depth)
			t->max_depth = (uint32_t)t->depth + 1;
	} while (ev->kind == MT_EV_GAP);
	return 0;
oom:
	g->oom = 1;
	return -ENOMEM;
}

struct mt_decode_sink mt_svg_sink(struct mt_svg *g, const char *(*name)(void *ctx, uint32_t id),
				  void *ctx)
{
	g->names.name = name;
	g->names.ctx = ctx;
	return (struct mt_decode_sink){ NULL, on_event, NULL, g, 0 };
}
