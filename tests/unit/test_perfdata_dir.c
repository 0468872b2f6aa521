// SPDX-License-Identifier: MIT
/*
 * perf.data directories (perf record --kcore's layout) and where an
 * import's kernel code comes from: the export replaces only a perf.data
 * directory and never leaves a partial one; a kcore_dir written from a
 * bundle is read back by the capture code; perf buildid-cache --kcore's
 * copies are found by build-id and checked against the recording's
 * relocation reference; every way kernel code can be unavailable gets its
 * own message.
 */
#include "test_decode_fixture.h"

#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_export.h"
#include "perfdata/perfdata_import.h"
#include "perfdata/perfdata_kcore.h"
#include "perfdata/perfdata_kernel_src.h"
#include "perfdata/perfdata_writer.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#define KTEXT 0xffffffff81000000ULL

/* A bundle NAME with one page of kernel text and kallsyms with _text at TEXT. */
static void kernel_only_bundle(const char *name, uint64_t text)
{
	struct mt_bundle_ktext kt = { KTEXT, "kernel", 0 };
	struct mt_bundle_writer *w;
	uint8_t code[4096];
	char err[256], ks[256];

	memset(code, 0xc3, sizeof(code)); /* ret */
	snprintf(ks, sizeof(ks), "%016llx T _text\n%016llx T _stext\n%016llx T f\n%016llx T _etext\n",
		 (unsigned long long)text, (unsigned long long)KTEXT,
		 (unsigned long long)KTEXT + 16, (unsigned long long)KTEXT + 4096);
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, fx_path(name), NULL, err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt, code, sizeof(code)), 0);
	MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, ks, strlen(ks)), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
}

/* kcore_dir DIR (under the fixture) from a kernel-only bundle with _text at TEXT. */
static void make_kcore_dir(const char *dir, uint64_t text)
{
	struct perfdata_kcore_info ki;
	struct mt_bundle_reader *r;
	char err[256];

	fx_sh("rm -rf '%s'", dir);
	kernel_only_bundle("k.mtrace", text);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("k.mtrace"), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(perfdata_write_kcore_dir(r, fx_path(dir), &ki, err, sizeof(err)) == 1, "%s",
		      err);
	mt_bundle_close(r);
	MT_ASSERT_EQ(ki.ranges, 1);
	MT_ASSERT_EQ(ki.core_addr, KTEXT);
	MT_ASSERT_STREQ(ki.ref_sym, "_text");
	MT_ASSERT_EQ(ki.ref_addr, text);
}

/* Imports the kernel code of DIR into a scratch bundle: ranges, WHY. */
static int import_dir(const char *dir, char *why, size_t whylen)
{
	struct mt_bundle_writer *w;
	char err[512];
	uint64_t bytes;
	int n;

	why[0] = 0;
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, fx_path("scratch.mtrace"), NULL, err, sizeof(err)),
		     0);
	n = perfdata_import_kcore(w, fx_path(dir), &bytes, why, whylen, err, sizeof(err));
	MT_ASSERT_MSG(n >= 0, "%s", err);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT(n == 0 || bytes == 4096);
	return n;
}

/* The kcore_dir written from a bundle is what the capture code reads back. */
MT_TEST(kcore_dir_reads_back)
{
	struct mt_bundle_reader *r;
	struct mt_bundle_ktext kt;
	const uint8_t *code;
	char why[512], err[256];
	size_t len;

	make_kcore_dir("kd", KTEXT);
	MT_ASSERT_EQ(import_dir("kd", why, sizeof(why)), 1);
	MT_ASSERT_MSG(!why[0], "%s", why);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("scratch.mtrace"), err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_EQ(mt_bundle_ktext_count(r), 1);
	MT_ASSERT_EQ(mt_bundle_ktext_info(r, 0, &kt), 0);
	MT_ASSERT_EQ(mt_bundle_ktext_data(r, 0, &code, &len), 0);
	MT_ASSERT_EQ(kt.addr, KTEXT);
	MT_ASSERT_EQ(len, 4096);
	MT_ASSERT(code[0] == 0xc3 && code[4095] == 0xc3);
	mt_bundle_close(r);
}

