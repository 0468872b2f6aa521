// SPDX-License-Identifier: MIT
/*
 * Chrome JSON output of the Perfetto writer: valid JSON (checked by
 * Python's strict parser, skipped when python3 is missing), names with
 * quotes, backslashes, control characters and broken UTF-8 escaped
 * correctly, events strictly in time order with balanced B/E per thread,
 * and nanoseconds kept exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/mt_test.h"
#include "../perfetto/pf_testutil.h"
#include "perfetto/pf_writer.h"

/* Loads @path with Python's strict JSON parser and prints, per line: each
 * B/i event's name as ASCII-escaped JSON, then "ok" if timestamps never go
 * back and every thread's B/E balance is never negative and ends at 0. */
static const char checker[] =
	"import json,sys\n"
	"d=json.loads(open(sys.argv[1],'rb').read().decode('utf-8'))\n"
	"last=-1.0; depth={}; ok=True\n"
	"for e in d['traceEvents']:\n"
	"  if e['ph']=='M': continue\n"
	"  ok=ok and e['ts']>=last; last=e['ts']\n"
	"  k=(e['pid'],e['tid'])\n"
	"  if e['ph']=='B': depth[k]=depth.get(k,0)+1\n"
	"  if e['ph']=='E': depth[k]=depth.get(k,0)-1; ok=ok and depth[k]>=0\n"
	"  if e['ph'] in 'Bi': print(json.dumps(e['name']))\n"
	"print('ok' if ok and all(v==0 for v in depth.values()) else 'bad')\n";

static char *run_checker(const char *path)
{
	char cmd[1024], *out = malloc(1 << 16);
	size_t len;
	FILE *p;

	if (system("python3 -c 'import json' >/dev/null 2>&1"))
		mt_skip("python3 not installed");
	MT_ASSERT(out);
	snprintf(cmd, sizeof(cmd), "python3 -c \"$PF_CHECKER\" '%s' 2>&1", path);
	MT_ASSERT(setenv("PF_CHECKER", checker, 1) == 0);
	p = popen(cmd, "r");
	MT_ASSERT(p);
	len = fread(out, 1, (1 << 16) - 1, p);
	out[len] = 0;
	MT_ASSERT_MSG(pclose(p) == 0, "python rejected the JSON: %s", out);
	return out;
}

static int open_json(struct pf_writer **w, const char *name)
{
	struct pf_options o;
	char err[256];
	int t;

	pf_options_init(&o);
	o.format = PF_FORMAT_JSON;
	MT_ASSERT_MSG(pf_writer_open(w, pft_path(name), &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(pf_writer_add_process(*w, 1, "p\"roc\\", NULL, 0), 0);
	t = pf_writer_add_thread(*w, 1, 2, "th\x01read");
	MT_ASSERT(t >= 0);
	return t;
}

MT_TEST(odd_names_are_escaped)
{
	static const char *const names[] = {
		"quote\"back\\slash",
		"ctl\x01\x1f\n\t\x7f",
		"utf8 \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",
		"broken \xff \xc3 \xed\xa0\x80 \xc0\xaf end",
		"operator<<(std::ostream&, Foo const&)",
	};
	static const char *const want =
		"\"quote\\\"back\\\\slash\"\n"
		"\"ctl\\u0001\\u001f\\n\\t\\u007f\"\n"
		"\"utf8 \\u00e9 \\u65e5 \\ud83d\\ude00\"\n"
		"\"broken \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd end\"\n"
		"\"operator<<(std::ostream&, Foo const&)\"\n"
		"\"odd \\\"instant\\\"\"\n"
		"ok\n";
	struct pf_writer *w;
	int t = open_json(&w, "odd.json");
	char *out;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct pf_frame f = { .symbol = names[i], .binary = "bin\"ary", .file = "a\\b.c" };
		int32_t id = pf_writer_intern(w, &f);

		MT_ASSERT(id >= 0);
		MT_ASSERT_EQ(pf_begin(w, t, 10 + i, id, 0), 0);
		MT_ASSERT_EQ(pf_end(w, t, 10 + i), 0);
	}
	MT_ASSERT_EQ(pf_instant(w, t, 20, "odd \"instant\""), 0);
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, NULL, 0), 0);
	out = run_checker(pft_path("odd.json"));
	MT_ASSERT_STREQ(out, want);
	free(out);
}

MT_TEST(strict_order_and_balance)
{
	struct pf_trigger tr = { .ts_ns = 1500, .pid = 1, .tid = 2, .reason = "manual",
				 .freeze_path = "manual", .skid_ns = -1 };
	struct pf_frame f = { .symbol = "f", .addr = 0x1000 };
	struct pf_writer *w;
	int a = open_json(&w, "order.json"), b;
	int32_t id;
	char *out;

	b = pf_writer_add_thread(w, 1, 3, "other");
	id = pf_writer_intern(w, &f);
	MT_ASSERT(b >= 0 && id >= 0);
	MT_ASSERT_EQ(pf_writer_set_trigger(w, &tr), 0);
	MT_ASSERT_EQ(pf_begin(w, a, 1000, id, PF_BEGIN_INFERRED), 0);
	MT_ASSERT_EQ(pf_begin(w, b, 1000, id, 0), 0);
	MT_ASSERT_EQ(pf_end(w, b, 1000), 0);
	MT_ASSERT_EQ(pf_begin(w, a, 2000, id, 0), 0);
	MT_ASSERT_EQ(pf_gap(w, b, 2500, "decode error"), 0);
	MT_ASSERT_EQ(pf_begin(w, b, 3000, id, 0), 0);
	MT_ASSERT_EQ(pf_writer_close(w, 4000, NULL, NULL, 0), 0);
	out = run_checker(pft_path("order.json"));
	MT_ASSERT_STREQ(out, "\"f\"\n\"f\"\n\"trigger\"\n\"f\"\n\"trace gap\"\n\"f\"\nok\n");
	free(out);
}

MT_TEST(nanoseconds_are_exact)
{
	struct pf_frame f = { .symbol = "f" };
	struct pf_writer *w;
	int t = open_json(&w, "ns.json");
	int32_t id = pf_writer_intern(w, &f);
	FILE *in;
	char buf[4096];
	size_t n;

	MT_ASSERT(id >= 0);
	MT_ASSERT_EQ(pf_begin(w, t, 1700000000000000001ull, id, 0), 0);
	MT_ASSERT_EQ(pf_end(w, t, 1700000001234567891ull), 0);
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, NULL, 0), 0);
	in = fopen(pft_path("ns.json"), "r");
	MT_ASSERT(in);
	n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	buf[n] = 0;
	MT_ASSERT(strstr(buf, "\"ts\":0.000,"));
	MT_ASSERT(strstr(buf, "\"ts\":1234567.890}"));
	MT_ASSERT(strstr(buf, "\"mtrace_ts_base_ns\":\"1700000000000000001\""));
}
