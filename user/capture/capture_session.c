// SPDX-License-Identifier: MIT
/*
 * The record workflow: configure, start the target, arm, wait for the
 * snapshot, collect, re-arm for the next one, and always leave the target
 * running and untraced.
 *
 * Waiting is one poll() over the device (readable once frozen, whatever
 * froze it), the trigger set's ring buffer (which trigger fired, and the
 * request to freeze when the kfunc was not usable), a signalfd for
 * SIGINT/SIGTERM/SIGHUP (last snapshot), SIGUSR1 (a snapshot, then re-arm)
 * and SIGCHLD (ptrace stops and exits of the target; see
 * capture_target.h). A pidfd joins when ptrace was refused.
 */
#include "capture/capture.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "capture/capture_collect.h"
#include "capture/capture_dev.h"
#include "capture/capture_preflight.h"
#include "capture/capture_procfs.h"
#include "capture/capture_target.h"
#include "trigger/trigger.h"
#include "util/reporter.h"
#include "util/util.h"

/* Bound for the FREEZING -> FROZEN step (the module IPIs the other CPUs). */
#define FREEZE_WAIT_MS 5000
/* Bound for the trigger record that follows a kfunc freeze (same BPF run). */
#define TRIGGER_RECORD_WAIT_MS 1000

enum wake {
	WAKE_FROZEN,                    /* the module froze (kfunc trigger) */
	WAKE_TRIGGER,                   /* a trigger fired; user space may have to freeze */
	WAKE_SIGNAL,                    /* Ctrl-C and friends: snapshot, then stop */
	WAKE_SNAPSHOT_REQUEST,          /* SIGUSR1: snapshot, then re-arm */
	WAKE_EXITING,                   /* target held at exit */
	WAKE_GONE,                      /* target exited, not held */
	WAKE_ERROR,
};

struct session {
	const struct mt_capture_opts *o;
	struct mt_dev dev;
	struct mt_target target;
	int have_target;
	int sigfd;
	struct mt_trigger_spec specs[MT_TRIG_MAX_SPECS];
	size_t nspecs;
	struct mt_trigger_set *trig;
	struct mt_trig_event ev;        /* the last trigger record */
	struct mt_thread_list seen;     /* the target's threads and names while armed */
	struct mt_preflight plan;       /* what the checks before arming found */
	int usage;                      /* the failed check was the command line's fault */
	const struct mt_reporter *rep;
	char err[MT_CAPTURE_ERRLEN];
};

/* How often the target's thread names are read while armed. */
#define NAMES_POLL_MS 200

static void msg(const struct session *s, enum mt_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void msg(const struct session *s, enum mt_severity sev, const char *fmt, ...)
{
	va_list ap;

	if (s->o->quiet)
		return;
	va_start(ap, fmt);
	mt_vreport(s->rep, sev, fmt, ap);
	va_end(ap);
}

/* The signals the session waits for on its signalfd (see the top). */
static void session_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGUSR1);
}

/*
 * Puts back the caller's signal mask. Those of SET that arrived after the
 * session stopped reading them were meant for it (a second Ctrl-C during
 * collection, a late SIGUSR1): they are consumed, not delivered, unless the
 * caller had them blocked already.
 */
static void restore_signals(const sigset_t *set, const sigset_t *old)
{
	const struct timespec now = { 0, 0 };
	sigset_t drain = *set;

	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(old, sig) == 1)
			sigdelset(&drain, sig);
	while (sigtimedwait(&drain, NULL, &now) > 0)
		;
	sigprocmask(SIG_SETMASK, old, NULL);
}

