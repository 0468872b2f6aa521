// SPDX-License-Identifier: MIT
/* UTF-8 repair for names taken from binaries (pf_text.h). */
#include "pf_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at @s, 0 if it is not one. */
static size_t utf8_seq_len(const unsigned char *s)
{
	uint32_t cp, min;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		/* Also stops at the terminating NUL. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *pf_utf8_dup(const char *str)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	char *out, *o;

	/* Each invalid byte grows to 3 bytes at most. */
	out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	o = out;
	while (*s) {
		size_t n = utf8_seq_len(s);

		if (n) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(o, repl, 3);
			o += 3;
			s++;
		}
	}
	*o = 0;
	return out;
}
