// SPDX-License-Identifier: MIT
/*
 * mtrace's decoder against perf's, side by side on the same PT bytes: a
 * PT generator bundle, and the same bundle exported to perf.data with
 * libmtrace's exporter (docs/perf-interop.md), decoded by
 *  - `mtrace-user decode` to Perfetto, one job and one job per CPU;
 *  - `perf script --itrace=e` (perf's decoder alone: it walks every
 *    instruction, reports only errors);
 *  - `perf script --itrace=cr -F tid,time,ip,sym,addr,flags` (calls and
 *    returns as text);
 *  - magic-trace's decode command line, `perf script --ns --itrace=bep
 *    -F pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period`
 *    (src/perf_tool_backend.ml), the perf stage of its pipeline.
 * perf's text goes to /dev/null, mtrace's Perfetto trace to a file.
 * Each command is a child process; its CPU time (user + system, from
 * wait4) is the figure, the best of REPEAT runs, the runs interleaved.
 * The all-jobs run is compared on wall time (it is parallel), so it is
 * only as good as the machine is idle. Ratios are perf's time over
 * mtrace's: above 1, mtrace is faster.
 *
 * Two workloads, random walks (ptgen --walk) over a real library,
 * libcapstone, on two virtual CPUs:
 *  - loop-heavy: backward conditional branches taken 99% of the time
 *    (--loop-pct 99): long TNT runs, ~80 bytes of PT per 1000 instructions;
 *  - call-heavy: the plain walk (every conditional branch 50/50, calls and
 *    returns on a consistent stack): ~200 bytes per 1000 instructions.
 * Made once with the generator built next to this benchmark and kept as
 * O/bench/perf-{loop,call}-N.mtrace.
 *
 * Usage: bench_perf [million instructions per workload, default 20]
 */
#include "bundle/bundle.h"
#include "perfdata/perfdata_export.h"

#include "bench_report.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 2
#define WALK_LIB "/usr/lib/x86_64-linux-gnu/libcapstone.so.4"
#define TARGET_DECODE_ONLY 3.0	/* perf --itrace=e over mtrace to Perfetto */
#define TARGET_MAGIC_TRACE 30.0	/* magic-trace's perf stage over mtrace */

static char dir[PATH_MAX];	/* O/bench */

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct cost {
	double cpu, wall;
};

