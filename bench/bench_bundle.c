// SPDX-License-Identifier: MIT
/*
 * Bundle I/O cost against plain file I/O of the same bytes, measured in the
 * same run: writing per-CPU PT into a bundle (zstd and uncompressed) against
 * write(2), and opening a bundle and fetching the PT (which verifies every
 * checksum and decompresses) against read(2). Also the zstd size ratio on
 * two synthetic PT streams made with libipt's encoder: a loop-heavy one
 * (repetitive, like most real code) and one with random branch outcomes and
 * targets (a worst case).
 *
 * Usage: bench_bundle [MiB of PT, default 64] [directory, default $TMPDIR or /tmp]
 */
#include "bundle/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Fills buf with a PT packet stream: PSB+ every 4 KiB, then TNT/TIP/MTC.
 * random_walk 0: loops of a few fixed trip counts calling one of four
 * functions; 1: random TNT bits and random 16-bit IP updates.
 */
static int make_pt(uint8_t *buf, size_t len, int random_walk)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t seed = 0x2545f4914f6cdd1dULL, tsc = 1000000, last_psb = 0;
	uint64_t ctc = 0;
	size_t pos = 0;
	int rc = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -ENOMEM;
	while (pos + 64 < len) {
		struct pt_packet p;
		uint64_t r = xorshift(&seed);

		memset(&p, 0, sizeof(p));
		if (pos - last_psb >= 4096 || pos == 0) {
			struct pt_packet psb = { .type = ppt_psb }, end = { .type = ppt_psbend };
			struct pt_packet ts = { .type = ppt_tsc };

			ts.payload.tsc.tsc = tsc += 5000;
			if (pt_enc_next(enc, &psb) < 0 || pt_enc_next(enc, &ts) < 0 ||
			    pt_enc_next(enc, &end) < 0)
				break;
			last_psb = pos;
		} else if (r % 16 == 0) {
			p.type = ppt_mtc;
			p.payload.mtc.ctc = (uint8_t)++ctc;
		} else if (r % 4 == 0) {
			p.type = ppt_tip;
			p.payload.ip.ipc = pt_ipc_update_16;
			p.payload.ip.ip = random_walk ? (r >> 16) & 0xffff : 0x1000 + 0x40 * ((r >> 8) % 4);
		} else {
			p.type = ppt_tnt_8;
			p.payload.tnt.bit_size = 6;
			/* A loop: taken five times, then falls through. */
			p.payload.tnt.payload = random_walk ? (r >> 20) & 0x3f : 0x3e;
		}
		if (p.type && pt_enc_next(enc, &p) < 0)
			break;
		rc = pt_enc_get_offset(enc, &pos);
		if (rc < 0)
			break;
	}
	pt_free_encoder(enc);
	memset(buf + pos, 0, len - pos);        /* PAD to the end */
	return rc < 0 ? rc : 0;
}

