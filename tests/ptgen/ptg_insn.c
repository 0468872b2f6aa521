// SPDX-License-Identifier: MIT
/* Instruction classification with Capstone, cached per address. */
#include "ptg_insn.h"

#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptg_insn_cache {
	const struct ptg_image *img;
	csh cs;
	cs_insn *scratch;
	struct ptg_insn *slot;	/* open addressing, ip 0 = empty */
	size_t nslot, used;
};

struct ptg_insn_cache *ptg_insn_cache_new(const struct ptg_image *img)
{
	struct ptg_insn_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->img = img;
	c->nslot = 1 << 12;
	c->slot = calloc(c->nslot, sizeof(*c->slot));
	if (!c->slot || cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) != CS_ERR_OK) {
		free(c->slot);
		free(c);
		return NULL;
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	c->scratch = cs_malloc(c->cs);
	if (!c->scratch) {
		ptg_insn_cache_free(c);
		return NULL;
	}
	return c;
}

void ptg_insn_cache_free(struct ptg_insn_cache *c)
{
	if (!c)
		return;
	if (c->scratch)
		cs_free(c->scratch, 1);
	cs_close(&c->cs);
	free(c->slot);
	free(c);
}

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

static bool imm_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static bool far_return(unsigned id)
{
	return id == X86_INS_RETF || id == X86_INS_RETFQ || id == X86_INS_IRET ||
	       id == X86_INS_IRETD || id == X86_INS_IRETQ || id == X86_INS_SYSRET ||
	       id == X86_INS_SYSEXIT;
}

static enum ptg_iclass classify(const cs_insn *in, uint64_t *target)
{
	bool direct = imm_target(in, target);

	switch (in->id) {
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INTO:
	case X86_INS_LCALL:
	case X86_INS_LJMP:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
	/* VM exits and entries are far transfers to libipt too. */
	case X86_INS_VMCALL:
	case X86_INS_VMLAUNCH:
	case X86_INS_VMRESUME:
		return PTG_FAR;
	case X86_INS_UD2:
	/* A breakpoint (kprobe, text_poke in progress) in place of an
	 * instruction's first byte: its handler never resumes at the next
	 * byte, the middle of that instruction. For a walk it is an
	 * interrupt at it, the software-interrupt packets FUP + TIP.PGD. */
	case X86_INS_INT3:
		return PTG_FAULT;
	case X86_INS_XBEGIN:
		/* Capstone counts it as a jump; without a transaction abort it
		 * falls through, and libipt decodes it as no branch. */
		return PTG_OTHER;
	case X86_INS_RET:
		return PTG_RET;
	case X86_INS_CALL:
		return direct ? PTG_CALL : PTG_CALL_IND;
	case X86_INS_JMP:
		return direct ? PTG_JMP : PTG_JMP_IND;
	default:
		break;
	}
	/* Every other member of the jump group is conditional (Jcc, LOOPcc,
	 * JrCXZ) and relative. */
	if (in_group(in, CS_GRP_JUMP) && direct)
		return PTG_JCC;
	return PTG_OTHER;
}

static int grow(struct ptg_insn_cache *c)
{
	size_t n = c->nslot * 2;
	struct ptg_insn *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < c->nslot; i++) {
		size_t h;

		if (!c->slot[i].ip)
			continue;
		for (h = (c->slot[i].ip * 0x9e3779b97f4a7c15ull) >> 20; s[h & (n - 1)].ip; h++)
			;
		s[h & (n - 1)] = c->slot[i];
	}
	free(c->slot);
	c->slot = s;
	c->nslot = n;
	return 0;
}

/* The hint-NOP opcode space 0F 18-1F after legacy prefixes and a REX
 * prefix, where CET put ENDBR, RDSSP and INCSSP: never a change of flow. */
static bool hint_nop(const uint8_t *b, size_t len)
{
	size_t i = 0;

	while (i < len && (b[i] == 0xf3 || b[i] == 0xf2 || b[i] == 0x66))
		i++;
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++;
	return i + 1 < len && b[i] == 0x0f && b[i + 1] >= 0x18 && b[i + 1] <= 0x1f;
}

int ptg_insn_get(struct ptg_insn_cache *c, uint64_t ip, struct ptg_insn *out)
{
	uint8_t buf[16];
	const uint8_t *code = buf;
	size_t len, h;
	uint64_t addr = ip;
	struct ptg_insn *e;
	bool decoded;

	for (h = (ip * 0x9e3779b97f4a7c15ull) >> 20;; h++) {
		e = &c->slot[h & (c->nslot - 1)];
		if (e->ip == ip) {
			*out = *e;
			return 0;
		}
		if (!e->ip)
			break;
	}
	len = ptg_image_read(c->img, ip, buf, sizeof(buf));
	decoded = len && cs_disasm_iter(c->cs, &code, &len, &addr, c->scratch);
	/* Capstone 4 does not know every VEX/EVEX instruction (glibc's
	 * AVX-512 string functions) nor CET's RDSSP (libgcc's unwinder). In
	 * 64-bit mode C4/C5/62 always start a VEX/EVEX SIMD instruction and
	 * the hint-NOP space never changes the flow either; the length stays
	 * unknown (0), which only branches would need. */
	if (!decoded && (!len || (buf[0] != 0xc4 && buf[0] != 0xc5 && buf[0] != 0x62 &&
				  !hint_nop(buf, len)))) {
		fprintf(stderr, "ptgen: no instruction at 0x%" PRIx64 "\n", ip);
		return -1;
	}
	if (2 * (c->used + 1) > c->nslot) {
		if (grow(c))
			return -1;
		return ptg_insn_get(c, ip, out);
	}
	e->ip = ip;
	e->size = decoded ? (uint8_t)c->scratch->size : 0;
	e->target = 0;
	e->iclass = decoded ? (uint8_t)classify(c->scratch, &e->target) : PTG_OTHER;
	e->far_ret = decoded && far_return(c->scratch->id);
	c->used++;
	*out = *e;
	return 0;
}

const char *ptg_iclass_name(enum ptg_iclass c)
{
	static const char *const names[] = {
		[PTG_OTHER] = "other", [PTG_JCC] = "jcc", [PTG_JMP] = "jmp",
		[PTG_CALL] = "call", [PTG_JMP_IND] = "jmp-indirect",
		[PTG_CALL_IND] = "call-indirect", [PTG_RET] = "ret", [PTG_FAR] = "far",
		[PTG_FAULT] = "fault",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}
