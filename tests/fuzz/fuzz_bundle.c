// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the bundle reader. Each input is read twice: as
 * given (exercising framing and checksums) and re-sealed with valid
 * checksums (so that mutations reach the structural checks behind them).
 * Every rejection must carry a message naming an offset; every accepted
 * bundle must be readable in full, from memory and from a file.
 */
#include "bundle/bundle.h"

#include "../unit/test_bundle_seal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void must(int cond, const char *what, const char *msg)
{
	if (!cond) {
		fprintf(stderr, "fuzz_bundle: %s: %s\n", what, msg);
		abort();
	}
}

/* A lazily decoded payload either reads in full or fails with a section message. */
static void payload_ok(struct mt_bundle_reader *r, int rc, const uint8_t *d, size_t len)
{
	if (rc == 0) {
		volatile uint32_t sum = (uint32_t)crc32(0, d, (uInt)len);

		(void)sum;
		return;
	}
	must(strstr(mt_bundle_reader_errmsg(r), "section ") != NULL, "payload error",
	     mt_bundle_reader_errmsg(r));
}

/* CPU I's PT through the stream reader: the whole payload's bytes (D, LEN)
 * when that read worked (RC 0), else an error naming the section. */
static void stream_ok(struct mt_bundle_reader *r, size_t i, int rc, const uint8_t *d, size_t len)
{
	struct mt_bundle_stream *st;
	uint8_t piece[777];
	size_t at = 0;
	ssize_t n;

	if (mt_bundle_pt_stream_open(r, i, &st) < 0) {
		must(rc < 0, "stream open", mt_bundle_reader_errmsg(r));
		return;
	}
	while ((n = mt_bundle_stream_read(st, piece, sizeof(piece))) > 0) {
		must(rc || (at + (size_t)n <= len && !memcmp(piece, d + at, (size_t)n)),
		     "stream bytes", "");
		at += (size_t)n;
	}
	if (!rc)
		must(n == 0 && at == len, "stream length", mt_bundle_stream_errmsg(st));
	else
		must(n < 0 && strstr(mt_bundle_stream_errmsg(st), "section ") != NULL,
		     "stream error", mt_bundle_stream_errmsg(st));
	mt_bundle_stream_close(st);
}

/* The switch table read at open reads back the same whole and as a
 * stream, in steps of any size. */
static void switches_ok(struct mt_bundle_reader *r)
{
	const struct mt_bundle_switch_entry *all;
	struct mt_bundle_switch_entry step[7];
	struct mt_bundle_switch_stream *ss;
	size_t n, at = 0;
	ssize_t got;

	must(mt_bundle_switches(r, &all, &n) == 0 && n == mt_bundle_switch_count(r),
	     "switch table", mt_bundle_reader_errmsg(r));
	must(mt_bundle_switch_stream_open(r, &ss) == 0, "switch stream open", "");
	while ((got = mt_bundle_switch_stream_read(ss, step, 1 + at % 7)) > 0) {
		must(at + (size_t)got <= n && !memcmp(step, all + at, (size_t)got * sizeof(*step)),
		     "switch stream", "differs from the table");
		at += (size_t)got;
	}
	must(got == 0 && at == n, "switch stream end", mt_bundle_switch_stream_errmsg(ss));
	mt_bundle_switch_stream_close(ss);
}

static void read_all(struct mt_bundle_reader *r)
{
	const struct mt_bundle_map *maps;
	const struct mt_bundle_thread *th;
	const struct mt_bundle_module *mods;
	const uint8_t *d;
	const char *text;
	size_t len, n;
	int rc;

	/* Each getter runs before its results are passed on (argument order is unspecified). */
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		rc = mt_bundle_pt_data(r, i, &d, &len);
		payload_ok(r, rc, d, len);
		stream_ok(r, i, rc, d, len);
	}
	for (size_t i = 0; i < mt_bundle_file_count(r); i++) {
		rc = mt_bundle_file_data(r, i, &d, &len);
		payload_ok(r, rc, d, len);
	}
	for (size_t i = 0; i < mt_bundle_ktext_count(r); i++) {
		rc = mt_bundle_ktext_data(r, i, &d, &len);
		payload_ok(r, rc, d, len);
	}
	rc = mt_bundle_kallsyms(r, &text, &len);
	if (rc != -ENOENT)
		payload_ok(r, rc, (const uint8_t *)text, len);
	switches_ok(r);
	/* Strings handed out must be in bounds and terminated: strlen touches them all. */
	n = mt_bundle_maps(r, &maps);
	for (size_t i = 0; i < n; i++)
		must(strlen(maps[i].path) < 1u << 31 && maps[i].start < maps[i].end, "map", "");
	n = mt_bundle_threads(r, &th);
	for (size_t i = 0; i < n; i++)
		must(strlen(th[i].comm) < 1u << 31 && th[i].cmdline[th[i].cmdline_len] == 0,
		     "thread", "");
	n = mt_bundle_modules(r, &mods);
	for (size_t i = 0; i < n; i++)
		must(strlen(mods[i].name) < 1u << 31, "module", "");
}

/* The same bytes as a file, whose streams read it with pread() instead of
 * in place: it opens as the memory did and reads the same. */
static void read_as_file(const uint8_t *data, size_t size)
{
	struct mt_bundle_reader *r;
	char err[512];
	int fd = memfd_create("fuzz_bundle", MFD_CLOEXEC);
	size_t done = 0;

	must(fd >= 0, "memfd_create", strerror(errno));
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		must(n > 0, "memfd write", strerror(errno));
		done += (size_t)n;
	}
	must(mt_bundle_open_fd(&r, fd, "input", NULL, err, sizeof(err)) == 0, "open as a file", err);
	read_all(r);
	mt_bundle_close(r);
	close(fd);
}

static void check(const uint8_t *data, size_t size)
{
	struct mt_bundle_reader *r;
	char err[512];

	if (mt_bundle_open_mem(&r, data, size, err, sizeof(err))) {
		must(strstr(err, " at offset ") != NULL, "error without offset", err);
		return;
	}
	read_all(r);
	mt_bundle_close(r);
	read_as_file(data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	check(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (sample_reseal(copy, size))
		check(copy, size);
	free(copy);
	return 0;
}
