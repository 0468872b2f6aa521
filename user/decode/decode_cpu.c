// SPDX-License-Identifier: MIT
/*
 * Decoding CPU streams into per-CPU logs of control flow, split into
 * per-thread segments with the context-switch sideband. Each stream has a
 * thread of its own, with its own copy of every process image (libipt
 * images are not thread-safe) over a section cache of its own (see
 * mt_proc_image()); at most `jobs` of them decode at once. Each hands its
 * closed segments to the replay (decode_thread.c) in batches, with how far
 * its stream has got. When the replay follows the decoding, a thread whose
 * log holds more than the replay has freed waits, so that the streams
 * advance together and memory stays bounded by that look-ahead.
 */
#include "decode/decode_internal.h"
#include "util/mt_array.h"
#include "decode/blkpipe.h"
#include "decode/blksplit.h"
#include "util/cputime.h"
#include "decode/inlines.h"
#include "decode/progress.h"
#include "decode/ptsource.h"

#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Segments or log bytes between two hand-overs. */
#define HANDOVER_SEGS 64
#define HANDOVER_BYTES ((size_t)256 << 10)
/* PT bytes a stream reads and decodes at a time, by default. */
#define DEFAULT_PT_WINDOW ((size_t)1 << 20)
/* A split stream's pieces, by default: what a piece decoded ahead holds
 * until its turn (some 30 bytes a block) stays some 5 MB. Pieces of 256
 * KiB held twice that for some 4 % of the split's speed, 64 KiB cost a
 * tenth of it (docs/benchmarks.md). */
#define DEFAULT_PT_PIECE ((size_t)128 << 10)
/* The shortest piece: each piece's decoder first scans from its nominal
 * start to its first PSB, so pieces shorter than a PSB period add scans. */
#define MIN_PT_PIECE ((size_t)1 << 10)
/* Helpers of a split stream at most: the replay's thread (some 28 % of a
 * one-job decode's instructions) bounds the speed-up near 3.5x, which
 * four reach; each more holds a piece's spool (some 5 MB) besides. */
#define MAX_SPLIT_HELPERS 4u

struct worker {
	struct mt_decode *d;
	struct mt_progress *progress;	/* NULL: nobody asked */
	uint64_t reported;		/* bytes of this CPU's stream counted */
	struct pt_image **images;	/* this worker's copy per process */
	struct pt_image_section_cache *iscache;	/* their sections */
	struct mt_cpu_log *log;		/* the CPU being decoded */
	struct mt_sb_view sb;		/* its context switches */
	int have_seg;
	/* The open segment's last op, still open to the transfer ending its
	 * block (see h_transfer()); written to the log by the next op. */
	struct mt_op last;
	int have_last;
	/* The open segment's bounds: every time in it is clamped to them. */
	uint64_t lo, hi;
	int attributed;		/* its thread was chosen at its start */
	uint64_t log_tsc;	/* time of the log's last op, if it has one */
	int have_op;
	size_t seg_ops;		/* ops in the open segment */
	uint64_t key_floor;	/* first_tsc of the last closed segment */
	size_t handed_len;	/* log length at the last hand-over */
	/* The latest probe hit (see h_disable()) in a closed segment. */
	uint64_t probe_tsc;
	uint32_t probe_tid;
	/* The function of the last block logged, for dropping blocks that
	 * cannot change the call stack (see h_block()). */
	const struct mt_proc *proc;
	uint64_t fn_lo, fn_hi;
	struct mt_funcs_cache *cache;
	struct mt_inl_ranges inl;	/* for fn_lo/fn_hi in inlined code */
	/* Its stream is decoded on two threads (decode_stages()), or split
	 * into pieces decoded by this many threads besides (split_helpers). */
	int two_stages;
	unsigned int split_helpers;
};

/* Writes the pending last op to the log. */
static void flush_last(struct worker *w)
{
	if (w->have_last)
		mt_oplog_put(&w->log->ops, &w->last);
	w->have_last = 0;
}

/*
 * Ends the open segment; its ops ran from its first timestamp to LAST_TSC.
 * Without cycle-accurate timing, decoded times are lower bounds (they
 * advance with timing packets): the switch that brought the thread in may
 * look later than the segment's start, but never later than its end,
 * while the switch that takes it out comes after the end. So the thread is
 * the one the sideband has on this CPU at LAST_TSC. With CYC that premise
 * fails (see h_enable()), and the thread was chosen at the start.
 */
