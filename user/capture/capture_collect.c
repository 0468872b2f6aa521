// SPDX-License-Identifier: MIT
/* One frozen snapshot into one bundle (see capture_collect.h). */
#include "capture/capture_collect.h"
#include "util/errmsg.h"
#include "util/mt_array.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "capture/capture_procfs.h"
#include "kcore/kcore_capture.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int mt_capture_clock_anchor(struct mt_bundle_clock_entry *a)
{
	/* The TSC halfway between two reads brackets the three clock reads. */
	uint64_t t0 = __rdtsc();

	a->monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	a->realtime_ns = clock_ns(CLOCK_REALTIME);
	a->boottime_ns = clock_ns(CLOCK_BOOTTIME);
	a->tsc = t0 + (__rdtsc() - t0) / 2;
	return 0;
}

static int64_t tsc_delta_ns(uint64_t later, uint64_t earlier, uint32_t tsc_khz)
{
	int64_t d = (int64_t)(later - earlier);

	return tsc_khz ? d * 1000000 / (int64_t)tsc_khz : 0;
}

/* The CPU section: identity from the module's CPUID values, vendor from this CPU. */
static void fill_cpu(const struct mtrace_caps *caps, struct mt_bundle_cpu_desc *c)
{
	uint32_t eax = caps->cpuid_1_eax, fam = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;
	unsigned int a, b, cc, d;

	memset(c, 0, sizeof(*c));
	if (fam == 0xf)
		fam += (eax >> 20) & 0xff;
	if (fam == 0x6 || fam == 0xf)
		model |= ((eax >> 16) & 0xf) << 4;
	c->family = (uint16_t)fam;
	c->model = (uint8_t)model;
	c->stepping = eax & 0xf;
	c->nr_cpus = caps->nr_cpu_ids;
	memcpy(&c->cpuid_14_0, caps->cpuid_14_0, sizeof(c->cpuid_14_0));
	memcpy(&c->cpuid_14_1, caps->cpuid_14_1, sizeof(c->cpuid_14_1));
	c->cpuid_15.eax = caps->cpuid_15[0];
	c->cpuid_15.ebx = caps->cpuid_15[1];
	c->cpuid_15.ecx = caps->cpuid_15[2];
	c->max_nonturbo_ratio = caps->max_nonturbo_ratio;
	c->nominal_freq_hz = (uint64_t)caps->max_nonturbo_ratio * 100000000ULL;
	if (__get_cpuid(0, &a, &b, &cc, &d)) {
		memcpy(c->vendor_id, &b, 4);
		memcpy(c->vendor_id + 4, &d, 4);
		memcpy(c->vendor_id + 8, &cc, 4);
	}
	c->vendor = !strcmp(c->vendor_id, "GenuineIntel") ? MT_BUNDLE_VENDOR_INTEL
							  : MT_BUNDLE_VENDOR_UNKNOWN;
}

static void fill_pt_config(const struct mt_collect_in *in, const struct mtrace_status *st,
			   struct mt_bundle_pt_config_desc *p)
{
	memset(p, 0, sizeof(*p));
	p->rtit_ctl = st->rtit_ctl | MT_RTIT_CTL_TRACEEN;
	p->ring_size = st->ring_size;
	p->target_pid = (uint32_t)in->pid;
	if (in->opts->system_wide)
		p->flags |= MT_BUNDLE_CFG_SYSTEM_WIDE;
	if (in->dev->caps.flags & MTRACE_CAPS_SIMULATED)
		p->flags |= MT_BUNDLE_CFG_SIMULATED;
}

/* Growing array of switch records. */
struct sw_vec {
	struct mt_bundle_switch_entry *v;
	size_t n, cap;
};

