// SPDX-License-Identifier: MIT
/*
 * Symbolizer tests over binaries compiled at test time: symbols of PIE and
 * non-PIE executables, PLT stubs in each PLT layout, separate debug files
 * found by build-id and by .gnu_debuglink, C++ names, source lines, inline
 * frames, and precise errors for files that are not usable ELF.
 */
#include "test_sym_fixture.h"

#include "sym/sym.h"
#include "sym/sym_internal.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* Line numbers below are asserted: keep the layout of this text. */
static const char prog_c[] =
	"#include <stdio.h>\n"				/* 1 */
	"#include <stdlib.h>\n"				/* 2 */
	"__attribute__((noinline)) int alpha(int x) {\n"	/* 3 */
	"\treturn x * 3 + 1;\n"				/* 4 */
	"}\n"						/* 5 */
	"__attribute__((noinline)) static int gamma_local(int x) {\n"	/* 6 */
	"\treturn alpha(x) + 7;\n"			/* 7 */
	"}\n"						/* 8 */
	"int main(int argc, char **argv) {\n"		/* 9 */
	"\tputs(argv[0]);\n"				/* 10 */
	"\treturn gamma_local(argc) + !getenv(argv[0]);\n"	/* 11 */
	"}\n";

/* The symbol at nm's address for NAME must be NAME and cover a few bytes. */
static void check_symbol(struct mt_sym_file *f, const char *binary, const char *name)
{
	uint64_t addr = fx_nm(binary, name);
	const struct mt_sym *s;

	MT_ASSERT_MSG(addr, "nm has no %s in %s", name, binary);
	s = mt_sym_lookup(f, addr);
	MT_ASSERT_MSG(s, "no symbol at 0x%" PRIx64, addr);
	MT_ASSERT_STREQ(s->name, name);
	MT_ASSERT_EQ(s->addr, addr);
	MT_ASSERT(s->size >= 4);
	MT_ASSERT(mt_sym_lookup(f, addr + s->size - 1) == s);
	MT_ASSERT(!s->plt);
}

static void build_prog(const char *out, const char *flags)
{
	fx_write("prog.c", prog_c);
	/* -O0: a function's first address belongs to its opening line. */
	fx_sh("cc -g -O0 %s -o %s prog.c", flags, out);
}

MT_TEST(pie_symbols_and_lines)
{
	struct mt_sym_file *f;
	struct mt_src_loc loc;
	const uint8_t *id;

	build_prog("pie", "-fPIE -pie");
	f = open_ok("pie", NULL);
	MT_ASSERT_EQ(mt_sym_elf_type(f), ET_DYN);
	check_symbol(f, "pie", "alpha");
	check_symbol(f, "pie", "gamma_local");
	check_symbol(f, "pie", "main");
	MT_ASSERT(mt_sym_lookup(f, 0) == NULL);
	{
		/* Between two symbols: the gap is reported. */
		const struct mt_sym *a = mt_sym_lookup(f, fx_nm("pie", "alpha"));
		size_t i = (size_t)(a - mt_sym_at(f, 0));
		uint64_t lo, hi;

		MT_ASSERT(i + 1 < mt_sym_count(f));
		if (mt_sym_at(f, i + 1)->addr > a->addr + a->size) {
			MT_ASSERT(!mt_sym_find(f, a->addr + a->size, &lo, &hi));
			MT_ASSERT_EQ(lo, a->addr + a->size);
			MT_ASSERT_EQ(hi, mt_sym_at(f, i + 1)->addr);
		}
		MT_ASSERT(mt_sym_find(f, a->addr + 1, &lo, &hi) == a);
		MT_ASSERT_EQ(lo, a->addr);
		MT_ASSERT_EQ(hi, a->addr + a->size);
	}
	MT_ASSERT(mt_sym_build_id(f, &id) == 20 && id);
	MT_ASSERT(mt_sym_debug_file(f) == NULL);
	MT_ASSERT_EQ(mt_sym_source(f, fx_nm("pie", "alpha"), &loc), 0);
	MT_ASSERT_EQ(loc.line, 3);
	MT_ASSERT_MSG(strstr(loc.file, "prog.c"), "file %s", loc.file);
	MT_ASSERT_EQ(mt_sym_source(f, fx_nm("pie", "main"), &loc), 0);
	MT_ASSERT_EQ(loc.line, 9);
	mt_sym_file_close(f);
}

