// SPDX-License-Identifier: MIT
/* Outputs named on the command line; see cli_output.h. */
#include "cli_output.h"
#include "cli_msg.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int cli_check_binary_output(const char *output, const char *what)
{
	if (!cli_output_is_stdout(output) || !isatty(STDOUT_FILENO))
		return 0;
	cli_err("not writing %s to the terminal: give a file (-o FILE) or redirect standard output",
		what);
	return CLI_EXIT_USAGE;
}

FILE *cli_summary_start(const char *output)
{
	if (!cli_output_is_stdout(output))
		return stdout;
	fputs("mtrace-user: ", stderr);
	return stderr;
}
