// SPDX-License-Identifier: MIT
/* One CPU's PT stream through libipt's block decoder; see blkdec.h. */
#include "decode/blkdec.h"
#include "decode/blkscan.h"

#include "decode/cyctime.h"
#include "decode/insn.h"
#include "decode/interp.h"
#include "decode/ptsource.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Blocks decoded without consuming trace before we call it a loop that
 * only more trace could end (the stream stopped inside `jmp .`). */
#define MAX_BLOCKS_WITHOUT_TRACE (1u << 16)
#define INSN_CACHE_SIZE 4096
/* The shortest window: a few packets, and more than a PSB. */
#define MIN_WINDOW 64

struct insn_memo {
	uint64_t ip;
	uint8_t len;
	uint8_t cls;
};

struct mt_blkdec {
	struct pt_block_decoder *dec;	/* on the current window */
	struct pt_image *image;		/* the image decoding uses now */
	const struct mt_pt_source *src;
	struct pt_config cfg;		/* the current window's */
	uint64_t base;			/* stream offset of the window's first byte */
	/* The next window's start: decoding here stops at its PSB+, and
	 * at_stop says it got there (UINT64_MAX: the last window). */
	uint64_t stop;
	bool at_stop;
	bool on;			/* tracing is on (after an enable) */
	struct mt_blkscan sc;		/* its failure is the decoder's */
	struct pt_image_section_cache *iscache;
	const struct mt_blk_handler *h;
	struct mt_interp *q;	/* control flow on its way to h, see interp.h */
	uint64_t nwindows;	/* windows it decoded */
	struct mt_interp own_q;	/* q, unless the caller gave one */
	struct mt_blk_stats *stats;
	struct mt_blk_stats own_stats;
	uint64_t psbs_taken;	/* PSBs counted by mt_blkdec_take_stats() */
	uint64_t window;
	/* The piece being decoded (blkdec.h): it ends at the first window
	 * end at or after piece_end. start: where the next window starts. */
	uint64_t piece_end, start, prev_sync, piece_start;
	uint64_t piece_psb_end;	/* where its first PSB+ ends */
	bool first;		/* no window synced yet */
	bool ended;		/* the stream's end reached */
	bool quit;		/* h->stop was found set */
	/* A piece decoded ahead, without what came before (blkdec.h): the
	 * state assumed at its start, and what its result depended on. */
	bool ahead, assumed_on;
	bool partial;		/* TSC marks before the piece may be missing */
	bool unsure;		/* an enable's bounds needed one of them */
	bool zero_time;		/* a time asked for before any was known */
	/* With CYC: the chain assumed at its start (mt_blkdec_resume_cyc()). */
	bool chain_assumed;
	struct mt_cyc_chain assumed_chain;
	struct mt_insn_dec *insn;
	uint64_t tsc;
	uint64_t reported;	/* the offset of the last look at h->stop and h->progress */
	/* libipt's time at window offset time_off (see now()). */
	uint64_t time_off, time_tsc;
	bool time_known;
	struct pt_packet_decoder *pkt;	/* for looking at packets around errors */
	struct mt_cyctime *cyc;	/* with CYC packets: exact times */
	uint64_t cyc_now;	/* with CYC: the time the last event or tick brought */
	/* A block that ended without a branch, held back until the next one
	 * shows whether it goes on there (see on_block()). */
	struct {
		uint64_t ip, insns, tsc;
		uint64_t next;	/* the address after its last instruction */
		bool on;
	} held;
	struct insn_memo memo[INSN_CACHE_SIZE];
};

const char *mt_gap_reason_name(uint32_t reason)
{
	switch (reason) {
	case MT_GAP_DECODE:
		return "decode error";
	case MT_GAP_NOMAP:
		return "no code image";
	case MT_GAP_OVERFLOW:
		return "trace overflow";
	default:
		return "trace gap";
	}
}

/* The block decoder's offset and sync point, in the stream. */
static int blk_offset(const struct mt_blkdec *b, uint64_t *off)
{
	int rc = pt_blk_get_offset(b->dec, off);

	*off += b->base;
	return rc;
}

