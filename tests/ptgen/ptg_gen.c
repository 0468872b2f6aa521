// SPDX-License-Identifier: MIT
/* Generator: threads -> virtual CPUs -> PT packets, sideband, ground truth. */
#include "ptg_gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct ptg_tstate {
	size_t pos;		/* next instruction */
	size_t async_next;	/* next entry of the thread's async list */
	size_t map_next;	/* no map event of the thread before this one */
	uint64_t ready;		/* runnable from this time on */
	bool created, running, done;
};

enum { STEP_OK, STEP_FROZEN };

void ptg_gen_cfg_default(struct ptg_gen_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pkt.psb_period = 4096;	/* PSBFreq 1 */
	cfg->pkt.tnt_max = 47;
	cfg->pkt.ret_compression = true;
	cfg->pkt.mtc = true;
	cfg->pkt.mtc_freq = 3;
	/* 2 GHz core = TSC (ratio 20 x 100 MHz), 25 MHz crystal: 80 TSC
	 * ticks per ART tick, an MTC every 640 ticks. */
	cfg->pkt.cbr = 20;
	cfg->pkt.art_ratio = 80;
	cfg->ncpu = 1;
	cfg->slice_insns = 3000;
	cfg->switch_pct = 30;
	cfg->syscall_cycles = 1500;
	cfg->irq_cycles = 800;
	cfg->switch_cycles = 2000;
	cfg->tsc0 = 1000000;
	cfg->seed = 1;
	cfg->record_seq = true;
}

