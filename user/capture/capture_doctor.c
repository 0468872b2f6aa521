// SPDX-License-Identifier: MIT
/* The prerequisite checks of `mtrace-user doctor` (see capture_doctor.h). */
#include "capture/capture_doctor.h"

#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture/capture_dev.h"
#include "util/regfile.h"

/* Capability numbers (linux/capability.h). */
#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/*
 * Where the checked files live: "" on a real run, a directory holding a
 * faked /proc, /sys ... in tests (mt_doctor_run_at). Set once per run.
 */
static const char *root = "";

/* ROOT + PATH, in one of a few rotating buffers (a check uses at most two at once). */
static const char *at(const char *path)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", root, path);
	return buf[i];
}

static int exists(const char *path)
{
	return access(at(path), F_OK) == 0;
}

/* Facts gathered once and shared by several checks. */
struct facts {
	int module_loaded;
	int dev_ok;                     /* opened and the ABI matches */
	int simulated;
	int kfunc;                      /* module registered its kfunc */
	unsigned long long cap_eff;
	int kmajor, kminor;
	int signing_enforced;           /* Secure Boot or sig_enforce: only signed modules load */
};

static void set(struct mt_check *c, enum mt_check_status st, const char *fix, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static void set(struct mt_check *c, enum mt_check_status st, const char *fix, const char *fmt,
		...)
{
	va_list ap;

	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
}

/* First line of a small file, without its newline; "" when unreadable. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(at(path), "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

static int read_int(const char *path, int fallback)
{
	char buf[32];

	return *read_line(path, buf, sizeof(buf)) ? atoi(buf) : fallback;
}

const char *mt_doctor_freeze_path(int major, int minor)
{
	int v = major * 1000 + minor;

	if (v >= 6010)
		return "kfunc from uprobe programs (kprobe kfunc hook, 6.10+)";
	if (v >= 6002)
		return "kfunc from uprobe programs (common kfunc hook, 6.2-6.9)";
	return "user-space fallback only (no kfunc for uprobe programs before 6.2)";
}

enum mt_check_status mt_doctor_cpu_verdict(const char *vendor_id, const char *model_name,
					   int has_pt, int hypervisor, char *detail, size_t len)
{
	if (strcmp(vendor_id, "GenuineIntel")) {
		snprintf(detail, len,
			 "this CPU (%s) has no Intel PT; mtrace needs an Intel CPU (Broadwell or later) on bare metal",
			 *model_name ? model_name : vendor_id);
		return MT_CHECK_FAIL;
	}
	if (!has_pt) {
		snprintf(detail, len, "%s: CPUID reports no Intel PT%s", model_name,
			 hypervisor ? " (a hypervisor hides it: run on bare metal or enable PT passthrough)"
				    : " (mtrace needs Broadwell or later)");
		return MT_CHECK_FAIL;
	}
	snprintf(detail, len, "%s with Intel PT%s", model_name,
		 hypervisor ? " (virtualised: PT passthrough is enabled)" : "");
	return MT_CHECK_OK;
}

static void model_name(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "unknown model");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

static void check_cpu(struct mt_check *c, const struct facts *f)
{
	unsigned int a, b, cc, d;
	char vendor[13] = "", model[128];
	int pt = 0, hv = 0;

	c->name = "cpu";
	if (__get_cpuid(0, &a, &b, &cc, &d)) {
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &cc, 4);
		if (a >= 7 && __get_cpuid_count(7, 0, &a, &b, &cc, &d))
			pt = !!(b & (1U << 25));
		if (__get_cpuid(1, &a, &b, &cc, &d))
			hv = !!(cc & (1U << 31));
	}
	model_name(model, sizeof(model));
	c->status = mt_doctor_cpu_verdict(vendor, model, pt, hv, c->detail, sizeof(c->detail));
	c->fix[0] = '\0';
	if (c->status == MT_CHECK_FAIL && f->simulated) {
		/* The simulated backend needs no PT: tests and demos still run. */
		c->status = MT_CHECK_WARN;
		snprintf(c->fix, sizeof(c->fix),
			 "the loaded module simulates PT: captures run, but hold only injected bytes");
	} else if (c->status == MT_CHECK_FAIL) {
		snprintf(c->fix, sizeof(c->fix),
			 "this machine cannot record; 'make demo' runs the whole product in a QEMU guest, bundles recorded on an Intel PT machine decode here ('mtrace-user decode'), and so do perf.data files where this build imports them ('mtrace-user --help')");
	}
}

