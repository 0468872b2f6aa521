// SPDX-License-Identifier: MIT
/* One CPU's PT stream through libipt's block decoder; see blkdec.h. */
#include "decode/blkdec.h"
#include "util/mt_array.h"

#include "decode/cyctime.h"
#include "decode/insn.h"
#include "decode/interp.h"
#include "decode/ptsource.h"
#include "decode/ptquick.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Blocks decoded without consuming trace before we call it a loop that
 * only more trace could end (the stream stopped inside `jmp .`). */
#define MAX_BLOCKS_WITHOUT_TRACE (1u << 16)
#define INSN_CACHE_SIZE 4096
/* The shortest window: a few packets, and more than a PSB. */
#define MIN_WINDOW 64
/* The scan reads the stream in pieces of at most this (what it finds does
 * not depend on their size, see scan_piece()). */
#define SCAN_PIECE (64u << 10)
/* Packet sizes (SDM "Packet Definitions"). */
#define PSB_SIZE 16
#define PSBEND_SIZE 2

struct insn_memo {
	uint64_t ip;
	uint8_t len;
	uint8_t cls;
};

/* A TSC packet: its offset in the stream and its value, which has 56 bits
 * (the packet carries TSC[55:0]); 16 bytes, as there is one per enable. */
struct tsc_mark {
	uint64_t offset;
	uint64_t tsc : 56;
	uint64_t ends_trace : 1;	/* sent with packet generation off */
};

/* Where one window of the stream ends and the next begins: a PSB, and the
 * end of its PSB+ (which the window before it holds too, see decode_piece()). */
struct cut {
	uint64_t psb, end;
	bool on;		/* its PSB+ holds a FUP: packets are on */
};

/* The scan's state, kept across the pieces it reads (see scan_more()). */
struct scan {
	const struct mt_pt_source *src;	/* its own reading of the stream */
	uint64_t pos;		/* where the next piece starts */
	uint64_t read;		/* bytes read at a time */
	uint64_t window;
	uint64_t next_cut;	/* no window ends before this */
	uint64_t piece;		/* pieces' size (blkdec.h; 0: no pieces) */
	uint64_t last_mark;	/* the last TSC packet's value */
	bool marks_back;	/* a TSC packet's value was below the one before */
	/* A bad packet was read: what comes after it may be read as other
	 * packets when the scan's pieces fall elsewhere (blkdec.h). */
	bool bad;
	uint64_t psb;		/* the PSB+ being read */
	uint64_t npsbs;		/* PSBs found so far */
	size_t pcap, tcap, ccap;
	size_t psb_tsc;		/* the first TSC mark of the PSB+ being read */
	bool sync;		/* the next piece starts with a search for a PSB */
	bool done;		/* at the stream's end (or it could not be read) */
	bool probe;		/* only looking for a CYC packet, keeping nothing */
	bool on, in_psb, psb_on, psb_mode, cyc, oom;
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
	bool failed;			/* the scan could not read its source, or ran out of memory */
	struct scan sc;
	/* What the scan found and the decoder may still ask for, in stream
	 * order (see forget_behind()): window ends not reached yet, PSBs and
	 * TSC packets. */
	struct cut *cuts;
	size_t ncuts;
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
	bool first;		/* no window synced yet */
	bool ended;		/* the stream's end reached */
	/* A piece decoded ahead, without what came before (blkdec.h): the
	 * state assumed at its start, and what its result depended on. */
	bool ahead, assumed_on;
	bool partial;		/* TSC marks before the piece may be missing */
	bool unsure;		/* an enable's bounds needed one of them */
	bool zero_time;		/* a time asked for before any was known */
	struct mt_insn_dec *insn;
	uint64_t tsc;
	uint64_t reported;	/* the offset last told to h->progress */
	/* libipt's time at window offset time_off (see now()). */
	uint64_t time_off, time_tsc;
	bool time_known;
	struct pt_packet_decoder *pkt;	/* for looking at packets around errors */
	uint64_t *psbs;		/* stream offsets of PSBs */
	size_t npsbs;
	struct tsc_mark *tscs;
	size_t ntscs;
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

