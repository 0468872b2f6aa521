// SPDX-License-Identifier: MIT
/*
 * e2e_check TRACE --binary PATH=BIAS --thread TID:NAME=TRUTH...
 *           --trigger TID=SYMBOL [--summary]
 *
 * Checks the Perfetto trace of the end-to-end run against the PT
 * generator's ground truth, reading the file with the tests' own reader
 * (tests/perfetto/pf_reader.h), which replays trace_processor's import rules:
 *
 *  - no import-rule error;
 *  - for each --thread, its track is named NAME (worker-a exits before the
 *    freeze: the capture must have remembered its name), and its calls and returns in the trace are
 *    exactly the truth's from the first instruction the ring still held
 *    (the truth's "visible" line): same functions at the same run-time
 *    addresses, same order, hence the same nesting; frames open before the
 *    ring's oldest data are marked inferred and not counted, frames still
 *    open at the end are marked truncated; no trace gap;
 *  - every call slice is named as PATH's own symbol table (read here with
 *    libelf, not through mtrace's symbolizer) names the function at the
 *    slice's address minus BIAS;
 *  - the trigger instant names the thread TID and SYMBOL, and in file order
 *    it comes while SYMBOL is the thread's innermost open frame, after the
 *    thread's last call.
 *
 * --summary prints what a user looks at first: the call path into the
 * trigger and the slowest calls before it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "pf_reader.h"

#define MAX_THREADS 8
#define MAX_DEPTH 512
#define SLOWEST 5
#define UNTRACED "[untraced]"

struct step {
	char kind;		/* 'c' call, 'r' return */
	uint64_t to;		/* call: the callee's address */
};

struct steps {
	struct step *v;
	size_t n, cap;
};

static int failures;

/* The binary's functions, for checking slice names. */
static struct func {
	uint64_t addr;
	char *name;
} *funcs;
static size_t nfuncs;
static uint64_t bias;

static int load_funcs(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;

	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		funcs = calloc(sh.sh_size / sh.sh_entsize + 1, sizeof(*funcs));
		for (size_t i = 0; funcs && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_value)
				funcs[nfuncs++] = (struct func){
					sym.st_value, strdup(elf_strptr(elf, sh.sh_link, sym.st_name))
				};
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return nfuncs ? 0 : -1;
}

static const char *func_name(uint64_t addr)
{
	for (size_t i = 0; i < nfuncs; i++)
		if (funcs[i].addr + bias == addr)
			return funcs[i].name;
	return NULL;
}

static void __attribute__((format(printf, 2, 3))) fail(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL e2e/%s: ", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static void add_step(struct steps *s, char kind, uint64_t to)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("e2e_check");
			exit(2);
		}
	}
	s->v[s->n++] = (struct step){ kind, to };
}

/* The truth's calls and returns from its visible instruction on. */
static int read_truth(const char *path, struct steps *out)
{
	FILE *f = fopen(path, "r");
	char line[256], kind[16];
	uint64_t index, tsc, from, to, visible = UINT64_MAX;
	unsigned tid, cpu;
	struct steps all = { 0 };
	uint64_t *idx = NULL;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "visible %u %u %" SCNu64, &cpu, &tid, &index) == 3) {
			visible = index;
		} else if (sscanf(line, "%15s %u %" SCNu64 " %" SCNu64 " %" SCNx64 " %" SCNx64,
				  kind, &tid, &index, &tsc, &from, &to) == 6 &&
			   (!strcmp(kind, "call") || !strcmp(kind, "ret"))) {
			add_step(&all, kind[0] == 'c' ? 'c' : 'r', to);
			idx = realloc(idx, all.cap * sizeof(*idx));
			if (!idx) {
				perror("e2e_check");
				exit(2);
			}
			idx[all.n - 1] = index;
		}
	}
	fclose(f);
	if (visible == UINT64_MAX) {
		fprintf(stderr, "e2e_check: %s has no visible line\n", path);
		return -1;
	}
	for (size_t i = 0; i < all.n; i++)
		if (idx[i] >= visible)
			add_step(out, all.v[i].kind, all.v[i].to);
	free(all.v);
	free(idx);
	return 0;
}

