// SPDX-License-Identifier: MIT
/* Bundle to perf.data; see perfdata_export.h and docs/perf-interop.md. */
#include "perfdata/perfdata_export.h"

#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_kcore.h"
#include "perfdata/perfdata_symfs.h"
#include "perfdata/perfdata_vmlinux.h"
#include "perfdata/perfdata_writer.h"
#include "util/errmsg.h"
#include "util/mt_array.h"
#include "util/regfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- time ---- */

uint64_t perfdata_tsc_to_ns(const struct perfdata_tsc_conv *c, uint64_t tsc)
{
	uint64_t mask = (1ULL << c->shift) - 1;

	return c->zero + (tsc >> c->shift) * c->mult + (((tsc & mask) * c->mult) >> c->shift);
}

/*
 * One line through the bundle's clock: its own perf-style conversion when it
 * has one, else the TSC rate (or the slope between the outer anchors)
 * through the first anchor's CLOCK_BOOTTIME, the clock mtrace's decoder uses.
 */
void perfdata_tsc_conv_from_bundle(struct mt_bundle_reader *r, struct perfdata_tsc_conv *c)
{
	const struct mt_bundle_clock_entry *a = NULL;
	struct mt_bundle_clock_desc d = { 0 };
	struct mt_bundle_cpu_desc cpu = { 0 };
	size_t n = 0;
	double ns_per_tick = 1.0;

	if (mt_bundle_clock(r, &d, &a, &n))
		n = 0;
	if (d.time_mult) {
		*c = (struct perfdata_tsc_conv){ d.time_shift, d.time_mult, d.time_zero };
		return;
	}
	if (!d.tsc_hz && !mt_bundle_get_cpu(r, &cpu)) {
		if (cpu.cpuid_15.eax && cpu.cpuid_15.ebx && cpu.cpuid_15.ecx)
			d.tsc_hz = (uint64_t)cpu.cpuid_15.ecx * cpu.cpuid_15.ebx / cpu.cpuid_15.eax;
		else
			d.tsc_hz = cpu.nominal_freq_hz;
	}
	if (d.tsc_hz)
		ns_per_tick = 1e9 / (double)d.tsc_hz;
	else if (n >= 2 && a[n - 1].tsc > a[0].tsc && a[n - 1].boottime_ns > a[0].boottime_ns)
		ns_per_tick = (double)(a[n - 1].boottime_ns - a[0].boottime_ns) /
			      (double)(a[n - 1].tsc - a[0].tsc);
	/* A damaged bundle's rate: no clock ticks slower than 1 Hz, and mult
	 * must fit 32 bits even with no shift. */
	if (ns_per_tick >= 1e9)
		ns_per_tick = 1e9;
	/* The largest shift that keeps mult within 32 bits, as the kernel does. */
	c->shift = 31;
	while (c->shift > 0 && ns_per_tick * (double)(1ULL << c->shift) >= 4294967295.0)
		c->shift--;
	c->mult = (uint32_t)(ns_per_tick * (double)(1ULL << c->shift) + 0.5);
	c->zero = 0;
	if (n)
		c->zero = a[0].boottime_ns - perfdata_tsc_to_ns(c, a[0].tsc);
}

/* ---- the export ---- */

struct exp {
	struct mt_bundle_reader *r;
	struct perfdata_writer *w;
	struct perfdata_tsc_conv tc;
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc cfg;
	uint64_t pt_id, sb_id;
	uint64_t t0;            /* earliest time: maps seen in a walk date from it */
	const struct mt_bundle_switch_entry *sw;
	size_t nsw;
	const char *symfs;
	const char *bundle;     /* never written over; may be NULL */
	const char *name;       /* what messages call the bundle */
	const char *dir;        /* with --kcore: the perf.data directory being built */
	struct perfdata_export_stats *st;
	char **written;         /* symfs names already written */
	size_t nwritten, written_cap;
	uint8_t *bids;          /* BUILD_ID feature entries */
	size_t bids_len, bids_cap;
	char err[512];
};

