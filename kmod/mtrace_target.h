/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef MTRACE_TARGET_H
#define MTRACE_TARGET_H

#include <linux/types.h>

struct pid;

/*
 * Resolves a pid of the caller's namespace to a process the caller may
 * trace; *tgid gets a reference to its thread group's pid.
 */
int mtrace_target_lookup(pid_t vpid, struct pid **tgid);

#endif /* MTRACE_TARGET_H */
