// SPDX-License-Identifier: MIT
/* Same-file checks and atomic replacement of output files (outfile.h). */
#include "files/outfile.h"
#include "util/errmsg.h"
#include "util/regfile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporaries not yet committed or aborted, for mt_outfile_remove_pending(). */
#define MAX_PENDING 8
static char pending[MAX_PENDING][PATH_MAX];
static volatile sig_atomic_t pending_used[MAX_PENDING];

void mt_outfile_remove_pending(void)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending_used[i])
			unlink(pending[i]);
}

static int take_slot(const char *path)
{
	for (int i = 0; i < MAX_PENDING; i++) {
		if (pending_used[i])
			continue;
		snprintf(pending[i], sizeof(pending[i]), "%s", path);
		pending_used[i] = 1;
		return i;
	}
	return -1;	/* still removed on errors, only not by mt_outfile_remove_pending() */
}

static void drop_slot(struct mt_outfile *of)
{
	if (of->slot >= 0)
		pending_used[of->slot] = 0;
	of->slot = -1;
}

static int stat_name(const char *name, int std_fd, struct stat *st)
{
	return strcmp(name, "-") ? stat(name, st) : fstat(std_fd, st);
}

/* DIR and BASE of PATH; the directory is "." without a slash. */
static void split_path(const char *path, char *dir, size_t dirlen, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, dirlen, ".");
		*base = path;
	} else {
		snprintf(dir, dirlen, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		*base = slash + 1;
	}
}

/* Where PATH is or would be: its real path, or its directory's and its name. */
static bool place_of(const char *path, char out[PATH_MAX])
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base;

	if (realpath(path, out))
		return true;
	split_path(path, dir, sizeof(dir), &base);
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", base) <
	       PATH_MAX;
}

bool mt_outfile_same_place(const char *a, const char *b)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	struct stat sa, sb;

	if (!stat_name(a, STDOUT_FILENO, &sa) && !stat_name(b, STDOUT_FILENO, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return place_of(a, pa) && place_of(b, pb) && !strcmp(pa, pb);
}

/* Whether the file at PATH is an ELF file (a program, a library). */
static bool is_elf(const char *path)
{
	unsigned char magic[SELFMAG];
	int fd = mt_open_regular(path, NULL);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	      !memcmp(magic, ELFMAG, SELFMAG);
	close(fd);
	return elf;
}

/* What names OUTPUT and INPUT (IN: its stat), one file, are to each
 * other: a symlink or a hard link, or "" for two spellings of one path
 * ("./x" and "x", through a symlinked directory) or a standard stream. */
static const char *link_note(const char *output, const char *input, const struct stat *in)
{
	char out_path[PATH_MAX], in_path[PATH_MAX];
	struct stat st;

	if (!strcmp(output, "-") || !strcmp(input, "-"))
		return "";
	if (!lstat(output, &st) && S_ISLNK(st.st_mode))
		return " (a symbolic link to it)";
	if (!lstat(input, &st) && S_ISLNK(st.st_mode))
		return " (which is a symbolic link to it)";
	if (in->st_nlink > 1 && realpath(output, out_path) && realpath(input, in_path) &&
	    strcmp(out_path, in_path))
		return " (a hard link to it)";
	return "";
}

int mt_outfile_check_inputs(const char *output, const char *const *inputs, size_t n,
			    char *err, size_t errlen)
{
	struct stat out, in;

	if (stat_name(output, STDOUT_FILENO, &out))
		return 0;	/* not there yet: it cannot be an input */
	if (!S_ISREG(out.st_mode) && strcmp(output, "-"))
		return 0;	/* /dev/null and the like are never inputs worth keeping */
	for (size_t i = 0; i < n; i++) {
		if (!inputs[i] || stat_name(inputs[i], STDIN_FILENO, &in))
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino && S_ISREG(in.st_mode))
			return mt_errmsg(err, errlen, EEXIST,
					 "output %s is the input %s itself%s: choose another output file",
					 strcmp(output, "-") ? output : "(standard output)",
					 strcmp(inputs[i], "-") ? inputs[i] : "(standard input)",
					 link_note(output, inputs[i], &in));
	}
	/* No output of mtrace is one: a program or library named by mistake,
	 * maybe one the traced process runs or the decode will need. */
	if (strcmp(output, "-") && is_elf(output))
		return mt_errmsg(err, errlen, EEXIST,
				 "output %s is a program or library (an ELF file): choose another output file",
				 output);
	return 0;
}

