// SPDX-License-Identifier: MIT
/*
 * files/: outputs that are never an input and replace an older file only
 * when complete; inputs from streams; a FIFO as an output.
 */
#include "mt_test.h"

#include "bundle/bundle.h"
#include "files/gzout.h"
#include "files/infile.h"
#include "files/outfile.h"
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][384];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	MT_ASSERT(f);
	fputs(text, f);
	MT_ASSERT_EQ(fclose(f), 0);
}

static int holds(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

static void fresh_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mt-files-XXXXXX");
	MT_ASSERT(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	MT_ASSERT_EQ(system(cmd), 0);
}

MT_TEST(output_that_is_an_input_is_refused)
{
	char err[512], path[128];
	const char *in = path;

	fresh_dir();
	snprintf(path, sizeof(path), "%s", at("b.mtrace"));
	put(in, "bundle");
	MT_ASSERT_EQ(symlink("b.mtrace", at("sym")), 0);
	MT_ASSERT_EQ(link(in, at("hard")), 0);
	MT_ASSERT_EQ(mt_outfile_check_inputs(in, &in, 1, err, sizeof(err)), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "is the input"), "%s", err);
	/* Another spelling of the input's path is no link. */
	MT_ASSERT_EQ(mt_outfile_check_inputs(at("./b.mtrace"), &in, 1, err, sizeof(err)), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "itself: choose"), "%s", err);
	MT_ASSERT_EQ(mt_outfile_check_inputs(at("sym"), &in, 1, err, sizeof(err)), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "itself (a symbolic link to it): choose"), "%s", err);
	MT_ASSERT_EQ(mt_outfile_check_inputs(at("hard"), &in, 1, err, sizeof(err)), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "itself (a hard link to it): choose"), "%s", err);
	/* An input reached through a symlink is the same file too. */
	{
		const char *via = at("sym");

		MT_ASSERT_EQ(mt_outfile_check_inputs(in, &via, 1, err, sizeof(err)), -EEXIST);
		MT_ASSERT_MSG(strstr(err, "itself (which is a symbolic link to it): choose"), "%s",
			      err);
	}
	put(at("other"), "x");
	MT_ASSERT_EQ(mt_outfile_check_inputs(at("other"), &in, 1, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_outfile_check_inputs(at("new"), &in, 1, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_outfile_check_inputs("/dev/null", &in, 1, err, sizeof(err)), 0);
	MT_ASSERT(holds(in, "bundle"));
	remove_dir();
}

MT_TEST(old_file_replaced_only_on_commit)
{
	struct mt_outfile of;
	const char *out;
	struct stat st;
	char err[512];

	fresh_dir();
	out = at("t.pftrace.gz");
	put(out, "old");
	MT_ASSERT_EQ(chmod(out, 0640), 0);
	MT_ASSERT_MSG(mt_outfile_begin(&of, out, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(!of.in_place);
	/* Beside the target, hidden, keeping its suffix (gzip is chosen by name). */
	MT_ASSERT_MSG(!strncmp(of.write_path, at(".tmp-"), strlen(at(".tmp-"))), "%s", of.write_path);
	MT_ASSERT(strlen(of.write_path) > 3 &&
		  !strcmp(of.write_path + strlen(of.write_path) - 3, ".gz"));
	put(of.write_path, "new");
	MT_ASSERT(holds(out, "old"));
	MT_ASSERT_MSG(mt_outfile_commit(&of, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(holds(out, "new"));
	MT_ASSERT_EQ(stat(out, &st), 0);
	MT_ASSERT_EQ(st.st_mode & 07777, 0640);
	MT_ASSERT_EQ(mt_outfile_size(&of), 3);
	remove_dir();
}

MT_TEST(abort_keeps_old_file_and_leaves_nothing)
{
	struct mt_outfile of;
	char err[512], tmp[PATH_MAX];
	const char *out;

	fresh_dir();
	out = at("t.pftrace");
	put(out, "old");
	MT_ASSERT_EQ(mt_outfile_begin(&of, out, err, sizeof(err)), 0);
	snprintf(tmp, sizeof(tmp), "%s", of.write_path);
	put(tmp, "half a trace");
	mt_outfile_abort(&of);
	MT_ASSERT(holds(out, "old"));
	MT_ASSERT(access(tmp, F_OK) != 0);
	remove_dir();
}

MT_TEST(symlinked_output_replaces_its_target)
{
	struct mt_outfile of;
	struct stat st;
	char err[512];

	fresh_dir();
	put(at("real"), "old");
	MT_ASSERT_EQ(symlink("real", at("link")), 0);
	MT_ASSERT_EQ(mt_outfile_begin(&of, at("link"), err, sizeof(err)), 0);
	put(of.write_path, "new");
	MT_ASSERT_EQ(mt_outfile_commit(&of, err, sizeof(err)), 0);
	MT_ASSERT_EQ(lstat(at("link"), &st), 0);
	MT_ASSERT(S_ISLNK(st.st_mode));
	MT_ASSERT(holds(at("real"), "new"));
	remove_dir();
}

MT_TEST(bad_destinations)
{
	struct mt_outfile of;
	char err[512], name[NAME_MAX + 2];

	fresh_dir();
	MT_ASSERT_EQ(mt_outfile_begin(&of, dir, err, sizeof(err)), -EISDIR);
	MT_ASSERT_MSG(strstr(err, "is a directory"), "%s", err);
	MT_ASSERT_EQ(mt_outfile_begin(&of, at("no/such/dir/t"), err, sizeof(err)), -ENOENT);
	MT_ASSERT_MSG(strstr(err, "cannot create a file in"), "%s", err);
	MT_ASSERT_EQ(mt_outfile_begin(&of, "", err, sizeof(err)), -EINVAL);
	/* A name the directory cannot hold is refused before any work, not at
	 * the rename; the longest one it can is written. */
	memset(name, 'n', sizeof(name) - 1);
	name[NAME_MAX + 1] = 0;
	MT_ASSERT_EQ(mt_outfile_begin(&of, at(name), err, sizeof(err)), -ENAMETOOLONG);
	MT_ASSERT_MSG(strstr(err, "output file name too long (256 bytes, at most 255 in"), "%s", err);
	name[NAME_MAX] = 0;
	MT_ASSERT_EQ(mt_outfile_begin(&of, at(name), err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_outfile_commit(&of, err, sizeof(err)), 0);
	MT_ASSERT_EQ(access(at(name), F_OK), 0);
	/* Special files and "-" are written in place. */
	MT_ASSERT_EQ(mt_outfile_begin(&of, "/dev/null", err, sizeof(err)), 0);
	MT_ASSERT(of.in_place && !strcmp(of.write_path, "/dev/null"));
	MT_ASSERT_EQ(mt_outfile_commit(&of, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_outfile_begin(&of, "-", err, sizeof(err)), 0);
	MT_ASSERT(of.in_place && !strcmp(of.write_path, "/dev/stdout"));
	remove_dir();
}

/* mt_infile_open() on a pipe written N BYTES, STEP at a time, its write
 * end closed first unless KEEP_OPEN (a writer that never ends). */
static int open_pipe(const char *bytes, size_t n, size_t step, int keep_open, uint64_t max,
		     const struct mt_infile_magic *m, char *err, size_t errlen)
{
	char name[64];
	int p[2], fd;

	MT_ASSERT_EQ(pipe(p), 0);
	for (size_t i = 0; i < n; i += step) {
		size_t k = n - i < step ? n - i : step;

		MT_ASSERT_EQ(write(p[1], bytes + i, k), (ssize_t)k);
	}
	if (!keep_open)
		close(p[1]);
	snprintf(name, sizeof(name), "/proc/self/fd/%d", p[0]);
	fd = mt_infile_open(name, max, m, NULL, err, errlen);
	close(p[0]);
	if (keep_open)
		close(p[1]);
	return fd;
}

/* The memory file holds exactly WANT. */
static void holds_bytes(int fd, const char *err, const char *want)
{
	char buf[64] = "";

	MT_ASSERT_MSG(fd >= 0, "%s", err);
	MT_ASSERT_EQ(pread(fd, buf, sizeof(buf) - 1, 0), (ssize_t)strlen(want));
	MT_ASSERT_STREQ(buf, want);
	close(fd);
}

/* A pipe is read to its end into a memory file; a cap stops endless streams. */
MT_TEST(stream_input_is_buffered)
{
	char err[512];

	holds_bytes(open_pipe("bundle bytes", 12, 12, 0, 0, NULL, err, sizeof(err)), err,
		    "bundle bytes");
	MT_ASSERT_EQ(open_pipe("0123456789", 10, 10, 0, 4, NULL, err, sizeof(err)), -EFBIG);
	MT_ASSERT_MSG(strstr(err, "larger than 4 bytes"), "%s", err);
	MT_ASSERT_EQ(mt_infile_open("/nonexistent", 0, NULL, NULL, err, sizeof(err)), -ENOENT);
	MT_ASSERT_STREQ(err, "/nonexistent: No such file or directory");
}

/* A stream is judged by its first bytes: one that is not what the
 * caller reads (/dev/zero, say) is refused without waiting for its end,
 * which may never come (the writer here keeps the pipe open). */
MT_TEST(stream_of_something_else_refused_at_once)
{
	static const struct mt_infile_magic m = { "MAGIC", 5, "a test file", NULL };
	char err[512];

	MT_ASSERT_EQ(open_pipe("\0\0\0\0\0\0\0\0", 8, 8, 1, 0, &m, err, sizeof(err)), -EBADMSG);
	MT_ASSERT_MSG(strstr(err, ": not a test file (bad magic)"), "%s", err);
	/* The magic may come a byte at a time; then the stream is read whole. */
	holds_bytes(open_pipe("MAGIC and more", 14, 1, 0, 0, &m, err, sizeof(err)), err,
		    "MAGIC and more");
	/* Shorter than the magic: left to the reader, which tells what it lacks. */
	holds_bytes(open_pipe("MAG", 3, 3, 0, 0, &m, err, sizeof(err)), err, "MAG");
}

/* What a signal handler calls: every unfinished temporary goes, the old file stays. */
MT_TEST(pending_temporaries_removed)
{
	struct mt_outfile a, b;
	char err[512];

	fresh_dir();
	put(at("a"), "old a");
	MT_ASSERT_EQ(mt_outfile_begin(&a, at("a"), err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_outfile_begin(&b, at("b"), err, sizeof(err)), 0);
	put(a.write_path, "half");
	mt_outfile_remove_pending();
	MT_ASSERT(access(a.write_path, F_OK) != 0 && access(b.write_path, F_OK) != 0);
	MT_ASSERT(holds(at("a"), "old a"));
	/* A commit after that fails cleanly and keeps the old file. */
	MT_ASSERT(mt_outfile_commit(&a, err, sizeof(err)) < 0);
	MT_ASSERT(holds(at("a"), "old a"));
	mt_outfile_abort(&b);
	remove_dir();
}

/* A .gz output written through stdio is gzip that reads back whole; one
 * that cannot be written fails at fclose(). */
/* 100000 numbered lines to PATH through mt_fopen_write(); fclose()'s
 * answer, and in *WRITTEN the count it kept, which must be the lines'. */
static int write_lines(const char *path, bool gzip, uint64_t *written)
{
	FILE *f = mt_fopen_write(path, gzip, written, NULL);
	uint64_t n = 0;
	int rc;

	MT_ASSERT(f);
	for (int i = 0; i < 100000; i++)
		n += (uint64_t)fprintf(f, "%d event\n", i);
	rc = fclose(f);
	MT_ASSERT(rc || *written == n);
	return rc;
}

MT_TEST(gzip_through_stdio)
{
	char line[64], back[64];
	uint64_t written;
	struct stat st;
	gzFile gz;

	fresh_dir();
	MT_ASSERT(mt_gz_named("t.txt.gz") && !mt_gz_named("t.txt") && !mt_gz_named("gz"));
	MT_ASSERT_EQ(write_lines(at("t.txt.gz"), true, &written), 0);
	gz = gzopen(at("t.txt.gz"), "rb");
	MT_ASSERT(gz && !gzdirect(gz));
	for (int i = 0; i < 100000; i++) {
		snprintf(line, sizeof(line), "%d event\n", i);
		MT_ASSERT_MSG(gzgets(gz, back, sizeof(back)) && !strcmp(back, line), "line %d", i);
	}
	MT_ASSERT(!gzgets(gz, back, sizeof(back)));
	gzclose(gz);
	MT_ASSERT(stat(at("t.txt.gz"), &st) == 0 && (uint64_t)st.st_size < written);
	/* A plain file is counted too: its size. */
	MT_ASSERT_EQ(write_lines(at("t.txt"), false, &written), 0);
	MT_ASSERT(stat(at("t.txt"), &st) == 0 && (uint64_t)st.st_size == written);
	remove_dir();

	errno = 0;
	MT_ASSERT_EQ(write_lines("/dev/full", true, &written), EOF);
	MT_ASSERT_EQ(errno, ENOSPC);
	MT_ASSERT_EQ(write_lines("/dev/full", false, &written), EOF);
}

/* A FIFO nobody reads: its open waits, and SIGINT ends the wait even when
 * blocked, as record blocks it while it writes its bundle (through the
 * bundle writer, as here). A child waits; the test is its reader of
 * nothing, and its Ctrl-C. */
MT_TEST(fifo_output_wait_ended_by_blocked_sigint)
{
	struct mt_bundle_writer *w;
	int go[2], status = 0;
	sigset_t block;
	pid_t pid, done = 0;
	char c;

	fresh_dir();
	MT_ASSERT_EQ(mkfifo(at("out.mtrace"), 0600), 0);
	MT_ASSERT_EQ(pipe(go), 0);
	pid = fork();
	MT_ASSERT(pid >= 0);
	if (!pid) {
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigprocmask(SIG_BLOCK, &block, NULL);
		if (write(go[1], "", 1) != 1)
			_exit(2);
		mt_bundle_writer_create(&w, at("out.mtrace"), NULL, NULL, 0);
		_exit(3);	/* opened without a reader: never */
	}
	close(go[1]);
	MT_ASSERT_EQ(read(go[0], &c, 1), 1);
	close(go[0]);
	/* Sent once SIGINT is blocked: pending until the wait lets it in. */
	kill(pid, SIGINT);
	for (int i = 0; i < 200 && !(done = waitpid(pid, &status, WNOHANG)); i++)
		usleep(25000);
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	remove_dir();
	MT_ASSERT_MSG(done == pid, "still waiting for a reader 5 s after SIGINT");
	MT_ASSERT_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "child status 0x%x",
		      status);
}
