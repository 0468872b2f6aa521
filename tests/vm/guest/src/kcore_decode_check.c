// SPDX-License-Identifier: MIT
/*
 * kcore_decode_check BUNDLE TRUTH [PREFIX]: decodes a stream that ptgen
 * generated over this kernel's captured text (ptgen --kwalk, or --walk
 * --with-kernel for user and kernel code together) with the decoder, and
 * checks it against the generator's ground truth (check names start with
 * PREFIX, "kcore-decode" by default):
 * - the decoded calls and returns are exactly the truth's, in order, far
 *   ones (system calls, interrupts, SYSRET/IRET) included;
 * - each called kernel function is named as the bundle's kallsyms names the
 *   truth's call target (looked up here with the plain parser, not the
 *   decoder) and marked as kernel code by its "[...]" binary; each called
 *   user function has the walked file as its binary;
 * - kernel frames nest above the user frame they interrupted: no user frame
 *   ever opens above a kernel frame, and the decoded entries into and
 *   returns out of the kernel are as many as the truth's.
 * The walk may call into code that was not copied (__init text, freed after
 * boot): such a call is decoded to unknown code, and that must be exactly
 * the calls outside the copies.
 */
#include <inttypes.h>
#include <stdbool.h>

#include "bundle/bundle.h"
#include "decode/decode.h"
#include "decode/kernel_image.h"
#include "kcore/kallsyms.h"
#include "kmod_guest.h"

struct step {
	char kind;		/* 'c' call, 'r' return */
	uint64_t to;
	uint32_t fn;		/* calls, decoded: the function id */
};

struct steps {
	struct step *v;
	size_t n, cap;
};

/* Check names: PREFIX-what, the prefix given on the command line. */
static const char *prefix = "kcore-decode";

static const char *name(const char *what)
{
	static char buf[4][64];
	static unsigned next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s-%s", prefix, what);
	return b;
}

/* The decoded frames' privilege levels, and the crossings between them. */
struct nesting {
	bool *kernel;		/* per open frame */
	size_t depth, cap;
	size_t kernel_open;	/* kernel frames open */
	size_t entries, exits;	/* user -> kernel, kernel -> user */
	size_t user_above_kernel;
	uint64_t first_bad_ns;
};

struct decoded {
	struct steps steps;
	struct nesting nest;
};

/* Room for one more element in the array *V of *CAP, holding N. */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 4096;
	v = realloc(v, *cap * size);
	if (!v) {
		printf("FAIL %s: out of memory\n", prefix);
		exit(1);
	}
	return v;
}

static void add_step(struct steps *s, char kind, uint64_t to, uint32_t fn)
{
	s->v = grow(s->v, s->n, &s->cap, sizeof(*s->v));
	s->v[s->n++] = (struct step){ kind, to, fn };
}

/* Synthetic frames ([syscall], [untraced]) take the level of the frame
 * below them. A tail call replacing the kernel's entry frame crosses
 * nothing. */
static void nest_event(struct nesting *n, uint64_t ns, const struct mt_ev *ev)
{
	bool below = n->depth && n->kernel[n->depth - 1], k;

	if (ev->kind == MT_EV_END && n->depth) {
		k = n->kernel[--n->depth];
		n->kernel_open -= k;
		n->exits += k && !n->kernel_open && n->depth && !(ev->flags & MT_EV_TAIL);
		return;
	}
	if (ev->kind != MT_EV_BEGIN)
		return;
	k = ev->arg < MT_FN_FIRST_USER && ev->arg != MT_FN_UNKNOWN ? below : mt_kimage_is_kernel_ip(ev->addr);
	if (!k && n->kernel_open && !n->user_above_kernel++)
		n->first_bad_ns = ns;
	n->entries += k && !n->kernel_open && n->depth && !(ev->flags & MT_EV_TAIL);
	n->kernel = grow(n->kernel, n->depth, &n->cap, sizeof(*n->kernel));
	n->kernel[n->depth++] = k;
	n->kernel_open += k;
}

