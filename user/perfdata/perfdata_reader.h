/* SPDX-License-Identifier: MIT */
/*
 * Reading a perf.data file (layout in perfdata_format.h): the header, the
 * attrs and their ids, the feature sections, and the records one by one
 * with their sample_id trailer parsed. Every offset and size is checked
 * against the file: a bad, truncated or hostile file gives a message
 * naming the file offset, never a read outside it.
 */
#ifndef MTRACE_PERFDATA_READER_H
#define MTRACE_PERFDATA_READER_H

#include "perfdata/perfdata_format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfdata_attr {
	struct perf_event_attr attr;    /* zero beyond the file's attr size */
	const uint64_t *ids;            /* unaligned-safe copies */
	size_t nids;
};

struct perfdata_file {
	const uint8_t *base;
	size_t size;
	bool mapped;                    /* base is an mmap of the file */
	struct perfdata_file_header h;
	struct perfdata_attr *attrs;
	size_t nattrs;
	uint64_t *id_store;
	struct perfdata_section feat[256]; /* size 0: absent */
	char err[512];
};

/* One record. The body is the bytes after the header, trailer included. */
struct perfdata_rec {
	uint64_t offset;                /* file offset of the header */
	struct perf_event_header h;
	const uint8_t *body;
	size_t body_len;                /* h.size - header, minus the trailer */
	bool has_sid;                   /* sideband record with a parsed trailer */
	struct perfdata_sample_id sid;  /* fields the attr lacks are 0 (cpu: -1) */
	const struct perfdata_attr *attr; /* the attr the record belongs to, or NULL */
	const uint8_t *aux;             /* AUXTRACE: the payload */
	uint64_t aux_len;
};

/* The file at PATH (mapped) or in memory (BUF must outlive F). */
int perfdata_open(struct perfdata_file *f, const char *path);
int perfdata_open_mem(struct perfdata_file *f, const void *buf, size_t len);
void perfdata_close(struct perfdata_file *f);

/* Feature section BIT, or -ENOENT. */
int perfdata_feature(const struct perfdata_file *f, unsigned int bit, const uint8_t **p,
		     size_t *len);

/*
 * The record at *POS (start with *POS = 0), advancing *POS. Returns 1 with a
 * record, 0 at the end of the data, or a negative errno with f->err set.
 */
int perfdata_next(struct perfdata_file *f, uint64_t *pos, struct perfdata_rec *r);

#endif