static void close_seg(struct worker *w, uint64_t last_tsc)
{
	struct mt_seg *s;

	if (!w->have_seg)
		return;
	flush_last(w);
	s = &w->log->segs[w->log->nsegs - 1];
	s->end = w->log->ops.len;
	/* With CYC an enable's estimate can be later than the stretch's end:
	 * the start is before both (it orders the thread's stretches). */
	if (s->last_tsc < s->first_tsc)
		s->first_tsc = s->last_tsc;
	/* A CPU's segments are in order: the replay relies on it. */
	if (s->first_tsc < w->key_floor)
		s->first_tsc = w->key_floor;
	w->key_floor = s->first_tsc;
	s->lo = w->lo;
	if (!w->attributed)
		s->task = mt_sideband_traced_task(&w->sb, last_tsc);
	w->have_seg = 0;
}

/* Starts a segment at TSC, its times bounded by [LO, HI]. */
static void open_seg(struct worker *w, uint64_t tsc, uint64_t lo, uint64_t hi)
{
	struct mt_cpu_log *log = w->log;
	size_t pos;

	if (MT_ARRAY_RESERVE(log->segs, log->segcap, log->nsegs, 1)) {
		log->oom = 1;
		return;
	}
	pos = mt_oplog_restart(&log->ops);
	log->segs[log->nsegs] = (struct mt_seg){ { 0, 0 }, tsc, tsc, lo, (uint32_t)(log - w->d->cpus),
						 log->nsegs_total++, pos, pos };
	log->nsegs++;
	w->have_seg = 1;
	w->seg_ops = 0;
	w->attributed = 0;
	w->lo = lo;
	w->hi = hi;
}

/* TSC within the open segment's bounds; a time outside is counted. */
static uint64_t bounded(struct worker *w, uint64_t tsc)
{
	if (tsc >= w->lo && tsc <= w->hi)
		return tsc;
	w->log->clamped++;
	return tsc < w->lo ? w->lo : w->hi;
}

/* An op's time: bounded, and never before the segment's previous op (the
 * rebuild would clamp it so: one thread), so that a stream's times only
 * grow and its hand-overs can say how far it has got. */
static uint64_t op_time(struct worker *w, uint64_t tsc)
{
	tsc = bounded(w, tsc);
	return w->seg_ops && tsc < w->log_tsc ? w->log_tsc : tsc;
}

static uint64_t last_tsc(const struct worker *w, uint64_t dflt)
{
	return w->have_op ? w->log_tsc : dflt;
}

/* Waits for one of the jobs (lock held). */
static void take_job(struct mt_pipe *p)
{
	while (!p->free_jobs)
		pthread_cond_wait(&p->room, &p->lock);
	p->free_jobs--;
}

static void give_job(struct mt_pipe *p)
{
	p->free_jobs++;
	pthread_cond_broadcast(&p->room);
}

/*
 * The open segment, when its thread is already certain (chosen at its
 * start, or no switch on the CPU until its end bound), is cut here into
 * two of the same thread, so that the replay can have the part decoded
 * so far: the rebuild goes on across segments of a thread as if they
 * were one.
 */
static void cut_open_segment(struct worker *w)
{
	struct mt_seg *s = &w->log->segs[w->log->nsegs - 1];
	uint64_t lo = w->lo, hi = w->hi;
	struct mt_task task;

	if (!w->have_seg || !w->seg_ops ||
	    (!w->attributed && !mt_sideband_no_switch(&w->sb, w->log_tsc, hi)))
		return;
	task = w->attributed ? s->task : mt_sideband_traced_task(&w->sb, w->log_tsc);
	s->task = task;
	w->attributed = 1;
	close_seg(w, w->log_tsc);
	open_seg(w, w->log_tsc, lo, hi);
	if (!w->have_seg)
		return;
	w->log->segs[w->log->nsegs - 1].task = task;
	w->attributed = 1;
}

/*
 * Hands the closed segments over to the replay, with how far the stream
 * has got: every later segment is later in time order than the key
 * floor, and no later op is earlier than the last one (op_time()) or the
 * open segment's bound. Then, when the replay follows, waits while the
 * log holds too much it has not freed, giving the job to another stream
 * meanwhile. FINAL: the stream is done.
 */
