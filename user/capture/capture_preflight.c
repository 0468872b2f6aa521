// SPDX-License-Identifier: MIT
/* The checks before anything irreversible (capture_preflight.h). */
#include "capture/capture_preflight.h"

#include "capture/capture_target.h"
#include "util/errmsg.h"
#include "util/util.h"
#include "files/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"
#define KALLSYMS "/proc/kallsyms"

/*
 * The worst case of one bundle beyond its PT rings: the context-switch
 * sideband of every CPU (32-byte records), maps, threads and names
 * (1 MiB is generous), and with --kernel the kernel's code and symbols.
 */
#define SB_RECORD_BYTES 32ULL
#define RECORDS_SLACK (1ULL << 20)
#define KERNEL_TEXT_BYTES (64ULL << 20)
/* --portable copies the libraries too; their sizes are unknown before the launch. */
#define PORTABLE_LIBS_BYTES (64ULL << 20)

/* Whether NAME is a function in the kernel's symbol list; -1 if unreadable. */
static int kernel_has(const char *kallsyms, const char *name)
{
	FILE *f = fopen(kallsyms, "re");
	char line[512], sym[256], type;
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %c %255s", &type, sym) == 2 && !strcmp(sym, name))
			found = strchr("tTwW", type) != NULL;
	fclose(f);
	return found;
}

static int check_trigger(const struct mt_trigger_spec *s, const struct mt_preflight_env *env,
			 struct mt_preflight_probe *p, char *err, size_t errlen)
{
	char why[MT_TRIGGER_ERRLEN];

	if (s->kind != MT_TRIG_KPROBE) {
		if (mt_trigger_locate(s, &p->link_addr, &p->file_offset, why, sizeof(why)))
			return mt_errmsg(err, errlen, EINVAL, "trigger '%s': %s", s->text, why);
		return 0;
	}
	if (access(env->kprobe_pmu, F_OK))
		return mt_errmsg(err, errlen, EOPNOTSUPP,
				 "trigger '%s': this kernel has no kprobes (built without CONFIG_KPROBES: %s is missing); use a uprobe: or slow: trigger",
				 s->text, env->kprobe_pmu);
	if (kernel_has(env->kallsyms, s->symbol) == 0)
		return mt_errmsg(err, errlen, ENOENT, "trigger '%s': the kernel has no function '%s' (%s)",
				 s->text, s->symbol, env->kallsyms);
	return 0;
}

/* Every output path the capture may write, each checked against every input. */
static int check_outputs(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
			 size_t n, const char *command, char *err, size_t errlen)
{
	const char *inputs[MT_TRIG_MAX_SPECS + 1];
	size_t ni = 0;
	char path[PATH_MAX];

	for (size_t i = 0; i < n; i++)
		if (specs[i].path)
			inputs[ni++] = specs[i].path;
	if (command[0])
		inputs[ni++] = command;
	for (unsigned int k = 1; k <= o->snapshots; k++) {
		if (mt_capture_output_path(o->output, k, o->snapshots, path, sizeof(path)))
			return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", o->output);
		if (mt_outfile_check_inputs(path, inputs, ni, err, errlen))
			return -EEXIST;
		if (!o->trace_output)
			continue;
		if (mt_capture_output_path(o->trace_output, k, o->snapshots, path, sizeof(path)))
			return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", o->trace_output);
		if (mt_outfile_check_inputs(path, inputs, ni, err, errlen))
			return -EEXIST;
	}
	return 0;
}

/* Whether the outputs named after BASE can be made, by making (and
 * removing) the last snapshot's: its name is the longest, so every other
 * fits if it does, and they share its directory. OF tells what it was. */
static int check_writable(const char *base, unsigned int snapshots, struct mt_outfile *of,
			  char *err, size_t errlen)
{
	char path[PATH_MAX];
	int e;

	if (mt_capture_output_path(base, snapshots, snapshots, path, sizeof(path)))
		return mt_errmsg(err, errlen, ENAMETOOLONG, "output path too long: %s", base);
	if ((e = mt_outfile_begin(of, path, err, errlen)))
		return e;
	mt_outfile_abort(of);
	return 0;
}

