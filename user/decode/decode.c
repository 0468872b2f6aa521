// SPDX-License-Identifier: MIT
/* The decoder's set-up and entry points; see decode.h. */
#include "decode/decode_internal.h"
#include "decode/sink_thread.h"

#include "decode/ptconfig.h"
#include "util/errmsg.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void warn(struct mt_decode *d, const char *msg)
{
	mt_report(d->opts.rep, MT_SEV_WARNING, "%s", msg);
}

static void proc_warn(void *ctx, const char *msg)
{
	struct mt_decode *d = ctx;

	mt_report(d->opts.missing ? d->opts.missing : d->opts.rep, MT_SEV_WARNING, "%s", msg);
}

/* The processes are in pid order (see build_procs()). */
const struct mt_proc *mt_decode_proc(const struct mt_decode *d, uint32_t pid)
{
	size_t lo = 0, hi = d->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->procs[mid].pid == pid)
			return &d->procs[mid];
		if (d->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_map_pid(const void *a, const void *b)
{
	const struct mt_bundle_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* One image per process that has map records: the records grouped by pid
 * (a sorted copy), each group built once. */
static int build_procs(struct mt_decode *d)
{
	const struct mt_bundle_map *maps;
	size_t n = mt_bundle_maps(d->r, &maps), i = 0;
	struct mt_bundle_map *by_pid = malloc((n ? n : 1) * sizeof(*by_pid));

	d->procs = calloc(n ? n : 1, sizeof(*d->procs));
	if (!d->procs || !by_pid) {
		free(by_pid);
		return -1;
	}
	if (n)
		memcpy(by_pid, maps, n * sizeof(*maps));
	qsort(by_pid, n, sizeof(*by_pid), cmp_map_pid);
	while (i < n) {
		size_t j = i;

		while (j < n && by_pid[j].pid == by_pid[i].pid)
			j++;
		if (mt_proc_build(&d->procs[d->nprocs], by_pid[i].pid, by_pid + i, j - i, &d->bins,
				  d->iscache, proc_warn, d)) {
			mt_proc_fini(&d->procs[d->nprocs]);
			free(by_pid);
			return -1;
		}
		d->stats.missing_maps += d->procs[d->nprocs].missing;
		d->nprocs++;
		i = j;
	}
	free(by_pid);
	return 0;
}

/* The bundle's kernel code in every process's image and in one of its own
 * (tasks without maps); its symbols name kernel frames. */
static int load_kernel(struct mt_decode *d, char *err, size_t errlen)
{
	int rc = mt_kimage_load(&d->kernel, d->r, d->iscache, err, errlen);

	if (rc)
		return rc;
	d->funcs.kernel = &d->kernel;
	if (!d->kernel.nranges)
		return 0;
	d->kernel_image = pt_image_alloc("kernel");
	if (!d->kernel_image || mt_kimage_add_to(&d->kernel, d->iscache, d->kernel_image))
		goto nomem;
	for (size_t i = 0; i < d->nprocs; i++)
		if (mt_kimage_add_to(&d->kernel, d->iscache, d->procs[i].image))
			goto nomem;
	return 0;
nomem:
	return mt_errmsg(err, errlen, ENOMEM, "out of memory adding the kernel text to the images");
}

/* The jobs asked for (mt_decode_opts.jobs), or one per online CPU. */
static unsigned int jobs_wanted(const struct mt_decode *d)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	return d->opts.jobs ? d->opts.jobs : (online > 0 ? (unsigned int)online : 1);
}

static int load_cpus(struct mt_decode *d, char *err, size_t errlen)
{
	d->ncpus = mt_bundle_pt_count(d->r);
	d->cpus = calloc(d->ncpus ? d->ncpus : 1, sizeof(*d->cpus));
	if (!d->cpus)
		return mt_errmsg(err, errlen, ENOMEM, "out of memory for %zu PT streams", d->ncpus);
	for (size_t i = 0; i < d->ncpus; i++) {
		struct mt_bundle_pt_desc pt;
		int rc = mt_bundle_pt_desc(d->r, i, &pt);

		if (rc < 0)
			return mt_errmsg(err, errlen, -rc, "PT data of stream %zu: %s", i,
					 mt_bundle_reader_errmsg(d->r));
		d->cpus[i].cpu = pt.cpu;
	}
	d->stats.cpus = d->ncpus;
	return mt_decode_check_streams(d, jobs_wanted(d), err, errlen);
}

static struct mt_task fallback_task(const struct mt_decode *d, uint32_t target)
{
	if (d->have_trigger && d->trigger.d.pid == target)
		return (struct mt_task){ target, d->trigger.d.tid };
	return (struct mt_task){ target, target };
}


int mt_decode_open(struct mt_decode **out, struct mt_bundle_reader *r,
		   const struct mt_decode_opts *opts, char *err, size_t errlen)
{
	struct mt_bundle_pt_config_desc ptc;
	const struct mt_bundle_clock_entry *anchors = NULL;
	struct mt_bundle_clock_desc clk = { 0 };
	struct mt_bundle_cpu_desc cpu;
	struct mt_sym_options symopt = { 0 };
	const char *lacks;
	struct mt_decode *d;
	size_t nanchors = 0;
	int rc;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	d->r = r;
	if (opts)
		d->opts = *opts;
	symopt.debug_path = d->opts.debug_path;
	mt_bincache_init(&d->bins, r, &symopt);
	d->bins.embedded_only = d->opts.embedded_only;
	d->bins.copies = d->opts.copies;
	d->bins.copies_without_id = d->opts.copies_without_id;
	d->bins.maps = d->opts.path_maps;
	d->bins.nmaps = d->opts.npath_maps;
	d->bins.symfs = d->opts.symfs;
	mt_funcs_init(&d->funcs, &d->bins);
	if ((lacks = mt_bundle_missing_section(r))) {
		rc = mt_errmsg(err, errlen, ENOENT, "the bundle has no %s section: it cannot be decoded",
			       lacks);
		goto fail;
	}
	mt_bundle_get_cpu(r, &cpu);
	mt_bundle_get_pt_config(r, &ptc);
	rc = mt_decode_pt_config(&cpu, &ptc, &d->cfg, err, errlen);
	d->cyc = !!(ptc.rtit_ctl & MT_RTIT_CTL_CYCEN);
	if (rc < 0)
		goto fail;
	if (rc == MT_ERRATA_GUESSED) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "CPU family %u model 0x%x is unknown to libipt and to mtrace: "
			 "applying the newest known errata workarounds", cpu.family, cpu.model);
		warn(d, msg);
	}
	d->have_trigger = mt_bundle_get_trigger(r, &d->trigger) == 0;
	if (mt_bundle_clock(r, &clk, &anchors, &nanchors) < 0)
		nanchors = 0;
	d->iscache = pt_iscache_alloc("mtrace");
	if (mt_clock_init(&d->clock, anchors, nanchors, clk.tsc_hz) || !d->iscache ||
	    build_procs(d))
		goto nomem;
	if (d->clock.dropped) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "%zu of the bundle's %zu clock anchor%s %s back in time (a damaged bundle): left out",
			 d->clock.dropped, nanchors, mt_plural(nanchors, "", "s"),
			 mt_plural(d->clock.dropped, "goes", "go"));
		warn(d, msg);
	}
	rc = mt_sideband_open(&d->sb, r, fallback_task(d, ptc.target_pid), err, errlen);
	if (!rc)
		rc = load_kernel(d, err, errlen);
	if (!rc)
		rc = load_cpus(d, err, errlen);
	if (rc)
		goto fail;
	*out = d;
	return 0;