static int add_switches(struct sw_vec *sv, const struct mtrace_sb_record *r, size_t n)
{
	if (MT_ARRAY_RESERVE(sv->v, sv->cap, sv->n, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_switch_entry *e = &sv->v[sv->n++];

		e->tsc = r[i].tsc;
		e->cpu = r[i].cpu;
		e->prev_pid = r[i].prev_pid;
		e->prev_tid = r[i].prev_tid;
		e->next_pid = r[i].next_pid;
		e->next_tid = r[i].next_tid;
		e->flags = (r[i].flags & MTRACE_SB_PREEMPT) ? MT_BUNDLE_SWITCH_PREEMPTED : 0;
	}
	return 0;
}

/*
 * The trigger as it happened. For a fallback freeze the module saw only
 * the ioctl; the BPF record has the hit's CPU, thread and IP, and its
 * CLOCK_MONOTONIC time becomes a TSC through the arm anchor, so that the
 * skid covers the whole trip through user space.
 */
static void true_trigger(const struct mt_collect_in *in, struct mtrace_status *st)
{
	struct mtrace_trigger *tr = &st->trigger;
	const struct mt_trig_event *ev = in->event;
	uint32_t khz = in->dev->caps.tsc_khz;

	if (tr->path == MTRACE_PATH_FALLBACK && ev && ev->spec == tr->cookie) {
		tr->cpu = ev->cpu;
		tr->pid = ev->pid;
		tr->tid = ev->tid;
		tr->ip = ev->ip;
		if (khz && ev->time_ns >= st->arm_ns)
			tr->tsc = st->arm_tsc + (ev->time_ns - st->arm_ns) * khz / 1000000;
	} else if (tr->path == MTRACE_PATH_EXIT && in->pid) {
		tr->pid = (uint32_t)in->pid;
		tr->tid = (uint32_t)(in->exit_tid ? in->exit_tid : in->pid);
		tr->ip = 0;
	}
}

/* Appends to the summary's warning line. */
__attribute__((format(printf, 2, 3)))
static void add_warning(struct mt_collect_out *out, const char *fmt, ...)
{
	size_t n = strlen(out->warning);
	va_list ap;

	if (n && n + 2 < sizeof(out->warning))
		n += (size_t)snprintf(out->warning + n, sizeof(out->warning) - n, "; ");
	va_start(ap, fmt);
	vsnprintf(out->warning + n, sizeof(out->warning) - n, fmt, ap);
	va_end(ap);
}

/* Per CPU: ring bytes oldest first and its sideband. */
static int collect_cpus(const struct mt_collect_in *in, const struct mtrace_status *st,
			struct mt_bundle_writer *w, struct sw_vec *sv, struct mt_collect_out *out,
			char *err, size_t errlen)
{
	struct mt_dev *dev = in->dev;
	int e;

	out->skid_ns_trigger_cpu = -1;
	for (uint32_t cpu = 0; cpu < dev->caps.nr_cpu_ids; cpu++) {
		struct mtrace_cpu_info ci;
		struct mt_bundle_pt_desc pd = { 0 };
		struct mtrace_sb_record *recs = NULL;
		const void *ring;
		size_t nrec = 0;
		uint64_t lost = 0;
		int64_t skid;

		if ((e = mt_dev_cpu(dev, cpu, &ci, err, errlen)))
			return e;
		if (ci.flags & MTRACE_CPU_ADDED) {
			pd.cpu = cpu;
			pd.flags = MT_BUNDLE_PT_PARTIAL | MT_BUNDLE_PT_NO_RING;
			pd.stop_tsc = ci.online_tsc;
			if ((e = mt_bundle_write_pt_ring(w, &pd, NULL, 0)))
				return mt_errmsg(err, errlen, -e, "writing the PT record of CPU %u: %s",
						 cpu, mt_bundle_writer_errmsg(w));
			add_warning(out, "CPU %u came online while armed and has no ring: threads that ran there from TSC %llu on are missing",
				    cpu, (unsigned long long)ci.online_tsc);
			continue;
		}
		if (!(ci.flags & MTRACE_CPU_RING))
			continue;
		if (ci.write_offset > ci.ring_size)
			return mt_errmsg(err, errlen, EPROTO,
					 "CPU %u: write offset %llu beyond its %llu-byte ring", cpu,
					 (unsigned long long)ci.write_offset,
					 (unsigned long long)ci.ring_size);
		pd.cpu = cpu;
		pd.stop_tsc = ci.stop_tsc;
		pd.rtit_status = ci.rtit_status;
		pd.write_offset = ci.write_offset;
		if (ci.flags & MTRACE_CPU_WRAPPED)
			pd.flags |= MT_BUNDLE_PT_WRAPPED;
		if (ci.flags & MTRACE_CPU_CLOBBERED) {
			pd.flags |= MT_BUNDLE_PT_CLOBBERED;
			out->clobbered = 1;
		}
		if (ci.flags & MTRACE_CPU_OFFLINED)
			pd.flags |= MT_BUNDLE_PT_PARTIAL;
		if ((e = mt_dev_map_ring(dev, &ci, &ring, err, errlen)))
			return e;
		e = mt_bundle_write_pt_ring(w, &pd, ring, ci.ring_size);
		munmap((void *)ring, ci.ring_size);
		if (e)
			return mt_errmsg(err, errlen, -e, "writing the PT data of CPU %u: %s", cpu,
					 mt_bundle_writer_errmsg(w));
		out->cpus++;
		out->pt_bytes += (ci.flags & MTRACE_CPU_WRAPPED) ? ci.ring_size : ci.write_offset;
		skid = tsc_delta_ns(ci.stop_tsc, st->trigger.tsc, dev->caps.tsc_khz);
		if (skid > out->skid_ns_max)
			out->skid_ns_max = skid;
		if (cpu == st->trigger.cpu)
			out->skid_ns_trigger_cpu = skid;

		if ((e = mt_dev_read_sideband(dev, cpu, &recs, &nrec, &lost, err, errlen)))
			return e;
		e = add_switches(sv, recs, nrec);
		free(recs);
		if (e)
			return mt_errmsg(err, errlen, -e, "out of memory for the sideband");
		out->sb_lost += lost;
	}
	out->switches = sv->n;
	if (st->flags & MTRACE_STATUS_SECURE_EXEC)
		add_warning(out, "the target exec'd a set-user-ID (non-dumpable) program: its trace ends at that exec");
	if (!out->cpus)
		return mt_errmsg(err, errlen, ENODATA, "the module reports no CPU with a ring");
	return 0;
}

/* The bundle stores the module's freeze path as it is. */
_Static_assert(MTRACE_PATH_KFUNC == MT_BUNDLE_FREEZE_KFUNC &&
	       MTRACE_PATH_FALLBACK == MT_BUNDLE_FREEZE_FALLBACK &&
	       MTRACE_PATH_MANUAL == MT_BUNDLE_FREEZE_MANUAL &&
	       MTRACE_PATH_EXIT == MT_BUNDLE_FREEZE_EXIT &&
	       MTRACE_PATH_POWER == MT_BUNDLE_FREEZE_POWER &&
	       MTRACE_PATH_POWER + 1 == MT_BUNDLE_FREEZE_NR,
	       "bundle freeze paths are the module's MTRACE_PATH_* numbers");

_Static_assert((int)MT_TRIG_UPROBE == (int)MT_BUNDLE_REASON_UPROBE &&
	       (int)MT_TRIG_URETPROBE == (int)MT_BUNDLE_REASON_URETPROBE &&
	       (int)MT_TRIG_KPROBE == (int)MT_BUNDLE_REASON_KPROBE &&
	       (int)MT_TRIG_SLOW == (int)MT_BUNDLE_REASON_SLOW_CALL,
	       "trigger kinds double as bundle trigger reasons");
_Static_assert((int)MT_TRIG_KIND_NR == (int)MT_BUNDLE_REASON_USER,
	       "a new trigger kind needs its own bundle reason, mapped explicitly here");

void mt_collect_trigger(const struct mt_collect_in *in, const struct mtrace_status *st,
			const struct mt_collect_out *out, struct mt_bundle_trigger *trig)
{
	const struct mtrace_trigger *tr = &st->trigger;
	struct mt_bundle_trigger t = { 0 };

	t.d.freeze_path = tr->path;
	switch (tr->path) {
	case MTRACE_PATH_KFUNC:
	case MTRACE_PATH_FALLBACK:
		/* Both paths carry the spec index as cookie; trigger kinds are bundle reasons. */
		if (tr->cookie < in->nspecs) {
			t.d.reason = in->specs[tr->cookie].kind;
			t.spec = in->specs[tr->cookie].text;
		} else {
			t.d.reason = MT_BUNDLE_REASON_USER;
		}
		break;
	case MTRACE_PATH_EXIT:
		t.d.reason = MT_BUNDLE_REASON_TARGET_EXIT;
		break;
	default:
		t.d.reason = MT_BUNDLE_REASON_USER;
		break;
	}
	t.d.cpu = tr->cpu;
	t.d.pid = tr->pid;
	t.d.tid = tr->tid;
	t.d.tsc = tr->tsc;
	t.d.ip = tr->ip;
	t.d.freeze_tsc = st->freeze_tsc;
	t.d.skid_ns = (uint64_t)(out->skid_ns_trigger_cpu >= 0 ? out->skid_ns_trigger_cpu
							       : out->skid_ns_max);
	*trig = t;
}

static int write_trigger(const struct mt_collect_in *in, const struct mtrace_status *st,
			 const struct mt_collect_out *out, struct mt_bundle_writer *w)
{
	struct mt_bundle_trigger t;

	mt_collect_trigger(in, st, out, &t);
	return mt_bundle_write_trigger(w, &t);
}

/* The largest special mapping copied (the vdso is two pages, [uprobes] one). */
#define SPECIAL_MAX (1U << 20)

/*
 * Executable mappings that exist in no file ([vdso], [uprobes]) are copied
 * from the process's memory into the bundle, always: without them every
 * call into the vdso (clock_gettime) would decode as missing code. One copy
 * per name (the vdso is the same in every process). A mapping that cannot
 * be read ([vsyscall]) is skipped: decode then reports it as missing.
 */
/*
 * The vdso is one image per kernel and ABI, mapped into every process: when
 * the target's copy cannot be read (a process at exit), ours of the same
 * size is the same bytes.
 */
static ssize_t own_vdso(uint8_t *buf, uint64_t len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi;
	char line[256];
	ssize_t got = -1;

	while (f && got < 0 && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    hi - lo == len) {
			memcpy(buf, (const void *)(uintptr_t)lo, len);
			got = (ssize_t)len;
		}
	if (f)
		fclose(f);
	return got;
}

/* Whether process PID runs a 64-bit executable (a 32-bit one has the other vdso). */
static int is_64bit(uint32_t pid)
{
	unsigned char id[5] = { 0 };
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fread(id, 1, sizeof(id), f) != sizeof(id))
		id[0] = 0;
	fclose(f);
	return !memcmp(id, "\177ELF", 4) && id[4] == 2;	/* ELFCLASS64 */
}

