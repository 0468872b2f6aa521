/* SPDX-License-Identifier: MIT */
/*
 * libmtrace bundle API: write and read snapshot bundles (.mtrace files).
 * The on-disk layout is in include/mtrace/bundle_format.h and
 * docs/bundle-format.md.
 *
 * Contents
 *   1. Conventions
 *   2. Records (what the sections hold, in host form)
 *   3. Writer
 *   4. Reader
 *   5. Tools
 *
 * 1. Conventions
 * - Handles are opaque. Functions taking a handle reject NULL with -EINVAL
 *   (counts are then 0); every free/close function accepts NULL.
 * - Functions return 0 (or a count) on success and a negative errno on
 *   failure. The handle then keeps a message naming what failed (for the
 *   reader: the section index and type and the file offset), read with
 *   mt_bundle_writer_errmsg() / mt_bundle_reader_errmsg(). Creation
 *   functions, which have no handle yet on failure, write the message into a
 *   caller buffer (err, errlen; may be NULL/0).
 * - Errors: -EINVAL bad argument; -EBADMSG corrupt bundle (bad magic,
 *   checksum, structure); -ENODATA truncated bundle; -EPROTONOSUPPORT newer
 *   major version; -EFBIG a declared size beyond the reader's limits;
 *   -ENOENT section absent; -ENOMEM; other errnos from the system calls.
 * - Records carrying strings point into memory owned by the reader, valid
 *   until mt_bundle_close(). Text strings are NUL-terminated.
 * - A reader may be shared by threads (e.g. one decoder per CPU): payloads
 *   are decompressed under a lock. The last error message is per reader.
 *   A writer belongs to one thread.
 */
#ifndef MTRACE_BUNDLE_H
#define MTRACE_BUNDLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mtrace/bundle_format.h"
#include "util/reporter.h"

/* ---- 2. Records ----
 * Fixed-size records use the on-disk structs directly (cpu, pt config,
 * per-CPU PT descriptor, context switches, clock anchors); their `size`
 * fields are filled in by the writer and by the reader. Records with strings
 * have host forms here.
 */

struct mt_bundle_trigger {
	struct mt_bundle_trigger_desc d;
	const char *spec;               /* trigger specification; may be NULL on write */
};

struct mt_bundle_map {
	uint64_t tsc;
	uint64_t start;
	uint64_t end;                   /* exclusive */
	uint64_t file_offset;
	uint32_t pid;
	uint32_t prot;                  /* MT_BUNDLE_PROT_* */
	uint32_t event;                 /* enum mt_bundle_map_event */
	const char *path;               /* "" for anonymous; NULL is written as "" */
	const uint8_t *build_id;
	size_t build_id_len;            /* 0 if unknown */
};

struct mt_bundle_thread {
	uint64_t tsc;
	uint32_t pid;
	uint32_t tid;
	const char *comm;
	const char *cmdline;            /* arguments separated by NUL bytes */
	size_t cmdline_len;             /* bytes of cmdline, including inner NULs */
};

struct mt_bundle_module {
	uint64_t start;
	uint64_t end;
	const char *name;
};

struct mt_bundle_file {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;            /* at most sizeof(mt_bundle_file_desc.build_id) */
	uint64_t mtime_ns;
	uint64_t size;                  /* bytes of content (reader fills it in) */
};

struct mt_bundle_ktext {
	uint64_t addr;
	const char *name;
	uint64_t size;                  /* bytes of code (reader fills it in) */
};

/* ---- 3. Writer ----
 * Streaming: each call writes its section to the file at once; nothing is
 * buffered across calls. Sections may come in any order; the format imposes
 * none. mt_bundle_writer_finish() writes the END section and closes the
 * file; a bundle without END is rejected by readers as truncated.
 */
struct mt_bundle_writer;

struct mt_bundle_writer_opts {
	uint32_t size;                  /* sizeof(struct mt_bundle_writer_opts) */
	int zstd_level;                 /* 0: default (1); negative: faster modes */
	int no_compression;             /* store every payload uncompressed */
	/* Where the wait for a FIFO's reader is told (util/regfile.h); NULL: nowhere. */
	const struct mt_reporter *rep;
};

