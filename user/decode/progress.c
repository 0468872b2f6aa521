// SPDX-License-Identifier: MIT
/* The decode's progress; see progress.h. */
#include "decode/progress.h"

void mt_progress_init(struct mt_progress *p, uint64_t total,
		      void (*tell)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	atomic_init(&p->done, 0);
	p->total = total;
	p->told = 0;
	p->tell = tell;
	p->ctx = ctx;
	pthread_mutex_init(&p->lock, NULL);
}

void mt_progress_fini(struct mt_progress *p)
{
	pthread_mutex_destroy(&p->lock);
}

void mt_progress_add(struct mt_progress *p, uint64_t bytes)
{
	uint64_t done;

	atomic_fetch_add(&p->done, bytes);
	if (pthread_mutex_trylock(&p->lock))
		return;
	done = atomic_load(&p->done);
	if (done > p->told) {
		p->told = done;
		p->tell(p->ctx, done, p->total);
	}
	pthread_mutex_unlock(&p->lock);
}

void mt_progress_end(struct mt_progress *p)
{
	pthread_mutex_lock(&p->lock);
	p->told = p->total;
	p->tell(p->ctx, p->total, p->total);
	pthread_mutex_unlock(&p->lock);
}