	return b->cyc && !blk_offset(b, &off) ? mt_cyctime_at(b->cyc, off, b->psbs, b->npsbs) : 0;
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

/* Where the window starting at the PSB at OFF may end at the earliest:
 * WINDOW bytes on, or at the next multiple of the pieces' size. */
static uint64_t next_cut(const struct scan *sc, uint64_t off)
{
	uint64_t end = off + sc->window;

	if (sc->piece && (off / sc->piece + 1) * sc->piece < end)
		end = (off / sc->piece + 1) * sc->piece;
	return end;
}

/* Notes the packet P at stream offset OFF. */
static void scan_packet(struct mt_blkdec *b, struct scan *sc, const struct pt_packet *p, uint64_t off)
{
	if (sc->probe) {
		sc->cyc |= p->type == ppt_cyc;
		return;
	}
	switch (p->type) {
	case ppt_psb:
		if (MT_ARRAY_RESERVE(b->psbs, sc->pcap, b->npsbs, 1)) {
			sc->oom = true;
			return;
		}
		b->psbs[b->npsbs++] = off;
		sc->npsbs++;
		sc->psb = off;
		sc->in_psb = true;
		sc->psb_on = sc->psb_mode = false;
		sc->psb_tsc = b->ntscs;
		break;
	case ppt_psbend:
		/* A PSB+ holds a FUP exactly when packets are on. */
		sc->in_psb = false;
		sc->on = sc->psb_on;
		for (size_t i = sc->psb_tsc; i < b->ntscs; i++)
			b->tscs[i].ends_trace = !sc->on;
		/* A window may end at a PSB+ with MODE.Exec: libipt reports
		 * it as an event there, which is where decoding stops. */
		if (!sc->psb_mode || sc->psb < sc->next_cut)
			break;
		if (MT_ARRAY_RESERVE(b->cuts, sc->ccap, b->ncuts, 1)) {
			sc->oom = true;
			return;
		}
		b->cuts[b->ncuts++] = (struct cut){ sc->psb, off + PSBEND_SIZE, sc->on };
		sc->next_cut = next_cut(sc, sc->psb);
		break;
	case ppt_mode:
		sc->psb_mode |= sc->in_psb && p->payload.mode.leaf == pt_mol_exec;
		break;
	case ppt_fup:
		if (sc->in_psb)
			sc->psb_on = true;
		else
			sc->on = true;
		break;
	case ppt_tip_pge:
		sc->on = true;
		break;
	case ppt_tip_pgd:
		sc->on = false;
		break;
	case ppt_tsc:
		if (MT_ARRAY_RESERVE(b->tscs, sc->tcap, b->ntscs, 1)) {
			sc->oom = true;
			return;
		}
		b->tscs[b->ntscs++] = (struct tsc_mark){ off, p->payload.tsc.tsc, !sc->on };
		/* Values that go back (a damaged stream) break the count of
		 * marks up to a time that pieces decoded ahead rely on. */
		sc->marks_back |= p->payload.tsc.tsc < sc->last_mark;
		sc->last_mark = p->payload.tsc.tsc;
		break;
	default:
		break;
	}
}

/* The packet at OFF read by libipt; its length in *LEN. */
static int libipt_packet(struct pt_packet_decoder *pkt, uint64_t off, struct pt_packet *pk,
			 size_t *len)
{
	uint64_t next = off;
	int st = pt_pkt_sync_set(pkt, off);

	if (st >= 0)
		st = pt_pkt_next(pkt, pk, sizeof(*pk));
	if (st >= 0)
		st = pt_pkt_get_offset(pkt, &next);
	*len = (size_t)(next - off);
	return st;
}

/* Puts PKT where libipt's own reading from its sync point FROM stops at
 * the bad packet at OFF: at OFF, synced at FROM. */
static void walk_to(struct pt_packet_decoder *pkt, uint64_t from, uint64_t off)
{
	uint64_t at = from;
	struct pt_packet pk;

	if (pt_pkt_sync_set(pkt, from) < 0)
		return;
	while (at < off && pt_pkt_next(pkt, &pk, sizeof(pk)) >= 0 && !pt_pkt_get_offset(pkt, &at))
		;
}

/*
 * Scans the piece at POS (GOT bytes at P) from its start (or its first
 * PSB when SYNC); returns where the next piece starts, and whether it
 * must look for a PSB, in *SYNC. A packet running on past the piece is
 * read again whole in the next, a PSB cut by it is found there: in a
 * well-formed stream, pieces of any size find the same packets.
 */
static uint64_t scan_piece(struct mt_blkdec *b, struct scan *sc, const uint8_t *p, size_t got,
			    uint64_t pos, bool *sync)
{
	uint64_t off = 0, end = pos + got, tail;
	struct pt_config cfg = b->cfg;
	struct pt_packet_decoder *pkt;
	struct pt_packet pk;
	bool synced;
	int st;

	cfg.begin = (uint8_t *)p;
	cfg.end = (uint8_t *)p + got;
	pkt = pt_pkt_alloc_decoder(&cfg);
	if (!pkt) {
		sc->oom = true;
		return end;
	}
	st = *sync ? pt_pkt_sync_forward(pkt) : pt_pkt_sync_set(pkt, 0);
	synced = st >= 0;
	while (synced) {
		uint64_t from = 0;

		st = pt_pkt_get_offset(pkt, &from);
		off = from;
		/* Most packets are read here (ptquick.h), the rest by libipt. */
		while (st >= 0 && !sc->oom && off < got) {
			size_t len = mt_ptq_packet(p + off, got - off, &pk);

			if (!len)
				st = libipt_packet(pkt, off, &pk, &len);
			if (st < 0)
				break;
			scan_packet(b, sc, &pk, pos + off);
			off += len;
		}
		if (st >= 0 && !sc->oom)
			st = -pte_eos;	/* every byte read */
		if (st == -pte_eos || sc->oom)
			break;
		/* A bad packet: on at the next PSB, from libipt's own state
		 * there (where its sync point is decides where it looks). */
		sc->bad = true;
		walk_to(pkt, from, off);
		synced = pt_pkt_sync_forward(pkt) >= 0;
	}
	pt_pkt_free_decoder(pkt);
	*sync = !synced;
	if (synced)
		return pos + off;	/* a packet may run on into the next piece */
	/* No PSB from OFF on: one may begin in the piece's last bytes. */
	tail = got > PSB_SIZE - 1 ? end - (PSB_SIZE - 1) : end;
	off = pos + off > tail ? pos + off : tail;
	return off > pos ? off : end;
}

/*
 * The scan, read with libipt's packet decoder through its own reading of
 * the stream, a piece at a time ahead of the decoder, as far as it asks
 * (see forget_behind() for what it keeps): the PSBs, the TSC packets and
 * where the windows end (at the first suitable PSB WINDOW bytes or more
 * after the last window's start). Resync after an error needs the PSBs:
 * the block decoder reads ahead, so by the time an error is reported it
 * may already have consumed the next PSB, and a plain forward sync would
 * skip a whole PSB period. TSC packets are the stream's exact times (see
 * tsc_bounds()). A TSC packet sent while packet generation is off
 * (TraceEn 0->1, or a PSB+ without FUP) ends the trace before it: what
 * came before ran before its time.
 * Scans the next piece; false when there is none (the stream's end, or it
 * could not be read: then b->failed).
 */
static bool scan_more(struct mt_blkdec *b)
{
	struct scan *sc = &b->sc;
	uint64_t pos = sc->pos, next;
	const uint8_t *p;
	size_t got;

	if (sc->done)
		return false;
	p = sc->src->window(sc->src->ctx, pos, pos + sc->read, &got);
	next = p ? scan_piece(b, sc, p, got, pos, &sc->sync) : pos;
	/* A packet cut by the stream's end ends the scan. */
	sc->pos = next > pos && pos + got < sc->src->size ? next : sc->src->size;
	sc->done = sc->pos >= sc->src->size || !p || sc->oom;
	b->failed |= !p || sc->oom;
	return !b->failed;
}

/* The scan of SRC from its start, with windows of WINDOW bytes; nothing
 * found yet. */
static void scan_start(struct mt_blkdec *b, const struct mt_pt_source *src, uint64_t window)
{
	b->sc = (struct scan){ .src = src, .window = window, .piece = b->sc.piece, .sync = true,
			       .read = window < SCAN_PIECE ? window : SCAN_PIECE };
	b->sc.next_cut = next_cut(&b->sc, 0);
}

/* Whether the stream holds CYC packets (they decide how it is decoded):
 * the scan, until it finds one, keeping nothing; then it starts over. */
static bool has_cyc(struct mt_blkdec *b, const struct mt_pt_source *src, uint64_t window)
{
	bool cyc;

	scan_start(b, src, window);
	b->sc.probe = true;
	while (!b->sc.cyc && scan_more(b))
		;
	cyc = b->sc.cyc;
	scan_start(b, src, window);
	return cyc;
}

/* The TSC marks whose ends_trace is settled: all but those of a PSB+ the
 * scan has not read to its end (see scan_packet()). */
static size_t settled_marks(const struct mt_blkdec *b)
{
	return b->sc.in_psb && !b->sc.done ? b->sc.psb_tsc : b->ntscs;
}

/* The number of TSC marks before offset OFF. */
static size_t marks_before(const struct mt_blkdec *b, uint64_t off)
{
	size_t lo = 0, hi = b->ntscs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->tscs[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Of the first N TSC marks, the number worth at most TSC: the values grow
 * along a CPU's stream. */
static size_t marks_up_to(const struct mt_blkdec *b, size_t n, uint64_t tsc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->tscs[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of TSC marks before OFF, and of those worth at most TSC
 * (0: any), whichever is smaller. */
static size_t tscs_before(const struct mt_blkdec *b, uint64_t off, uint64_t tsc)
{
	size_t n = marks_before(b, off);

	return tsc ? marks_up_to(b, n, tsc) : n;
}

/* Drops the first K of the *N elements of ELEM bytes at V. */
static void drop_front(void *v, size_t *n, size_t k, size_t elem)
{
	if (!k)
		return;
	memmove(v, (char *)v + k * elem, (*n - k) * elem);
	*n -= k;
}

/*
 * Drops what the scan found that the decoder can no longer ask for, now
 * that it decodes from START on (the next window's start; decoding never
 * goes back before a window's start, and its offsets only grow but for a
 * resync, which is to a PSB after the last sync point).
 *
 * PSBs before START: resync_point() looks only at PSBs after the sync
 * point, which is in the window, up to the error's offset (a forward sync
 * past them is libipt's own search of the window's bytes), and
 * mt_cyctime_at() only at the last PSB at or before the offset, when it
 * is in the window.
 *
 * TSC marks: tsc_bounds() asks for the mark before its N (the floor), N
 * itself and later ones, with N the number of marks before the enable's
 * offset OFF, or of those worth at most its time TSC if fewer. OFF is at
 * or after START, so the first count is at least K, the marks before
 * START. The time is (a) now() or an exact CYC time, both through
 * reached(), never below b->tsc, which only grows, or (b) libipt's time
 * of the event (pt_event.tsc): its decoder's time since its last sync,
 * which is at or after START, restarted there and set by every TSC packet
 * it read since (there is one, or pt_event.has_tsc is 0 and the time is
 * now()), and never below the last of them: in a well-formed stream MTC
 * and CYC only add to it.
 * The values of TSC packets grow along the stream (the SDM: the TSC is
 * invariant, and TSC packets carry it), so (b) is at least every mark
 * before START, and (a) at least the marks up to b->tsc: N is never below
 * the smaller of the two counts, and the marks before the one before it
 * are never asked for again. The block decoder's read-ahead only makes
 * OFF later, which the first count allows for. A corrupt stream (TSC
 * values that go back, a PSBEND without its PSB) may get other bounds than
 * a scan of the whole stream first would give; they only clamp times.
 *
 * The decoder asks for marks and PSBs after its offset only up to its
 * window's end, which the scan has passed (it found the end there), and
 * for the first mark ending the trace, which tsc_bounds() scans on for.
 * So what the scan holds spans the window, the piece it read last, and on
 * to that mark.
 */
static void forget_behind(struct mt_blkdec *b, uint64_t start)
{
	size_t k = marks_before(b, start), t = marks_up_to(b, k, b->tsc), p = 0;

	k = t < k ? t : k;
	/* What is dropped, a decoding of everything before drops too: from
	 * here on, it holds the same marks (blkdec.h, pieces ahead). */
	if (k)
		b->partial = false;
	if (k > 1) {
		drop_front(b->tscs, &b->ntscs, k - 1, sizeof(*b->tscs));
		b->sc.psb_tsc = b->sc.psb_tsc > k - 1 ? b->sc.psb_tsc - (k - 1) : 0;
	}
	while (p < b->npsbs && b->psbs[p] < start)
		p++;
	drop_front(b->psbs, &b->npsbs, p, sizeof(*b->psbs));
}

/*
 * The SDM ("TSC packet"): packets before a TSC packet are for instructions
 * that executed before its time, those after it for later ones, and
 * TraceEn 0->1 always sends one. So TSC packets are exact bounds, unlike
 * the times libipt estimates from MTC and CYC. For an enable libipt gives
 * time TSC, with the decoder at OFF: the TSC packets before its TIP.PGE
 * are those before OFF, but the decoder may have read ahead past the next
 * ones; those are later than TSC, which libipt's time cannot be below any
 * TSC packet it had passed. This gives the last TSC packet before the
 * enable (no later time is earlier), the first one after it (the enable
 * is earlier) and the first one after it sent with packets off (the
 * stretch ends earlier); 0 or UINT64_MAX when there is none. The packet
 * carries TSC[55:0]: no counter reaches bit 56 (decades). The scan has
 * passed OFF (the window's end); it goes on for the marks after it.
 */
static void tsc_bounds(struct mt_blkdec *b, uint64_t off, uint64_t tsc, struct mt_tsc_bounds *s)
{
	size_t n = tscs_before(b, off, tsc);

	/* A piece decoded ahead lacks the marks before its start. */
	b->unsure |= !n && b->partial;
	s->floor = n ? b->tscs[n - 1].tsc : 0;
	while (n == b->ntscs && scan_more(b))
		;
	s->ceil = n < b->ntscs ? b->tscs[n].tsc : UINT64_MAX;
	for (;;) {
		while (n < settled_marks(b) && !b->tscs[n].ends_trace)
			n++;
		if (n < settled_marks(b) || !scan_more(b))
			break;
	}
	s->end = n < settled_marks(b) ? b->tscs[n].tsc : UINT64_MAX;
}

/* Trace (re)starts: tells the handler, with the exact bounds. What ran
 * before goes on first (the handler may start another thread's segment). */
static void enable(struct mt_blkdec *b, uint64_t tsc, uint64_t ip)
{
	struct mt_tsc_bounds bounds;
	uint64_t off = 0;

	mt_interp_flush(b->q, tsc);
	blk_offset(b, &off);
	tsc_bounds(b, off, tsc, &bounds);
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

	for (size_t i = 0; i < b->npsbs && b->psbs[i] <= err_off; i++)
		if (b->psbs[i] > sync)
			psb = b->psbs[i];
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
			if (b->h->progress && off - b->reported >= MT_BLK_PROGRESS_BYTES) {
				b->reported = off;
				b->h->progress(b->h->ctx, off);
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
		if (b->at_stop || (resume != UINT64_MAX && resume >= b->stop))
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
	while (!b->ended && b->start < b->piece_end) {
		uint64_t end, start = b->start;
		const uint8_t *p;
		size_t got;
		bool cont = b->at_stop, last;

		/* The CYC reading goes on in the next window from here. */
		if (b->cyc && b->nwindows)
			mt_cyctime_read_to(b->cyc, start);
		forget_behind(b, start);
		/* The scan on to the window's end. */
		while (!b->ncuts && scan_more(b))
			;
		if (b->failed)
			return -pte_nomem;
		last = !b->ncuts;
		end = last ? b->src->size : b->cuts[0].end;
		p = b->src->window(b->src->ctx, start, end, &got);
		if (!p)
			return -pte_nomem;
		b->stop = last ? UINT64_MAX : b->cuts[0].psb;
		b->at_stop = false;
		if (!open_window(b, p, got, start)) {
			close_window(b);
			return -pte_nomem;
		}
		decode_window(b, cont, &b->first, &b->prev_sync);
		close_window(b);
		b->stats->windows++;
		b->nwindows++;
		if (b->failed)
			return -pte_nomem;
		b->start = b->stop;
		b->ended = last;
		drop_front(b->cuts, &b->ncuts, !last, sizeof(*b->cuts));
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

/* The PSBs the scan found at or after OFF (those it still holds). */
static uint64_t psbs_from(const struct mt_blkdec *b, uint64_t off)
{
	uint64_t n = 0;

	for (size_t i = b->npsbs; i > 0 && b->psbs[i - 1] >= off; i--)
		n++;
	return n;
}

int mt_blkdec_start(struct mt_blkdec *b, uint64_t index, bool cyc_off)
{
	const struct mt_pt_source *scan = b->sc.src;

	if (!index) {
		if (cyc_off)
			scan_start(b, scan, b->window);
		else if (has_cyc(b, scan, b->window))
			b->cyc = mt_cyctime_new(&b->cfg);
		b->cfg.flags.variant.block.enable_tick_events = b->cyc != NULL;
		return b->failed ? -pte_nomem : 0;
	}
	/* Ahead: from the piece's first window end on, as if decoding had
	 * stopped there, packets on where its PSB+ says so. */
	scan_start(b, scan, b->window);
	b->sc.pos = b->sc.next_cut = index * b->sc.piece;
	while (!b->ncuts && scan_more(b))
		;
	if (b->failed)
		return -pte_nomem;
	b->ahead = b->partial = true;
	b->first = false;
	if (!b->ncuts) {
		b->ended = true;	/* no piece starts here */
		b->start = b->piece_start = UINT64_MAX;
		return 0;
	}
	b->start = b->piece_start = b->cuts[0].psb;
	b->at_stop = true;
	b->on = b->assumed_on = b->cuts[0].on;
	drop_front(b->cuts, &b->ncuts, 1, sizeof(*b->cuts));
	/* The PSBs before it are the piece before's. */
	b->sc.npsbs = psbs_from(b, b->start);
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

bool mt_blkdec_follows(const struct mt_blkdec *before, const struct mt_blkdec *ahead)
{
	uint64_t first = ahead->stats->first_tsc;

	return ahead->ahead && !before->failed && !ahead->failed && before->at_stop &&
	       !before->sc.marks_back && !ahead->sc.marks_back && !ahead->sc.bad &&
	       !before->ended && before->start == ahead->piece_start &&
	       before->on == ahead->assumed_on && before->image && !ahead->unsure &&
	       !(ahead->zero_time && before->tsc) && !(first && before->tsc > first);
}

void mt_blkdec_adopt(struct mt_blkdec *ahead, const struct mt_blkdec *before)
{
	if (before->tsc > ahead->tsc)
		ahead->tsc = before->tsc;
	ahead->ahead = false;
}

/* The most the scan's arrays held: they never shrink, so their size now. */
static uint64_t scan_held(const struct mt_blkdec *b)
{
	return b->sc.pcap * sizeof(*b->psbs) + b->sc.tcap * sizeof(*b->tscs) +
	       b->sc.ccap * sizeof(*b->cuts);
}

void mt_blkdec_take_stats(struct mt_blkdec *b, struct mt_blk_stats *to)
{
	struct mt_blk_stats *s = b->stats;
	uint64_t psbs = b->sc.npsbs - psbs_from(b, mt_blkdec_position(b)), held = scan_held(b);

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
	free(b->psbs);
	free(b->tscs);
	free(b->cuts);
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
	stats->psbs = b->sc.npsbs;
	stats->scan_held = scan_held(b);
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
