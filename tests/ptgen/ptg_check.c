// SPDX-License-Identifier: MIT
/* Round-trip check of generated streams with libipt's instruction decoder. */
#include "ptg_check.h"

#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct ptg_check *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int read_image(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		      void *ctx)
{
	size_t n = ptg_image_read(ctx, ip, buf, size);

	(void)asid;
	return n ? (int)n : -pte_nomap;
}

static uint64_t seq_ip(const struct ptg_gen *g, const struct ptg_pos *p)
{
	return g->thr[p->thread].ip[p->index];
}

/* Matches one decoded IP against the expected sequence at *k. Entries whose
 * packets an overflow lost may be shown or skipped. */
static bool match(const struct ptg_gen *g, const struct ptg_cpu *cpu, size_t *k, uint64_t ip)
{
	while (*k < cpu->nseq && cpu->seq[*k].lost && seq_ip(g, &cpu->seq[*k]) != ip)
		(*k)++;
	if (*k >= cpu->nseq || seq_ip(g, &cpu->seq[*k]) != ip)
		return false;
	(*k)++;
	return true;
}

/* The thread the sideband says runs on @c at @tsc, -1 if none (each CPU's
 * records are in time order). */
static int sideband_thread(const struct ptg_gen *g, unsigned c, uint64_t tsc)
{
	int cur = -1;

	for (size_t i = 0; i < g->nsw; i++) {
		if (g->sw[i].cpu != c)
			continue;
		if (g->sw[i].tsc > tsc)
			break;
		cur = g->sw[i].next;
	}
	return cur;
}

/* Whether @t was switched in on @c at @tsc: its TSC packet is then the
 * enable's exact time, whatever the timing mode. */
static bool switched_in_at(const struct ptg_gen *g, unsigned c, uint32_t t, uint64_t tsc)
{
	for (size_t i = 0; i < g->nsw; i++)
		if (g->sw[i].cpu == c && g->sw[i].tsc == tsc && g->sw[i].next == (int32_t)t)
			return true;
	return false;
}

/* The events that start, stop or redirect a stretch of trace: those a
 * decoder places in time. (Status events of a PSB+, such as CBR, take
 * their time from the packets around them, not from an instruction.) */
static bool control_flow(enum pt_event_type t)
{
	return t == ptev_enabled || t == ptev_disabled || t == ptev_async_disabled ||
	       t == ptev_async_branch;
}

/* An event libipt reported with a time, judged once the instructions
 * around it are known. */
struct timed_event {
	bool enable;
	uint64_t tsc;
	size_t before;		/* instructions matched before it */
};

/*
 * Judges an event against the synthetic clock. An enable happens at the
 * start of the instruction tracing resumes at (@next); any other event
 * right after the instruction before it (@prev) completes, one cycle after
 * its start. Without CYC, times are lower bounds at most one MTC period
 * early (timing packets come at intervals). With CYC, an enable right
 * after a switch-in (a TSC packet) must be exact; other times are libipt's
 * estimates, and one that is not exact is counted (r->off_bounds), not
 * failed: the decoder clamps such times. At every time within its bounds
 * the sideband must name the thread of the event's stretch.
 */
static int judge(const struct ptg_gen *g, unsigned c, const struct timed_event *e,
		 const struct ptg_pos *prev, const struct ptg_pos *next, struct ptg_check *r)
{
	const struct ptg_pos *own = e->enable ? next : prev;
	bool cyc = g->cfg->pkt.cyc;
	uint64_t slack = cyc ? 0 : (uint64_t)g->cfg->pkt.art_ratio << g->cfg->pkt.mtc_freq;
	uint64_t hi, lo;

	if (!own || !own->time_known)
		return 0;
	hi = e->enable ? own->tsc : own->tsc + 1;
	lo = hi > slack ? hi - slack : 0;
	r->timed++;
	if (e->tsc < lo || e->tsc > hi) {
		if (!cyc || (e->enable && switched_in_at(g, c, own->thread, hi)))
			return fail(r, "instruction %zu: %s at time %" PRIu64 ", true time %" PRIu64,
				    e->before, e->enable ? "enabled" : "disabled", e->tsc, hi);
		r->off_bounds++;
		if (e->tsc > hi && e->tsc - hi > r->max_off)
			r->max_off = e->tsc - hi;
		if (e->tsc < lo && lo - e->tsc > r->max_off)
			r->max_off = lo - e->tsc;
		return 0;
	}
	if (hi - e->tsc > r->max_lag)
		r->max_lag = hi - e->tsc;
	/* A decoder gives the stretch to the thread the sideband names. */
	if (sideband_thread(g, c, e->tsc) != (int)own->thread)
		return fail(r, "instruction %zu: the sideband names another thread at time %" PRIu64,
			    e->before, e->tsc);
	return 0;
}

/* The events between two instructions. A stretch enabled and disabled
 * with no instruction in between (the trigger's probe at its first one)
 * ran nothing: its disable is not judged. */
static int judge_all(const struct ptg_gen *g, unsigned c, const struct timed_event *ev, size_t n,
		     const struct ptg_pos *prev, const struct ptg_pos *next, struct ptg_check *r)
{
	bool empty = false;

	for (size_t i = 0; i < n; i++) {
		if (ev[i].enable)
			empty = true;
		else if (empty)
			continue;
		if (judge(g, c, &ev[i], prev, next, r))
			return -1;
	}
	return 0;
}

