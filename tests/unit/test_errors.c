// SPDX-License-Identifier: MIT
/*
 * The error convention across libmtrace (docs/development.md, Errors): a
 * failing call returns a negative errno and leaves a one-line message in
 * the caller's buffer (constructors, one-shot calls) or in its handle.
 * Checked here for the components whose own tests look at messages only;
 * the bundle, kcore, sym and Perfetto writer tests check codes as well.
 */
#include "../lib/mt_test.h"

#include "bundle/bundle.h"
#include "decode/decode.h"
#include "perfetto/pf_writer.h"
#include "trigger/trigger.h"
#include "util/errmsg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A finished bundle holding the sections the caller writes in FILL. */
static struct mt_bundle_reader *bundle_with(void (*fill)(struct mt_bundle_writer *w))
{
	char path[] = "/tmp/mt-errors-XXXXXX", err[256] = "";
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	close(fd);
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)) == 0, "%s", err);
	if (fill)
		fill(w);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	return r;
}

static void amd_cpu(struct mt_bundle_writer *w)
{
	struct mt_bundle_cpu_desc cpu = { .size = sizeof(cpu), .vendor = MT_BUNDLE_VENDOR_UNKNOWN,
					  .vendor_id = "AuthenticAMD" };
	struct mt_bundle_pt_config_desc pt = { .size = sizeof(pt) };

	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &pt), 0);
}

/* An Intel CPU whose PT was recorded without TNT packets (perf's notnt). */
static void pt_without_tnt(struct mt_bundle_writer *w)
{
	struct mt_bundle_cpu_desc cpu = { .size = sizeof(cpu), .vendor = MT_BUNDLE_VENDOR_INTEL,
					  .vendor_id = "GenuineIntel", .family = 6, .model = 0x8f };
	struct mt_bundle_pt_config_desc pt = { .size = sizeof(pt),
					       .rtit_ctl = MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_USER |
							   MT_RTIT_CTL_BRANCHEN | MT_RTIT_CTL_DISTNT };

	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &pt), 0);
}

/* mt_decode_open() on a bundle holding what FILL writes fails with -E and WANT. */
static void decode_open_fails(void (*fill)(struct mt_bundle_writer *w), int e, const char *want)
{
	struct mt_bundle_reader *r = bundle_with(fill);
	struct mt_decode *d = (struct mt_decode *)1;
	char err[256] = "";

	MT_ASSERT_EQ(mt_decode_open(&d, r, NULL, err, sizeof(err)), -e);
	MT_ASSERT(d == NULL);
	MT_ASSERT_STREQ(err, want);
	mt_bundle_close(r);
}

MT_TEST(decode_open_without_a_cpu_section_is_enoent)
{
	decode_open_fails(NULL, ENOENT, "the bundle has no cpu section: it cannot be decoded");
}

MT_TEST(decode_open_of_a_non_intel_cpu_is_enotsup)
{
	decode_open_fails(amd_cpu, ENOTSUP,
			  "bundle CPU vendor \"AuthenticAMD\" (0) is not Intel: no PT to decode");
}

MT_TEST(decode_open_of_pt_without_tnt_is_enotsup)
{
	decode_open_fails(pt_without_tnt, ENOTSUP,
			  "the PT was recorded with RTIT_CTL 0x80000000002009: RTIT_CTL.DisTNT is set "
			  "(perf's notnt): without TNT packets conditional branches cannot be followed");
}

MT_TEST(trigger_spec_errors_are_einval)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN] = "";

	MT_ASSERT_EQ(mt_trigger_spec_parse("", &s, err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "empty trigger spec");
	MT_ASSERT_EQ(mt_trigger_spec_parse("uprobe", &s, err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "trigger 'uprobe': column 1 ('uprobe'): expected KIND:... "
			     "(uprobe, uretprobe, kprobe or slow)");
	/* Without a buffer the code alone says it. */
	MT_ASSERT_EQ(mt_trigger_spec_parse("slow:/bin/true:main", &s, NULL, 0), -EINVAL);
}

MT_TEST(trigger_resolve_passes_the_system_error_on)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN] = "";
	uint64_t off;

	MT_ASSERT_EQ(mt_trigger_spec_parse("uprobe:/nonexistent/app:main", &s, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_trigger_resolve(&s, &off, err, sizeof(err)), -ENOENT);
	MT_ASSERT_STREQ(err, "cannot open /nonexistent/app: No such file or directory");
	mt_trigger_spec_free(&s);
	MT_ASSERT_EQ(mt_trigger_spec_parse("uprobe:/proc/self/exe:no_such_function_here", &s, err,
					   sizeof(err)), 0);
	MT_ASSERT_EQ(mt_trigger_resolve(&s, &off, err, sizeof(err)), -ENOENT);
	MT_ASSERT(!strncmp(err, "function 'no_such_function_here' not found in /proc/self/exe",
			   strlen("function 'no_such_function_here' not found in /proc/self/exe")));
	mt_trigger_spec_free(&s);
}

MT_TEST(trigger_set_open_fails_without_a_set)
{
	struct mt_trigger_set *set = (struct mt_trigger_set *)1;
	char err[MT_TRIGGER_ERRLEN] = "";

	MT_ASSERT_EQ(mt_trigger_set_open(&set, NULL, 0, NULL, err, sizeof(err)), -EINVAL);
	MT_ASSERT(set == NULL);
	MT_ASSERT_STREQ(err, "between 1 and 8 triggers can be armed at once, not 0");
}

/* The writer's codes are errno values, each its own, each named. */
MT_TEST(perfetto_codes_are_distinct_errnos)
{
	static const int codes[] = { PF_EINVAL, PF_EORDER, PF_ENOFRAME, PF_EINFERRED,
				     PF_EEXIST, PF_ENOPROC, PF_ENOMEM, PF_EIO };
	const size_t n = sizeof(codes) / sizeof(codes[0]);

	for (size_t i = 0; i < n; i++) {
		MT_ASSERT(codes[i] > 0);
		MT_ASSERT(strcmp(pf_strerror(-codes[i]), "unknown error"));
		MT_ASSERT_STREQ(pf_strerror(-codes[i]), pf_strerror(codes[i]));
		for (size_t j = 0; j < i; j++)
			MT_ASSERT(codes[i] != codes[j]);
	}
	MT_ASSERT_EQ(PF_ENOMEM, ENOMEM);
	MT_ASSERT_EQ(PF_EIO, EIO);
	MT_ASSERT_EQ(PF_EINVAL, EINVAL);
}

MT_TEST(errmsg_fills_an_optional_buffer)
{
	char err[8];

	MT_ASSERT_EQ(mt_errmsg(NULL, 0, EBADMSG, "ignored %d", 1), -EBADMSG);
	MT_ASSERT_EQ(mt_errmsg(err, sizeof(err), ENOMEM, "out of %s", "memory"), -ENOMEM);
	MT_ASSERT_STREQ(err, "out of ");	/* truncated to the buffer, terminated */
	MT_ASSERT_EQ(mt_errmsg(err, sizeof(err), 0, "errno was 0"), -EIO);
	MT_ASSERT_EQ(mt_errmsg(err, sizeof(err), -ENOENT, "negated twice"), -EIO);
}
