// SPDX-License-Identifier: MIT
/*
 * Unit tests of the module's ToPA logic (kmod/mtrace_topa.c, compiled here
 * in user space): ring layout for many sizes and both table layouts, the
 * write offset read back from OUTPUT_BASE/OUTPUT_MASK_PTRS, and the
 * software PT writer of the simulated backend, checked against an
 * independent model of the ring (the tail of everything written).
 */
#include "../../kmod/mtrace_topa.c"

#include <stdlib.h>

#include "../lib/mt_test.h"

/* A fake physical address space: tables and regions in separate arenas. */
#define TABLE_BASE	0x100000000ULL
#define REGION_BASE	0x800000000ULL

struct fake_mem {
	struct mtrace_topa_plan plan;
	u64 **tables;
	u64 *table_phys;
	u64 *region_phys;
	u8 *data;		/* region r at data + r * region_size */
};

static u64 *fake_table(void *ctx, u64 phys)
{
	struct fake_mem *m = ctx;
	u64 t = (phys - TABLE_BASE) / MT_TOPA_PAGE_SIZE;

	if (phys < TABLE_BASE || t >= m->plan.nr_tables ||
	    phys != m->table_phys[t])
		return NULL;
	return m->tables[t];
}

static u8 *fake_region(void *ctx, u64 phys, u64 size)
{
	struct fake_mem *m = ctx;
	u64 r = (phys - REGION_BASE) / m->plan.region_size;

	if (phys < REGION_BASE || r >= m->plan.nr_regions ||
	    size != m->plan.region_size)
		return NULL;
	return m->data + r * m->plan.region_size;
}

static void fake_init(struct fake_mem *m, u64 ring, u64 region, bool multi)
{
	u32 i;

	MT_ASSERT_EQ(mtrace_topa_plan(&m->plan, ring, region, multi), 0);
	m->tables = calloc(m->plan.nr_tables, sizeof(*m->tables));
	m->table_phys = calloc(m->plan.nr_tables, sizeof(u64));
	m->region_phys = calloc(m->plan.nr_regions, sizeof(u64));
	m->data = calloc(1, ring);
	MT_ASSERT(m->tables && m->table_phys && m->region_phys && m->data);
	for (i = 0; i < m->plan.nr_tables; i++) {
		m->tables[i] = aligned_alloc(MT_TOPA_PAGE_SIZE, MT_TOPA_PAGE_SIZE);
		MT_ASSERT(m->tables[i]);
		m->table_phys[i] = TABLE_BASE + i * MT_TOPA_PAGE_SIZE;
	}
	for (i = 0; i < m->plan.nr_regions; i++)
		m->region_phys[i] = REGION_BASE + (u64)i * region;
	MT_ASSERT_EQ(mtrace_topa_fill(&m->plan, m->tables, m->table_phys,
				      m->region_phys), 0);
}

static void fake_free(struct fake_mem *m)
{
	u32 i;

	for (i = 0; i < m->plan.nr_tables; i++)
		free(m->tables[i]);
	free(m->tables);
	free(m->table_phys);
	free(m->region_phys);
	free(m->data);
}

static void sim_arm(const struct fake_mem *m, struct mtrace_sim_regs *regs)
{
	regs->ctl = MTRACE_RTIT_CTL_TRACEEN | MTRACE_RTIT_CTL_TOPA;
	regs->status = 0;
	regs->output_base = m->table_phys[0];
	regs->mask_ptrs = mtrace_topa_mask_ptrs(0, 0);
}

MT_TEST(plan_counts_regions_and_tables)
{
	static const struct { u64 ring, region; u32 regions, tables, last; } c[] = {
		{ 4096, 4096, 1, 1, 1 },
		{ 8192, 4096, 2, 1, 2 },
		{ 1ULL << 20, 4096, 256, 1, 256 },
		{ 2ULL << 20, 4096, 512, 2, 1 },	/* 511 + 1 */
		{ 4ULL << 20, 4096, 1024, 3, 2 },	/* 511 + 511 + 2 */
		{ 64ULL << 20, 2ULL << 20, 32, 1, 32 },
		{ 256ULL << 20, 4096, 65536, 129, 128 },
		{ 256ULL << 20, 128ULL << 20, 2, 1, 2 },
	};
	struct mtrace_topa_plan p;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		u32 t, sum = 0;

		MT_ASSERT_EQ(mtrace_topa_plan(&p, c[i].ring, c[i].region, true), 0);
		MT_ASSERT_EQ(p.nr_regions, c[i].regions);
		MT_ASSERT_EQ(p.nr_tables, c[i].tables);
		MT_ASSERT_EQ(mtrace_topa_table_len(&p, p.nr_tables - 1), c[i].last);
		for (t = 0; t < p.nr_tables; t++)
			sum += mtrace_topa_table_len(&p, t);
		MT_ASSERT_EQ(sum, p.nr_regions);
	}
}

