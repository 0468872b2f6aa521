// SPDX-License-Identifier: MIT
/*
 * Round-trip test of the PT generator: each test program is single-stepped,
 * turned into PT on one or more virtual CPUs under several configurations,
 * and decoded back with libipt; the decoded IPs must equal the stepped ones.
 * Negative cases prove the check notices corrupted streams.
 * Test programs are looked up in programs/ next to this executable.
 */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bundle/bundle.h"
#include "ptg_bundle.h"
#include "ptg_check.h"
#include "ptg_gen.h"
#include "ptg_sym.h"
#include "ptg_trace.h"
#include "ptg_ukwalk.h"
#include "ptg_walk.h"

struct program {
	const char *name;
	const char *arg;	/* one argument or NULL */
	unsigned ncpu;
	const char *trigger;	/* symbol for the trigger case, or NULL */
	unsigned hit;
	const char *dies_in;	/* the program faults at this function's entry */
};

static const struct program programs[] = {
	{ .name = "recursion", .ncpu = 1, .trigger = "depth", .hit = 40 },
	{ .name = "indirect", .ncpu = 1, .trigger = "classify", .hit = 20 },
	{ .name = "tailcall", .ncpu = 1, .trigger = "leaf", .hit = 10 },
	{ .name = "plt", .ncpu = 1, .trigger = "cmp", .hit = 5 },
	{ .name = "longjmp", .ncpu = 1 },
	{ .name = "signals", .ncpu = 1, .trigger = "on_usr1", .hit = 2 },
	{ .name = "syscalls", .ncpu = 1 },
	{ .name = "crash", .ncpu = 1, .dies_in = "deref" },
	/* Code mapped after main starts: a library (dlopen, dlclose) and
	 * anonymous code made executable (JIT-style), both unmapped again. */
	{ .name = "dlopen", .ncpu = 1 },
	{ .name = "jit", .ncpu = 1, .trigger = "run", .hit = 1 },
	{ .name = "threads", .arg = "2", .ncpu = 2, .trigger = "work_step", .hit = 150 },
	{ .name = "threads", .arg = "4", .ncpu = 4, .trigger = "work_step", .hit = 300 },
	{ .name = "threads", .arg = "4", .ncpu = 2 },
};

static char progdir[PATH_MAX];
static int failures;

