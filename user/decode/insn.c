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

/* Address-size and segment prefixes, which may precede VEX and EVEX too. */
static bool addr_or_seg_prefix(uint8_t b)
{
	return b == 0x67 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
	       b == 0x65;
}

/* Past the ModRM byte at AT and the SIB and displacement it asks for
 * (64-bit addressing); 0 when they are not all in the N bytes. */
static size_t past_modrm(const uint8_t *b, size_t n, size_t at)
{
	unsigned int mod, rm;
	size_t i = at + 1;

	if (at >= n)
		return 0;
	mod = b[at] >> 6;
	rm = b[at] & 7;
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
	return i <= n ? i : 0;
}

/* An opcode of MAP (1: 0F, 2: 0F38, 3: 0F3A) followed by an immediate byte. */
static bool vex_has_imm8(unsigned int map, uint8_t op)
{
	return map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					 (op >= 0xc4 && op <= 0xc6)));
}

/* A VEX (C4, C5) or EVEX (62) instruction at I: its bytes, the opcode,
 * ModRM (not for VZEROUPPER and VZEROALL), SIB, displacement, immediate. */
static size_t vex_length(const uint8_t *b, size_t n, size_t i)
{
	bool evex = b[i] == 0x62;
	unsigned int map = b[i] == 0xc5 ? 1 : b[i + 1] & (evex ? 0x07 : 0x1f);
	uint8_t op;

	i += b[i] == 0xc5 ? 2 : evex ? 4 : 3;
	if (map < 1 || map > 3 || i >= n)
		return 0;
	op = b[i];
	if (!evex && map == 1 && op == 0x77)
		return i + 1;
	i = past_modrm(b, n, i + 1);
	if (i && vex_has_imm8(map, op))
		i = i < n ? i + 1 : 0;
	return i;
}

/* In the 0F map at I (the opcode after 0F): RDPKRU and WRPKRU (01 EE,
 * 01 EF), the hint-NOP space 18-1F where CET put ENDBR and RDSSP, and
 * INCSSP (F3 0F AE /5, register form). No immediate. */
static size_t legacy_0f_length(const uint8_t *b, size_t n, size_t i)
{
	if (i + 1 >= n)
		return 0;
	if (b[i] == 0x01 && (b[i + 1] == 0xee || b[i + 1] == 0xef))
		return i + 2;
	if ((b[i] >= 0x18 && b[i] <= 0x1f) || (b[i] == 0xae && (b[i + 1] & 0xf8) == 0xe8))
		return past_modrm(b, n, i + 1);
	return 0;
}

/*
 * The length of an instruction Capstone 4 does not know but whose layout
 * says it cannot branch: the VEX and EVEX instructions (the AVX-512
 * compares into mask registers and the mask moves of glibc's string
 * functions: in 64-bit mode C4, C5 and 62 start nothing else), and the few
 * 0F instructions of legacy_0f_length() (libgcc's unwinder, glibc's
 * protection keys). 0 for anything else, or one not whole in the N bytes.
 */
static size_t unknown_length(const uint8_t *b, size_t n)
{
	size_t i = 0, len = 0, esc;
	bool legacy = false;

	while (i < n && (addr_or_seg_prefix(b[i]) || b[i] == 0x66 || b[i] == 0xf2 ||
			 b[i] == 0xf3)) {
		legacy |= !addr_or_seg_prefix(b[i]);
		i++;
	}
	if (i + 2 >= n)
		return 0;
	esc = i + ((b[i] & 0xf0) == 0x40);	/* past a REX prefix */
	if (!legacy && (b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62))
		len = vex_length(b, n, i);
	else if (b[esc] == 0x0f)
		len = legacy_0f_length(b, n, esc + 1);
	return len <= 15 ? len : 0;
}

size_t mt_insn_decode(struct mt_insn_dec *d, const uint8_t *bytes, size_t n, uint64_t ip,
		      enum pt_insn_class *cls)
{
	const uint8_t *p = bytes;
	uint64_t addr = ip;
	size_t left = n, len;

	if (!cs_disasm_iter(d->cs, &p, &left, &addr, d->insn)) {
		len = unknown_length(bytes, n);
		if (len)
			*cls = ptic_other;
		return len;
	}
	*cls = classify(d->insn->id);
	return d->insn->size;
}
