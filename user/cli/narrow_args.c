// SPDX-License-Identifier: MIT
/* decode's narrowing options; see narrow_args.h. */
#include "narrow_args.h"

#include "cli_msg.h"

#include "sym/sym.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

const char narrow_help[] =
	"Narrowing (combine freely; applied before anything is written):\n"
	"      --around-trigger D  only the time D before the trigger and D after it\n"
	"      --time FROM,TO      only that window: nanoseconds on the trace's clock,\n"
	"                          or T, T-D, T+D around the trigger; an end may be empty\n"
	"      --tid TID[,TID...]  only these threads (others are not rebuilt)\n"
	"      --cpu CPU[,CPU...]  only these CPUs' trace (others are not decoded)\n"
	"      --function SYM      only calls of SYM, what they call, and their callers\n"
	"                          (SYM as demangled, or mangled as nm prints it)\n"
	"      --min-duration D    leave out calls shorter than D (their time stays in\n"
	"                          their caller)\n"
	"      --max-depth N       leave out frames nested deeper than N\n"
	"  Durations: a number with ns, us, ms or s (default ns).\n";

/* A comma-separated list of numbers into V (at most DECODE_MAX_LIST). */
static int parse_list(const char *opt, const char *s, uint32_t *v, size_t *n)
{
	const char *p = s;
	char *end;

	do {
		unsigned long x;

		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno || end == p || x > UINT32_MAX || (*end && *end != ',') ||
		    *n == DECODE_MAX_LIST) {
			cli_err("--%s wants numbers separated by commas (at most %d), not '%s'", opt,
				DECODE_MAX_LIST, s);
			return 2;
		}
		v[(*n)++] = (uint32_t)x;
		p = end + 1;
	} while (*end);
	return 0;
}

static int parse_duration(const char *opt, const char *s, uint64_t *ns)
{
	int e = mt_narrow_parse_duration(s, ns);

	if (!e)
		return 0;
	if (e == -ERANGE)
		cli_err("--%s %s: too long (at most some 584 years)", opt, s);
	else
		cli_err("--%s wants a duration: a number with ns, us, ms or s (e.g. 2ms), not '%s'",
			opt, s);
	return 2;
}

int narrow_option(int c, const char *arg, struct decode_request *q)
{
	struct mt_narrow_opts *o = &q->narrow;
	char err[256];
	uint64_t v;
	char *end;

	switch (c) {
	case 'A':
		if (parse_duration("around-trigger", arg, &v))
			return 2;
		if (v > INT64_MAX)
			v = INT64_MAX;
		*o = (struct mt_narrow_opts){ 1, 1, -(int64_t)v, (int64_t)v, o->function,
					      o->min_duration, o->max_depth };
		q->window_opt = "--around-trigger";
		return 0;
	case 'T':
		q->window_opt = "--time";
		if (!mt_narrow_parse_time(arg, o, err, sizeof(err)))
			return 0;
		cli_err("%s", err);
		return 2;
	case 'I':
		return parse_list("tid", arg, q->tids, &q->ntids);
	case 'C':
		return parse_list("cpu", arg, q->cpus, &q->ncpus);
	case 'F':
		if (!*arg) {
			cli_err("--function wants a function's name");
			return CLI_EXIT_USAGE;
		}
		/* Functions are named demangled, by the symbolizer's demangler: a
		 * mangled name (as nm prints it) names the function it encodes. */
		free(q->function_demangled);
		q->function_demangled = mt_sym_demangle(arg);
		o->function = q->function_demangled ? q->function_demangled : arg;
		return 0;
	case 'M':
		return parse_duration("min-duration", arg, &o->min_duration);
	case 'D':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || v < 1 || v > 4096) {
			cli_err("--max-depth wants 1..4096, not '%s'", arg);
			return 2;
		}
		o->max_depth = (unsigned int)v;
		return 0;
	}
	return -1;
}

void narrow_decode_opts(const struct decode_request *q, struct mt_decode_opts *o)
{
	o->cpus = q->ncpus ? q->cpus : NULL;
	o->ncpus = q->ncpus;
	o->tids = q->ntids ? q->tids : NULL;
	o->ntids = q->ntids;
}