static int decode(const struct ptg_gen *g, unsigned c, struct pt_insn_decoder *dec,
		  struct ptg_check *r, size_t *k)
{
	const struct ptg_cpu *cpu = &g->cpu[c];
	int status = pt_insn_sync_forward(dec);
	struct timed_event ev_at[8];
	size_t nev = 0;
	const struct ptg_pos *prev = NULL;

	if (status == -pte_eos)
		return 0;
	while (status >= 0) {
		struct pt_insn insn;

		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			if (ev.type == ptev_overflow) {
				r->overflows++;
				while (*k < cpu->nseq && cpu->seq[*k].lost)
					(*k)++;
				nev = 0;
				prev = NULL;
				continue;
			}
			if (ev.type == ptev_enabled)
				r->enables++;
			if (ev.has_tsc && control_flow(ev.type) && nev < sizeof(ev_at) / sizeof(ev_at[0]))
				ev_at[nev++] = (struct timed_event){ ev.type == ptev_enabled, ev.tsc,
								     r->decoded };
		}
		if (status < 0 || (status & pts_eos))
			break;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			break;
		r->decoded++;
		if (!match(g, cpu, k, insn.ip)) {
			const struct ptg_pos *want = *k < cpu->nseq ? &cpu->seq[*k] : NULL;

			return fail(r, "instruction %zu: decoded %#" PRIx64 ", expected %#" PRIx64
				    " (thread %d, index %u)", r->decoded - 1, insn.ip,
				    want ? seq_ip(g, want) : 0,
				    want ? (int)g->thr[want->thread].tid : -1,
				    want ? want->index : 0);
		}
		if (judge_all(g, c, ev_at, nev, prev, &cpu->seq[*k - 1], r))
			return -1;
		nev = 0;
		prev = &cpu->seq[*k - 1];
	}
	if (judge_all(g, c, ev_at, nev, prev, NULL, r))
		return -1;
	if (status < 0 && status != -pte_eos) {
		uint64_t off = 0;

		pt_insn_get_offset(dec, &off);
		return fail(r, "libipt: %s at offset %#" PRIx64 " after %zu instructions",
			    pt_errstr(pt_errcode(status)), off, r->decoded);
	}
	return 0;
}

int ptg_check_cpu_config(const struct ptg_gen *g, unsigned c, const struct ptg_image *img,
			 const struct pt_config *cfg, struct ptg_check *r)
{
	const struct ptg_cpu *cpu = &g->cpu[c];
	struct pt_insn_decoder *dec;
	size_t k = cpu->seq_start;
	int err;

	memset(r, 0, sizeof(*r));
	r->expected = cpu->nseq - cpu->seq_start;
	if (cfg->begin == cfg->end)
		return r->expected ? fail(r, "empty stream, %zu instructions expected", r->expected)
				   : 0;
	dec = pt_insn_alloc_decoder(cfg);
	if (!dec)
		return fail(r, "cannot allocate a libipt decoder");
	if (pt_image_set_callback(pt_insn_get_image(dec), read_image, (void *)img) < 0) {
		pt_insn_free_decoder(dec);
		return fail(r, "cannot set the image callback");
	}
	err = decode(g, c, dec, r, &k);
	pt_insn_free_decoder(dec);
	if (err)
		return err;
	while (k < cpu->nseq && cpu->seq[k].lost)
		k++;
	if (k != cpu->nseq)
		return fail(r, "decoding stopped after %zu instructions; %zu of %zu matched",
			    r->decoded, k - cpu->seq_start, r->expected);
	return 0;
}

int ptg_check_cpu(const struct ptg_gen *g, unsigned c, const struct ptg_image *img,
		  const uint8_t *buf, size_t len, struct ptg_check *r)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	cfg.cpuid_0x15_eax = 1;
	cfg.cpuid_0x15_ebx = g->cfg->pkt.art_ratio;
	cfg.mtc_freq = g->cfg->pkt.mtc_freq;
	cfg.nom_freq = g->cfg->pkt.cbr;
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = PTG_CPU_FAMILY;
	cfg.cpu.model = PTG_CPU_MODEL;
	cfg.cpu.stepping = PTG_CPU_STEPPING;
	if (pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0) {
		memset(r, 0, sizeof(*r));
		return fail(r, "libipt does not know the generator's CPU model");
	}
	return ptg_check_cpu_config(g, c, img, &cfg, r);
}

int ptg_check_coverage(const struct ptg_gen *g, struct ptg_check *r)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	for (size_t t = 0; t < g->nthr && !err; t++) {
		const struct ptg_thread *T = &g->thr[t];
		bool *seen = calloc(T->n + 1, sizeof(*seen));

		if (!seen)
			return fail(r, "out of memory");
		/* Each CPU must run the thread's instructions in order, and
		 * all CPUs together must run each exactly once. */
		for (unsigned c = 0; c < g->cfg->ncpu && !err; c++) {
			const struct ptg_cpu *cpu = &g->cpu[c];
			long last = -1;

			for (size_t k = 0; k < cpu->nseq && !err; k++) {
				const struct ptg_pos *p = &cpu->seq[k];

				if (p->thread != t)
					continue;
				if ((long)p->index <= last || seen[p->index])
					err = fail(r, "thread %d: instruction %u out of order on cpu %u",
						   (int)T->tid, p->index, c);
				seen[p->index] = true;
				last = p->index;
			}
		}
		/* Only later iterations of a REP instruction are not shown. */
		for (size_t i = 0; i < T->n && !err; i++)
			if (!seen[i] && !(i && T->ip[i] == T->ip[i - 1]))
				err = fail(r, "thread %d: instruction %zu never scheduled", (int)T->tid, i);
		free(seen);
	}
	return err;
}
