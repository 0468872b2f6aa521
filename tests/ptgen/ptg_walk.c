// SPDX-License-Identifier: MIT
/* Random walk over a binary's code. */
#include "ptg_walk.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptg_sym.h"

/* Where ET_DYN files are placed: a typical user-space address that needs
 * sext-48 IP compression, as shared libraries do. */
#define PTG_WALK_DYN_BASE 0x7f1234500000ull
#define PTG_WALK_STACK 4096
/* Instructions an excursion may take past its budget to reach its exit
 * by a free choice. */
#define PTG_WALK_EXIT_PATIENCE 1000

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The walk cannot follow @ip: an interrupt there, resumed elsewhere. Only
 * the first of several in a row counts (the others were never reached),
 * and none before the first instruction (nothing was traced yet). @walked:
 * the instructions of the walk so far, earlier pieces included. */
static int interrupt(struct ptg_thread *t, size_t walked, uint64_t ip)
{
	if (!walked || (t->nasync && t->async[t->nasync - 1].index == t->n))
		return 0;
	return ptg_thread_add_async(t, &(struct ptg_async){ t->n, ip, 0 });
}

/*
 * Whether a direct branch to @target closes a loop without packets: it was
 * executed since instruction @quiet, the first after the last one that made
 * a packet. Flow without packets is determined by the code, so such a loop
 * spins forever, and no decoder could count its turns. The walk is cut back
 * to the target's first execution, where an interrupt ends the loop.
 */
static bool packetless_loop(struct ptg_thread *t, size_t quiet, uint64_t target)
{
	for (size_t i = quiet; i < t->n; i++) {
		if (t->ip[i] == target) {
			t->n = i;
			return true;
		}
	}
	return false;
}

/* Where a free choice goes: a random function, or the exit once an
 * excursion has used its budget (its call stack is then abandoned). */
static uint64_t choose(struct ptg_walker *w, size_t walked)
{
	if (w->cfg->exit_ip && walked >= w->cfg->insns) {
		w->depth = 0;
		return w->cfg->exit_ip;
	}
	return w->funcs[rnd(&w->s) % w->nfuncs];
}

/* Whether the walk is over: its budget used, or an excursion's far return
 * (the last instruction walked) taken. */
static bool walk_done(const struct ptg_walker *w, size_t walked)
{
	return w->cfg->exit_ip ? w->left : walked >= w->cfg->insns;
}

int ptg_walker_init(struct ptg_walker *w, struct ptg_insn_cache *ic, const uint64_t *funcs,
		    size_t nfuncs, const struct ptg_walk_cfg *cfg)
{
	memset(w, 0, sizeof(*w));
	if (!nfuncs)
		return -EINVAL;
	w->stack = malloc(PTG_WALK_STACK * sizeof(*w->stack));
	if (!w->stack)
		return -ENOMEM;
	w->cfg = cfg;
	w->ic = ic;
	w->funcs = funcs;
	w->nfuncs = nfuncs;
	w->s = cfg->seed ? cfg->seed : 1;
	w->ip = cfg->start ? cfg->start : funcs[rnd(&w->s) % nfuncs];
	return 0;
}

void ptg_walker_fini(struct ptg_walker *w)
{
	free(w->stack);
	w->stack = NULL;
}

