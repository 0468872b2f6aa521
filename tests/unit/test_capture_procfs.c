// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps parsing, build-id extraction from binaries compiled here
 * (with a chosen build-id), and the collection of this very process's maps
 * and threads.
 */
#include "mt_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture/capture_procfs.h"

MT_TEST(maps_line_file)
{
	struct mt_maps_line m;
	const char *l = "7f12a000-7f12c000 r-xp 00002000 fd:01 131090                     /usr/lib/x86_64-linux-gnu/libc.so.6\n";

	MT_ASSERT_EQ(mt_maps_parse_line(l, &m), 0);
	MT_ASSERT_EQ(m.start, 0x7f12a000);
	MT_ASSERT_EQ(m.end, 0x7f12c000);
	MT_ASSERT_EQ(m.offset, 0x2000);
	MT_ASSERT_EQ(m.prot, MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_EXEC);
	MT_ASSERT_EQ(m.path_len, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	MT_ASSERT(!strncmp(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.path_len));
	MT_ASSERT(!m.deleted);
}

MT_TEST(maps_line_special_anon_deleted_spaces)
{
	struct mt_maps_line m;

	MT_ASSERT_EQ(mt_maps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]", &m), 0);
	MT_ASSERT_EQ(m.prot, MT_BUNDLE_PROT_EXEC);
	MT_ASSERT_EQ(m.path_len, 10);
	MT_ASSERT(!strncmp(m.path, "[vsyscall]", 10));
	MT_ASSERT_EQ(mt_maps_parse_line("55d0c000-55d0d000 rw-p 00000000 00:00 0\n", &m), 0);
	MT_ASSERT_EQ(m.path_len, 0);
	MT_ASSERT_EQ(m.prot, MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_WRITE);
	MT_ASSERT_EQ(mt_maps_parse_line("1000-2000 r-xp 00000000 08:01 12 /tmp/my app (deleted)\n", &m), 0);
	MT_ASSERT(m.deleted);
	MT_ASSERT_EQ(m.path_len, strlen("/tmp/my app"));
	MT_ASSERT(!strncmp(m.path, "/tmp/my app", m.path_len));
}

MT_TEST(maps_line_rejects)
{
	struct mt_maps_line m;

	MT_ASSERT_EQ(mt_maps_parse_line("", &m), -EINVAL);
	MT_ASSERT_EQ(mt_maps_parse_line("garbage line", &m), -EINVAL);
	MT_ASSERT_EQ(mt_maps_parse_line("2000-1000 r-xp 00000000 08:01 12 /x", &m), -EINVAL);
	MT_ASSERT_EQ(mt_maps_parse_line("1000-2000 r-x 00000000 08:01 12 /x", &m), -EINVAL);
}

/* Compiles a trivial program with the given linker build-id option into dir. */
static void compile(const char *dir, const char *name, const char *build_id_opt, char *out,
		    size_t len)
{
	char cmd[1024];

	snprintf(out, len, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd),
		 "printf 'int main(void){return 0;}\\n' | cc -x c - -o %s -Wl,--build-id=%s 2>&1",
		 out, build_id_opt);
	if (system(cmd) != 0)
		mt_skip("no C compiler to build the test binaries");
}

MT_TEST(build_id_from_compiled_binaries)
{
	char dir[] = "/tmp/mt-capture-XXXXXX", with[256], without[256], text[256], cmd[600];
	uint8_t id[MT_BUILD_ID_MAX];
	static const uint8_t want[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
					0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
					0x00, 0x11, 0x22, 0x33 };
	FILE *f;

	MT_ASSERT(mkdtemp(dir));
	compile(dir, "with", "0x0123456789abcdeffedcba987654321000112233", with, sizeof(with));
	compile(dir, "without", "none", without, sizeof(without));
	MT_ASSERT_EQ(mt_elf_build_id(with, id, sizeof(id)), sizeof(want));
	MT_ASSERT_MEMEQ(id, want, sizeof(want));
	/* A short buffer gets the id's prefix. */
	MT_ASSERT_EQ(mt_elf_build_id(with, id, 4), 4);
	MT_ASSERT_MEMEQ(id, want, 4);
	MT_ASSERT_EQ(mt_elf_build_id(without, id, sizeof(id)), 0);
	snprintf(text, sizeof(text), "%s/text", dir);
	f = fopen(text, "w");
	MT_ASSERT(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	MT_ASSERT_EQ(mt_elf_build_id(text, id, sizeof(id)), -ENOEXEC);
	MT_ASSERT_EQ(mt_elf_build_id("/nonexistent/binary", id, sizeof(id)), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	MT_ASSERT_EQ(system(cmd), 0);
}

static int probe_function(void)
{
	return 42;
}

MT_TEST(collect_own_maps)
{
	struct mt_map_list l = { 0 };
	uint8_t self_id[MT_BUILD_ID_MAX];
	int self_len = mt_elf_build_id("/proc/self/exe", self_id, sizeof(self_id));
	uint64_t code = (uint64_t)(uintptr_t)&probe_function;
	int found_code = 0, found_vdso = 0;

	MT_ASSERT_EQ(probe_function(), 42);
	MT_ASSERT(self_len > 0);
	MT_ASSERT_EQ(mt_maps_collect(&l, getpid(), 0, 1234), 0);
	MT_ASSERT(l.n > 2);
	for (size_t i = 0; i < l.n; i++) {
		const struct mt_bundle_map *m = &l.maps[i];

		MT_ASSERT_EQ(m->tsc, 1234);
		MT_ASSERT_EQ(m->pid, (uint32_t)getpid());
		MT_ASSERT_EQ(m->event, MT_BUNDLE_MAP_PRESENT);
		MT_ASSERT(m->start < m->end);
		if (!strcmp(m->path, "[vdso]"))
			found_vdso = 1;
		if (code >= m->start && code < m->end) {
			found_code = 1;
			MT_ASSERT(m->prot & MT_BUNDLE_PROT_EXEC);
			MT_ASSERT_EQ(m->build_id_len, (size_t)self_len);
			MT_ASSERT_MEMEQ(m->build_id, self_id, (size_t)self_len);
		}
		/* Only what a decoder can use: executable, or an ELF file with a build-id. */
		MT_ASSERT((m->prot & MT_BUNDLE_PROT_EXEC) || m->build_id_len > 0);
	}
	MT_ASSERT(found_code);
	MT_ASSERT(found_vdso);
	mt_maps_free(&l);
}

static pthread_barrier_t named, done;

static void *named_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "mt-worker");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&done);
	return NULL;
}

