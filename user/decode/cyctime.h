/* SPDX-License-Identifier: MIT */
/*
 * Exact times in cycle-accurate mode, from the packets, instead of
 * libipt's estimates (which calibrate cycles per TSC tick between timing
 * packets, across trace-off time too, and are off by thousands of ticks
 * after some switch-ins).
 *
 * The SDM ("Cycle Packet Semantics") gives every CYC-eligible packet the
 * time of its instruction (for a TNT, its first branch) as the cycles
 * since the previous CYC; a core cycle is nominal ratio / CBR TSC ticks
 * (core clock CBR x 100 MHz, TSC the nominal ratio x 100 MHz). The cycle
 * counter restarts only when a CYC is sent and when TraceEn clears (SDM
 * "Cycle Counter"): the chain of cycles runs on across a PSB+ and restarts
 * at the TSC of a trace enable (outside PSB+, or a PSB+ without FUP). An
 * overflow or a bad packet loses it until the next such TSC. MTC packets
 * are not needed: the cycles are complete, and the CYC before an MTC
 * carries its time.
 *
 * A second packet decoder follows the block decoder's offset through the
 * same bytes (each packet is read once; a resync behind it rewinds to a
 * PSB), so this takes no memory per packet. Offsets are the stream's; the
 * bytes are the block decoder's window of it (ptsource.h).
 */
#ifndef MTRACE_DECODE_CYCTIME_H
#define MTRACE_DECODE_CYCTIME_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_cyctime;

/* The reading's state between two packets: what a reading that goes on
 * from there needs besides the bytes (a piece decoded ahead starts with
 * it, blksplit.h). */
struct mt_cyc_chain {
	uint64_t at;		/* the time from the last packet not read ahead over */
	uint64_t tsc;		/* time of the last CYC; 0: unknown */
	uint64_t frac;		/* and its fraction, in 1/cbr ticks */
	uint64_t floor;		/* the last TSC packet: no later time is earlier */
	uint64_t psb_tsc;	/* the TSC of the PSB+ being read */
	uint8_t cbr;
	bool in_psb, psb_on;	/* in PSB+; it holds a FUP (packets on) */
};

bool mt_cyc_chain_equal(const struct mt_cyc_chain *x, const struct mt_cyc_chain *y);

/* For a stream timed as CFG says; NULL when the bundle has no nominal
 * ratio or memory ran out. */
struct mt_cyctime *mt_cyctime_new(const struct pt_config *cfg);
void mt_cyctime_free(struct mt_cyctime *t);

/*
 * The stream's bytes from BASE on are now CFG's buffer (the next window,
 * starting at a PSB). The reading goes on where it was, chain and all, if
 * it had reached BASE (mt_cyctime_read_to() on the last window), else from
 * the window's first PSB.
 */
void mt_cyctime_window(struct mt_cyctime *t, const struct pt_config *cfg, uint64_t base);

/* Reads the packets before POS, if not read yet; never goes back. */
void mt_cyctime_read_to(struct mt_cyctime *t, uint64_t pos);

/*
 * The exact time libipt's block decoder stands for when at offset POS:
 * that of the last packet before POS that its query decoder does not read
 * ahead over (timing packets, and the FUP that begins an asynchronous
 * event, which takes its TIP's time). 0 when not known. PSBS (NPSBS, in
 * stream order) holds at least the PSBs of the window up to POS: where the
 * reading goes back to when the block decoder did (a resync).
 */
uint64_t mt_cyctime_at(struct mt_cyctime *t, uint64_t pos, const uint64_t *psbs, size_t npsbs);

/*
 * Pieces decoded ahead (blksplit.h). mt_cyctime_mark() keeps the chain as
 * it stands when the reading gets to OFF, before the packet there;
 * mt_cyctime_marked() gives it, false when the reading never stood at OFF
 * (a packet ran across it, a resync went past it) or has stopped for good.
 */
void mt_cyctime_mark(struct mt_cyctime *t, uint64_t off);
bool mt_cyctime_marked(const struct mt_cyctime *t, uint64_t off, struct mt_cyc_chain *c);
/*
 * Goes on from OFF with chain C, as if it had read the stream up to there:
 * the next window, starting at OFF, continues it, and first reads on to TO,
 * where a decoding that went on into that window would stand (the end of
 * the PSB+ at OFF, which it read to report it).
 */
void mt_cyctime_resume(struct mt_cyctime *t, const struct mt_cyc_chain *c, uint64_t off,
		       uint64_t to);
/* The offset of the next packet to read. */
uint64_t mt_cyctime_next(const struct mt_cyctime *t);

#endif
