/* SPDX-License-Identifier: MIT */
/*
 * User and kernel traced together: a user-space thread (a random walk or a
 * recorded run) gets the kernel code it would have run spliced in, walked
 * over a bundle's kernel text copies. Each far transfer out of user code
 * (SYSCALL, INT n) continues at the system-call entry, and interrupts
 * arrive at random instruction boundaries (and wherever the user thread
 * already had an asynchronous event) at the interrupt entry; each
 * excursion is a kernel walk that ends in a far return (SYSRET, IRET) to
 * the user instruction the thread goes on with. The generator then emits
 * TIP for every far transfer and FUP + TIP for the interrupts, as tracing
 * of CPL 0 and CPL 3 does (ptg_gen_cfg.kernel_traced).
 */
#ifndef PTG_UKWALK_H
#define PTG_UKWALK_H

#include <stddef.h>
#include <stdint.h>

#include "ptg_insn.h"
#include "ptg_trace.h"

struct ptg_ukwalk_cfg {
	uint64_t seed;
	uint64_t syscall_entry;	/* where SYSCALL and INT n enter the kernel */
	uint64_t irq_entry;	/* where an interrupt enters it */
	uint64_t exit_ip;	/* a far return the kernel walk can take to leave */
	size_t irq_every;	/* a timer interrupt every N user instructions on average; 0: none */
	size_t kinsns_min;	/* kernel instructions per excursion, at least ... */
	size_t kinsns_max;	/* ... and about at most */
};

struct ptg_ukwalk_stats {
	size_t syscalls, irqs, kernel_insns;
};

/*
 * Rewrites @t (user code only, with its asynchronous events) into the same
 * run with kernel excursions; @kfuncs are the kernel's function entries for
 * the kernel walks' free choices. The code of both must be in @ic's image.
 * -errno with a message on stderr.
 */
int ptg_ukwalk_splice(struct ptg_thread *t, struct ptg_insn_cache *ic, const uint64_t *kfuncs,
		      size_t nkfuncs, const struct ptg_ukwalk_cfg *cfg, struct ptg_ukwalk_stats *st);

/* The first far return at or after @from (decoding straight-line code for
 * at most 4 KiB): a way out of the kernel for the walks. -ENOENT. */
int ptg_ukwalk_find_exit(struct ptg_insn_cache *ic, uint64_t from, uint64_t *exit_ip);

#endif
