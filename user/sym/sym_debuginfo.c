// SPDX-License-Identifier: MIT
/*
 * The dwfl that answers DWARF queries: the binary and its debug file handed
 * to libdw with their compressed sections unpacked (sym_unpack.c).
 *
 * dwfl_standard_find_debuginfo() does the search, but when it finds the
 * file by build-id it also keeps the libelf handle it checked the file
 * with, and libdw then reads that handle, not the fd returned. So the
 * build-id search comes first here, as dwfl makes it (DIR/.build-id/xx/
 * rest.debug in each absolute directory of the search path, the file's
 * build-id the module's); anything else (.gnu_debuglink, debuginfod, a
 * dwz file) is left to dwfl, whose fd is then unpacked.
 */
#include "sym/sym_internal.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the ELF file at FD has the build-id ID (LEN bytes). */
static bool has_build_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	bool same = elf && dwelf_elf_gnu_build_id(elf, &got) == len && !memcmp(got, id, len);

	elf_end(elf);
	return same;
}

/* The debug file for build-id ID in the directories of PATH, or -1; its
 * name goes in *NAME (malloc'ed). */
static int open_by_build_id(const char *path, const unsigned char *id, int len, char **name)
{
	char *dirs = strdup(path), *rest = dirs, *dir;
	char file[PATH_MAX];
	int fd = -1;

	while (dirs && fd < 0 && (dir = strsep(&rest, ":"))) {
		size_t n;

		if (*dir == '+' || *dir == '-')
			dir++;
		if (*dir != '/')
			continue;
		n = (size_t)snprintf(file, sizeof(file), "%s/.build-id/%02x/", dir, id[0]);
		for (int i = 1; i < len && n < sizeof(file); i++)
			n += (size_t)snprintf(file + n, sizeof(file) - n, "%02x", id[i]);
		if (n + sizeof(".debug") > sizeof(file))
			continue;
		strcpy(file + n, ".debug");
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !has_build_id(fd, id, len)) {
			close(fd);
			fd = -1;
		}
	}
	free(dirs);
	if (fd >= 0 && !(*name = strdup(file))) {
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
	const unsigned char *id;
	GElf_Addr vaddr;
	int fd = -1, len, plain;

	/* A second call is for the dwz file, which has a build-id of its own. */
	if (!f->debuginfo_asked && (len = dwfl_module_build_id(mod, &id, &vaddr)) > 0)
		fd = open_by_build_id(f->debug_path, id, len, debuginfo_file_name);
	f->debuginfo_asked = true;
	if (fd < 0)
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
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
	int fd = open(path, O_RDONLY | O_CLOEXEC), plain;

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
