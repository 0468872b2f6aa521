// SPDX-License-Identifier: MIT
/*
 * Unit tests of the module's capability detection and configuration
 * encoding (kmod/mtrace_caps.c, compiled here in user space), against
 * CPUID values captured on real CPUs. Sources of the captures:
 *
 * - Broadwell-E, Core i7-6950X (CPUID 1 EAX 0x406f1): libcpuid test data,
 *   github.com/anrieff/libcpuid tests/intel/broadwell/broadwell-e-i7.test
 *   (basic_cpuid[7], [20]: leaf 0x14 sub-leaf 0 only, max sub-leaf 0).
 * - Skylake microarchitecture, Kaby Lake Core i5-7600K (0x906e9): the
 *   CPUID dump in google/EXEgesis exegesis/base/cpuid_x86_test.cc.
 * - Kaby Lake R, Core i5-8350U (0x806ea): `cpuid -1 --raw` posted to LKML
 *   by Paul Menzel on 2022-08-23 ("WARNING: CPU: 1 PID: 83 at
 *   arch/x86/kernel/cpu/sgx/main.c:446 ksgxd").
 * - Skylake, Skylake-SP, Ice Lake, Alder Lake and Sapphire Rapids: AIDA64
 *   CPUID dumps in github.com/InstLatx64/InstLatx64 (snapshot 087af2c7d72c),
 *   per logical CPU, registers printed EAX-EBX-ECX-EDX:
 *   - Skylake-S Core i7-6700K (0x506e3),
 *     GenuineIntel/GenuineIntel00506E3_SkyLake_01_CPUID.txt, CPU #0 (all
 *     8 logical CPUs identical);
 *   - Skylake-SP Xeon Platinum 8160 (0x50654),
 *     GenuineIntel/GenuineIntel0050654_SkylakeXeon_20_CPUID.txt, CPU #0
 *     (all 96 identical, two sockets);
 *   - Ice Lake-U Core i7-1065G7 (0x706e5),
 *     GenuineIntel/GenuineIntel00706E5_IceLakeY_CPUID.txt, CPU #0 (all
 *     8 logical CPUs identical);
 *   - Ice Lake-SP Xeon Platinum 8351N (0x606a6),
 *     GenuineIntel/GenuineIntel00606A6_ICX_CPUID3.txt, CPU #0 (all 72
 *     identical);
 *   - Alder Lake-S Core i9-12900K (0x90672),
 *     GenuineIntel/GenuineIntel0090672_AlderLake_01_LC_BC_CPUID.txt:
 *     CPU #0 (CPUID 0x1a "Golden Cove", same on CPUs #0-15) and CPU #16
 *     ("Gracemont", same on CPUs #16-23);
 *   - Sapphire Rapids Xeon w7-2475X (0x806f8),
 *     GenuineIntel/GenuineIntel00806F8_SapphireRapids_05_CPUID.txt,
 *     CPU #0 (all 40 identical).
 */
#include "../../kmod/mtrace_caps.c"

#include "../lib/mt_test.h"

#define INTEL { 0x756e6547, 0x49656e69, 0x6c65746e }

static const struct mtrace_cpuid broadwell_e = {
	.max_leaf = 0x14, .vendor = INTEL, .leaf1_eax = 0x000406f1,
	.leaf7_ebx = 0x021cbfbb,
	.c14_0 = { 0x00000000, 0x00000001, 0x00000001, 0 },
};

static const struct mtrace_cpuid skylake = {
	.max_leaf = 0x16, .vendor = INTEL, .leaf1_eax = 0x000506e3,
	.leaf7_ebx = 0x029c6fbf,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x0000014e, 0x00000000 },
};

static const struct mtrace_cpuid skylake_sp = {
	.max_leaf = 0x16, .vendor = INTEL, .leaf1_eax = 0x00050654,
	.leaf7_ebx = 0xd39ffffb,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x000000a8, 0x00000000 },
};

static const struct mtrace_cpuid kaby_lake = {
	.max_leaf = 0x16, .vendor = INTEL, .leaf1_eax = 0x000906e9,
	.leaf7_ebx = 0x02946687,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0, 0 },
	.c15 = { 0x00000002, 0x0000012c, 0 },
};

static const struct mtrace_cpuid kaby_lake_r = {
	.max_leaf = 0x16, .vendor = INTEL, .leaf1_eax = 0x000806ea,
	.leaf7_ebx = 0x029c67af,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0, 0 },
	.c15 = { 0x00000002, 0x0000009e, 0 },
};

