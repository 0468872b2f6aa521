// SPDX-License-Identifier: MIT
/*
 * The whole decoder on a bundle written at test time: a small assembled
 * program (functions A..E), its map records, PT streams for two CPUs, the
 * context-switch sideband, clock anchors and a trigger. The text dump must
 * show each thread's exact call stack, stitched across CPUs, named from
 * the program's symbols, in nanoseconds, with the trigger in place.
 */
#include "test_decode_fixture.h"
#include "test_decode_json.h"
#include "test_decode_ptenc.h"

#include "decode/decode.h"
#include "out_text/textout.h"

#include <errno.h>

static const char prog_s[] =
	"\t.text\n"
	"\t.globl A, B, C, D, E, _start\n"
	"_start:\n"
	"A:\tcall B\n"		/* A+0 */
	"\tcall C\n"		/* A+5 */
	"\tsyscall\n"		/* A+10 */
	"\tcall *%rbx\n"	/* A+12 */
	"\tnop\n"		/* A+14 */
	"1:\tjmp 1b\n"
	"\t.type A, @function\n\t.size A, .-A\n"
	"\t.p2align 4\nB:\tret\n\t.type B, @function\n\t.size B, .-B\n"
	"\t.p2align 4\nC:\tjmp *%rax\n\t.type C, @function\n\t.size C, .-C\n"
	"\t.p2align 4\nD:\tret\n\t.type D, @function\n\t.size D, .-D\n"
	"\t.p2align 4\nE:\tret\n\t.type E, @function\n\t.size E, .-E\n";

static uint64_t fn[5];	/* A..E */
/* The trigger the bundles record: at A + trig_off, TSC trig_tsc. */
static uint64_t trig_off = 12, trig_tsc = 3500;
#define F(c) fn[(c) - 'A']

/* CPU 0: thread 101 runs A → B, A → C → E (tail), switched out in E; then
 * thread 102 is switched in inside D (mid-stack), returns into A. */
