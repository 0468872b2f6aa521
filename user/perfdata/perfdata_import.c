// SPDX-License-Identifier: MIT
/* perf.data to bundle; see perfdata_import.h and docs/perf-interop.md. */
#include "perfdata/perfdata_import.h"

#include "bundle/bundle.h"
#include "files/outfile.h"
#include "util/errmsg.h"
#include "util/mt_array.h"
#include "util/regfile.h"
#include "util/util.h"
#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_export.h"
#include "perfdata/perfdata_kernel_src.h"
#include "perfdata/perfdata_symfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Far beyond real recordings; a hostile file cannot make more. */
#define MAX_STREAMS 4096

struct aux_piece {
	const uint8_t *data;
	uint64_t len, offset, reference;
};

/* The PT of one CPU (per-CPU buffers) or one thread (per-thread buffers). */
struct stream {
	uint32_t cpu, tid;
	struct aux_piece *p;
	size_t n, cap;
};

struct map {
	struct mt_bundle_map m;
	char *path;
	uint8_t bid[PERFDATA_BUILD_ID_MAX];
};

struct imp {
	struct perfdata_file *f;
	const struct perfdata_import_opts *opts;
	struct perfdata_import_stats *st;
	const struct perfdata_attr *pt_attr;
	uint64_t priv[PERFDATA_PT_PRIV_MAX];
	size_t npriv;
	struct perfdata_tsc_conv tc;
	char cpuid[64];
	uint32_t nr_cpus;
	struct stream *s;
	size_t ns, scap;
	struct mt_bundle_switch_entry *sw;
	size_t nsw, swcap;
	struct map *maps;
	size_t nmaps, mapcap;
	struct mt_bundle_thread *th;
	size_t nth, thcap;
	uint64_t first_tsc, last_tsc;
	struct perfdata_kernel_map km;
	char kdir[PATH_MAX];            /* the kcore_dir to copy kernel code from */
	char err[1024];
	const char *in;		/* the perf.data's name, for its problems */
	const char *out;	/* the bundle's name, for write errors */
};

/* A problem of the perf.data: the message names it. */
static int fail(struct imp *x, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mt_verrmsg_in(x->err, sizeof(x->err), x->in, fmt, ap);
	va_end(ap);
	return e;
}

/* The bundle could not be written: the message names it, not the perf.data. */
static int write_fail(struct imp *x, int e, const char *why)
{
	snprintf(x->err, sizeof(x->err), "writing %s: %s", x->out, why);
	return e;
}

static void warn(struct imp *x, const char *fmt, ...)
{
	va_list ap;

	if (x->st->warning[0])
		return;
	va_start(ap, fmt);
	vsnprintf(x->st->warning, sizeof(x->st->warning), fmt, ap);
	va_end(ap);
}

/* Room for one more element in *V (N used, *CAP allocated). */
/* Room for one more element of ARR (N in use, capacity CAP), or the import fails. */
#define GROW(x, arr, n, cap) \
	(MT_ARRAY_RESERVE(arr, cap, n, 1) ? fail(x, -ENOMEM, "out of memory") : 0)

bool perfdata_is_perf_data(const char *path)
{
	char magic[8], data[PATH_MAX + 8];
	bool yes;
	int fd;

	perfdata_data_path(path, data, sizeof(data));
	/* A FIFO is a bundle stream, never a perf.data; nothing but a regular
	 * file is opened to tell. */
	fd = mt_open_regular(data, NULL);
	if (fd < 0)
		return false;
	yes = read(fd, magic, sizeof(magic)) == sizeof(magic) && !memcmp(magic, PERFDATA_MAGIC, 8);
	close(fd);
	return yes;
}

/* The TSC rate perf's conversion SHIFT, MULT stands for, 2^SHIFT * 1e9 /
 * MULT Hz rounded, in 128 bits (SHIFT <= 63); 0 without a conversion. */
static unsigned __int128 conv_hz(uint64_t shift, uint64_t mult)
{
	return mult ? (((unsigned __int128)1000000000 << shift) + mult / 2) / mult : 0;
}

/* Whether SHIFT, MULT can be a clock's conversion: a 64-bit value's
 * shift, a 32-bit multiplier, and a TSC rate that fits 64 bits (a file
 * may claim one far beyond, which no conversion to an integer takes). */
static int conv_ok(uint64_t shift, uint64_t mult)
{
	return shift <= 63 && mult <= UINT32_MAX && conv_hz(shift, mult) <= UINT64_MAX;
}

/* perf time to TSC, the inverse of perfdata_tsc_to_ns (perf's intel_pt_ns_to_ticks). */
static uint64_t to_tsc(const struct imp *x, uint64_t ns)
{
	uint64_t t, quot, rem;

	if (!x->tc.mult || ns < x->tc.zero)
		return 0;
	t = ns - x->tc.zero;
	quot = t / x->tc.mult;
	rem = t % x->tc.mult;
	return (quot << x->tc.shift) + (rem << x->tc.shift) / x->tc.mult;
}

/* ---- records ---- */

