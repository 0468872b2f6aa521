// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the decoder. The first input byte picks the path:
 *  - even: the rest is a PT stream, decoded by the block-decoder loop
 *    against a small fixed program (held in a memfd) and
 *    fed through the call-stack rebuild; with the byte's bit 1 set, also
 *    split into 64-byte pieces (decode/blksplit.h), decoded ahead by two
 *    helpers and by none: both must make the same handler calls;
 *  - odd: the rest is a bundle (also re-sealed with valid checksums, so
 *    that mutations get past them), decoded in full using only the
 *    binaries it embeds, with the first functions entered named and
 *    placed in the source through the symbolizer; with the byte's bit 1
 *    set, every stream in two stages (decode_cpu.c).
 * Frames must always balance: every BEGIN gets its END.
 */
#include "bundle/bundle.h"
#include "mt_blk_cs.h"
#include "decode/blksplit.h"
#include "decode/decode.h"
#include "decode/ptsource.h"

#include "../unit/test_bundle_seal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BASE 0x400000ull

/* call; call; syscall; call *%rbx; nop; jmp .-1 / ret / jmp *%rax / ret / ret */
static const uint8_t code[0xa0] = {
	[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00, [0x05] = 0xe8, 0x36, 0x00, 0x00, 0x00,
	[0x0a] = 0x0f, 0x05, [0x0c] = 0xff, 0xd3, [0x0e] = 0x90, 0xeb, 0xfd,
	[0x20] = 0xc3, [0x40] = 0xff, 0xe0, [0x60] = 0xc3, [0x80] = 0xc3,
};

static struct pt_image_section_cache *isc;
static struct pt_image *image;
static struct mt_cs cs;
static long depth;
static unsigned named;	/* functions looked up in this input */

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_decode: %s\n", what);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = memfd_create("fuzz_decode", 0), isid;
	char path[64];

	(void)argc, (void)argv;
	must(fd >= 0 && write(fd, code, sizeof(code)) == (ssize_t)sizeof(code), "code file");
	/* The fd stays open: libipt maps the file by this name when needed. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	isc = pt_iscache_alloc(NULL);
	image = pt_image_alloc(NULL);
	isid = pt_iscache_add_file(isc, path, 0, sizeof(code), BASE);
	must(isid > 0 && pt_image_add_cached(image, isc, isid, NULL) == 0, "image");
	return 0;
}

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	(void)ctx;
	if (ip >= BASE && ip < BASE + sizeof(code)) {
		fn->start = BASE + ((ip - BASE) & ~0x1full);
		fn->end = fn->start + 0x20;
		fn->id = MT_FN_FIRST_USER + (uint32_t)((ip - BASE) >> 5);
	} else {
		fn->start = ip;
		fn->end = ip + 1;
		fn->id = MT_FN_UNKNOWN;
	}
}

static void count(void *ctx, const struct mt_ev *ev)
{
	(void)ctx;
	depth += ev->kind == MT_EV_BEGIN;
	depth -= ev->kind == MT_EV_END;
	must(depth >= 0, "END without BEGIN");
}

static struct pt_image *h_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	(void)ctx, (void)tsc, (void)ip, (void)bounds;
	return NULL;
}

static void fuzz_pt(const uint8_t *data, size_t size)
{
	const struct mt_blk_handler h = mt_blk_cs_handler(&cs, h_enable);
	static const struct mt_cs_ops ops = { resolve, count, NULL };
	struct mt_blk_stats st;
	struct mt_pt_buffer buf;
	struct pt_config cfg;

	pt_config_init(&cfg);
	mt_pt_buffer_init(&buf, data, size);
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	cfg.nom_freq = 20;	/* so that CYC packets take the exact-time path */
	depth = 0;
	mt_cs_init(&cs, &ops);
	/* The shortest windows: a window ends at every PSB that can end one. */
	must(mt_blk_decode_stream(&cfg, &buf.src, &buf.src, false, 1, image, isc, &h, &st) == 0,
	     "decoder set-up");
	mt_cs_finish(&cs, st.last_tsc);
	mt_cs_fini(&cs);
	must(depth == 0, "frames left open");
}

/* The handler calls of a decode, folded into a hash. */
struct trail {
	uint64_t hash, n;
};

