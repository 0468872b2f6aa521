// SPDX-License-Identifier: MIT
/*
 * Process images from maps: a real PIE and shared library are run, their
 * /proc/self/maps become bundle map records, and the libipt image built
 * from them must hold, at the run-time addresses the process printed, the
 * very bytes the process read from its own memory; addresses must resolve
 * to the right symbols through the load bias; a bundle's embedded copy
 * must win over a local file with another build-id; a binary's symbols
 * load while another binary's are loading; a function's inline ranges
 * are read once for every process mapping its binary.
 */
#include "test_decode_fixture.h"
#include "test_decode_ptenc.h"

#include "decode/funcs.h"
#include "sym/sym_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static const char lib_c[] = "int libfn(int x) { return x * 5 + 2; }\n";
static const char lib_old_c[] = "int libfn(int x) { return x * 7 + 3; }\n";
static const char main_c[] =
	"#include <stdio.h>\n"
	"int libfn(int);\n"
	"__attribute__((noinline)) int alpha(int x) { return libfn(x) + 1; }\n"
	"static void dump(const char *n, const void *p) {\n"
	"\tconst unsigned char *b = p;\n"
	"\tprintf(\"%s %p \", n, p);\n"
	"\tfor (int i = 0; i < 16; i++) printf(\"%02x\", b[i]);\n"
	"\tprintf(\"\\n\");\n"
	"}\n"
	"int main(void) {\n"
	"\tchar line[512];\n"
	"\tFILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"\tdump(\"alpha\", (void *)alpha);\n"
	"\tdump(\"libfn\", (void *)libfn);\n"
	"\twhile (fgets(line, sizeof(line), f)) printf(\"map %s\", line);\n"
	"\treturn alpha(1) == 8 ? 0 : 1;\n"
	"}\n";

/* use() has sq() inlined twice: inline ranges. */
static const char inl_main_c[] =
	"#include <stdio.h>\n"
	"static inline __attribute__((always_inline)) int sq(int v) { return v * v + 1; }\n"
	"__attribute__((noipa)) int use(int x) { return sq(x) ^ sq(x + 3); }\n"
	"int main(int c, char **v) {\n"
	"\tchar line[512];\n"
	"\tFILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"\t(void)v;\n"
	"\tprintf(\"use %p 00000000000000000000000000000000\\n\", (void *)use);\n"
	"\tprintf(\"main %p 00000000000000000000000000000000\\n\", (void *)main);\n"
	"\twhile (fgets(line, sizeof(line), f)) printf(\"map %s\", line);\n"
	"\treturn use(c) == 0;\n"
	"}\n";

struct fx_run {
	struct mt_bundle_map maps[64];
	char paths[64][256];
	size_t nmaps;
	uint64_t addr[2];
	uint8_t bytes[2][16];
};

/* Reads what a fixture program printed to TXT: the addresses and first
 * bytes of the functions NAMES (dump() lines), and its maps. */
static void read_run(const char *txt, const char *const names[2], struct fx_run *r)
{
	char line[1024];
	FILE *f = fopen(fx_path(txt), "r");

	MT_ASSERT(f);
	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], name[16], hex[40];
		int pos = 0;
		void *p;

		if (sscanf(line, "%15s %p %39s", name, &p, hex) == 3 &&
		    (!strcmp(name, names[0]) || !strcmp(name, names[1]))) {
			int k = !strcmp(name, names[1]);

			r->addr[k] = (uint64_t)(uintptr_t)p;
			for (int i = 0; i < 16; i++)
				sscanf(hex + 2 * i, "%2hhx", &r->bytes[k][i]);
			continue;
		}
		if (sscanf(line, "map %llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4 ||
		    r->nmaps == 64)
			continue;
		struct mt_bundle_map *m = &r->maps[r->nmaps];

		line[strcspn(line, "\n")] = 0;
		snprintf(r->paths[r->nmaps], sizeof(r->paths[0]), "%s", pos ? line + pos : "");
		*m = (struct mt_bundle_map){ .start = s, .end = e, .file_offset = off, .pid = 42,
					      .path = r->paths[r->nmaps] };
		m->prot = (perms[0] == 'r' ? MT_BUNDLE_PROT_READ : 0) |
			  (perms[2] == 'x' ? MT_BUNDLE_PROT_EXEC : 0);
		r->nmaps++;
	}
	fclose(f);
	MT_ASSERT(r->addr[0] && r->addr[1] && r->nmaps > 4);
}

