// SPDX-License-Identifier: MIT
/*
 * The call-heavy real program bench_decode traces (single-stepped by the
 * PT generator): Capstone disassembling its own code with operand details,
 * as a disassembler or a binary-analysis tool would. Capstone's table-driven
 * x86 decoder and printer call small helpers for every operand and every
 * piece of text (MCOperand_*, SStream_concat, libc's vsnprintf), so calls
 * and returns come every few dozen instructions on a real, balanced call
 * tree, unlike the random walk's drifting stack.
 *
 * Usage: workload_disasm [BYTES, default 4096]
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096, operands = 0;
	const uint8_t *code = (const uint8_t *)(uintptr_t)cs_disasm;
	uint64_t addr = (uintptr_t)code;
	Dl_info di;
	cs_insn *in;
	csh h;

	/* The bytes are Capstone's own mapped text: always there, never copied. */
	if (!dladdr((void *)(uintptr_t)cs_disasm, &di) || !di.dli_fbase ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		fprintf(stderr, "workload_disasm: cannot open Capstone\n");
		return 1;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in)
		return 1;
	while (size) {
		if (!cs_disasm_iter(h, &code, &size, &addr, in)) {
			/* Data or an encoding Capstone 4 does not know: skip a byte. */
			code++;
			size--;
			addr++;
			continue;
		}
		operands += in->detail->x86.op_count;
	}
	printf("%zu operands\n", operands);
	cs_free(in, 1);
	cs_close(&h);
	return 0;
}
