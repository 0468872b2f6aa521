// SPDX-License-Identifier: MIT
/* Plain-text dump of decoded timelines; see textout.h. */
#include "out_text/textout.h"

#include "decode/blkdec.h"
#include "util/text.h"

#include <inttypes.h>

static int text_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_textout *t = ctx;
	struct mt_func f;

	(void)pid;
	switch (ev->kind) {
	case MT_EV_BEGIN:
	case MT_EV_END:
		f = mt_decode_func(t->d, ev->arg);
		/* Names from binaries may hold anything: no control character
		 * reaches a terminal, and no newline splits an event. */
		fprintf(t->out, "%" PRIu64 " %u %c ", ns, tid, ev->kind == MT_EV_BEGIN ? 'B' : 'E');
		mt_fputs_visible(mt_func_label(&f, ev->arg), t->out);
		fprintf(t->out, "%s%s%s%s%s\n",
			ev->flags & MT_EV_INLINE && ev->kind == MT_EV_BEGIN ? " inline" : "",
			ev->flags & MT_EV_INFERRED ? " inferred" : "",
			ev->flags & MT_EV_ASYNC ? " async" : "",
			ev->flags & MT_EV_TAIL && ev->kind == MT_EV_BEGIN ? " tail" : "",
			ev->flags & MT_EV_TRUNCATED ? " truncated" : "");
		break;
	case MT_EV_GAP:
		fprintf(t->out, "%" PRIu64 " %u GAP %s\n", ns, tid, mt_gap_reason_name(ev->arg));
		break;
	case MT_EV_INSTANT:
		fprintf(t->out, "%" PRIu64 " %u I %u\n", ns, tid, ev->arg);
		break;
	}
	return ferror(t->out) ? -1 : 0;
}

static int text_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *trig)
{
	struct mt_textout *t = ctx;

	fprintf(t->out, "%" PRIu64 " trigger %u 0x%" PRIx64 " ", ns, trig->d.tid, trig->d.ip);
	mt_fputs_visible(mt_decode_symbol_at(t->d, trig->d.pid, trig->d.ip), t->out);
	fputc('\n', t->out);
	return ferror(t->out) ? -1 : 0;
}

struct mt_decode_sink mt_textout_sink(struct mt_textout *t)
{
	return (struct mt_decode_sink){ NULL, text_event, text_trigger, t, 0 };
}
