// SPDX-License-Identifier: MIT
/* Instruction length and class with Capstone; see insn.h. */
#include "decode/insn.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdlib.h>

struct mt_insn_dec {
	csh cs;
	cs_insn *insn;
};

struct mt_insn_dec *mt_insn_dec_new(void)
{
	struct mt_insn_dec *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		free(d);
		return NULL;
	}
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return NULL;
	}
	return d;
}

void mt_insn_dec_free(struct mt_insn_dec *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

static enum pt_insn_class classify(unsigned int id)
{
	switch (id) {
	case X86_INS_CALL:
		return ptic_call;
	case X86_INS_RET:
		return ptic_return;
	case X86_INS_JMP:
		return ptic_jump;
	case X86_INS_LCALL:
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_VMCALL:
		return ptic_far_call;
	case X86_INS_RETF:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
	case X86_INS_VMLAUNCH:
	case X86_INS_VMRESUME:
		return ptic_far_return;
	case X86_INS_LJMP:
		return ptic_far_jump;
	default:
		/* Conditional branches included: for the call stack they are
		 * no different from falling through. */
		return ptic_other;
	}
}

/* Prefixes a VEX or EVEX instruction may follow: address size, segment. */
static bool vex_may_follow(uint8_t b)
{
	return b == 0x67 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
	       b == 0x65;
}

/* An opcode of MAP (1: 0F, 2: 0F38, 3: 0F3A) followed by an immediate byte. */
static bool vex_has_imm8(unsigned int map, uint8_t op)
{
	return map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					 (op >= 0xc4 && op <= 0xc6)));
}

/*
 * The length of a VEX (C4, C5) or EVEX (62) instruction, from its layout
 * alone: Capstone 4 does not know every one (the AVX-512 compares into
 * mask registers and the mask moves of glibc's string functions), and in
 * 64-bit mode these bytes start nothing else. Prefixes, the VEX or EVEX
 * bytes, the opcode, ModRM (not for VZEROUPPER and VZEROALL), SIB,
 * displacement, immediate. 0 for any other instruction, an opcode map it
 * does not know, or one not whole in the N bytes.
 */
static size_t vex_length(const uint8_t *b, size_t n)
{
	size_t i = 0, modrm_at;
	unsigned int map, mod, rm;
	bool evex;

	while (i < n && vex_may_follow(b[i]))
		i++;
	if (i + 2 >= n || (b[i] != 0xc4 && b[i] != 0xc5 && b[i] != 0x62))
		return 0;
	evex = b[i] == 0x62;
	map = b[i] == 0xc5 ? 1 : b[i + 1] & (evex ? 0x07 : 0x1f);
	i += b[i] == 0xc5 ? 2 : evex ? 4 : 3;
	if (map < 1 || map > 3 || i >= n)
		return 0;
	if (!evex && map == 1 && b[i] == 0x77)
		return i + 1;
	modrm_at = i + 1;
	if (modrm_at >= n)
		return 0;
	mod = b[modrm_at] >> 6;
	rm = b[modrm_at] & 7;
	i = modrm_at + 1;
	if (mod != 3 && rm == 4) {
		if (i >= n)
			return 0;
		if (mod == 0 && (b[i] & 7) == 5)
			i += 4;		/* SIB without a base: disp32 */
		i++;
	}
	if (mod == 0 && rm == 5)
		i += 4;			/* RIP-relative */
	else if (mod == 1)
		i += 1;
	else if (mod == 2)
		i += 4;
	if (vex_has_imm8(map, b[modrm_at - 1]))
		i++;
	return i <= n && i <= 15 ? i : 0;
}

size_t mt_insn_decode(struct mt_insn_dec *d, const uint8_t *bytes, size_t n, uint64_t ip,
		      enum pt_insn_class *cls)
{
	const uint8_t *p = bytes;
	uint64_t addr = ip;
	size_t left = n, len;

	if (!cs_disasm_iter(d->cs, &p, &left, &addr, d->insn)) {
		len = vex_length(bytes, n);
		if (len)
			*cls = ptic_other;	/* no VEX or EVEX instruction branches */
		return len;
	}
	*cls = classify(d->insn->id);
	return d->insn->size;
}
