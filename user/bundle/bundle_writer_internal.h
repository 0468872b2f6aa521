/* SPDX-License-Identifier: MIT */
/*
 * Writer internals shared by bundle_writer.c (file lifecycle), bundle_write_section.c
 * (section streaming and output) and the record writers (bundle_write_*.c).
 */
#ifndef MTRACE_BUNDLE_WRITER_INTERNAL_H
#define MTRACE_BUNDLE_WRITER_INTERNAL_H

#include "bundle/bundle.h"

#include <stdbool.h>
#include <zstd.h>

#define WR_BUF_SIZE (256 * 1024)

struct mt_bundle_writer {
	int fd;
	uint64_t off;                   /* file offset of the next byte to write */
	uint64_t nsections;
	bool failed;                    /* the file is inconsistent: refuse further sections */
	bool finished;
	int level;
	bool no_compression;
	ZSTD_CCtx *cctx;
	uint8_t *buf;                   /* output staging, flushed in large writes */
	size_t buf_len;
	uint8_t *zout;                  /* compressor output chunk */
	size_t zout_size;

	/* the open section */
	bool in_section;
	uint64_t sec_off;
	struct mt_bundle_shdr sh;
	uint8_t *desc;
	uint64_t raw_done;
	bool zstd_ended;                /* the frame was ended with the last input */
	uint32_t singletons;            /* bit per claimed singleton type */
	uint32_t *pt_cpus;
	size_t pt_ncpus, pt_cpus_cap;

	char errmsg[256];
};

/* Output: staged small writes, direct large ones; w->off counts both. */
int wr_out(struct mt_bundle_writer *w, const void *data, size_t len);
int wr_flush(struct mt_bundle_writer *w);
int wr_pwrite(struct mt_bundle_writer *w, const void *data, size_t len, uint64_t off);
/* Marks the writer failed and names the system call and offset; returns err. */
int wr_io_error(struct mt_bundle_writer *w, int err, const char *what);

/* Payloads smaller than this are stored raw: a zstd frame would not pay. */
#define MT_BUNDLE_MIN_COMPRESS 256

/*
 * Starts a section whose payload will be exactly raw_size bytes, given by
 * one or more wr_section_append() calls and closed by wr_section_end().
 * MT_BUNDLE_COMP_AUTO picks the writer's policy for this size.
 */
int wr_section_begin(struct mt_bundle_writer *w, uint32_t type, const void *desc,
		     size_t desc_len, uint64_t raw_size, int compression);
int wr_section_append(struct mt_bundle_writer *w, const void *data, size_t len);
int wr_section_end(struct mt_bundle_writer *w);
/*
 * Drops the open section (truncating the file to its start) after an error
 * in the data source, so the bundle stays usable. Any error reported while
 * a section is open marks the writer failed until this is called.
 */
int wr_section_abort(struct mt_bundle_writer *w);

/* A descriptor with a string tail: fixed part followed by the string. */
int wr_section_tail(struct mt_bundle_writer *w, uint32_t type, const void *fixed,
		    size_t fixed_len, const char *tail, uint64_t raw_size, int compression);

/* 0 if the writer can take another section, else the error (message set). */
int wr_usable(struct mt_bundle_writer *w);

/* Sets the writer's message; returns err (a negative errno). */
int wr_error(struct mt_bundle_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Singleton sections may be written once; returns -EINVAL on a repeat. */
int wr_claim_singleton(struct mt_bundle_writer *w, uint32_t type);
/* Each CPU's PT may be written once. */
int wr_claim_pt_cpu(struct mt_bundle_writer *w, uint32_t cpu);

#endif
