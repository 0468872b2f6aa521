// SPDX-License-Identifier: MIT
/*
 * Record options: value parsers, the checks that need no module, and the
 * translation into a module configuration validated against the CPU's PT
 * capabilities (CPUID leaf 0x14 as reported by GET_CAPS). The module checks
 * the same rules again; doing it here first lets the message name the
 * option and list what this CPU supports.
 */
#include "capture/capture.h"
#include "util/errmsg.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* CPUID.(EAX=14h,ECX=0):EBX feature bits (Intel SDM Vol. 3C, 32.3.1). */
#define PT_EBX_PSB_CYC (1U << 1) /* configurable PSB frequency and CYC packets */
#define PT_EBX_MTC (1U << 3)

/* Preset encodings: MTC frequency 3 (perf's default), CYC threshold 1 (every cycle). */
#define PRESET_MTC_FREQ 3
#define PRESET_CYC_THRESH 1

void mt_capture_opts_init(struct mt_capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->output = MT_CAPTURE_DEFAULT_OUTPUT;
	o->buffer_size = MT_CAPTURE_DEFAULT_BUFFER;
	o->snapshots = 1;
	o->timing = MT_TIMING_NORMAL;
	o->mtc_freq = -1;
	o->cyc_thresh = -1;
	o->psb_freq = -1;
}

int mt_capture_parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return mt_errmsg(err, errlen, EINVAL, "invalid size '%s': expected a number with an optional K, M or G suffix",
			    s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno)
		return mt_errmsg(err, errlen, EINVAL, "invalid size '%s': expected a number with an optional K, M or G suffix", s);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	else if (!shift && !strcmp(end, "B"))
		end++;
	if (*end)
		return mt_errmsg(err, errlen, EINVAL, "invalid size '%s': unknown unit '%s' (use K, M or G)", s, end);
	if (v > (UINT64_MAX >> shift))
		return mt_errmsg(err, errlen, EINVAL, "invalid size '%s': too large", s);
	*bytes = (uint64_t)v << shift;
	return 0;
}

int mt_capture_parse_uint(const char *s, const char *what, long min, long max, long *out,
			  char *err, size_t errlen)
{
	long v;
	char *end;

	errno = 0;
	v = s && *s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || v < min || v > max)
		return mt_errmsg(err, errlen, EINVAL, "invalid %s '%s': expected an integer from %ld to %ld", what,
			    s ? s : "", min, max);
	*out = v;
	return 0;
}

