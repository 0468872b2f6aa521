// SPDX-License-Identifier: MIT
/*
 * Where a binary's debug file is, looked for as libdwfl's standard search
 * looks, with its checks:
 *
 * - by build-id: DIR/.build-id/xx/rest.debug in each absolute directory
 *   DIR of the search path;
 * - by .gnu_debuglink: the name the link holds (or, without a link, the
 *   binary's name + ".debug", and then its name itself) in the binary's
 *   directory for an empty element of the path, under it for a relative
 *   one, and for an absolute one DIR followed by the binary's directory or
 *   by each tail of it (/usr/lib/debug/usr/lib/x86_64-linux-gnu, then
 *   /usr/lib/debug/lib/x86_64-linux-gnu, ...); then again from the
 *   binary's real path when it is a symlink.
 *
 * A file is not the debug file when its build-id is not the binary's, when
 * neither has one and its CRC is not the link's (unless the path's '-'
 * says not to check), or when it is the binary itself.
 *
 * The search is made here, not by dwfl_standard_find_debuginfo(), for two
 * reasons. That function keeps the libelf handle it checked a file with,
 * and libdw then reads that handle rather than the fd returned, so the
 * copy sym_debuginfo.c unpacks would go unread. And when it finds nothing,
 * it asks debuginfod: libdw 0.188 then dlopens libdebuginfod (with libcurl
 * and OpenSSL: 12 ms of CPU and 470 page faults) even when no server is
 * set, although debuginfod answers nothing without one. So libdwfl's
 * search, debuginfod included, runs only when DEBUGINFOD_URLS names a
 * server and nothing was found here.
 */
#include "sym/sym_internal.h"
#include "util/regfile.h"

#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* What the debug file of a binary must be. */
struct wanted {
	const unsigned char *id;	/* the binary's build-id (idlen > 0) */
	int idlen;
	uint32_t crc;			/* the link's CRC */
	dev_t dev;			/* the binary itself, never its debug file */
	ino_t ino;
};

/* Whether the ELF file at FD has the build-id ID (LEN bytes). */
static bool has_build_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	bool same = elf && dwelf_elf_gnu_build_id(elf, &got) == len && !memcmp(got, id, len);

	elf_end(elf);
	return same;
}