static void handover(struct worker *w, int final)
{
	struct mt_cpu_log *log = w->log;
	struct mt_pipe *p = &w->d->pipe;
	size_t closed;

	if (!final && log->nsegs - (size_t)w->have_seg < HANDOVER_SEGS &&
	    log->ops.len - w->handed_len < HANDOVER_BYTES)
		return;
	if (w->d->streaming && !final)
		cut_open_segment(w);
	closed = log->nsegs - (size_t)w->have_seg;
	pthread_mutex_lock(&p->lock);
	if (MT_ARRAY_RESERVE(log->ready, log->ready_cap, log->nready, closed)) {
		log->oom = 1;
	} else if (closed) {
		memcpy(log->ready + log->nready, log->segs, closed * sizeof(*log->segs));
		log->nready += closed;
		memmove(log->segs, log->segs + closed, (log->nsegs - closed) * sizeof(*log->segs));
		log->nsegs -= closed;
	}
	log->op_floor = last_tsc(w, 0);
	if (w->have_seg && w->lo > log->op_floor)
		log->op_floor = w->lo;
	log->watermark = log->op_floor > w->key_floor ? log->op_floor : w->key_floor;
	log->probe_tsc = w->probe_tsc;
	log->probe_tid = w->probe_tid;
	log->finished = final;
	p->unfinished -= (unsigned int)final;
	w->handed_len = log->handed_len = log->ops.len;
	p->handovers++;
	pthread_cond_broadcast(&p->progress);
	if (w->d->streaming && !final && log->ops.len - log->released > p->log_limit) {
		/* Waiting is news for the replay: it tells when all wait. */
		give_job(p);
		p->blocked++;
		log->waiting = 1;
		p->handovers++;
		pthread_cond_broadcast(&p->progress);
		while (log->ops.len - log->released > p->log_limit && !p->stuck &&
		       !atomic_load(&p->stop))
			pthread_cond_wait(&p->room, &p->lock);
		log->waiting = 0;
		p->blocked--;
		take_job(p);
	}
	pthread_mutex_unlock(&p->lock);
}

/* The worker's image of process I (d->procs[I]; d->nprocs: the kernel's,
 * for tasks without maps), built at the first call. */
static struct pt_image *image_at(struct worker *w, size_t i)
{
	const struct mt_decode *d = w->d;
	const struct mt_proc *p = i < d->nprocs ? &d->procs[i] : NULL;

	if (p ? !p->image : !d->kernel_image)
		return NULL;
	if (!w->images[i]) {
		struct pt_image *img = pt_image_alloc(NULL);

		if (img && ((p && mt_proc_image(p, img, w->iscache)) ||
			    mt_kimage_add_to(&d->kernel, w->iscache, img))) {
			pt_image_free(img);
			img = NULL;
		}
		w->images[i] = img;
	}
	return w->images[i];
}

static struct pt_image *image_for(struct worker *w, uint32_t pid)
{
	const struct mt_proc *p = mt_decode_proc(w->d, pid);

	/* A task without maps (a kernel thread) runs kernel code only. */
	return image_at(w, p ? (size_t)(p - w->d->procs) : w->d->nprocs);
}

/*
 * Trace (re)starts. TSC packets give exact bounds (blkdec.h): no time from
 * here on is before the last one, the enable is before the next one, and
 * the stretch ends before the next one sent with packets off (the CPU's
 * next enable). It also ends before the CPU's next switch to another
 * process (mt_sideband_trace_off()): tracing resumes after that only with
 * a later TSC packet. And it starts after the CPU's previous stretch
 * ended: the stream's order is the true one. Times outside these bounds
 * are clamped (and counted), whatever libipt estimated.
 *
 * Without CYC, libipt's times are lower bounds and the thread is chosen at
 * the segment's end (close_seg()). With CYC they are estimates: libipt's
 * cycles-per-TSC ratio can span a switch-out (cycles stop with TraceEn,
 * the crystal does not), so a short stretch after a switch-in can end, by
 * its estimate, after the thread's switch-out. Its start is the estimate
 * nearest its exact anchor, so the thread is the one the sideband has at
 * the (bounded) start.
 */
