// SPDX-License-Identifier: MIT
/*
 * record's checks before arming (capture_preflight.h): triggers resolved,
 * kprobe support and kernel functions looked up in a faked /sys and
 * kallsyms, outputs against inputs, and the --dry-run plan.
 */
#include "mt_test.h"

#include "capture/capture_preflight.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake {
	char root[64], pmu[96], kallsyms[96];
	struct mt_preflight_env env;
};

static void fake_init(struct fake *f, int kprobes, const char *kallsyms)
{
	FILE *k;

	snprintf(f->root, sizeof(f->root), "/tmp/mt-preflight-XXXXXX");
	MT_ASSERT(mkdtemp(f->root));
	snprintf(f->pmu, sizeof(f->pmu), "%s/kprobe", f->root);
	snprintf(f->kallsyms, sizeof(f->kallsyms), "%s/kallsyms", f->root);
	if (kprobes)
		MT_ASSERT_EQ(mkdir(f->pmu, 0755), 0);
	k = fopen(f->kallsyms, "w");
	MT_ASSERT(k);
	fputs(kallsyms, k);
	fclose(k);
	f->env = (struct mt_preflight_env){ f->pmu, f->kallsyms };
}

static void fake_fini(struct fake *f)
{
	rmdir(f->pmu);
	unlink(f->kallsyms);
	rmdir(f->root);
}

static int check(const char *spec_text, const struct fake *f, const char *output, char *err,
		 size_t errlen, int *usage)
{
	struct mt_capture_opts o;
	struct mt_trigger_spec spec;
	struct mt_preflight p;
	char *argv[] = { "true", NULL };
	int rc;

	mt_capture_opts_init(&o);
	o.argv = argv;
	if (output)
		o.output = output;
	MT_ASSERT_MSG(mt_trigger_spec_parse(spec_text, &spec, err, errlen) == 0, "%s", err);
	rc = mt_capture_preflight(&o, &spec, 1, &f->env, &p, usage, err, errlen);
	mt_trigger_spec_free(&spec);
	return rc;
}

MT_TEST(kprobe_trigger_without_kprobes)
{
	struct fake f;
	char err[512];
	int usage;

	fake_init(&f, 0, "ffffffff81000000 T do_sys_open\n");
	MT_ASSERT_EQ(check("kprobe:do_sys_open", &f, "/dev/null", err, sizeof(err), &usage),
		     -EOPNOTSUPP);
	MT_ASSERT_MSG(strstr(err, "this kernel has no kprobes (built without CONFIG_KPROBES"), "%s", err);
	MT_ASSERT(!usage);
	fake_fini(&f);
}

MT_TEST(kprobe_function_looked_up)
{
	struct fake f;
	char err[512];
	int usage;

	fake_init(&f, 1, "ffffffff81000000 T do_sys_open\nffffffff81000100 d some_data\n");
	MT_ASSERT_EQ(check("kprobe:do_sys_open", &f, "/dev/null", err, sizeof(err), &usage), 0);
	MT_ASSERT_EQ(check("kprobe:no_such_fn", &f, "/dev/null", err, sizeof(err), &usage), -ENOENT);
	MT_ASSERT_MSG(strstr(err, "the kernel has no function 'no_such_fn'"), "%s", err);
	/* Data is no function. */
	MT_ASSERT_EQ(check("kprobe:some_data", &f, "/dev/null", err, sizeof(err), &usage), -ENOENT);
	fake_fini(&f);
}

MT_TEST(uprobe_file_checked_first)
{
	struct fake f;
	char err[512];
	int usage;

	fake_init(&f, 1, "");
	MT_ASSERT(check("uprobe:/nonexistent:fn", &f, "/dev/null", err, sizeof(err), &usage) < 0);
	MT_ASSERT_STREQ(err, "trigger 'uprobe:/nonexistent:fn': cannot open /nonexistent: No such file or directory");
	MT_ASSERT(!usage);
	MT_ASSERT(check("uprobe:/proc/self/exe:no_such_function_here", &f, "/dev/null", err,
			sizeof(err), &usage) < 0);
	MT_ASSERT_MSG(strstr(err, "function 'no_such_function_here' not found"), "%s", err);
	MT_ASSERT_EQ(check("uprobe:/proc/self/exe:main", &f, "/dev/null", err, sizeof(err), &usage), 0);
	fake_fini(&f);
}

MT_TEST(output_never_an_input)
{
	struct fake f;
	char err[512], self[256];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int usage;

	char spec[300];

	MT_ASSERT(n > 0);
	self[n] = '\0';
	snprintf(spec, sizeof(spec), "uprobe:%s:main", self);
	fake_init(&f, 1, "");
	MT_ASSERT_EQ(check(spec, &f, self, err, sizeof(err), &usage), -EEXIST);
	MT_ASSERT_MSG(strstr(err, "is the input"), "%s", err);
	MT_ASSERT(usage);
	fake_fini(&f);
}

MT_TEST(unwritable_directory_is_no_usage_error)
{
	struct fake f;
	char err[512];
	int usage;

	fake_init(&f, 1, "");
	MT_ASSERT(check("uprobe:/proc/self/exe:main", &f, "/nonexistent-dir/x.mtrace", err,
			sizeof(err), &usage) < 0);
	MT_ASSERT_MSG(strstr(err, "cannot create a file in /nonexistent-dir"), "%s", err);
	MT_ASSERT(!usage);
	fake_fini(&f);
}

/* A reporter that collects its messages, one line each, with their severity. */
static void collect(void *ctx, enum mt_severity sev, const char *msg)
{
	fprintf(ctx, "%d %s\n", (int)sev, msg);
}

MT_TEST(dry_run_plan_names_probe_and_output)
{
	struct mt_capture_opts o;
	struct mt_trigger_spec spec;
	struct mt_preflight p;
	char err[512], *text = NULL, want[128];
	char *argv[] = { "true", NULL };
	size_t len = 0;
	int usage;
	FILE *out;

	mt_capture_opts_init(&o);
	o.argv = argv;
	o.output = "/dev/null";
	MT_ASSERT_EQ(mt_trigger_spec_parse("uprobe:/proc/self/exe:main,tid=9", &spec, err,
					   sizeof(err)), 0);
	MT_ASSERT_MSG(mt_capture_preflight(&o, &spec, 1, NULL, &p, &usage, err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT(p.probes[0].link_addr != 0);
	p.cpus = 1;	/* a count of one, told as such */
	out = open_memstream(&text, &len);
	mt_capture_print_plan(&o, &spec, 1, &p, &(struct mt_reporter){ collect, out });
	fclose(out);
	/* Lines without the program's name, each an INFO message. */
	MT_ASSERT_MSG(!strstr(text, "mtrace-user"), "%s", text);
	MT_ASSERT_MSG(!strncmp(text, "0 dry run: nothing is armed", 27), "%s", text);
	snprintf(want, sizeof(want), "/proc/self/exe, main at 0x%llx (file offset 0x%llx), thread 9 only",
		 (unsigned long long)p.probes[0].link_addr,
		 (unsigned long long)p.probes[0].file_offset);
	MT_ASSERT_MSG(strstr(text, want), "%s", text);
	MT_ASSERT_MSG(strstr(text, "would run "), "%s", text);
	MT_ASSERT_MSG(strstr(text, "to /dev/null"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "1 snapshot of up to 1 CPU x "), "%s", text);
	free(text);
	mt_trigger_spec_free(&spec);
}
