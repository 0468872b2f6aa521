/* SPDX-License-Identifier: MIT */
/*
 * A self-contained interactive SVG of the decoded calls, for a browser
 * and no Perfetto UI: a flame graph (stacks merged, widths by inclusive
 * time) or a flame chart (each thread's calls in time order). Built from
 * the decoder's events through its sink (decode/decode.h), so decode's
 * narrowing options apply to it.
 *
 *   struct mt_svg *g = mt_svg_new(MT_SVG_GRAPH);
 *   struct mt_decode_sink s = mt_svg_sink(g, mt_decode_label, d);
 *   mt_decode_run(d, &s);  mt_svg_write(g, file, title);  mt_svg_free(g);
 *
 * The file has no external references: its script (inline) draws the
 * labels, zooms on a click (click the background or "Reset zoom" to go
 * back), searches on "Search" (a regular expression; matches turn
 * magenta, their share is shown), and shows a frame's name, duration and
 * share on hover, besides each frame's <title> tooltip. A URL fragment
 * "#search=RE" or "#zoom=ID" starts searched or zoomed.
 *
 * The chart keeps every call in memory until written (24 bytes each) and
 * writes those at least a quarter of a pixel wide; narrow the decode
 * (--time, --min-duration) for very large snapshots. The graph keeps one
 * node per distinct stack.
 */
#ifndef MTRACE_SVG_H
#define MTRACE_SVG_H

#include "decode/decode.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum mt_svg_kind { MT_SVG_GRAPH, MT_SVG_CHART };

struct mt_svg;

struct mt_svg *mt_svg_new(enum mt_svg_kind kind);
void mt_svg_free(struct mt_svg *g);
/* A sink filling G; NAME gives a function id's name (mt_decode_label()
 * with the decoder). */
struct mt_decode_sink mt_svg_sink(struct mt_svg *g, const char *(*name)(void *ctx, uint32_t id),
				  void *ctx);
/* Writes the SVG; TITLE heads it. Returns 0, -ENOMEM (also when memory ran
 * out during the run) or -EIO (a write error). */
int mt_svg_write(struct mt_svg *g, FILE *out, const char *title);

#endif