static mode_t new_file_mode(const struct stat *old, int exists)
{
	mode_t mask;

	if (exists)
		return old->st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

int mt_outfile_begin(struct mt_outfile *of, const char *output, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;
	int exists, fd, n;
	long name_max;
	size_t keep;

	memset(of, 0, sizeof(*of));
	of->slot = -1;
	if (!*output)
		return mt_errmsg(err, errlen, EINVAL, "empty output file name");
	exists = stat(output, &st) == 0;
	if (!strcmp(output, "-") || (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		of->in_place = 1;
		snprintf(of->path, sizeof(of->path), "%s", strcmp(output, "-") ? output : MT_STDOUT_NAME);
		snprintf(of->write_path, sizeof(of->write_path), "%s", of->path);
		return 0;
	}
	if (exists && S_ISDIR(st.st_mode))
		return mt_errmsg(err, errlen, EISDIR, "output %s is a directory", output);
	/* Through a symlink the file it points to is replaced, not the link. */
	if (!exists || !realpath(output, of->path))
		n = snprintf(of->path, sizeof(of->path), "%s", output);
	else
		n = (int)strlen(of->path);
	if (n < 0 || (size_t)n >= sizeof(of->path))
		return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", output);
	split_path(of->path, dir, sizeof(dir), &base);
	/* The temporary's name is cut to fit; the rename at the end would fail,
	 * after all the work. */
	name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0)
		name_max = NAME_MAX;
	if (strlen(base) > (size_t)name_max)
		return mt_errmsg(err, errlen, ENAMETOOLONG,
				 "output file name too long (%zu bytes, at most %ld in %s): %s",
				 strlen(base), name_max, dir, output);
	/* ".tmp-XXXXXX-BASE", keeping BASE's end (its suffix) within NAME_MAX. */
	keep = strlen(base);
	if (keep > NAME_MAX - 12)
		keep = NAME_MAX - 12;
	n = snprintf(of->write_path, sizeof(of->write_path), "%s/.tmp-XXXXXX-%s", dir,
		     base + strlen(base) - keep);
	if (n < 0 || (size_t)n >= sizeof(of->write_path))
		return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", output);
	fd = mkstemps(of->write_path, (int)keep + 1);
	if (fd < 0)
		return mt_errmsg(err, errlen, errno, "cannot create a file in %s for %s: %s", dir, output,
				 strerror(errno));
	/* On failure mkstemp's 0600 stays: safe, and the data is what matters. */
	(void)fchmod(fd, new_file_mode(&st, exists));
	close(fd);
	of->slot = take_slot(of->write_path);
	return 0;
}

void mt_outfile_abort(struct mt_outfile *of)
{
	if (!of->in_place && of->write_path[0])
		unlink(of->write_path);
	drop_slot(of);
	of->write_path[0] = '\0';
}

int mt_outfile_commit(struct mt_outfile *of, char *err, size_t errlen)
{
	int fd, e = 0;

	if (of->in_place)
		return 0;
	/* Data on disk before the name points at it, so a crash cannot leave an empty file. */
	fd = open(of->write_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd))
		e = mt_errmsg(err, errlen, errno, "cannot write %s: %s", of->path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!e && rename(of->write_path, of->path))
		e = mt_errmsg(err, errlen, errno, "cannot rename the finished output to %s: %s", of->path,
			      strerror(errno));
	if (e) {
		mt_outfile_abort(of);
		return e;
	}
	drop_slot(of);
	of->write_path[0] = '\0';
	return 0;
}

long long mt_outfile_size(const struct mt_outfile *of)
{
	struct stat st;

	return stat(of->path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}
