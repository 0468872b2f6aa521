// SPDX-License-Identifier: MIT
/*
 * The report (report/report.h): a hand-made event stream whose every
 * figure is worked out below, the comparison of several snapshots, the
 * text's width and colour, the JSON, and a generated bundle whose call
 * counts the PT generator's truth gives.
 */
#include "test_decode_fixture.h"

#include "report/report.h"

#include <inttypes.h>

static const char *names[] = { "[unknown]", "[syscall]", "[untraced]", "A", "B", "C" };

static const char *name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < 6 ? names[id] : "?";
}

static void ev(const struct mt_decode_sink *s, uint32_t tid, uint64_t ns, int kind, uint32_t fn,
	       int flags)
{
	struct mt_ev e = { .ts = ns, .kind = (uint8_t)kind, .flags = (uint8_t)flags, .arg = fn };

	MT_ASSERT_EQ(s->event(s->ctx, 1, tid, ns, &e), 0);
}

#define B(tid, ns, fn) ev(&s, tid, ns, MT_EV_BEGIN, fn, 0)
#define E(tid, ns) ev(&s, tid, ns, MT_EV_END, 0, MT_EV_RET)

/*
 * Thread 1: A [0,150] calls B [10,30], B [40,80] (in it [syscall] [45,75])
 * and C [100,130]. Thread 2: A inferred from 20, B [60,70], [untraced]
 * from 90, the trigger at 95, a gap at 120, C from 140 truncated at 160.
 */
static struct mt_report *sample(void)
{
	struct mt_report *rep = mt_report_new();
	struct mt_decode_sink s;
	struct mt_bundle_trigger trig = { .d = { .tid = 2, .pid = 1 }, .spec = "uprobe:/x:B" };

	MT_ASSERT(rep);
	s = mt_report_sink(rep, name_of, NULL);
	B(1, 0, 3);
	B(1, 10, 4);
	ev(&s, 2, 20, MT_EV_BEGIN, 3, MT_EV_INFERRED);
	E(1, 30);
	B(1, 40, 4);
	B(1, 45, MT_FN_SYSCALL);
	B(2, 60, 4);
	E(2, 70);
	E(1, 75);
	E(1, 80);
	B(2, 90, MT_FN_UNTRACED);
	MT_ASSERT_EQ(s.trigger(s.ctx, 95, &trig), 0);
	B(1, 100, 5);
	ev(&s, 2, 120, MT_EV_GAP, 3, 0);	/* reason 3: overflow */
	E(1, 130);
	B(2, 140, 5);
	E(1, 150);
	ev(&s, 2, 160, MT_EV_END, 0, MT_EV_TRUNCATED);
	MT_ASSERT_EQ(mt_report_finish(rep, NULL, NULL), 0);
	return rep;
}

static const struct mt_rep_fn *fn(const struct mt_report *rep, const char *name)
{
	for (size_t i = 0; i < rep->nfns; i++)
		if (!strcmp(rep->fns[i].name, name))
			return &rep->fns[i];
	MT_ASSERT_MSG(0, "no function %s", name);
	return NULL;
}