static void check_module(struct mt_check *c, struct facts *f)
{
	struct mt_dev dev = { .fd = -1 };
	char err[512];

	c->name = "module";
	f->module_loaded = exists("/sys/module/mtrace");
	if (mt_dev_open(&dev, err, sizeof(err))) {
		char disabled[8];

		/* Without module support, modprobe is no advice. */
		if (!f->module_loaded && !exists("/proc/modules"))
			set(c, MT_CHECK_FAIL,
			    "use a kernel built with CONFIG_MODULES=y (Debian's is); without the module, decode bundles recorded elsewhere",
			    "this kernel has no module support (CONFIG_MODULES is off: no /proc/modules): the mtrace module cannot be loaded");
		else if (!f->module_loaded &&
			 !strcmp(read_line("/proc/sys/kernel/modules_disabled", disabled,
					   sizeof(disabled)), "1"))
			set(c, MT_CHECK_FAIL, "reboot (the setting cannot be undone while running), then modprobe mtrace before anything sets it",
			    "module loading is disabled (kernel.modules_disabled=1): the mtrace module cannot be loaded");
		else
			set(c, MT_CHECK_FAIL,
			    f->module_loaded ? "see the error above" :
			    "sudo modprobe mtrace (install it with 'sudo make install' or dkms); a machine without PT can load it with the simulated backend for tests",
			    "%s", err);
		return;
	}
	f->dev_ok = 1;
	f->simulated = !!(dev.caps.flags & MTRACE_CAPS_SIMULATED);
	f->kfunc = !!(dev.caps.flags & MTRACE_CAPS_KFUNC);
	set(c, MT_CHECK_OK, NULL, "mtrace %s loaded (ABI %u), %s", dev.version.module_version,
	    dev.version.abi_version, f->simulated ? "SIMULATED PT backend" : "real PT");
	mt_dev_close(&dev);
}