MT_TEST(non_pie_symbols)
{
	struct mt_sym_file *f;

	build_prog("nopie", "-fno-pie -no-pie");
	f = open_ok("nopie", NULL);
	MT_ASSERT_EQ(mt_sym_elf_type(f), ET_EXEC);
	/* The classic non-PIE text address proves no bias was applied. */
	MT_ASSERT(fx_nm("nopie", "main") >= 0x400000);
	check_symbol(f, "nopie", "alpha");
	check_symbol(f, "nopie", "main");
	mt_sym_file_close(f);
}

/*
 * A stripped binary keeps no symbol of its own functions, but their
 * call-frame information: each function nm shows in the unstripped build
 * is there in the stripped one, anonymous, at nm's address and with the
 * size the compiler gave the symbol. The unstripped build gets no
 * anonymous function where a symbol is (real symbols win).
 */
MT_TEST(stripped_functions_from_call_frame_information)
{
	static const char *const fns[] = { "alpha", "gamma_local", "main" };
	struct mt_sym_file *full, *stripped;

	fx_write("prog.c", prog_c);
	fx_sh("cc -O2 -o cfi-full prog.c && strip -o cfi-stripped cfi-full");
	full = open_ok("cfi-full", NULL);
	stripped = open_ok("cfi-stripped", NULL);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t addr = fx_nm("cfi-full", fns[i]);
		const struct mt_sym *s = mt_sym_lookup(full, addr);
		const struct mt_sym *t = mt_sym_lookup(stripped, addr);

		MT_ASSERT_MSG(s && !s->anon && !strcmp(s->name, fns[i]), "%s in the full build", fns[i]);
		MT_ASSERT_MSG(t && t->anon && !strcmp(t->name, ""), "%s: no anonymous function", fns[i]);
		MT_ASSERT_EQ(t->addr, addr);
		MT_ASSERT_EQ(t->size, s->size);
	}
	for (size_t i = 0; i < mt_sym_count(full); i++) {
		const struct mt_sym *s = mt_sym_at(full, i);

		MT_ASSERT_MSG(!s->anon || !fx_nm_find("cfi-full", NULL, s->addr, 1),
			      "anonymous function at 0x%" PRIx64 ", where nm shows a symbol", s->addr);
	}
	mt_sym_file_close(full);
	mt_sym_file_close(stripped);
}

/* The stub objdump labels "<fn@plt>" must be our "fn@plt", in each layout. */
static void check_plt(const char *flags)
{
	static const char *const fns[] = { "puts", "getenv" };
	struct mt_sym_file *f;

	build_prog("pltprog", flags);
	f = open_ok("pltprog", NULL);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		char label[64];
		uint64_t addr;
		const struct mt_sym *s;

		snprintf(label, sizeof(label), "%s@plt", fns[i]);
		addr = fx_objdump_label("pltprog", label);
		MT_ASSERT_MSG(addr, "objdump shows no %s (%s)", label, flags);
		s = mt_sym_lookup(f, addr + 2);
		MT_ASSERT_MSG(s, "no symbol for %s (%s)", label, flags);
		MT_ASSERT_STREQ(s->name, label);
		MT_ASSERT(s->plt);
		MT_ASSERT_EQ(s->addr, addr);
	}
	mt_sym_file_close(f);
}

MT_TEST(plt_lazy)
{
	check_plt("-Wl,-z,lazy");
}

MT_TEST(plt_bind_now)
{
	check_plt("-Wl,-z,now");
}

