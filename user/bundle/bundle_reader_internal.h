/* SPDX-License-Identifier: MIT */
/*
 * Reader internals shared by bundle_reader.c (file and section framing),
 * bundle_reader_sections.c (per-type decoding), bundle_reader_payload.c
 * (decompression) and bundle_reader_access.c (the public getters).
 */
#ifndef MTRACE_BUNDLE_READER_INTERNAL_H
#define MTRACE_BUNDLE_READER_INTERNAL_H

#include "bundle/bundle.h"

#include <pthread.h>
#include <stdbool.h>

/*
 * Limits on what a bundle may make the reader allocate. No section beyond
 * RD_MAX_RAW. A zstd payload cannot expand more than RD_MAX_RATIO times:
 * zstd's best case is an RLE block, 4 bytes for 128 KiB. Up to RD_FAST_RATIO
 * (real PT, code and sideband compress far less) the declared size is
 * allocated at once; beyond it the buffer grows only with real output and
 * the decoder window is limited to 2^RD_WINDOW_LOG bytes.
 */
#define RD_MAX_RAW (4ULL << 30)
#define RD_MAX_RATIO 32768ULL
#define RD_FAST_RATIO 64ULL
#define RD_WINDOW_LOG MT_BUNDLE_ZSTD_WINDOW_LOG_MAX
/*
 * Without an explicit limit, the payloads of all sections together may
 * declare RD_FAST_RATIO times the file's size, at least RD_MIN_TOTAL and
 * at most the machine's memory: more is a forged bundle, not a snapshot.
 */
#define RD_MIN_TOTAL (256ULL << 20)
#define RD_MAX_DESC (64U * 1024)
#define RD_MAX_ENTRY 4096U

struct rd_section {
	size_t index;
	uint64_t off;                   /* of the section header */
	bool have_hdr;                  /* h holds a header read from the file */
	struct mt_bundle_shdr h;
	const uint8_t *desc;            /* desc_size bytes in the file image */
	const uint8_t *stored;          /* stored_size bytes in the file image */
	uint8_t *raw;                   /* decompressed payload, once loaded */
	bool known;
};

struct rd_file {
	size_t sec;
	struct mt_bundle_file f;
	char *path;
	uint8_t *build_id;              /* a copy: nothing points into the mapped file */
};

struct rd_ktext {
	size_t sec;
	struct mt_bundle_ktext k;
	char *name;
};

struct rd_pt {
	size_t sec;
	struct mt_bundle_pt_desc d;
};

/* A section of the switch table: its entries are read as a stream. */
struct rd_switches {
	size_t sec;
	uint64_t count;
	uint32_t entry_size;
};

#define RD_NONE ((size_t)-1)

struct mt_bundle_reader {
	const uint8_t *base;
	size_t size;
	bool mapped;
	int fd;                         /* the mapped file, for streams; else -1 */
	pthread_mutex_t lock;           /* serialises lazy decompression */
	uint16_t major, minor;
	struct rd_section *secs;
	size_t nsecs, secs_cap;
	uint64_t max_total_raw;         /* limit on the sum of declared raw sizes */
	uint64_t total_raw;

	size_t cpu_sec, cfg_sec, trig_sec, kallsyms_sec, clock_sec;
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc cfg;
	struct mt_bundle_trigger trig;
	char *trig_spec;
	struct mt_bundle_clock_desc clock;

	struct rd_pt *pts;
	size_t npts, pts_cap;
	struct rd_file *files;
	size_t nfiles, files_cap;
	struct rd_ktext *ktexts;
	size_t nktexts, ktexts_cap;

	struct rd_switches *swsecs;
	size_t nswsecs, swsecs_cap;
	size_t nsw;                     /* switch entries in all of them */
	struct mt_bundle_switch_entry *sw;	/* all, once mt_bundle_switches() asked */
	struct mt_bundle_map *maps;
	size_t nmaps, maps_cap;
	struct mt_bundle_thread *threads;
	size_t nthreads, threads_cap;
	struct mt_bundle_module *modules;
	size_t nmodules, modules_cap;
	struct mt_bundle_clock_entry *anchors;
	size_t nanchors, anchors_cap;

	char errmsg[512];
};

/* Writes "section N (NAME, type T) at offset O: " (or the file header's)
 * into BUF; returns its length. */
size_t rd_where(char *buf, size_t len, const struct rd_section *s);

/*
 * Sets the reader's message, prefixed with the section's index, type and
 * file offset (s may be NULL for the file header); returns code.
 */
int rd_err(struct mt_bundle_reader *r, const struct rd_section *s, int code,
	   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Copies a descriptor's fixed part into out (out_size bytes, the struct this
 * version knows): the descriptor's size field must lie in [v1_size,
 * desc_size]; a shorter (older) one leaves the rest of out zero, a longer
 * (newer) one is cut to out_size. Sets *tail to the bytes after the fixed
 * part when tail is not NULL.
 */
int rd_desc_get(struct mt_bundle_reader *r, const struct rd_section *s, void *out,
		size_t out_size, size_t v1_size, const uint8_t **tail, size_t *tail_len);

/* out_size bytes from src_size at src: a prefix of a longer one, zero-filled past a shorter. */
void rd_copy_prefix(void *out, size_t out_size, const void *src, size_t src_size);
/* Reads switch section K (of r->swsecs) through for its errors, keeping none. */
int rd_switches_check(struct mt_bundle_reader *r, size_t k);
/* Decodes a known section after its framing and checksums were verified. */
int rd_section_load(struct mt_bundle_reader *r, struct rd_section *s);

/* The payload, decompressed on first use and kept until released or close. */
int rd_payload(struct mt_bundle_reader *r, struct rd_section *s, const uint8_t **p,
	       size_t *len);
/* The same in memory of the reader's own, for a payload it keeps pointers
 * into after open (a table's strings): an uncompressed one of a mapped file
 * is copied, its pages dropped. */
int rd_payload_held(struct mt_bundle_reader *r, struct rd_section *s, const uint8_t **p,
		    size_t *len);

/* A stream over section S's payload (see mt_bundle_pt_stream_open()). */
int rd_stream_open(struct mt_bundle_reader *r, const struct rd_section *s,
		   struct mt_bundle_stream **out);

/* The reader's message becomes the stream's; returns CODE. */
int rd_stream_err(struct mt_bundle_reader *r, const struct mt_bundle_stream *st, int code);

/* Drops the whole pages of [P, P + LEN) out of memory; returns how far
 * into it they end (0: none). */
size_t rd_drop_pages(const uint8_t *p, size_t len);

/* Frees a decompressed payload, or drops an uncompressed one's pages of the
 * mapped file (under the reader's lock); a later rd_payload() reloads it. */
void rd_payload_release(struct mt_bundle_reader *r, struct rd_section *s);

#endif
