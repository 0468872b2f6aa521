// SPDX-License-Identifier: MIT
/*
 * Compressed debug sections (sym_unpack.c, sym_debuginfo.c). The copy
 * libdw reads has every SHF_COMPRESSED section plain, byte for byte what
 * objcopy writes uncompressed; a file that cannot be unpacked is left to
 * libdw as it is, with its symbols; and the symbolizer's DWARF answers from
 * zlib and zstd sections, in the binary or in a debug file found by
 * build-id or by .gnu_debuglink (from a binary with or without a
 * build-id), are those of the plain file (libdw 0.188 alone reads no zstd
 * section).
 */
#include "test_sym_fixture.h"

#include "sym/sym_internal.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

static const char src[] =
	"static inline __attribute__((always_inline)) int sq(int v) { return v * v + 1; }\n"
	"__attribute__((noipa)) int use(int x) {\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < x; i++)\n"
	"\t\ts += sq(i) * sq(s);\n"
	"\treturn s;\n"
	"}\n"
	"int main(int c, char **v) { (void)v; return use(c); }\n";

/* The program plain, and with its debug sections compressed each way. */
static void build(void)
{
	fx_write("inl.c", src);
	fx_sh("cc -g -O2 -o plain inl.c && "
	      "objcopy --compress-debug-sections=zlib-gabi plain zlib && "
	      "objcopy --compress-debug-sections=zstd plain zstd");
}

static Elf *elf_open(const char *name, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = open(fx_path(name), O_RDONLY);
	MT_ASSERT_MSG(*fd >= 0, "open %s", name);
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	MT_ASSERT(e);
	return e;
}

static int count_compressed(Elf *e)
{
	Elf_Scn *s = NULL;
	int n = 0;

	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;

		MT_ASSERT(gelf_getshdr(s, &sh));
		n += !!(sh.sh_flags & SHF_COMPRESSED);
	}
	return n;
}

static Elf_Scn *section(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t strndx;
	Elf_Scn *s = NULL;

	MT_ASSERT_EQ(elf_getshdrstrndx(e, &strndx), 0);
	while ((s = elf_nextscn(e, s))) {
		MT_ASSERT(gelf_getshdr(s, sh));
		if (!strcmp(elf_strptr(e, strndx, sh->sh_name), name))
			return s;
	}
	return NULL;
}

/* Every section of PLAIN is in COPY with the same header fields and bytes. */
static void same_sections(Elf *plain, Elf *copy)
{
	size_t strndx;
	Elf_Scn *s = NULL;
	int debug = 0;

	MT_ASSERT_EQ(elf_getshdrstrndx(plain, &strndx), 0);
	while ((s = elf_nextscn(plain, s))) {
		GElf_Shdr a, b;
		const char *name;
		Elf_Scn *t;
		Elf_Data *da, *db;

		MT_ASSERT(gelf_getshdr(s, &a));
		name = elf_strptr(plain, strndx, a.sh_name);
		t = section(copy, name, &b);
		MT_ASSERT_MSG(t, "no %s in the copy", name);
		MT_ASSERT_EQ(a.sh_type, b.sh_type);
		MT_ASSERT_EQ(a.sh_flags, b.sh_flags);
		MT_ASSERT_EQ(a.sh_size, b.sh_size);
		MT_ASSERT_EQ(a.sh_addr, b.sh_addr);
		MT_ASSERT_EQ(a.sh_addralign, b.sh_addralign);
		if (a.sh_type == SHT_NOBITS)
			continue;
		da = elf_rawdata(s, NULL);
		db = elf_rawdata(t, NULL);
		MT_ASSERT(da && db && da->d_size == db->d_size);
		MT_ASSERT_MSG(!memcmp(da->d_buf, db->d_buf, da->d_size), "%s differs", name);
		debug += !strncmp(name, ".debug_", 7);
	}
	MT_ASSERT(debug >= 4);
}

MT_TEST(unpacked_copy_holds_the_plain_sections)
{
	static const char *const kinds[] = { "zlib", "zstd" };
	int pfd, cfd, out;
	Elf *plain, *copy;

	build();
	plain = elf_open("plain", &pfd);
	MT_ASSERT_EQ(mt_sym_unpacked(pfd), -1);	/* nothing to unpack */
	for (size_t k = 0; k < 2; k++) {
		Elf *packed = elf_open(kinds[k], &cfd);

		MT_ASSERT_MSG(count_compressed(packed) >= 4, "%s: objcopy compressed nothing",
			      kinds[k]);
		out = mt_sym_unpacked(cfd);
		MT_ASSERT_MSG(out >= 0, "%s not unpacked", kinds[k]);
		copy = elf_begin(out, ELF_C_READ_MMAP, NULL);
		MT_ASSERT(copy);
		MT_ASSERT_EQ(count_compressed(copy), 0);
		same_sections(plain, copy);
		elf_end(copy);
		close(out);
		elf_end(packed);
		close(cfd);
	}
	elf_end(plain);
	close(pfd);
}

