/* SPDX-License-Identifier: MIT */
/*
 * Symbolizer: one ELF binary's functions, PLT stubs and source lines.
 *
 * Addresses given to and returned by this API are the binary's own link-time
 * virtual addresses (what `nm` and `readelf` show). A caller holding a
 * run-time address subtracts the mapping's load bias first (see
 * mt_image_bias() in decode/image.h).
 *
 * mt_sym_file_open() returns a negative errno with a one-line message in
 * the caller's buffer (MT_SYM_ERRLEN bytes are always enough); lookups
 * answer NULL or -1 for "not known", which is no error.
 */
#ifndef MTRACE_SYM_H
#define MTRACE_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_SYM_ERRLEN 512
#define MT_SYM_BUILD_ID_MAX 64

struct mt_sym_file;

struct mt_sym {
	uint64_t addr;		/* link-time start address */
	uint64_t size;		/* bytes covered (never 0 in a loaded table) */
	const char *name;	/* demangled when the name was mangled; "" when anon */
	bool plt;		/* synthesized "fn@plt" stub */
	bool anon;		/* no symbol: a function of the call-frame information */
};

/* A source position; file points into the symbolizer's storage. */
struct mt_src_loc {
	const char *file;
	int line;
};

/* One level of inlining: `function` was inlined into the next-outer frame,
 * and the call to it was written at `call` (in the outer function). */
struct mt_inline_frame {
	const char *function;
	struct mt_src_loc call;
};

struct mt_sym_options {
	/*
	 * Where separate debug files are searched, in elfutils'
	 * debuginfo-path syntax: absolute directories are searched by
	 * build-id (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink name;
	 * relative ones are taken relative to the binary's directory.
	 * NULL means ":.debug:/usr/lib/debug".
	 */
	const char *debug_path;
};

/* Loads PATH's symbols (and finds its debug file) into *OUT. 0, or a
 * negative errno (-EBADMSG: not a usable ELF file; -ENOMEM; open()'s). */
int mt_sym_file_open(struct mt_sym_file **out, const char *path, const struct mt_sym_options *opt,
		     char *err, size_t errlen);
void mt_sym_file_close(struct mt_sym_file *f);

/* The function (or PLT stub) covering ADDR, or NULL. Thread-safe. */
const struct mt_sym *mt_sym_lookup(const struct mt_sym_file *f, uint64_t addr);
/*
 * Like mt_sym_lookup(), and sets [*LO, *HI) to the symbol's range or, when
 * no symbol covers ADDR, to the gap between its neighbours (0 and
 * UINT64_MAX at the ends of the table).
 */
const struct mt_sym *mt_sym_find(const struct mt_sym_file *f, uint64_t addr, uint64_t *lo,
				 uint64_t *hi);
/* Number of symbols in the table and the i-th in address order. */
size_t mt_sym_count(const struct mt_sym_file *f);
const struct mt_sym *mt_sym_at(const struct mt_sym_file *f, size_t i);

/* Build-id bytes of the binary; returns their count (0 if it has none). */
size_t mt_sym_build_id(const struct mt_sym_file *f, const uint8_t **bits);
/* The separate debug file in use, or NULL when none was found or needed. */
const char *mt_sym_debug_file(const struct mt_sym_file *f);
/* ELF type (ET_EXEC, ET_DYN) of the binary. */
int mt_sym_elf_type(const struct mt_sym_file *f);

/*
 * Source line of ADDR from DWARF. Returns 0 and fills LOC, or -1 when the
 * binary has no line information for ADDR. Thread-safe.
 */
int mt_sym_source(struct mt_sym_file *f, uint64_t addr, struct mt_src_loc *loc);

/*
 * Inline chain at ADDR, innermost first: frames[0] is the function whose
 * code is at ADDR, inlined into frames[1].function, and so on; the last
 * frame is inlined into the out-of-line function mt_sym_lookup() names.
 * Returns the number of frames stored (at most MAX), 0 when ADDR is not in
 * inlined code or there is no DWARF. Thread-safe.
 */
int mt_sym_inlines(struct mt_sym_file *f, uint64_t addr, struct mt_inline_frame *frames,
		   int max);

/* One address range of an inlined function's code: DEPTH 1 is inlined
 * into the out-of-line function, 2 into a depth-1 frame, and so on. */
struct mt_inline_range {
	uint64_t lo, hi;	/* [lo, hi), in the binary's addresses */
	const char *function;
	int depth;
};

/*
 * Every inline range of the out-of-line function whose code holds ADDR,
 * in one walk of its DWARF (mt_sym_inlines() walks the scopes for every
 * address): the chain at an address is the ranges holding it, by depth.
 * Sets *OUT (malloc'ed; NULL when there are none or on error) and returns
 * the count, or -ENOMEM. Thread-safe. Without WAIT, returns -EAGAIN at
 * once while another thread queries the file's DWARF (or reads it: the
 * first query of a file takes seconds for a large binary with compressed
 * debug sections).
 */
int mt_sym_inline_ranges(struct mt_sym_file *f, uint64_t addr, int wait,
			 struct mt_inline_range **out);

/*
 * Demangles a C++ (Itanium) or Rust name. Returns a malloc'ed string, or
 * NULL when NAME is not mangled (or memory ran out).
 */
char *mt_sym_demangle(const char *name);

#endif
