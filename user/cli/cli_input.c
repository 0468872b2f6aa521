// SPDX-License-Identifier: MIT
/* Opening command-line bundles (cli_input.h). */
#include "cli_input.h"

#include "cli_msg.h"
#include "files/infile.h"
#include "perfdata/perfdata_format.h"
#include "perfdata/perfdata_import.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

const char *cli_input_name(const char *arg)
{
	return strcmp(arg, "-") ? arg : "standard input";
}

static void waiting(const char *name)
{
	cli_err("waiting for data on %s (a FIFO nobody writes to yet; Ctrl-C to stop)", name);
}

static bool perf_data_head(const uint8_t *head, size_t len)
{
	const size_t n = sizeof(PERFDATA_MAGIC) - 1;

	return len >= n && !memcmp(head, PERFDATA_MAGIC, n);
}

/* decode and report read a perf.data's header by offset: from a file only. */
static const char *perf_data_to_save(const uint8_t *head, size_t len)
{
	return perf_data_head(head, len) ?
		       "it is a perf.data, which decode and report read from a file: save it to one first" :
		       NULL;
}

/* The commands that read only bundles (bundle-info, export). */
static const char *perf_data_not_read(const uint8_t *head, size_t len)
{
	return perf_data_head(head, len) ?
		       "it is a perf.data, and this command reads bundles: save it to a file, which decode and report read as it is and convert makes a bundle of" :
		       NULL;
}

/* Opens ARG, a bundle, into *R; PERF_DATA says what a perf.data piped in is
 * to the command. 0, or 1 after printing why. */
static int open_bundle(const char *arg, const struct mt_bundle_limits *lim,
		       const char *(*perf_data)(const uint8_t *head, size_t len),
		       struct mt_bundle_reader **r)
{
	/* A stream is held in memory: never more than half of it (/dev/zero is a stream too). */
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t max = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 2 : 0;
	/* A stream that is no bundle is refused at its first bytes. */
	const struct mt_infile_magic bundle = { MT_BUNDLE_MAGIC, MT_BUNDLE_MAGIC_LEN,
						"an mtrace bundle", perf_data };
	char err[640];
	int fd;

	*r = NULL;
	/* A bundle is binary: from a terminal it would only wait, silently,
	 * for an end of file. */
	if (!strcmp(arg, "-") && isatty(STDIN_FILENO)) {
		cli_err("standard input is a terminal: pipe a bundle into it or name the bundle's file");
		return 1;
	}
	fd = mt_infile_open(arg, max, &bundle, waiting, err, sizeof(err));
	if (fd < 0) {
		cli_err("%s", err);
		return 1;
	}
	if (mt_bundle_open_fd(r, fd, cli_input_name(arg), lim, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		close(fd);
		return 1;
	}
	close(fd);	/* the reader keeps its mapping */
	return 0;
}

int cli_open_bundle(const char *arg, const struct mt_bundle_limits *lim,
		    struct mt_bundle_reader **r)
{
	/* Commands that take only bundles (bundle-info, export) say what to
	 * do with the perf.data a user may well hand them. */
	if (perfdata_is_perf_data(arg)) {
		*r = NULL;
		cli_err("%s is a perf.data file, not a bundle: decode and report read it as it is, convert makes a bundle of it",
			arg);
		return 1;
	}
	return open_bundle(arg, lim, perf_data_not_read, r);
}

int cli_open_input(const char *arg, const struct mt_bundle_limits *lim, const char *symfs,
		   int quiet, struct mt_bundle_reader **r, int *perf_data)
{
	struct perfdata_import_opts po = { .symfs = symfs };
	struct perfdata_import_stats st;
	int is_perf_data = perfdata_is_perf_data(arg);
	struct stat sb;
	char err[1024];

	if (perf_data)
		*perf_data = is_perf_data;
	/* A directory can only be perf's (--kcore): the perf.data reader
	 * says what is wrong with it, the bundle reader only "a directory". */
	if (!is_perf_data && strcmp(arg, "-") && !stat(arg, &sb) && S_ISDIR(sb.st_mode))
		is_perf_data = 1;
	if (!is_perf_data)
		return open_bundle(arg, lim, perf_data_to_save, r);
	if (perfdata_import_open(arg, &po, r, &st, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return 1;
	}
	if (st.warning[0] && !quiet)
		cli_err("warning: %s: %s", arg, st.warning);
	return 0;
}

int cli_one_bundle(int argc, char **argv, const char *cmd)
{
	if (optind == argc) {
		cli_err("%s needs a bundle (see 'mtrace-user %s --help')", cmd, cmd);
		return CLI_EXIT_USAGE;
	}
	if (optind < argc - 1) {
		cli_err("%s takes one bundle, not also '%s' (see 'mtrace-user %s --help')", cmd,
			argv[optind + 1], cmd);
		return CLI_EXIT_USAGE;
	}
	return cli_check_name("the bundle", argv[optind]);
}

int cli_check_path(const char *opt, const char *path, int dir)
{
	struct stat st;
	int rc = cli_check_name(opt, path);

	if (rc)
		return rc;
	if (stat(path, &st)) {
		cli_err("%s %s: %s", opt, path, strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (dir && !S_ISDIR(st.st_mode)) {
		cli_err("%s %s: not a directory", opt, path);
		return CLI_EXIT_USAGE;
	}
	return 0;
}