static const struct mtrace_cpuid ice_lake_u = {
	.max_leaf = 0x1b, .vendor = INTEL, .leaf1_eax = 0x000706e5,
	.leaf7_ebx = 0xf2bf27ef,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f1fff, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x0000004e, 0x0249f000 },
};

static const struct mtrace_cpuid ice_lake_sp = {
	.max_leaf = 0x1b, .vendor = INTEL, .leaf1_eax = 0x000606a6,
	.leaf7_ebx = 0xf3bfbfff,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f1fff, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x000000c0, 0x00000000 },
};

static const struct mtrace_cpuid alder_lake_p_core = {
	.max_leaf = 0x20, .vendor = INTEL, .leaf1_eax = 0x00090672,
	.leaf7_ebx = 0x239ca7eb,
	.c14_0 = { 0x00000001, 0x0000005f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f003f, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x000000a6, 0x0249f000 },
};

static const struct mtrace_cpuid alder_lake_e_core = {
	.max_leaf = 0x20, .vendor = INTEL, .leaf1_eax = 0x00090672,
	.leaf7_ebx = 0x239ca7eb,
	.c14_0 = { 0x00000001, 0x0000005f, 0x80000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f1fff, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x000000a6, 0x0249f000 },
};

static const struct mtrace_cpuid sapphire_rapids = {
	.max_leaf = 0x20, .vendor = INTEL, .leaf1_eax = 0x000806f8,
	.leaf7_ebx = 0xf3bfbffb,
	.c14_0 = { 0x00000001, 0x0000005f, 0x00000007, 0x00000000 },
	.c14_1 = { 0x02490002, 0x003f003f, 0x00000000, 0x00000000 },
	.c15 = { 0x00000002, 0x000000d8, 0x016e3600 },
};

static const struct mtrace_cpuid amd_epyc = {
	.max_leaf = 0x10, .vendor = { 0x68747541, 0x69746e65, 0x444d4163 },
	.leaf1_eax = 0x00a00f11,
};

static struct mtrace_pt_caps caps_of(const struct mtrace_cpuid *id)
{
	struct mtrace_pt_caps caps;
	const char *why = NULL;

	MT_ASSERT_MSG(mtrace_caps_from_cpuid(id, &caps, &why) == 0, "%s", why);
	return caps;
}

static struct mtrace_config base_config(void)
{
	struct mtrace_config c = {
		.flags = MTRACE_CFG_USER | MTRACE_CFG_TSC,
		.pid = 42,
		.ring_size = 1 << 20,
		.sb_records = 1024,
	};

	return c;
}

#define MAX_SINGLE (4ULL << 20)

static int encode(const struct mtrace_config *c, const struct mtrace_cpuid *id,
		  struct mtrace_pt_program *p)
{
	struct mtrace_pt_caps caps = caps_of(id);

	return mtrace_config_encode(c, &caps, MAX_SINGLE, p);
}

MT_TEST(detects_real_cpus)
{
	struct mtrace_pt_caps c;

	c = caps_of(&broadwell_e);
	MT_ASSERT(!c.multi_topa);
	MT_ASSERT(c.branch_always_on);
	/* Max sub-leaf 0: sub-leaf 1 must not be used even if passed. */
	MT_ASSERT_EQ(c.c14_1[0], 0);
	c = caps_of(&kaby_lake);
	MT_ASSERT(c.multi_topa);
	MT_ASSERT(!c.branch_always_on);
	MT_ASSERT_EQ(c.c15[1], 0x12c);
	c = caps_of(&ice_lake_sp);
	MT_ASSERT_EQ(c.c15[2], 0);		/* crystal Hz not enumerated */
}

MT_TEST(refuses_cpus_without_pt)
{
	struct mtrace_cpuid id = kaby_lake;
	struct mtrace_pt_caps c;
	const char *why = NULL;

	MT_ASSERT_EQ(mtrace_caps_from_cpuid(&amd_epyc, &c, &why), -ENODEV);
	MT_ASSERT_STREQ(why, "not an Intel CPU");
	id.leaf7_ebx &= ~(1U << 25);		/* a VM hiding PT */
	MT_ASSERT_EQ(mtrace_caps_from_cpuid(&id, &c, &why), -ENODEV);
	MT_ASSERT_STREQ(why, "CPUID reports no Intel PT");
	id = kaby_lake;
	id.max_leaf = 0x13;
	MT_ASSERT_EQ(mtrace_caps_from_cpuid(&id, &c, &why), -ENODEV);
	id = kaby_lake;
	id.c14_0[2] = 0x4;			/* single-range output only */
	MT_ASSERT_EQ(mtrace_caps_from_cpuid(&id, &c, &why), -ENODEV);
	MT_ASSERT_STREQ(why, "Intel PT without ToPA output");
}

