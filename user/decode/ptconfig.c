// SPDX-License-Identifier: MIT
/* libipt decoder configuration from a bundle; see ptconfig.h. */
#include "decode/ptconfig.h"
#include "bundle/bundle.h"
#include "util/errmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Family-6 models libipt 2.0.5 rejects with -pte_bad_cpu although later
 * libipt releases know them (Raptor/Meteor/Arrow/Lunar Lake, Emerald and
 * Granite Rapids, Sierra Forest, Grand Ridge). Those releases apply BDM70,
 * SKD022 and, depending on the model, APL11 or SKZ84; 2.0.5 has no SKZ84
 * workaround, so every one of them gets BDM70 + SKD022 + APL11 here. The
 * same set is the best guess for models newer still.
 */
static const uint8_t newer_models[] = {
	0xb7, 0xba, 0xbf, 0xaa, 0xac, 0xbd, 0xc5, 0xc6, 0xcc, 0xd5, 0x8f, 0xcf, 0xad, 0xae,
};

static enum mt_errata_source newer_errata(const struct pt_cpu *cpu, struct pt_errata *e)
{
	memset(e, 0, sizeof(*e));
	e->bdm70 = 1;
	e->skd022 = 1;
	e->apl11 = 1;
	if (cpu->family == 6 && memchr(newer_models, cpu->model, sizeof(newer_models)))
		return MT_ERRATA_NEWER;
	return MT_ERRATA_GUESSED;
}

int mt_decode_pt_config(const struct mt_bundle_cpu_desc *cpu,
			const struct mt_bundle_pt_config_desc *pt, struct pt_config *cfg,
			char *err, size_t errlen)
{
	int src = MT_ERRATA_LIBIPT;
	bool simulated = cpu->vendor != MT_BUNDLE_VENDOR_INTEL &&
			 (pt->flags & MT_BUNDLE_CFG_SIMULATED);
	const char *why = mt_bundle_ctl_undecodable(pt->rtit_ctl);

	if (cpu->vendor != MT_BUNDLE_VENDOR_INTEL && !simulated)
		return mt_errmsg(err, errlen, ENOTSUP,
				 "bundle CPU vendor \"%.16s\" (%u) is not Intel: no PT to decode",
				 cpu->vendor_id, cpu->vendor);
	if (why)
		return mt_errmsg(err, errlen, ENOTSUP, "the PT was recorded with RTIT_CTL %#llx: %s",
				 (unsigned long long)pt->rtit_ctl, why);
	pt_config_init(cfg);
	cfg->cpu.vendor = pcv_intel;
	cfg->cpu.family = cpu->family;
	cfg->cpu.model = cpu->model;
	cfg->cpu.stepping = cpu->stepping;
	if (simulated) {
		/* family 0: libipt's "unknown CPU", no errata */
		cfg->cpu.family = 0;
		cfg->cpu.model = 0;
		cfg->cpu.stepping = 0;
		src = MT_ERRATA_SIMULATED;
	} else if (pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0) {
		src = newer_errata(&cfg->cpu, &cfg->errata);
	}
	cfg->cpuid_0x15_eax = cpu->cpuid_15.eax;
	cfg->cpuid_0x15_ebx = cpu->cpuid_15.ebx;
	cfg->nom_freq = (uint8_t)cpu->max_nonturbo_ratio;
	/* libipt wants the raw RTIT_CTL.MTCFreq field, not the period. */
	cfg->mtc_freq = (uint8_t)MT_RTIT_CTL_MTC_FREQ(pt->rtit_ctl);
	cfg->addr_filter.config.addr_cfg = pt->rtit_ctl >> 32 & 0xffff;
	cfg->addr_filter.addr0_a = pt->addr[0].a;
	cfg->addr_filter.addr0_b = pt->addr[0].b;
	cfg->addr_filter.addr1_a = pt->addr[1].a;
	cfg->addr_filter.addr1_b = pt->addr[1].b;
	cfg->addr_filter.addr2_a = pt->addr[2].a;
	cfg->addr_filter.addr2_b = pt->addr[2].b;
	cfg->addr_filter.addr3_a = pt->addr[3].a;
	cfg->addr_filter.addr3_b = pt->addr[3].b;
	/* Blocks end at calls and jumps, so each block starts at a transfer
	 * target: what the call-stack rebuild needs. */
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
	return src;
}