MT_TEST(plt_ibt_sec)
{
	check_plt("-fcf-protection=full -Wl,-z,ibtplt");
}

/*
 * A call to a hidden IFUNC from inside a shared library, as the C library
 * calls memcpy from qsort: its PLT slot is filled by an IRELATIVE
 * relocation (no symbol; objdump says "*ABS*+0xRESOLVER@plt"). The stub
 * must be named after the IFUNC symbol whose value is that resolver.
 */
MT_TEST(plt_irelative_ifunc)
{
	static const char lib_c[] =
		"#include <stddef.h>\n"
		"typedef void *copy_fn(void *, const void *, size_t);\n"
		"static void *copy_bytes(void *d, const void *s, size_t n) {\n"
		"\tchar *o = d; const char *i = s;\n"
		"\twhile (n--) *o++ = *i++;\n"
		"\treturn d;\n"
		"}\n"
		"static copy_fn *resolve_copy(void) { return copy_bytes; }\n"
		"__attribute__((visibility(\"hidden\"))) void *fast_copy(void *, const void *, size_t)\n"
		"\t__attribute__((ifunc(\"resolve_copy\")));\n"
		"int use_copy(char *d, const char *s) { fast_copy(d, s, 4); return d[0]; }\n";
	char label[64];
	uint64_t resolver, addr;
	struct mt_sym_file *f;
	const struct mt_sym *s;

	fx_write("irel.c", lib_c);
	fx_sh("cc -O1 -fPIC -shared -o libirel.so irel.c");
	resolver = fx_nm("libirel.so", "fast_copy");
	MT_ASSERT_MSG(resolver, "nm has no fast_copy");
	snprintf(label, sizeof(label), "*ABS*+0x%" PRIx64 "@plt", resolver);
	addr = fx_objdump_label("libirel.so", label);
	MT_ASSERT_MSG(addr, "objdump shows no %s", label);
	f = open_ok("libirel.so", NULL);
	s = mt_sym_lookup(f, addr + 2);
	MT_ASSERT_MSG(s, "no symbol for %s", label);
	MT_ASSERT_STREQ(s->name, "fast_copy@plt");
	MT_ASSERT(s->plt);
	MT_ASSERT_EQ(s->addr, addr);
	mt_sym_file_close(f);
}

/* The C library's own: qsort calls memcpy through such a stub. */
MT_TEST(plt_irelative_libc_memcpy)
{
	static const char *const libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char cmd[256], label[64];
	uint64_t resolver = 0, addr;
	struct mt_sym_file *f;
	const struct mt_sym *s;
	FILE *p;

	if (access(libc, R_OK))
		mt_skip("no %s", libc);
	fx_sh("cp %s libc.so.6", libc);
	/* The IFUNC memcpy's value (its resolver), from readelf. */
	snprintf(cmd, sizeof(cmd), "readelf -sW --dyn-syms '%s'", fx_path("libc.so.6"));
	p = popen(cmd, "r");
	MT_ASSERT(p);
	while (fgets(cmd, sizeof(cmd), p)) {
		unsigned long long v;
		char type[16], name[64];

		if (sscanf(cmd, "%*s %llx %*s %15s %*s %*s %*s %63s", &v, type, name) == 3 &&
		    !strcmp(type, "IFUNC") && !strncmp(name, "memcpy@", 7))
			resolver = v;
	}
	pclose(p);
	MT_ASSERT_MSG(resolver, "readelf shows no IFUNC memcpy in %s", libc);
	snprintf(label, sizeof(label), "*ABS*+0x%" PRIx64 "@plt", resolver);
	addr = fx_objdump_label("libc.so.6", label);
	if (!addr)
		mt_skip("this C library calls memcpy through no PLT stub");
	f = open_ok("libc.so.6", NULL);
	s = mt_sym_lookup(f, addr);
	MT_ASSERT_MSG(s, "no symbol for %s", label);
	MT_ASSERT_STREQ(s->name, "memcpy@plt");
	MT_ASSERT(s->plt);
	mt_sym_file_close(f);
}