MT_TEST(intersects_per_cpu_caps)
{
	struct mtrace_pt_caps a = caps_of(&kaby_lake), b = caps_of(&kaby_lake);
	const char *why = NULL;

	/* A core with fewer encodings and ranges limits every CPU. */
	b.c14_1[0] = 0x00090001;		/* MTC 0 and 3, one range */
	b.c14_1[1] = 0x000f00ff;
	b.c14_0[2] &= ~MT_PT_CAP_TOPA_MULTI;
	MT_ASSERT_EQ(mtrace_caps_intersect(&a, &b, &why), 0);
	MT_ASSERT_EQ(a.c14_1[0], 0x00090001);
	MT_ASSERT_EQ(a.c14_1[1], 0x000f00ff);
	MT_ASSERT(!a.multi_topa);
	MT_ASSERT(a.c14_0[2] & MT_PT_CAP_TOPA);
	b = caps_of(&kaby_lake_r);		/* other TSC/crystal ratio */
	MT_ASSERT_EQ(mtrace_caps_intersect(&a, &b, &why), -ENODEV);
}

/*
 * What each capture allows, read off its leaf 0x14 bits by hand (SDM Vol. 3C,
 * "CPUID Leaf 14H"): sub-leaf 0 EBX[1] configurable PSB and CYC, EBX[2] IP
 * filtering, EBX[3] MTC, EBX[4] PTWRITE, ECX[1] multi-entry ToPA; sub-leaf 1
 * EAX[2:0] address ranges, EAX[31:16] MTC period encodings, EBX[15:0] CYC
 * thresholds, EBX[31:16] PSB frequencies. Bitmaps are 0 where the enabling
 * sub-leaf 0 bit is clear; ranges are 0 without IP filtering.
 */
struct pt_expect {
	const char *name;
	const struct mtrace_cpuid *id;
	bool multi_topa, branch_forced, ptwrite;
	unsigned int ranges;
	u32 mtc, cyc, psb;
};

static const struct pt_expect real_cpus[] = {
	/* 0.EBX 0x01 (CR3 filtering only), 0.ECX 0x1, no sub-leaf 1; BDM106. */
	{ "Broadwell-E", &broadwell_e, .branch_forced = true },
	/*
	 * 0.EBX 0x0f, 0.ECX 0x7, 1.EAX 0x02490002, 1.EBX 0x003f3fff; Skylake
	 * models 0x5e and 0x55 are not in BDM106, so BranchEn can be cleared.
	 */
	{ "Skylake", &skylake, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x3fff, .psb = 0x003f },
	{ "Skylake-SP", &skylake_sp, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x3fff, .psb = 0x003f },
	{ "Kaby Lake", &kaby_lake, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x3fff, .psb = 0x003f },
	{ "Kaby Lake R", &kaby_lake_r, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x3fff, .psb = 0x003f },
	/* 0.EBX 0x0f, 0.ECX 0x7, 1.EAX 0x02490002, 1.EBX 0x003f1fff. */
	{ "Ice Lake-U", &ice_lake_u, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x1fff, .psb = 0x003f },
	{ "Ice Lake-SP", &ice_lake_sp, .multi_topa = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x1fff, .psb = 0x003f },
	/* 0.EBX 0x5f (PTWRITE), 0.ECX 0x7, 1.EAX 0x02490002, 1.EBX 0x003f003f */
	{ "Alder Lake P-core", &alder_lake_p_core, .multi_topa = true,
	  .ptwrite = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x003f, .psb = 0x003f },
	/* 0.EBX 0x5f, 0.ECX 0x80000007 (LIP), 1.EBX 0x003f1fff. */
	{ "Alder Lake E-core", &alder_lake_e_core, .multi_topa = true,
	  .ptwrite = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x1fff, .psb = 0x003f },
	/* 0.EBX 0x5f, 0.ECX 0x7, 1.EAX 0x02490002, 1.EBX 0x003f003f. */
	{ "Sapphire Rapids", &sapphire_rapids, .multi_topa = true,
	  .ptwrite = true, .ranges = 2,
	  .mtc = 0x0249, .cyc = 0x003f, .psb = 0x003f },
};

