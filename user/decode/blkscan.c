// SPDX-License-Identifier: MIT
/* The scan ahead of the block decoder; see blkscan.h. */
#include "decode/blkscan.h"
#include "util/mt_array.h"

#include "decode/ptquick.h"
#include "decode/ptsource.h"

#include <stdlib.h>
#include <string.h>

/* The scan reads the stream in pieces of at most this (what it finds does
 * not depend on their size, see scan_piece()). */
#define SCAN_PIECE (64u << 10)
/* Packet sizes (SDM "Packet Definitions"). */
#define PSB_SIZE 16
#define PSBEND_SIZE 2

/* Where the window starting at the PSB at OFF may end at the earliest:
 * WINDOW bytes on, or at the next multiple of the pieces' size. */
static uint64_t next_cut(const struct mt_blkscan *sc, uint64_t off)
{
	uint64_t end = off + sc->window;

	if (sc->piece && (off / sc->piece + 1) * sc->piece < end)
		end = (off / sc->piece + 1) * sc->piece;
	return end;
}

/* Notes the packet P at stream offset OFF. */
static void scan_packet(struct mt_blkscan *sc, const struct pt_packet *p, uint64_t off)
{
	if (sc->probe) {
		sc->cyc |= p->type == ppt_cyc;
		return;
	}
	switch (p->type) {
	case ppt_psb:
		if (MT_ARRAY_RESERVE(sc->psbs, sc->pcap, sc->npsbs, 1)) {
			sc->oom = true;
			return;
		}
		sc->psbs[sc->npsbs++] = off;
		sc->npsbs_seen++;
		sc->psb = off;
		sc->in_psb = true;
		sc->psb_on = sc->psb_mode = false;
		sc->psb_tsc = sc->ntscs;
		break;
	case ppt_psbend:
		/* A PSB+ holds a FUP exactly when packets are on. */
		sc->in_psb = false;
		sc->on = sc->psb_on;
		for (size_t i = sc->psb_tsc; i < sc->ntscs; i++)
			sc->tscs[i].ends_trace = !sc->on;
		/* A window may end at a PSB+ with MODE.Exec: libipt reports
		 * it as an event there, which is where decoding stops. */
		if (!sc->psb_mode || sc->psb < sc->next_cut)
			break;
		if (MT_ARRAY_RESERVE(sc->cuts, sc->ccap, sc->ncuts, 1)) {
			sc->oom = true;
			return;
		}
		sc->cuts[sc->ncuts++] = (struct mt_scan_cut){ sc->psb, off + PSBEND_SIZE, sc->on };
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
		if (MT_ARRAY_RESERVE(sc->tscs, sc->tcap, sc->ntscs, 1)) {
			sc->oom = true;
			return;
		}
		sc->tscs[sc->ntscs++] = (struct mt_tsc_mark){ off, p->payload.tsc.tsc, !sc->on };
		/* Values that go back (a damaged stream) break the count of
		 * marks up to a time that pieces decoded ahead rely on. */
		sc->marks_back |= p->payload.tsc.tsc < sc->last_mark;
		sc->last_mark = p->payload.tsc.tsc;
		break;
	default:
		break;
	}
}

/*
 * Scans the piece at POS (GOT bytes at P) from its start (or its first
 * PSB when SYNC); returns where the next piece starts, and whether it
 * must look for a PSB, in *SYNC. A packet running on past the piece is
 * read again whole in the next, a PSB cut by it is found there: in a
 * well-formed stream, pieces of any size find the same packets.
 */
static uint64_t scan_piece(struct mt_blkscan *sc, const uint8_t *p, size_t got, uint64_t pos,
			   bool *sync)
{
	uint64_t off = 0, end = pos + got, tail;
	struct pt_config cfg = *sc->cfg;
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
			size_t len;

			st = mt_ptq_read(pkt, p, got, off, &pk, &len);
			if (st < 0)
				break;
			scan_packet(sc, &pk, pos + off);
			off += len;
		}
		if (st >= 0 && !sc->oom)
			st = -pte_eos;	/* every byte read */
		if (st == -pte_eos || sc->oom)
			break;
		/* A bad packet: on at the next PSB, from libipt's own state
		 * there (where its sync point is decides where it looks). */
		sc->bad = true;
		mt_ptq_walk_to(pkt, from, off);
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


bool mt_blkscan_more(struct mt_blkscan *sc)
{
	uint64_t pos = sc->pos, next;
	const uint8_t *p;
	size_t got;

	if (sc->done)
		return false;
	p = sc->src->window(sc->src->ctx, pos, pos + sc->read, &got);
	next = p ? scan_piece(sc, p, got, pos, &sc->sync) : pos;
	/* A packet cut by the stream's end ends the scan. */
	sc->pos = next > pos && pos + got < sc->src->size ? next : sc->src->size;
	sc->done = sc->pos >= sc->src->size || !p || sc->oom;
	sc->failed |= !p || sc->oom;
	return !sc->failed;
}

