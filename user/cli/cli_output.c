// SPDX-License-Identifier: MIT
/* Outputs named on the command line; see cli_output.h. */
#include "cli_output.h"
#include "cli_msg.h"

#include "files/outfile.h"
#include "perfdata/perfdata_dir.h"
#include "util/regfile.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Pseudo-terminals' majors (the kernel's UNIX98_PTY_SLAVE_MAJOR and the
 * seven after it), which sysfs does not list. */
#define PTY_FIRST_MAJOR 136u
#define PTY_LAST_MAJOR 143u

const char *cli_output_name(const char *output)
{
	return output && strcmp(output, "-") ? output : "standard output";
}

bool cli_output_is_stdout(const char *output)
{
	struct stat named, out;

	if (!strcmp(output, "-"))
		return true;
	return !stat(output, &named) && !fstat(STDOUT_FILENO, &out) &&
	       named.st_dev == out.st_dev && named.st_ino == out.st_ino;
}

/* Whether OUTPUT names a terminal, told without opening it (opening a
 * device can act on it: a watchdog's arms it): a pseudo-terminal, or a
 * device of the tty class (/dev/tty, a console, a serial line). */
static bool names_terminal(const char *output)
{
	char cls[NAME_MAX + 1], name[NAME_MAX + 1];
	struct stat st;

	if (stat(output, &st) || !S_ISCHR(st.st_mode))
		return false;
	if (major(st.st_rdev) >= PTY_FIRST_MAJOR && major(st.st_rdev) <= PTY_LAST_MAJOR)
		return true;
	return !mt_chardev_sysfs(st.st_rdev, cls, name, sizeof(cls)) && !strcmp(cls, "tty");
}

int cli_check_binary_output(const char *output, const char *what)
{
	if (cli_output_is_stdout(output)) {
		if (!isatty(STDOUT_FILENO))
			return 0;
		cli_err("not writing %s to the terminal: give a file (-o FILE) or redirect standard output",
			what);
		return CLI_EXIT_USAGE;
	}
	if (!names_terminal(output))
		return 0;
	cli_err("not writing %s to the terminal %s: give a file (-o FILE)", what, output);
	return CLI_EXIT_USAGE;
}

int cli_check_not_input(const char *output, const char *input)
{
	char files[PERFDATA_DIR_FILES][PATH_MAX], err[1024];
	const char *names[PERFDATA_DIR_FILES] = { input };
	size_t n = 1;

	if (strcmp(input, "-")) {
		n = perfdata_dir_files(input, files);
		for (size_t i = 0; i < n; i++)
			names[i] = files[i];
	}
	if (!mt_outfile_check_inputs(output, names, n, err, sizeof(err)))
		return 0;
	cli_err("%s", err);
	return CLI_EXIT_USAGE;
}

FILE *cli_summary_start(const char *output)
{
	if (!cli_output_is_stdout(output))
		return stdout;
	fputs("mtrace-user: ", stderr);
	return stderr;
}