/* Broken kcore_dirs: kernel code is unavailable, the message says why, nothing is written. */
MT_TEST(kcore_dir_unusable)
{
	char why[512];

	make_kcore_dir("kd", KTEXT);
	fx_sh("cp -r kd nokcore && rm nokcore/kcore");
	MT_ASSERT_EQ(import_dir("nokcore", why, sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "nokcore/kcore") && strstr(why, "No such file"), "%s", why);

	fx_sh("cp -r kd notelf && echo garbage > notelf/kcore");
	MT_ASSERT_EQ(import_dir("notelf", why, sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "not a 64-bit ELF core file"), "%s", why);

	fx_sh("cp -r kd noksyms && rm noksyms/kallsyms");
	MT_ASSERT_EQ(import_dir("noksyms", why, sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "noksyms/kallsyms"), "%s", why);

	/* kallsyms naming text that kcore does not hold. */
	fx_sh("cp -r kd moved && sed -i 's/^ffffffff81/ffffffff82/' moved/kallsyms");
	MT_ASSERT_EQ(import_dir("moved", why, sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "not inside one PT_LOAD"), "%s", why);
}

static void bid_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* perf buildid-cache --kcore's copies: the newest whose _text matches the recording's. */
MT_TEST(build_id_cache_kcore)
{
	struct perfdata_kernel_map km = { .name = "[kernel.kallsyms]_text", .ref_addr = KTEXT,
					  .bid_name = "[kernel.kallsyms]", .bid_len = 20 };
	char hex[41], found[4096], why[512], want[4096];

	for (int i = 0; i < 20; i++)
		km.bid[i] = (uint8_t)(0xa0 + i);
	bid_hex(km.bid, 20, hex);
	make_kcore_dir("kd", KTEXT);
	fx_sh("mkdir -p 'cache/[kernel.kcore]/%s' && cp -r kd 'cache/[kernel.kcore]/%s/2026010112000000' "
	      "&& cp -r kd 'cache/[kernel.kcore]/%s/2026020112000000'", hex, hex, hex);
	/* The newest copy is of another boot (another KASLR offset): not it. */
	make_kcore_dir("kd2", KTEXT + 0x200000);
	fx_sh("cp -r kd2 'cache/[kernel.kcore]/%s/2026030112000000'", hex);
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, fx_path("cache"), found, sizeof(found), why,
					    sizeof(why)), 1);
	snprintf(want, sizeof(want), "%s/[kernel.kcore]/%s/2026020112000000", fx_path("cache"), hex);
	MT_ASSERT_STREQ(found, want);
	/* A kcore_dir of the recording itself comes first. */
	MT_ASSERT_EQ(perfdata_kernel_source(&km, "/some/dir", fx_path("cache"), found, sizeof(found),
					    why, sizeof(why)), 1);
	MT_ASSERT_STREQ(found, "/some/dir");
	/* Another build-id: none. */
	km.bid[0] ^= 1;
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, fx_path("cache"), found, sizeof(found), why,
					    sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "[kernel.kcore] none for its build-id"), "%s", why);
}

/* Each way a recording's kernel code is missing has its own message. */
MT_TEST(kernel_unavailable_messages)
{
	struct perfdata_kernel_map km = { 0 };
	char found[256], why[512];

	MT_ASSERT_EQ(perfdata_kernel_source(&km, "", NULL, found, sizeof(found), why, sizeof(why)), 0);
	MT_ASSERT_STREQ(why, "the recording has no kernel map record");
	snprintf(km.name, sizeof(km.name), "[kernel.kallsyms]_text");
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, NULL, found, sizeof(found), why, sizeof(why)),
		     0);
	/* No build-id for it: perf's cache was not searched, not found empty. */
	MT_ASSERT_STREQ(why, "the recording holds no copy of it, and " PERFDATA_NO_BUILD_ID);
	/* perf record's own cache entry for the kernel: its kallsyms, no code. */
	km.bid_len = 20;
	memset(km.bid, 0x5a, 20);
	fx_sh("mkdir -p kc/.build-id/5a/%s && touch kc/.build-id/5a/%s/kallsyms",
	      "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a", "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a");
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, fx_path("kc"), found, sizeof(found), why,
					    sizeof(why)), 0);
	MT_ASSERT_MSG(strstr(why, "only its kallsyms (names, not code)"), "%s", why);
	km.bid_len = 0;
	snprintf(km.bid_name, sizeof(km.bid_name), "/proc/kcore");
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, NULL, found, sizeof(found), why, sizeof(why)),
		     0);
	MT_ASSERT_MSG(strstr(why, "/proc/kcore, the live kernel"), "%s", why);
	snprintf(km.bid_name, sizeof(km.bid_name), "/usr/lib/debug/boot/vmlinux-6.1.0-9-amd64");
	MT_ASSERT_EQ(perfdata_kernel_source(&km, NULL, NULL, found, sizeof(found), why, sizeof(why)),
		     0);
	MT_ASSERT_MSG(strstr(why, "the vmlinux /usr/lib/debug/boot/vmlinux-6.1.0-9-amd64"), "%s",
		      why);
}