/* Creates (truncates) `path`. opts may be NULL for defaults. */
int mt_bundle_writer_create(struct mt_bundle_writer **out, const char *path,
			    const struct mt_bundle_writer_opts *opts, char *err, size_t errlen);
/* Writes END, flushes and closes. The handle must still be freed. */
int mt_bundle_writer_finish(struct mt_bundle_writer *w);
/* If unfinished, writes the complete sections but no END: readers reject it as truncated. */
void mt_bundle_writer_free(struct mt_bundle_writer *w);
const char *mt_bundle_writer_errmsg(const struct mt_bundle_writer *w);

int mt_bundle_write_cpu(struct mt_bundle_writer *w, const struct mt_bundle_cpu_desc *cpu);
int mt_bundle_write_pt_config(struct mt_bundle_writer *w,
			      const struct mt_bundle_pt_config_desc *cfg);
/* One CPU's PT bytes, already oldest first. */
int mt_bundle_write_pt(struct mt_bundle_writer *w, const struct mt_bundle_pt_desc *pt,
		       const void *data, size_t len);
/*
 * One CPU's PT bytes straight from its ring: [write_offset, ring_size) then
 * [0, write_offset) when MT_BUNDLE_PT_WRAPPED is set in pt->flags, else
 * [0, write_offset). pt->write_offset must be <= ring_size.
 */
int mt_bundle_write_pt_ring(struct mt_bundle_writer *w, const struct mt_bundle_pt_desc *pt,
			    const void *ring, size_t ring_size);
int mt_bundle_write_trigger(struct mt_bundle_writer *w, const struct mt_bundle_trigger *t);
/* Table writers: each call writes one section; several calls append. */
int mt_bundle_write_switches(struct mt_bundle_writer *w,
			     const struct mt_bundle_switch_entry *sw, size_t n);
int mt_bundle_write_maps(struct mt_bundle_writer *w, const struct mt_bundle_map *maps, size_t n);
int mt_bundle_write_threads(struct mt_bundle_writer *w, const struct mt_bundle_thread *t,
			    size_t n);
int mt_bundle_write_modules(struct mt_bundle_writer *w, const struct mt_bundle_module *m,
			    size_t n);
/* desc->table is filled in by the writer; only tsc_hz and time_* are read. */
int mt_bundle_write_clock(struct mt_bundle_writer *w, const struct mt_bundle_clock_desc *desc,
			  const struct mt_bundle_clock_entry *anchors, size_t n);
/* An embedded file from memory (f->size is ignored), or copied from disk. */
int mt_bundle_write_file(struct mt_bundle_writer *w, const struct mt_bundle_file *f,
			 const void *data, size_t len);
int mt_bundle_embed_file(struct mt_bundle_writer *w, const struct mt_bundle_file *f,
			 const char *src_path);
int mt_bundle_write_ktext(struct mt_bundle_writer *w, const struct mt_bundle_ktext *kt,
			  const void *code, size_t len);
int mt_bundle_write_kallsyms(struct mt_bundle_writer *w, const char *text, size_t len);
/* Compression argument: let the writer choose (zstd unless tiny or disabled). */
#define MT_BUNDLE_COMP_AUTO (-1)

/*
 * Any section: for types this library does not know yet, and for tests.
 * compression is an enum mt_bundle_compression or MT_BUNDLE_COMP_AUTO.
 */
int mt_bundle_write_section(struct mt_bundle_writer *w, uint32_t type, const void *desc,
			    size_t desc_len, const void *payload, size_t len, int compression);

/* ---- 4. Reader ----
 * mt_bundle_open() maps the file, checks the file header, every section
 * header and descriptor, every payload checksum and the END section, and
 * decodes the small sections. Large payloads (PT bytes, files, kernel text)
 * are returned as pointers into the mapping when stored uncompressed and
 * decompressed once, on first access, otherwise. As with any mapped file,
 * the bundle must not be truncated by someone else while it is open.
 */
struct mt_bundle_reader;

