// SPDX-License-Identifier: MIT
/*
 * mt_capture_record as a library call: it reports through the caller's
 * reporter and never prints, returns error codes rather than exit
 * statuses, and gives back the signal mask it was called with. The device
 * is a path that does not exist (MTRACE_DEVICE), so the capture gets past
 * every check and blocks its signals, then fails opening the device.
 */
#include "mt_test.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"

static const int session_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1 };

struct heard {
	int n;
	char last[512];
};

static void hear(void *ctx, enum mt_severity sev, const char *msg)
{
	struct heard *h = ctx;

	(void)sev;
	h->n++;
	snprintf(h->last, sizeof(h->last), "%s", msg);
}

/* Runs a capture of `true` that fails at the device; returns its result. */
static int record_without_device(struct heard *h, char *err, size_t errlen)
{
	char dir[] = "/tmp/mt_session_XXXXXX", out[64];
	char *argv[] = { "true", NULL };
	struct mt_capture_opts o;
	unsigned int taken = 99;
	int e;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(out, sizeof(out), "%s/t.mtrace", dir);
	mt_capture_opts_init(&o);
	o.argv = argv;
	o.output = out;
	setenv("MTRACE_DEVICE", "/nonexistent/mtrace", 1);
	e = mt_capture_record(&o, &(struct mt_reporter){ hear, h }, &taken, err, errlen);
	unsetenv("MTRACE_DEVICE");
	rmdir(dir);
	return taken == 0 ? e : -ERANGE;
}

MT_TEST(record_restores_the_signal_mask)
{
	sigset_t none, after;
	struct heard h = { 0 };
	char err[MT_CAPTURE_ERRLEN] = "";

	sigemptyset(&none);
	MT_ASSERT_EQ(sigprocmask(SIG_SETMASK, &none, NULL), 0);
	MT_ASSERT_EQ(record_without_device(&h, err, sizeof(err)), -EIO);
	MT_ASSERT_MSG(!strncmp(err, "/nonexistent/mtrace", 19), "%s", err);
	MT_ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	for (size_t i = 0; i < sizeof(session_sigs) / sizeof(session_sigs[0]); i++)
		MT_ASSERT_MSG(!sigismember(&after, session_sigs[i]), "%s still blocked",
			      strsignal(session_sigs[i]));
}

MT_TEST(record_keeps_what_the_caller_blocked)
{
	sigset_t mine, after;
	struct heard h = { 0 };
	char err[MT_CAPTURE_ERRLEN];

	sigemptyset(&mine);
	sigaddset(&mine, SIGUSR1);
	sigaddset(&mine, SIGUSR2);
	MT_ASSERT_EQ(sigprocmask(SIG_SETMASK, &mine, NULL), 0);
	MT_ASSERT_EQ(record_without_device(&h, err, sizeof(err)), -EIO);
	MT_ASSERT_EQ(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	MT_ASSERT(sigismember(&after, SIGUSR1) == 1);
	MT_ASSERT(sigismember(&after, SIGUSR2) == 1);
	MT_ASSERT(sigismember(&after, SIGINT) == 0);
	MT_ASSERT(sigismember(&after, SIGCHLD) == 0);
	sigemptyset(&mine);
	sigprocmask(SIG_SETMASK, &mine, NULL);
}

MT_TEST(bad_options_are_einval_not_an_exit_status)
{
	struct mt_capture_opts o;
	unsigned int taken;
	char err[MT_CAPTURE_ERRLEN] = "";

	mt_capture_opts_init(&o);	/* no target at all */
	MT_ASSERT_EQ(mt_capture_record(&o, NULL, &taken, err, sizeof(err)), -EINVAL);
	MT_ASSERT_MSG(err[0] && strncmp(err, "mtrace-user", 11), "%s", err);
}
