// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU memory: the PT output ring (regions plus ToPA tables), its
 * read-only user mapping, and the context-switch sideband ring.
 */
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"

static u32 region_order(const struct mtrace_topa_plan *p)
{
	return get_order(p->region_size);
}

/*
 * fail_alloc=N: the N-th allocation since the session's SET_CONFIG began
 * fails, as if the kernel had no memory. Only with the simulated backend,
 * so that a stray parameter cannot break tracing on hardware. Called with
 * the session lock held.
 */
bool mtrace_alloc_should_fail(void)
{
	unsigned int nth = READ_ONCE(mtrace_fail_alloc);

	return mtrace_sim && nth && ++mtrace_sess.allocs == nth;
}

static void *ring_kvcalloc(size_t n, size_t size)
{
	return mtrace_alloc_should_fail() ? NULL : kvcalloc(n, size, GFP_KERNEL);
}

static struct page *ring_pages(int node, gfp_t gfp, unsigned int order)
{
	return mtrace_alloc_should_fail() ? NULL :
	       alloc_pages_node(node, gfp, order);
}

/* sim: the independent check that no register names memory being freed. */
static void sim_check_unreferenced(struct mtrace_ring *ring,
				   const struct mtrace_topa_plan *p)
{
	int cpu;
	u32 t;

	for_each_possible_cpu(cpu) {
		u64 base = READ_ONCE(per_cpu(mtrace_pcpu, cpu).sim.output_base);

		for (t = 0; t < p->nr_tables && ring->table_phys; t++)
			if (ring->table_phys[t] == base)
				mtrace_sim_violation("CPU %d OUTPUT_BASE names a freed table",
						     cpu);
	}
}

void mtrace_ring_free(struct mtrace_ring *ring, const struct mtrace_topa_plan *p)
{
	u32 i;

	if (!ring)
		return;
	if (mtrace_sim)
		sim_check_unreferenced(ring, p);
	for (i = 0; i < p->nr_regions && ring->regions; i++)
		if (ring->regions[i])
			__free_pages(ring->regions[i], region_order(p));
	for (i = 0; i < p->nr_tables && ring->tables; i++)
		if (ring->tables[i])
			free_page((unsigned long)ring->tables[i]);
	kvfree(ring->regions);
	kvfree(ring->region_phys);
	kvfree(ring->tables);
	kvfree(ring->table_phys);
	kfree(ring);
}

struct mtrace_ring *mtrace_ring_alloc(const struct mtrace_topa_plan *p, int node)
{
	/*
	 * Charged to the owner's memory cgroup; a ring too big for the
	 * machine fails with -ENOMEM rather than invoking the OOM killer.
	 */
	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN |
		    __GFP_NORETRY;
	struct mtrace_ring *ring;
	struct page *page;
	u32 i;

	if (mtrace_alloc_should_fail())
		return NULL;
	ring = kzalloc_node(sizeof(*ring), GFP_KERNEL, node);
	if (!ring)
		return NULL;
	ring->regions = ring_kvcalloc(p->nr_regions, sizeof(*ring->regions));
	ring->region_phys = ring_kvcalloc(p->nr_regions, sizeof(u64));
	ring->tables = ring_kvcalloc(p->nr_tables, sizeof(*ring->tables));
	ring->table_phys = ring_kvcalloc(p->nr_tables, sizeof(u64));
	if (!ring->regions || !ring->region_phys || !ring->tables ||
	    !ring->table_phys)
		goto fail;
	for (i = 0; i < p->nr_regions; i++) {
		/* Buddy blocks are aligned to their size, as ToPA requires. */
		page = ring_pages(node, gfp, region_order(p));
		if (!page)
			goto fail;
		ring->regions[i] = page;
		ring->region_phys[i] = page_to_phys(page);
	}
	for (i = 0; i < p->nr_tables; i++) {
		page = ring_pages(node, gfp, 0);
		if (!page)
			goto fail;
		ring->tables[i] = page_address(page);
		ring->table_phys[i] = page_to_phys(page);
	}
	if (mtrace_topa_fill(p, ring->tables, ring->table_phys, ring->region_phys))
		goto fail;
	return ring;
fail:
	mtrace_ring_free(ring, p);
	return NULL;
}

void mtrace_ring_clear(struct mtrace_ring *ring, const struct mtrace_topa_plan *p)
{
	u32 i;

	for (i = 0; i < p->nr_regions; i++) {
		memset(page_address(ring->regions[i]), 0, p->region_size);
		cond_resched();
	}
}

/*
 * PT reports no wrap without INT entries. The ring is zeroed at arm, so any
 * non-zero byte at or after the write offset is older trace: the ring
 * wrapped. (Zero bytes are PAD packets, so the one ambiguous case, a tail
 * of pure padding, loses nothing.)
 */
bool mtrace_ring_wrapped(struct mtrace_ring *ring,
			 const struct mtrace_topa_plan *p, u64 write_offset)
{
	u64 pos = write_offset;

	while (pos < p->ring_size) {
		u32 r = pos / p->region_size;
		u64 off = pos % p->region_size;
		u8 *base = page_address(ring->regions[r]);

		if (memchr_inv(base + off, 0, p->region_size - off))
			return true;
		pos += p->region_size - off;
	}
	return false;
}

/* Physical-address view of the ring for the software PT writer. */
struct sim_ctx {
	struct mtrace_ring *ring;
	const struct mtrace_topa_plan *plan;
	const struct mtrace_sim_regs *regs;
};

static u64 *sim_table(void *data, u64 phys)
{
	struct sim_ctx *c = data;
	u32 t;

	for (t = 0; c->ring && t < c->plan->nr_tables; t++)
		if (c->ring->table_phys[t] == phys)
			return c->ring->tables[t];
	return NULL;
}

