// SPDX-License-Identifier: MIT
/*
 * Regression tests for trigger bugs found by fuzzing: the spec parser
 * (tests/fuzz/fuzz_trigger_spec.c) and uprobe placement (fuzz_sym.c);
 * reproducers in their corpora, regress-*.
 */
#include "mt_elf_fixture.h"
#include "mt_test.h"

#include "trigger/trigger.h"

#include <errno.h>

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * trigger.h promises one-line messages, but the message for a control
 * character echoed the spec verbatim, newline included: a caller printing
 * "error: MSG" got a broken line, and a spec ending in '\n' (pasted from a
 * file) produced a message that looked truncated.
 */
MT_TEST(control_character_message_is_one_line)
{
	static const char *const specs[] = {
		"uprobe:/bin/app:fn\n",
		"uprobe:/bin/app:fn,if=arg0==1\r\nkprobe:x",
		"kprobe:do_sys_open\x1b[2J",
	};
	char err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec spec;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		MT_ASSERT_EQ(mt_trigger_spec_parse(specs[i], &spec, err, sizeof(err)), -EINVAL);
		MT_ASSERT_MSG(strstr(err, "control character") != NULL, "spec %zu: %s", i, err);
		for (const char *c = err; *c; c++)
			MT_ASSERT_MSG((unsigned char)*c >= ' ' && *c != 0x7f,
				      "spec %zu: raw control character 0x%02x in the message at %zu",
				      i, (unsigned char)*c, (size_t)(c - err));
	}
}

/*
 * SYMBOL+OFF with SYMBOL empty ("uprobe:/bin/app:+16", "kprobe:+4") was
 * accepted as the empty function name: the parser checked for a missing
 * name only when nothing at all followed the colon.
 */
MT_TEST(offset_without_function_name)
{
	static const char *const specs[] = { "uprobe:/bin/app:+16", "kprobe:+4",
					     "uprobe:a:b:+0,hit=2" };
	char err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec spec;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		int rc = mt_trigger_spec_parse(specs[i], &spec, err, sizeof(err));

		if (rc == 0) {
			bool empty = spec.symbol && !*spec.symbol;

			mt_trigger_spec_free(&spec);
			MT_ASSERT_MSG(0, "'%s' accepted%s", specs[i],
				      empty ? " with an empty function name" : "");
		}
		MT_ASSERT_MSG(strstr(err, "function name") != NULL, "'%s': %s", specs[i], err);
	}
}

/*
 * A uprobe goes at a file offset, computed from the executable PT_LOAD that
 * holds the address. A corrupt segment whose file range lies past the end
 * of the file produced an offset no byte of the file has (or, with an
 * offset near 2^64, one that wraps around to an unrelated instruction);
 * mt_trigger_resolve() must refuse it instead.
 */
MT_TEST(uprobe_offset_inside_the_file)
{
	static const uint64_t seg_offsets[] = { 0x100000, UINT64_MAX - 7 };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir;

	for (size_t i = 0; i < sizeof(seg_offsets) / sizeof(seg_offsets[0]); i++) {
		struct mt_elf_fixture elf = mt_elf_fixture(seg_offsets[i], 0x1000, 0x1000);
		char path[512], text[600], err[MT_TRIGGER_ERRLEN] = "";
		struct mt_trigger_spec spec;
		uint64_t off = 0;
		int fd, rc;

		snprintf(path, sizeof(path), "%s/mt-regress-trigger.XXXXXX", tmp);
		fd = mkstemp(path);
		MT_ASSERT_MSG(fd >= 0, "mkstemp %s", path);
		MT_ASSERT_EQ(write(fd, &elf, sizeof(elf)), sizeof(elf));
		close(fd);
		snprintf(text, sizeof(text), "uprobe:%s:0x1010", path);
		MT_ASSERT_EQ(mt_trigger_spec_parse(text, &spec, err, sizeof(err)), 0);
		rc = mt_trigger_resolve(&spec, &off, err, sizeof(err));
		mt_trigger_spec_free(&spec);
		unlink(path);
		MT_ASSERT_MSG(rc == -EBADMSG, "segment at file offset 0x%" PRIx64 ": uprobe placed at "
			      "offset 0x%" PRIx64 " of a %zu-byte file", seg_offsets[i], off,
			      sizeof(elf));
		MT_ASSERT(err[0] != '\0');
	}
}