/* A fully stripped binary whose symbols and lines live in a debug file. */
static void build_stripped(void)
{
	build_prog("full", "-fPIE -pie");
	fx_sh("objcopy --only-keep-debug full full.debug && cp full stripped && "
	      "strip --strip-all stripped");
}

MT_TEST(debug_file_by_build_id)
{
	struct mt_sym_file *f;
	struct mt_src_loc loc;
	const uint8_t *id;
	char hex[64], dir[600];
	size_t n;

	build_stripped();
	/* Without a debug file only .dynsym is left: no static function. */
	f = open_ok("stripped", "-:/nonexistent");
	MT_ASSERT(mt_sym_lookup(f, fx_nm("full", "gamma_local")) == NULL ||
		  strcmp(mt_sym_lookup(f, fx_nm("full", "gamma_local"))->name, "gamma_local"));
	n = mt_sym_build_id(f, &id);
	MT_ASSERT_EQ(n, 20);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	mt_sym_file_close(f);

	fx_sh("mkdir -p dbg/.build-id/%.2s && cp full.debug dbg/.build-id/%.2s/%s.debug",
	      hex, hex, hex + 2);
	snprintf(dir, sizeof(dir), "-:%s", fx_path("dbg"));
	f = open_ok("stripped", dir);
	MT_ASSERT(mt_sym_debug_file(f) != NULL);
	check_symbol(f, "full", "gamma_local");
	check_symbol(f, "full", "alpha");
	MT_ASSERT_EQ(mt_sym_source(f, fx_nm("full", "alpha"), &loc), 0);
	MT_ASSERT_EQ(loc.line, 3);
	mt_sym_file_close(f);
}

MT_TEST(debug_file_by_debuglink)
{
	struct mt_sym_file *f;
	struct mt_src_loc loc;

	build_stripped();
	/* Remove the build-id so that only the debuglink can lead to the file. */
	fx_sh("objcopy --remove-section .note.gnu.build-id stripped linked && "
	      "objcopy --remove-section .note.gnu.build-id full.debug linked.dbg && "
	      "objcopy --add-gnu-debuglink=linked.dbg linked && "
	      "mkdir -p .debug && mv linked.dbg .debug/");
	f = open_ok("linked", "+:.debug");
	MT_ASSERT(mt_sym_debug_file(f) && strstr(mt_sym_debug_file(f), ".debug/linked.dbg"));
	check_symbol(f, "full", "gamma_local");
	MT_ASSERT_EQ(mt_sym_source(f, fx_nm("full", "main"), &loc), 0);
	MT_ASSERT_EQ(loc.line, 9);
	mt_sym_file_close(f);
}