static bool accepts(const struct mtrace_config *c,
		    const struct mtrace_pt_caps *caps,
		    struct mtrace_pt_program *p)
{
	return mtrace_config_encode(c, caps, MAX_SINGLE, p) == 0;
}

/* Every choice the capabilities gate is accepted exactly where 'e' says. */
static void check_caps(const struct mtrace_pt_caps *caps,
		       const struct pt_expect *e)
{
	struct mtrace_config c;
	struct mtrace_pt_program p;
	unsigned int i, n;

	MT_ASSERT_MSG(caps->multi_topa == e->multi_topa, "%s: ToPA", e->name);
	c = base_config();
	c.region_size = 4096;			/* < ring: multi-entry ToPA */
	MT_ASSERT_MSG(accepts(&c, caps, &p) == e->multi_topa,
		      "%s: region", e->name);

	c = base_config();
	c.flags |= MTRACE_CFG_NO_BRANCH;
	MT_ASSERT_MSG(accepts(&c, caps, &p), "%s: no-branch", e->name);
	MT_ASSERT_MSG(!!(p.ctl & MTRACE_RTIT_CTL_BRANCH_EN) == e->branch_forced,
		      "%s: BranchEn forced", e->name);

	c = base_config();
	c.flags |= MTRACE_CFG_PTWRITE;
	MT_ASSERT_MSG(accepts(&c, caps, &p) == e->ptwrite,
		      "%s: PTWRITE", e->name);

	for (i = 0; i < 16; i++) {
		c = base_config();
		c.flags |= MTRACE_CFG_MTC;
		c.mtc_freq = i;
		MT_ASSERT_MSG(accepts(&c, caps, &p) == !!(e->mtc & BIT(i)),
			      "%s: MTCFreq %u", e->name, i);
		c = base_config();
		c.flags |= MTRACE_CFG_CYC;
		c.cyc_thresh = i;
		MT_ASSERT_MSG(accepts(&c, caps, &p) == !!(e->cyc & BIT(i)),
			      "%s: CycThresh %u", e->name, i);
		c = base_config();
		c.flags |= MTRACE_CFG_PSB_FREQ;
		c.psb_freq = i;
		MT_ASSERT_MSG(accepts(&c, caps, &p) == !!(e->psb & BIT(i)),
			      "%s: PSBFreq %u", e->name, i);
	}

	for (n = 1; n <= MTRACE_MAX_ADDR_FILTERS; n++) {
		c = base_config();
		c.nr_filters = n;
		for (i = 0; i < n; i++)
			c.filters[i] = (struct mtrace_addr_filter){
				0x401000 + 0x1000 * i, 0x401fff + 0x1000 * i,
				MTRACE_FILTER_TRACE, 0 };
		MT_ASSERT_MSG(accepts(&c, caps, &p) == (n <= e->ranges),
			      "%s: %u address ranges", e->name, n);
	}
}

MT_TEST(real_cpu_caps_match_cpuid_bits)
{
	unsigned int i;

	for (i = 0; i < sizeof(real_cpus) / sizeof(real_cpus[0]); i++) {
		struct mtrace_pt_caps caps = caps_of(real_cpus[i].id);

		check_caps(&caps, &real_cpus[i]);
	}
}

MT_TEST(intersects_alder_lake_core_types)
{
	const struct pt_expect common = {
		"Alder Lake P+E", NULL, .multi_topa = true, .ptwrite = true,
		.ranges = 2, .mtc = 0x0249, .cyc = 0x003f, .psb = 0x003f,
	};
	struct mtrace_pt_caps p = caps_of(&alder_lake_p_core);
	struct mtrace_pt_caps e = caps_of(&alder_lake_e_core), acc;
	const char *why = NULL;

	/*
	 * The i9-12900K's Gracemont cores set LIP (leaf 0x14.0 ECX[31]) and
	 * allow CYC thresholds 0-12; its Golden Cove cores clear LIP and allow
	 * 0-5. Whichever core comes first, the module loads (an earlier version
	 * refused the CPU over LIP, which is the same as RIP with Linux's flat
	 * segments) and keeps the P-core's thresholds and all shared features.
	 */
	acc = p;
	MT_ASSERT_EQ(mtrace_caps_intersect(&acc, &e, &why), 0);
	check_caps(&acc, &common);
	MT_ASSERT(!(acc.c14_0[2] & MT_PT_CAP_LIP));
	acc = e;
	MT_ASSERT_EQ(mtrace_caps_intersect(&acc, &p, &why), 0);
	check_caps(&acc, &common);
	MT_ASSERT(!(acc.c14_0[2] & MT_PT_CAP_LIP));
	MT_ASSERT_EQ(acc.c14_1[1], 0x003f003f);
}

