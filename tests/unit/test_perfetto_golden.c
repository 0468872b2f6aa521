// SPDX-License-Identifier: MIT
/*
 * Golden tests of the Perfetto writer: small timelines must produce exactly
 * the packets in tests/perfetto/golden/, compared as protoc's text decoding
 * against the project's own schema subset (tests/perfetto/mtrace_perfetto.proto),
 * and the Chrome JSON byte for byte. Run from the source tree (as
 * tests/check.sh does) or set MTRACE_SRCDIR. PF_GOLDEN_UPDATE=1 rewrites the
 * expected files: review the diff before keeping it.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/mt_test.h"
#include "../perfetto/pf_testutil.h"
#include "perfetto/pf_writer.h"

static const char *srcdir(void)
{
	const char *d = getenv("MTRACE_SRCDIR");

	return d && *d ? d : ".";
}

static char *slurp(FILE *f, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	do {
		if (cap - *len < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			MT_ASSERT(buf);
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	buf[*len] = 0;
	return buf;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s;

	if (!f)
		return NULL;
	s = slurp(f, len);
	fclose(f);
	return s;
}

/* Compares @got with the golden file @name (or rewrites it); frees @got. */
static void check_golden(const char *name, char *got, size_t len)
{
	char path[512], *want;
	size_t wlen = 0, line = 1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/perfetto/golden/%s", srcdir(), name);
	if (getenv("PF_GOLDEN_UPDATE")) {
		f = fopen(path, "wb");
		if (!f || fwrite(got, 1, len, f) != len || fclose(f))
			wlen = (size_t)-1;
		free(got);
		MT_ASSERT_MSG(wlen != (size_t)-1, "cannot write %s", path);
		return;
	}
	want = read_file(path, &wlen);
	if (!want)
		free(got);
	MT_ASSERT_MSG(want, "missing golden file %s (run from the source tree or set MTRACE_SRCDIR)",
		      path);
	for (size_t i = 0; i < len && i < wlen; i++) {
		if (got[i] != want[i]) {
			const char *g = got + i, *w = want + i;

			while (g > got && g[-1] != '\n')
				g--;
			while (w > want && w[-1] != '\n')
				w--;
			printf("# got:  %.*s\n# want: %.*s\n", (int)strcspn(g, "\n"), g,
			       (int)strcspn(w, "\n"), w);
			free(want);
			free(got);
			mt_fail(__FILE__, __LINE__, "%s differs at line %zu", name, line);
		}
		line += got[i] == '\n';
	}
	free(want);
	free(got);
	MT_ASSERT_MSG(len == wlen, "%s: %zu bytes, golden has %zu", name, len, wlen);
}

/* Decodes @trace with protoc against the project's schema subset. */
static void check_decoded(const char *trace, const char *golden)
{
	char cmd[1536], *out;
	size_t len;
	FILE *p;
	int rc;

	if (system("protoc --version >/dev/null 2>&1"))
		mt_skip("protoc not installed (Debian: protobuf-compiler)");
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode=perfetto.protos.Trace -I'%s/tests/perfetto' mtrace_perfetto.proto <'%s' 2>&1",
		 srcdir(), trace);
	p = popen(cmd, "r");
	MT_ASSERT(p);
	out = slurp(p, &len);
	rc = pclose(p);
	if (rc) {
		printf("# %s", out);
		free(out);
	}
	MT_ASSERT_MSG(rc == 0, "protoc failed on %s", trace);
	check_golden(golden, out, len);
}

/* The timelines. Each writes one file and returns nothing; every call must
 * succeed. */
#define OK(call) MT_ASSERT_EQ((call), 0)

static int32_t frame(struct pf_writer *w, const char *sym, uint64_t addr, const char *file,
		     uint32_t line)
{
	struct pf_frame f = { .symbol = sym, .binary = "/usr/bin/app", .addr = addr,
			      .file = file, .line = line };
	int32_t id = pf_writer_intern(w, &f);

	MT_ASSERT(id >= 0);
	return id;
}

static void open_app(struct pf_writer **w, const char *path, const struct pf_options *o)
{
	static const char *const argv[] = { "/usr/bin/app", "--port=8080" };

	char err[256];

	MT_ASSERT_MSG(pf_writer_open(w, path, o, err, sizeof(err)) == 0, "%s", err);
	OK(pf_writer_add_process(*w, 100, "app", argv, 2));
}

/* Nested calls, reused names, a zero-length call. */
static void timeline_basic(const char *path, const struct pf_options *o)
{
	struct pf_writer *w;
	int t;
	int32_t m, p, l;

	open_app(&w, path, o);
	t = pf_writer_add_thread(w, 100, 100, "app");
	MT_ASSERT(t >= 0);
	m = frame(w, "main", 0x401000, "app.c", 12);
	p = frame(w, "parse", 0x401200, "parse.c", 30);
	l = frame(w, "lookup", 0x401400, NULL, 0);
	OK(pf_begin(w, t, 1000000, m, 0));
	OK(pf_begin(w, t, 1000040, p, 0));
	OK(pf_begin(w, t, 1000050, l, 0));
	OK(pf_end(w, t, 1000050));
	OK(pf_begin(w, t, 1000090, l, 0));
	OK(pf_end(w, t, 1000300));
	OK(pf_end(w, t, 1000310));
	OK(pf_begin(w, t, 1020000, p, 0));
	OK(pf_end(w, t, 1020100));
	OK(pf_end(w, t, 1020200));
	OK(pf_writer_close(w, 0, NULL, NULL, 0));
}