static uint64_t ns(const struct exp *x, uint64_t tsc)
{
	return perfdata_tsc_to_ns(&x->tc, tsc);
}

static struct perfdata_sample_id sid(const struct exp *x, uint32_t pid, uint32_t tid,
				     uint64_t tsc, uint32_t cpu, uint64_t id)
{
	return (struct perfdata_sample_id){ pid, tid, ns(x, tsc), cpu, 0, id };
}

static int wfail(struct exp *x, int e)
{
	snprintf(x->err, sizeof(x->err), "%s", perfdata_writer_errmsg(x->w));
	return e;
}

static int add_attrs(struct exp *x)
{
	uint64_t ctl = x->cfg.rtit_ctl;
	struct perf_event_attr pt = {
		.type = PERFDATA_EXPORT_PT_TYPE,
		.config = ctl & PERFDATA_PT_CONFIG_MASK,
		.sample_period = 1,
		.sample_type = PERFDATA_SAMPLE_TYPE,
		.disabled = 1,
		.exclude_kernel = !(ctl & MT_RTIT_CTL_OS),
		.exclude_user = !(ctl & MT_RTIT_CTL_USER),
		.exclude_hv = 1,
		.sample_id_all = 1,
	};
	struct perf_event_attr sb = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_period = 1,
		.sample_type = PERFDATA_SAMPLE_TYPE,
		.exclude_kernel = pt.exclude_kernel,
		.exclude_hv = 1,
		.mmap = 1,
		.comm = 1,
		.task = 1,
		.sample_id_all = 1,
		.mmap2 = 1,
		.comm_exec = 1,
		.context_switch = 1,
	};
	const char *ptname = pt.exclude_kernel ? "intel_pt//u" :
			     pt.exclude_user ? "intel_pt//k" : "intel_pt//";
	const char *sbname = pt.exclude_kernel ? "dummy:u" : "dummy";

	if (perfdata_writer_add_attr(x->w, &pt, ptname, &x->pt_id) ||
	    perfdata_writer_add_attr(x->w, &sb, sbname, &x->sb_id))
		return wfail(x, -EINVAL);
	return 0;
}

static int put_auxtrace_info(struct exp *x)
{
	struct {
		struct perfdata_auxtrace_info h;
		uint64_t priv[PERFDATA_PT_PRIV_MAX];
	} rec = { 0 };

	rec.h.header = (struct perf_event_header){ PERFDATA_REC_AUXTRACE_INFO, 0, sizeof(rec) };
	rec.h.type = PERFDATA_AUXTRACE_INTEL_PT;
	rec.priv[PERFDATA_PT_PMU_TYPE] = PERFDATA_EXPORT_PT_TYPE;
	rec.priv[PERFDATA_PT_TIME_SHIFT] = x->tc.shift;
	rec.priv[PERFDATA_PT_TIME_MULT] = x->tc.mult;
	rec.priv[PERFDATA_PT_TIME_ZERO] = x->tc.zero;
	rec.priv[PERFDATA_PT_CAP_USER_TIME_ZERO] = 1;
	rec.priv[PERFDATA_PT_TSC_BIT] = MT_RTIT_CTL_TSCEN;
	rec.priv[PERFDATA_PT_NORETCOMP_BIT] = MT_RTIT_CTL_DISRETC;
	rec.priv[PERFDATA_PT_HAVE_SCHED_SWITCH] = PERFDATA_PT_SWITCH_CPU_WIDE;
	rec.priv[PERFDATA_PT_SNAPSHOT_MODE] = 1;
	rec.priv[PERFDATA_PT_PER_CPU_MMAPS] = 1;
	rec.priv[PERFDATA_PT_MTC_BIT] = MT_RTIT_CTL_MTCEN;
	rec.priv[PERFDATA_PT_MTC_FREQ_BITS] = 0xfULL << 14;
	rec.priv[PERFDATA_PT_TSC_CTC_N] = x->cpu.cpuid_15.ebx;
	rec.priv[PERFDATA_PT_TSC_CTC_D] = x->cpu.cpuid_15.eax;
	rec.priv[PERFDATA_PT_CYC_BIT] = MT_RTIT_CTL_CYCEN;
	rec.priv[PERFDATA_PT_MAX_NONTURBO_RATIO] = x->cpu.max_nonturbo_ratio;
	rec.priv[PERFDATA_PT_FILTER_STR_LEN] = 0;
	if (perfdata_writer_record(x->w, &rec.h.header))
		return wfail(x, -EIO);

	struct perfdata_time_conv tc = {
		.header = { PERFDATA_REC_TIME_CONV, 0, sizeof(tc) },
		.time_shift = x->tc.shift,
		.time_mult = x->tc.mult,
		.time_zero = x->tc.zero,
		.time_mask = (1ULL << x->tc.shift) - 1,
		.cap_user_time_zero = 1,
	};
	if (perfdata_writer_record(x->w, &tc.header))
		return wfail(x, -EIO);
	return 0;
}

