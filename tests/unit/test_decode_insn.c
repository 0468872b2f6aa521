// SPDX-License-Identifier: MIT
/*
 * mt_insn_decode() (decode/insn.h): the length and class of a block's last
 * instruction. Capstone 4 does not know some VEX and EVEX instructions of
 * glibc's AVX-512 string functions, nor CET's and the protection keys'
 * instructions in libgcc and glibc; their length comes from their layout.
 * Checked on encodings objdump reads with these lengths, and against
 * objdump (binutils), an independent decoder, on every instruction of the
 * C library and of libgcc's unwinder this test runs with.
 */
#include "decode/insn.h"
#include "mt_test.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vector {
	const char *what;
	uint8_t bytes[15];
	size_t len;
};

/* objdump's reading of each; the first two are glibc's, which Capstone
 * 4.0.2 cannot decode, as it cannot RDSSP, INCSSP, RDPKRU and WRPKRU.
 * Bytes past the instruction are junk it must not count. */
static const struct vector vectors[] = {
	{ "vpcmpeqb (%rdi),%ymm16,%k0", { 0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00, 0xcc }, 7 },
	{ "kmovd %k0,%eax", { 0xc5, 0xfb, 0x93, 0xc0, 0xcc }, 4 },
	{ "vpcmpeqb 0x40(%rsi,%rdx,2),%zmm1,%k1",
	  { 0x62, 0xf3, 0x75, 0x48, 0x3f, 0x4c, 0x56, 0x01, 0x00, 0xcc }, 9 },
	{ "vpcmpeqb 0x12345678(%rip),%zmm1,%k1",
	  { 0x62, 0xf3, 0x75, 0x48, 0x3f, 0x0d, 0x78, 0x56, 0x34, 0x12, 0x00, 0xcc }, 11 },
	{ "vpcmpeqb 0x100(,%rax,1),%zmm1,%k1",
	  { 0x62, 0xf3, 0x75, 0x48, 0x3f, 0x0c, 0x05, 0x00, 0x01, 0x00, 0x00, 0x00, 0xcc }, 12 },
	{ "addr32 kmovd %k0,%eax", { 0x67, 0xc5, 0xfb, 0x93, 0xc0, 0xcc }, 5 },
	{ "kmovq 0x10(%rsp),%k2 (three-byte VEX)", { 0xc4, 0xe1, 0xf8, 0x90, 0x54, 0x24, 0x10, 0xcc },
	  7 },
	{ "vzeroupper", { 0xc5, 0xf8, 0x77, 0xcc }, 3 },
	{ "vpshufd $0x1b,%xmm1,%xmm0", { 0xc5, 0xf9, 0x70, 0xc1, 0x1b, 0xcc }, 5 },
	{ "vinsertf128 $1,%xmm1,%ymm0,%ymm0", { 0xc4, 0xe3, 0x7d, 0x18, 0xc1, 0x01, 0xcc }, 6 },
	{ "vpbroadcastd 0x0(%rip),%zmm0",
	  { 0x62, 0xf2, 0x7d, 0x48, 0x58, 0x05, 0x00, 0x00, 0x00, 0x00, 0xcc }, 10 },
	{ "vmovdqa32 0x100(%rsp),%zmm0",
	  { 0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x84, 0x24, 0x00, 0x01, 0x00, 0x00, 0xcc }, 11 },
	{ "rdsspq %rax (libgcc's unwinder)", { 0xf3, 0x48, 0x0f, 0x1e, 0xc8, 0xcc }, 5 },
	{ "incsspq %rcx", { 0xf3, 0x48, 0x0f, 0xae, 0xe9, 0xcc }, 5 },
	{ "rdpkru", { 0x0f, 0x01, 0xee, 0xcc }, 3 },
	{ "wrpkru", { 0x0f, 0x01, 0xef, 0xcc }, 3 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa, 0xcc }, 4 },
	{ "nopl 0x0(%rax,%rax,1)", { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0xcc }, 8 },
};

MT_TEST(lengths_of_instructions_capstone_misses)
{
	struct mt_insn_dec *d = mt_insn_dec_new();

	MT_ASSERT(d);
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct vector *v = &vectors[i];
		enum pt_insn_class cls = ptic_error;
		size_t len = mt_insn_decode(d, v->bytes, sizeof(v->bytes), 0x1000, &cls);

		MT_ASSERT_MSG(len == v->len, "%s: length %zu, not %zu", v->what, len, v->len);
		MT_ASSERT_MSG(cls == ptic_other, "%s: class %d", v->what, (int)cls);
		/* Cut short, it is no instruction. */
		len = mt_insn_decode(d, v->bytes, v->len - 1, 0x1000, &cls);
		MT_ASSERT_MSG(!len, "%s cut short: length %zu", v->what, len);
	}
	mt_insn_dec_free(d);
}

/* Whatever the bytes, a length never reaches past the N bytes given, nor
 * past 15. Random bytes, most of them led by the prefixes and escapes the
 * layout rules read. */