nomem:
	rc = mt_errmsg(err, errlen, ENOMEM, "out of memory setting up the decoder");
fail:
	mt_decode_free(d);
	return rc;
}

/*
 * The trigger goes where the trace shows the probe hit: the triggering
 * thread's last trace stop at the trigger's address before the trigger's
 * own time, which comes later (the probe's exception, its handler, the BPF
 * program; with generated PT, also the generator's clock). Without one,
 * at its own time. Final once every stream is past that time.
 */
uint64_t mt_decode_place_trigger(const struct mt_decode *d, int *final)
{
	uint64_t at = d->trigger.d.tsc;

	*final = 1;
	for (size_t i = 0; d->have_trigger && i < d->ncpus; i++) {
		const struct mt_cpu_log *c = &d->cpus[i];

		if (c->probe_tsc && c->probe_tid == d->trigger.d.tid &&
		    (at == d->trigger.d.tsc || c->probe_tsc > at))
			at = c->probe_tsc;
		if (!c->finished && c->op_floor <= d->trigger.d.tsc)
			*final = 0;
	}
	return at;
}

/* Online CPUs from which the sink's calls get a thread of their own by
 * default: the merge's thread bounds a decode once the cores outnumber
 * the times its work goes into the whole (4.3 and 6.3 on the benchmarks,
 * docs/benchmarks.md); below, the hand-over's work costs more. */
