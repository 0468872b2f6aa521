/* SPDX-License-Identifier: MIT */
/*
 * The writer's function table: each distinct frame (symbol, binary,
 * address, file, line, flags) gets a dense id once, with its strings
 * cleaned and its display texts built, so that events carry only the id.
 */
#ifndef MTRACE_PF_FUNCS_H
#define MTRACE_PF_FUNCS_H

#include <stddef.h>
#include <stdint.h>

#include "pf_writer.h"

struct pf_func {
	char *symbol;		/* never NULL: "0x<addr>" when unknown */
	char *binary;		/* NULL when unknown */
	char *file;		/* NULL when unknown */
	uint64_t addr;
	uint32_t line;
	uint32_t flags;		/* PF_FRAME_* */
	char *name;		/* slice name: symbol, " [kernel]" appended for kernel frames */
	char *where;		/* "symbol (binary 0xaddr)": the source location's function */
	uint64_t hash;
};

struct pf_funcs {
	struct pf_func *v;
	size_t n, cap;
	uint32_t *slots;	/* open addressing over v: id + 1, 0 = empty */
	size_t nslots;		/* power of two */
};

/* Id of @f's content, added when new; -ENOMEM when out of memory. */
int32_t pf_funcs_intern(struct pf_funcs *t, const struct pf_frame *f);
void pf_funcs_free(struct pf_funcs *t);

#endif
