// SPDX-License-Identifier: MIT
/* mtrace-user: dispatch to a subcommand. */
#include "commands.h"

#include "cli_msg.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: mtrace-user [--version] [--help] COMMAND [ARGS]\n"
		     "       mtrace-user [RECORD OPTIONS] -- CMD [ARGS]   (record, then decode to Perfetto)\n\ncommands:\n");
	for (const struct mt_command *c = mt_commands; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n'mtrace-user COMMAND --help' describes one command ('record --help' also the\n"
		     "top-level form); see also mtrace-user(1).\n");
}

int main(int argc, char **argv)
{
	cli_remove_outputs_on_signals();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("mtrace-user %s\n", MTRACE_VERSION);
		return 0;
	}
	/* `mtrace-user [OPTIONS] -- CMD`: options first means record and decode. */
	if (argv[1][0] == '-')
		return cmd_trace(argc, argv);
	for (const struct mt_command *c = mt_commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	cli_err("unknown command '%s' (see 'mtrace-user --help')", argv[1]);
	return CLI_EXIT_USAGE;
}
