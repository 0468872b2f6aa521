/* SPDX-License-Identifier: MIT */
/* The mtrace-user subcommands; each takes its own argv (argv[0] = name). */
#ifndef MTRACE_CLI_COMMANDS_H
#define MTRACE_CLI_COMMANDS_H

struct mt_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

/* The table, terminated by an entry with a NULL name (commands.c). */
extern const struct mt_command mt_commands[];

int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
/* `mtrace-user [OPTIONS] -- CMD`: record, then decode to Perfetto (argv[0] = program). */
int cmd_trace(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
