// SPDX-License-Identifier: MIT
/*
 * The trigger machinery's kfunc freeze path on a kernel with the module:
 * with the module loaded (and its BTF), mt_trigger_set_open() in AUTO mode
 * must choose the kfunc; a uprobe trigger with hit=3 on a worker thread
 * must freeze the armed snapshot from inside the probe, and the module's
 * trigger record and the BPF record must both name that thread and hit.
 * Re-armed (module and triggers), the same trigger freezes the next
 * snapshot; a kprobe trigger freezes through the kfunc too.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kmod_guest.h"
#include "trigger/trigger.h"

static volatile pid_t worker_tid;

__attribute__((noinline)) long trigger_here(long i)
{
	__asm__ volatile("" : "+r"(i));
	return i + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (long i = 1; i <= 5; i++)
		trigger_here(i);
	return NULL;
}

/* Runs the worker and checks the BPF record and the module's snapshot. */
static void fire_on_worker(int fd, struct mt_trigger_set *set, const char *name,
			   __u32 snapshots)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct mt_trig_event ev = { 0 };
	struct mtrace_status st;
	char what[64];
	pthread_t t;
	int got;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	got = mt_trigger_set_wait(set, 5000, &ev);
	snprintf(what, sizeof(what), "%s-record", name);
	kg_check(what, got == 1 && ev.freeze == MT_TRIG_FREEZE_KFUNC &&
		 ev.freeze_err == 0 && ev.tid == (__u32)worker_tid && ev.value == 3 &&
		 ev.hit == 3 && ev.ip == (unsigned long)trigger_here,
		 "got %d %s freeze %s err %d tid %u (worker %d) value %llu ip %#llx", got,
		 got < 0 ? mt_trigger_set_errmsg(set) : "",
		 mt_trigger_freeze_name(ev.freeze), ev.freeze_err, ev.tid, (int)worker_tid,
		 (unsigned long long)ev.value, (unsigned long long)ev.ip);
	snprintf(what, sizeof(what), "%s-poll", name);
	kg_check(what, poll(&pfd, 1, 5000) == 1, "no POLLIN in 5s");
	st = kg_status(fd);
	snprintf(what, sizeof(what), "%s-froze", name);
	kg_check(what, st.state == MTRACE_STATE_FROZEN && st.snapshots == snapshots &&
		 st.trigger.path == MTRACE_PATH_KFUNC && st.trigger.cookie == 0 &&
		 st.trigger.tid == (__u32)worker_tid && st.trigger.cpu == ev.cpu,
		 "state %u snapshots %u path %u cookie %llu tid %u cpu %u (record cpu %u)",
		 st.state, st.snapshots, st.trigger.path,
		 (unsigned long long)st.trigger.cookie, st.trigger.tid, st.trigger.cpu, ev.cpu);
	snprintf(what, sizeof(what), "%s-one-record", name);
	kg_check(what, mt_trigger_set_records(set) == 1 && mt_trigger_set_hits(set, 0) == 3,
		 "records %zu hits %llu", mt_trigger_set_records(set),
		 (unsigned long long)mt_trigger_set_hits(set, 0));
}

/* kprobe:__x64_sys_getppid on this thread, second hit. */
static void kprobe_trigger(int fd)
{
	struct mt_trigger_options opt = { .pid = getpid() };
	char text[128], err[MT_TRIGGER_ERRLEN] = "";
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct mt_trig_event ev = { 0 };
	struct mt_trigger_set *set = NULL;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct mt_trigger_spec spec;
	struct mtrace_status st;
	int got;

	snprintf(text, sizeof(text), "kprobe:__x64_sys_getppid,tid=%d,hit=2", (int)tid);
	if (mt_trigger_spec_parse(text, &spec, err, sizeof(err))) {
		kg_check("trigger-kfunc-kprobe-load", 0, "%s", err);
		return;
	}
	if (!kg_ioctl(fd, MTRACE_IOC_ARM, NULL))
		mt_trigger_set_open(&set, &spec, 1, &opt, err, sizeof(err));
	if (!kg_check("trigger-kfunc-kprobe-load", set != NULL, "%s", err[0] ? err : "re-arm failed")) {
		mt_trigger_spec_free(&spec);
		return;
	}
	for (int i = 0; i < 3; i++)
		syscall(SYS_getppid);
	got = mt_trigger_set_wait(set, 5000, &ev);
	/* The other CPUs stop asynchronously; poll() says when all did. */
	poll(&pfd, 1, 5000);
	st = kg_status(fd);
	kg_check("trigger-kfunc-kprobe", got == 1 && ev.reason == MT_TRIG_KPROBE &&
		 ev.freeze == MT_TRIG_FREEZE_KFUNC && ev.freeze_err == 0 &&
		 ev.tid == (__u32)tid && ev.hit == 2 && ev.ip != 0 &&
		 st.state == MTRACE_STATE_FROZEN && st.trigger.tid == (__u32)tid &&
		 st.trigger.path == MTRACE_PATH_KFUNC,
		 "got %d reason %u freeze %s err %d tid %u hit %llu state %u", got, ev.reason,
		 mt_trigger_freeze_name(ev.freeze), ev.freeze_err, ev.tid,
		 (unsigned long long)ev.hit, st.state);
	mt_trigger_set_close(set);
	mt_trigger_spec_free(&spec);
}

int main(void)
{
	struct mtrace_config c = kg_config(getpid(), 64 << 10, 4096);
	struct mt_trigger_options opt = { .pid = getpid() };
	char exe[PATH_MAX], text[PATH_MAX + 64], err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_spec spec;
	struct mt_trigger_set *set;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(text, sizeof(text), "uprobe:%s:trigger_here,hit=3", exe);
	if (!kg_check("trigger-kfunc-parse", !mt_trigger_spec_parse(text, &spec, err, sizeof(err)),
		      "%s", err))
		return 1;
	fd = kg_open();
	if (!kg_check("trigger-kfunc-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		      !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno)))
		return 1;
	mt_trigger_set_open(&set, &spec, 1, &opt, err, sizeof(err));
	if (!kg_check("trigger-kfunc-load", set != NULL, "%s", err))
		return 1;
	kg_check("trigger-kfunc-chosen", mt_trigger_set_freeze(set) == MT_TRIG_FREEZE_KFUNC,
		 "freeze path %s: %s", mt_trigger_freeze_name(mt_trigger_set_freeze(set)),
		 mt_trigger_set_freeze_reason(set));
	fire_on_worker(fd, set, "trigger-kfunc", 1);

	/* The next snapshot: re-arm the module, then the triggers. */
	if (kg_check("trigger-kfunc-rearm", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s",
		     strerror(errno))) {
		mt_trigger_set_rearm(set);
		fire_on_worker(fd, set, "trigger-kfunc-second", 2);
	}
	mt_trigger_set_close(set);
	mt_trigger_spec_free(&spec);

	if (access("/sys/bus/event_source/devices/kprobe", F_OK))
		printf("SKIP trigger-kfunc-kprobe: kernel without kprobes\n");
	else
		kprobe_trigger(fd);
	close(fd);
	return kg_failures != 0;
}
