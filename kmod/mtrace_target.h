/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef MTRACE_TARGET_H
#define MTRACE_TARGET_H

#include <linux/types.h>

/* Resolves a pid of the caller's namespace to a traceable process. */
int mtrace_target_lookup(pid_t vpid, pid_t *tgid);

#endif /* MTRACE_TARGET_H */
