// SPDX-License-Identifier: MIT
/*
 * The bundle library's overhead over the least work that stores the same
 * per-CPU PT rings checksummed (crc32 + write(2), zstd in one shot for the
 * compressed case) and reads them back (read(2) + crc32 + one-shot
 * decompression into a fresh buffer), measured in the same run. A ratio of
 * 1 means the library adds nothing. Also the zstd size ratio on
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "bench_report.h"

#define REPEAT 5

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

#define RING (16u << 20)     /* one CPU's ring; the bundle holds len / RING of them */

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/*
 * Baseline for the writer: the least work that stores the same rings
 * checksummed, compressed in one shot (zstd level 1, as the writer) or raw.
 */
static int baseline_write(const char *path, const uint8_t *buf, size_t len, int compress)
{
	size_t cap = ZSTD_compressBound(RING);
	uint8_t *z = compress ? malloc(cap) : NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = 0;
	volatile uLong crc = 0;

	if (fd < 0 || (compress && !z)) {
		free(z);
		return -EIO;
	}
	for (size_t off = 0; off < len && !rc; off += RING) {
		size_t n = len - off < RING ? len - off : RING;
		const uint8_t *out = buf + off;

		if (compress) {
			n = ZSTD_compress(z, cap, buf + off, n, 1);
			if (ZSTD_isError(n))
				rc = -EIO;
			out = z;
		}
		crc = crc32_z(0, out, n);
		if (!rc)
			rc = write_all(fd, out, n);
	}
	(void)crc;
	free(z);
	return close(fd) || rc ? -EIO : 0;
}

/*
 * Baseline for the reader: read the file written by baseline_write, check
 * it, and decompress each ring into a fresh buffer as a decoder would.
 */
static int baseline_read(const char *path, const uint8_t *orig, size_t len, int compress)
{
	int fd = open(path, O_RDONLY);
	uint8_t *file = NULL, *ring;
	volatile uLong crc = 0;
	struct stat st;
	size_t flen = 0;
	int rc = 0;

	if (fd < 0 || fstat(fd, &st) || !(file = malloc((size_t)st.st_size + 1))) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	while (flen < (size_t)st.st_size) {
		ssize_t n = read(fd, file + flen, (size_t)st.st_size - flen);

		if (n <= 0)
			break;
		flen += (size_t)n;
	}
	close(fd);
	crc = crc32_z(0, file, flen);
	(void)crc;
	if (compress) {
		/* Frames follow each other; ZSTD_findFrameCompressedSize splits them. */
		for (size_t off = 0, ring_off = 0; off < flen && !rc; ring_off += RING) {
			size_t fs = ZSTD_findFrameCompressedSize(file + off, flen - off);
			size_t want = len - ring_off < RING ? len - ring_off : RING;

			ring = malloc(want);
			if (ZSTD_isError(fs) || !ring ||
			    ZSTD_decompress(ring, want, file + off, fs) != want ||
			    ring[want - 1] != orig[ring_off + want - 1])
				rc = -EIO;
			free(ring);
			off += fs;
		}
	} else if (flen != len || file[len - 1] != orig[len - 1]) {
		rc = -EIO;
	}
	free(file);
	return rc;
}

/* One CPU's ring per 16 MiB, as a capture of a 4-CPU machine would write. */
static int write_bundle(const char *path, const uint8_t *buf, size_t len, int no_comp,
			uint64_t *file_size)
{
	struct mt_bundle_writer_opts opts = { .size = sizeof(opts), .no_compression = no_comp };
	struct mt_bundle_writer *w;
	char err[256];
	int rc;

	rc = mt_bundle_writer_create(&w, path, &opts, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_bundle: %s\n", err);
		return rc;
	}
	for (size_t off = 0, cpu = 0; off < len && !rc; off += RING, cpu++) {
		struct mt_bundle_pt_desc pt = { .cpu = (uint32_t)cpu };
		size_t n = len - off < RING ? len - off : RING;

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

/* Opens the bundle and fetches every CPU's PT, checking it arrived. */
static int read_bundle(const char *path, const uint8_t *orig, size_t len)
{
	struct mt_bundle_reader *r;
	char err[512];
	int rc = mt_bundle_open(&r, path, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "bench_bundle: %s\n", err);
		return rc;
	}
	for (size_t i = 0, off = 0; i < mt_bundle_pt_count(r) && !rc; i++, off += RING) {
		const uint8_t *d;
		size_t n;

		rc = mt_bundle_pt_data(r, i, &d, &n);
		if (!rc && (off + n > len || d[n - 1] != orig[off + n - 1]))
			rc = -EIO;
	}
	mt_bundle_close(r);
	return rc;
}

/* Best of REPEAT runs of fn, in seconds (the least disturbed run). */
int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64, len = mib << 20;
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char base[4096], bundle[4096];
	uint8_t *buf;
	double bw[2], br[2], tw[2], tr[2];
	uint64_t size_loop, size_rand;

	if (!mib || mib > 4096) {
		fprintf(stderr, "usage: bench_bundle [MiB 1..4096] [dir]\n");
		return 2;
	}
	snprintf(base, sizeof(base), "%s/bench-bundle-%d.base", dir, (int)getpid());
	snprintf(bundle, sizeof(bundle), "%s/bench-bundle-%d.mtrace", dir, (int)getpid());
	buf = malloc(len);
	if (!buf || make_pt(buf, len, 1) || write_bundle(bundle, buf, len, 0, &size_rand) ||
	    make_pt(buf, len, 0) || write_bundle(bundle, buf, len, 0, &size_loop)) {
		fprintf(stderr, "bench_bundle: cannot build %zu MiB of PT\n", mib);
		return 1;
	}
	/* Speeds on the loop-heavy stream; [0] uncompressed, [1] zstd. */
	for (int z = 0; z < 2; z++) {
		BENCH_BEST(REPEAT, baseline_write(base, buf, len, z), bw[z]);
		BENCH_BEST(REPEAT, baseline_read(base, buf, len, z), br[z]);
		BENCH_BEST(REPEAT, write_bundle(bundle, buf, len, !z, NULL), tw[z]);
		BENCH_BEST(REPEAT, read_bundle(bundle, buf, len), tr[z]);
	}
	unlink(base);
	unlink(bundle);
	printf("%zu MiB of PT in %zu rings, MB/s (bundle library / baseline):\n", mib,
	       (len + RING - 1) / RING);
	printf("  write raw %.0f / %.0f, write zstd %.0f / %.0f\n", len / tw[0] / 1e6,
	       len / bw[0] / 1e6, len / tw[1] / 1e6, len / bw[1] / 1e6);
	printf("  read raw %.0f / %.0f, read zstd %.0f / %.0f\n", len / tr[0] / 1e6,
	       len / br[0] / 1e6, len / tr[1] / 1e6, len / br[1] / 1e6);
	bench_result("bundle write raw / crc+write(2)", bw[0] / tw[0], "x", ">=", 0.8);
	bench_result("bundle write zstd / zstd+crc+write(2)", bw[1] / tw[1], "x", ">=", 0.8);
	bench_result("bundle open+PT raw / read(2)+crc", br[0] / tr[0], "x", ">=", 0.8);
	bench_result("bundle open+PT zstd / read(2)+crc+unzstd", br[1] / tr[1], "x", ">=", 0.8);
	bench_result("zstd size ratio, loop-heavy PT", (double)len / (double)size_loop, "x", ">=", 3.0);
	bench_result("zstd size ratio, random-walk PT", (double)len / (double)size_rand, "x", ">=", 1.0);
	free(buf);
	return 0;
}