/* Whether writing PATH would replace the bundle; then X's error says so. */
static bool replaces_bundle(struct exp *x, const char *path)
{
	if (!x->bundle || !mt_same_file(path, x->bundle))
		return false;
	snprintf(x->err, sizeof(x->err), "%.400s is the bundle being exported: choose another --symfs",
		 path);
	return true;
}

/*
 * perf checks --vmlinux FILE as given, loads symbols from it, but reads the
 * code from --symfs joined with FILE. With absolute paths both work when
 * the file is also at SYMFS + FILE: a link there to the real one.
 */
static int vmlinux_for_perf(struct exp *x, const char *path)
{
	char *abs = realpath(path, NULL), *nested = NULL, *slash;
	int e = 0;

	if (!abs || asprintf(&nested, "%s%s", x->st->symfs, abs) < 0) {
		nested = NULL;
		e = -ENOMEM;
		snprintf(x->err, sizeof(x->err), "%.400s: %s", path, strerror(errno));
		goto out;
	}
	if (replaces_bundle(x, nested)) {
		e = -EEXIST;
		goto out;
	}
	slash = strrchr(nested, '/');
	*slash = 0;
	e = perfdata_mkdirs(nested, x->err, sizeof(x->err));
	*slash = '/';
	unlink(nested);
	if (!e && symlink(abs, nested)) {
		e = -errno;
		snprintf(x->err, sizeof(x->err), "cannot create %.400s: %s", nested, strerror(errno));
	}
	snprintf(x->st->vmlinux, sizeof(x->st->vmlinux), "%s", abs);
out:
	free(abs);
	free(nested);
	return e;
}

/*
 * The kernel map record perf creates its kernel maps from: "_text" (or
 * "_stext") at pgoff is the reference symbol it relocates kernel symbols
 * with, and checks a kcore_dir's kallsyms against.
 */
static int put_kernel_map(struct exp *x, uint64_t start, uint64_t len, const char *ref,
			  uint64_t ref_addr)
{
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char name[32];
	} rec = { UINT32_MAX, 0, start, len, ref_addr, "" };
	struct perfdata_sample_id s = sid(x, UINT32_MAX, 0, 0, 0, x->sb_id);

	snprintf(rec.name, sizeof(rec.name), "[kernel.kallsyms]%s", ref);
	s.time = x->t0;
	if (perfdata_writer_sideband(x->w, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &rec,
				     offsetof(typeof(rec), name) + strlen(rec.name) + 1, &s))
		return wfail(x, -EIO);
	return 0;
}

static void no_kernel_text(struct exp *x)
{
	if (!x->st->warning[0])
		snprintf(x->st->warning, sizeof(x->st->warning),
			 "the trace has kernel code but the bundle no kernel text (record --kernel)");
}

/* Kernel tracing, --kcore: kernel, module and BPF text in DIR/kcore_dir. */
static int put_kcore_dir(struct exp *x)
{
	struct perfdata_kcore_info ki;
	char path[4200];
	int e;

	snprintf(path, sizeof(path), "%s/" PERFDATA_KCORE_DIR, x->dir);
	e = perfdata_write_kcore_dir(x->r, path, &ki, x->err, sizeof(x->err));
	if (e <= 0) {
		if (!e)
			no_kernel_text(x);
		return e;
	}
	if ((e = put_kernel_map(x, ki.core_addr, ki.core_size, ki.ref_sym, ki.ref_addr)))
		return e;
	x->st->kcore = true;
	x->st->kernel_ranges = ki.ranges;
	x->st->modules = ki.modules;
	x->st->bpf_ranges = ki.bpf_ranges;
	return 0;
}