/* Writes LEN bytes of V at OFF of the fixture file NAME. */
static void poke(const char *name, uint64_t off, const void *v, size_t len)
{
	int fd = open(fx_path(name), O_WRONLY);

	MT_ASSERT(fd >= 0);
	MT_ASSERT_EQ(pwrite(fd, v, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* Where .debug_info's header and data lie in the zlib file. */
static void debug_info_at(uint64_t *shdr_off, uint64_t *data_off, uint64_t *size)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *s;
	int fd;
	Elf *e = elf_open("zlib", &fd);

	MT_ASSERT(gelf_getehdr(e, &eh));
	s = section(e, ".debug_info", &sh);
	MT_ASSERT(s);
	*shdr_off = eh.e_shoff + elf_ndxscn(s) * sizeof(Elf64_Shdr);
	*data_off = sh.sh_offset;
	*size = sh.sh_size;
	elf_end(e);
	close(fd);
}

/*
 * A copy of the zlib file with one defect. It is not unpacked, and the
 * symbolizer still opens it, finds its symbols and asks libdw, which
 * reports the damage its own way (here: no inline ranges, no crash).
 */
static void check_defect(const char *what, uint64_t off, const void *bytes, size_t len)
{
	char err[MT_SYM_ERRLEN] = "";
	struct mt_inline_range *r;
	struct mt_sym_file *f;
	uint64_t use;
	int fd, n;

	fx_sh("cp zlib bad");
	poke("bad", off, bytes, len);
	fd = open(fx_path("bad"), O_RDONLY);
	MT_ASSERT(fd >= 0);
	MT_ASSERT_MSG(mt_sym_unpacked(fd) == -1, "%s: unpacked", what);
	close(fd);
	MT_ASSERT_MSG(mt_sym_file_open(&f, fx_path("bad"), NULL, err, sizeof(err)) == 0,
		      "%s: %s", what, err);
	use = fx_nm("plain", "use");
	MT_ASSERT(mt_sym_lookup(f, use) && !strcmp(mt_sym_lookup(f, use)->name, "use"));
	n = mt_sym_inline_ranges(f, use, 1, &r);
	MT_ASSERT_MSG(n >= 0, "%s: %d", what, n);
	free(r);
	mt_sym_file_close(f);
}

MT_TEST(files_that_cannot_be_unpacked_are_left_as_they_are)
{
	uint64_t shdr, data, size, past_end;
	Elf64_Chdr ch;
	uint8_t junk[64];
	int fd;

	build();
	debug_info_at(&shdr, &data, &size);
	fd = open(fx_path("zlib"), O_RDONLY);
	MT_ASSERT(fd >= 0);
	MT_ASSERT_EQ(pread(fd, &ch, sizeof(ch), (off_t)data), (ssize_t)sizeof(ch));
	past_end = (uint64_t)lseek(fd, 0, SEEK_END);
	close(fd);

	memset(junk, 0x5a, sizeof(junk));
	MT_ASSERT(size > sizeof(ch) + sizeof(junk) + 16);
	check_defect("bytes damaged", data + sizeof(ch) + 16, junk, sizeof(junk));
	ch.ch_size++;
	check_defect("stated size too large", data, &ch, sizeof(ch));
	ch.ch_size--;
	ch.ch_type = 99;
	check_defect("unknown compression", data, &ch, sizeof(ch));
	check_defect("data past the end", shdr + offsetof(Elf64_Shdr, sh_offset), &past_end,
		     sizeof(past_end));
}

static void same_ranges(struct mt_sym_file *want_f, struct mt_sym_file *got_f, uint64_t addr,
			const char *what)
{
	struct mt_inline_range *want, *got;
	struct mt_src_loc a, b;
	int n = mt_sym_inline_ranges(want_f, addr, 1, &want);

	MT_ASSERT_MSG(n >= 2, "%d inline ranges in use()", n);
	MT_ASSERT_MSG(mt_sym_inline_ranges(got_f, addr, 1, &got) == n, "%s: ranges", what);
	for (int i = 0; i < n; i++) {
		MT_ASSERT_EQ(got[i].lo, want[i].lo);
		MT_ASSERT_EQ(got[i].hi, want[i].hi);
		MT_ASSERT_EQ(got[i].depth, want[i].depth);
		MT_ASSERT_STREQ(got[i].function, want[i].function);
	}
	free(want);
	free(got);
	MT_ASSERT_EQ(mt_sym_source(want_f, addr, &a), 0);
	MT_ASSERT_MSG(mt_sym_source(got_f, addr, &b) == 0, "%s: no source line", what);
	MT_ASSERT_EQ(b.line, a.line);
}

/* libdw reads F's DWARF from the unpacked copy of the file NAME, which
 * is larger than the file (the file's Elf handle would not tell: libdw
 * clears the flags in its headers as it decompresses). */
static void read_unpacked(struct mt_sym_file *f, const char *name, const char *what)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->dwarf_mod, &bias);
	struct stat st;
	size_t len = 0;

	MT_ASSERT_MSG(dw && elf_rawfile(dwarf_getelf(dw), &len), "%s: no DWARF", what);
	MT_ASSERT_EQ(stat(fx_path(name), &st), 0);
	MT_ASSERT_MSG(len > (size_t)st.st_size, "%s: read as it is (%zu bytes)", what, len);
}

