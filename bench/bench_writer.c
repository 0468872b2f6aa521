// SPDX-License-Identifier: MIT
/*
 * Perfetto writer speed and size on a large generated call/return timeline,
 * against baselines measured in the same run on the same events:
 *  - a bare varint stream (timestamp delta and function id per event, no
 *    framing, no interning): the floor any binary encoder pays for output;
 *  - the writer's own Chrome JSON output.
 * The size is also set against magic-trace's FXT records for the same
 * calls (40 B per begin with address and symbol, 16 B per end: computed,
 * not measured, from the record layouts).
 *
 * The timeline: 4 threads, 3000 functions with a Zipf-like popularity, a
 * random walk of calls and returns up to 64 deep, 5-400 ns between a
 * thread's events (10 % at the same ns), threads merged in time order as
 * the decoder delivers them.
 *
 * Usage: bench_writer [million events, default 10] [directory, default $TMPDIR or /tmp]
 */
#include "perfetto/pf_writer.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"

#define REPEAT 3
#define THREADS 4
#define FUNCS 3000
#define MAX_DEPTH 64

struct event {
	uint64_t ts;
	int32_t func;		/* -1: return */
	uint16_t thread;
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Fills @ev with @n events; returns how many are calls. */
static size_t make_timeline(struct event *ev, size_t n)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, next[THREADS];
	int depth[THREADS] = { 0 };
	size_t calls = 0;