/* Runs ARGV with stdout to OUT (NULL: /dev/null), stderr to /dev/null. */
static int run(char *const argv[], const char *out, struct cost *c)
{
	struct rusage ru;
	double t0;
	int status;
	pid_t pid;

	/* The child's freopen would flush a copy of what stdout still buffers. */
	fflush(stdout);
	t0 = wall_now();
	pid = fork();

	if (pid == 0) {
		if (!freopen(out ? out : "/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "bench_perf: '%s %s' failed\n", argv[0], argv[1]);
		return -1;
	}
	c->wall = wall_now() - t0;
	c->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	return 0;
}

static int make_bundle(const char *path, const char *minsns, int loop)
{
	char gen[PATH_MAX + 32], tmp[PATH_MAX + 96], insns[32];
	struct cost c;

	snprintf(gen, sizeof(gen), "%s/../rel/tests/ptgen/ptgen", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(insns, sizeof(insns), "%s000000", minsns);
	fprintf(stderr, "bench_perf: generating %s (%s instructions, once)\n", path, insns);
	char *argv[] = { gen, "--walk", WALK_LIB, "--insns", insns, "--cpus", "2", "-o", tmp,
			 loop ? "--loop-pct" : NULL, "99", NULL };

	if (run(argv, NULL, &c) || rename(tmp, path)) {
		fprintf(stderr, "bench_perf: generating %s failed (is %s built?)\n", path, gen);
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int export(const char *bundle, const char *data, size_t *pt_bytes)
{
	struct perfdata_export_stats st;
	struct mt_bundle_reader *r;
	char err[1024];
	int e;

	if (mt_bundle_open(&r, bundle, err, sizeof(err))) {
		fprintf(stderr, "bench_perf: %s\n", err);
		return -1;
	}
	e = perfdata_export(r, data, NULL, &st, err, sizeof(err));
	mt_bundle_close(r);
	if (e) {
		fprintf(stderr, "bench_perf: export: %s\n", err);
		return -1;
	}
	*pt_bytes = st.pt_bytes;
	return 0;
}

enum { MT_ONE, MT_ALL, PERF_E, PERF_CR, PERF_MAGIC, NVARIANTS };

static const char *const names[NVARIANTS] = {
	"mtrace decode -j1", "mtrace decode (all jobs)", "perf script --itrace=e",
	"perf script --itrace=cr", "magic-trace's perf script",
};

static int workload(const char *what, int loop, const char *minsns)
{
	char bundle[PATH_MAX + 64], data[PATH_MAX + 64], symfs[PATH_MAX + 80], pf[PATH_MAX + 64];
	char mtrace[PATH_MAX + 32], jobs[16];
	struct cost best[NVARIANTS];
	size_t pt_bytes;
	char fig[128];

	snprintf(bundle, sizeof(bundle), "%s/perf-%s-%sM.mtrace", dir, what, minsns);
	snprintf(data, sizeof(data), "%s/perf-%s-%sM.data", dir, what, minsns);
	snprintf(symfs, sizeof(symfs), "%s.symfs", data);
	snprintf(pf, sizeof(pf), "%s/perf-%s.pftrace", dir, what);
	snprintf(mtrace, sizeof(mtrace), "%s/../mtrace-user", dir);
	snprintf(jobs, sizeof(jobs), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	if ((access(bundle, R_OK) && make_bundle(bundle, minsns, loop)) ||
	    export(bundle, data, &pt_bytes))
		return -1;

	char *argv[NVARIANTS][24] = {
		{ mtrace, "decode", "-q", "-j", "1", "-o", pf, bundle, NULL },
		{ mtrace, "decode", "-q", "-j", jobs, "-o", pf, bundle, NULL },
		{ "perf", "script", "-i", data, "--symfs", symfs, "--itrace=e", NULL },
		{ "perf", "script", "-i", data, "--symfs", symfs, "--itrace=cr", "-F",
		  "tid,time,ip,sym,addr,flags", NULL },
		{ "perf", "script", "-i", data, "--symfs", symfs, "--ns", "--itrace=bep", "-F",
		  "pid,tid,time,flags,ip,addr,sym,symoff,synth,dso,event,period", NULL },
	};

	for (int v = 0; v < NVARIANTS; v++)
		best[v] = (struct cost){ 1e30, 1e30 };
	for (int i = 0; i < REPEAT; i++)
		for (int v = 0; v < NVARIANTS; v++) {
			struct cost c;

			if (run(argv[v], NULL, &c))
				return -1;
			best[v].cpu = c.cpu < best[v].cpu ? c.cpu : best[v].cpu;
			best[v].wall = c.wall < best[v].wall ? c.wall : best[v].wall;
		}
	printf("%s: %.2f MiB of PT\n", what, pt_bytes / 1048576.0);
	for (int v = 0; v < NVARIANTS; v++)
		printf("  %-28s %7.3f s CPU %7.3f s wall  %6.2f MiB/s of PT (CPU)\n", names[v],
		       best[v].cpu, best[v].wall, pt_bytes / 1048576.0 / best[v].cpu);
	for (int v = PERF_E; v < NVARIANTS; v++)
		printf("  %-28s %6.2fx mtrace -j1 (CPU), %6.2fx mtrace all jobs (wall)\n", names[v],
		       best[v].cpu / best[MT_ONE].cpu, best[v].wall / best[MT_ALL].wall);
	snprintf(fig, sizeof(fig), "%s: perf --itrace=e / mtrace -j1", what);
	bench_result(fig, best[PERF_E].cpu / best[MT_ONE].cpu, "x", ">=", TARGET_DECODE_ONLY);
	snprintf(fig, sizeof(fig), "%s: perf --itrace=cr / mtrace -j1", what);
	printf("RESULT %s|%.2fx|-|-\n", fig, best[PERF_CR].cpu / best[MT_ONE].cpu);
	snprintf(fig, sizeof(fig), "%s: magic-trace perf / mtrace -j1", what);
	bench_result(fig, best[PERF_MAGIC].cpu / best[MT_ONE].cpu, "x", ">=", TARGET_MAGIC_TRACE);
	snprintf(fig, sizeof(fig), "%s: perf --itrace=e / mtrace all jobs", what);
	printf("RESULT %s|%.2fx|-|-\n", fig, best[PERF_E].wall / best[MT_ALL].wall);
	unlink(pf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *minsns = argc > 1 ? argv[1] : "20";
	char probe[] = "perf";
	char *version[] = { probe, "--version", NULL };
	struct cost c;

	if (strspn(minsns, "0123456789") != strlen(minsns) || !*minsns || strlen(minsns) > 6) {
		fprintf(stderr, "usage: bench_perf [million instructions per workload]\n");
		return 2;
	}
	if (bench_self_dir(dir, sizeof(dir)))
		return 1;
	if (run(version, NULL, &c)) {
		printf("bench_perf: perf is not installed (linux-perf); nothing to compare\n");
		return 0;
	}
	if (workload("loop-heavy", 1, minsns) || workload("call-heavy", 0, minsns))
		return 1;
	return 0;
}
