// SPDX-License-Identifier: GPL-2.0-only
/*
 * PT capabilities from CPUID, and configuration -> MTRACE_RTIT_CTL encoding.
 * See Intel SDM Vol. 3C, "Intel Processor Trace" (CPUID leaf 0x14 and the
 * IA32_RTIT_CTL field descriptions) for every check below: a reserved bit
 * or an encoding missing from a CPUID bitmap makes the WRMSR #GP, so all
 * of them are rejected here, before any register is written.
 */
#include "mtrace_caps.h"
#include "mtrace_pt_defs.h"

#define CPUID_7_EBX_INTEL_PT	BIT(25)
#define INTEL_VENDOR_EBX	0x756e6547	/* "Genu" */
#define INTEL_VENDOR_EDX	0x49656e69	/* "ineI" */
#define INTEL_VENDOR_ECX	0x6c65746e	/* "ntel" */

/*
 * The simulated CPU: a Kaby Lake R (CPUID 0x806ea) as captured with
 * `cpuid -1 --raw` on an i5-8350U (LKML, 2022-08-23, "WARNING: CPU: 1 PID:
 * 83 at arch/x86/kernel/cpu/sgx/main.c:446").
 */
const struct mtrace_cpuid mtrace_sim_cpuid = {
	.max_leaf = 0x16,
	.vendor = { 0x756e6547, 0x49656e69, 0x6c65746e },
	.leaf1_eax = 0x000806ea,
	.leaf7_ebx = 0x029c67af,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0, 0 },
	.c15 = { 0x00000002, 0x0000009e, 0 },
};

static u32 cpu_family(u32 eax)
{
	u32 fam = (eax >> 8) & 0xf;

	return fam == 0xf ? fam + ((eax >> 20) & 0xff) : fam;
}

static u32 cpu_model(u32 eax)
{
	u32 fam = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;

	if (fam == 0x6 || fam == 0xf)
		model |= ((eax >> 16) & 0xf) << 4;
	return model;
}

/* BDM106: BranchEn=0 #GPs on Broadwell client and server parts. */
static bool needs_branch_en(u32 leaf1_eax)
{
	if (cpu_family(leaf1_eax) != 6)
		return false;
	switch (cpu_model(leaf1_eax)) {
	case 0x3d:	/* Broadwell */
	case 0x47:	/* Broadwell-G */
	case 0x4f:	/* Broadwell-X */
	case 0x56:	/* Broadwell-D */
		return true;
	default:
		return false;
	}
}

int mtrace_caps_from_cpuid(const struct mtrace_cpuid *id,
			   struct mtrace_pt_caps *caps, const char **why)
{
	memset(caps, 0, sizeof(*caps));
	if (id->vendor[0] != INTEL_VENDOR_EBX ||
	    id->vendor[1] != INTEL_VENDOR_EDX ||
	    id->vendor[2] != INTEL_VENDOR_ECX) {
		*why = "not an Intel CPU";
		return -ENODEV;
	}
	if (id->max_leaf < 0x14 || !(id->leaf7_ebx & CPUID_7_EBX_INTEL_PT)) {
		*why = "CPUID reports no Intel PT";
		return -ENODEV;
	}
	if (!(id->c14_0[2] & MT_PT_CAP_TOPA)) {
		*why = "Intel PT without ToPA output";
		return -ENODEV;
	}
	caps->leaf1_eax = id->leaf1_eax;
	memcpy(caps->c14_0, id->c14_0, sizeof(caps->c14_0));
	/* Sub-leaf 1 only exists when sub-leaf 0 says so. */
	if (id->c14_0[0] >= 1)
		memcpy(caps->c14_1, id->c14_1, sizeof(caps->c14_1));
	if (id->max_leaf >= 0x15)
		memcpy(caps->c15, id->c15, sizeof(caps->c15));
	caps->multi_topa = id->c14_0[2] & MT_PT_CAP_TOPA_MULTI;
	caps->branch_always_on = needs_branch_en(id->leaf1_eax);
	caps->va_bits = 48;
	return 0;
}

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

