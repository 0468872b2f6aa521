// SPDX-License-Identifier: MIT
/*
 * The --trigger grammar: every form and filter parses into the fields the
 * BPF program reads, and malformed specs are refused with the column of
 * the offending part.
 */
#include "../lib/mt_test.h"

#include "trigger/trigger.h"

#include <errno.h>

static struct mt_trigger_spec parse_ok(const char *text)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN] = "";

	MT_ASSERT_MSG(mt_trigger_spec_parse(text, &s, err, sizeof(err)) == 0,
		      "'%s' refused: %s", text, err);
	MT_ASSERT_STREQ(s.text, text);
	return s;
}

/* TEXT must be refused with an error mentioning COLUMN and WHAT. */
static void parse_bad(const char *text, int column, const char *what)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN] = "", col[32];

	MT_ASSERT_MSG(mt_trigger_spec_parse(text, &s, err, sizeof(err)) == -EINVAL,
		      "'%s' accepted", text);
	MT_ASSERT_MSG(strstr(err, what), "'%s': error '%s' lacks '%s'", text, err, what);
	if (column) {
		snprintf(col, sizeof(col), "column %d ", column);
		MT_ASSERT_MSG(strstr(err, col), "'%s': error '%s' is not at %s", text, err, col);
	}
	MT_ASSERT(s.text == NULL && s.path == NULL && s.symbol == NULL);
}

MT_TEST(uprobe_symbol)
{
	struct mt_trigger_spec s = parse_ok("uprobe:/bin/app:handle_request");

	MT_ASSERT_EQ(s.kind, MT_TRIG_UPROBE);
	MT_ASSERT_STREQ(s.path, "/bin/app");
	MT_ASSERT_STREQ(s.symbol, "handle_request");
	MT_ASSERT_EQ(s.offset, 0);
	MT_ASSERT_EQ(s.filter.kind, MT_TRIG_UPROBE);
	MT_ASSERT_EQ(s.filter.hit, 1);
	MT_ASSERT_EQ(s.filter.tid, 0);
	MT_ASSERT_EQ(s.filter.nr_conds, 0);
	mt_trigger_spec_free(&s);
}

MT_TEST(uprobe_symbol_offset_and_path_with_colon)
{
	struct mt_trigger_spec s = parse_ok("uprobe:/opt/a:b/lib.so:_ZN3foo3barEv+0x1c");

	MT_ASSERT_STREQ(s.path, "/opt/a:b/lib.so");
	MT_ASSERT_STREQ(s.symbol, "_ZN3foo3barEv");
	MT_ASSERT_EQ(s.offset, 0x1c);
	mt_trigger_spec_free(&s);
	s = parse_ok("uprobe:./app:fn+12");
	MT_ASSERT_EQ(s.offset, 12);
	mt_trigger_spec_free(&s);
}

MT_TEST(uprobe_address)
{
	struct mt_trigger_spec s = parse_ok("uprobe:/bin/app:0x401136");

	MT_ASSERT(s.symbol == NULL);
	MT_ASSERT_EQ(s.addr, 0x401136);
	mt_trigger_spec_free(&s);
}

MT_TEST(uretprobe_and_ret_condition)
{
	struct mt_trigger_spec s = parse_ok("uretprobe:/lib/libc.so.6:malloc,if=ret==0");

	MT_ASSERT_EQ(s.kind, MT_TRIG_URETPROBE);
	MT_ASSERT_STREQ(s.symbol, "malloc");
	MT_ASSERT_EQ(s.filter.nr_conds, 1);
	MT_ASSERT_EQ(s.filter.conds[0].operand, MT_TRIG_OPND_RET);
	MT_ASSERT_EQ(s.filter.conds[0].op, MT_TRIG_OP_EQ);
	MT_ASSERT_EQ(s.filter.conds[0].value, 0);
	mt_trigger_spec_free(&s);
}

MT_TEST(kprobe)
{
	struct mt_trigger_spec s = parse_ok("kprobe:do_sys_openat2,tid=77");

	MT_ASSERT_EQ(s.kind, MT_TRIG_KPROBE);
	MT_ASSERT(s.path == NULL);
	MT_ASSERT_STREQ(s.symbol, "do_sys_openat2");
	MT_ASSERT_EQ(s.filter.tid, 77);
	mt_trigger_spec_free(&s);
	s = parse_ok("kprobe:vfs_read.cold+4");
	MT_ASSERT_STREQ(s.symbol, "vfs_read.cold");
	MT_ASSERT_EQ(s.offset, 4);
	mt_trigger_spec_free(&s);
}