/* The outputs' directories are proven writable (the top-level form's
 * trace too), and the bundles' has room for them. */
static int check_room(const struct mt_capture_opts *o, struct mt_preflight *p, char *err,
		      size_t errlen)
{
	char dir[PATH_MAX];
	struct mt_outfile of;
	struct statvfs vfs;
	const char *slash;
	int e;

	if ((o->trace_output && (e = check_writable(o->trace_output, o->snapshots, &of, err,
						    errlen))) ||
	    (e = check_writable(o->output, o->snapshots, &of, err, errlen)))
		return e;
	if (of.in_place)	/* /dev/null and the like: nothing to fill */
		return 0;
	slash = strrchr(of.path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - of.path) + !(slash - of.path) : 1,
		 slash ? of.path : ".");
	if (statvfs(dir, &vfs))
		return 0;	/* no figure to compare with */
	p->free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	p->room_known = true;
	if (p->free_bytes < p->worst_case)
		return mt_errmsg(err, errlen, ENOSPC,
				 "not enough room for a snapshot in %s: %.1f MiB free, the worst case needs %.1f MiB (%u CPU%s x %.1f MiB of PT%s); free space, write elsewhere (-o) or use a smaller --buffer-size",
				 dir, p->free_bytes / 1048576.0, p->worst_case / 1048576.0, p->cpus,
				 mt_plural(p->cpus, "", "s"), o->buffer_size / 1048576.0,
				 o->embed || o->kernel ? ", plus copied code" : "");
	if (o->snapshots > 1 && p->free_bytes / o->snapshots < p->worst_case)
		snprintf(p->note, sizeof(p->note),
			 "%s has room for %llu of the %u snapshots in the worst case (%.1f MiB each)",
			 dir, (unsigned long long)(p->free_bytes / p->worst_case), o->snapshots,
			 p->worst_case / 1048576.0);
	return 0;
}

static uint64_t worst_case(const struct mt_capture_opts *o, const char *command, unsigned int cpus)
{
	uint64_t one = cpus * (o->buffer_size + MT_CAPTURE_DEFAULT_SB_RECORDS * SB_RECORD_BYTES) +
		       RECORDS_SLACK;
	struct stat st;

	if (o->kernel)
		one += KERNEL_TEXT_BYTES;
	if (o->embed) {
		one += PORTABLE_LIBS_BYTES;
		if (command[0] && stat(command, &st) == 0)
			one += (uint64_t)st.st_size;
	}
	return one;
}

/* -p PID: a process (not a thread id), with user code unless only its
 * kernel code is wanted. */
static int check_pid(const struct mt_capture_opts *o, char *err, size_t errlen)
{
	char comm[64] = "", path[64];
	bool kthread;
	FILE *f;
	int e = mt_target_check_pid(o->pid, &kthread, err, errlen);

	if (e || !kthread || o->kernel)
		return e;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	return mt_errmsg(err, errlen, EINVAL,
			 "process %d (%s) is a kernel thread: it runs no user code to trace; add --kernel to trace its kernel code",
			 (int)o->pid, comm);
}

/* A tid= filter naming a thread of another process: the trigger could
 * never fire (the threads a launched command makes get new ids). A thread
 * that does not exist yet may be one the target creates. */
static int check_tids(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
		      size_t n, char *err, size_t errlen)
{
	if (o->system_wide)
		return 0;	/* every thread is traced */
	for (size_t i = 0; i < n; i++) {
		pid_t tid = (pid_t)specs[i].filter.tid;
		int tgid;

		if (!tid || (tgid = mt_target_tgid(tid)) < 0 || (o->pid && tgid == o->pid))
			continue;
		return mt_errmsg(err, errlen, EINVAL,
				 "trigger '%s': thread %d is one of process %d, %s", specs[i].text,
				 (int)tid, tgid,
				 o->pid ? "not of the traced one" :
					  "not of the command, whose threads get new ids");
	}
	return 0;
}