/* M's bytes through the process, else (at exit) through the exiting thread. */
static ssize_t read_special(const struct mt_collect_in *in, const struct mt_bundle_map *m,
			    uint8_t *buf, uint64_t len)
{
	ssize_t got = -1;

	for (int via = 0; via < 2 && got != (ssize_t)len; via++) {
		char src[80];
		int fd;

		if (via && (m->pid != (uint32_t)in->pid || !in->exit_tid))
			break;
		if (via)
			snprintf(src, sizeof(src), "/proc/%u/task/%d/mem", m->pid, (int)in->exit_tid);
		else
			snprintf(src, sizeof(src), "/proc/%u/mem", m->pid);
		fd = open(src, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		got = pread(fd, buf, len, (off_t)m->start);
		close(fd);
	}
	if (got != (ssize_t)len && !strcmp(m->path, "[vdso]") && is_64bit(m->pid))
		got = own_vdso(buf, len);
	return got;
}

static void embed_special(const struct mt_collect_in *in, struct mt_bundle_writer *w,
			  const struct mt_map_list *maps, struct mt_collect_out *out)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct mt_bundle_map *m = &maps->maps[i];
		struct mt_bundle_file f = { .path = m->path };
		uint64_t len = m->end - m->start;
		uint8_t *buf;
		ssize_t got;
		size_t j;

		if (!(m->prot & MT_BUNDLE_PROT_EXEC) || m->path[0] != '[' || len > SPECIAL_MAX)
			continue;
		for (j = 0; j < i && strcmp(maps->maps[j].path, m->path); j++)
			;
		if (j < i)
			continue;
		buf = malloc(len);
		got = buf ? read_special(in, m, buf, len) : -1;
		if (got == (ssize_t)len && mt_bundle_write_file(w, &f, buf, len) == 0)
			out->files++;
		free(buf);
	}
}

