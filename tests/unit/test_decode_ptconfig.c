// SPDX-License-Identifier: MIT
/* libipt configuration from a bundle's CPU identity and RTIT_CTL. */
#include "../lib/mt_test.h"

#include "decode/ptconfig.h"

#include <errno.h>

static struct mt_bundle_cpu_desc intel(uint8_t model)
{
	struct mt_bundle_cpu_desc c = { .vendor = MT_BUNDLE_VENDOR_INTEL, .family = 6,
					.model = model, .stepping = 1 };

	c.cpuid_15.eax = 2;
	c.cpuid_15.ebx = 188;
	c.max_nonturbo_ratio = 28;
	return c;
}

MT_TEST(known_model_gets_libipt_errata_and_timing)
{
	struct mt_bundle_cpu_desc cpu = intel(0x4e);	/* Skylake client */
	struct mt_bundle_pt_config_desc pt = { .rtit_ctl = MT_RTIT_CTL_TRACEEN |
							   MT_RTIT_CTL_BRANCHEN |
							   MT_RTIT_CTL_MTCEN | (3ull << 14) |
							   (1ull << 32) };
	struct pt_config cfg;
	char err[128];

	pt.addr[0].a = 0x1000;
	pt.addr[0].b = 0x2000;
	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), MT_ERRATA_LIBIPT);
	MT_ASSERT_EQ(cfg.cpu.vendor, pcv_intel);
	MT_ASSERT_EQ(cfg.cpu.model, 0x4e);
	MT_ASSERT_EQ(cfg.errata.skd022, 1);	/* a Skylake erratum */
	MT_ASSERT_EQ(cfg.errata.skl014, 1);
	MT_ASSERT_EQ(cfg.mtc_freq, 3);		/* the raw field, not 2^3 */
	MT_ASSERT_EQ(cfg.nom_freq, 28);
	MT_ASSERT_EQ(cfg.cpuid_0x15_eax, 2);
	MT_ASSERT_EQ(cfg.cpuid_0x15_ebx, 188);
	MT_ASSERT_EQ(cfg.addr_filter.config.ctl.addr0_cfg, 1);
	MT_ASSERT_EQ(cfg.addr_filter.addr0_a, 0x1000);
	MT_ASSERT_EQ(cfg.addr_filter.addr0_b, 0x2000);
	MT_ASSERT_EQ(cfg.flags.variant.block.end_on_call, 1);
	MT_ASSERT_EQ(cfg.flags.variant.block.end_on_jump, 1);
}

MT_TEST(newer_model_unknown_to_libipt_gets_our_table)
{
	struct mt_bundle_cpu_desc cpu = intel(0xb7);	/* Raptor Lake */
	struct mt_bundle_pt_config_desc pt = { .rtit_ctl = MT_RTIT_CTL_BRANCHEN };
	struct pt_errata e;
	struct pt_config cfg;
	char err[128];

	/* The premise: Debian's libipt does not know this model. */
	MT_ASSERT(pt_cpu_errata(&e, &(struct pt_cpu){ pcv_intel, 6, 0xb7, 1 }) < 0);
	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), MT_ERRATA_NEWER);
	MT_ASSERT_EQ(cfg.errata.bdm70, 1);
	MT_ASSERT_EQ(cfg.errata.skd022, 1);
	MT_ASSERT_EQ(cfg.errata.apl11, 1);
	MT_ASSERT_EQ(cfg.errata.skl014, 0);
}

MT_TEST(unknown_model_is_guessed)
{
	struct mt_bundle_cpu_desc cpu = intel(0xfe);
	struct mt_bundle_pt_config_desc pt = { .rtit_ctl = MT_RTIT_CTL_BRANCHEN };
	struct pt_config cfg;
	char err[128];

	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), MT_ERRATA_GUESSED);
	MT_ASSERT_EQ(cfg.errata.bdm70, 1);
}

MT_TEST(non_intel_cpu_is_refused)
{
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_UNKNOWN,
					  .vendor_id = "AuthenticAMD" };
	struct mt_bundle_pt_config_desc pt = { .rtit_ctl = MT_RTIT_CTL_BRANCHEN };
	struct pt_config cfg;
	char err[128] = "";

	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), -ENOTSUP);
	MT_ASSERT_MSG(strstr(err, "\"AuthenticAMD\"") && strstr(err, "not Intel"), "%s", err);
}

/* The simulated backend on an AMD machine: the bytes came from elsewhere. */
MT_TEST(simulated_non_intel_decodes_without_errata)
{
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_UNKNOWN,
					  .vendor_id = "AuthenticAMD", .family = 0x19 };
	struct mt_bundle_pt_config_desc pt = { .flags = MT_BUNDLE_CFG_SIMULATED,
					       .rtit_ctl = MT_RTIT_CTL_BRANCHEN };
	struct pt_config cfg;
	char err[128] = "";

	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), MT_ERRATA_SIMULATED);
	MT_ASSERT_EQ(cfg.cpu.vendor, pcv_intel);
	MT_ASSERT_EQ(cfg.cpu.family, 0);
	MT_ASSERT_EQ(cfg.errata.bdm70, 0);
	MT_ASSERT_EQ(cfg.errata.skd022, 0);
}

/*
 * PT that holds no control flow (BranchEn clear), no TNT packets (DisTNT)
 * or event trace packets (EventEn) is refused by name, before any decode;
 * PTWRITE and power events are decoded.
 */
MT_TEST(undecodable_controls_are_refused)
{
	static const struct {
		uint64_t ctl;
		const char *want;
	} bad[] = {
		{ MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_USER, "BranchEn is clear (perf's branch=0)" },
		{ MT_RTIT_CTL_BRANCHEN | MT_RTIT_CTL_DISTNT, "DisTNT is set (perf's notnt)" },
		{ MT_RTIT_CTL_BRANCHEN | MT_RTIT_CTL_EVENTEN, "EventEn is set (perf's event)" },
	};
	struct mt_bundle_cpu_desc cpu = intel(0x4e);
	struct mt_bundle_pt_config_desc pt = { 0 };
	struct pt_config cfg;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pt.rtit_ctl = bad[i].ctl;
		err[0] = 0;
		MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), -ENOTSUP);
		MT_ASSERT_MSG(strstr(err, bad[i].want), "'%s' lacks '%s'", err, bad[i].want);
	}
	pt.rtit_ctl = MT_RTIT_CTL_BRANCHEN | MT_RTIT_CTL_PTWEN | (1ull << 4);
	MT_ASSERT_EQ(mt_decode_pt_config(&cpu, &pt, &cfg, err, sizeof(err)), MT_ERRATA_LIBIPT);
}