static enum wake wait_event(struct session *s)
{
	for (;;) {
		struct pollfd p[4] = {
			{ .fd = s->dev.fd, .events = POLLIN },
			{ .fd = s->sigfd, .events = POLLIN },
			{ .fd = s->have_target ? s->target.pidfd : -1, .events = POLLIN },
			{ .fd = s->trig ? mt_trigger_set_fd(s->trig) : -1, .events = POLLIN },
		};

		int n = poll(p, 4, s->have_target ? NAMES_POLL_MS : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(s->err, sizeof(s->err), "poll: %s", strerror(errno));
			return WAKE_ERROR;
		}
		/* Names are only read at collection: remember those of threads
		 * that may exit before it (a gone target is no error here). */
		if (n == 0 && mt_threads_remember(&s->seen, s->target.pid, __rdtsc()) == -ENOMEM) {
			snprintf(s->err, sizeof(s->err), "out of memory reading /proc");
			return WAKE_ERROR;
		}
		if (p[0].revents & POLLIN)
			return WAKE_FROZEN;
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			snprintf(s->err, sizeof(s->err), "the mtrace device reported an error while armed");
			return WAKE_ERROR;
		}
		if (p[3].revents & POLLIN) {
			int r = mt_trigger_set_wait(s->trig, 0, &s->ev);

			if (r < 0) {
				snprintf(s->err, sizeof(s->err), "%s", mt_trigger_set_errmsg(s->trig));
				return WAKE_ERROR;
			}
			if (r > 0)
				return WAKE_TRIGGER;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(s->sigfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGUSR1)
				return WAKE_SNAPSHOT_REQUEST;
			if (si.ssi_signo != SIGCHLD)
				return WAKE_SIGNAL;
		}
		if (s->have_target) {
			enum mt_target_event ev = mt_target_poll(&s->target);

			if (ev == MT_TARGET_EXITING)
				return WAKE_EXITING;
			if (ev == MT_TARGET_GONE)
				return WAKE_GONE;
		}
	}
}

/*
 * Freezes from user space (unless a trigger won meanwhile; path 0: only
 * waits for a freeze already under way) and waits for FROZEN.
 */
static int freeze_and_wait(struct session *s, uint32_t path, uint64_t cookie)
{
	struct mtrace_status st;
	struct pollfd p = { .fd = s->dev.fd, .events = POLLIN };
	int e;

	if (path && mt_dev_freeze(&s->dev, path, cookie, s->err, sizeof(s->err))) {
		/* Losing the race to a trigger is fine: its snapshot is the one to keep. */
		if (mt_dev_status(&s->dev, &st, s->err, sizeof(s->err)) ||
		    (st.state != MTRACE_STATE_FREEZING && st.state != MTRACE_STATE_FROZEN))
			return -1;
	}
	e = poll(&p, 1, FREEZE_WAIT_MS);
	if (e <= 0 || !(p.revents & POLLIN)) {
		snprintf(s->err, sizeof(s->err), "the module did not finish freezing within %d ms",
			 FREEZE_WAIT_MS);
		return -1;
	}
	return 0;
}

/*
 * A trigger fired. Through the kfunc the module is frozen already; through
 * the notification (or when the kfunc failed) user space freezes now, and
 * with SIGSTOP the stopped thread is continued once the rings are frozen.
 */
static int freeze_for_trigger(struct session *s)
{
	const struct mt_trig_event *ev = &s->ev;
	int kfunc = mt_trigger_freeze_path(ev->freeze) == MTRACE_PATH_KFUNC && ev->freeze_err == 0;
	int e = freeze_and_wait(s, kfunc ? 0 : MTRACE_PATH_FALLBACK, ev->spec);

	if (ev->freeze == MT_TRIG_FREEZE_SIGSTOP)
		kill((pid_t)ev->pid, SIGCONT);
	if (!kfunc && ev->freeze == MT_TRIG_FREEZE_KFUNC)
		msg(s, MT_SEV_WARNING, "the kfunc freeze failed (%s); froze through the ioctl instead",
		    strerror(-ev->freeze_err));
	return e;
}

