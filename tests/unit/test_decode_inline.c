// SPDX-License-Identifier: MIT
/*
 * Inline frames (decode/inlines.h) on a generated bundle of an -O2 program
 * (tests/ptgen/programs/inline.c): scale() is inlined into work() and calls
 * leaf() twice. Every work() call must read work > scale (inline) > leaf,
 * leaf, in the events and in the Perfetto output, where scale's slices and
 * only they have the category "inline". mix() is inlined into churn() and
 * calls nothing: it shows only through the blocks of its loop, which the
 * CPU log once dropped as blocks inside churn(). twice() is inlined into
 * edge() and calls leaf(), from a block that begins in edge's own code.
 */
#include "test_decode_json.h"

struct seen {
	struct mt_decode *d;
	int with_times;		/* each event's time before it */
	char *s;
	size_t len, cap;
	unsigned int scale_not_inlined;
};

static int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct seen *v = ctx;
	struct mt_func f;
	char line[200];
	int n;

	(void)pid, (void)tid;
	if (ev->kind != MT_EV_BEGIN && ev->kind != MT_EV_END)
		return 0;
	f = mt_decode_func(v->d, ev->arg);
	if (f.name && !strcmp(f.name, "scale") && (!f.inlined || !(ev->flags & MT_EV_INLINE)))
		v->scale_not_inlined++;
	n = v->with_times ? snprintf(line, sizeof(line), "%" PRIu64 " ", ns) : 0;
	n += snprintf(line + n, sizeof(line) - (size_t)n, "%c %s%s;",
		      ev->kind == MT_EV_BEGIN ? 'B' : 'E', mt_func_label(&f, ev->arg),
		      ev->flags & MT_EV_INLINE ? " inline" : "");
	if (v->len + (size_t)n + 1 > v->cap) {
		v->cap = (v->len + (size_t)n + 1) * 2;
		v->s = realloc(v->s, v->cap);
		MT_ASSERT(v->s);
	}
	memcpy(v->s + v->len, line, (size_t)n + 1);
	v->len += (size_t)n;
	return 0;
}

static void generate(void)
{
	char ptgen[1200], progs[1200];

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	/* One time slice for the whole run: no preemption inside the calls. */
	fx_sh("'%s' --slice 100000 -o inline.mtrace -- '%s/inline' >/dev/null", ptgen, progs);
}

static size_t count(const char *s, const char *pat)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, pat)); p += strlen(pat))
		n++;
	return n;
}

/* The bundle's calls and returns, inline frames included, as a string
 * (with their times when WITH_TIMES); *ST gets the decode's counts. */
static struct seen decode_events(const struct mt_decode_opts *opts, int with_times,
				 struct mt_decode_stats *st)
{
	struct mt_decode_sink sink = { NULL, collect, NULL, NULL, 0 };
	struct seen v = { .with_times = with_times };
	struct mt_bundle_reader *r;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("inline.mtrace"), err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_MSG(mt_decode_open(&v.d, r, opts, err, sizeof(err)) == 0, "%s", err);
	sink.ctx = &v;
	MT_ASSERT_EQ(mt_decode_run(v.d, &sink), 0);
	MT_ASSERT(v.s);
	if (st)
		*st = *mt_decode_get_stats(v.d);
	mt_decode_free(v.d);
	v.d = NULL;
	mt_bundle_close(r);
	return v;
}

MT_TEST(inlined_function_nests_in_its_caller)
{
	struct seen v;

	generate();
	v = decode_events(NULL, 0, NULL);
	MT_ASSERT_EQ(count(v.s, "B work;B scale inline;B leaf;E leaf;B leaf;E leaf;"
				"E scale inline;E work;"),
		     50);
	MT_ASSERT_EQ(count(v.s, "scale"), 50 * 2);
	MT_ASSERT_EQ(v.scale_not_inlined, 0);
	MT_ASSERT_EQ(count(v.s, "B churn;B leaf;E leaf;B mix inline;E mix inline;B leaf;E leaf;"
				"E churn;"),
		     50);
	MT_ASSERT_EQ(count(v.s, "B edge;B twice inline;B leaf;E leaf;E twice inline;E edge;"), 50);
	MT_ASSERT_EQ(count(v.s, " inline;"), 50 * 2 * 3);
	free(v.s);
}

/*
 * A stream that meets code whose DWARF another thread is still reading
 * logs every block there instead of waiting (decode_cpu.c, log_block()).
 * Decoding as if that held for all the code, every block logged, must
 * give the same events at the same times, inline frames included: the
 * blocks the log leaves out change nothing in the replay.
 */
MT_TEST(every_block_logged_gives_the_same_events)
{
	const struct mt_decode_opts all = { .defer_inline_ranges = 1 };
	struct mt_decode_stats usual, every;
	struct seen a, b;
	size_t i, from;

	generate();
	a = decode_events(NULL, 1, &usual);
	b = decode_events(&all, 1, &every);
	for (i = 0; a.s[i] && a.s[i] == b.s[i]; i++)
		;
	from = i > 60 ? i - 60 : 0;
	MT_ASSERT_MSG(a.s[i] == b.s[i], "events differ at byte %zu: \"%.120s\" as usual, \"%.120s\" "
		      "with every block logged", i, a.s + from, b.s + from);
	/* Every block was logged, each one in code of unknown inline ranges. */
	MT_ASSERT_EQ(every.dwarf_deferred, every.blocks);
	MT_ASSERT(usual.dwarf_deferred < usual.blocks);
	free(a.s);
	free(b.s);
}

MT_TEST(perfetto_marks_inline_slices)
{
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];

	fx_need("python3");
	generate();
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("inline.mtrace"), err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, NULL, err, sizeof(err)) == 0, "%s", err);
	fx_decode_json(r, d, "inline.json");
	mt_decode_free(d);
	mt_bundle_close(r);
	/* Each scale slice: category inline, begun right after a work slice
	 * and ended right before it, the two leaf slices inside; each mix
	 * slice likewise in a churn slice, with nothing inside. */
	fx_sh("python3 -c 'import json\n"
	      "t = json.load(open(\"inline.json\"))\n"
	      "ev = [e for e in (t[\"traceEvents\"] if isinstance(t, dict) else t)\n"
	      "  if e.get(\"ph\") in (\"B\", \"E\") and e.get(\"pid\") != -1]\n"
	      "stack, n = [], {\"scale\": 0, \"mix\": 0, \"twice\": 0}\n"
	      "for e in ev:\n"
	      "  if e[\"ph\"] == \"B\":\n"
	      "    name = e[\"name\"]\n"
	      "    assert (e.get(\"cat\") == \"inline\") == (name in n), e\n"
	      "    if name in n:\n"
	      "      assert stack[-1] == {\"scale\": \"work\", \"mix\": \"churn\",\n"
	      "                           \"twice\": \"edge\"}[name], stack\n"
	      "      n[name] += 1\n"
	      "    if name == \"leaf\":\n"
	      "      assert (stack[-2:] in ([\"work\", \"scale\"], [\"edge\", \"twice\"]) or\n"
	      "              stack[-1] == \"churn\"), stack\n"
	      "    assert stack[-1:] != [\"mix\"], stack\n"
	      "    stack.append(name)\n"
	      "  else:\n"
	      "    stack.pop()\n"
	      "assert n == {\"scale\": 50, \"mix\": 50, \"twice\": 50}, n\n'");
}
