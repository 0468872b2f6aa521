/* SPDX-License-Identifier: MIT */
/*
 * Opening a named input only when it is a regular file. Names come from
 * users and from recorded data (a map record, a .gnu_debuglink, a perf
 * --kcore directory), and opening anything else can act: a watchdog's
 * open arms it (the machine reboots unless it is fed), a serial line's
 * may wait for a carrier, a FIFO's waits for a writer. So the kind is
 * checked by name first and the open happens only for a regular file.
 */
#ifndef MTRACE_UTIL_REGFILE_H
#define MTRACE_UTIL_REGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/reporter.h"

/* What a file of MODE is, for messages: "a directory", "a character
 * device", "a FIFO", ... ("a regular file" for one). */
const char *mt_file_kind(mode_t mode);

/*
 * Opens PATH (symlinks followed) read-only, close-on-exec, if it is a
 * regular file, without opening it otherwise. Returns the descriptor, or
 * -1 with errno from stat() or open(), or EISDIR for a directory and
 * ENODEV for any other kind, which *KIND then names (KIND may be NULL).
 */
int mt_open_regular(const char *path, const char **kind);

/* The name outputs use for standard output (files/outfile.h's "-"). */
#define MT_STDOUT_NAME "/dev/stdout"

/*
 * Opens PATH for writing from its start, created with MODE if missing;
 * MT_STDOUT_NAME is standard output itself (a duplicate of it): opening
 * that name anew would truncate a file the shell opened for appending
 * (>>) and write over it from its start. A FIFO nobody reads yet is
 * waited for after one message to REP (may be NULL), a wait that SIGINT,
 * SIGTERM and SIGHUP end even when the caller blocks them. The
 * descriptor, or -1 and errno.
 */
int mt_open_write(const char *path, mode_t mode, const struct mt_reporter *rep);

/* Whether paths A and B both exist and name one file (through links too). */
bool mt_same_file(const char *a, const char *b);

/*
 * What sysfs says of the character device RDEV, told without opening it:
 * its class ("tty", "mem", "misc") into CLS and its name ("null") into
 * NAME, LEN bytes each. 0, or -1 when sysfs has no entry for it (not
 * mounted, or no driver has that number).
 */
int mt_chardev_sysfs(dev_t rdev, char *cls, char *name, size_t len);

#endif
