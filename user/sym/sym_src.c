// SPDX-License-Identifier: MIT
/* Source lines and inline chains from DWARF, through libdw/libdwfl. */
#include "sym/sym_internal.h"
#include "util/mt_array.h"

#include <errno.h>
#include <dwarf.h>
#include <search.h>
#include <stdlib.h>

struct inline_name {
	const char *dwarf;	/* the linkage name as stored in DWARF: the key */
	char *demangled;
};

/*
 * Takes the DWARF lock. Without WAIT, gives up (-EAGAIN) while another
 * thread holds it, reading the DWARF (the first query: seconds for a
 * large binary) or querying it: a caller that can go on without the
 * answer does not stand idle for it.
 */
static int lock_dwarf(struct mt_sym_file *f, int wait)
{
	if (!wait)
		return pthread_mutex_trylock(&f->dwarf_lock) ? -EAGAIN : 0;
	pthread_mutex_lock(&f->dwarf_lock);
	return 0;
}

int mt_sym_source(struct mt_sym_file *f, uint64_t addr, struct mt_src_loc *loc)
{
	const char *file = NULL;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	int lineno = 0;

	lock_dwarf(f, 1);
	mod = mt_sym_dwarf_module(f);
	line = mod ? dwfl_module_getsrc(mod, addr) : NULL;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	pthread_mutex_unlock(&f->dwarf_lock);
	if (!file)
		return -1;
	loc->file = file;
	loc->line = lineno;
	return 0;
}

static int cmp_inline_name(const void *a, const void *b)
{
	const struct inline_name *x = a, *y = b;

	return x->dwarf < y->dwarf ? -1 : x->dwarf > y->dwarf;
}

/* The demangled form of a DWARF linkage name, computed once per name. */
static const char *demangled(struct mt_sym_file *f, const char *linkage)
{
	struct inline_name key = { linkage, NULL }, *n, **found;

	found = tfind(&key, &f->inline_names, cmp_inline_name);
	if (found)
		return (*found)->demangled ? (*found)->demangled : linkage;
	n = malloc(sizeof(*n));
	if (!n)
		return linkage;
	n->dwarf = linkage;
	n->demangled = mt_sym_demangle(linkage);
	if (!tsearch(n, &f->inline_names, cmp_inline_name)) {
		free(n->demangled);
		free(n);
		return linkage;
	}
	return n->demangled ? n->demangled : linkage;
}

static void free_inline_name(void *p)
{
	struct inline_name *n = p;

	free(n->demangled);
	free(n);
}

void mt_sym_free_inline_names(struct mt_sym_file *f)
{
	tdestroy(f->inline_names, free_inline_name);
	f->inline_names = NULL;
}

static const char *die_function_name(struct mt_sym_file *f, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (s)
		return demangled(f, s);
	s = dwarf_diename(die);
	return s ? s : "[unknown inline]";
}

static void call_site(Dwarf_Die *cu, Dwarf_Die *die, struct mt_src_loc *loc)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx, line;
	size_t nfiles;

	loc->file = NULL;
	loc->line = 0;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line))
		loc->line = (int)line;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && idx < nfiles)
		loc->file = dwarf_filesrc(files, idx, NULL, NULL);
}

int mt_sym_inlines(struct mt_sym_file *f, uint64_t addr, struct mt_inline_frame *frames,
		   int max)
{
	Dwarf_Die *cu, *scopes = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias = 0;
	int n, out = 0;

	lock_dwarf(f, 1);
	mod = mt_sym_dwarf_module(f);
	cu = mod ? dwfl_module_addrdie(mod, addr, &bias) : NULL;
	n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	/* Scopes run innermost first and end at the out-of-line function. */
	for (int i = 0; i < n && out < max; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		frames[out].function = die_function_name(f, &scopes[i]);
		call_site(cu, &scopes[i], &frames[out].call);
		out++;
	}
	pthread_mutex_unlock(&f->dwarf_lock);
	free(scopes);
	return out;
}

struct range_list {
	struct mt_inline_range *v;
	size_t n, cap;
	uint64_t bias;
	int oom;
};

static void add_ranges(struct mt_sym_file *f, Dwarf_Die *die, int depth, struct range_list *l)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (MT_ARRAY_RESERVE(l->v, l->cap, l->n, 1)) {
			l->oom = 1;
			return;
		}
		l->v[l->n++] = (struct mt_inline_range){ lo + l->bias, hi + l->bias,
							 die_function_name(f, die), depth };
	}
}

/* The inlined subroutines under DIE (lexical blocks included, nested
 * functions left out), DEPTH levels deep. */
static void walk_inlined(struct mt_sym_file *f, Dwarf_Die *die, int depth, struct range_list *l)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child))
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine) {
			add_ranges(f, &child, depth + 1, l);
			walk_inlined(f, &child, depth + 1, l);
		} else if (tag == DW_TAG_lexical_block) {
			walk_inlined(f, &child, depth, l);
		}
	} while (!l->oom && !dwarf_siblingof(&child, &child));
}

/* The concrete subprogram under SCOPE (a CU or namespace) holding PC. */
static int find_subprogram(Dwarf_Die *scope, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) > 0) {
			*out = child;
			return 1;
		}
		if (tag == DW_TAG_namespace && find_subprogram(&child, pc, out))
			return 1;
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

int mt_sym_inline_ranges(struct mt_sym_file *f, uint64_t addr, int wait,
			 struct mt_inline_range **out)
{
	struct range_list l = { 0 };
	Dwarf_Die *cu, fn;
	Dwfl_Module *mod;
	Dwarf_Addr bias = 0;

	*out = NULL;
	if (lock_dwarf(f, wait))
		return -EAGAIN;
	mod = mt_sym_dwarf_module(f);
	cu = mod ? dwfl_module_addrdie(mod, addr, &bias) : NULL;
	l.bias = bias;
	/* Not through dwarf_getscopes(): inside inlined code its scopes go on
	 * through the inlined function's abstract definition. */
	if (cu && find_subprogram(cu, addr - bias, &fn))
		walk_inlined(f, &fn, 0, &l);
	pthread_mutex_unlock(&f->dwarf_lock);
	if (l.oom) {
		free(l.v);
		return -ENOMEM;
	}
	*out = l.v;
	return (int)l.n;
}