/*
 * Hybrid parts report different PT features per core type; only what every
 * CPU supports may be programmed, since a task migrates freely. They also
 * disagree on LIP (Alder Lake: the E-cores set it, the P-cores do not), which
 * does not matter here: Linux code segments all have base 0, so a linear IP
 * equals the RIP.
 */
int mtrace_caps_intersect(struct mtrace_pt_caps *acc,
			  const struct mtrace_pt_caps *other, const char **why)
{
	u32 ranges;

	if (memcmp(acc->c15, other->c15, sizeof(acc->c15))) {
		*why = "CPUs disagree on the TSC/crystal ratio (CPUID 0x15)";
		return -ENODEV;
	}
	acc->c14_0[0] = min_u32(acc->c14_0[0], other->c14_0[0]);
	acc->c14_0[1] &= other->c14_0[1];
	acc->c14_0[2] &= other->c14_0[2];
	acc->c14_0[3] &= other->c14_0[3];
	ranges = min_u32(acc->c14_1[0] & MT_PT_CAP_NR_RANGES_MASK,
			 other->c14_1[0] & MT_PT_CAP_NR_RANGES_MASK);
	acc->c14_1[0] = ((acc->c14_1[0] & other->c14_1[0]) &
			 ~MT_PT_CAP_NR_RANGES_MASK) | ranges;
	acc->c14_1[1] &= other->c14_1[1];
	acc->c14_1[2] &= other->c14_1[2];
	acc->c14_1[3] &= other->c14_1[3];
	acc->multi_topa = acc->c14_0[2] & MT_PT_CAP_TOPA_MULTI;
	acc->branch_always_on = acc->branch_always_on || other->branch_always_on;
	acc->va_bits = min_u32(acc->va_bits, other->va_bits);
	return 0;
}

/* Field value 'enc' allowed by a CPUID bitmap of valid encodings. */
static bool encoding_ok(u32 bitmap, u8 enc)
{
	return enc < 16 && (bitmap & BIT(enc));
}

static int encode_timing(const struct mtrace_config *cfg,
			 const struct mtrace_pt_caps *caps, u64 *ctl)
{
	u32 ebx = caps->c14_0[1];

	if (cfg->flags & MTRACE_CFG_TSC)
		*ctl |= MTRACE_RTIT_CTL_TSC_EN;
	if (cfg->flags & MTRACE_CFG_MTC) {
		if (!(ebx & MT_PT_CAP_MTC) ||
		    !encoding_ok(caps->c14_1[0] >> 16, cfg->mtc_freq))
			return -EINVAL;
		*ctl |= MTRACE_RTIT_CTL_MTC_EN |
			(u64)cfg->mtc_freq << MTRACE_RTIT_CTL_MTC_FREQ_SHIFT;
	} else if (cfg->mtc_freq) {
		return -EINVAL;
	}
	if (cfg->flags & MTRACE_CFG_CYC) {
		if (!(ebx & MT_PT_CAP_PSB_CYC) ||
		    !encoding_ok(caps->c14_1[1] & 0xffff, cfg->cyc_thresh))
			return -EINVAL;
		*ctl |= MTRACE_RTIT_CTL_CYCEN |
			(u64)cfg->cyc_thresh << MTRACE_RTIT_CTL_CYC_THRESH_SHIFT;
	} else if (cfg->cyc_thresh) {
		return -EINVAL;
	}
	if (cfg->flags & MTRACE_CFG_PSB_FREQ) {
		if (!(ebx & MT_PT_CAP_PSB_CYC) ||
		    !encoding_ok(caps->c14_1[1] >> 16, cfg->psb_freq))
			return -EINVAL;
		*ctl |= (u64)cfg->psb_freq << MTRACE_RTIT_CTL_PSB_FREQ_SHIFT;
	} else if (cfg->psb_freq) {
		return -EINVAL;
	}
	return 0;
}

static int encode_filters(const struct mtrace_config *cfg,
			  const struct mtrace_pt_caps *caps,
			  struct mtrace_pt_program *out)
{
	u32 ranges = caps->c14_1[0] & MT_PT_CAP_NR_RANGES_MASK;
	unsigned int i;

