/* SPDX-License-Identifier: MIT */
/*
 * The packets a stream is made of, by the hundred thousand (TNT, TIP,
 * FUP, timing, CYC, PSB+), read without libipt's packet decoder. The scan
 * ahead of the decoder (blkscan.c) and the reading of exact times
 * (cyctime.c) need only each packet's length and, for a few, one field;
 * libipt's pt_pkt_next() costs some 150 instructions a packet there
 * (about 7 % of a stream's decoding), these checks a tenth of that. Everything else, and every packet these rules would not take
 * exactly as libipt does (its dispatch in pt_df_fetch(), its checks in
 * pt_packet.c), is left to libipt: power and VMX packets, bad or reserved
 * encodings, packets cut by the end of the bytes.
 * test_decode_ptquick holds the two to the same answers byte for byte.
 */
#ifndef MTRACE_DECODE_PTQUICK_H
#define MTRACE_DECODE_PTQUICK_H

#include <intel-pt.h>

#include <stddef.h>
#include <stdint.h>

static inline uint64_t mt_ptq_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/*
 * A CYC packet (SDM "Cycle Count (CYC) Packet"): 5 bits of the count in its
 * first byte, 7 in each byte after while the one before has its Exp bit.
 * libipt takes at most 8 of those bytes (a 9th would shift past 64 bits,
 * a bad packet); anything longer, or cut by the end, is left to it.
 */
static inline size_t mt_ptq_cyc(const uint8_t *p, size_t n, struct pt_packet *pk)
{
	uint64_t v = p[0] >> 3;
	size_t len = 1;

	for (uint8_t more = p[0] & 4; more; len++) {
		if (len == n || len > 8)
			return 0;
		v |= (uint64_t)(p[len] >> 1) << (7 * len - 2);
		more = p[len] & 1;
	}
	pk->type = ppt_cyc;
	pk->payload.cyc.value = v;
	return len;
}

/*
 * The packet at P (N > 0 bytes from there to the end): its length, with
 * its type in PK (and the payload's value for TSC and CYC, its ratio for
 * CBR, its leaf for MODE), or 0 when it is one to ask libipt about.
 */
static inline size_t mt_ptq_packet(const uint8_t *p, size_t n, struct pt_packet *pk)
{
	/* Bytes of a TIP-family packet's IP by its IPBytes field (SDM "IP
	 * Compression"); 0xff: reserved, a bad packet. */
	static const uint8_t ip_bytes[8] = { 0, 2, 4, 6, 6, 0xff, 8, 0xff };
	uint8_t b = p[0], sz;

	switch (b) {
	case 0x00:
		pk->type = ppt_pad;
		return 1;
	case 0x02:	/* the extended opcodes */
		if (n < 2)
			return 0;
		switch (p[1]) {
		case 0x82:
			if (n < 16)
				return 0;
			for (unsigned int i = 2; i < 16; i += 2)
				if (p[i] != 0x02 || p[i + 1] != 0x82)
					return 0;
			pk->type = ppt_psb;
			return 16;
		case 0x23:
			pk->type = ppt_psbend;
			return 2;
		case 0xf3:
			pk->type = ppt_ovf;
			return 2;
		case 0x03:
			if (n < 4)
				return 0;
			pk->type = ppt_cbr;
			pk->payload.cbr.ratio = p[2];
			return 4;
		case 0xa3:	/* a TNT without its stop bit is bad */
			if (n < 8 || !mt_ptq_le(p + 2, 6))
				return 0;
			pk->type = ppt_tnt_64;
			return 8;
		default:
			return 0;
		}
	case 0x19:
		if (n < 8)
			return 0;
		pk->type = ppt_tsc;
		pk->payload.tsc.tsc = mt_ptq_le(p + 1, 7);
		return 8;
	case 0x59:
		if (n < 2)
			return 0;
		pk->type = ppt_mtc;
		return 2;
	case 0x99:
		if (n < 2 || ((p[1] & 0xe0) != pt_mol_exec && (p[1] & 0xe0) != pt_mol_tsx))
			return 0;
		pk->type = ppt_mode;
		pk->payload.mode.leaf = (enum pt_mode_leaf)(p[1] & 0xe0);
		return 2;
	default:
		break;
	}
	if ((b & 3) == 3)
		return mt_ptq_cyc(p, n, pk);
	if (!(b & 1)) {		/* 0x00 and 0x02 aside, an even byte is a short TNT */
		pk->type = ppt_tnt_8;
		return 1;
	}
	switch (b & 0x1f) {
	case 0x0d:
		pk->type = ppt_tip;
		break;
	case 0x1d:
		pk->type = ppt_fup;
		break;
	case 0x11:
		pk->type = ppt_tip_pge;
		break;
	case 0x01:
		pk->type = ppt_tip_pgd;
		break;
	default:
		return 0;
	}
	sz = ip_bytes[b >> 5];
	return sz != 0xff && n > sz ? (size_t)sz + 1 : 0;
}

/* The packet at OFF in PKT's bytes read by libipt; its length in *LEN.
 * libipt reads a packet alone, wherever the decoder was. */
static inline int mt_ptq_libipt_packet(struct pt_packet_decoder *pkt, uint64_t off,
				       struct pt_packet *pk, size_t *len)
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

/* The packet at OFF of the N bytes at P (PKT's bytes): read here when it
 * can be, else by libipt. 0, or libipt's error for a bad packet. */
static inline int mt_ptq_read(struct pt_packet_decoder *pkt, const uint8_t *p, size_t n,
			      uint64_t off, struct pt_packet *pk, size_t *len)
{
	*len = off < n ? mt_ptq_packet(p + off, n - off, pk) : 0;
	return *len ? 0 : mt_ptq_libipt_packet(pkt, off, pk, len);
}

/* Puts PKT where libipt's own reading from its sync point FROM stops at
 * the bad packet at OFF: at OFF, synced at FROM (where its forward sync
 * looks from depends on both). */
static inline void mt_ptq_walk_to(struct pt_packet_decoder *pkt, uint64_t from, uint64_t off)
{
	uint64_t at = from;
	struct pt_packet pk;

	if (pt_pkt_sync_set(pkt, from) < 0)
		return;
	while (at < off && pt_pkt_next(pkt, &pk, sizeof(pk)) >= 0 && !pt_pkt_get_offset(pkt, &at))
		;
}

#endif
