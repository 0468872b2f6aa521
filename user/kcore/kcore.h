/* SPDX-License-Identifier: MIT */
/*
 * Reading kernel memory through /proc/kcore, an ELF core file whose PT_LOAD
 * segments carry live kernel virtual addresses (KASLR already applied). The
 * file cannot be mmapped; ranges are read with pread. Functions return 0 or
 * a negative errno and leave a message in the handle or the caller's buffer.
 */
#ifndef MTRACE_KCORE_H
#define MTRACE_KCORE_H

#include <stddef.h>
#include <stdint.h>

struct mt_kcore;

/* -EPERM/-EACCES get a message naming CAP_SYS_RAWIO (or lockdown). */
int mt_kcore_open(struct mt_kcore **out, const char *path, char *err, size_t errlen);
void mt_kcore_close(struct mt_kcore *k);
const char *mt_kcore_errmsg(const struct mt_kcore *k);

/* Copies [addr, addr + len), which must lie inside one PT_LOAD; -ERANGE if not. */
int mt_kcore_read(struct mt_kcore *k, uint64_t addr, void *buf, size_t len);

#endif