/*
 * The region the current table entry names must be the one this ring put
 * there; anything else would let the emulation write outside the ring.
 */
static u8 *sim_region(void *data, u64 phys, u64 size)
{
	struct sim_ctx *c = data;
	const struct mtrace_topa_plan *p = c->plan;
	u32 idx = (c->regs->mask_ptrs & MTRACE_RTIT_MASK_IDX_MASK) >> MTRACE_RTIT_MASK_IDX_SHIFT;
	u32 t;
	u64 r;

	for (t = 0; t < p->nr_tables; t++)
		if (c->ring->table_phys[t] == c->regs->output_base)
			break;
	r = (u64)t * p->per_table + idx;
	if (t == p->nr_tables || r >= p->nr_regions ||
	    c->ring->region_phys[r] != phys || size != p->region_size)
		return NULL;
	return page_address(c->ring->regions[r]);
}

/* Any output region of the ring: what the model's TraceEn=1 check needs. */
static u8 *sim_any_region(void *data, u64 phys, u64 size)
{
	struct sim_ctx *c = data;
	u32 r;

	for (r = 0; c->ring && r < c->plan->nr_regions; r++)
		if (c->ring->region_phys[r] == phys && size == c->plan->region_size)
			return page_address(c->ring->regions[r]);
	return NULL;
}

/* A WRMSR on the CPU whose ring this is (NULL: none), through the model. */
int mtrace_ring_sim_wrmsr(struct mtrace_ring *ring,
			  const struct mtrace_topa_plan *p,
			  struct mtrace_sim_regs *regs, u32 msr, u64 val,
			  const char **why)
{
	struct sim_ctx ctx = { .ring = ring, .plan = p, .regs = regs };
	struct mtrace_topa_mem mem = {
		.table = sim_table, .region = sim_any_region, .ctx = &ctx,
	};
	struct mtrace_pt_model m = mtrace_sim_model;

	m.mem = &mem;
	return mtrace_pt_model_wrmsr(&m, regs, msr, val, why);
}

long mtrace_ring_sim_write(struct mtrace_ring *ring,
			   const struct mtrace_topa_plan *p,
			   struct mtrace_sim_regs *regs, const u8 *data, u64 len)
{
	struct sim_ctx ctx = { .ring = ring, .plan = p, .regs = regs };
	struct mtrace_topa_mem mem = {
		.table = sim_table, .region = sim_region, .ctx = &ctx,
	};

	return mtrace_topa_sim_write(&mem, regs, data, len);
}

static void mtrace_vm_open(struct vm_area_struct *vma)
{
	atomic_inc(&mtrace_sess.mmaps);
}

static void mtrace_vm_close(struct vm_area_struct *vma)
{
	atomic_dec(&mtrace_sess.mmaps);
}

/*
 * The rings stay read-only: refusing PROT_WRITE here rather than clearing
 * VM_MAYWRITE works the same on every kernel (vm_flags became read-only
 * behind accessors in 6.3).
 */
static int mtrace_vm_mprotect(struct vm_area_struct *vma, unsigned long start,
			      unsigned long end, unsigned long newflags)
{
	return newflags & VM_WRITE ? -EACCES : 0;
}

static const struct vm_operations_struct mtrace_vm_ops = {
	.open = mtrace_vm_open,
	.close = mtrace_vm_close,
	.mprotect = mtrace_vm_mprotect,
};

/*
 * Maps [vm_pgoff, +len) of the concatenated per-CPU rings (CPU c at
 * c * ring_size) read-only. Called with the session lock held and rings
 * allocated; every page in the range must belong to a ring.
 */
int mtrace_ring_mmap(struct vm_area_struct *vma)
{
	const struct mtrace_topa_plan *p = &mtrace_sess.plan;
	u64 pos = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long addr = vma->vm_start;
	int err;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	/*
	 * remap_pfn_range() on a private (copy-on-write) mapping must cover
	 * the whole VMA in one call, which a ring of several regions cannot;
	 * like perf's ring buffer, only MAP_SHARED is accepted (VM_MAYSHARE:
	 * a shared mapping of a read-only descriptor lacks VM_SHARED).
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	while (addr < vma->vm_end) {
		u64 cpu = pos / p->ring_size, in_ring = pos % p->ring_size;
		u64 off = in_ring % p->region_size;
		u64 len = min_t(u64, p->region_size - off, vma->vm_end - addr);
		struct mtrace_ring *ring;

		if (cpu >= nr_cpu_ids ||
		    !cpumask_test_cpu(cpu, mtrace_sess.cpus))
			return -EINVAL;
		ring = per_cpu(mtrace_pcpu, cpu).ring;
		err = remap_pfn_range(vma, addr,
				      page_to_pfn(ring->regions[in_ring / p->region_size]) +
				      (off >> PAGE_SHIFT), len, vma->vm_page_prot);
		if (err)
			return err;
		addr += len;
		pos += len;
	}
	vma->vm_ops = &mtrace_vm_ops;
	mtrace_vm_open(vma);
	return 0;
}

struct mtrace_sb *mtrace_sb_alloc(u32 records, int node)
{
	struct mtrace_sb *sb;

	if (mtrace_alloc_should_fail())
		return NULL;
	sb = kvzalloc_node(struct_size(sb, recs, records), GFP_KERNEL_ACCOUNT,
			   node);
	if (sb)
		sb->mask = records - 1;
	return sb;
}

void mtrace_sb_free(struct mtrace_sb *sb)
{
	kvfree(sb);
}
