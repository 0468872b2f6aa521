/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ToPA ring layout, the write position read back from the output MSRs, and
 * the software PT writer of the simulated backend. Pure logic: no
 * allocation and no hardware access, also built in user space.
 */
#ifndef MTRACE_TOPA_H
#define MTRACE_TOPA_H

#include "mtrace_types.h"

/*
 * A ring of nr_regions equal output regions. With multi-entry ToPA, table t
 * holds regions [t * per_table, ...) followed by an END entry linking to
 * table t + 1, the last one back to table 0. Without it, one table holds
 * the single region and an END entry pointing back to itself.
 */
struct mtrace_topa_plan {
	u64 ring_size;
	u64 region_size;
	u32 nr_regions;
	u32 nr_tables;
	u32 per_table;		/* output entries in every table but the last */
};

/* The emulated RTIT MSRs of one CPU (simulated backend, unit tests). */
struct mtrace_sim_regs {
	u64 ctl;
	u64 status;
	u64 output_base;
	u64 mask_ptrs;
	u64 cr3_match;
	u64 addr[8];		/* ADDR0_A, ADDR0_B, ... ADDR3_B */
	bool vmxon;		/* the CPU is in VMX operation */
};

/*
 * How the software writer reaches memory through physical addresses found
 * in the tables, as the CPU does. Both return NULL for an address that is
 * not part of the ring, which the writer reports as an operational error.
 */
struct mtrace_topa_mem {
	u64 *(*table)(void *ctx, u64 phys);
	u8 *(*region)(void *ctx, u64 phys, u64 size);
	void *ctx;
};

int mtrace_topa_plan(struct mtrace_topa_plan *p, u64 ring_size,
		     u64 region_size, bool multi_entry);
u32 mtrace_topa_table_len(const struct mtrace_topa_plan *p, u32 table);
int mtrace_topa_fill(const struct mtrace_topa_plan *p, u64 *const *tables,
		     const u64 *table_phys, const u64 *region_phys);
u64 mtrace_topa_mask_ptrs(u32 idx, u32 offset);
int mtrace_topa_write_offset(const struct mtrace_topa_plan *p,
			     const u64 *table_phys, u64 output_base,
			     u64 mask_ptrs, u64 *offset);
long mtrace_topa_sim_write(const struct mtrace_topa_mem *mem,
			   struct mtrace_sim_regs *regs, const u8 *data,
			   u64 len);

/* Sideband ring: 'head' records written in total into 'cap' slots. */
static inline u64 mtrace_sb_first_seq(u64 head, u64 cap)
{
	return head > cap ? head - cap : 0;
}

#endif /* MTRACE_TOPA_H */