MT_TEST(cxx_names_and_inline_frames)
{
	static const char src[] =
		"namespace ns {\n"					/* 1 */
		"struct widget { int spin(int x); };\n"			/* 2 */
		"__attribute__((noinline)) int widget::spin(int x) { return x + 1; }\n" /* 3 */
		"template <typename T> __attribute__((noinline)) T twice(T v) { return v * 2; }\n"
		"static inline __attribute__((always_inline)) int inner(int v) {\n" /* 5 */
		"\treturn twice<int>(v) + widget().spin(v);\n"		/* 6 */
		"}\n"							/* 7 */
		"}\n"							/* 8 */
		"int main(int argc, char **) {\n"			/* 9 */
		"\treturn ns::inner(argc) + 5;\n"			/* 10 */
		"}\n";
	struct mt_inline_frame frames[4];
	uint64_t spin, twice, call;
	struct mt_sym_file *f;
	const struct mt_sym *s;
	char line[256];
	FILE *p;
	int n;

	fx_need("g++");
	fx_write("w.cc", src);
	fx_sh("g++ -g -O2 -o cxx w.cc");
	f = open_ok("cxx", NULL);
	spin = fx_nm("cxx", "_ZN2ns6widget4spinEi");
	twice = fx_nm("cxx", "_ZN2ns5twiceIiEET_S1_");
	MT_ASSERT(spin && twice);
	MT_ASSERT_STREQ(mt_sym_lookup(f, spin)->name, "ns::widget::spin(int)");
	MT_ASSERT_STREQ(mt_sym_lookup(f, twice)->name, "int ns::twice<int>(int)");

	/* The call to twice<int> in main is code of ns::inner, inlined at line 10. */
	snprintf(line, sizeof(line),
		 "objdump -d --no-show-raw-insn '%s' | awk '/<main>:/,/^$/' | "
		 "grep -m1 'call.*<_ZN2ns5twice' | cut -d: -f1", fx_path("cxx"));
	p = popen(line, "r");
	MT_ASSERT(p && fgets(line, sizeof(line), p));
	pclose(p);
	call = strtoull(line, NULL, 16);
	MT_ASSERT(call);
	s = mt_sym_lookup(f, call);
	MT_ASSERT(s);
	MT_ASSERT_STREQ(s->name, "main");
	n = mt_sym_inlines(f, call, frames, 4);
	MT_ASSERT_EQ(n, 1);
	MT_ASSERT_MSG(strstr(frames[0].function, "inner"), "inline %s", frames[0].function);
	MT_ASSERT_EQ(frames[0].call.line, 10);
	MT_ASSERT(frames[0].call.file && strstr(frames[0].call.file, "w.cc"));
	MT_ASSERT_EQ(mt_sym_inlines(f, spin, frames, 4), 0);
	mt_sym_file_close(f);
}

struct ranges_call {
	struct mt_sym_file *f;
	uint64_t addr;
	int wait;
	atomic_int n;
	pthread_t th;
};

static void *ranges_call_main(void *arg)
{
	struct ranges_call *c = arg;
	struct mt_inline_range *r;
	int n = mt_sym_inline_ranges(c->f, c->addr, c->wait, &r);

	free(r);
	atomic_store(&c->n, n);
	return NULL;
}

/* mt_sym_inline_ranges() on a thread of its own; INT_MIN until it returns. */
static void ranges_call_start(struct ranges_call *c, struct mt_sym_file *f, uint64_t addr,
			      int wait)
{
	c->f = f;
	c->addr = addr;
	c->wait = wait;
	atomic_init(&c->n, INT_MIN);
	MT_ASSERT_EQ(pthread_create(&c->th, NULL, ranges_call_main, c), 0);
}

/* Its result, or INT_MIN when it has not returned within 10 s. */
static int ranges_call_join(struct ranges_call *c)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	if (pthread_timedjoin_np(c->th, NULL, &t))
		return INT_MIN;
	return atomic_load(&c->n);
}

/*
 * A caller that can go on without inline ranges does not wait while
 * another thread queries or reads the file's DWARF (the CPU streams'
 * decoding): it gets -EAGAIN at once; one that waits gets the ranges once
 * the other is done. The first query reads the DWARF itself, waiting or
 * not.
 */
MT_TEST(inline_ranges_need_not_wait_for_another_thread)
{
	static const char src[] =
		"static inline __attribute__((always_inline)) int sq(int v) { return v * v + 1; }\n"
		"__attribute__((noipa)) int use(int x) { return sq(x) ^ sq(x + 3); }\n"
		"int main(int c, char **v) { (void)v; return use(c); }\n";
	struct ranges_call no_wait, waiting;
	struct mt_inline_range *r;
	struct mt_sym_file *f;
	uint64_t use;
	int n;

	fx_write("inl.c", src);
	fx_sh("cc -g -O2 -o inl inl.c");
	use = fx_nm("inl", "use");
	MT_ASSERT(use);
	f = open_ok("inl", NULL);
	n = mt_sym_inline_ranges(f, use, 0, &r);
	MT_ASSERT_MSG(n >= 2, "%d inline ranges in use()", n);
	free(r);

	/* Another thread at the DWARF: its lock held. */
	pthread_mutex_lock(&f->dwarf_lock);
	ranges_call_start(&no_wait, f, use, 0);
	MT_ASSERT_EQ(ranges_call_join(&no_wait), -EAGAIN);
	ranges_call_start(&waiting, f, use, 1);
	usleep(20000);
	MT_ASSERT_EQ(atomic_load(&waiting.n), INT_MIN);	/* still waiting */
	pthread_mutex_unlock(&f->dwarf_lock);
	MT_ASSERT_EQ(ranges_call_join(&waiting), n);
	mt_sym_file_close(f);
}

