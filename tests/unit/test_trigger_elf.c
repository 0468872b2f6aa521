// SPDX-License-Identifier: MIT
/*
 * Uprobe placement over binaries compiled at test time: function names and
 * addresses in PIE and non-PIE executables and shared libraries become the
 * file offsets objdump -F reports (an independent witness), and every
 * unusable request is refused with a precise message.
 */
#include "test_decode_fixture.h"

#include "trigger/trigger.h"

static const char prog_c[] =
	"int counter;\n"
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + counter; }\n"
	"__attribute__((noinline)) int beta(int x) { return alpha(x) + 1; }\n"
	"static int impl(int x) { return x; }\n"
	"static int (*pick(void))(int) { return impl; }\n"
	"int chosen(int) __attribute__((ifunc(\"pick\")));\n"
	"int main(int argc, char **argv) { (void)argv; return beta(argc) + chosen(argc); }\n";

static const char dup1_c[] = "__attribute__((noinline)) static int twin(int x) { return x + 1; }\n"
			     "int one(int x) { return twin(x); }\n";
static const char dup2_c[] = "__attribute__((noinline)) static int twin(int x) { return x + 2; }\n"
			     "int two(int x) { return twin(x); }\n"
			     "int main(void) { return 0; }\n";
static const char lib_c[] = "__attribute__((noinline)) long lib_entry(long v) { return v * 7; }\n";
static const char tiny_c[] = "void _start(void) { for (;;) ; }\n";
static const char uses_c[] = "#include <stdio.h>\n"
			     "long lib_entry(long v);\n"
			     "int main(int argc, char **argv) { puts(argv[0]); return (int)lib_entry(argc); }\n";

static bool built;

static void build_fixtures(void)
{
	if (built)
		return;
	fx_need("gcc");
	fx_need("objdump");
	fx_write("prog.c", prog_c);
	fx_write("dup1.c", dup1_c);
	fx_write("dup2.c", dup2_c);
	fx_write("lib.c", lib_c);
	fx_write("tiny.c", tiny_c);
	fx_write("notelf", "just text\n");
	fx_sh("gcc -O1 -fPIE -pie -o prog-pie prog.c");
	fx_sh("gcc -O1 -fno-pie -no-pie -o prog-nopie prog.c");
	fx_sh("gcc -O1 -o dup dup1.c dup2.c");
	fx_sh("gcc -O1 -fPIC -shared -o libx.so lib.c && cp libx.so libx-stripped.so && "
	      "strip -s libx-stripped.so");
	fx_sh("gcc -O1 -nostdlib -static -o tiny tiny.c && strip -s tiny");
	fx_sh("gcc -O1 -c -o prog.o prog.c");
	/* Calls into libx.so, found next to it ($ORIGIN), and libc; and the
	 * same against a library no longer there. */
	fx_write("uses.c", uses_c);
	fx_sh("gcc -O1 -o uses uses.c -L. -lx -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags");
	fx_sh("gcc -O1 -fPIC -shared -Wl,-soname,libgone.so -o libgone.so lib.c && "
	      "gcc -O1 -o uses-gone uses.c -L. -lgone && rm libgone.so");
	fx_sh("cp prog-pie prog-stripped && strip -s prog-stripped");
	built = true;
}

/* File offset of FUNC in BINARY per objdump -d -F, or UINT64_MAX. */
static uint64_t objdump_file_offset(const char *binary, const char *func)
{
	char cmd[1024], line[1024], want[256];
	unsigned long long addr, off;
	uint64_t found = UINT64_MAX;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d -F '%s' 2>/dev/null", fx_path(binary));
	snprintf(want, sizeof(want), "<%s> (File Offset: 0x%%llx):", func);
	p = popen(cmd, "r");
	MT_ASSERT(p);
	while (fgets(line, sizeof(line), p)) {
		char *sp = strchr(line, ' ');

		if (sscanf(line, "%llx", &addr) == 1 && sp && sscanf(sp + 1, want, &off) == 1)
			found = off;
	}
	pclose(p);
	return found;
}

