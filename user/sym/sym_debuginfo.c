// SPDX-License-Identifier: MIT
/*
 * The dwfl that answers DWARF queries: the binary and its debug file handed
 * to libdw with their compressed sections unpacked (sym_unpack.c).
 *
 * The debug file is the one the symbols' dwfl found, or is found as it
 * would be (sym_find_debug.c), a search that returns the fd libdw will
 * read; a dwz file, asked for second, is left to libdwfl's standard
 * search. Either file is then unpacked.
 */
#include "sym/sym_internal.h"
#include "util/regfile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PATH opened, its name in *NAME (malloc'ed); -1 if it cannot be. */
static int open_named(const char *path, char **name)
{
	int fd = mt_open_regular(path, NULL);

	if (fd >= 0 && !(*name = strdup(path))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The DWARF dwfl's find_debuginfo callback. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct mt_sym_file *f = *userdata;
	const char *known = mt_sym_debug_file(f);
	int fd, plain;

	/* A second call is for the dwz file, which has a build-id of its own.
	 * The first needs no search when the symbols' dwfl made it. */
	if (f->debuginfo_asked)
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
	else if (known)
		fd = open_named(known, debuginfo_file_name);
	else
		fd = mt_sym_find_debug(mod, userdata, modname, base, file_name, debuglink_file,
				       debuglink_crc, debuginfo_file_name);
	f->debuginfo_asked = true;
	plain = fd >= 0 ? mt_sym_unpacked(fd) : -1;
	if (plain < 0)
		return fd;
	close(fd);
	return plain;
}

/* PATH unpacked when it has compressed sections (its own DWARF), or -1
 * for dwfl to open PATH. */
static int unpacked(const char *path)
{
	int fd = mt_open_regular(path, NULL), plain;

	if (fd < 0)
		return -1;
	plain = mt_sym_unpacked(fd);
	close(fd);
	return plain;
}

Dwfl_Module *mt_sym_dwarf_module(struct mt_sym_file *f)
{
	if (!f->dwarf_opened) {
		f->dwarf_opened = true;
		f->dwarf_cb = (Dwfl_Callbacks){
			.find_elf = dwfl_build_id_find_elf,
			.find_debuginfo = find_debuginfo,
			.section_address = dwfl_offline_section_address,
		};
		f->dwarf_mod = mt_sym_report(f, &f->dwarf_dwfl, &f->dwarf_cb, unpacked(f->path));
	}
	return f->dwarf_mod;
}
