// SPDX-License-Identifier: MIT
/* The subcommand table: one line per command. */
#include "commands.h"

#include <stddef.h>

const struct mt_command mt_commands[] = {
	{ NULL, NULL, NULL },
};
