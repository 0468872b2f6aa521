// SPDX-License-Identifier: MIT
/*
 * The module's PT register sequences (kmod/mtrace_ptseq.c) run against the
 * strict RTIT MSR model (kmod/mtrace_ptmodel.c), both compiled here in user
 * space: every access the SDM says faults fails the test, and after every
 * session each register must hold what another owner ("perf") left there,
 * with no register naming the freed ring.
 */
#include "../../kmod/mtrace_caps.c"
#include "../../kmod/mtrace_ptmodel.c"
#include "../../kmod/mtrace_ptseq.c"
#include "../../kmod/mtrace_topa.c"

#include <stdlib.h>

#include "../lib/mt_test.h"

#define TABLE_BASE	0x100000000ULL
#define REGION_BASE	0x200000000ULL
#define PERF_TABLE	0x7654000ULL	/* the other owner's ToPA table */
#define PERF_REGION	0x7660000ULL
#define RING		(64ULL << 10)
#define REGION		4096ULL

/* One CPU, its memory and its registers. */
static struct {
	struct mtrace_pt_caps caps;
	struct mtrace_pt_model model;
	struct mtrace_topa_mem mem;
	struct mtrace_topa_plan plan;
	struct mtrace_sim_regs regs, perf;	/* now, and as perf left them */
	u64 table[MT_TOPA_TABLE_ENTRIES], perf_table[MT_TOPA_TABLE_ENTRIES];
	u64 table_phys, region_phys[RING / REGION];
	u8 data[REGION];
	bool ring_live;
	unsigned int faults, fail_write;	/* fail the N-th write (0: none) */
	unsigned int writes;
	const char *why;
} cpu;

static u64 *mem_table(void *ctx, u64 phys)
{
	(void)ctx;
	if (phys == cpu.table_phys && cpu.ring_live)
		return cpu.table;
	return phys == PERF_TABLE ? cpu.perf_table : NULL;
}

static u8 *mem_region(void *ctx, u64 phys, u64 size)
{
	(void)ctx;
	if (size != REGION)
		return NULL;
	if (phys == PERF_REGION)
		return cpu.data;
	if (!cpu.ring_live || phys < REGION_BASE || phys >= REGION_BASE + RING ||
	    (phys - REGION_BASE) % REGION)
		return NULL;
	return cpu.data;
}

int mtrace_msr_read(u32 msr, u64 *val)
{
	int err = mtrace_pt_model_rdmsr(&cpu.model, &cpu.regs, msr, val, &cpu.why);

	cpu.faults += !!err;
	return err;
}

int mtrace_msr_write(u32 msr, u64 val)
{
	int err;

	if (cpu.fail_write && ++cpu.writes == cpu.fail_write)
		return -EIO;	/* an injected fault, not a model violation */
	err = mtrace_pt_model_wrmsr(&cpu.model, &cpu.regs, msr, val, &cpu.why);
	cpu.faults += !!err;
	return err;
}

static void setup(bool vmxon, bool vmx_pt)
{
	const char *why;
	u64 *tables[1];
	u32 r;

	memset(&cpu, 0, sizeof(cpu));
	MT_ASSERT_EQ(mtrace_caps_from_cpuid(&mtrace_sim_cpuid, &cpu.caps, &why), 0);
	cpu.model.caps = &cpu.caps;
	cpu.model.vmx_pt = vmx_pt;
	cpu.model.pa_bits = 39;
	cpu.mem.table = mem_table;
	cpu.mem.region = mem_region;
	cpu.model.mem = &cpu.mem;
	MT_ASSERT_EQ(mtrace_topa_plan(&cpu.plan, RING, REGION, true), 0);
	cpu.table_phys = TABLE_BASE;
	for (r = 0; r < RING / REGION; r++)
		cpu.region_phys[r] = REGION_BASE + r * REGION;
	tables[0] = cpu.table;
	MT_ASSERT_EQ(mtrace_topa_fill(&cpu.plan, tables, &cpu.table_phys,
				      cpu.region_phys), 0);
	cpu.ring_live = true;
	cpu.perf_table[0] = PERF_REGION;
	cpu.perf_table[1] = PERF_TABLE | MT_TOPA_END;
	/* perf was here: its idle configuration, TraceEn clear. */
	cpu.regs.ctl = MTRACE_RTIT_CTL_TOPA | MTRACE_RTIT_CTL_TSC_EN |
		       MTRACE_RTIT_CTL_BRANCH_EN | MTRACE_RTIT_CTL_USR |
		       MTRACE_RTIT_CTL_OS;
	cpu.regs.status = 0x123ULL << 32;
	cpu.regs.output_base = PERF_TABLE;
	cpu.regs.mask_ptrs = mtrace_topa_mask_ptrs(0, 0x800);
	cpu.regs.cr3_match = 0x1234000;
	cpu.regs.addr[0] = 0x400000;
	cpu.regs.addr[1] = 0x4fffff;
	cpu.regs.addr[2] = 0x7f0000000000ULL;
	cpu.regs.addr[3] = 0x7f00000fffffULL;
	cpu.regs.vmxon = vmxon;
	cpu.perf = cpu.regs;
}