/* The run-time address in a slice's "symbol (binary 0xADDR)" location. */
static uint64_t slice_addr(const struct pfr_event *e)
{
	const char *p = e->src_function ? strrchr(e->src_function, ' ') : NULL;

	return p ? strtoull(p + 1, NULL, 16) : 0;
}

static bool flag(const struct pfr_event *e, const char *name)
{
	const struct pfr_annot *a = pfr_annot(e, name);

	return a && a->kind == PFR_BOOL && a->u;
}

/* Time the thread spent where user-only PT does not see (the kernel, after
 * an interrupt or the trigger's int3): a slice, but not a call. */
static bool untraced(const struct pfr_event *e)
{
	return e->name && !strcmp(e->name, UNTRACED);
}

struct thread_view {
	struct steps steps;	/* calls and returns */
	size_t inferred, truncated, gaps, misnamed;
	char first_misnamed[160];
};

/* The thread's calls and returns as the trace shows them. */
static void read_thread(const struct pfr_trace *t, uint64_t track, struct thread_view *v)
{
	static bool counted[MAX_DEPTH];
	size_t depth = 0;

	for (size_t i = 0; i < t->nevents; i++) {
		const struct pfr_event *e = &t->events[i];
		bool is_call = e->type == 1 && !untraced(e) && !flag(e, "inferred_start");
		const char *want;

		if (e->track != track)
			continue;
		v->gaps += e->type == 3;
		v->inferred += e->type == 1 && flag(e, "inferred_start");
		/* An inferred frame's return is in the truth, its call is not. */
		if (e->type == 1 && depth < MAX_DEPTH)
			counted[depth++] = !untraced(e);
		if (is_call) {
			add_step(&v->steps, 'c', slice_addr(e));
			want = func_name(slice_addr(e));
			if ((!want || !e->name || strcmp(want, e->name)) && !v->misnamed++)
				snprintf(v->first_misnamed, sizeof(v->first_misnamed),
					 "slice %s at %#" PRIx64 " is %s in the binary",
					 e->name ? e->name : "?", slice_addr(e), want ? want : "no function");
		}
		if (e->type != 2 || !depth)
			continue;
		if (flag(e, "truncated"))
			v->truncated++;
		else if (counted[depth - 1])
			add_step(&v->steps, 'r', 0);
		depth--;
	}
}

static void show(const char *what, const struct steps *s, size_t at)
{
	printf("#   %s:", what);
	for (size_t i = at > 5 ? at - 5 : 0; i < s->n && i < at + 6; i++)
		printf(" %s%c%" PRIx64, i == at ? ">" : "", s->v[i].kind, s->v[i].to);
	printf("\n");
}

static void check_thread(const struct pfr_trace *t, long tid, const char *name,
			 const char *truth_path)
{
	const struct pfr_track *tr = pfr_thread_track(t, tid);
	struct steps truth = { 0 };
	struct thread_view v = { 0 };
	const struct steps *got = &v.steps;
	size_t i;
	char what[64];

	snprintf(what, sizeof(what), "thread-%ld", tid);
	if (!tr) {
		fail(what, "no track for thread %ld in the trace", tid);
		return;
	}
	if (!tr->name || strcmp(tr->name, name)) {
		fail(what, "the track is named '%s', not '%s'", tr->name ? tr->name : "", name);
		return;
	}
	if (read_truth(truth_path, &truth)) {
		fail(what, "cannot read the ground truth %s", truth_path);
		return;
	}
	read_thread(t, tr->uuid, &v);
	for (i = 0; i < truth.n && i < got->n; i++)
		if (truth.v[i].kind != got->v[i].kind ||
		    (truth.v[i].kind == 'c' && truth.v[i].to != got->v[i].to))
			break;
	if (i < truth.n || i < got->n) {
		fail(what, "%s: step %zu of %zu differs from the truth's (%zu steps)",
		     tr->name ? tr->name : "?", i, got->n, truth.n);
		show("truth", &truth, i);
		show("trace", got, i);
	} else if (v.gaps) {
		fail(what, "%zu trace gaps or other instants on the thread", v.gaps);
	} else if (v.misnamed) {
		fail(what, "%zu calls misnamed, first: %s", v.misnamed, v.first_misnamed);
	} else {
		printf("PASS e2e/%s: %s: %zu calls and returns equal the truth's, every call "
		       "named as the symbol table names it; %zu inferred frames, %zu truncated\n",
		       what, tr->name ? tr->name : "?", got->n, v.inferred, v.truncated);
	}
	free(truth.v);
	free(v.steps.v);
}