/* Up to a few of the N numbers V, comma-separated, into BUF. */
static const char *some_of(char *buf, size_t len, const uint32_t *v, size_t n)
{
	enum { SHOWN = 16 };
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < SHOWN && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%" PRIu32, i ? ", " : "", v[i]);
	if (n > SHOWN && at < len)
		snprintf(buf + at, len - at, " and %zu more", n - SHOWN);
	return n ? buf : "none";
}

static int listed(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static int bundle_has_cpu(struct mt_bundle_reader *r, uint32_t cpu)
{
	struct mt_bundle_pt_desc pt;

	for (size_t i = 0; i < mt_bundle_pt_count(r); i++)
		if (!mt_bundle_pt_desc(r, i, &pt) && pt.cpu == cpu)
			return 1;
	return 0;
}

int narrow_check_cpus(const struct decode_request *q, struct mt_bundle_reader *r,
		      const char *name)
{
	uint32_t cpus[DECODE_MAX_LIST];
	struct mt_bundle_pt_desc pt;
	size_t n = 0;
	char buf[256];

	for (size_t i = 0; i < q->ncpus; i++) {
		if (bundle_has_cpu(r, q->cpus[i]))
			continue;
		/* What there is, for the message. */
		for (size_t k = 0; k < mt_bundle_pt_count(r) && n < DECODE_MAX_LIST; k++)
			if (!mt_bundle_pt_desc(r, k, &pt) && !listed(cpus, n, pt.cpu))
				cpus[n++] = pt.cpu;
		cli_err("%s: --cpu %" PRIu32 ": the bundle holds no trace of CPU %" PRIu32
			" (its CPUs: %s)", name, q->cpus[i], q->cpus[i],
			some_of(buf, sizeof(buf), cpus, n));
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int narrow_check_open(const struct decode_request *q, const struct mt_decode *d,
		      const char *name)
{
	const uint32_t *tids;
	size_t n = mt_decode_bundle_threads(d, &tids);
	char buf[256];
	uint64_t at;

	for (size_t i = 0; i < q->ntids; i++)
		if (!listed(tids, n, q->tids[i])) {
			cli_err("%s: --tid %" PRIu32 ": the bundle holds no thread %" PRIu32
				" of the traced process (its threads: %s)", name, q->tids[i],
				q->tids[i], some_of(buf, sizeof(buf), tids, n));
			return CLI_EXIT_USAGE;
		}
	/* Else the window would be placed around time 0, silently. */
	if (q->narrow.around_trigger && mt_decode_trigger_at(d, &at)) {
		cli_err("%s: %s: there is no trigger to place the window around (a perf.data has none): "
			"give --time FROM,TO in ns on the trace's clock", name, q->window_opt);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int narrow_run(struct mt_decode *d, const char *name, const struct decode_request *q,
	       const struct mt_decode_sink *sink, uint64_t *end)
{
	struct mt_narrow n;
	struct mt_decode_sink ns;
	char why[256];
	int rc;

	if (!mt_narrow_active(&q->narrow)) {
		rc = mt_decode_run(d, sink);
	} else {
		mt_narrow_init(&n, d, &q->narrow, sink);
		ns = mt_narrow_sink(&n);
		rc = mt_narrow_run(&n, &ns);
		if (!rc && mt_narrow_left_nothing(&n, why, sizeof(why))) {
			cli_err("%s: nothing left to write: %s%s", name, why,
				q->ntids ? " (in the threads --tid names)" :
				q->ncpus ? " (in the trace of the CPUs --cpu names)" : "");
			rc = NARROW_NOTHING_LEFT;
		}
		if (end)
			*end = mt_narrow_end_ns(&n, *end);
		mt_narrow_fini(&n);
	}
	if (rc && mt_decode_error(d)[0])
		cli_err("%s: %s", name, mt_decode_error(d));
	return rc;
}

int narrow_told(const struct mt_decode *d, int rc)
{
	return rc == NARROW_NOTHING_LEFT || mt_decode_error(d)[0];
}