/* After a kfunc freeze, consume the trigger record the same BPF run sends. */
static void consume_trigger_record(struct session *s)
{
	if (s->trig && mt_trigger_set_wait(s->trig, TRIGGER_RECORD_WAIT_MS, &s->ev) == 0)
		msg(s, MT_SEV_WARNING, "no trigger record followed the kfunc freeze");
}

static void print_summary(const struct session *s, unsigned int index, const char *file,
			  const struct mt_collect_out *c)
{
	static const char *const paths[] = { "?", "kfunc", "fallback", "Ctrl-C", "target exit",
					      "power event" };
	char what[PATH_MAX + 32];	/* "snapshot written to FILE" */

	if (s->o->temporary_bundles)
		snprintf(what, sizeof(what), "snapshot %u taken", index);
	else
		snprintf(what, sizeof(what), "snapshot written to %s", file);
	msg(s, MT_SEV_INFO, "%s: %u CPU%s, %llu bytes of PT, %llu context switch%s, %zu map%s, %zu thread%s%s (frozen by %s; skid %lld ns on the trigger CPU, %lld ns max)",
	    what, c->cpus, mt_plural(c->cpus, "", "s"), (unsigned long long)c->pt_bytes,
	    (unsigned long long)c->switches, mt_plural(c->switches, "", "es"), c->maps,
	    mt_plural(c->maps, "", "s"), c->threads, mt_plural(c->threads, "", "s"),
	    c->clobbered ? ", CLOBBERED by another PT user" : "",
	    paths[c->path < 6 ? c->path : 0], (long long)c->skid_ns_trigger_cpu,
	    (long long)c->skid_ns_max);
	if (c->kept[0])
		msg(s, MT_SEV_INFO, "the older bundle of that name is kept as %s", c->kept);
	if (c->warning[0])
		msg(s, MT_SEV_WARNING, "%s", c->warning);
	if (c->sb_lost)
		msg(s, MT_SEV_WARNING, "%llu context-switch record%s overwritten before the freeze",
		    (unsigned long long)c->sb_lost, mt_plural(c->sb_lost, " was", "s were"));
}

static int setup(struct session *s, struct mt_collect_in *in)
{
	struct mtrace_config cfg;
	char note[256];

	if (mt_dev_open(&s->dev, s->err, sizeof(s->err)))
		return -1;
	if (mt_capture_build_config(s->o, &s->dev.caps, &cfg, note, sizeof(note), s->err,
				    sizeof(s->err)))
		return -1;
	if (note[0])
		msg(s, MT_SEV_NOTE, "%s", note);
	if (s->dev.caps.flags & MTRACE_CAPS_SIMULATED)
		msg(s, MT_SEV_NOTE, "the module runs its simulated PT backend: no real trace is recorded");
	if (s->o->argv) {
		if (mt_target_launch(&s->target, s->o->argv, s->err, sizeof(s->err)))
			return -1;
		s->have_target = 1;
	} else if (s->o->pid) {
		if (mt_target_attach(&s->target, s->o->pid, s->err, sizeof(s->err)))
			return -1;
		if (s->target.warning[0])	/* said even with --quiet: the maps are lost */
			mt_report(s->rep, MT_SEV_WARNING, "%s", s->target.warning);
		s->have_target = 1;
	}
	cfg.pid = s->have_target ? s->target.pid : 0;
	in->pid = cfg.pid;
	if (mt_dev_configure(&s->dev, &cfg, s->err, sizeof(s->err)) ||
	    mt_dev_arm(&s->dev, s->err, sizeof(s->err)))
		return -1;
	mt_capture_clock_anchor(&in->arm_anchor);
	if (s->nspecs) {
		struct mt_trigger_options topt = { .pid = cfg.pid, .freeze = s->o->freeze };

		if (mt_trigger_set_open(&s->trig, s->specs, s->nspecs, &topt, s->err,
					sizeof(s->err)))
			return -1;
		msg(s, MT_SEV_INFO, "%zu trigger%s armed; freeze path: %s%s%s", s->nspecs,
		    mt_plural(s->nspecs, "", "s"),
		    mt_trigger_freeze_name(mt_trigger_set_freeze(s->trig)),
		    mt_trigger_set_freeze_reason(s->trig) ? " - " : "",
		    mt_trigger_set_freeze_reason(s->trig) ? mt_trigger_set_freeze_reason(s->trig) : "");
	}
	in->specs = s->specs;
	in->nspecs = s->nspecs;
	if (s->have_target && mt_target_release(&s->target, s->err, sizeof(s->err)))
		return -1;
	if (s->have_target)
		msg(s, MT_SEV_INFO, "tracing process %d; Ctrl-C takes a snapshot", (int)s->target.pid);
	else
		msg(s, MT_SEV_INFO, "tracing all CPUs; Ctrl-C takes a snapshot");
	if (s->o->snapshots > 1)
		msg(s, MT_SEV_INFO, "SIGUSR1 to process %d takes a snapshot and re-arms", (int)getpid());
	return 0;
}