int mt_capture_preflight(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
			 size_t n, const struct mt_preflight_env *env, struct mt_preflight *out,
			 int *usage, char *err, size_t errlen)
{
	static const struct mt_preflight_env defaults = { KPROBE_PMU, KALLSYMS };
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int e;

	memset(out, 0, sizeof(*out));
	*usage = 0;
	if (!env)
		env = &defaults;
	for (size_t i = 0; i < n; i++)
		if ((e = check_trigger(&specs[i], env, &out->probes[i], err, errlen)))
			return e;
	if (o->argv && o->argv[0] &&
	    (e = mt_target_find_command(o->argv[0], out->command, sizeof(out->command), err, errlen)))
		return e;
	if (o->pid && (e = check_pid(o, err, errlen)))
		return e;
	if ((e = check_tids(o, specs, n, err, errlen)))
		return e;
	if ((e = check_outputs(o, specs, n, out->command, err, errlen))) {
		*usage = 1;	/* the command line contradicts itself */
		return e;
	}
	out->cpus = cpus > 0 ? (unsigned int)cpus : 1;
	out->worst_case = worst_case(o, out->command, out->cpus);
	return check_room(o, out, err, errlen);
}

static void print_threads(pid_t pid, FILE *f)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	fprintf(f, "threads now:");
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && n++ < 32)
			fprintf(f, " %s", de->d_name);
	closedir(d);
	fprintf(f, "%s (and those it creates later)\n", n > 32 ? " ..." : "");
}

static void write_plan(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
		       size_t n, const struct mt_preflight *p, FILE *f)
{
	char path[PATH_MAX];

	fprintf(f, "dry run: nothing is armed, launched or written\n");
	if (o->system_wide) {
		fprintf(f, "would trace every task on every CPU\n");
	} else if (o->pid) {
		fprintf(f, "would trace process %d, all its threads\n", (int)o->pid);
		print_threads(o->pid, f);
	} else if (o->argv && o->argv[0]) {
		fprintf(f, "would run %s (held before exec until armed), all its threads:", p->command);
		for (char **a = o->argv; *a; a++)
			fprintf(f, " %s", *a);
		fputc('\n', f);
	}
	for (size_t i = 0; i < n; i++) {
		const struct mt_trigger_spec *s = &specs[i];

		if (s->kind == MT_TRIG_KPROBE)
			fprintf(f, "trigger %zu '%s': kernel function %s+%llu", i + 1, s->text,
				s->symbol, (unsigned long long)s->offset);
		else
			fprintf(f, "trigger %zu '%s': %s%s%s at 0x%llx (file offset 0x%llx)",
				i + 1, s->text, s->path, s->symbol ? ", " : "", s->symbol ? s->symbol : "",
				(unsigned long long)p->probes[i].link_addr,
				(unsigned long long)p->probes[i].file_offset);
		if (s->filter.tid)
			fprintf(f, ", thread %u only", (unsigned int)s->filter.tid);
		else
			fprintf(f, ", %s", o->system_wide ? "any process" : "any thread of the target");
		fputc('\n', f);
	}
	if (!n)
		fprintf(f, "no trigger: the snapshot is taken on Ctrl-C or when the target exits\n");
	mt_capture_output_path(o->output, 1, o->snapshots, path, sizeof(path));
	fprintf(f, "%u snapshot%s of up to %u CPU%s x %.1f MiB of PT each, to %s%s (worst case %.1f MiB each",
		o->snapshots, mt_plural(o->snapshots, "", "s"), p->cpus,
		mt_plural(p->cpus, "", "s"), o->buffer_size / 1048576.0,
		o->temporary_bundles ? "a temporary bundle" :
		strcmp(path, "-") ? path : "standard output",
		o->snapshots > 1 && !o->temporary_bundles ? " ..." : "", p->worst_case / 1048576.0);
	if (p->room_known)
		fprintf(f, ", %.1f MiB free there", p->free_bytes / 1048576.0);
	fputs(")\n", f);
}

void mt_capture_print_plan(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
			   size_t n, const struct mt_preflight *p, const struct mt_reporter *rep)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	write_plan(o, specs, n, p, f);
	if (fclose(f))
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		mt_report(rep, MT_SEV_INFO, "%s", line);
	free(text);
}