static struct pt_image *h_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	struct worker *w = ctx;
	uint64_t floor = bounds->floor, ceil = bounds->ceil, end = bounds->end,
		 off = mt_sideband_trace_off(&w->sb, floor),
		 lo = last_tsc(w, 0) > floor ? last_tsc(w, 0) : floor;
	struct mt_task task;
	const struct mt_proc *proc;

	(void)ip;
	close_seg(w, last_tsc(w, tsc));
	handover(w, 0);
	if (end < off)
		off = end;
	open_seg(w, tsc, lo, off > lo ? off - 1 : lo);
	if (!w->have_seg)
		return NULL;
	tsc = bounded(w, tsc);
	if (tsc >= ceil && ceil > lo) {
		tsc = ceil - 1;
		w->log->clamped++;
	}
	w->log->segs[w->log->nsegs - 1].first_tsc = w->log->segs[w->log->nsegs - 1].last_tsc = tsc;
	task = mt_sideband_traced_task(&w->sb, tsc);
	proc = mt_decode_proc(w->d, task.pid);
	if (w->d->cyc) {
		w->log->segs[w->log->nsegs - 1].task = task;
		w->attributed = 1;
	}
	/* The process rarely changes where the thread is uncertain: the
	 * image follows the sideband at the enable. The cache holds one
	 * process's lookups (emptying it at every enable cost 3 % of the
	 * decode). */
	if (proc != w->proc)
		memset(w->cache, 0, sizeof(*w->cache));
	w->proc = proc;
	w->fn_lo = w->fn_hi = 0;
	return image_for(w, task.pid);
}

static void add(struct worker *w, uint64_t tsc, enum mt_op_kind kind, uint64_t a, uint8_t x)
{
	if (atomic_load_explicit(&w->d->pipe.stop, memory_order_relaxed))
		return;
	if (!w->have_seg)
		open_seg(w, tsc, 0, UINT64_MAX);
	if (!w->have_seg)
		return;
	tsc = op_time(w, tsc);
	flush_last(w);
	w->last = (struct mt_op){ tsc, a, 0, (uint8_t)kind, x };
	w->have_last = 1;
	w->have_op = 1;
	w->seg_ops++;
	w->log_tsc = tsc;
}

/* Counts this CPU's stream up to @offset (progress.h tells the sum). */
static void h_progress(void *ctx, uint64_t offset)
{
	struct worker *w = ctx;

	if (offset <= w->reported)
		return;
	mt_progress_add(w->progress, offset - w->reported);
	w->reported = offset;
}

/*
 * The handlers below run for every block libipt returns. Their rare paths
 * are out of line (noinline), so that the common ones, a block inside the
 * previous block's function and a transfer stored in its block's op, save
 * no registers.
 */

/* Logs a block that may change the call stack; notes its function. */
static __attribute__((noinline)) void log_block(struct worker *w, uint64_t tsc, uint64_t ip)
{
	struct mt_cpu_log *log = w->log;
	struct mt_cs_fn fn;

	add(w, tsc, MT_OP_BLOCK, ip, 0);
	if (w->have_seg)
		log->segs[log->nsegs - 1].last_tsc = w->log_tsc;
	if (log->ops.len - w->handed_len >= HANDOVER_BYTES)
		handover(w, 0);
	w->fn_lo = w->fn_hi = 0;
	if (w->proc) {
		mt_funcs_resolve_cached(&w->d->funcs, w->cache, w->proc, ip, &fn);
		w->fn_lo = fn.start;
		w->fn_hi = fn.end;
		/* In a function with inlined code, only the part with IP's
		 * inline chain: the blocks where it changes are logged, and
		 * the replay sees inline frames that call nothing. Where the
		 * chain holds is not known while another thread holds the
		 * binary's DWARF: rather than wait for it, the next block is
		 * logged too (a block logged in the chain of the one before
		 * changes nothing in the replay). */
		if (!mt_inl_known_none(&w->inl, fn.id) &&
		    mt_inl_span(&w->inl, &w->d->funcs, w->proc, &fn, ip, &w->fn_lo, &w->fn_hi)) {
			w->fn_lo = w->fn_hi = 0;
			log->dwarf_deferred++;
		}
	}
}

/* A transfer that needs an op of its own. */
static __attribute__((noinline)) void log_transfer(struct worker *w, enum mt_xfer x, uint64_t ret)
{
	add(w, last_tsc(w, 0), MT_OP_XFER, ret, (uint8_t)x);
}

/* The transfer ending a block is stored in the block's op (a third less
 * memory than an op of its own); only a transfer reported after an event,
 * or a return address too far from the block's start, needs its own op. */