static struct mtrace_ptseq_ring ring(void)
{
	return (struct mtrace_ptseq_ring){ .table_phys = &cpu.table_phys, .nr_tables = 1 };
}

static struct mtrace_pt_program encode(u32 flags, unsigned int nr_filters)
{
	struct mtrace_config c = {
		.flags = flags, .pid = 1, .ring_size = RING, .region_size = REGION,
		.sb_records = 16, .nr_filters = nr_filters,
	};
	struct mtrace_pt_program p;
	unsigned int i;

	for (i = 0; i < nr_filters; i++) {
		c.filters[i].start = 0x1000 * (i + 1);
		c.filters[i].end = 0x1000 * (i + 1) + 0xfff;
		c.filters[i].action = MTRACE_FILTER_TRACE;
	}
	MT_ASSERT_EQ(mtrace_config_encode(&c, &cpu.caps, RING, &p), 0);
	return p;
}

/* One session's state, armed with a plain user-space configuration. */
struct armed {
	struct mtrace_pt_program pp;
	struct mtrace_ptseq_prog p;
	struct mtrace_ptseq_ring r;
	struct mtrace_ptseq s;
	struct mtrace_ptseq_stop out;
};

static int arm(struct armed *a, bool vmxon, bool vmx_pt)
{
	memset(a, 0, sizeof(*a));
	setup(vmxon, vmx_pt);
	a->pp = encode(MTRACE_CFG_USER, 0);
	a->p = (struct mtrace_ptseq_prog){ .ctl = a->pp.ctl, .addr = a->pp.addr };
	a->r = ring();
	return mtrace_ptseq_arm(&a->s, &a->p, &a->r);
}

/* After stop and "free": every register is perf's again, nothing names the ring. */
static void assert_restored(void)
{
	MT_ASSERT_EQ(cpu.faults, 0);
	MT_ASSERT_EQ(cpu.regs.ctl, cpu.perf.ctl);
	MT_ASSERT_EQ(cpu.regs.status, cpu.perf.status);
	MT_ASSERT_EQ(cpu.regs.output_base, cpu.perf.output_base);
	MT_ASSERT_EQ(cpu.regs.mask_ptrs, cpu.perf.mask_ptrs);
	MT_ASSERT_EQ(cpu.regs.cr3_match, cpu.perf.cr3_match);
	MT_ASSERT(!memcmp(cpu.regs.addr, cpu.perf.addr, sizeof(cpu.regs.addr)));
	cpu.ring_live = false;
	/* perf schedules its event back in without rewriting its cached MSRs. */
	MT_ASSERT_EQ(mtrace_msr_write(MTRACE_MSR_RTIT_CTL,
				      cpu.perf.ctl | MTRACE_RTIT_CTL_TRACEEN), 0);
}

static void session(const struct mtrace_pt_program *pp)
{
	struct mtrace_ptseq_prog p = { .ctl = pp->ctl, .addr = pp->addr };
	struct mtrace_ptseq_ring r = ring();
	struct mtrace_ptseq s = { 0 };
	struct mtrace_ptseq_stop out;
	u64 off;

	MT_ASSERT_EQ(mtrace_ptseq_arm(&s, &p, &r), 0);
	mtrace_ptseq_resume(&s, &p, &r, true);
	MT_ASSERT(s.trace_on && cpu.regs.ctl & MTRACE_RTIT_CTL_TRACEEN);
	mtrace_ptseq_resume(&s, &p, &r, false);
	mtrace_ptseq_resume(&s, &p, &r, true);
	cpu.regs.mask_ptrs = mtrace_topa_mask_ptrs(3, 100);	/* the CPU wrote */
	mtrace_ptseq_stop(&s, &p, &r, &out);
	MT_ASSERT(out.ours && !s.armed && !s.holds_ring);
	MT_ASSERT_EQ(s.flags, 0);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&cpu.plan, &cpu.table_phys, out.base,
					      out.mask, &off), 0);
	MT_ASSERT_EQ(off, 3 * REGION + 100);
	MT_ASSERT(!mtrace_ptseq_release(&s, &r));
	assert_restored();
}