MT_TEST(every_figure_of_a_known_stream)
{
	struct mt_report *rep = sample();
	const struct mt_rep_fn *a = fn(rep, "A"), *b = fn(rep, "B"), *c = fn(rep, "C");

	MT_ASSERT_EQ(rep->first, 0);
	MT_ASSERT_EQ(rep->last, 160);
	MT_ASSERT_EQ(rep->nfns, 3);	/* untraced time is no function */
	/* B: 20, 40 and 10 ns; its self time leaves out the syscall */
	MT_ASSERT_EQ(b->ndurs, 3);
	MT_ASSERT_EQ(mt_report_total(b), 70);
	MT_ASSERT_EQ(mt_report_pct(b, 50), 20);
	MT_ASSERT_EQ(mt_report_pct(b, 99), 40);
	MT_ASSERT_EQ(b->max, 40);
	MT_ASSERT_EQ(b->max_tid, 1);
	MT_ASSERT_EQ(b->max_depth, 2);
	MT_ASSERT_STREQ(rep->fns[b->max_stack[0]].name, "A");
	MT_ASSERT_STREQ(rep->fns[b->max_stack[1]].name, "B");
	MT_ASSERT_EQ(b->self, 20 + 10 + 10);
	MT_ASSERT_EQ(b->incl, 70);
	/* A: one complete call (150); the inferred one, cut by the gap at
	 * 120, is partial; self 60 + (100 - 10 - 30) */
	MT_ASSERT_EQ(a->ndurs, 1);
	MT_ASSERT_EQ(a->max, 150);
	MT_ASSERT_EQ(a->partial, 1);
	MT_ASSERT_EQ(a->self, 60 + 60);
	MT_ASSERT_EQ(a->incl, 150 + 100);
	/* C: 30 complete, 20 truncated */
	MT_ASSERT_EQ(c->ndurs, 1);
	MT_ASSERT_EQ(c->partial, 1);
	MT_ASSERT_EQ(c->self, 50);
	/* the threads */
	MT_ASSERT_EQ(rep->nthreads, 2);
	MT_ASSERT_EQ(rep->threads[0].syscall, 30);
	MT_ASSERT_EQ(rep->threads[0].untraced, 0);
	MT_ASSERT_EQ(rep->threads[1].untraced, 30);
	MT_ASSERT_EQ(rep->threads[1].first, 20);
	MT_ASSERT_EQ(rep->threads[1].last, 160);
	MT_ASSERT_EQ(rep->threads[0].self[b - rep->fns], 30);
	MT_ASSERT_EQ(rep->threads[1].incl[a - rep->fns], 100);
	/* the trigger and its stack; the gap and what it lost */
	MT_ASSERT(rep->have_trigger);
	MT_ASSERT_EQ(rep->trigger_ns, 95);
	MT_ASSERT_EQ(rep->trigger_tid, 2);
	MT_ASSERT_STREQ(rep->trigger_what, "uprobe:/x:B");
	MT_ASSERT_EQ(rep->trigger_depth, 2);
	MT_ASSERT_STREQ(rep->fns[rep->trigger_stack[0]].name, "A");
	MT_ASSERT_EQ(rep->trigger_stack[1], SIZE_MAX);	/* [untraced] */
	MT_ASSERT_EQ(rep->ngaps, 1);
	MT_ASSERT_EQ(rep->gaps[0].ns, 120);
	MT_ASSERT_EQ(rep->gaps[0].lost, 20);
	MT_ASSERT_STREQ(rep->gaps[0].reason, "trace overflow");
	mt_report_free(rep);
}

