// SPDX-License-Identifier: MIT
/*
 * Checks a bundle written by `mtrace-user record` in the VM against what
 * the test did: the injected stream on one CPU (oldest first, wrap flag),
 * the freeze path, the target's maps (with the executable's build-id),
 * threads, context switches within the armed window, and clock anchors.
 * Prints the first mismatch and exits 1; prints measured figures.
 *   capture_check BUNDLE [--cpu N --total BYTES --seed S --ring BYTES]
 *                 [--path kfunc|fallback|manual|exit] [--pid P]
 *                 [--exe PATH] [--thread NAME] [--spec TEXT]
 *                 [--trigger-symbol SYMBOL (of --exe: the trigger IP is its entry)]
 *                 [--embedded (--exe is embedded, byte for byte)]
 *                 [--kernel (kernel tracing on, kernel code and kallsyms present)]
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/bundle.h"
#include "capture/capture_procfs.h"
#include "capture_stream.h"
#include "trigger/trigger.h"

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("capture_check: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

struct want {
	long cpu;
	unsigned long total, seed, ring;
	const char *path, *exe, *thread, *spec, *symbol;
	int embedded, kernel;
	unsigned long pid;
};

static void check_pt(struct mt_bundle_reader *r, const struct want *w)
{
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		struct mt_bundle_pt_desc d;
		const uint8_t *data;
		size_t len, want_len = w->total < w->ring ? w->total : w->ring;
		unsigned long first = w->total - want_len;

		if (mt_bundle_pt_desc(r, i, &d) || d.cpu != (uint32_t)w->cpu)
			continue;
		if (mt_bundle_pt_data(r, i, &data, &len))
			fail("CPU %ld: PT data unreadable: %s", w->cpu, mt_bundle_reader_errmsg(r));
		if (len != want_len)
			fail("CPU %ld: %zu PT bytes, expected %zu", w->cpu, len, want_len);
		for (size_t k = 0; k < len; k++)
			if (data[k] != capture_stream_byte(w->seed, first + k))
				fail("CPU %ld: PT byte %zu is 0x%02x, expected 0x%02x (stream byte %lu)",
				     w->cpu, k, data[k], capture_stream_byte(w->seed, first + k),
				     first + k);
		if (!!(d.flags & MT_BUNDLE_PT_WRAPPED) != (w->total > w->ring))
			fail("CPU %ld: wrap flag %u, but %lu bytes went into a %lu-byte ring", w->cpu,
			     d.flags & MT_BUNDLE_PT_WRAPPED, w->total, w->ring);
		printf("cpu %ld: %zu bytes oldest first match the injected stream (wrapped=%u)\n",
		       w->cpu, len, d.flags & MT_BUNDLE_PT_WRAPPED);
		return;
	}
	fail("no PT data for CPU %ld", w->cpu);
}

/* The run-time address of SYMBOL in --exe, through the bundle's maps. */
static uint64_t symbol_address(struct mt_bundle_reader *r, const struct want *w)
{
	struct mt_trigger_spec spec;
	const struct mt_bundle_map *m;
	size_t n = mt_bundle_maps(r, &m);
	char text[512], err[MT_TRIGGER_ERRLEN];
	uint64_t off;

	snprintf(text, sizeof(text), "uprobe:%s:%s", w->exe, w->symbol);
	if (mt_trigger_spec_parse(text, &spec, err, sizeof(err)) ||
	    mt_trigger_resolve(&spec, &off, err, sizeof(err)))
		fail("%s", err);
	mt_trigger_spec_free(&spec);
	for (size_t i = 0; i < n; i++)
		if (m[i].pid == w->pid && !strcmp(m[i].path, w->exe) &&
		    (m[i].prot & MT_BUNDLE_PROT_EXEC) && off >= m[i].file_offset &&
		    off - m[i].file_offset < m[i].end - m[i].start)
			return m[i].start + (off - m[i].file_offset);
	fail("no executable mapping of %s holds file offset 0x%llx", w->exe,
	     (unsigned long long)off);
}

