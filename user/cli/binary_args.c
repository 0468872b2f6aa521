// SPDX-License-Identifier: MIT
/* Where the traced binaries are found, for the commands that decode (binary_args.h). */
#include "binary_args.h"

#include "cli_input.h"
#include "cli_msg.h"
#include "perfdata/perfdata_import.h"
#include "util/mt_array.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

const char binary_help[] =
	"      --debug-path PATH separate debug files: directories searched by build-id\n"
	"                        and .gnu_debuglink (default :.debug:/usr/lib/debug)\n"
	"      --symfs DIR       look for the recorded binaries under DIR (as perf --symfs)\n"
	"      --path-map OLD=NEW  look for binaries recorded under OLD in NEW (repeatable)\n"
	"      --embedded-only   use only binaries embedded in the bundle\n";

static int add_path_map(struct decode_request *q, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || arg[0] != '/' || eq[1] != '/') {
		cli_err("--path-map wants OLD=NEW with two absolute paths, not '%s'", arg);
		return CLI_EXIT_USAGE;
	}
	if (MT_ARRAY_RESERVE(q->path_maps, q->path_maps_cap, q->npath_maps, 1)) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	*eq = '\0';	/* argv is ours to cut */
	q->path_maps[q->npath_maps++] = (struct mt_path_map){ arg, eq + 1 };
	return cli_check_path("--path-map", eq + 1, 0);
}

/* A --debug-path directory that is not there is told, not refused: the
 * list is a set of places to look, such as the default's /usr/lib/debug,
 * which a machine may lack. Relative entries are looked for beside each
 * binary. */
void binary_warn(const struct decode_request *q)
{
	const char *list = q->debug_path;
	struct stat st;
	char dir[PATH_MAX];

	for (const char *p = list; p && !q->quiet && *p;) {
		size_t n = strcspn(p, ":");

		if (*p == '/' && n < sizeof(dir)) {
			int e;

			memcpy(dir, p, n);
			dir[n] = 0;
			e = stat(dir, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
			if (e)
				cli_err("warning: --debug-path %s: %s", dir, strerror(e));
		}
		p += n + (p[n] == ':');
	}
}

int binary_option(int c, char *arg, struct decode_request *q)
{
	switch (c) {
	case BINARY_OPT_DEBUG_PATH: q->debug_path = arg; return 0;
	case BINARY_OPT_EMBEDDED_ONLY: q->embedded_only = 1; return 0;
	case BINARY_OPT_SYMFS:
		q->symfs = arg;
		return cli_check_path("--symfs", arg, 1);
	case BINARY_OPT_PATH_MAP: return add_path_map(q, arg);
	default: return -1;
	}
}

void binary_decode_opts(const struct decode_request *q, struct mt_decode_opts *o)
{
	o->debug_path = q->debug_path;
	o->embedded_only = q->embedded_only;
	o->path_maps = q->path_maps;
	o->npath_maps = q->npath_maps;
	o->symfs = q->symfs;
	/* A perf.data's import copied in what it found in perf's cache. */
	o->copies = q->perf_data ? "perf's build-id cache" : NULL;
	o->copies_without_id = q->perf_data ? PERFDATA_NO_BUILD_ID : NULL;
}
