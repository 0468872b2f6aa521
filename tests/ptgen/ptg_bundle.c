// SPDX-License-Identifier: MIT
/* Generated trace -> snapshot bundle. */
#include "ptg_bundle.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle/bundle.h"
#include "decode/kernel_image.h"
#include "ptg_kwalk.h"

#define PTG_BUILD_ID_MAX 64

/* CPUID.14h as a PT-capable client core reports it: CR3 filtering,
 * configurable PSB and CYC, IP filtering, MTC; ToPA with multiple entries;
 * sub-leaf 1: two address ranges, MTCFreq encodings 0/3/6/9, every
 * CycThresh, PSBFreq 0-5. */
static const struct mt_bundle_cpuid ptg_cpuid_14_0 = { 1, 0x0f, 0x03, 0 };
static const struct mt_bundle_cpuid ptg_cpuid_14_1 = { 0x02490002, 0x003f3fff, 0, 0 };

static size_t build_id(Elf *elf, uint8_t *out)
{
	const void *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;

	if (n <= 0 || n > PTG_BUILD_ID_MAX)
		return 0;
	memcpy(out, id, (size_t)n);
	return (size_t)n;
}

static size_t file_build_id(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t n;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = build_id(elf, out);
	elf_end(elf);
	close(fd);
	return n;
}

static size_t mem_build_id(const uint8_t *bytes, size_t len, uint8_t *out)
{
	Elf *elf = elf_memory((char *)bytes, len);
	size_t n = build_id(elf, out);

	elf_end(elf);
	return n;
}

/* Kernel text copies are image segments too, in the upper half. */
static bool user_seg(const struct ptg_seg *s)
{
	return !mt_kimage_is_kernel_ip(s->start);
}

static size_t user_segments(const struct ptg_image *img)
{
	size_t n = 0;

	for (size_t i = 0; i < img->nseg; i++)
		n += user_seg(&img->seg[i]);
	return n;
}

static uint32_t prot(const char *perms)
{
	return (perms[0] == 'r' ? MT_BUNDLE_PROT_READ : 0) |
	       (perms[1] == 'w' ? MT_BUNDLE_PROT_WRITE : 0) |
	       (perms[2] == 'x' ? MT_BUNDLE_PROT_EXEC : 0);
}

/* One maps record to write: a mapping at the start or an event later. */
struct map_rec {
	uint64_t tsc, start, end, offset;
	const char *perms, *path;
	const uint8_t *bytes;	/* executable bytes, or NULL */
	uint32_t event;
};

/* Whether mapping @i of the start image came later, by an event. */
static bool mapped_later(const struct ptg_run *run, const struct ptg_seg *s)
{
	for (size_t k = 0; k < run->nmev; k++)
		if (!run->mev[k].unmapped && run->mev[k].start == s->start &&
		    run->mev[k].end == s->end && !strcmp(run->mev[k].path, s->path))
			return true;
	return false;
}

/* Whether an earlier record maps the same file (embed each file once). */
static bool seen_before(const struct map_rec *r, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(r[k].path, r[i].path))
			return true;
	return false;
}

/*
 * The bytes of an anonymous executable mapping (JIT-style code) have no
 * file: the bundle carries them as a file named "[anon:0xSTART]", which
 * the decoder looks up for such a mapping (docs/bundle-format.md).
 */
static int write_anon_code(struct mt_bundle_writer *w, const struct map_rec *r)
{
	char name[32];
	struct mt_bundle_file f = { .path = name };

	snprintf(name, sizeof(name), "[anon:%#" PRIx64 "]", r->start);
	return mt_bundle_write_file(w, &f, r->bytes, r->end - r->start);
}