/* BIN opened with PATH answers as PLAIN does, from the unpacked copy of
 * its debug file DEBUG, compressed with KIND. */
static void answers_from(struct mt_sym_file *plain, uint64_t use, const char *bin,
			 const char *path, const char *debug, const char *kind)
{
	struct mt_sym_file *f = open_ok(bin, path);

	same_ranges(plain, f, use, kind);
	read_unpacked(f, debug, kind);
	mt_sym_file_close(f);
}

MT_TEST(compressed_dwarf_answers_as_plain)
{
	static const char *const kinds[] = { "zlib", "zstd" };
	struct mt_sym_file *plain, *f;
	char dir[600], id[64], path[128];
	const uint8_t *bits;
	uint64_t use;
	size_t n;

	build();
	use = fx_nm("plain", "use");
	MT_ASSERT(use);
	plain = open_ok("plain", NULL);
	n = mt_sym_build_id(plain, &bits);
	MT_ASSERT_EQ(n, 20);
	for (size_t i = 0; i < n; i++)
		snprintf(id + 2 * i, 3, "%02x", bits[i]);
	snprintf(dir, sizeof(dir), "-:%s", fx_path("dbg"));
	for (size_t k = 0; k < 2; k++) {
		const char *c = kinds[k];

		/* In the binary itself. Opening it reads no DWARF. */
		f = open_ok(c, NULL);
		MT_ASSERT(!f->dwarf_opened);
		same_ranges(plain, f, use, c);
		read_unpacked(f, c, c);
		mt_sym_file_close(f);

		/* In a debug file found by build-id. */
		fx_sh("rm -rf dbg && mkdir -p dbg/.build-id/%.2s && "
		      "objcopy --only-keep-debug %s dbg/.build-id/%.2s/%s.debug && "
		      "cp plain stripped && strip --strip-all stripped", id, c, id, id + 2);
		snprintf(path, sizeof(path), "dbg/.build-id/%.2s/%s.debug", id, id + 2);
		answers_from(plain, use, "stripped", dir, path, c);

		/* In a debug file found by .gnu_debuglink (with its CRC). */
		fx_sh("rm -rf .debug && mkdir .debug && "
		      "objcopy --remove-section .note.gnu.build-id stripped linked && "
		      "objcopy --only-keep-debug --remove-section .note.gnu.build-id %s .debug/l.dbg && "
		      "objcopy --add-gnu-debuglink=.debug/l.dbg linked", c);
		answers_from(plain, use, "linked", "+:.debug", ".debug/l.dbg", c);

		/* By .gnu_debuglink from a binary with a build-id, the file in
		 * no build-id directory: what libdw reads is the unpacked copy
		 * (libdwfl's own search would hand it the file it checked). */
		fx_sh("rm -rf .debug && mkdir .debug && cp stripped idlinked && "
		      "objcopy --only-keep-debug %s .debug/i.dbg && "
		      "objcopy --add-gnu-debuglink=.debug/i.dbg idlinked", c);
		answers_from(plain, use, "idlinked", "+:.debug", ".debug/i.dbg", c);
	}
	mt_sym_file_close(plain);
}
