// SPDX-License-Identifier: MIT
/*
 * Where the symbolizer finds a binary's debug file (sym_find_debug.c):
 * by .gnu_debuglink in each kind of directory of the search path, with
 * the checks that keep a wrong file out (build-id, CRC, the binary
 * itself), and without loading libdebuginfod when no debuginfod server is
 * set, while a set server is still asked.
 */
#include "test_sym_fixture.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char prog_c[] =
	"__attribute__((noinline)) static int hidden_helper(int x) { return x * 5 + 3; }\n"
	"int main(int argc, char **argv) { (void)argv; return hidden_helper(argc); }\n";

/* No server: debuginfod could find nothing, and is not to be loaded. */
static void no_server(void)
{
	unsetenv("DEBUGINFOD_URLS");
}

/*
 * "full" with its symbols, "full.debug" its debug file; "bare" stripped
 * with no build-id and no link, "bare.debug" its debug file (no build-id).
 */
static void build(void)
{
	fx_write("prog.c", prog_c);
	fx_sh("cc -g -O1 -o full prog.c && objcopy --only-keep-debug full full.debug && "
	      "objcopy --strip-all --remove-section .note.gnu.build-id full bare && "
	      "objcopy --remove-section .note.gnu.build-id full.debug bare.debug");
}

/* BIN opened with PATH finds its debug file at WHERE (in the fixture
 * directory), or none for NULL, and then has the static function. */
static void expect_debug(const char *bin, const char *path, const char *where)
{
	struct mt_sym_file *f = open_ok(bin, path);
	const char *got = mt_sym_debug_file(f);
	const struct mt_sym *s = mt_sym_lookup(f, fx_nm("full", "hidden_helper"));

	if (!where) {
		MT_ASSERT_MSG(!got, "%s with path '%s': debug file %s", bin, path, got);
		MT_ASSERT(!s || strcmp(s->name, "hidden_helper"));
	} else {
		MT_ASSERT_MSG(got && !strcmp(got, fx_path(where)),
			      "%s with path '%s': debug file %s, not %s", bin, path,
			      got ? got : "(none)", where);
		MT_ASSERT(s && !strcmp(s->name, "hidden_helper"));
	}
	mt_sym_file_close(f);
}

MT_TEST(debuglink_in_each_directory_of_the_path)
{
	const char *dir = fx_dir(), *tail = strrchr(dir, '/') + 1;
	char path[700], where[700];

	no_server();
	build();
	fx_sh("cp bare linked && mkdir -p tmp && cp bare.debug tmp/l.dbg && "
	      "objcopy --add-gnu-debuglink=tmp/l.dbg linked && rm -r tmp");
	/* An empty element: the binary's own directory. */
	fx_sh("cp bare.debug l.dbg");
	expect_debug("linked", "+", "l.dbg");
	fx_sh("rm l.dbg");
	/* A relative one: under the binary's directory. */
	fx_sh("mkdir -p sub && cp bare.debug sub/l.dbg");
	expect_debug("linked", "+sub", "sub/l.dbg");
	/* An absolute one: followed by the binary's directory, or a tail of
	 * it, or nothing. */
	snprintf(path, sizeof(path), "+%s/root", dir);
	fx_sh("mkdir -p 'root%s' && cp bare.debug 'root%s/l.dbg'", dir, dir);
	snprintf(where, sizeof(where), "root%s/l.dbg", dir);
	expect_debug("linked", path, where);
	fx_sh("rm -r root && mkdir -p 'root/%s' && cp bare.debug 'root/%s/l.dbg'", tail, tail);
	snprintf(where, sizeof(where), "root/%s/l.dbg", tail);
	expect_debug("linked", path, where);
	fx_sh("rm -r root && mkdir root && cp bare.debug root/l.dbg");
	expect_debug("linked", path, "root/l.dbg");
	/* Elements are tried in order; no element, no file. */
	snprintf(path, sizeof(path), "+sub:%s/root", dir);
	expect_debug("linked", path, "sub/l.dbg");
	expect_debug("linked", "+/nonexistent", NULL);
}

MT_TEST(debug_file_named_after_a_binary_without_link)
{
	no_server();
	build();
	/* NAME.debug first, then NAME itself in a subdirectory. */
	fx_sh("mkdir -p .debug && cp bare.debug .debug/bare");
	expect_debug("bare", "-.debug", ".debug/bare");
	fx_sh("cp bare.debug .debug/bare.debug");
	expect_debug("bare", "-.debug", ".debug/bare.debug");
}

MT_TEST(a_wrong_file_is_not_the_debug_file)
{
	no_server();
	build();
	fx_sh("cp bare linked && cp bare.debug l.dbg && objcopy --add-gnu-debuglink=l.dbg linked");
	/* Contents changed after linking: the CRC tells, unless told not to. */
	fx_sh("echo >> l.dbg");
	expect_debug("linked", "+", NULL);
	expect_debug("linked", "-", "l.dbg");
	/* The binary itself under the link's name is never its debug file. */
	fx_sh("rm l.dbg && ln linked l.dbg");
	expect_debug("linked", "-", NULL);
	/* With a build-id, the build-id decides, whatever the CRC. */
	fx_sh("rm l.dbg && cp full withid && strip --strip-all withid && "
	      "cp full.debug l.dbg && objcopy --add-gnu-debuglink=l.dbg withid && echo >> l.dbg");
	expect_debug("withid", "+", "l.dbg");
	fx_sh("cp prog.c other.c && echo 'int other_fn(void) { return 1; }' >> other.c && "
	      "cc -g -O1 -o other other.c && objcopy --only-keep-debug other l.dbg");
	expect_debug("withid", "-", NULL);
}

/* Whether libdebuginfod is loaded in this process. */
static bool debuginfod_loaded(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* Symbols and a source line of a stripped binary whose debug file is
 * nowhere: both of its dwfls search. */
static void search_in_vain(void)
{
	struct mt_sym_file *f = open_ok("stripped", "-:/nonexistent");
	struct mt_src_loc loc;

	MT_ASSERT(!mt_sym_debug_file(f));
	MT_ASSERT(mt_sym_source(f, fx_nm("full", "main"), &loc) != 0);
	mt_sym_file_close(f);
}

MT_TEST(debuginfod_is_asked_only_with_a_server)
{
	char cache[600];

	no_server();
	if (system("ldconfig -p | grep -q 'libdebuginfod\\.so\\.1 '"))
		mt_skip("libdebuginfod is not installed: whether it is loaded cannot be seen");
	MT_ASSERT(!debuginfod_loaded());
	build();
	fx_sh("cp full stripped && strip --strip-all stripped");
	search_in_vain();
	MT_ASSERT_MSG(!debuginfod_loaded(), "libdebuginfod loaded with no server set");
	/* A server (one that refuses at once) is asked through libdwfl. */
	snprintf(cache, sizeof(cache), "%s", fx_path("cache"));
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "1", 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9/", 1);
	search_in_vain();
	no_server();
	MT_ASSERT_MSG(debuginfod_loaded(), "no debuginfod client with a server set");
}