/* Kernel tracing: the core kernel text as a vmlinux for perf, and its map. */
static int put_kernel(struct exp *x)
{
	struct perfdata_kernel_text kt;
	char path[4200];
	int e;

	if (!(x->cfg.rtit_ctl & MT_RTIT_CTL_OS))
		return 0;
	if (x->dir)
		return put_kcore_dir(x);
	snprintf(path, sizeof(path), "%s/%s", x->symfs, PERFDATA_VMLINUX_NAME);
	if (replaces_bundle(x, path))
		return -EEXIST;
	e = perfdata_write_vmlinux(x->r, path, &kt, x->err, sizeof(x->err));
	if (e <= 0) {
		if (!e)
			no_kernel_text(x);
		return e;
	}
	if ((e = vmlinux_for_perf(x, path)) || (e = put_kernel_map(x, kt.addr, kt.size, "_text",
								    kt.addr)))
		return e;
	if (mt_bundle_ktext_count(x->r) > 1 && !x->st->warning[0])
		snprintf(x->st->warning, sizeof(x->st->warning),
			 "module and BPF text is not exported with --vmlinux: export with --kcore");
	x->st->kernel = true;
	return 0;
}

static int finished_round(struct exp *x)
{
	struct perf_event_header h = { PERFDATA_REC_FINISHED_ROUND, 0, sizeof(h) };

	return perfdata_writer_record(x->w, &h) ? wfail(x, -EIO) : 0;
}

/* The CPU a thread is first seen on (records about it need one). */
static uint32_t cpu_of(const struct mt_bundle_switch_entry *sw, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (sw[i].next_tid == tid)
			return sw[i].cpu;
	return 0;
}

static int put_comms(struct exp *x)
{
	const struct mt_bundle_thread *t;
	size_t n = mt_bundle_threads(x->r, &t);

	for (size_t i = 0; i < n; i++) {
		struct {
			uint32_t pid, tid;
			char comm[24];
		} body = { t[i].pid, t[i].tid, { 0 } };
		struct perfdata_sample_id s = sid(x, t[i].pid, t[i].tid, 0, cpu_of(x->sw, x->nsw, t[i].tid),
						  x->sb_id);

		s.time = x->t0;
		snprintf(body.comm, 16, "%s", t[i].comm); /* TASK_COMM_LEN */
		if (perfdata_writer_sideband(x->w, PERF_RECORD_COMM,
					     t[i].pid == t[i].tid ? PERF_RECORD_MISC_COMM_EXEC : 0,
					     &body, 8 + strlen(body.comm) + 1, &s))
			return wfail(x, -EIO);
		x->st->threads++;
	}
	return 0;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

static int add_build_id(struct exp *x, const char *name, const uint8_t *bid, size_t len)
{
	size_t nlen = strlen(name) + 1;
	size_t pad = (nlen + PERFDATA_NAME_ALIGN - 1) & ~(size_t)(PERFDATA_NAME_ALIGN - 1);
	struct perfdata_build_id e = { 0 };
	uint8_t *v;

	/* One entry per file name. */
	for (size_t at = 0; at < x->bids_len;) {
		struct perfdata_build_id *o = (void *)(x->bids + at);

		if (!strcmp((char *)(o + 1), name))
			return 0;
		at += o->header.size;
	}
	if (MT_ARRAY_RESERVE(x->bids, x->bids_cap, x->bids_len, sizeof(e) + pad)) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -ENOMEM;
	}
	v = x->bids;
	e.header.misc = PERF_RECORD_MISC_USER | PERFDATA_MISC_BUILD_ID_SIZE;
	e.header.size = (uint16_t)(sizeof(e) + pad);
	e.pid = -1;
	e.size = (uint8_t)(len > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX : len);
	memcpy(e.data, bid, e.size);
	memcpy(v + x->bids_len, &e, sizeof(e));
	memset(v + x->bids_len + sizeof(e), 0, pad);
	memcpy(v + x->bids_len + sizeof(e), name, nlen);
	x->bids_len += sizeof(e) + pad;
	return 0;
}

