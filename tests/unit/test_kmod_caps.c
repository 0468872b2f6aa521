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
 * - Ice Lake: the PT leaf QEMU presents for its Ice Lake-era "minimal"
 *   PT model (qemu target/i386/cpu.c INTEL_PT_MINIMAL_EBX/ECX,
 *   INTEL_PT_MTC/CYCLE/PSB_BITMAP, 2 address ranges); leaf 1 EAX of an
 *   Ice Lake server (0x606a6). This is QEMU's model of the CPU, not a dump.
 * No citable raw dump of Alder Lake or Sapphire Rapids leaf 0x14 was
 * available; the PTWRITE cases use a Kaby Lake R capture with the PTWRITE
 * bit added and say so.
 */
#include "../../kmod/mtrace_caps.c"

#include "../lib/mt_test.h"

#define INTEL { 0x756e6547, 0x49656e69, 0x6c65746e }

static const struct mtrace_cpuid broadwell_e = {
	.max_leaf = 0x14, .vendor = INTEL, .leaf1_eax = 0x000406f1,
	.leaf7_ebx = 0x021cbfbb,
	.c14_0 = { 0x00000000, 0x00000001, 0x00000001, 0 },
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

static const struct mtrace_cpuid ice_lake_qemu = {
	.max_leaf = 0x1b, .vendor = INTEL, .leaf1_eax = 0x000606a6,
	.leaf7_ebx = 0x02000000,	/* only the PT bit matters here */
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0 },
	.c14_1 = { 0x02490002, 0x003f1fff, 0, 0 },
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
	c = caps_of(&ice_lake_qemu);
	MT_ASSERT(c.multi_topa);
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
	b.c14_0[2] |= MT_PT_CAP_LIP;
	MT_ASSERT_EQ(mtrace_caps_intersect(&a, &b, &why), -ENODEV);
	b = caps_of(&kaby_lake_r);		/* other TSC/crystal ratio */
	MT_ASSERT_EQ(mtrace_caps_intersect(&a, &b, &why), -ENODEV);
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
	MT_ASSERT_EQ(encode(&c, &ice_lake_qemu, &p), -EINVAL);	/* 0x1fff */
	c.cyc_thresh = 12;
	MT_ASSERT_EQ(encode(&c, &ice_lake_qemu, &p), 0);
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
	struct mtrace_cpuid with_ptw = kaby_lake_r;	/* + PTWRITE, synthetic */
	struct mtrace_config c = base_config();
	struct mtrace_pt_program p;

	c.flags |= MTRACE_CFG_PTWRITE;
	MT_ASSERT_EQ(encode(&c, &kaby_lake_r, &p), -EINVAL);
	with_ptw.c14_0[1] |= MT_PT_CAP_PTWRITE;
	MT_ASSERT_EQ(encode(&c, &with_ptw, &p), 0);
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
