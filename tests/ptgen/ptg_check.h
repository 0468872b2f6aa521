/* SPDX-License-Identifier: MIT */
/*
 * Round-trip check: libipt's instruction decoder, run over a generated
 * stream with the captured memory as its image, must reproduce exactly the
 * single-stepped instruction sequence of that CPU (every IP, in order).
 */
#ifndef PTG_CHECK_H
#define PTG_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "ptg_gen.h"
#include "ptg_image.h"

struct ptg_check {
	size_t decoded;		/* instructions libipt produced */
	size_t expected;	/* instructions the ring still describes */
	size_t overflows, enables;
	size_t timed;		/* events whose time was checked */
	size_t off_bounds;	/* with CYC: estimated times that are not exact */
	uint64_t max_lag;	/* largest (true - decoded) time within bounds */
	uint64_t max_off;	/* largest error of such an estimate */
	char msg[512];		/* why it failed */
};

/* Decodes @len bytes at @buf (the CPU's stream, or a modified copy) and
 * compares them with CPU @c's sequence from seq_start on. 0 if equal.
 * Timing is checked too, for every enable, disable and asynchronous branch
 * libipt gives a time: an enable's true time is the start of the
 * instruction tracing resumes at, the others' the end of the instruction
 * before them, and the decoded time must be at most one MTC period early
 * and never late. With CYC an enable right after a switch-in must be
 * exact; other times are libipt's estimates, and those that are not exact
 * are counted in off_bounds instead of failing. At every time within its bounds the
 * context-switch sideband must name the thread of the event's stretch.
 * After an overflow the CPU's timing is not checked any more: libipt 2.0.5
 * was seen to keep a stale time past the next PSB+ (see docs/ptgen.md). */
int ptg_check_cpu(const struct ptg_gen *g, unsigned c, const struct ptg_image *img,
		  const uint8_t *buf, size_t len, struct ptg_check *r);
struct pt_config;
/* The same with a decoder configuration given by the caller (for example
 * one built from a bundle); its begin/end delimit the stream. */
int ptg_check_cpu_config(const struct ptg_gen *g, unsigned c, const struct ptg_image *img,
			 const struct pt_config *cfg, struct ptg_check *r);
/* Every recorded instruction of every thread was scheduled exactly once,
 * in order (needs a generation without trigger or ring cut). */
int ptg_check_coverage(const struct ptg_gen *g, struct ptg_check *r);

#endif