	if (cfg->nr_filters > MTRACE_MAX_ADDR_FILTERS)
		return -EINVAL;
	if (cfg->nr_filters &&
	    (!(caps->c14_0[1] & MT_PT_CAP_IP_FILTER) || cfg->nr_filters > ranges))
		return -EINVAL;
	for (i = 0; i < MTRACE_MAX_ADDR_FILTERS; i++) {
		const struct mtrace_addr_filter *f = &cfg->filters[i];

		if (i >= cfg->nr_filters) {
			if (!mtrace_zeroed(f, sizeof(*f)))
				return -EINVAL;
			continue;
		}
		if (f->reserved || !mtrace_canonical(f->start, caps->va_bits) ||
		    !mtrace_canonical(f->end, caps->va_bits) || f->start > f->end ||
		    (f->action != MTRACE_FILTER_TRACE &&
		     f->action != MTRACE_FILTER_STOP))
			return -EINVAL;
		out->ctl |= (u64)f->action << MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(i);
		out->addr[2 * i] = f->start;
		out->addr[2 * i + 1] = f->end;
	}
	return 0;
}

static int check_sizes(const struct mtrace_config *cfg,
		       const struct mtrace_pt_caps *caps,
		       u64 max_single_region, u64 *region_size)
{
	u64 ring = cfg->ring_size, region = cfg->region_size;

	if (!mtrace_is_pow2(ring) || ring < MTRACE_RING_MIN || ring > MTRACE_RING_MAX)
		return -EINVAL;
	if (!mtrace_is_pow2(cfg->sb_records) || cfg->sb_records < MTRACE_SB_MIN ||
	    cfg->sb_records > MTRACE_SB_MAX)
		return -EINVAL;
	if (!caps->multi_topa) {
		/* One output region covers the whole ring. */
		if ((region && region != ring) || ring > max_single_region)
			return -EINVAL;
		*region_size = ring;
		return 0;
	}
	if (!region)
		region = ring < (2ULL << 20) ? ring : (2ULL << 20);
	if (!mtrace_is_pow2(region) || region < MT_TOPA_REGION_MIN ||
	    region > MT_TOPA_REGION_MAX || region > ring)
		return -EINVAL;
	*region_size = region;
	return 0;
}

int mtrace_config_encode(const struct mtrace_config *cfg,
			 const struct mtrace_pt_caps *caps,
			 u64 max_single_region, struct mtrace_pt_program *out)
{
	bool system_wide = cfg->flags & MTRACE_CFG_SYSTEM_WIDE;
	int err;

	memset(out, 0, sizeof(*out));
	if (cfg->flags & ~MTRACE_CFG_FLAGS_ALL ||
	    !mtrace_zeroed(cfg->reserved, sizeof(cfg->reserved)))
		return -EINVAL;
	if (!(cfg->flags & (MTRACE_CFG_USER | MTRACE_CFG_KERNEL)))
		return -EINVAL;
	if (system_wide ? cfg->pid != 0 : cfg->pid <= 0)
		return -EINVAL;
	err = check_sizes(cfg, caps, max_single_region, &out->region_size);
	if (err)
		return err;

	out->ctl = MTRACE_RTIT_CTL_TOPA | MTRACE_RTIT_CTL_BRANCH_EN;
	if (cfg->flags & MTRACE_CFG_NO_BRANCH && !caps->branch_always_on)
		out->ctl &= ~MTRACE_RTIT_CTL_BRANCH_EN;
	if (cfg->flags & MTRACE_CFG_USER)
		out->ctl |= MTRACE_RTIT_CTL_USR;
	if (cfg->flags & MTRACE_CFG_KERNEL)
		out->ctl |= MTRACE_RTIT_CTL_OS;
	if (cfg->flags & MTRACE_CFG_NO_RETCOMP)
		out->ctl |= MTRACE_RTIT_CTL_DISRETC;
	if (cfg->flags & MTRACE_CFG_PTWRITE) {
		if (!(caps->c14_0[1] & MT_PT_CAP_PTWRITE))
			return -EINVAL;
		out->ctl |= MTRACE_RTIT_CTL_PTW_EN | MTRACE_RTIT_CTL_FUP_ON_PTW;
	}
	err = encode_timing(cfg, caps, &out->ctl);
	if (err)
		return err;
	return encode_filters(cfg, caps, out);
}