/* Replays a track's slices up to event @at in file order: returns its open
 * frames in @stack; @ended, if set, sees every slice that ended before. */
static size_t open_frames(const struct pfr_trace *t, uint64_t track, size_t at,
			  const struct pfr_event **stack,
			  void (*ended)(const struct pfr_event *b, const struct pfr_event *e))
{
	size_t depth = 0;

	for (size_t i = 0; i < at; i++) {
		const struct pfr_event *e = &t->events[i];

		if (e->track != track)
			continue;
		if (e->type == 1 && depth < MAX_DEPTH)
			stack[depth++] = e;
		else if (e->type == 2 && depth && ended)
			ended(stack[--depth], e);
		else if (e->type == 2 && depth)
			depth--;
	}
	return depth;
}

static const struct pfr_event *find_trigger(const struct pfr_trace *t, size_t *at)
{
	for (size_t i = 0; i < t->nevents; i++) {
		if (t->events[i].type == 3 && t->events[i].name &&
		    !strcmp(t->events[i].name, "trigger")) {
			*at = i;
			return &t->events[i];
		}
	}
	return NULL;
}

static void check_trigger(const struct pfr_trace *t, long tid, const char *symbol)
{
	const struct pfr_track *tr = pfr_thread_track(t, tid);
	static const struct pfr_event *stack[MAX_DEPTH];
	const struct pfr_annot *a, *s;
	const struct pfr_event *trig;
	size_t at, depth;
	const char *top;

	trig = find_trigger(t, &at);
	if (!trig || !tr) {
		fail("trigger", "no trigger instant or no track for thread %ld", tid);
		return;
	}
	a = pfr_annot(trig, "tid");
	s = pfr_annot(trig, "symbol");
	if (!a || (long)a->u != tid || !s || !s->s || strcmp(s->s, symbol)) {
		fail("trigger", "the trigger names tid %ld symbol %s, not %ld %s",
		     a ? (long)a->u : -1L, s && s->s ? s->s : "?", tid, symbol);
		return;
	}
	depth = open_frames(t, tr->uuid, at, stack, NULL);
	while (depth && untraced(stack[depth - 1]))
		depth--;
	top = depth ? stack[depth - 1]->name : NULL;
	if (!top || strcmp(top, symbol)) {
		fail("trigger", "at the trigger the thread's innermost frame is %s, not %s",
		     top ? top : "none", symbol);
		return;
	}
	for (size_t i = at + 1; i < t->nevents; i++) {
		if (t->events[i].track == tr->uuid && t->events[i].type == 1) {
			fail("trigger", "the thread has calls after the trigger");
			return;
		}
	}
	printf("PASS e2e/trigger: thread %ld inside %s at depth %zu, after its last call\n", tid,
	       symbol, depth);
}

static struct slow {
	const struct pfr_event *b;
	uint64_t dur;
} slowest[SLOWEST];

static const char *track_name(const struct pfr_trace *t, uint64_t uuid)
{
	const struct pfr_track *tr = pfr_track(t, uuid);

	return tr && tr->name ? tr->name : "?";
}

