// SPDX-License-Identifier: MIT
/*
 * The decoder's kernel image: a bundle's kernel, module and BPF text copies
 * must decode with libipt at their kernel addresses, and kernel addresses
 * must be named from the bundle's kallsyms, also through the whole decoder.
 */
#include "mt_test.h"
#include "test_decode_ptenc.h"

#include "bundle/bundle.h"
#include "decode/decode.h"
#include "decode/kernel_funcs.h"
#include "decode/kernel_image.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define KTEXT 0xffffffff81000000ULL
#define KMOD 0xffffffffc0001000ULL
#define KBPF 0xffffffffc0005000ULL

/*
 * kfunc_a: call kfunc_b; ret          (core kernel)
 * kfunc_b: nop; ret
 * ret_user: sysretq
 * mod_fn:  nop; nop; ret               (module "mod_x")
 * bpf:     nop; ret                    (BPF JIT image)
 */
static uint8_t core_code[0x1000], mod_code[0x1000], bpf_code[0x1000];

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T kfunc_a\n"
	"ffffffff81000040 T kfunc_b\n"
	"ffffffff81000080 T ret_user\n"
	"ffffffff81000800 D kdata\n"
	"ffffffff81001000 T _etext\n"
	"ffffffffc0001000 t mod_fn\t[mod_x]\n"
	"ffffffffc0005000 t bpf_prog_0123456789abcdef_probe\t[bpf]\n";

static void make_code(void)
{
	static const uint8_t a[] = { 0xe8, 0x3b, 0x00, 0x00, 0x00, 0xc3 };	/* call +0x3b; ret */

	memset(core_code, 0xcc, sizeof(core_code));
	memset(mod_code, 0xcc, sizeof(mod_code));
	memset(bpf_code, 0xcc, sizeof(bpf_code));
	memcpy(core_code, a, sizeof(a));
	memcpy(core_code + 0x40, "\x90\xc3", 2);
	memcpy(core_code + 0x80, "\x48\x0f\x07", 3);
	memcpy(mod_code, "\x90\x90\xc3", 3);
	memcpy(bpf_code, "\x90\xc3", 2);
}

/* A bundle with the three copies (and kallsyms text, unless NULL). */
static struct mt_bundle_reader *make_bundle(const char *kallsyms)
{
	char path[] = "/tmp/mt-kimage-XXXXXX";
	const struct mt_bundle_ktext kt[] = {
		{ KBPF, "bpf", 0 }, { KTEXT, "kernel", 0 }, { KMOD, "mod_x", 0 },
	};
	const uint8_t *code[] = { bpf_code, core_code, mod_code };
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char err[256];
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	close(fd);
	make_code();
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < 3; i++)
		MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt[i], code[i], 0x1000), 0);
	if (kallsyms)
		MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, kallsyms, strlen(kallsyms)), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	return r;
}

/* Decodes a stream from E over IMG; the IPs of the instructions, up to max. */
static size_t decode_ips(struct ptenc *e, struct pt_image *img, uint64_t *ips, size_t max)
{
	struct pt_insn_decoder *dec;
	struct pt_config cfg;
	size_t n = 0;
	int st;

	pt_config_init(&cfg);
	cfg.begin = e->buf;
	cfg.end = e->buf + e->len;
	dec = pt_insn_alloc_decoder(&cfg);
	MT_ASSERT(dec);
	MT_ASSERT_EQ(pt_insn_set_image(dec, img), 0);
	st = pt_insn_sync_forward(dec);
	while (st >= 0 && n < max) {
		struct pt_insn insn;

		while (st & pts_event_pending) {
			struct pt_event ev;

			st = pt_insn_event(dec, &ev, sizeof(ev));
			if (st < 0)
				break;
		}
		if (st < 0)
			break;
		st = pt_insn_next(dec, &insn, sizeof(insn));
		if (st >= 0)
			ips[n++] = insn.ip;
	}
	MT_ASSERT_MSG(st == -pte_eos, "decoding ended with %s after %zu instructions (last 0x%"
		      PRIx64 ")", pt_errstr(pt_errcode(st)), n, n ? ips[n - 1] : 0);
	pt_insn_free_decoder(dec);
	return n;
}