static uint64_t resolve_ok(const char *text)
{
	struct mt_trigger_spec s;
	char err[MT_TRIGGER_ERRLEN] = "";
	uint64_t off = 0;

	MT_ASSERT_MSG(!mt_trigger_spec_parse(text, &s, err, sizeof(err)), "%s: %s", text, err);
	MT_ASSERT_MSG(!mt_trigger_resolve(&s, &off, err, sizeof(err)), "%s: %s", text, err);
	mt_trigger_spec_free(&s);
	return off;
}

static char last_err[MT_TRIGGER_ERRLEN];	/* resolve_bad()'s message */

static void resolve_bad(const char *text, const char *what)
{
	struct mt_trigger_spec s;
	uint64_t off = 0;

	last_err[0] = 0;
	MT_ASSERT_MSG(!mt_trigger_spec_parse(text, &s, last_err, sizeof(last_err)), "%s: %s", text,
		      last_err);
	MT_ASSERT_MSG(mt_trigger_resolve(&s, &off, last_err, sizeof(last_err)) < 0, "%s resolved",
		      text);
	MT_ASSERT_MSG(strstr(last_err, what), "%s: error '%s' lacks '%s'", text, last_err, what);
	mt_trigger_spec_free(&s);
}

static char spec_buf[1024];

static const char *spec(const char *kind, const char *binary, const char *target)
{
	snprintf(spec_buf, sizeof(spec_buf), "%s:%s:%s", kind, fx_path(binary), target);
	return spec_buf;
}

static void check_function(const char *binary, const char *func)
{
	uint64_t want = objdump_file_offset(binary, func);

	MT_ASSERT_MSG(want != UINT64_MAX, "objdump shows no %s in %s", func, binary);
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", binary, func)), want);
	MT_ASSERT_EQ(resolve_ok(spec("uretprobe", binary, func)), want);
}

MT_TEST(pie_executable)
{
	build_fixtures();
	check_function("prog-pie", "alpha");
	check_function("prog-pie", "beta");
	check_function("prog-pie", "main");
}

MT_TEST(non_pie_executable)
{
	build_fixtures();
	check_function("prog-nopie", "alpha");
	/* Non-PIE: link-time addresses are far from file offsets. */
	MT_ASSERT(fx_nm("prog-nopie", "alpha") != objdump_file_offset("prog-nopie", "alpha"));
}

MT_TEST(shared_library_not_loaded)
{
	build_fixtures();
	check_function("libx.so", "lib_entry");
	/* Stripped libraries keep exported functions in .dynsym. */
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", "libx-stripped.so", "lib_entry")),
		     objdump_file_offset("libx.so", "lib_entry"));
}

MT_TEST(offset_and_address_forms)
{
	char addr[64];

	build_fixtures();
	uint64_t base = objdump_file_offset("prog-nopie", "alpha");
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", "prog-nopie", "alpha+3")), base + 3);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fx_nm("prog-nopie", "alpha"));
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", "prog-nopie", addr)), base);
	snprintf(addr, sizeof(addr), "0x%llx",
		 (unsigned long long)fx_objdump_label("prog-pie", "beta"));
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", "prog-pie", addr)),
		     objdump_file_offset("prog-pie", "beta"));
}

/* An address gets the checks a name gets where the symbols tell: a
 * uretprobe only at a function's start, no probe on an IFUNC's resolver;
 * a stripped binary's addresses are taken as given. */
MT_TEST(address_form_checked_against_the_symbols)
{
	uint64_t alpha;
	char addr[64];

	build_fixtures();
	alpha = fx_nm("prog-nopie", "alpha");
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)alpha + 1);
	resolve_bad(spec("uretprobe", "prog-nopie", addr), "is alpha+1, not a function's start");
	MT_ASSERT_EQ(resolve_ok(spec("uprobe", "prog-nopie", addr)),
		     objdump_file_offset("prog-nopie", "alpha") + 1);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)alpha);
	MT_ASSERT_EQ(resolve_ok(spec("uretprobe", "prog-nopie", addr)),
		     objdump_file_offset("prog-nopie", "alpha"));
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fx_nm("prog-nopie", "chosen"));
	resolve_bad(spec("uprobe", "prog-nopie", addr), "is the IFUNC 'chosen'");
	snprintf(addr, sizeof(addr), "0x%llx",
		 (unsigned long long)fx_nm("prog-pie", "alpha") + 1);
	MT_ASSERT_EQ(resolve_ok(spec("uretprobe", "prog-stripped", addr)),
		     objdump_file_offset("prog-pie", "alpha") + 1);
}

