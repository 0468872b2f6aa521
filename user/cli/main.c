// SPDX-License-Identifier: MIT
/* mtrace-user: dispatch to a subcommand. */
#include "commands.h"

#include "cli_msg.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: mtrace-user [--version] [--help] COMMAND [ARGS]\n"
		     "       mtrace-user [RECORD OPTIONS] -- CMD [ARGS]   (record, then decode to Perfetto)\n\ncommands:\n");
	for (const struct mt_command *c = mt_commands; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n'mtrace-user COMMAND --help' (or 'mtrace-user help COMMAND') describes one\n"
		     "command ('record --help' also the top-level form); see also mtrace-user(1).\n");
}

/* Edits (insertions, deletions, substitutions) from A to B, up to 31 characters each. */
static size_t edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[32];

	if (la > 31 || lb > 31)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/*
 * The command NAME is, else NULL after telling what it most likely stands
 * for: the commands it begins (two characters at least), else the nearest
 * within two edits.
 */
static const struct mt_command *find(const char *name)
{
	const struct mt_command *c;
	size_t n = strlen(name), best = 3, len = 0, k = 0;
	bool prefix = false;
	char hint[160] = "";

	for (c = mt_commands; c->name; c++) {
		size_t d = edits(name, c->name);

		if (!d)
			return c;
		prefix |= n >= 2 && !strncmp(c->name, name, n);
		if (d < best)
			best = d;
	}
	for (c = mt_commands; c->name; c++)
		if ((prefix ? !strncmp(c->name, name, n) : edits(name, c->name) == best) &&
		    len < sizeof(hint))
			len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s'%s'",
						k++ ? " or " : ": did you mean ", c->name);
	if (k)
		cli_err("unknown command '%s'%s? (see 'mtrace-user --help')", name, hint);
	else if (strchr(name, '/'))
		cli_err("unknown command '%s': to trace a program, 'mtrace-user -- %s' "
			"(see 'mtrace-user --help')", name, name);
	else
		cli_err("unknown command '%s' (see 'mtrace-user --help')", name);
	return NULL;
}

/* `help [COMMAND]`, as git and perf take it: the usage, or COMMAND --help. */
static int help(int argc, char **argv)
{
	const struct mt_command *c;
	char *args[] = { argv[1], "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (argc > 2) {
		cli_err("help takes one command (see 'mtrace-user --help')");
		return CLI_EXIT_USAGE;
	}
	c = find(argv[1]);
	return c ? c->run(2, args) : CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct mt_command *c;

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
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	c = find(argv[1]);
	return c ? c->run(argc - 1, argv + 1) : CLI_EXIT_USAGE;
}
