/* SPDX-License-Identifier: MIT */
/*
 * The last instruction of a block, where libipt does not say enough: its
 * length (for a call's return address) and, when libipt leaves the class
 * as ptic_error, its class. Decoded with Capstone; the instructions
 * Capstone 4 does not know that cannot branch (VEX and EVEX, a few of
 * CET's and the protection keys') get their length from their layout,
 * class ptic_other.
 */
#ifndef MTRACE_DECODE_INSN_H
#define MTRACE_DECODE_INSN_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

struct mt_insn_dec;

struct mt_insn_dec *mt_insn_dec_new(void);
void mt_insn_dec_free(struct mt_insn_dec *d);

/*
 * Decodes the 64-bit instruction in BYTES (N bytes available) at IP.
 * Returns its length and sets *CLS, or 0 when the bytes are no valid
 * instruction. Not thread-safe: one decoder per thread.
 */
size_t mt_insn_decode(struct mt_insn_dec *d, const uint8_t *bytes, size_t n, uint64_t ip,
		      enum pt_insn_class *cls);

#endif
