// SPDX-License-Identifier: MIT
/*
 * Test driver for the trigger machinery (tests/host/triggers.sh): arms
 * SPECs on a running process through libmtrace's trigger API, optionally
 * kicks it with SIGUSR1, and reports what fired as key=value lines:
 *
 *   freeze=PATH why=...        the freeze path chosen at load
 *   fired spec=I kind=K pid=P tid=T cpu=C ip=0x.. value=V hit=H freeze=PATH
 *         freeze_err=E latency_us=L
 *   stopped=1                  (sigstop) the triggering thread was stopped
 *   nofire                     the process exited (or -t passed) first
 *   records=N hits=H0,H1,...   after the process exited
 *
 * usage: trigger_driver [-f auto|notify|sigstop] [-t MS] [-k] [-s] -p PID SPEC...
 *   -k  send SIGUSR1 to PID once armed     -s  leave a stopped target stopped
 */
#include "trigger/trigger.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* State letter of thread TID of PID from /proc, or '?'. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

static int wait_stopped(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 200; i++) {
		if (thread_state(pid, tid) == 'T')
			return 1;
		usleep(10000);
	}
	return 0;
}

static void report(const struct mt_trig_event *ev)
{
	printf("fired spec=%u kind=%s pid=%u tid=%u cpu=%u ip=0x%llx value=%lld hit=%llu "
	       "freeze=%s freeze_err=%d latency_us=%llu\n", ev->spec,
	       mt_trigger_kind_name(ev->reason), ev->pid, ev->tid, ev->cpu,
	       (unsigned long long)ev->ip, (long long)ev->value, (unsigned long long)ev->hit,
	       mt_trigger_freeze_name(ev->freeze), ev->freeze_err,
	       (unsigned long long)((now_ns() - ev->time_ns) / 1000));
}

static int usage(void)
{
	fprintf(stderr, "usage: trigger_driver [-f auto|notify|sigstop] [-t MS] [-k] [-s] "
		"-p PID SPEC...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct mt_trigger_options opt = { .freeze = MT_TRIGGER_FREEZE_AUTO };
	struct mt_trigger_spec specs[MT_TRIG_MAX_SPECS];
	char err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_set *set;
	struct mt_trig_event ev;
	bool kick = false, leave_stopped = false, fired = false;
	int timeout_ms = 30000, c, n = 0, pidfd, rc = 1;
	uint64_t deadline;

	while ((c = getopt(argc, argv, "f:t:ksp:")) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "notify"))
				opt.freeze = MT_TRIGGER_FREEZE_PREFER_NOTIFY;
			else if (!strcmp(optarg, "sigstop"))
				opt.freeze = MT_TRIGGER_FREEZE_PREFER_SIGSTOP;
			else if (strcmp(optarg, "auto"))
				return usage();
			break;
		case 't': timeout_ms = atoi(optarg); break;
		case 'k': kick = true; break;
		case 's': leave_stopped = true; break;
		case 'p': opt.pid = atoi(optarg); break;
		default: return usage();
		}
	}
	if (opt.pid <= 0 || optind == argc || argc - optind > MT_TRIG_MAX_SPECS)
		return usage();
	for (int i = optind; i < argc; i++, n++) {
		if (mt_trigger_spec_parse(argv[i], &specs[n], err, sizeof(err))) {
			fprintf(stderr, "trigger_driver: %s\n", err);
			goto out;
		}
	}
	pidfd = (int)syscall(SYS_pidfd_open, opt.pid, 0);
	if (pidfd < 0) {
		fprintf(stderr, "trigger_driver: pid %d: %s\n", opt.pid, strerror(errno));
		goto out;
	}
	mt_trigger_set_open(&set, specs, n, &opt, err, sizeof(err));
	if (!set) {
		fprintf(stderr, "trigger_driver: %s\n", err);
		close(pidfd);
		goto out;
	}
	printf("freeze=%s why=%s\n", mt_trigger_freeze_name(mt_trigger_set_freeze(set)),
	       mt_trigger_set_freeze_reason(set));
	fflush(stdout);
	if (kick)
		kill(opt.pid, SIGUSR1);

	deadline = now_ns() + (uint64_t)timeout_ms * 1000000;
	for (bool exited = false; !exited && now_ns() < deadline;) {
		struct pollfd pfd[2] = { { mt_trigger_set_fd(set), POLLIN, 0 },
					 { pidfd, POLLIN, 0 } };

		if (poll(pfd, 2, (int)((deadline - now_ns()) / 1000000) + 1) < 0 && errno != EINTR)
			break;
		exited = pfd[1].revents & POLLIN;
		/* Drain after exit too: the record may be just behind it. */
		if (!fired && mt_trigger_set_wait(set, 0, &ev) > 0) {
			fired = true;
			report(&ev);
			if (ev.freeze == MT_TRIG_FREEZE_SIGSTOP) {
				printf("stopped=%d\n", wait_stopped(ev.pid, ev.tid));
				if (leave_stopped)
					break;
				kill(ev.pid, SIGCONT);
			}
		}
		fflush(stdout);
		if (exited) {
			printf("%srecords=%zu hits=", fired ? "" : "nofire\n",
			       mt_trigger_set_records(set));
			for (int i = 0; i < n; i++)
				printf("%s%llu", i ? "," : "",
				       (unsigned long long)mt_trigger_set_hits(set, i));
			printf("\n");
		}
	}
	if (!fired && now_ns() >= deadline)
		printf("nofire timeout\n");
	rc = 0;
	mt_trigger_set_close(set);
	close(pidfd);
out:
	for (int i = 0; i < n; i++)
		mt_trigger_spec_free(&specs[i]);
	return rc;
}
