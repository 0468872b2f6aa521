/* SPDX-License-Identifier: MIT */
/*
 * Writer internals shared by bundle_writer.c (file and section streaming)
 * and the record writers (bundle_write_*.c).
 */
#ifndef MTRACE_BUNDLE_WRITER_INTERNAL_H
#define MTRACE_BUNDLE_WRITER_INTERNAL_H

#include "bundle/bundle.h"

#include <stdbool.h>

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
