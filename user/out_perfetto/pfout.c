// SPDX-License-Identifier: MIT
/* Decoded timelines into the Perfetto writer; see pfout.h. */
#include "out_perfetto/pfout.h"

#include "decode/blkdec.h"
#include "decode/kernel_image.h"
#include "util/errmsg.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PF_MAX_INFERRED == MT_CS_MAX_INFERRED,
	       "the writer must take every inferred frame the decoder emits");

static const char *comm_of(struct mt_bundle_reader *r, uint32_t pid, uint32_t tid)
{
	const struct mt_bundle_thread *t;
	size_t n = mt_bundle_threads(r, &t);
	const char *name = NULL;

	/* The latest record wins: names change at exec. */
	for (size_t i = 0; i < n; i++)
		if (t[i].pid == pid && t[i].tid == tid && t[i].comm && t[i].comm[0])
			name = t[i].comm;
	return name;
}

static int declare_process(struct mt_pfout *o, uint32_t pid)
{
	const char *name = comm_of(o->r, pid, pid);
	char buf[32];
	int rc;

	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return 0;
	if (MT_ARRAY_RESERVE(o->pids, o->pids_cap, o->npids, 1))
		return mt_errmsg(o->err, sizeof(o->err), ENOMEM, "out of memory declaring process %u",
				 pid);
	o->pids[o->npids++] = pid;
	if (!name) {
		snprintf(buf, sizeof(buf), "pid %u", pid);
		name = buf;
	}
	rc = pf_writer_add_process(o->w, (int32_t)pid, name, NULL, 0);
	return rc < 0 ? rc : 0;
}

/* The CPU windows, with a track each; once, at the sink's first call. */
static int load_windows(struct mt_pfout *o)
{
	const struct pf_frame f = { .symbol = "[trace data]" };
	char name[32];
	uint32_t cpu;
	uint64_t a, b;

	if (o->windows_loaded)
		return 0;
	o->windows_loaded = 1;
	o->window_frame = pf_writer_intern(o->w, &f);
	if (o->window_frame < 0)
		return o->window_frame;
	for (size_t i = 0; i < mt_decode_get_stats(o->d)->cpus; i++) {
		struct mt_pfout_window *v;

		if (mt_decode_cpu_window(o->d, i, &cpu, &a, &b))
			continue;
		if (MT_ARRAY_RESERVE(o->windows, o->windows_cap, o->nwindows, 1))
			return mt_errmsg(o->err, sizeof(o->err), ENOMEM, "out of memory for the CPU windows");
		v = &o->windows[o->nwindows];
		snprintf(name, sizeof(name), "CPU %u trace", cpu);
		*v = (struct mt_pfout_window){ a, b, pf_writer_add_track(o->w, name), 0 };
		if (v->track < 0)
			return v->track;
		o->nwindows++;
	}
	return 0;
}

/* Writes the window edges before NS (begins at NS too), in time order;
 * ends later than CAP at CAP. */
static int windows_upto(struct mt_pfout *o, uint64_t ns, uint64_t cap)
{
	int rc = load_windows(o);

	while (!rc) {
		struct mt_pfout_window *next = NULL;
		uint64_t at = 0;

		for (size_t i = 0; i < o->nwindows; i++) {
			struct mt_pfout_window *w = &o->windows[i];
			uint64_t t = w->state ? w->last : w->first;

			if (w->state < 2 && (w->state ? t < ns : t <= ns) && (!next || t < at)) {
				next = w;
				at = t;
			}
		}
		if (!next)
			break;
		at = at < cap ? at : cap;
		rc = next->state++ ? pf_end(o->w, next->track, at)
				   : pf_begin(o->w, next->track, at, o->window_frame, 0);
	}
	return rc;
}

