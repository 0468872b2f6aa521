// SPDX-License-Identifier: MIT
/* kallsyms parsing, the kcore reader, and kernel text capture into a bundle. */
#include "mt_test.h"

#include "bundle/bundle.h"
#include "kcore/kallsyms.h"
#include "kcore/kcore.h"
#include "kcore/kcore_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

#define KTEXT 0xffffffff81000000ULL
#define KMODS 0xffffffffc0000000ULL
#define SEG_SIZE (64 * 1024)

static const char ksyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff81003000 T _etext\n"
	"ffffffffc0001000 t mod_a_init\t[mod_a]\n"
	"ffffffffc0001400 t mod_a_work\t[mod_a]\n"
	"ffffffffc0008000 t bpf_prog_6deef7357e7b4530_trigger\t[bpf]\n";

/* Byte i of the synthetic kernel memory at vaddr. */
static uint8_t pattern(uint64_t vaddr)
{
	return (uint8_t)(vaddr * 7 + (vaddr >> 8));
}

/*
 * A 64-bit ELF core file with two PT_LOAD segments, like /proc/kcore. Written
 * with the raw <elf.h> structs: the fixture is data, and writing it by hand
 * keeps the reader under test independent of how the file was made.
 */
static void make_kcore(const char *path)
{
	static uint8_t data[SEG_SIZE];
	const uint64_t base[2] = { KTEXT, KMODS };
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_CORE, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
	};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	MT_ASSERT(fd >= 0);
	MT_ASSERT(write(fd, &eh, sizeof(eh)) == sizeof(eh));
	for (int s = 0; s < 2; s++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				  .p_offset = 4096 + (uint64_t)s * SEG_SIZE, .p_vaddr = base[s],
				  .p_filesz = SEG_SIZE, .p_memsz = SEG_SIZE, .p_align = 4096 };

		MT_ASSERT(write(fd, &ph, sizeof(ph)) == sizeof(ph));
		for (size_t i = 0; i < SEG_SIZE; i++)
			data[i] = pattern(base[s] + i);
		MT_ASSERT(pwrite(fd, data, SEG_SIZE, (off_t)ph.p_offset) == SEG_SIZE);
	}
	close(fd);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	MT_ASSERT(f);
	MT_ASSERT(fputs(text, f) >= 0);
	fclose(f);
}

MT_TEST(kallsyms_parse_and_lookup)
{
	struct mt_ksyms ks;
	const struct mt_ksym *s;
	char err[256];

	MT_ASSERT_EQ(mt_ksyms_parse(&ks, ksyms_text, sizeof(ksyms_text) - 1, err, sizeof(err)), 0);
	MT_ASSERT_EQ(ks.n, 8);
	s = mt_ksyms_lookup(&ks, 0xffffffff81000180ULL);
	MT_ASSERT(s);
	MT_ASSERT_STREQ(s->name, "do_syscall_64");
	MT_ASSERT(!s->module);
	/* Data symbols never name code: the lookup walks back past them. */
	s = mt_ksyms_lookup(&ks, 0xffffffff81002010ULL);
	MT_ASSERT_STREQ(s->name, "do_syscall_64");
	s = mt_ksyms_lookup(&ks, 0xffffffffc0001404ULL);
	MT_ASSERT_STREQ(s->name, "mod_a_work");
	MT_ASSERT_STREQ(s->module, "mod_a");
	s = mt_ksyms_lookup(&ks, 0xffffffffc0008010ULL);
	MT_ASSERT_STREQ(s->module, "bpf");
	MT_ASSERT(!mt_ksyms_lookup(&ks, 0x1000));
	MT_ASSERT_EQ(mt_ksyms_find(&ks, "_etext")->addr, 0xffffffff81003000ULL);
	/* The next code symbol skips data symbols and aliases at the same address. */
	MT_ASSERT_STREQ(mt_ksyms_next_code(&ks, 0xffffffff81000000ULL)->name, "do_syscall_64");
	MT_ASSERT_STREQ(mt_ksyms_next_code(&ks, 0xffffffff81000100ULL)->name, "_etext");
	MT_ASSERT(!mt_ksyms_next_code(&ks, 0xffffffffc0008000ULL));
	MT_ASSERT(!mt_ksyms_find(&ks, "nope"));
	mt_ksyms_free(&ks);
	mt_ksyms_free(&ks);
}