MT_TEST(slow_units)
{
	static const struct { const char *text; uint64_t ns; } cases[] = {
		{ "slow:/bin/app:handle>200us", 200000ULL },
		{ "slow:/bin/app:handle>7ns", 7ULL },
		{ "slow:/bin/app:handle>15ms", 15000000ULL },
		{ "slow:/bin/app:handle>2s", 2000000000ULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_trigger_spec s = parse_ok(cases[i].text);

		MT_ASSERT_EQ(s.kind, MT_TRIG_SLOW);
		MT_ASSERT_STREQ(s.path, "/bin/app");
		MT_ASSERT_STREQ(s.symbol, "handle");
		MT_ASSERT_EQ(s.min_ns, cases[i].ns);
		MT_ASSERT_EQ(s.filter.min_ns, cases[i].ns);
		mt_trigger_spec_free(&s);
	}
}

MT_TEST(filters_combined)
{
	struct mt_trigger_spec s =
		parse_ok("slow:/srv/a>b:serve>1ms,tid=4242,hit=1000,if=arg1>=0x10,if=arg5!=3");

	MT_ASSERT_STREQ(s.path, "/srv/a>b");
	MT_ASSERT_EQ(s.filter.tid, 4242);
	MT_ASSERT_EQ(s.filter.hit, 1000);
	MT_ASSERT_EQ(s.filter.nr_conds, 2);
	MT_ASSERT_EQ(s.filter.conds[0].operand, 1);
	MT_ASSERT_EQ(s.filter.conds[0].op, MT_TRIG_OP_GE);
	MT_ASSERT_EQ(s.filter.conds[0].value, 0x10);
	MT_ASSERT_EQ(s.filter.conds[1].operand, 5);
	MT_ASSERT_EQ(s.filter.conds[1].op, MT_TRIG_OP_NE);
	mt_trigger_spec_free(&s);
}

MT_TEST(condition_operators)
{
	static const struct { const char *cond; enum mt_trig_op op; } cases[] = {
		{ "==", MT_TRIG_OP_EQ }, { "!=", MT_TRIG_OP_NE }, { "<", MT_TRIG_OP_LT },
		{ "<=", MT_TRIG_OP_LE }, { ">", MT_TRIG_OP_GT }, { ">=", MT_TRIG_OP_GE },
	};
	char text[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "uprobe:/a:f,if=arg2%s9", cases[i].cond);
		struct mt_trigger_spec s = parse_ok(text);

		MT_ASSERT_EQ(s.filter.conds[0].op, cases[i].op);
		MT_ASSERT_EQ(s.filter.conds[0].operand, 2);
		MT_ASSERT_EQ(s.filter.conds[0].value, 9);
		mt_trigger_spec_free(&s);
	}
}

MT_TEST(condition_types_and_signs)
{
	struct mt_trigger_spec s = parse_ok("uprobe:/a:f,if=arg0<-1");
	const struct mt_trig_cond *c = &s.filter.conds[0];

	/* An untyped negative literal compares signed 64-bit. */
	MT_ASSERT_EQ(c->is_signed, 1);
	MT_ASSERT_EQ(c->bits, 64);
	MT_ASSERT_EQ(c->value, UINT64_MAX);
	mt_trigger_spec_free(&s);

	s = parse_ok("uprobe:/a:f,if=arg3:s32>=-2147483648");
	c = &s.filter.conds[0];
	MT_ASSERT_EQ(c->is_signed, 1);
	MT_ASSERT_EQ(c->bits, 32);
	MT_ASSERT_EQ(c->value, (uint64_t)INT64_C(-2147483648));
	mt_trigger_spec_free(&s);

	s = parse_ok("uprobe:/a:f,if=arg0:u8==255");
	c = &s.filter.conds[0];
	MT_ASSERT_EQ(c->is_signed, 0);
	MT_ASSERT_EQ(c->bits, 8);
	MT_ASSERT_EQ(c->value, 255);
	mt_trigger_spec_free(&s);

	s = parse_ok("uprobe:/a:f,if=arg0==0xffffffffffffffff");
	MT_ASSERT_EQ(s.filter.conds[0].is_signed, 0);
	MT_ASSERT_EQ(s.filter.conds[0].value, UINT64_MAX);
	mt_trigger_spec_free(&s);
}

MT_TEST(rejects_kind_and_shape)
{
	parse_bad("", 0, "empty trigger spec");
	parse_bad("uprobe", 1, "expected KIND:");
	parse_bad("uprob:/a:f", 1, "unknown trigger kind 'uprob'");
	parse_bad("uprobe:f", 8, "expected PATH:FUNCTION");
	parse_bad("uprobe::f", 8, "missing the binary's path");
	parse_bad("uprobe:/a:", 11, "missing function name");
	parse_bad("uprobe:/a:f\tx", 12, "control character");
	parse_bad("kprobe:", 8, "missing function name");
}