/* Inferred frames, a gap, the depth cap, frames truncated at the end. */
static void timeline_edges(const char *path, const struct pf_options *base)
{
	struct pf_options o = *base;
	struct pf_writer *w;
	int t;
	int32_t m, s, r;

	o.max_depth = 3;
	open_app(&w, path, &o);
	t = pf_writer_add_thread(w, 100, 100, "app");
	MT_ASSERT(t >= 0);
	m = frame(w, "main", 0x401000, "app.c", 12);
	s = frame(w, "serve", 0x401100, "app.c", 40);
	r = frame(w, "recurse", 0x401300, "app.c", 77);
	OK(pf_begin(w, t, 5000, m, PF_BEGIN_INFERRED));
	OK(pf_begin(w, t, 5000, s, PF_BEGIN_INFERRED));
	OK(pf_begin(w, t, 5010, r, 0));
	OK(pf_begin(w, t, 5020, r, 0));
	OK(pf_begin(w, t, 5030, r, 0));
	OK(pf_end(w, t, 5040));
	OK(pf_end(w, t, 5050));
	OK(pf_gap(w, t, 5100, "overflow"));
	OK(pf_begin(w, t, 5500, m, PF_BEGIN_INFERRED));
	OK(pf_begin(w, t, 5600, s, 0));
	OK(pf_writer_close(w, 6000, NULL, NULL, 0));
}

/* Two processes, three threads with per-thread interning, a kernel frame,
 * untraced time and the trigger. */
static void timeline_processes(const char *path, const struct pf_options *o)
{
	struct pf_frame kf = { .symbol = "do_sys_openat2", .binary = "[kernel]",
			       .addr = 0xffffffff812a0000ull, .flags = PF_FRAME_KERNEL };
	struct pf_frame uf = { .symbol = "[syscall]", .flags = PF_FRAME_UNTRACED };
	struct pf_trigger tr = { .ts_ns = 2000150, .pid = 100, .tid = 101, .ip = 0x401234,
				 .reason = "uprobe:/usr/bin/app:handle", .symbol = "handle",
				 .freeze_path = "kfunc", .skid_ns = 640 };
	struct pf_writer *w;
	int a, b, c;
	int32_t h, k, u;

	open_app(&w, path, o);
	OK(pf_writer_add_process(w, 200, "db", NULL, 0));
	a = pf_writer_add_thread(w, 100, 100, "app");
	b = pf_writer_add_thread(w, 100, 101, "worker");
	c = pf_writer_add_thread(w, 200, 200, "db");
	MT_ASSERT(a >= 0 && b >= 0 && c >= 0);
	h = frame(w, "handle", 0x401200, "app.c", 50);
	k = pf_writer_intern(w, &kf);
	u = pf_writer_intern(w, &uf);
	MT_ASSERT(k >= 0 && u >= 0);
	OK(pf_writer_set_trigger(w, &tr));
	OK(pf_begin(w, a, 2000000, h, 0));
	OK(pf_begin(w, b, 2000100, h, 0));
	OK(pf_begin(w, b, 2000120, k, 0));
	OK(pf_begin(w, c, 2000130, h, 0));
	OK(pf_end(w, b, 2000140));
	OK(pf_begin(w, c, 2000150, u, 0));
	OK(pf_end(w, c, 2000190));
	OK(pf_end(w, c, 2000200));
	OK(pf_end(w, b, 2000210));
	OK(pf_instant(w, a, 2000220, "sched out"));
	OK(pf_end(w, a, 2000300));
	OK(pf_writer_close(w, 0, NULL, NULL, 0));
}

static void proto_case(void (*timeline)(const char *, const struct pf_options *),
		       const char *golden)
{
	struct pf_options o;
	struct pfr_trace t;
	const char *path = pft_path(golden);

	pf_options_init(&o);
	timeline(path, &o);
	/* The golden files are only trusted because the rules hold too. */
	pft_read_clean(path, &t);
	pfr_free(&t);
	check_decoded(path, golden);
}

static void json_case(void (*timeline)(const char *, const struct pf_options *),
		      const char *golden)
{
	struct pf_options o;
	const char *path = pft_path(golden);
	char *got;
	size_t len;

	pf_options_init(&o);
	o.format = PF_FORMAT_JSON;
	timeline(path, &o);
	got = read_file(path, &len);
	MT_ASSERT(got);
	check_golden(golden, got, len);
}

MT_TEST(basic_proto)
{
	proto_case(timeline_basic, "basic.txtpb");
}

MT_TEST(edges_proto)
{
	proto_case(timeline_edges, "edges.txtpb");
}

MT_TEST(processes_trigger_proto)
{
	proto_case(timeline_processes, "processes.txtpb");
}

MT_TEST(basic_json)
{
	json_case(timeline_basic, "basic.json");
}

MT_TEST(edges_json)
{
	json_case(timeline_edges, "edges.json");
}

MT_TEST(processes_trigger_json)
{
	json_case(timeline_processes, "processes.json");
}