static int write_maps(struct mt_bundle_writer *w, const struct ptg_run *run, uint64_t tsc,
		      bool embed)
{
	const struct ptg_image *img = &run->image;
	size_t cap = img->nseg + run->nmev, n = 0;
	struct map_rec *r = calloc(cap ? cap : 1, sizeof(*r));
	struct mt_bundle_map *maps = calloc(cap ? cap : 1, sizeof(*maps));
	uint8_t (*ids)[PTG_BUILD_ID_MAX] = calloc(cap ? cap : 1, sizeof(*ids));
	int err = r && maps && ids ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < img->nseg; i++) {
		const struct ptg_seg *s = &img->seg[i];

		if (user_seg(s) && !mapped_later(run, s))
			r[n++] = (struct map_rec){ tsc, s->start, s->end, s->offset, s->perms, s->path,
						   s->bytes, MT_BUNDLE_MAP_PRESENT };
	}
	for (size_t k = 0; !err && k < run->nmev; k++) {
		const struct ptg_map_event *e = &run->mev[k];

		r[n++] = (struct map_rec){ e->tsc, e->start, e->end, e->offset, e->perms, e->path,
					   e->bytes,
					   e->unmapped ? MT_BUNDLE_MAP_MUNMAP : MT_BUNDLE_MAP_MMAP };
	}
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < n && !err; i++) {
		struct mt_bundle_map *m = &maps[i];
		bool vdso = !strcmp(r[i].path, "[vdso]");

		*m = (struct mt_bundle_map){ .tsc = r[i].tsc, .start = r[i].start, .end = r[i].end,
					     .file_offset = r[i].offset, .pid = (uint32_t)run->pid,
					     .prot = prot(r[i].perms), .event = r[i].event,
					     .path = r[i].path, .build_id = ids[i] };
		if (vdso && r[i].bytes)
			m->build_id_len = mem_build_id(r[i].bytes, r[i].end - r[i].start, ids[i]);
		else if (r[i].path[0] == '/')
			m->build_id_len = file_build_id(r[i].path, ids[i]);
		if (r[i].event == MT_BUNDLE_MAP_MUNMAP)
			continue;
		if (vdso && r[i].bytes) {
			struct mt_bundle_file f = { .path = r[i].path, .build_id = ids[i],
						    .build_id_len = m->build_id_len };

			err = mt_bundle_write_file(w, &f, r[i].bytes, r[i].end - r[i].start);
		} else if (!r[i].path[0] && r[i].bytes) {
			err = write_anon_code(w, &r[i]);
		} else if (embed && r[i].path[0] == '/' && !seen_before(r, i)) {
			struct mt_bundle_file f = { .path = r[i].path, .build_id = ids[i],
						    .build_id_len = m->build_id_len };

			err = mt_bundle_embed_file(w, &f, r[i].path);
		}
	}
	if (!err)
		err = mt_bundle_write_maps(w, maps, n);
	free(r);
	free(maps);
	free(ids);
	return err;
}

static int write_threads(struct mt_bundle_writer *w, const struct ptg_run *run, uint64_t tsc)
{
	struct mt_bundle_thread *t = calloc(run->nthr, sizeof(*t));
	const char *comm = strrchr(run->exe, '/') ? strrchr(run->exe, '/') + 1 : run->exe;
	int err;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < run->nthr; i++)
		t[i] = (struct mt_bundle_thread){ .tsc = tsc, .pid = (uint32_t)run->pid,
						  .tid = (uint32_t)run->thr[i].tid, .comm = comm,
						  .cmdline = i ? "" : run->exe,
						  .cmdline_len = i ? 0 : strlen(run->exe) };
	err = mt_bundle_write_threads(w, t, run->nthr);
	free(t);
	return err;
}

static int write_switches(struct mt_bundle_writer *w, const struct ptg_run *run,
			  const struct ptg_gen *g)
{
	struct mt_bundle_switch_entry *e = calloc(g->nsw ? g->nsw : 1, sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < g->nsw; i++) {
		const struct ptg_switch *s = &g->sw[i];
		uint32_t pid = (uint32_t)run->pid;

		e[i] = (struct mt_bundle_switch_entry){
			.tsc = s->tsc, .cpu = s->cpu,
			.prev_pid = s->prev < 0 ? 0 : pid,
			.prev_tid = s->prev < 0 ? 0 : (uint32_t)run->thr[s->prev].tid,
			.next_pid = s->next < 0 ? 0 : pid,
			.next_tid = s->next < 0 ? 0 : (uint32_t)run->thr[s->next].tid,
			.flags = s->preempted ? MT_BUNDLE_SWITCH_PREEMPTED : 0,
		};
	}
	err = mt_bundle_write_switches(w, e, g->nsw);
	free(e);
	return err;
}

/* RTIT_CTL as the module would program it for this configuration. */
static uint64_t rtit_ctl(const struct ptg_pkt_cfg *c, bool kernel, bool user)
{
	uint64_t ctl = MT_RTIT_CTL_TRACEEN | (kernel ? MT_RTIT_CTL_OS : 0) |
		       (user ? MT_RTIT_CTL_USER : 0) | MT_RTIT_CTL_TOPA | MT_RTIT_CTL_TSCEN | MT_RTIT_CTL_BRANCHEN;
	unsigned psbfreq = 0;

	while ((2048u << psbfreq) < c->psb_period && psbfreq < 15)
		psbfreq++;
	if (c->mtc)
		ctl |= MT_RTIT_CTL_MTCEN | (uint64_t)c->mtc_freq << 14;
	if (!c->ret_compression)
		ctl |= MT_RTIT_CTL_DISRETC;
	if (c->cyc)
		ctl |= MT_RTIT_CTL_CYCEN;
	return ctl | (uint64_t)psbfreq << 24;
}