/* The processes whose maps and threads matter: the target, or every one seen running. */
static size_t pids_of_interest(const struct mt_collect_in *in, const struct sw_vec *sv,
			       pid_t **pids)
{
	size_t n = 0;

	if (in->pid) {
		*pids = malloc(sizeof(**pids));
		if (!*pids)
			return 0;
		(*pids)[n++] = in->pid;
		return n;
	}
	*pids = malloc((2 * sv->n + 1) * sizeof(**pids));
	if (!*pids)
		return 0;
	for (size_t i = 0; i < sv->n; i++) {
		pid_t c[2] = { (pid_t)sv->v[i].prev_pid, (pid_t)sv->v[i].next_pid };

		for (int k = 0; k < 2; k++) {
			size_t j;

			if (c[k] <= 0)
				continue;
			for (j = 0; j < n && (*pids)[j] != c[k]; j++)
				;
			if (j == n)
				(*pids)[n++] = c[k];
		}
	}
	return n;
}

static int write_processes(const struct mt_collect_in *in, const struct sw_vec *sv,
			   struct mt_bundle_writer *w, struct mt_collect_out *out, char *err,
			   size_t errlen)
{
	struct mt_map_list maps = { 0 };
	struct mt_thread_list threads = { 0 };
	uint64_t tsc = __rdtsc();
	pid_t *pids = NULL;
	size_t np = pids_of_interest(in, sv, &pids);
	int e = 0;

	for (size_t i = 0; i < np && in->maps_readable; i++) {
		/* A process may be gone by now (system-wide): skip it, keep the rest. */
		pid_t via = pids[i] == in->pid ? in->exit_tid : 0;

		if (mt_maps_collect(&maps, pids[i], via, tsc) == -ENOMEM ||
		    mt_threads_collect(&threads, pids[i], via, tsc) == -ENOMEM ||
		    (pids[i] == in->pid && in->seen &&
		     mt_threads_add_gone(&threads, in->seen) == -ENOMEM)) {
			e = mt_errmsg(err, errlen, ENOMEM, "out of memory reading /proc");
			goto out;
		}
	}
	if ((e = mt_bundle_write_maps(w, maps.maps, maps.n)) ||
	    (e = mt_bundle_write_threads(w, threads.t, threads.n))) {
		e = mt_errmsg(err, errlen, -e, "%s", mt_bundle_writer_errmsg(w));
		goto out;
	}
	out->maps = maps.n;
	out->threads = threads.n;
	embed_special(in, w, &maps, out);
	for (size_t i = 0; in->opts->embed && i < maps.n; i++) {
		const struct mt_bundle_map *m = &maps.maps[i];
		struct mt_bundle_file f = { .path = m->path, .build_id = m->build_id,
					    .build_id_len = m->build_id_len };
		char src[64];
		size_t j;

		if (!(m->prot & MT_BUNDLE_PROT_EXEC) || m->path[0] != '/')
			continue;
		for (j = 0; j < i && strcmp(maps.maps[j].path, m->path); j++)
			;
		if (j < i && (maps.maps[j].prot & MT_BUNDLE_PROT_EXEC))
			continue; /* embedded already */
		snprintf(src, sizeof(src), "/proc/%u/map_files/%llx-%llx", m->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		if (mt_bundle_embed_file(w, &f, src) && mt_bundle_embed_file(w, &f, m->path)) {
			e = mt_errmsg(err, errlen, EIO, "--embed: %s", mt_bundle_writer_errmsg(w));
			goto out;
		}
		out->files++;
	}
out:
	free(pids);
	mt_maps_free(&maps);
	mt_threads_free(&threads);
	return e;
}

/*
 * Anchors: the module's arm and freeze pairs (TSC with CLOCK_MONOTONIC),
 * completed with the realtime and boottime offsets measured now, and two
 * user-space anchors (at arm, now) with all clocks read directly.
 */
static int write_clock(const struct mt_collect_in *in, const struct mtrace_status *st,
		       struct mt_bundle_writer *w)
{
	struct mt_bundle_clock_desc desc = { 0 };
	struct mt_bundle_clock_entry a[4], now;

	mt_capture_clock_anchor(&now);
	a[0] = (struct mt_bundle_clock_entry){ st->arm_tsc, st->arm_ns, 0, 0 };
	a[1] = in->arm_anchor;
	a[2] = (struct mt_bundle_clock_entry){ st->freeze_tsc, st->freeze_ns, 0, 0 };
	a[3] = now;
	for (int i = 0; i < 4; i += 2) {
		a[i].realtime_ns = a[i].monotonic_ns + (now.realtime_ns - now.monotonic_ns);
		a[i].boottime_ns = a[i].monotonic_ns + (now.boottime_ns - now.monotonic_ns);
	}
	desc.tsc_hz = (uint64_t)in->dev->caps.tsc_khz * 1000;
	return mt_bundle_write_clock(w, &desc, a, 4);
}

/*
 * The bundle is written as PATH.partial and renamed to PATH once complete:
 * PATH never holds a truncated bundle (a capture killed while writing
 * leaves only PATH.partial, which readers reject) and an older bundle
 * there is replaced only by a complete one. A special file such as
 * /dev/null is written in place.
 */
static int partial_name(const char *path, char *tmp, size_t len)
{
	struct stat st;
	int n;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		n = snprintf(tmp, len, "%s", path);
	else
		n = snprintf(tmp, len, "%s.partial", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * An older bundle at PATH may be the only record of a rare event: like
 * perf.data.old, it stays as PATH.old (one generation) instead of being
 * replaced. A hard link keeps PATH in place until the rename replaces it.
 * KEPT gets the .old name, or "" when there was nothing to keep.
 */
static int keep_older(const char *path, char *kept, size_t len)
{
	struct stat st;

	kept[0] = '\0';
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if ((size_t)snprintf(kept, len, "%s.old", path) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (unlink(kept) && errno != ENOENT)
		return -1;
	if (link(path, kept) == 0 || rename(path, kept) == 0)
		return 0;
	return -1;
}

int mt_capture_collect(const struct mt_collect_in *in, const char *path,
		       struct mt_collect_out *out, char *err, size_t errlen)
{
	struct mt_bundle_writer_opts wo = { .size = sizeof(wo), .rep = in->rep };
	struct mt_bundle_writer *w = NULL;
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc ptc;
	struct mtrace_status st;
	struct sw_vec sv = { 0 };
	char werr[256], tmp[4096];
	int e;

	memset(out, 0, sizeof(*out));
	if ((e = mt_dev_status(in->dev, &st, err, errlen)))
		return e;
	if (st.state != MTRACE_STATE_FROZEN)
		return mt_errmsg(err, errlen, EPROTO, "the module is not frozen (state %u)", st.state);
	out->path = st.trigger.path;
	true_trigger(in, &st);
	if (partial_name(path, tmp, sizeof(tmp)))
		return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", path);
	if ((e = mt_bundle_writer_create(&w, tmp, &wo, werr, sizeof(werr)))) {
		if (strcmp(tmp, path))
			remove(tmp);
		return mt_errmsg(err, errlen, -e, "cannot write %s: %s", path, werr);
	}
	fill_cpu(&in->dev->caps, &cpu);
	fill_pt_config(in, &st, &ptc);
	if ((e = mt_bundle_write_cpu(w, &cpu)) || (e = mt_bundle_write_pt_config(w, &ptc))) {
		e = mt_errmsg(err, errlen, -e, "%s: %s", path, mt_bundle_writer_errmsg(w));
		goto out;
	}
	if ((e = collect_cpus(in, &st, w, &sv, out, err, errlen)))
		goto out;
	if ((e = write_trigger(in, &st, out, w)) ||
	    (e = mt_bundle_write_switches(w, sv.v, sv.n)) || (e = write_clock(in, &st, w))) {
		e = mt_errmsg(err, errlen, -e, "%s: %s", path, mt_bundle_writer_errmsg(w));
		goto out;
	}
	if ((e = write_processes(in, &sv, w, out, err, errlen)))
		goto out;
	if (in->opts->kernel) {
		struct mt_kcore_capture_stats ks = { 0 };

		/* The user-space part stays decodable without it: warn, keep the bundle. */
		if (mt_kcore_capture(w, NULL, &ks, out->warning, sizeof(out->warning)))
			out->ktext_bytes = 0;
		else
			out->ktext_bytes = ks.bytes;
	}
	if ((e = mt_bundle_writer_finish(w)))
		e = mt_errmsg(err, errlen, -e, "%s: %s", path, mt_bundle_writer_errmsg(w));
	else if (strcmp(tmp, path) && keep_older(path, out->kept, sizeof(out->kept)))
		e = mt_errmsg(err, errlen, errno, "cannot keep the older %s as %s: %s", path,
			      out->kept, strerror(errno));
	else if (strcmp(tmp, path) && rename(tmp, path))
		e = mt_errmsg(err, errlen, errno, "cannot rename %s to %s: %s", tmp, path,
			      strerror(errno));
out:
	mt_bundle_writer_free(w);
	free(sv.v);
	if (e && strcmp(tmp, path))
		remove(tmp); /* never leave a bundle that readers reject as truncated */
	return e;
}
