// SPDX-License-Identifier: MIT
/* Text made safe for trace formats and terminals (user/util/text.h). */
#include "mt_test.h"

#include "util/text.h"

#include <stdlib.h>
#include <string.h>

MT_TEST(utf8_sequences_judged)
{
	MT_ASSERT_EQ(mt_utf8_seq_len("a"), 1);
	MT_ASSERT_EQ(mt_utf8_seq_len("\xc3\xa9"), 2);		/* é */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xe6\x97\xa5"), 3);	/* 日 */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xf0\x9f\x98\x80"), 4);	/* U+1F600 */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xc0\x80"), 0);		/* overlong NUL */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xe0\x80\xaf"), 0);	/* overlong '/' */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xed\xa0\x80"), 0);	/* surrogate */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xf4\x90\x80\x80"), 0);	/* past U+10FFFF */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xe6\x97"), 0);		/* cut by the NUL */
	MT_ASSERT_EQ(mt_utf8_seq_len("\x80"), 0);		/* a lone continuation */
	MT_ASSERT_EQ(mt_utf8_seq_len("\xff"), 0);
}

MT_TEST(invalid_utf8_replaced)
{
	char *s = mt_utf8_dup("a\xe9z\xc3\xa9");

	MT_ASSERT(s);
	MT_ASSERT_STREQ(s, "a\xef\xbf\xbdz\xc3\xa9");
	free(s);
}

/* mt_visible() into a roomy buffer, and mt_fputs_visible(), agree. */
static void shows(const char *in, const char *want)
{
	char buf[256], *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	MT_ASSERT_EQ(mt_visible(buf, sizeof(buf), in, strlen(in)), strlen(want));
	MT_ASSERT_STREQ(buf, want);
	MT_ASSERT(f);
	mt_fputs_visible(in, f);
	MT_ASSERT_EQ(fclose(f), 0);
	MT_ASSERT_STREQ(mem, want);
	free(mem);
}

MT_TEST(terminal_controls_escaped)
{
	shows("plain name(int, char*)", "plain name(int, char*)");
	shows("\x1b[2Jwiped", "\\x1b[2Jwiped");			/* ESC: clears a screen */
	shows("a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f");
	shows("\xc2\x9b" "31m", "\\xc2\\x9b31m");		/* U+009B, the C1 CSI */
	shows("\x9b" "31m", "\\x9b31m");			/* the raw 8-bit CSI */
	shows("caf\xc3\xa9 \xe6\x97\xa5 \xc2\xa0", "caf\xc3\xa9 \xe6\x97\xa5 \xc2\xa0");
	shows("bad\xe9", "bad\\xe9");
	shows("", "");
}

MT_TEST(visible_stops_at_what_fits)
{
	char buf[8];

	/* An escape is never cut: "ab" and \x1b need 6 bytes, 7 with the NUL. */
	MT_ASSERT_EQ(mt_visible(buf, 6, "ab\x1b" "cd", 5), 2);
	MT_ASSERT_STREQ(buf, "ab");
	MT_ASSERT_EQ(mt_visible(buf, 7, "ab\x1b" "cd", 5), 6);
	MT_ASSERT_EQ(mt_visible(buf, sizeof(buf), "ab\x1b" "cd", 5), 7);
	MT_ASSERT_STREQ(buf, "ab\\x1bc");
	/* Nor a character: 日 is 3 bytes. */
	MT_ASSERT_EQ(mt_visible(buf, 5, "a\xe6\x97\xa5", 4), 4);
	MT_ASSERT_EQ(mt_visible(buf, 4, "a\xe6\x97\xa5", 4), 1);
	MT_ASSERT_STREQ(buf, "a");
	/* MAX bytes of the source at most, and never half a character. */
	MT_ASSERT_EQ(mt_visible(buf, sizeof(buf), "a\xe6\x97\xa5", 3), 1);
	MT_ASSERT_EQ(mt_visible(buf, 1, "abc", 3), 0);
	MT_ASSERT_STREQ(buf, "");
	MT_ASSERT_EQ(mt_visible(buf, 0, "abc", 3), 0);
}
