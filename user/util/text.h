/* SPDX-License-Identifier: MIT */
/*
 * Text from binaries and bundles (symbol names, paths, thread names, trigger
 * specs) made safe for where it goes: valid UTF-8 for the trace formats, and
 * for a terminal no control characters, which a bundle from elsewhere could
 * use to rewrite the screen.
 */
#ifndef MTRACE_UTIL_TEXT_H
#define MTRACE_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Whether @s ends with @suffix. */
bool mt_ends_with(const char *s, const char *suffix);

/* Whether output file @name asks for gzip: it ends in ".gz". */
bool mt_gz_named(const char *name);

/* Length of the valid, shortest-form UTF-8 sequence at @s (no surrogates,
 * at most U+10FFFF), 0 if it is not one. Stops at the terminating NUL. */
size_t mt_utf8_seq_len(const char *s);

/* Code point of the valid sequence of @n bytes at @s (mt_utf8_seq_len()'s). */
uint32_t mt_utf8_code_point(const char *s, size_t n);

/* Whether code point @cp is a control character: C0, DEL or C1. */
bool mt_is_control(uint32_t cp);

/* Copy of @s that is valid UTF-8: every byte that does not start a valid
 * sequence becomes U+FFFD. NULL on ENOMEM. */
char *mt_utf8_dup(const char *s);

/*
 * Copies at most @max bytes of @src into @dst (@n bytes, NUL-terminated) for
 * a terminal: printable UTF-8 stays, and each byte of a control character
 * (C0, DEL, C1) or of invalid UTF-8 is written \xNN. Stops before what does
 * not fit whole. Returns the length written.
 */
size_t mt_visible(char *dst, size_t n, const char *src, size_t max);

/* mt_visible() of all of @s written to @f, in runs (no copy, no limit). */
void mt_fputs_visible(const char *s, FILE *f);

#endif
