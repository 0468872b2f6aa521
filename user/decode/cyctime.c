// SPDX-License-Identifier: MIT
/* Exact cycle-accurate times from the packets; see cyctime.h. */
#include "decode/cyctime.h"
#include "decode/ptquick.h"

#include <stdbool.h>
#include <stdlib.h>

struct mt_cyctime {
	/* Most packets are read from the window's bytes (ptquick.h), the
	 * rest by libipt's decoder. NULL: no more packets. */
	struct pt_packet_decoder *pkt;
	const uint8_t *bytes;
	size_t len;
	uint64_t base;		/* stream offset of the window's first byte */
	uint64_t sync;		/* where libipt's decoder last synced (stream offset) */
	/* Stream offsets of the last packet read and the next. */
	uint64_t last, next;
	/* A window going on from the last re-reads the PSB+ it starts with:
	 * offsets before this were read there, and are no step back. */
	uint64_t reread;
	struct mt_cyc_chain c;
	uint8_t nom;
	/* The chain kept where the reading stood at mark (mt_cyctime_mark()). */
	uint64_t mark;
	struct mt_cyc_chain at_mark;
	bool marked;
	/* Resumed (mt_cyctime_resume()): the next window goes on, first
	 * reading up to resume_to. */
	bool resumed;
	uint64_t resume_to;
};

static void restart(struct mt_cyctime *t, uint64_t tsc)
{
	t->c.tsc = t->c.floor = tsc;
	t->c.frac = 0;
}

static void set_cbr(struct mt_cyctime *t, uint8_t cbr)
{
	if (!cbr)
		return;
	if (t->c.cbr)
		t->c.frac = t->c.frac * cbr / t->c.cbr;
	t->c.cbr = cbr;
}

static void add_cycles(struct mt_cyctime *t, uint64_t cycles)
{
	unsigned __int128 n = (unsigned __int128)cycles * t->nom + t->c.frac;

	if (!t->c.tsc || !t->c.cbr) {
		t->c.tsc = 0;
		return;
	}
	t->c.tsc += (uint64_t)(n / t->c.cbr);
	t->c.frac = (uint64_t)(n % t->c.cbr);
	/* Cycles the counter missed (a sleep state) cannot make a time
	 * earlier than a TSC packet before it. */
	if (t->c.tsc < t->c.floor) {
		t->c.tsc = t->c.floor;
		t->c.frac = 0;
	}
}

static void apply(struct mt_cyctime *t, const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_psb:
		t->c.in_psb = true;
		t->c.psb_on = false;
		t->c.psb_tsc = 0;
		break;
	case ppt_psbend:
		t->c.in_psb = false;
		if (t->c.psb_tsc && (!t->c.psb_on || !t->c.tsc))
			restart(t, t->c.psb_tsc);
		else if (t->c.psb_tsc)
			t->c.floor = t->c.psb_tsc;
		break;
	case ppt_fup:
		t->c.psb_on |= t->c.in_psb;
		break;
	case ppt_tsc:
		if (t->c.in_psb)
			t->c.psb_tsc = p->payload.tsc.tsc;
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
		t->c.tsc = 0;
		break;
	default:
		break;
	}
	if (t->c.in_psb)
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
		t->c.at = t->c.tsc;
	}
}

/* Continues at the next PSB (at OFF when given): the chain is lost. */
static void resync(struct mt_cyctime *t, uint64_t off, bool at_off)
{
	t->c.tsc = t->c.at = 0;
	t->c.in_psb = false;
	/* The chain kept at the mark is that of a reading given up. */
	t->marked = false;
	if (t->pkt && (at_off ? pt_pkt_sync_set(t->pkt, off - t->base)
			      : pt_pkt_sync_forward(t->pkt)) >= 0 &&
	    !pt_pkt_get_offset(t->pkt, &t->next)) {
		t->next += t->base;
		t->last = t->sync = t->next;
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
	t->mark = UINT64_MAX;
	return t;
}

void mt_cyctime_window(struct mt_cyctime *t, const struct pt_config *cfg, uint64_t base)
{
	bool resumed = t->resumed, on = (t->pkt || resumed) && t->next >= base;

	t->resumed = false;
	pt_pkt_free_decoder(t->pkt);
	t->pkt = pt_pkt_alloc_decoder(cfg);
	t->bytes = cfg->begin;
	t->len = (size_t)(cfg->end - cfg->begin);
	t->base = base;
	t->reread = on ? t->next : 0;
	/* Where the last window left off, with the chain: or lost. */
	if (on && t->pkt && pt_pkt_sync_set(t->pkt, t->next - base) >= 0) {
		t->sync = t->next;
		if (resumed) {
			mt_cyctime_read_to(t, t->resume_to);
			t->reread = t->next;
		}
		return;
	}
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
		uint64_t off = t->next - t->base;
		size_t len;

		if (t->next == t->mark) {
			t->at_mark = t->c;
			t->marked = true;
		}
		t->last = t->next;
		if (mt_ptq_read(t->pkt, t->bytes, t->len, off, &p, &len) < 0) {
			/* On as libipt reading alone from its sync point would. */
			mt_ptq_walk_to(t->pkt, t->sync - t->base, off);
			resync(t, 0, false);
		} else {
			t->next += len;
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
	return t->c.at;
}

void mt_cyctime_mark(struct mt_cyctime *t, uint64_t off)
{
	t->mark = off;
	t->marked = false;
}

bool mt_cyctime_marked(const struct mt_cyctime *t, uint64_t off, struct mt_cyc_chain *c)
{
	/* A reading that stopped for good is lost again at the next window. */
	if (!t->pkt || t->mark != off)
		return false;
	if (t->next == off)
		*c = t->c;
	else if (t->marked)
		*c = t->at_mark;
	else
		return false;
	return true;
}

bool mt_cyc_chain_equal(const struct mt_cyc_chain *x, const struct mt_cyc_chain *y)
{
	return x->at == y->at && x->tsc == y->tsc && x->frac == y->frac && x->floor == y->floor &&
	       x->psb_tsc == y->psb_tsc && x->cbr == y->cbr && x->in_psb == y->in_psb &&
	       x->psb_on == y->psb_on;
}

void mt_cyctime_resume(struct mt_cyctime *t, const struct mt_cyc_chain *c, uint64_t off,
			uint64_t to)
{
	t->c = *c;
	t->next = off;
	t->last = 0;
	t->resumed = true;
	t->resume_to = to;
}

uint64_t mt_cyctime_next(const struct mt_cyctime *t)
{
	return t->next;
}
