// SPDX-License-Identifier: MIT
/*
 * kcore_check BUNDLE: on a live kernel with mtrace.ko loaded, captures the
 * kernel, module and BPF JIT text with mt_kcore_capture() into BUNDLE, reads
 * it back with the bundle reader and checks it against sources that do not
 * go through the capture code: a hand-rolled pread of /proc/kcore's program
 * headers, and the JIT image the kernel reports for a BPF program loaded
 * here (BPF_OBJ_GET_INFO_BY_FD).
 */
#include <bpf/bpf.h>
#include <elf.h>
#include <linux/bpf.h>

#include "bundle/bundle.h"
#include "kcore/kallsyms.h"
#include "kcore/kcore_capture.h"
#include "kmod_guest.h"

#define KPAGE 4096ULL
#define CMP_LEN 64

/* Reads [addr, addr + len) of kernel memory from /proc/kcore by its PT_LOADs. */
static int kcore_pread(uint64_t addr, void *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	int rc = -1;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		rc = pread(fd, buf, len, (off_t)(ph.p_offset + addr - ph.p_vaddr)) == (ssize_t)len ?
		     0 : -1;
		break;
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Index of the copied range holding [addr, addr + len), or -1. */
static int ktext_holding(struct mt_bundle_reader *r, uint64_t addr, size_t len,
			 struct mt_bundle_ktext *kt, const uint8_t **code)
{
	for (size_t i = 0; i < mt_bundle_ktext_count(r); i++) {
		size_t n;

		if (mt_bundle_ktext_info(r, i, kt) || mt_bundle_ktext_data(r, i, code, &n))
			return -1;
		if (addr >= kt->addr && addr + len <= kt->addr + n) {
			*code += addr - kt->addr;
			return (int)i;
		}
	}
	return -1;
}

/* The copy of a function equals a fresh read of kcore at its address. */
static void check_bytes(const char *name, struct mt_bundle_reader *r, uint64_t addr)
{
	uint8_t fresh[CMP_LEN];
	struct mt_bundle_ktext kt;
	const uint8_t *code;
	const char *why = NULL;

	if (ktext_holding(r, addr, CMP_LEN, &kt, &code) < 0)
		why = "is in no copied range";
	else if (kcore_pread(addr, fresh, sizeof(fresh)))
		why = "cannot be read from /proc/kcore";
	else if (memcmp(code, fresh, sizeof(fresh)))
		why = "differs between the copy and /proc/kcore";
	kg_check(name, !why, "0x%llx %s", (unsigned long long)addr, why);
}

static void check_core(struct mt_bundle_reader *r, const struct mt_ksyms *ks)
{
	const struct mt_ksym *s = mt_ksyms_find(ks, "_stext"), *e = mt_ksyms_find(ks, "_etext");
	const char *fns[] = { "do_syscall_64", "schedule", "__x64_sys_getpid" };
	struct mt_bundle_ktext kt;
	const uint8_t *code;
	size_t n;

	if (!kg_check("kcore-core-symbols", s && e, "no _stext/_etext in the bundle's kallsyms"))
		return;
	kg_check("kcore-core-range",
		 !mt_bundle_ktext_info(r, 0, &kt) && !mt_bundle_ktext_data(r, 0, &code, &n) &&
		 !strcmp(kt.name, "kernel") && kt.addr == (s->addr & ~(KPAGE - 1)) &&
		 kt.addr + n == ((e->addr + KPAGE - 1) & ~(KPAGE - 1)),
		 "first range %s 0x%llx+%zu is not [_stext, _etext) = [0x%llx, 0x%llx) page-rounded",
		 kt.name, (unsigned long long)kt.addr, n, (unsigned long long)s->addr,
		 (unsigned long long)e->addr);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct mt_ksym *f = mt_ksyms_find(ks, fns[i]);
		char name[64];

		snprintf(name, sizeof(name), "kcore-core-bytes-%s", fns[i]);
		if (f && !f->module)
			check_bytes(name, r, f->addr);
		else
			kg_check(name, 0, "%s is not a core kernel symbol", fns[i]);
	}
}

