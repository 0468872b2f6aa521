/* SPDX-License-Identifier: MIT */
/* Internals shared by the symbolizer's source files. */
#ifndef MTRACE_SYM_INTERNAL_H
#define MTRACE_SYM_INTERNAL_H

#include "sym/sym.h"

#include <elfutils/libdwfl.h>
#include <pthread.h>

struct mt_sym_file {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *path;
	char *debug_path;	/* owned copy of the search path for dwfl */
	int fd;
	int elf_type;
	struct mt_sym *syms;	/* sorted by addr, no overlaps */
	size_t nsyms;
	char **names;		/* owned strings behind syms[].name */
	size_t nnames, names_cap;
	/* dwfl is not thread-safe: DWARF queries take this lock. The first
	 * reads the file's DWARF (libdw decompresses every compressed debug
	 * section then). */
	pthread_mutex_t dwarf_lock;
	/* Demangled inline-function names by DWARF string (tsearch tree). */
	void *inline_names;
};

/* A symbol being collected, before sorting and trimming. */
struct mt_sym_raw {
	uint64_t addr, size, limit;	/* limit: end of the containing section */
	const char *name;		/* borrowed from libelf or owned (plt) */
	int rank;			/* higher wins among aliases */
	bool plt;
};

struct mt_sym_vec {
	struct mt_sym_raw *v;
	size_t n, cap;
};

int mt_sym_vec_push(struct mt_sym_vec *vec, const struct mt_sym_raw *s);
/* Makes F own the malloc'ed string OWNED (freed with F). 0 or -ENOMEM. */
int mt_sym_keep_name(struct mt_sym_file *f, char *owned);

/*
 * Adds "name@plt" entries for the x86-64 PLT stubs of ELF (the main file,
 * which holds .plt and the dynamic relocations). Name strings are
 * malloc'ed and kept by F. Returns 0, or -ENOMEM.
 */
int mt_sym_add_plt(struct mt_sym_file *f, Elf *elf, struct mt_sym_vec *vec);

/* Frees the names mt_sym_inlines() demangled. */
void mt_sym_free_inline_names(struct mt_sym_file *f);

#endif
