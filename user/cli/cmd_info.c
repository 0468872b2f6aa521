// SPDX-License-Identifier: MIT
/* `mtrace-user bundle-info FILE`: list a bundle's sections and what they hold. */
#include "commands.h"

#include "bundle/bundle.h"
#include "cli_input.h"
#include "cli_msg.h"
#include "decode/decode.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: mtrace-user bundle-info FILE\n\n"
		     "Checks a snapshot bundle (a file, or - for standard input: every section's\n"
		     "checksum and structure), prints its format version, its sections with their\n"
		     "sizes and a summary, and whether 'mtrace-user decode' can decode it here\n"
		     "(exit status 1 when it would refuse it).\n");
}

static void count_missing(void *ctx, enum mt_severity sev, const char *msg)
{
	(void)sev, (void)msg;
	++*(size_t *)ctx;
}

/* What decode would say before decoding: its set-up is the same checks. */
static int print_decodable(struct mt_bundle_reader *r)
{
	size_t missing = 0;
	const struct mt_reporter count = { count_missing, &missing };
	struct mt_decode_opts o = { .jobs = 1, .missing = &count };
	struct mt_decode *d;
	char err[512];

	if (mt_decode_open(&d, r, &o, err, sizeof(err)) < 0) {
		printf("decode: refused: %s\n", err);
		return 1;
	}
	mt_decode_free(d);
	if (missing)
		printf("decode: possible; %zu mapping%s without a usable binary on this machine (decode lists them)\n",
		       missing, mt_plural(missing, "", "s"));
	else
		printf("decode: possible\n");
	return 0;
}

int cmd_info(int argc, char **argv)
{
	struct mt_bundle_reader *r;
	int rc;

	if ((rc = cli_help_only(argc, argv, "bundle-info", usage)) ||
	    (rc = cli_one_bundle(argc, argv, "bundle-info")))
		return rc < 0 ? 0 : rc;
	if (cli_open_bundle(argv[optind], NULL, &r))
		return CLI_EXIT_FAIL;
	mt_bundle_print_info_of(r, cli_input_name(argv[optind]), stdout);
	rc = print_decodable(r);
	mt_bundle_close(r);
	return rc;
}
