// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the symbolizer. An input that starts with the ELF
 * magic is a binary: it is written to a file (the API takes paths) and
 * loaded, and then every query the decoder makes is asked of it. Any other
 * input is a symbol name for the demangler, which sees every name a binary
 * carries. A loaded table must keep its documented shape (sorted,
 * non-overlapping, no empty symbol) and lookups must find what it holds.
 * Capture's build-id reader gets each ELF input too (it parses every file
 * the traced, possibly hostile, process maps, as root), and so does uprobe
 * placement, which must give an offset inside the file.
 */
#include "capture/capture_procfs.h"
#include "sym/sym.h"
#include "trigger/trigger.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], path[300];

/*
 * libdw (elfutils 0.188) can allocate dwarf_getscopes()' result and still
 * return 0 on corrupt DWARF, never handing the array out: a leak inside
 * elfutils that no caller can avoid (reproduced with libdw alone). It is
 * suppressed by that name only, so leaks in our own code still fail. The
 * name is only on the stack with the slow unwinder: libdw has no frame
 * pointers.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:dwarf_getscopes\n";
}

/* Quiet on success: no list of the suppressions used at exit. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_sym: %s\n", what);
		abort();
	}
}

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir;

	(void)argc, (void)argv;
	/* A private, empty directory: it is also the only debug-file search
	 * path, so no input can pull in files from the machine's debug dirs. */
	snprintf(dir, sizeof(dir), "%s/fuzz_sym.XXXXXX", tmp);
	must(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/input.elf", dir);
	atexit(cleanup);
	return 0;
}

static int write_input(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, data, size);
	close(fd);
	return n == (ssize_t)size ? 0 : -1;
}

/* Source lines and inline chains for one address: answers must be usable. */
static void query_dwarf(struct mt_sym_file *f, uint64_t addr)
{
	struct mt_inline_frame frames[8];
	struct mt_inline_range *r;
	struct mt_src_loc loc;
	int n;

	if (mt_sym_source(f, addr, &loc) == 0)
		must(loc.file && strlen(loc.file) < 1u << 20, "source file name");
	n = mt_sym_inlines(f, addr, frames, 8);
	must(n >= 0 && n <= 8, "inline frame count");
	for (int i = 0; i < n; i++)
		must(frames[i].function && strlen(frames[i].function) < 1u << 20 &&
			     (!frames[i].call.file || strlen(frames[i].call.file) < 1u << 20),
		     "inline frame names");
	n = mt_sym_inline_ranges(f, addr, 1, &r);
	for (int i = 0; i < n; i++)
		must(r[i].function && strlen(r[i].function) < 1u << 20 && r[i].depth > 0,
		     "inline range");
	free(r);
}

/* Places a uprobe on TARGET (a name or 0xADDR) in the input of SIZE bytes. */
static void place_uprobe(const char *target, size_t size)
{
	char text[512], err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec spec;
	uint64_t off;

	snprintf(text, sizeof(text), "uprobe:%s:%s", path, target);
	must(mt_trigger_spec_parse(text, &spec, err, sizeof(err)) == 0, "uprobe spec");
	err[0] = '\0';
	if (mt_trigger_resolve(&spec, &off, err, sizeof(err)) == 0)
		must(off < size, "uprobe offset outside the file");
	else
		must(err[0] != '\0', "uprobe refused without a message");
	mt_trigger_spec_free(&spec);
}

static void check_table(struct mt_sym_file *f)
{
	size_t n = mt_sym_count(f);
	const uint8_t *bits;
	uint64_t lo, hi;

	for (size_t i = 0; i < n; i++) {
		const struct mt_sym *s = mt_sym_at(f, i), *next = mt_sym_at(f, i + 1);

		must(s && s->size > 0 && s->name && strlen(s->name) < 1u << 20, "symbol shape");
		must(!next || (next->addr > s->addr && next->addr - s->addr >= s->size),
		     "table not sorted and disjoint");
		must(mt_sym_lookup(f, s->addr) == s, "lookup of a symbol's start");
		must(mt_sym_lookup(f, s->addr + (s->size - 1)) == s, "lookup of a symbol's end");
		must(mt_sym_find(f, s->addr, &lo, &hi) == s && lo == s->addr &&
			     hi - lo == s->size, "find range");
		/* Bounded DWARF work per input: the first symbols only. */
		if (i < 16)
			query_dwarf(f, s->addr);
	}
	must(mt_sym_at(f, n) == NULL, "symbol past the end");
	if (!mt_sym_find(f, 0, &lo, &hi))
		must(lo == 0 && hi == (n ? mt_sym_at(f, 0)->addr : UINT64_MAX), "gap below the table");
	query_dwarf(f, 0);
	must(mt_sym_build_id(f, &bits) <= 1024, "build-id length");
	(void)mt_sym_debug_file(f);
	must(mt_sym_elf_type(f) == ET_EXEC || mt_sym_elf_type(f) == ET_DYN, "ELF type");
}

static void fuzz_elf(const uint8_t *data, size_t size)
{
	struct mt_sym_options opt = { .debug_path = dir };
	char err[MT_SYM_ERRLEN];
	uint8_t id[MT_BUILD_ID_MAX];
	struct mt_sym_file *f;
	int idlen;

	if (write_input(data, size))
		return;
	idlen = mt_elf_build_id(path, id, sizeof(id));
	must(idlen >= -4095 && idlen <= (int)sizeof(id), "build-id reader result");
	/* Names the seeds define: "entry" in the libraries, "work" in the executables. */
	place_uprobe("entry", size);
	place_uprobe("work", size);
	err[0] = '\0';
	if (mt_sym_file_open(&f, path, &opt, err, sizeof(err))) {
		must(err[0] != '\0', "rejection without a message");
		return;
	}
	check_table(f);
	if (mt_sym_count(f)) {
		char addr[32];

		snprintf(addr, sizeof(addr), "0x%" PRIx64, mt_sym_at(f, 0)->addr);
		if (mt_sym_at(f, 0)->addr)
			place_uprobe(addr, size);
	}
	mt_sym_file_close(f);
}

static void fuzz_name(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *dm;

	if (!name)
		return;
	memcpy(name, data, size);
	name[size] = '\0';
	dm = mt_sym_demangle(name);
	if (dm) {
		must(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'), "demangled a plain name");
		must(strlen(dm) < 1u << 24, "demangled name");
		free(dm);
	}
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, ELFMAG, SELFMAG))
		fuzz_elf(data, size);
	else
		fuzz_name(data, size);
	return 0;
}
