// SPDX-License-Identifier: MIT
/* `mtrace-user export --perf-data OUT BUNDLE`: a bundle as a perf.data file. */
#include "commands.h"

#include "cli_input.h"
#include "cli_msg.h"
#include "cli_output.h"
#include "files/outfile.h"

#include "bundle/bundle.h"
#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_export.h"
#include "util/util.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mtrace-user export --perf-data OUT [--symfs DIR] [--kcore] BUNDLE\n\n"
		"Writes the bundle as a perf.data file that perf's own Intel PT decoder reads\n"
		"(perf script --itrace=..., perf report), and the traced binaries and vDSO\n"
		"under DIR (default OUT.symfs) for perf's --symfs. Prints the perf command.\n\n"
		"  -p, --perf-data OUT   the perf.data file to write\n"
		"      --symfs DIR       where to put the binaries (default OUT.symfs)\n"
		"      --kcore           OUT is a directory as perf record --kcore writes:\n"
		"                        OUT/data, and the bundle's kernel, module and BPF\n"
		"                        text in OUT/kcore_dir\n");
}

/* A shell word: the string in single quotes when it needs any. */
static void print_word(const char *s)
{
	if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-+=,:@")]) {
		putchar('\'');
		for (; *s; s++)
			fputs(*s == '\'' ? "'\\''" : (char[]){ *s, 0 }, stdout);
		putchar('\'');
	} else {
		fputs(s, stdout);
	}
}

/* With --kcore, a perf.data directory already at OUT is replaced whole:
 * refused when BUNDLE is one of its files. */
static int check_kcore_output(const char *out, const char *bundle)
{
	char files[PERFDATA_DIR_FILES][PATH_MAX], err[1024];
	size_t n = perfdata_dir_files(out, files);

	for (size_t i = 0; i < n; i++) {
		if (!mt_outfile_check_inputs(files[i], &bundle, 1, err, sizeof(err)))
			continue;
		cli_err("--kcore would replace %s, the bundle being exported: choose another output directory",
			files[i]);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "perf-data", required_argument, NULL, 'p' },
		{ "symfs", required_argument, NULL, 's' },
		{ "kcore", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfdata_export_opts eo = { 0 };
	struct perfdata_export_stats st;
	struct mt_bundle_reader *r;
	const char *out = NULL;
	char err[1024];
	int c, e;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			out = optarg;
			break;
		case 's':
			eo.symfs = optarg;
			if (cli_check_name("--symfs", optarg))
				return CLI_EXIT_USAGE;
			break;
		case 'k':
			eo.kcore = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option(c, argv, opts, "export");
		}
	}
	if (!out || optind != argc - 1) {
		cli_err("export needs --perf-data OUT and one bundle (see 'mtrace-user export --help')");
		return CLI_EXIT_USAGE;
	}
	if ((e = cli_check_name("--perf-data", out)) ||
	    (e = cli_check_name("the bundle", argv[optind])))
		return e;
	if (cli_output_is_stdout(out)) {
		cli_err("export writes a perf.data file, which perf reads by seeking: name a file, not standard output");
		return CLI_EXIT_USAGE;
	}
	/* Before anything is opened for writing: the bundle is never the output,
	 * nor is anything that cannot take a perf.data. */
	if ((e = cli_check_not_input(out, argv[optind])) ||
	    (eo.kcore && (e = check_kcore_output(out, argv[optind]))))
		return e;
	if (perfdata_export_check_out(out, eo.kcore, err, sizeof(err))) {
		cli_err("%s", err);
		return CLI_EXIT_USAGE;
	}
	eo.bundle = argv[optind];
	eo.name = cli_input_name(argv[optind]);
	if (cli_open_bundle(argv[optind], NULL, &r))
		return CLI_EXIT_FAIL;
	e = perfdata_export(r, out, &eo, &st, err, sizeof(err));
	mt_bundle_close(r);
	if (e) {
		cli_err("%s", err);
		return 1;
	}
	if (st.warning[0])
		cli_err("warning: %s", st.warning);
	printf("wrote %s: %zu CPU%s, %zu bytes of PT, %zu thread%s, %zu map%s, %zu switch%s;\n"
	       "%zu binar%s in %s\n",
	       out, st.cpus, mt_plural(st.cpus, "", "s"), st.pt_bytes, st.threads,
	       mt_plural(st.threads, "", "s"), st.maps, mt_plural(st.maps, "", "s"), st.switches,
	       mt_plural(st.switches, "", "es"), st.binaries, mt_plural(st.binaries, "y", "ies"),
	       st.symfs);
	if (st.kcore)
		printf("kernel code in %s/kcore_dir: %zu range%s, %zu module%s, %zu BPF range%s\n",
		       out, st.kernel_ranges, mt_plural(st.kernel_ranges, "", "s"), st.modules,
		       mt_plural(st.modules, "", "s"), st.bpf_ranges,
		       mt_plural(st.bpf_ranges, "", "s"));
	printf("decode it with perf:\n  perf script -i ");
	print_word(out);
	printf(" --symfs ");
	print_word(st.symfs);
	if (st.kernel) {
		printf(" --vmlinux ");
		print_word(st.vmlinux);
	}
	printf(" --itrace=cr -F tid,time,ip,sym,addr,flags\n");
	return 0;
}
