/* SPDX-License-Identifier: MIT */
/*
 * The binaries of an exported trace, laid out for `perf --symfs DIR`:
 * DIR + the path perf's map records name. Taken from the bundle's embedded
 * copies, else from the local file when its build-id matches the trace's.
 */
#ifndef MTRACE_PERFDATA_SYMFS_H
#define MTRACE_PERFDATA_SYMFS_H

#include "bundle/bundle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Writes the code of PATH (build-id BID, BID_LEN 0 if unknown) to DIR + AS,
 * unless that is PATH itself or the file KEEP (may be NULL) names.
 * Returns 1 when written, 0 when not (WARN says why), or a negative errno
 * with ERR set when writing failed.
 */
int perfdata_symfs_put(struct mt_bundle_reader *r, const char *dir, const char *path,
		       const uint8_t *bid, size_t bid_len, const char *as, const char *keep,
		       char *warn, size_t warnlen, char *err, size_t errlen);

/* Whether the ELF file (FD, or at PATH) has build-id BID; any file when BID_LEN is 0. */
bool perfdata_elf_has_build_id(int fd, const uint8_t *bid, size_t bid_len);
bool perfdata_path_has_build_id(const char *path, const uint8_t *bid, size_t bid_len);

/*
 * Opens PATH when it is a regular file with build-id BID (any when BID_LEN
 * is 0): the descriptor, or -1 with WHY (may be NULL) saying why not, as a
 * clause about the file here ("no such file here", "the file here has
 * another build-id", ...).
 */
int perfdata_open_build(const char *path, const uint8_t *bid, size_t bid_len, char *why,
			size_t whylen);

/* Creates DIR and its parents. */
int perfdata_mkdirs(const char *dir, char *err, size_t errlen);
/* The same, naming in TOP the outermost directory it created ("" when
 * DIR was there): what perfdata_remove_tree() takes away after a run
 * that failed. */
int perfdata_mkdirs_created(const char *dir, char *top, size_t toplen, char *err, size_t errlen);
/* Removes TOP and everything under it; nothing when TOP is "". */
void perfdata_remove_tree(const char *top);

#endif