static void check_trigger(struct mt_bundle_reader *r, const struct want *w)
{
	struct mt_bundle_trigger t;
	const char *path;

	if (mt_bundle_get_trigger(r, &t))
		fail("no trigger record");
	path = mt_bundle_freeze_name(t.d.freeze_path);
	if (!path || strcmp(path, w->path))
		fail("freeze path %u (%s), expected %s", t.d.freeze_path, path ? path : "?",
		     w->path);
	if (w->spec && (!t.spec || strcmp(t.spec, w->spec)))
		fail("trigger spec '%s', expected '%s'", t.spec ? t.spec : "", w->spec);
	if (w->pid && strcmp(w->path, "manual") && t.d.pid != w->pid)
		fail("trigger pid %u, expected %lu", t.d.pid, w->pid);
	if (w->symbol && t.d.ip != symbol_address(r, w))
		fail("trigger ip 0x%llx is not the entry of %s (0x%llx)", (unsigned long long)t.d.ip,
		     w->symbol, (unsigned long long)symbol_address(r, w));
	printf("trigger: path %s reason %u cpu %u pid %u tid %u ip 0x%llx skid %llu ns\n",
	       path, t.d.reason, t.d.cpu, t.d.pid, t.d.tid,
	       (unsigned long long)t.d.ip, (unsigned long long)t.d.skid_ns);
}

static void check_maps(struct mt_bundle_reader *r, const struct want *w)
{
	const struct mt_bundle_map *m;
	size_t n = mt_bundle_maps(r, &m), exe_maps = 0;
	uint8_t id[MT_BUILD_ID_MAX];
	int idlen = mt_elf_build_id(w->exe, id, sizeof(id));

	if (idlen <= 0)
		fail("%s has no build-id to compare with", w->exe);
	for (size_t i = 0; i < n; i++) {
		if (m[i].pid != w->pid || strcmp(m[i].path, w->exe))
			continue;
		if (m[i].build_id_len != (size_t)idlen || memcmp(m[i].build_id, id, (size_t)idlen))
			fail("map of %s at 0x%llx has the wrong build-id", w->exe,
			     (unsigned long long)m[i].start);
		exe_maps += !!(m[i].prot & MT_BUNDLE_PROT_EXEC);
	}
	if (!exe_maps)
		fail("no executable mapping of %s for pid %lu among %zu maps", w->exe, w->pid, n);
	printf("maps: %zu entries, %s mapped executable with its build-id\n", n, w->exe);
}

static void check_threads(struct mt_bundle_reader *r, const struct want *w)
{
	const struct mt_bundle_thread *t;
	size_t n = mt_bundle_threads(r, &t);
	int named = 0, process = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].pid != w->pid)
			continue;
		named |= !strcmp(t[i].comm, w->thread);
		process |= t[i].tid == w->pid && t[i].cmdline_len > 0;
	}
	if (!named || !process)
		fail("threads of %lu: thread '%s' %s, process entry with command line %s", w->pid,
		     w->thread, named ? "found" : "missing", process ? "found" : "missing");
	printf("threads: %zu entries, '%s' present\n", n, w->thread);
}

/* Context switches of the target, all inside the armed window. */
static void check_switches(struct mt_bundle_reader *r, const struct want *w)
{
	const struct mt_bundle_switch_entry *sw;
	const struct mt_bundle_clock_entry *a;
	struct mt_bundle_clock_desc cd;
	size_t n, na, in = 0;

	if (mt_bundle_switches(r, &sw, &n))
		fail("switch records unreadable: %s", mt_bundle_reader_errmsg(r));
	if (mt_bundle_clock(r, &cd, &a, &na) || na != 4)
		fail("clock anchors missing (expected 4)");
	if (!a[0].tsc || a[2].tsc < a[0].tsc || a[2].monotonic_ns < a[0].monotonic_ns ||
	    !a[1].realtime_ns || !a[3].realtime_ns || !cd.tsc_hz)
		fail("clock anchors not sane (arm tsc %llu, freeze tsc %llu, tsc_hz %llu)",
		     (unsigned long long)a[0].tsc, (unsigned long long)a[2].tsc,
		     (unsigned long long)cd.tsc_hz);
	for (size_t i = 0; i < n; i++) {
		if (sw[i].tsc < a[0].tsc || sw[i].tsc > a[2].tsc)
			fail("switch %zu at tsc %llu outside the armed window [%llu, %llu]", i,
			     (unsigned long long)sw[i].tsc, (unsigned long long)a[0].tsc,
			     (unsigned long long)a[2].tsc);
		in += sw[i].next_pid == w->pid;
	}
	if (!in)
		fail("none of %zu context switches brings in pid %lu", n, w->pid);
	printf("switches: %zu records, %zu switch pid %lu in; window %.3f ms\n", n, in, w->pid,
	       (double)(a[2].monotonic_ns - a[0].monotonic_ns) / 1e6);
}

