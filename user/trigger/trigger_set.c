// SPDX-License-Identifier: MIT
/*
 * Loading and attaching the trigger programs: resolve every spec, fill the
 * BPF filter table, pick the freeze path, load only the programs the specs
 * need, and attach each spec with its index as the BPF cookie.
 */
#include "trigger/trigger_internal.h"

#include "trigger.skel.h"
#include "util/errmsg.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Present when the kernel can create kprobe perf events. */
#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"

static int attach_one(struct mt_trigger_set *set, const struct mt_trigger_spec *spec,
		      size_t idx, uint64_t off, pid_t pid, struct bpf_program *prog,
		      bool retprobe, char *err, size_t errlen)
{
	struct bpf_link *link;

	if (spec->kind == MT_TRIG_KPROBE) {
		LIBBPF_OPTS(bpf_kprobe_opts, kopts, .bpf_cookie = idx, .offset = spec->offset);

		link = bpf_program__attach_kprobe_opts(prog, spec->symbol, &kopts);
		if (!link) {
			int e = errno;

			if (access(KPROBE_PMU, F_OK))
				return mt_errmsg(err, errlen, ENOTSUP,
						 "trigger '%s': this kernel has no kprobes "
						 "(built without CONFIG_KPROBES: %s is missing)",
						 spec->text, KPROBE_PMU);
			return mt_errmsg(err, errlen, e, "trigger '%s': cannot attach a kprobe to %s: "
					 "%s%s", spec->text, spec->symbol, strerror(e),
					 e == ENOENT || e == EINVAL ?
					 " (no such kernel function, or it cannot be probed)" : "");
		}
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, uopts, .bpf_cookie = idx, .retprobe = retprobe);

		link = bpf_program__attach_uprobe_opts(prog, pid > 0 ? pid : -1, spec->path,
						       off, &uopts);
		if (!link)
			return mt_errmsg(err, errlen, errno, "trigger '%s': cannot attach a %s to %s "
					 "at file offset 0x%llx: %s", spec->text,
					 retprobe ? "uretprobe" : "uprobe", spec->path,
					 (unsigned long long)off, strerror(errno));
	}
	set->links[set->nr_links++] = link;
	return 0;
}

/* Attaches trigger IDX; OFF is its resolved file offset (uprobe kinds). */
static int attach_spec(struct mt_trigger_set *set, const struct mt_trigger_spec *spec,
		       size_t idx, uint64_t off, pid_t pid, char *err, size_t errlen)
{
	struct trigger_bpf *s = set->skel;
	int rc;

	switch (spec->kind) {
	case MT_TRIG_UPROBE:
		return attach_one(set, spec, idx, off, pid, s->progs.trig_uprobe, false,
				  err, errlen);
	case MT_TRIG_URETPROBE:
		return attach_one(set, spec, idx, off, pid, s->progs.trig_uretprobe, true,
				  err, errlen);
	case MT_TRIG_KPROBE:
		return attach_one(set, spec, idx, off, pid, s->progs.trig_kprobe, false,
				  err, errlen);
	case MT_TRIG_SLOW:
		/* Return first, so no entry is pushed without its return probe. */
		rc = attach_one(set, spec, idx, off, pid, s->progs.trig_slow_return, true,
				err, errlen);
		if (rc)
			return rc;
		return attach_one(set, spec, idx, off, pid, s->progs.trig_slow_entry, false,
				  err, errlen);
	case MT_TRIG_KIND_NR:
		break;
	}
	return -EINVAL;	/* kinds are checked by mt_trigger_set_open */
}

/* Opens the skeleton with the knobs set and only the needed programs. */
static struct trigger_bpf *open_skel(const struct mt_trigger_spec *specs, size_t n, pid_t pid,
				     enum mt_trig_freeze freeze, char *err, size_t errlen)
{
	bool used[MT_TRIG_KIND_NR] = { false };
	struct trigger_bpf *s = trigger_bpf__open();

	if (!s) {
		snprintf(err, errlen, "cannot open the trigger BPF object: %s", strerror(errno));
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		s->rodata->filters[i] = specs[i].filter;
		used[specs[i].kind] = true;
	}
	s->rodata->targ_tgid = pid > 0 ? (__u32)pid : 0;
	s->rodata->freeze_mode = freeze;
	bpf_program__set_autoload(s->progs.trig_uprobe, used[MT_TRIG_UPROBE]);
	bpf_program__set_autoload(s->progs.trig_uretprobe, used[MT_TRIG_URETPROBE]);
	bpf_program__set_autoload(s->progs.trig_kprobe, used[MT_TRIG_KPROBE]);
	bpf_program__set_autoload(s->progs.trig_slow_entry, used[MT_TRIG_SLOW]);
	bpf_program__set_autoload(s->progs.trig_slow_return, used[MT_TRIG_SLOW]);
	bpf_program__set_autoload(s->progs.freeze_kfunc, freeze == MT_TRIG_FREEZE_KFUNC);
	/* The per-thread call stacks (about 2 MiB, preallocated) only serve slow:. */
	if (!used[MT_TRIG_SLOW])
		bpf_map__set_max_entries(s->maps.slow_calls, 1);
	return s;
}

/*
 * Opens and loads with the preferred freeze path. In AUTO mode the kfunc
 * path is tried when the module advertises the kfunc; a kernel that still
 * refuses it (e.g. 6.1, which has no kfuncs for kprobe programs) gets the
 * notification path, and the reason is kept.
 */
