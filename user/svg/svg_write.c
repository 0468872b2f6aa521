// SPDX-License-Identifier: MIT
/* Writing the SVG flame graph or chart with its inline script; see svg.h. */
#include "svg/svg_internal.h"
#include "util/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 1200	/* px */
#define ROW 16		/* px per frame */
#define TOP 48		/* title, buttons and status above the frames */
#define MARGIN 10

/*
 * The viewer, inline. Frames are <g class="f"> with data-s/-e (their span
 * on the axis), data-n (name) and data-id; the rectangles have their
 * unzoomed geometry in the file, so the picture shows without a script.
 */
static const char script[] =
	"(function () {\n"
	"var svg = document.documentElement, W = +svg.getAttribute('data-w');\n"
	"var X0 = +svg.getAttribute('data-x0'), X1 = +svg.getAttribute('data-x1');\n"
	"var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"var status = document.getElementById('status'), lo = X0, hi = X1, re = null;\n"
	"window.addEventListener('error', function (e) {\n"
	"  svg.setAttribute('data-error', String(e.message));\n"
	"});\n"
	"function px(v) { return 10 + (v - lo) / (hi - lo || 1) * (W - 20); }\n"
	"function fmt(ns) {\n"
	"  var u = ['ns', 'us', 'ms', 's'], i = 0;\n"
	"  while (i < 3 && ns >= 999.5) { ns /= 1000; i++; }\n"
	"  return (i ? ns.toPrecision(3) : String(Math.round(ns))) + u[i];\n"
	"}\n"
	"function draw() {\n"
	"  var labels = 0;\n"
	"  frames.forEach(function (g) {\n"
	"    var s = +g.getAttribute('data-s'), e = +g.getAttribute('data-e');\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    if (e <= lo || s >= hi) { g.style.display = 'none'; return; }\n"
	"    g.style.display = '';\n"
	"    var x = Math.max(px(s), 10), w = Math.min(px(e), W - 10) - x;\n"
	"    r.setAttribute('x', x.toFixed(2));\n"
	"    r.setAttribute('width', Math.max(w, 0.1).toFixed(2));\n"
	"    if (!t) {\n"
	"      t = document.createElementNS('http://www.w3.org/2000/svg', 'text');\n"
	"      t.setAttribute('y', +r.getAttribute('y') + 12);\n"
	"      g.appendChild(t);\n"
	"    }\n"
	"    t.setAttribute('x', (x + 3).toFixed(2));\n"
	"    var name = g.getAttribute('data-n'), fit = Math.floor((w - 6) / 7);\n"
	"    t.textContent = fit < 3 ? '' : name.length <= fit ? name : name.slice(0, fit - 2) + '..';\n"
	"    if (t.textContent) labels++;\n"
	"    r.setAttribute('fill', re && re.test(name) ? '#e040e0' : r.getAttribute('data-c'));\n"
	"  });\n"
	"  svg.setAttribute('data-labels', labels);\n"
	"}\n"
	"function zoom(g) {\n"
	"  lo = +g.getAttribute('data-s'); hi = +g.getAttribute('data-e');\n"
	"  document.getElementById('reset').style.display = '';\n"
	"  svg.setAttribute('data-zoom', g.getAttribute('data-id'));\n"
	"  draw();\n"
	"}\n"
	"function reset() {\n"
	"  lo = X0; hi = X1;\n"
	"  document.getElementById('reset').style.display = 'none';\n"
	"  svg.removeAttribute('data-zoom');\n"
	"  draw();\n"
	"}\n"
	"function search(text) {\n"
	"  re = text ? new RegExp(text) : null;\n"
	"  var iv = [], total = 0, end = -Infinity;\n"
	"  frames.forEach(function (g) {\n"
	"    if (re && re.test(g.getAttribute('data-n')))\n"
	"      iv.push([+g.getAttribute('data-s'), +g.getAttribute('data-e')]);\n"
	"  });\n"
	"  iv.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  iv.forEach(function (v) {\n"
	"    if (v[1] <= end) return;\n"
	"    total += v[1] - Math.max(v[0], end); end = v[1];\n"
	"  });\n"
	"  document.getElementById('matched').textContent = re ?\n"
	"    'Matched ' + iv.length + ', ' + (100 * total / (X1 - X0 || 1)).toFixed(1) + '%' : '';\n"
	"  svg.setAttribute('data-matched', iv.length);\n"
	"  draw();\n"
	"}\n"
	"frames.forEach(function (g) {\n"
	"  g.addEventListener('click', function (ev) { ev.stopPropagation(); zoom(g); });\n"
	"  g.addEventListener('mouseover', function () {\n"
	"    var d = +g.getAttribute('data-d');\n"
	"    status.textContent = g.getAttribute('data-n') + ' (' + fmt(d) + ', ' +\n"
	"      (100 * d / (X1 - X0 || 1)).toFixed(1) + '%)';\n"
	"  });\n"
	"  g.addEventListener('mouseout', function () { status.textContent = ' '; });\n"
	"});\n"
	"document.getElementById('background').addEventListener('click', reset);\n"
	"document.getElementById('reset').addEventListener('click', reset);\n"
	"document.getElementById('search').addEventListener('click', function () {\n"
	"  var t = window.prompt('Search (regular expression)', re ? re.source : '');\n"
	"  if (t !== null) search(t);\n"
	"});\n"
	"var h = decodeURIComponent(location.hash.slice(1)), m;\n"
	"if ((m = /^search=(.*)$/.exec(h))) search(m[1]);\n"
	"draw();\n"
	"if ((m = /^zoom=(\\d+)$/.exec(h))) {\n"
	"  var z = document.querySelector('g.f[data-id=\"' + m[1] + '\"]');\n"
	"  if (z) zoom(z);\n"
	"}\n"
	"svg.setAttribute('data-ready', '1');\n"
	"})();\n";