static char *text_of(struct mt_report *const *reps, size_t n, int color, unsigned int width)
{
	struct mt_report_style st = { color, width, 8 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	MT_ASSERT(f);
	mt_report_text(f, reps, n, &st);
	MT_ASSERT_EQ(fclose(f), 0);
	return buf;
}

/* No line of TEXT is wider than WIDTH or ends in a space. */
static void fits(char *text, unsigned int width)
{
	char *line, *save;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		MT_ASSERT_MSG(strlen(line) <= width && line[strlen(line) - 1] != ' ',
			      "line of %zu columns (of %u) or with trailing space: '%s'", strlen(line),
			      width, line);
}

MT_TEST(text_fits_the_width_and_colours_only_when_asked)
{
	struct mt_report *rep = sample();
	char *plain = text_of(&rep, 1, 0, 80), *col = text_of(&rep, 1, 1, 80);

	MT_ASSERT(!strchr(plain, '\033'));
	MT_ASSERT(strstr(col, "\033[1m"));
	MT_ASSERT(strstr(plain, "Trigger uprobe:/x:B"));
	/* B's row: 3 calls, total 70ns, p50 20ns, p99 40ns, max 40ns */
	MT_ASSERT_MSG(strstr(plain, "B                                    3      70ns      20ns      40ns      40ns"),
		      "%s", plain);
	MT_ASSERT_MSG(strstr(plain, "1 gap (20ns lost), 0 decode errors, 0 overflows,"), "%s", plain);
	fits(plain, 80);
	free(plain);
	free(col);
	mt_report_free(rep);
}

/* Prose with a long bundle path and trigger spec wraps, at the narrowest
 * width too, where it used to run past the edge. */
MT_TEST(long_names_wrap_to_the_width)
{
	static const char path[] = "/srv/captures/2026-12-07/a-rather-long-service-name/"
				   "snapshot-with-a-long-name.mtrace";
	struct mt_report *reps[2] = { sample(), sample() };

	for (unsigned int width = 60; width <= 100; width += 20) {
		char *text;

		reps[0]->label = reps[1]->label = path;
		text = text_of(reps, 2, 0, width);
		MT_ASSERT_MSG(strstr(text, "/srv/captures/2026-12-07/a-rather-long-service-name/"),
			      "%s", text);
		fits(text, width);
		free(text);
	}
	mt_report_free(reps[0]);
	mt_report_free(reps[1]);
}

/*
 * Self time is on the CPU, a share of the running time; inclusive time is
 * wall time, syscalls and all, a share of the threads' time from first to
 * last event. Against the running time it went past 100 % (A: 250 ns of
 * 230 ns running).
 */
MT_TEST(shares_are_of_what_they_count)
{
	struct mt_report *rep = sample();
	char *text = text_of(&rep, 1, 0, 80), *line, *save, *pct;
	unsigned int rows = 0;

	/* all threads: running 120 + 110 ns, wall 150 + 140 ns */
	MT_ASSERT_MSG(strstr(text, "  A                         120ns  52.2%  A                         250ns  86.2%"),
		      "%s", text);
	/* thread 1: A spans all of its 150 ns, 120 of them running */
	MT_ASSERT_MSG(strstr(text, "  A                          60ns  50.0%  A                         150ns 100.0%"),
		      "%s", text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (pct = strchr(line, '%'); pct; pct = strchr(pct + 1, '%')) {
			char *num = pct;

			while (num > line && (num[-1] == '.' || (num[-1] >= '0' && num[-1] <= '9')))
				num--;
			if (num == pct)
				continue;
			rows++;
			MT_ASSERT_MSG(strtod(num, NULL) <= 100.0, "a share over 100%%: '%s'", line);
		}
	MT_ASSERT(rows > 10);
	free(text);
	mt_report_free(rep);
}

/* A trigger while its thread had no call open, after the last event, says
 * so: not an empty list, not "0ns before the data ends". */
MT_TEST(trigger_outside_any_call_said)
{
	struct mt_report *rep = mt_report_new();
	struct mt_bundle_trigger trig = { .d = { .tid = 1, .pid = 1,
						 .reason = MT_BUNDLE_REASON_TARGET_EXIT } };
	struct mt_decode_sink s;
	char *text;

	MT_ASSERT(rep);
	s = mt_report_sink(rep, name_of, NULL);
	B(1, 0, 3);
	E(1, 10);
	MT_ASSERT_EQ(s.trigger(s.ctx, 20, &trig), 0);
	MT_ASSERT_EQ(mt_report_finish(rep, NULL, NULL), 0);
	text = text_of(&rep, 1, 0, 80);
	MT_ASSERT_MSG(strstr(text, "  Call stack at the trigger: none, no call of the thread was open\n"),
		      "%s", text);
	/* it fired 10 ns after the last event, not "0ns before the end" */
	MT_ASSERT_MSG(strstr(text, "at 20 ns, 10ns after the last event\n"), "%s", text);
	/* without a spec, a snapshot is named by its reason */
	MT_ASSERT_MSG(strstr(text, "Trigger target exit\n"), "%s", text);
	free(text);
	mt_report_free(rep);
}

/* Functions without symbols, "binary+0xADDR", differ only in the
 * address: a cut name keeps it, and the rows stay told apart. */
static const char *anon_name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 3 ? "libcapstone.so.4+0x265b80" : id == 4 ? "libcapstone.so.4+0x267760" : "?";
}

MT_TEST(names_cut_keep_the_address)
{
	struct mt_report *rep = mt_report_new();
	struct mt_decode_sink s;
	char *text;

	MT_ASSERT(rep);
	s = mt_report_sink(rep, anon_name_of, NULL);
	B(1, 0, 3);
	B(1, 10, 4);
	E(1, 90);
	E(1, 100);
	MT_ASSERT_EQ(mt_report_finish(rep, NULL, NULL), 0);
	text = text_of(&rep, 1, 0, 80);
	MT_ASSERT_MSG(strstr(text, "libcapstone~+0x265b80") && strstr(text, "libcapstone~+0x267760"),
		      "%s", text);
	free(text);
	mt_report_free(rep);
}

/* REP's JSON in the fixture file NAME, for python to read. */
static void json_file(struct mt_report *rep, const char *name)
{
	FILE *f = fopen(fx_path(name), "w");

	MT_ASSERT(f);
	mt_report_json(f, &rep, 1);
	MT_ASSERT_EQ(fclose(f), 0);
}

/* Names from a bundle of elsewhere: an escape that clears the screen, the
 * C1 CSI, a newline, and a byte that is no UTF-8. */
static const char *hostile_name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 3 ? "\x1b[2Jwipe" : id == 4 ? "csi\xc2\x9b" "31m\nnext" : "lat\xe9n";
}

