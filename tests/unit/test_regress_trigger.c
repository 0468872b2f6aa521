// SPDX-License-Identifier: MIT
/*
 * Regression tests for trigger-spec parser bugs found by fuzzing
 * (tests/fuzz/fuzz_trigger_spec.c; reproducers in its corpus, regress-*).
 */
#include "mt_test.h"

#include "trigger/trigger.h"

#include <string.h>

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
		MT_ASSERT_EQ(mt_trigger_spec_parse(specs[i], &spec, err, sizeof(err)), -1);
		MT_ASSERT_MSG(strstr(err, "control character") != NULL, "spec %zu: %s", i, err);
		for (const char *c = err; *c; c++)
			MT_ASSERT_MSG((unsigned char)*c >= ' ' && *c != 0x7f,
				      "spec %zu: raw control character 0x%02x in the message at %zu",
				      i, (unsigned char)*c, (size_t)(c - err));
	}
}