static int on_thread(void *ctx, uint32_t pid, uint32_t tid)
{
	struct mt_pfout *o = ctx;
	const char *name = comm_of(o->r, pid, tid);
	int h, rc = declare_process(o, pid);

	if (rc)
		return rc;
	int added, *slot;

	h = pf_writer_add_thread(o->w, (int32_t)pid, tid, name ? name : "");
	if (h < 0)
		return h;
	slot = mt_index_map_slot(&o->thread_ids, mt_index_map_task(pid, tid), &o->threads,
				 &o->nthreads, &o->threads_cap, sizeof(*slot), &added);
	if (!slot)
		return mt_errmsg(o->err, sizeof(o->err), ENOMEM, "out of memory declaring thread %u", tid);
	*slot = h;
	o->last_handle = -1;	/* a thread declared again has a new handle */
	return 0;
}

static int thread_handle(struct mt_pfout *o, uint32_t pid, uint32_t tid)
{
	uint64_t task = mt_index_map_task(pid, tid);
	int64_t i;

	if (o->last_handle >= 0 && task == o->last_task)
		return o->last_handle;
	i = mt_index_map_get(&o->thread_ids, task);
	if (i < 0)
		return -1;
	o->last_task = task;
	o->last_handle = o->threads[i];
	return o->last_handle;
}

/* The writer's frame for function ID, interned on first use (out of line:
 * frame_id() runs for every BEGIN and nearly always finds it). */
static __attribute__((noinline)) int32_t intern_frame(struct mt_pfout *o, uint32_t id)
{
	struct mt_func f;
	struct mt_src_loc loc = { NULL, 0 };
	struct pf_frame pf = { 0 };
	int32_t fid;

	if (id >= o->nframes) {
		size_t cap = o->nframes;

		if (MT_ARRAY_RESERVE(o->frames, cap, o->nframes, id + 1 - o->nframes))
			return mt_errmsg(o->err, sizeof(o->err), ENOMEM,
					 "out of memory naming function %u", id);
		for (size_t i = o->nframes; i < cap; i++)
			o->frames[i] = -1;
		o->nframes = cap;
	}
	f = mt_decode_func(o->d, id);
	pf.symbol = f.name || id < MT_FN_FIRST_USER ? mt_func_label(&f, id) : NULL;
	pf.binary = f.binary;
	pf.addr = f.addr;
	if (!mt_decode_func_source(o->d, id, &loc)) {
		pf.file = loc.file;
		pf.line = (uint32_t)loc.line;
	}
	pf.flags = mt_kimage_is_kernel_ip(f.addr) ? PF_FRAME_KERNEL : 0;
	if (id == MT_FN_SYSCALL || id == MT_FN_UNTRACED)
		pf.flags |= PF_FRAME_UNTRACED;
	if (f.inlined)
		pf.flags |= PF_FRAME_INLINE;
	fid = pf_writer_intern(o->w, &pf);
	if (fid >= 0)
		o->frames[id] = fid;
	return fid;
}

static bool frame_known(const struct mt_pfout *o, uint32_t id)
{
	return id < o->nframes && o->frames[id] >= 0;
}

static int32_t frame_id(struct mt_pfout *o, uint32_t id)
{
	return frame_known(o, id) ? o->frames[id] : intern_frame(o, id);
}

/* Any event. The writer's failures are returned as they are:
 * pf_writer_error() has their message (every caller's fallback, pfout.h). */
static __attribute__((noinline)) int any_event(struct mt_pfout *o, uint32_t pid, uint32_t tid,
					       uint64_t ns, const struct mt_ev *ev)
{
	int t = thread_handle(o, pid, tid), rc;
	int32_t fid;

	if (t < 0)
		return mt_errmsg(o->err, sizeof(o->err), EINVAL,
				 "event of thread %u/%u before the thread", pid, tid);
	/* Perfetto's nesting limit leaves room for so many inferred frames
	 * (pf_writer.h): the frames of the rest are left out. */
	if (ev->flags & MT_EV_EXCESS)
		return 0;
	if (!o->late && (rc = windows_upto(o, ns, UINT64_MAX)))
		return rc;
	if (ns > o->last_ns)
		o->last_ns = ns;
	switch (ev->kind) {
	case MT_EV_BEGIN:
		fid = frame_id(o, ev->arg);
		if (fid < 0)
			return fid;
		return pf_begin(o->w, t, ns, fid, ev->flags & MT_EV_INFERRED ? PF_BEGIN_INFERRED : 0);
	case MT_EV_END:
		/* Truncated frames are left to the writer, which ends them at
		 * the gap or at the snapshot's end and marks them truncated. */
		return ev->flags & MT_EV_TRUNCATED ? 0 : pf_end(o->w, t, ns);
	case MT_EV_GAP:
		return pf_gap(o->w, t, ns, mt_gap_reason_name(ev->arg));
	case MT_EV_INSTANT:
		return pf_instant(o->w, t, ns, "marker");
	}
	return 0;
}

