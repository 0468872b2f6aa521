// SPDX-License-Identifier: MIT
/* `bundle-info`: a bundle's version, its sections with sizes, and a summary. */
#include "bundle/bundle.h"
#include "util/errmsg.h"
#include "util/text.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>

static const char *comp_name(uint16_t c)
{
	return c == MT_BUNDLE_COMP_ZSTD ? "zstd" : c == MT_BUNDLE_COMP_NONE ? "none" : "?";
}

static void print_sections(const struct mt_bundle_reader *r, FILE *out)
{
	size_t n = mt_bundle_section_count(r);

	fprintf(out, "%5s  %-10s %12s %-5s %12s %12s\n", "index", "section", "offset", "comp",
		"stored", "raw");
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_section_info si;

		if (mt_bundle_section_info(r, i, &si))
			continue;
		fprintf(out, "%5zu  %-10s %12" PRIu64 " %-5s %12" PRIu64 " %12" PRIu64, i,
			mt_bundle_section_name(si.type), si.offset, comp_name(si.compression),
			si.stored_size, si.raw_size);
		if (!si.known)
			fprintf(out, "  (type %u, skipped)", si.type);
		fputc('\n', out);
	}
}

static void print_summary(struct mt_bundle_reader *r, FILE *out)
{
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc cfg;
	struct mt_bundle_trigger trig;
	char vendor[4 * sizeof(cpu.vendor_id) + 1];

	/* The bundle's strings may come from anywhere: shown, never obeyed,
	 * by a terminal. */
	if (!mt_bundle_get_cpu(r, &cpu)) {
		mt_visible(vendor, sizeof(vendor), cpu.vendor_id, sizeof(cpu.vendor_id));
		fprintf(out, "cpu: %s family %u model %#x stepping %u, %u cpu%s\n", vendor,
			cpu.family, cpu.model, cpu.stepping, cpu.nr_cpus,
			mt_plural(cpu.nr_cpus, "", "s"));
	}
	if (!mt_bundle_get_pt_config(r, &cfg))
		fprintf(out, "pt: rtit_ctl %#" PRIx64 ", ring %" PRIu64 " bytes, target pid %u\n",
			cfg.rtit_ctl, cfg.ring_size, cfg.target_pid);
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		struct mt_bundle_pt_desc pt;
		uint64_t len;

		/* Read through, not held: PT can be most of a large bundle. */
		if (mt_bundle_pt_desc(r, i, &pt) || mt_bundle_pt_check(r, i, &len))
			continue;
		if (pt.flags & MT_BUNDLE_PT_NO_RING) {
			fprintf(out, "pt cpu %u: no ring (came online while armed): its threads are missing from tsc %" PRIu64 " on\n",
				pt.cpu, pt.stop_tsc);
			continue;
		}
		fprintf(out, "pt cpu %u: %" PRIu64 " bytes%s%s%s, stop tsc %" PRIu64 ", status %#" PRIx64 "\n",
			pt.cpu, len, pt.flags & MT_BUNDLE_PT_WRAPPED ? ", wrapped" : "",
			pt.flags & MT_BUNDLE_PT_CLOBBERED ? ", clobbered" : "",
			pt.flags & MT_BUNDLE_PT_PARTIAL ? ", partial" : "", pt.stop_tsc,
			pt.rtit_status);
	}
	if (!mt_bundle_get_trigger(r, &trig)) {
		fputs("trigger: \"", out);
		mt_fputs_visible(trig.spec, out);
		fprintf(out, "\" cpu %u pid %u tid %u ip %#" PRIx64 " tsc %" PRIu64 " skid %" PRIu64
			" ns\n", trig.d.cpu, trig.d.pid, trig.d.tid, trig.d.ip, trig.d.tsc,
			trig.d.skid_ns);
	}
	size_t sw = mt_bundle_switch_count(r), maps = mt_bundle_maps(r, NULL),
	       threads = mt_bundle_threads(r, NULL), mods = mt_bundle_modules(r, NULL),
	       files = mt_bundle_file_count(r), ktext = mt_bundle_ktext_count(r);

	fprintf(out, "records: %zu switch%s, %zu map%s, %zu thread%s, %zu module%s, ", sw,
		mt_plural(sw, "", "es"), maps, mt_plural(maps, "", "s"), threads,
		mt_plural(threads, "", "s"), mods, mt_plural(mods, "", "s"));
	fprintf(out, "%zu file%s, %zu kernel text range%s\n", files, mt_plural(files, "", "s"),
		ktext, mt_plural(ktext, "", "s"));
}

void mt_bundle_print_info_of(struct mt_bundle_reader *r, const char *name, FILE *out)
{
	size_t n = mt_bundle_section_count(r);
	uint16_t major, minor;

	mt_bundle_version(r, &major, &minor);
	fprintf(out, "%s: mtrace bundle format %u.%u, %zu section%s\n", name, major, minor, n,
		mt_plural(n, "", "s"));
	print_sections(r, out);
	print_summary(r, out);
}

int mt_bundle_print_info(const char *path, FILE *out, char *err, size_t errlen)
{
	struct mt_bundle_reader *r;
	int rc;

	if (!path || !out)
		return mt_errmsg(err, errlen, EINVAL, "bundle-info: no path or stream");
	rc = mt_bundle_open(&r, path, err, errlen);
	if (rc)
		return rc;
	mt_bundle_print_info_of(r, path, out);
	mt_bundle_close(r);
	return 0;
}
