/* SPDX-License-Identifier: MIT */
/* The trigger set's state, shared by its loader and its event consumer. */
#ifndef MTRACE_TRIGGER_INTERNAL_H
#define MTRACE_TRIGGER_INTERNAL_H

#include "trigger/trigger.h"

struct ring_buffer;
struct trigger_bpf;	/* the skeleton; its users include trigger.skel.h */

struct mt_trigger_set {
	struct trigger_bpf *skel;
	struct bpf_link *links[2 * MT_TRIG_MAX_SPECS];	/* slow: needs two */
	size_t nr_links, nr_specs;
	struct ring_buffer *rb;
	enum mt_trig_freeze freeze;
	char freeze_reason[160];
	struct mt_trig_event event;	/* the winner's record, once received */
	bool have_event;
	size_t records;			/* received since arming */
	char err[MT_TRIGGER_ERRLEN];	/* the last failure's message */
};

/*
 * Whether the loaded mtrace module exports its freeze kfunc in BTF; when
 * not, WHY says what is missing.
 */
bool mt_trigger_kfunc_available(char *why, size_t whylen);

/* Sets up the ring-buffer consumer of SET (after load). 0 or a negative errno. */
int mt_trigger_events_open(struct mt_trigger_set *set, char *err, size_t errlen);
void mt_trigger_events_close(struct mt_trigger_set *set);

#endif