static void run_fixture(struct fx_run *r)
{
	static const char *const names[2] = { "alpha", "libfn" };

	fx_write("lib.c", lib_c);
	fx_write("lib_old.c", lib_old_c);
	fx_write("main.c", main_c);
	fx_sh("cc -g -O0 -fPIC -shared -o libfx.so lib.c && "
	      "cc -g -O0 -fPIC -shared -o libfx_old.so lib_old.c && "
	      "cc -g -O0 -fPIE -pie -o fxmain main.c -L. -lfx -Wl,-rpath,\"\\$ORIGIN\" && "
	      "./fxmain > run.txt");
	read_run("run.txt", names, r);
}

static char warnings[4096];

static void warn(void *ctx, const char *msg)
{
	size_t n = strlen(warnings);

	(void)ctx;
	snprintf(warnings + n, sizeof(warnings) - n, "%s\n", msg);
}

/*
 * The bytes of the instruction at IP as libipt's instruction decoder reads
 * them from IMG (libipt 2.0.5 exports no direct image read): decode a
 * stream that starts tracing at IP. Returns the instruction's size.
 */
static size_t read_image(struct pt_image *img, uint64_t ip, uint8_t *buf)
{
	struct pt_insn_decoder *dec;
	struct pt_config cfg;
	struct pt_insn insn;
	struct ptenc e;
	int st;

	ptenc_begin(&e, 1000, ip);
	ptenc_end(&e);
	pt_config_init(&cfg);
	cfg.begin = e.buf;
	cfg.end = e.buf + e.len;
	dec = pt_insn_alloc_decoder(&cfg);
	MT_ASSERT(dec);
	MT_ASSERT_EQ(pt_insn_set_image(dec, img), 0);
	st = pt_insn_sync_forward(dec);
	while (st >= 0 && (st & pts_event_pending)) {
		struct pt_event ev;

		st = pt_insn_event(dec, &ev, sizeof(ev));
	}
	MT_ASSERT_MSG(st >= 0, "sync: %s", pt_errstr(pt_errcode(st)));
	st = pt_insn_next(dec, &insn, sizeof(insn));
	pt_insn_free_decoder(dec);
	MT_ASSERT_MSG(st >= 0, "no instruction at 0x%" PRIx64 ": %s", ip,
		      pt_errstr(pt_errcode(st)));
	MT_ASSERT_EQ(insn.ip, ip);
	MT_ASSERT(insn.size > 0);
	memcpy(buf, insn.raw, insn.size);
	return insn.size;
}