MT_TEST(kallsyms_rejects_malformed_lines_with_line_number)
{
	static const char *bad[] = {
		"ffffffff81000000 T ok\nzzz T broken\n",
		"ffffffff81000000 T ok\nffffffff81000000 T\n",
		"ffffffff81000000 T ok\nffffffff81000000 T name\tmodule-no-brackets\n",
		"ffffffff81000000\n",
	};
	const char *line[] = { "line 2", "line 2", "line 2", "line 1" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mt_ksyms ks;
		char err[256] = "";

		MT_ASSERT_EQ(mt_ksyms_parse(&ks, bad[i], strlen(bad[i]), err, sizeof(err)),
			     -EBADMSG);
		MT_ASSERT_MSG(strstr(err, line[i]), "case %zu: '%s' lacks '%s'", i, err, line[i]);
		MT_ASSERT(!ks.syms && !ks.strings);
	}
}

MT_TEST(kallsyms_hidden_addresses_name_the_capability)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T _etext\n";
	struct mt_ksyms ks;
	char err[256];

	MT_ASSERT_EQ(mt_ksyms_parse(&ks, hidden, sizeof(hidden) - 1, err, sizeof(err)), -EACCES);
	MT_ASSERT(strstr(err, "CAP_SYSLOG"));
	MT_ASSERT(strstr(err, "kptr_restrict"));
}

MT_TEST(kcore_reads_inside_segments_only)
{
	char path[] = "/tmp/mt-kcore-XXXXXX", err[256];
	struct mt_kcore *k;
	uint8_t buf[300];
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	close(fd);
	make_kcore(path);
	MT_ASSERT_EQ(mt_kcore_open(&k, path, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_kcore_read(k, KMODS + 1000, buf, sizeof(buf)), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		MT_ASSERT_EQ(buf[i], pattern(KMODS + 1000 + i));
	MT_ASSERT_EQ(mt_kcore_read(k, KTEXT + SEG_SIZE - 10, buf, 20), -ERANGE);
	MT_ASSERT(strstr(mt_kcore_errmsg(k), "not inside one PT_LOAD"));
	MT_ASSERT_EQ(mt_kcore_read(k, KTEXT - 1, buf, 2), -ERANGE);
	mt_kcore_close(k);
	unlink(path);
}

MT_TEST(kcore_open_errors)
{
	char path[] = "/tmp/mt-kcore-XXXXXX", err[256];
	struct mt_kcore *k = (void *)1;
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	MT_ASSERT(write(fd, "not an elf file at all", 22) == 22);
	close(fd);
	MT_ASSERT_EQ(mt_kcore_open(&k, path, err, sizeof(err)), -EBADMSG);
	MT_ASSERT(!k);
	MT_ASSERT(strstr(err, "not a 64-bit ELF core file"));
	unlink(path);
	MT_ASSERT_EQ(mt_kcore_open(&k, "/nonexistent/kcore", err, sizeof(err)), -ENOENT);
	mt_kcore_close(NULL);
}

/* Captures ksyms over the synthetic kcore; returns the reader of the bundle. */
static struct mt_bundle_reader *capture_fixture(const char *dir, const char *ksyms_body)
{
	char kcore[64], ksyms[64], bundle[64], err[256] = "";
	struct mt_kcore_capture_opts opts = { kcore, ksyms };
	struct mt_kcore_capture_stats st;
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;

	snprintf(kcore, sizeof(kcore), "%s/kcore", dir);
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", dir);
	snprintf(bundle, sizeof(bundle), "%s/b.mtrace", dir);
	make_kcore(kcore);
	write_file(ksyms, ksyms_body);
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, bundle, NULL, err, sizeof(err)), 0);
	if (mt_kcore_capture(w, &opts, &st, err, sizeof(err))) {
		mt_bundle_writer_free(w);
		MT_ASSERT_MSG(0, "capture failed: %s", err);
	}
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, bundle, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(st.skipped, 0);
	MT_ASSERT_EQ(st.ranges, mt_bundle_ktext_count(r));
	unlink(kcore);
	unlink(ksyms);
	unlink(bundle);
	return r;
}

