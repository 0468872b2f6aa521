// SPDX-License-Identifier: MIT
/* Record options: value parsing, checks, config from PT capabilities, output names. */
#include "mt_test.h"

#include <errno.h>

#include "capture/capture.h"

static char err[MT_CAPTURE_ERRLEN];

MT_TEST(size_units)
{
	uint64_t b;

	MT_ASSERT_EQ(mt_capture_parse_size("4096", &b, err, sizeof(err)), 0);
	MT_ASSERT_EQ(b, 4096);
	MT_ASSERT_EQ(mt_capture_parse_size("64K", &b, err, sizeof(err)), 0);
	MT_ASSERT_EQ(b, 64 << 10);
	MT_ASSERT_EQ(mt_capture_parse_size("4m", &b, err, sizeof(err)), 0);
	MT_ASSERT_EQ(b, 4 << 20);
	MT_ASSERT_EQ(mt_capture_parse_size("1GiB", &b, err, sizeof(err)), 0);
	MT_ASSERT_EQ(b, 1ULL << 30);
	MT_ASSERT_EQ(mt_capture_parse_size("16MB", &b, err, sizeof(err)), 0);
	MT_ASSERT_EQ(b, 16 << 20);
}

MT_TEST(size_rejects)
{
	uint64_t b = 7;

	MT_ASSERT_EQ(mt_capture_parse_size("", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_size("-4M", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_size("4X", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "unknown unit 'X'"));
	MT_ASSERT_EQ(mt_capture_parse_size("M", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_size("99999999999999999999", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_size("17179869184G", &b, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "too large"));
	MT_ASSERT_EQ(b, 7); /* untouched on error */
}

MT_TEST(uint_and_timing)
{
	long v;
	enum mt_timing t;

	MT_ASSERT_EQ(mt_capture_parse_uint("15", "--mtc-freq", 0, 15, &v, err, sizeof(err)), 0);
	MT_ASSERT_EQ(v, 15);
	MT_ASSERT_EQ(mt_capture_parse_uint("16", "--mtc-freq", 0, 15, &v, err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "invalid --mtc-freq '16': expected an integer from 0 to 15");
	MT_ASSERT_EQ(mt_capture_parse_uint("3x", "pid", 1, 99, &v, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_uint("", "pid", 1, 99, &v, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_capture_parse_timing("high", &t, err, sizeof(err)), 0);
	MT_ASSERT_EQ(t, MT_TIMING_HIGH);
	MT_ASSERT_EQ(mt_capture_parse_timing("fast", &t, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "expected low, normal or high"));
}

static char *cmd[] = { "app", NULL };
static char *empty_cmd[] = { NULL };

MT_TEST(check_targets)
{
	struct mt_capture_opts o;

	mt_capture_opts_init(&o);
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "no target"));
	o.argv = cmd;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), 0);
	o.pid = 42;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "exclusive"));
	o.pid = 0;
	o.argv = empty_cmd;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "no command after '--'");
}

MT_TEST(check_buffer_and_snapshots)
{
	struct mt_capture_opts o;

	mt_capture_opts_init(&o);
	o.system_wide = 1;
	o.buffer_size = 3 << 20;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "not a power of two"));
	o.buffer_size = 2048;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	MT_ASSERT(strstr(err, "out of range"));
	o.buffer_size = 512ULL << 20;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
	o.buffer_size = MTRACE_RING_MAX;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), 0);
	o.snapshots = 0;
	MT_ASSERT_EQ(mt_capture_opts_check(&o, err, sizeof(err)), -EINVAL);
}

/* Capabilities of a Skylake-class part: MTC, CYC, configurable PSB, multi-entry ToPA. */
static struct mtrace_caps full_caps(void)
{
	struct mtrace_caps c = { 0 };

	c.flags = MTRACE_CAPS_MULTI_TOPA;
	c.cpuid_14_0[1] = (1U << 1) | (1U << 3);       /* PSB/CYC, MTC */
	c.cpuid_14_1[0] = 0x0249U << 16;                /* MTC encodings 0,3,6,9 */
	c.cpuid_14_1[1] = (0x003fU << 16) | 0x3fffU;    /* PSB 0-5, CYC 0-13 */
	c.max_single_region = 128ULL << 20;
	return c;
}