static void mix(struct trail *t, uint64_t kind, uint64_t a, uint64_t b, uint64_t c)
{
	const uint64_t v[4] = { kind, a, b, c };

	for (int i = 0; i < 4; i++)
		t->hash = (t->hash ^ v[i]) * 0x100000001b3ull;
	t->n++;
}

static struct pt_image *t_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	mix(ctx, 'e', tsc, ip, bounds->floor ^ bounds->ceil * 3 ^ bounds->end * 7);
	return image;
}

static void t_block(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	mix(ctx, 'b', tsc, ip, (uint64_t)x ^ ret << 8);
}

static void t_transfer(void *ctx, enum mt_xfer x, uint64_t ret)
{
	mix(ctx, 'x', (uint64_t)x, ret, 0);
}

static void t_disable(void *ctx, uint64_t tsc, uint64_t at)
{
	mix(ctx, 'd', tsc, at, 0);
}

static void t_gap(void *ctx, uint64_t tsc, uint32_t reason)
{
	mix(ctx, 'g', tsc, reason, 0);
}

/* The stream in 64-byte pieces, HELPERS threads decoding ahead. */
static struct trail split_trail(const uint8_t *data, size_t size, unsigned int helpers)
{
	struct trail t = { 0xcbf29ce484222325ull, 0 };
	const struct mt_blk_handler h = { .enable = t_enable, .block = t_block,
					  .transfer = t_transfer, .disable = t_disable,
					  .gap = t_gap, .ctx = &t };
	struct mt_blk_split_stats ss;
	struct mt_blk_stats st;
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + size;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	cfg.nom_freq = 20;	/* CYC packets: pieces ahead start with their chain */
	must(mt_blk_decode_split_buffer(&cfg, false, 64, helpers, image, isc, &h, &st, &ss) == 0,
	     "split set-up");
	mix(&t, 's', st.blocks, st.errors, st.last_tsc);
	return t;
}

static void fuzz_split(const uint8_t *data, size_t size)
{
	struct trail one = split_trail(data, size, 0), two = split_trail(data, size, 2);

	must(one.hash == two.hash && one.n == two.n, "pieces decoded ahead differ");
}

/* The first functions entered are also named and placed in the source, as
 * the Perfetto writer does for every one (bounded work per input). */
static int count_thread_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns,
			      const struct mt_ev *ev)
{
	struct mt_decode *d = ctx;
	struct mt_src_loc loc;
	struct mt_func fn;

	(void)pid, (void)tid, (void)ns;
	count(NULL, ev);
	if (ev->kind != MT_EV_BEGIN || named++ >= 16)
		return 0;
	fn = mt_decode_func(d, ev->arg);
	must(!fn.name || strlen(fn.name) < 1u << 20, "function name");
	must(!fn.binary || strlen(fn.binary) < 1u << 20, "binary name");
	if (mt_decode_func_source(d, ev->arg, &loc) == 0)
		must(loc.file && strlen(loc.file) < 1u << 20, "source file");
	return 0;
}

/* JOBS: 1, or enough that every stream is decoded in two stages. */
static void fuzz_bundle(const uint8_t *data, size_t size, unsigned int jobs)
{
	struct mt_decode_opts o = { .jobs = jobs, .embedded_only = 1 };
	struct mt_decode_sink sink = { NULL, count_thread_event, NULL, NULL, 1 };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];

	if (mt_bundle_open_mem(&r, data, size, err, sizeof(err)))
		return;
	depth = 0;
	named = 0;
	if (!mt_decode_open(&d, r, &o, err, sizeof(err))) {
		sink.ctx = d;
		must(mt_decode_run(d, &sink) == 0, "decode run");
		must(depth == 0, "frames left open");
		mt_decode_free(d);
	}
	mt_bundle_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int jobs;
	uint8_t *copy;

	if (!size)
		return 0;
	jobs = data[0] & 2 ? 64 : 1;
	if (!(data[0] & 1)) {
		fuzz_pt(data + 1, size - 1);
		if (data[0] & 2)
			fuzz_split(data + 1, size - 1);
		return 0;
	}
	fuzz_bundle(data + 1, size - 1, jobs);
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (sample_reseal(copy, size - 1))
		fuzz_bundle(copy, size - 1, jobs);
	free(copy);
	return 0;
}
