// SPDX-License-Identifier: MIT
/*
 * Inputs named by users or by recorded data are opened only when they are
 * regular files (util/regfile.h): a device's open can act (a watchdog's
 * arms it) and a FIFO's waits for a writer. inotify tells whether a node
 * was opened at all: every reader below is handed a FIFO and a character
 * device (a copy of /dev/null's node, where mknod is allowed) and must
 * refuse both without an IN_OPEN.
 */
#include "mt_test.h"

#include "bundle/bundle.h"
#include "capture/capture_procfs.h"
#include "decode/binfile.h"
#include "files/infile.h"
#include "kcore/kcore.h"
#include "perfdata/perfdata_import.h"
#include "perfdata/perfdata_reader.h"
#include "sym/sym.h"
#include "trigger/trigger.h"
#include "util/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char dir[64];
static char fifo[96], chr[96], reg[96];

/* A FIFO, a regular file and, where allowed, a character device. */
static void make_nodes(void)
{
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/mt-named-XXXXXX");
	MT_ASSERT(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(chr, sizeof(chr), "%s/null", dir);
	snprintf(reg, sizeof(reg), "%s/file", dir);
	MT_ASSERT_EQ(mkfifo(fifo, 0600), 0);
	fd = open(reg, O_WRONLY | O_CREAT | O_EXCL, 0600);
	MT_ASSERT(fd >= 0);
	MT_ASSERT_EQ(write(fd, "not ELF, not a bundle", 21), 21);
	close(fd);
	if (mknod(chr, S_IFCHR | 0600, makedev(1, 3)))
		chr[0] = '\0';
}

static void remove_nodes(void)
{
	unlink(fifo);
	unlink(reg);
	if (chr[0])
		unlink(chr);
	rmdir(dir);
}

/* An inotify descriptor watching PATH for opens. */
static int watch(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	MT_ASSERT(fd >= 0);
	MT_ASSERT_MSG(inotify_add_watch(fd, path, IN_OPEN) >= 0, "watch %s: %s", path,
		      strerror(errno));
	return fd;
}

/* Whether the watched node was opened since the watch began; closes IN. */
static int was_opened(int in)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(in, buf, sizeof(buf));

	close(in);
	return n > 0;
}

MT_TEST(only_regular_files_are_opened)
{
	const char *kind = "unset";
	int fd, in;

	make_nodes();
	fd = mt_open_regular(reg, &kind);
	MT_ASSERT(fd >= 0);
	MT_ASSERT(!kind);
	MT_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);

	errno = 0;
	MT_ASSERT_EQ(mt_open_regular(dir, &kind), -1);
	MT_ASSERT_EQ(errno, EISDIR);
	MT_ASSERT_STREQ(kind, "a directory");

	MT_ASSERT_EQ(mt_open_regular("/nonexistent/x", &kind), -1);
	MT_ASSERT_EQ(errno, ENOENT);
	MT_ASSERT(!kind);

	/* Opening a FIFO without a writer would wait, or with O_NONBLOCK
	 * succeed: either is an open, which inotify sees. */
	in = watch(fifo);
	MT_ASSERT_EQ(mt_open_regular(fifo, &kind), -1);
	MT_ASSERT_EQ(errno, ENODEV);
	MT_ASSERT_STREQ(kind, "a FIFO");
	MT_ASSERT_MSG(!was_opened(in), "the FIFO was opened");
	if (!chr[0]) {
		remove_nodes();
		mt_skip("mknod is not allowed here: the FIFO was checked, no device");
	}
	in = watch(chr);
	MT_ASSERT_EQ(mt_open_regular(chr, &kind), -1);
	MT_ASSERT_STREQ(kind, "a character device");
	MT_ASSERT_MSG(!was_opened(in), "the device was opened");
	/* The watch itself works: an open is seen. */
	in = watch(chr);
	fd = open(chr, O_RDONLY);
	MT_ASSERT(fd >= 0);
	close(fd);
	MT_ASSERT(was_opened(in));
	remove_nodes();
}

/* Every reader of a named input, handed NODE: none may open it. */
static void readers_leave_alone(const char *node)
{
	struct mt_sym_options symopt = { 0 };
	struct mt_trigger_spec spec = { .kind = MT_TRIG_UPROBE, .symbol = "main" };
	struct mt_bundle_reader *r = NULL;
	struct mt_sym_file *sf = NULL;
	struct mt_kcore *k = NULL;
	struct perfdata_file pf;
	struct mt_bincache bc;
	uint8_t id[64];
	uint64_t addr, off;
	char err[512];
	int in = watch(node), fd;

	spec.path = (char *)node;
	MT_ASSERT(!perfdata_is_perf_data(node));
	MT_ASSERT(perfdata_open(&pf, node) < 0);
	MT_ASSERT_MSG(strstr(pf.err, "not a regular file"), "%s", pf.err);
	perfdata_close(&pf);
	MT_ASSERT(mt_bundle_open(&r, node, err, sizeof(err)) < 0);
	MT_ASSERT(mt_trigger_locate(&spec, &addr, &off, err, sizeof(err)) < 0);
	MT_ASSERT_MSG(strstr(err, "not an executable or shared library"), "%s", err);
	MT_ASSERT(mt_elf_build_id(node, id, sizeof(id)) < 0);
	MT_ASSERT(mt_kcore_open(&k, node, err, sizeof(err)) < 0);
	MT_ASSERT_MSG(strstr(err, "not a kcore file"), "%s", err);
	MT_ASSERT(mt_sym_file_open(&sf, node, &symopt, err, sizeof(err)) < 0);
	MT_ASSERT_MSG(strstr(err, "not a regular file"), "%s", err);
	/* A map record naming the node, as the decoder loads its binaries. */
	mt_bincache_init(&bc, NULL, &symopt);
	MT_ASSERT(!mt_bincache_get(&bc, node, NULL, 0, err, sizeof(err)));
	mt_bincache_fini(&bc);
	MT_ASSERT_MSG(!was_opened(in), "%s was opened", node);
	/* A device named as a bundle is refused unopened too; a FIFO is a
	 * stream the user may mean, and is opened (test_files.c). */
	if (strcmp(node, fifo)) {
		in = watch(node);
		fd = mt_infile_open(node, 0, NULL, NULL, err, sizeof(err));
		MT_ASSERT_EQ(fd, -ENODEV);
		MT_ASSERT_MSG(strstr(err, "is a character device"), "%s", err);
		MT_ASSERT_MSG(!was_opened(in), "%s was opened as a stream", node);
	}
}

MT_TEST(named_inputs_leave_fifos_and_devices_unopened)
{
	make_nodes();
	readers_leave_alone(fifo);
	if (!chr[0]) {
		remove_nodes();
		mt_skip("mknod is not allowed here: the FIFO was checked, no device");
	}
	readers_leave_alone(chr);
	remove_nodes();
}
