// SPDX-License-Identifier: MIT
/* Instruction length and class with Capstone; see insn.h. */
#include "decode/insn.h"

#include <capstone/capstone.h>
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

size_t mt_insn_decode(struct mt_insn_dec *d, const uint8_t *bytes, size_t n, uint64_t ip,
		      enum pt_insn_class *cls)
{
	const uint8_t *p = bytes;
	uint64_t addr = ip;
	size_t left = n;

	if (!cs_disasm_iter(d->cs, &p, &left, &addr, d->insn))
		return 0;
	*cls = classify(d->insn->id);
	return d->insn->size;
}