static uint64_t rnd(struct ptg_gen *g)
{
	/* xorshift64: deterministic scheduling for a given seed. */
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return p;
	c = *cap ? *cap * 2 : 256;
	q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static int add_seq(struct ptg_cpu *cpu, uint32_t t, size_t index, bool lost)
{
	struct ptg_pos *s = grow(cpu->seq, &cpu->capseq, cpu->nseq, sizeof(*s));

	if (!s)
		return -ENOMEM;
	cpu->seq = s;
	cpu->seq[cpu->nseq++] =
		(struct ptg_pos){ t, (uint32_t)index, lost, !cpu->pkt.time_lost, cpu->pkt.tsc };
	return 0;
}

/* Notes the sequence position behind a PSB that was just written. */
static int mark_psb(struct ptg_cpu *cpu, size_t psb_before)
{
	struct ptg_psb_mark *m;

	if (cpu->pkt.st.psb == psb_before)
		return 0;
	m = grow(cpu->psb, &cpu->cappsb, cpu->npsb, sizeof(*m));
	if (!m)
		return -ENOMEM;
	cpu->psb = m;
	cpu->psb[cpu->npsb++] = (struct ptg_psb_mark){ cpu->pkt.psb_at, cpu->nseq };
	return 0;
}

static int add_switch(struct ptg_gen *g, unsigned c, int prev, int next, uint64_t tsc,
		      bool preempted)
{
	struct ptg_switch *s = grow(g->sw, &g->capsw, g->nsw, sizeof(*s));

	if (!s)
		return -ENOMEM;
	g->sw = s;
	g->sw[g->nsw++] = (struct ptg_switch){ tsc, c, prev, next, preempted };
	return 0;
}

static uint64_t next_ip(const struct ptg_gen *g, int t)
{
	const struct ptg_thread *T = &g->thr[t];
	const struct ptg_tstate *s = &g->ts[t];

	if (s->async_next < T->nasync && T->async[s->async_next].index == s->pos)
		return T->async[s->async_next].resume_ip;
	return s->pos < T->n ? T->ip[s->pos] : T->end_ip;
}

static void truth(const struct ptg_gen *g, const char *what, int t, size_t index, uint64_t tsc,
		  uint64_t from, uint64_t to)
{
	if (g->cfg->truth)
		fprintf(g->cfg->truth, "%s %d %zu %" PRIu64 " %#" PRIx64 " %#" PRIx64 "\n", what,
			(int)g->thr[t].tid, index, tsc, from, to);
}

/* An internal buffer overflow starts after the current instruction. A
 * decoder stops at the last packet before it, so the instructions since
 * then are as lost as those inside it. */
static void overflow_begin(struct ptg_cpu *cpu, size_t len)
{
	ptg_pkt_ovf_begin(&cpu->pkt);
	for (size_t k = cpu->last_pkt_seq; k < cpu->nseq; k++)
		cpu->seq[k].lost = true;
	/* Counted down before each instruction; it resolves at 1. */
	cpu->ovf_left = len + 1;
}

static void overflow_end(struct ptg_cpu *cpu, uint64_t ip)
{
	if (!cpu->pkt.drop)
		return;
	cpu->ovf_left = 0;
	ptg_pkt_ovf_end(&cpu->pkt, ip);
}

static int switch_in(struct ptg_gen *g, unsigned c, int t)
{
	struct ptg_cpu *cpu = &g->cpu[c];
	size_t psb = cpu->pkt.st.psb;

	if (g->ts[t].ready > cpu->pkt.tsc) {
		/* The CPU idles until the thread is ready: the last one left
		 * now, not when the next comes. */
		if (cpu->prev >= 0 && add_switch(g, c, cpu->prev, -1, cpu->pkt.tsc,
						 cpu->prev_preempted))
			return -ENOMEM;
		cpu->prev = -1;
		cpu->prev_preempted = false;
		ptg_pkt_time(&cpu->pkt, g->ts[t].ready);
	}
	if (add_switch(g, c, cpu->prev, t, cpu->pkt.tsc, cpu->prev_preempted))
		return -ENOMEM;
	cpu->cur = t;
	cpu->slice_left = g->cfg->slice_insns;
	g->ts[t].running = true;
	ptg_pkt_trace_on(&cpu->pkt);
	return mark_psb(cpu, psb);
}

static void switch_out(struct ptg_gen *g, unsigned c, bool preempted)
{
	struct ptg_cpu *cpu = &g->cpu[c];
	int t = cpu->cur;

	/* Clearing TraceEn drains the internal buffers: an overflow in
	 * progress resolves (packets are off here, so no FUP follows). */
	overflow_end(cpu, 0);
	ptg_pkt_trace_off(&cpu->pkt);
	g->ts[t].running = false;
	cpu->prev = t;
	cpu->cur = -1;
	cpu->prev_preempted = preempted;
	ptg_pkt_time(&cpu->pkt, cpu->pkt.tsc + g->cfg->switch_cycles);
	/* The switch record (written when the CPU takes its next task or
	 * idles, now) is where the thread leaves: Linux runs it elsewhere
	 * only after that. */
	g->ts[t].ready = cpu->pkt.tsc + 1;
}

/* Trigger: the probe's int3 ends packet generation on this CPU (FUP at the
 * probe, TIP.PGD); the other CPUs are stopped by an interrupt wherever
 * they are. */
static void freeze(struct ptg_gen *g, unsigned c, int t, uint64_t ip)
{
	struct ptg_cpu *tc = &g->cpu[c];

	g->trigger = (struct ptg_trigger){ true, c, (uint32_t)t, g->ts[t].pos, tc->pkt.tsc, ip };
	truth(g, "trigger", t, g->ts[t].pos, tc->pkt.tsc, ip, ip);
	overflow_end(tc, ip);
	ptg_pkt_pgd(&tc->pkt, ip);
	for (unsigned k = 0; k < g->cfg->ncpu; k++) {
		struct ptg_cpu *cpu = &g->cpu[k];

		if (cpu->cur >= 0)
			overflow_end(cpu, next_ip(g, cpu->cur));
		if (cpu->cur >= 0 && cpu->pkt.enabled)
			ptg_pkt_pgd(&cpu->pkt, next_ip(g, cpu->cur));
		ptg_pkt_trace_off(&cpu->pkt);
	}
}

static void threads_created(struct ptg_gen *g, int parent, size_t index, uint64_t tsc)
{
	for (size_t k = 0; k < g->nthr; k++) {
		if (g->thr[k].parent == parent && g->thr[k].parent_index == index) {
			g->ts[k].created = true;
			g->ts[k].ready = tsc;
		}
	}
}

static int bad_flow(const struct ptg_gen *g, int t, size_t i, const struct ptg_insn *in,
		    uint64_t nip)
{
	fprintf(stderr, "ptgen: thread %d insn %zu: %s at %#" PRIx64 " continues at %#" PRIx64
		", which it cannot reach\n", (int)g->thr[t].tid, i, ptg_iclass_name(in->iclass),
		in->ip, nip);
	return -EINVAL;
}

/* The packets of one instruction's change of flow. */
static int flow_packets(struct ptg_gen *g, struct ptg_pkt *p, int t, size_t i,
			const struct ptg_insn *in, uint64_t nip)
{
	uint64_t fall = in->ip + in->size;

	switch (in->iclass) {
	case PTG_OTHER:
		return 0;
	case PTG_JCC:
		if (nip != in->target && nip != fall)
			return bad_flow(g, t, i, in, nip);
		ptg_pkt_tnt(p, nip == in->target && nip != fall);
		return 0;
	case PTG_JMP:
	case PTG_CALL:
		if (nip != in->target)
			return bad_flow(g, t, i, in, nip);
		/* Zero-length calls are not pushed (SDM 36.4.2.2). */
		if (in->iclass == PTG_CALL && in->target != fall)
			ptg_pkt_call(p, fall);
		break;
	case PTG_JMP_IND:
		ptg_pkt_tip(p, nip);
		break;
	case PTG_CALL_IND:
		ptg_pkt_tip(p, nip);
		ptg_pkt_call(p, fall);
		break;
	case PTG_RET:
		ptg_pkt_ret(p, nip);
		break;
	case PTG_FAR:
		if (g->cfg->kernel_traced) {
			/* One to the next instruction (VMCALL, whose VM exit
			 * and entry are out of sight) nests nothing. */
			ptg_pkt_tip(p, nip);
			truth(g, nip == fall ? "far-next" : in->far_ret ? "far-ret" : "far-call", t,
			      i, p->tsc, in->ip, nip);
			return 0;
		}
		/* fall through */
	case PTG_FAULT:
		ptg_pkt_pgd(p, 0);
		ptg_pkt_time(p, p->tsc + g->cfg->syscall_cycles);
		threads_created(g, t, i, p->tsc);
		return 0;
	}
	if (in->iclass == PTG_CALL || in->iclass == PTG_CALL_IND)
		truth(g, "call", t, i, p->tsc, in->ip, nip);
	else if (in->iclass == PTG_RET)
		truth(g, "ret", t, i, p->tsc, in->ip, nip);
	return 0;
}

/* Instruction @i of thread @t, a system call, ran at @tsc: the mappings
 * it made or removed take that time (events are in trace order). */
static void time_map_events(struct ptg_gen *g, int t, size_t i, uint64_t tsc)
{
	struct ptg_map_event *ev = g->cfg->map_events;
	size_t *k = &g->ts[t].map_next;

	for (; *k < g->cfg->nmap_events; (*k)++) {
		if (ev[*k].thread != t)
			continue;
		if (ev[*k].index > i)
			break;
		if (ev[*k].index == i)
			ev[*k].tsc = tsc;
	}
}

static int step(struct ptg_gen *g, unsigned c)
{
	struct ptg_cpu *cpu = &g->cpu[c];
	struct ptg_pkt *p = &cpu->pkt;
	int t = cpu->cur, err;
	const struct ptg_thread *T = &g->thr[t];
	struct ptg_tstate *s = &g->ts[t];
	size_t i = s->pos, psb = p->st.psb, len, bits;
	uint64_t ip = T->ip[i];
	struct ptg_insn in;
	bool rep, async;

	if (ptg_insn_get(g->ic, ip, &in))
		return -EINVAL;
	/* Single-stepping stops after each iteration of a REP string
	 * instruction; PT sees one instruction. */
	rep = in.iclass == PTG_OTHER && i && T->ip[i - 1] == ip &&
	      !(s->async_next < T->nasync && T->async[s->async_next].index == i);
	if (cpu->ovf_left && !rep && cpu->ovf_left-- == 1)
		overflow_end(cpu, ip);
	if (!p->enabled)
		ptg_pkt_pge(p, ip);
	else if (!rep && !p->drop)
		ptg_pkt_maybe_psb(p, ip);
	if ((err = mark_psb(cpu, psb)))
		return err;
	if (g->cfg->trigger_ip == ip && !rep && ++g->hits == g->cfg->trigger_hit) {
		freeze(g, c, t, ip);
		return STEP_FROZEN;
	}
	if (g->cfg->record_seq && !rep && (err = add_seq(cpu, (uint32_t)t, i, p->drop)))
		return err;
	ptg_pkt_time(p, p->tsc + 1);
	time_map_events(g, t, i, p->tsc);
	s->pos++;
	g->insns++;
	if (s->pos == T->n && g->cfg->more) {
		/* The next piece, before the packets of this instruction's
		 * flow, which need the instruction that comes next. */
		if ((err = g->cfg->more(g->cfg->more_ctx, (size_t)t)) < 0)
			return err;
		if (err)
			s->pos = s->async_next = 0;
	}
	len = p->len;
	bits = p->st.tnt_bits;
	if ((err = flow_packets(g, p, t, i, &in, next_ip(g, t))))
		return err;
	if (p->len != len || p->st.tnt_bits != bits)
		cpu->last_pkt_seq = cpu->nseq;
	if (g->cfg->ovf_every && !cpu->ovf_left && !(g->insns % g->cfg->ovf_every))
		overflow_begin(cpu, g->cfg->ovf_len);
	async = s->async_next < T->nasync && T->async[s->async_next].index == s->pos;
	if (async) {
		/* A signal is delivered: from user code it is an interrupt
		 * (FUP at the interrupted IP, TIP.PGD); after a syscall,
		 * packets are already off. With the kernel traced, any
		 * interrupt is FUP + TIP to its handler. */
		uint64_t from = T->async[s->async_next].resume_ip;

		if (g->cfg->kernel_traced && p->enabled && s->pos < T->n) {
			ptg_pkt_async(p, from, T->ip[s->pos]);
			truth(g, "irq", t, s->pos, p->tsc, from, T->ip[s->pos]);
		} else {
			if (p->enabled)
				ptg_pkt_pgd(p, from);
			ptg_pkt_time(p, p->tsc + g->cfg->irq_cycles);
		}
		s->async_next++;
	}
	if (s->pos == T->n) {
		/* Exited (the exit syscall disabled packets), or tracing
		 * stopped here: the freeze interrupt. */
		overflow_end(cpu, T->end_ip);
		if (p->enabled)
			ptg_pkt_pgd(p, T->end_ip);
		s->done = true;
		switch_out(g, c, false);
	} else if (in.iclass == PTG_FAR && !g->cfg->kernel_traced &&
		   rnd(g) % 100 < g->cfg->switch_pct) {
		switch_out(g, c, false);
	} else if (!--cpu->slice_left && T->ip[s->pos] == ip && in.iclass == PTG_OTHER) {
		/* Not in the middle of a REP instruction: that would show
		 * it twice. */
		cpu->slice_left = 1;
	} else if (!cpu->slice_left) {
		if (p->enabled)
			ptg_pkt_pgd(p, T->ip[s->pos]);
		ptg_pkt_time(p, p->tsc + g->cfg->irq_cycles);
		switch_out(g, c, true);
	}
	return p->err ? p->err : STEP_OK;
}

/* Picks the runnable thread that has waited longest; -1 if none. */
static int pick(const struct ptg_gen *g)
{
	int best = -1;

	for (size_t k = 0; k < g->nthr; k++) {
		const struct ptg_tstate *s = &g->ts[k];

		if (s->created && !s->done && !s->running &&
		    (best < 0 || s->ready < g->ts[best].ready))
			best = (int)k;
	}
	return best;
}

static bool all_done(const struct ptg_gen *g)
{
	for (size_t k = 0; k < g->nthr; k++)
		if (!g->ts[k].done)
			return false;
	return true;
}

/* A CPU with nothing to run idles until the next CPU's time. */
static int idle(struct ptg_gen *g, unsigned c)
{
	struct ptg_cpu *cpu = &g->cpu[c];
	uint64_t until = UINT64_MAX;

	if (cpu->prev >= 0) {
		if (add_switch(g, c, cpu->prev, -1, cpu->pkt.tsc, cpu->prev_preempted))
			return -ENOMEM;
		cpu->prev = -1;
		cpu->prev_preempted = false;
	}
	for (unsigned k = 0; k < g->cfg->ncpu; k++)
		if (g->cpu[k].cur >= 0 && g->cpu[k].pkt.tsc < until)
			until = g->cpu[k].pkt.tsc;
	if (until == UINT64_MAX) {
		fprintf(stderr, "ptgen: no thread can run (a thread's creator is missing)\n");
		return -EINVAL;
	}
	ptg_pkt_time(&cpu->pkt, (until > cpu->pkt.tsc ? until : cpu->pkt.tsc) + 1);
	return 0;
}

static int cmp_switch_time(const void *a, const void *b)
{
	const struct ptg_switch *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

int ptg_gen_check_switches(const struct ptg_gen *g)
{
	struct ptg_switch *sw = malloc((g->nsw ? g->nsw : 1) * sizeof(*sw));
	int *on = malloc((g->nthr ? g->nthr : 1) * sizeof(*on));
	uint64_t *out = calloc(g->nthr ? g->nthr : 1, sizeof(*out));
	int err = 0;

	if (!sw || !on || !out) {
		err = -ENOMEM;
		goto done;
	}
	memcpy(sw, g->sw, g->nsw * sizeof(*sw));
	qsort(sw, g->nsw, sizeof(*sw), cmp_switch_time);
	for (size_t k = 0; k < g->nthr; k++)
		on[k] = -1;
	for (size_t i = 0; i < g->nsw && !err; i++) {
		const struct ptg_switch *s = &sw[i];

		if (s->prev >= 0 && on[s->prev] != (int)s->cpu)
			err = -EINVAL;
		else if (s->prev >= 0)
			on[s->prev] = -1, out[s->prev] = s->tsc;
		if (!err && s->next >= 0 && (on[s->next] >= 0 || (out[s->next] && out[s->next] >= s->tsc)))
			err = -EINVAL;
		else if (!err && s->next >= 0)
			on[s->next] = (int)s->cpu;
		if (err)
			fprintf(stderr, "ptgen: switch record at %" PRIu64 " on cpu %u (%d -> %d) "
				"contradicts the others\n", s->tsc, s->cpu, s->prev, s->next);
	}
done:
	free(sw);
	free(on);
	free(out);
	return err;
}

/* Keeps what a ToPA ring of ring_size bytes holds at the freeze: the last
 * ring_size bytes written. A decoder can start at the first PSB in them. */
static void cut_ring(struct ptg_gen *g, struct ptg_cpu *cpu)
{
	size_t k = 0;

	if (!g->cfg->ring_size || cpu->pkt.len <= g->cfg->ring_size)
		return;
	cpu->wrapped = true;
	cpu->ring_start = cpu->pkt.len - g->cfg->ring_size;
	while (k < cpu->npsb && cpu->psb[k].offset < cpu->ring_start)
		k++;
	cpu->seq_start = k < cpu->npsb ? cpu->psb[k].seq : cpu->nseq;
}

int ptg_gen_run(struct ptg_gen *g, const struct ptg_gen_cfg *cfg, const struct ptg_thread *thr,
		size_t nthr, struct ptg_insn_cache *ic)
{
	int err = 0;

	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
	g->thr = thr;
	g->nthr = nthr;
	g->ic = ic;
	g->rng = cfg->seed ? cfg->seed : 1;
	if (!cfg->ncpu || !nthr || !cfg->slice_insns || !cfg->pkt.art_ratio || !cfg->pkt.cbr ||
	    (cfg->pkt.tnt_max != 6 && cfg->pkt.tnt_max != 47) || cfg->pkt.psb_period < 64) {
		fprintf(stderr, "ptgen: invalid generator configuration\n");
		return -EINVAL;
	}
	g->cpu = calloc(cfg->ncpu, sizeof(*g->cpu));
	g->ts = calloc(nthr, sizeof(*g->ts));
	if (!g->cpu || !g->ts)
		return -ENOMEM;
	for (unsigned c = 0; c < cfg->ncpu && !err; c++) {
		g->cpu[c].cur = g->cpu[c].prev = -1;
		err = ptg_pkt_init(&g->cpu[c].pkt, &cfg->pkt);
		g->cpu[c].pkt.tsc = cfg->tsc0;
	}
	for (size_t k = 0; k < nthr; k++) {
		/* Threads that existed before the start run from the start. */
		g->ts[k].created = k == 0 || thr[k].parent < 0;
		g->ts[k].ready = cfg->tsc0;
		g->ts[k].done = !thr[k].n;
	}
	while (!err && !all_done(g)) {
		unsigned c = 0;
		int t;

		for (unsigned k = 1; k < cfg->ncpu; k++)
			if (g->cpu[k].pkt.tsc < g->cpu[c].pkt.tsc)
				c = k;
		if (g->cpu[c].cur >= 0) {
			err = step(g, c);
			if (err == STEP_FROZEN) {
				err = 0;
				break;
			}
		} else if ((t = pick(g)) >= 0) {
			err = switch_in(g, c, t);
		} else {
			err = idle(g, c);
		}
	}
	for (unsigned c = 0; c < cfg->ncpu && !err; c++) {
		struct ptg_cpu *cpu = &g->cpu[c];

		if (cpu->prev >= 0 && cpu->cur < 0)
			err = add_switch(g, c, cpu->prev, -1, cpu->pkt.tsc, cpu->prev_preempted);
		cpu->stop_tsc = cpu->pkt.tsc;
		if (!err)
			err = cpu->pkt.err;
		cut_ring(g, cpu);
	}
	return err ? err : ptg_gen_check_switches(g);
}

void ptg_gen_fini(struct ptg_gen *g)
{
	for (unsigned c = 0; g->cpu && c < g->cfg->ncpu; c++) {
		ptg_pkt_fini(&g->cpu[c].pkt);
		free(g->cpu[c].seq);
		free(g->cpu[c].psb);
	}
	free(g->cpu);
	free(g->ts);
	free(g->sw);
	memset(g, 0, sizeof(*g));
}