/*
 * The name perf's map record gives a mapping, and its code under symfs:
 * the traced vDSO gets a file of its own (perf would otherwise use the
 * decoding machine's vDSO for "[vdso]").
 */
static int put_binary(struct exp *x, const struct mt_bundle_map *m, char *name, size_t len)
{
	char warn[512] = "", bidhex[2 * PERFDATA_BUILD_ID_MAX + 1] = "";
	int e;

	snprintf(name, len, "%s", m->path);
	if (!strcmp(m->path, "[vdso]")) {
		if (!m->build_id_len || mt_bundle_file_find(x->r, m->build_id, m->build_id_len,
							    m->path) < 0)
			return 0;
		hex(bidhex, m->build_id,
		    m->build_id_len > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX : m->build_id_len);
		snprintf(name, len, "%s%s.so", PERFDATA_EXPORT_VDSO_DIR, bidhex);
	} else if (m->path[0] != '/') {
		return 0;
	}
	for (size_t i = 0; i < x->nwritten; i++)
		if (!strcmp(x->written[i], name))
			return 0;
	if (MT_ARRAY_RESERVE(x->written, x->written_cap, x->nwritten, 1) ||
	    !(x->written[x->nwritten] = strdup(name))) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -ENOMEM;
	}
	x->nwritten++;
	e = perfdata_symfs_put(x->r, x->symfs, m->path, m->build_id, m->build_id_len, name,
			       x->bundle, warn, sizeof(warn), x->err, sizeof(x->err));
	if (e < 0)
		return e;
	if (e == 0 && !x->st->warning[0])
		snprintf(x->st->warning, sizeof(x->st->warning), "%s", warn);
	x->st->binaries += e;
	return 0;
}

static int put_maps(struct exp *x)
{
	const struct mt_bundle_map *m;
	size_t n = mt_bundle_maps(x->r, &m);
	int e = 0;

	for (size_t i = 0; i < n && !e; i++) {
		struct {
			struct perfdata_mmap2 h;
			char name[4096];
		} rec = { 0 };
		struct perfdata_sample_id s;
		uint16_t misc = PERF_RECORD_MISC_USER;
		size_t nl;

		if (!(m[i].prot & MT_BUNDLE_PROT_EXEC) || m[i].event == MT_BUNDLE_MAP_MUNMAP ||
		    !m[i].path[0])
			continue;
		if ((e = put_binary(x, &m[i], rec.name, sizeof(rec.name))))
			break;
		rec.h.pid = m[i].pid;
		rec.h.tid = m[i].pid;
		rec.h.addr = m[i].start;
		rec.h.len = m[i].end - m[i].start;
		rec.h.pgoff = m[i].file_offset;
		rec.h.prot = 0x4 | (m[i].prot & MT_BUNDLE_PROT_READ ? 0x1 : 0) |
			     (m[i].prot & MT_BUNDLE_PROT_WRITE ? 0x2 : 0);
		rec.h.flags = 0x02; /* MAP_PRIVATE */

		if (m[i].build_id_len) {
			misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
			rec.h.build_id_size = (uint8_t)(m[i].build_id_len > PERFDATA_BUILD_ID_MAX ?
							PERFDATA_BUILD_ID_MAX : m[i].build_id_len);
			memcpy(rec.h.build_id, m[i].build_id, rec.h.build_id_size);
			if ((e = add_build_id(x, rec.name, rec.h.build_id, rec.h.build_id_size)))
				break;
		}
		s = sid(x, m[i].pid, m[i].pid, m[i].tsc, cpu_of(x->sw, x->nsw, m[i].pid), x->sb_id);
		if (m[i].event == MT_BUNDLE_MAP_PRESENT)
			s.time = x->t0;
		nl = strlen(rec.name) + 1;
		if (perfdata_writer_sideband(x->w, PERF_RECORD_MMAP2, misc,
					     (const uint8_t *)&rec + sizeof(rec.h.header),
					     sizeof(rec.h) - sizeof(rec.h.header) + nl, &s)) {
			e = wfail(x, -EIO);
			break;
		}
		x->st->maps++;
	}
	return e;
}