static void h_transfer(void *ctx, enum mt_xfer x, uint64_t ret)
{
	struct worker *w = ctx;
	struct mt_op *op = &w->last;

	if (w->have_last && op->kind == MT_OP_BLOCK &&
	    (!ret || (ret > op->a && ret - op->a <= UINT32_MAX))) {
		op->x = (uint8_t)x;
		op->ret = ret ? (uint32_t)(ret - op->a) : 0;
		return;
	}
	log_transfer(w, x, ret);
}

/* Whether ADDR is in the part of a function that the last logged block's
 * inline chain holds throughout (log_block()). */
static int in_span(const struct worker *w, uint64_t addr)
{
	return addr >= w->fn_lo && addr < w->fn_hi;
}

/*
 * A block reached by a branch or jump inside the function of the previous
 * logged block changes nothing in the call stack, so it is not logged (the
 * transfer ending it then lands on the previous block's op, which is
 * equivalent). That halves the log on typical code. In a function with
 * inlined code the test is against the part with the previous block's
 * inline chain (log_block()), for the block's start and for the call
 * ending it, whose chain the replay follows too: then a block logged
 * besides (while the ranges are not known) changes nothing in the replay.
 */
static void h_block(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	struct worker *w = ctx;
	const struct mt_op *last = &w->last;

	if (w->have_last && last->kind == MT_OP_BLOCK &&
	    (last->x == MT_XFER_NONE || last->x == MT_XFER_JUMP) && in_span(w, ip) &&
	    (x != MT_XFER_CALL || !ret || in_span(w, ret - 1)))
		w->log->segs[w->log->nsegs - 1].last_tsc = op_time(w, tsc);
	else
		log_block(w, tsc, ip);
	if (x != MT_BLK_NO_XFER)
		h_transfer(w, (enum mt_xfer)x, ret);
}

static void h_disable(void *ctx, uint64_t tsc, uint64_t at)
{
	struct worker *w = ctx;
	const struct mt_bundle_trigger *t = &w->d->trigger;

	int probe;

	add(w, tsc, MT_OP_DISABLE, at, 0);
	/* The stretch's own (bounded) time: add() kept it in log_tsc. */
	probe = w->d->have_trigger && at && at == t->d.ip && w->log_tsc <= t->d.tsc && w->have_seg;
	close_seg(w, w->log_tsc);
	if (probe) {
		w->probe_tsc = w->log_tsc;
		w->probe_tid = w->log->segs[w->log->nsegs - 1].task.tid;
	}
	handover(w, 0);
}

static void h_gap(void *ctx, uint64_t tsc, uint32_t reason)
{
	add(ctx, tsc, MT_OP_GAP, reason, 0);
}

static uint64_t pt_window(const struct mt_decode *d)
{
	return d->opts.pt_window ? d->opts.pt_window : DEFAULT_PT_WINDOW;
}

/* The stream's libipt side: blkdec.c into handler H. */
struct stream_decoding {
	struct worker *w;
	const struct mt_blk_handler *h;
	struct mt_pt_reader pr, scan;	/* the decoding's reading, the scan's */
	struct mt_blk_pipe *pipe;	/* H's, when on a thread of its own */
	/* Its own, not the log's: written for every block, beside fields
	 * the other thread writes as often, they would share cache lines. */
	struct mt_blk_stats stats;
	int rc;
	uint64_t cpu_ns;		/* of that thread */
};

static int decode_stream(struct stream_decoding *sd)
{
	const struct mt_decode *d = sd->w->d;

	return mt_blk_decode_stream(&d->cfg, &sd->pr.src, &sd->scan.src, !d->cyc, pt_window(d),
				    NULL, sd->w->iscache, sd->h, &sd->stats);
}

/* Why a stream failed when its memory ran out. */
static void no_memory(const struct mt_cpu_log *log, char *why, size_t len)
{
	snprintf(why, len, "out of memory decoding the PT of CPU %u", log->cpu);
}

static void *stream_decoding_main(void *arg)
{
	struct stream_decoding *sd = arg;

	sd->rc = decode_stream(sd);
	mt_blk_pipe_close(sd->pipe);
	sd->cpu_ns = mt_thread_cpu_ns();
	return NULL;
}

/* The images h_enable() may give: one per process with code, and the
 * kernel's. */
static unsigned int images(const struct mt_decode *d)
{
	unsigned int n = d->kernel_image != NULL;

	for (size_t i = 0; i < d->nprocs; i++)
		n += d->procs[i].image != NULL;
	return n;
}

/* The worker's copy of the one image h_enable() may give; NULL when it
 * may give several. */