static int on_auxtrace_info(struct imp *x, const struct perfdata_rec *r)
{
	struct perfdata_auxtrace_info h;
	size_t n;

	if (r->body_len + sizeof(r->h) < sizeof(h))
		return fail(x, -EBADMSG, "AUXTRACE_INFO at offset %" PRIu64 " too short", r->offset);
	memcpy(&h, (const uint8_t *)r->body - sizeof(r->h), sizeof(h));
	if (h.type != PERFDATA_AUXTRACE_INTEL_PT)
		return fail(x, -EPROTONOSUPPORT, "the recording's AUX trace is of type %u, not Intel PT",
			    h.type);
	n = (r->body_len + sizeof(r->h) - sizeof(h)) / 8;
	if (n < PERFDATA_PT_PRIV_MIN)
		return fail(x, -EBADMSG, "Intel PT AUXTRACE_INFO at offset %" PRIu64
			    " has %zu of the %d fields perf needs", r->offset, n, PERFDATA_PT_PRIV_MIN);
	x->npriv = n < PERFDATA_PT_PRIV_MAX ? n : PERFDATA_PT_PRIV_MAX;
	memcpy(x->priv, (const uint8_t *)r->body - sizeof(r->h) + sizeof(h), x->npriv * 8);
	if (!conv_ok(x->priv[PERFDATA_PT_TIME_SHIFT], x->priv[PERFDATA_PT_TIME_MULT]))
		return fail(x, -EBADMSG, "AUXTRACE_INFO at offset %" PRIu64 ": time shift %" PRIu64
			    " and mult %" PRIu64 " are not a TSC conversion", r->offset,
			    x->priv[PERFDATA_PT_TIME_SHIFT], x->priv[PERFDATA_PT_TIME_MULT]);
	if (x->priv[PERFDATA_PT_TIME_MULT])
		x->tc = (struct perfdata_tsc_conv){ (uint32_t)x->priv[PERFDATA_PT_TIME_SHIFT],
						    (uint32_t)x->priv[PERFDATA_PT_TIME_MULT],
						    x->priv[PERFDATA_PT_TIME_ZERO] };
	x->st->snapshot = x->priv[PERFDATA_PT_SNAPSHOT_MODE] != 0;
	return 0;
}

static struct stream *stream_for(struct imp *x, uint32_t cpu, uint32_t tid)
{
	for (size_t i = 0; i < x->ns; i++)
		if (x->s[i].cpu == cpu && x->s[i].tid == tid)
			return &x->s[i];
	if (x->ns == MAX_STREAMS) {
		fail(x, -EFBIG, "more than %d AUX buffers", MAX_STREAMS);
		return NULL;
	}
	if (GROW(x, x->s, x->ns, x->scap))
		return NULL;
	x->s[x->ns] = (struct stream){ .cpu = cpu, .tid = tid };
	return &x->s[x->ns++];
}

static int on_auxtrace(struct imp *x, const struct perfdata_rec *r)
{
	struct perfdata_auxtrace a;
	struct stream *s;

	memcpy(&a, (const uint8_t *)r->body - sizeof(r->h), sizeof(a));
	if (!r->aux_len)
		return 0;
	/* Per-CPU buffers name the CPU; per-thread ones (cpu -1) the thread. */
	if (a.cpu == UINT32_MAX)
		x->st->per_thread = true;
	s = stream_for(x, a.cpu, a.cpu == UINT32_MAX ? a.tid : UINT32_MAX);
	if (!s || GROW(x, s->p, s->n, s->cap))
		return -ENOMEM;
	s->p[s->n++] = (struct aux_piece){ r->aux, r->aux_len, a.offset, a.reference };
	return 0;
}

static uint64_t rec_tsc(struct imp *x, const struct perfdata_rec *r)
{
	uint64_t t = r->has_sid ? to_tsc(x, r->sid.time) : 0;

	if (t && (!x->first_tsc || t < x->first_tsc))
		x->first_tsc = t;
	if (t > x->last_tsc)
		x->last_tsc = t;
	return t;
}

static int add_switch(struct imp *x, uint64_t tsc, uint32_t cpu, uint32_t ppid, uint32_t ptid,
		      uint32_t npid, uint32_t ntid, uint32_t flags)
{
	if (GROW(x, x->sw, x->nsw, x->swcap))
		return -ENOMEM;
	x->sw[x->nsw++] = (struct mt_bundle_switch_entry){ tsc, cpu, ppid, ptid, npid, ntid, flags };
	return 0;
}

/* The last task switched in on CPU, to pair per-thread switch records. */
static const struct mt_bundle_switch_entry *last_on(const struct imp *x, uint32_t cpu)
{
	for (size_t i = x->nsw; i-- > 0;)
		if (x->sw[i].cpu == cpu)
			return &x->sw[i];
	return NULL;
}

static int on_switch(struct imp *x, const struct perfdata_rec *r)
{
	uint32_t np[2] = { 0, 0 };
	uint64_t tsc = rec_tsc(x, r);
	const struct mt_bundle_switch_entry *prev;

	if (!r->has_sid || r->sid.cpu == UINT32_MAX)
		return 0;
	if (r->h.misc & PERF_RECORD_MISC_SWITCH_OUT)
		return 0; /* the switch-in that follows says the same, from the incoming side */
	if (r->h.type == PERF_RECORD_SWITCH_CPU_WIDE) {
		if (r->body_len < sizeof(np))
			return fail(x, -EBADMSG, "switch record at offset %" PRIu64 " too short",
				    r->offset);
		memcpy(np, r->body, sizeof(np));
	} else if ((prev = last_on(x, r->sid.cpu))) {
		np[0] = prev->next_pid, np[1] = prev->next_tid;
	}
	x->st->switches++;
	return add_switch(x, tsc, r->sid.cpu, np[0], np[1], r->sid.pid, r->sid.tid, 0);
}

