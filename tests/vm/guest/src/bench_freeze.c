// SPDX-License-Identifier: MIT
/*
 * Freeze latency benchmark (informational, not a test): a uprobe trigger
 * fires ROUNDS times through each freeze path of the simulated backend:
 *  - kfunc: the BPF program calls mtrace_freeze() inside the probe;
 *  - fallback: the BPF program posts a ring-buffer record, this program
 *    wakes up and issues MTRACE_IOC_FREEZE (what capture does without the
 *    kfunc).
 * For each freeze it reads the trigger TSC (GET_STATUS) and every CPU's
 * stop TSC (GET_CPU) and reports, as medians and maxima:
 *  - hit -> hit's CPU stopped: how long the triggering thread's CPU kept
 *    tracing past the trigger (the trace a user sees after the event);
 *  - hit -> last CPU stopped: from the probe hit (the BPF record's
 *    CLOCK_MONOTONIC time) to the last CPU's stop TSC, mapped to
 *    CLOCK_MONOTONIC through the arm-time TSC/ns pair: the figure that
 *    compares the paths;
 *  - trigger TSC -> last CPU stopped: the module's own part (for the
 *    fallback path the trigger TSC is taken in the ioctl).
 * Figures are plain "RESULT" lines (the rig counts only PASS/FAIL/SKIP);
 * one PASS bench-freeze-ran says the measurement ran. Times are TCG times:
 * an emulated CPU, orders of magnitude slower than hardware.
 */
#include <limits.h>
#include <poll.h>

#include "kmod_guest.h"
#include "trigger/trigger.h"

#define ROUNDS 100

__attribute__((noinline)) long freeze_here(long i)
{
	__asm__ volatile("" : "+r"(i));
	return i + 1;
}

struct lat {
	double hit_to_own[ROUNDS];	/* ns, to the stop of the hit's CPU */
	double hit_to_stop[ROUNDS];	/* ns */
	double trig_to_stop[ROUNDS];	/* ns */
	int n;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *path, const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("RESULT freeze %s: %s (VM, TCG)|median %.1f us, max %.1f us|(info)|met\n", path,
	       what, v[n / 2] / 1e3, v[n - 1] / 1e3);
}

/* One freeze after a fired trigger: reads the stop times into L. */
static int measure(int fd, const struct mtrace_caps *caps, const struct mt_trig_event *ev,
		   __u32 path, struct lat *l, char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct mtrace_status st;
	__u64 last = 0, own = 0;
	double ns_per_tsc = 1e6 / caps->tsc_khz;

	/* The other CPUs stop asynchronously; POLLIN says when all did. */
	if (poll(&pfd, 1, 5000) != 1) {
		snprintf(err, errlen, "no POLLIN within 5 s");
		return -1;
	}
	st = kg_status(fd);
	if (st.state != MTRACE_STATE_FROZEN || st.trigger.path != path) {
		snprintf(err, errlen, "state %u path %u, expected frozen by path %u", st.state,
			 st.trigger.path, path);
		return -1;
	}
	for (unsigned int cpu = 0; cpu < caps->nr_cpu_ids; cpu++) {
		struct mtrace_cpu_info ci;

		if (kg_cpu(fd, cpu, &ci) || !(ci.flags & MTRACE_CPU_RING))
			continue;
		if (ci.stop_tsc > last)
			last = ci.stop_tsc;
		if (cpu == ev->cpu)
			own = ci.stop_tsc;
	}
	if (last < st.trigger.tsc || last < st.arm_tsc || own < st.arm_tsc) {
		snprintf(err, errlen, "last stop TSC %llu before the trigger %llu",
			 (unsigned long long)last, (unsigned long long)st.trigger.tsc);
		return -1;
	}
	l->trig_to_stop[l->n] = (double)(last - st.trigger.tsc) * ns_per_tsc;
	l->hit_to_stop[l->n] = (double)st.arm_ns + (double)(last - st.arm_tsc) * ns_per_tsc -
			       (double)ev->time_ns;
	l->hit_to_own[l->n] = (double)st.arm_ns + (double)(own - st.arm_tsc) * ns_per_tsc -
			      (double)ev->time_ns;
	l->n++;
	return 0;
}