MT_TEST(lengths_stay_within_the_bytes_given)
{
	static const uint8_t leads[] = { 0xc4, 0xc5, 0x62, 0x0f, 0xf3, 0x66, 0x67, 0x48, 0x2e };
	struct mt_insn_dec *d = mt_insn_dec_new();
	unsigned int seed = 7;

	MT_ASSERT(d);
	for (int k = 0; k < 200000; k++) {
		uint8_t b[16];
		size_t n = 1 + (size_t)rand_r(&seed) % 15, len;
		enum pt_insn_class cls = ptic_error;

		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)rand_r(&seed);
		for (size_t i = 0; i < 3; i++)
			if (rand_r(&seed) % 2)
				b[i] = leads[(size_t)rand_r(&seed) % sizeof(leads)];
		len = mt_insn_decode(d, b, n, 0x1000, &cls);
		MT_ASSERT_MSG(len <= n && len <= 15, "length %zu from %zu bytes %02x %02x %02x", len,
			      n, b[0], b[1], b[2]);
	}
	mt_insn_dec_free(d);
}

MT_TEST(branches_keep_their_class)
{
	static const struct {
		uint8_t bytes[8];
		size_t len;
		enum pt_insn_class cls;
	} b[] = {
		{ { 0xe8, 0, 0, 0, 0 }, 5, ptic_call },
		{ { 0xff, 0xd0 }, 2, ptic_call },
		{ { 0xc3 }, 1, ptic_return },
		{ { 0xe9, 0, 0, 0, 0 }, 5, ptic_jump },
		{ { 0x0f, 0x05 }, 2, ptic_far_call },
		{ { 0x48, 0x0f, 0x07 }, 3, ptic_far_return },
		{ { 0x48, 0x89, 0xc7 }, 3, ptic_other },
	};
	struct mt_insn_dec *d = mt_insn_dec_new();

	MT_ASSERT(d);
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		enum pt_insn_class cls = ptic_error;

		MT_ASSERT_EQ(mt_insn_decode(d, b[i].bytes, sizeof(b[i].bytes), 0x1000, &cls), b[i].len);
		MT_ASSERT_EQ(cls, b[i].cls);
	}
	mt_insn_dec_free(d);
}

/* A library's .text: its bytes (malloc'ed) and address. */
static uint8_t *library_text(const char *path, uint64_t *addr, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	uint8_t *out = NULL;
	size_t shstrndx;

	elf_version(EV_CURRENT);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			const char *name;

			if (!gelf_getshdr(scn, &sh) ||
			    !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".text"))
				continue;
			data = elf_getdata(scn, NULL);
			if (data && data->d_size && (out = malloc(data->d_size))) {
				memcpy(out, data->d_buf, data->d_size);
				*addr = sh.sh_addr;
				*size = data->d_size;
			}
			break;
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return out;
}

/*
 * Every instruction objdump finds in the .text of the library holding
 * SYMBOL: where mt_insn_decode() gives a length it is objdump's (the next
 * instruction's address less this one's), and it gives one for every
 * instruction.
 */
static void lengths_match_objdump(const void *symbol)
{
	struct mt_insn_dec *d = mt_insn_dec_new();
	uint64_t base = 0, prev = 0, total = 0, vex = 0;
	size_t size = 0;
	Dl_info info;
	char cmd[1200], line[512];
	uint8_t *text;
	FILE *dis;

	MT_ASSERT(d);
	if (!dladdr(symbol, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		mt_skip("the library's file is not known");
	text = library_text(info.dli_fname, &base, &size);
	MT_ASSERT_MSG(text, "no .text in %s", info.dli_fname);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .text --no-show-raw-insn '%s' 2>/dev/null",
		 info.dli_fname);
	dis = popen(cmd, "r");
	MT_ASSERT(dis);
	while (fgets(line, sizeof(line), dis)) {
		uint64_t at, len, got;
		enum pt_insn_class cls = ptic_error;
		char colon;

		/* Instruction lines: "  26380:\tmnemonic ..." */
		if (line[0] != ' ' || sscanf(line, " %" SCNx64 "%c", &at, &colon) != 2 ||
		    colon != ':')
			continue;
		len = at - prev;
		if (prev && prev >= base && at <= base + size && len && len <= 15) {
			const uint8_t *p = text + (prev - base);

			got = mt_insn_decode(d, p, (size_t)(base + size - prev), prev, &cls);
			total++;
			vex += p[0] == 0xc4 || p[0] == 0xc5 || p[0] == 0x62;
			MT_ASSERT_MSG(got == len, "%s+%#" PRIx64 " (%02x %02x %02x %02x): length %" PRIu64
				      ", objdump %" PRIu64, info.dli_fname, prev, p[0], p[1], p[2], p[3],
				      got, len);
		}
		prev = at;
	}
	pclose(dis);
	free(text);
	mt_insn_dec_free(d);
	if (!total)
		mt_skip("objdump did not disassemble %s", info.dli_fname);
	printf("  %s: %" PRIu64 " instructions (%" PRIu64 " VEX/EVEX), every length as objdump's\n",
	       info.dli_fname, total, vex);
}

MT_TEST(lengths_match_objdump_over_libc)
{
	lengths_match_objdump((const void *)(uintptr_t)&abort);
}

MT_TEST(lengths_match_objdump_over_libgcc)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW);
	void *sym = h ? dlsym(h, "_Unwind_RaiseException") : NULL;

	if (!sym)
		mt_skip("no libgcc_s.so.1 here");
	lengths_match_objdump(sym);
	dlclose(h);
}