void mt_blkscan_start(struct mt_blkscan *sc, const struct mt_pt_source *src, uint64_t window)
{
	struct mt_blkscan kept = *sc;

	*sc = (struct mt_blkscan){ .cfg = kept.cfg, .src = src, .window = window,
				   .piece = kept.piece, .failed = kept.failed, .sync = true,
				   .read = window < SCAN_PIECE ? window : SCAN_PIECE,
				   .psbs = kept.psbs, .npsbs = kept.npsbs, .pcap = kept.pcap,
				   .tscs = kept.tscs, .ntscs = kept.ntscs, .tcap = kept.tcap,
				   .cuts = kept.cuts, .ncuts = kept.ncuts, .ccap = kept.ccap };
	sc->next_cut = next_cut(sc, 0);
}

bool mt_blkscan_has_cyc(struct mt_blkscan *sc, const struct mt_pt_source *src, uint64_t window)
{
	bool cyc;

	mt_blkscan_start(sc, src, window);
	sc->probe = true;
	while (!sc->cyc && mt_blkscan_more(sc))
		;
	cyc = sc->cyc;
	mt_blkscan_start(sc, src, window);
	return cyc;
}

/* The TSC marks whose ends_trace is settled: all but those of a PSB+ the
 * scan has not read to its end (see scan_packet()). */
static size_t settled_marks(const struct mt_blkscan *sc)
{
	return sc->in_psb && !sc->done ? sc->psb_tsc : sc->ntscs;
}

/* The number of TSC marks before offset OFF. */
static size_t marks_before(const struct mt_blkscan *sc, uint64_t off)
{
	return off ? MT_ARRAY_UPPER_BOUND(sc->tscs, sc->ntscs, offset, off - 1) : 0;
}

/* Of the first N TSC marks, the number worth at most TSC: the values grow
 * along a CPU's stream. (A search of its own: the value is a bit-field,
 * which MT_ARRAY_UPPER_BOUND() cannot take.) */
static size_t marks_up_to(const struct mt_blkscan *sc, size_t n, uint64_t tsc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc->tscs[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of TSC marks before OFF, and of those worth at most TSC
 * (0: any), whichever is smaller. */
static size_t tscs_before(const struct mt_blkscan *sc, uint64_t off, uint64_t tsc)
{
	size_t n = marks_before(sc, off);

	return tsc ? marks_up_to(sc, n, tsc) : n;
}

/* Drops the first K of the *N elements of ELEM bytes at V. */
static void drop_front(void *v, size_t *n, size_t k, size_t elem)
{
	if (!k)
		return;
	memmove(v, (char *)v + k * elem, (*n - k) * elem);
	*n -= k;
}

void mt_blkscan_take_cut(struct mt_blkscan *sc)
{
	drop_front(sc->cuts, &sc->ncuts, 1, sizeof(*sc->cuts));
}

uint64_t mt_blkscan_psbs_from(const struct mt_blkscan *sc, uint64_t off)
{
	uint64_t n = 0;

	for (size_t i = sc->npsbs; i > 0 && sc->psbs[i - 1] >= off; i--)
		n++;
	return n;
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
 * reached(), never below the decoder's time, which only grows (TSC here), or (b) libipt's time
 * of the event (pt_event.tsc): its decoder's time since its last sync,
 * which is at or after START, restarted there and set by every TSC packet
 * it read since (there is one, or pt_event.has_tsc is 0 and the time is
 * now()), and never below the last of them: in a well-formed stream MTC
 * and CYC only add to it.
 * The values of TSC packets grow along the stream (the SDM: the TSC is
 * invariant, and TSC packets carry it), so (b) is at least every mark
 * before START, and (a) at least the marks up to TSC: N is never below
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
bool mt_blkscan_forget(struct mt_blkscan *sc, uint64_t start, uint64_t tsc)
{
	size_t k = marks_before(sc, start), t = marks_up_to(sc, k, tsc), p = 0;

	k = t < k ? t : k;
	if (k > 1) {
		drop_front(sc->tscs, &sc->ntscs, k - 1, sizeof(*sc->tscs));
		sc->psb_tsc = sc->psb_tsc > k - 1 ? sc->psb_tsc - (k - 1) : 0;
	}
	while (p < sc->npsbs && sc->psbs[p] < start)
		p++;
	drop_front(sc->psbs, &sc->npsbs, p, sizeof(*sc->psbs));
	return k > 0;
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
bool mt_blkscan_bounds(struct mt_blkscan *sc, uint64_t off, uint64_t tsc,
		       struct mt_tsc_bounds *s)
{
	size_t n = tscs_before(sc, off, tsc), first = n;

	s->floor = n ? sc->tscs[n - 1].tsc : 0;
	while (n == sc->ntscs && mt_blkscan_more(sc))
		;
	s->ceil = n < sc->ntscs ? sc->tscs[n].tsc : UINT64_MAX;
	for (;;) {
		while (n < settled_marks(sc) && !sc->tscs[n].ends_trace)
			n++;
		if (n < settled_marks(sc) || !mt_blkscan_more(sc))
			break;
	}
	s->end = n < settled_marks(sc) ? sc->tscs[n].tsc : UINT64_MAX;
	return !first;
}

uint64_t mt_blkscan_held(const struct mt_blkscan *sc)
{
	return sc->pcap * sizeof(*sc->psbs) + sc->tcap * sizeof(*sc->tscs) +
	       sc->ccap * sizeof(*sc->cuts);
}

void mt_blkscan_fini(struct mt_blkscan *sc)
{
	free(sc->psbs);
	free(sc->tscs);
	free(sc->cuts);
}