MT_TEST(collect_own_threads)
{
	struct mt_thread_list l = { 0 };
	char cmdline[4096];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t cl = fread(cmdline, 1, sizeof(cmdline), f);
	pthread_t th;
	int main_seen = 0, worker_seen = 0;

	fclose(f);
	pthread_barrier_init(&named, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	MT_ASSERT_EQ(pthread_create(&th, NULL, named_thread, NULL), 0);
	pthread_barrier_wait(&named);
	MT_ASSERT_EQ(mt_threads_collect(&l, getpid(), 0, 99), 0);
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);
	for (size_t i = 0; i < l.n; i++) {
		MT_ASSERT_EQ(l.t[i].pid, (uint32_t)getpid());
		MT_ASSERT_EQ(l.t[i].tsc, 99);
		if (l.t[i].tid == (uint32_t)getpid()) {
			main_seen = 1;
			/* NUL-separated arguments, without the final NUL. */
			MT_ASSERT_EQ(l.t[i].cmdline_len, cl - 1);
			MT_ASSERT_MEMEQ(l.t[i].cmdline, cmdline, cl - 1);
		} else if (!strcmp(l.t[i].comm, "mt-worker")) {
			worker_seen = 1;
			MT_ASSERT_EQ(l.t[i].cmdline_len, 0);
		}
	}
	MT_ASSERT(main_seen && worker_seen);
	MT_ASSERT_EQ(mt_threads_collect(&l, 0x7ffffff0, 0, 1), -ENOENT);
	mt_threads_free(&l);
	pthread_barrier_destroy(&named);
	pthread_barrier_destroy(&done);
}

static pthread_barrier_t step;

/* Named "mt-first", then "mt-second" after one step, exits after another. */
static void *renamed_thread(void *arg)
{
	pid_t *tid = arg;

	*tid = gettid();
	pthread_setname_np(pthread_self(), "mt-first");
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	pthread_setname_np(pthread_self(), "mt-second");
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	return NULL;
}

static size_t count_tid(const struct mt_thread_list *l, pid_t tid, const char **comm)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].tid == (uint32_t)tid) {
			n++;
			*comm = l->t[i].comm;
		}
	return n;
}

/* A thread that exits before the freeze keeps the last name seen while armed. */
MT_TEST(remembered_names_outlive_their_threads)
{
	struct mt_thread_list seen = { 0 }, l = { 0 };
	const char *comm = NULL;
	pthread_t th;
	pid_t tid = 0;

	pthread_barrier_init(&step, NULL, 2);
	MT_ASSERT_EQ(pthread_create(&th, NULL, renamed_thread, &tid), 0);
	pthread_barrier_wait(&step);
	MT_ASSERT_EQ(mt_threads_remember(&seen, getpid(), 5), 0);
	MT_ASSERT_EQ(count_tid(&seen, tid, &comm), 1);
	MT_ASSERT_STREQ(comm, "mt-first");
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	MT_ASSERT_EQ(mt_threads_remember(&seen, getpid(), 6), 0);
	MT_ASSERT_EQ(count_tid(&seen, tid, &comm), 1);	/* renamed, not added twice */
	MT_ASSERT_STREQ(comm, "mt-second");
	pthread_barrier_wait(&step);
	pthread_join(th, NULL);

	MT_ASSERT_EQ(mt_threads_collect(&l, getpid(), 0, 7), 0);
	MT_ASSERT_EQ(count_tid(&l, tid, &comm), 0);		/* gone at collection */
	MT_ASSERT_EQ(mt_threads_add_gone(&l, &seen), 0);
	MT_ASSERT_EQ(count_tid(&l, tid, &comm), 1);
	MT_ASSERT_STREQ(comm, "mt-second");
	MT_ASSERT_EQ(count_tid(&l, getpid(), &comm), 1);	/* nothing doubled */
	MT_ASSERT_EQ(mt_threads_remember(&seen, 0x7ffffff0, 1), -ENOENT);
	mt_threads_free(&seen);
	mt_threads_free(&l);
	pthread_barrier_destroy(&step);
}
