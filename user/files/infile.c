// SPDX-License-Identifier: MIT
/* Inputs from files, standard input, pipes and FIFOs (infile.h). */
#include "files/infile.h"
#include "util/errmsg.h"
#include "util/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Waits until FD has data or its end; a FIFO nobody writes yet gets one notice. */
static int wait_readable(int fd, const char *name, void (*notify)(const char *name))
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int timeout = notify ? MT_INFILE_NOTIFY_MS : -1;

	for (;;) {
		int n = poll(&p, 1, timeout);

		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0) {
			notify(name);
			timeout = -1;
		}
	}
}

/* Whether the stream's first bytes, HEAD (N so far), rule it out: once
 * MAGIC's length has arrived they must be MAGIC's bytes. */
static int wrong_magic(const struct mt_infile_magic *magic, uint8_t *head, size_t *n,
		       const char *buf, size_t len)
{
	size_t take = magic->len - *n < len ? magic->len - *n : len;

	if (*n == magic->len)
		return 0;
	memcpy(head + *n, buf, take);
	*n += take;
	return *n == magic->len && memcmp(head, magic->bytes, magic->len);
}

/* The error for a stream whose first bytes, HEAD (N), are not MAGIC's:
 * what they are instead when MAGIC's reader can tell. */
static int bad_magic(const char *name, const struct mt_infile_magic *magic, const uint8_t *head,
		     size_t n, char *err, size_t errlen)
{
	const char *is = magic->instead ? magic->instead(head, n) : NULL;

	if (is)
		return mt_errmsg(err, errlen, EBADMSG, "%s: not %s: %s", name, magic->what, is);
	return mt_errmsg(err, errlen, EBADMSG, "%s: not %s (bad magic)", name, magic->what);
}

/* A regular file is left to its reader, whose messages say more, unless
 * MAGIC's reader knows what it is instead: 0, or the error. */
static int other_format(int fd, const char *name, const struct mt_infile_magic *magic, char *err,
			size_t errlen)
{
	uint8_t head[MT_INFILE_MAGIC_MAX];
	ssize_t n;

	if (!magic || !magic->instead || magic->len > sizeof(head))
		return 0;
	n = pread(fd, head, magic->len, 0);
	if (n != (ssize_t)magic->len || !memcmp(head, magic->bytes, magic->len) ||
	    !magic->instead(head, magic->len))
		return 0;
	return bad_magic(name, magic, head, magic->len, err, errlen);
}

/* Copies the stream FD (blocking reads) into a memory file; returns its descriptor. */
static int slurp(int fd, const char *name, uint64_t max, const struct mt_infile_magic *magic,
		 char *err, size_t errlen)
{
	static char buf[1 << 16];
	uint8_t head[MT_INFILE_MAGIC_MAX];
	size_t nhead = 0;
	uint64_t total = 0;
	int mfd = memfd_create("mtrace-input", MFD_CLOEXEC), e = 0;

	if (mfd < 0)
		return mt_errmsg(err, errlen, errno, "%s: cannot buffer the input: %s", name,
				 strerror(errno));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = mt_errmsg(err, errlen, errno, "%s: read failed: %s", name, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (magic && wrong_magic(magic, head, &nhead, buf, (size_t)n)) {
			e = bad_magic(name, magic, head, nhead, err, errlen);
			break;
		}
		total += (uint64_t)n;
		if (max && total > max) {
			e = mt_errmsg(err, errlen, EFBIG, "%s: input is larger than %llu bytes", name,
				      (unsigned long long)max);
			break;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t k = write(mfd, buf + done, (size_t)(n - done));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				e = mt_errmsg(err, errlen, errno, "%s: cannot buffer the input: %s", name,
					      strerror(errno));
				goto out;
			}
			done += k;
		}
	}
out:
	if (e) {
		close(mfd);
		return e;
	}
	return mfd;
}

/* A named device or socket: refused (regfile.h says why it is not opened). */
static int not_a_file(const char *name, mode_t mode, char *err, size_t errlen)
{
	return mt_errmsg(err, errlen, ENODEV, "%s is %s: name a file, or pipe the data into '-'",
			 name, mt_file_kind(mode));
}

int mt_infile_open(const char *name, uint64_t max_stream, const struct mt_infile_magic *magic,
		   void (*notify)(const char *name), char *err, size_t errlen)
{
	int stdin_ = !strcmp(name, "-");
	const char *shown = stdin_ ? "standard input" : name;
	struct stat st;
	int fd, mfd;

	err[0] = '\0';
	/* A named device is not opened at all: its open can act (regfile.h).
	 * Standard input is the shell's, opened already, and read as it is. */
	if (!stdin_ && !stat(name, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    !S_ISFIFO(st.st_mode))
		return not_a_file(shown, st.st_mode, err, errlen);
	/* O_NONBLOCK: opening a FIFO must not wait for its writer; O_NOCTTY:
	 * should the name have become a terminal since, it is not made ours. */
	fd = stdin_ ? dup(STDIN_FILENO) : open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return mt_errmsg(err, errlen, errno, "%s: %s", shown, strerror(errno));
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		return mt_errmsg(err, errlen, e, "%s: %s", shown, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return mt_errmsg(err, errlen, EISDIR, "%s: is a directory", shown);
	}
	if (S_ISREG(st.st_mode)) {
		int e = other_format(fd, shown, magic, err, errlen);

		if (e) {
			close(fd);
			return e;
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
	}
	if (!stdin_ && !S_ISFIFO(st.st_mode)) {
		close(fd);
		return not_a_file(shown, st.st_mode, err, errlen);
	}
	/*
	 * A FIFO without a writer reads as empty: wait in poll() for one (with
	 * a notice), then read normally. Standard input is read as it is; its
	 * flags are shared with the shell and stay untouched.
	 */
	if (!stdin_ && S_ISFIFO(st.st_mode)) {
		int e = wait_readable(fd, shown, notify);

		if (e) {
			close(fd);
			return mt_errmsg(err, errlen, -e, "%s: %s", shown, strerror(-e));
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	}
	if (magic && (!magic->len || magic->len > MT_INFILE_MAGIC_MAX)) {
		close(fd);
		return mt_errmsg(err, errlen, EINVAL, "%s: bad magic length %zu", shown, magic->len);
	}
	mfd = slurp(fd, shown, max_stream, magic, err, errlen);
	close(fd);
	return mfd;
}
