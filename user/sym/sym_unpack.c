// SPDX-License-Identifier: MIT
/*
 * Compressed debug sections unpacked before libdw sees them.
 *
 * Debug files are usually shipped with SHF_COMPRESSED sections (Debian's
 * -dbg and -dbgsym packages: zlib). libdw decompresses every one of them,
 * with zlib, when a file's DWARF is first asked for: 52 ms for libc's
 * 10 MB, on the thread of the decode that asked. libdeflate does the same
 * in 19 ms, and elfutils before 0.189 cannot read zstd sections at all.
 * So the file is given to libdw as a copy in memory (a memfd, which libelf
 * maps like any file) whose compressed sections are stored plain: the
 * file's bytes (the compressed data left out, a hole), each section's
 * plain data after them, and a new section header table at the end.
 * Program headers and every other section keep their offsets.
 *
 * Only what can be proved right is unpacked: a section that does not
 * decompress to exactly its stated size, or a file whose layout does not
 * check out, makes the copy fail, and libdw then reads the file as it is
 * (reporting what it finds wrong there).
 */
#include "sym/sym_internal.h"

#include <elf.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* A file mapped for reading. */
struct view {
	const uint8_t *p;
	size_t len;
};

static bool inside(const struct view *v, uint64_t off, uint64_t len)
{
	return off <= v->len && len <= v->len - off;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* The section's header, if it is unpacked: its data as the copy holds
 * it, placed at *END (which moves past it). False when it is not
 * compressed; *BAD when it is but cannot be unpacked. */
static bool plan_section(const struct view *v, const Elf64_Shdr *sh, uint64_t *end,
			 Elf64_Shdr *plain, bool *bad)
{
	Elf64_Chdr ch;
	uint64_t align;

	if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_type == SHT_NOBITS)
		return false;
	if (sh->sh_size < sizeof(ch) || !inside(v, sh->sh_offset, sh->sh_size)) {
		*bad = true;
		return false;
	}
	memcpy(&ch, v->p + sh->sh_offset, sizeof(ch));
	align = ch.ch_addralign ? ch.ch_addralign : 1;
	if ((ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD) ||
	    (align & (align - 1)) || align > 4096 || ch.ch_size > SIZE_MAX / 4) {
		*bad = true;
		return false;
	}
	*plain = *sh;
	plain->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
	plain->sh_offset = align_up(*end, align);
	plain->sh_size = ch.ch_size;
	plain->sh_addralign = ch.ch_addralign;
	*end = plain->sh_offset + ch.ch_size;
	return *end <= SIZE_MAX / 2;
}

/* Unpacks the data of SH (compressed) into OUT, exactly OUT_LEN bytes. */
static bool unpack(struct libdeflate_decompressor *z, const struct view *v,
		   const Elf64_Shdr *sh, uint8_t *out, size_t out_len)
{
	const uint8_t *in = v->p + sh->sh_offset + sizeof(Elf64_Chdr);
	size_t in_len = sh->sh_size - sizeof(Elf64_Chdr);
	Elf64_Chdr ch;

	memcpy(&ch, v->p + sh->sh_offset, sizeof(ch));
	if (ch.ch_type == ELFCOMPRESS_ZLIB)
		return libdeflate_zlib_decompress(z, in, in_len, out, out_len, NULL) ==
		       LIBDEFLATE_SUCCESS;
	return ZSTD_decompress(out, out_len, in, in_len) == out_len;
}

/* The headers of V's sections, when its layout is one this file unpacks. */
static const Elf64_Ehdr *headers(const struct view *v, const Elf64_Shdr **shdrs)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v->p;

	if (v->len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum || eh->e_shoff % 8 ||
	    !inside(v, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return NULL;
	*shdrs = (const Elf64_Shdr *)(v->p + eh->e_shoff);
	return eh;
}

/* Writes LEN bytes of BUF at OFF of FD; 0 or -1. */
static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n <= 0)
			return -1;
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Orders sections by where their data lies in the file. */
static int by_offset(const void *a, const void *b)
{
	const Elf64_Shdr *x = *(const Elf64_Shdr *const *)a, *y = *(const Elf64_Shdr *const *)b;

	return x->sh_offset < y->sh_offset ? -1 : x->sh_offset > y->sh_offset;
}

/* Writes V's bytes into FD at the same offsets, but for the data of the
 * compressed sections, which the copy holds unpacked elsewhere (their
 * place stays a hole). 0 or -1. */