/* Text for XML: the five specials escaped, control characters dropped,
 * and invalid UTF-8 as U+FFFD (one such byte makes the whole file
 * unreadable). */
static void xml(FILE *f, const char *s)
{
	while (*s) {
		size_t k = mt_utf8_seq_len(s);

		switch (k ? *s : 0) {
		case 0: fputs("\xef\xbf\xbd", f); break;
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* C0, DEL and C1: XML 1.0 forbids most, none shows. */
			if (!mt_is_control(mt_utf8_code_point(s, k)))
				fwrite(s, 1, k, f);
		}
		s += k ? k : 1;
	}
}

/* A warm colour from the name (so a function keeps its colour), grey
 * for untraced time, blue for the thread and "all" rows. */
static void colour(char *buf, size_t len, const char *name, int row_kind)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	if (row_kind)
		snprintf(buf, len, "#a8c8e8");
	else if (!strcmp(name, "[untraced]") || !strcmp(name, "[syscall]"))
		snprintf(buf, len, "#c8c8c8");
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130, (h >> 16) % 55);
}

struct writer {
	FILE *f;
	uint64_t x0, x1;	/* the axis */
	size_t id;
};

static double px(const struct writer *w, uint64_t v)
{
	return MARGIN + (double)(v - w->x0) / (double)(w->x1 - w->x0 ? w->x1 - w->x0 : 1) *
				(WIDTH - 2 * MARGIN);
}

/* One frame [S, E) of NAME at row Y; skipped when under a quarter pixel. */
static void frame(struct writer *w, uint64_t s, uint64_t e, const char *name, int y, int row_kind)
{
	double x = px(w, s), wd = px(w, e) - x;
	char c[32], d[16];

	if (wd < 0.25)
		return;
	colour(c, sizeof(c), name, row_kind);
	mt_fmt_ns(d, sizeof(d), e - s);
	fprintf(w->f, "<g class=\"f\" data-id=\"%zu\" data-s=\"%" PRIu64 "\" data-e=\"%" PRIu64
		      "\" data-d=\"%" PRIu64 "\" data-n=\"",
		w->id++, s, e, e - s);
	xml(w->f, name);
	fputs("\"><title>", w->f);
	xml(w->f, name);
	fprintf(w->f, " (%s, %.1f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		      "rx=\"2\" fill=\"%s\" data-c=\"%s\"/></g>\n",
		d, 100.0 * (double)(e - s) / (double)(w->x1 - w->x0 ? w->x1 - w->x0 : 1), x, y, wd,
		ROW - 1, c, c);
}

static int by_name(const void *a, const void *b, void *g)
{
	const struct mt_svg *s = g;
	const struct mt_svg_node *x = &s->nodes[*(const uint32_t *)a], *y = &s->nodes[*(const uint32_t *)b];

	return strcmp(s->names.v[x->name], s->names.v[y->name]);
}

/* Lays the graph out (children side by side, by name, from the parent's
 * start) and writes its frames, the root at the bottom; returns -1 when
 * out of memory. A decode without events has no root: no frames. */
static int graph(struct writer *w, struct mt_svg *g, int height)
{
	uint32_t *order, *kids;
	size_t head = 0, tail = 0, nk;
	int *depth;

	if (!g->nnodes)
		return 0;
	order = malloc(g->nnodes * sizeof(*order));
	depth = calloc(g->nnodes, sizeof(*depth));
	if (!order || !depth) {
		free(order);
		free(depth);
		return -ENOMEM;
	}
	w->x0 = 0;
	w->x1 = g->nodes[0].value;
	order[tail++] = 0;
	while (head < tail) {
		uint32_t n = order[head++];
		uint64_t x = g->nodes[n].x;

		frame(w, x, x + g->nodes[n].value, n ? g->names.v[g->nodes[n].name] : "all",
		      height - MARGIN - (depth[n] + 1) * ROW, n == 0 || g->nodes[n].parent == 0);
		kids = order + tail;
		nk = 0;
		for (uint32_t c = g->nodes[n].child; c; c = g->nodes[c].next)
			kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), by_name, g);
		for (size_t k = 0; k < nk; k++) {
			g->nodes[kids[k]].x = x;
			x += g->nodes[kids[k]].value;
			depth[kids[k]] = depth[n] + 1;
		}
		tail += nk;
	}
	free(order);
	free(depth);
	return 0;
}

