// SPDX-License-Identifier: MIT
/*
 * The limit on a bundle's total decompressed size: many sections, each
 * within the per-section limits, that together declare far more than the
 * file could hold (a small file asking for gigabytes) are refused at open
 * with the real figures; an explicit limit lets them through.
 */
#include "mt_test.h"

#include "bundle/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#define PAYLOAD (4u << 20)
#define SECTIONS 80	/* 320 MiB declared, more than the 256 MiB floor */

static void write_zero_sections(const char *path)
{
	struct mt_bundle_writer *w;
	uint8_t *zeros = calloc(1, PAYLOAD);
	char err[256];

	MT_ASSERT(zeros);
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < SECTIONS; i++)
		MT_ASSERT_EQ(mt_bundle_write_section(w, 0x4242, NULL, 0, zeros, PAYLOAD,
						     MT_BUNDLE_COMP_ZSTD), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	free(zeros);
}

MT_TEST(total_decompressed_size_is_capped)
{
	char path[] = "/tmp/mt-limits-XXXXXX", err[512];
	struct mt_bundle_limits lim = { .max_total_raw = 1ULL << 30 };
	struct mt_bundle_reader *r;
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	write_zero_sections(path);
	MT_ASSERT_EQ(mt_bundle_open_fd(&r, fd, "z.mtrace", NULL, err, sizeof(err)), -EFBIG);
	MT_ASSERT(r == NULL);
	MT_ASSERT_MSG(strstr(err, "z.mtrace: ") == err, "%s", err);
	MT_ASSERT_MSG(strstr(err, "more than the limit of 268435456 (--max-decompressed SIZE raises it)"),
		      "%s", err);
	/* Through the path-based open too, with the default limit. */
	MT_ASSERT_EQ(mt_bundle_open(&r, path, err, sizeof(err)), -EFBIG);
	/* Raised: the same bundle opens, its sections skipped as unknown. */
	MT_ASSERT_MSG(mt_bundle_open_fd(&r, fd, "z.mtrace", &lim, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_bundle_section_count(r), SECTIONS);
	mt_bundle_close(r);
	close(fd);
	unlink(path);
}

/* A FIFO given to the path-based open fails at once instead of waiting for a writer. */
MT_TEST(fifo_open_does_not_block)
{
	char dir[] = "/tmp/mt-limits-XXXXXX", path[64], err[512];
	struct mt_bundle_reader *r;

	MT_ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	MT_ASSERT_EQ(mkfifo(path, 0600), 0);
	MT_ASSERT_EQ(mt_bundle_open(&r, path, err, sizeof(err)), -EINVAL);
	MT_ASSERT_MSG(strstr(err, "not a regular file"), "%s", err);
	unlink(path);
	rmdir(dir);
}