MT_TEST(rejects_targets)
{
	parse_bad("uprobe:/a:fo-o", 13, "character not allowed in a function name");
	parse_bad("uprobe:/a:1abc", 11, "cannot start with a digit");
	parse_bad("uprobe:/a:0xzz", 11, "decimal or 0x-hex number");
	parse_bad("uprobe:/a:0x10g", 15, "unexpected character after the number");
	parse_bad("uprobe:/a:0x0", 11, "between 1 and");
	parse_bad("uprobe:/a:f+", 13, "missing offset");
	parse_bad("uprobe:/a:f+x", 13, "decimal or 0x-hex");
	parse_bad("uprobe:/a:f+0x100000000", 13, "between 0 and 4294967295");
	parse_bad("uretprobe:/a:f+4", 15, "+OFFSET is not allowed");
	parse_bad("kprobe:0xffffffff81000000", 8, "needs a function name");
	parse_bad("kprobe:do$x", 10, "character not allowed");
	parse_bad("uprobe:/a:0x99999999999999999", 11, "below 2^64");
}

MT_TEST(rejects_durations)
{
	parse_bad("slow:/a:f", 10, "needs '>DURATION'");
	parse_bad("slow:/a:f>", 11, "needs a duration");
	parse_bad("slow:/a:f>10", 13, "needs a unit");
	parse_bad("slow:/a:f>10m", 13, "needs a unit");
	parse_bad("slow:/a:f>0us", 11, "more than zero");
	parse_bad("slow:/a:f>0x10us", 11, "needs a duration");
	parse_bad("slow:/a:f>99999999999s", 11, "too long");
	parse_bad("slow:/a:0x10>1ms", 9, "needs a function name");
	parse_bad("slow:/a:f+4>1ms", 10, "+OFFSET is not allowed");
}

MT_TEST(rejects_filters)
{
	parse_bad("uprobe:/a:f,", 13, "empty filter");
	parse_bad("uprobe:/a:f,,hit=2", 13, "empty filter");
	parse_bad("uprobe:/a:f,pid=3", 13, "unknown filter 'pid'");
	parse_bad("uprobe:/a:f,tid", 13, "filters look like");
	parse_bad("uprobe:/a:f,tid=0", 17, "between 1 and 2147483647");
	parse_bad("uprobe:/a:f,tid=-1", 17, "decimal or 0x-hex");
	parse_bad("uprobe:/a:f,tid=1,tid=2", 19, "tid= given twice");
	parse_bad("uprobe:/a:f,hit=0", 17, "between 1 and");
	parse_bad("uprobe:/a:f,hit=3,hit=4", 19, "hit= given twice");
	parse_bad("uprobe:/a:f,hit=12abc", 19, "unexpected character after the number");
}

MT_TEST(rejects_conditions)
{
	parse_bad("uprobe:/a:f,if=", 16, "arg0..arg5 or ret");
	parse_bad("uprobe:/a:f,if=arg6==1", 19, "from 0 to 5");
	parse_bad("uprobe:/a:f,if=arg10==1", 19, "from 0 to 5");
	parse_bad("uprobe:/a:f,if=ret==1", 16, "only for uretprobe");
	parse_bad("uretprobe:/a:f,if=arg0==1", 19, "uretprobe can compare only ret");
	parse_bad("uprobe:/a:f,if=arg0=1", 20, "expected a comparison");
	parse_bad("uprobe:/a:f,if=arg0", 20, "expected a comparison");
	parse_bad("uprobe:/a:f,if=arg0==", 22, "expected a decimal or 0x-hex value");
	parse_bad("uprobe:/a:f,if=arg0==1x", 23, "unexpected character after the value");
	parse_bad("uprobe:/a:f,if=arg0:i32==1", 21, "unknown type");
	parse_bad("uprobe:/a:f,if=arg0:u328==1", 21, "unknown type");
	parse_bad("uprobe:/a:f,if=arg0:u8==256", 25, "out of range for u8");
	parse_bad("uprobe:/a:f,if=arg0:u32==-1", 26, "negative value for an unsigned type");
	parse_bad("uprobe:/a:f,if=arg0:s8==128", 25, "out of range for s8");
	parse_bad("uprobe:/a:f,if=arg0:s8==-129", 25, "out of range for s8");
	parse_bad("uprobe:/a:f,if=arg0==1,if=arg0==2,if=arg0==3,if=arg0==4,if=arg0==5", 57,
		  "at most 4 if= conditions");
}

MT_TEST(names)
{
	MT_ASSERT_STREQ(mt_trigger_kind_name(MT_TRIG_SLOW), "slow");
	MT_ASSERT_STREQ(mt_trigger_kind_name(99), "unknown");
	MT_ASSERT_STREQ(mt_trigger_freeze_name(MT_TRIG_FREEZE_SIGSTOP), "sigstop");
	MT_ASSERT_STREQ(mt_trigger_freeze_name(0), "unknown");
}