MT_TEST(plan_rejects_bad_sizes)
{
	struct mtrace_topa_plan p;

	MT_ASSERT_EQ(mtrace_topa_plan(&p, 12288, 4096, true), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 8192, 6144, true), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 8192, 16384, true), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 2048, 2048, true), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 512ULL << 20, 256ULL << 20, true), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 0, 4096, true), -EINVAL);
	/* Single-entry ToPA: the ring is exactly one region. */
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 8192, 4096, false), -EINVAL);
	MT_ASSERT_EQ(mtrace_topa_plan(&p, 8192, 8192, false), 0);
	MT_ASSERT_EQ(p.nr_regions, 1);
	MT_ASSERT_EQ(p.nr_tables, 1);
}

/* Every table: output entries in ring order, then END to the next table. */
static void check_tables(const struct fake_mem *m)
{
	u64 size_code = 0, r = 0;
	u32 t, i;

	while ((4096ULL << size_code) < m->plan.region_size)
		size_code++;
	for (t = 0; t < m->plan.nr_tables; t++) {
		u32 len = mtrace_topa_table_len(&m->plan, t);

		for (i = 0; i < len; i++, r++) {
			u64 e = m->tables[t][i];

			MT_ASSERT_EQ(e & MT_TOPA_BASE_MASK, m->region_phys[r]);
			MT_ASSERT_EQ((e & MT_TOPA_SIZE_MASK) >> MT_TOPA_SIZE_SHIFT, size_code);
			MT_ASSERT_EQ(e & (MT_TOPA_END | MT_TOPA_INT | MT_TOPA_STOP), 0);
		}
		MT_ASSERT_EQ(m->tables[t][len],
			     m->table_phys[(t + 1) % m->plan.nr_tables] | MT_TOPA_END);
		for (i = len + 1; i < MT_TOPA_TABLE_ENTRIES; i++)
			MT_ASSERT_EQ(m->tables[t][i], 0);
	}
	MT_ASSERT_EQ(r, m->plan.nr_regions);
}

MT_TEST(fill_multi_entry_chains_tables)
{
	static const u64 c[][2] = {
		{ 4096, 4096 }, { 65536, 4096 }, { 2ULL << 20, 4096 },
		{ 4ULL << 20, 4096 }, { 4ULL << 20, 65536 }, { 8ULL << 20, 2ULL << 20 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fake_mem m;

		fake_init(&m, c[i][0], c[i][1], true);
		check_tables(&m);
		fake_free(&m);
	}
}

MT_TEST(fill_single_entry_links_to_itself)
{
	struct fake_mem m;

	fake_init(&m, 1ULL << 20, 1ULL << 20, false);
	/* One output entry of 1 MiB (size code 8), then END back to itself. */
	MT_ASSERT_EQ(m.tables[0][0], REGION_BASE | (8ULL << 6));
	MT_ASSERT_EQ(m.tables[0][1], TABLE_BASE | 1);
	check_tables(&m);
	fake_free(&m);
}

MT_TEST(fill_rejects_misaligned_memory)
{
	struct fake_mem m;

	fake_init(&m, 65536, 16384, true);
	m.region_phys[1] += 4096;
	MT_ASSERT_EQ(mtrace_topa_fill(&m.plan, m.tables, m.table_phys,
				      m.region_phys), -EINVAL);
	m.region_phys[1] -= 4096;
	m.table_phys[0] += 128;
	MT_ASSERT_EQ(mtrace_topa_fill(&m.plan, m.tables, m.table_phys,
				      m.region_phys), -EINVAL);
	m.table_phys[0] -= 128;
	fake_free(&m);
}

MT_TEST(mask_ptrs_layout)
{
	/* SDM: bits 6:0 lower mask, 31:7 table index, 63:32 output offset. */
	MT_ASSERT_EQ(mtrace_topa_mask_ptrs(0, 0), 0x7f);
	MT_ASSERT_EQ(mtrace_topa_mask_ptrs(3, 0x1234), 0x00001234000001ffULL);
	MT_ASSERT_EQ(mtrace_topa_mask_ptrs(510, 0xfff), 0x00000fff0000ff7fULL);
}

MT_TEST(write_offset_from_registers)
{
	struct fake_mem m;
	u64 off;

	fake_init(&m, 4ULL << 20, 4096, true);	/* tables of 511, 511, 2 */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[0],
					      mtrace_topa_mask_ptrs(0, 0), &off), 0);
	MT_ASSERT_EQ(off, 0);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[0],
					      mtrace_topa_mask_ptrs(5, 100), &off), 0);
	MT_ASSERT_EQ(off, 5 * 4096 + 100);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[1],
					      mtrace_topa_mask_ptrs(2, 7), &off), 0);
	MT_ASSERT_EQ(off, (511 + 2) * 4096 + 7);
	/* Full region after STOP: the next byte goes to the next region ... */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[1],
					      mtrace_topa_mask_ptrs(510, 4096), &off), 0);
	MT_ASSERT_EQ(off, 1022 * 4096);
	/* ... and after the last region back to the start of the ring. */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[2],
					      mtrace_topa_mask_ptrs(1, 4096), &off), 0);
	MT_ASSERT_EQ(off, 0);
	/* Registers that do not describe this ring: another agent's output. */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, 0x5000,
					      mtrace_topa_mask_ptrs(0, 0), &off), -ERANGE);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[2],
					      mtrace_topa_mask_ptrs(3, 0), &off), -ERANGE);
	/* The END slot with offset 0 is the next byte after the region before. */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[2],
					      mtrace_topa_mask_ptrs(2, 8), &off), -ERANGE);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[0],
					      mtrace_topa_mask_ptrs(0, 4097), &off), -ERANGE);
	fake_free(&m);
}

