// SPDX-License-Identifier: MIT
/* `mtrace-user bundle-info FILE`: list a bundle's sections and what they hold. */
#include "commands.h"

#include "bundle/bundle.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: mtrace-user bundle-info FILE\n\n"
		     "Checks a snapshot bundle (every section's checksum and structure) and\n"
		     "prints its format version, its sections with their sizes, and a summary.\n");
}

int cmd_info(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	return mt_bundle_print_info(argv[1], stdout) ? 1 : 0;
}