/*
 * Nearly every event is an END or the BEGIN of a function already named,
 * of the last event's thread, for a writer that orders each track itself:
 * those go straight to the writer, in a tail call; the rest, and the
 * first of a thread or a function, to any_event(). Out of its way, this
 * saves few registers.
 */
static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_pfout *o = ctx;

	if (o->late && o->last_handle >= 0 && mt_index_map_task(pid, tid) == o->last_task &&
	    !(ev->flags & (MT_EV_EXCESS | MT_EV_TRUNCATED | MT_EV_INFERRED))) {
		if (ns > o->last_ns)
			o->last_ns = ns;
		if (ev->kind == MT_EV_END)
			return pf_end(o->w, o->last_handle, ns);
		if (ev->kind == MT_EV_BEGIN && frame_known(o, ev->arg))
			return pf_begin(o->w, o->last_handle, ns, o->frames[ev->arg], 0);
	}
	return any_event(o, pid, tid, ns, ev);
}

/* The trigger at its place among the events (the probe hit). */
static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t)
{
	struct mt_pfout *o = ctx;
	struct pf_trigger pt = { 0 };
	int rc = o->late ? 0 : windows_upto(o, ns, UINT64_MAX);

	if (rc)
		return rc;
	pt.ts_ns = ns;
	pt.pid = (int32_t)t->d.pid;
	pt.tid = t->d.tid;
	pt.ip = t->d.ip;
	pt.reason = t->spec && t->spec[0] ? t->spec : mt_bundle_reason_name(t->d.reason);
	if (!pt.reason)
		pt.reason = "trigger";
	pt.freeze_path = mt_bundle_freeze_name(t->d.freeze_path); /* NULL: the writer's "unknown" */
	pt.symbol = t->d.ip ? mt_decode_symbol_at(o->d, t->d.pid, t->d.ip) : NULL;
	pt.skid_ns = t->d.skid_ns ? (int64_t)t->d.skid_ns : -1;
	return pf_writer_set_trigger(o->w, &pt);
}

int mt_pfout_init(struct mt_pfout *o, struct mt_decode *d, struct mt_bundle_reader *r,
		  struct pf_writer *w, struct mt_decode_sink *sink)
{
	struct mt_bundle_trigger t;
	uint64_t ns;

	memset(o, 0, sizeof(*o));
	o->d = d;
	o->r = r;
	o->w = w;
	o->last_handle = -1;
	o->late = pf_writer_late_inferred(w);
	*sink = (struct mt_decode_sink){ on_thread, on_event, on_trigger, o, o->late };
	if (mt_decode_trigger(d, &ns, &t))
		return 0;
	o->trigger_ns = ns;
	/* Its track belongs to the process, declared before any event. */
	return declare_process(o, t.d.pid);
}

uint64_t mt_pfout_end_ns(const struct mt_pfout *o)
{
	return o->trigger_ns > o->last_ns ? o->trigger_ns : o->last_ns;
}

int mt_pfout_finish(struct mt_pfout *o, uint64_t end_ns)
{
	return windows_upto(o, UINT64_MAX, end_ns < o->last_ns ? o->last_ns : end_ns);
}

void mt_pfout_fini(struct mt_pfout *o)
{
	free(o->windows);
	free(o->frames);
	free(o->threads);
	mt_index_map_free(&o->thread_ids);
	free(o->pids);
}