/* Takes snapshots until done, counting them in *done; -1 after an error. */
static int run(struct session *s, struct mt_collect_in *in, unsigned int *done)
{
	while (*done < s->o->snapshots) {
		enum wake w = wait_event(s);
		struct mt_collect_out out;
		char file[4096];
		int last = 0;

		switch (w) {
		case WAKE_ERROR:
			return -1;
		case WAKE_FROZEN:
			consume_trigger_record(s);
			break;
		case WAKE_TRIGGER:
			if (freeze_for_trigger(s))
				return -1;
			in->event = &s->ev;
			break;
		case WAKE_SIGNAL:
			last = 1;
			/* fall through */
		case WAKE_SNAPSHOT_REQUEST:
			if (freeze_and_wait(s, MTRACE_PATH_MANUAL, 0))
				return -1;
			break;
		case WAKE_EXITING:
		case WAKE_GONE:
			last = 1;
			in->maps_readable = w == WAKE_EXITING;
			in->exit_tid = s->target.exit_tid;
			if (!in->maps_readable)
				msg(s, MT_SEV_WARNING, "process %d exited without a stop at exit (SIGKILL, or not ptrace-able): the snapshot has no memory maps",
				    (int)s->target.pid);
			if (freeze_and_wait(s, MTRACE_PATH_EXIT, 0))
				return -1;
			break;
		}
		if (mt_capture_output_path(s->o->output, *done + 1, s->o->snapshots, file,
					   sizeof(file))) {
			snprintf(s->err, sizeof(s->err), "output path too long");
			return -1;
		}
		if (mt_capture_collect(in, file, &out, s->err, sizeof(s->err)))
			return -1;
		++*done;
		print_summary(s, *done, file, &out);
		in->maps_readable = 1;
		in->event = NULL;
		if (s->have_target && s->target.exit_tid)
			mt_target_let_exit(&s->target);
		if (last || s->target.gone)
			break;
		if (*done == s->o->snapshots)
			break;
		if (mt_dev_arm(&s->dev, s->err, sizeof(s->err)))
			return -1;
		if (s->trig)
			mt_trigger_set_rearm(s->trig);
		msg(s, MT_SEV_INFO, "re-armed for snapshot %u of %u", *done + 1, s->o->snapshots);
	}
	return 0;
}

