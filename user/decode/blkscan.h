/* SPDX-License-Identifier: MIT */
/*
 * The scan of one CPU's PT stream, read with libipt's packet decoder
 * through its own reading of the stream, a piece at a time ahead of the
 * block decoder (blkdec.c), as far as it asks: the PSBs, the TSC packets
 * and where the decoder's windows end (at the first PSB+ holding a
 * MODE.Exec WINDOW bytes or more after the last window's start, or at the
 * next multiple of the pieces' size). Resync after an error needs the
 * PSBs: the block decoder reads ahead, so by the time an error is
 * reported it may already have consumed the next PSB, and a plain forward
 * sync would skip a whole PSB period. TSC packets are the stream's exact
 * times (mt_blkscan_bounds()). A TSC packet sent while packet generation
 * is off (TraceEn 0->1, or a PSB+ without FUP) ends the trace before it:
 * what came before ran before its time.
 */
#ifndef MTRACE_DECODE_BLKSCAN_H
#define MTRACE_DECODE_BLKSCAN_H

#include "decode/blkdec.h"

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A TSC packet: its offset in the stream and its value, which has 56 bits
 * (the packet carries TSC[55:0]); 16 bytes, as there is one per enable. */
struct mt_tsc_mark {
	uint64_t offset;
	uint64_t tsc : 56;
	uint64_t ends_trace : 1;	/* sent with packet generation off */
};

/* Where one window of the stream ends and the next begins: a PSB, and the
 * end of its PSB+ (which the window before it holds too, see blkdec.c). */
struct mt_scan_cut {
	uint64_t psb, end;
	bool on;		/* its PSB+ holds a FUP: packets are on */
};

struct mt_blkscan {
	const struct pt_config *cfg;	/* the decoder's: errata, CPU */
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
	bool failed;		/* the source could not be read, or memory ran out */
	uint64_t psb;		/* the PSB+ being read */
	uint64_t npsbs_seen;	/* PSBs found so far */
	size_t psb_tsc;		/* the first TSC mark of the PSB+ being read */
	bool sync;		/* the next piece starts with a search for a PSB */
	bool done;		/* at the stream's end (or it could not be read) */
	bool probe;		/* only looking for a CYC packet, keeping nothing */
	bool on, in_psb, psb_on, psb_mode, cyc, oom;
	/* What it found and the decoder may still ask for, in stream order
	 * (mt_blkscan_forget()): PSBs, TSC packets, window ends not reached
	 * yet. */
	uint64_t *psbs;
	size_t npsbs, pcap;
	struct mt_tsc_mark *tscs;
	size_t ntscs, tcap;
	struct mt_scan_cut *cuts;
	size_t ncuts, ccap;
};

/* Starts over at SRC's start, windows of WINDOW bytes; what was found is
 * kept (the configuration and pieces' size too). */
void mt_blkscan_start(struct mt_blkscan *s, const struct mt_pt_source *src, uint64_t window);
/* Scans the next piece; false when there is none (the stream's end, or it
 * could not be read: then s->failed). */
bool mt_blkscan_more(struct mt_blkscan *s);
/* Whether the stream holds CYC packets (they decide how it is decoded):
 * the scan, until it finds one, keeping nothing; then it starts over. */
bool mt_blkscan_has_cyc(struct mt_blkscan *s, const struct mt_pt_source *src, uint64_t window);
/* Drops the first window end, now that decoding has reached it. */
void mt_blkscan_take_cut(struct mt_blkscan *s);
/* The PSBs found at or after OFF (those it still holds). */
uint64_t mt_blkscan_psbs_from(const struct mt_blkscan *s, uint64_t off);
/* Drops what the decoder can no longer ask for, decoding from START on
 * with its time at TSC; whether any TSC mark lay before START. */
bool mt_blkscan_forget(struct mt_blkscan *s, uint64_t start, uint64_t tsc);
/* The exact bounds of an enable at time TSC with the decoder at OFF;
 * whether no TSC mark is known before it. */
bool mt_blkscan_bounds(struct mt_blkscan *s, uint64_t off, uint64_t tsc,
		       struct mt_tsc_bounds *out);
/* The most its arrays held, in bytes. */
uint64_t mt_blkscan_held(const struct mt_blkscan *s);
void mt_blkscan_fini(struct mt_blkscan *s);

#endif