int mt_capture_parse_timing(const char *s, enum mt_timing *t, char *err, size_t errlen)
{
	static const char *const names[] = { "low", "normal", "high" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (s && !strcmp(s, names[i])) {
			*t = (enum mt_timing)i;
			return 0;
		}
	return mt_errmsg(err, errlen, EINVAL, "invalid timing preset '%s': expected low, normal or high", s ? s : "");
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* With several snapshots each goes to a file named after OUT, given as
 * OPT (mt_capture_output_path()): standard output or a device would put
 * files such as "--1" or "/dev/null-1" beside it. */
static int check_numbered(const char *out, const char *opt, unsigned int snapshots, char *err,
			  size_t errlen)
{
	struct stat st;

	if (snapshots < 2 || !out || !*out)
		return 0;
	if (!strcmp(out, "-") || (!stat(out, &st) && !S_ISREG(st.st_mode)))
		return mt_errmsg(err, errlen, EINVAL,
				 "%s %s with --snapshots %u: each snapshot goes to a file named after it (FILE-1 ... FILE-%u), so name a file",
				 opt, out, snapshots, snapshots);
	return 0;
}

int mt_capture_opts_check(const struct mt_capture_opts *o, char *err, size_t errlen)
{
	int targets = (o->pid > 0) + (o->argv != NULL) + (o->system_wide != 0);
	int e;

	if (targets == 0)
		return mt_errmsg(err, errlen, EINVAL, "no target: give -p PID, --system-wide or -- CMD [ARGS]");
	if (targets > 1)
		return mt_errmsg(err, errlen, EINVAL, "choose one target: -p PID, --system-wide and -- CMD are exclusive");
	if (o->argv && !o->argv[0])
		return mt_errmsg(err, errlen, EINVAL, "no command after '--'");
	if (o->buffer_size < MTRACE_RING_MIN || o->buffer_size > MTRACE_RING_MAX)
		return mt_errmsg(err, errlen, EINVAL, "--buffer-size %llu is out of range: the ring per CPU holds %lluK to %lluM",
			    (unsigned long long)o->buffer_size, MTRACE_RING_MIN >> 10, MTRACE_RING_MAX >> 20);
	if (!is_pow2(o->buffer_size))
		return mt_errmsg(err, errlen, EINVAL, "--buffer-size %llu is not a power of two (e.g. 1M, 4M, 16M)",
			    (unsigned long long)o->buffer_size);
	if (o->snapshots < 1 || o->snapshots > MT_CAPTURE_MAX_SNAPSHOTS)
		return mt_errmsg(err, errlen, EINVAL, "--snapshots must be from 1 to %u", MT_CAPTURE_MAX_SNAPSHOTS);
	if (!o->output || !*o->output)
		return mt_errmsg(err, errlen, EINVAL, "-o needs a file name");
	/* The top-level form: -o is the trace, a kept bundle is --keep-bundle. */
	e = check_numbered(o->trace_output ? o->trace_output : o->output, "-o", o->snapshots, err,
			   errlen);
	if (!e && o->trace_output && !o->temporary_bundles)
		e = check_numbered(o->output, "--keep-bundle", o->snapshots, err, errlen);
	return e;
}

/* "0,1,3-5" for the set bits of a CPUID encoding bitmap, "none" if empty. */
static void format_bitmap(uint32_t bits, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < 16 && used < len; i++) {
		int j = i;

		if (!(bits & (1U << i)))
			continue;
		while (j + 1 < 16 && (bits & (1U << (j + 1))))
			j++;
		used += snprintf(buf + used, len - used, j > i ? "%s%d-%d" : "%s%d",
				 used ? "," : "", i, j);
		i = j;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* One timing field: explicit values must be supported, presets adapt. */
struct timing_field {
	const char *option;             /* e.g. "--mtc-freq" */
	const char *feature;            /* for messages */
	int feature_ok;                 /* CPUID says the packet kind exists */
	uint32_t bitmap;                /* supported encodings */
	int requested;                  /* explicit value or -1 */
	int preset;                     /* value the preset wants, or -1 for none */
};

/* Returns the encoding to program, -1 for "off", or -2 after an error. */
static int pick_encoding(const struct timing_field *f, char *note, size_t notelen,
			 char *err, size_t errlen)
{
	char list[64];

	format_bitmap(f->bitmap, list, sizeof(list));
	if (f->requested >= 0) {
		if (!f->feature_ok) {
			mt_errmsg(err, errlen, EINVAL, "%s: this CPU has no %s", f->option, f->feature);
			return -2;
		}
		if (f->requested > 15 || !(f->bitmap & (1U << f->requested))) {
			mt_errmsg(err, errlen, EINVAL, "%s %d is not supported by this CPU (supported: %s)", f->option,
			     f->requested, list);
			return -2;
		}
		return f->requested;
	}
	if (f->preset < 0)
		return -1;
	if (f->feature_ok && (f->bitmap & (1U << f->preset)))
		return f->preset;
	if (f->feature_ok && f->bitmap) {
		/* Closest supported encoding above the preset's, else the largest. */
		for (int i = f->preset; i < 16; i++)
			if (f->bitmap & (1U << i))
				return i;
		for (int i = f->preset; i >= 0; i--)
			if (f->bitmap & (1U << i))
				return i;
	}
	size_t used = strlen(note);
	snprintf(note + used, notelen - used, "%sthis CPU has no %s: timing is coarser than the preset asks",
		 used ? "; " : "", f->feature);
	return -1;
}

int mt_capture_build_config(const struct mt_capture_opts *o, const struct mtrace_caps *caps,
			    struct mtrace_config *cfg, char *note, size_t notelen,
			    char *err, size_t errlen)
{
	uint32_t ebx = caps->cpuid_14_0[1];
	int enc;

	note[0] = '\0';
	memset(cfg, 0, sizeof(*cfg));
	cfg->flags = MTRACE_CFG_USER | MTRACE_CFG_TSC;
	if (o->kernel)
		cfg->flags |= MTRACE_CFG_KERNEL;
	if (o->system_wide)
		cfg->flags |= MTRACE_CFG_SYSTEM_WIDE;
	if (!(caps->flags & MTRACE_CAPS_MULTI_TOPA) && o->buffer_size > caps->max_single_region)
		return mt_errmsg(err, errlen, EINVAL,
			    "--buffer-size %lluK exceeds %lluK, the largest ring this CPU supports without multi-entry ToPA",
			    (unsigned long long)o->buffer_size >> 10,
			    (unsigned long long)caps->max_single_region >> 10);
	cfg->ring_size = o->buffer_size;
	cfg->sb_records = MT_CAPTURE_DEFAULT_SB_RECORDS;

	struct timing_field mtc = {
		"--mtc-freq", "MTC timing packets", !!(ebx & PT_EBX_MTC),
		caps->cpuid_14_1[0] >> 16, o->mtc_freq, PRESET_MTC_FREQ,
	};
	struct timing_field cyc = {
		"--cyc", "cycle-accurate mode (CYC packets)", !!(ebx & PT_EBX_PSB_CYC),
		caps->cpuid_14_1[1] & 0xffff, o->cyc_thresh,
		o->timing >= MT_TIMING_NORMAL ? PRESET_CYC_THRESH : -1,
	};
	struct timing_field psb = {
		"--psb-freq", "configurable PSB frequency", !!(ebx & PT_EBX_PSB_CYC),
		caps->cpuid_14_1[1] >> 16, o->psb_freq, -1,
	};

	enc = pick_encoding(&mtc, note, notelen, err, errlen);
	if (enc == -2)
		return -EOPNOTSUPP;
	if (enc >= 0) {
		cfg->flags |= MTRACE_CFG_MTC;
		cfg->mtc_freq = (uint8_t)enc;
	}
	enc = pick_encoding(&cyc, note, notelen, err, errlen);
	if (enc == -2)
		return -EOPNOTSUPP;
	if (enc >= 0) {
		cfg->flags |= MTRACE_CFG_CYC;
		cfg->cyc_thresh = (uint8_t)enc;
	}
	enc = pick_encoding(&psb, note, notelen, err, errlen);
	if (enc == -2)
		return -EOPNOTSUPP;
	if (enc >= 0) {
		cfg->flags |= MTRACE_CFG_PSB_FREQ;
		cfg->psb_freq = (uint8_t)enc;
	}
	if (o->no_retcomp || o->timing == MT_TIMING_HIGH)
		cfg->flags |= MTRACE_CFG_NO_RETCOMP;
	return 0;
}

int mt_capture_output_path(const char *base, unsigned int index, unsigned int total,
			   char *out, size_t outlen)
{
	const char *slash = strrchr(base, '/');
	const char *name = slash ? slash + 1 : base;
	const char *dot = strrchr(name, '.');
	int n;

	if (total <= 1)
		n = snprintf(out, outlen, "%s", base);
	else if (dot && dot != name)
		n = snprintf(out, outlen, "%.*s-%u%s", (int)(dot - base), base, index, dot);
	else
		n = snprintf(out, outlen, "%s-%u", base, index);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}