/* The rows that are no calls, "all" and the threads, last as long as
 * the calls in them. */
static void graph_values(struct mt_svg *g)
{
	if (!g->nnodes)
		return;
	g->nodes[0].value = 0;
	for (size_t i = 0; i < g->nthreads; i++) {
		uint64_t v = 0;

		for (uint32_t c = g->nodes[g->threads[i].root].child; c; c = g->nodes[c].next)
			v += g->nodes[c].value;
		g->nodes[g->threads[i].root].value = v;
		g->nodes[0].value += v;
	}
}

static int graph_depth(const struct mt_svg *g)
{
	int max = 0;
	int *d = calloc(g->nnodes ? g->nnodes : 1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	for (size_t i = 1; i < g->nnodes; i++) {
		d[i] = d[g->nodes[i].parent] + 1;
		max = d[i] > max ? d[i] : max;
	}
	free(d);
	return max + 1;
}

/* Each thread's lane, in order, its calls at their times. */
static void chart(struct writer *w, struct mt_svg *g, const int *lane_y)
{
	char label[48];

	w->x0 = g->first;
	w->x1 = g->last > g->first ? g->last : g->first + 1;
	for (size_t i = 0; i < g->nthreads; i++) {
		snprintf(label, sizeof(label), "thread %u", g->threads[i].tid);
		frame(w, g->first, w->x1, label, lane_y[i], 1);
	}
	for (size_t i = 0; i < g->ncalls; i++) {
		const struct mt_svg_call *c = &g->calls[i];

		frame(w, c->begin, c->end, g->names.v[c->name],
		      lane_y[c->lane] + (int)(c->depth + 1) * ROW, 0);
	}
}

int mt_svg_write(struct mt_svg *g, FILE *out, const char *title)
{
	struct writer w = { out, 0, 1, 0 };
	int height, *lane_y = NULL, rc = 0;

	if (g->oom)
		return -ENOMEM;
	if (g->kind == MT_SVG_GRAPH) {
		int d = graph_depth(g);

		if (d < 0)
			return -ENOMEM;
		graph_values(g);
		height = TOP + d * ROW + 2 * MARGIN;
	} else {
		lane_y = calloc(g->nthreads ? g->nthreads : 1, sizeof(*lane_y));
		if (!lane_y)
			return -ENOMEM;
		height = TOP;
		for (size_t i = 0; i < g->nthreads; i++) {
			lane_y[i] = height;
			height += (int)(g->threads[i].max_depth + 1) * ROW + ROW / 2;
		}
		height += MARGIN;
	}
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		     "height=\"%d\" viewBox=\"0 0 %d %d\" data-w=\"%d\"",
		WIDTH, height, WIDTH, height, WIDTH);
	/* the axis: the chart's time, the graph's inclusive time of all */
	if (g->kind == MT_SVG_CHART)
		fprintf(out, " data-x0=\"%" PRIu64 "\" data-x1=\"%" PRIu64 "\"", g->first,
			g->last > g->first ? g->last : g->first + 1);
	else
		fprintf(out, " data-x0=\"0\" data-x1=\"%" PRIu64 "\"",
			g->nnodes && g->nodes[0].value ? g->nodes[0].value : 1);
	fputs(">\n<style>text { font: 12px monospace; fill: #000; pointer-events: none; }\n"
	      "g.f { cursor: pointer; } g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      ".ui { font: 12px sans-serif; cursor: pointer; fill: #036; }</style>\n", out);
	fprintf(out, "<rect id=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		     "fill=\"#f8f8f0\"/>\n<text x=\"%d\" y=\"18\" style=\"font: 15px sans-serif\">",
		WIDTH, height, WIDTH / 2 - 200);
	xml(out, title);
	fprintf(out, "</text>\n<text id=\"reset\" class=\"ui\" x=\"%d\" y=\"18\" "
		     "style=\"display: none\">Reset zoom</text>\n"
		     "<text id=\"search\" class=\"ui\" x=\"%d\" y=\"18\">Search</text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"38\"> </text>\n"
		     "<text id=\"status\" x=\"%d\" y=\"38\"> </text>\n",
		MARGIN, WIDTH - 60, WIDTH - 260, MARGIN);
	if (g->kind == MT_SVG_GRAPH)
		rc = graph(&w, g, height);
	else
		chart(&w, g, lane_y);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
	free(lane_y);
	return rc ? rc : ferror(out) ? -EIO : 0;
}