static int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct decoded *d = ctx;

	(void)pid, (void)tid;
	if (ev->kind == MT_EV_BEGIN && (ev->arg >= MT_FN_FIRST_USER || ev->arg == MT_FN_UNKNOWN) &&
	    !(ev->flags & (MT_EV_TAIL | MT_EV_INFERRED | MT_EV_ASYNC |
			   MT_EV_INLINE)))
		add_step(&d->steps, 'c', ev->addr, ev->arg);
	else if (ev->kind == MT_EV_END && (ev->flags & MT_EV_RET))
		add_step(&d->steps, 'r', ev->addr, 0);
	nest_event(&d->nest, ns, ev);
	return 0;
}

/* The truth's crossings between user and kernel code. */
struct truth_crossings {
	size_t entries, exits;
};

/* Calls, returns and the crossings of the truth. Far transfers to the
 * next instruction ("far-next") open no frame and are left out. */
static int read_truth(const char *path, struct steps *t, struct truth_crossings *x)
{
	FILE *f = fopen(path, "r");
	char line[256], kind[16];
	uint64_t from, to;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		bool call, ret;

		if (sscanf(line, "%15s %*u %*u %*u %" SCNx64 " %" SCNx64, kind, &from, &to) != 3)
			continue;
		call = !strcmp(kind, "call") || !strcmp(kind, "far-call") || !strcmp(kind, "irq");
		ret = !strcmp(kind, "ret") || !strcmp(kind, "far-ret");
		if (call || ret)
			add_step(t, call ? 'c' : 'r', to, 0);
		x->entries += call && !mt_kimage_is_kernel_ip(from) && mt_kimage_is_kernel_ip(to);
		x->exits += ret && mt_kimage_is_kernel_ip(from) && !mt_kimage_is_kernel_ip(to);
	}
	fclose(f);
	return 0;
}

/* The first index where the sequences differ, or -1. */
static long first_difference(const struct steps *a, const struct steps *b)
{
	for (size_t i = 0; i < a->n || i < b->n; i++)
		if (i >= a->n || i >= b->n || a->v[i].kind != b->v[i].kind || a->v[i].to != b->v[i].to)
			return (long)i;
	return -1;
}

/* Whether the bundle copied the code at ip. */
static bool copied(struct mt_bundle_reader *r, uint64_t ip)
{
	for (size_t i = 0; i < mt_bundle_ktext_count(r); i++) {
		struct mt_bundle_ktext kt;

		if (!mt_bundle_ktext_info(r, i, &kt) && ip >= kt.addr && ip - kt.addr < kt.size)
			return true;
	}
	return false;
}

/* Names and kernel marks of the decoded calls against kallsyms. */
static void check_names(struct mt_decode *d, struct mt_bundle_reader *r, const struct steps *got,
			const char *user_file)
{
	struct mt_ksyms ks;
	const char *text;
	size_t len, calls = 0, bad_name = 0, unmarked = 0, uncopied = 0, bad_unknown = 0;
	size_t ucalls = 0, bad_user = 0;
	char err[256] = "", first[256] = "", first_user[256] = "";

	if (mt_bundle_kallsyms(r, &text, &len) || mt_ksyms_parse(&ks, text, len, err, sizeof(err))) {
		kg_check(name("names"), 0, "no kallsyms: %s", err);
		return;
	}
	for (size_t i = 0; i < got->n; i++) {
		const struct mt_ksym *s;
		struct mt_func f;

		if (got->v[i].kind != 'c')
			continue;
		if (!mt_kimage_is_kernel_ip(got->v[i].to)) {
			f = mt_decode_func(d, got->v[i].fn);
			ucalls++;
			if (!f.binary || f.binary[0] == '[' || !strstr(f.binary, user_file)) {
				if (!bad_user++)
					snprintf(first_user, sizeof(first_user), "call to 0x%" PRIx64
						 " decoded in %s", got->v[i].to,
						 f.binary ? f.binary : "(none)");
			}
			continue;
		}
		if (got->v[i].fn == MT_FN_UNKNOWN) {
			uncopied++;
			bad_unknown += copied(r, got->v[i].to);
			continue;
		}
		bad_unknown += !copied(r, got->v[i].to);
		calls++;
		f = mt_decode_func(d, got->v[i].fn);
		s = mt_ksyms_lookup(&ks, got->v[i].to);
		unmarked += !f.binary || f.binary[0] != '[';
		if (!s || !f.name || strcmp(s->name, f.name)) {
			if (!bad_name++)
				snprintf(first, sizeof(first), "call to 0x%" PRIx64 " decoded as %s, "
					 "kallsyms says %s", got->v[i].to, f.name ? f.name : "(none)",
					 s ? s->name : "(none)");
		}
	}
	kg_check(name("names"), calls && !bad_name, "%zu of %zu calls misnamed; first: %s",
		 bad_name, calls, first);
	kg_check(name("marked-kernel"), calls && !unmarked,
		 "%zu of %zu called functions lack a [kernel]/[module] binary", unmarked, calls);
	kg_check(name("unknown-is-uncopied"), !bad_unknown,
		 "%zu calls are unknown code inside a copy or named outside the copies "
		 "(%zu calls into uncopied code)", bad_unknown, uncopied);
	if (ucalls || user_file[0])
		kg_check(name("user-frames"), ucalls && !bad_user,
			 "%zu of %zu user calls not in %s; first: %s", bad_user, ucalls, user_file,
			 first_user);
	printf("kcore_decode_check: %zu kernel calls named, %zu into code not copied, "
	       "%zu user calls\n", calls, uncopied, ucalls);
	mt_ksyms_free(&ks);
}