MT_TEST(image_bytes_and_symbols_match_the_live_process)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL), *own = pt_iscache_alloc(NULL);
	struct pt_image *copy = pt_image_alloc(NULL);
	struct mt_bincache bins;
	struct mt_funcs funcs;
	struct mt_proc proc;
	struct mt_cs_fn fn;
	struct mt_func f;
	struct fx_run r;
	uint8_t buf[16];

	run_fixture(&r);
	mt_bincache_init(&bins, NULL, NULL);
	mt_funcs_init(&funcs, &bins);
	warnings[0] = 0;
	MT_ASSERT_EQ(mt_proc_build(&proc, 42, r.maps, r.nmaps, &bins, isc, warn, NULL), 0);
	for (int k = 0; k < 2; k++) {
		size_t n = read_image(proc.image, r.addr[k], buf);

		MT_ASSERT_MEMEQ(buf, r.bytes[k], n);
	}
	/* The vDSO has no file here and no copy: reported, not fatal. */
	MT_ASSERT_MSG(strstr(warnings, "[vdso]: no such file, and no copy in the bundle"),
		      "warnings: %s", warnings);

	mt_funcs_resolve(&funcs, &proc, r.addr[0] + 3, &fn);
	f = mt_funcs_get(&funcs, fn.id);
	MT_ASSERT_STREQ(f.name, "alpha");
	MT_ASSERT_EQ(fn.start, r.addr[0]);
	MT_ASSERT(strstr(f.binary, "/fxmain"));
	mt_funcs_resolve(&funcs, &proc, r.addr[1], &fn);
	f = mt_funcs_get(&funcs, fn.id);
	MT_ASSERT_STREQ(f.name, "libfn");
	MT_ASSERT_EQ(fn.start, r.addr[1]);
	MT_ASSERT(strstr(f.binary, "/libfx.so"));
	/* Same function, same id; unmapped address: unknown. */
	mt_funcs_resolve(&funcs, &proc, r.addr[1] + 1, &fn);
	MT_ASSERT_STREQ(mt_funcs_get(&funcs, fn.id).name, "libfn");
	mt_funcs_resolve(&funcs, &proc, 0x1000, &fn);
	MT_ASSERT_EQ(fn.id, MT_FN_UNKNOWN);

	/* Built again over a cache of its own (a decoding thread's), the
	 * image reads the same bytes once the process's is gone. */
	MT_ASSERT_EQ(mt_proc_image(&proc, copy, own), 0);
	mt_proc_fini(&proc);
	mt_funcs_fini(&funcs);
	mt_bincache_fini(&bins);
	pt_iscache_free(isc);
	for (int k = 0; k < 2; k++) {
		size_t n = read_image(copy, r.addr[k], buf);

		MT_ASSERT_MEMEQ(buf, r.bytes[k], n);
	}
	pt_image_free(copy);
	pt_iscache_free(own);
}

/* Build-id of a fixture file according to readelf, as bytes. */
static size_t build_id(const char *file, uint8_t *id)
{
	char cmd[600], hex[200] = "";
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: //p'", fx_path(file));
	p = popen(cmd, "r");
	MT_ASSERT(p && fgets(hex, sizeof(hex), p));
	pclose(p);
	while (n < 64 && sscanf(hex + 2 * n, "%2hhx", &id[n]) == 1)
		n++;
	return n;
}

/*
 * A function's inline ranges are read from its binary's DWARF once, for
 * every thread and every process mapping the binary: another process with
 * the binary mapped elsewhere gets them moved by the difference, without
 * the DWARF (its lock held by another thread here).
 */
