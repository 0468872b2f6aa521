/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbol tables in /proc/kallsyms text form: parsed once into an
 * address-sorted array, used both at capture time (which ranges of kernel,
 * module and BPF JIT text to copy) and at decode time (naming kernel frames).
 * Functions return 0 or a negative errno; messages go to the caller's buffer.
 */
#ifndef MTRACE_KALLSYMS_H
#define MTRACE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct mt_ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL for the core kernel; "bpf" for JIT images */
	char type;		/* nm-style type letter: 't'/'T' for code */
};

struct mt_ksyms {
	struct mt_ksym *syms;	/* sorted by address, then by name */
	size_t n;
	char *strings;		/* owns every name and module string */
};

/*
 * Parses kallsyms text (not necessarily NUL-terminated). -EACCES when every
 * address reads as zero: the reader lacked CAP_SYSLOG or kptr_restrict hides
 * them. -EBADMSG with the line number on a malformed line.
 */
int mt_ksyms_parse(struct mt_ksyms *ks, const char *text, size_t len, char *err, size_t errlen);
void mt_ksyms_free(struct mt_ksyms *ks);

/* The code symbol covering addr (the last one at or below it), or NULL. */
const struct mt_ksym *mt_ksyms_lookup(const struct mt_ksyms *ks, uint64_t addr);
/* The first code symbol above addr, or NULL. */
const struct mt_ksym *mt_ksyms_next_code(const struct mt_ksyms *ks, uint64_t addr);
/* The first symbol with this name (core kernel before modules), or NULL. */
const struct mt_ksym *mt_ksyms_find(const struct mt_ksyms *ks, const char *name);
/* Whether the type letter denotes code (text) symbols. */
int mt_ksym_is_code(char type);

#endif