#define SINK_THREAD_CPUS 8

/* Log a stream may hold ahead of the replay when the replay follows. */
#define STREAM_LOG_LIMIT ((size_t)4 << 20)

/* Whether the sink's calls go to a thread of their own (opts.sink_thread). */
static int sink_thread_wanted(const struct mt_decode *d)
{
	return d->opts.sink_thread ? d->opts.sink_thread > 0
				   : sysconf(_SC_NPROCESSORS_ONLN) >= SINK_THREAD_CPUS;
}

/* The merge into SINK, whose calls go to a thread of their own where
 * wanted and possible. */
static int merge(struct mt_decode *d, const struct mt_decode_sink *sink)
{
	struct mt_sink_thread *st;
	struct mt_decode_sink outer;
	int rc, sink_rc;

	if (!sink_thread_wanted(d) || mt_sink_thread_start(&st, sink, &outer))
		return mt_decode_threads(d, sink);
	rc = mt_decode_threads(d, &outer);
	sink_rc = mt_sink_thread_stop(st);
	/* A failure of the sink's the merge did not see yet is the run's. */
	return rc ? rc : sink_rc;
}

int mt_decode_run(struct mt_decode *d, const struct mt_decode_sink *sink)
{
	unsigned int jobs = jobs_wanted(d);
	char why[sizeof(d->errmsg)];
	int rc, join;

	/* A stream uses two jobs at most (decode_cpu.c), but for a busy one
	 * split into pieces, which then has fewer helpers than it could. */
	if (jobs > 2 * d->ncpus)
		jobs = d->ncpus ? 2 * (unsigned int)d->ncpus : 1;
	d->streaming = sink->late_inferred;
	d->pipe.log_limit = d->opts.stream_window ? d->opts.stream_window : STREAM_LOG_LIMIT;
	d->errmsg[0] = 0;
	rc = mt_decode_cpus_start(d, jobs);
	if (rc)
		snprintf(d->errmsg, sizeof(d->errmsg), "out of memory starting to decode");
	else
		rc = merge(d, sink);
	join = mt_decode_cpus_join(d, rc != 0, why, sizeof(why));
	if (join && !rc) {
		rc = join;
		snprintf(d->errmsg, sizeof(d->errmsg), "%s", why);
	}
	for (size_t i = 0; i < d->ncpus; i++) {
		const struct mt_blk_stats *s = &d->cpus[i].stats;

		d->stats.blocks += s->blocks;
		d->stats.insns += s->insns;
		d->stats.errors += s->errors;
		d->stats.overflows += s->overflows;
		d->stats.pt_windows += s->windows;
		d->stats.cpus_decoded += s->windows > 0;
		d->stats.cpus_with_psb += s->psbs > 0;
		if (d->cpus[i].pt_held > d->stats.pt_held)
			d->stats.pt_held = d->cpus[i].pt_held;
		if (d->cpus[i].scan_held > d->stats.scan_held)
			d->stats.scan_held = d->cpus[i].scan_held;
		if (d->cpus[i].cpu_ns > d->stats.stream_cpu_ns)
			d->stats.stream_cpu_ns = d->cpus[i].cpu_ns;
		d->stats.two_stage_streams += d->cpus[i].two_stages;
		d->stats.split_streams += d->cpus[i].split;
		d->stats.pieces_ahead += d->cpus[i].pieces_ahead;
		d->stats.pieces_redone += d->cpus[i].pieces_redone;
		d->stats.clamped += d->cpus[i].clamped;
		d->stats.sb_rewinds += d->cpus[i].sb_rewinds;
		d->stats.dwarf_deferred += d->cpus[i].dwarf_deferred;
		d->stats.log_bytes += d->cpus[i].ops.len;
	}
	d->stats.log_peak = d->pipe.log_peak;
	d->stats.stuck_runs = d->pipe.stuck_runs;
	return rc;
}
void mt_decode_free(struct mt_decode *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncpus; i++) {
		mt_oplog_free(&d->cpus[i].ops);
		free(d->cpus[i].segs);
		free(d->cpus[i].ready);
	}
	free(d->cpus);
	free(d->pipe.threads);
	if (d->pipe.initialized) {
		pthread_mutex_destroy(&d->pipe.lock);
		pthread_cond_destroy(&d->pipe.progress);
		pthread_cond_destroy(&d->pipe.room);
	}
	for (size_t i = 0; i < d->nprocs; i++)
		mt_proc_fini(&d->procs[i]);
	free(d->procs);
	mt_sideband_fini(&d->sb);
	mt_clock_fini(&d->clock);
	pt_image_free(d->kernel_image);
	mt_kimage_fini(&d->kernel);
	pt_iscache_free(d->iscache);
	mt_funcs_fini(&d->funcs);
	mt_bincache_fini(&d->bins);
	free(d);
}

