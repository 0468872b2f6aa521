/* SPDX-License-Identifier: MIT */
/*
 * PT bytes decoded by all the streams' workers, told to the caller's
 * progress callback as they grow. Every worker adds its bytes as it goes;
 * one at a time tells the sum, read while it alone tells, so that no sum
 * told is smaller than one told before (a sum read before taking its turn
 * could be: another worker may add and tell in between).
 */
#ifndef MTRACE_DECODE_PROGRESS_H
#define MTRACE_DECODE_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct mt_progress {
	atomic_uint_fast64_t done;
	uint64_t total;
	uint64_t told;		/* the last sum told (lock held) */
	pthread_mutex_t lock;	/* taken by the worker telling */
	void (*tell)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
};

void mt_progress_init(struct mt_progress *p, uint64_t total,
		      void (*tell)(void *ctx, uint64_t done, uint64_t total), void *ctx);
void mt_progress_fini(struct mt_progress *p);
/* Adds BYTES; tells the sum unless another worker is telling one (the
 * next to tell, or mt_progress_end(), counts them). */
void mt_progress_add(struct mt_progress *p, uint64_t bytes);
/* Tells the total: all is decoded (no worker adds any more). */
void mt_progress_end(struct mt_progress *p);

#endif