MT_TEST(missing_symbol_suggests_close_names)
{
	build_fixtures();
	resolve_bad(spec("uprobe", "prog-pie", "alpah"), "function 'alpah' not found in");
	resolve_bad(spec("uprobe", "prog-pie", "alpah"), "(did you mean: alpha?)");
	resolve_bad(spec("uprobe", "prog-pie", "zzzzzzzz"), "not found");
}

/* A function the program only calls is in a library: the message names
 * the file to probe, as the loader would find it. */
MT_TEST(imported_function_names_its_library)
{
	char want[1024];

	build_fixtures();
	snprintf(want, sizeof(want), "'lib_entry' is not in %s, which calls it from %s: "
		 "probe it there (uretprobe:%s:lib_entry)", fx_path("uses"), fx_path("libx.so"),
		 fx_path("libx.so"));
	resolve_bad(spec("uretprobe", "uses", "lib_entry"), want);
	resolve_bad(spec("uprobe", "uses", "puts"), "libc.so.6: probe it there (uprobe:");
	resolve_bad(spec("uprobe", "uses-gone", "lib_entry"),
		    "which calls it from one of its libraries (libgone.so, libc.so.6): probe it "
		    "in the one that defines it");
	/* Defined here, the function is found as before. */
	resolve_ok(spec("uprobe", "libx.so", "lib_entry"));
}

/* A stripped program keeps names only for what it exports: the message
 * says so, and how to probe by address. */
MT_TEST(stripped_program_says_so)
{
	build_fixtures();
	resolve_bad(spec("uprobe", "prog-stripped", "alpha"), "which is stripped");
	resolve_bad(spec("uprobe", "prog-stripped", "alpha"), "give the address as uprobe:");
	resolve_bad(spec("uprobe", "prog-pie", "alpah"), "not found in");
	MT_ASSERT_MSG(!strstr(last_err, "stripped"), "%s", last_err);
}

/* A long path, named twice over in the advice, still gets all of it. */
MT_TEST(long_paths_keep_the_whole_message)
{
	char dir[256], text[512];

	build_fixtures();
	memset(dir, 'd', 200);
	dir[200] = '\0';
	fx_sh("mkdir -p %s && cp prog-stripped %s/prog", dir, dir);
	snprintf(text, sizeof(text), "%s/prog", dir);
	resolve_bad(spec("uprobe", text, "alpha"), "which is stripped");
	MT_ASSERT_MSG(strlen(last_err) > 2 * strlen(fx_path(text)) &&
		      !strcmp(last_err + strlen(last_err) - strlen(":0xADDR"), ":0xADDR"),
		      "cut short: %s", last_err);
}

MT_TEST(ambiguous_static_functions)
{
	build_fixtures();
	resolve_bad(spec("uprobe", "dup", "twin"), "function 'twin' is ambiguous in");
	resolve_bad(spec("uprobe", "dup", "twin"), "pick one with uprobe:");
}

MT_TEST(refuses_unusable_symbols)
{
	build_fixtures();
	resolve_bad(spec("uprobe", "prog-pie", "counter"), "'counter' in");
	resolve_bad(spec("uprobe", "prog-pie", "counter"), "is not a function");
	resolve_bad(spec("uprobe", "prog-pie", "chosen"), "is an IFUNC");
	resolve_bad(spec("uprobe", "prog-pie", "alpha+4096"), "offset +4096 is outside 'alpha'");
}

MT_TEST(refuses_bad_files_and_addresses)
{
	char addr[64];

	build_fixtures();
	resolve_bad(spec("uprobe", "does-not-exist", "f"), "No such file or directory");
	resolve_bad(spec("uprobe", "notelf", "f"), "is not an ELF file");
	resolve_bad(spec("uprobe", "prog.o", "alpha"), "is not an executable or shared library");
	resolve_bad(spec("uprobe", "tiny", "_start"), "has no symbol table (stripped?)");
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fx_nm("prog-nopie", "counter"));
	resolve_bad(spec("uprobe", "prog-nopie", addr), "is not in an executable segment");
	resolve_bad("kprobe:vfs_read", "name no binary");
}
