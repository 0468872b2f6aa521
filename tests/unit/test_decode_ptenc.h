/* SPDX-License-Identifier: MIT */
/*
 * Writing small PT streams for tests with libipt's packet encoder: the
 * packets the hardware would emit for a given path through known code.
 */
#ifndef TEST_DECODE_PTENC_H
#define TEST_DECODE_PTENC_H

#include "../lib/mt_test.h"

#include <intel-pt.h>

struct ptenc {
	uint8_t buf[4096];
	struct pt_encoder *enc;
	size_t len;
};

static inline void ptenc_packet(struct ptenc *e, const struct pt_packet *p)
{
	int n = pt_enc_next(e->enc, p);

	MT_ASSERT_MSG(n > 0, "pt_enc_next: %s", pt_errstr(pt_errcode(n)));
	e->len += (size_t)n;
}

static inline void ptenc_simple(struct ptenc *e, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };

	ptenc_packet(e, &p);
}

static inline void ptenc_ip(struct ptenc *e, enum pt_packet_type type, uint64_t ip, enum pt_ip_compression ipc)
{
	struct pt_packet p = { .type = type };

	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	ptenc_packet(e, &p);
}

static inline void ptenc_tsc(struct ptenc *e, uint64_t tsc)
{
	struct pt_packet p = { .type = ppt_tsc };

	p.payload.tsc.tsc = tsc;
	ptenc_packet(e, &p);
}

/* A taken/not-taken sequence; BITS[0] is the first branch ('1' taken). */
static inline void ptenc_tnt(struct ptenc *e, const char *bits)
{
	struct pt_packet p = { .type = ppt_tnt_8 };
	size_t n = strlen(bits);

	MT_ASSERT(n > 0 && n <= 6);
	for (size_t i = 0; i < n; i++)
		p.payload.tnt.payload = p.payload.tnt.payload << 1 | (bits[i] == '1');
	p.payload.tnt.bit_size = (uint8_t)n;
	ptenc_packet(e, &p);
}

static inline void ptenc_init(struct ptenc *e)
{
	struct pt_config cfg;

	memset(e, 0, sizeof(*e));
	pt_config_init(&cfg);
	cfg.begin = e->buf;
	cfg.end = e->buf + sizeof(e->buf);
	e->enc = pt_alloc_encoder(&cfg);
	MT_ASSERT(e->enc);
}

static inline void ptenc_mode64(struct ptenc *e)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	ptenc_packet(e, &p);
}

/* PSB+ at TSC; tracing is on at IP, or off when IP is 0 (64-bit code). */
static inline void ptenc_psb(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	ptenc_simple(e, ppt_psb);
	ptenc_tsc(e, tsc);
	if (ip)
		ptenc_ip(e, ppt_fup, ip, pt_ipc_sext_48);
	ptenc_mode64(e);
	ptenc_simple(e, ppt_psbend);
}

/* A new stream starting with PSB+ (see ptenc_psb()). */
static inline void ptenc_begin(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	ptenc_init(e);
	ptenc_psb(e, tsc, ip);
}

static inline void ptenc_end(struct ptenc *e)
{
	pt_free_encoder(e->enc);
	e->enc = NULL;
}

#endif
