// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the --trigger SPEC parser. The input (up to its
 * first NUL) is one spec. A rejected spec must come with a one-line message
 * that names a column; an accepted one must be internally consistent and
 * must survive a round trip: printed back in canonical form and parsed
 * again, it must give exactly the same trigger. That catches a parser that
 * accepts something other than what it stored (truncated numbers, a lost
 * filter, a type applied to the wrong value).
 */
#include "trigger/trigger.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void must(int cond, const char *what, const char *spec)
{
	if (!cond) {
		fprintf(stderr, "fuzz_trigger_spec: %s: '%s'\n", what, spec);
		abort();
	}
}

static const char *const op_text[] = {
	[MT_TRIG_OP_EQ] = "==", [MT_TRIG_OP_NE] = "!=", [MT_TRIG_OP_LT] = "<",
	[MT_TRIG_OP_LE] = "<=", [MT_TRIG_OP_GT] = ">", [MT_TRIG_OP_GE] = ">=",
};

/* The invariants the BPF loader relies on. */
static void check_fields(const struct mt_trigger_spec *s, const char *in)
{
	const struct mt_trig_filter *f = &s->filter;

	must(s->text && !strcmp(s->text, in), "text not kept", in);
	must(s->kind >= MT_TRIG_UPROBE && s->kind < MT_TRIG_KIND_NR, "bad kind", in);
	must(f->kind == (uint32_t)s->kind && f->min_ns == s->min_ns, "filter disagrees", in);
	must((s->kind == MT_TRIG_KPROBE) == !s->path, "path presence", in);
	must(!s->path || *s->path, "empty path", in);
	must(!s->symbol != !s->addr, "exactly one of symbol and address", in);
	must(!s->symbol || (*s->symbol && !strpbrk(s->symbol, ",:+>")), "symbol text", in);
	must(s->kind == MT_TRIG_UPROBE || s->kind == MT_TRIG_KPROBE || !s->offset,
	     "offset on a return or slow probe", in);
	must((s->kind == MT_TRIG_SLOW) == (s->min_ns > 0), "slow duration", in);
	must(f->hit >= 1 && f->nr_conds <= MT_TRIG_MAX_CONDS, "hit or condition count", in);
	for (uint32_t i = 0; i < f->nr_conds; i++) {
		const struct mt_trig_cond *c = &f->conds[i];
		uint64_t lim;

		must(c->bits == 8 || c->bits == 16 || c->bits == 32 || c->bits == 64, "bits", in);
		must(c->op >= MT_TRIG_OP_EQ && c->op <= MT_TRIG_OP_GE, "operator", in);
		must(s->kind == MT_TRIG_URETPROBE ? c->operand == MT_TRIG_OPND_RET : c->operand <= 5,
		     "operand", in);
		if (c->bits == 64)
			continue;
		/* The value must fit the type it is compared as. */
		lim = 1ULL << (c->bits - (c->is_signed ? 1 : 0));
		if (c->is_signed)
			must((int64_t)c->value >= -(int64_t)lim && (int64_t)c->value < (int64_t)lim,
			     "signed value range", in);
		else
			must(c->value < lim, "unsigned value range", in);
	}
}

/* SPEC in canonical form: every filter spelled out, every type explicit. */
static int print_spec(const struct mt_trigger_spec *s, char *out, size_t len)
{
	const struct mt_trig_filter *f = &s->filter;
	FILE *m = fmemopen(out, len, "w");

	if (!m)
		return -1;
	fprintf(m, "%s:", mt_trigger_kind_name(s->kind));
	if (s->path)
		fprintf(m, "%s:", s->path);
	if (s->symbol)
		fprintf(m, "%s", s->symbol);
	else
		fprintf(m, "0x%" PRIx64, s->addr);
	if (s->offset)
		fprintf(m, "+%" PRIu64, s->offset);
	if (s->kind == MT_TRIG_SLOW)
		fprintf(m, ">%" PRIu64 "ns", s->min_ns);
	if (f->tid)
		fprintf(m, ",tid=%u", f->tid);
	fprintf(m, ",hit=%" PRIu64, (uint64_t)f->hit);
	for (uint32_t i = 0; i < f->nr_conds; i++) {
		const struct mt_trig_cond *c = &f->conds[i];

		if (c->operand == MT_TRIG_OPND_RET)
			fprintf(m, ",if=ret");
		else
			fprintf(m, ",if=arg%u", c->operand);
		fprintf(m, ":%c%u%s", c->is_signed ? 's' : 'u', c->bits, op_text[c->op]);
		if (c->is_signed && (int64_t)c->value < 0)
			fprintf(m, "-%" PRIu64, (uint64_t)(0 - c->value));
		else
			fprintf(m, "%" PRIu64, (uint64_t)c->value);
	}
	if (fclose(m))
		return -1;
	return strnlen(out, len) < len ? 0 : -1;
}

static void round_trip(const struct mt_trigger_spec *s, const char *in)
{
	char text[8192], err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec again;

	if (print_spec(s, text, sizeof(text)))
		return;	/* a path too long to reprint here: nothing to compare */
	if (mt_trigger_spec_parse(text, &again, err, sizeof(err))) {
		fprintf(stderr, "canonical form '%s' rejected: %s\n", text, err);
		must(0, "canonical form rejected", in);
	}
	must(again.kind == s->kind && again.addr == s->addr && again.offset == s->offset &&
	     again.min_ns == s->min_ns, "round trip: kind, address, offset or duration", in);
	must(!s->path == !again.path && (!s->path || !strcmp(s->path, again.path)),
	     "round trip: path", in);
	must(!s->symbol == !again.symbol && (!s->symbol || !strcmp(s->symbol, again.symbol)),
	     "round trip: symbol", in);
	must(!memcmp(&again.filter, &s->filter, sizeof(s->filter)), "round trip: filters", in);
	mt_trigger_spec_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec spec;

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	err[0] = '\0';
	if (mt_trigger_spec_parse(in, &spec, err, sizeof(err))) {
		must(err[0] && !strchr(err, '\n'), "rejection without a one-line message", in);
		must(!strcmp(err, "empty trigger spec") || strstr(err, "column "),
		     "rejection does not name a column", in);
		/* A failed parse leaves nothing to free. */
		must(!spec.text && !spec.path && !spec.symbol, "failed parse kept memory", in);
	} else {
		check_fields(&spec, in);
		round_trip(&spec, in);
		mt_trigger_spec_free(&spec);
	}
	free(in);
	return 0;
}
