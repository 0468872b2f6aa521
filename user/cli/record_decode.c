// SPDX-License-Identifier: MIT
/*
 * Recording straight to Perfetto (record_decode.h).
 *
 * The capture writes all its bundles before any is decoded: decoding in
 * between would delay re-arming and leave the target's ptrace stops
 * unanswered for as long as a decode takes. Temporary bundles go to a fresh
 * hidden directory beside the output (same file system, and no existing
 * file can be clobbered). Each one is opened (mapped) and unlinked before
 * decoding starts, so an interrupted decode leaves no bundle behind.
 */
#include "record_decode.h"

#include "cli_msg.h"
#include "decode_bundle.h"
#include "files/outfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define BUNDLE_EXT ".mtrace"

static int usage_error(const char *fmt, const char *arg)
{
	fputs("mtrace-user: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 2;
}

/* A new directory ".mtrace-XXXXXX" beside OUTPUT; -1 with a message. */
static int make_bundle_dir(const char *output, char *dir, size_t len)
{
	const char *slash = strrchr(output, '/');
	int n = snprintf(dir, len, "%.*s%s.mtrace-XXXXXX", slash ? (int)(slash - output) : 0,
			 output, slash ? "/" : "");

	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "mtrace-user: %s: path too long\n", output);
		return -1;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "mtrace-user: cannot create a directory for the snapshots beside %s: %s\n",
			output, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Opens bundle INDEX of RO's capture into *R; a temporary one is unlinked
 * at once (the reader keeps it mapped). 0, or 1 with a message.
 */
static int open_bundle(const struct mt_capture_opts *ro, unsigned int index,
		       struct mt_bundle_reader **r)
{
	char path[PATH_MAX], err[512] = "path too long";

	if (mt_capture_output_path(ro->output, index, ro->snapshots, path, sizeof(path)) ||
	    mt_bundle_open(r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-user: snapshot %u cannot be read back (%s); it is kept as %s\n",
			index, err, path);
		*r = NULL;
		return 1;
	}
	if (ro->temporary_bundles)
		unlink(path);
	return 0;
}

static int decode_snapshot(const struct mt_capture_opts *o, bool allow_missing,
			   struct mt_bundle_reader *r, unsigned int index, unsigned int taken)
{
	struct decode_request q = { .quiet = o->quiet, .allow_missing = allow_missing };
	char output[PATH_MAX], name[32];

	if (mt_capture_output_path(o->output, index, o->snapshots, output, sizeof(output))) {
		fprintf(stderr, "mtrace-user: %s: path too long\n", o->output);
		return 1;
	}
	q.output = output;
	snprintf(name, sizeof(name), "snapshot %u", index);
	if (!o->quiet)
		fprintf(stderr, "mtrace-user: decoding snapshot %u of %u into %s\n", index, taken,
			output);
	return decode_bundle(r, name, &q);
}

int record_decode(const struct mt_capture_opts *o, const char *keep_bundle, bool allow_missing)
{
	struct mt_capture_opts ro = *o;
	struct mt_bundle_reader **r;
	char dir[PATH_MAX] = "", base[PATH_MAX + sizeof("/snapshot" BUNDLE_EXT)];
	size_t len = strlen(o->output), ext = strlen(BUNDLE_EXT);
	unsigned int taken;
	char err[PATH_MAX + 128];
	int rc;

	/* Any case: a .MTRACE file is a bundle's name too. */
	if (len >= ext && !strcasecmp(o->output + len - ext, BUNDLE_EXT))
		return usage_error("-o %s: this form writes a Perfetto trace; 'mtrace-user record -o FILE' writes a bundle, --keep-bundle FILE keeps one",
				   o->output);
	if (keep_bundle && mt_outfile_same_place(keep_bundle, o->output))
		return usage_error("--keep-bundle %s: the same file as the Perfetto trace", keep_bundle);
	ro.trace_output = o->output;
	if (keep_bundle) {
		ro.output = keep_bundle;
	} else {
		if (make_bundle_dir(o->output, dir, sizeof(dir)))
			return 1;
		snprintf(base, sizeof(base), "%s/snapshot" BUNDLE_EXT, dir);
		ro.output = base;
		ro.temporary_bundles = 1;
	}
	rc = mt_capture_record(&ro, &cli_reporter, &taken, err, sizeof(err));
	if (rc)
		cli_err("%s", err);
	rc = cli_capture_status(rc);
	r = calloc(taken ? taken : 1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "mtrace-user: out of memory\n");
		return 1;
	}
	for (unsigned int i = 0; i < taken; i++)
		if (open_bundle(&ro, i + 1, &r[i]))
			rc = 1;
	if (dir[0])
		rmdir(dir); /* fails, as it should, when a bundle was left there */
	for (unsigned int i = 0; i < taken; i++) {
		if (!r[i])
			continue;
		int d = decode_snapshot(o, allow_missing, r[i], i + 1, taken);

		/* A failure outranks decoded-with-missing-code (3), which outranks success. */
		if (d == CLI_EXIT_MISSING && !rc)
			rc = d;
		else if (d && d != CLI_EXIT_MISSING)
			rc = 1;
		mt_bundle_close(r[i]);
	}
	free(r);
	return rc;
}
