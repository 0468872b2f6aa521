/* SPDX-License-Identifier: MIT */
/*
 * One process's executable mappings: the libipt image that decodes its
 * code, and address → binary lookup (with the load bias that turns a
 * run-time address into the binary's link-time address).
 */
#ifndef MTRACE_DECODE_PROCMAP_H
#define MTRACE_DECODE_PROCMAP_H

#include "decode/binfile.h"

#include <intel-pt.h>

struct mt_pmap {
	uint64_t start, end;	/* run-time range, end exclusive */
	uint64_t offset;	/* file offset of start */
	struct mt_binfile *bin;	/* NULL: no usable file (unknown code) */
	uint64_t bias;		/* run-time minus link-time address */
	const char *name;	/* path as recorded */
};

/* A section of an image: SIZE bytes of PATH from OFFSET, at VADDR. */
struct mt_psec {
	const char *path;	/* the binary's (struct mt_binfile) */
	uint64_t offset, size, vaddr;
};

struct mt_proc {
	uint32_t pid;
	struct mt_pmap *maps;	/* sorted by start, not overlapping */
	size_t nmaps;
	struct pt_image *image;	/* every mapped executable segment */
	/* Its sections in the order they went into it, for mt_proc_image(). */
	struct mt_psec *secs;
	size_t nsecs, secs_cap;
	size_t missing;		/* executable mappings without a usable file */
};

/* Reports a mapping that could not be used (once per mapping). */
typedef void (*mt_proc_warn_fn)(void *ctx, const char *msg);

/*
 * Builds PID's maps and image from the bundle's map records (only
 * executable file-backed or special mappings are used). A maps walk gives
 * disjoint ranges; should records overlap, lookups prefer the range that
 * starts later. Sections go through ISCACHE, which keeps one copy of
 * each file. Returns 0, or -ENOMEM.
 */
int mt_proc_build(struct mt_proc *p, uint32_t pid, const struct mt_bundle_map *maps, size_t n,
		  struct mt_bincache *bins, struct pt_image_section_cache *iscache,
		  mt_proc_warn_fn warn, void *warn_ctx);
void mt_proc_fini(struct mt_proc *p);

/*
 * Adds P's sections to IMG as they are in P's image, through ISCACHE. A
 * thread that decodes builds its images over a section cache of its own:
 * libipt locks the cache and the section at every move of a decoder from
 * one section to another, and decoders on several threads sharing them
 * wait on each other. Returns 0, or -ENOMEM.
 */
int mt_proc_image(const struct mt_proc *p, struct pt_image *img,
		  struct pt_image_section_cache *iscache);

/* The mapping holding IP, or NULL. */
const struct mt_pmap *mt_proc_find(const struct mt_proc *p, uint64_t ip);

#endif