static struct pt_image *only_image(struct worker *w)
{
	const struct mt_decode *d = w->d;
	size_t only = d->nprocs;

	if (images(d) != 1)
		return NULL;
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].image)
			only = i;
	return image_at(w, only);
}

static uint64_t pt_piece(const struct mt_decode *d)
{
	if (!d->opts.pt_piece)
		return DEFAULT_PT_PIECE;
	return d->opts.pt_piece < MIN_PT_PIECE ? MIN_PT_PIECE : d->opts.pt_piece;
}

/* A helper's reading of a split stream (blksplit.h): readers of its own. */
struct piece_reading {
	struct mt_pt_reader pr, scan;
};

static int reading_open(void *ctx, struct mt_blk_reading *r)
{
	const struct worker *w = ctx;
	struct piece_reading *pr = calloc(1, sizeof(*pr));
	size_t i = (size_t)(w->log - w->d->cpus);

	if (!pr)
		return -ENOMEM;
	mt_pt_reader_init(&pr->pr, w->d->r, i, w->log->len);
	mt_pt_reader_init(&pr->scan, w->d->r, i, w->log->len);
	*r = (struct mt_blk_reading){ &pr->pr.src, &pr->scan.src, pr };
	return 0;
}

static void reading_close(void *ctx, struct mt_blk_reading *r)
{
	struct piece_reading *pr = r->handle;

	(void)ctx;
	mt_pt_reader_fini(&pr->pr);
	mt_pt_reader_fini(&pr->scan);
	free(pr);
}

/* Decodes the stream into H split into pieces (w->split_helpers); *CPU_NS
 * gets the busiest helper's CPU time. */
static int decode_split(struct stream_decoding *sd, const struct mt_blk_handler *h,
			uint64_t *cpu_ns)
{
	struct worker *w = sd->w;
	const struct mt_decode *d = w->d;
	const struct mt_blk_split s = {
		.cfg = &d->cfg,
		.cyc_off = !d->cyc,
		.window = pt_window(d),
		.piece = pt_piece(d),
		.helpers = w->split_helpers,
		.iscache = w->iscache,
		.image = only_image(w),
		.own = { &sd->pr.src, &sd->scan.src, NULL },
		.open = reading_open,
		.close = reading_close,
		.ctx = w,
	};
	struct mt_blk_split_stats ss;
	int rc = mt_blk_decode_split(&s, h, &sd->stats, &ss);

	w->log->two_stages = w->log->split = 1;
	w->log->pieces_ahead = ss.ahead;
	w->log->pieces_redone = ss.redone;
	*cpu_ns = ss.helper_cpu_ns;
	return rc;
}

/* Whether the stream at LOG, chosen for two stages, is split into pieces
 * instead: with two jobs or more, one image (pieces decoded ahead get no
 * enable's answer), and two pieces at least. */
static bool splits(const struct mt_decode *d, unsigned int jobs, const struct mt_cpu_log *log)
{
	return jobs > 1 && images(d) == 1 && log->len >= 2 * pt_piece(d);
}

/*
 * Decodes the stream into H, on a second thread when the worker has one
 * (w->two_stages): libipt's side there, the log here (blkpipe.h). Returns
 * libipt's result; *CPU_NS gets the second thread's CPU time.
 */
static int decode_stages(struct stream_decoding *sd, const struct mt_blk_handler *h,
			 uint64_t *cpu_ns)
{
	pthread_t t;

	*cpu_ns = 0;
	if (sd->w->split_helpers)
		return decode_split(sd, h, cpu_ns);
	sd->h = h;
	sd->pipe = sd->w->two_stages ? mt_blk_pipe_new(h, images(sd->w->d)) : NULL;
	if (sd->pipe) {
		sd->h = mt_blk_pipe_front(sd->pipe);
		if (!pthread_create(&t, NULL, stream_decoding_main, sd)) {
			mt_blk_pipe_run(sd->pipe);
			pthread_join(t, NULL);
			mt_blk_pipe_free(sd->pipe);
			*cpu_ns = sd->cpu_ns;
			sd->w->log->two_stages = 1;
			return sd->rc;
		}
		mt_blk_pipe_free(sd->pipe);
		sd->h = h;
	}
	return decode_stream(sd);
}

