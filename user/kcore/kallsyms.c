// SPDX-License-Identifier: MIT
/* Parser and lookups for /proc/kallsyms text. */
#include "kcore/kallsyms.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mt_ksym_is_code(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Orders by address; aliases at one address by name, so the order is total. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct mt_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int parse_line(struct mt_ksym *s, char *line)
{
	char *end, *name, *mod;

	s->addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || !end[1] || end[2] != ' ' || !end[3])
		return -1;
	s->type = end[1];
	name = end + 3;
	mod = strchr(name, '\t');
	if (mod) {
		*mod++ = '\0';
		if (*mod != '[' || mod[strlen(mod) - 1] != ']')
			return -1;
		mod[strlen(mod) - 1] = '\0';
		mod++;
	}
	if (!*name)
		return -1;
	s->name = name;
	s->module = mod;
	return 0;
}

int mt_ksyms_parse(struct mt_ksyms *ks, const char *text, size_t len, char *err, size_t errlen)
{
	size_t lines = 0, n = 0, lineno = 0;
	int nonzero = 0;
	char *p;

	memset(ks, 0, sizeof(*ks));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	ks->strings = malloc(len + 1);
	ks->syms = calloc(lines + 1, sizeof(*ks->syms));
	if (!ks->strings || !ks->syms) {
		mt_ksyms_free(ks);
		snprintf(err, errlen, "kallsyms: out of memory for %zu lines", lines + 1);
		return -ENOMEM;
	}
	memcpy(ks->strings, text, len);
	ks->strings[len] = '\0';
	for (p = ks->strings; *p; ) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		lineno++;
		if (*p) {
			if (parse_line(&ks->syms[n], p)) {
				snprintf(err, errlen, "kallsyms: line %zu is not 'ADDR TYPE NAME [MODULE]'",
					 lineno);
				mt_ksyms_free(ks);
				return -EBADMSG;
			}
			nonzero |= ks->syms[n].addr != 0;
			n++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	ks->n = n;
	if (n && !nonzero) {
		snprintf(err, errlen,
			 "kallsyms: every address is zero: reading kernel addresses needs CAP_SYSLOG "
			 "and kernel.kptr_restrict <= 1");
		mt_ksyms_free(ks);
		return -EACCES;
	}
	qsort(ks->syms, n, sizeof(*ks->syms), ksym_cmp);
	return 0;
}

void mt_ksyms_free(struct mt_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strings);
	memset(ks, 0, sizeof(*ks));
}

/* Index of the first symbol above addr (ks->n if none). */
static size_t first_above(const struct mt_ksyms *ks, uint64_t addr)
{
	return MT_ARRAY_UPPER_BOUND(ks->syms, ks->n, addr, addr);
}

const struct mt_ksym *mt_ksyms_next_code(const struct mt_ksyms *ks, uint64_t addr)
{
	for (size_t i = first_above(ks, addr); i < ks->n; i++)
		if (mt_ksym_is_code(ks->syms[i].type))
			return &ks->syms[i];
	return NULL;
}

const struct mt_ksym *mt_ksyms_lookup(const struct mt_ksyms *ks, uint64_t addr)
{
	size_t lo = first_above(ks, addr);

	/* Walk back from the first symbol above addr to a code symbol. */
	while (lo > 0) {
		const struct mt_ksym *s = &ks->syms[--lo];

		if (mt_ksym_is_code(s->type))
			return s;
	}
	return NULL;
}

const struct mt_ksym *mt_ksyms_find(const struct mt_ksyms *ks, const char *name)
{
	const struct mt_ksym *found = NULL;

	for (size_t i = 0; i < ks->n; i++) {
		const struct mt_ksym *s = &ks->syms[i];

		if (strcmp(s->name, name))
			continue;
		if (!s->module)
			return s;
		if (!found)
			found = s;
	}
	return found;
}
