// SPDX-License-Identifier: MIT
/* Runner for tests written with mt_test.h: one line per case, then a tally. */
#include "mt_test.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	suite = basename(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (struct mt_case *c = cases; c; c = c->next) {
		if (only && strcmp(only, c->name))
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
	return failed ? 1 : 0;
}
