/* SPDX-License-Identifier: MIT */
/*
 * The binaries a trace ran: which file backs a mapping (the local file, or
 * the copy embedded in the bundle when the local file is missing or has a
 * different build-id), its executable PT_LOAD segments, and its symbols.
 * One entry per distinct binary, shared by all processes and threads.
 */
#ifndef MTRACE_DECODE_BINFILE_H
#define MTRACE_DECODE_BINFILE_H

#include "bundle/bundle.h"
#include "sym/sym.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An executable PT_LOAD segment: file bytes [offset, offset + filesz) are
 * linked at vaddr. */
struct mt_exec_seg {
	uint64_t offset, filesz, vaddr;
};

struct mt_binfile {
	char *name;		/* path as recorded in the trace */
	char *open_path;	/* what to open: name, or the embedded copy */
	bool embedded;
	int memfd;		/* holds the embedded copy; -1 otherwise */
	uint8_t build_id[MT_SYM_BUILD_ID_MAX];
	size_t build_id_len;
	struct mt_exec_seg *segs;
	size_t nsegs;
	bool is_elf;
	/* Symbols, loaded on first use under the binary's own lock (streams
	 * that meet different binaries do not wait for each other). Once
	 * SYM_READY is set (release), SYM is final and read without it. */
	pthread_mutex_t sym_lock;
	atomic_bool sym_ready;
	struct mt_sym_file *sym;
	char sym_err[MT_SYM_ERRLEN];
};

/* Recorded paths starting with the directory FROM are looked for under TO. */
struct mt_path_map {
	const char *from, *to;
};

struct mt_bincache {
	struct mt_bundle_reader *bundle;	/* may be NULL */
	struct mt_sym_options symopt;
	bool embedded_only;	/* never open local files */
	/* Where copies of binaries missing here were looked for, as messages
	 * name it; NULL: "the bundle". */
	const char *copies;
	/* Said of a binary without a build-id instead (mt_decode_opts). */
	const char *copies_without_id;
	/* Where a recorded path is looked for locally: the first matching
	 * map rewrites its start, then SYMFS (a root directory) is put
	 * before it. Both NULL/0: the path as recorded. */
	const struct mt_path_map *maps;
	size_t nmaps;
	const char *symfs;
	struct mt_binfile **files;
	size_t nfiles, files_cap;
	pthread_mutex_t lock;
};

void mt_bincache_init(struct mt_bincache *c, struct mt_bundle_reader *bundle,
		      const struct mt_sym_options *symopt);
void mt_bincache_fini(struct mt_bincache *c);

/*
 * The binary for a mapping of PATH whose recorded build-id is BID (BID_LEN
 * 0 if unknown). NULL, with a message, when neither a local file nor an
 * embedded copy is usable. Thread-safe; entries live as long as C.
 */
struct mt_binfile *mt_bincache_get(struct mt_bincache *c, const char *path, const uint8_t *bid,
				   size_t bid_len, char *err, size_t errlen);

/* The binary's symbols, or NULL when they cannot be read. Thread-safe. */
struct mt_sym_file *mt_binfile_syms(struct mt_bincache *c, struct mt_binfile *b);

#endif
