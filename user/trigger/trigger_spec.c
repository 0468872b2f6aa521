// SPDX-License-Identifier: MIT
/*
 * The --trigger SPEC parser (grammar in trigger.h). Every error names the
 * column (1-based) and the text found there, so the user sees exactly which
 * part of the spec is wrong.
 */
#include "trigger/trigger.h"
#include "uapi/linux/mtrace.h"
#include "util/errmsg.h"
#include "util/text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *text;	/* whole spec */
	char *err;
	size_t errlen;
};

static int fail_at(const struct parser *p, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(const struct parser *p, const char *at, const char *fmt, ...)
{
	char what[256], text[256], near[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mt_visible(text, sizeof(text), p->text, 200);
	mt_visible(near, sizeof(near), at, 40);
	if (*at)
		snprintf(p->err, p->errlen, "trigger '%s': column %zu ('%s'): %s",
			 text, (size_t)(at - p->text) + 1, near, what);
	else
		snprintf(p->err, p->errlen, "trigger '%s': column %zu (end of spec): %s",
			 text, (size_t)(at - p->text) + 1, what);
	return -EINVAL;
}

/*
 * An unsigned number, decimal or 0x-hex, starting exactly at S (no sign,
 * no blanks). Returns the end, or NULL when S holds no digits or the value
 * does not fit 64 bits.
 */
static const char *scan_u64(const char *s, uint64_t *out)
{
	int base = 10;
	uint64_t v = 0;
	const char *d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (d = s;; d++) {
		unsigned digit;

		if (*d >= '0' && *d <= '9')
			digit = *d - '0';
		else if (base == 16 && *d >= 'a' && *d <= 'f')
			digit = *d - 'a' + 10;
		else if (base == 16 && *d >= 'A' && *d <= 'F')
			digit = *d - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - digit) / base)
			return NULL;
		v = v * base + digit;
	}
	if (d == s)
		return NULL;
	*out = v;
	return d;
}

/* A whole field [S, END) as a number; MIN is the smallest value allowed. */
static int field_u64(const struct parser *p, const char *s, const char *end,
		     const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *e = scan_u64(s, out);

	if (!e)
		return fail_at(p, s, "%s takes a decimal or 0x-hex number below 2^64", name);
	if (e != end)
		return fail_at(p, e, "unexpected character after the number in %s", name);
	if (*out < min || *out > max)
		return fail_at(p, s, "%s must be between %llu and %llu", name,
			       (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static bool symbol_char(char c, bool kernel)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || (!kernel && c == '$');
}

/* SYMBOL[+OFF] or (ALLOW_ADDR) 0xADDR in [S, END). */
static int parse_target(const struct parser *p, const char *s, const char *end,
			bool allow_addr, bool allow_off, struct mt_trigger_spec *spec)
{
	bool kernel = spec->kind == MT_TRIG_KPROBE;
	const char *c;

	if (s == end)
		return fail_at(p, s, "missing function name");
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!allow_addr)
			return fail_at(p, s, "%s needs a function name, not an address",
				       mt_trigger_kind_name(spec->kind));
		return field_u64(p, s, end, "the address", 1, UINT64_MAX, &spec->addr);
	}
	if (s[0] >= '0' && s[0] <= '9')
		return fail_at(p, s, "a function name cannot start with a digit "
			       "(write addresses as 0xADDR)");
	for (c = s; c < end && *c != '+'; c++)
		if (!symbol_char(*c, kernel))
			return fail_at(p, c, "character not allowed in a function name");
	if (c == s)
		return fail_at(p, s, "missing function name before '+'");
	spec->symbol = strndup(s, c - s);
	if (!spec->symbol)
		return fail_at(p, s, "out of memory");
	if (c == end)
		return 0;
	if (!allow_off)
		return fail_at(p, c, "%s probes a function's entry: +OFFSET is not allowed",
			       mt_trigger_kind_name(spec->kind));
	if (c + 1 == end)
		return fail_at(p, c + 1, "missing offset after '+'");
	return field_u64(p, c + 1, end, "the offset", 0, UINT32_MAX, &spec->offset);
}