/*
 * The CPU may report the output pointer at a table's END entry before it
 * follows the link (issue: such a CPU was marked clobbered): that is the
 * start of the next table's first region.
 */
MT_TEST(write_offset_at_end_slot)
{
	struct fake_mem m;
	u64 off = 1;

	fake_init(&m, 4ULL << 20, 4096, true);	/* tables of 511, 511, 2 */
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[0],
					      mtrace_topa_mask_ptrs(511, 0), &off), 0);
	MT_ASSERT_EQ(off, 511 * 4096);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[2],
					      mtrace_topa_mask_ptrs(2, 0), &off), 0);
	MT_ASSERT_EQ(off, 0);
	fake_free(&m);
	/* Single-entry ToPA: the END after the one region links to itself. */
	fake_init(&m, 64 << 10, 64 << 10, false);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, m.table_phys[0],
					      mtrace_topa_mask_ptrs(1, 0), &off), 0);
	MT_ASSERT_EQ(off, 0);
	fake_free(&m);
}

/* Deterministic non-zero bytes, so wrap detection by content also works. */
static void pattern(u8 *buf, u64 len, u32 seed)
{
	u64 i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (seed >> 16) | 1;
	}
}

/*
 * Writes 'total' bytes in chunks of 'chunk' through the emulated CPU and
 * checks the oldest-first ring contents against the tail of the input.
 */
static void check_sim_ring(u64 ring, u64 region, bool multi, u64 total, u64 chunk)
{
	struct mtrace_topa_mem mem = { fake_table, fake_region, NULL };
	struct mtrace_sim_regs regs;
	struct fake_mem m;
	u8 *in = malloc(total), *lin = malloc(ring);
	u64 done, off, keep;

	MT_ASSERT(in && lin);
	pattern(in, total, (u32)(ring ^ total ^ chunk));
	fake_init(&m, ring, region, multi);
	mem.ctx = &m;
	sim_arm(&m, &regs);
	for (done = 0; done < total; done += chunk) {
		u64 n = total - done < chunk ? total - done : chunk;

		MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, in + done, n), n);
	}
	MT_ASSERT_EQ(regs.status, 0);
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, regs.output_base,
					      regs.mask_ptrs, &off), 0);
	MT_ASSERT_EQ(off, total % ring);
	keep = total < ring ? total : ring;
	if (total >= ring) {
		memcpy(lin, m.data + off, ring - off);
		memcpy(lin + ring - off, m.data, off);
	} else {
		memcpy(lin, m.data, off);
	}
	MT_ASSERT_MEMEQ(lin, in + total - keep, keep);
	fake_free(&m);
	free(in);
	free(lin);
}

