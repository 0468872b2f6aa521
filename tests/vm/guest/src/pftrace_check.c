// SPDX-License-Identifier: MIT
/*
 * Checks a Perfetto trace written by mtrace-user in the VM: it must obey
 * trace_processor's import rules, replayed by the unit tests' reader
 * (tests/perfetto/pf_reader.h), and hold what the test asks for. Prints
 * the first mismatch and exits 1; prints what it found.
 *   pftrace_check TRACE [--process NAME] [--thread NAME]
 *                 [--gaps (a thread of --process has "trace gap" events)]
 *                 [--trigger REASON (the trigger event and its reason)]
 *                 [--trigger-symbol SYMBOL]
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_reader.h"

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("pftrace_check: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const struct pfr_track *named_track(const struct pfr_trace *t, int kind, const char *name)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if ((int)t->tracks[i].kind == kind && t->tracks[i].name &&
		    !strcmp(t->tracks[i].name, name))
			return &t->tracks[i];
	return NULL;
}

/* Gap events on the thread tracks of process PID. */
static size_t count_gaps(const struct pfr_trace *t, int32_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nevents; i++) {
		const struct pfr_event *e = &t->events[i];
		const struct pfr_track *k = pfr_track(t, e->track);

		if (e->name && !strcmp(e->name, "trace gap") && k &&
		    k->kind == PFR_TRACK_THREAD && k->pid == pid)
			n++;
	}
	return n;
}

static void check_trigger(const struct pfr_trace *t, const char *reason, const char *symbol)
{
	for (size_t i = 0; i < t->nevents; i++) {
		const struct pfr_event *e = &t->events[i];
		const struct pfr_track *k = pfr_track(t, e->track);
		const struct pfr_annot *r = pfr_annot(e, "reason"), *s = pfr_annot(e, "symbol");

		if (e->type != 3 || !e->name || strcmp(e->name, "trigger") || !k || !k->name ||
		    strcmp(k->name, "mtrace trigger"))
			continue;
		if (!r || !r->s || strcmp(r->s, reason))
			fail("trigger reason '%s', expected '%s'", r && r->s ? r->s : "", reason);
		if (symbol && (!s || !s->s || strcmp(s->s, symbol)))
			fail("trigger symbol '%s', expected '%s'", s && s->s ? s->s : "", symbol);
		printf("trigger: reason %s symbol %s at %llu\n", reason, s && s->s ? s->s : "-",
		       (unsigned long long)e->ts);
		return;
	}
	fail("no trigger event on an \"mtrace trigger\" track");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "thread", required_argument, NULL, 't' },
		{ "gaps", no_argument, NULL, 'g' },
		{ "trigger", required_argument, NULL, 'r' },
		{ "trigger-symbol", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *process = NULL, *thread = NULL, *reason = NULL, *symbol = NULL;
	const struct pfr_track *proc = NULL;
	struct pfr_trace t;
	int c, gaps = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': process = optarg; break;
		case 't': thread = optarg; break;
		case 'g': gaps = 1; break;
		case 'r': reason = optarg; break;
		case 's': symbol = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || (gaps && !process))
		fail("usage: pftrace_check TRACE [--process NAME [--gaps]] [--thread NAME] [--trigger REASON [--trigger-symbol SYMBOL]]");
	if (pfr_read(argv[optind], &t))
		fail("%s cannot be read", argv[optind]);
	for (size_t i = 0; i < t.nerrors && i < 10; i++)
		fprintf(stderr, "pftrace_check: %s: %s\n", argv[optind], t.errors[i]);
	if (t.nerrors)
		fail("%zu import-rule errors in %s", t.nerrors, argv[optind]);
	printf("%s: %zu packets, %zu events, %zu tracks, no import-rule error\n", argv[optind],
	       t.packets, t.nevents, t.ntracks);
	if (process && !(proc = named_track(&t, PFR_TRACK_PROCESS, process))) {
		/* The processes the trace has instead tell what went wrong. */
		for (size_t i = 0; i < t.ntracks; i++)
			if (t.tracks[i].kind == PFR_TRACK_PROCESS)
				fprintf(stderr, "pftrace_check: process track %s, pid %d\n",
					t.tracks[i].name ? t.tracks[i].name : "(unnamed)",
					(int)t.tracks[i].pid);
		fail("no process track named %s", process);
	}
	if (thread && !named_track(&t, PFR_TRACK_THREAD, thread))
		fail("no thread track named %s", thread);
	if (gaps) {
		size_t n = count_gaps(&t, proc->pid);

		if (!n)
			fail("no trace gap on a thread of %s", process);
		printf("%zu trace gaps in process %s\n", n, process);
	}
	if (reason)
		check_trigger(&t, reason, symbol);
	pfr_free(&t);
	return 0;
}