static void finish(struct session *s)
{
	mt_threads_free(&s->seen);
	mt_trigger_set_close(s->trig);
	for (size_t i = 0; i < s->nspecs; i++)
		mt_trigger_spec_free(&s->specs[i]);
	if (s->dev.fd >= 0)
		mt_dev_close(&s->dev); /* closing stops tracing and frees the rings */
	if (!s->have_target)
		return;
	if (s->target.release_fd >= 0) {
		mt_target_abort(&s->target); /* set-up failed: the command never runs */
		mt_target_free(&s->target);
		return;
	}
	if (s->target.traced)
		mt_target_detach(&s->target);
	if (s->target.launched && !s->target.gone) {
		msg(s, MT_SEV_INFO, "waiting for process %d to exit", (int)s->target.pid);
		mt_target_wait_exit(&s->target);
	}
	if (s->target.launched) {
		int st = s->target.status;

		if (WIFEXITED(st))
			msg(s, MT_SEV_INFO, "process %d exited with status %d", (int)s->target.pid,
			    WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			msg(s, MT_SEV_INFO, "process %d was killed by signal %d (%s)", (int)s->target.pid,
			    WTERMSIG(st), strsignal(WTERMSIG(st)));
	}
	mt_target_free(&s->target);
}

/* Triggers, target and outputs, before anything irreversible. */
static int preflight(struct session *s)
{
	if (!mt_capture_preflight(s->o, s->specs, s->nspecs, NULL, &s->plan, &s->usage, s->err,
				  sizeof(s->err)))
		return 0;
	finish(s);
	return s->usage ? -EINVAL : -EIO;
}

/* Everything that needs no device: bad options are usage errors. */
static int parse_options(struct session *s)
{
	if (mt_capture_opts_check(s->o, s->err, sizeof(s->err)))
		return -EINVAL;
	if (s->o->nr_triggers > MT_TRIG_MAX_SPECS) {
		snprintf(s->err, sizeof(s->err), "at most %d --trigger options, not %zu",
			 MT_TRIG_MAX_SPECS, s->o->nr_triggers);
		return -EINVAL;
	}
	for (; s->nspecs < s->o->nr_triggers; s->nspecs++)
		if (mt_trigger_spec_parse(s->o->triggers[s->nspecs], &s->specs[s->nspecs], s->err,
					  sizeof(s->err))) {
			finish(s);
			return -EINVAL;
		}
	return 0;
}

int mt_capture_record(const struct mt_capture_opts *o, const struct mt_reporter *rep,
		      unsigned int *taken, char *err, size_t errlen)
{
	struct session s = { .o = o, .rep = rep, .dev = { .fd = -1 }, .sigfd = -1 };
	struct mt_collect_in in = { .opts = o, .maps_readable = 1 };
	sigset_t set, old;
	int rc;

	*taken = 0;
	s.target.release_fd = s.target.exec_fd = s.target.pidfd = -1;
	in.dev = &s.dev;
	in.seen = &s.seen;
	in.rep = rep;
	if ((rc = parse_options(&s)) || (rc = preflight(&s)))
		goto out;
	if (s.plan.note[0])
		msg(&s, MT_SEV_WARNING, "%s", s.plan.note);
	if (o->dry_run) {
		char why[512];

		mt_capture_print_plan(o, s.specs, s.nspecs, &s.plan, rep);
		/* The plan is sound; say so too when this machine could not run it. */
		if (mt_dev_check(why, sizeof(why)))
			msg(&s, MT_SEV_WARNING, "a capture could not start here: %s", why);
		finish(&s);
		return 0;
	}
	session_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, &old)) {
		snprintf(s.err, sizeof(s.err), "sigprocmask: %s", strerror(errno));
		rc = -EIO;
		goto out;
	}
	s.sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (s.sigfd < 0) {
		snprintf(s.err, sizeof(s.err), "signalfd: %s", strerror(errno));
		rc = -EIO;
	} else if (setup(&s, &in) || run(&s, &in, taken)) {
		rc = -EIO;
	}
	/* Signals stay blocked until here: a second Ctrl-C during collection must not kill us. */
	finish(&s);
	if (s.sigfd >= 0)
		close(s.sigfd);
	restore_signals(&set, &old);
	if (!rc && *taken == 0) {
		snprintf(s.err, sizeof(s.err), "no snapshot was taken");
		rc = -ENODATA;
	}
out:
	if (rc)
		snprintf(err, errlen, "%s", s.err);
	return rc;
}
