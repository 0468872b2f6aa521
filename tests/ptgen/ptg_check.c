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

/* The thread the sideband says runs on @c at @tsc, -1 if none. Asked with
 * increasing times; *next is the first record of @c not applied yet (each
 * CPU's records are in time order). */
static int sideband_thread(const struct ptg_gen *g, unsigned c, uint64_t tsc, size_t *next,
			   int *cur)
{
	for (size_t i = *next; i < g->nsw; i++) {
		if (g->sw[i].cpu != c)
			continue;
		if (g->sw[i].tsc > tsc)
			break;
		*cur = g->sw[i].next;
		*next = i + 1;
	}
	return *cur;
}

static int decode(const struct ptg_gen *g, unsigned c, struct pt_insn_decoder *dec,
		  struct ptg_check *r, size_t *k)
{
	const struct ptg_cpu *cpu = &g->cpu[c];
	int status = pt_insn_sync_forward(dec), sw_thread = -1;
	size_t sw_next = 0;
	/* With CYC the time is exact; otherwise it may lag by an MTC period. */
	uint64_t enable_tsc = 0,
		 slack = g->cfg->pkt.cyc ? 0 : (uint64_t)g->cfg->pkt.art_ratio << g->cfg->pkt.mtc_freq;

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
			} else if (ev.type == ptev_enabled) {
				r->enables++;
				if (ev.has_tsc)
					enable_tsc = ev.tsc;
			}
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
		if (enable_tsc && cpu->seq[*k - 1].time_known) {
			uint64_t want = cpu->seq[*k - 1].tsc;

			if (enable_tsc > want || want - enable_tsc > slack)
				return fail(r, "instruction %zu: enabled at time %" PRIu64
					    ", true time %" PRIu64, r->decoded - 1, enable_tsc, want);
			r->timed++;
			if (want - enable_tsc > r->max_lag)
				r->max_lag = want - enable_tsc;
			/* A decoder gives the enabled stretch to the thread
			 * the sideband names at that time. */
			if (sideband_thread(g, c, enable_tsc, &sw_next, &sw_thread) !=
			    (int)cpu->seq[*k - 1].thread)
				return fail(r, "instruction %zu: the sideband names another thread "
					    "at time %" PRIu64, r->decoded - 1, enable_tsc);
			enable_tsc = 0;
		}
	}
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