/* ROUNDS freezes through one path; 0 or -1 with a message. */
static int run_path(int fd, const struct mtrace_caps *caps, const struct mt_trigger_spec *spec,
		    enum mt_trigger_freeze_pref pref, struct lat *l, char *err, size_t errlen)
{
	struct mt_trigger_options opt = { .pid = getpid(), .freeze = pref };
	enum mt_trig_freeze want = pref == MT_TRIGGER_FREEZE_AUTO ? MT_TRIG_FREEZE_KFUNC
								   : MT_TRIG_FREEZE_NOTIFY;
	__u32 path = want == MT_TRIG_FREEZE_KFUNC ? MTRACE_PATH_KFUNC : MTRACE_PATH_FALLBACK;
	struct mt_trigger_set *set;
	int rc = 0;

	if (kg_ioctl(fd, MTRACE_IOC_ARM, NULL)) {
		snprintf(err, errlen, "arm: %s", strerror(errno));
		return -1;
	}
	mt_trigger_set_open(&set, spec, 1, &opt, err, errlen);
	if (!set)
		return -1;
	if (mt_trigger_set_freeze(set) != want) {
		snprintf(err, errlen, "freeze path %s, wanted %s: %s",
			 mt_trigger_freeze_name(mt_trigger_set_freeze(set)),
			 mt_trigger_freeze_name(want), mt_trigger_set_freeze_reason(set));
		rc = -1;
	}
	l->n = 0;
	for (int i = 0; i < ROUNDS && !rc; i++) {
		struct mt_trig_event ev;
		int got;

		if (i && (kg_ioctl(fd, MTRACE_IOC_ARM, NULL) ||
			  (mt_trigger_set_rearm(set), 0))) {
			snprintf(err, errlen, "re-arm: %s", strerror(errno));
			rc = -1;
			break;
		}
		freeze_here(i);
		got = mt_trigger_set_wait(set, 5000, &ev);
		if (got != 1) {
			snprintf(err, errlen, "%s", got < 0 ? mt_trigger_set_errmsg(set)
							    : "no trigger record within 5 s");
			rc = -1;
			break;
		}
		/* The fallback: user space freezes once it saw the record. */
		if (path == MTRACE_PATH_FALLBACK && kg_freeze(fd, MTRACE_PATH_FALLBACK, (__u64)i)) {
			snprintf(err, errlen, "FREEZE: %s", strerror(errno));
			rc = -1;
			break;
		}
		rc = measure(fd, caps, &ev, path, l, err, errlen);
	}
	mt_trigger_set_close(set);
	return rc;
}

int main(void)
{
	struct mtrace_config c = kg_config(getpid(), 64 << 10, 4096);
	char exe[PATH_MAX], text[PATH_MAX + 64], err[MT_TRIGGER_ERRLEN] = "";
	static struct lat kf, fb;
	struct mtrace_caps caps = { 0 };
	struct mt_trigger_spec spec;
	ssize_t n;
	int fd, rc;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(text, sizeof(text), "uprobe:%s:freeze_here", exe);
	if (mt_trigger_spec_parse(text, &spec, err, sizeof(err))) {
		printf("FAIL bench-freeze-ran: %s\n", err);
		return 1;
	}
	fd = kg_open();
	if (kg_ioctl(fd, MTRACE_IOC_GET_CAPS, &caps) || !caps.tsc_khz ||
	    kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c)) {
		printf("FAIL bench-freeze-ran: caps or configuration: %s (tsc_khz %u)\n",
		       strerror(errno), caps.tsc_khz);
		return 1;
	}
	rc = run_path(fd, &caps, &spec, MT_TRIGGER_FREEZE_AUTO, &kf, err, sizeof(err));
	if (!rc)
		rc = run_path(fd, &caps, &spec, MT_TRIGGER_FREEZE_PREFER_NOTIFY, &fb, err,
			      sizeof(err));
	mt_trigger_spec_free(&spec);
	close(fd);
	if (rc) {
		printf("FAIL bench-freeze-ran: %s (after %d kfunc, %d fallback freezes)\n", err, kf.n,
		       fb.n);
		return 1;
	}
	printf("%d freezes per path, 2 vCPUs, simulated backend\n", ROUNDS);
	report("kfunc", "hit -> hit's CPU stopped", kf.hit_to_own, kf.n);
	report("fallback", "hit -> hit's CPU stopped", fb.hit_to_own, fb.n);
	report("kfunc", "hit -> last CPU stopped", kf.hit_to_stop, kf.n);
	report("fallback", "hit -> last CPU stopped", fb.hit_to_stop, fb.n);
	report("kfunc", "trigger TSC -> last CPU stopped", kf.trig_to_stop, kf.n);
	report("fallback", "FREEZE ioctl TSC -> last CPU stopped", fb.trig_to_stop, fb.n);
	printf("PASS bench-freeze-ran\n");
	return 0;
}