const char *mt_decode_error(const struct mt_decode *d)
{
	return d->errmsg;
}

const struct mt_decode_stats *mt_decode_get_stats(const struct mt_decode *d)
{
	return &d->stats;
}

size_t mt_decode_bundle_threads(const struct mt_decode *d, const uint32_t **tids)
{
	*tids = d->sb.tids;
	return d->sb.ntids;
}

int mt_decode_cpu_window(const struct mt_decode *d, size_t i, uint32_t *cpu, uint64_t *first_ns,
			 uint64_t *last_ns)
{
	const struct mt_blk_stats *s;

	if (i >= d->ncpus)
		return -1;
	s = &d->cpus[i].stats;
	if (!s->first_tsc || s->last_tsc < s->first_tsc)
		return -1;
	*cpu = d->cpus[i].cpu;
	*first_ns = mt_clock_ns(&d->clock, s->first_tsc);
	*last_ns = mt_clock_ns(&d->clock, s->last_tsc);
	return 0;
}

const char *mt_decode_label(void *d, uint32_t id)
{
	struct mt_func f = mt_decode_func(d, id);

	return mt_func_label(&f, id);
}

uint64_t mt_decode_ns(const struct mt_decode *d, uint64_t tsc)
{
	return mt_clock_ns(&d->clock, tsc);
}

int mt_decode_trigger_at(const struct mt_decode *d, uint64_t *ns)
{
	if (!d->have_trigger)
		return -1;
	*ns = mt_clock_ns(&d->clock, d->trigger_at);
	return 0;
}

int mt_decode_trigger(const struct mt_decode *d, uint64_t *ns, struct mt_bundle_trigger *t)
{
	if (!d->have_trigger)
		return -1;
	*t = d->trigger;
	*ns = mt_clock_ns(&d->clock, d->trigger.d.tsc);
	return 0;
}

struct mt_func mt_decode_func(struct mt_decode *d, uint32_t id)
{
	return mt_funcs_get(&d->funcs, id);
}

const char *mt_decode_symbol_at(struct mt_decode *d, uint32_t pid, uint64_t ip)
{
	struct mt_cs_fn fn;
	struct mt_func f;

	mt_funcs_resolve(&d->funcs, mt_decode_proc(d, pid), ip, &fn);
	f = mt_funcs_get(&d->funcs, fn.id);
	return mt_func_label(&f, fn.id);
}

int mt_decode_func_source(struct mt_decode *d, uint32_t id, struct mt_src_loc *loc)
{
	struct mt_func f = mt_funcs_get(&d->funcs, id);
	struct mt_sym_file *s =
		f.bin && f.name && !f.inlined ? mt_binfile_syms(&d->bins, f.bin) : NULL;

	return s ? mt_sym_source(s, f.link_addr, loc) : -1;
}