MT_TEST(hostile_names_reach_no_terminal)
{
	struct mt_bundle_trigger trig = { .d = { .tid = 1, .pid = 1 }, .spec = "uprobe:/x\x1b]0;t\x07:f" };
	struct mt_report *rep = mt_report_new();
	struct mt_decode_sink s;
	char *text;

	fx_need("python3");
	MT_ASSERT(rep);
	s = mt_report_sink(rep, hostile_name_of, NULL);
	B(1, 0, 3);
	B(1, 10, 4);
	B(1, 20, 5);
	MT_ASSERT_EQ(s.trigger(s.ctx, 25, &trig), 0);
	E(1, 30);
	E(1, 40);
	E(1, 50);
	MT_ASSERT_EQ(mt_report_finish(rep, NULL, NULL), 0);
	snprintf(rep->threads[0].name, sizeof(rep->threads[0].name), "t\x1b[31m");
	text = text_of(&rep, 1, 1, 80);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		/* the report's own colours are the only escapes (health is
		 * green here: red would be the thread name's) */
		static const char *const own[] = { "\x1b[0m", "\x1b[1m", "\x1b[1;33m", "\x1b[32m" };
		int ours = 0;

		for (size_t i = 0; *p == 0x1b && i < sizeof(own) / sizeof(own[0]); i++)
			ours |= !strncmp((const char *)p, own[i], strlen(own[i]));
		MT_ASSERT_MSG(*p != 0x1b || ours, "a foreign escape: '%.12s'", p);
		MT_ASSERT_MSG(*p != 0x7f && *p != 0x07 && *p != 0x9b && *p != 0xe9,
			      "byte 0x%02x in the text", *p);
	}
	MT_ASSERT_MSG(strstr(text, "\\x1b[2Jwipe") && strstr(text, "csi\\xc2\\x9b31m\\x0anext") &&
		      strstr(text, "lat\\xe9n") && strstr(text, "uprobe:/x\\x1b]0;t\\x07:f") &&
		      strstr(text, "t\\x1b[31m (1)"), "%s", text);
	json_file(rep, "hostile.json");
	/* strict UTF-8, and the names as they were but the byte that is none */
	fx_sh("python3 -c 'import json\n"
	      "s = json.loads(open(\"hostile.json\", \"rb\").read().decode(\"utf-8\"))[\"snapshots\"][0]\n"
	      "n = sorted(x[\"name\"] for x in s[\"functions\"])\n"
	      "assert n == [\"\\x1b[2Jwipe\", \"csi\\x9b31m\\nnext\", \"lat\\ufffdn\"], n\n"
	      "assert s[\"trigger\"][\"what\"] == \"uprobe:/x\\x1b]0;t\\x07:f\"\n"
	      "'");
	free(text);
	mt_report_free(rep);
}

