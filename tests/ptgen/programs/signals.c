// SPDX-License-Identifier: MIT
/* Signal handlers: one raised synchronously (entered on the kill syscall's
 * return), one from a timer interrupting user code at an arbitrary
 * instruction. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t hits, ticks;

static void on_usr1(int sig)
{
	hits += sig;
}

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

static int spin(int n)
{
	int acc = 0;

	for (int i = 0; i < n; i++)
		acc += i & 3;
	return acc;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it = { .it_value = { 0, 20000 } };
	int acc = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	raise(SIGUSR1);
	raise(SIGUSR1);
	setitimer(ITIMER_REAL, &it, NULL);
	/* Bounded: under single-step the timer fires within a few hundred
	 * iterations; stop early once it has. */
	for (int i = 0; i < 3000 && !ticks; i++)
		acc += spin(3);
	return hits == 2 * SIGUSR1 ? 0 : acc;
}
