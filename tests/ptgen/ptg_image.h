/* SPDX-License-Identifier: MIT */
/*
 * The traced process's address space as captured at the start of tracing:
 * every mapping from /proc/PID/maps, with the bytes of the executable ones
 * (vDSO included) read through /proc/PID/mem. The generator classifies
 * instructions from these bytes and the round-trip check serves them to
 * libipt, so both work from exactly what the process executed.
 */
#ifndef PTG_IMAGE_H
#define PTG_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ptg_seg {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	char perms[5];		/* "r-xp" */
	char *path;		/* file path, "[vdso]", or "" for anonymous */
	uint8_t *bytes;		/* end - start bytes if executable, else NULL */
};

struct ptg_image {
	struct ptg_seg *seg;	/* sorted by start */
	size_t nseg;
};

/* Reads the maps and executable bytes of @pid (stopped under ptrace). */
int ptg_image_capture(struct ptg_image *img, pid_t pid);
/* Loads a single file's executable PT_LOAD segments at @bias (no process). */
int ptg_image_load_elf(struct ptg_image *img, const char *path, uint64_t bias);
/* The executable segment holding @addr, or NULL. */
const struct ptg_seg *ptg_image_find(const struct ptg_image *img, uint64_t addr);
/* Copies up to @n code bytes at @addr (stops at the segment end); returns the count. */
size_t ptg_image_read(const struct ptg_image *img, uint64_t addr, uint8_t *buf, size_t n);
void ptg_image_fini(struct ptg_image *img);

#endif
