// SPDX-License-Identifier: MIT
/*
 * The trigger set refuses bad requests before it needs any privilege:
 * wrong trigger counts, unparsed specs and unresolvable functions are
 * reported without loading BPF (tests/host/triggers.sh covers loading).
 */
#include "../lib/mt_test.h"

#include "trigger/trigger.h"

#include <errno.h>

static void open_bad(const struct mt_trigger_spec *specs, size_t n, int e, const char *what)
{
	char err[MT_TRIGGER_ERRLEN] = "";
	struct mt_trigger_set *set = (struct mt_trigger_set *)1;
	int rc = mt_trigger_set_open(&set, specs, n, NULL, err, sizeof(err));

	if (set)
		mt_trigger_set_close(set);
	MT_ASSERT_MSG(!set, "opened");
	MT_ASSERT_EQ(rc, -e);
	MT_ASSERT_MSG(strstr(err, what), "error '%s' lacks '%s'", err, what);
}

static struct mt_trigger_spec parse(const char *text)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN];

	MT_ASSERT_MSG(!mt_trigger_spec_parse(text, &s, err, sizeof(err)), "%s", err);
	return s;
}

MT_TEST(trigger_count)
{
	struct mt_trigger_spec specs[MT_TRIG_MAX_SPECS + 1];

	for (int i = 0; i <= MT_TRIG_MAX_SPECS; i++)
		specs[i] = parse("uprobe:/proc/self/exe:main");
	open_bad(specs, 0, EINVAL, "between 1 and 8 triggers can be armed at once, not 0");
	open_bad(specs, MT_TRIG_MAX_SPECS + 1, EINVAL, "not 9");
	for (int i = 0; i <= MT_TRIG_MAX_SPECS; i++)
		mt_trigger_spec_free(&specs[i]);
}

MT_TEST(unparsed_spec)
{
	struct mt_trigger_spec spec = { 0 };

	open_bad(&spec, 1, EINVAL, "trigger 0 has no valid kind");
}

MT_TEST(unresolvable_before_load)
{
	struct mt_trigger_spec specs[2] = { parse("uprobe:/proc/self/exe:main"),
					    parse("uretprobe:/nonexistent/app:f") };

	open_bad(specs, 2, ENOENT, "cannot open /nonexistent/app: No such file or directory");
	mt_trigger_spec_free(&specs[1]);
	specs[1] = parse("slow:/proc/self/exe:no_such_function_here>1ms");
	open_bad(specs, 2, ENOENT, "function 'no_such_function_here' not found in /proc/self/exe");
	mt_trigger_spec_free(&specs[0]);
	mt_trigger_spec_free(&specs[1]);
}