MT_TEST(kernel_module_and_bpf_copies_decode_at_their_addresses)
{
	const uint64_t want[] = { KTEXT, KTEXT + 0x40, KTEXT + 0x41, KTEXT + 5,
				  KMOD, KMOD + 1, KMOD + 2, KBPF, KBPF + 1, KTEXT + 0x80 };
	char err[256] = "";
	struct pt_image_section_cache *iscache = pt_iscache_alloc("test");
	struct pt_image *imgs[2] = { pt_image_alloc("pid 1"), pt_image_alloc("pid 2") };
	struct mt_bundle_reader *r = make_bundle(ksyms);
	struct mt_kimage ki;
	struct ptenc e;
	uint64_t ips[32];

	MT_ASSERT_MSG(mt_kimage_load(&ki, r, iscache, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(ki.nranges, 3);
	MT_ASSERT_STREQ(ki.ranges[0].name, "kernel");
	/* Kernel-only tracing: kfunc_b's ret is compressed; kfunc_a's ret goes to the
	 * module, the module's to BPF. */
	ptenc_begin(&e, 1000, KTEXT);
	ptenc_tnt(&e, "1");
	ptenc_ip(&e, ppt_tip, KMOD, pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip, KBPF, pt_ipc_sext_48);
	/* The BPF image returns to sysret, back to (untraced) user space. */
	ptenc_ip(&e, ppt_tip, KTEXT + 0x80, pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(&e);
	for (size_t i = 0; i < 2; i++) {
		size_t n;

		MT_ASSERT(imgs[i]);
		MT_ASSERT_EQ(mt_kimage_add_to(&ki, iscache, imgs[i]), 0);
		n = decode_ips(&e, imgs[i], ips, 32);
		MT_ASSERT_EQ(n, sizeof(want) / sizeof(want[0]));
		for (size_t j = 0; j < n; j++)
			MT_ASSERT_MSG(ips[j] == want[j], "image %zu insn %zu at 0x%" PRIx64 ", want 0x%"
				      PRIx64, i, j, ips[j], want[j]);
		pt_image_free(imgs[i]);
	}
	mt_kimage_fini(&ki);
	mt_kimage_fini(&ki);
	pt_iscache_free(iscache);
	mt_bundle_close(r);
}

MT_TEST(kernel_symbols_name_core_module_and_bpf_code)
{
	char err[256] = "";
	struct pt_image_section_cache *iscache = pt_iscache_alloc("test");
	struct mt_bundle_reader *r = make_bundle(ksyms);
	const struct mt_ksym *s;
	struct mt_kimage ki;

	MT_ASSERT_MSG(mt_kimage_load(&ki, r, iscache, err, sizeof(err)) == 0, "%s", err);
	s = mt_kimage_symbol(&ki, KTEXT + 0x41);
	MT_ASSERT(s && !s->module);
	MT_ASSERT_STREQ(s->name, "kfunc_b");
	/* Past a data symbol: still the code symbol before it. */
	MT_ASSERT_STREQ(mt_kimage_symbol(&ki, KTEXT + 0x900)->name, "ret_user");
	s = mt_kimage_symbol(&ki, KMOD + 2);
	MT_ASSERT(s);
	MT_ASSERT_STREQ(s->name, "mod_fn");
	MT_ASSERT_STREQ(s->module, "mod_x");
	s = mt_kimage_symbol(&ki, KBPF + 1);
	MT_ASSERT(s);
	MT_ASSERT_STREQ(s->name, "bpf_prog_0123456789abcdef_probe");
	MT_ASSERT_STREQ(s->module, "bpf");
	/* Not copied (between the module and BPF copies), and user space: unnamed. */
	MT_ASSERT(!mt_kimage_symbol(&ki, KMOD + 0x2000));
	MT_ASSERT(!mt_kimage_symbol(&ki, 0x401000));
	MT_ASSERT(mt_kimage_is_kernel_ip(KTEXT));
	MT_ASSERT(!mt_kimage_is_kernel_ip(0x00007fffffffe000ULL));
	MT_ASSERT_STREQ(mt_kimage_range(&ki, KMOD + 0xfff)->name, "mod_x");
	MT_ASSERT(!mt_kimage_range(&ki, KMOD + 0x1000));
	mt_kimage_fini(&ki);
	pt_iscache_free(iscache);
	mt_bundle_close(r);
}

MT_TEST(kernel_image_bad_input_gets_a_precise_error)
{
	char err[256] = "";
	struct pt_image_section_cache *iscache = pt_iscache_alloc("test");
	struct mt_bundle_reader *r = make_bundle("ffffffff81000000 T ok\nnonsense\n");
	struct mt_kimage ki;

	MT_ASSERT_EQ(mt_kimage_load(&ki, r, iscache, err, sizeof(err)), -EBADMSG);
	MT_ASSERT_MSG(strstr(err, "line 2"), "%s", err);
	MT_ASSERT_EQ(ki.nranges, 0);
	mt_bundle_close(r);
	/* Code without kallsyms decodes but has no names. */
	r = make_bundle(NULL);
	MT_ASSERT_MSG(mt_kimage_load(&ki, r, iscache, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(ki.nranges, 3);
	MT_ASSERT(!mt_kimage_symbol(&ki, KTEXT));
	mt_kimage_fini(&ki);
	mt_bundle_close(r);
	pt_iscache_free(iscache);
}

MT_TEST(kernel_image_rejects_overlapping_copies)
{
	char path[] = "/tmp/mt-kimage-XXXXXX", err[256] = "";
	const struct mt_bundle_ktext kt = { KTEXT + 0x800, "kernel", 0 };
	struct pt_image_section_cache *iscache = pt_iscache_alloc("test");
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_kimage ki;
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	close(fd);
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt, core_code, 0x1000), 0);
	MT_ASSERT_EQ(mt_bundle_write_ktext(w, &(struct mt_bundle_ktext){ KTEXT, "kernel", 0 },
					   core_code, 0x1000), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_EQ(mt_bundle_open(&r, path, err, sizeof(err)), 0);
	unlink(path);
	MT_ASSERT_EQ(mt_kimage_load(&ki, r, iscache, err, sizeof(err)), -EBADMSG);
	MT_ASSERT_MSG(strstr(err, "overlap"), "%s", err);
	mt_bundle_close(r);
	pt_iscache_free(iscache);
}

MT_TEST(kernel_functions_span_symbol_to_symbol_and_name_their_copy)
{
	char err[256] = "";
	struct pt_image_section_cache *iscache = pt_iscache_alloc("test");
	struct mt_bundle_reader *r = make_bundle(ksyms);
	struct mt_kimage ki;
	struct mt_func f;
	struct mt_cs_fn fn;

	MT_ASSERT_MSG(mt_kimage_load(&ki, r, iscache, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(mt_kfunc_resolve(&ki, KTEXT + 0x45, &f, &fn));
	MT_ASSERT_STREQ(f.name, "kfunc_b");
	MT_ASSERT_STREQ(f.binary, "[kernel]");
	MT_ASSERT(!f.bin);
	MT_ASSERT_EQ(fn.start, KTEXT + 0x40);
	MT_ASSERT_EQ(fn.end, KTEXT + 0x80);
	MT_ASSERT_EQ(f.addr, KTEXT + 0x40);
	/* The last function of the core text ends at the next symbol, _etext. */
	MT_ASSERT(mt_kfunc_resolve(&ki, KTEXT + 0x900, &f, &fn));
	MT_ASSERT_STREQ(f.name, "ret_user");
	MT_ASSERT_EQ(fn.end, KTEXT + 0x1000);
	/* A module's function runs to the end of its copy. */
	MT_ASSERT(mt_kfunc_resolve(&ki, KMOD + 1, &f, &fn));
	MT_ASSERT_STREQ(f.name, "mod_fn");
	MT_ASSERT_STREQ(f.binary, "[mod_x]");
	MT_ASSERT_EQ(fn.end, KMOD + 0x1000);
	MT_ASSERT(mt_kfunc_resolve(&ki, KBPF, &f, &fn));
	MT_ASSERT_STREQ(f.binary, "[bpf]");
	MT_ASSERT_STREQ(f.name, "bpf_prog_0123456789abcdef_probe");
	/* Not copied: not resolved here (the caller's unknown code). */
	MT_ASSERT(!mt_kfunc_resolve(&ki, KMOD + 0x2000, &f, &fn));
	MT_ASSERT(!mt_kfunc_resolve(NULL, KTEXT, &f, &fn));
	mt_kimage_fini(&ki);
	pt_iscache_free(iscache);
	mt_bundle_close(r);
}

struct named {
	char text[512];
	struct mt_decode *d;
};

/* "name[binary]" of every BEGIN, in order. */
static int name_begins(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct named *nm = ctx;
	struct mt_func f;
	size_t n = strlen(nm->text);

	(void)pid, (void)tid, (void)ns;
	if (ev->kind != MT_EV_BEGIN)
		return 0;
	f = mt_decode_func(nm->d, ev->arg);
	snprintf(nm->text + n, sizeof(nm->text) - n, "%s%s%s ", mt_func_label(&f, ev->arg),
		 f.binary ? f.binary : "", ev->flags & MT_EV_INFERRED ? "*" : "");
	return 0;
}

MT_TEST(decoder_names_kernel_frames_of_a_task_without_maps)
{
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_INTEL, .family = 6,
					  .model = 0x55, .stepping = 4 };
	struct mt_bundle_pt_config_desc ptc = { .rtit_ctl = MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_OS |
							    MT_RTIT_CTL_TSCEN | MT_RTIT_CTL_BRANCHEN,
						.target_pid = 7 };
	struct mt_bundle_pt_desc pt = { .cpu = 0, .stop_tsc = 2000 };
	const struct mt_bundle_ktext kt[] = {
		{ KTEXT, "kernel", 0 }, { KMOD, "mod_x", 0 }, { KBPF, "bpf", 0 },
	};
	const uint8_t *code[] = { core_code, mod_code, bpf_code };
	char path[] = "/tmp/mt-kdecode-XXXXXX", err[256] = "";
	struct mt_decode_sink sink = { .event = name_begins };
	struct mt_decode_opts opts = { .jobs = 1 };
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct named nm = { "", NULL };
	struct ptenc e;
	int fd = mkstemp(path);

	MT_ASSERT(fd >= 0);
	close(fd);
	make_code();
	/* kfunc_a calls kfunc_b, which returns; kfunc_a returns into the module,
	 * the module into BPF, BPF into sysret: back to user space. */
	ptenc_begin(&e, 1000, KTEXT);
	ptenc_tnt(&e, "1");
	ptenc_ip(&e, ppt_tip, KMOD, pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip, KBPF, pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip, KTEXT + 0x80, pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(&e);
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &ptc), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, e.buf, e.len), 0);
	for (size_t i = 0; i < 3; i++)
		MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt[i], code[i], 0x1000), 0);
	MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, ksyms, strlen(ksyms)), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	MT_ASSERT_MSG(mt_decode_open(&nm.d, r, &opts, err, sizeof(err)) == 0, "%s", err);
	sink.ctx = &nm;
	MT_ASSERT_EQ(mt_decode_run(nm.d, &sink), 0);
	MT_ASSERT_EQ(mt_decode_get_stats(nm.d)->insns, 10);
	/* Each return past the oldest frame infers its caller: those frames are
	 * open since the start, outermost first; then the call, then time off. */
	MT_ASSERT_STREQ(nm.text, "ret_user[kernel]* bpf_prog_0123456789abcdef_probe[bpf]* "
				 "mod_fn[mod_x]* kfunc_a[kernel]* kfunc_b[kernel] [untraced] ");
	mt_decode_free(nm.d);
	mt_bundle_close(r);
}