/* DURATION: NUMBER followed by ns, us, ms or s. */
static int parse_duration(const struct parser *p, const char *s, const char *end,
			  uint64_t *ns)
{
	static const struct { const char *unit; uint64_t mult; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t n;
	const char *u = scan_u64(s, &n);

	if (!u || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return fail_at(p, s, "slow: needs a duration such as 200us after '>'");
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if ((size_t)(end - u) != strlen(units[i].unit) ||
		    strncmp(u, units[i].unit, end - u))
			continue;
		if (n == 0)
			return fail_at(p, s, "the duration must be more than zero");
		if (n > UINT64_MAX / units[i].mult)
			return fail_at(p, s, "the duration is too long");
		*ns = n * units[i].mult;
		return 0;
	}
	return fail_at(p, u, "the duration needs a unit: ns, us, ms or s");
}

static const struct {
	const char *text;
	enum mt_trig_op op;
} ops[] = {	/* two-character operators first */
	{ "==", MT_TRIG_OP_EQ }, { "!=", MT_TRIG_OP_NE }, { "<=", MT_TRIG_OP_LE },
	{ ">=", MT_TRIG_OP_GE }, { "<", MT_TRIG_OP_LT }, { ">", MT_TRIG_OP_GT },
};
_Static_assert(sizeof(ops) / sizeof(ops[0]) == MT_TRIG_OP_NR - 1, "one spelling per operator");

/* OPERAND[:TYPE]OP VALUE in [S, END) into C. */
static int parse_cond(const struct parser *p, const char *s, const char *end,
		      enum mt_trig_kind kind, struct mt_trig_cond *c)
{
	const char *q = s, *v;
	bool neg = false;
	uint64_t mag;
	size_t i;

	if (!strncmp(q, "arg", 3) && q + 3 < end && q[3] >= '0' && q[3] <= '9') {
		if (q[3] > '5' || (q + 4 < end && q[4] >= '0' && q[4] <= '9'))
			return fail_at(p, q + 3, "argument numbers go from 0 to 5");
		if (kind == MT_TRIG_URETPROBE)
			return fail_at(p, q, "arguments are gone when a function returns: "
				       "uretprobe can compare only ret");
		c->operand = q[3] - '0';
		q += 4;
	} else if (!strncmp(q, "ret", 3)) {
		if (kind != MT_TRIG_URETPROBE)
			return fail_at(p, q, "ret (the return value) exists only for uretprobe");
		c->operand = MT_TRIG_OPND_RET;
		q += 3;
	} else {
		return fail_at(p, q, "if= compares arg0..arg5 or ret");
	}

	c->bits = 64;
	c->is_signed = 0;
	bool typed = false;
	if (q < end && *q == ':') {
		static const char *const types[] = { "u8", "u16", "u32", "u64",
						     "s8", "s16", "s32", "s64" };
		for (i = 0; i < 8; i++)
			if (!strncmp(q + 1, types[i], strlen(types[i])) &&
			    !(q[1 + strlen(types[i])] >= '0' && q[1 + strlen(types[i])] <= '9'))
				break;
		if (i == 8)
			return fail_at(p, q + 1, "unknown type (u8 u16 u32 u64 s8 s16 s32 s64)");
		c->is_signed = types[i][0] == 's';
		c->bits = atoi(types[i] + 1);
		typed = true;
		q += 1 + strlen(types[i]);
	}

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(q, ops[i].text, strlen(ops[i].text)))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]) || q >= end)
		return fail_at(p, q, "expected a comparison: == != < <= > >=");
	c->op = ops[i].op;
	v = q + strlen(ops[i].text);

	if (v < end && *v == '-') {
		neg = true;
		v++;
	}
	const char *e = scan_u64(v, &mag);
	if (!e || v >= end)
		return fail_at(p, v, "expected a decimal or 0x-hex value to compare with");
	if (e != end)
		return fail_at(p, e, "unexpected character after the value");
	if (neg && !typed)
		c->is_signed = 1;	/* a negative literal makes an untyped compare signed */
	if (neg && !c->is_signed)
		return fail_at(p, v - 1, "negative value for an unsigned type");

	/* The value must fit the type; store it as the BPF side will see it. */
	uint64_t umax = c->bits == 64 ? UINT64_MAX : (1ULL << c->bits) - 1;
	if (c->is_signed) {
		uint64_t lim = 1ULL << (c->bits - 1);	/* |min|; max is lim - 1 */
		if (neg ? mag > lim : mag >= lim)
			return fail_at(p, v - neg, "value out of range for s%u", c->bits);
		c->value = neg ? (uint64_t)0 - mag : mag;
	} else {
		if (mag > umax)
			return fail_at(p, v, "value out of range for u%u", c->bits);
		c->value = mag;
	}
	return 0;
}