/* Keeps the SLOWEST slowest completed calls, slowest first. */
static void rank(const struct pfr_event *b, const struct pfr_event *e)
{
	uint64_t dur = e->ts - b->ts;
	size_t i = SLOWEST;

	if (flag(e, "truncated") || untraced(b))
		return;
	while (i > 0 && (!slowest[i - 1].b || slowest[i - 1].dur < dur))
		i--;
	if (i == SLOWEST)
		return;
	memmove(slowest + i + 1, slowest + i, (SLOWEST - 1 - i) * sizeof(*slowest));
	slowest[i] = (struct slow){ b, dur };
}

static void summary(const struct pfr_trace *t, long tid)
{
	static const struct pfr_event *stack[MAX_DEPTH];
	const struct pfr_track *tr = pfr_thread_track(t, tid);
	const struct pfr_annot *reason;
	const struct pfr_event *trig;
	size_t at, depth;

	trig = find_trigger(t, &at);
	if (!trig || !tr)
		return;
	reason = pfr_annot(trig, "reason");
	printf("\nTrigger %s on thread %s (tid %ld).\n", reason && reason->s ? reason->s : "?",
	       tr->name ? tr->name : "?", tid);
	printf("Call path into the trigger:\n");
	depth = open_frames(t, tr->uuid, at, stack, NULL);
	for (size_t i = 0; i < depth; i++)
		printf("  %*s%s\n", (int)(2 * i), "", stack[i]->name);
	for (size_t k = 0; k < t->ntracks; k++)
		open_frames(t, t->tracks[k].uuid, at, stack, rank);
	printf("Slowest calls before it:\n");
	for (size_t i = 0; i < SLOWEST && slowest[i].b; i++)
		printf("  %10.3f us  %-16s %s\n", slowest[i].dur / 1000.0, slowest[i].b->name,
		       track_name(t, slowest[i].b->track));
}

int main(int argc, char **argv)
{
	long tids[MAX_THREADS], trig_tid = 0;
	const char *truths[MAX_THREADS], *names[MAX_THREADS], *trig_sym = NULL;
	bool want_summary = false;
	struct pfr_trace t;
	int n = 0;

	for (int i = 2; i < argc; i++) {
		char *eq = i + 1 < argc ? strchr(argv[i + 1], '=') : NULL;

		if (!strcmp(argv[i], "--summary")) {
			want_summary = true;
		} else if (eq && !strcmp(argv[i], "--thread") && n < MAX_THREADS &&
			   strchr(argv[i + 1], ':')) {
			*eq = '\0';
			tids[n] = strtol(argv[++i], NULL, 10);
			names[n] = strchr(argv[i], ':') + 1;
			truths[n++] = eq + 1;
		} else if (eq && !strcmp(argv[i], "--binary")) {
			*eq = '\0';
			bias = strtoull(eq + 1, NULL, 0);
			if (load_funcs(argv[++i])) {
				fprintf(stderr, "e2e_check: no function symbols in %s\n", argv[i]);
				return 2;
			}
		} else if (eq && !strcmp(argv[i], "--trigger")) {
			trig_tid = strtol(argv[++i], NULL, 10);
			trig_sym = eq + 1;
		} else {
			argc = 0;
		}
	}
	if (argc < 2 || !n || !trig_sym || !nfuncs) {
		fprintf(stderr, "usage: e2e_check TRACE --binary PATH=BIAS --thread TID:NAME=TRUTH... "
			"--trigger TID=SYMBOL [--summary]\n");
		return 2;
	}
	if (pfr_read(argv[1], &t)) {
		fail("read", "cannot read %s", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < t.nerrors; i++)
		fail("import-rules", "%s", t.errors[i]);
	if (!t.nerrors)
		printf("PASS e2e/import-rules: %zu packets, %zu events, no import-rule error\n",
		       t.packets, t.nevents);
	for (int i = 0; i < n; i++)
		check_thread(&t, tids[i], names[i], truths[i]);
	check_trigger(&t, trig_tid, trig_sym);
	if (want_summary)
		summary(&t, trig_tid);
	pfr_free(&t);
	return failures ? 1 : 0;
}