static int write_rest(int fd, const struct view *v, const Elf64_Shdr *shdrs, size_t n)
{
	const Elf64_Shdr **packed = malloc(n * sizeof(*packed));
	uint64_t at = 0;
	size_t k = 0;
	int rc = 0;

	if (!packed)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((shdrs[i].sh_flags & SHF_COMPRESSED) && shdrs[i].sh_type != SHT_NOBITS)
			packed[k++] = &shdrs[i];
	qsort(packed, k, sizeof(*packed), by_offset);
	for (size_t i = 0; i <= k && !rc; i++) {
		uint64_t to = i < k ? packed[i]->sh_offset : v->len;

		if (to > at)
			rc = write_all(fd, v->p + at, (size_t)(to - at), at);
		if (i < k && packed[i]->sh_offset + packed[i]->sh_size > at)
			at = packed[i]->sh_offset + packed[i]->sh_size;
	}
	free(packed);
	return rc;
}

#define HUGE_PAGE ((size_t)2 << 20)

/*
 * Room for LEN bytes of unpacked data, in huge pages where the kernel
 * gives them on request: a first touch of each 4 KiB page costs far more
 * than unpacking it in some virtual machines (10 us in this project's
 * benchmark VM, where libc's debug sections took 2,500 of them). The room
 * is aligned to them and *MAPPED bytes long, whole huge pages.
 */
static void *scratch(size_t len, size_t *mapped)
{
	size_t want = (size_t)align_up(len, HUGE_PAGE), n = want + HUGE_PAGE;
	uint8_t *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at;

	if (p == MAP_FAILED)
		return NULL;
	at = (uint8_t *)align_up((uintptr_t)p, HUGE_PAGE);
	if (at > p)
		munmap(p, (size_t)(at - p));
	munmap(at + want, (size_t)(p + n - (at + want)));
	madvise(at, want, MADV_HUGEPAGE);
	*mapped = want;
	return at;
}

/*
 * Builds the plain copy of V in a new memfd; its fd, or -1. It is written
 * with pwrite(), which fills the memfd's pages without a fault for each,
 * and the sections are unpacked one at a time into one scratch buffer.
 */
static int plain_copy(const struct view *v)
{
	const Elf64_Shdr *shdrs;
	const Elf64_Ehdr *eh = headers(v, &shdrs);
	struct libdeflate_decompressor *z = NULL;
	Elf64_Shdr *out_sh = NULL;
	uint64_t end = v->len, shoff, biggest = 0;
	size_t mapped = 0;
	bool any = false, bad = false;
	Elf64_Ehdr out_eh;
	uint8_t *buf = NULL;
	int fd;

	if (!eh)
		return -1;
	/* Sizes first: nothing is allocated for a file with nothing to do. */
	for (size_t i = 0; i < eh->e_shnum && !bad; i++) {
		Elf64_Shdr plain;

		if (plan_section(v, &shdrs[i], &end, &plain, &bad)) {
			any = true;
			if (plain.sh_size > biggest)
				biggest = plain.sh_size;
		}
	}
	if (!any || bad || end > SIZE_MAX / 2)
		return -1;
	/* Every compressed byte is read now: one call maps the file, where a
	 * fault each 64 KiB (the kernel's fault-around) costs more. A file
	 * with nothing to unpack got this far on its headers alone. */
	madvise((void *)v->p, v->len, MADV_POPULATE_READ);
	shoff = align_up(end, 8);
	fd = memfd_create("mtrace-debug", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	out_sh = malloc(eh->e_shnum * sizeof(*out_sh));
	buf = biggest ? scratch(biggest, &mapped) : NULL;
	z = libdeflate_alloc_decompressor();
	if (!out_sh || (biggest && !buf) || !z ||
	    ftruncate(fd, (off_t)(shoff + eh->e_shnum * sizeof(*out_sh))) ||
	    write_rest(fd, v, shdrs, eh->e_shnum))
		goto fail;
	end = v->len;
	for (size_t i = 0; i < eh->e_shnum; i++) {
		out_sh[i] = shdrs[i];
		if (!plan_section(v, &shdrs[i], &end, &out_sh[i], &bad))
			continue;
		if (!unpack(z, v, &shdrs[i], buf, out_sh[i].sh_size) ||
		    write_all(fd, buf, out_sh[i].sh_size, out_sh[i].sh_offset))
			goto fail;
	}
	out_eh = *eh;
	out_eh.e_shoff = shoff;
	if (write_all(fd, out_sh, eh->e_shnum * sizeof(*out_sh), shoff) ||
	    write_all(fd, &out_eh, sizeof(out_eh), 0))
		goto fail;
	libdeflate_free_decompressor(z);
	free(out_sh);
	if (buf)
		munmap(buf, mapped);
	return fd;

fail:
	libdeflate_free_decompressor(z);
	free(out_sh);
	if (buf)
		munmap(buf, mapped);
	close(fd);
	return -1;
}

int mt_sym_unpacked(int fd)
{
	struct view v;
	struct stat st;
	void *p;
	int out;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2)
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	v = (struct view){ p, (size_t)st.st_size };
	out = plain_copy(&v);
	munmap(p, v.len);
	return out;
}