MT_TEST(config_normal_preset)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	mt_capture_opts_init(&o);
	o.kernel = 1;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)), 0);
	MT_ASSERT_STREQ(note, "");
	MT_ASSERT_EQ(cfg.flags, MTRACE_CFG_USER | MTRACE_CFG_KERNEL | MTRACE_CFG_TSC |
				MTRACE_CFG_MTC | MTRACE_CFG_CYC);
	MT_ASSERT_EQ(cfg.mtc_freq, 3);
	MT_ASSERT_EQ(cfg.cyc_thresh, 1);
	MT_ASSERT_EQ(cfg.ring_size, MT_CAPTURE_DEFAULT_BUFFER);
	MT_ASSERT_EQ(cfg.sb_records, MT_CAPTURE_DEFAULT_SB_RECORDS);
	MT_ASSERT_EQ(cfg.pid, 0);
}

MT_TEST(config_high_and_explicit)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	mt_capture_opts_init(&o);
	o.timing = MT_TIMING_HIGH;
	o.mtc_freq = 9;
	o.psb_freq = 2;
	o.cyc_thresh = 0;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)), 0);
	MT_ASSERT(cfg.flags & MTRACE_CFG_NO_RETCOMP);
	MT_ASSERT(cfg.flags & MTRACE_CFG_PSB_FREQ);
	MT_ASSERT_EQ(cfg.mtc_freq, 9);
	MT_ASSERT_EQ(cfg.psb_freq, 2);
	MT_ASSERT_EQ(cfg.cyc_thresh, 0);
	MT_ASSERT(cfg.flags & MTRACE_CFG_CYC);
}

MT_TEST(config_low_has_no_cyc)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	mt_capture_opts_init(&o);
	o.timing = MT_TIMING_LOW;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)), 0);
	MT_ASSERT(!(cfg.flags & (MTRACE_CFG_CYC | MTRACE_CFG_NO_RETCOMP | MTRACE_CFG_PSB_FREQ)));
	MT_ASSERT(cfg.flags & MTRACE_CFG_MTC);
}

MT_TEST(config_rejects_unsupported_explicit)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	mt_capture_opts_init(&o);
	o.mtc_freq = 5;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)),
		     -EOPNOTSUPP);
	MT_ASSERT_STREQ(err, "--mtc-freq 5 is not supported by this CPU (supported: 0,3,6,9)");
	/* Broadwell: no CYC, no configurable PSB. */
	c.cpuid_14_0[1] = 1U << 3;
	c.cpuid_14_1[1] = 0;
	mt_capture_opts_init(&o);
	o.cyc_thresh = 1;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)),
		     -EOPNOTSUPP);
	MT_ASSERT_STREQ(err, "--cyc: this CPU has no cycle-accurate mode (CYC packets)");
}

MT_TEST(config_preset_degrades_with_note)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	c.cpuid_14_0[1] = 1U << 3; /* MTC only */
	c.cpuid_14_1[1] = 0;
	c.cpuid_14_1[0] = 0x0010U << 16; /* MTC encoding 4 only: the preset's 3 moves up */
	mt_capture_opts_init(&o);
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)), 0);
	MT_ASSERT(!(cfg.flags & MTRACE_CFG_CYC));
	MT_ASSERT_EQ(cfg.mtc_freq, 4);
	MT_ASSERT(strstr(note, "no cycle-accurate mode"));
}

MT_TEST(config_single_region_limit)
{
	struct mt_capture_opts o;
	struct mtrace_caps c = full_caps();
	struct mtrace_config cfg;
	char note[256];

	c.flags = 0;
	c.max_single_region = 2ULL << 20;
	mt_capture_opts_init(&o);
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)),
		     -EINVAL);
	MT_ASSERT(strstr(err, "exceeds 2048K"));
	o.buffer_size = 2ULL << 20;
	MT_ASSERT_EQ(mt_capture_build_config(&o, &c, &cfg, note, sizeof(note), err, sizeof(err)), 0);
}

MT_TEST(output_paths)
{
	char p[64];

	MT_ASSERT_EQ(mt_capture_output_path("trace.mtrace", 1, 1, p, sizeof(p)), 0);
	MT_ASSERT_STREQ(p, "trace.mtrace");
	MT_ASSERT_EQ(mt_capture_output_path("trace.mtrace", 2, 3, p, sizeof(p)), 0);
	MT_ASSERT_STREQ(p, "trace-2.mtrace");
	MT_ASSERT_EQ(mt_capture_output_path("out.d/snap", 10, 10, p, sizeof(p)), 0);
	MT_ASSERT_STREQ(p, "out.d/snap-10");
	MT_ASSERT_EQ(mt_capture_output_path("dir/.hidden", 1, 2, p, sizeof(p)), 0);
	MT_ASSERT_STREQ(p, "dir/.hidden-1");
	MT_ASSERT_EQ(mt_capture_output_path("a-very-long-name.mtrace", 1, 2, p, 8), -ENAMETOOLONG);
}
