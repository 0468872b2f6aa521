// SPDX-License-Identifier: MIT
/* Kernel excursions spliced into a user thread; see ptg_ukwalk.h. */
#include "ptg_ukwalk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptg_walk.h"

#define PTG_UKWALK_EXIT_SEARCH 4096

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One kernel excursion from @entry, appended to @out: its instructions and
 * the interrupts the kernel walk itself met. */
static int excursion(struct ptg_thread *out, struct ptg_insn_cache *ic,
		     const uint64_t *kfuncs, size_t nk, const struct ptg_ukwalk_cfg *cfg,
		     uint64_t *s, uint64_t entry, struct ptg_ukwalk_stats *st)
{
	size_t span = cfg->kinsns_max > cfg->kinsns_min ? cfg->kinsns_max - cfg->kinsns_min : 0;
	struct ptg_walk_cfg w = {
		.seed = rnd(s) | 1,
		.insns = cfg->kinsns_min + (span ? rnd(s) % (span + 1) : 0),
		.start = entry,
		.exit_ip = cfg->exit_ip,
	};
	struct ptg_thread k;
	size_t base = out->n;
	int err = ptg_walk(&k, ic, kfuncs, nk, &w);

	if (err)
		return err;
	err = ptg_thread_add_ips(out, k.ip, k.n);
	for (size_t i = 0; !err && i < k.nasync; i++) {
		struct ptg_async a = k.async[i];

		a.index += base;
		err = ptg_thread_add_async(out, &a);
	}
	st->kernel_insns += k.n;
	free(k.ip);
	free(k.async);
	return err;
}

/* An interrupt before the user instruction that comes next, taken at
 * @resume_ip (the instruction it interrupted). */
static int interrupt(struct ptg_thread *out, struct ptg_insn_cache *ic,
		     const uint64_t *kfuncs, size_t nk, const struct ptg_ukwalk_cfg *cfg,
		     uint64_t *s, uint64_t resume_ip, int signo, struct ptg_ukwalk_stats *st)
{
	struct ptg_async a = { out->n, resume_ip, signo };
	int err = ptg_thread_add_async(out, &a);

	st->irqs++;
	return err ? err : excursion(out, ic, kfuncs, nk, cfg, s, cfg->irq_entry, st);
}

int ptg_ukwalk_splice(struct ptg_thread *t, struct ptg_insn_cache *ic, const uint64_t *kfuncs,
		      size_t nkfuncs, const struct ptg_ukwalk_cfg *cfg, struct ptg_ukwalk_stats *st)
{
	struct ptg_thread out = *t;
	uint64_t s = cfg->seed ? cfg->seed : 1;
	size_t next_async = 0;
	int err = 0;

	memset(st, 0, sizeof(*st));
	if (!nkfuncs || !cfg->exit_ip || !cfg->syscall_entry || !cfg->irq_entry) {
		fprintf(stderr, "ptgen: the kernel walk needs entries, an exit and functions\n");
		return -EINVAL;
	}
	out.ip = NULL;
	out.n = out.cap = 0;
	out.async = NULL;
	out.nasync = out.capasync = 0;
	for (size_t i = 0; !err && i < t->n; i++) {
		struct ptg_insn in;

		if (next_async < t->nasync && t->async[next_async].index == i) {
			const struct ptg_async *a = &t->async[next_async++];

			err = interrupt(&out, ic, kfuncs, nkfuncs, cfg, &s, a->resume_ip, a->signo,
					st);
		} else if (i && cfg->irq_every && !(rnd(&s) % cfg->irq_every) &&
			   t->ip[i] != t->ip[i - 1]) {
			/* Not between two rounds of a REP instruction. */
			err = interrupt(&out, ic, kfuncs, nkfuncs, cfg, &s, t->ip[i], 0, st);
		}
		if (!err)
			err = ptg_thread_add_ips(&out, &t->ip[i], 1);
		if (!err && i + 1 < t->n && !ptg_insn_get(ic, t->ip[i], &in) &&
		    in.iclass == PTG_FAR && !in.far_ret) {
			st->syscalls++;
			err = excursion(&out, ic, kfuncs, nkfuncs, cfg, &s, cfg->syscall_entry, st);
		}
	}
	if (err) {
		free(out.ip);
		free(out.async);
		return err;
	}
	free(t->ip);
	free(t->async);
	*t = out;
	return 0;
}

int ptg_ukwalk_find_exit(struct ptg_insn_cache *ic, uint64_t from, uint64_t *exit_ip)
{
	for (uint64_t ip = from; ip - from < PTG_UKWALK_EXIT_SEARCH;) {
		struct ptg_insn in;

		if (ptg_insn_get(ic, ip, &in) || !in.size)
			break;
		if (in.far_ret) {
			*exit_ip = ip;
			return 0;
		}
		ip += in.size;
	}
	fprintf(stderr, "ptgen: no far return within %d bytes of %#" PRIx64 "\n",
		PTG_UKWALK_EXIT_SEARCH, from);
	return -ENOENT;
}
