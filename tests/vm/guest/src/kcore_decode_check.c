// SPDX-License-Identifier: MIT
/*
 * kcore_decode_check BUNDLE TRUTH: decodes a kernel-mode stream that ptgen
 * generated over this kernel's captured text (ptgen --kwalk) with the
 * decoder, and checks it against the generator's ground truth: the decoded
 * calls and returns are exactly the truth's, in order; each called kernel
 * function is named as the bundle's kallsyms names the truth's call target
 * (looked up here with the plain parser, not the decoder) and marked as
 * kernel code by its "[...]" binary. The walk may call into code that was
 * not copied (__init text, freed after boot): such a call is decoded to
 * unknown code, and that must be exactly the calls outside the copies.
 */
#include <inttypes.h>
#include <stdbool.h>

#include "bundle/bundle.h"
#include "decode/decode.h"
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

static void add_step(struct steps *s, char kind, uint64_t to, uint32_t fn)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			printf("FAIL kcore-decode: out of memory\n");
			exit(1);
		}
	}
	s->v[s->n++] = (struct step){ kind, to, fn };
}

static int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)pid, (void)tid, (void)ns;
	if (ev->kind == MT_EV_BEGIN && (ev->arg >= MT_FN_FIRST_USER || ev->arg == MT_FN_UNKNOWN) &&
	    !(ev->flags & (MT_EV_TAIL | MT_EV_INFERRED | MT_EV_ASYNC)))
		add_step(ctx, 'c', ev->addr, ev->arg);
	else if (ev->kind == MT_EV_END && (ev->flags & MT_EV_RET))
		add_step(ctx, 'r', ev->addr, 0);
	return 0;
}

static int read_truth(const char *path, struct steps *t)
{
	FILE *f = fopen(path, "r");
	char line[256], kind[8];
	uint64_t to;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%7s %*u %*u %*u %*x %" SCNx64, kind, &to) == 2 &&
		    (!strcmp(kind, "call") || !strcmp(kind, "ret")))
			add_step(t, kind[0] == 'c' ? 'c' : 'r', to, 0);
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
static void check_names(struct mt_decode *d, struct mt_bundle_reader *r, const struct steps *got)
{
	struct mt_ksyms ks;
	const char *text;
	size_t len, calls = 0, bad_name = 0, unmarked = 0, uncopied = 0, bad_unknown = 0;
	char err[256] = "", first[256] = "";

	if (mt_bundle_kallsyms(r, &text, &len) || mt_ksyms_parse(&ks, text, len, err, sizeof(err))) {
		kg_check("kcore-decode-names", 0, "no kallsyms: %s", err);
		return;
	}
	for (size_t i = 0; i < got->n; i++) {
		const struct mt_ksym *s;
		struct mt_func f;

		if (got->v[i].kind != 'c')
			continue;
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
	kg_check("kcore-decode-names", calls && !bad_name, "%zu of %zu calls misnamed; first: %s",
		 bad_name, calls, first);
	kg_check("kcore-decode-marked-kernel", calls && !unmarked,
		 "%zu of %zu called functions lack a [kernel]/[module] binary", unmarked, calls);
	kg_check("kcore-decode-unknown-is-uncopied", !bad_unknown,
		 "%zu calls are unknown code inside a copy or named outside the copies "
		 "(%zu calls into uncopied code)", bad_unknown, uncopied);
	printf("kcore_decode_check: %zu calls named, %zu into code not copied\n", calls, uncopied);
	mt_ksyms_free(&ks);
}

int main(int argc, char **argv)
{
	struct steps truth = { 0 }, got = { 0 };
	struct mt_decode_sink sink = { .event = collect, .ctx = &got };
	struct mt_decode_opts opts = { .jobs = 1 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];
	long diff;

	if (argc != 3) {
		fprintf(stderr, "usage: kcore_decode_check BUNDLE TRUTH\n");
		return 2;
	}
	if (read_truth(argv[2], &truth) || !truth.n) {
		kg_check("kcore-decode-truth", 0, "%s: no calls or returns", argv[2]);
		return 1;
	}
	if (mt_bundle_open(&r, argv[1], err, sizeof(err)) ||
	    mt_decode_open(&d, r, &opts, err, sizeof(err))) {
		kg_check("kcore-decode-open", 0, "%s", err);
		return 1;
	}
	if (mt_decode_run(d, &sink)) {
		kg_check("kcore-decode-run", 0, "the decoder failed");
		return 1;
	}
	diff = first_difference(&truth, &got);
	kg_check("kcore-decode-calls", diff < 0,
		 "%zu steps decoded, %zu in the truth; first difference at step %ld: "
		 "%c 0x%" PRIx64 " decoded, %c 0x%" PRIx64 " in the truth", got.n, truth.n, diff,
		 diff >= 0 && (size_t)diff < got.n ? got.v[diff].kind : '-',
		 diff >= 0 && (size_t)diff < got.n ? got.v[diff].to : 0,
		 diff >= 0 && (size_t)diff < truth.n ? truth.v[diff].kind : '-',
		 diff >= 0 && (size_t)diff < truth.n ? truth.v[diff].to : 0);
	printf("kcore_decode_check: %zu calls and returns in the truth, %zu decoded\n", truth.n,
	       got.n);
	check_names(d, r, &got);
	mt_decode_free(d);
	mt_bundle_close(r);
	free(truth.v);
	free(got.v);
	return kg_failures != 0;
}