static void cpu0(struct ptenc *e)
{
	ptenc_begin(e, 1000, F('A'));
	ptenc_tnt(e, "1");
	ptenc_ip(e, ppt_tip, F('E'), pt_ipc_sext_48);
	ptenc_tsc(e, 1500);
	ptenc_ip(e, ppt_fup, F('E'), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_tsc(e, 1600);
	ptenc_ip(e, ppt_tip_pge, F('D'), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip, F('A') + 14, pt_ipc_sext_48);
	ptenc_tsc(e, 1700);
	ptenc_ip(e, ppt_fup, F('A') + 14, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(e);
}

/* CPU 1: thread 101 continues in E, returns to A, makes a syscall, calls
 * D through %rbx, and is stopped. */
static void cpu1(struct ptenc *e)
{
	ptenc_begin(e, 2000, 0);	/* tracing off at the PSB */
	ptenc_ip(e, ppt_tip_pge, F('E'), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip, F('A') + 10, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_tsc(e, 3000);
	ptenc_ip(e, ppt_tip_pge, F('A') + 12, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip, F('D'), pt_ipc_sext_48);
	ptenc_tnt(e, "1");
	ptenc_tsc(e, 4000);
	ptenc_ip(e, ppt_fup, F('A') + 14, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(e);
}

struct streams {
	const uint8_t *data[2];
	size_t len[2];
	/* The context switches (NULL: those of cpu0() and cpu1()). */
	const struct mt_bundle_switch_entry *sw;
	size_t nsw;
};

static void write_bundle(const char *path, const char *exe, const struct streams *pts)
{
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_INTEL, .family = 6,
					  .model = 0x55, .stepping = 4 };
	struct mt_bundle_pt_config_desc ptc = { .rtit_ctl = MT_RTIT_CTL_TRACEEN |
							    MT_RTIT_CTL_USER | MT_RTIT_CTL_TSCEN |
							    MT_RTIT_CTL_BRANCHEN,
						.target_pid = 100 };
	struct mt_bundle_switch_entry sw[] = {
		{ .tsc = 1550, .cpu = 0, .prev_pid = 100, .prev_tid = 101, .next_pid = 100,
		  .next_tid = 102 },
		{ .tsc = 1750, .cpu = 0, .prev_pid = 100, .prev_tid = 102 },
		{ .tsc = 1990, .cpu = 1, .next_pid = 100, .next_tid = 101 },
	};
	/* ns = 1000000 + tsc / 2 */
	struct mt_bundle_clock_entry clk[] = { { .tsc = 0, .boottime_ns = 1000000 },
					       { .tsc = 10000, .boottime_ns = 1005000 } };
	struct mt_bundle_clock_desc cd = { .tsc_hz = 2000000000 };
	struct mt_bundle_trigger trig = { .d = { .reason = MT_BUNDLE_REASON_UPROBE, .cpu = 1,
						 .pid = 100, .tid = 101, .tsc = trig_tsc } };

	trig.d.ip = F('A') + trig_off;	/* by default the call through %rbx */
	struct mt_bundle_map map = { .start = 0, .pid = 100,
				     .prot = MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_EXEC,
				     .path = exe };
	struct mt_bundle_pt_desc pt0 = { .cpu = 0, .stop_tsc = 1800 },
				 pt1 = { .cpu = 1, .stop_tsc = 4100 };
	struct mt_bundle_writer *w;
	char err[256], cmd[600], line[256];
	FILE *p;

	/* The executable PT_LOAD segment, as the kernel would map it. */
	static unsigned long long vaddr, off, filesz;

	if (!vaddr) {
		snprintf(cmd, sizeof(cmd),
			 "readelf -lW '%s' | awk '$1==\"LOAD\" && / E / {print $2, $3, $5}'", exe);
		p = popen(cmd, "r");
		MT_ASSERT(p && fgets(line, sizeof(line), p));
		pclose(p);
		MT_ASSERT(sscanf(line, "%llx %llx %llx", &off, &vaddr, &filesz) == 3);
	}
	map.start = vaddr & ~0xfffull;
	map.file_offset = off & ~0xfffull;
	map.end = (vaddr + filesz + 0xfff) & ~0xfffull;
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &ptc), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt0, pts->data[0], pts->len[0]), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt1, pts->data[1], pts->len[1]), 0);
	MT_ASSERT_EQ(pts->sw ? mt_bundle_write_switches(w, pts->sw, pts->nsw)
			     : mt_bundle_write_switches(w, sw, 3), 0);
	MT_ASSERT_EQ(mt_bundle_write_maps(w, &map, 1), 0);
	MT_ASSERT_EQ(mt_bundle_write_clock(w, &cd, clk, 2), 0);
	MT_ASSERT_EQ(mt_bundle_write_trigger(w, &trig), 0);
	MT_ASSERT_MSG(mt_bundle_writer_finish(w) == 0, "%s", mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
}

/* Assembles the program (once) and finds its functions. */
static void build_prog(void)
{
	const char *c = "ABCDE";

	if (fn[0])
		return;
	fx_write("prog.s", prog_s);
	fx_sh("cc -nostdlib -static -no-pie -o prog prog.s");
	for (int i = 0; i < 5; i++) {
		char name[2] = { c[i], 0 };

		fn[i] = fx_nm("prog", name);
		MT_ASSERT(fn[i]);
	}
}

/* Writes a bundle of the program with the PT streams PTS (NULL: the
 * correct ones) and opens a decoder on it. */