MT_TEST(sim_write_matches_tail_of_input)
{
	check_sim_ring(65536, 4096, true, 1000, 1000);		/* no wrap */
	check_sim_ring(65536, 4096, true, 65536, 4096);	/* exactly full */
	check_sim_ring(65536, 4096, true, 200000, 777);	/* wraps 3 times */
	check_sim_ring(65536, 16384, true, 65537, 65537);	/* one byte over */
	check_sim_ring(4ULL << 20, 4096, true, 9000000, 1 << 20); /* 3 tables */
	check_sim_ring(2ULL << 20, 4096, true, 5000000, 333333); /* END at 511 */
	check_sim_ring(1ULL << 20, 1ULL << 20, false, 3000001, 65536);
	check_sim_ring(8192, 8192, false, 8192 * 5 + 3, 8192 * 5 + 3);
}

/* Deterministic random layouts, totals and chunkings (xorshift32). */
MT_TEST(sim_write_random_layouts)
{
	u32 x = 0x6d747263, i;

	for (i = 0; i < 200; i++) {
		u64 ring, region, total, chunk;
		bool multi;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		ring = 4096ULL << (x % 7);		/* 4 KiB .. 256 KiB */
		multi = x & 0x100;
		region = multi ? 4096ULL << ((x >> 9) % 7) : ring;
		if (region > ring)
			region = ring;
		total = 1 + (x >> 12) % (3 * ring);
		chunk = 1 + (x >> 4) % (ring + 100);
		check_sim_ring(ring, region, multi, total, chunk);
	}
}

MT_TEST(sim_write_stop_entry_stops)
{
	struct mtrace_topa_mem mem = { fake_table, fake_region, NULL };
	struct mtrace_sim_regs regs;
	struct fake_mem m;
	u8 buf[3 * 4096];
	u64 off;

	pattern(buf, sizeof(buf), 7);
	fake_init(&m, 8192, 4096, true);
	mem.ctx = &m;
	m.tables[0][1] |= MT_TOPA_STOP;
	sim_arm(&m, &regs);
	MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, buf, sizeof(buf)), 8192);
	MT_ASSERT_EQ(regs.status, MTRACE_RTIT_STATUS_STOPPED);
	MT_ASSERT_EQ(regs.mask_ptrs, mtrace_topa_mask_ptrs(1, 4096));
	MT_ASSERT_EQ(mtrace_topa_write_offset(&m.plan, m.table_phys, regs.output_base,
					      regs.mask_ptrs, &off), 0);
	MT_ASSERT_EQ(off, 0);
	/* Stopped hardware writes nothing more. */
	MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, buf, 10), 0);
	MT_ASSERT_MEMEQ(m.data, buf, 8192);
	fake_free(&m);
}

MT_TEST(sim_write_needs_trace_enabled)
{
	struct mtrace_topa_mem mem = { fake_table, fake_region, NULL };
	struct mtrace_sim_regs regs;
	struct fake_mem m;
	u8 b = 1;

	fake_init(&m, 8192, 4096, true);
	mem.ctx = &m;
	sim_arm(&m, &regs);
	regs.ctl &= ~MTRACE_RTIT_CTL_TRACEEN;
	MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, &b, 1), -EAGAIN);
	MT_ASSERT_EQ(m.data[0], 0);
	fake_free(&m);
}

MT_TEST(sim_write_bad_tables_is_operational_error)
{
	struct mtrace_topa_mem mem = { fake_table, fake_region, NULL };
	struct mtrace_sim_regs regs;
	struct fake_mem m;
	u8 buf[8192];

	pattern(buf, sizeof(buf), 3);
	fake_init(&m, 8192, 4096, true);
	mem.ctx = &m;
	/* END pointing at memory that is no table of this ring. */
	m.tables[0][2] = 0x7000 | MT_TOPA_END;
	sim_arm(&m, &regs);
	MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, buf, sizeof(buf)), 8192);
	MT_ASSERT_EQ(regs.status, MTRACE_RTIT_STATUS_ERROR);
	/* OUTPUT_BASE pointing nowhere: nothing is written. */
	sim_arm(&m, &regs);
	regs.output_base = 0x9000;
	MT_ASSERT_EQ(mtrace_topa_sim_write(&mem, &regs, buf, 1), 0);
	MT_ASSERT_EQ(regs.status, MTRACE_RTIT_STATUS_ERROR);
	fake_free(&m);
}

MT_TEST(sideband_first_sequence)
{
	MT_ASSERT_EQ(mtrace_sb_first_seq(0, 16), 0);
	MT_ASSERT_EQ(mtrace_sb_first_seq(16, 16), 0);
	MT_ASSERT_EQ(mtrace_sb_first_seq(17, 16), 1);
	MT_ASSERT_EQ(mtrace_sb_first_seq(1000, 16), 984);
}