/* ,tid=N ,hit=N ,if=... starting at S (just past a comma). */
static int parse_filters(const struct parser *p, const char *s, struct mt_trigger_spec *spec)
{
	struct mt_trig_filter *f = &spec->filter;
	bool have_tid = false, have_hit = false;
	uint64_t n;

	for (;;) {
		const char *end = strchr(s, ','), *eq;

		if (!end)
			end = s + strlen(s);
		eq = memchr(s, '=', end - s);
		if (s == end)
			return fail_at(p, s, "empty filter (stray comma?)");
		if (!eq)
			return fail_at(p, s, "filters look like tid=N, hit=N or if=COND");
		if (eq - s == 3 && !strncmp(s, "tid", 3)) {
			if (have_tid)
				return fail_at(p, s, "tid= given twice");
			if (field_u64(p, eq + 1, end, "tid=", 1, INT32_MAX, &n))
				return -EINVAL;
			f->tid = n;
			have_tid = true;
		} else if (eq - s == 3 && !strncmp(s, "hit", 3)) {
			if (have_hit)
				return fail_at(p, s, "hit= given twice");
			if (field_u64(p, eq + 1, end, "hit=", 1, UINT64_MAX, &n))
				return -EINVAL;
			f->hit = n;
			have_hit = true;
		} else if (eq - s == 2 && !strncmp(s, "if", 2)) {
			if (f->nr_conds == MT_TRIG_MAX_CONDS)
				return fail_at(p, s, "at most %d if= conditions", MT_TRIG_MAX_CONDS);
			if (parse_cond(p, eq + 1, end, spec->kind, &f->conds[f->nr_conds]))
				return -EINVAL;
			f->nr_conds++;
		} else {
			return fail_at(p, s, "unknown filter '%.*s' (tid, hit or if)",
				       (int)(eq - s), s);
		}
		if (!*end)
			return 0;
		s = end + 1;
	}
}

static const char *const kind_names[MT_TRIG_KIND_NR] = {
	[MT_TRIG_UPROBE] = "uprobe",
	[MT_TRIG_URETPROBE] = "uretprobe",
	[MT_TRIG_KPROBE] = "kprobe",
	[MT_TRIG_SLOW] = "slow",
};

