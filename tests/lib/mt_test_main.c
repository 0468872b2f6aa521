// SPDX-License-Identifier: MIT
/* Runner for tests written with mt_test.h: one line per case, then a tally. */
#include "mt_test.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

static struct mt_case *cases, **cases_tail = &cases;
static jmp_buf case_env;
static enum { RUNNING, FAILED, SKIPPED } case_state;
static const char *suite;
static const char *current;

void mt_register(struct mt_case *c)
{
	/* Constructors run in file order; keep that order for readable output. */
	*cases_tail = c;
	cases_tail = &c->next;
}

void mt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s/%s: %s:%d: ", suite, current, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	case_state = FAILED;
	longjmp(case_env, 1);
}

/* Decimal (signed when the top bit is set, as for -EINVAL) and hex. */
static void fmt_int(char *buf, size_t len, uint64_t v)
{
	if ((int64_t)v < 0)
		snprintf(buf, len, "%" PRId64 " (0x%" PRIx64 ")", (int64_t)v, v);
	else
		snprintf(buf, len, "%" PRIu64 " (0x%" PRIx64 ")", v, v);
}

void mt_fail_eq(const char *file, int line, const char *a_text, const char *b_text,
		uint64_t a, uint64_t b)
{
	char as[64], bs[64];

	fmt_int(as, sizeof(as), a);
	fmt_int(bs, sizeof(bs), b);
	mt_fail(file, line, "%s == %s (%s != %s)", a_text, b_text, as, bs);
}

void mt_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP %s/%s: ", suite, current);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	case_state = SKIPPED;
	longjmp(case_env, 1);
}

/* setjmp lives in its own frame so main's locals cannot be clobbered. */
static void run_case(struct mt_case *c)
{
	case_state = RUNNING;
	current = c->name;
	if (!setjmp(case_env))
		c->fn();
}

static struct mt_case *find_case(const char *name)
{
	for (struct mt_case *c = cases; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* Whether case C was named on the command line (all are when none is). */
static bool selected(const struct mt_case *c, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], c->name))
			return true;
	return false;
}

/* Checked before any case runs: -1 to run the cases, else the exit status. */
static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: %s [--list] [CASE...]\n"
			       "Runs the named cases (all when none is named), one PASS, FAIL or\n"
			       "SKIP line each; --list prints the case names.\n", suite);
			return 0;
		}
		if (!strcmp(argv[i], "--list")) {
			for (struct mt_case *c = cases; c; c = c->next)
				printf("%s\n", c->name);
			return 0;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "%s: unknown option '%s' (try --help)\n", suite, argv[i]);
			return 2;
		}
		if (!find_case(argv[i])) {
			fprintf(stderr, "%s: no case named '%s' (--list shows them)\n", suite,
				argv[i]);
			return 2;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0, rc;

	suite = basename(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = parse_args(argc, argv)) >= 0)
		return rc;
	for (struct mt_case *c = cases; c; c = c->next) {
		if (!selected(c, argc, argv))
			continue;
		run_case(c);
		if (case_state == RUNNING) {
			printf("PASS %s/%s\n", suite, c->name);
			passed++;
		} else if (case_state == FAILED) {
			failed++;
		} else {
			skipped++;
		}
	}
	printf("# %s: %d passed, %d failed, %d skipped\n", suite, passed, failed, skipped);
	if (failed) {
		/*
		 * A failed check skipped its case's cleanup, so whatever it
		 * held is leaked: leaving without the exit handlers skips
		 * LeakSanitizer's report, which would bury the FAIL line.
		 */
		printf("# %s: leak check skipped because a case failed\n", suite);
		fflush(stdout);
		_exit(1);
	}
	return 0;
}