/* Defect 1: the registers named the freed ring after every session. */
MT_TEST(perf_was_here_restored)
{
	struct mtrace_pt_program p;

	setup(false, false);
	p = encode(MTRACE_CFG_USER | MTRACE_CFG_TSC, 0);
	session(&p);
	setup(false, false);
	p = encode(MTRACE_CFG_USER | MTRACE_CFG_KERNEL | MTRACE_CFG_MTC |
		   MTRACE_CFG_CYC | MTRACE_CFG_NO_RETCOMP, 2);
	session(&p);	/* address ranges saved and given back too */
}

/* STATUS read-only bits (ContextEn here) are not written back: that would #GP. */
MT_TEST(status_readonly_bits_not_restored)
{
	struct armed a;

	memset(&a, 0, sizeof(a));
	MT_ASSERT_EQ(arm(&a, false, false), 0);
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	setup(false, false);
	cpu.regs.status |= BIT_ULL(1);
	a.s = (struct mtrace_ptseq){ 0 };
	MT_ASSERT_EQ(mtrace_ptseq_arm(&a.s, &a.p, &a.r), 0);
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	MT_ASSERT_EQ(cpu.faults, 0);
	MT_ASSERT_EQ(cpu.regs.status, cpu.perf.status);
	MT_ASSERT(!(a.s.flags & MTRACE_CPU_ERROR));
}

MT_TEST(arm_refused_when_traceen_set)
{
	struct mtrace_pt_program pp;
	struct mtrace_ptseq_prog p;
	struct mtrace_ptseq_ring r;
	struct mtrace_ptseq s = { 0 };

	setup(false, false);
	pp = encode(MTRACE_CFG_USER, 0);
	p = (struct mtrace_ptseq_prog){ .ctl = pp.ctl, .addr = pp.addr };
	r = ring();
	cpu.regs.ctl |= MTRACE_RTIT_CTL_TRACEEN;
	cpu.perf.ctl = cpu.regs.ctl;
	MT_ASSERT_EQ(mtrace_ptseq_arm(&s, &p, &r), -EBUSY);
	MT_ASSERT(!s.armed && !s.holds_ring);
	MT_ASSERT(!memcmp(&cpu.regs, &cpu.perf, sizeof(cpu.regs)));
	MT_ASSERT_EQ(cpu.faults, 0);
}

/* A write that faults during arm: the error, and everything given back. */
MT_TEST(arm_fault_restores)
{
	struct mtrace_pt_program pp;
	struct mtrace_ptseq_prog p;
	struct mtrace_ptseq_ring r;
	unsigned int n;

	for (n = 1; n <= 6; n++) {
		struct mtrace_ptseq s = { 0 };

		setup(false, false);
		pp = encode(MTRACE_CFG_USER, 1);
		p = (struct mtrace_ptseq_prog){ .ctl = pp.ctl, .addr = pp.addr };
		r = ring();
		cpu.fail_write = n;
		MT_ASSERT_EQ(mtrace_ptseq_arm(&s, &p, &r), -EIO);
		MT_ASSERT(!s.armed && s.flags & MTRACE_CPU_ERROR);
		cpu.fail_write = 0;
		/* The faulted write itself is the only one not undone. */
		MT_ASSERT(!mtrace_ptseq_release(&s, &r));
		MT_ASSERT(cpu.regs.output_base != cpu.table_phys);
		MT_ASSERT_EQ(cpu.faults, 0);
	}
}

/* Defect 1: a restore that fails leaves the ring referenced: leak it. */
MT_TEST(failed_restore_means_leak)
{
	struct armed a;

	MT_ASSERT_EQ(arm(&a, false, false), 0);
	/* stop: CTL is not rewritten (TraceEn clear); STATUS, then OUTPUT_BASE. */
	cpu.writes = 0;
	cpu.fail_write = 2;
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	MT_ASSERT(a.s.flags & MTRACE_CPU_ERROR && a.s.holds_ring);
	/* The release retry succeeds here: no leak needed. */
	cpu.fail_write = 0;
	MT_ASSERT(!mtrace_ptseq_release(&a.s, &a.r));
	MT_ASSERT_EQ(cpu.regs.output_base, PERF_TABLE);
	/* When it cannot write the register either, it must assume the worst. */
	a.s.holds_ring = true;
	cpu.regs.output_base = cpu.table_phys;
	cpu.fail_write = 1;
	cpu.writes = 0;
	MT_ASSERT(mtrace_ptseq_release(&a.s, &a.r));
	MT_ASSERT_EQ(cpu.faults, 0);
}