/*
 * Per CPU, in time order: ITRACE_START naming the task that runs when the
 * trace begins, then each switch of the sideband as perf's CPU-wide pair:
 * out (the outgoing task; next_prev = the incoming one) and in.
 */
static int put_switch(struct exp *x, const struct mt_bundle_switch_entry *e)
{
	struct perfdata_sample_id out = sid(x, e->prev_pid, e->prev_tid, e->tsc, e->cpu, x->sb_id);
	struct perfdata_sample_id in = sid(x, e->next_pid, e->next_tid, e->tsc, e->cpu, x->sb_id);
	uint32_t to_next[2] = { e->next_pid, e->next_tid };
	uint32_t to_prev[2] = { e->prev_pid, e->prev_tid };
	uint16_t misc = PERF_RECORD_MISC_SWITCH_OUT;

	if (e->flags & MT_BUNDLE_SWITCH_PREEMPTED)
		misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
	if (perfdata_writer_sideband(x->w, PERF_RECORD_SWITCH_CPU_WIDE, misc, to_next,
				     sizeof(to_next), &out) ||
	    perfdata_writer_sideband(x->w, PERF_RECORD_SWITCH_CPU_WIDE, 0, to_prev,
				     sizeof(to_prev), &in))
		return wfail(x, -EIO);
	x->st->switches++;
	return 0;
}

static int cmp_switch(const void *a, const void *b)
{
	const struct mt_bundle_switch_entry *p = a, *q = b;

	if (p->tsc != q->tsc)
		return p->tsc < q->tsc ? -1 : 1;
	return p->cpu < q->cpu ? -1 : p->cpu > q->cpu;
}

static int put_itrace_starts(struct exp *x, const struct mt_bundle_switch_entry *sw, size_t n)
{
	struct mt_bundle_trigger t = { 0 };
	size_t ncpu = mt_bundle_pt_count(x->r);

	mt_bundle_get_trigger(x->r, &t);
	for (size_t i = 0; i < ncpu; i++) {
		struct mt_bundle_pt_desc pd;
		uint32_t pid = x->cfg.target_pid, tid = x->cfg.target_pid;
		size_t k;

		if (mt_bundle_pt_desc(x->r, i, &pd))
			continue;
		for (k = 0; k < n && sw[k].cpu != pd.cpu; k++)
			;
		if (k < n) {
			/* The first switch on this CPU says who ran before it. */
			pid = sw[k].prev_pid, tid = sw[k].prev_tid;
			if (!tid)
				continue; /* idle: the switch-in names the first task */
		} else if (t.d.size && t.d.cpu == pd.cpu && t.d.tid) {
			pid = t.d.pid, tid = t.d.tid;
		}
		uint32_t body[2] = { pid, tid };
		struct perfdata_sample_id s = sid(x, pid, tid, 0, pd.cpu, x->pt_id);

		s.time = x->t0;
		if (perfdata_writer_sideband(x->w, PERF_RECORD_ITRACE_START, 0, body, sizeof(body),
					     &s))
			return wfail(x, -EIO);
	}
	return 0;
}

static int put_switches(struct exp *x)
{
	size_t n = x->nsw;
	struct mt_bundle_switch_entry *v = malloc((n ? n : 1) * sizeof(*v));
	int e = 0;

	if (!v) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -ENOMEM;
	}
	if (n)
		memcpy(v, x->sw, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_switch);
	e = put_itrace_starts(x, v, n);
	for (size_t i = 0; i < n && !e; i++)
		e = put_switch(x, &v[i]);
	free(v);
	return e;
}