int ptg_walker_next(struct ptg_walker *w, struct ptg_thread *out, size_t piece)
{
	const struct ptg_walk_cfg *cfg = w->cfg;
	size_t quiet = 0;
	bool packet = false;	/* the last instruction walked made a packet */
	int err = 0;

	if (walk_done(w, w->walked))
		return 0;
	out->n = 0;
	out->nasync = 0;
	while (!err && !walk_done(w, w->walked + out->n)) {
		size_t walked = w->walked + out->n;
		struct ptg_insn in;
		uint64_t ip = w->ip, fall;

		/* A piece ends after an instruction that made a packet: no
		 * packetless loop and no interrupt spans two pieces. */
		if (piece && out->n >= piece && packet)
			break;
		packet = false;
		/* A UD2 faults (FUP at it, TIP.PGD) and never completes. */
		if (ptg_insn_get(w->ic, ip, &in) || (!in.size && in.iclass == PTG_OTHER) ||
		    in.iclass == PTG_FAULT) {
			/* Nothing but undecodable code: give up rather than spin. */
			if (++w->stuck > 1000) {
				fprintf(stderr, "ptgen: the walk finds no decodable code\n");
				err = -EINVAL;
				break;
			}
			err = interrupt(out, walked, ip);
			w->ip = choose(w, walked);
			w->depth = 0;
			quiet = out->n;
			continue;
		}
		w->stuck = 0;
		if (cfg->exit_ip && ip != cfg->exit_ip &&
		    ((in.iclass == PTG_RET && !w->depth) ||
		     walked >= cfg->insns + PTG_WALK_EXIT_PATIENCE)) {
			/* Caught in a loop with no free choice, or about to
			 * return past the kernel's entry, which kernel code
			 * never does: an interrupt takes the excursion to its
			 * exit. */
			err = interrupt(out, walked, ip);
			w->ip = cfg->exit_ip;
			continue;
		}
		if ((err = ptg_thread_add_ips(out, &ip, 1)))
			break;
		walked++;
		fall = ip + in.size;
		if (in.iclass != PTG_OTHER && in.iclass != PTG_JMP && in.iclass != PTG_CALL) {
			quiet = out->n;
			packet = true;
		}
		if ((in.iclass == PTG_JMP || in.iclass == PTG_CALL) &&
		    packetless_loop(out, quiet, in.target)) {
			err = interrupt(out, w->walked + out->n, in.target);
			w->ip = choose(w, w->walked + out->n);
			w->depth = 0;
			quiet = out->n;
			continue;
		}
		switch (in.iclass) {
		case PTG_JCC:
			if (cfg->loop_pct && in.target <= ip)
				w->ip = rnd(&w->s) % 100 < cfg->loop_pct ? in.target : fall;
			else
				w->ip = rnd(&w->s) & 1 ? in.target : fall;
			break;
		case PTG_JMP:
			w->ip = in.target;
			break;
		case PTG_CALL:
		case PTG_CALL_IND:
			/* A full stack forgets its oldest frame, like the
			 * hardware's RET-compression stack. */
			if (w->depth == PTG_WALK_STACK) {
				memmove(w->stack, w->stack + 1, (PTG_WALK_STACK - 1) * sizeof(*w->stack));
				w->depth--;
			}
			if (in.iclass == PTG_CALL_IND || in.target != fall)
				w->stack[w->depth++] = fall;
			w->ip = in.iclass == PTG_CALL ? in.target : choose(w, walked);
			break;
		case PTG_JMP_IND:
			w->ip = choose(w, walked);
			break;
		case PTG_RET:
			if (cfg->exit_ip && walked >= cfg->insns)
				w->ip = choose(w, walked);
			else
				w->ip = w->depth ? w->stack[--w->depth] :
					w->funcs[rnd(&w->s) % w->nfuncs];
			break;
		default:	/* other; far transfers return to the next instruction */
			w->left = cfg->exit_ip && in.far_ret;
			w->ip = fall;
			break;
		}
	}
	out->end_ip = w->ip;
	w->walked += out->n;
	return err ? err : 1;
}

int ptg_walk(struct ptg_thread *out, struct ptg_insn_cache *ic, const uint64_t *funcs,
	     size_t nfuncs, const struct ptg_walk_cfg *cfg)
{
	struct ptg_walker w;
	int err;

	memset(out, 0, sizeof(*out));
	out->tid = 1;
	out->parent = -1;
	err = ptg_walker_init(&w, ic, funcs, nfuncs, cfg);
	if (!err)
		err = ptg_walker_next(&w, out, 0);
	ptg_walker_fini(&w);
	if (err < 0) {
		free(out->ip);
		free(out->async);
		memset(out, 0, sizeof(*out));
		return err;
	}
	return 0;
}

int ptg_walk_bias(const char *path, uint64_t *bias)
{
	bool dyn;
	int err = ptg_sym_is_dyn(path, &dyn);

	if (!err)
		*bias = dyn ? PTG_WALK_DYN_BASE : 0;
	return err;
}
