// SPDX-License-Identifier: MIT
/* One logical CPU's PT packet stream, encoded with libipt. */
#include "ptg_pkt.h"

#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

int ptg_pkt_init(struct ptg_pkt *p, const struct ptg_pkt_cfg *cfg)
{
	struct pt_config enc_cfg;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	/* Packets are encoded one at a time into a scratch buffer and then
	 * appended, so the stream can grow without a size known up front. */
	pt_config_init(&enc_cfg);
	enc_cfg.begin = p->scratch;
	enc_cfg.end = p->scratch + sizeof(p->scratch);
	p->enc = pt_alloc_encoder(&enc_cfg);
	return p->enc ? 0 : -ENOMEM;
}

void ptg_pkt_fini(struct ptg_pkt *p)
{
	pt_free_encoder(p->enc);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

static void emit_raw(struct ptg_pkt *p, const struct pt_packet *pkt);

/* Cycle-accurate mode: a CYC with the core cycles since the last one goes
 * before each CYC-eligible packet (CycThresh 0), giving the time of its
 * instruction: for a TNT, its first branch (SDM "Cycle Packet Semantics").
 * Core and TSC run at the same rate here (CBR = nominal ratio), so cycles
 * are TSC ticks. The counter restarts only at a CYC and at TraceEn 0->1
 * (SDM "Cycle Counter": reset when TriggerEn clears), not at a TSC. */
static bool cyc_eligible(enum pt_packet_type t)
{
	return t == ppt_tnt_8 || t == ppt_tnt_64 || t == ppt_tip || t == ppt_tip_pge ||
	       t == ppt_tip_pgd || t == ppt_fup || t == ppt_mode || t == ppt_mtc;
}

/* PKT, for an instruction or event at time AT. */
static void emit_at(struct ptg_pkt *p, const struct pt_packet *pkt, uint64_t at)
{
	if (p->cfg->cyc && !p->in_psb && cyc_eligible(pkt->type) && at > p->cyc_at) {
		struct pt_packet cyc = { .type = ppt_cyc };

		cyc.payload.cyc.value = at - p->cyc_at;
		emit_raw(p, &cyc);
		p->cyc_at = at;
	}
	emit_raw(p, pkt);
}

static void emit(struct ptg_pkt *p, const struct pt_packet *pkt)
{
	emit_at(p, pkt, p->tsc);
}

static void emit_raw(struct ptg_pkt *p, const struct pt_packet *pkt)
{
	int n;

	if (p->err || p->drop)
		return;
	if (pt_enc_sync_set(p->enc, 0) < 0 || (n = pt_enc_next(p->enc, pkt)) < 0) {
		p->err = -EINVAL;
		return;
	}
	if (p->len + (size_t)n > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1 << 16;
		uint8_t *b = realloc(p->buf, cap);

		if (!b) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, p->scratch, (size_t)n);
	p->len += (size_t)n;
}

static void emit_simple(struct ptg_pkt *p, enum pt_packet_type type)
{
	struct pt_packet pkt = { .type = type };

	emit(p, &pkt);
}

static void flush_tnt(struct ptg_pkt *p)
{
	struct pt_packet pkt = { .type = p->ntnt <= 6 ? ppt_tnt_8 : ppt_tnt_64 };

	if (!p->ntnt)
		return;
	pkt.payload.tnt.bit_size = p->ntnt;
	pkt.payload.tnt.payload = p->tnt;
	emit_at(p, &pkt, p->tnt_at);
	p->ntnt = 0;
	p->tnt = 0;
}

/* The compression the hardware uses: the fewest bytes that, applied to the
 * last IP, give @ip (SDM "IP Compression"). */
static enum pt_ip_compression compress(uint64_t last, uint64_t ip)
{
	int64_t sext = (int64_t)(ip << 16) >> 16;

	if ((last >> 16) == (ip >> 16))
		return pt_ipc_update_16;
	if ((last >> 32) == (ip >> 32))
		return pt_ipc_update_32;
	if ((uint64_t)sext == ip)
		return pt_ipc_sext_48;
	return pt_ipc_full;
}

static void emit_ip(struct ptg_pkt *p, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet pkt = { .type = type };

	pkt.payload.ip.ipc = compress(p->last_ip, ip);
	pkt.payload.ip.ip = ip;
	emit(p, &pkt);
	p->last_ip = ip;
}

static uint64_t art(const struct ptg_pkt *p, uint64_t tsc)
{
	return tsc / p->cfg->art_ratio;
}

static void emit_tsc_tma(struct ptg_pkt *p)
{
	struct pt_packet pkt = { .type = ppt_tsc };
	uint64_t a = art(p, p->tsc);

	if (p->drop)
		return;
	pkt.payload.tsc.tsc = p->tsc;
	emit(p, &pkt);
	p->st.tsc++;
	if (!p->cfg->mtc)
		return;
	/* TMA: the ART value at the TSC sample and the TSC ticks since that
	 * ART tick (libipt subtracts the fast counter from the TSC). */
	pkt = (struct pt_packet){ .type = ppt_tma };
	pkt.payload.tma.ctc = (uint16_t)a;
	pkt.payload.tma.fc = (uint16_t)(p->tsc - a * p->cfg->art_ratio);
	emit(p, &pkt);
}

static void emit_cbr(struct ptg_pkt *p)
{
	struct pt_packet pkt = { .type = ppt_cbr };

	pkt.payload.cbr.ratio = p->cfg->cbr;
	emit(p, &pkt);
}

static void emit_mode_exec(struct ptg_pkt *p)
{
	struct pt_packet pkt = { .type = ppt_mode };

	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(p, &pkt);
	p->mode_sent = true;
}

/* PSB+: PSB, TSC, TMA, CBR, and while packets are enabled MODE.Exec and
 * FUP(@ip). Resets Last IP and the RET-compression stack (SDM 36.4.2.2:
 * only CALLs since the last PSB may be compressed). */
static void psb(struct ptg_pkt *p, uint64_t ip)
{
	if (p->drop)
		return;
	flush_tnt(p);
	p->psb_at = p->len;
	p->in_psb = true;
	emit_simple(p, ppt_psb);
	p->last_ip = 0;
	p->rs_n = 0;
	p->mode_sent = false;
	emit_tsc_tma(p);
	emit_cbr(p);
	if (p->enabled) {
		emit_mode_exec(p);
		emit_ip(p, ppt_fup, ip);
	}
	emit_simple(p, ppt_psbend);
	p->in_psb = false;
	p->st.psb++;
}

static bool psb_due(const struct ptg_pkt *p)
{
	return !p->st.psb || p->len - p->psb_at >= p->cfg->psb_period;
}

/* TSC ticks between MTCs: the TSC is exactly art_ratio ART ticks. */
static uint64_t mtc_period(const struct ptg_pkt *p)
{
	return (uint64_t)p->cfg->art_ratio << p->cfg->mtc_freq;
}

void ptg_pkt_time(struct ptg_pkt *p, uint64_t tsc)
{
	uint64_t period = mtc_period(p);

	if (tsc <= p->tsc)
		return;
	while (p->trace_en && p->cfg->mtc && p->next_mtc <= tsc) {
		struct pt_packet pkt = { .type = ppt_mtc };

		p->tsc = p->next_mtc;
		/* With CYC, packets are in time order (SDM "Cycle Packet
		 * Semantics"): the TNT holding earlier branches goes first. */
		if (p->cfg->cyc)
			flush_tnt(p);
		pkt.payload.mtc.ctc = (uint8_t)(p->next_mtc / period);
		emit(p, &pkt);
		p->st.mtc++;
		p->next_mtc += period;
	}
	p->tsc = tsc;
}

void ptg_pkt_trace_on(struct ptg_pkt *p)
{
	p->trace_en = true;
	p->cyc_at = p->tsc;
	p->next_mtc = (p->tsc / mtc_period(p) + 1) * mtc_period(p);
	if (psb_due(p)) {
		psb(p, 0);
	} else {
		emit_tsc_tma(p);
		/* SDM "CBR packet": also sent after enabling packet generation.
		 * libipt restarts its CYC calibration at a CBR outside PSB+;
		 * without one, its first ratio after an enable spanned the time
		 * trace was off, when cycles are not counted. */
		emit_cbr(p);
	}
}

void ptg_pkt_trace_off(struct ptg_pkt *p)
{
	flush_tnt(p);
	p->trace_en = false;
}

void ptg_pkt_maybe_psb(struct ptg_pkt *p, uint64_t ip)
{
	if (psb_due(p))
		psb(p, ip);
}

void ptg_pkt_tnt(struct ptg_pkt *p, bool taken)
{
	if (!p->ntnt)
		p->tnt_at = p->tsc;
	p->tnt = p->tnt << 1 | taken;
	p->st.tnt_bits++;
	if (++p->ntnt == p->cfg->tnt_max)
		flush_tnt(p);
}

void ptg_pkt_tip(struct ptg_pkt *p, uint64_t ip)
{
	flush_tnt(p);
	emit_ip(p, ppt_tip, ip);
	p->st.tip++;
}

void ptg_pkt_call(struct ptg_pkt *p, uint64_t ret)
{
	/* A full stack drops its oldest entry. */
	p->rs[p->rs_top] = ret;
	p->rs_top = (p->rs_top + 1) % PTG_RETSTACK;
	if (p->rs_n < PTG_RETSTACK)
		p->rs_n++;
}

void ptg_pkt_ret(struct ptg_pkt *p, uint64_t target)
{
	unsigned top = (p->rs_top + PTG_RETSTACK - 1) % PTG_RETSTACK;

	/* An uncompressed RET leaves the stack alone: libipt pops only on a
	 * compressed one (see docs/ptgen.md, "RET compression"). */
	if (p->cfg->ret_compression && p->rs_n && p->rs[top] == target) {
		p->rs_top = top;
		p->rs_n--;
		ptg_pkt_tnt(p, true);
		return;
	}
	ptg_pkt_tip(p, target);
}

void ptg_pkt_pge(struct ptg_pkt *p, uint64_t ip)
{
	flush_tnt(p);
	if (!p->mode_sent)
		emit_mode_exec(p);
	emit_ip(p, ppt_tip_pge, ip);
	p->enabled = true;
	p->st.pge++;
}

void ptg_pkt_pgd(struct ptg_pkt *p, uint64_t async_ip)
{
	struct pt_packet pkt = { .type = ppt_tip_pgd };

	flush_tnt(p);
	if (async_ip) {
		emit_ip(p, ppt_fup, async_ip);
		p->st.fup++;
	}
	/* Suppressed IP: Last IP is left as it is (SDM "IP Compression"). */
	pkt.payload.ip.ipc = pt_ipc_suppressed;
	emit(p, &pkt);
	p->enabled = false;
	p->st.pgd++;
}

void ptg_pkt_async(struct ptg_pkt *p, uint64_t from, uint64_t to)
{
	flush_tnt(p);
	emit_ip(p, ppt_fup, from);
	p->st.fup++;
	ptg_pkt_tip(p, to);
}

void ptg_pkt_ovf_begin(struct ptg_pkt *p)
{
	/* Branches before the overflow still reach the trace. */
	flush_tnt(p);
	p->drop = true;
}

void ptg_pkt_ovf_end(struct ptg_pkt *p, uint64_t ip)
{
	/* TNT bits buffered during the overflow are lost with it. */
	p->drop = false;
	p->time_lost = true;
	p->ntnt = 0;
	p->tnt = 0;
	emit_simple(p, ppt_ovf);
	p->st.ovf++;
	/* Nothing before the overflow can be compressed against: restart IP
	 * and RET compression as after a PSB. */
	p->last_ip = 0;
	p->rs_n = 0;
	if (p->enabled) {
		emit_ip(p, ppt_fup, ip);
		p->st.fup++;
	}
}