static int on_itrace_start(struct imp *x, const struct perfdata_rec *r)
{
	uint32_t pt[2];

	if (!r->has_sid || r->sid.cpu == UINT32_MAX || r->body_len < sizeof(pt))
		return 0;
	memcpy(pt, r->body, sizeof(pt));
	if (last_on(x, r->sid.cpu))
		return 0;
	return add_switch(x, rec_tsc(x, r), r->sid.cpu, 0, 0, pt[0], pt[1], 0);
}

static int on_comm(struct imp *x, const struct perfdata_rec *r)
{
	uint32_t pt[2];
	size_t n;

	if (r->body_len < sizeof(pt) + 1)
		return fail(x, -EBADMSG, "COMM record at offset %" PRIu64 " too short", r->offset);
	memcpy(pt, r->body, sizeof(pt));
	n = strnlen((const char *)r->body + 8, r->body_len - 8);
	if (GROW(x, x->th, x->nth, x->thcap))
		return -ENOMEM;
	char *comm = strndup((const char *)r->body + 8, n);

	if (!comm)
		return fail(x, -ENOMEM, "out of memory");
	x->th[x->nth++] = (struct mt_bundle_thread){ rec_tsc(x, r), pt[0], pt[1], comm, NULL, 0 };
	return 0;
}

/* "[kernel.kallsyms]..." or a vmlinux path; not a module (.ko) or guest kernel. */
static bool is_kernel_name(const char *name)
{
	return !strncmp(name, "[kernel.kallsyms]", 17) || (name[0] == '/' && !strstr(name, ".ko"));
}

static int add_map(struct imp *x, const struct perfdata_rec *r, uint32_t pid, uint64_t addr,
		   uint64_t len, uint64_t pgoff, uint32_t prot, const uint8_t *bid, size_t bidlen,
		   const char *name, size_t namemax)
{
	size_t n = strnlen(name, namemax);
	struct map *m;

	/* The kernel's own map (not a module's): where its code would be. */
	if (pid == UINT32_MAX && !x->km.name[0] && n < sizeof(x->km.name) && is_kernel_name(name)) {
		memcpy(x->km.name, name, n);
		x->km.ref_addr = pgoff;
	}
	if (pid == UINT32_MAX || !len || addr + len < addr)
		return 0; /* kernel code comes from a kcore_dir, not from map records */
	if (GROW(x, x->maps, x->nmaps, x->mapcap))
		return -ENOMEM;
	m = &x->maps[x->nmaps];
	memset(m, 0, sizeof(*m));
	if (!(m->path = strndup(name, n)))
		return fail(x, -ENOMEM, "out of memory");
	/* The vDSO of an mtrace export is "[vdso]" again. */
	if (!strncmp(m->path, PERFDATA_EXPORT_VDSO_DIR, strlen(PERFDATA_EXPORT_VDSO_DIR)))
		strcpy(m->path, "[vdso]");
	if (bidlen)
		memcpy(m->bid, bid, bidlen);
	m->m = (struct mt_bundle_map){
		.tsc = rec_tsc(x, r),
		.start = addr,
		.end = addr + len,
		.file_offset = pgoff,
		.pid = pid,
		.prot = prot,
		.event = r->has_sid && r->sid.time ? MT_BUNDLE_MAP_MMAP : MT_BUNDLE_MAP_PRESENT,
		.build_id_len = bidlen,
	};
	x->nmaps++;
	x->st->maps++;
	return 0;
}

static int on_mmap(struct imp *x, const struct perfdata_rec *r)
{
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
	} b;

	if (r->body_len < sizeof(b) + 1)
		return fail(x, -EBADMSG, "MMAP record at offset %" PRIu64 " too short", r->offset);
	memcpy(&b, r->body, sizeof(b));
	if (r->h.misc & PERF_RECORD_MISC_MMAP_DATA)
		return 0;
	return add_map(x, r, b.pid, b.addr, b.len, b.pgoff,
		       MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_EXEC, NULL, 0,
		       (const char *)r->body + sizeof(b), r->body_len - sizeof(b));
}

