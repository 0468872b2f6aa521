// SPDX-License-Identifier: MIT
/*
 * Target for tests/host/triggers.sh: a multi-threaded program whose calls
 * happen in a fixed order, so a test knows which thread makes which hit.
 *
 * It prints "ready pid=P a=TID b=TID work=ADDR" and waits for SIGUSR1 (sent
 * once the triggers are armed). Then, strictly one after the other:
 *   thread a: getppid() and tt_work(i) for i = 1..100
 *   thread b: getppid() and tt_work(i) for i = 1001..1100;
 *             tt_step(ms) for ms = 1 1 1 30 1 1 (only the 4th call is slow);
 *             tt_recurse(3): four nested calls, each sleeping 20 ms before
 *             its inner call (20, 40, 60, 80 ms from inside out), each
 *             logging its own duration ("b recurse DEPTH NS");
 *             tt_jump(1): sleeps 20 ms, calls tt_jump(0), which sleeps
 *             10 ms and longjmps back into tt_jump(1) instead of
 *             returning; tt_jump(1) logs its duration ("b jump 1 NS");
 *             dlopen(LIB) and tt_lib_fn(i) for i = 1..5
 * and exits 0. LIB is argv[1]. Every step is logged to stdout ("a 17").
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *lib_path;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* The probed functions: out of line, and with a result the compiler keeps. */
__attribute__((noinline)) long tt_work(long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 2;
}

__attribute__((noinline)) void tt_step(long ms)
{
	sleep_ms(ms);
	__asm__ volatile("" ::: "memory");
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeping before the inner call makes every level's duration distinct
 * from the time since the innermost entry. */
__attribute__((noinline)) void tt_recurse(int depth)
{
	long long start = now_ns();

	sleep_ms(20);
	if (depth > 0)
		tt_recurse(depth - 1);
	printf("b recurse %d %lld\n", depth, now_ns() - start);
}

static jmp_buf jump_back;

/* The inner call never returns: a return probe sees only the outer one. */
__attribute__((noinline)) void tt_jump(int depth)
{
	long long start = now_ns();

	if (depth == 0) {
		sleep_ms(10);
		longjmp(jump_back, 1);
	}
	sleep_ms(20);
	if (!setjmp(jump_back))
		tt_jump(0);
	printf("b jump %d %lld\n", depth, now_ns() - start);
}

static void *thread_a(void *arg)
{
	(void)arg;
	for (long i = 1; i <= 100; i++) {
		printf("a %ld\n", i);
		syscall(SYS_getppid);
		tt_work(i);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	static const long steps[] = { 1, 1, 1, 30, 1, 1 };
	long (*lib_fn)(long);
	void *lib;

	(void)arg;
	for (long i = 1001; i <= 1100; i++) {
		printf("b %ld\n", i);
		syscall(SYS_getppid);
		tt_work(i);
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		printf("b step %ld\n", steps[i]);
		tt_step(steps[i]);
	}
	tt_recurse(3);
	tt_jump(1);
	lib = dlopen(lib_path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "trig_target: %s\n", dlerror());
		exit(1);
	}
	lib_fn = (long (*)(long))dlsym(lib, "tt_lib_fn");
	for (long i = 1; lib_fn && i <= 5; i++) {
		printf("b lib %ld\n", i);
		lib_fn(i);
	}
	return NULL;
}

/* Starts FN on a thread that first waits for GO, and reports its tid. */
struct start {
	void *(*fn)(void *);
	pthread_barrier_t *go;
	pid_t tid;
	pthread_barrier_t ready;
};

static void *starter(void *arg)
{
	struct start *s = arg;
	void *(*fn)(void *) = s->fn;
	pthread_barrier_t *go = s->go;

	s->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&s->ready);
	pthread_barrier_wait(go);
	return fn(NULL);
}

static pthread_t spawn(void *(*fn)(void *), pthread_barrier_t *go, pid_t *tid)
{
	struct start s = { .fn = fn, .go = go };
	pthread_t t;

	pthread_barrier_init(&s.ready, NULL, 2);
	if (pthread_create(&t, NULL, starter, &s)) {
		perror("trig_target: pthread_create");
		exit(1);
	}
	pthread_barrier_wait(&s.ready);
	pthread_barrier_destroy(&s.ready);
	*tid = s.tid;
	return t;
}

int main(int argc, char **argv)
{
	pthread_barrier_t go_a, go_b;
	pthread_t a, b;
	pid_t tid_a, tid_b;
	sigset_t set;
	int sig;

	if (argc != 2) {
		fprintf(stderr, "usage: trig_target LIBRARY\n");
		return 2;
	}
	lib_path = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Blocked before the threads exist, so only sigwait() sees it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_barrier_init(&go_a, NULL, 2);
	pthread_barrier_init(&go_b, NULL, 2);
	a = spawn(thread_a, &go_a, &tid_a);
	b = spawn(thread_b, &go_b, &tid_b);
	printf("ready pid=%d a=%d b=%d work=%p\n", (int)getpid(), (int)tid_a, (int)tid_b,
	       (void *)tt_work);
	sigwait(&set, &sig);
	pthread_barrier_wait(&go_a);
	pthread_join(a, NULL);
	pthread_barrier_wait(&go_b);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
