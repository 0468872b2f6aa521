/* SPDX-License-Identifier: MIT */
/* Internals shared by the symbolizer's source files. */
#ifndef MTRACE_SYM_INTERNAL_H
#define MTRACE_SYM_INTERNAL_H

#include "sym/sym.h"

#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdbool.h>

struct mt_sym_file {
	/* Symbols: the file and, if it has no .symtab, its debug file's. */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwfl_Callbacks cb;	/* dwfl keeps a pointer to them */
	/* DWARF: a dwfl of its own, opened at the first query, that reads the
	 * files with their compressed sections unpacked (sym_debuginfo.c):
	 * only then, so that a caller that needs no DWARF does not pay. */
	Dwfl *dwarf_dwfl;
	Dwfl_Module *dwarf_mod;
	Dwfl_Callbacks dwarf_cb;
	bool dwarf_opened;
	bool debuginfo_asked;	/* the DWARF dwfl asked for the debug file */
	char *path;
	char *debug_path;	/* owned copy of the search path for dwfl */
	int fd;
	int elf_type;
	struct mt_sym *syms;	/* sorted by addr, no overlaps */
	size_t nsyms;
	char **names;		/* owned strings behind syms[].name */
	size_t nnames, names_cap;
	/* dwfl is not thread-safe: DWARF queries take this lock. The first
	 * reads the file's DWARF (tens of milliseconds for libc's, seconds
	 * for a large binary). */
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

/*
 * Adds to F's table the functions ELF's .eh_frame describes where it has
 * no symbol: anonymous, sized as their FDEs, clipped at what follows
 * (sym_cfi.c). Returns 0, or -ENOMEM.
 */
int mt_sym_add_cfi(struct mt_sym_file *f, Elf *elf);

/*
 * A copy of the ELF file open at FD with its compressed sections stored
 * plain (sym_unpack.c): its fd, or -1 when FD has none, or they cannot all
 * be unpacked. FD stays open either way.
 */
int mt_sym_unpacked(int fd);

/*
 * A dwfl with callbacks CB (kept in F) and the module of F's file, opened
 * from FD (-1: dwfl opens the path; FD is consumed either way), whose
 * userdata is F. NULL when dwfl cannot read the file.
 */
Dwfl_Module *mt_sym_report(struct mt_sym_file *f, Dwfl **dwfl, Dwfl_Callbacks *cb, int fd);

/*
 * The find_debuginfo callback of F's dwfls (userdata F): the debug file of
 * the module's binary by build-id, then by .gnu_debuglink, then, only when
 * a debuginfod server is set, by libdwfl's standard search
 * (sym_find_debug.c). Its fd, or -1.
 */
int mt_sym_find_debug(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		      char **debuginfo_file_name);

/* The module to ask for DWARF (sym_debuginfo.c), opened at the first
 * call; NULL when there is none. Called with dwarf_lock held. */
Dwfl_Module *mt_sym_dwarf_module(struct mt_sym_file *f);

/* Frees the names mt_sym_inlines() demangled. */
void mt_sym_free_inline_names(struct mt_sym_file *f);

#endif