static void report(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS ptgen/%s\n", name);
		return;
	}
	failures++;
	printf("FAIL ptgen/%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Enables whose time was checked in the last gen_and_check(). */
static size_t timed;

/* Generates with @cfg and checks every CPU; returns 0 or fills @msg. */
static int gen_and_check(const struct ptg_run *run, struct ptg_insn_cache *ic,
			 const struct ptg_gen_cfg *cfg, struct ptg_gen *g, char *msg, size_t len)
{
	struct ptg_check r;
	int err = ptg_gen_run(g, cfg, run->thr, run->nthr, ic);

	timed = 0;
	if (err) {
		snprintf(msg, len, "generator failed (%d)", err);
		return -1;
	}
	for (unsigned c = 0; c < cfg->ncpu; c++) {
		const struct ptg_cpu *cpu = &g->cpu[c];

		if (ptg_check_cpu(g, c, &run->image, cpu->pkt.buf + cpu->ring_start,
				  cpu->pkt.len - cpu->ring_start, &r)) {
			snprintf(msg, len, "cpu %u: %s", c, r.msg);
			return -1;
		}
		timed += r.timed;
	}
	if (!cfg->trigger_ip && !cfg->ring_size && !cfg->ovf_every &&
	    ptg_check_coverage(g, &r)) {
		snprintf(msg, len, "%s", r.msg);
		return -1;
	}
	return 0;
}

static void positive(const char *name, const struct ptg_run *run, struct ptg_insn_cache *ic,
		     const struct ptg_gen_cfg *cfg, bool (*extra)(const struct ptg_gen *, char *,
								 size_t))
{
	struct ptg_gen g;
	char msg[600] = "";
	bool ok = !gen_and_check(run, ic, cfg, &g, msg, sizeof(msg));

	if (ok && extra)
		ok = extra(&g, msg, sizeof(msg));
	report(ok, name, "%s", msg);
	ptg_gen_fini(&g);
}

/* The variant cases must really exercise what they are named after. */
static bool saw_timing(const struct ptg_gen *g, char *msg, size_t len)
{
	(void)g;
	snprintf(msg, len, "no enable event had its time checked");
	return timed > 0;
}

static bool saw_psbs(const struct ptg_gen *g, char *msg, size_t len)
{
	size_t psb = 0;

	for (unsigned c = 0; c < g->cfg->ncpu; c++)
		psb += g->cpu[c].pkt.st.psb;
	snprintf(msg, len, "only %zu PSBs", psb);
	return psb > g->cfg->ncpu;
}

static bool saw_overflow(const struct ptg_gen *g, char *msg, size_t len)
{
	snprintf(msg, len, "no overflow injected");
	return g->cpu[0].pkt.st.ovf > 0;
}

static bool wrapped(const struct ptg_gen *g, char *msg, size_t len)
{
	snprintf(msg, len, "ring never wrapped or nothing decodable left");
	return g->cpu[0].wrapped && g->cpu[0].nseq > g->cpu[0].seq_start;
}

static bool triggered(const struct ptg_gen *g, char *msg, size_t len)
{
	const struct ptg_cpu *cpu = &g->cpu[g->trigger.cpu];
	const struct ptg_pos *last = cpu->nseq ? &cpu->seq[cpu->nseq - 1] : NULL;

	/* The trigger CPU's trace ends just before the probed instruction. */
	snprintf(msg, len, "trigger not hit or trace does not end there");
	return g->trigger.hit && last && last->thread == g->trigger.thread &&
	       last->index + 1 == g->trigger.index;
}

/* A packet decoder synchronised at the first PSB of @buf, or NULL. */
static struct pt_packet_decoder *packets(const uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (d && pt_pkt_sync_forward(d) < 0) {
		pt_pkt_free_decoder(d);
		d = NULL;
	}
	return d;
}

/* Finds the first packet of @type (for TNT: either size); returns its
 * offset, or -1. */
static long find_packet(const uint8_t *buf, size_t len, enum pt_packet_type type,
			struct pt_packet *pkt)
{
	struct pt_packet_decoder *d = packets(buf, len);
	long at = -1;

	while (d) {
		uint64_t off;

		if (pt_pkt_get_offset(d, &off) < 0 || pt_pkt_next(d, pkt, sizeof(*pkt)) < 0)
			break;
		if (pkt->type == type ||
		    (type == ppt_tnt_8 && pkt->type == ppt_tnt_64 && pkt->payload.tnt.bit_size)) {
			at = (long)off;
			break;
		}
	}
	pt_pkt_free_decoder(d);
	return at;
}

/* The last MTC before the first TIP.PGD, with no enable or TSC between
 * them; returns its offset, or -1. */
static long last_mtc_before_pgd(const uint8_t *buf, size_t len, struct pt_packet *mtc)
{
	struct pt_packet_decoder *d = packets(buf, len);
	struct pt_packet p = { .type = ppt_invalid };
	long at = -1;
	uint64_t off;

	while (d && pt_pkt_get_offset(d, &off) >= 0 && pt_pkt_next(d, &p, sizeof(p)) >= 0) {
		if (p.type == ppt_tip_pgd && at >= 0)
			break;
		if (p.type == ppt_mtc) {
			at = (long)off;
			*mtc = p;
		} else if (p.type == ppt_tip_pge || p.type == ppt_tsc || p.type == ppt_tip_pgd) {
			at = -1;
		}
	}
	if (p.type != ppt_tip_pgd)
		at = -1;
	pt_pkt_free_decoder(d);
	return at;
}

/* Writes @pkt over the packet of the same size at @at. */
static int reencode(uint8_t *at, size_t room, const struct pt_packet *pkt)
{
	struct pt_config cfg;
	struct pt_encoder *e;
	int n;

	pt_config_init(&cfg);
	cfg.begin = at;
	cfg.end = at + room;
	e = pt_alloc_encoder(&cfg);
	n = e ? pt_enc_next(e, pkt) : -1;
	pt_free_encoder(e);
	return n == pkt->size ? 0 : -1;
}

/* Corrupts a copy of CPU 0's stream with @how and expects the check to fail. */
static void negative(const char *name, const struct ptg_run *run, struct ptg_insn_cache *ic,
		     const struct ptg_gen_cfg *cfg, int how)
{
	struct ptg_gen g;
	struct ptg_check r;
	struct pt_packet pkt;
	char msg[600] = "";
	uint8_t *buf = NULL;
	size_t len;
	long at = -1;
	bool detected = false;

	if (gen_and_check(run, ic, cfg, &g, msg, sizeof(msg))) {
		report(false, name, "uncorrupted stream already fails: %s", msg);
		goto out;
	}
	len = g.cpu[0].pkt.len;
	buf = malloc(len);
	if (!buf) {
		report(false, name, "out of memory");
		goto out;
	}
	memcpy(buf, g.cpu[0].pkt.buf, len);
	if (how == 0 && (at = find_packet(buf, len, ppt_tnt_8, &pkt)) >= 0) {
		/* Flip the last branch of the first TNT: same size, different
		 * path. */
		pkt.payload.tnt.payload ^= 1;
		if (reencode(buf + at, len - (size_t)at, &pkt))
			at = -1;
	} else if (how == 1 && (at = find_packet(buf, len, ppt_tip, &pkt)) >= 0) {
		/* Remove the first TIP. */
		size_t size = (size_t)pkt.size;

		memmove(buf + at, buf + at + size, len - (size_t)at - size);
		len -= size;
	} else if (how == 3 && (at = find_packet(buf, len, ppt_tsc, &pkt)) >= 0) {
		/* A TSC two MTC periods late: the enable times are wrong. */
		pkt.payload.tsc.tsc += 2 * (cfg->pkt.art_ratio << cfg->pkt.mtc_freq);
		if (reencode(buf + at, len - (size_t)at, &pkt))
			at = -1;
	} else if (how == 4 && g.nthr > 1) {
		/* The sideband names the wrong thread for one of CPU 0's
		 * switch-ins. */
		for (size_t i = 0; i < g.nsw && at < 0; i++) {
			if (g.sw[i].cpu == 0 && g.sw[i].next >= 0) {
				g.sw[i].next = (g.sw[i].next + 1) % (int32_t)g.nthr;
				at = 0;
			}
		}
	} else if (how == 5 && (at = last_mtc_before_pgd(buf, len, &pkt)) >= 0) {
		/* The last MTC before the first TIP.PGD two periods late:
		 * only the disable's time is wrong. */
		pkt.payload.mtc.ctc = (uint8_t)(pkt.payload.mtc.ctc + 2);
		if (reencode(buf + at, len - (size_t)at, &pkt))
			at = -1;
	} else if (how == 2 && g.cpu[0].nseq > 10) {
		/* Keep the stream, expect one instruction less. */
		memmove(&g.cpu[0].seq[5], &g.cpu[0].seq[6],
			(g.cpu[0].nseq - 6) * sizeof(g.cpu[0].seq[0]));
		g.cpu[0].nseq--;
		at = 0;
	}
	if (at < 0 && how == 5) {
		/* Every stretch too short for an MTC (syscalls). */
		printf("SKIP ptgen/%s: no MTC in a stretch before its TIP.PGD\n", name);
		goto out;
	}
	if (at < 0) {
		report(false, name, "nothing to corrupt in the stream");
		goto out;
	}
	detected = ptg_check_cpu(&g, 0, &run->image, buf, len, &r) != 0;
	if (how == 5)
		detected = detected && strstr(r.msg, "disabled at time");
	report(detected, name, "corruption not detected (%zu instructions decoded): %s", r.decoded,
	       r.msg);
out:
	free(buf);
	ptg_gen_fini(&g);
}

/* A thread switched in on a second CPU while it runs on the first: the
 * generator's own check of its switch records must see it. */
static void two_cpus_at_once(const char *name, const struct ptg_run *run, struct ptg_insn_cache *ic,
			     const struct ptg_gen_cfg *cfg)
{
	struct ptg_gen g;
	struct ptg_switch *sw;
	char msg[600] = "";
	size_t i = 0;

	if (gen_and_check(run, ic, cfg, &g, msg, sizeof(msg))) {
		report(false, name, "uncorrupted run already fails: %s", msg);
		goto out;
	}
	while (i < g.nsw && g.sw[i].next < 0)
		i++;
	sw = i < g.nsw ? realloc(g.sw, (g.nsw + 1) * sizeof(*sw)) : NULL;
	if (!sw) {
		report(false, name, "no switch-in to copy");
		goto out;
	}
	g.sw = sw;
	sw[g.nsw] = sw[i];
	sw[g.nsw].cpu = (sw[i].cpu + 1) % cfg->ncpu;
	sw[g.nsw].prev = -1;
	sw[g.nsw++].tsc++;
	report(ptg_gen_check_switches(&g) == -EINVAL, name, "overlap not detected");
out:
	ptg_gen_fini(&g);
}

/* Decoder configuration from a bundle, as the decoder builds it. */
static int bundle_config(struct mt_bundle_reader *br, struct pt_config *cfg)
{
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc pc;

	if (mt_bundle_get_cpu(br, &cpu) || mt_bundle_get_pt_config(br, &pc))
		return -1;
	pt_config_init(cfg);
	cfg->cpu.vendor = cpu.vendor == MT_BUNDLE_VENDOR_INTEL ? pcv_intel : pcv_unknown;
	cfg->cpu.family = cpu.family;
	cfg->cpu.model = cpu.model;
	cfg->cpu.stepping = cpu.stepping;
	cfg->cpuid_0x15_eax = cpu.cpuid_15.eax;
	cfg->cpuid_0x15_ebx = cpu.cpuid_15.ebx;
	cfg->nom_freq = (uint8_t)cpu.max_nonturbo_ratio;
	cfg->mtc_freq = (uint8_t)MT_RTIT_CTL_MTC_FREQ(pc.rtit_ctl);
	return pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0 ? -1 : 0;
}

/* What a bundle reader finds must decode to the truth and match the
 * generator's sideband, trigger and maps. */
static int bundle_verify(struct mt_bundle_reader *br, const struct ptg_run *run,
			 const struct ptg_gen *g, char *msg, size_t len)
{
	const struct mt_bundle_switch_entry *sw;
	const struct mt_bundle_map *maps;
	struct mt_bundle_trigger tr;
	struct pt_config cfg;
	struct ptg_check r;
	const uint8_t *data;
	size_t n, nmaps;
	int vdso;

	if (bundle_config(br, &cfg) || mt_bundle_pt_count(br) != g->cfg->ncpu)
		return snprintf(msg, len, "bad CPU, PT configuration or CPU count"), -1;
	for (size_t i = 0; i < g->cfg->ncpu; i++) {
		struct mt_bundle_pt_desc d;

		if (mt_bundle_pt_desc(br, i, &d) || mt_bundle_pt_data(br, i, &data, &n) ||
		    d.cpu >= g->cfg->ncpu)
			return snprintf(msg, len, "cannot read PT of cpu %zu", i), -1;
		cfg.begin = (uint8_t *)data;
		cfg.end = (uint8_t *)data + n;
		if (ptg_check_cpu_config(g, d.cpu, &run->image, &cfg, &r))
			return snprintf(msg, len, "cpu %u from the bundle: %s", d.cpu, r.msg), -1;
	}
	if (mt_bundle_switches(br, &sw, &n))
		return snprintf(msg, len, "switch records: %s", mt_bundle_reader_errmsg(br)), -1;
	if (n != g->nsw)
		return snprintf(msg, len, "%zu switch records, %zu expected", n, g->nsw), -1;
	for (size_t i = 0; i < n; i++)
		if (sw[i].next_tid != (g->sw[i].next < 0 ? 0 : (uint32_t)run->thr[g->sw[i].next].tid))
			return snprintf(msg, len, "switch %zu names the wrong thread", i), -1;
	if (mt_bundle_get_trigger(br, &tr) ||
	    (g->trigger.hit && (tr.d.ip != g->trigger.ip ||
				tr.d.tid != (uint32_t)run->thr[g->trigger.thread].tid)))
		return snprintf(msg, len, "trigger record differs"), -1;
	/* One record per mapping at the start, one per later event (a
	 * mapping made later is in the image, and has its event). */
	nmaps = run->image.nseg + run->nmev;
	for (size_t k = 0; k < run->nmev; k++)
		nmaps -= !run->mev[k].unmapped;
	if (mt_bundle_maps(br, &maps) != nmaps)
		return snprintf(msg, len, "map count differs"), -1;
	for (size_t k = 0; k < run->nmev; k++) {
		const struct ptg_map_event *e = &run->mev[k];
		char anon[32];
		int f;

		if (e->unmapped || e->path[0])
			continue;
		snprintf(anon, sizeof(anon), "[anon:%#" PRIx64 "]", e->start);
		f = mt_bundle_file_find(br, NULL, 0, anon);
		if (f < 0 || mt_bundle_file_data(br, (size_t)f, &data, &n) ||
		    n != e->end - e->start || memcmp(data, e->bytes, n))
			return snprintf(msg, len, "copy of anonymous code missing or different"), -1;
	}
	vdso = mt_bundle_file_find(br, NULL, 0, "[vdso]");
	for (size_t i = 0; i < run->image.nseg; i++) {
		const struct ptg_seg *s = &run->image.seg[i];

		if (strcmp(s->path, "[vdso]"))
			continue;
		if (vdso < 0 || mt_bundle_file_data(br, (size_t)vdso, &data, &n) ||
		    n != s->end - s->start || memcmp(data, s->bytes, n))
			return snprintf(msg, len, "vDSO copy missing or different"), -1;
	}
	return 0;
}

static void bundle_case(const char *name, const struct ptg_run *run, struct ptg_insn_cache *ic,
			const struct ptg_gen_cfg *cfg)
{
	struct ptg_bundle_opts bo = { .trigger_spec = "test", .reason = MT_BUNDLE_REASON_TARGET_EXIT,
				      .freeze_path = MT_BUNDLE_FREEZE_EXIT };
	struct mt_bundle_reader *br = NULL;
	struct ptg_gen g;
	char path[64], msg[600] = "", err[256] = "";
	int fd = memfd_create("ptg-bundle", 0);
	bool ok = false;

	if (gen_and_check(run, ic, cfg, &g, msg, sizeof(msg)) || fd < 0) {
		report(false, name, "no stream: %s", msg);
		goto out;
	}
	/* The bundle lives in memory; the writer opens it by path. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ptg_bundle_write(path, run, &g, &bo))
		snprintf(msg, sizeof(msg), "writing the bundle failed");
	else if (mt_bundle_open(&br, path, err, sizeof(err)))
		snprintf(msg, sizeof(msg), "reading the bundle failed: %s", err);
	else
		ok = !bundle_verify(br, run, &g, msg, sizeof(msg));
	report(ok, name, "%s", msg);
out:
	mt_bundle_close(br);
	if (fd >= 0)
		close(fd);
	ptg_gen_fini(&g);
}

/* Random walk over @path: the generated stream must decode to the walk. */
static void walk_case(const char *name, const char *path, bool expect_dyn)
{
	struct ptg_image img;
	struct ptg_insn_cache *ic = NULL;
	struct ptg_thread t = { 0 };
	struct ptg_walk_cfg wcfg = { .seed = 7, .insns = 200000 };
	struct ptg_gen_cfg cfg;
	struct ptg_gen g;
	struct ptg_check r;
	uint64_t bias, *funcs = NULL;
	size_t nfuncs = 0;
	char msg[600] = "";
	bool ok = false;

	if (ptg_walk_bias(path, &bias) || ptg_image_load_elf(&img, path, bias)) {
		report(false, name, "cannot load %s", path);
		return;
	}
	ic = ptg_insn_cache_new(&img);
	if (!ic || ptg_sym_functions(path, bias, &img, &funcs, &nfuncs) ||
	    ptg_walk(&t, ic, funcs, nfuncs, &wcfg)) {
		report(false, name, "cannot walk %s", path);
		goto out;
	}
	ptg_gen_cfg_default(&cfg);
	cfg.pkt.psb_period = 2048;
	if (ptg_gen_run(&g, &cfg, &t, 1, ic)) {
		snprintf(msg, sizeof(msg), "generator failed");
	} else if (ptg_check_cpu(&g, 0, &img, g.cpu[0].pkt.buf, g.cpu[0].pkt.len, &r)) {
		snprintf(msg, sizeof(msg), "%s", r.msg);
	} else {
		/* Also a real walk: big enough, and placed as the file type
		 * demands (PIE/shared objects relocated, executables not). */
		snprintf(msg, sizeof(msg), "%zu instructions, %zu functions, bias %#llx",
			 r.decoded, nfuncs, (unsigned long long)bias);
		ok = r.decoded == wcfg.insns && (bias != 0) == expect_dyn;
	}
	ptg_gen_fini(&g);
	report(ok, name, "%s", msg);
out:
	free(funcs);
	free(t.ip);
	free(t.async);
	ptg_insn_cache_free(ic);
	ptg_image_fini(&img);
}

/* The walk made and generated in pieces (ptgen --piece). */
struct walk_pieces {
	struct ptg_walker w;
	struct ptg_thread *t;
	size_t piece, calls;
};

static int next_walk_piece(void *ctx, size_t t)
{
	struct walk_pieces *p = ctx;

	(void)t;
	p->calls++;
	return ptg_walker_next(&p->w, p->t, p->piece);
}

/*
 * A walk given to the generator in small pieces must make the very packets
 * and switch records of the same walk made whole (which the other walk
 * cases check against libipt), on two CPUs with context switches.
 */
static void walk_pieces(const char *name, const struct ptg_image *img, const uint64_t *funcs,
			size_t nfuncs, size_t min_irqs)
{
	struct ptg_insn_cache *ic = ptg_insn_cache_new(img);
	struct ptg_thread whole = { 0 }, part = { .tid = 1, .parent = -1 };
	struct ptg_walk_cfg wcfg = { .seed = 11, .insns = 300000 };
	struct walk_pieces p = { .t = &part, .piece = 1000 };
	struct ptg_gen_cfg cfg, pcfg;
	struct ptg_gen g = { 0 }, pg = { 0 };
	char msg[300] = "";
	bool ok = false;

	if (!ic || ptg_walk(&whole, ic, funcs, nfuncs, &wcfg) ||
	    ptg_walker_init(&p.w, ic, funcs, nfuncs, &wcfg) ||
	    ptg_walker_next(&p.w, &part, p.piece) != 1) {
		report(false, name, "cannot walk");
		goto out;
	}
	ptg_gen_cfg_default(&cfg);
	cfg.ncpu = 2;
	cfg.record_seq = false;
	pcfg = cfg;
	pcfg.more = next_walk_piece;
	pcfg.more_ctx = &p;
	if (ptg_gen_run(&g, &cfg, &whole, 1, ic) || ptg_gen_run(&pg, &pcfg, &part, 1, ic)) {
		snprintf(msg, sizeof(msg), "generator failed");
	} else if (p.calls < 100 || p.calls > 1000 || part.n > 2 * p.piece ||
		   pg.insns != g.insns || whole.nasync < min_irqs) {
		snprintf(msg, sizeof(msg), "%zu pieces, last %zu instructions, %zu instructions "
			 "against %zu, %zu interrupts", p.calls, part.n, pg.insns, g.insns,
			 whole.nasync);
	} else if (pg.nsw != g.nsw || memcmp(pg.sw, g.sw, g.nsw * sizeof(*g.sw))) {
		snprintf(msg, sizeof(msg), "switch records differ (%zu against %zu)", pg.nsw,
			 g.nsw);
	} else {
		ok = true;
		for (unsigned c = 0; c < cfg.ncpu; c++)
			ok = ok && pg.cpu[c].pkt.len == g.cpu[c].pkt.len &&
			     !memcmp(pg.cpu[c].pkt.buf, g.cpu[c].pkt.buf, g.cpu[c].pkt.len);
		snprintf(msg, sizeof(msg), "%zu + %zu PT bytes: the packets differ",
			 g.cpu[0].pkt.len, g.cpu[1].pkt.len);
	}
	report(ok, name, "%s", msg);
out:
	ptg_gen_fini(&g);
	ptg_gen_fini(&pg);
	ptg_walker_fini(&p.w);
	free(whole.ip);
	free(whole.async);
	free(part.ip);
	free(part.async);
	ptg_insn_cache_free(ic);
}

/* The pieces over @path's code. */
static void walk_pieces_case(const char *name, const char *path)
{
	struct ptg_image img;
	uint64_t bias, *funcs = NULL;
	size_t nfuncs = 0;

	if (ptg_walk_bias(path, &bias) || ptg_image_load_elf(&img, path, bias) ||
	    ptg_sym_functions(path, bias, &img, &funcs, &nfuncs)) {
		report(false, name, "cannot load %s", path);
		return;
	}
	walk_pieces(name, &img, funcs, nfuncs, 0);
	free(funcs);
	ptg_image_fini(&img);
}

/* The pieces over code where half of the free choices land on a UD2 or a
 * loop without packets: interrupts everywhere, at piece boundaries too. */
static void walk_pieces_interrupted_case(void)
{
	static uint8_t code[] = {
		0xe8, 0x0b, 0x00, 0x00, 0x00,			/* 0x00: call 0x10 */
		0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,	/* 0x05: ret */
		0xcc, 0xcc, 0xcc, 0xcc,
		0x85, 0xc0, 0x75, 0x02, 0x31, 0xc0, 0xc3,	/* 0x10: test; jne 0x16; xor; ret */
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
		0x0f, 0x0b,					/* 0x20: ud2 */
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
		0x90, 0xeb, 0xfd,				/* 0x30: nop; jmp 0x30 */
	};
	const uint64_t base = 0x400000,
		funcs[] = { base, base + 0x10, base + 0x20, base + 0x30 };
	struct ptg_seg seg = { .start = base, .end = base + sizeof(code), .perms = "r-xp",
			       .bytes = code };
	struct ptg_image img = { &seg, 1 };

	walk_pieces("walk/pieces-interrupted", &img, funcs, 4, 10000);
}

/*
 * A walk over hand-made code with what patched kernel text holds: a Xen
 * hypercall (endbr64; vmcall; ret: xen_hypercall_intel) and a kprobe's int3
 * over the first byte of a 5-byte instruction. libipt must decode the
 * stream back to the walk, and the walk must stop at the int3 rather than
 * run the bytes behind it (the middle of the instruction it replaced).
 */
static void patched_walk_case(void)
{
	static uint8_t code[] = {
		0xe8, 0x0b, 0x00, 0x00, 0x00,			/* 0x00: call 0x10 */
		0xe8, 0x16, 0x00, 0x00, 0x00,			/* 0x05: call 0x20 */
		0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,		/* 0x0a: ret */
		0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x01, 0xc1, 0xc3,	/* 0x10: endbr64; vmcall; ret */
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
		0xcc, 0x90, 0x90, 0x90, 0x90, 0xc3,		/* 0x20: int3 over mov $0x90909090,%eax; ret */
	};
	const uint64_t base = 0xffffffff81000000ull, funcs[] = { base, base + 0x10, base + 0x20 };
	const char *name = "walk/patched-kernel";
	struct ptg_seg seg = { .start = base, .end = base + sizeof(code), .perms = "r-xp",
			       .bytes = code };
	struct ptg_image img = { &seg, 1 };
	struct ptg_walk_cfg wcfg = { .seed = 7, .insns = 2000, .start = base };
	struct ptg_insn_cache *ic = ptg_insn_cache_new(&img);
	struct ptg_thread t = { 0 };
	struct ptg_gen_cfg cfg;
	struct ptg_gen g;
	struct ptg_check r;
	size_t vmcalls = 0, stops = 0, behind = 0;
	char msg[600] = "";
	bool ok = false;

	if (!ic || ptg_walk(&t, ic, funcs, 3, &wcfg)) {
		report(false, name, "cannot walk the code");
		goto out;
	}
	for (size_t i = 0; i < t.n; i++) {
		vmcalls += t.ip[i] == base + 0x14;
		behind += t.ip[i] > base + 0x20 && t.ip[i] < base + 0x25;
	}
	for (size_t i = 0; i < t.nasync; i++)
		stops += t.async[i].resume_ip == base + 0x20;
	ptg_gen_cfg_default(&cfg);
	if (ptg_gen_run(&g, &cfg, &t, 1, ic)) {
		snprintf(msg, sizeof(msg), "generator failed");
	} else if (ptg_check_cpu(&g, 0, &img, g.cpu[0].pkt.buf, g.cpu[0].pkt.len, &r)) {
		snprintf(msg, sizeof(msg), "%s", r.msg);
	} else {
		snprintf(msg, sizeof(msg), "%zu instructions, %zu vmcalls, %zu stops at the int3, "
			 "%zu run behind it", r.decoded, vmcalls, stops, behind);
		ok = r.decoded == t.n && vmcalls && stops && !behind;
	}
	report(ok, name, "%s", msg);
	ptg_gen_fini(&g);
out:
	free(t.ip);
	free(t.async);
	ptg_insn_cache_free(ic);
}

/* Truth records of one kind in the generator's truth text. */
static size_t count_records(const char *truth, const char *kind)
{
	size_t n = 0, len = strlen(kind);

	for (const char *l = truth; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		n += !strncmp(l, kind, len) && l[len] == ' ';
	return n;
}

/*
 * User and kernel code traced together over hand-made code: a user loop
 * that calls a function making a system call, and a kernel whose entries
 * call a function and leave by IRET. The splice must put an excursion
 * after every SYSCALL and at interrupts, the generator must write TIP for
 * the far transfers and FUP + TIP for the interrupts, and libipt must
 * decode it all back.
 */
static void user_kernel_walk_case(void)
{
	static uint8_t ucode[] = {
		0xe8, 0x0b, 0x00, 0x00, 0x00,	/* 0x00: call 0x10 */
		0x90, 0x90,			/* 0x05: nop; nop */
		0xeb, 0xf7,			/* 0x07: jmp 0x00 */
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
		0x0f, 0x05, 0xc3,		/* 0x10: syscall; ret */
	};
	static uint8_t kcode[0x60] = {
		[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00,	/* entry: call 0x20 */
		[0x05] = 0xeb, 0x39,			/* jmp 0x40 */
		[0x20] = 0x90, 0xc3,			/* nop; ret */
		[0x40] = 0x48, 0xcf,			/* iretq */
		[0x50] = 0xe8, 0xcb, 0xff, 0xff, 0xff,	/* irq entry: call 0x20 */
		[0x55] = 0xeb, 0xe9,			/* jmp 0x40 */
	};
	const uint64_t ubase = 0x400000, kbase = 0xffffffff81000000ull;
	const uint64_t ufuncs[] = { ubase, ubase + 0x10 };
	const uint64_t kfuncs[] = { kbase, kbase + 0x20, kbase + 0x40, kbase + 0x50 };
	const char *name = "walk/user-and-kernel";
	struct ptg_seg seg[] = {
		{ .start = ubase, .end = ubase + sizeof(ucode), .perms = "r-xp", .bytes = ucode },
		{ .start = kbase, .end = kbase + sizeof(kcode), .perms = "r-xp", .bytes = kcode },
	};
	struct ptg_image img = { seg, 2 };
	struct ptg_walk_cfg wcfg = { .seed = 3, .insns = 3000, .start = ubase };
	struct ptg_ukwalk_cfg ucfg = {
		.seed = 5, .syscall_entry = kbase, .irq_entry = kbase + 0x50, .irq_every = 50,
		.kinsns_min = 2, .kinsns_max = 8,
	};
	struct ptg_insn_cache *ic = ptg_insn_cache_new(&img);
	struct ptg_ukwalk_stats st;
	struct ptg_thread t = { 0 };
	struct ptg_gen_cfg cfg;
	struct ptg_gen g = { 0 };
	struct ptg_check r;
	char msg[600] = "", *truth = NULL;
	size_t truth_len = 0;
	FILE *tf = open_memstream(&truth, &truth_len);
	bool ok = false;

	if (!ic || !tf || ptg_walk(&t, ic, ufuncs, 2, &wcfg) ||
	    ptg_ukwalk_find_exit(ic, kbase + 0x40, &ucfg.exit_ip) ||
	    ptg_ukwalk_splice(&t, ic, kfuncs, 4, &ucfg, &st)) {
		report(false, name, "cannot walk the code");
		goto out;
	}
	ptg_gen_cfg_default(&cfg);
	cfg.kernel_traced = true;
	cfg.record_seq = true;
	cfg.truth = tf;
	if (ptg_gen_run(&g, &cfg, &t, 1, ic)) {
		snprintf(msg, sizeof(msg), "generator failed");
	} else if (fflush(tf) ||
		   ptg_check_cpu(&g, 0, &img, g.cpu[0].pkt.buf, g.cpu[0].pkt.len, &r)) {
		snprintf(msg, sizeof(msg), "%s", r.msg);
	} else {
		size_t calls = count_records(truth, "far-call"), rets = count_records(truth, "far-ret"),
		       irqs = count_records(truth, "irq");

		snprintf(msg, sizeof(msg), "%zu instructions, %zu system calls and %zu interrupts "
			 "spliced (%zu kernel instructions); truth: %zu far calls, %zu far "
			 "returns, %zu interrupts; %zu TIP, %zu PGD, %zu switches", r.decoded,
			 st.syscalls, st.irqs, st.kernel_insns, calls, rets, irqs,
			 g.cpu[0].pkt.st.tip, g.cpu[0].pkt.st.pgd, g.nsw);
		/* Each excursion leaves by its IRET after 4 or 5 instructions;
		 * every far transfer is a TIP; only context switches disable
		 * packets. */
		ok = r.decoded == t.n && st.syscalls && st.irqs && calls == st.syscalls &&
		     irqs == st.irqs && rets == calls + irqs &&
		     st.kernel_insns >= 4 * rets && st.kernel_insns <= 5 * rets &&
		     g.cpu[0].pkt.st.tip >= calls + rets + irqs && g.cpu[0].pkt.st.pgd <= g.nsw;
	}
	report(ok, name, "%s", msg);
out:
	ptg_gen_fini(&g);
	if (tf)
		fclose(tf);
	free(truth);
	free(t.ip);
	free(t.async);
	ptg_insn_cache_free(ic);
}

static void run_walks(void)
{
	char path[PATH_MAX + 32], *argv[2] = { path, NULL };
	struct ptg_run run;
	struct ptg_trace_opts topt = { 0 };

	patched_walk_case();
	user_kernel_walk_case();
	walk_pieces_interrupted_case();

	snprintf(path, sizeof(path), "%s/indirect-nopie", progdir);
	walk_case("walk/non-pie", path, false);
	snprintf(path, sizeof(path), "%s/plt", progdir);
	walk_case("walk/pie", path, true);
	walk_pieces_case("walk/pieces-pie", path);
	/* The C library the test programs really map. */
	if (ptg_trace_run(&run, argv, &topt)) {
		report(false, "walk/libc", "cannot trace %s", path);
		return;
	}
	for (size_t i = 0; i < run.image.nseg; i++) {
		const char *p = run.image.seg[i].path;
		size_t len = strlen(p);

		if (run.image.seg[i].bytes && len > 10 && !strcmp(p + len - 10, "/libc.so.6")) {
			walk_case("walk/libc", p, true);
			walk_pieces_case("walk/pieces-libc", p);
			break;
		}
	}
	ptg_run_fini(&run);
}

static void run_program(const struct program *p)
{
	char path[PATH_MAX + 32], base[64], name[160], arg[16];
	char *argv[3] = { path, NULL, NULL };
	struct ptg_run run;
	struct ptg_trace_opts topt = { 0 };
	struct ptg_insn_cache *ic;
	struct ptg_gen_cfg cfg;
	struct ptg_gen g;
	char msg[600];
	size_t maxlen = 0;

	snprintf(path, sizeof(path), "%s/%s", progdir, p->name);
	snprintf(base, sizeof(base), "%s%s%s/cpus%u", p->name, p->arg ? "-" : "", p->arg ? p->arg : "",
		 p->ncpu);
	if (p->arg) {
		snprintf(arg, sizeof(arg), "%s", p->arg);
		argv[1] = arg;
	}
	snprintf(name, sizeof(name), "%s/trace", base);
	if (ptg_trace_run(&run, argv, &topt)) {
		report(false, name, "cannot trace %s", path);
		return;
	}
	report(run.nthr >= (p->arg ? (size_t)atoi(p->arg) + 1 : 1) && ptg_run_insns(&run) > 100,
	       name, "%zu threads, %zu instructions", run.nthr, ptg_run_insns(&run));
	if (p->dies_in) {
		uint64_t at = 0;

		/* The faulting load never completes: the trace ends there. */
		snprintf(name, sizeof(name), "%s/ends-at-fault", base);
		ptg_sym_addr(&run.image, run.exe, p->dies_in, &at);
		report(at && run.thr[0].end_ip == at, name, "trace ends at %#llx, not %s",
		       (unsigned long long)run.thr[0].end_ip, p->dies_in);
	}
	ic = ptg_insn_cache_new(&run.image);
	if (!ic) {
		report(false, name, "no instruction cache");
		ptg_run_fini(&run);
		return;
	}
	ptg_gen_cfg_default(&cfg);
	cfg.ncpu = p->ncpu;
	snprintf(name, sizeof(name), "%s/roundtrip", base);
	positive(name, &run, ic, &cfg, saw_timing);

	/* Small PSB period, short TNT only, no RET compression. */
	cfg.pkt.psb_period = 256;
	cfg.pkt.tnt_max = 6;
	cfg.pkt.ret_compression = false;
	cfg.slice_insns = 700;
	snprintf(name, sizeof(name), "%s/psb256-tnt6-disretc-slice700", base);
	positive(name, &run, ic, &cfg, saw_psbs);

	/* Cycle-accurate: enable times must be exact. */
	ptg_gen_cfg_default(&cfg);
	cfg.ncpu = p->ncpu;
	cfg.pkt.cyc = true;
	snprintf(name, sizeof(name), "%s/cyc", base);
	positive(name, &run, ic, &cfg, saw_timing);

	ptg_gen_cfg_default(&cfg);
	cfg.ncpu = p->ncpu;
	cfg.pkt.psb_period = 512;
	cfg.ovf_every = 250;
	cfg.ovf_len = 37;
	snprintf(name, sizeof(name), "%s/overflow", base);
	positive(name, &run, ic, &cfg, saw_overflow);

	/* A ring smaller than the largest stream. */
	ptg_gen_cfg_default(&cfg);
	cfg.ncpu = p->ncpu;
	cfg.pkt.psb_period = 128;
	if (!gen_and_check(&run, ic, &cfg, &g, msg, sizeof(msg)))
		for (unsigned c = 0; c < cfg.ncpu; c++)
			maxlen = g.cpu[c].pkt.len > maxlen ? g.cpu[c].pkt.len : maxlen;
	ptg_gen_fini(&g);
	/* Half the stream, but room for a few PSB periods. */
	cfg.ring_size = maxlen / 2 > 3 * cfg.pkt.psb_period ? maxlen / 2 : 3 * cfg.pkt.psb_period;
	snprintf(name, sizeof(name), "%s/ring-wrap", base);
	positive(name, &run, ic, &cfg, wrapped);

	if (p->arg) {
		ptg_gen_cfg_default(&cfg);
		cfg.ncpu = p->ncpu;
		snprintf(name, sizeof(name), "%s/negative-wrong-sideband", base);
		negative(name, &run, ic, &cfg, 4);
		snprintf(name, sizeof(name), "%s/negative-two-cpus-at-once", base);
		two_cpus_at_once(name, &run, ic, &cfg);
	}
	if (p->trigger) {
		/* The trigger case, and the bundle of the same trace. */
		ptg_gen_cfg_default(&cfg);
		cfg.ncpu = p->ncpu;
		cfg.trigger_hit = p->hit;
		snprintf(name, sizeof(name), "%s/trigger-%s-%u", base, p->trigger, p->hit);
		if (ptg_sym_addr(&run.image, run.exe, p->trigger, &cfg.trigger_ip)) {
			report(false, name, "no symbol %s", p->trigger);
		} else {
			positive(name, &run, ic, &cfg, triggered);
			snprintf(name, sizeof(name), "%s/bundle", base);
			bundle_case(name, &run, ic, &cfg);
		}
	}
	if (p->ncpu == 1 && !p->arg) {
		ptg_gen_cfg_default(&cfg);
		snprintf(name, sizeof(name), "%s/negative-flipped-tnt", base);
		negative(name, &run, ic, &cfg, 0);
		snprintf(name, sizeof(name), "%s/negative-dropped-tip", base);
		negative(name, &run, ic, &cfg, 1);
		snprintf(name, sizeof(name), "%s/negative-missing-instruction", base);
		negative(name, &run, ic, &cfg, 2);
		snprintf(name, sizeof(name), "%s/negative-late-tsc", base);
		negative(name, &run, ic, &cfg, 3);
		/* An MTC in every stretch, however short (syscalls): one
		 * every ART tick. */
		cfg.pkt.mtc_freq = 0;
		snprintf(name, sizeof(name), "%s/negative-late-disable", base);
		negative(name, &run, ic, &cfg, 5);
	}
	ptg_insn_cache_free(ic);
	ptg_run_fini(&run);
}

/* A case name is a program's name or "walk"; -1 to run, else the exit status. */
static int parse_args(int argc, char **argv)
{
	const size_t nprog = sizeof(programs) / sizeof(programs[0]);
	bool known = argc < 2 || !strcmp(argv[1], "walk");

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: ptg_roundtrip [--list] [CASE]\n"
		       "Runs the round trip of one program (or \"walk\"), all when none is named.\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < nprog; i++)
			printf("%s\n", programs[i].name);
		printf("walk\n");
		return 0;
	}
	for (size_t i = 0; !known && i < nprog; i++)
		known = !strcmp(argv[1], programs[i].name);
	if (argc > 2) {
		fprintf(stderr, "ptg_roundtrip: at most one case name (try --help)\n");
		return 2;
	}
	if (!known) {
		fprintf(stderr, "ptg_roundtrip: no case named '%s' (--list shows them)\n", argv[1]);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n;
	int rc = parse_args(argc, argv);

	if (rc >= 0)
		return rc;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		printf("FAIL ptgen/setup: cannot find my own path: %s\n", strerror(errno));
		return 1;
	}
	self[n] = 0;
	snprintf(progdir, sizeof(progdir), "%s/programs", dirname(self));
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (argc < 2 || !strcmp(argv[1], programs[i].name))
			run_program(&programs[i]);
	if (argc < 2 || !strcmp(argv[1], "walk"))
		run_walks();
	return failures ? 1 : 0;
}