static int load(struct mt_trigger_set *set, const struct mt_trigger_spec *specs, size_t n,
		const struct mt_trigger_options *opt, char *err, size_t errlen)
{
	enum mt_trig_freeze freeze = MT_TRIG_FREEZE_NOTIFY;
	char why[sizeof(set->freeze_reason)];
	int rc;

	switch (opt->freeze) {
	case MT_TRIGGER_FREEZE_PREFER_SIGSTOP:
		freeze = MT_TRIG_FREEZE_SIGSTOP;
		snprintf(why, sizeof(why), "requested");
		break;
	case MT_TRIGGER_FREEZE_PREFER_NOTIFY:
		snprintf(why, sizeof(why), "requested");
		break;
	case MT_TRIGGER_FREEZE_AUTO:
		if (mt_trigger_kfunc_available(why, sizeof(why))) {
			freeze = MT_TRIG_FREEZE_KFUNC;
			snprintf(why, sizeof(why), "the mtrace module's kfunc is available");
		}
		break;
	}

	set->skel = open_skel(specs, n, opt->pid, freeze, err, errlen);
	if (!set->skel)
		return errno ? -errno : -ENOMEM;
	rc = trigger_bpf__load(set->skel);
	if (rc && freeze == MT_TRIG_FREEZE_KFUNC) {
		snprintf(why, sizeof(why), "the kernel refused the kfunc call: %s", strerror(-rc));
		trigger_bpf__destroy(set->skel);
		freeze = MT_TRIG_FREEZE_NOTIFY;
		set->skel = open_skel(specs, n, opt->pid, freeze, err, errlen);
		if (!set->skel)
			return errno ? -errno : -ENOMEM;
		rc = trigger_bpf__load(set->skel);
	}
	if (rc)
		return mt_errmsg(err, errlen, -rc, "cannot load the trigger BPF programs: %s%s",
				 strerror(-rc),
				 rc == -EPERM ? " (needs root or CAP_BPF and CAP_PERFMON)" : "");
	if (freeze == MT_TRIG_FREEZE_KFUNC) {
		__u32 key = 0;
		int fd = bpf_program__fd(set->skel->progs.freeze_kfunc);

		if (bpf_map__update_elem(set->skel->maps.freeze_prog, &key, sizeof(key), &fd,
					 sizeof(fd), BPF_ANY))
			return mt_errmsg(err, errlen, errno,
					 "cannot install the kfunc freeze program: %s",
					 strerror(errno));
	}
	set->freeze = freeze;
	snprintf(set->freeze_reason, sizeof(set->freeze_reason), "%s", why);
	return 0;
}

int mt_trigger_set_open(struct mt_trigger_set **out, const struct mt_trigger_spec *specs,
			size_t n, const struct mt_trigger_options *opt, char *err, size_t errlen)
{
	static const struct mt_trigger_options defaults;
	uint64_t offsets[MT_TRIG_MAX_SPECS] = { 0 };
	struct mt_trigger_set *set;
	int rc;

	*out = NULL;
	if (!opt)
		opt = &defaults;
	if (n == 0 || n > MT_TRIG_MAX_SPECS)
		return mt_errmsg(err, errlen, EINVAL,
				 "between 1 and %d triggers can be armed at once, not %zu",
				 MT_TRIG_MAX_SPECS, n);
	/* Every spec is checked before anything needs privileges. */
	for (size_t i = 0; i < n; i++) {
		if (specs[i].kind < MT_TRIG_UPROBE || specs[i].kind >= MT_TRIG_KIND_NR)
			return mt_errmsg(err, errlen, EINVAL,
					 "trigger %zu has no valid kind (not parsed?)", i);
		if (specs[i].kind != MT_TRIG_KPROBE &&
		    (rc = mt_trigger_resolve(&specs[i], &offsets[i], err, errlen)))
			return rc;
	}
	set = calloc(1, sizeof(*set));
	if (!set)
		return mt_errmsg(err, errlen, ENOMEM, "out of memory");
	set->nr_specs = n;
	rc = load(set, specs, n, opt, err, errlen);
	if (!rc)
		rc = mt_trigger_events_open(set, err, errlen);
	for (size_t i = 0; !rc && i < n; i++)
		rc = attach_spec(set, &specs[i], i, offsets[i], opt->pid, err, errlen);
	if (rc) {
		mt_trigger_set_close(set);
		return rc;
	}
	*out = set;
	return 0;
}

void mt_trigger_set_close(struct mt_trigger_set *set)
{
	if (!set)
		return;
	/* Detach first, so nothing fires into a consumer being torn down. */
	for (size_t i = 0; i < set->nr_links; i++)
		bpf_link__destroy(set->links[i]);
	mt_trigger_events_close(set);
	trigger_bpf__destroy(set->skel);
	free(set);
}

enum mt_trig_freeze mt_trigger_set_freeze(const struct mt_trigger_set *set)
{
	return set->freeze;
}

const char *mt_trigger_set_errmsg(const struct mt_trigger_set *set)
{
	return set ? set->err : "no trigger set";
}

const char *mt_trigger_set_freeze_reason(const struct mt_trigger_set *set)
{
	return set->freeze_reason;
}

uint64_t mt_trigger_set_hits(const struct mt_trigger_set *set, size_t i)
{
	return i < set->nr_specs ? __atomic_load_n(&set->skel->bss->hits[i], __ATOMIC_RELAXED) : 0;
}

void mt_trigger_set_rearm(struct mt_trigger_set *set)
{
	struct trigger_bpf__bss *bss = set->skel->bss;

	for (size_t i = 0; i < MT_TRIG_MAX_SPECS; i++)
		__atomic_store_n(&bss->hits[i], 0, __ATOMIC_RELAXED);
	set->have_event = false;
	set->records = 0;
	/* Last: the programs may fire again from here on. */
	__atomic_store_n(&bss->fired, 0, __ATOMIC_RELEASE);
}
