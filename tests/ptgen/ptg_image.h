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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ptg_seg {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	char perms[5];		/* "r-xp" */
	char *path;		/* file path, "[vdso]", or "" for anonymous */
	uint8_t *bytes;		/* end - start bytes if executable, else NULL */
	bool gone;		/* unmapped after the start; its code is kept */
};

struct ptg_image {
	struct ptg_seg *seg;	/* sorted by start, not overlapping */
	size_t nseg;
};

/* An executable mapping that appeared or went away after the start:
 * after instruction @index of thread @thread (a system call) ran. The
 * generator fills in @tsc, the synthetic time of that instruction. */
struct ptg_map_event {
	int thread;
	size_t index;
	bool unmapped;
	uint64_t tsc;
	uint64_t start, end, offset;
	char perms[5];
	char *path;
	const uint8_t *bytes;	/* the image's copy (it keeps every one) */
};

/* Reads the maps and executable bytes of @pid (stopped under ptrace). */
int ptg_image_capture(struct ptg_image *img, pid_t pid);
/*
 * Re-reads @pid's maps after a system call that can change them: new or
 * changed executable mappings get their bytes and an event, vanished ones
 * an event. The image keeps the code of a vanished mapping (instructions
 * run there earlier are classified at the end), so a range may not get
 * other code later: that, and failures, return a negative errno with a
 * message. Events are appended to *@ev (thread and index from the caller).
 */
int ptg_image_refresh(struct ptg_image *img, pid_t pid, int thread, size_t index,
		      struct ptg_map_event **ev, size_t *nev);
/* Loads a single file's executable PT_LOAD segments at @bias (no process). */
int ptg_image_load_elf(struct ptg_image *img, const char *path, uint64_t bias);
/* The executable segment holding @addr, or NULL. */
const struct ptg_seg *ptg_image_find(const struct ptg_image *img, uint64_t addr);
/* Copies up to @n code bytes at @addr (stops at the segment end); returns the count. */
size_t ptg_image_read(const struct ptg_image *img, uint64_t addr, uint8_t *buf, size_t n);
void ptg_image_fini(struct ptg_image *img);

#endif