MT_TEST(json_holds_the_figures)
{
	struct mt_report *rep = sample();

	fx_need("python3");
	json_file(rep, "r.json");
	fx_sh("python3 -c 'import json\n"
	      "s = json.load(open(\"r.json\"))[\"snapshots\"][0]\n"
	      "f = {x[\"name\"]: x for x in s[\"functions\"]}\n"
	      "assert (f[\"B\"][\"calls\"], f[\"B\"][\"total_ns\"], f[\"B\"][\"p50_ns\"],\n"
	      "        f[\"B\"][\"p99_ns\"], f[\"B\"][\"max_ns\"]) == (3, 70, 20, 40, 40), f[\"B\"]\n"
	      "assert f[\"B\"][\"slowest\"][\"stack\"] == [\"A\", \"B\"]\n"
	      "assert (f[\"A\"][\"self_ns\"], f[\"A\"][\"inclusive_ns\"], f[\"A\"][\"partial\"]) == (120, 250, 1)\n"
	      "t = {x[\"tid\"]: x for x in s[\"threads\"]}\n"
	      "assert (t[1][\"running_ns\"], t[1][\"syscall_ns\"], t[1][\"no_data_ns\"]) == (120, 30, 10)\n"
	      "assert (t[2][\"running_ns\"], t[2][\"untraced_ns\"]) == (110, 30)\n"
	      "assert s[\"trigger\"][\"stack\"] == [\"A\", \"[untraced]\"]\n"
	      "assert s[\"health\"][\"gaps\"] == [{\"tid\": 2, \"ns\": 120, \"lost_ns\": 20,\n"
	      "                                  \"reason\": \"trace overflow\"}]\n"
	      "'");
	mt_report_free(rep);
}

/* Three snapshots triggered in B: latencies 10, 50 and 30; the slowest
 * spent 100 ns more in C than the median, 40 more in A, B the same. */
MT_TEST(snapshots_compared)
{
	struct mt_report *r[3];
	static const uint64_t lat[3] = { 10, 50, 30 }, a[3] = { 100, 140, 90 }, c[3] = { 5, 110, 10 };
	struct mt_rep_compare cmp;
	char *text;

	for (int i = 0; i < 3; i++) {
		r[i] = sample();
		snprintf(r[i]->trigger_symbol, sizeof(r[i]->trigger_symbol), "B");
		r[i]->trigger_latency = (int64_t)lat[i];
		for (size_t k = 0; k < r[i]->nfns; k++) {
			if (!strcmp(r[i]->fns[k].name, "A"))
				r[i]->fns[k].incl = a[i];
			if (!strcmp(r[i]->fns[k].name, "B"))
				r[i]->fns[k].incl = 70;
			if (!strcmp(r[i]->fns[k].name, "C"))
				r[i]->fns[k].incl = c[i];
		}
	}
	r[2]->label = "third";
	MT_ASSERT_EQ(mt_report_compare(r, 3, &cmp), 0);
	MT_ASSERT_EQ(cmp.n, 3);
	MT_ASSERT_EQ(cmp.min, 10);
	MT_ASSERT_EQ(cmp.p50, 30);
	MT_ASSERT_EQ(cmp.max, 50);
	MT_ASSERT_EQ(cmp.slowest, 1);
	MT_ASSERT_EQ(cmp.ngrew, 2);
	MT_ASSERT_STREQ(r[1]->fns[cmp.grew[0].fn].name, "C");
	MT_ASSERT_EQ(cmp.grew[0].delta, 100);
	MT_ASSERT_STREQ(r[1]->fns[cmp.grew[1].fn].name, "A");
	MT_ASSERT_EQ(cmp.grew[1].delta, 40);
	text = text_of(r, 3, 0, 80);
	MT_ASSERT_MSG(strstr(text, "B at the trigger, over 3 snapshots: min 10ns, median 30ns, max 50ns"),
		      "%s", text);
	free(text);
	/* One snapshot triggered elsewhere: not compared with the others. */
	snprintf(r[0]->trigger_symbol, sizeof(r[0]->trigger_symbol), "C");
	MT_ASSERT_EQ(mt_report_compare(r + 1, 2, &cmp), 0);
	MT_ASSERT_EQ(mt_report_compare(r, 3, &cmp), -1);
	for (int i = 0; i < 3; i++)
		mt_report_free(r[i]);
}

