// SPDX-License-Identifier: GPL-2.0-only
/*
 * ToPA (Table of Physical Addresses) ring arithmetic, after Intel SDM Vol.
 * 3C, "Table of Physical Addresses (ToPA)" and the IA32_RTIT_OUTPUT_BASE /
 * IA32_RTIT_OUTPUT_MASK_PTRS descriptions.
 */
#include "mtrace_topa.h"
#include "mtrace_pt_defs.h"

static u32 ilog2_u64(u64 v)
{
	u32 n = 0;

	while (v >>= 1)
		n++;
	return n;
}

int mtrace_topa_plan(struct mtrace_topa_plan *p, u64 ring_size,
		     u64 region_size, bool multi_entry)
{
	u64 regions;

	memset(p, 0, sizeof(*p));
	if (!mtrace_is_pow2(ring_size) || !mtrace_is_pow2(region_size) ||
	    region_size < MT_TOPA_REGION_MIN || region_size > MT_TOPA_REGION_MAX ||
	    region_size > ring_size)
		return -EINVAL;
	regions = ring_size / region_size;
	if (!multi_entry && regions != 1)
		return -EINVAL;
	if (regions > 1U << 24)	/* far beyond MTRACE_RING_MAX; keeps u32 safe */
		return -EINVAL;
	p->ring_size = ring_size;
	p->region_size = region_size;
	p->nr_regions = regions;
	p->per_table = MT_TOPA_TABLE_ENTRIES - 1;
	p->nr_tables = (regions + p->per_table - 1) / p->per_table;
	return 0;
}

u32 mtrace_topa_table_len(const struct mtrace_topa_plan *p, u32 table)
{
	u32 first = table * p->per_table;
	u32 left = p->nr_regions - first;

	return left < p->per_table ? left : p->per_table;
}

int mtrace_topa_fill(const struct mtrace_topa_plan *p, u64 *const *tables,
		     const u64 *table_phys, const u64 *region_phys)
{
	u64 size_code = (u64)(ilog2_u64(p->region_size) - 12) << MT_TOPA_SIZE_SHIFT;
	u32 t, i, r = 0;

	for (t = 0; t < p->nr_tables; t++) {
		u32 len = mtrace_topa_table_len(p, t);
		u32 next = (t + 1) % p->nr_tables;

		if (table_phys[t] & (MT_TOPA_PAGE_SIZE - 1))
			return -EINVAL;
		memset(tables[t], 0, MT_TOPA_PAGE_SIZE);
		/* No INT and no STOP: the ring overwrites itself forever. */
		for (i = 0; i < len; i++, r++) {
			/* Regions must be aligned to their size. */
			if (region_phys[r] & (p->region_size - 1))
				return -EINVAL;
			tables[t][i] = region_phys[r] | size_code;
		}
		tables[t][len] = table_phys[next] | MT_TOPA_END;
	}
	return 0;
}

u64 mtrace_topa_mask_ptrs(u32 idx, u32 offset)
{
	return (u64)offset << MTRACE_RTIT_MASK_OFF_SHIFT |
	       (u64)idx << MTRACE_RTIT_MASK_IDX_SHIFT | MTRACE_RTIT_MASK_LOWER;
}

int mtrace_topa_write_offset(const struct mtrace_topa_plan *p,
			     const u64 *table_phys, u64 output_base,
			     u64 mask_ptrs, u64 *offset)
{
	u32 idx = (mask_ptrs & MTRACE_RTIT_MASK_IDX_MASK) >> MTRACE_RTIT_MASK_IDX_SHIFT;
	u64 off = mask_ptrs >> MTRACE_RTIT_MASK_OFF_SHIFT;
	u64 pos;
	u32 t;

	for (t = 0; t < p->nr_tables; t++)
		if (table_phys[t] == output_base)
			break;
	/*
	 * Anything else means another agent reprogrammed the output. The
	 * index may name the END slot (the CPU can report it before it
	 * follows the link), which is the start of the next table's first
	 * region: the same arithmetic, as regions are numbered across tables.
	 */
	if (t == p->nr_tables || idx > mtrace_topa_table_len(p, t) ||
	    off > p->region_size ||
	    (idx == mtrace_topa_table_len(p, t) && off))
		return -ERANGE;
	pos = ((u64)t * p->per_table + idx) * p->region_size + off;
	/*
	 * A full region (offset == size) only happens after a STOP entry:
	 * the next byte would go to the start of the following region.
	 */
	*offset = pos % p->ring_size;
	return 0;
}

