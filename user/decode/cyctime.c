// SPDX-License-Identifier: MIT
/* Exact cycle-accurate times from the packets; see cyctime.h. */
#include "decode/cyctime.h"

#include <stdbool.h>
#include <stdlib.h>

struct mt_cyctime {
	struct pt_packet_decoder *pkt;	/* NULL: no more packets */
	uint64_t base;		/* stream offset of the window's first byte */
	/* Stream offsets of the last packet read and the next. */
	uint64_t last, next;
	/* A window going on from the last re-reads the PSB+ it starts with:
	 * offsets before this were read there, and are no step back. */
	uint64_t reread;
	uint64_t at;		/* the time from the last packet not read ahead over */
	uint64_t tsc;		/* time of the last CYC; 0: unknown */
	uint64_t frac;		/* and its fraction, in 1/cbr ticks */
	uint64_t floor;		/* the last TSC packet: no later time is earlier */
	uint64_t psb_tsc;	/* the TSC of the PSB+ being read */
	uint8_t cbr, nom;
	bool in_psb, psb_on;	/* in PSB+; it holds a FUP (packets on) */
};

static void restart(struct mt_cyctime *t, uint64_t tsc)
{
	t->tsc = t->floor = tsc;
	t->frac = 0;
}

static void set_cbr(struct mt_cyctime *t, uint8_t cbr)
{
	if (!cbr)
		return;
	if (t->cbr)
		t->frac = t->frac * cbr / t->cbr;
	t->cbr = cbr;
}

static void add_cycles(struct mt_cyctime *t, uint64_t cycles)
{
	unsigned __int128 n = (unsigned __int128)cycles * t->nom + t->frac;

	if (!t->tsc || !t->cbr) {
		t->tsc = 0;
		return;
	}
	t->tsc += (uint64_t)(n / t->cbr);
	t->frac = (uint64_t)(n % t->cbr);
	/* Cycles the counter missed (a sleep state) cannot make a time
	 * earlier than a TSC packet before it. */
	if (t->tsc < t->floor) {
		t->tsc = t->floor;
		t->frac = 0;
	}
}

static void apply(struct mt_cyctime *t, const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_psb:
		t->in_psb = true;
		t->psb_on = false;
		t->psb_tsc = 0;
		break;
	case ppt_psbend:
		t->in_psb = false;
		if (t->psb_tsc && (!t->psb_on || !t->tsc))
			restart(t, t->psb_tsc);
		else if (t->psb_tsc)
			t->floor = t->psb_tsc;
		break;
	case ppt_fup:
		t->psb_on |= t->in_psb;
		break;
	case ppt_tsc:
		if (t->in_psb)
			t->psb_tsc = p->payload.tsc.tsc;
		else
			restart(t, p->payload.tsc.tsc);
		break;
	case ppt_cbr:
		set_cbr(t, p->payload.cbr.ratio);
		break;
	case ppt_cyc:
		add_cycles(t, p->payload.cyc.value);
		break;
	case ppt_ovf:
		t->tsc = 0;
		break;
	default:
		break;
	}
	if (t->in_psb)
		return;
	switch (p->type) {
	case ppt_pad:
	case ppt_cyc:
	case ppt_mtc:
	case ppt_tsc:
	case ppt_tma:
	case ppt_fup:
		break;
	default:
		t->at = t->tsc;
	}
}

/* Continues at the next PSB (at OFF when given): the chain is lost. */
static void resync(struct mt_cyctime *t, uint64_t off, bool at_off)
{
	t->tsc = t->at = 0;
	t->in_psb = false;
	if (t->pkt && (at_off ? pt_pkt_sync_set(t->pkt, off - t->base)
			      : pt_pkt_sync_forward(t->pkt)) >= 0 &&
	    !pt_pkt_get_offset(t->pkt, &t->next)) {
		t->next += t->base;
		t->last = t->next;
		return;
	}
	pt_pkt_free_decoder(t->pkt);
	t->pkt = NULL;
}

struct mt_cyctime *mt_cyctime_new(const struct pt_config *cfg)
{
	struct mt_cyctime *t;

	if (!cfg->nom_freq || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->nom = cfg->nom_freq;
	return t;
}

void mt_cyctime_window(struct mt_cyctime *t, const struct pt_config *cfg, uint64_t base)
{
	bool on = t->pkt && t->next >= base;

	pt_pkt_free_decoder(t->pkt);
	t->pkt = pt_pkt_alloc_decoder(cfg);
	t->base = base;
	t->reread = on ? t->next : 0;
	/* Where the last window left off, with the chain: or lost. */
	if (on && t->pkt && pt_pkt_sync_set(t->pkt, t->next - base) >= 0)
		return;
	resync(t, 0, false);
}

void mt_cyctime_free(struct mt_cyctime *t)
{
	if (t)
		pt_pkt_free_decoder(t->pkt);
	free(t);
}

void mt_cyctime_read_to(struct mt_cyctime *t, uint64_t pos)
{
	struct pt_packet p;

	while (t->pkt && t->next < pos) {
		t->last = t->next;
		if (pt_pkt_next(t->pkt, &p, sizeof(p)) < 0 || pt_pkt_get_offset(t->pkt, &t->next)) {
			resync(t, 0, false);
		} else {
			t->next += t->base;
			apply(t, &p);
		}
	}
}

uint64_t mt_cyctime_at(struct mt_cyctime *t, uint64_t pos, const uint64_t *psbs, size_t npsbs)
{
	if (pos <= t->last && pos >= t->reread) {
		/* The block decoder went back (a resync): from the last PSB
		 * before it, which is in the window (windows start at PSBs). */
		size_t i = npsbs;

		while (i && psbs[i - 1] > pos)
			i--;
		if (!i || psbs[i - 1] < t->base)
			return 0;
		resync(t, psbs[i - 1], true);
	}
	mt_cyctime_read_to(t, pos);
	return t->at;
}
