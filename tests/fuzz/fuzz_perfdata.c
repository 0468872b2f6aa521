// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the perf.data reader and importer. Every rejection
 * must carry a one-line message; every record handed out must lie inside
 * the input; an accepted file must become a bundle that libmtrace reads.
 */
#include "bundle/bundle.h"
#include "perfdata/perfdata_import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256], out[300];

static void must(int cond, const char *what, const char *msg)
{
	if (!cond) {
		fprintf(stderr, "fuzz_perfdata: %s: %s\n", what, msg);
		abort();
	}
}

static void message_ok(const char *msg)
{
	must(msg[0] != 0, "error without message", "");
	must(!strchr(msg, '\n'), "multi-line message", msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc, (void)argv;
	snprintf(dir, sizeof(dir), "%s/fuzz-perfdata-XXXXXX", tmp ? tmp : "/tmp");
	must(mkdtemp(dir) != NULL, "mkdtemp", dir);
	snprintf(out, sizeof(out), "%s/out.mtrace", dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Binaries are looked up nowhere: no build-id cache, no symfs. */
	struct perfdata_import_opts io = { .buildid_dir = "/nonexistent" };
	struct perfdata_import_stats st;
	struct mt_bundle_reader *r;
	struct perfdata_file f;
	struct perfdata_rec rec;
	uint64_t pos = 0;
	char err[1024] = "";
	uLong sum = 0;
	int e;

	if (perfdata_open_mem(&f, data, size)) {
		message_ok(f.err);
		perfdata_close(&f);
		return 0;
	}
	while ((e = perfdata_next(&f, &pos, &rec)) > 0) {
		must(rec.body >= data && rec.body + rec.body_len <= data + size, "record", "outside");
		sum = crc32(sum, rec.body, (uInt)rec.body_len);
		if (rec.aux)
			sum = crc32(sum, rec.aux, (uInt)rec.aux_len);
	}
	if (e < 0)
		message_ok(f.err);
	(void)sum;
	if (perfdata_import(&f, "fuzz.data", out, &io, &st, err, sizeof(err))) {
		message_ok(err);
	} else {
		must(mt_bundle_open(&r, out, err, sizeof(err)) == 0, "imported bundle", err);
		mt_bundle_close(r);
		unlink(out);
	}
	perfdata_close(&f);
	return 0;
}