static void decode_one(struct worker *w)
{
	struct mt_blk_handler h = { .enable = h_enable, .block = h_block, .transfer = h_transfer,
				    .disable = h_disable, .gap = h_gap, .stop = &w->d->pipe.stop,
				    .ctx = w };
	struct mt_cpu_log *log = w->log;
	struct stream_decoding sd = { .w = w };
	struct mt_pt_reader *pr = &sd.pr, *scan = &sd.scan;
	uint64_t other_ns, own_ns;
	int rc;

	h.progress = w->progress ? h_progress : NULL;
	mt_sb_view_open(&w->sb, &w->d->sb, log->cpu);
	mt_pt_reader_init(pr, w->d->r, (size_t)(log - w->d->cpus), log->len);
	mt_pt_reader_init(scan, w->d->r, (size_t)(log - w->d->cpus), log->len);
	rc = decode_stages(&sd, &h, &other_ns);
	log->stats = sd.stats;
	if (rc < 0) {
		const struct mt_pt_reader *bad = pr->err ? pr : scan->err ? scan : NULL;

		log->failed = bad ? bad->err : -ENOMEM;
		if (bad)
			snprintf(log->errmsg, sizeof(log->errmsg), "%s", bad->errmsg);
		else
			no_memory(log, log->errmsg, sizeof(log->errmsg));
	}
	log->pt_held = pr->cap;
	log->scan_held = log->stats.scan_held + scan->cap;
	mt_pt_reader_fini(pr);
	mt_pt_reader_fini(scan);
	close_seg(w, last_tsc(w, 0));
	if (w->sb.err && !log->failed) {
		log->failed = w->sb.err;
		snprintf(log->errmsg, sizeof(log->errmsg), "context switches of CPU %u: %s",
			 log->cpu, strerror(-w->sb.err));
	}
	log->sb_rewinds = w->sb.rewinds;
	mt_sb_view_close(&w->sb);
	if (w->progress)
		h_progress(w, log->len);
	own_ns = mt_thread_cpu_ns();
	log->cpu_ns = own_ns > other_ns ? own_ns : other_ns;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mt_pipe *p = &w->d->pipe;

	pthread_mutex_lock(&p->lock);
	take_job(p);
	pthread_mutex_unlock(&p->lock);
	decode_one(w);
	handover(w, 1);
	pthread_mutex_lock(&p->lock);
	give_job(p);
	pthread_mutex_unlock(&p->lock);
	for (size_t k = 0; k <= w->d->nprocs; k++)
		pt_image_free(w->images[k]);
	/* Its sections' mappings and block caches go with it, not with the
	 * last stream decoded. */
	pt_iscache_free(w->iscache);
	w->iscache = NULL;
	mt_inl_ranges_fini(&w->inl);
	return NULL;
}

/* A stream not asked for: never decoded. */
static void skip_stream(struct mt_cpu_log *log, struct mt_progress *prog)
{
	log->finished = 1;
	if (prog)
		mt_progress_add(prog, log->len);
}

struct workers {
	struct worker *w;
	struct mt_progress prog;
};

struct stream_size {
	size_t len, i;
};