struct mt_bundle_section_info {
	uint32_t type;
	uint16_t compression;
	int known;                      /* this library knows the type */
	uint64_t offset;                /* file offset of the section header */
	uint64_t desc_size;
	uint64_t stored_size;
	uint64_t raw_size;
};

int mt_bundle_open(struct mt_bundle_reader **out, const char *path, char *err, size_t errlen);

/* What opening a bundle may commit to; zero fields take the defaults. */
struct mt_bundle_limits {
	/*
	 * The sum of every section's declared decompressed size. Default:
	 * 64 times the file's size, at least 256 MiB, at most the machine's
	 * memory; a bundle declaring more is refused at open.
	 */
	uint64_t max_total_raw;
};

/* Reads the regular file FD (kept open by the caller), called NAME in messages. */
int mt_bundle_open_fd(struct mt_bundle_reader **out, int fd, const char *name,
		      const struct mt_bundle_limits *lim, char *err, size_t errlen);
/* Reads a bundle held in memory; buf must outlive the reader. */
int mt_bundle_open_mem(struct mt_bundle_reader **out, const void *buf, size_t len,
		       char *err, size_t errlen);
void mt_bundle_close(struct mt_bundle_reader *r);
const char *mt_bundle_reader_errmsg(const struct mt_bundle_reader *r);

void mt_bundle_version(const struct mt_bundle_reader *r, uint16_t *major, uint16_t *minor);
size_t mt_bundle_section_count(const struct mt_bundle_reader *r);
int mt_bundle_section_info(const struct mt_bundle_reader *r, size_t idx,
			   struct mt_bundle_section_info *info);
/* "pt-data", "maps", ...; "unknown" for types this library does not know. */
const char *mt_bundle_section_name(uint32_t type);
/* "uprobe", "slow call", "user request", ...; NULL for reasons this library does not know. */
const char *mt_bundle_reason_name(uint32_t reason);
/* "kfunc", "fallback", "manual", "exit", "power"; NULL for unknown paths. */
const char *mt_bundle_freeze_name(uint32_t path);
/* Why PT written under IA32_RTIT_CTL value CTL cannot be decoded into
 * control flow (one clause, naming perf's option too), or NULL. */
const char *mt_bundle_ctl_undecodable(uint64_t ctl);

int mt_bundle_get_cpu(const struct mt_bundle_reader *r, struct mt_bundle_cpu_desc *cpu);
int mt_bundle_get_pt_config(const struct mt_bundle_reader *r,
			    struct mt_bundle_pt_config_desc *cfg);
/* The name of the first section that reading the trace needs and R
 * lacks ("cpu", "pt-config"), or NULL when it has them. */
const char *mt_bundle_missing_section(const struct mt_bundle_reader *r);
int mt_bundle_get_trigger(const struct mt_bundle_reader *r, struct mt_bundle_trigger *t);

size_t mt_bundle_pt_count(const struct mt_bundle_reader *r);
int mt_bundle_pt_desc(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_pt_desc *pt);
int mt_bundle_pt_data(struct mt_bundle_reader *r, size_t i, const uint8_t **data, size_t *len);
/*
 * Frees CPU i's decompressed PT, or takes uncompressed PT (never copied) out
 * of memory as pages of the mapped file, read again if used again: for
 * decoding CPU after CPU in bounded memory. Pointers from
 * mt_bundle_pt_data(r, i) become invalid; a later call decompresses again.
 */
int mt_bundle_pt_release(struct mt_bundle_reader *r, size_t i);

/*
 * CPU i's PT read from the start, in pieces, in memory that does not grow
 * with the stream (a zstd payload is decompressed as it is read; the
 * mapped file's pages behind the read leave memory). Each stream has its
 * own state: streams may be read in parallel threads. A read returns the
 * bytes it stored (N unless the payload ends first, 0 at its end) or a
 * negative errno, with the message in mt_bundle_stream_errmsg().
 */
