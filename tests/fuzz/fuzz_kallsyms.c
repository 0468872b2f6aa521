// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the /proc/kallsyms parser. The input is the text
 * (not NUL-terminated, as the parser allows). An accepted table must be
 * sorted, hold only well-formed entries, and answer lookups exactly as a
 * plain linear scan over it does; a rejection must say why with the
 * documented error code.
 */
#include "kcore/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_kallsyms: %s\n", what);
		abort();
	}
}

/* Reference for mt_ksyms_lookup: the last code symbol at or below ADDR. */
static const struct mt_ksym *scan_lookup(const struct mt_ksyms *ks, uint64_t addr)
{
	const struct mt_ksym *best = NULL;

	for (size_t i = 0; i < ks->n && ks->syms[i].addr <= addr; i++)
		if (mt_ksym_is_code(ks->syms[i].type))
			best = &ks->syms[i];
	return best;
}

/* Reference for mt_ksyms_find: the first core symbol, else the first module one. */
static const struct mt_ksym *scan_find(const struct mt_ksyms *ks, const char *name)
{
	const struct mt_ksym *first = NULL;

	for (size_t i = 0; i < ks->n; i++) {
		if (strcmp(ks->syms[i].name, name))
			continue;
		if (!ks->syms[i].module)
			return &ks->syms[i];
		if (!first)
			first = &ks->syms[i];
	}
	return first;
}

static void check_table(const struct mt_ksyms *ks, const uint8_t *data, size_t size)
{
	/* Only the first few symbols are probed: the scans are linear. */
	size_t probes = ks->n < 64 ? ks->n : 64;

	for (size_t i = 0; i < ks->n; i++) {
		const struct mt_ksym *s = &ks->syms[i];

		must(s->name && *s->name && !strchr(s->name, '\n') && !strchr(s->name, '\t'),
		     "symbol name");
		must(!s->module || !strchr(s->module, '\n'), "module name");
		must(i == 0 || ks->syms[i - 1].addr < s->addr ||
			     (ks->syms[i - 1].addr == s->addr &&
			      strcmp(ks->syms[i - 1].name, s->name) <= 0),
		     "table not sorted");
	}
	for (size_t i = 0; i < probes; i++) {
		const struct mt_ksym *s = &ks->syms[i * (ks->n / probes)];

		must(mt_ksyms_lookup(ks, s->addr) == scan_lookup(ks, s->addr), "lookup at a symbol");
		must(mt_ksyms_lookup(ks, s->addr - 1) == scan_lookup(ks, s->addr - 1),
		     "lookup below a symbol");
		must(mt_ksyms_find(ks, s->name) == scan_find(ks, s->name), "find by name");
	}
	/* Addresses taken from the input's tail, so mutations can aim them. */
	for (size_t off = 0; off + 8 <= size && off < 64; off += 8) {
		uint64_t a;

		memcpy(&a, data + size - 8 - off, 8);
		must(mt_ksyms_lookup(ks, a) == scan_lookup(ks, a), "lookup at an input address");
	}
	must(mt_ksyms_lookup(ks, UINT64_MAX) == scan_lookup(ks, UINT64_MAX), "lookup at the top");
	must(!mt_ksyms_find(ks, ""), "empty name found");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_ksyms ks;
	char err[256];
	int rc;

	err[0] = '\0';
	rc = mt_ksyms_parse(&ks, (const char *)data, size, err, sizeof(err));
	if (rc) {
		must(rc == -EBADMSG || rc == -EACCES || rc == -ENOMEM, "unexpected error code");
		must(!strncmp(err, "kallsyms: ", 10), "error without a message");
		must(!ks.syms && !ks.strings && !ks.n, "failed parse kept memory");
		return 0;
	}
	check_table(&ks, data, size);
	mt_ksyms_free(&ks);
	return 0;
}
