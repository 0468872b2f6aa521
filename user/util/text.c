// SPDX-License-Identifier: MIT
/* Text made safe for the trace formats and for terminals (text.h). */
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t mt_utf8_code_point(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp = n == 1 ? s[0] : s[0] & (0xff >> (n + 1));

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

bool mt_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

bool mt_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool mt_gz_named(const char *name)
{
	return mt_ends_with(name, ".gz");
}

size_t mt_utf8_seq_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp, min;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		/* Also stops at the terminating NUL. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	cp = mt_utf8_code_point(str, n);
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *mt_utf8_dup(const char *str)
{
	static const char repl[] = "\xef\xbf\xbd";
	size_t len = strlen(str);
	char *out, *o;

	/* Each invalid byte grows to 3 bytes at most. */
	out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	o = out;
	while (*str) {
		size_t n = mt_utf8_seq_len(str);

		if (n) {
			memcpy(o, str, n);
			o += n;
			str += n;
		} else {
			memcpy(o, repl, 3);
			o += 3;
			str++;
		}
	}
	*o = 0;
	return out;
}

/* Bytes of the character at @s (1 for an invalid byte); *SHOWN: whether a
 * terminal may be given it as it is (printable, valid UTF-8). */
static size_t next_char(const char *s, int *shown)
{
	size_t k = mt_utf8_seq_len(s);

	*shown = k && !mt_is_control(mt_utf8_code_point(s, k));
	return k ? k : 1;
}

size_t mt_visible(char *dst, size_t n, const char *src, size_t max)
{
	size_t o = 0, i = 0;

	if (!n)
		return 0;
	while (i < max && src[i]) {
		int shown;
		size_t k = next_char(src + i, &shown), len = shown ? k : 4 * k;

		if (i + k > max || o + len >= n)
			break;
		if (shown)
			memcpy(dst + o, src + i, k);
		else
			for (size_t j = 0; j < k; j++)
				snprintf(dst + o + 4 * j, 5, "\\x%02x", (unsigned char)src[i + j]);
		o += len;
		i += k;
	}
	dst[o] = 0;
	return o;
}

void mt_fputs_visible(const char *s, FILE *f)
{
	const char *run = s;

	while (*s) {
		int shown;
		size_t k = next_char(s, &shown);

		if (!shown) {
			fwrite(run, 1, (size_t)(s - run), f);
			for (size_t j = 0; j < k; j++)
				fprintf(f, "\\x%02x", (unsigned char)s[j]);
			run = s + k;
		}
		s += k;
	}
	fwrite(run, 1, (size_t)(s - run), f);
}