static int blk_sync_offset(const struct mt_blkdec *b, uint64_t *off)
{
	int rc = pt_blk_get_sync_offset(b->dec, off);

	*off += b->base;
	return rc;
}

/* The exact time libipt's current time stands for; 0 when not known. */
static uint64_t cyc_time(const struct mt_blkdec *b)
{
	uint64_t off = 0;

	return b->cyc && !blk_offset(b, &off) ? mt_cyctime_at(b->cyc, off, b->sc.psbs, b->sc.npsbs) : 0;
}

/* The stream's time, TSC now: b->tsc only grows, the stream's first time
 * is its first non-zero value, its last time the final one (stored at the
 * end). Before the first non-zero value, a piece decoded ahead would give
 * 0 where the decoding before it gives its own last time: zero_time. */
static uint64_t reached(struct mt_blkdec *b, uint64_t tsc)
{
	if (tsc > b->tsc) {
		if (!b->tsc)
			b->stats->first_tsc = tsc;
		b->tsc = tsc;
	} else if (!b->tsc) {
		b->zero_time = true;
	}
	return b->tsc;
}

/* libipt's time moves only with the packets it reads, so it is asked
 * again only when the decoder's offset (OFF, window-relative; OFF_RC <
 * 0: unknown) has moved (most blocks consume no packet); a new decoder
 * or a resync forgets it. Inline: it runs for every block. */
