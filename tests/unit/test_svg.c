// SPDX-License-Identifier: MIT
/*
 * The SVG writer's layout (svg/svg.h) on a hand-made event stream: the
 * flame graph merges stacks and sizes frames by inclusive time, the flame
 * chart keeps each call at its time; names are escaped. The browser side
 * is tests/host/svg.sh.
 */
#include "../lib/mt_test.h"

#include "decode/callstack.h"
#include "svg/svg.h"
#include "util/text.h"

#include <stdlib.h>
#include <string.h>

static const char *names[] = { "[unknown]", "[syscall]", "[untraced]", "A", "B<&>", "C" };

static const char *name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return names[id];
}

static void ev(const struct mt_decode_sink *s, uint32_t tid, uint64_t ns, int kind, uint32_t fn)
{
	struct mt_ev e = { .ts = ns, .kind = (uint8_t)kind, .arg = fn };

	MT_ASSERT_EQ(s->event(s->ctx, 1, tid, ns, &e), 0);
}

/* G written under TITLE, and freed. */
static char *written(struct mt_svg *g, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	MT_ASSERT(f);
	MT_ASSERT_EQ(mt_svg_write(g, f, title), 0);
	MT_ASSERT_EQ(fclose(f), 0);
	mt_svg_free(g);
	return buf;
}

/* Thread 1: A [0,150] calls B [10,30], B [40,80] (in it [syscall]
 * [45,75]) and C [100,130]. Thread 2: B [200,250]. */
static char *render(enum mt_svg_kind kind)
{
	struct mt_svg *g = mt_svg_new(kind);
	struct mt_decode_sink s = mt_svg_sink(g, name_of, NULL);

	MT_ASSERT(g);
	ev(&s, 1, 0, MT_EV_BEGIN, 3);
	ev(&s, 1, 10, MT_EV_BEGIN, 4);
	ev(&s, 1, 30, MT_EV_END, 0);
	ev(&s, 1, 40, MT_EV_BEGIN, 4);
	ev(&s, 1, 45, MT_EV_BEGIN, MT_FN_SYSCALL);
	ev(&s, 1, 75, MT_EV_END, 0);
	ev(&s, 1, 80, MT_EV_END, 0);
	ev(&s, 1, 100, MT_EV_BEGIN, 5);
	ev(&s, 1, 130, MT_EV_END, 0);
	ev(&s, 1, 150, MT_EV_END, 0);
	ev(&s, 2, 200, MT_EV_BEGIN, 4);
	ev(&s, 2, 250, MT_EV_END, 0);
	return written(g, "t<1>");
}

/* Whether SVG has a frame NAME spanning [S, E] on its axis. */
static int has(const char *svg, const char *name, unsigned s, unsigned e)
{
	char want[160];

	snprintf(want, sizeof(want), "data-s=\"%u\" data-e=\"%u\" data-d=\"%u\" data-n=\"%s\"", s, e,
		 e - s, name);
	return strstr(svg, want) != NULL;
}

MT_TEST(graph_merges_stacks_by_inclusive_time)
{
	char *svg = render(MT_SVG_GRAPH);

	/* all 200 = thread 1's 150 + thread 2's 50; children by name from
	 * their parent's start: thread 1 [0,150], thread 2 [150,200] */
	MT_ASSERT_MSG(has(svg, "all", 0, 200), "%s", svg);
	MT_ASSERT(has(svg, "thread 1", 0, 150));
	MT_ASSERT(has(svg, "thread 2", 150, 200));
	MT_ASSERT(has(svg, "A", 0, 150));
	/* B's two calls are one frame of 60, then C; [syscall] inside B */
	MT_ASSERT(has(svg, "B&lt;&amp;&gt;", 0, 60));
	MT_ASSERT(has(svg, "C", 60, 90));
	MT_ASSERT(has(svg, "[syscall]", 0, 30));
	MT_ASSERT(has(svg, "B&lt;&amp;&gt;", 150, 200));
	MT_ASSERT(strstr(svg, "data-x0=\"0\" data-x1=\"200\""));
	MT_ASSERT(strstr(svg, ">t&lt;1&gt;</text>"));
	MT_ASSERT(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	free(svg);
}

MT_TEST(chart_keeps_calls_at_their_times)
{
	char *svg = render(MT_SVG_CHART);

	MT_ASSERT(strstr(svg, "data-x0=\"0\" data-x1=\"250\""));
	MT_ASSERT_MSG(has(svg, "A", 0, 150), "%s", svg);
	MT_ASSERT(has(svg, "B&lt;&amp;&gt;", 10, 30));
	MT_ASSERT(has(svg, "B&lt;&amp;&gt;", 40, 80));
	MT_ASSERT(has(svg, "[syscall]", 45, 75));
	MT_ASSERT(has(svg, "C", 100, 130));
	MT_ASSERT(has(svg, "B&lt;&amp;&gt;", 200, 250));
	MT_ASSERT(has(svg, "thread 2", 0, 250));
	free(svg);
}

/* A name with a byte that is no UTF-8 made the whole file unreadable to a
 * browser (XML must be well-formed); control bytes are no XML at all. */
static const char *hostile_name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 3 ? "lat\xe9n" : "esc\x1b[2J\x7f\xc2\x85";
}

MT_TEST(names_that_are_no_utf8_still_make_xml)
{
	struct mt_svg *g = mt_svg_new(MT_SVG_GRAPH);
	struct mt_decode_sink s = mt_svg_sink(g, hostile_name_of, NULL);
	char *buf;

	MT_ASSERT(g);
	ev(&s, 1, 0, MT_EV_BEGIN, 3);
	ev(&s, 1, 10, MT_EV_BEGIN, 4);
	ev(&s, 1, 20, MT_EV_END, 0);
	ev(&s, 1, 30, MT_EV_END, 0);
	buf = written(g, "t\xff");
	for (const char *p = buf; *p; p += mt_utf8_seq_len(p)) {
		size_t n = mt_utf8_seq_len(p);

		MT_ASSERT_MSG(n, "no UTF-8 at offset %zu: '%.16s'", (size_t)(p - buf), p);
		MT_ASSERT_MSG(*p == '\n' || !mt_is_control(mt_utf8_code_point(p, n)),
			      "a control character at offset %zu: '%.16s'", (size_t)(p - buf), p);
	}
	MT_ASSERT_MSG(has(buf, "lat\xef\xbf\xbdn", 0, 30), "%s", buf);
	MT_ASSERT_MSG(has(buf, "esc[2J", 0, 10), "%s", buf);
	free(buf);
}

/* A decode with no events (no PSB to start at) still writes a whole SVG,
 * of either kind, without a frame. */
MT_TEST(nothing_decoded_still_makes_an_svg)
{
	for (int kind = MT_SVG_GRAPH; kind <= MT_SVG_CHART; kind++) {
		struct mt_svg *g = mt_svg_new((enum mt_svg_kind)kind);
		char *buf;

		MT_ASSERT(g);
		buf = written(g, "empty");
		MT_ASSERT_MSG(strstr(buf, "</svg>") && !strstr(buf, "data-n="), "%s", buf);
		free(buf);
	}
}
