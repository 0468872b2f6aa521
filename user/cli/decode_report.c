// SPDX-License-Identifier: MIT
/* The end-of-decode account of missing code (decode_report.h). */
#include "decode_report.h"

#include "cli_msg.h"
#include "decode/blkdec.h"
#include "util/mt_array.h"
#include "util/regfile.h"
#include "util/reporter.h"
#include "util/util.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct report_thread *find_thread(struct decode_report *rep, uint32_t pid, uint32_t tid)
{
	int added;
	struct report_thread *t = mt_index_map_slot(&rep->thread_ids, mt_index_map_task(pid, tid),
						    &rep->threads, &rep->nthreads, &rep->cap,
						    sizeof(*t), &added);

	if (!t)
		rep->oom = 1;
	else if (added)
		*t = (struct report_thread){ .pid = pid, .tid = tid };
	return t;
}

static int on_thread(void *ctx, uint32_t pid, uint32_t tid)
{
	struct decode_report *rep = ctx;

	find_thread(rep, pid, tid);
	return rep->inner.thread ? rep->inner.thread(rep->inner.ctx, pid, tid) : 0;
}

static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct decode_report *rep = ctx;

	if (!rep->have_first) {
		rep->first_ns = ns;
		rep->have_first = 1;
	}
	if (ev->kind == MT_EV_GAP && ev->arg == MT_GAP_NOMAP) {
		struct report_thread *t = find_thread(rep, pid, tid);

		if (t) {
			if (!t->nomap_gaps++)
				t->first_ns = ns;
			t->last_ns = ns;
		}
	}
	return rep->inner.event(rep->inner.ctx, pid, tid, ns, ev);
}

static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t)
{
	struct decode_report *rep = ctx;

	return rep->inner.trigger ? rep->inner.trigger(rep->inner.ctx, ns, t) : 0;
}

struct mt_decode_sink decode_report_sink(struct decode_report *rep,
					 const struct mt_decode_sink *inner)
{
	rep->inner = *inner;
	/* It only counts: the order is the inner sink's business. */
	return (struct mt_decode_sink){ on_thread, on_event, on_trigger, rep, inner->late_inferred };
}

void decode_report_missing(void *ctx, enum mt_severity sev, const char *msg)
{
	struct decode_report *rep = ctx;
	char *copy;

	(void)sev;
	for (size_t i = 0; i < rep->nmissing; i++)
		if (!strcmp(rep->missing[i], msg))
			return;
	copy = strdup(msg);
	if (!copy || MT_ARRAY_RESERVE(rep->missing, rep->missing_cap, rep->nmissing, 1)) {
		free(copy);
		rep->oom = 1;
		return;
	}
	rep->missing[rep->nmissing++] = copy;
}

static int decoded(const struct decode_report *rep, uint32_t tid)
{
	for (size_t i = 0; i < rep->nthreads; i++)
		if (rep->threads[i].tid == tid)
			return 1;
	return 0;
}

static double ms_from(const struct decode_report *rep, uint64_t ns)
{
	return ns >= rep->first_ns ? (double)(ns - rep->first_ns) / 1e6 : 0;
}

static size_t count_gap_threads(const struct decode_report *rep)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nthreads; i++)
		n += rep->threads[i].nomap_gaps != 0;
	return n;
}

/* The threads that lost code to gaps; returns their number. */
static size_t print_gap_threads(const struct decode_report *rep)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nthreads; i++) {
		const struct report_thread *t = &rep->threads[i];

		if (!t->nomap_gaps)
			continue;
		if (n++ < MT_REPORT_LIST)
			cli_err("  thread %u (pid %u): %" PRIu64 " stretch%s of code without a binary, "
				"between %.3f and %.3f ms after the first event",
				t->tid, t->pid, t->nomap_gaps, mt_plural(t->nomap_gaps, "", "es"),
				ms_from(rep, t->first_ns), ms_from(rep, t->last_ns));
	}
	if (n > MT_REPORT_LIST)
		cli_err("  ... and %zu more thread%s", n - MT_REPORT_LIST,
			mt_plural(n - MT_REPORT_LIST, "", "s"));
	return n;
}

/* The bundle's threads that got no event at all; returns their number. */
static size_t print_silent_threads(const struct decode_report *rep, struct mt_bundle_reader *r)
{
	const struct mt_bundle_thread *th;
	size_t n = mt_bundle_threads(r, &th), silent = 0;
	char list[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (decoded(rep, th[i].tid))
			continue;
		if (silent++ < MT_REPORT_LIST && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u (%s)",
						silent > 1 ? ", " : "", th[i].tid,
						th[i].comm ? th[i].comm : "?");
	}
	if (silent)
		cli_err("  %zu of the bundle's %zu thread%s %s no decoded code: %s%s", silent, n,
			mt_plural(n, "", "s"), mt_plural(silent, "has", "have"), list,
			silent > MT_REPORT_LIST ? ", ..." : "");
	return silent;
}