MT_TEST(capture_copies_kernel_module_and_bpf_text)
{
	char dir[] = "/tmp/mt-kcap-XXXXXX";
	struct mt_bundle_reader *r;
	const struct mt_bundle_module *mods;
	const char *text;
	size_t len, nmods;

	MT_ASSERT(mkdtemp(dir));
	r = capture_fixture(dir, ksyms_text);
	rmdir(dir);
	/* Core text [_stext, _etext); mod_a's two symbols in one range; the BPF image. */
	MT_ASSERT_EQ(mt_bundle_ktext_count(r), 3);
	{
		const uint64_t want_addr[] = { KTEXT, KMODS + 0x1000, KMODS + 0x8000 };
		const uint64_t want_size[] = { 0x3000, 0x2000, 0x2000 };
		const char *want_name[] = { "kernel", "mod_a", "bpf" };

		for (size_t i = 0; i < 3; i++) {
			struct mt_bundle_ktext kt;
			const uint8_t *code;
			size_t n;

			MT_ASSERT_EQ(mt_bundle_ktext_info(r, i, &kt), 0);
			MT_ASSERT_EQ(kt.addr, want_addr[i]);
			MT_ASSERT_STREQ(kt.name, want_name[i]);
			MT_ASSERT_EQ(mt_bundle_ktext_data(r, i, &code, &n), 0);
			MT_ASSERT_EQ(n, want_size[i]);
			for (size_t b = 0; b < n; b += 97)
				MT_ASSERT_EQ(code[b], pattern(kt.addr + b));
		}
	}
	nmods = mt_bundle_modules(r, &mods);
	MT_ASSERT_EQ(nmods, 2);
	MT_ASSERT_STREQ(mods[0].name, "mod_a");
	MT_ASSERT_EQ(mods[0].start, KMODS + 0x1000);
	MT_ASSERT_EQ(mods[0].end, KMODS + 0x1401);
	MT_ASSERT_STREQ(mods[1].name, "bpf");
	MT_ASSERT_EQ(mt_bundle_kallsyms(r, &text, &len), 0);
	MT_ASSERT_EQ(len, sizeof(ksyms_text) - 1);
	MT_ASSERT_MEMEQ(text, ksyms_text, len);
	mt_bundle_close(r);
}

MT_TEST(capture_splits_neighbouring_modules_into_disjoint_named_ranges)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81003000 T _etext\n"
		"ffffffffc0001000 t mod_a_init\t[mod_a]\n"
		"ffffffffc0001400 t mod_a_work\t[mod_a]\n"
		"ffffffffc0002800 t mod_b_work\t[mod_b]\n"
		"ffffffffc0002900 t bpf_prog_0123456789abcdef_f\t[bpf]\n";
	const uint64_t want_addr[] = { KMODS + 0x1000, KMODS + 0x2000, KMODS + 0x2900 };
	const uint64_t want_end[] = { KMODS + 0x2000, KMODS + 0x2900, KMODS + 0x4000 };
	const char *want_name[] = { "mod_a", "mod_b", "bpf" };
	char dir[] = "/tmp/mt-kcap-XXXXXX";
	struct mt_bundle_reader *r;

	MT_ASSERT(mkdtemp(dir));
	r = capture_fixture(dir, text);
	rmdir(dir);
	MT_ASSERT_EQ(mt_bundle_ktext_count(r), 4);
	for (size_t i = 0; i < 3; i++) {
		struct mt_bundle_ktext kt;
		const uint8_t *code;
		size_t n;

		MT_ASSERT_EQ(mt_bundle_ktext_info(r, i + 1, &kt), 0);
		MT_ASSERT_STREQ(kt.name, want_name[i]);
		MT_ASSERT_EQ(kt.addr, want_addr[i]);
		MT_ASSERT_EQ(mt_bundle_ktext_data(r, i + 1, &code, &n), 0);
		MT_ASSERT_EQ(kt.addr + n, want_end[i]);
		MT_ASSERT_EQ(code[n - 1], pattern(kt.addr + n - 1));
	}
	mt_bundle_close(r);
}