const char *mt_trigger_kind_name(enum mt_trig_kind kind)
{
	if ((unsigned)kind < MT_TRIG_KIND_NR && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

const char *mt_trigger_freeze_name(enum mt_trig_freeze method)
{
	switch (method) {
	case MT_TRIG_FREEZE_KFUNC: return "kfunc";
	case MT_TRIG_FREEZE_NOTIFY: return "notify";
	case MT_TRIG_FREEZE_SIGSTOP: return "sigstop";
	case MT_TRIG_FREEZE_NR: break;
	}
	return "unknown";
}

uint32_t mt_trigger_freeze_path(enum mt_trig_freeze method)
{
	switch (method) {
	case MT_TRIG_FREEZE_KFUNC: return MTRACE_PATH_KFUNC;
	/* The stopped thread is continued only after user space froze the rings. */
	case MT_TRIG_FREEZE_NOTIFY:
	case MT_TRIG_FREEZE_SIGSTOP: return MTRACE_PATH_FALLBACK;
	case MT_TRIG_FREEZE_NR: break;
	}
	return 0;
}

/* KIND:... up to the first comma, then the filters. */
static int parse_spec(const struct parser *p, struct mt_trigger_spec *spec)
{
	const char *text = p->text, *colon = strchr(text, ':'), *head, *end, *sep, *gt;
	size_t k;

	if (!colon)
		return fail_at(p, text, "expected KIND:... (uprobe, uretprobe, kprobe or slow)");
	for (k = MT_TRIG_UPROBE; k < MT_TRIG_KIND_NR; k++)
		if (kind_names[k] && (size_t)(colon - text) == strlen(kind_names[k]) &&
		    !strncmp(text, kind_names[k], colon - text))
			break;
	if (k == MT_TRIG_KIND_NR)
		return fail_at(p, text, "unknown trigger kind '%.*s' (uprobe, uretprobe, kprobe or slow)",
			       (int)(colon - text), text);
	spec->kind = k;
	spec->filter.kind = k;
	spec->filter.hit = 1;

	head = colon + 1;
	end = strchr(head, ',');
	if (!end)
		end = head + strlen(head);

	if (spec->kind == MT_TRIG_KPROBE) {
		if (parse_target(p, head, end, false, true, spec))
			return -EINVAL;
	} else {
		gt = NULL;
		if (spec->kind == MT_TRIG_SLOW) {
			gt = memrchr(head, '>', end - head);
			if (!gt)
				return fail_at(p, end, "slow: needs '>DURATION' after the function, "
					       "e.g. slow:/bin/app:handle>200us");
		}
		/* The function follows the last ':', so PATH may contain ':'. */
		sep = memrchr(head, ':', (gt ? gt : end) - head);
		if (!sep)
			return fail_at(p, head, "expected PATH:FUNCTION after '%s:'",
				       mt_trigger_kind_name(spec->kind));
		if (sep == head)
			return fail_at(p, head, "missing the binary's path");
		spec->path = strndup(head, sep - head);
		if (!spec->path) {
			fail_at(p, head, "out of memory");
			return -ENOMEM;
		}
		if (parse_target(p, sep + 1, gt ? gt : end, spec->kind != MT_TRIG_SLOW,
				 spec->kind == MT_TRIG_UPROBE, spec))
			return -EINVAL;
		if (gt && parse_duration(p, gt + 1, end, &spec->min_ns))
			return -EINVAL;
		spec->filter.min_ns = spec->min_ns;
	}
	if (*end && parse_filters(p, end + 1, spec))
		return -EINVAL;
	return 0;
}

int mt_trigger_spec_parse(const char *text, struct mt_trigger_spec *spec,
			  char *err, size_t errlen)
{
	struct parser p = { text, err, errlen };
	int rc;

	memset(spec, 0, sizeof(*spec));
	if (!*text)
		return mt_errmsg(err, errlen, EINVAL, "empty trigger spec");
	for (const char *c = text; *c; c++)
		if ((unsigned char)*c < ' ' || (unsigned char)*c == 0x7f)
			return fail_at(&p, c, "control character in the spec");
	spec->text = strdup(text);
	if (!spec->text)
		return mt_errmsg(err, errlen, ENOMEM, "out of memory");
	rc = parse_spec(&p, spec);
	if (rc)
		mt_trigger_spec_free(spec);
	return rc;
}

void mt_trigger_spec_free(struct mt_trigger_spec *spec)
{
	free(spec->text);
	free(spec->path);
	free(spec->symbol);
	memset(spec, 0, sizeof(*spec));
}
