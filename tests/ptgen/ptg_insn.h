/* SPDX-License-Identifier: MIT */
/*
 * Instruction classification with Capstone: what kind of change of flow an
 * instruction is (the PT packet rules depend only on that), its length and
 * its direct target. Results are cached per address.
 */
#ifndef PTG_INSN_H
#define PTG_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptg_image.h"

enum ptg_iclass {
	PTG_OTHER,	/* no change of flow */
	PTG_JCC,	/* conditional direct jump (incl. LOOP, JRCXZ): TNT */
	PTG_JMP,	/* unconditional direct jump: no packet */
	PTG_CALL,	/* direct near call: no packet, pushes the return */
	PTG_JMP_IND,	/* indirect near jump: TIP */
	PTG_CALL_IND,	/* indirect near call: TIP, pushes the return */
	PTG_RET,	/* near return: TNT (compressed) or TIP */
	PTG_FAR,	/* SYSCALL, INT n, far transfers: leave user tracing */
	PTG_FAULT,	/* UD2 (BUG/WARN sites), INT3 (breakpoints): never completes */
};

struct ptg_insn {
	uint64_t ip;
	uint64_t target;	/* direct branch target */
	uint8_t size;		/* 0: unknown (a SIMD instruction Capstone lacks) */
	uint8_t iclass;		/* enum ptg_iclass */
	bool far_ret;		/* PTG_FAR back to the interrupted code: IRET, SYSRET, SYSEXIT, RETF */
};

struct ptg_insn_cache;

struct ptg_insn_cache *ptg_insn_cache_new(const struct ptg_image *img);
void ptg_insn_cache_free(struct ptg_insn_cache *c);
/* Classifies the instruction at @ip into @out; -1 (with a message) if there
 * is no code there or it does not decode. */
int ptg_insn_get(struct ptg_insn_cache *c, uint64_t ip, struct ptg_insn *out);
const char *ptg_iclass_name(enum ptg_iclass c);

#endif
