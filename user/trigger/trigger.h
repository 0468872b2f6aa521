/* SPDX-License-Identifier: MIT */
/*
 * Triggers: the --trigger SPEC grammar, symbol resolution for uprobes, and
 * the BPF trigger set that fires once and freezes the trace.
 *
 *   uprobe:PATH:SYMBOL[+OFF]     entry of SYMBOL (or OFF bytes into it)
 *   uprobe:PATH:0xADDR           link-time address ADDR (as nm shows it)
 *   uretprobe:PATH:SYMBOL        return of SYMBOL (or uretprobe:PATH:0xADDR)
 *   kprobe:SYMBOL[+OFF]          entry of a kernel function
 *   slow:PATH:SYMBOL>DURATION    one call of SYMBOL took longer than DURATION
 *                                (NUMBER ns|us|ms|s)
 * followed by any of these filters, comma-separated:
 *   ,tid=N                       only hits on thread N
 *   ,hit=N                       fire at the Nth hit that passes the filters
 *   ,if=OPERAND[:TYPE]OPVALUE    OPERAND arg0..arg5 (entry) or ret (uretprobe),
 *                                TYPE u8..u64/s8..s64, OP == != < <= > >=
 *
 * Errors are one line in the caller's buffer (MT_TRIGGER_ERRLEN bytes are
 * always enough) plus a negative return or NULL.
 */
#ifndef MTRACE_TRIGGER_H
#define MTRACE_TRIGGER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../bpf/trigger.h"

#define MT_TRIGGER_ERRLEN 2048

struct mt_trigger_spec {
	char *text;		/* the spec as given */
	enum mt_trig_kind kind;
	char *path;		/* binary for uprobe/uretprobe/slow, else NULL */
	char *symbol;		/* function name, NULL when an address was given */
	uint64_t addr;		/* 0xADDR form: link-time virtual address */
	uint64_t offset;	/* +OFF */
	uint64_t min_ns;	/* slow: duration to exceed */
	struct mt_trig_filter filter;	/* tid, hit, if= (kind and min_ns too) */
};

/* Parses TEXT into SPEC (free with mt_trigger_spec_free). 0, or -EINVAL
 * (-ENOMEM) with the message in ERR. */
int mt_trigger_spec_parse(const char *text, struct mt_trigger_spec *spec,
			  char *err, size_t errlen);
void mt_trigger_spec_free(struct mt_trigger_spec *spec);

/* Name of a kind ("uprobe", ...) and of a freeze method ("kfunc", "notify", "sigstop"). */
const char *mt_trigger_kind_name(enum mt_trig_kind kind);
const char *mt_trigger_freeze_name(enum mt_trig_freeze method);
/*
 * The module's freeze path (MTRACE_PATH_*, as the bundle stores it) a
 * method ends in: KFUNC for the kfunc, FALLBACK (the freeze ioctl) for
 * notify and sigstop; 0 for a value that is no method.
 */
uint32_t mt_trigger_freeze_path(enum mt_trig_freeze method);

/*
 * Where a uprobe goes in PATH: the file offset of SYMBOL(+OFF) or of the
 * link-time address. Works for executables (PIE or not) and shared
 * libraries, loaded or not. Refuses missing, ambiguous, non-function and
 * IFUNC symbols and offsets outside the function. 0, or a negative errno
 * with the message in ERR: -ENOENT (no such symbol, no symbol table),
 * -EINVAL (ambiguous, not a function, outside it), -EBADMSG (not an
 * executable or shared library, corrupt), or open()'s error.
 */
int mt_trigger_resolve(const struct mt_trigger_spec *spec, uint64_t *file_offset,
		       char *err, size_t errlen);
/* The same, also giving the link-time address (SYMBOL + OFF, as nm shows it). */
int mt_trigger_locate(const struct mt_trigger_spec *spec, uint64_t *link_addr,
		      uint64_t *file_offset, char *err, size_t errlen);

/* ---- the armed trigger set --------------------------------------------- */

struct mt_trigger_set;

enum mt_trigger_freeze_pref {
	MT_TRIGGER_FREEZE_AUTO = 0,	/* kfunc when usable, else notify */
	MT_TRIGGER_FREEZE_PREFER_NOTIFY,
	MT_TRIGGER_FREEZE_PREFER_SIGSTOP,
};

struct mt_trigger_options {
	pid_t pid;		/* process to watch; 0 or -1 = every process */
	enum mt_trigger_freeze_pref freeze;
};

/*
 * Resolves, loads and attaches SPECS (at most MT_TRIG_MAX_SPECS) into
 * *OUT; from then on the first of them to fire wins. 0, or a negative errno
 * (-EINVAL: bad specs; the resolver's; libbpf's) with the message in ERR.
 */
int mt_trigger_set_open(struct mt_trigger_set **out, const struct mt_trigger_spec *specs,
			size_t n, const struct mt_trigger_options *opt, char *err, size_t errlen);
void mt_trigger_set_close(struct mt_trigger_set *set);

/* The freeze path chosen at load and why (e.g. "no mtrace module BTF"). */
enum mt_trig_freeze mt_trigger_set_freeze(const struct mt_trigger_set *set);
const char *mt_trigger_set_freeze_reason(const struct mt_trigger_set *set);

/* A descriptor that becomes readable when a trigger record is waiting. */
int mt_trigger_set_fd(const struct mt_trigger_set *set);

/*
 * Waits up to TIMEOUT_MS (-1: forever) for the winning trigger's record.
 * 1 with *EV filled (again on later calls, until re-armed), 0 on timeout or
 * when a signal interrupted the wait, a negative errno on error (the
 * message from mt_trigger_set_errmsg()).
 */
int mt_trigger_set_wait(struct mt_trigger_set *set, int timeout_ms, struct mt_trig_event *ev);
/* The message of the set's last failure. */
const char *mt_trigger_set_errmsg(const struct mt_trigger_set *set);

/* Records received since arming: 1 once fired (first trigger wins). */
size_t mt_trigger_set_records(const struct mt_trigger_set *set);

/* Matching hits trigger I has seen so far. */
uint64_t mt_trigger_set_hits(const struct mt_trigger_set *set, size_t i);

/* Lets the triggers fire again (for the next snapshot); counts restart. */
void mt_trigger_set_rearm(struct mt_trigger_set *set);

#endif
