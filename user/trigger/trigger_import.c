// SPDX-License-Identifier: MIT
/*
 * Which library defines a function a program only imports: a trigger on
 * malloc in /bin/ls must name libc, and the message says which file to
 * name. The program's DT_NEEDED libraries are looked for as the loader
 * finds them in the common case: DT_RPATH (without DT_RUNPATH),
 * LD_LIBRARY_PATH, DT_RUNPATH, then the system's library directories, with
 * $ORIGIN expanded; ld.so.cache and nested dependencies are not read.
 */
#include "trigger/trigger_import.h"
#include "util/regfile.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NEEDED 64

static const char *const system_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib",
};

struct dynamic {
	const char *needed[MAX_NEEDED];
	size_t nneeded;
	const char *rpath, *runpath;
};

/* The dynamic section's names (strings inside ELF's data). */
static void read_dynamic(Elf *elf, struct dynamic *dy)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(dy, 0, sizeof(*dy));
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Dyn d;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_RPATH && d.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!s)
				continue;
			if (d.d_tag == DT_RPATH)
				dy->rpath = s;
			else if (d.d_tag == DT_RUNPATH)
				dy->runpath = s;
			else if (dy->nneeded < MAX_NEEDED)
				dy->needed[dy->nneeded++] = s;
		}
	}
}

/* Whether the ELF file at PATH defines SYMBOL among its dynamic symbols. */
static bool defines(const char *path, const char *symbol)
{
	int fd = mt_open_regular(path, NULL);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	bool found = elf && elf_kind(elf) == ELF_K_ELF && mt_trigger_elf_defines(elf, symbol);

	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* NEEDED looked for in the ':'-separated DIRS ($ORIGIN: ORIGIN); into LIB. */
static bool find_in(const char *dirs, const char *origin, const char *needed, const char *symbol,
		    char *lib, size_t liblen)
{
	while (dirs && *dirs) {
		size_t n = strcspn(dirs, ":");
		char dir[PATH_MAX];

		if (n >= 7 && !strncmp(dirs, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(n - 7), dirs + 7);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)n, dirs);
		if (n && (size_t)snprintf(lib, liblen, "%s/%s", dir, needed) < liblen &&
		    defines(lib, symbol))
			return true;
		dirs += n + (dirs[n] == ':');
	}
	return false;
}

int mt_trigger_import_source(Elf *elf, const char *path, const char *symbol, char *lib,
			     size_t liblen, char *needed, size_t neededlen)
{
	const char *slash = strrchr(path, '/');
	char origin[PATH_MAX], sys[512] = "";
	struct dynamic dy;
	size_t o = 0;

	read_dynamic(elf, &dy);
	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		o += (size_t)snprintf(sys + o, sizeof(sys) - o, "%s%s", i ? ":" : "",
				      system_dirs[i]);
	for (size_t i = 0; i < dy.nneeded; i++) {
		const char *nd = dy.needed[i];

		/* A DT_NEEDED with a slash is a path of its own. */
		if (strchr(nd, '/') ? (snprintf(lib, liblen, "%s", nd), defines(lib, symbol)) :
		    (!dy.runpath && find_in(dy.rpath, origin, nd, symbol, lib, liblen)) ||
		    find_in(getenv("LD_LIBRARY_PATH"), origin, nd, symbol, lib, liblen) ||
		    find_in(dy.runpath, origin, nd, symbol, lib, liblen) ||
		    find_in(sys, origin, nd, symbol, lib, liblen))
			return 1;
	}
	o = 0;
	needed[0] = 0;
	for (size_t i = 0; i < dy.nneeded && o < neededlen; i++)
		o += (size_t)snprintf(needed + o, neededlen - o, "%s%s", i ? ", " : "",
				      dy.needed[i]);
	return 0;
}