static inline __attribute__((always_inline)) uint64_t now_at(struct mt_blkdec *b, int off_rc,
							      uint64_t off)
{
	uint64_t tsc = b->cyc ? cyc_time(b) : 0;
	uint32_t lost_mtc, lost_cyc;

	if (tsc)
		return reached(b, tsc);
	if (off_rc < 0) {
		b->time_known = false;
	} else if (b->time_known && off == b->time_off) {
		return reached(b, b->time_tsc);
	} else {
		b->time_off = off;
		b->time_known = true;
	}
	if (pt_blk_time(b->dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		tsc = 0;
	b->time_tsc = tsc;
	return reached(b, tsc);
}

static uint64_t now(struct mt_blkdec *b)
{
	uint64_t off = 0;
	int rc = pt_blk_get_offset(b->dec, &off);

	return now_at(b, rc, off);
}

/* Length and class of the block's last instruction, from the section
 * bytes; memoized per address. Length 0 when the bytes are unavailable. */
static void last_insn(struct mt_blkdec *b, const struct pt_block *blk, uint8_t *len,
		      enum pt_insn_class *cls)
{
	struct insn_memo *m = &b->memo[(blk->end_ip ^ blk->end_ip >> 12) % INSN_CACHE_SIZE];
	uint8_t buf[pt_max_insn_size];
	const uint8_t *bytes = buf;
	int n;

	if (m->ip == blk->end_ip && m->len) {
		*len = m->len;
		*cls = (enum pt_insn_class)m->cls;
		return;
	}
	*len = 0;
	if (blk->truncated) {
		bytes = blk->raw;
		n = blk->size;
	} else if (blk->isid > 0) {
		n = pt_iscache_read(b->iscache, buf, sizeof(buf), blk->isid, blk->end_ip);
	} else {
		return;
	}
	if (n <= 0)
		return;
	if (*cls == ptic_call && bytes[0] == 0xe8) {
		*len = 5;	/* call rel32: no need for the disassembler */
	} else {
		enum pt_insn_class c;
		size_t l = b->insn ? mt_insn_decode(b->insn, bytes, (size_t)n, blk->end_ip, &c) : 0;

		if (!l)
			return;
		*len = (uint8_t)l;
		if (*cls == ptic_error)
			*cls = c;
	}
	*m = (struct insn_memo){ blk->end_ip, *len, (uint8_t)*cls };
}

/* Hands on a block of INSNS instructions from IP, ended by X. */
static void report_block(struct mt_blkdec *b, uint64_t tsc, uint64_t ip, uint64_t insns,
			 enum mt_xfer x, uint64_t ret)
{
	b->stats->blocks++;
	mt_interp_block_ending(b->q, tsc, ip, insns, x, ret);
}

/* Hands on the held block as it is: no block goes on from it. */
static void flush_held(struct mt_blkdec *b)
{
	if (b->held.on)
		report_block(b, b->held.tsc, b->held.ip, b->held.insns, MT_XFER_NONE, 0);
	b->held.on = false;
}

/* The transfer ending a block, by the class of its last instruction
 * (zero, MT_XFER_NONE, for the rest): a table, where a switch's jump
 * table mispredicted on every other block. */
static const uint8_t xfer_of_class[] = {
	[ptic_call] = MT_XFER_CALL,	    [ptic_far_call] = MT_XFER_FAR_CALL,
	[ptic_return] = MT_XFER_RET,	    [ptic_far_return] = MT_XFER_FAR_RET,
	[ptic_jump] = MT_XFER_JUMP,	    [ptic_far_jump] = MT_XFER_JUMP,
};

#define CLASS_BIT(c) (1u << (c))
/* Classes whose last instruction is read: its length (where a call
 * returns, where a block without a branch goes on) or its class. */
#define READ_LAST (CLASS_BIT(ptic_error) | CLASS_BIT(ptic_other) | CLASS_BIT(ptic_call) | \
		   CLASS_BIT(ptic_far_call) | CLASS_BIT(ptic_far_return))
/* Transfers whose next instruction matters: calls return there, far
 * returns land there (the kernel's serialising IRET-to-self, sync_core()). */
#define RET_AFTER (CLASS_BIT(MT_XFER_CALL) | CLASS_BIT(MT_XFER_FAR_CALL) | CLASS_BIT(MT_XFER_FAR_RET))

/*
 * libipt ends a block where control flow needs trace, at calls and jumps
 * (end_on_call, end_on_jump) and at section ends, but its block cache may
 * also end one anywhere in straight-line code: libipt 2.0.5 stops a block
 * where filling the cache reaches an entry already filled. The cache
 * belongs to the section, which all decoders of the section cache share,
 * so where a block ends depends on what any decoder decoded before; and
 * the handler names a block's function by its first address, so a block
 * running on into the next function would show that function, or not. A
 * block ending without a branch is therefore held back and joined with
 * the block that continues it: blocks are the same however the cache was
 * filled, and as libipt makes them without it. BLK started at time TSC;
 * a joined block keeps the later one's, as the single block had.
 */
static void on_block(struct mt_blkdec *b, const struct pt_block *blk, uint64_t tsc)
{
	enum pt_insn_class cls = blk->iclass;
	enum mt_xfer x;
	uint64_t ret = 0, ip = blk->ip, insns = blk->ninsn;
	uint8_t len = 0;

	b->stats->insns += blk->ninsn;
	if (b->held.on) {
		if (ip == b->held.next) {
			ip = b->held.ip;
			insns += b->held.insns;
			b->held.on = false;
		} else {
			flush_held(b);
		}
	}
	if ((unsigned int)cls < 32 && (READ_LAST & CLASS_BIT(cls)))
		last_insn(b, blk, &len, &cls);
	if (cls == ptic_other && len) {
		b->held.ip = ip;
		b->held.insns = insns;
		b->held.tsc = tsc;
		b->held.next = blk->end_ip + len;
		b->held.on = true;
		return;
	}
	x = (unsigned int)cls < sizeof(xfer_of_class) ? (enum mt_xfer)xfer_of_class[cls]
						       : MT_XFER_NONE;
	if (len && (RET_AFTER & CLASS_BIT(x)))
		ret = blk->end_ip + len;
	report_block(b, tsc, ip, insns, x, ret);
}

static void set_image(struct mt_blkdec *b, struct pt_image *img)
{
	if (!img)
		return;
	b->image = img;
	pt_blk_set_image(b->dec, img);
}

/* Trace (re)starts: tells the handler, with the exact bounds. What ran
 * before goes on first (the handler may start another thread's segment). */
static void enable(struct mt_blkdec *b, uint64_t tsc, uint64_t ip)
{
	struct mt_tsc_bounds bounds;
	uint64_t off = 0;

	mt_interp_flush(b->q, tsc);
	blk_offset(b, &off);
	/* A piece decoded ahead lacks the marks before its start. */
	b->unsure |= mt_blkscan_bounds(&b->sc, off, tsc, &bounds) && b->partial;
	b->on = true;
	set_image(b, b->h->enable(b->h->ctx, tsc, ip, &bounds));
}

/* Handles pending events; returns the last status (negative on error). */
static int drain_events(struct mt_blkdec *b, int st)
{
	uint64_t off;

	while (st >= 0 && (st & pts_event_pending)) {
		/* Looked up before the call, which may read the next event
		 * ahead: the decoder stands right after this one's packet. */
		uint64_t exact = b->cyc_now = cyc_time(b), tsc;
		struct pt_event ev;

		flush_held(b);
		st = pt_blk_event(b->dec, &ev, sizeof(ev));
		if (st < 0)
			break;
		/* An event's own time is exact to the timing packets; the
		 * decoder's current time may already be past it (read-ahead).
		 * With exact CYC times the decoder stands right after it. */
		tsc = exact ? reached(b, exact) : ev.has_tsc ? ev.tsc : now(b);
		switch (ev.type) {
		case ptev_enabled:
			enable(b, tsc, ev.variant.enabled.ip);
			break;
		case ptev_disabled:
			b->on = false;
			mt_interp_disable(b->q, tsc, 0);
			break;
		case ptev_async_disabled:
			b->on = false;
			mt_interp_disable(b->q, tsc, ev.variant.async_disabled.at);
			break;
		case ptev_async_branch:
			/* An interrupt with tracing on. Control had reached
			 * the interrupted instruction, which settles the call
			 * or return that led there even if nothing ran there
			 * yet; then it is like a call that will return to it. */
			mt_interp_block(b->q, tsc, ev.variant.async_branch.from, 0);
			mt_interp_transfer(b->q, MT_XFER_FAR_CALL, ev.variant.async_branch.from);
			break;
		case ptev_overflow:
			b->stats->overflows++;
			mt_interp_gap(b->q, tsc, MT_GAP_OVERFLOW);
			break;
		default:
			/* Paging, mode, power, timing and other events do not
			 * change the control flow we report. */
			break;
		}
		/* The next window's PSB+ (the decoder stands at its PSBEND
		 * while reporting it), at its FUP's IP: the next window goes
		 * on from here. Its MODE.Exec is reported there (the window
		 * ends at a PSB+ holding one); a CBR is reported wherever the
		 * decoder is when it reads the PSB+. */
		if (ev.type == ptev_exec_mode && ev.status_update && !blk_offset(b, &off) &&
		    off > b->stop) {
			b->at_stop = true;
			return -pte_eos;
		}
	}
	return st;
}

/* Whether only PSB+ and timing packets lie between PSB and END: then the
 * decoder reached END by reading ahead, and nothing after the PSB was
 * decoded yet. */
static bool only_header_before(struct mt_blkdec *b, uint64_t psb, uint64_t end)
{
	struct pt_packet p;
	uint64_t off;
	bool in_header = true;

	if (pt_pkt_sync_set(b->pkt, psb - b->base) < 0)
		return false;
	while (!pt_pkt_get_offset(b->pkt, &off) && off + b->base < end) {
		if (pt_pkt_next(b->pkt, &p, sizeof(p)) < 0)
			return false;
		switch (p.type) {
		case ppt_psbend:
			in_header = false;
			break;
		case ppt_pad:
		case ppt_tsc:
		case ppt_mtc:
		case ppt_cyc:
		case ppt_tma:
		case ppt_cbr:
		case ppt_psb:
			break;
		default:
			if (!in_header)
				return false;
		}
	}
	return true;
}

/*
 * Where to resync after an error at ERR_OFF: the last PSB before it if the
 * decoder only read ahead into it (otherwise resuming there would decode
 * blocks twice). Returns UINT64_MAX to sync forward as usual.
 */
static uint64_t resync_point(struct mt_blkdec *b, uint64_t sync, uint64_t err_off)
{
	uint64_t psb = UINT64_MAX;

	for (size_t i = 0; i < b->sc.npsbs && b->sc.psbs[i] <= err_off; i++)
		if (b->sc.psbs[i] > sync)
			psb = b->sc.psbs[i];
	return psb != UINT64_MAX && only_header_before(b, psb, err_off) ? psb : UINT64_MAX;
}

/*
 * Decodes from a sync point to the end, the next error or the next
 * window's PSB+; returns the resync point (see resync_point()). CONT: the
 * last window stopped at this PSB+, and decoding goes on as if the two
 * were one: no new enable when tracing was on there.
 */
static uint64_t decode_from_sync(struct mt_blkdec *b, int st, bool cont)
{
	uint64_t last_off = 0, sync = 0, off = 0;
	unsigned int idle = 0;
	int off_rc;

	blk_sync_offset(b, &sync);
	b->time_known = false;
	b->cyc_now = cyc_time(b);
	if (!(st & pts_ip_suppressed) && !(cont && b->on))
		enable(b, now(b), 0);
	for (;;) {
		struct pt_block blk;

		st = drain_events(b, st);
		if (st < 0 || (st & pts_eos))
			break;
		blk.ninsn = 0;
		st = pt_blk_next(b->dec, &blk, sizeof(blk));
		/* One offset for the time and the progress below (a third of
		 * the calls into libipt per block otherwise). */
		off_rc = pt_blk_get_offset(b->dec, &off);
		/* With exact CYC times a block starts at the time the last
		 * event or tick brought (tick events end blocks where the
		 * time changes), else it gets libipt's time after it. */
		if (blk.ninsn)
			on_block(b, &blk,
				 b->cyc_now ? reached(b, b->cyc_now) : now_at(b, off_rc, off));
		if (st < 0)
			break;
		if (off_rc < 0)
			continue;
		off += b->base;
		if (off != last_off) {
			idle = 0;
			last_off = off;
			b->stats->offset = off;
			if (off - b->reported >= MT_BLK_PROGRESS_BYTES) {
				b->reported = off;
				if (b->h->progress)
					b->h->progress(b->h->ctx, off);
				if (b->h->stop &&
				    atomic_load_explicit(b->h->stop, memory_order_relaxed)) {
					b->quit = true;
					break;
				}
			}
		} else if (++idle == MAX_BLOCKS_WITHOUT_TRACE) {
			st = -pte_eos;
			break;
		}
	}
	flush_held(b);
	if (st >= 0 || st == -pte_eos)
		return UINT64_MAX;
	b->stats->errors++;
	blk_offset(b, &off);
	if (!b->stats->first_error) {
		b->stats->first_error = st;
		b->stats->first_error_offset = off;
	}
	mt_interp_gap(b->q, now(b), st == -pte_nomap ? MT_GAP_NOMAP : MT_GAP_DECODE);
	return resync_point(b, sync, off);
}

/* Syncs, decodes and resyncs after errors, up to the next window's start. */
static void decode_window(struct mt_blkdec *b, bool cont, bool *first, uint64_t *prev_sync)
{
	int st = cont ? pt_blk_sync_set(b->dec, 0) : pt_blk_sync_forward(b->dec);
	uint64_t sync, resume;

	while (st >= 0) {
		/* A resync that does not move forward would repeat forever. */
		if (blk_sync_offset(b, &sync) || (!*first && sync <= *prev_sync) || sync >= b->stop)
			break;
		*first = false;
		*prev_sync = sync;
		resume = decode_from_sync(b, st, cont);
		cont = false;
		if (b->quit || b->at_stop || (resume != UINT64_MAX && resume >= b->stop))
			break;
		st = resume != UINT64_MAX ? pt_blk_sync_set(b->dec, resume - b->base)
					  : pt_blk_sync_forward(b->dec);
	}
}

/* Decoders on the window of GOT bytes at P, stream offset BASE. */
static bool open_window(struct mt_blkdec *b, const uint8_t *p, size_t got, uint64_t base)
{
	b->cfg.begin = (uint8_t *)p;
	b->cfg.end = (uint8_t *)p + got;
	b->base = base;
	b->dec = pt_blk_alloc_decoder(&b->cfg);
	b->pkt = pt_pkt_alloc_decoder(&b->cfg);
	if (!b->dec || !b->pkt)
		return false;
	if (b->image)
		pt_blk_set_image(b->dec, b->image);
	if (b->cyc)
		mt_cyctime_window(b->cyc, &b->cfg, base);
	return true;
}

static void close_window(struct mt_blkdec *b)
{
	pt_blk_free_decoder(b->dec);
	pt_pkt_free_decoder(b->pkt);
	b->dec = NULL;
	b->pkt = NULL;
}

/*
 * The current piece (the whole stream when there are no pieces) window by
 * window: each from a PSB to the next window's, and on through that one's
 * PSB+, so that libipt reports its status there at the IP its FUP gives,
 * before anything that ran after it. Decoding stops at that report; the
 * next window's decoder, synced at the same PSB, goes on from that IP.
 * libipt's state at a PSB is all in its PSB+ (last IP, mode, time; RET
 * compression only covers CALLs since the last PSB), and ours (the held
 * block, the time-spreading queue, CYC times) carries over, so the blocks
 * are those one decoder over the whole stream reports.
 */
static int decode_piece(struct mt_blkdec *b)
{
	while (!b->ended && !b->quit && b->start < b->piece_end) {
		uint64_t end, start = b->start;
		const uint8_t *p;
		size_t got;
		bool cont = b->at_stop, last;

		/* What is dropped, a decoding of everything before drops too:
		 * from here on, it holds the same marks (blkdec.h, pieces ahead). */
		if (mt_blkscan_forget(&b->sc, start, b->tsc))
			b->partial = false;
		/* The scan on to the window's end. */
		while (!b->sc.ncuts && mt_blkscan_more(&b->sc))
			;
		if (b->sc.failed)
			return -pte_nomem;
		last = !b->sc.ncuts;
		end = last ? b->src->size : b->sc.cuts[0].end;
		p = b->src->window(b->src->ctx, start, end, &got);
		if (!p)
			return -pte_nomem;
		b->stop = last ? UINT64_MAX : b->sc.cuts[0].psb;
		b->at_stop = false;
		if (b->cyc)
			mt_cyctime_mark(b->cyc, b->stop);
		if (!open_window(b, p, got, start)) {
			close_window(b);
			return -pte_nomem;
		}
		decode_window(b, cont, &b->first, &b->prev_sync);
		close_window(b);
		/* The CYC reading goes on in the next window from its start,
		 * with the chain as it stood there (mt_blkdec_follows()). */
		if (b->cyc && !last)
			mt_cyctime_read_to(b->cyc, b->stop);
		b->stats->windows++;
		b->nwindows++;
		if (b->sc.failed)
			return -pte_nomem;
		b->start = b->stop;
		b->ended = last;
		if (!last)
			mt_blkscan_take_cut(&b->sc);
	}
	return 0;
}

struct mt_blkdec *mt_blkdec_new(const struct pt_config *cfg, uint64_t size, uint64_t window,
				uint64_t piece, struct pt_image_section_cache *iscache,
				struct mt_blk_stats *stats)
{
	struct mt_blkdec *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->cfg = *cfg;
	b->iscache = iscache;
	b->stats = stats ? stats : &b->own_stats;
	memset(b->stats, 0, sizeof(*b->stats));
	b->insn = mt_insn_dec_new();
	/* Windows are not longer than the stream, nor shorter than a few packets. */
	if (window > size)
		window = size;
	if (window < MIN_WINDOW)
		window = MIN_WINDOW;
	b->window = window;
	b->sc.cfg = &b->cfg;
	b->sc.piece = piece;
	b->first = true;
	return b;
}

void mt_blkdec_bind(struct mt_blkdec *b, const struct mt_pt_source *src,
		    const struct mt_pt_source *scan, struct pt_image *image,
		    const struct mt_blk_handler *h, struct mt_interp *q)
{
	b->src = src;
	b->sc.src = scan;
	if (image)
		b->image = image;
	b->h = h;
	if (q) {
		b->q = q;
	} else if (!b->q) {
		mt_interp_init(&b->own_q, h);
		b->q = &b->own_q;
	}
}

int mt_blkdec_start(struct mt_blkdec *b, uint64_t index, bool cyc_off)
{
	const struct mt_pt_source *scan = b->sc.src;

	if (!index) {
		if (cyc_off)
			mt_blkscan_start(&b->sc, scan, b->window);
		else if (mt_blkscan_has_cyc(&b->sc, scan, b->window))
			b->cyc = mt_cyctime_new(&b->cfg);
		b->cfg.flags.variant.block.enable_tick_events = b->cyc != NULL;
		return b->sc.failed ? -pte_nomem : 0;
	}
	/* Ahead: from the piece's first window end on, as if decoding had
	 * stopped there, packets on where its PSB+ says so; with CYC packets
	 * assumed when RTIT_CTL.CYCEn is set, their chain given later. */
	if (!cyc_off)
		b->cyc = mt_cyctime_new(&b->cfg);
	b->cfg.flags.variant.block.enable_tick_events = b->cyc != NULL;
	mt_blkscan_start(&b->sc, scan, b->window);
	b->sc.pos = b->sc.next_cut = index * b->sc.piece;
	while (!b->sc.ncuts && mt_blkscan_more(&b->sc))
		;
	if (b->sc.failed)
		return -pte_nomem;
	b->ahead = b->partial = true;
	b->first = false;
	if (!b->sc.ncuts) {
		b->ended = true;	/* no piece starts here */
		b->start = b->piece_start = UINT64_MAX;
		return 0;
	}
	b->start = b->piece_start = b->sc.cuts[0].psb;
	b->at_stop = true;
	b->on = b->assumed_on = b->sc.cuts[0].on;
	b->piece_psb_end = b->sc.cuts[0].end;
	mt_blkscan_take_cut(&b->sc);
	/* The PSBs before it are the piece before's. */
	b->sc.npsbs_seen = mt_blkscan_psbs_from(&b->sc, b->start);
	return 0;
}

int mt_blkdec_decode_piece(struct mt_blkdec *b, uint64_t index)
{
	b->piece_end = b->sc.piece ? (index + 1) * b->sc.piece : UINT64_MAX;
	return decode_piece(b);
}

struct pt_image *mt_blkdec_image(const struct mt_blkdec *b)
{
	return b->image;
}

bool mt_blkdec_ended(const struct mt_blkdec *b)
{
	return b->ended;
}

uint64_t mt_blkdec_position(const struct mt_blkdec *b)
{
	return b->ended ? UINT64_MAX : b->start;
}

void mt_blkdec_resume_cyc(struct mt_blkdec *b, const struct mt_cyc_chain *c)
{
	if (!b->cyc || b->ended)
		return;
	mt_cyctime_resume(b->cyc, c, b->piece_start, b->piece_psb_end);
	b->assumed_chain = *c;
	b->chain_assumed = true;
}

/*
 * With CYC, whether the times of AHEAD's piece are those BEFORE would
 * give: BEFORE's reading had the assumed chain where the piece starts, and
 * stands where AHEAD's began its first window, at the end of the piece's
 * first PSB+ (a window answers the times asked for before that from there).
 */
static bool cyc_follows(const struct mt_blkdec *before, const struct mt_blkdec *ahead)
{
	struct mt_cyc_chain c;

	if (!before->cyc || !ahead->cyc)
		return !before->cyc && !ahead->cyc;
	return ahead->chain_assumed &&
	       mt_cyctime_marked(before->cyc, ahead->piece_start, &c) &&
	       mt_cyc_chain_equal(&c, &ahead->assumed_chain) &&
	       mt_cyctime_next(before->cyc) == ahead->piece_psb_end;
}

bool mt_blkdec_follows(const struct mt_blkdec *before, const struct mt_blkdec *ahead)
{
	uint64_t first = ahead->stats->first_tsc;

	return ahead->ahead && !before->sc.failed && !ahead->sc.failed && before->at_stop &&
	       !before->sc.marks_back && !ahead->sc.marks_back && !ahead->sc.bad &&
	       !before->ended && before->start == ahead->piece_start &&
	       before->on == ahead->assumed_on && before->image && !ahead->unsure &&
	       !(ahead->zero_time && before->tsc) && !(first && before->tsc > first) &&
	       cyc_follows(before, ahead);
}

void mt_blkdec_adopt(struct mt_blkdec *ahead, const struct mt_blkdec *before)
{
	if (before->tsc > ahead->tsc)
		ahead->tsc = before->tsc;
	ahead->ahead = false;
}

void mt_blkdec_take_stats(struct mt_blkdec *b, struct mt_blk_stats *to)
{
	struct mt_blk_stats *s = b->stats;
	uint64_t psbs = b->sc.npsbs_seen - mt_blkscan_psbs_from(&b->sc, mt_blkdec_position(b));
	uint64_t held = mt_blkscan_held(&b->sc);

	to->blocks += s->blocks;
	to->insns += s->insns;
	to->errors += s->errors;
	to->overflows += s->overflows;
	to->windows += s->windows;
	to->psbs += psbs - b->psbs_taken;
	b->psbs_taken = psbs;
	if (held > to->scan_held)
		to->scan_held = held;
	if (!to->first_tsc)
		to->first_tsc = s->first_tsc;
	to->last_tsc = b->tsc;
	if (s->offset > to->offset)
		to->offset = s->offset;
	if (!to->first_error && s->first_error) {
		to->first_error = s->first_error;
		to->first_error_offset = s->first_error_offset;
	}
	if (s != to)
		memset(s, 0, sizeof(*s));
}

void mt_blkdec_free(struct mt_blkdec *b)
{
	if (!b)
		return;
	if (b->q == &b->own_q)
		mt_interp_fini(&b->own_q);
	mt_insn_dec_free(b->insn);
	mt_blkscan_fini(&b->sc);
	mt_cyctime_free(b->cyc);
	free(b);
}

int mt_blk_decode_stream(const struct pt_config *cfg, const struct mt_pt_source *src,
			 const struct mt_pt_source *scan, bool cyc_off, uint64_t window,
			 struct pt_image *image, struct pt_image_section_cache *iscache,
			 const struct mt_blk_handler *h, struct mt_blk_stats *stats)
{
	struct mt_blkdec *b = mt_blkdec_new(cfg, src->size, window, 0, iscache, stats);
	int rc;

	if (!b)
		return -pte_nomem;
	mt_blkdec_bind(b, src, scan, image, h, NULL);
	rc = mt_blkdec_start(b, 0, cyc_off);
	if (!rc)
		rc = mt_blkdec_decode_piece(b, 0);
	/* Nothing bounds the last interval: its code keeps the last time. */
	mt_interp_flush(b->q, 0);
	stats->last_tsc = b->tsc;
	stats->psbs = b->sc.npsbs_seen;
	stats->scan_held = mt_blkscan_held(&b->sc);
	mt_blkdec_free(b);
	return rc;
}

int mt_blk_decode(const struct pt_config *cfg, struct pt_image *image,
		  struct pt_image_section_cache *iscache, const struct mt_blk_handler *h,
		  struct mt_blk_stats *stats)
{
	struct mt_pt_buffer buf;
	size_t len = (size_t)(cfg->end - cfg->begin);

	mt_pt_buffer_init(&buf, cfg->begin, len);
	return mt_blk_decode_stream(cfg, &buf.src, &buf.src, false, len, image, iscache, h, stats);
}