/* A function of mtrace.ko: copied in a range named "mtrace", named by kallsyms. */
static void check_module(struct mt_bundle_reader *r, const struct mt_ksyms *ks)
{
	const struct mt_ksym *f = mt_ksyms_find(ks, "mtrace_freeze"), *back;
	const struct mt_bundle_module *mods;
	struct mt_bundle_ktext kt;
	const uint8_t *code;
	size_t nmods = mt_bundle_modules(r, &mods), m;

	if (!kg_check("kcore-module-symbol", f && f->module && !strcmp(f->module, "mtrace"),
		      "mtrace_freeze is not a symbol of [mtrace] in kallsyms"))
		return;
	kg_check("kcore-module-range", ktext_holding(r, f->addr, 1, &kt, &code) >= 0 &&
		 !strcmp(kt.name, "mtrace"), "mtrace_freeze 0x%llx is not in a range named mtrace",
		 (unsigned long long)f->addr);
	back = mt_ksyms_lookup(ks, f->addr + 1);
	kg_check("kcore-module-symbolize", back && !strcmp(back->name, "mtrace_freeze") &&
		 back->module && !strcmp(back->module, "mtrace"),
		 "mtrace_freeze+1 symbolizes to %s", back ? back->name : "nothing");
	check_bytes("kcore-module-bytes", r, f->addr);
	for (m = 0; m < nmods && strcmp(mods[m].name, "mtrace"); m++)
		;
	kg_check("kcore-module-table", m < nmods && mods[m].start <= f->addr &&
		 f->addr < mods[m].end, "the modules table has no mtrace range holding mtrace_freeze");
}

/* A socket filter "return 0", JIT-compiled; its fd, or -1. */
static int load_bpf_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "kcore_probe", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

/* The JIT image of prog_fd: copied, named bpf_prog_<tag>_kcore_probe in [bpf]. */
static void check_bpf(struct mt_bundle_reader *r, const struct mt_ksyms *ks, int prog_fd)
{
	static uint8_t jited[4096];
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	__u64 addr = 0;
	struct mt_bundle_ktext kt;
	const struct mt_ksym *s;
	const uint8_t *code;
	size_t len, suffix = strlen("_kcore_probe");

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(uintptr_t)&addr;
	info.jited_prog_len = sizeof(jited);
	info.jited_prog_insns = (__u64)(uintptr_t)jited;
	if (!kg_check("kcore-bpf-info", !bpf_obj_get_info_by_fd(prog_fd, &info, &info_len) &&
		      addr && info.jited_prog_len && info.jited_prog_len <= sizeof(jited),
		      "no JIT address or image for the BPF program (%s)", strerror(errno)))
		return;
	len = info.jited_prog_len;
	if (kg_check("kcore-bpf-range", ktext_holding(r, addr, len, &kt, &code) >= 0 &&
		     !strcmp(kt.name, "bpf"), "JIT image 0x%llx+%zu is not in a range named bpf",
		     (unsigned long long)addr, len))
		kg_check("kcore-bpf-bytes", !memcmp(code, jited, len),
			 "the copied JIT image differs from the kernel's");
	s = mt_ksyms_lookup(ks, addr + len - 1);
	kg_check("kcore-bpf-symbolize", s && s->addr == addr && s->module &&
		 !strcmp(s->module, "bpf") && !strncmp(s->name, "bpf_prog_", 9) &&
		 strlen(s->name) > suffix && !strcmp(s->name + strlen(s->name) - suffix, "_kcore_probe"),
		 "the JIT image's last byte symbolizes to %s [%s]", s ? s->name : "nothing",
		 s && s->module ? s->module : "");
}

int main(int argc, char **argv)
{
	struct mt_kcore_capture_stats st;
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_ksyms ks;
	const char *text;
	char err[512] = "";
	size_t len;
	int prog_fd;

	if (argc != 2) {
		fprintf(stderr, "usage: kcore_check BUNDLE\n");
		return 2;
	}
	prog_fd = load_bpf_prog();
	kg_check("kcore-bpf-load", prog_fd >= 0, "BPF_PROG_LOAD: %s", strerror(errno));
	if (mt_bundle_writer_create(&w, argv[1], NULL, err, sizeof(err)) ||
	    mt_kcore_capture(w, NULL, &st, err, sizeof(err)) || mt_bundle_writer_finish(w)) {
		kg_check("kcore-capture", 0, "%s", err[0] ? err : mt_bundle_writer_errmsg(w));
		mt_bundle_writer_free(w);
		return 1;
	}
	mt_bundle_writer_free(w);
	kg_check("kcore-capture", st.ranges > 2 && !st.skipped, "%zu ranges, %zu skipped: %s",
		 st.ranges, st.skipped, err);
	printf("kcore_check: %zu ranges, %llu bytes of code\n", st.ranges,
	       (unsigned long long)st.bytes);
	if (mt_bundle_open(&r, argv[1], err, sizeof(err)) ||
	    mt_bundle_kallsyms(r, &text, &len) || mt_ksyms_parse(&ks, text, len, err, sizeof(err))) {
		kg_check("kcore-bundle-read", 0, "%s", err);
		return 1;
	}
	check_core(r, &ks);
	check_module(r, &ks);
	if (prog_fd >= 0)
		check_bpf(r, &ks, prog_fd);
	mt_ksyms_free(&ks);
	mt_bundle_close(r);
	return kg_failures != 0;
}
