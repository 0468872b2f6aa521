// SPDX-License-Identifier: MIT
/* The subcommand table: one line per command. */
#include "commands.h"

#include <stddef.h>

const struct mt_command mt_commands[] = {
	{ "bundle-info", cmd_info, "check a snapshot bundle and list its sections" },
	{ "record", cmd_record, "trace a program and write a snapshot bundle" },
	{ "doctor", cmd_doctor, "check every prerequisite of a capture on this machine" },
	{ "decode", cmd_decode, "decode a snapshot bundle into a Perfetto trace (or text)" },
	{ "report", cmd_report, "print what snapshot bundles say: trigger, slow calls, time" },
	{ "export", cmd_export, "write a snapshot bundle as a perf.data file for perf" },
	{ "convert", cmd_convert, "write a perf.data (perf record -e intel_pt//) as a bundle" },
	{ NULL, NULL, NULL },
};
