/* SPDX-License-Identifier: MIT */
/*
 * Output files that never cost the user a file: an output is refused when
 * it is the same file as an input (also through a symlink or hard link),
 * and is written to a temporary file beside it that replaces the old file
 * only once complete. A failed write or an error removes the temporary and
 * leaves the old file as it was; so does Ctrl-C when the program's signal
 * handler calls mt_outfile_remove_pending() (the library installs none).
 *
 *   if (mt_outfile_check_inputs(out, inputs, n, err, sizeof(err)) ||
 *       mt_outfile_begin(&of, out, err, sizeof(err)))
 *           fail(err);
 *   write everything to of.write_path (open it by name: a ".gz" or other
 *   suffix of OUT is kept at the end of the temporary's name);
 *   ok ? mt_outfile_commit(&of, err, sizeof(err)) : mt_outfile_abort(&of);
 *
 * "-" and existing non-regular files (/dev/null, a FIFO, a terminal) are
 * written in place: there is nothing to replace atomically. Errors are one
 * line in ERR, with -errno returned.
 */
#ifndef MTRACE_OUTFILE_H
#define MTRACE_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct mt_outfile {
	char path[PATH_MAX];		/* the destination (a symlink's target) */
	char write_path[PATH_MAX];	/* where to write: the temporary, or path */
	int in_place;			/* "-" or a special file: no temporary */
	int slot;			/* in the signal-cleanup table; -1: none */
};

/*
 * -EEXIST when OUTPUT names the same file as one of INPUTS[0..N) ("-" in
 * either is standard input/output), or an existing ELF file (no output of
 * mtrace is one: a program or library named by mistake), 0 otherwise
 * (also when OUTPUT does not exist yet). Call before anything is opened
 * for writing.
 */
int mt_outfile_check_inputs(const char *output, const char *const *inputs, size_t n,
			    char *err, size_t errlen);

/* Whether outputs A and B would be one file, whether they exist yet or
 * not ("-" is standard output). */
bool mt_outfile_same_place(const char *a, const char *b);

/*
 * Creates the temporary beside OUTPUT (same directory, so the final rename
 * cannot cross file systems) with the mode a new file or the replaced one
 * has. Proves the directory writable before any work is done.
 */
int mt_outfile_begin(struct mt_outfile *of, const char *output, char *err, size_t errlen);

/* Renames the temporary over the destination; on failure removes it. */
int mt_outfile_commit(struct mt_outfile *of, char *err, size_t errlen);

/* Removes the temporary (nothing when written in place). */
void mt_outfile_abort(struct mt_outfile *of);

/*
 * Removes every temporary not yet committed or aborted. Async-signal-safe:
 * for a SIGINT/SIGTERM/SIGHUP handler, before the program dies of the signal.
 */
void mt_outfile_remove_pending(void);

/* The size of the committed file (what is on disk, e.g. after gzip); -1 if unknown. */
long long mt_outfile_size(const struct mt_outfile *of);

#endif