static int on_mmap2(struct imp *x, const struct perfdata_rec *r)
{
	struct perfdata_mmap2 m;
	size_t fixed = sizeof(m) - sizeof(m.header);
	size_t bidlen = 0;
	uint32_t prot = 0;

	if (r->body_len < fixed + 1)
		return fail(x, -EBADMSG, "MMAP2 record at offset %" PRIu64 " too short", r->offset);
	memcpy((uint8_t *)&m + sizeof(m.header), r->body, fixed);
	if (!(m.prot & 0x4))
		return 0; /* PROT_EXEC */
	if (r->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		bidlen = m.build_id_size > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX :
								   m.build_id_size;
	prot = MT_BUNDLE_PROT_EXEC | (m.prot & 0x1 ? MT_BUNDLE_PROT_READ : 0) |
	       (m.prot & 0x2 ? MT_BUNDLE_PROT_WRITE : 0);
	return add_map(x, r, m.pid, m.addr, m.len, m.pgoff, prot, m.build_id, bidlen,
		       (const char *)r->body + fixed, r->body_len - fixed);
}

static int on_aux(struct imp *x, const struct perfdata_rec *r)
{
	uint64_t b[3];

	if (r->body_len >= sizeof(b)) {
		memcpy(b, r->body, sizeof(b));
		if (b[2] & PERF_AUX_FLAG_TRUNCATED) {
			x->st->truncated_aux++;
			warn(x, "the AUX area overflowed %s: part of the trace was lost",
			     "during recording");
		}
	}
	return 0;
}

/* TIME_CONV: the same conversion, used until (or when) AUXTRACE_INFO gives none. */
static int on_time_conv(struct imp *x, const struct perfdata_rec *r)
{
	struct perfdata_time_conv tc;
	size_t need = offsetof(struct perfdata_time_conv, time_cycles);

	if (r->h.size < need)
		return fail(x, -EBADMSG, "TIME_CONV at offset %" PRIu64 " too short", r->offset);
	memset(&tc, 0, sizeof(tc));
	memcpy(&tc, (const uint8_t *)r->body - sizeof(r->h), need);
	if (!conv_ok(tc.time_shift, tc.time_mult))
		return fail(x, -EBADMSG, "TIME_CONV at offset %" PRIu64 ": time shift %" PRIu64
			    " and mult %" PRIu64 " are not a TSC conversion", r->offset, tc.time_shift,
			    tc.time_mult);
	if (!x->tc.mult)
		x->tc = (struct perfdata_tsc_conv){ (uint32_t)tc.time_shift, (uint32_t)tc.time_mult,
						    tc.time_zero };
	return 0;
}

static int on_record(struct imp *x, const struct perfdata_rec *r)
{
	switch (r->h.type) {
	case PERFDATA_REC_TIME_CONV:
		return on_time_conv(x, r);
	case PERFDATA_REC_AUXTRACE_INFO:
		return on_auxtrace_info(x, r);
	case PERFDATA_REC_AUXTRACE:
		return on_auxtrace(x, r);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return on_switch(x, r);
	case PERF_RECORD_ITRACE_START:
		return on_itrace_start(x, r);
	case PERF_RECORD_COMM:
		return on_comm(x, r);
	case PERF_RECORD_MMAP:
		return on_mmap(x, r);
	case PERF_RECORD_MMAP2:
		return on_mmap2(x, r);
	case PERF_RECORD_AUX:
		return on_aux(x, r);
	case PERF_RECORD_LOST:
		x->st->lost++;
		warn(x, "perf lost sideband records while recording");
		return 0;
	case PERFDATA_REC_COMPRESSED:
		return fail(x, -EPROTONOSUPPORT, "compressed records (perf record -z); "
			    "decompress with perf inject -i IN -o OUT first");
	default:
		return 0;
	}
}

/* ---- features ---- */

/* Build-ids of the BUILD_ID feature for maps whose records lack one. */
static void apply_build_ids(struct imp *x)
{
	const uint8_t *p;
	size_t len;

	if (perfdata_feature(x->f, PERFDATA_FEAT_BUILD_ID, &p, &len))
		return;
	for (size_t at = 0; at + sizeof(struct perfdata_build_id) <= len;) {
		struct perfdata_build_id e;
		size_t nlen, blen;

		memcpy(&e, p + at, sizeof(e));
		if (e.header.size < sizeof(e) || e.header.size > len - at)
			break;
		nlen = e.header.size - sizeof(e);
		blen = e.header.misc & PERFDATA_MISC_BUILD_ID_SIZE ? e.size : PERFDATA_BUILD_ID_MAX;
		if (blen > PERFDATA_BUILD_ID_MAX)
			blen = PERFDATA_BUILD_ID_MAX;
		if ((e.header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    !x->km.bid_name[0] && nlen < sizeof(x->km.bid_name) &&
		    is_kernel_name((const char *)p + at + sizeof(e))) {
			memcpy(x->km.bid_name, p + at + sizeof(e), nlen);
			memcpy(x->km.bid, e.data, blen);
			x->km.bid_len = blen;
		}
		for (size_t i = 0; i < x->nmaps; i++)
			if (!x->maps[i].m.build_id_len &&
			    strnlen((const char *)p + at + sizeof(e), nlen) == strlen(x->maps[i].path) &&
			    !memcmp(p + at + sizeof(e), x->maps[i].path, strlen(x->maps[i].path))) {
				memcpy(x->maps[i].bid, e.data, blen);
				x->maps[i].m.build_id_len = blen;
			}
		at += e.header.size;
	}
}

/* A perf header string feature into BUF. */
static void feature_string(struct imp *x, unsigned int bit, char *buf, size_t n)
{
	const uint8_t *p;
	size_t len;
	uint32_t sl;

	buf[0] = 0;
	if (perfdata_feature(x->f, bit, &p, &len) || len < 4)
		return;
	memcpy(&sl, p, 4);
	if (sl > len - 4)
		sl = (uint32_t)(len - 4);
	snprintf(buf, n, "%.*s", (int)strnlen((const char *)p + 4, sl), (const char *)p + 4);
}

static void read_features(struct imp *x)
{
	const uint8_t *p;
	size_t len;

	feature_string(x, PERFDATA_FEAT_CPUID, x->cpuid, sizeof(x->cpuid));
	if (!perfdata_feature(x->f, PERFDATA_FEAT_NRCPUS, &p, &len) && len >= 4)
		memcpy(&x->nr_cpus, p, 4);
}

static void fill_cpu(struct imp *x, struct mt_bundle_cpu_desc *cpu)
{
	unsigned family = 0, model = 0, stepping = 0;
	char vendor[16] = "";

	memset(cpu, 0, sizeof(*cpu));
	/* Intel PT means an Intel CPU, even when the file does not say which. */
	cpu->vendor = MT_BUNDLE_VENDOR_INTEL;
	memcpy(cpu->vendor_id, "GenuineIntel", 12);
	/* perf's x86 cpuid: VENDOR,FAMILY,MODEL,STEPPING */
	if (sscanf(x->cpuid, "%15[^,],%u,%u,%u", vendor, &family, &model, &stepping) == 4) {
		cpu->family = (uint16_t)family;
		cpu->model = (uint8_t)model;
		cpu->stepping = (uint8_t)stepping;
	}
	cpu->nr_cpus = x->nr_cpus;
	if (x->npriv > PERFDATA_PT_TSC_CTC_D) {
		cpu->cpuid_15.ebx = (uint32_t)x->priv[PERFDATA_PT_TSC_CTC_N];
		cpu->cpuid_15.eax = (uint32_t)x->priv[PERFDATA_PT_TSC_CTC_D];
	}
	if (x->npriv > PERFDATA_PT_MAX_NONTURBO_RATIO)
		cpu->max_nonturbo_ratio = (uint32_t)x->priv[PERFDATA_PT_MAX_NONTURBO_RATIO];
}

/* Checked by conv_ok() when read: it fits. */
static uint64_t tsc_hz(const struct imp *x)
{
	return (uint64_t)conv_hz(x->tc.shift, x->tc.mult);
}

/* ---- binaries ---- */

/* perf's build-id cache: --buildid-dir, else ~/.debug; NULL without HOME. */
static const char *buildid_dir(const struct imp *x, char *buf, size_t n)
{
	const char *home = getenv("HOME");

	if (x->opts && x->opts->buildid_dir)
		return x->opts->buildid_dir;
	if (!home)
		return NULL;
	snprintf(buf, n, "%s/.debug", home);
	return buf;
}

/* Appends to WHY, which says what is wrong with the file here (or is
 * empty: a name no file has), where no copy was found either. */
static void no_copy(char *why, size_t whylen, const char *symfs, size_t bl, const char *cache)
{
	size_t l = strlen(why);

	cache = bl ? cache : NULL;
	/* Two paths of up to 400 bytes each leave room for the rest. */
	if (symfs || cache)
		snprintf(why + l, whylen - l, "%sno copy%s%.400s%s%s%.400s", l ? ", and " : "",
			 symfs ? " under --symfs " : "", symfs ? symfs : "", symfs && cache ? " or" : "",
			 cache ? " in the build-id cache " : "", cache ? cache : "");
	else if (!l)
		snprintf(why, whylen, "no --symfs%s",
			 bl ? ", and no build-id cache (HOME is not set)" : "");
	/* Without a build-id the cache was not searched: not "no copy" there. */
	l = strlen(why);
	if (!bl)
		snprintf(why + l, whylen - l, ", and %s", PERFDATA_NO_BUILD_ID);
}

/*
 * A copy of the code of map M: in the --symfs tree, then in perf's
 * build-id cache DIR (DIR/.build-id/xx/rest, a link to the cached ELF file
 * or vDSO, or to the directory holding it); its path in OUT.
 */
static bool look_up(struct imp *x, const struct map *m, const char *dir, char *out, size_t n)
{
	char hex[2 * PERFDATA_BUILD_ID_MAX + 1];
	size_t bl = m->m.build_id_len;

	if (x->opts && x->opts->symfs) {
		snprintf(out, n, "%s%s", x->opts->symfs, m->path);
		if (perfdata_path_has_build_id(out, m->bid, bl))
			return true;
		if (!strcmp(m->path, "[vdso]") && bl) {
			for (size_t i = 0; i < bl; i++)
				sprintf(hex + 2 * i, "%02x", m->bid[i]);
			snprintf(out, n, "%s%s%s.so", x->opts->symfs, PERFDATA_EXPORT_VDSO_DIR, hex);
			if (perfdata_path_has_build_id(out, m->bid, bl))
				return true;
		}
	}
	if (!bl || !dir)
		return false;
	for (size_t i = 0; i < bl; i++)
		sprintf(hex + 2 * i, "%02x", m->bid[i]);
	snprintf(out, n, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	if (perfdata_path_has_build_id(out, m->bid, bl))
		return true; /* perf's old layout: the link is the file */
	/* Its layout now: a link to DIR/PATH/BUILDID/, which holds "elf" (or "vdso"). */
	size_t l = strlen(out);

	snprintf(out + l, n - l, "/%s", strcmp(m->path, "[vdso]") ? "elf" : "vdso");
	return perfdata_path_has_build_id(out, m->bid, bl);
}

/*
 * Where the code of map M is when the local file is missing or another
 * build (look_up()). Returns 1 with the copy's path in OUT, 0 when the
 * local file is the recorded one (the decoder uses it), or -1 when there
 * is no copy, WHY saying why.
 */
static int find_copy(struct imp *x, const struct map *m, char *out, size_t n, char *why,
		     size_t whylen)
{
	char dirbuf[2048];
	const char *dir = buildid_dir(x, dirbuf, sizeof(dirbuf));
	int fd;

	why[0] = 0;
	if (m->path[0] == '/' &&
	    (fd = perfdata_open_build(m->path, m->bid, m->m.build_id_len, why, whylen)) >= 0) {
		close(fd);
		return 0;
	}
	if (look_up(x, m, dir, out, n))
		return 1;
	no_copy(why, whylen, x->opts ? x->opts->symfs : NULL, m->m.build_id_len, dir);
	return -1;
}

/* Whether a map of PATH is a binary's: a file or the vDSO (perf names
 * anonymous code "//anon"). */
static bool is_binary(const char *path)
{
	return (path[0] == '/' && path[1] != '/') || !strcmp(path, "[vdso]");
}

static int embed_binaries(struct imp *x, struct mt_bundle_writer *w)
{
	const struct mt_reporter *rep = x->opts ? x->opts->rep : NULL;
	char src[4096], why[1024];
	size_t missing = 0;

	for (size_t i = 0; i < x->nmaps; i++) {
		const struct map *m = &x->maps[i];
		int dup = 0, found;

		for (size_t k = 0; k < i && !dup; k++)
			dup = !strcmp(x->maps[k].path, m->path) &&
			      x->maps[k].m.build_id_len == m->m.build_id_len &&
			      !memcmp(x->maps[k].bid, m->bid, m->m.build_id_len);
		if (dup || !(found = find_copy(x, m, src, sizeof(src), why, sizeof(why))))
			continue;
		if (found < 0) {
			/* Named up to the cap; a system-wide recording can lack hundreds. */
			if (is_binary(m->path) && missing++ < MT_REPORT_LIST)
				mt_report(rep, MT_SEV_WARNING, "%s: not embedded in the bundle: %s",
					  m->path, why);
			continue;
		}
		struct mt_bundle_file bf = { m->path, m->bid, m->m.build_id_len, 0, 0 };

		if (mt_bundle_embed_file(w, &bf, src))
			return write_fail(x, -EIO, mt_bundle_writer_errmsg(w));
		x->st->embedded++;
	}
	if (missing > MT_REPORT_LIST) {
		size_t more = missing - MT_REPORT_LIST;

		mt_report(rep, MT_SEV_WARNING, "... and %zu more binar%s not embedded in the bundle",
			  more, mt_plural(more, "y", "ies"));
	}
	return 0;
}

/* ---- kernel code ---- */

#define NO_KERNEL "kernel code is not decoded (user code is): "

/* Where the kernel code comes from, or a warning why there is none. */
static void find_kernel(struct imp *x)
{
	char why[400] = "", buf[2048];

	if (!perfdata_kernel_source(&x->km, x->opts ? x->opts->kcore_dir : NULL,
				    buildid_dir(x, buf, sizeof(buf)), x->kdir, sizeof(x->kdir), why,
				    sizeof(why)))
		warn(x, NO_KERNEL "%s; record with perf record --kcore", why);
}

static int import_kernel(struct imp *x, struct mt_bundle_writer *w)
{
	char why[512] = "", err[400];
	int n;

	if (!x->kdir[0])
		return 0;
	n = perfdata_import_kcore(w, x->kdir, &x->st->kernel_bytes, why, sizeof(why), err,
				  sizeof(err));
	if (n < 0)
		return write_fail(x, n, err);
	if (!n)
		warn(x, NO_KERNEL "%s", why);
	else if (why[0])
		warn(x, "%s", why);
	x->st->kernel_ranges = (size_t)n;
	return 0;
}

/* ---- the bundle ---- */

static int cmp_switch(const void *a, const void *b)
{
	const struct mt_bundle_switch_entry *p = a, *q = b;

	return p->tsc < q->tsc ? -1 : p->tsc > q->tsc;
}

/* One stream's bytes, oldest first, in one buffer (*OWNED if allocated). */
static int stream_bytes(struct imp *x, struct stream *s, const uint8_t **data, size_t *len,
			uint8_t **owned)
{
	size_t first = 0, total = 0;

	*owned = NULL;
	/* A snapshot holds the whole buffer: keep the newest one. */
	if (x->st->snapshot && s->n > 1) {
		first = s->n - 1;
		x->st->dropped_snapshots += s->n - 1;
		warn(x, "%zu earlier snapshot%s dropped: the bundle keeps the newest per CPU",
		     s->n - 1, mt_plural(s->n - 1, "", "s"));
	}
	/*
	 * perf pads each AUXTRACE payload to 8 bytes; the next one's AUX
	 * offset says where the trace really went on, so the padding inside
	 * the joined stream is cut (it could split a packet).
	 */
	for (size_t i = first; i + 1 < s->n; i++) {
		struct aux_piece *a = &s->p[i], *b = &s->p[i + 1];

		if (b->offset > a->offset && b->offset - a->offset < a->len)
			a->len = b->offset - a->offset;
		else if (b->offset > a->offset + a->len)
			warn(x, "CPU %u: trace lost between AUX buffers (offsets %" PRIu64 "-%" PRIu64 ")",
			     s->cpu, a->offset + a->len, b->offset);
	}
	for (size_t i = first; i < s->n; i++)
		total += s->p[i].len;
	if (s->n - first == 1) {
		*data = s->p[first].data;
		*len = total;
		return 0;
	}
	if (!(*owned = malloc(total ? total : 1)))
		return fail(x, -ENOMEM, "out of memory");
	total = 0;
	for (size_t i = first; i < s->n; i++) {
		memcpy(*owned + total, s->p[i].data, s->p[i].len);
		total += s->p[i].len;
	}
	*data = *owned;
	*len = total;
	return 0;
}

/* The pid of thread TID, from the names perf recorded. */
static uint32_t pid_of(const struct imp *x, uint32_t tid)
{
	for (size_t i = 0; i < x->nth; i++)
		if (x->th[i].tid == tid)
			return x->th[i].pid;
	return tid;
}

static int write_pt(struct imp *x, struct mt_bundle_writer *w, uint64_t *ring)
{
	*ring = 0;
	for (size_t i = 0; i < x->ns; i++) {
		struct stream *s = &x->s[i];
		struct mt_bundle_pt_desc pd = { 0 };
		const uint8_t *data = NULL;
		uint8_t *owned;
		size_t len = 0;
		int e;

		if ((e = stream_bytes(x, s, &data, &len, &owned)))
			return e;
		/*
		 * Per-thread buffers become streams of their own CPU numbers,
		 * each running its thread throughout.
		 */
		pd.cpu = x->st->per_thread ? (uint32_t)i : s->cpu;
		pd.stop_tsc = s->p[s->n - 1].reference;
		pd.flags = x->st->snapshot ? MT_BUNDLE_PT_WRAPPED : 0;
		if (x->st->per_thread &&
		    add_switch(x, x->first_tsc, pd.cpu, 0, 0, pid_of(x, s->tid), s->tid, 0)) {
			free(owned);
			return -ENOMEM;
		}
		e = mt_bundle_write_pt(w, &pd, data, len);
		free(owned);
		if (e)
			return write_fail(x, e, mt_bundle_writer_errmsg(w));
		*ring = len > *ring ? len : *ring;
		x->st->pt_bytes += len;
		x->st->streams++;
	}
	return 0;
}

/* The RTIT_CTL the recording ran with, as far as the perf event says. */
static uint64_t rtit_ctl(const struct imp *x)
{
	const struct perf_event_attr *a = &x->pt_attr->attr;

	return (a->config & PERFDATA_PT_CONFIG_MASK) | MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_TOPA |
	       (a->exclude_user ? 0 : MT_RTIT_CTL_USER) | (a->exclude_kernel ? 0 : MT_RTIT_CTL_OS);
}

static int write_bundle(struct imp *x, const char *path)
{
	struct mt_bundle_pt_config_desc cfg = { 0 };
	struct mt_bundle_clock_desc clk = { 0 };
	struct mt_bundle_clock_entry anchors[2];
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_writer_opts wo = { .size = sizeof(wo),
					    .rep = x->opts ? x->opts->rep : NULL };
	struct mt_bundle_writer *w;
	struct mt_bundle_map *maps = NULL;
	uint64_t ring, hz = tsc_hz(x);
	char why[sizeof(x->err) - 64];
	int e;

	if ((e = mt_bundle_writer_create(&w, path, &wo, why, sizeof(why))))
		return write_fail(x, e, why);
	fill_cpu(x, &cpu);
	cfg.rtit_ctl = rtit_ctl(x);
	if ((e = mt_bundle_write_cpu(w, &cpu)) || (e = write_pt(x, w, &ring)))
		goto out;
	cfg.ring_size = ring;
	/* One process named: the target (the decoder's task when nothing else
	 * says); several: a system-wide recording. */
	for (size_t i = 0; i < x->nth; i++) {
		if (!x->th[i].pid || x->th[i].pid == cfg.target_pid)
			continue;
		if (cfg.target_pid) {
			cfg.flags |= MT_BUNDLE_CFG_SYSTEM_WIDE;
			break;
		}
		cfg.target_pid = x->th[i].pid;
	}
	if (cfg.flags & MT_BUNDLE_CFG_SYSTEM_WIDE)
		cfg.target_pid = 0;
	if (x->nsw)
		qsort(x->sw, x->nsw, sizeof(*x->sw), cmp_switch);
	if (!(maps = calloc(x->nmaps ? x->nmaps : 1, sizeof(*maps)))) {
		e = write_fail(x, -ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < x->nmaps; i++) {
		maps[i] = x->maps[i].m;
		maps[i].path = x->maps[i].path;
		maps[i].build_id = x->maps[i].bid;
	}
	/* Two anchors one second apart on perf's clock; the decoder's times are perf's. */
	anchors[0].tsc = x->first_tsc;
	anchors[1].tsc = x->first_tsc + (hz ? hz : 1000000000);
	for (int i = 0; i < 2; i++)
		anchors[i].monotonic_ns = anchors[i].realtime_ns = anchors[i].boottime_ns =
			perfdata_tsc_to_ns(&x->tc, anchors[i].tsc);
	clk.tsc_hz = hz;
	clk.time_zero = x->tc.zero;
	clk.time_mult = x->tc.mult;
	clk.time_shift = x->tc.shift;
	if ((e = mt_bundle_write_pt_config(w, &cfg)) ||
	    (e = mt_bundle_write_switches(w, x->sw, x->nsw)) ||
	    (e = mt_bundle_write_maps(w, maps, x->nmaps)) ||
	    (e = mt_bundle_write_threads(w, x->th, x->nth)) ||
	    (x->tc.mult && (e = mt_bundle_write_clock(w, &clk, anchors, 2))))
		goto out;
	if ((e = embed_binaries(x, w)) || (e = import_kernel(x, w)))
		goto done;
	if ((e = mt_bundle_writer_finish(w)))
		goto out;
	goto done;
out:
	write_fail(x, e, mt_bundle_writer_errmsg(w));
done:
	free(maps);
	mt_bundle_writer_free(w);
	return e;
}

static void free_imp(struct imp *x)
{
	for (size_t i = 0; i < x->ns; i++)
		free(x->s[i].p);
	free(x->s);
	free(x->sw);
	for (size_t i = 0; i < x->nmaps; i++)
		free(x->maps[i].path);
	free(x->maps);
	for (size_t i = 0; i < x->nth; i++)
		free((char *)x->th[i].comm);
	free(x->th);
}

int perfdata_import(struct perfdata_file *f, const char *name, const char *out,
		    const struct perfdata_import_opts *opts, struct perfdata_import_stats *st,
		    char *err, size_t errlen)
{
	struct imp x = { .f = f, .opts = opts, .st = st, .in = name };
	const char *why;
	struct perfdata_rec r;
	uint64_t pos = 0;
	struct mt_outfile of;
	int e;

	memset(st, 0, sizeof(*st));
	while ((e = perfdata_next(f, &pos, &r)) > 0)
		if ((e = on_record(&x, &r)) < 0)
			break;
	if (e < 0 && !x.err[0])
		fail(&x, e, "%s", f->err);
	if (!e && !x.npriv)
		e = fail(&x, -ENODATA, "no Intel PT in this perf.data (no AUXTRACE_INFO record; "
			 "record with perf record -e intel_pt//)");
	for (size_t i = 0; !e && i < f->nattrs; i++)
		if (f->attrs[i].attr.type == x.priv[PERFDATA_PT_PMU_TYPE])
			x.pt_attr = &f->attrs[i];
	if (!e && !x.pt_attr)
		e = fail(&x, -EBADMSG, "no event of the Intel PT PMU type %" PRIu64 " in the attrs",
			 x.priv[PERFDATA_PT_PMU_TYPE]);
	if (!e && !x.ns)
		e = fail(&x, -ENODATA, "the perf.data holds no Intel PT trace (no AUXTRACE data)");
	if (!e && (why = mt_bundle_ctl_undecodable(rtit_ctl(&x))))
		e = fail(&x, -ENOTSUP, "intel_pt config %#" PRIx64 ": %s", x.pt_attr->attr.config, why);
	if (!e) {
		read_features(&x);
		apply_build_ids(&x);
		if (st->per_thread) {
			/* Per-thread streams carry their thread: no CPU switches apply. */
			x.nsw = 0;
			st->switches = 0;
		}
		st->threads = x.nth;
		if (!x.pt_attr->attr.exclude_kernel)
			find_kernel(&x);
		x.out = strcmp(out, "-") ? out : "standard output";
		if ((e = mt_outfile_begin(&of, out, x.err, sizeof(x.err))) == 0) {
			e = write_bundle(&x, of.write_path);
			if (e)
				mt_outfile_abort(&of);
			else
				e = mt_outfile_commit(&of, x.err, sizeof(x.err));
		}
	}
	if (e)
		snprintf(err, errlen, "%s", x.err);
	free_imp(&x);
	return e;
}

int perfdata_import_open(const char *path, const struct perfdata_import_opts *opts,
			 struct mt_bundle_reader **r, struct perfdata_import_stats *st, char *err,
			 size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	struct perfdata_import_opts o = opts ? *opts : (struct perfdata_import_opts){ 0 };
	struct perfdata_file f;
	char tmp[4096], kcore_dir[PATH_MAX + 16];
	int e, fd;

	*r = NULL;
	if ((e = perfdata_open_input(&f, path, kcore_dir, sizeof(kcore_dir)))) {
		snprintf(err, errlen, "%s: %s", path, f.err);
		perfdata_close(&f);
		return e;
	}
	snprintf(tmp, sizeof(tmp), "%s/mtrace-import-XXXXXX", dir && *dir ? dir : "/tmp");
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		perfdata_close(&f);
		return e;
	}
	close(fd);
	/* The bundle is a temporary file, gone once the reader has mapped it. */
	if (kcore_dir[0])
		o.kcore_dir = kcore_dir;
	e = perfdata_import(&f, path, tmp, &o, st, err, errlen);
	perfdata_close(&f);
	if (!e)
		e = mt_bundle_open(r, tmp, err, errlen);
	unlink(tmp);
	return e;
}