static void open_bundle_with(struct mt_bundle_reader **r, struct mt_decode **d,
			     const struct streams *pts)
{
	struct ptenc e0, e1;
	struct streams good;
	char err[512];

	build_prog();
	cpu0(&e0);
	cpu1(&e1);
	good = (struct streams){ { e0.buf, e1.buf }, { e0.len, e1.len }, NULL, 0 };
	write_bundle(fx_path("t.mtrace"), fx_path("prog"), pts ? pts : &good);
	MT_ASSERT_MSG(mt_bundle_open(r, fx_path("t.mtrace"), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(d, *r, NULL, err, sizeof(err)) == 0, "%s", err);
}

static void open_bundle(struct mt_bundle_reader **r, struct mt_decode **d)
{
	open_bundle_with(r, d, NULL);
}

/* The text dump of a whole run. */
static char *text_dump(struct mt_decode *d)
{
	struct mt_textout t = { d, NULL };
	struct mt_decode_sink s;
	char *text;
	size_t len;

	t.out = open_memstream(&text, &len);
	MT_ASSERT(t.out);
	s = mt_textout_sink(&t);
	MT_ASSERT_EQ(mt_decode_run(d, &s), 0);
	fclose(t.out);
	return text;
}

MT_TEST(two_threads_two_cpus_text_dump)
{
	/* Block times are libipt's, which reads up to one timing packet
	 * ahead, spread by instructions between two timing packets (B's
	 * between 500 and 750) but not over trace off; ns = 1000000 + tsc / 2
	 * by the anchors. */
	static const char want_fmt[] =
		"1000500 101 B A inferred\n"
		"1000583 101 B B\n"
		"1000666 101 E B\n"
		"1000750 101 B C\n"
		"1000750 101 E C\n"
		"1000750 101 B E tail\n"
		"1000750 101 B [untraced]\n"
		"1000850 102 B A inferred\n"
		"1000850 102 B D inferred\n"
		"1000850 102 E D\n"
		"1000850 102 B [untraced]\n"
		"1000850 102 E [untraced] truncated\n"
		"1000850 102 E A truncated\n"
		"1001000 101 E [untraced]\n"
		"1001000 101 E E\n"
		"1001000 101 B [syscall]\n"
		"1001500 101 E [syscall]\n"
		"1001750 trigger 101 0x%" PRIx64 " A\n"
		"1002000 101 B D\n"
		"1002000 101 E D\n"
		"1002000 101 B [untraced]\n"
		"1002000 101 E [untraced] truncated\n"
		"1002000 101 E A truncated\n";
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char *text, want[sizeof(want_fmt) + 32];

	open_bundle(&r, &d);
	snprintf(want, sizeof(want), want_fmt, F('A') + 12);
	text = text_dump(d);
	MT_ASSERT_EQ(mt_decode_get_stats(d)->threads, 2);
	MT_ASSERT_EQ(mt_decode_get_stats(d)->errors, 0);
	MT_ASSERT_STREQ(text, want);
	free(text);
	mt_decode_free(d);
	mt_bundle_close(r);
}

/* The text sink on a thread of its own (mt_decode_opts.sink_thread) prints
 * what it prints on the merge's, the trigger in place. */
MT_TEST(text_dump_from_the_sinks_own_thread)
{
	const struct mt_decode_opts o = { .sink_thread = 1 };
	struct mt_bundle_reader *r;
	struct mt_decode *d, *apart;
	char err[512], *text, *text_apart;

	open_bundle(&r, &d);
	MT_ASSERT_MSG(mt_decode_open(&apart, r, &o, err, sizeof(err)) == 0, "%s", err);
	text = text_dump(d);
	text_apart = text_dump(apart);
	MT_ASSERT(strstr(text, "trigger"));
	MT_ASSERT_STREQ(text_apart, text);
	free(text);
	free(text_apart);
	mt_decode_free(apart);
	mt_decode_free(d);
	mt_bundle_close(r);
}

/* A thread's trace on its own CPU: on in D from START, which returns to
 * A+14; off at OFF; on in D again at 1500, off at END. */
static void returns_from_d(struct ptenc *e, uint64_t start, uint64_t off, uint64_t end)
{
	ptenc_begin(e, start, F('D'));
	ptenc_ip(e, ppt_tip, F('A') + 14, pt_ipc_sext_48);
	ptenc_tsc(e, off);
	ptenc_ip(e, ppt_fup, F('A') + 14, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_tsc(e, 1500);
	ptenc_ip(e, ppt_tip_pge, F('D'), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip, F('A') + 14, pt_ipc_sext_48);
	ptenc_tsc(e, end);
	ptenc_ip(e, ppt_fup, F('A') + 14, pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(e);
}

/*
 * Two threads' events at the same time go in thread order (the thread
 * seen first first), even when the other thread's event just before was
 * the merge's: both come back at TSC 1700, and 101's events there go
 * first although 102's last event (at 1300) came after 101's (at 1200).
 */
MT_TEST(equal_times_go_in_thread_order)
{
	static const char want[] = "1000600 101 B A inferred\n"
				   "1000600 101 B D inferred\n"
				   "1000600 101 E D\n"
				   "1000600 101 B [untraced]\n"
				   "1000650 102 B A inferred\n"
				   "1000650 102 B D inferred\n"
				   "1000650 102 E D\n"
				   "1000650 102 B [untraced]\n"
				   "1000850 101 E [untraced]\n"
				   "1000850 101 B D async\n"
				   "1000850 101 E D\n"
				   "1000850 101 B [untraced]\n"
				   "1000850 101 E [untraced] truncated\n"
				   "1000850 101 E A truncated\n"
				   "1000850 102 E [untraced]\n"
				   "1000850 102 B D async\n"
				   "1000850 102 E D\n"
				   "1000850 102 B [untraced]\n"
				   "1000850 102 E [untraced] truncated\n"
				   "1000850 102 E A truncated\n";
	const struct mt_bundle_switch_entry sw[] = {
		{ .tsc = 990, .cpu = 0, .next_pid = 100, .next_tid = 101 },
		{ .tsc = 1090, .cpu = 1, .next_pid = 100, .next_tid = 102 },
	};
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	struct ptenc e0, e1;
	struct streams s;
	char err[512], *text;

	build_prog();
	returns_from_d(&e0, 1000, 1200, 1700);
	returns_from_d(&e1, 1100, 1300, 1700);
	s = (struct streams){ { e0.buf, e1.buf }, { e0.len, e1.len }, sw, 2 };
	write_bundle(fx_path("t.mtrace"), fx_path("prog"), &s);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("t.mtrace"), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, NULL, err, sizeof(err)) == 0, "%s", err);
	text = text_dump(d);
	MT_ASSERT_MSG(!strncmp(text, want, strlen(want)), "got:\n%s", text);
	free(text);
	mt_decode_free(d);
	mt_bundle_close(r);
}

/*
 * A run releases each CPU's PT from the reader once decoded: a second
 * decoder opened on the same reader before still decodes the same, and
 * the PT reads back unchanged. The streams are padded (PAD packets) to be
 * stored compressed, so releasing frees them and reading decompresses again.
 */
/* A probe at A+14, where thread 101's trace stops (FUP, TIP.PGD at TSC
 * 4000), whose trigger records a later TSC (4050: the probe's handler ran
 * after the stop): the trigger is placed at the stop, after the thread's
 * events there but before the data's end closes its frames, while the
 * recorded time stays what the bundle says. */
MT_TEST(trigger_placed_where_the_probe_stopped_the_trace)
{
	struct mt_bundle_reader *r;
	struct mt_bundle_trigger t;
	struct mt_decode *d;
	char *text, want[128];
	uint64_t ns;

	trig_off = 14;
	trig_tsc = 4050;
	open_bundle(&r, &d);
	trig_off = 12;
	trig_tsc = 3500;
	text = text_dump(d);
	snprintf(want, sizeof(want),
		 "1002000 101 B [untraced]\n1002000 trigger 101 0x%" PRIx64 " A\n"
		 "1002000 101 E [untraced] truncated\n",
		 F('A') + 14);
	MT_ASSERT_MSG(strstr(text, want), "no \"%s\" in:\n%s", want, text);
	MT_ASSERT_EQ(mt_decode_trigger(d, &ns, &t), 0);
	MT_ASSERT_EQ(ns, 1002025);
	free(text);
	mt_decode_free(d);
	mt_bundle_close(r);
}

MT_TEST(decoders_share_a_reader_that_releases_pt)
{
	static uint8_t padded[2][8192];
	struct mt_bundle_section_info si;
	struct mt_bundle_reader *r;
	struct mt_decode *d, *d2;
	struct ptenc e0, e1;
	struct streams s;
	char err[512], *a, *b;
	int compressed = 0;

	build_prog();
	cpu0(&e0);
	cpu1(&e1);
	memcpy(padded[0], e0.buf, e0.len);
	memcpy(padded[1], e1.buf, e1.len);
	s = (struct streams){ { padded[0], padded[1] },
			      { e0.len + 4096, e1.len + 4096 }, NULL, 0 };
	open_bundle_with(&r, &d, &s);
	for (size_t i = 0; !mt_bundle_section_info(r, i, &si); i++)
		compressed += si.type == MT_BUNDLE_SEC_PT_DATA &&
			      si.compression == MT_BUNDLE_COMP_ZSTD;
	MT_ASSERT_EQ(compressed, 2);
	MT_ASSERT_MSG(mt_decode_open(&d2, r, NULL, err, sizeof(err)) == 0, "%s", err);
	a = text_dump(d);
	b = text_dump(d2);
	MT_ASSERT(strstr(a, " B D"));
	MT_ASSERT_STREQ(a, b);
	for (size_t i = 0; i < 2; i++) {
		const uint8_t *data;
		size_t len;

		MT_ASSERT_EQ(mt_bundle_pt_data(r, i, &data, &len), 0);
		MT_ASSERT_EQ(len, s.len[i]);
		MT_ASSERT_MEMEQ(data, s.data[i], len);
	}
	free(a);
	free(b);
	mt_decode_free(d2);
	mt_decode_free(d);
	mt_bundle_close(r);
}

MT_TEST(perfetto_writer_accepts_the_stream)
{
	struct mt_bundle_reader *r;
	struct mt_decode *d;

	fx_need("python3");
	open_bundle(&r, &d);
	fx_decode_json(r, d, "t.json");
	mt_decode_free(d);
	mt_bundle_close(r);
	/* Every function appears, and begins balance ends per thread. Each
	 * CPU's trace window is a "[trace data]" slice on a row of its own
	 * in the "mtrace" pseudo-process: CPU 0 from TSC 1000 to 1700, CPU 1
	 * from 2000 to 4000 (JSON µs from the first event = (tsc - 1000) / 2000). */
	fx_sh("python3 -c 'import json,sys,collections\n"
	      "t = json.load(open(\"t.json\"))\n"
	      "ev = t[\"traceEvents\"] if isinstance(t, dict) else t\n"
	      "names = {e.get(\"name\") for e in ev}\n"
	      "assert {\"A\",\"B\",\"C\",\"D\",\"E\"} <= names, names\n"
	      "d = collections.Counter()\n"
	      "for e in ev:\n"
	      "  d[e.get(\"tid\")] += {\"B\": 1, \"E\": -1}.get(e.get(\"ph\"), 0)\n"
	      "assert all(v == 0 for v in d.values()), d\n"
	      "w = sorted((e[\"tid\"], e[\"ph\"], e[\"ts\"]) for e in ev\n"
	      "  if e.get(\"pid\") == -1 and e[\"ph\"] in \"BE\")\n"
	      "assert [x[2] for x in w] == [0.0, 0.35, 0.5, 1.5], w\n"
	      "assert {e[\"args\"][\"name\"] for e in ev if e.get(\"pid\") == -1 and\n"
	      "  e[\"ph\"] == \"M\"} == {\"mtrace\", \"CPU 0 trace\", \"CPU 1 trace\"}\n'");
}

/* The Perfetto adapter's failures are negative errnos: its own with a
 * message in po.err, the writer's with the writer's message. */
MT_TEST(perfetto_adapter_errors_are_errnos)
{
	const struct mt_ev ev = { .kind = MT_EV_INSTANT };
	struct mt_bundle_reader *r;
	struct mt_decode_sink sink;
	struct mt_decode *d;
	struct mt_pfout po;
	struct pf_writer *w;
	char err[256];

	open_bundle(&r, &d);
	MT_ASSERT_MSG(pf_writer_open(&w, fx_path("err.pftrace"), NULL, err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT_EQ(mt_pfout_init(&po, d, r, w, &sink), 0);
	MT_ASSERT_EQ(sink.event(sink.ctx, 7, 7, 1, &ev), -EINVAL);
	MT_ASSERT_STREQ(po.err, "event of thread 7/7 before the thread");
	po.err[0] = '\0';
	MT_ASSERT_EQ(sink.thread(sink.ctx, 100, 101), 0);
	MT_ASSERT_EQ(sink.thread(sink.ctx, 100, 101), -PF_EEXIST);
	MT_ASSERT_EQ(-PF_EEXIST, -EEXIST);
	MT_ASSERT_STREQ(pf_writer_error(w), "thread 101 declared twice");
	MT_ASSERT_EQ(pf_writer_close(w, 0, NULL, NULL, 0), 0);
	mt_pfout_fini(&po);
	mt_decode_free(d);
	mt_bundle_close(r);
}

static int full_disk_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns,
			   const struct mt_ev *ev)
{
	int *calls = ctx;

	(void)pid, (void)tid, (void)ns, (void)ev;
	return ++*calls == 3 ? -ENOSPC : 0;
}

/* A sink's failure ends the run with the sink's value, and is the sink's to
 * explain: the decoder has nothing to say (mt_decode_error()), with the
 * replay following the decoding and without. */
MT_TEST(a_sink_failure_is_not_the_decoders)
{
	for (int late = 0; late <= 1; late++) {
		int calls = 0;
		struct mt_decode_sink sink = { NULL, full_disk_event, NULL, &calls, late };
		struct mt_bundle_reader *r;
		struct mt_decode *d;

		open_bundle(&r, &d);
		MT_ASSERT_EQ(mt_decode_run(d, &sink), -ENOSPC);
		MT_ASSERT_EQ(calls, 3);
		MT_ASSERT_MSG(!mt_decode_error(d)[0], "late %d: '%s'", late, mt_decode_error(d));
		mt_decode_free(d);
		mt_bundle_close(r);
	}
}

static int balanced_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns,
			  const struct mt_ev *ev)
{
	long *depth = ctx;

	(void)pid, (void)ns;
	if (ev->kind == MT_EV_BEGIN)
		depth[tid & 1023]++;
	else if (ev->kind == MT_EV_END && --depth[tid & 1023] < 0)
		return -1;
	return 0;
}

/*
 * Corrupted PT data (bytes flipped, inserted garbage, cut short) must give
 * gaps, never a crash, a hang or unbalanced frames: 200 deterministic
 * mutations of both CPU streams through the whole decoder.
 */
MT_TEST(mutated_pt_streams_decode_safely)
{
	struct ptenc e0, e1;
	uint64_t errors = 0;
	uint32_t x = 2024;

	build_prog();
	cpu0(&e0);
	cpu1(&e1);
	for (int round = 0; round < 200; round++) {
		uint8_t buf[2][sizeof(e0.buf)];
		struct streams s = { { buf[0], buf[1] }, { e0.len, e1.len }, NULL, 0 };
		struct mt_decode_sink sink = { NULL, balanced_event, NULL, NULL, 0 };
		struct mt_bundle_reader *r;
		struct mt_decode *d;
		long depth[1024] = { 0 };

		memcpy(buf[0], e0.buf, e0.len);
		memcpy(buf[1], e1.buf, e1.len);
		for (int k = 0; k < 2; k++) {
			for (int m = 0; m < 1 + round % 4; m++) {
				x = x * 1103515245u + 12345u;
				buf[k][(x >> 8) % s.len[k]] = (uint8_t)(x >> 20);
			}
			x = x * 1103515245u + 12345u;
			if (round % 5 == 0)
				s.len[k] = (x >> 8) % s.len[k];
		}
		open_bundle_with(&r, &d, &s);
		sink.ctx = depth;
		MT_ASSERT_MSG(mt_decode_run(d, &sink) == 0, "round %d: unbalanced frames", round);
		for (int t = 0; t < 1024; t++)
			MT_ASSERT_MSG(depth[t] == 0, "round %d: thread %d left open", round, t);
		errors += mt_decode_get_stats(d)->errors;
		mt_decode_free(d);
		mt_bundle_close(r);
	}
	/* The mutations did reach the error paths. */
	MT_ASSERT(errors > 25);
}

struct progress_log {
	uint64_t calls, last_done, total;
	int backwards;
};

static void log_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress_log *p = ctx;

	p->backwards |= done < p->last_done || (p->calls && total != p->total);
	p->calls++;
	p->last_done = done;
	p->total = total;
}

static int drop_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)ctx, (void)pid, (void)tid, (void)ns, (void)ev;
	return 0;
}

/* The progress callback counts every byte of PT once and ends at 100%. */
MT_TEST(progress_reaches_every_pt_byte)
{
	struct progress_log p = { 0 };
	struct mt_decode_opts o = { .jobs = 2, .progress = log_progress, .progress_ctx = &p };
	struct mt_decode_sink sink = { NULL, drop_event, NULL, NULL, 0 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];

	open_bundle(&r, &d);
	mt_decode_free(d);
	MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_decode_run(d, &sink), 0);
	MT_ASSERT(p.calls >= 1);
	MT_ASSERT(!p.backwards);
	MT_ASSERT_EQ(p.last_done, p.total);
	MT_ASSERT_EQ(p.total, mt_decode_get_stats(d)->pt_bytes);
	MT_ASSERT(p.total > 0);
	mt_decode_free(d);
	mt_bundle_close(r);
}