MT_TEST(inline_ranges_are_read_once_for_every_process)
{
	static const char *const names[2] = { "use", "main" };
	const uint64_t moved = 0x10000000;
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct mt_inl_range *ra, *rb = NULL;
	struct mt_bincache bins;
	struct mt_funcs funcs;
	struct mt_cs_fn fa, fb;
	struct mt_sym_file *sf;
	struct mt_proc a, b;
	struct fx_run r;
	int n;

	fx_write("inl_main.c", inl_main_c);
	fx_sh("cc -g -O2 -fPIE -pie -o inlmain inl_main.c && ./inlmain > inl_run.txt");
	read_run("inl_run.txt", names, &r);
	mt_bincache_init(&bins, NULL, NULL);
	mt_funcs_init(&funcs, &bins);
	MT_ASSERT_EQ(mt_proc_build(&a, 42, r.maps, r.nmaps, &bins, isc, NULL, NULL), 0);
	for (size_t i = 0; i < r.nmaps; i++) {
		r.maps[i].pid = 43;
		if (strstr(r.maps[i].path, "/inlmain")) {
			r.maps[i].start += moved;
			r.maps[i].end += moved;
		}
	}
	MT_ASSERT_EQ(mt_proc_build(&b, 43, r.maps, r.nmaps, &bins, isc, NULL, NULL), 0);
	mt_funcs_resolve(&funcs, &a, r.addr[0], &fa);
	mt_funcs_resolve(&funcs, &b, r.addr[0] + moved, &fb);
	MT_ASSERT_EQ(fa.id, fb.id);
	n = mt_funcs_inline_ranges(&funcs, &a, fa.id, r.addr[0], 1, &ra);
	MT_ASSERT_MSG(n >= 2, "%d inline ranges in use()", n);

	sf = mt_binfile_syms(&bins, mt_proc_find(&a, r.addr[0])->bin);
	MT_ASSERT(sf);
	pthread_mutex_lock(&sf->dwarf_lock);
	MT_ASSERT_EQ(mt_funcs_inline_ranges(&funcs, &b, fb.id, r.addr[0] + moved, 0, &rb), n);
	pthread_mutex_unlock(&sf->dwarf_lock);
	for (int i = 0; i < n; i++) {
		MT_ASSERT_EQ(rb[i].lo, ra[i].lo + moved);
		MT_ASSERT_EQ(rb[i].hi, ra[i].hi + moved);
		MT_ASSERT_EQ(rb[i].id, ra[i].id);
		MT_ASSERT_EQ(rb[i].depth, ra[i].depth);
		MT_ASSERT(ra[i].lo >= fa.start && ra[i].hi <= fa.end);
	}
	free(ra);
	free(rb);
	mt_proc_fini(&a);
	mt_proc_fini(&b);
	mt_funcs_fini(&funcs);
	mt_bincache_fini(&bins);
	pt_iscache_free(isc);
}

MT_TEST(embedded_copy_wins_over_a_different_local_file)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *rd;
	struct mt_bincache bins;
	struct mt_bundle_file bf;
	struct mt_proc proc;
	const struct mt_pmap *pm;
	uint8_t old_id[64], buf[16], want[16];
	size_t idlen, n;
	char err[256];
	struct fx_run r;
	FILE *f;

	run_fixture(&r);
	idlen = build_id("libfx_old.so", old_id);
	MT_ASSERT_EQ(idlen, 20);
	/* The maps claim the old build of libfx.so; only the bundle has it. */
	for (size_t i = 0; i < r.nmaps; i++) {
		if (strstr(r.maps[i].path, "/libfx.so")) {
			r.maps[i].build_id = old_id;
			r.maps[i].build_id_len = idlen;
		}
	}
	pm = NULL;
	memset(&bf, 0, sizeof(bf));
	for (size_t i = 0; i < r.nmaps; i++)
		if (strstr(r.maps[i].path, "/libfx.so"))
			bf.path = r.maps[i].path;
	MT_ASSERT(bf.path);
	bf.build_id = old_id;
	bf.build_id_len = idlen;
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, fx_path("emb.mtrace"), NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_embed_file(w, &bf, fx_path("libfx_old.so")), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&rd, fx_path("emb.mtrace"), err, sizeof(err)) == 0, "%s", err);

	mt_bincache_init(&bins, rd, NULL);
	MT_ASSERT_EQ(mt_proc_build(&proc, 42, r.maps, r.nmaps, &bins, isc, NULL, NULL), 0);
	pm = mt_proc_find(&proc, r.addr[1]);
	MT_ASSERT(pm && pm->bin && pm->bin->embedded);
	MT_ASSERT_MEMEQ(pm->bin->build_id, old_id, idlen);
	/* The image holds the old library's bytes at libfn's address. */
	n = read_image(proc.image, r.addr[1], buf);
	f = fopen(fx_path("libfx_old.so"), "rb");
	MT_ASSERT(f);
	fseek(f, (long)(r.addr[1] - pm->start + pm->offset), SEEK_SET);
	MT_ASSERT_EQ(fread(want, 1, 16, f), 16);
	fclose(f);
	MT_ASSERT_MEMEQ(buf, want, n);
	MT_ASSERT_STREQ(mt_sym_lookup(mt_binfile_syms(&bins, pm->bin), r.addr[1] - pm->bias)->name,
			"libfn");

	mt_proc_fini(&proc);
	mt_bincache_fini(&bins);
	mt_bundle_close(rd);
	pt_iscache_free(isc);
}

