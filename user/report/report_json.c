// SPDX-License-Identifier: MIT
/* The report as JSON for scripts: every figure of the text, in ns; see
 * report.h. */
#include "report/report.h"
#include "util/text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string of @s, which came from binaries and bundles: invalid UTF-8
 * as U+FFFD (JSON is Unicode), control characters (C0, DEL, C1) escaped. */
static void str(FILE *f, const char *s)
{
	fputc('"', f);
	while (*s) {
		size_t k = mt_utf8_seq_len(s);
		uint32_t cp = k ? mt_utf8_code_point(s, k) : 0;

		if (!k)
			fputs("\\ufffd", f);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (mt_is_control(cp))
			fprintf(f, "\\u%04x", (unsigned int)cp);
		else
			fwrite(s, 1, k, f);
		s += k ? k : 1;
	}
	fputc('"', f);
}

static void stack(FILE *f, const struct mt_report *rep, const size_t *s, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		str(f, s[i] == SIZE_MAX ? "[untraced]" : rep->fns[s[i]].name);
	}
	fputc(']', f);
}

static void thread(FILE *f, const struct mt_report *rep, const struct mt_rep_thread *t)
{
	uint64_t span = t->last - t->first, off = t->syscall + t->untraced + t->desched;
	int first = 1;

	fprintf(f, "{\"tid\":%u,\"pid\":%u,\"name\":", t->tid, t->pid);
	str(f, t->name);
	fprintf(f, ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"running_ns\":%" PRIu64
		   ",\"syscall_ns\":%" PRIu64 ",\"descheduled_ns\":%" PRIu64
		   ",\"untraced_ns\":%" PRIu64 ",\"no_data_ns\":%" PRIu64 ",\"functions\":{",
		t->first, t->last, span > off ? span - off : 0, t->syscall, t->desched, t->untraced,
		(rep->last - rep->first) - span);
	for (size_t i = 0; i < t->nfn; i++) {
		if (!t->self[i] && !t->incl[i])
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		str(f, rep->fns[i].name);
		fprintf(f, ":{\"self_ns\":%" PRIu64 ",\"inclusive_ns\":%" PRIu64 "}", t->self[i],
			t->incl[i]);
	}
	fputs("}}", f);
}

static void one(FILE *f, const struct mt_report *rep)
{
	const struct mt_decode_stats *s = &rep->stats;

	fputs("{\"bundle\":", f);
	str(f, rep->label ? rep->label : "");
	fprintf(f, ",\"window\":{\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 "}", rep->first,
		rep->last);
	fputs(",\"trigger\":", f);
	if (rep->have_trigger) {
		fputs("{\"what\":", f);
		str(f, rep->trigger_what);
		fprintf(f, ",\"ns\":%" PRIu64 ",\"tid\":%u,\"symbol\":", rep->trigger_ns,
			rep->trigger_tid);
		str(f, rep->trigger_symbol);
		fprintf(f, ",\"latency_ns\":%" PRId64 ",\"stack\":", rep->trigger_latency);
		stack(f, rep, rep->trigger_stack, rep->trigger_depth);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs(",\"functions\":[", f);
	for (size_t i = 0; i < rep->nfns; i++) {
		const struct mt_rep_fn *fn = &rep->fns[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		str(f, fn->name);
		fprintf(f, ",\"calls\":%zu,\"partial\":%" PRIu64 ",\"total_ns\":%" PRIu64
			   ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			   ",\"self_ns\":%" PRIu64 ",\"inclusive_ns\":%" PRIu64,
			fn->ndurs, fn->partial, mt_report_total(fn), mt_report_pct(fn, 50),
			mt_report_pct(fn, 99), fn->ndurs ? fn->max : 0, fn->self, fn->incl);
		if (fn->ndurs) {
			fprintf(f, ",\"slowest\":{\"tid\":%u,\"stack\":", fn->max_tid);
			stack(f, rep, fn->max_stack, fn->max_depth);
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputs("],\"threads\":[", f);
	for (size_t i = 0; i < rep->nthreads; i++) {
		if (i)
			fputc(',', f);
		thread(f, rep, &rep->threads[i]);
	}
	fprintf(f, "],\"health\":{\"decode_errors\":%" PRIu64 ",\"overflows\":%" PRIu64
		   ",\"missing_maps\":%" PRIu64 ",\"missing_code_gaps\":%" PRIu64
		   ",\"clamped_time_steps\":%" PRIu64 ",\"gaps\":[",
		s->errors, s->overflows, s->missing_maps, rep->nomap_gaps, s->backsteps);
	for (size_t i = 0; i < rep->ngaps; i++) {
		fprintf(f, "%s{\"tid\":%u,\"ns\":%" PRIu64 ",\"lost_ns\":%" PRIu64 ",\"reason\":",
			i ? "," : "", rep->gaps[i].tid, rep->gaps[i].ns, rep->gaps[i].lost);
		str(f, rep->gaps[i].reason);
		fputc('}', f);
	}
	fputs("]}}", f);
}

void mt_report_json(FILE *out, struct mt_report *const *reps, size_t n)
{
	struct mt_rep_compare c;

	fputs("{\"snapshots\":[", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		one(out, reps[i]);
	}
	fputs("],\"compare\":", out);
	if (n > 1 && !mt_report_compare(reps, n, &c)) {
		fputs("{\"symbol\":", out);
		str(out, c.symbol);
		fprintf(out, ",\"snapshots\":%zu,\"min_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64
			     ",\"max_ns\":%" PRIu64 ",\"slowest\":%zu,\"grew\":[",
			c.n, c.min, c.p50, c.max, c.slowest);
		for (size_t i = 0; i < c.ngrew; i++) {
			fputs(i ? ",{\"name\":" : "{\"name\":", out);
			str(out, reps[c.slowest]->fns[c.grew[i].fn].name);
			fprintf(out, ",\"delta_ns\":%" PRId64 "}", c.grew[i].delta);
		}
		fputs("]}", out);
	} else {
		fputs("null", out);
	}
	fputs("}\n", out);
}