MT_TEST(encodes_rtit_ctl_bits)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.flags |= MTRACE_CFG_KERNEL | MTRACE_CFG_MTC | MTRACE_CFG_CYC |
		   MTRACE_CFG_PSB_FREQ | MTRACE_CFG_NO_RETCOMP;
	c.mtc_freq = 3;
	c.cyc_thresh = 1;
	c.psb_freq = 2;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	/*
	 * SDM IA32_RTIT_CTL: CYCEn 1, OS 2, User 3, ToPA 8, MTCEn 9, TSCEn 10,
	 * DisRETC 11, BranchEn 13, MTCFreq 17:14, CycThresh 22:19, PSBFreq 27:24.
	 */
	MT_ASSERT_EQ(p.ctl, 0x2 | 0x4 | 0x8 | 0x100 | 0x200 | 0x400 | 0x800 |
			    0x2000 | (3 << 14) | (1 << 19) | (2 << 24));
	MT_ASSERT_EQ(p.region_size, 1 << 20);

	c = base_config();
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	MT_ASSERT_EQ(p.ctl, 0x8 | 0x100 | 0x400 | 0x2000);
}

MT_TEST(branch_en_forced_on_broadwell)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.flags |= MTRACE_CFG_NO_BRANCH;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	MT_ASSERT_EQ(p.ctl & MTRACE_RTIT_CTL_BRANCH_EN, 0);
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), 0);
	MT_ASSERT(p.ctl & MTRACE_RTIT_CTL_BRANCH_EN);
}

MT_TEST(timing_validated_against_bitmaps)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;
	unsigned int i;

	c.flags |= MTRACE_CFG_MTC;
	/* Kaby Lake lists MTC encodings 0, 3, 6 and 9 (EAX[31:16] = 0x249). */
	for (i = 0; i < 16; i++) {
		c.mtc_freq = i;
		MT_ASSERT_EQ(encode(&c, &kaby_lake, &p),
			     (i == 0 || i == 3 || i == 6 || i == 9) ? 0 : -EINVAL);
	}
	c.mtc_freq = 0;
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);	/* no MTC */

	c = base_config();
	c.flags |= MTRACE_CFG_CYC;
	c.cyc_thresh = 13;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);		/* 0x3fff */
	MT_ASSERT_EQ(encode(&c, &ice_lake_u, &p), -EINVAL);	/* 0x1fff */
	c.cyc_thresh = 12;
	MT_ASSERT_EQ(encode(&c, &ice_lake_u, &p), 0);
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);	/* no CYC */

	c = base_config();
	c.flags |= MTRACE_CFG_PSB_FREQ;
	c.psb_freq = 5;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	c.psb_freq = 6;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.psb_freq = 0;
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);

	/* Values without their enabling flag are a caller error. */
	c = base_config();
	c.mtc_freq = 3;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c = base_config();
	c.psb_freq = 1;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c = base_config();
	c.cyc_thresh = 1;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
}

MT_TEST(ptwrite_needs_cpuid_bit)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.flags |= MTRACE_CFG_PTWRITE;
	MT_ASSERT_EQ(encode(&c, &kaby_lake_r, &p), -EINVAL);	/* EBX 0x0f */
	MT_ASSERT_EQ(encode(&c, &alder_lake_p_core, &p), 0);	/* EBX 0x5f */
	MT_ASSERT_EQ(p.ctl & (0x1000 | 0x20), 0x1000 | 0x20);
}