/* The embedded copy of --exe equals the file. */
static void check_embedded(struct mt_bundle_reader *r, const struct want *w)
{
	uint8_t id[MT_BUILD_ID_MAX];
	int idlen = mt_elf_build_id(w->exe, id, sizeof(id));
	int i = mt_bundle_file_find(r, id, idlen > 0 ? (size_t)idlen : 0, w->exe);
	const uint8_t *data;
	size_t len, got;
	uint8_t *disk;
	FILE *f;

	if (i < 0 || mt_bundle_file_data(r, (size_t)i, &data, &len))
		fail("%s is not embedded", w->exe);
	f = fopen(w->exe, "r");
	disk = malloc(len + 1);
	if (!f || !disk)
		fail("cannot read %s", w->exe);
	got = fread(disk, 1, len + 1, f);
	fclose(f);
	if (got != len || memcmp(disk, data, len))
		fail("embedded %s (%zu bytes) differs from the file (%zu bytes)", w->exe, len, got);
	free(disk);
	printf("embedded: %s, %zu bytes, identical\n", w->exe, len);
}

/* Kernel tracing was programmed and the kernel's code and symbols came along. */
static void check_kernel(struct mt_bundle_reader *r, const struct mt_bundle_pt_config_desc *cfg)
{
	const char *text;
	size_t len, n = mt_bundle_ktext_count(r);

	if (!(cfg->rtit_ctl & MT_RTIT_CTL_OS))
		fail("rtit_ctl 0x%llx lacks OS", (unsigned long long)cfg->rtit_ctl);
	if (!n)
		fail("no kernel text section");
	if (mt_bundle_kallsyms(r, &text, &len) || len < 1000)
		fail("no kallsyms section");
	printf("kernel: %zu text ranges, %zu bytes of kallsyms\n", n, len);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' }, { "total", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' }, { "ring", required_argument, NULL, 'r' },
		{ "path", required_argument, NULL, 'P' }, { "pid", required_argument, NULL, 'p' },
		{ "exe", required_argument, NULL, 'e' }, { "thread", required_argument, NULL, 'T' },
		{ "spec", required_argument, NULL, 'S' },
		{ "trigger-symbol", required_argument, NULL, 'y' },
		{ "embedded", no_argument, NULL, 'E' }, { "kernel", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct want w = { .cpu = -1 };
	struct mt_bundle_reader *r;
	struct mt_bundle_pt_config_desc cfg;
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': w.cpu = strtol(optarg, NULL, 0); break;
		case 't': w.total = strtoul(optarg, NULL, 0); break;
		case 's': w.seed = strtoul(optarg, NULL, 0); break;
		case 'r': w.ring = strtoul(optarg, NULL, 0); break;
		case 'P': w.path = optarg; break;
		case 'p': w.pid = strtoul(optarg, NULL, 0); break;
		case 'e': w.exe = optarg; break;
		case 'T': w.thread = optarg; break;
		case 'S': w.spec = optarg; break;
		case 'y': w.symbol = optarg; break;
		case 'E': w.embedded = 1; break;
		case 'K': w.kernel = 1; break;
		default: return 2;
		}
	}
	if (optind != argc - 1)
		fail("usage: capture_check BUNDLE [options]");
	if (mt_bundle_open(&r, argv[optind], err, sizeof(err)))
		fail("%s", err);
	if (mt_bundle_get_pt_config(r, &cfg))
		fail("no PT config section");
	if (!(cfg.flags & MT_BUNDLE_CFG_SIMULATED) || !(cfg.rtit_ctl & MT_RTIT_CTL_TRACEEN) ||
	    !(cfg.rtit_ctl & MT_RTIT_CTL_USER) || (w.ring && cfg.ring_size != w.ring) ||
	    cfg.target_pid != w.pid)
		fail("PT config: flags 0x%x rtit_ctl 0x%llx ring %llu target %u", cfg.flags,
		     (unsigned long long)cfg.rtit_ctl, (unsigned long long)cfg.ring_size,
		     cfg.target_pid);
	if (w.cpu >= 0)
		check_pt(r, &w);
	if (w.path)
		check_trigger(r, &w);
	if (w.exe)
		check_maps(r, &w);
	if (w.thread)
		check_threads(r, &w);
	if (w.pid)
		check_switches(r, &w);
	if (w.embedded)
		check_embedded(r, &w);
	if (w.kernel)
		check_kernel(r, &cfg);
	mt_bundle_close(r);
	return 0;
}