static u32 entry_size_shift(u64 entry)
{
	return 12 + ((entry & MT_TOPA_SIZE_MASK) >> MT_TOPA_SIZE_SHIFT);
}

/*
 * Loads the entry at the current table index, following END links as the
 * CPU does. Returns NULL (operational error) for a table outside the ring
 * or an END pointing at another END.
 */
static u64 *current_entry(const struct mtrace_topa_mem *mem,
			  struct mtrace_sim_regs *regs)
{
	u32 idx = (regs->mask_ptrs & MTRACE_RTIT_MASK_IDX_MASK) >> MTRACE_RTIT_MASK_IDX_SHIFT;
	u64 *table = mem->table(mem->ctx, regs->output_base);

	if (!table || idx >= MT_TOPA_TABLE_ENTRIES)
		return NULL;
	if (!(table[idx] & MT_TOPA_END))
		return &table[idx];
	regs->output_base = table[idx] & MT_TOPA_BASE_MASK;
	regs->mask_ptrs = mtrace_topa_mask_ptrs(0, 0);
	table = mem->table(mem->ctx, regs->output_base);
	if (!table || table[0] & MT_TOPA_END)
		return NULL;
	return &table[0];
}

long mtrace_topa_sim_write(const struct mtrace_topa_mem *mem,
			   struct mtrace_sim_regs *regs, const u8 *data,
			   u64 len)
{
	u64 done = 0;

	if (!(regs->ctl & MTRACE_RTIT_CTL_TRACEEN) || !(regs->ctl & MTRACE_RTIT_CTL_TOPA))
		return -EAGAIN;
	while (done < len &&
	       !(regs->status & (MTRACE_RTIT_STATUS_STOPPED | MTRACE_RTIT_STATUS_ERROR))) {
		u64 *entry = current_entry(mem, regs);
		u32 idx;
		u64 size, off, n;
		u8 *region;

		if (!entry) {
			regs->status |= MTRACE_RTIT_STATUS_ERROR;
			break;
		}
		size = 1ULL << entry_size_shift(*entry);
		off = regs->mask_ptrs >> MTRACE_RTIT_MASK_OFF_SHIFT;
		region = mem->region(mem->ctx, *entry & MT_TOPA_BASE_MASK, size);
		if (!region || off >= size) {
			regs->status |= MTRACE_RTIT_STATUS_ERROR;
			break;
		}
		n = size - off < len - done ? size - off : len - done;
		memcpy(region + off, data + done, n);
		done += n;
		off += n;
		idx = (regs->mask_ptrs & MTRACE_RTIT_MASK_IDX_MASK) >> MTRACE_RTIT_MASK_IDX_SHIFT;
		if (off < size) {
			regs->mask_ptrs = mtrace_topa_mask_ptrs(idx, off);
		} else if (*entry & MT_TOPA_STOP) {
			/* Full region with STOP: offset stays at the size. */
			regs->mask_ptrs = mtrace_topa_mask_ptrs(idx, off);
			regs->status |= MTRACE_RTIT_STATUS_STOPPED;
		} else {
			/* The CPU moves on at once, through END links too. */
			regs->mask_ptrs = mtrace_topa_mask_ptrs(idx + 1, 0);
			if (!current_entry(mem, regs))
				regs->status |= MTRACE_RTIT_STATUS_ERROR;
		}
	}
	return done;
}
