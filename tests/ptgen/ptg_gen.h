/* SPDX-License-Identifier: MIT */
/*
 * The generator: schedules recorded threads onto virtual CPUs and turns
 * each CPU's instruction stream into the packets user-only Intel PT would
 * write, with the module's per-task enable/disable at every context switch
 * and a matching sideband record. Optionally injects internal buffer
 * overflows, stops at a trigger (symbol address + hit count) and keeps
 * what each CPU's ring would still hold at the freeze.
 */
#ifndef PTG_GEN_H
#define PTG_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ptg_insn.h"
#include "ptg_pkt.h"
#include "ptg_trace.h"

/* The CPU the generated trace claims to come from: Tiger Lake (family 6,
 * model 0x8c). libipt enables BDM70, SKD022 and SKL014 for it; none of them
 * changes how these streams decode (no PSB+ surprises, no VMX, no address
 * filters), and the round trip checks with them on. */
#define PTG_CPU_FAMILY 6
#define PTG_CPU_MODEL 0x8c
#define PTG_CPU_STEPPING 1

struct ptg_gen_cfg {
	struct ptg_pkt_cfg pkt;
	unsigned ncpu;
	size_t slice_insns;	/* time slice: preempted after this many instructions */
	unsigned switch_pct;	/* % of syscalls that block and switch the thread out */
	uint32_t syscall_cycles;	/* time in the kernel per syscall */
	uint32_t irq_cycles;	/* time in the kernel per interrupt or signal */
	uint32_t switch_cycles;	/* scheduler time between two tasks */
	uint64_t tsc0;		/* synthetic time at the start */
	uint64_t seed;		/* scheduling decisions */
	size_t ovf_every;	/* overflow every N instructions (0: never) ... */
	size_t ovf_len;		/* ... losing the packets of this many */
	uint64_t trigger_ip;	/* freeze at the trigger_hit-th execution (0: at the end) */
	unsigned trigger_hit;
	size_t ring_size;	/* bytes each CPU's ring keeps (0: everything) */
	bool record_seq;	/* keep each CPU's decodable instruction sequence */
	/* User and kernel traced together (ptg_ukwalk.h): far transfers are
	 * TIPs and interrupts FUP + TIP instead of leaving the trace. */
	bool kernel_traced;
	FILE *truth;		/* ground truth output, or NULL */
	/* Mappings created or removed after the start (ptg_trace.h): each
	 * gets the synthetic time of the system call that made it. */
	struct ptg_map_event *map_events;
	size_t nmap_events;
	/* Threads given in pieces (a long walk, ptg_walk.h), or NULL: called
	 * once thread @t has run the last instruction it holds, it replaces
	 * them with the next piece and returns 1, or returns 0 when the
	 * thread ends there, or -errno. Instruction indexes (the sequence, the
	 * ground truth, map events, thread creation) then count from the
	 * start of each piece, so a piecewise thread has none of those. */
	int (*more)(void *ctx, size_t t);
	void *more_ctx;
};

void ptg_gen_cfg_default(struct ptg_gen_cfg *cfg);

/* One executed instruction: thread index and instruction index. @lost:
 * its packets were lost in an overflow, so a decoder may or may not show
 * it (libipt walks on until it needs trace, then reports the overflow). */
struct ptg_pos {
	uint32_t thread;
	uint32_t index;
	bool lost;
	bool time_known;	/* no overflow lost timing packets before it */
	uint64_t tsc;		/* synthetic time the instruction started */
};

/* The sequence position a PSB at @offset is followed by. */
struct ptg_psb_mark {
	size_t offset;
	size_t seq;
};

struct ptg_cpu {
	struct ptg_pkt pkt;
	struct ptg_pos *seq;	/* decodable instructions in order (record_seq) */
	size_t nseq, capseq;
	struct ptg_psb_mark *psb;
	size_t npsb, cappsb;
	size_t ring_start;	/* first byte the ring kept (0 if it never wrapped) */
	bool wrapped;
	size_t seq_start;	/* first sequence entry a decoder can see in the ring */
	uint64_t stop_tsc;
	/* scheduling state */
	int cur;		/* running thread or -1 */
	int prev;		/* last thread switched out, -1 if idle since */
	size_t slice_left;
	bool prev_preempted;	/* prev was switched out still runnable */
	size_t ovf_left;	/* instructions until the overflow resolves */
	size_t last_pkt_seq;	/* sequence length after the last packet-producing instruction */
};

/* A context switch on @cpu from @prev to @next. @preempted: @prev was
 * still runnable (its time slice ended) rather than blocked in a syscall
 * or finished. */
struct ptg_switch {
	uint64_t tsc;
	uint32_t cpu;
	int32_t prev, next;	/* thread indexes, -1 for idle */
	bool preempted;
};

struct ptg_trigger {
	bool hit;
	uint32_t cpu, thread;
	size_t index;
	uint64_t tsc, ip;
};

struct ptg_gen {
	const struct ptg_gen_cfg *cfg;
	const struct ptg_thread *thr;
	size_t nthr;
	struct ptg_insn_cache *ic;
	struct ptg_cpu *cpu;
	struct ptg_switch *sw;
	size_t nsw, capsw;
	struct ptg_trigger trigger;
	size_t insns;		/* instructions generated */
	/* per-thread scheduling state */
	struct ptg_tstate *ts;
	uint64_t rng;
	unsigned hits;
};

int ptg_gen_run(struct ptg_gen *g, const struct ptg_gen_cfg *cfg, const struct ptg_thread *thr,
		size_t nthr, struct ptg_insn_cache *ic);
void ptg_gen_fini(struct ptg_gen *g);
/* The switch records are what Linux could write: a thread is switched in
 * only while it is on no CPU, strictly after the record that switched it
 * out of the last one. ptg_gen_run() ends with this check; -EINVAL (with
 * a message) if they are not. */
int ptg_gen_check_switches(const struct ptg_gen *g);

#endif
