// SPDX-License-Identifier: MIT
/* /proc/kcore reader: PT_LOAD table via libelf, bytes via pread. */
#include "kcore/kcore.h"
#include "util/errmsg.h"
#include "util/regfile.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kcore_seg {
	uint64_t vaddr, size, offset;
};

struct mt_kcore {
	int fd;
	struct kcore_seg *segs;
	size_t nsegs;
	char err[256];
};

static int kcore_load_segments(struct mt_kcore *k, const char *path, char *err, size_t errlen)
{
	size_t phnum;
	Elf *elf;
	int rc = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(k->fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		rc = mt_errmsg(err, errlen, EBADMSG, "%s: not a 64-bit ELF core file", path);
	else if (elf_getphdrnum(elf, &phnum))
		rc = mt_errmsg(err, errlen, EBADMSG, "%s: unreadable program headers: %s", path,
				elf_errmsg(-1));
	if (!rc) {
		k->segs = calloc(phnum ? phnum : 1, sizeof(*k->segs));
		if (!k->segs)
			rc = mt_errmsg(err, errlen, ENOMEM, "%s: out of memory", path);
	}
	for (size_t i = 0; !rc && i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			rc = mt_errmsg(err, errlen, EBADMSG, "%s: program header %zu unreadable",
					path, i);
			break;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		k->segs[k->nsegs++] = (struct kcore_seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
	}
	if (!rc && !k->nsegs)
		rc = mt_errmsg(err, errlen, EBADMSG, "%s: no PT_LOAD segments", path);
	elf_end(elf);
	return rc;
}

int mt_kcore_open(struct mt_kcore **out, const char *path, char *err, size_t errlen)
{
	struct mt_kcore *k;
	const char *kind;
	int rc;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return mt_errmsg(err, errlen, ENOMEM, "%s: out of memory", path);
	k->fd = mt_open_regular(path, &kind);
	if (k->fd < 0) {
		rc = -errno;
		if (kind)
			mt_errmsg(err, errlen, -rc, "%s is %s, not a kcore file", path, kind);
		else if (rc == -EPERM || rc == -EACCES)
			mt_errmsg(err, errlen, -rc,
				   "%s: %s: copying kernel text needs CAP_SYS_RAWIO (run as root), "
				   "and is refused under confidentiality lockdown", path, strerror(-rc));
		else
			mt_errmsg(err, errlen, -rc, "%s: %s", path, strerror(-rc));
		free(k);
		return rc;
	}
	rc = kcore_load_segments(k, path, err, errlen);
	if (rc) {
		mt_kcore_close(k);
		return rc;
	}
	*out = k;
	return 0;
}

void mt_kcore_close(struct mt_kcore *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->segs);
	free(k);
}

const char *mt_kcore_errmsg(const struct mt_kcore *k)
{
	return k ? k->err : "no kcore handle";
}

int mt_kcore_read(struct mt_kcore *k, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < k->nsegs; i++) {
		const struct kcore_seg *s = &k->segs[i];
		size_t done = 0;

		if (addr < s->vaddr || addr - s->vaddr > s->size || len > s->size - (addr - s->vaddr))
			continue;
		while (done < len) {
			ssize_t n = pread(k->fd, (char *)buf + done, len - done,
					  (off_t)(s->offset + (addr - s->vaddr) + done));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return mt_errmsg(k->err, sizeof(k->err), n ? errno : EIO,
						 "kcore: reading 0x%" PRIx64 "+%zu: %s", addr, len,
						 n ? strerror(errno) : "short read");
			done += (size_t)n;
		}
		return 0;
	}
	return mt_errmsg(k->err, sizeof(k->err), ERANGE,
			 "kcore: 0x%" PRIx64 "+%zu is not inside one PT_LOAD segment", addr, len);
}