struct syms_call {
	struct mt_bincache *c;
	struct mt_binfile *b;
	_Atomic(struct mt_sym_file *) got;
	atomic_bool done;
};

static void *syms_main(void *arg)
{
	struct syms_call *k = arg;

	atomic_store(&k->got, mt_binfile_syms(k->c, k->b));
	atomic_store(&k->done, true);
	return NULL;
}

/* Whether K's call returned within MS milliseconds. */
static bool returned_within(struct syms_call *k, int ms)
{
	for (int i = 0; i < ms && !atomic_load(&k->done); i++)
		usleep(1000);
	return atomic_load(&k->done);
}

/*
 * Loading a binary's symbols takes neither the cache's lock nor another
 * binary's: streams that meet different binaries at once (or one that
 * looks up a mapping meanwhile) do not wait for each other. A second
 * call for a binary being loaded waits for that load, then has its result;
 * once loaded, a call takes no lock at all.
 */
MT_TEST(symbols_load_while_another_binary_loads)
{
	struct syms_call one = { 0 }, other = { 0 }, again = { 0 };
	struct mt_binfile *a, *b;
	struct mt_bincache bins;
	pthread_t t1, t2, t3;
	char err[512];

	fx_write("lib.c", lib_c);
	fx_sh("cc -g -O0 -shared -fPIC -o liba.so lib.c && cp liba.so libb.so");
	mt_bincache_init(&bins, NULL, NULL);
	a = mt_bincache_get(&bins, fx_path("liba.so"), NULL, 0, err, sizeof(err));
	b = mt_bincache_get(&bins, fx_path("libb.so"), NULL, 0, err, sizeof(err));
	MT_ASSERT_MSG(a && b && a != b, "%s", err);

	pthread_mutex_lock(&bins.lock);
	pthread_mutex_lock(&a->sym_lock);	/* another thread loading a's */
	one = (struct syms_call){ .c = &bins, .b = b };
	MT_ASSERT_EQ(pthread_create(&t1, NULL, syms_main, &one), 0);
	MT_ASSERT_MSG(returned_within(&one, 10000), "b's symbols waited");
	MT_ASSERT(atomic_load(&one.got));
	other = (struct syms_call){ .c = &bins, .b = a };
	MT_ASSERT_EQ(pthread_create(&t2, NULL, syms_main, &other), 0);
	MT_ASSERT(!returned_within(&other, 20));
	pthread_mutex_unlock(&a->sym_lock);
	pthread_mutex_unlock(&bins.lock);
	MT_ASSERT(returned_within(&other, 10000));
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	MT_ASSERT(atomic_load(&other.got));
	MT_ASSERT(atomic_load(&other.got) == mt_binfile_syms(&bins, a));
	MT_ASSERT(mt_sym_lookup(atomic_load(&other.got), fx_nm("liba.so", "libfn")));
	pthread_mutex_lock(&a->sym_lock);
	again = (struct syms_call){ .c = &bins, .b = a };
	MT_ASSERT_EQ(pthread_create(&t3, NULL, syms_main, &again), 0);
	MT_ASSERT_MSG(returned_within(&again, 10000), "a loaded binary's symbols waited");
	pthread_mutex_unlock(&a->sym_lock);
	pthread_join(t3, NULL);
	MT_ASSERT(atomic_load(&again.got) == atomic_load(&other.got));
	mt_bincache_fini(&bins);
}