/* Whether the contents of FD have the CRC-32 (zlib's, as the link's) CRC. */
static bool has_crc(int fd, uint32_t crc)
{
	unsigned long got = crc32_z(0, NULL, 0);
	struct stat st;
	uint8_t *p;

	if (fstat(fd, &st) || st.st_size < 0)
		return false;
	if (!st.st_size)
		return got == crc;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return false;
	got = crc32_z(got, p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
	return got == crc;
}

/* The file at FD passes W's checks (CHECK: the CRC's too). */
static bool is_wanted(const struct wanted *w, int fd, bool check)
{
	struct stat st;

	if (fstat(fd, &st) || (st.st_dev == w->dev && st.st_ino == w->ino))
		return false;
	if (w->idlen > 0)
		return has_build_id(fd, w->id, w->idlen);
	return !check || has_crc(fd, w->crc);
}

/* [DIR/][SUB/]NAME opened when it is the file W wants, else -1; its name
 * goes in *OUT (malloc'ed). */
static int try_file(const struct wanted *w, const char *dir, const char *sub, const char *name,
		    bool check, char **out)
{
	char file[PATH_MAX];
	int n = snprintf(file, sizeof(file), "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "",
			 sub ? sub : "", sub ? "/" : "", name);
	int fd;

	if (n < 0 || (size_t)n >= sizeof(file))
		return -1;
	/* NAME may come from the binary's .gnu_debuglink: anything. */
	fd = mt_open_regular(file, NULL);
	if (fd >= 0 && (!is_wanted(w, fd, check) || !(*out = strdup(file)))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int open_by_build_id(const char *path, const struct wanted *w, char **out)
{
	const unsigned char *id = w->id;
	char *dirs = strdup(path), *rest = dirs, *dir;
	char name[2 * 64 + sizeof(".build-id/xx/.debug")];
	size_t n;
	int fd = -1;

	if (w->idlen <= 0 || w->idlen > 64) {
		free(dirs);
		return -1;
	}
	n = (size_t)snprintf(name, sizeof(name), ".build-id/%02x/", id[0]);
	for (int i = 1; i < w->idlen; i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%02x", id[i]);
	snprintf(name + n, sizeof(name) - n, ".debug");
	while (dirs && fd < 0 && (dir = strsep(&rest, ":"))) {
		if (*dir == '+' || *dir == '-')
			dir++;
		if (*dir == '/')
			fd = try_file(w, dir, NULL, name, false, out);
	}
	free(dirs);
	return fd;
}

/* NAME, and BASE when the name was made up, under DIR/SUB. */
static int try_names(const struct wanted *w, const char *dir, const char *sub, const char *name,
		     const char *base, bool check, char **out)
{
	int fd = try_file(w, dir, sub, name, check, out);

	return fd < 0 && base ? try_file(w, dir, sub, base, check, out) : fd;
}

/* The debug file of the binary at FILE by the link LINK (NULL: none) in
 * the directories of PATH; see the top of this file. */
static int open_by_link(const char *path, const char *file, const char *link,
			const struct wanted *w, char **out)
{
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	char *dirs = strdup(path), *rest = dirs, *el;
	char *dir = slash ? strndup(file, (size_t)(slash - file)) : NULL;
	char made[NAME_MAX + sizeof(".debug")];
	bool check = true;
	int fd = -1;

	if (!dirs || (slash && !dir) || strlen(base) > NAME_MAX)
		goto out;
	if (!link) {
		snprintf(made, sizeof(made), "%s.debug", base);
		link = made;
	}
	/* A leading sign on the whole path sets the default for its elements. */
	if (*rest == '+' || *rest == '-')
		check = *rest++ == '+';
	while (fd < 0 && (el = strsep(&rest, ":"))) {
		bool crc = check;
		const char *sub;

		if (*el == '+' || *el == '-')
			crc = *el++ == '+';
		/* A made-up name has no CRC to check; a zero CRC is none. */
		crc = crc && link != made && w->crc;
		if (!*el) {
			fd = try_file(w, dir, NULL, link, crc, out);
			continue;
		}
		if (*el != '/') {
			fd = try_names(w, dir, el, link, link == made ? base : NULL, crc, out);
			continue;
		}
		if (!dir || *dir != '/')
			continue;
		for (sub = dir; fd < 0;) {
			sub = strchr(sub, '/');
			if (sub && !*++sub)
				break;
			fd = try_names(w, el, sub, link, link == made ? base : NULL, crc, out);
			if (!sub)
				break;
		}
	}
out:
	free(dirs);
	free(dir);
	return fd;
}

/* Whether debuginfod would ask a server: without one it finds nothing. */
static bool debuginfod_has_server(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

int mt_sym_find_debug(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		      char **debuginfo_file_name)
{
	const struct mt_sym_file *f = *userdata;
	struct wanted w = { .crc = debuglink_crc };
	GElf_Addr vaddr;
	struct stat st;
	int fd;

	w.idlen = dwfl_module_build_id(mod, &w.id, &vaddr);
	fd = open_by_build_id(f->debug_path, &w, debuginfo_file_name);
	if (fd < 0 && file_name) {
		if (!stat(file_name, &st)) {
			w.dev = st.st_dev;
			w.ino = st.st_ino;
		}
		fd = open_by_link(f->debug_path, file_name, debuglink_file, &w,
				  debuginfo_file_name);
	}
	if (fd < 0 && file_name) {
		char *real = realpath(file_name, NULL);

		if (real && strcmp(real, file_name))
			fd = open_by_link(f->debug_path, real, debuglink_file, &w,
					  debuginfo_file_name);
		free(real);
	}
	if (fd < 0 && debuginfod_has_server())
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
	return fd;
}