	for (int t = 0; t < THREADS; t++)
		next[t] = 1000000000000ull + (uint64_t)t * 37;
	for (size_t i = 0; i < n; i++) {
		int t = 0;
		uint64_t r = xorshift(&seed);

		for (int k = 1; k < THREADS; k++)
			if (next[k] < next[t])
				t = k;
		ev[i].ts = next[t];
		ev[i].thread = (uint16_t)t;
		if (depth[t] < MAX_DEPTH && (depth[t] == 0 || (r & 1))) {
			/* Log-uniform rank: a few hot functions, a long tail. */
			double u = (double)(r >> 11) / 9007199254740992.0;

			ev[i].func = (int32_t)(exp(u * log(FUNCS)) - 1);
			depth[t]++;
			calls++;
		} else {
			ev[i].func = -1;
			depth[t]--;
		}
		r = xorshift(&seed);
		next[t] += r % 10 == 0 ? 0 : 5 + (r >> 8) % 396;
	}
	return calls;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The floor: per event a per-thread delta and (function id + 1) as varints. */
static int write_varints(const char *path, const struct event *ev, size_t n, uint64_t *bytes)
{
	enum { BUF = 1 << 20 };
	uint64_t last[THREADS] = { 0 };
	uint8_t *buf = malloc(BUF), *p;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int rc = -1;

	*bytes = 0;
	if (!buf || fd < 0)
		goto out;
	p = buf;
	for (size_t i = 0; i < n; i++) {
		if (p - buf > BUF - 32) {
			if (write(fd, buf, (size_t)(p - buf)) != p - buf)
				goto out;
			*bytes += (uint64_t)(p - buf);
			p = buf;
		}
		p = put_varint(p, ev[i].ts - last[ev[i].thread]);
		p = put_varint(p, (uint64_t)(ev[i].func + 1));
		last[ev[i].thread] = ev[i].ts;
	}
	if (write(fd, buf, (size_t)(p - buf)) != p - buf)
		goto out;
	*bytes += (uint64_t)(p - buf);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* The whole writer path: declarations, interning, every event, close. */
static int write_trace(const char *path, enum pf_format format, const struct event *ev, size_t n,
		       struct pf_stats *st)
{
	struct pf_writer *w;
	struct pf_options o;
	int th[THREADS], rc = 0;
	int32_t *ids = malloc(FUNCS * sizeof(*ids));
	char name[64], err[256];

	pf_options_init(&o);
	o.format = format;
	o.warn_events = 0;
	if (!ids || pf_writer_open(&w, path, &o, err, sizeof(err))) {
		fprintf(stderr, "bench_writer: %s\n", ids ? err : "out of memory");
		free(ids);
		return -1;
	}
	rc |= pf_writer_add_process(w, 1000, "bench", NULL, 0);
	for (int t = 0; t < THREADS; t++) {
		th[t] = pf_writer_add_thread(w, 1000, 1000 + t, "worker");
		rc |= th[t] < 0;
	}
	for (int f = 0; f < FUNCS; f++) {
		struct pf_frame fr = { .symbol = name, .binary = "/usr/lib/libbench.so",
				       .addr = 0x7f0000000000ull + (uint64_t)f * 0x40 };

		snprintf(name, sizeof(name), "bench::module%d::function_%d", f % 17, f);
		ids[f] = pf_writer_intern(w, &fr);
		rc |= ids[f] < 0;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = ev[i].func < 0 ? pf_end(w, th[ev[i].thread], ev[i].ts)
				    : pf_begin(w, th[ev[i].thread], ev[i].ts, ids[ev[i].func], 0);
	if (rc)
		fprintf(stderr, "bench_writer: %s\n", pf_writer_error(w));
	if (pf_writer_close(w, 0, st, err, sizeof(err))) {
		fprintf(stderr, "bench_writer: %s\n", err);
		rc = -1;
	}
	free(ids);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	size_t mev = argc > 1 ? strtoul(argv[1], NULL, 10) : 10, n = mev * 1000000, calls;
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], path_gz[4096], path_json[4096], path_raw[4096];
	struct pf_stats pb, gz, js;
	struct event *ev;
	double t_raw, t_pb, t_gz, t_js, fxt;
	uint64_t raw_bytes, gz_bytes;

	if (!mev || mev > 1000) {
		fprintf(stderr, "usage: bench_writer [million events 1..1000] [dir]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench-writer-%d.pftrace", dir, (int)getpid());
	snprintf(path_gz, sizeof(path_gz), "%s/bench-writer-%d.pftrace.gz", dir, (int)getpid());
	snprintf(path_json, sizeof(path_json), "%s/bench-writer-%d.json", dir, (int)getpid());
	snprintf(path_raw, sizeof(path_raw), "%s/bench-writer-%d.raw", dir, (int)getpid());
	ev = malloc(n * sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "bench_writer: cannot hold %zu events\n", n);
		return 1;
	}
	calls = make_timeline(ev, n);
	BENCH_BEST(REPEAT, write_varints(path_raw, ev, n, &raw_bytes), t_raw);
	BENCH_BEST(REPEAT, write_trace(path, PF_FORMAT_PROTO, ev, n, &pb), t_pb);
	BENCH_BEST(REPEAT, write_trace(path_gz, PF_FORMAT_PROTO, ev, n, &gz), t_gz);
	BENCH_BEST(REPEAT, write_trace(path_json, PF_FORMAT_JSON, ev, n, &js), t_js);
	{
		FILE *f = fopen(path_gz, "rb");

		gz_bytes = 0;
		if (f && !fseek(f, 0, SEEK_END))
			gz_bytes = (uint64_t)ftell(f);
		if (f)
			fclose(f);
	}
	unlink(path);
	unlink(path_gz);
	unlink(path_json);
	unlink(path_raw);
	/* Every input event plus the ENDs that close the still-open frames. */
	if (pb.events < n || pb.events != gz.events || pb.events != js.events) {
		fprintf(stderr, "bench_writer: event counts differ (%llu, %llu, %llu for %zu)\n",
			(unsigned long long)pb.events, (unsigned long long)gz.events,
			(unsigned long long)js.events, n);
		return 1;
	}
	fxt = (40.0 * (double)calls + 16.0 * (double)(pb.events - calls)) / (double)pb.events;
	printf("%zu events (%zu calls), %d threads, %d functions\n", n, calls, THREADS, FUNCS);
	printf("bare varints: %.1f M events/s, %.2f B/event (protobuf runs at %.2fx its speed)\n",
	       n / t_raw / 1e6, (double)raw_bytes / n, t_raw / t_pb);
	printf("protobuf:     %.1f M events/s, %.2f B/event\n", pb.events / t_pb / 1e6,
	       (double)pb.bytes / pb.events);
	printf("protobuf.gz:  %.1f M events/s, %.2f B/event on disk\n", gz.events / t_gz / 1e6,
	       (double)gz_bytes / gz.events);
	printf("chrome json:  %.1f M events/s, %.2f B/event\n", js.events / t_js / 1e6,
	       (double)js.bytes / js.events);
	printf("magic-trace FXT for the same calls (computed): %.2f B/event\n", fxt);
	bench_result("writer protobuf events/s", pb.events / t_pb / 1e6, "M", ">=", 20);
	bench_result("writer protobuf bytes/event", (double)pb.bytes / pb.events, "B", "<=", 15);
	bench_result("writer protobuf / chrome json speed", t_js / t_pb, "x", ">=", 2);
	bench_result("writer protobuf / chrome json size", (double)pb.bytes / js.bytes, "x", "<=", 0.25);
	bench_result("writer protobuf / magic-trace FXT size", (double)pb.bytes / pb.events / fxt, "x",
	       "<=", 0.6);
	free(ev);
	return 0;
}