/*
 * Defect 3: a probe ran between another sequence's RDMSR and WRMSR and left
 * TraceEn set behind our back. Stop must clear it (OUTPUT_BASE is ours),
 * not merely mark the CPU clobbered.
 */
MT_TEST(stop_clears_traceen_whatever_ctl_says)
{
	struct armed a;

	MT_ASSERT_EQ(arm(&a, false, false), 0);
	cpu.regs.ctl |= MTRACE_RTIT_CTL_TRACEEN;	/* trace_on is false */
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	MT_ASSERT(a.s.flags & MTRACE_CPU_CLOBBERED);
	MT_ASSERT(!(cpu.regs.ctl & MTRACE_RTIT_CTL_TRACEEN));
	MT_ASSERT(!mtrace_ptseq_release(&a.s, &a.r));
	assert_restored();
}

/* Defect 1: resume compares OUTPUT_BASE as well as CTL. */
MT_TEST(resume_checks_output_base)
{
	struct armed a;

	MT_ASSERT_EQ(arm(&a, false, false), 0);
	cpu.regs.output_base = PERF_TABLE;	/* perf took the output, not CTL */
	cpu.regs.mask_ptrs = cpu.perf.mask_ptrs;
	cpu.perf.ctl = cpu.regs.ctl;
	mtrace_ptseq_resume(&a.s, &a.p, &a.r, true);
	MT_ASSERT(!a.s.trace_on && a.s.flags & MTRACE_CPU_CLOBBERED);
	MT_ASSERT(!(cpu.regs.ctl & MTRACE_RTIT_CTL_TRACEEN));
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	MT_ASSERT(!a.out.ours && !a.s.holds_ring);
	/* perf's registers are left alone. */
	MT_ASSERT_EQ(cpu.regs.output_base, PERF_TABLE);
	MT_ASSERT_EQ(cpu.faults, 0);
}

/*
 * Defect 2: VMXON without VMX_MISC[14] cleared TraceEn and setting it
 * faults; the failed write must not leave the CPU marked as tracing.
 */
MT_TEST(vmxon_midsession_write_fails)
{
	struct armed a;

	MT_ASSERT_EQ(arm(&a, false, false), 0);
	mtrace_pt_model_vmx(&cpu.model, &cpu.regs, true);
	mtrace_ptseq_resume(&a.s, &a.p, &a.r, true);
	MT_ASSERT_EQ(cpu.faults, 1);		/* the #GP the model raised */
	MT_ASSERT(!a.s.trace_on && a.s.flags & MTRACE_CPU_ERROR);
	cpu.faults = 0;
	mtrace_ptseq_stop(&a.s, &a.p, &a.r, &a.out);
	MT_ASSERT(!mtrace_ptseq_release(&a.s, &a.r));
	mtrace_pt_model_vmx(&cpu.model, &cpu.regs, false);
	assert_restored();
}

MT_TEST(vmx_misc14_allows_tracing)
{
	struct armed a;

	MT_ASSERT_EQ(arm(&a, true, true), 0);
	mtrace_ptseq_resume(&a.s, &a.p, &a.r, true);
	MT_ASSERT(a.s.trace_on && !a.s.flags && !cpu.faults);
}

