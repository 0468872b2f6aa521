/* SPDX-License-Identifier: MIT */
/*
 * Random-walk mode: walks a binary's code statically, without running it,
 * to make large valid instruction streams quickly (benchmarks, fuzz seeds).
 * Conditional branches go either way at random; calls and returns keep a
 * consistent call stack; indirect branches (and returns with an empty
 * stack) go to a random function entry, which their TIP tells the decoder.
 * Where the walk cannot go on (code it cannot decode or leaves the image)
 * it is "interrupted" there and resumes at a random function.
 */
#ifndef PTG_WALK_H
#define PTG_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptg_insn.h"
#include "ptg_trace.h"

struct ptg_walk_cfg {
	uint64_t seed;
	size_t insns;		/* instructions to produce */
	uint64_t start;		/* first IP; 0: a random function */
	/* A kernel excursion (user and kernel traced together): the walk
	 * ends with its first far return, and once @insns are walked every
	 * free choice (indirect branch, return, resumption) goes to @exit_ip,
	 * a far return. 0: a plain walk of @insns instructions. */
	uint64_t exit_ip;
	/* Percent of backward conditional branches taken (loops); 0: half,
	 * like every other conditional branch. */
	unsigned loop_pct;
};

/*
 * A walk made in pieces, for walks too long to hold: 8 bytes per
 * instruction. The pieces together are exactly the walk ptg_walk() makes
 * with the same configuration.
 */
struct ptg_walker {
	const struct ptg_walk_cfg *cfg;
	struct ptg_insn_cache *ic;
	const uint64_t *funcs;
	size_t nfuncs;
	uint64_t *stack, s, ip;	/* call stack, random state, next IP */
	size_t depth, stuck;
	size_t walked;		/* instructions in the pieces made so far */
	bool left;		/* an excursion's far return was taken */
};

int ptg_walker_init(struct ptg_walker *w, struct ptg_insn_cache *ic, const uint64_t *funcs,
		    size_t nfuncs, const struct ptg_walk_cfg *cfg);
/* Replaces @out's instructions and interrupts with the walk's next piece:
 * @piece instructions or a few more (it ends after an instruction that
 * makes a packet), fewer at the end; 0: the rest of the walk. 1 if it made
 * a piece, 0 (@out untouched) if the walk is over, or -errno. */
int ptg_walker_next(struct ptg_walker *w, struct ptg_thread *out, size_t piece);
void ptg_walker_fini(struct ptg_walker *w);

/* Fills @out (one synthetic thread, tid 1) from the code in @ic's image,
 * with @funcs (sorted function entries) as indirect-branch targets. */
int ptg_walk(struct ptg_thread *out, struct ptg_insn_cache *ic, const uint64_t *funcs,
	     size_t nfuncs, const struct ptg_walk_cfg *cfg);
/* The load bias the walk gives @path: 0 for ET_EXEC, a fixed base for
 * PIE executables and shared libraries. */
int ptg_walk_bias(const char *path, uint64_t *bias);

#endif
