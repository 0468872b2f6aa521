/* SPDX-License-Identifier: MIT */
/*
 * Test fixtures built at test time: C sources written into a private
 * temporary directory, compiled there with the system compiler, and facts
 * about the results read back with binutils (an independent witness for
 * what the symbolizer and image builder must find).
 */
#ifndef TEST_DECODE_FIXTURE_H
#define TEST_DECODE_FIXTURE_H

#include "../lib/mt_test.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char fx_root[256];

static inline int fx_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static inline void fx_cleanup(void)
{
	if (fx_root[0])
		nftw(fx_root, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The fixture directory, created on first use and removed at exit. */
static const char *fx_dir(void)
{
	if (!fx_root[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(fx_root, sizeof(fx_root), "%s/mtrace-fx-XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(fx_root))
			mt_fail(__FILE__, __LINE__, "mkdtemp failed");
		atexit(fx_cleanup);
	}
	return fx_root;
}

/* DIR/NAME in a static buffer (one of four, so a few can be in use). */
static const char *fx_path(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", fx_dir(), name);
	return p;
}

static inline void fx_write(const char *name, const char *text)
{
	FILE *f = fopen(fx_path(name), "w");

	MT_ASSERT_MSG(f, "cannot create fixture %s", name);
	fputs(text, f);
	fclose(f);
}

/* Runs a shell command in the fixture directory; fails the case on error. */
static inline void fx_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void fx_sh(const char *fmt, ...)
{
	char cmd[2048];
	int n, rc;
	va_list ap;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", fx_dir());
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	rc = system(cmd);
	MT_ASSERT_MSG(rc == 0, "fixture command failed (%d): %s", rc, cmd);
}

/* Skips the case when a tool the fixture needs is missing. */
static inline void fx_need(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd))
		mt_skip("%s not installed", tool);
}

/* The link-time address of the last symbol nm lists in BINARY named
 * SYMBOL (NULL: any name) at ADDR (0: any address), of a function's type
 * (T, t, W, w) when FUNCS; 0 when there is none. */
static inline uint64_t fx_nm_find(const char *binary, const char *symbol, uint64_t at, int funcs)
{
	char cmd[1024], line[1024], name[512];
	unsigned long long addr, found = 0;
	char type;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", fx_path(binary));
	p = popen(cmd, "r");
	MT_ASSERT(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 &&
		    (!symbol || !strcmp(name, symbol)) && (!at || addr == at) &&
		    (!funcs || strchr("TtWw", type)))
			found = addr;
	pclose(p);
	return found;
}

/* Link-time address of SYMBOL in BINARY according to nm, or 0. */
static inline uint64_t fx_nm(const char *binary, const char *symbol)
{
	return fx_nm_find(binary, symbol, 0, 0);
}

/* Address of the "<LABEL>:" heading in objdump -d output, or 0. */
static inline uint64_t fx_objdump_label(const char *binary, const char *label)
{
	char cmd[1024], line[1024], want[512], got[512];
	unsigned long long addr, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d '%s' 2>/dev/null", fx_path(binary));
	snprintf(want, sizeof(want), "<%s>:", label);
	p = popen(cmd, "r");
	MT_ASSERT(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %511s", &addr, got) == 2 && !strcmp(got, want))
			found = addr;
	pclose(p);
	return found;
}

/* The generator tool and its programs, found next to this test binary
 * (O/san/tests/unit/THIS → O/rel/tests/ptgen/ptgen, O/san/tests/ptgen/). */
static inline void fx_ptgen_paths(char *ptgen, char *progs, size_t len)
{
	char self[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *p;

	MT_ASSERT(n > 0);
	self[n] = 0;
	for (int i = 0; i < 3 && (p = strrchr(self, '/')); i++)
		*p = 0;	/* strip THIS, unit, tests: O/san */
	snprintf(progs, len, "%s/tests/ptgen/programs", self);
	p = strrchr(self, '/');
	MT_ASSERT(p);
	*p = 0;
	snprintf(ptgen, len, "%s/rel/tests/ptgen/ptgen", self);
	if (access(ptgen, X_OK) || access(progs, R_OK))
		mt_skip("needs %s and %s (make O=... %s)", ptgen, progs, ptgen);
}

#endif
