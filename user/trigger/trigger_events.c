// SPDX-License-Identifier: MIT
/*
 * The notification consumer: the winning trigger's record arrives through
 * a BPF ring buffer (woken at once, BPF_RB_FORCE_WAKEUP), whatever the
 * freeze path, so user space always learns which trigger fired, where and
 * on which thread.
 */
#include "trigger/trigger_internal.h"

#include "trigger.skel.h"
#include "util/errmsg.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int on_record(void *ctx, void *data, size_t size)
{
	struct mt_trigger_set *set = ctx;

	set->records++;
	/* One record per arming; a short one would be a build mismatch. */
	if (size < sizeof(set->event) || set->have_event)
		return 0;
	memcpy(&set->event, data, sizeof(set->event));
	set->have_event = true;
	return 0;
}

int mt_trigger_events_open(struct mt_trigger_set *set, char *err, size_t errlen)
{
	set->rb = ring_buffer__new(bpf_map__fd(set->skel->maps.events), on_record, set, NULL);
	if (!set->rb)
		return mt_errmsg(err, errlen, errno, "cannot open the trigger ring buffer: %s",
				 strerror(errno));
	return 0;
}

void mt_trigger_events_close(struct mt_trigger_set *set)
{
	ring_buffer__free(set->rb);
	set->rb = NULL;
}

int mt_trigger_set_fd(const struct mt_trigger_set *set)
{
	return ring_buffer__epoll_fd(set->rb);
}

size_t mt_trigger_set_records(const struct mt_trigger_set *set)
{
	return set->records;
}

int mt_trigger_set_wait(struct mt_trigger_set *set, int timeout_ms, struct mt_trig_event *ev)
{
	if (!set->have_event) {
		int rc = ring_buffer__poll(set->rb, timeout_ms);

		/* A signal ends the wait early; the caller decides what next. */
		if (rc < 0 && rc != -EINTR)
			return mt_errmsg(set->err, sizeof(set->err), -rc,
					 "waiting for the trigger: %s", strerror(-rc));
	}
	if (!set->have_event)
		return 0;
	*ev = set->event;
	return 1;
}