/* A user-only bundle as a perf.data directory (only DIR/data). */
static int export_dir(const char *bundle, const char *out, char *err, size_t errlen)
{
	const struct perfdata_export_opts eo = { .kcore = true };
	struct perfdata_export_stats st;
	struct mt_bundle_reader *r;
	int e;

	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(bundle), err, errlen) == 0, "%s", err);
	e = perfdata_export(r, fx_path(out), &eo, &st, err, errlen);
	mt_bundle_close(r);
	return e;
}

/* Whether the fixture directory holds a leftover temporary. */
static bool temporaries_left(void)
{
	DIR *d = opendir(fx_dir());
	struct dirent *de;
	bool left = false;

	MT_ASSERT(d);
	while ((de = readdir(d)))
		left |= !strncmp(de->d_name, ".tmp-", 5);
	closedir(d);
	return left;
}

/* The directory output replaces only a perf.data directory, atomically. */
MT_TEST(directory_output)
{
	char ptgen[1200], progs[1200], err[512];
	struct perfdata_file f;
	struct stat st;
	char kdir[256];

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' -o plt.mtrace -- '%s/plt' >/dev/null", ptgen, progs);
	MT_ASSERT_MSG(export_dir("plt.mtrace", "out.data", err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(!stat(fx_path("out.data/data"), &st) && S_ISREG(st.st_mode));
	/* perf's own layout, opened as perf.data; no kcore_dir for a user-only trace. */
	MT_ASSERT_MSG(perfdata_open_input(&f, fx_path("out.data"), kdir, sizeof(kdir)) == 0, "%s",
		      f.err);
	perfdata_close(&f);
	MT_ASSERT_STREQ(kdir, "");
	/* Again: the old directory is replaced. */
	fx_sh("touch -d 2001-01-01 out.data/data");
	MT_ASSERT_MSG(export_dir("plt.mtrace", "out.data", err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(!stat(fx_path("out.data/data"), &st) && st.st_mtime > 1000000000 + 86400 * 365);
	/* Not a perf.data directory, or a file: refused, untouched. */
	fx_sh("mkdir mine && echo keep > mine/notes && echo keep > file.data");
	MT_ASSERT_EQ(export_dir("plt.mtrace", "mine", err, sizeof(err)), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "is not a perf.data directory"), "%s", err);
	MT_ASSERT_EQ(export_dir("plt.mtrace", "file.data", err, sizeof(err)), -EEXIST);
	fx_sh("grep -q keep mine/notes && grep -q keep file.data");
	/* A failed export (no PT) leaves no directory behind. */
	kernel_only_bundle("nopt.mtrace", KTEXT);
	MT_ASSERT(export_dir("nopt.mtrace", "nopt.data", err, sizeof(err)) < 0);
	MT_ASSERT(stat(fx_path("nopt.data"), &st) && errno == ENOENT);
	MT_ASSERT(!temporaries_left());
}

/* perf record --threads directories (several data files) are refused by name. */
MT_TEST(threaded_directory_refused)
{
	struct perfdata_writer *w;
	struct perfdata_file f;
	struct perf_event_attr a = { .type = 8, .size = 128 };
	uint64_t id, ver = 1;
	char err[256], kdir[256];

	fx_sh("mkdir -p thr.data");
	MT_ASSERT_EQ(perfdata_writer_create(&w, fx_path("thr.data/data"), err, sizeof(err)), 0);
	MT_ASSERT_EQ(perfdata_writer_add_attr(w, &a, "intel_pt//", &id), 0);
	MT_ASSERT_EQ(perfdata_writer_feature(w, PERFDATA_FEAT_DIR_FORMAT, &ver, sizeof(ver)), 0);
	MT_ASSERT_EQ(perfdata_writer_finish(w), 0);
	perfdata_writer_free(w);
	MT_ASSERT_EQ(perfdata_open_input(&f, fx_path("thr.data"), kdir, sizeof(kdir)),
		     -EPROTONOSUPPORT);
	MT_ASSERT_MSG(strstr(f.err, "perf record --threads"), "%s", f.err);
	perfdata_close(&f);
}