static void expect_error(const char *name, int e, const char *want)
{
	char err[MT_SYM_ERRLEN] = "";
	struct mt_sym_file *f = (struct mt_sym_file *)1;
	int rc = mt_sym_file_open(&f, fx_path(name), NULL, err, sizeof(err));

	MT_ASSERT_MSG(!f, "%s opened", name);
	MT_ASSERT_EQ(rc, -e);
	MT_ASSERT_MSG(strstr(err, want), "%s: error \"%s\" lacks \"%s\"", name, err, want);
	MT_ASSERT_MSG(strstr(err, name), "error \"%s\" does not name the file", err);
}

MT_TEST(bad_files_give_precise_errors)
{
	build_prog("good", "");
	fx_write("empty", "");
	fx_write("text", "this is not an ELF file\n");
	fx_sh("head -c 100 good > trunc_hdr && head -c $(($(stat -c %%s good) / 2)) good > trunc_half"
	      " && cc -c -o obj.o prog.c");
	expect_error("missing", ENOENT, "No such file");
	expect_error("empty", EBADMSG, "not an ELF file");
	expect_error("text", EBADMSG, "not an ELF file");
	expect_error("trunc_hdr", EBADMSG, "truncated");
	expect_error("trunc_half", EBADMSG, "truncated");
	expect_error("obj.o", EBADMSG, "neither an executable nor a shared object");
	expect_error(".", EINVAL, "not a regular file");
}

MT_TEST(demangle)
{
	char *s = mt_sym_demangle("_ZN2ns6widget4spinEi");

	MT_ASSERT_STREQ(s, "ns::widget::spin(int)");
	free(s);
	s = mt_sym_demangle("_RNvCs15kBYyAo9fc_7mycrate3foo");
	MT_ASSERT_STREQ(s, "mycrate::foo");
	free(s);
	s = mt_sym_demangle("_ZN4core3fmt9Formatter3pad17h1234567890abcdefE");
	MT_ASSERT_STREQ(s, "core::fmt::Formatter::pad");
	free(s);
	MT_ASSERT(mt_sym_demangle("main") == NULL);
	MT_ASSERT(mt_sym_demangle("_Zgarbage") == NULL);
	MT_ASSERT(mt_sym_demangle("_") == NULL);
}

/* A versioned definition ("fn@@VER_2", from .symver) is shown as "fn". */
MT_TEST(symbol_versions_are_not_part_of_the_name)
{
	struct mt_sym_file *f;
	const struct mt_sym *s;
	uint64_t addr;

	fx_write("ver.c", "__attribute__((symver(\"fn@@VER_2\"))) int fn_impl(int x) { return x + 2; }\n");
	fx_write("ver.map", "VER_2 { global: fn; local: *; };\n");
	fx_sh("cc -shared -fPIC -O1 -Wl,--version-script=ver.map -o libver.so ver.c");
	addr = fx_nm("libver.so", "fn@@VER_2");
	MT_ASSERT_MSG(addr, "nm shows no fn@@VER_2");
	f = open_ok("libver.so", NULL);
	s = mt_sym_lookup(f, addr);
	MT_ASSERT(s);
	MT_ASSERT_STREQ(s->name, "fn");
	mt_sym_file_close(f);
}
