/* SPDX-License-Identifier: MIT */
/*
 * Minimal unit-test framework for mtrace.
 *
 * A test file defines cases with MT_TEST(name) { ... } and checks with the
 * MT_* macros below; tests/lib/mt_test_main.c runs every registered case.
 * Each case prints one line, "PASS <suite>/<case>" or
 * "FAIL <suite>/<case>: <file>:<line>: <what>", which tests/check.sh counts.
 * A failed check ends its case (the remaining checks would only cascade);
 * the case's cleanup is skipped, so a run with a failed case also skips
 * the leak check at exit. Integers that differ are printed in decimal and
 * hex. `test_NAME --list` prints the cases, `test_NAME CASE...` runs some;
 * an unknown name is an error.
 */
#ifndef MT_TEST_H
#define MT_TEST_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct mt_case {
	const char *name;
	void (*fn)(void);
	struct mt_case *next;
};

void mt_register(struct mt_case *c);
void mt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void mt_fail_eq(const char *file, int line, const char *a_text, const char *b_text,
		uint64_t a, uint64_t b) __attribute__((noreturn));
/* Marks the running case skipped (with a reason) and ends it. */
void mt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define MT_TEST(name_)                                                  \
	static void mt_case_fn_##name_(void);                           \
	static struct mt_case mt_case_##name_ = { #name_,               \
						   mt_case_fn_##name_, 0 }; \
	__attribute__((constructor)) static void mt_reg_##name_(void)   \
	{                                                               \
		mt_register(&mt_case_##name_);                          \
	}                                                               \
	static void mt_case_fn_##name_(void)

#define MT_ASSERT(cond)                                                 \
	do {                                                            \
		if (!(cond))                                            \
			mt_fail(__FILE__, __LINE__, "%s", #cond);       \
	} while (0)

#define MT_ASSERT_MSG(cond, ...)                                        \
	do {                                                            \
		if (!(cond))                                            \
			mt_fail(__FILE__, __LINE__, __VA_ARGS__);       \
	} while (0)

#define MT_ASSERT_EQ(a, b)                                              \
	do {                                                            \
		uint64_t mt_a_ = (uint64_t)(a), mt_b_ = (uint64_t)(b);  \
		if (mt_a_ != mt_b_)                                     \
			mt_fail_eq(__FILE__, __LINE__, #a, #b, mt_a_, mt_b_); \
	} while (0)

#define MT_ASSERT_STREQ(a, b)                                           \
	do {                                                            \
		const char *mt_a_ = (a), *mt_b_ = (b);                  \
		if (!mt_a_ || !mt_b_ || strcmp(mt_a_, mt_b_))          \
			mt_fail(__FILE__, __LINE__, "%s == %s (\"%s\" != \"%s\")", \
				#a, #b, mt_a_ ? mt_a_ : "(null)",       \
				mt_b_ ? mt_b_ : "(null)");              \
	} while (0)

#define MT_ASSERT_MEMEQ(a, b, n)                                        \
	MT_ASSERT_MSG(memcmp((a), (b), (n)) == 0, "%s and %s differ in %zu bytes", \
		      #a, #b, (size_t)(n))

#endif
