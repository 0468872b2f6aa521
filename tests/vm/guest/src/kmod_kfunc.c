// SPDX-License-Identifier: MIT
/*
 * Freeze from a BPF uprobe program through the mtrace_freeze() kfunc: the
 * program (bpf/freeze_probe.bpf.c) is attached to trigger_point() of this
 * very binary; calling it must freeze the armed snapshot from the probed
 * thread, with the trigger record naming this thread and the probe.
 */
#include <bpf/libbpf.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "freeze_probe.skel.h"
#include "kmod_guest.h"

#define COOKIE	0x6d74726163650001ULL

__attribute__((noinline)) int trigger_point(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

/* Informational: how long after the trigger each CPU stopped (TCG time). */
static void report_skew(int fd, const struct mtrace_status *st)
{
	struct mtrace_caps caps = { 0 };
	struct mtrace_cpu_info ci;
	unsigned int cpu;

	kg_ioctl(fd, MTRACE_IOC_GET_CAPS, &caps);
	for (cpu = 0; cpu < caps.nr_cpu_ids; cpu++)
		if (!kg_cpu(fd, cpu, &ci) && (ci.flags & MTRACE_CPU_RING) &&
		    caps.tsc_khz)
			printf("# cpu %u stopped %lld ns after the trigger%s\n", cpu,
			       (long long)(ci.stop_tsc - st->trigger.tsc) * 1000000 /
			       caps.tsc_khz, cpu == st->trigger.cpu ? " (trigger CPU)" : "");
}

int main(void)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "trigger_point");
	struct mtrace_config c = kg_config(getpid(), 64 << 10, 4096);
	struct freeze_probe_bpf *skel;
	struct bpf_link *link;
	struct pollfd pfd = { .events = POLLIN };
	struct stat sb;
	struct mtrace_status st;
	char exe[PATH_MAX];
	unsigned long fn = (unsigned long)trigger_point;
	ssize_t n;
	int fd;

	libbpf_set_print(print_libbpf);
	if (!kg_check("kmod-kfunc-module-btf", !stat("/sys/kernel/btf/mtrace", &sb),
		      "/sys/kernel/btf/mtrace missing"))
		return 1;
	fd = kg_open();
	pfd.fd = fd;
	if (!kg_check("kmod-kfunc-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		      !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno)))
		return 1;
	skel = freeze_probe_bpf__open();
	if (!skel)
		return kg_check("kmod-kfunc-load", 0, "open failed"), 1;
	skel->rodata->freeze_cookie = COOKIE;
	if (!kg_check("kmod-kfunc-load", !freeze_probe_bpf__load(skel),
		      "verifier or kfunc resolution failed (see stderr)"))
		return 1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	link = bpf_program__attach_uprobe_opts(skel->progs.freeze_on_hit,
					       getpid(), exe, 0, &uo);
	if (!kg_check("kmod-kfunc-attach", link != NULL,
		      "attach to %s:trigger_point failed", exe))
		return 1;
	kg_check("kmod-kfunc-not-yet", kg_status(fd).state == MTRACE_STATE_ARMED,
		 "frozen before the probe fired");
	trigger_point(1);
	/* The other CPUs stop asynchronously; poll() says when all did. */
	kg_check("kmod-kfunc-poll", poll(&pfd, 1, 5000) == 1, "no POLLIN in 5s");
	st = kg_status(fd);
	kg_check("kmod-kfunc-froze", skel->bss->hits == 1 &&
		 skel->data->freeze_result == 0 && st.state == MTRACE_STATE_FROZEN,
		 "hits %u result %d state %u", skel->bss->hits,
		 skel->data->freeze_result, st.state);
	/* On x86 the saved user IP is the probe address or just past int3. */
	kg_check("kmod-kfunc-trigger-record", st.trigger.path == MTRACE_PATH_KFUNC &&
		 st.trigger.cookie == COOKIE &&
		 st.trigger.pid == (__u32)getpid() &&
		 st.trigger.tid == (__u32)syscall(SYS_gettid) &&
		 (st.trigger.ip == fn || st.trigger.ip == fn + 1) &&
		 st.trigger.tsc >= st.arm_tsc,
		 "path %u cookie %#llx tid %u ip %#llx (fn %#lx)", st.trigger.path,
		 (unsigned long long)st.trigger.cookie, st.trigger.tid,
		 (unsigned long long)st.trigger.ip, fn);
	printf("# kfunc trigger ip %#llx, trigger_point %#lx\n",
	       (unsigned long long)st.trigger.ip, fn);
	report_skew(fd, &st);
	trigger_point(2);
	kg_check("kmod-kfunc-first-wins", skel->bss->hits == 2 &&
		 skel->data->freeze_result == -EALREADY &&
		 kg_status(fd).trigger.cookie == COOKIE, "result %d",
		 skel->data->freeze_result);
	bpf_link__destroy(link);
	freeze_probe_bpf__destroy(skel);
	close(fd);
	return kg_failures != 0;
}