static int larger_first(const void *a, const void *b)
{
	const struct stream_size *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* How a stream's decoding is shared among threads. */
enum stages {
	ONE_THREAD,
	TWO_STAGES,
	BUSY,		/* two stages, or in pieces where it can be (splits()) */
};

/*
 * The streams decoded in two stages (decode_stages()), with two jobs or
 * more: the largest, as long as there are more jobs than threads, and any
 * stream that would still be decoding alone when the others are done: a
 * snapshot often has one busy CPU. Two stages take it from its whole time
 * to its libipt side's, some 80 % of it on the benchmark's walk, so a
 * stream holding more than 1.25 times a job's share of the PT gains; such
 * a busy stream is split into pieces where it can be. Sets STAGES[i];
 * false when out of memory.
 */
static bool choose_stages(const struct mt_decode *d, unsigned int jobs, uint8_t *stages)
{
	struct stream_size *v = calloc(d->ncpus ? d->ncpus : 1, sizeof(*v));
	size_t n = 0, total = 0;

	if (!v)
		return false;
	for (size_t i = 0; i < d->ncpus; i++)
		if (mt_decode_selected(d->opts.cpus, d->opts.ncpus, d->cpus[i].cpu)) {
			v[n++] = (struct stream_size){ d->cpus[i].len, i };
			total += d->cpus[i].len;
		}
	qsort(v, n, sizeof(*v), larger_first);
	for (size_t k = 0; jobs > 1 && k < n; k++)
		if (4 * (uint64_t)v[k].len * jobs > 5 * (uint64_t)total)
			stages[v[k].i] = BUSY;
		else if (n + k < jobs)
			stages[v[k].i] = TWO_STAGES;
	free(v);
	return true;
}

int mt_decode_cpus_start(struct mt_decode *d, unsigned int jobs)
{
	struct mt_pipe *p = &d->pipe;
	struct workers *ws = calloc(1, sizeof(*ws));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	/* A split stream's helpers: a job each, as many as the cores. */
	unsigned int helpers = online > 0 && (unsigned long)online < jobs ? (unsigned int)online : jobs;
	uint64_t total = 0;
	uint8_t *stages;

	if (helpers > MAX_SPLIT_HELPERS)
		helpers = MAX_SPLIT_HELPERS;

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->progress, NULL);
	pthread_cond_init(&p->room, NULL);
	p->initialized = 1;
	if (!ws)
		return -ENOMEM;
	p->free_jobs = jobs;
	for (size_t i = 0; i < d->ncpus; i++)
		total += d->cpus[i].len;
	mt_progress_init(&ws->prog, total, d->opts.progress, d->opts.progress_ctx);
	ws->w = calloc(d->ncpus ? d->ncpus : 1, sizeof(*ws->w));
	p->threads = calloc(d->ncpus ? d->ncpus : 1, sizeof(*p->threads));
	p->workers = ws;
	stages = calloc(d->ncpus ? d->ncpus : 1, sizeof(*stages));
	if (!ws->w || !p->threads || !stages || !choose_stages(d, jobs, stages)) {
		free(stages);
		return -ENOMEM;
	}
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < d->ncpus; i++) {
		struct worker *w = &ws->w[i];
		struct mt_cpu_log *log = &d->cpus[i];

		log->ops.lock = &p->lock;
		if (!mt_decode_selected(d->opts.cpus, d->opts.ncpus, log->cpu)) {
			skip_stream(log, d->opts.progress ? &ws->prog : NULL);
			continue;
		}
		*w = (struct worker){ .d = d,
				      .log = log,
				      .progress = d->opts.progress ? &ws->prog : NULL,
				      .images = calloc(d->nprocs + 1, sizeof(struct pt_image *)),
				      .cache = calloc(1, sizeof(struct mt_funcs_cache)),
				      .iscache = pt_iscache_alloc(NULL),
				      .inl = { .defer = d->opts.defer_inline_ranges ? MT_INL_DEFER_ALWAYS
										: MT_INL_DEFER },
				      .two_stages = stages[i] != ONE_THREAD };
		if (stages[i] == BUSY && splits(d, jobs, log))
			w->split_helpers = helpers > 1 ? helpers : 2;
		if (!w->images || !w->cache || !w->iscache ||
		    pthread_create(&p->threads[p->nthreads], NULL, worker_main, w)) {
			log->oom = log->finished = 1;
			continue;
		}
		p->nthreads++;
		p->unfinished++;
	}
	pthread_mutex_unlock(&p->lock);
	free(stages);
	return 0;
}

int mt_decode_cpus_join(struct mt_decode *d, int stop, char *why, size_t whylen)
{
	struct mt_pipe *p = &d->pipe;
	struct workers *ws = p->workers;
	int ret = 0;

	if (stop) {
		atomic_store(&p->stop, 1);
		pthread_mutex_lock(&p->lock);
		pthread_cond_broadcast(&p->room);
		pthread_mutex_unlock(&p->lock);
	}
	for (size_t i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	p->nthreads = 0;
	if (!ws)
		return -ENOMEM;
	if (d->opts.progress)
		mt_progress_end(&ws->prog);
	for (size_t i = 0; ws->w && i < d->ncpus; i++) {
		free(ws->w[i].images);
		free(ws->w[i].cache);
		pt_iscache_free(ws->w[i].iscache);	/* a worker that never ran */
	}
	for (size_t i = 0; i < d->ncpus && !ret; i++) {
		const struct mt_cpu_log *c = &d->cpus[i];

		if (c->failed) {
			ret = c->failed;
			snprintf(why, whylen, "%s", c->errmsg);
		} else if (c->oom || c->ops.oom) {
			ret = -ENOMEM;
			no_memory(c, why, whylen);
		}
	}
	mt_progress_fini(&ws->prog);
	free(ws->w);
	free(ws);
	p->workers = NULL;
	return ret;
}