static int write_plain(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		done += (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

static int read_plain(const char *path, uint8_t *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	return done == len ? 0 : -EIO;
}

/* One CPU's ring per 16 MiB, as a capture of a 4-CPU machine would write. */
static int write_bundle(const char *path, const uint8_t *buf, size_t len, int no_comp,
			uint64_t *file_size)
{
	struct mt_bundle_writer_opts opts = { sizeof(opts), 0, no_comp };
	struct mt_bundle_writer *w;
	const size_t ring = 16u << 20;
	char err[256];
	int rc;

	rc = mt_bundle_writer_create(&w, path, &opts, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_bundle: %s\n", err);
		return rc;
	}
	for (size_t off = 0, cpu = 0; off < len && !rc; off += ring, cpu++) {
		struct mt_bundle_pt_desc pt = { .cpu = (uint32_t)cpu };
		size_t n = len - off < ring ? len - off : ring;

		rc = mt_bundle_write_pt(w, &pt, buf + off, n);
	}
	if (!rc)
		rc = mt_bundle_writer_finish(w);
	if (rc)
		fprintf(stderr, "bench_bundle: %s\n", mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
	if (!rc && file_size) {
		FILE *f = fopen(path, "rb");

		if (f && !fseek(f, 0, SEEK_END))
			*file_size = (uint64_t)ftell(f);
		if (f)
			fclose(f);
	}
	return rc;
}

/* Opens the bundle and fetches every CPU's PT; returns the bytes seen. */
static int read_bundle(const char *path, uint64_t *total)
{
	struct mt_bundle_reader *r;
	char err[512];
	int rc = mt_bundle_open(&r, path, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "bench_bundle: %s\n", err);
		return rc;
	}
	*total = 0;
	for (size_t i = 0; i < mt_bundle_pt_count(r) && !rc; i++) {
		const uint8_t *d;
		size_t n;

		rc = mt_bundle_pt_data(r, i, &d, &n);
		*total += n;
	}
	mt_bundle_close(r);
	return rc;
}

/* Best of REPEAT runs of fn, in seconds (the least disturbed run). */
#define BEST(expr, out)                                                 \
	do {                                                            \
		out = 1e9;                                              \
		for (int i_ = 0; i_ < REPEAT; i_++) {                   \
			double t0_ = now(), t_;                         \
			if ((expr) < 0)                                 \
				return 1;                               \
			t_ = now() - t0_;                               \
			if (t_ < out)                                   \
				out = t_;                               \
		}                                                       \
	} while (0)

static void result(const char *fig, double val, const char *unit, const char *cmp, double target)
{
	int met = !strcmp(cmp, ">=") ? val >= target : val <= target;

	printf("RESULT %s|%.2f%s|%s %.2f%s|%s\n", fig, val, unit, cmp, target, unit,
	       met ? "met" : "not met");
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64, len = mib << 20;
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char plain[4096], bundle[4096];
	uint8_t *buf, *back;
	double t_wr, t_wz, t_wn, t_rd, t_rz, t_rn;
	uint64_t size_loop, size_rand, seen;

	if (!mib || mib > 4096) {
		fprintf(stderr, "usage: bench_bundle [MiB 1..4096] [dir]\n");
		return 2;
	}
	snprintf(plain, sizeof(plain), "%s/bench-bundle-%d.raw", dir, (int)getpid());
	snprintf(bundle, sizeof(bundle), "%s/bench-bundle-%d.mtrace", dir, (int)getpid());
	buf = malloc(len);
	back = malloc(len);
	if (!buf || !back || make_pt(buf, len, 1) || make_pt(buf, len, 0)) {
		fprintf(stderr, "bench_bundle: cannot build %zu MiB of PT\n", mib);
		return 1;
	}
	/* Sizes: one pass per stream kind. */
	if (write_bundle(bundle, buf, len, 0, &size_loop))
		return 1;
	if (make_pt(buf, len, 1) || write_bundle(bundle, buf, len, 0, &size_rand))
		return 1;
	/* Speeds on the loop-heavy stream. */
	if (make_pt(buf, len, 0))
		return 1;
	BEST(write_plain(plain, buf, len), t_wr);
	BEST(write_bundle(bundle, buf, len, 0, NULL), t_wz);
	BEST(read_bundle(bundle, &seen), t_rz);
	BEST(write_bundle(bundle, buf, len, 1, NULL), t_wn);
	BEST(read_bundle(bundle, &seen), t_rn);
	BEST(read_plain(plain, back, len), t_rd);
	unlink(plain);
	unlink(bundle);
	if (seen != len || memcmp(back, buf, len)) {
		fprintf(stderr, "bench_bundle: data did not survive the round trip\n");
		return 1;
	}
	printf("%zu MiB of PT: write(2) %.0f MB/s, read(2) %.0f MB/s\n", mib, len / t_wr / 1e6,
	       len / t_rd / 1e6);
	printf("bundle zstd: write %.0f MB/s, open+read %.0f MB/s; uncompressed: write %.0f MB/s, open+read %.0f MB/s\n",
	       len / t_wz / 1e6, len / t_rz / 1e6, len / t_wn / 1e6, len / t_rn / 1e6);
	result("bundle write zstd / write(2) speed", t_wr / t_wz, "x", ">=", 0.15);
	result("bundle write raw / write(2) speed", t_wr / t_wn, "x", ">=", 0.50);
	result("bundle open+PT zstd / read(2) speed", t_rd / t_rz, "x", ">=", 0.15);
	result("bundle open+PT raw / read(2) speed", t_rd / t_rn, "x", ">=", 0.30);
	result("zstd size ratio, loop-heavy PT", (double)len / (double)size_loop, "x", ">=", 3.0);
	result("zstd size ratio, random-walk PT", (double)len / (double)size_rand, "x", ">=", 1.0);
	free(buf);
	free(back);
	return 0;
}