static int write_header_sections(struct mt_bundle_writer *w, const struct ptg_run *run,
				 const struct ptg_gen *g, bool kernel, bool user)
{
	const struct ptg_gen_cfg *c = g->cfg;
	uint64_t hz = (uint64_t)c->pkt.cbr * 100000000ull;
	struct mt_bundle_cpu_desc cpu = {
		.vendor = MT_BUNDLE_VENDOR_INTEL, .family = PTG_CPU_FAMILY,
		.model = PTG_CPU_MODEL, .stepping = PTG_CPU_STEPPING, .nr_cpus = c->ncpu,
		.cpuid_14_0 = ptg_cpuid_14_0, .cpuid_14_1 = ptg_cpuid_14_1,
		.cpuid_15 = { 1, c->pkt.art_ratio, (uint32_t)(hz / c->pkt.art_ratio), 0 },
		.max_nonturbo_ratio = c->pkt.cbr, .nominal_freq_hz = hz,
		.vendor_id = "GenuineIntel",
	};
	struct mt_bundle_pt_config_desc pc = {
		.flags = MT_BUNDLE_CFG_GENERATED, .rtit_ctl = rtit_ctl(&c->pkt, kernel, user),
		.ring_size = c->ring_size, .target_pid = (uint32_t)run->pid,
	};
	int err;

	if (!pc.ring_size)
		for (unsigned k = 0; k < c->ncpu; k++)
			if (g->cpu[k].pkt.len > pc.ring_size)
				pc.ring_size = g->cpu[k].pkt.len;
	err = mt_bundle_write_cpu(w, &cpu);
	if (!err)
		err = mt_bundle_write_pt_config(w, &pc);
	return err;
}

static int write_pt(struct mt_bundle_writer *w, const struct ptg_gen *g)
{
	int err = 0;

	for (unsigned k = 0; k < g->cfg->ncpu && !err; k++) {
		const struct ptg_cpu *cpu = &g->cpu[k];
		size_t ring = g->cfg->ring_size;
		struct mt_bundle_pt_desc d = {
			.cpu = k, .flags = cpu->wrapped ? MT_BUNDLE_PT_WRAPPED : 0,
			.stop_tsc = cpu->stop_tsc,
			.write_offset = ring ? cpu->pkt.len % ring : cpu->pkt.len,
		};

		if (ring && !cpu->wrapped)
			d.write_offset = cpu->pkt.len;
		err = mt_bundle_write_pt(w, &d, cpu->pkt.buf + cpu->ring_start,
					 cpu->pkt.len - cpu->ring_start);
	}
	return err;
}

static int write_trigger_clock(struct mt_bundle_writer *w, const struct ptg_run *run,
			       const struct ptg_gen *g, const struct ptg_bundle_opts *o)
{
	const struct ptg_trigger *tr = &g->trigger;
	uint64_t hz = (uint64_t)g->cfg->pkt.cbr * 100000000ull, end = 0;
	struct mt_bundle_trigger t = { .spec = o->trigger_spec };
	struct mt_bundle_clock_desc cd = { .tsc_hz = hz };
	struct mt_bundle_clock_entry a[2];
	int err;

	for (unsigned k = 0; k < g->cfg->ncpu; k++)
		end = g->cpu[k].stop_tsc > end ? g->cpu[k].stop_tsc : end;
	/* The generator freezes like the kfunc path: the trigger CPU at
	 * once, the others by interrupt. */
	t.d.reason = tr->hit ? MT_BUNDLE_REASON_GENERATOR : o->reason;
	t.d.freeze_path = tr->hit ? MT_BUNDLE_FREEZE_KFUNC : o->freeze_path;
	t.d.cpu = tr->hit ? tr->cpu : 0;
	t.d.pid = (uint32_t)run->pid;
	t.d.tid = tr->hit ? (uint32_t)run->thr[tr->thread].tid : (uint32_t)run->pid;
	t.d.tsc = tr->hit ? tr->tsc : end;
	t.d.ip = tr->hit ? tr->ip : 0;
	t.d.freeze_tsc = tr->hit ? g->cpu[tr->cpu].stop_tsc : end;
	err = mt_bundle_write_trigger(w, &t);
	/* Synthetic clocks: monotonic time is TSC / frequency. */
	for (int i = 0; i < 2; i++) {
		uint64_t tsc = i ? end : g->cfg->tsc0;
		uint64_t ns = (uint64_t)((unsigned __int128)tsc * 1000000000u / hz);

		a[i] = (struct mt_bundle_clock_entry){ tsc, ns, ns + 1700000000000000000ull, ns };
	}
	if (!err)
		err = mt_bundle_write_clock(w, &cd, a, 2);
	return err;
}

int ptg_bundle_write(const char *path, const struct ptg_run *run, const struct ptg_gen *g,
		     const struct ptg_bundle_opts *o)
{
	struct mt_bundle_writer *w;
	char msg[256];
	int err = mt_bundle_writer_create(&w, path, NULL, msg, sizeof(msg));

	if (err) {
		fprintf(stderr, "ptgen: %s\n", msg);
		return err;
	}
	err = write_header_sections(w, run, g, o->kernel_from != NULL,
				    user_segments(&run->image) > 0);
	if (!err)
		err = write_pt(w, g);
	if (!err)
		err = write_trigger_clock(w, run, g, o);
	if (!err)
		err = write_switches(w, run, g);
	if (!err && o->kernel_from)
		err = ptg_kwalk_copy_kernel(w, o->kernel_from);
	if (!err && user_segments(&run->image))
		err = write_maps(w, run, g->cfg->tsc0, o->embed_files);
	if (!err)
		err = write_threads(w, run, g->cfg->tsc0);
	if (!err)
		err = mt_bundle_writer_finish(w);
	if (err)
		fprintf(stderr, "ptgen: writing %s: %s\n", path, mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
	return err;
}
