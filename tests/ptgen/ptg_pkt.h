/* SPDX-License-Identifier: MIT */
/*
 * One logical CPU's packet stream as the PT hardware would write it for
 * user-only tracing: IP compression against the last IP, TNT accumulation,
 * RET compression, PSB+ cadence, MODE.Exec and timing packets (TSC, TMA,
 * MTC, CBR, CYC) from a synthetic clock. Packets are encoded by libipt's
 * pt_enc_next. The caller (ptg_gen) decides which packet an instruction
 * needs; this layer keeps the hardware state that shapes them.
 */
#ifndef PTG_PKT_H
#define PTG_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_encoder;

/* Synthetic clock and trace configuration (what RTIT_CTL and CPUID say). */
struct ptg_pkt_cfg {
	uint32_t psb_period;	/* bytes between PSB+ (2^(11+PSBFreq)) */
	uint8_t tnt_max;	/* TNT bits buffered before a flush: 6 or 47 */
	bool ret_compression;	/* !DisRETC */
	bool mtc;		/* MTCEn */
	uint8_t mtc_freq;	/* raw MTCFreq: an MTC every 2^mtc_freq ART ticks */
	bool cyc;		/* CYCEn with CycThresh 0 */
	uint8_t cbr;		/* core:bus ratio, also the nominal ratio */
	uint32_t art_ratio;	/* CPUID.15h EBX/EAX with EAX = 1: TSC ticks per ART tick */
};

#define PTG_RETSTACK 64	/* SDM: the decoder's CALL/RET stack holds 64 entries */

struct ptg_pkt_stats {
	size_t psb, tnt_bits, tip, fup, pge, pgd, mtc, tsc, ovf;
};

struct ptg_pkt {
	const struct ptg_pkt_cfg *cfg;
	struct pt_encoder *enc;
	uint8_t scratch[64];
	uint8_t *buf;
	size_t len, cap;
	size_t psb_at;		/* offset of the last PSB */
	uint64_t last_ip;	/* 0 after PSB (SDM: Last IP reset at PSB) */
	uint64_t tnt;
	uint8_t ntnt;
	uint64_t tnt_at;	/* time of the first buffered TNT bit */
	uint64_t rs[PTG_RETSTACK];
	unsigned rs_top, rs_n;
	bool mode_sent;		/* MODE.Exec since the last PSB */
	bool enabled;		/* PacketEn */
	bool trace_en;		/* TraceEn (the module's per-task switch) */
	bool drop;		/* inside an internal buffer overflow */
	bool time_lost;		/* an overflow lost timing packets */
	uint64_t tsc;		/* synthetic time */
	uint64_t cyc_at;	/* time of the last CYC (or TraceEn 0->1) */
	uint64_t next_mtc;	/* time of the next MTC while TraceEn is set */
	bool in_psb;		/* between PSB and PSBEND */
	int err;		/* sticky first error */
	struct ptg_pkt_stats st;
};

int ptg_pkt_init(struct ptg_pkt *p, const struct ptg_pkt_cfg *cfg);
void ptg_pkt_fini(struct ptg_pkt *p);

/* Advances the clock to @tsc, emitting the MTCs that fall in between while
 * TraceEn is set. */
void ptg_pkt_time(struct ptg_pkt *p, uint64_t tsc);
/* TraceEn 0->1 at the current time: TSC+TMA, and PSB+ when one is due. */
void ptg_pkt_trace_on(struct ptg_pkt *p);
/* TraceEn 1->0: flushes buffered TNT (packets are already disabled when
 * this happens in the kernel under user-only tracing). */
void ptg_pkt_trace_off(struct ptg_pkt *p);
/* Before each instruction while enabled: PSB+ with FUP(@ip) when the
 * PacketByteCnt reached the period. */
void ptg_pkt_maybe_psb(struct ptg_pkt *p, uint64_t ip);

void ptg_pkt_tnt(struct ptg_pkt *p, bool taken);
void ptg_pkt_tip(struct ptg_pkt *p, uint64_t ip);
/* A near call at @ip with next IP @ret: remembered for RET compression. */
void ptg_pkt_call(struct ptg_pkt *p, uint64_t ret);
/* A near RET to @target: one taken TNT bit if compressible, else TIP. */
void ptg_pkt_ret(struct ptg_pkt *p, uint64_t target);
/* PacketEn 0->1 at @ip: MODE.Exec if needed, TIP.PGE. */
void ptg_pkt_pge(struct ptg_pkt *p, uint64_t ip);
/* PacketEn 1->0 by a far transfer into the kernel: TIP.PGD, IP suppressed
 * (SDM: no CPL-0 IP under user-only tracing). @async_ip != 0 for an
 * interrupt: FUP(@async_ip) first. */
void ptg_pkt_pgd(struct ptg_pkt *p, uint64_t async_ip);
/* An interrupt with both privilege levels traced: FUP(@from), the
 * instruction it interrupted, and TIP(@to), the handler. */
void ptg_pkt_async(struct ptg_pkt *p, uint64_t from, uint64_t to);
/* Internal buffer overflow: packets from now on are lost ... */
void ptg_pkt_ovf_begin(struct ptg_pkt *p);
/* ... until it resolves: OVF, then FUP(@ip) if packets are enabled. */
void ptg_pkt_ovf_end(struct ptg_pkt *p, uint64_t ip);

#endif
