// SPDX-License-Identifier: MIT
/* `mtrace-user convert PERF.DATA -o OUT.mtrace`: a perf recording as a bundle. */
#include "commands.h"

#include "cli_input.h"
#include "cli_msg.h"
#include "cli_output.h"

#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_import.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user convert [OPTIONS] PERF.DATA -o OUT.mtrace\n\n"
		"Writes a perf.data recorded with perf record -e intel_pt// (per-CPU or per-thread,\n"
		"with or without --snapshot) as a snapshot bundle to decode anywhere. Binaries\n"
		"missing here are copied in from DIR or perf's build-id cache; a warning names\n"
		"each one found in neither, which the bundle lacks (the first eight, then how\n"
		"many more). PERF.DATA may be the directory perf record --kcore writes: its\n"
		"kernel, module and BPF code is copied in from kcore_dir.\n\n"
		"  -o, --output FILE     the bundle to write\n"
		"      --symfs DIR       look for the recorded binaries under DIR (as perf --symfs)\n"
		"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n");
}

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "symfs", required_argument, NULL, 's' },
		{ "buildid-dir", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfdata_import_opts io = { .rep = &cli_reporter };
	struct perfdata_import_stats st;
	struct perfdata_file f;
	char kcore_dir[4200];
	const char *out = NULL;
	FILE *sum;
	char err[1024];
	int c, e;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			io.symfs = optarg;
			if (cli_check_path("--symfs", optarg, 1))
				return CLI_EXIT_USAGE;
			break;
		case 'b':
			io.buildid_dir = optarg;
			if (cli_check_path("--buildid-dir", optarg, 1))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option(c, argv, opts, "convert");
		}
	}
	if (!out || optind != argc - 1) {
		cli_err("convert needs -o OUT and one perf.data (see 'mtrace-user convert --help')");
		return CLI_EXIT_USAGE;
	}
	if ((e = cli_check_name("-o", out)) || (e = cli_check_name("the perf.data", argv[optind])))
		return e;
	/* perf's pipe output (perf record -o -) is another format, not read. */
	if (!strcmp(argv[optind], "-")) {
		cli_err("convert reads a perf.data file, not standard input: save it to a file first");
		return CLI_EXIT_USAGE;
	}
	/* Before anything is opened for writing: the perf.data is never the output. */
	if ((e = cli_check_not_input(out, argv[optind])) ||
	    (e = cli_check_binary_output(out, "a snapshot bundle")))
		return e;
	if (perfdata_open_input(&f, argv[optind], kcore_dir, sizeof(kcore_dir))) {
		cli_err("%s: %s", argv[optind], f.err);
		perfdata_close(&f);
		return 1;
	}
	if (kcore_dir[0])
		io.kcore_dir = kcore_dir;
	e = perfdata_import(&f, argv[optind], out, &io, &st, err, sizeof(err));
	perfdata_close(&f);
	if (e) {
		cli_err("%s", err);
		return 1;
	}
	if (st.warning[0])
		cli_err("warning: %s", st.warning);
	sum = cli_summary_start(out);
	fprintf(sum, "wrote %s: %zu %s, %zu bytes of PT, %zu thread%s, %zu map%s, %zu switch%s, "
		"%zu binar%s embedded",
		cli_output_name(out), st.streams,
		st.per_thread ? mt_plural(st.streams, "thread's buffer", "threads' buffers") :
				mt_plural(st.streams, "CPU", "CPUs"),
		st.pt_bytes, st.threads, mt_plural(st.threads, "", "s"), st.maps,
		mt_plural(st.maps, "", "s"), st.switches, mt_plural(st.switches, "", "es"),
		st.embedded, mt_plural(st.embedded, "y", "ies"));
	if (st.kernel_ranges)
		fprintf(sum, ", %zu kernel range%s (%llu bytes of code)", st.kernel_ranges,
			mt_plural(st.kernel_ranges, "", "s"), (unsigned long long)st.kernel_bytes);
	fputc('\n', sum);
	return 0;
}
