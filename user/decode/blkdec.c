// SPDX-License-Identifier: MIT
/* One CPU's PT stream through libipt's block decoder; see blkdec.h. */
#include "decode/blkdec.h"
#include "util/mt_array.h"

#include "decode/cyctime.h"
#include "decode/insn.h"
#include "decode/interp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Blocks decoded without consuming trace before we call it a loop that
 * only more trace could end (the stream stopped inside `jmp .`). */
#define MAX_BLOCKS_WITHOUT_TRACE (1u << 16)
#define INSN_CACHE_SIZE 4096
/* Buffer bytes between two passed() reports. */
#define PASSED_STEP ((uint64_t)1 << 20)

struct insn_memo {
	uint64_t ip;
	uint8_t len;
	uint8_t cls;
};

/* A TSC packet: its offset in the buffer and its value. */
struct tsc_mark {
	uint64_t offset, tsc;
	bool ends_trace;	/* sent with packet generation off */
};

struct blkdec {
	struct pt_block_decoder *dec;
	struct pt_image_section_cache *iscache;
	const struct mt_blk_handler *h;
	struct mt_interp q;	/* control flow on its way to h, see interp.h */
	struct mt_blk_stats *stats;
	struct mt_insn_dec *insn;
	uint64_t tsc;
	struct pt_packet_decoder *pkt;	/* for looking at packets around errors */
	uint64_t *psbs;		/* offsets of every PSB in the buffer */
	size_t npsbs;
	struct tsc_mark *tscs;	/* every TSC packet, in stream order */
	size_t ntscs;
	uint64_t passed;	/* reported to the handler's passed() */
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

/* The exact time libipt's current time stands for; 0 when not known. */
static uint64_t cyc_time(const struct blkdec *b)
{
	uint64_t off;

	return b->cyc && !pt_blk_get_offset(b->dec, &off) ? mt_cyctime_at(b->cyc, off) : 0;
}

/* The stream's time, TSC now: b->tsc only grows, the stream's first time
 * is its first non-zero value, its last time the final one (stored at the
 * end). */
static uint64_t reached(struct blkdec *b, uint64_t tsc)
{
	if (tsc > b->tsc) {
		if (!b->tsc)
			b->stats->first_tsc = tsc;
		b->tsc = tsc;
	}
	return b->tsc;
}

static uint64_t now(struct blkdec *b)
{
	uint64_t tsc = cyc_time(b);
	uint32_t lost_mtc, lost_cyc;

	if (!tsc && pt_blk_time(b->dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		tsc = 0;
	return reached(b, tsc);
}

/* Length and class of the block's last instruction, from the section
 * bytes; memoized per address. Length 0 when the bytes are unavailable. */
static void last_insn(struct blkdec *b, const struct pt_block *blk, uint8_t *len,
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
static void report_block(struct blkdec *b, uint64_t tsc, uint64_t ip, uint64_t insns,
			 enum mt_xfer x, uint64_t ret)
{
	b->stats->blocks++;
	mt_interp_block_ending(&b->q, tsc, ip, insns, x, ret);
}

/* Hands on the held block as it is: no block goes on from it. */
static void flush_held(struct blkdec *b)
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
static void on_block(struct blkdec *b, const struct pt_block *blk, uint64_t tsc)
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

static void set_image(struct blkdec *b, struct pt_image *img)
{
	if (img)
		pt_blk_set_image(b->dec, img);
}

/*
 * Offsets of all PSBs and TSC packets, found with libipt's packet decoder.
 * Resync after an error needs the PSBs: the block decoder reads ahead, so
 * by the time an error is reported it may already have consumed the next
 * PSB, and a plain forward sync would skip a whole PSB period. TSC packets
 * are the stream's exact times (see tsc_bounds()). A TSC packet sent while
 * packet generation is off (TraceEn 0->1, or a PSB+ without FUP) ends the
 * trace before it: what came before ran before its time.
 * Returns whether the buffer holds CYC packets.
 */
static bool scan_packets(struct blkdec *b)
{
	size_t pcap = 0, tcap = 0, psb_tsc = 0;
	struct pt_packet p;
	uint64_t off;
	bool on = false, in_psb = false, psb_on = false, cyc = false;

	while (b->pkt && pt_pkt_sync_forward(b->pkt) >= 0) {
		while (!pt_pkt_get_offset(b->pkt, &off) && pt_pkt_next(b->pkt, &p, sizeof(p)) >= 0) {
			switch (p.type) {
			case ppt_psb:
				if (MT_ARRAY_RESERVE(b->psbs, pcap, b->npsbs, 1))
					return cyc;
				b->psbs[b->npsbs++] = off;
				in_psb = true;
				psb_on = false;
				psb_tsc = b->ntscs;
				break;
			case ppt_psbend:
				/* A PSB+ holds a FUP exactly when packets are on. */
				in_psb = false;
				on = psb_on;
				for (size_t i = psb_tsc; i < b->ntscs; i++)
					b->tscs[i].ends_trace = !on;
				break;
			case ppt_cyc:
				cyc = true;
				break;
			case ppt_fup:
				if (in_psb)
					psb_on = true;
				else
					on = true;
				break;
			case ppt_tip_pge:
				on = true;
				break;
			case ppt_tip_pgd:
				on = false;
				break;
			case ppt_tsc:
				if (MT_ARRAY_RESERVE(b->tscs, tcap, b->ntscs, 1))
					return cyc;
				b->tscs[b->ntscs++] = (struct tsc_mark){ off, p.payload.tsc.tsc, !on };
				break;
			default:
				break;
			}
		}
	}
	return cyc;
}

/* The number of TSC packets before OFF, and of those worth at most TSC
 * (0: any), whichever is smaller: the values grow along a CPU's stream. */
static size_t tscs_before(const struct blkdec *b, uint64_t off, uint64_t tsc)
{
	size_t lo = 0, hi = b->ntscs, n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->tscs[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	n = lo;
	lo = 0;
	while (tsc && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->tscs[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return tsc && lo < n ? lo : n;
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
 * carries TSC[55:0]: no counter reaches bit 56 (decades).
 */
static void tsc_bounds(const struct blkdec *b, uint64_t off, uint64_t tsc, struct mt_blk_stats *s)
{
	size_t n = tscs_before(b, off, tsc);

	s->tsc_floor = n ? b->tscs[n - 1].tsc : 0;
	s->tsc_ceil = n < b->ntscs ? b->tscs[n].tsc : UINT64_MAX;
	while (n < b->ntscs && !b->tscs[n].ends_trace)
		n++;
	s->tsc_end = n < b->ntscs ? b->tscs[n].tsc : UINT64_MAX;
}

/* Trace (re)starts: tells the handler, with the exact bounds. What ran
 * before goes on first (the handler may start another thread's segment). */
static void enable(struct blkdec *b, uint64_t tsc, uint64_t ip)
{
	uint64_t off = 0;

	mt_interp_flush(&b->q, tsc);
	pt_blk_get_offset(b->dec, &off);
	tsc_bounds(b, off, tsc, b->stats);
	set_image(b, b->h->enable(b->h->ctx, tsc, ip));
}

/* Handles pending events; returns the last status (negative on error). */
static int drain_events(struct blkdec *b, int st)
{
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
			mt_interp_disable(&b->q, tsc, 0);
			break;
		case ptev_async_disabled:
			mt_interp_disable(&b->q, tsc, ev.variant.async_disabled.at);
			break;
		case ptev_async_branch:
			/* An interrupt with tracing on. Control had reached
			 * the interrupted instruction, which settles the call
			 * or return that led there even if nothing ran there
			 * yet; then it is like a call that will return to it. */
			mt_interp_block(&b->q, tsc, ev.variant.async_branch.from, 0);
			mt_interp_transfer(&b->q, MT_XFER_FAR_CALL, ev.variant.async_branch.from);
			break;
		case ptev_overflow:
			b->stats->overflows++;
			mt_interp_gap(&b->q, tsc, MT_GAP_OVERFLOW);
			break;
		default:
			/* Paging, mode, power, timing and other events do not
			 * change the control flow we report. */
			break;
		}
	}
	return st;
}

/* Whether only PSB+ and timing packets lie between PSB and END: then the
 * decoder reached END by reading ahead, and nothing after the PSB was
 * decoded yet. */
static bool only_header_before(struct blkdec *b, uint64_t psb, uint64_t end)
{
	struct pt_packet p;
	uint64_t off;
	bool in_header = true;

	if (pt_pkt_sync_set(b->pkt, psb) < 0)
		return false;
	while (!pt_pkt_get_offset(b->pkt, &off) && off < end) {
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
static uint64_t resync_point(struct blkdec *b, uint64_t sync, uint64_t err_off)
{
	uint64_t psb = UINT64_MAX;

	for (size_t i = 0; i < b->npsbs && b->psbs[i] <= err_off; i++)
		if (b->psbs[i] > sync)
			psb = b->psbs[i];
	return psb != UINT64_MAX && only_header_before(b, psb, err_off) ? psb : UINT64_MAX;
}

/*
 * Tells the handler how far the buffer will not be read again: to the last
 * PSB at or before OFF. Decoding only moves forward, and a resync after an
 * error goes to a PSB no earlier than that one (resync_point()).
 */
static void report_passed(struct blkdec *b, uint64_t off)
{
	size_t lo = 0, hi = b->npsbs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->psbs[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && b->psbs[lo - 1] > b->passed) {
		b->passed = b->psbs[lo - 1];
		b->h->passed(b->h->ctx, b->passed);
	}
}

/* Decodes from a sync point to the end or the next error; returns the
 * resync point (see resync_point()). */
static uint64_t decode_from_sync(struct blkdec *b, int st)
{
	uint64_t last_off = 0, sync = 0, off = 0;
	unsigned int idle = 0;

	pt_blk_get_sync_offset(b->dec, &sync);
	b->cyc_now = cyc_time(b);
	if (!(st & pts_ip_suppressed))
		enable(b, now(b), 0);
	for (;;) {
		struct pt_block blk;

		st = drain_events(b, st);
		if (st < 0 || (st & pts_eos))
			break;
		blk.ninsn = 0;
		st = pt_blk_next(b->dec, &blk, sizeof(blk));
		/* With exact CYC times a block starts at the time the last
		 * event or tick brought (tick events end blocks where the
		 * time changes), else it gets libipt's time after it. */
		if (blk.ninsn)
			on_block(b, &blk, b->cyc_now ? reached(b, b->cyc_now) : now(b));
		if (st < 0)
			break;
		if (pt_blk_get_offset(b->dec, &off))
			continue;
		if (off != last_off) {
			idle = 0;
			last_off = off;
			b->stats->offset = off;
			if (b->h->passed && off - b->passed >= PASSED_STEP)
				report_passed(b, off);
		} else if (++idle == MAX_BLOCKS_WITHOUT_TRACE) {
			st = -pte_eos;
			break;
		}
	}
	flush_held(b);
	if (st >= 0 || st == -pte_eos)
		return UINT64_MAX;
	b->stats->errors++;
	pt_blk_get_offset(b->dec, &off);
	if (!b->stats->first_error) {
		b->stats->first_error = st;
		b->stats->first_error_offset = off;
	}
	mt_interp_gap(&b->q, now(b), st == -pte_nomap ? MT_GAP_NOMAP : MT_GAP_DECODE);
	return resync_point(b, sync, off);
}

int mt_blk_decode(const struct pt_config *cfg, struct pt_image *image,
		  struct pt_image_section_cache *iscache, const struct mt_blk_handler *h,
		  struct mt_blk_stats *stats)
{
	struct blkdec *b = calloc(1, sizeof(*b));
	struct pt_config bcfg;
	uint64_t sync = 0, prev_sync = 0, resume;
	int st, first = 1;

	if (!b)
		return -pte_nomem;
	memset(stats, 0, sizeof(*stats));
	b->iscache = iscache;
	b->h = h;
	mt_interp_init(&b->q, h);
	b->stats = stats;
	b->insn = mt_insn_dec_new();
	b->pkt = pt_pkt_alloc_decoder(cfg);
	if (scan_packets(b))
		b->cyc = mt_cyctime_new(cfg, b->psbs, b->npsbs);
	bcfg = *cfg;
	bcfg.flags.variant.block.enable_tick_events = b->cyc != NULL;
	b->dec = pt_blk_alloc_decoder(&bcfg);
	if (!b->dec) {
		pt_pkt_free_decoder(b->pkt);
		mt_cyctime_free(b->cyc);
		mt_insn_dec_free(b->insn);
		free(b->psbs);
		free(b->tscs);
		free(b);
		return -pte_nomem;
	}
	set_image(b, image);
	st = pt_blk_sync_forward(b->dec);
	while (st >= 0) {
		/* A resync that does not move forward would repeat forever. */
		if (pt_blk_get_sync_offset(b->dec, &sync) || (!first && sync <= prev_sync))
			break;
		first = 0;
		prev_sync = sync;
		resume = decode_from_sync(b, st);
		st = resume != UINT64_MAX ? pt_blk_sync_set(b->dec, resume)
					  : pt_blk_sync_forward(b->dec);
	}
	/* Nothing bounds the last interval: its code keeps the last time. */
	mt_interp_flush(&b->q, 0);
	mt_interp_fini(&b->q);
	stats->last_tsc = b->tsc;
	pt_blk_free_decoder(b->dec);
	pt_pkt_free_decoder(b->pkt);
	mt_insn_dec_free(b->insn);
	free(b->psbs);
	free(b->tscs);
	mt_cyctime_free(b->cyc);
	free(b);
	return 0;
}
