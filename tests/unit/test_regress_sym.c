// SPDX-License-Identifier: MIT
/*
 * Regression tests for symbolizer bugs found by fuzzing
 * (tests/fuzz/fuzz_sym.c and fuzz_decode.c; reproducers in their corpora,
 * regress-*).
 */
#include "mt_elf_fixture.h"
#include "mt_test.h"

#include "sym/sym.h"

#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes BYTES to a fresh temporary file; its path goes to PATH. */
static void write_temp(char *path, size_t len, const void *bytes, size_t n)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir;
	int fd;

	snprintf(path, len, "%s/mt-regress-sym.XXXXXX", tmp);
	fd = mkstemp(path);
	MT_ASSERT_MSG(fd >= 0, "mkstemp %s", path);
	MT_ASSERT_EQ(write(fd, bytes, n), n);
	close(fd);
}

/*
 * A valid shared object with one loadable segment and no section headers,
 * hence no symbol table, no PLT: zero function symbols. Loading it sorted
 * an empty, never-allocated vector with qsort(NULL, 0, ...), undefined
 * behaviour that UBSan builds abort on (sym_file.c, build_table). A hostile
 * bundle can embed such a file, so the decoder reached it too.
 */
MT_TEST(no_function_symbols)
{
	struct mt_elf_fixture elf = mt_elf_fixture(0, 0, sizeof(struct mt_elf_fixture));
	char path[256], err[MT_SYM_ERRLEN] = "";
	struct mt_sym_file *f;

	write_temp(path, sizeof(path), &elf, sizeof(elf));
	mt_sym_file_open(&f, path, NULL, err, sizeof(err));
	unlink(path);
	MT_ASSERT_MSG(f, "a section-less shared object is usable ELF: %s", err);
	MT_ASSERT_EQ(mt_sym_count(f), 0);
	MT_ASSERT(mt_sym_lookup(f, 0) == NULL);
	MT_ASSERT(mt_sym_lookup(f, 0x40) == NULL);
	mt_sym_file_close(f);
}