static int put_pt(struct exp *x)
{
	size_t n = mt_bundle_pt_count(x->r);
	uint64_t aux_off = 0;

	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_pt_desc pd;
		const uint8_t *data;
		size_t len;

		if (mt_bundle_pt_desc(x->r, i, &pd) || mt_bundle_pt_data(x->r, i, &data, &len))
			return mt_errmsg_in(x->err, sizeof(x->err), EBADMSG, x->name, "PT data %zu: %s",
					    i, mt_bundle_reader_errmsg(x->r));
		struct perfdata_auxtrace a = {
			.header = { PERFDATA_REC_AUXTRACE, 0, sizeof(a) },
			.size = len,
			.offset = aux_off,
			/* perf takes a TSC here and needs it non-zero */
			.reference = pd.stop_tsc ? pd.stop_tsc : 1,
			.idx = (uint32_t)i,
			.tid = UINT32_MAX,
			.cpu = pd.cpu,
		};
		if (perfdata_writer_auxtrace(x->w, &a, data))
			return wfail(x, -EIO);
		mt_bundle_pt_release(x->r, i);
		x->st->cpus++;
		x->st->pt_bytes += len;
	}
	return 0;
}

static int put_features(struct exp *x)
{
	char cpuid[96];
	uint32_t nr[2] = { x->cpu.nr_cpus, x->cpu.nr_cpus };
	const char *vendor = x->cpu.vendor_id[0] ? x->cpu.vendor_id : "GenuineIntel";

	/* perf's x86 cpuid string: VENDOR,FAMILY,MODEL,STEPPING (drives its errata). */
	snprintf(cpuid, sizeof(cpuid), "%.16s,%u,%u,%u", vendor, x->cpu.family, x->cpu.model,
		 x->cpu.stepping);
	if (!nr[0])
		nr[0] = nr[1] = (uint32_t)mt_bundle_pt_count(x->r);
	if (perfdata_writer_feature_string(x->w, PERFDATA_FEAT_ARCH, "x86_64") ||
	    perfdata_writer_feature_string(x->w, PERFDATA_FEAT_CPUID, cpuid) ||
	    perfdata_writer_feature(x->w, PERFDATA_FEAT_NRCPUS, nr, sizeof(nr)) ||
	    (x->bids_len &&
	     perfdata_writer_feature(x->w, PERFDATA_FEAT_BUILD_ID, x->bids, x->bids_len)))
		return wfail(x, -EIO);
	return 0;
}

/* The earliest time of the sideband: what maps seen in a walk date from. */
static uint64_t first_tsc(const struct exp *x)
{
	struct mt_bundle_reader *r = x->r;
	const struct mt_bundle_map *m;
	const struct mt_bundle_thread *t;
	size_t n;
	uint64_t lo = UINT64_MAX;

	for (size_t i = 0; i < x->nsw; i++)
		lo = x->sw[i].tsc < lo ? x->sw[i].tsc : lo;
	n = mt_bundle_maps(r, &m);
	for (size_t i = 0; i < n; i++)
		lo = m[i].tsc < lo ? m[i].tsc : lo;
	n = mt_bundle_threads(r, &t);
	for (size_t i = 0; i < n; i++)
		lo = t[i].tsc < lo ? t[i].tsc : lo;
	return lo == UINT64_MAX ? 0 : lo;
}

/* Whether DIR is the file system's root (also through links or ".."). */
static bool is_root_dir(const char *dir)
{
	char *real = realpath(dir, NULL);
	bool root = real && !strcmp(real, "/");

	free(real);
	return root;
}

int perfdata_export_check_out(const char *out, bool kcore, char *err, size_t errlen)
{
	struct stat os;

	if (kcore)
		return perfdata_dir_check(out, err, errlen);
	/* perf reads a perf.data by seeking: only a file can hold one. */
	if (!stat(out, &os) && !S_ISREG(os.st_mode))
		return mt_errmsg(err, errlen, EINVAL,
				 "%s is not a regular file: a perf.data goes to a new file or replaces one",
				 out);
	return 0;
}