static void check_nesting(const struct nesting *n, const struct truth_crossings *x)
{
	kg_check(name("nesting"), !n->user_above_kernel,
		 "%zu user frames opened above kernel frames, the first at %" PRIu64 " ns",
		 n->user_above_kernel, n->first_bad_ns);
	kg_check(name("crossings"), n->entries == x->entries && n->exits == x->exits,
		 "%zu entries into the kernel and %zu returns to user code decoded, "
		 "%zu and %zu in the truth", n->entries, n->exits, x->entries, x->exits);
	printf("kcore_decode_check: %zu entries into the kernel, %zu returns to user code\n",
	       n->entries, n->exits);
}

/* The user file a --with-kernel walk went over: the first map's path. */
static const char *walked_file(struct mt_bundle_reader *r)
{
	const struct mt_bundle_map *maps;
	size_t n = mt_bundle_maps(r, &maps);

	return n ? maps[0].path : "";
}

int main(int argc, char **argv)
{
	struct steps truth = { 0 };
	struct truth_crossings crossings = { 0 };
	struct decoded dec = { 0 };
	struct steps *got = &dec.steps;
	struct mt_decode_sink sink = { .event = collect, .ctx = &dec };
	struct mt_decode_opts opts = { .jobs = 1 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];
	long diff;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: kcore_decode_check BUNDLE TRUTH [CHECK-NAME-PREFIX]\n");
		return 2;
	}
	if (argc == 4)
		prefix = argv[3];
	if (read_truth(argv[2], &truth, &crossings) || !truth.n) {
		kg_check(name("truth"), 0, "%s: no calls or returns", argv[2]);
		return 1;
	}
	if (mt_bundle_open(&r, argv[1], err, sizeof(err)) ||
	    mt_decode_open(&d, r, &opts, err, sizeof(err))) {
		kg_check(name("open"), 0, "%s", err);
		return 1;
	}
	if (mt_decode_run(d, &sink)) {
		kg_check(name("run"), 0, "the decoder failed");
		return 1;
	}
	diff = first_difference(&truth, got);
	kg_check(name("calls"), diff < 0,
		 "%zu steps decoded, %zu in the truth; first difference at step %ld: "
		 "%c 0x%" PRIx64 " decoded, %c 0x%" PRIx64 " in the truth", got->n, truth.n, diff,
		 diff >= 0 && (size_t)diff < got->n ? got->v[diff].kind : '-',
		 diff >= 0 && (size_t)diff < got->n ? got->v[diff].to : 0,
		 diff >= 0 && (size_t)diff < truth.n ? truth.v[diff].kind : '-',
		 diff >= 0 && (size_t)diff < truth.n ? truth.v[diff].to : 0);
	printf("kcore_decode_check: %zu calls and returns in the truth, %zu decoded\n", truth.n,
	       got->n);
	check_names(d, r, got, walked_file(r));
	check_nesting(&dec.nest, &crossings);
	mt_decode_free(d);
	mt_bundle_close(r);
	free(truth.v);
	free(got->v);
	free(dec.nest.kernel);
	return kg_failures != 0;
}
