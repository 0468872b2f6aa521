// SPDX-License-Identifier: MIT
/* Opening named inputs only when they are regular files (regfile.h). */
#include "util/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *mt_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

static int refuse(mode_t mode, const char **kind)
{
	if (kind)
		*kind = mt_file_kind(mode);
	errno = S_ISDIR(mode) ? EISDIR : ENODEV;
	return -1;
}

int mt_open_regular(const char *path, const char **kind)
{
	struct stat st;
	int fd;

	if (kind)
		*kind = NULL;
	if (stat(path, &st))
		return -1;
	if (!S_ISREG(st.st_mode))
		return refuse(st.st_mode, kind);
	/*
	 * Should the name be replaced between the two calls, O_NONBLOCK keeps
	 * a FIFO's open from waiting and O_NOCTTY a terminal from becoming
	 * ours; what was opened is checked again.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return refuse(st.st_mode, kind);
	}
	/* Regular files never block; the flag goes so that nothing sees it. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

bool mt_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * A FIFO's open for writing waits for a reader, which may never come: the
 * wait is told first (nothing else would say why the command stands
 * still), and SIGINT, SIGTERM and SIGHUP may end it even where the caller
 * blocks them, as record does while it writes its snapshot.
 */
static int open_fifo(const char *path, int flags, mode_t mode, const struct mt_reporter *rep)
{
	int fd = open(path, flags | O_NONBLOCK, mode), e;
	sigset_t stop, old;

	if (fd >= 0) {
		/* A reader is there; writes wait for room in the pipe as usual. */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
	}
	if (errno != ENXIO)
		return -1;
	mt_report(rep, MT_SEV_INFO, "waiting for a reader on %s (a FIFO nobody reads yet; Ctrl-C to stop)",
		  path);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_UNBLOCK, &stop, &old);
	fd = open(path, flags, mode);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return fd;
}

int mt_open_write(const char *path, mode_t mode, const struct mt_reporter *rep)
{
	const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	struct stat st;

	if (!strcmp(path, MT_STDOUT_NAME))
		return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	if (!stat(path, &st) && S_ISFIFO(st.st_mode))
		return open_fifo(path, flags, mode, rep);
	return open(path, flags, mode);
}

/* The last part of the symlink PATH's target into OUT (LEN bytes): 0 or -1. */
static int link_base(const char *path, char *out, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *slash;

	if (n < 0)
		return -1;
	target[n] = '\0';
	slash = strrchr(target, '/');
	snprintf(out, len, "%s", slash ? slash + 1 : target);
	return 0;
}

int mt_chardev_sysfs(dev_t rdev, char *cls, char *name, size_t len)
{
	char dev[48], subsystem[64];

	/* The entry links to the device; its subsystem link names the class. */
	snprintf(dev, sizeof(dev), "/sys/dev/char/%u:%u", major(rdev), minor(rdev));
	snprintf(subsystem, sizeof(subsystem), "%s/subsystem", dev);
	return link_base(dev, name, len) || link_base(subsystem, cls, len) ? -1 : 0;
}