/* The model's rules themselves, one by one. */
MT_TEST(model_rules)
{
	const char *why;
	u64 ctl;

	setup(false, false);
	ctl = cpu.regs.ctl;
#define GP(msr, val) MT_ASSERT_EQ(mtrace_pt_model_wrmsr(&cpu.model, &cpu.regs, msr, val, &why), -EIO)
#define OK(msr, val) MT_ASSERT_EQ(mtrace_pt_model_wrmsr(&cpu.model, &cpu.regs, msr, val, &why), 0)
	GP(MTRACE_MSR_RTIT_CTL, ctl | BIT_ULL(48));		/* reserved */
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_FABRIC_EN); /* ECX[3]=0 */
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_PWR_EVT_EN); /* EBX[5]=0 */
	GP(MTRACE_MSR_RTIT_CTL, ctl | 1ULL << MTRACE_RTIT_CTL_MTC_FREQ_SHIFT);
	GP(MTRACE_MSR_RTIT_CTL, ctl | 15ULL << MTRACE_RTIT_CTL_CYC_THRESH_SHIFT);
	GP(MTRACE_MSR_RTIT_CTL, ctl | 3ULL << MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(0));
	GP(MTRACE_MSR_RTIT_CTL, ctl | 1ULL << MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(2));
	GP(MTRACE_MSR_RTIT_ADDR0_A + 4, 0);			/* 2 ranges only */
	GP(MTRACE_MSR_RTIT_ADDR0_A, 0x0000800000000000ULL);	/* non-canonical */
	GP(MTRACE_MSR_RTIT_STATUS, BIT_ULL(0));			/* FilterEn is RO */
	GP(MTRACE_MSR_RTIT_OUTPUT_BASE, 0x1010);		/* bits 6:0 */
	GP(MTRACE_MSR_RTIT_OUTPUT_BASE, 1ULL << 39);		/* > MAXPHYADDR */
	/* TraceEn=1 needs a live ToPA: the freed ring is none. */
	OK(MTRACE_MSR_RTIT_OUTPUT_BASE, TABLE_BASE);
	OK(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(0, 0));
	cpu.ring_live = false;
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);
	cpu.ring_live = true;
	OK(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(0, REGION));
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);	/* offset */
	OK(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(16, 0));
	OK(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);	/* END slot */
	/* While TraceEn=1 only TraceEn may change, and nothing else be written. */
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN | MTRACE_RTIT_CTL_DISRETC);
	GP(MTRACE_MSR_RTIT_OUTPUT_BASE, TABLE_BASE);
	GP(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(0, 0));
	GP(MTRACE_MSR_RTIT_STATUS, 0);
	GP(MTRACE_MSR_RTIT_ADDR0_A, 0);
	GP(MTRACE_MSR_RTIT_CR3_MATCH, 0);
	OK(MTRACE_MSR_RTIT_CTL, ctl);
	/* Post-VMXON without VMX_MISC[14]: TraceEn cleared, and setting it faults. */
	OK(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(0, 0));
	OK(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);
	mtrace_pt_model_vmx(&cpu.model, &cpu.regs, true);
	MT_ASSERT_EQ(cpu.regs.ctl, ctl);
	GP(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);
	mtrace_pt_model_vmx(&cpu.model, &cpu.regs, false);
	OK(MTRACE_MSR_RTIT_CTL, ctl | MTRACE_RTIT_CTL_TRACEEN);
#undef GP
#undef OK
}

/* BDM106: BranchEn=0 with TraceEn=1 faults on Broadwell. */
MT_TEST(model_bdm106)
{
	const char *why;

	setup(false, false);
	cpu.caps.branch_always_on = true;
	cpu.regs.output_base = TABLE_BASE;
	cpu.regs.mask_ptrs = mtrace_topa_mask_ptrs(0, 0);
	MT_ASSERT_EQ(mtrace_pt_model_wrmsr(&cpu.model, &cpu.regs, MTRACE_MSR_RTIT_CTL,
					   MTRACE_RTIT_CTL_TOPA | MTRACE_RTIT_CTL_USR |
					   MTRACE_RTIT_CTL_TRACEEN, &why), -EIO);
}

/* Every configuration the module encodes is one the CPU accepts, and leaves no trace. */
MT_TEST(random_configs_accepted_and_restored)
{
	static const u32 opts[] = {
		MTRACE_CFG_KERNEL, MTRACE_CFG_TSC, MTRACE_CFG_MTC, MTRACE_CFG_CYC,
		MTRACE_CFG_NO_RETCOMP, MTRACE_CFG_NO_BRANCH, MTRACE_CFG_PSB_FREQ,
	};
	unsigned int seed = 1, i, k;

	for (i = 0; i < 200; i++) {
		struct mtrace_config c = {
			.pid = 1, .ring_size = RING, .region_size = REGION,
			.sb_records = 16, .flags = MTRACE_CFG_USER,
		};
		struct mtrace_pt_program p;

		setup(false, false);
		for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
			if ((seed = seed * 1103515245 + 12345) >> 16 & 1)
				c.flags |= opts[k];
		if (c.flags & MTRACE_CFG_MTC)
			c.mtc_freq = (seed >> 8) % 2 ? 3 : 6;	/* 0x249: 0,3,6,9 */
		if (c.flags & MTRACE_CFG_CYC)
			c.cyc_thresh = (seed >> 4) % 14;
		if (c.flags & MTRACE_CFG_PSB_FREQ)
			c.psb_freq = (seed >> 12) % 6;
		c.nr_filters = (seed >> 20) % 3;
		for (k = 0; k < c.nr_filters; k++) {
			c.filters[k].start = 0xffffffff81000000ULL + k * 0x10000;
			c.filters[k].end = c.filters[k].start + 0xffff;
			c.filters[k].action = k ? MTRACE_FILTER_STOP : MTRACE_FILTER_TRACE;
		}
		MT_ASSERT_EQ(mtrace_config_encode(&c, &cpu.caps, RING, &p), 0);
		session(&p);
	}
}
