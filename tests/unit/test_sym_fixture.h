/* SPDX-License-Identifier: MIT */
/* The symbolizer tests' shared step: a fixture binary opened. */
#ifndef MTRACE_TEST_SYM_FIXTURE_H
#define MTRACE_TEST_SYM_FIXTURE_H

#include "test_decode_fixture.h"

#include "sym/sym.h"

/* The fixture file NAME opened with DEBUG_PATH (NULL: the default); the
 * case fails with the symbolizer's message when it cannot be. */
static inline struct mt_sym_file *open_ok(const char *name, const char *debug_path)
{
	struct mt_sym_options opt = { debug_path };
	char err[MT_SYM_ERRLEN] = "";
	struct mt_sym_file *f;

	MT_ASSERT_MSG(mt_sym_file_open(&f, fx_path(name), &opt, err, sizeof(err)) == 0,
		      "open %s: %s", name, err);
	MT_ASSERT(f);
	return f;
}

#endif