static void check_device(struct mt_check *c, const struct facts *f)
{
	struct stat st;
	const char *path = mt_dev_path();
	char err[512];
	int e;

	c->name = "device";
	if (stat(path, &st) && !f->module_loaded) {
		set(c, MT_CHECK_INFO, NULL, "%s: not checked (no module)", path);
		return;
	}
	/* Told as record's open tells it: missing, or not mtrace's device. */
	if ((e = mt_dev_check(err, sizeof(err)))) {
		set(c, MT_CHECK_FAIL,
		    e == -ENODEV && strcmp(path, MTRACE_DEVICE) ?
			    "unset MTRACE_DEVICE, or name /dev/mtrace with it" :
		    f->module_loaded ? "mount devtmpfs on /dev" : "load the module",
		    "%s", err);
		return;
	}
	if (access(path, R_OK)) {
		set(c, MT_CHECK_FAIL, "run as root (CAP_PERFMON or CAP_SYS_ADMIN is needed as well)",
		    "%s (mode %04o, uid %u) is not readable by this user", path,
		    (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
		return;
	}
	set(c, MT_CHECK_OK, NULL, "%s mode %04o, readable", path, (unsigned int)(st.st_mode & 07777));
}

static unsigned long long cap_eff(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static int has_cap(const struct facts *f, int bit)
{
	return !!(f->cap_eff & (1ULL << bit));
}

static void check_caps(struct mt_check *c, const struct facts *f)
{
	c->name = "privileges";
	if (has_cap(f, CAP_SYS_ADMIN_BIT))
		set(c, MT_CHECK_OK, NULL, "CAP_SYS_ADMIN: device, BPF, uprobes and --kernel allowed");
	else if (has_cap(f, CAP_PERFMON_BIT) && has_cap(f, CAP_BPF_BIT))
		set(c, MT_CHECK_WARN, "add CAP_SYS_ADMIN for --kernel",
		    "CAP_PERFMON and CAP_BPF: user-space capture allowed, --kernel is not%s",
		    has_cap(f, CAP_SYS_PTRACE_BIT) ? "" : "; only your own processes (no CAP_SYS_PTRACE)");
	else
		set(c, MT_CHECK_FAIL, "run as root, or grant CAP_PERFMON and CAP_BPF (setcap cap_perfmon,cap_bpf+ep)",
		    "neither CAP_SYS_ADMIN nor CAP_PERFMON+CAP_BPF");
}

static void check_kernel(struct mt_check *c, struct facts *f)
{
	struct utsname u;

	c->name = "kernel";
	uname(&u);
	sscanf(u.release, "%d.%d", &f->kmajor, &f->kminor);
	set(c, MT_CHECK_INFO, NULL, "Linux %s: %s", u.release,
	    mt_doctor_freeze_path(f->kmajor, f->kminor));
}

static void check_btf(struct mt_check *c, const struct facts *f)
{
	c->name = "btf";
	if (access(at("/sys/kernel/btf/vmlinux"), R_OK)) {
		set(c, MT_CHECK_FAIL, "use a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's is)",
		    "no /sys/kernel/btf/vmlinux: the BPF trigger programs (CO-RE) cannot load");
		return;
	}
	if (!f->dev_ok) {
		set(c, MT_CHECK_INFO, NULL, "kernel BTF present; module BTF not checked (no module)");
		return;
	}
	if (access(at("/sys/kernel/btf/mtrace"), R_OK))
		set(c, MT_CHECK_WARN, "rebuild the module with pahole installed (package dwarves)",
		    "no /sys/kernel/btf/mtrace: triggers freeze through the user-space fallback (longer skid)");
	else if (!f->kfunc || f->kmajor * 1000 + f->kminor < 6002)
		set(c, MT_CHECK_WARN, NULL,
		    "module BTF present, but the kfunc is not usable from uprobe programs on this kernel: fallback freeze");
	else
		set(c, MT_CHECK_OK, NULL, "module BTF present: triggers freeze through the kfunc");
}

static void check_bpf(struct mt_check *c)
{
	c->name = "uprobes";
	if (!exists("/sys/bus/event_source/devices/uprobe"))
		set(c, MT_CHECK_FAIL, "use a kernel with CONFIG_UPROBE_EVENTS=y",
		    "no uprobe PMU: uprobe, uretprobe and slow: triggers cannot attach");
	else
		set(c, MT_CHECK_OK, NULL, "uprobe PMU present (perf_event_paranoid %d)",
		    read_int("/proc/sys/kernel/perf_event_paranoid", 2));
}

static void check_kernel_tracing(struct mt_check *c, const struct facts *f)
{
	int kptr = read_int("/proc/sys/kernel/kptr_restrict", 1);

	c->name = "kernel-tracing";
	if (kptr >= 2 || (kptr == 1 && !has_cap(f, CAP_SYS_ADMIN_BIT)))
		set(c, MT_CHECK_WARN, "sysctl kernel.kptr_restrict=0 (or 1 and run as root)",
		    "kptr_restrict=%d hides kernel addresses: --kernel traces cannot be symbolized", kptr);
	else if (!exists("/proc/kcore"))
		set(c, MT_CHECK_WARN,
		    "for --kernel, use a kernel built with CONFIG_PROC_KCORE=y; tracing user space is unaffected",
		    "this kernel has no /proc/kcore (CONFIG_PROC_KCORE is off): --kernel cannot copy kernel code for decoding");
	else if (access(at("/proc/kcore"), R_OK))
		set(c, MT_CHECK_WARN, "run as root (reading /proc/kcore needs CAP_SYS_RAWIO)",
		    "/proc/kcore is not readable: --kernel cannot copy kernel code for decoding");
	else
		set(c, MT_CHECK_OK, NULL, "kallsyms addresses visible (kptr_restrict=%d), /proc/kcore readable",
		    kptr);
}

static void check_kprobes(struct mt_check *c)
{
	c->name = "kprobes";
	if (!exists("/sys/bus/event_source/devices/kprobe"))
		set(c, MT_CHECK_WARN, "use uprobe: or slow: triggers, or a kernel built with CONFIG_KPROBES=y",
		    "no kprobe PMU (CONFIG_KPROBES is off): kprobe: triggers cannot attach");
	else
		set(c, MT_CHECK_OK, NULL, "kprobe PMU present: kprobe: triggers can attach");
}

/* The EFI variable SecureBoot: 4 bytes of attributes, then 1 when enabled. */
#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800c3c7780"

static int secure_boot_on(void)
{
	unsigned char v[5];
	FILE *f = fopen(at(SECURE_BOOT_VAR), "re");
	size_t n;

	if (!f)
		return 0;
	n = fread(v, 1, sizeof(v), f);
	fclose(f);
	return n == sizeof(v) && v[4] == 1;
}

static void check_signing(struct mt_check *c, struct facts *f)
{
	char enforce[8], lockdown[128];
	int sb = secure_boot_on();

	c->name = "secure-boot";
	read_line("/sys/module/module/parameters/sig_enforce", enforce, sizeof(enforce));
	read_line("/sys/kernel/security/lockdown", lockdown, sizeof(lockdown));
	/* Lockdown (which Secure Boot turns on) refuses unsigned modules like sig_enforce. */
	f->signing_enforced = !strcmp(enforce, "Y") || strstr(lockdown, "[integrity]") ||
			      strstr(lockdown, "[confidentiality]");
	if (!f->signing_enforced) {
		set(c, MT_CHECK_OK, NULL, "Secure Boot %s; unsigned modules load", sb ? "on" : "off");
		return;
	}
	if (f->module_loaded) {
		set(c, MT_CHECK_OK, NULL, "%smodule signatures enforced; mtrace is loaded, so it is signed",
		    sb ? "Secure Boot on, " : "");
		return;
	}
	set(c, MT_CHECK_FAIL,
	    "let DKMS sign the module with its key and enroll that key: 'sudo mokutil --import /var/lib/dkms/mok.pub', reboot, choose 'Enroll MOK' in the MOK manager, then 'sudo modprobe mtrace'",
	    "%s: the kernel loads only signed modules; an unsigned mtrace.ko is refused",
	    sb ? "Secure Boot is on" : "module signatures are enforced");
}

/* A running `perf ... intel_pt ...` owns PT: the module would refuse to arm. */
static void check_perf(struct mt_check *c)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int owner = 0;

	c->name = "pt-owner";
	while (d && !owner && (de = readdir(d))) {
		char path[64], buf[4096];
		int pid = atoi(de->d_name);
		FILE *f;
		size_t n;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, "intel_pt"))
			owner = pid;
	}
	if (d)
		closedir(d);
	if (owner)
		set(c, MT_CHECK_FAIL, "stop that perf session first: PT has one user at a time",
		    "process %d runs with an intel_pt event: the module will refuse to arm", owner);
	else
		set(c, MT_CHECK_OK, NULL, "no perf session uses intel_pt");
}

int mt_doctor_run(mt_check_report report, void *ctx)
{
	return mt_doctor_run_at("", report, ctx);
}

int mt_doctor_run_at(const char *fs_root, mt_check_report report, void *ctx)
{
	struct facts f = { 0 };
	struct mt_check c;
	int fails = 0;

	root = fs_root;
	f.cap_eff = cap_eff();
	/* The module first: the CPU verdict depends on whether it simulates PT. */
	struct mt_check module = { 0 };

	check_module(&module, &f);
#define RUN(call)                                                       \
	do {                                                            \
		memset(&c, 0, sizeof(c));                               \
		call;                                                   \
		fails += c.status == MT_CHECK_FAIL;                     \
		report(&c, ctx);                                        \
	} while (0)
	RUN(check_cpu(&c, &f));
	RUN(c = module);
	RUN(check_device(&c, &f));
	RUN(check_caps(&c, &f));
	RUN(check_kernel(&c, &f));
	RUN(check_btf(&c, &f));
	RUN(check_signing(&c, &f));
	RUN(check_bpf(&c));
	RUN(check_kprobes(&c));
	RUN(check_perf(&c));
	RUN(check_kernel_tracing(&c, &f));
#undef RUN
	root = "";
	return fails;
}
