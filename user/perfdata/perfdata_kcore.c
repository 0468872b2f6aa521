// SPDX-License-Identifier: MIT
/* A bundle's kernel code as perf's kcore_dir; see perfdata_kcore.h. */
#include "perfdata/perfdata_kcore.h"

#include "util/errmsg.h"
#include "kcore/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KPAGE 4096ULL

static uint64_t page_up(uint64_t a)
{
	return (a + KPAGE - 1) & ~(KPAGE - 1);
}

static int put_file(const char *dir, const char *name, const void *data, size_t len, char *err,
		    size_t errlen)
{
	char path[4200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wbx")))
		return mt_errmsg(err, errlen, errno, "cannot create %s: %s", path, strerror(errno));
	ok = (!len || fwrite(data, 1, len, f) == len) && !ferror(f);
	if (fclose(f) || !ok)
		return mt_errmsg(err, errlen, EIO, "cannot write %s", path);
	return 0;
}

/*
 * /proc/modules lines: NAME SIZE REFS DEPS STATE ADDRESS (perf reads name,
 * size, address). The bundle's table also spans BPF's symbols ("bpf"),
 * which is no module.
 */
static int put_modules(struct mt_bundle_reader *r, const char *dir, size_t *nmods, char *err,
		       size_t errlen)
{
	const struct mt_bundle_module *m;
	size_t n = mt_bundle_modules(r, &m), len = 0;
	char *text = NULL;
	FILE *mem = open_memstream(&text, &len);
	int e;

	if (!mem)
		return mt_errmsg(err, errlen, ENOMEM, "out of memory");
	*nmods = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(m[i].name, "bpf"))
			continue;
		fprintf(mem, "%s %llu 0 - Live 0x%016llx\n", m[i].name,
			(unsigned long long)(m[i].end - m[i].start), (unsigned long long)m[i].start);
		++*nmods;
	}
	if (fclose(mem)) {
		free(text);
		return mt_errmsg(err, errlen, ENOMEM, "out of memory");
	}
	e = put_file(dir, "modules", text, len, err, errlen);
	free(text);
	return e;
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n, off += n;
	}
	return 0;
}

/*
 * The core file: ELF header and program headers through libelf (layout
 * ours, ELF_F_LAYOUT), then each copy's bytes at a page-aligned offset with
 * the same page offset as its address, as in /proc/kcore. No sections. The
 * bytes go in after elf_update(), which truncates the file to the headers.
 */
static int put_kcore(struct mt_bundle_reader *r, const char *dir, struct perfdata_kcore_info *ki,
		     char *err, size_t errlen)
{
	size_t n = mt_bundle_ktext_count(r);
	char path[4200];
	Elf *e = NULL;
	int fd, rc = 0;
	off_t off;

	snprintf(path, sizeof(path), "%s/kcore", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		return mt_errmsg(err, errlen, errno, "cannot create %s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	Elf64_Ehdr *eh = (e = elf_begin(fd, ELF_C_WRITE, NULL)) ? elf64_newehdr(e) : NULL;
	Elf64_Phdr *ph = eh ? elf64_newphdr(e, n) : NULL;

	if (!ph) {
		rc = mt_errmsg(err, errlen, EIO, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	off = (off_t)page_up(sizeof(*eh) + n * sizeof(*ph));
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_ktext kt;

		if (mt_bundle_ktext_info(r, i, &kt)) {
			rc = mt_errmsg(err, errlen, EBADMSG, "kernel text %zu: %s", i,
				       mt_bundle_reader_errmsg(r));
			goto out;
		}
		off += (off_t)(kt.addr % KPAGE);
		ph[i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				      .p_offset = (uint64_t)off, .p_vaddr = kt.addr,
				      .p_filesz = kt.size, .p_memsz = kt.size, .p_align = KPAGE };
		off = (off_t)page_up((uint64_t)off + kt.size);
	}
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0) {
		rc = mt_errmsg(err, errlen, EIO, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_ktext kt;
		const uint8_t *code;
		size_t len;

		if (mt_bundle_ktext_info(r, i, &kt) || mt_bundle_ktext_data(r, i, &code, &len) ||
		    len != ph[i].p_filesz) {
			rc = mt_errmsg(err, errlen, EBADMSG, "kernel text %zu: %s", i,
				       mt_bundle_reader_errmsg(r));
			goto out;
		}
		if ((rc = pwrite_all(fd, code, len, (off_t)ph[i].p_offset))) {
			mt_errmsg(err, errlen, -rc, "cannot write %s: %s", path, strerror(-rc));
			goto out;
		}
		ki->ranges++;
		ki->bytes += len;
		ki->bpf_ranges += !strcmp(kt.name, "bpf");
		if (!strcmp(kt.name, "kernel"))
			ki->core_addr = kt.addr, ki->core_size = len;
	}
out:
	if (e)
		elf_end(e);
	if (close(fd) && !rc)
		rc = mt_errmsg(err, errlen, errno, "cannot write %s: %s", path, strerror(errno));
	return rc;
}

/* perf relocates with the symbol its kernel map record names: _text, else _stext. */
static int find_ref_sym(const char *text, size_t len, struct perfdata_kcore_info *ki, char *err,
			size_t errlen)
{
	static const char *const names[] = { "_text", "_stext" };
	struct mt_ksyms ks;
	int rc = mt_ksyms_parse(&ks, text, len, err, errlen);

	if (rc)
		return rc;
	for (size_t i = 0; i < 2 && !ki->ref_sym; i++) {
		const struct mt_ksym *s = mt_ksyms_find(&ks, names[i]);

		if (s && !s->module)
			ki->ref_sym = names[i], ki->ref_addr = s->addr;
	}
	mt_ksyms_free(&ks);
	if (!ki->ref_sym)
		return mt_errmsg(err, errlen, EBADMSG, "kallsyms has neither _text nor _stext");
	return 0;
}

int perfdata_write_kcore_dir(struct mt_bundle_reader *r, const char *dir,
			     struct perfdata_kcore_info *ki, char *err, size_t errlen)
{
	const char *text;
	size_t len;
	int rc;

	memset(ki, 0, sizeof(*ki));
	if (!mt_bundle_ktext_count(r))
		return 0;
	if (mt_bundle_kallsyms(r, &text, &len))
		return mt_errmsg(err, errlen, EBADMSG, "the bundle has kernel text but no kallsyms");
	if ((rc = find_ref_sym(text, len, ki, err, errlen)))
		return rc;
	if (mkdir(dir, 0755))
		return mt_errmsg(err, errlen, errno, "cannot create %s: %s", dir, strerror(errno));
	if ((rc = put_kcore(r, dir, ki, err, errlen)) ||
	    (rc = put_file(dir, "kallsyms", text, len, err, errlen)) ||
	    (rc = put_modules(r, dir, &ki->modules, err, errlen)))
		return rc;
	if (!ki->core_size)
		return mt_errmsg(err, errlen, EBADMSG, "the bundle has no core kernel text (\"kernel\")");
	return 1;
}