struct mt_bundle_stream;
int mt_bundle_pt_stream_open(struct mt_bundle_reader *r, size_t i, struct mt_bundle_stream **out);
ssize_t mt_bundle_stream_read(struct mt_bundle_stream *st, uint8_t *buf, size_t n);
const char *mt_bundle_stream_errmsg(const struct mt_bundle_stream *st);
/* Reads ST through to its end, holding none of it: its length in *LEN;
 * 0, or a negative errno with the stream's message. Streams of one
 * reader may be drained on several threads at once. */
int mt_bundle_stream_drain(struct mt_bundle_stream *st, uint64_t *len);
void mt_bundle_stream_close(struct mt_bundle_stream *st);
/* Reads CPU i's PT through that way, for its errors (the reader's
 * message) and its length in *LEN, holding none of it. */
int mt_bundle_pt_check(struct mt_bundle_reader *r, size_t i, uint64_t *len);

/*
 * The context-switch table (all its sections, in file order), read in
 * steps: snapshots of busy machines hold millions of switches, which the
 * decoder takes in without a copy of them all. A read stores up to MAX
 * entries at OUT and returns how many (0 at the end) or a negative errno,
 * with the message in mt_bundle_switch_stream_errmsg(). Streams are
 * independent of each other and of the reader's other calls.
 */
struct mt_bundle_switch_stream;
int mt_bundle_switch_stream_open(struct mt_bundle_reader *r,
				 struct mt_bundle_switch_stream **out);
ssize_t mt_bundle_switch_stream_read(struct mt_bundle_switch_stream *ss,
				     struct mt_bundle_switch_entry *out, size_t max);
const char *mt_bundle_switch_stream_errmsg(const struct mt_bundle_switch_stream *ss);
void mt_bundle_switch_stream_close(struct mt_bundle_switch_stream *ss);
size_t mt_bundle_switch_count(const struct mt_bundle_reader *r);
/*
 * The whole table in memory, read on the first call and kept until close
 * (not safe beside another thread's first call); 0 or a negative errno,
 * with the reader's message.
 */
int mt_bundle_switches(struct mt_bundle_reader *r, const struct mt_bundle_switch_entry **sw,
		       size_t *n);

/* Tables: all sections of one type, concatenated in file order. */
size_t mt_bundle_maps(const struct mt_bundle_reader *r, const struct mt_bundle_map **maps);
size_t mt_bundle_threads(const struct mt_bundle_reader *r, const struct mt_bundle_thread **t);
size_t mt_bundle_modules(const struct mt_bundle_reader *r, const struct mt_bundle_module **m);
/* desc may be NULL; -ENOENT without a clock section. */
int mt_bundle_clock(const struct mt_bundle_reader *r, struct mt_bundle_clock_desc *desc,
		    const struct mt_bundle_clock_entry **anchors, size_t *n);

size_t mt_bundle_file_count(const struct mt_bundle_reader *r);
int mt_bundle_file_info(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_file *f);
/*
 * Index of the embedded file with this build-id, else of one with this path
 * whose build-id does not differ (either side may lack one); -ENOENT.
 * build_id may be NULL (build_id_len 0), path may be NULL.
 */
int mt_bundle_file_find(const struct mt_bundle_reader *r, const uint8_t *build_id,
			size_t build_id_len, const char *path);
int mt_bundle_file_data(struct mt_bundle_reader *r, size_t i, const uint8_t **data,
			size_t *len);

size_t mt_bundle_ktext_count(const struct mt_bundle_reader *r);
int mt_bundle_ktext_info(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_ktext *kt);
int mt_bundle_ktext_data(struct mt_bundle_reader *r, size_t i, const uint8_t **code,
			 size_t *len);
/* The kallsyms text; not NUL-terminated (it may point into the mapping). */
int mt_bundle_kallsyms(struct mt_bundle_reader *r, const char **text, size_t *len);

/* ---- 5. Tools ---- */
/* `mtrace-user bundle-info FILE`: the header and one line per section.
 * A bundle that does not open gives mt_bundle_open()'s error and message. */
int mt_bundle_print_info(const char *path, FILE *out, char *err, size_t errlen);
/* The same for an open bundle, called NAME. */
void mt_bundle_print_info_of(struct mt_bundle_reader *r, const char *name, FILE *out);

#endif
