// SPDX-License-Identifier: MIT
/* `mtrace-user doctor`: print every prerequisite check with its fix. */
#include "commands.h"

#include <getopt.h>
#include <stdio.h>

#include "capture/capture_doctor.h"
#include "cli_msg.h"
#include "util/util.h"

static void print_check(const struct mt_check *c, void *ctx)
{
	static const char *const tags[] = { "ok", "info", "warn", "FAIL" };

	(void)ctx;
	printf("%-4s  %-14s %s\n", tags[c->status], c->name, c->detail);
	if (c->fix[0] && c->status >= MT_CHECK_WARN)
		printf("      %-14s fix: %s\n", "", c->fix);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mtrace-user doctor\n\n"
		     "Checks every prerequisite of a capture on this machine (CPU and Intel PT,\n"
		     "module support and the mtrace module with its ABI, /dev/mtrace, privileges,\n"
		     "kernel version and freeze path, BTF, Secure Boot and module signing,\n"
		     "uprobes, kprobes, PT owned by perf, kernel-tracing settings and /proc/kcore)\n"
		     "and prints each problem with its fix. Exit status 0 when a capture can work.\n");
}

int cmd_doctor(int argc, char **argv)
{
	int fails, rc = cli_help_only(argc, argv, "doctor", usage);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (optind < argc) {
		cli_err("doctor takes no arguments, not '%s' (see 'mtrace-user doctor --help')",
			argv[optind]);
		return CLI_EXIT_USAGE;
	}
	fails = mt_doctor_run(print_check, NULL);
	if (fails)
		printf("\n%d problem%s: a capture cannot work on this machine as it is\n", fails,
		       mt_plural(fails, "", "s"));
	else
		printf("\nall required checks passed\n");
	return fails ? 1 : 0;
}
