// SPDX-License-Identifier: MIT
/* doctor: the pure verdicts, and a full run on this machine. */
#include "mt_test.h"

#include "capture/capture_doctor.h"

MT_TEST(freeze_path_by_kernel)
{
	MT_ASSERT(strstr(mt_doctor_freeze_path(6, 1), "fallback only"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(5, 19), "fallback only"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(6, 2), "common kfunc hook"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(6, 9), "common kfunc hook"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(6, 10), "kprobe kfunc hook"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(6, 12), "kprobe kfunc hook"));
	MT_ASSERT(strstr(mt_doctor_freeze_path(7, 0), "kprobe kfunc hook"));
}

MT_TEST(cpu_verdicts)
{
	char d[320];

	MT_ASSERT_EQ(mt_doctor_cpu_verdict("AuthenticAMD", "AMD EPYC 7B13", 0, 1, d, sizeof(d)),
		     MT_CHECK_FAIL);
	MT_ASSERT_STREQ(d, "this CPU (AMD EPYC 7B13) has no Intel PT; mtrace needs an Intel CPU (Broadwell or later) on bare metal");
	MT_ASSERT_EQ(mt_doctor_cpu_verdict("GenuineIntel", "Xeon", 0, 1, d, sizeof(d)), MT_CHECK_FAIL);
	MT_ASSERT(strstr(d, "a hypervisor hides it"));
	MT_ASSERT_EQ(mt_doctor_cpu_verdict("GenuineIntel", "Core i7-4770", 0, 0, d, sizeof(d)),
		     MT_CHECK_FAIL);
	MT_ASSERT(strstr(d, "Broadwell or later"));
	MT_ASSERT_EQ(mt_doctor_cpu_verdict("GenuineIntel", "Core i7-8700", 1, 0, d, sizeof(d)),
		     MT_CHECK_OK);
}

struct tally {
	int n, fails, cpu_seen, module_seen;
};

static void count(const struct mt_check *c, void *ctx)
{
	struct tally *t = ctx;

	t->n++;
	t->fails += c->status == MT_CHECK_FAIL;
	MT_ASSERT(c->name && c->detail[0]);
	if (c->status == MT_CHECK_FAIL)
		MT_ASSERT_MSG(c->fix[0], "check %s fails without a fix", c->name);
	t->cpu_seen |= !strcmp(c->name, "cpu");
	t->module_seen |= !strcmp(c->name, "module");
}

MT_TEST(run_reports_every_check)
{
	struct tally t = { 0 };
	int fails = mt_doctor_run(count, &t);

	MT_ASSERT_EQ(fails, t.fails);
	MT_ASSERT(t.n >= 9);
	MT_ASSERT(t.cpu_seen && t.module_seen);
}
