/* SPDX-License-Identifier: MIT */
/*
 * The packets a stream is made of, by the hundred thousand (TNT, TIP,
 * FUP, timing, PSB+), read without libipt's packet decoder. The scan ahead
 * of the decoder (blkdec.c) needs only each packet's length and, for a
 * few, one field; libipt's pt_pkt_next() costs some 150 instructions a
 * packet there (about 7 % of a stream's decoding), these checks a tenth
 * of that. Everything else, and every packet these rules would not take
 * exactly as libipt does (its dispatch in pt_df_fetch(), its checks in
 * pt_packet.c), is left to libipt: CYC, power and VMX packets, bad or
 * reserved encodings, packets cut by the end of the bytes.
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
 * The packet at P (N > 0 bytes from there to the end): its length, with
 * its type in PK (and for TSC and MODE their payload's value and leaf),
 * or 0 when it is one to ask libipt about.
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

#endif