MT_TEST(durations_read_at_a_glance)
{
	char b[16];

	mt_fmt_ns(b, sizeof(b), 999);
	MT_ASSERT_STREQ(b, "999ns");
	mt_fmt_ns(b, sizeof(b), 1234);
	MT_ASSERT_STREQ(b, "1.23us");
	mt_fmt_ns(b, sizeof(b), 999600);
	MT_ASSERT_STREQ(b, "1ms");
	mt_fmt_ns(b, sizeof(b), 1877000000);
	MT_ASSERT_STREQ(b, "1.88s");
}

/*
 * A generated bundle: recursion's fib, frozen at its 20th entry. Every
 * fib call the truth shows is in the report (complete or partial), the
 * trigger names fib and its stack ends in fib and the probe's trace stop.
 */
MT_TEST(generated_bundle_counts_match_the_truth)
{
	char ptgen[1200], progs[1200], line[256], err[512];
	struct mt_bundle_reader *r;
	struct mt_bundle_trigger t;
	struct mt_decode_sink s;
	struct mt_report *rep;
	struct mt_decode *d;
	uint64_t fib, want = 0;
	FILE *f;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' -o rec.mtrace -t rec.truth --trigger fib:20 -- '%s/recursion' >/dev/null", ptgen,
	      progs);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("rec.mtrace"), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, NULL, err, sizeof(err)) == 0, "%s", err);
	/* The trigger is fib's entry, at its run-time address. */
	MT_ASSERT_EQ(mt_decode_trigger(d, &fib, &t), 0);
	fib = t.d.ip;
	f = fopen(fx_path("rec.truth"), "r");
	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long idx, tsc, from, to;
		unsigned tid;
		char kind[16];

		if (sscanf(line, "%15s %u %llu %llu %llx %llx", kind, &tid, &idx, &tsc, &from, &to) == 6 &&
		    !strcmp(kind, "call"))
			want += to == fib;
	}
	fclose(f);
	MT_ASSERT(want > 10);
	rep = mt_report_new();
	s = mt_report_sink(rep, mt_decode_label, d);
	MT_ASSERT_EQ(mt_decode_run(d, &s), 0);
	MT_ASSERT_EQ(mt_report_finish(rep, d, r), 0);
	MT_ASSERT_EQ(fn(rep, "fib")->ndurs + fn(rep, "fib")->partial, want);
	MT_ASSERT_STREQ(rep->trigger_symbol, "fib");
	/* innermost: the trace stop at the probe, then fib */
	MT_ASSERT(rep->trigger_depth >= 3);
	MT_ASSERT_EQ(rep->trigger_stack[rep->trigger_depth - 1], SIZE_MAX);
	MT_ASSERT_STREQ(rep->fns[rep->trigger_stack[rep->trigger_depth - 2]].name, "fib");
	MT_ASSERT(rep->trigger_latency >= 0);
	MT_ASSERT_EQ(rep->stats.errors, 0);
	printf("# fib: %" PRIu64 " calls, p50 %" PRIu64 " ns, max %" PRIu64 " ns\n", want,
	       mt_report_pct(fn(rep, "fib"), 50), fn(rep, "fib")->max);
	mt_report_free(rep);
	mt_decode_free(d);
	mt_bundle_close(r);
}