/* Why a decode gave no instructions, in the order a user can act on it. */
static void explain_nothing(const struct decode_report *rep, struct mt_bundle_reader *r,
			    const struct mt_decode_stats *s)
{
	/* Only the streams decoded were scanned for PSBs. */
	size_t npt = (size_t)s->cpus_decoded, psb = (size_t)s->cpus_with_psb;

	if (!s->pt_bytes)
		cli_err("no instructions decoded: the snapshot holds no PT data (nothing ran on a traced CPU while armed)");
	else if (!psb)
		cli_err("no instructions decoded: none of the %" PRIu64 " bytes of PT holds a sync point (PSB), where decoding must start; record with a bigger --buffer-size or a lower --psb-freq",
			s->pt_bytes);
	else if (!mt_bundle_maps(r, NULL))
		cli_err("no instructions decoded: the bundle has no memory maps, so there is no code to follow the trace through");
	else if (rep->nmissing)
		cli_err("no instructions decoded: the traced code is in the mappings without a binary listed above");
	else
		cli_err("no instructions decoded: the PT of %zu CPU%s (%zu with a sync point) holds no executed code of a traced thread: tracing was filtered out or disabled the whole time",
			npt, mt_plural(npt, "", "s"), psb);
}

/* CPUs that came online while armed had no ring (MT_BUNDLE_PT_NO_RING):
 * what ran there from then on is not in the trace. */
static void print_cpus_without_ring(const struct decode_report *rep, struct mt_bundle_reader *r,
				    const struct mt_decode *d)
{
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		struct mt_bundle_pt_desc pt;
		uint64_t ns;

		if (mt_bundle_pt_desc(r, i, &pt) || !(pt.flags & MT_BUNDLE_PT_NO_RING))
			continue;
		ns = mt_decode_ns(d, pt.stop_tsc);
		if (rep->have_first && ns >= rep->first_ns)
			cli_err("missing CPU: CPU %u came online while armed and had no ring: code that ran there from %.3f ms on is not in the trace",
				pt.cpu, ms_from(rep, ns));
		else
			cli_err("missing CPU: CPU %u came online while armed and had no ring: code that ran there from TSC %" PRIu64 " on is not in the trace",
				pt.cpu, pt.stop_tsc);
	}
}

/*
 * Where a perf.data's binaries may be: the tree mtrace-user export writes
 * beside it (NAME.symfs) when there is one and it was not the --symfs
 * GIVEN, else a --symfs DIR of the user's.
 */
static void perf_data_symfs(const char *name, const char *given, char *out, size_t n)
{
	struct stat st;

	snprintf(out, n, "%s.symfs", name);
	if (stat(out, &st) || !S_ISDIR(st.st_mode) || (given && mt_same_file(given, out)))
		snprintf(out, n, "DIR");
	else
		snprintf(out + strlen(out), n - strlen(out), " (what mtrace-user export wrote)");
}

int decode_report_print(const struct decode_report *rep, struct mt_bundle_reader *r,
			const struct mt_decode *d, const struct mt_decode_stats *s,
			const struct decode_request *q, const char *name)
{
	char symfs[PATH_MAX + 64] = "DIR";
	size_t gaps = 0, outside;

	print_cpus_without_ring(rep, r, d);
	if (rep->nmissing) {
		cli_err("missing code: %zu mapping%s had no usable binary:", rep->nmissing,
			mt_plural(rep->nmissing, "", "s"));
		for (size_t i = 0; i < rep->nmissing && i < MT_REPORT_LIST; i++)
			cli_err("  %s", rep->missing[i]);
		if (rep->nmissing > MT_REPORT_LIST)
			cli_err("  ... and %zu more", rep->nmissing - MT_REPORT_LIST);
		gaps = print_gap_threads(rep);
		/* Only evidence counts: a thread without events may just not have run. */
		if (gaps) {
			print_silent_threads(rep, r);
			cli_err("  the instructions executed there are unknown: without the code, PT cannot be followed through it");
		} else if (s->insns) {
			cli_err("  the trace never entered them: nothing was lost");
		}
	} else if ((outside = count_gap_threads(rep))) {
		/* Code outside every mapping is no binary that could be found: no exit 3. */
		cli_err("%zu thread%s entered code outside every mapping (JIT code, or a uprobe's single-step slot): those stretches are gaps in the trace",
			outside, mt_plural(outside, "", "s"));
	}
	if (!s->insns)
		explain_nothing(rep, r, s);
	if (!gaps)
		return 0;
	if (q->allow_missing) {
		cli_err("accepted with --allow-missing: the trace lacks the code listed above");
		return 0;
	}
	/* A perf.data was not recorded by mtrace: --portable is no remedy. */
	if (q->perf_data)
		perf_data_symfs(name, q->symfs, symfs, sizeof(symfs));
	cli_err("traced code could not be decoded (exit status %d): find the files with --symfs %s or --path-map OLD=NEW%s, or accept with --allow-missing",
		CLI_EXIT_MISSING, symfs, q->perf_data ? "" : ", record with --portable");
	return CLI_EXIT_MISSING;
}

void decode_report_free(struct decode_report *rep)
{
	for (size_t i = 0; i < rep->nmissing; i++)
		free(rep->missing[i]);
	free(rep->missing);
	free(rep->threads);
	mt_index_map_free(&rep->thread_ids);
	memset(rep, 0, sizeof(*rep));
}
