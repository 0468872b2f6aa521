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
 * and none before the first instruction (nothing was traced yet). */
static int interrupt(struct ptg_thread *t, uint64_t ip)
{
	if (!t->n || (t->nasync && t->async[t->nasync - 1].index == t->n))
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
static uint64_t choose(const struct ptg_walk_cfg *cfg, const struct ptg_thread *t, uint64_t *s,
		       const uint64_t *funcs, size_t nfuncs, size_t *depth)
{
	if (cfg->exit_ip && t->n >= cfg->insns) {
		*depth = 0;
		return cfg->exit_ip;
	}
	return funcs[rnd(s) % nfuncs];
}

/* Whether the walk is over: its budget used, or an excursion's far return
 * (the last instruction walked) taken. */
static bool walk_done(const struct ptg_walk_cfg *cfg, const struct ptg_thread *t, bool left)
{
	return cfg->exit_ip ? left : t->n >= cfg->insns;
}

int ptg_walk(struct ptg_thread *out, struct ptg_insn_cache *ic, const uint64_t *funcs,
	     size_t nfuncs, const struct ptg_walk_cfg *cfg)
{
	uint64_t *stack, s = cfg->seed ? cfg->seed : 1, ip;
	size_t depth = 0, stuck = 0, quiet = 0;
	bool left = false;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->tid = 1;
	out->parent = -1;
	if (!nfuncs)
		return -EINVAL;
	stack = malloc(PTG_WALK_STACK * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	ip = cfg->start ? cfg->start : funcs[rnd(&s) % nfuncs];
	while (!err && !walk_done(cfg, out, left)) {
		struct ptg_insn in;
		uint64_t fall;

		/* A UD2 faults (FUP at it, TIP.PGD) and never completes. */
		if (ptg_insn_get(ic, ip, &in) || (!in.size && in.iclass == PTG_OTHER) ||
		    in.iclass == PTG_FAULT) {
			/* Nothing but undecodable code: give up rather than spin. */
			if (++stuck > 1000) {
				fprintf(stderr, "ptgen: the walk finds no decodable code\n");
				err = -EINVAL;
				break;
			}
			err = interrupt(out, ip);
			ip = choose(cfg, out, &s, funcs, nfuncs, &depth);
			depth = 0;
			quiet = out->n;
			continue;
		}
		stuck = 0;
		if (cfg->exit_ip && ip != cfg->exit_ip &&
		    ((in.iclass == PTG_RET && !depth) ||
		     out->n >= cfg->insns + PTG_WALK_EXIT_PATIENCE)) {
			/* Caught in a loop with no free choice, or about to
			 * return past the kernel's entry, which kernel code
			 * never does: an interrupt takes the excursion to its
			 * exit. */
			err = interrupt(out, ip);
			ip = cfg->exit_ip;
			continue;
		}
		if ((err = ptg_thread_add_ips(out, &ip, 1)))
			break;
		fall = ip + in.size;
		if (in.iclass != PTG_OTHER && in.iclass != PTG_JMP && in.iclass != PTG_CALL)
			quiet = out->n;
		if ((in.iclass == PTG_JMP || in.iclass == PTG_CALL) &&
		    packetless_loop(out, quiet, in.target)) {
			err = interrupt(out, in.target);
			ip = choose(cfg, out, &s, funcs, nfuncs, &depth);
			depth = 0;
			quiet = out->n;
			continue;
		}
		switch (in.iclass) {
		case PTG_JCC:
			if (cfg->loop_pct && in.target <= ip)
				ip = rnd(&s) % 100 < cfg->loop_pct ? in.target : fall;
			else
				ip = rnd(&s) & 1 ? in.target : fall;
			break;
		case PTG_JMP:
			ip = in.target;
			break;
		case PTG_CALL:
		case PTG_CALL_IND:
			/* A full stack forgets its oldest frame, like the
			 * hardware's RET-compression stack. */
			if (depth == PTG_WALK_STACK) {
				memmove(stack, stack + 1, (PTG_WALK_STACK - 1) * sizeof(*stack));
				depth--;
			}
			if (in.iclass == PTG_CALL_IND || in.target != fall)
				stack[depth++] = fall;
			ip = in.iclass == PTG_CALL ? in.target :
			     choose(cfg, out, &s, funcs, nfuncs, &depth);
			break;
		case PTG_JMP_IND:
			ip = choose(cfg, out, &s, funcs, nfuncs, &depth);
			break;
		case PTG_RET:
			if (cfg->exit_ip && out->n >= cfg->insns)
				ip = choose(cfg, out, &s, funcs, nfuncs, &depth);
			else
				ip = depth ? stack[--depth] : funcs[rnd(&s) % nfuncs];
			break;
		default:	/* other; far transfers return to the next instruction */
			left = cfg->exit_ip && in.far_ret;
			ip = fall;
			break;
		}
	}
	free(stack);
	out->end_ip = ip;
	if (err) {
		free(out->ip);
		free(out->async);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

int ptg_walk_bias(const char *path, uint64_t *bias)
{
	bool dyn;
	int err = ptg_sym_is_dyn(path, &dyn);

	if (!err)
		*bias = dyn ? PTG_WALK_DYN_BASE : 0;
	return err;
}
