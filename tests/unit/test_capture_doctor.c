// SPDX-License-Identifier: MIT
/* doctor: the pure verdicts, and a full run on this machine. */
#include "mt_test.h"

#include "capture/capture_doctor.h"

#include <stdlib.h>
#include <unistd.h>

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

/* ---- a faked machine: the kernel's files under a test root ---- */

struct seen {
	struct mt_check checks[32];
	int n;
};

static void keep(const struct mt_check *c, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 32)
		s->checks[s->n++] = *c;
}

static const struct mt_check *find(const struct seen *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->checks[i].name, name))
			return &s->checks[i];
	mt_fail(__FILE__, __LINE__, "no check named %s", name);
}

static char fake_root[64];

/* A root with the files every machine has; each case adds or removes some. */
static void fake_machine(void)
{
	snprintf(fake_root, sizeof(fake_root), "/tmp/mt-doctor-XXXXXX");
	MT_ASSERT(mkdtemp(fake_root));
}

static void fake_file(const char *path, const void *data, size_t len)
{
	char full[256], cmd[320];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", fake_root, path);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", full);
	MT_ASSERT_EQ(system(cmd), 0);
	f = fopen(full, "w");
	MT_ASSERT(f);
	MT_ASSERT_EQ(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void fake_text(const char *path, const char *text)
{
	fake_file(path, text, strlen(text));
}

static void fake_run(struct seen *s)
{
	char cmd[96];

	memset(s, 0, sizeof(*s));
	mt_doctor_run_at(fake_root, keep, s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fake_root);
	MT_ASSERT_EQ(system(cmd), 0);
}

/* The module checks assume no working /dev/mtrace here (the device is not faked). */
static void need_no_device(void)
{
	if (access("/dev/mtrace", F_OK) == 0)
		mt_skip("this machine has /dev/mtrace: the module check sees the real module");
}

MT_TEST(fake_kernel_without_module_support)
{
	struct seen s;
	const struct mt_check *c;

	need_no_device();
	fake_machine();
	fake_run(&s);
	c = find(&s, "module");
	MT_ASSERT_EQ(c->status, MT_CHECK_FAIL);
	MT_ASSERT_MSG(strstr(c->detail, "no module support (CONFIG_MODULES is off"), "%s", c->detail);
	MT_ASSERT_MSG(!strstr(c->fix, "modprobe"), "%s", c->fix);
}

MT_TEST(fake_kernel_with_modules_disabled)
{
	struct seen s;
	const struct mt_check *c;

	need_no_device();
	fake_machine();
	fake_text("/proc/modules", "");
	fake_text("/proc/sys/kernel/modules_disabled", "1\n");
	fake_run(&s);
	c = find(&s, "module");
	MT_ASSERT_MSG(strstr(c->detail, "kernel.modules_disabled=1"), "%s", c->detail);
	MT_ASSERT_MSG(strstr(c->fix, "reboot"), "%s", c->fix);
}

MT_TEST(fake_kernel_module_not_loaded)
{
	struct seen s;
	const struct mt_check *c;

	need_no_device();
	fake_machine();
	fake_text("/proc/modules", "");
	fake_text("/proc/sys/kernel/modules_disabled", "0\n");
	fake_run(&s);
	c = find(&s, "module");
	MT_ASSERT_EQ(c->status, MT_CHECK_FAIL);
	MT_ASSERT_MSG(strstr(c->fix, "modprobe mtrace"), "%s", c->fix);
}

MT_TEST(fake_kernel_without_kcore)
{
	struct seen s;
	const struct mt_check *c;

	fake_machine();
	fake_text("/proc/sys/kernel/kptr_restrict", "0\n");
	fake_run(&s);
	c = find(&s, "kernel-tracing");
	MT_ASSERT_EQ(c->status, MT_CHECK_WARN);
	MT_ASSERT_MSG(strstr(c->detail, "no /proc/kcore (CONFIG_PROC_KCORE is off)"), "%s", c->detail);
	MT_ASSERT_MSG(!strstr(c->fix, "run as root"), "%s", c->fix);

	fake_machine();
	fake_text("/proc/sys/kernel/kptr_restrict", "0\n");
	fake_text("/proc/kcore", "");
	fake_run(&s);
	c = find(&s, "kernel-tracing");
	MT_ASSERT_MSG(!strstr(c->detail, "CONFIG_PROC_KCORE"), "%s", c->detail);
}

MT_TEST(fake_kernel_kprobes)
{
	struct seen s;
	const struct mt_check *c;

	fake_machine();
	fake_run(&s);
	c = find(&s, "kprobes");
	MT_ASSERT_EQ(c->status, MT_CHECK_WARN);
	MT_ASSERT_MSG(strstr(c->detail, "kprobe: triggers cannot attach"), "%s", c->detail);

	fake_machine();
	fake_text("/sys/bus/event_source/devices/kprobe/type", "6\n");
	fake_run(&s);
	MT_ASSERT_EQ(find(&s, "kprobes")->status, MT_CHECK_OK);
}

MT_TEST(fake_secure_boot_enforcing_signatures)
{
	static const unsigned char on[5] = { 0x06, 0, 0, 0, 1 }, off[5] = { 0x06, 0, 0, 0, 0 };
	struct seen s;
	const struct mt_check *c;

	need_no_device();
	fake_machine();
	fake_file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800c3c7780", on, 5);
	fake_text("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	fake_run(&s);
	c = find(&s, "secure-boot");
	MT_ASSERT_EQ(c->status, MT_CHECK_FAIL);
	MT_ASSERT_MSG(strstr(c->detail, "Secure Boot is on"), "%s", c->detail);
	MT_ASSERT_MSG(strstr(c->fix, "mokutil --import /var/lib/dkms/mok.pub") &&
		      strstr(c->fix, "Enroll MOK"), "%s", c->fix);

	/* Enforced signatures without Secure Boot. */
	fake_machine();
	fake_file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800c3c7780", off, 5);
	fake_text("/sys/module/module/parameters/sig_enforce", "Y\n");
	fake_run(&s);
	c = find(&s, "secure-boot");
	MT_ASSERT_EQ(c->status, MT_CHECK_FAIL);
	MT_ASSERT_MSG(strstr(c->detail, "module signatures are enforced"), "%s", c->detail);

	/* Secure Boot on without lockdown or enforcement: unsigned modules still load. */
	fake_machine();
	fake_file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800c3c7780", on, 5);
	fake_text("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	fake_run(&s);
	c = find(&s, "secure-boot");
	MT_ASSERT_EQ(c->status, MT_CHECK_OK);
	MT_ASSERT_MSG(strstr(c->detail, "Secure Boot on"), "%s", c->detail);
}

/* Without PT, the fix names what works here instead of only "use Intel". */
MT_TEST(no_pt_says_what_to_do_instead)
{
	struct seen s;
	const struct mt_check *c;

	fake_machine();
	fake_run(&s);
	c = find(&s, "cpu");
	if (c->status == MT_CHECK_OK)
		mt_skip("this CPU has Intel PT");
	MT_ASSERT_MSG(strstr(c->fix, "make demo") && strstr(c->fix, "mtrace-user decode") &&
		      strstr(c->fix, "perf.data"), "%s", c->fix);
}