int perfdata_export(struct mt_bundle_reader *r, const char *out,
		    const struct perfdata_export_opts *opts, struct perfdata_export_stats *st,
		    char *err, size_t errlen)
{
	struct exp x = { .r = r, .st = st, .name = opts ? opts->name : NULL };
	struct perfdata_dir dir = { .tmp = "" };
	char data[PATH_MAX + 8], made[PATH_MAX] = "";
	const char *lacks;
	int e;

	memset(st, 0, sizeof(*st));
	if ((e = perfdata_export_check_out(out, opts && opts->kcore, err, errlen)))
		return e;
	/* The bundle's problems name it (opts->name). */
	if ((lacks = mt_bundle_missing_section(r)))
		return mt_errmsg_in(err, errlen, ENOENT, x.name,
				    "the bundle has no %s section: it cannot be exported", lacks);
	if ((e = mt_bundle_switches(r, &x.sw, &x.nsw)))
		return mt_errmsg_in(err, errlen, -e, x.name, "%s", mt_bundle_reader_errmsg(r));
	if (!mt_bundle_pt_count(r))
		return mt_errmsg_in(err, errlen, ENODATA, x.name,
				    "the bundle holds no PT data: there is no trace to export");
	mt_bundle_get_cpu(r, &x.cpu);
	mt_bundle_get_pt_config(r, &x.cfg);
	if (opts && opts->symfs)
		snprintf(st->symfs, sizeof(st->symfs), "%s", opts->symfs);
	else
		snprintf(st->symfs, sizeof(st->symfs), "%s.symfs", out);
	x.symfs = st->symfs;
	x.bundle = opts ? opts->bundle : NULL;
	if (is_root_dir(x.symfs)) {
		snprintf(err, errlen, "--symfs %s would put the bundle's binaries over this machine's own, at their recorded paths: name a directory of their own",
			 x.symfs);
		return -EINVAL;
	}
	perfdata_tsc_conv_from_bundle(r, &x.tc);
	x.t0 = ns(&x, first_tsc(&x));
	snprintf(data, sizeof(data), "%s", out);
	if (opts && opts->kcore) {
		if ((e = perfdata_dir_begin(&dir, out, err, errlen)))
			return e;
		x.dir = dir.tmp;
		snprintf(data, sizeof(data), "%s/data", dir.tmp);
	}
	/* The perf.data's temporary first: a bad OUT fails before the symfs
	 * exists, and a symfs this run made goes again if the run fails. */
	if ((e = perfdata_writer_create(&x.w, data, err, errlen)) ||
	    (e = perfdata_mkdirs_created(x.symfs, made, sizeof(made), err, errlen))) {
		perfdata_writer_free(x.w);
		perfdata_dir_abort(&dir);
		perfdata_remove_tree(made);
		return e;
	}
	if ((x.cfg.rtit_ctl & MT_RTIT_CTL_OS) && !x.dir) {
		/* perf's kernel code lookup wants absolute paths (vmlinux_for_perf). */
		char *abs = realpath(x.symfs, NULL);

		if (abs)
			snprintf(st->symfs, sizeof(st->symfs), "%s", abs);
		free(abs);
	}
	if (!(e = add_attrs(&x)) && !(e = put_auxtrace_info(&x)) && !(e = put_kernel(&x)) &&
	    !(e = put_comms(&x)) &&
	    !(e = put_maps(&x)) && !(e = finished_round(&x)) && !(e = put_switches(&x)) &&
	    !(e = finished_round(&x)) && !(e = put_pt(&x)) && !(e = finished_round(&x)) &&
	    !(e = put_features(&x)) && (e = perfdata_writer_finish(x.w)))
		e = wfail(&x, e);
	perfdata_writer_free(x.w);
	if (!e && x.dir)
		e = perfdata_dir_commit(&dir, x.err, sizeof(x.err));
	else
		perfdata_dir_abort(&dir);
	if (e) {
		snprintf(err, errlen, "%s", x.err);
		perfdata_remove_tree(made);
	}
	for (size_t i = 0; i < x.nwritten; i++)
		free(x.written[i]);
	free(x.written);
	free(x.bids);
	return e;
}