MT_TEST(address_filters)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.nr_filters = 2;
	c.filters[0] = (struct mtrace_addr_filter){ 0x401000, 0x401fff, MTRACE_FILTER_TRACE, 0 };
	c.filters[1] = (struct mtrace_addr_filter){ 0xffffffff81000000ULL,
		0xffffffff82000000ULL, MTRACE_FILTER_STOP, 0 };
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	MT_ASSERT_EQ(p.ctl >> 32, 0x21);	/* ADDR0_CFG=1, ADDR1_CFG=2 */
	MT_ASSERT_EQ(p.addr[0], 0x401000);
	MT_ASSERT_EQ(p.addr[3], 0xffffffff82000000ULL);
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);	/* no ranges */

	c.nr_filters = 3;				/* Kaby Lake has two */
	c.filters[2] = c.filters[0];
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.nr_filters = 2;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);	/* unused not zero */
	memset(&c.filters[2], 0, sizeof(c.filters[2]));
	c.filters[0].start = 0x0000800000000000ULL;	/* not canonical */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.filters[0].start = 0x402000;			/* start > end */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.filters[0].start = 0x401000;
	c.filters[0].action = 3;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.filters[0].action = MTRACE_FILTER_TRACE;
	c.filters[0].reserved = 1;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.filters[0].reserved = 0;
	c.nr_filters = MTRACE_MAX_ADDR_FILTERS + 1;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
}

/* Canonical means 48 bits, or 57 with 5-level paging (caller's va_bits). */
MT_TEST(address_ranges_la57)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_caps caps = caps_of(&kaby_lake);
	struct mtrace_pt_program p;

	c.nr_filters = 1;
	c.filters[0] = (struct mtrace_addr_filter){ 0x0000800000000000ULL,
		0x0000800000000fffULL, MTRACE_FILTER_TRACE, 0 };
	MT_ASSERT_EQ(caps.va_bits, 48);
	MT_ASSERT_EQ(mtrace_config_encode(&c, &caps, MAX_SINGLE, &p), -EINVAL);
	caps.va_bits = 57;
	MT_ASSERT_EQ(mtrace_config_encode(&c, &caps, MAX_SINGLE, &p), 0);
	c.filters[0].start = 0xff00000000000000ULL;	/* 57-bit kernel half */
	c.filters[0].end = 0xff00000000000fffULL;
	MT_ASSERT_EQ(mtrace_config_encode(&c, &caps, MAX_SINGLE, &p), 0);
	c.filters[0].start = 0x0100000000000000ULL;	/* beyond 57 bits */
	c.filters[0].end = 0x0100000000000fffULL;
	MT_ASSERT_EQ(mtrace_config_encode(&c, &caps, MAX_SINGLE, &p), -EINVAL);
}

MT_TEST(rejects_malformed_configs)
{
	struct mtrace_config c;
	struct mtrace_pt_program p;

	c = base_config();
	c.flags |= 1U << 31;				/* unknown flag */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c = base_config();
	c.reserved[3] = 1;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c = base_config();
	c.flags &= ~MTRACE_CFG_USER;			/* neither user nor kernel */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c = base_config();
	c.flags |= MTRACE_CFG_SYSTEM_WIDE;		/* with a pid */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.pid = 0;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	c = base_config();
	c.pid = 0;					/* per-task without pid */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.pid = -5;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
}

MT_TEST(ring_and_region_sizes)
{
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.ring_size = 3 << 20;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.ring_size = 2048;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.ring_size = MTRACE_RING_MAX * 2;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.ring_size = MTRACE_RING_MAX;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	MT_ASSERT_EQ(p.region_size, 2 << 20);		/* default region */
	c.region_size = 4096;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), 0);
	MT_ASSERT_EQ(p.region_size, 4096);
	c.region_size = 256ULL << 20;			/* > 128 MiB ToPA limit */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.ring_size = 1 << 20;
	c.region_size = 2 << 20;			/* region > ring */
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);

	/* Single-entry ToPA: one contiguous region, at most MAX_SINGLE. */
	c.region_size = 0;
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), 0);
	MT_ASSERT_EQ(p.region_size, 1 << 20);
	c.region_size = 4096;
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);
	c.region_size = 0;
	c.ring_size = MAX_SINGLE * 2;
	MT_ASSERT_EQ(encode(&c, &broadwell_e, &p), -EINVAL);

	c = base_config();
	c.sb_records = 1000;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.sb_records = MTRACE_SB_MIN / 2;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
	c.sb_records = MTRACE_SB_MAX * 2;
	MT_ASSERT_EQ(encode(&c, &kaby_lake, &p), -EINVAL);
}
