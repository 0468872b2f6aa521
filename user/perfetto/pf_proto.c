// SPDX-License-Identifier: MIT
/*
 * Perfetto protobuf format (TrackEvent). Layout, as Perfetto's own SDK does
 * it and docs/perfetto-output.md describes:
 *
 *  - track descriptors for processes, threads and the trigger track;
 *  - one packet sequence per thread (a second one for what the writer
 *    core writes late, see thread_seqs; one for the trigger), started by a
 *    packet with SEQ_INCREMENTAL_STATE_CLEARED, the sequence defaults
 *    (clock 64, the thread's track) and a clock snapshot that ties the
 *    incremental clock 64 to the builtin clock;
 *  - then events whose timestamps are deltas on clock 64, whose names and
 *    source locations are iids defined on the sequence the first time they
 *    are used, and whose SLICE_ENDs carry no name (an END closes the
 *    innermost open slice of its track).
 *
 * Field numbers are those of google/perfetto protos/perfetto/trace/.
 */
#include "pf_internal.h"

#include <stdlib.h>
#include <string.h>

#include "pf_idmap.h"
#include "pf_pb.h"

enum {
	/* Trace */
	TRACE_PACKET = 1,
	/* TracePacket */
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQ_FLAGS = 13,
	PKT_DEFAULTS = 59,
	PKT_TRACK_DESCRIPTOR = 60,
	PKT_FIRST_ON_SEQ = 87,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	/* TracePacketDefaults, TrackEventDefaults */
	DEF_CLOCK_ID = 58,
	DEF_TRACK_EVENT = 11,
	TED_TRACK_UUID = 11,
	/* ClockSnapshot, ClockSnapshot.Clock */
	CS_CLOCKS = 1,
	CS_PRIMARY = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,
	CLK_INCREMENTAL = 3,
	CLOCK_SEQ_INCREMENTAL = 64,	/* first sequence-scoped clock */
	/* TrackEvent */
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_CATEGORIES = 22,
	TE_SOURCE_LOCATION_IID = 34,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_STRING = 6,
	DA_POINTER = 7,
	/* InternedData and its entries (all have iid = 1) */
	ID_EVENT_NAMES = 2,
	ID_ANNOTATION_NAMES = 3,
	ID_SOURCE_LOCATIONS = 4,
	ENTRY_IID = 1,
	ENTRY_NAME = 2,
	SL_FILE_NAME = 2,
	SL_FUNCTION_NAME = 3,
	SL_LINE_NUMBER = 4,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	PD_PID = 1,
	PD_CMDLINE = 2,
	PD_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,
};

/* Debug annotation names; the value is the iid on every sequence. */
enum annot {
	ANN_INFERRED_START = 1,
	ANN_TRUNCATED,
	ANN_HIDDEN_FRAMES,
	ANN_REASON,
	ANN_PID,
	ANN_TID,
	ANN_IP,
	ANN_SYMBOL,
	ANN_FREEZE_PATH,
	ANN_SKID_NS,
};

static const char *const annot_names[] = {
	[ANN_INFERRED_START] = "inferred_start",
	[ANN_TRUNCATED] = "truncated",
	[ANN_HIDDEN_FRAMES] = "hidden_frames",
	[ANN_REASON] = "reason",
	[ANN_PID] = "pid",
	[ANN_TID] = "tid",
	[ANN_IP] = "ip",
	[ANN_SYMBOL] = "symbol",
	[ANN_FREEZE_PATH] = "freeze_path",
	[ANN_SKID_NS] = "skid_ns",
};

struct seq {
	uint32_t id;		/* trusted_packet_sequence_id, from 1 */
	uint64_t track;		/* default track uuid */
	uint64_t last_ts;	/* clock-64 value of the last packet */
	bool started;		/* the CLEARED packet is written */
	uint32_t annots;	/* bit per enum annot: name interned */
	struct pf_idmap names;	/* function id -> EventName and SourceLocation iid */
};

struct proto {
	uint32_t next_seq;
	struct seq trigger;
	/* Reused scratch: a track event, its interned data, a whole packet. */
	struct pb_buf te, in, pkt;
};

static struct proto *state(struct pf_writer *w)
{
	return w->fmt;
}

static int start(struct pf_writer *w)
{
	w->fmt = calloc(1, sizeof(struct proto));
	return w->fmt ? 0 : -PF_ENOMEM;
}

static void seq_init(struct pf_writer *w, struct seq *s, uint64_t track)
{
	s->id = ++state(w)->next_seq;
	s->track = track;
}

/* Frames @pkt as one Trace.packet and writes it. */
static int write_packet(struct pf_writer *w, struct pb_buf *pkt)
{
	uint8_t hdr[11];
	uint8_t *p = hdr;

	if (pkt->oom)
		return -PF_ENOMEM;
	*p++ = TRACE_PACKET << 3 | PB_LEN;
	p = pb_put_varint(p, pkt->len);
	if (pf_sink_write(&w->sink, hdr, (size_t)(p - hdr)) ||
	    pf_sink_write(&w->sink, pkt->data, pkt->len))
		return -PF_EIO;
	return 0;
}

static struct pb_buf *new_packet(struct pf_writer *w)
{
	struct pb_buf *b = &state(w)->pkt;

	b->len = 0;
	return b;
}

static void put_clock(struct pb_buf *b, unsigned int id, uint64_t ts, bool incremental)
{
	size_t m = pb_open(b, CS_CLOCKS);

	pb_uint(b, CLK_ID, id);
	pb_uint(b, CLK_TIMESTAMP, ts);
	if (incremental)
		pb_uint(b, CLK_INCREMENTAL, 1);
	pb_close(b, m);
}

/* The packet that opens a sequence at @ts: it clears incremental state,
 * sets the defaults and anchors clock 64 to the builtin clock. */
static int seq_start(struct pf_writer *w, struct seq *s, uint64_t ts)
{
	struct pb_buf *b = new_packet(w);
	size_t m, m2;

	pb_uint(b, PKT_SEQ_ID, s->id);
	pb_uint(b, PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pb_uint(b, PKT_FIRST_ON_SEQ, 1);
	m = pb_open(b, PKT_DEFAULTS);
	pb_uint(b, DEF_CLOCK_ID, CLOCK_SEQ_INCREMENTAL);
	m2 = pb_open(b, DEF_TRACK_EVENT);
	pb_uint(b, TED_TRACK_UUID, s->track);
	pb_close(b, m2);
	pb_close(b, m);
	m = pb_open(b, PKT_CLOCK_SNAPSHOT);
	put_clock(b, w->opt.clock_id, ts, false);
	put_clock(b, CLOCK_SEQ_INCREMENTAL, ts, true);
	pb_uint(b, CS_PRIMARY, w->opt.clock_id);
	pb_close(b, m);
	s->started = true;
	s->last_ts = ts;
	return write_packet(w, b);
}

/* The bytes of a track event packet on @s, DELTA after its last one, its
 * event TELEN bytes and its interned data INLEN; *PKT: the packet's own. */
PF_HOT size_t packet_size(const struct seq *s, uint64_t delta, size_t telen, size_t inlen,
			  size_t *pkt)
{
	*pkt = 1 + pb_varint_len(delta) + 1 + pb_varint_len(s->id) + 2 +
	       1 + pb_varint_len(telen) + telen;
	if (inlen)
		*pkt += 1 + pb_varint_len(inlen) + inlen;
	return 1 + pb_varint_len(*pkt) + *pkt;
}

/* Lays out at @p a packet of PKT bytes (packet_size()) on @s at @ts, up
 * to its event's TELEN bytes, which go at the pointer returned. */
PF_HOT uint8_t *packet_lay(uint8_t *p, struct seq *s, uint64_t ts, size_t pkt, size_t telen,
			   const uint8_t *in, size_t inlen)
{
	*p++ = TRACE_PACKET << 3 | PB_LEN;
	p = pb_put_varint(p, pkt);
	*p++ = PKT_TIMESTAMP << 3 | PB_VARINT;
	p = pb_put_varint(p, ts - s->last_ts);
	*p++ = PKT_SEQ_ID << 3 | PB_VARINT;
	p = pb_put_varint(p, s->id);
	*p++ = PKT_SEQ_FLAGS << 3 | PB_VARINT;
	*p++ = SEQ_NEEDS_INCREMENTAL_STATE;
	if (inlen) {
		*p++ = PKT_INTERNED_DATA << 3 | PB_LEN;
		p = pb_put_varint(p, inlen);
		memcpy(p, in, inlen);
		p += inlen;
	}
	*p++ = PKT_TRACK_EVENT << 3 | PB_LEN;
	s->last_ts = ts;
	return pb_put_varint(p, telen);
}

/*
 * Starts a packet for a track event of TELEN bytes, with interned data IN
 * of INLEN bytes (possibly none), on @s at @ts: reserves its TOTAL bytes in
 * the output buffer (opening the sequence first if need be) and lays out
 * everything up to the event's bytes, which the caller writes at the
 * pointer returned before pf_sink_commit(TOTAL). NULL with *RC set on
 * failure.
 */
static uint8_t *packet_start(struct pf_writer *w, struct seq *s, uint64_t ts, size_t telen,
			     const uint8_t *in, size_t inlen, size_t *total, int *rc)
{
	size_t pkt;
	uint8_t *p;

	if (!s->started && (*rc = seq_start(w, s, ts)))
		return NULL;
	*total = packet_size(s, ts - s->last_ts, telen, inlen, &pkt);
	p = pf_sink_reserve(&w->sink, *total);
	if (!p) {
		*rc = -PF_EIO;
		return NULL;
	}
	return packet_lay(p, s, ts, pkt, telen, in, inlen);
}

/* Writes the event in te (with the interned data in in) on @s at @ts. */
static int write_event(struct pf_writer *w, struct seq *s, uint64_t ts)
{
	struct proto *st = state(w);
	size_t total;
	uint8_t *p;
	int rc;

	if (st->te.oom || st->in.oom)
		return -PF_ENOMEM;
	p = packet_start(w, s, ts, st->te.len, st->in.data, st->in.len, &total, &rc);
	if (!p)
		return rc;
	memcpy(p, st->te.data, st->te.len);
	pf_sink_commit(&w->sink, total);
	return 0;
}

/* A small event's TrackEvent (small_event()): its length, and its bytes
 * laid out at @p. */
PF_HOT size_t small_len(uint32_t iid, bool with_location)
{
	unsigned int n = iid ? pb_varint_len(iid) : 0;

	return 2 + (iid ? 1 + n + (with_location ? 2 + n : 0) : 0);
}

PF_HOT void small_lay(uint8_t *p, unsigned int type, uint32_t iid, bool with_location)
{
	*p++ = TE_TYPE << 3 | PB_VARINT;
	*p++ = (uint8_t)type;
	if (iid) {
		*p++ = TE_NAME_IID << 3 | PB_VARINT;
		p = pb_put_varint(p, iid);
		if (with_location) {
			p = pb_put_varint(p, TE_SOURCE_LOCATION_IID << 3 | PB_VARINT);
			pb_put_varint(p, iid);
		}
	}
}

/* small_event() when the sequence is not open yet or the buffer is full
 * (out of line: the common case then calls nothing). */
static __attribute__((noinline)) int small_event_start(struct pf_writer *w, struct seq *s,
							uint64_t ts, unsigned int type,
							uint32_t iid, bool with_location)
{
	size_t telen = small_len(iid, with_location), total;
	int rc;
	uint8_t *p = packet_start(w, s, ts, telen, NULL, 0, &total, &rc);

	if (!p)
		return rc;
	small_lay(p, type, iid, with_location);
	pf_sink_commit(&w->sink, total);
	return 0;
}

/*
 * The common events, nearly all of a trace's tens of millions: a BEGIN of
 * a function already interned on the sequence (IID), with no category
 * and not inferred, and an END without annotations (IID 0). Their fields
 * (type, name iid, source location iid unless !WITH_LOCATION) are written
 * straight into the output buffer, the same bytes as the general path,
 * which writes the fields in this order, at a third of its cost and
 * with no copy of bytes just stored (a store-forwarding stall).
 */
PF_HOT int small_event(struct pf_writer *w, struct seq *s, uint64_t ts, unsigned int type,
		       uint32_t iid, bool with_location)
{
	size_t telen = small_len(iid, with_location), pkt, total;

	if (!s->started)
		return small_event_start(w, s, ts, type, iid, with_location);
	total = packet_size(s, ts - s->last_ts, telen, 0, &pkt);
	if (w->sink.cap - w->sink.len < total)
		return small_event_start(w, s, ts, type, iid, with_location);
	small_lay(packet_lay(w->sink.buf + w->sink.len, s, ts, pkt, telen, NULL, 0), type, iid,
		  with_location);
	pf_sink_commit(&w->sink, total);
	return 0;
}

/* Starts a track event of @type; returns the buffer to add fields to. */
static struct pb_buf *new_event(struct pf_writer *w, unsigned int type)
{
	struct proto *st = state(w);

	st->te.len = 0;
	st->in.len = 0;
	pb_uint(&st->te, TE_TYPE, type);
	return &st->te;
}

/* Adds name_iid (and the source location for real functions) of @func,
 * interning both on @s the first time. */
static int put_name(struct pf_writer *w, struct seq *s, int32_t func, bool with_location)
{
	struct proto *st = state(w);
	const struct pf_func *f = &w->funcs.v[func];
	uint32_t iid = pf_idmap_get(&s->names, (uint32_t)func);
	size_t m;

	if (!iid) {
		iid = pf_idmap_add(&s->names, (uint32_t)func);
		if (!iid)
			return -PF_ENOMEM;
		m = pb_open(&st->in, ID_EVENT_NAMES);
		pb_uint(&st->in, ENTRY_IID, iid);
		pb_str(&st->in, ENTRY_NAME, f->name);
		pb_close(&st->in, m);
		if (with_location) {
			m = pb_open(&st->in, ID_SOURCE_LOCATIONS);
			pb_uint(&st->in, ENTRY_IID, iid);
			if (f->file)
				pb_str(&st->in, SL_FILE_NAME, f->file);
			pb_str(&st->in, SL_FUNCTION_NAME, f->where);
			if (f->file && f->line)
				pb_uint(&st->in, SL_LINE_NUMBER, f->line);
			pb_close(&st->in, m);
		}
	}
	pb_uint(&st->te, TE_NAME_IID, iid);
	if (with_location)
		pb_uint(&st->te, TE_SOURCE_LOCATION_IID, iid);
	return 0;
}

/* Opens a debug annotation named @a (interned on @s); the caller adds one
 * value and closes it. */
static size_t annot_open(struct pf_writer *w, struct seq *s, enum annot a)
{
	struct proto *st = state(w);
	size_t m;

	if (!(s->annots & 1u << a)) {
		m = pb_open(&st->in, ID_ANNOTATION_NAMES);
		pb_uint(&st->in, ENTRY_IID, a);
		pb_str(&st->in, ENTRY_NAME, annot_names[a]);
		pb_close(&st->in, m);
		s->annots |= 1u << a;
	}
	m = pb_open(&st->te, TE_DEBUG_ANNOTATIONS);
	pb_uint(&st->te, DA_NAME_IID, a);
	return m;
}

static void annot_uint(struct pf_writer *w, struct seq *s, enum annot a, unsigned int field,
		       uint64_t v)
{
	size_t m = annot_open(w, s, a);

	pb_uint(&state(w)->te, field, v);
	pb_close(&state(w)->te, m);
}

static void annot_str(struct pf_writer *w, struct seq *s, enum annot a, const char *v)
{
	size_t m = annot_open(w, s, a);

	pb_str(&state(w)->te, DA_STRING, v);
	pb_close(&state(w)->te, m);
}

static int process(struct pf_writer *w, const struct pf_process *p)
{
	struct pb_buf *b = new_packet(w);
	size_t m = pb_open(b, PKT_TRACK_DESCRIPTOR), m2;

	pb_uint(b, TD_UUID, p->uuid);
	m2 = pb_open(b, TD_PROCESS);
	pb_uint(b, PD_PID, (uint64_t)(int64_t)p->pid);
	for (int i = 0; i < p->argc; i++)
		pb_str(b, PD_CMDLINE, p->argv[i]);
	pb_str(b, PD_NAME, p->name);
	pb_close(b, m2);
	pb_close(b, m);
	return write_packet(w, b);
}

/*
 * A thread's sequences: its events in time order, and the events the core
 * writes late (pf_thread.late: a stretch's inferred frames and the events
 * at its first time, see pf_writer.c), in time order among themselves
 * too. The importer sorts all by time, equal times in file order.
 */
struct thread_seqs {
	struct seq main, late;
};

PF_HOT struct seq *thread_seq(struct pf_writer *w, struct pf_thread *t)
{
	struct thread_seqs *ts = t->fmt;

	if (!t->late)
		return &ts->main;
	if (!ts->late.id)
		seq_init(w, &ts->late, t->uuid);
	return &ts->late;
}

static int thread(struct pf_writer *w, struct pf_thread *t)
{
	struct pb_buf *b;
	struct thread_seqs *s = calloc(1, sizeof(*s));
	size_t m, m2;

	if (!s)
		return -PF_ENOMEM;
	seq_init(w, &s->main, t->uuid);
	t->fmt = s;
	b = new_packet(w);
	m = pb_open(b, PKT_TRACK_DESCRIPTOR);
	pb_uint(b, TD_UUID, t->uuid);
	if (t->plain) {
		pb_str(b, TD_NAME, t->name);
		pb_close(b, m);
		return write_packet(w, b);
	}
	m2 = pb_open(b, TD_THREAD);
	pb_uint(b, THD_PID, (uint64_t)(int64_t)t->pid);
	pb_uint(b, THD_TID, (uint64_t)t->tid);
	pb_str(b, THD_NAME, t->name);
	pb_close(b, m2);
	pb_close(b, m);
	return write_packet(w, b);
}

/* A BEGIN that is not a small event (out of line: small events then save
 * few registers). */
static __attribute__((noinline)) int begin_general(struct pf_writer *w, struct seq *s,
						   uint64_t ts, int32_t func, bool inferred)
{
	bool marker = func == w->marker_func;
	int rc;

	new_event(w, TYPE_SLICE_BEGIN);
	rc = put_name(w, s, func, !marker);
	if (rc)
		return rc;
	if (w->funcs.v[func].flags & PF_FRAME_UNTRACED)
		pb_str(&state(w)->te, TE_CATEGORIES, "untraced");
	else if (w->funcs.v[func].flags & PF_FRAME_INLINE)
		pb_str(&state(w)->te, TE_CATEGORIES, "inline");
	if (inferred)
		annot_uint(w, s, ANN_INFERRED_START, DA_BOOL, 1);
	return write_event(w, s, ts);
}

static int begin(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		 bool inferred)
{
	struct seq *s = thread_seq(w, t);
	uint32_t iid = pf_idmap_get(&s->names, (uint32_t)func);

	if (iid && !inferred && !(w->funcs.v[func].flags & (PF_FRAME_UNTRACED | PF_FRAME_INLINE)))
		return small_event(w, s, ts, TYPE_SLICE_BEGIN, iid, func != w->marker_func);
	return begin_general(w, s, ts, func, inferred);
}

/* An END with annotations (out of line, as begin_general()). */
static __attribute__((noinline)) int end_general(struct pf_writer *w, struct seq *s, uint64_t ts,
						 const struct pf_end_info *e)
{
	new_event(w, TYPE_SLICE_END);
	if (e->truncated)
		annot_uint(w, s, ANN_TRUNCATED, DA_BOOL, 1);
	if (e->hidden)
		annot_uint(w, s, ANN_HIDDEN_FRAMES, DA_UINT, e->hidden);
	return write_event(w, s, ts);
}

static int end(struct pf_writer *w, struct pf_thread *t, uint64_t ts, const struct pf_end_info *e)
{
	struct seq *s = thread_seq(w, t);

	if (!e->truncated && !e->hidden)
		return small_event(w, s, ts, TYPE_SLICE_END, 0, false);
	return end_general(w, s, ts, e);
}

static int instant(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		   const char *reason)
{
	struct seq *s = thread_seq(w, t);
	int rc;

	new_event(w, TYPE_INSTANT);
	rc = put_name(w, s, func, false);
	if (rc)
		return rc;
	if (reason)
		annot_str(w, s, ANN_REASON, reason);
	return write_event(w, s, ts);
}

static int trigger_track(struct pf_writer *w)
{
	struct pb_buf *b = new_packet(w);
	size_t m = pb_open(b, PKT_TRACK_DESCRIPTOR);

	seq_init(w, &state(w)->trigger, w->trig_uuid);
	pb_uint(b, TD_UUID, w->trig_uuid);
	if (w->trig_parent)
		pb_uint(b, TD_PARENT_UUID, w->trig_parent);
	pb_str(b, TD_NAME, "mtrace trigger");
	pb_close(b, m);
	return write_packet(w, b);
}

static int trigger(struct pf_writer *w)
{
	struct seq *s = &state(w)->trigger;
	const struct pf_trigger *t = &w->trig;
	int rc;

	new_event(w, TYPE_INSTANT);
	rc = put_name(w, s, w->trigger_func, false);
	if (rc)
		return rc;
	annot_str(w, s, ANN_REASON, t->reason);
	annot_uint(w, s, ANN_PID, DA_INT, (uint64_t)(int64_t)t->pid);
	annot_uint(w, s, ANN_TID, DA_INT, (uint64_t)t->tid);
	annot_uint(w, s, ANN_IP, DA_POINTER, t->ip);
	if (t->symbol)
		annot_str(w, s, ANN_SYMBOL, t->symbol);
	annot_str(w, s, ANN_FREEZE_PATH, t->freeze_path);
	if (t->skid_ns >= 0)
		annot_uint(w, s, ANN_SKID_NS, DA_INT, (uint64_t)t->skid_ns);
	return write_event(w, s, t->ts_ns);
}

static int finish(struct pf_writer *w)
{
	(void)w;
	return 0;
}

static void seq_free(struct seq *s)
{
	pf_idmap_free(&s->names);
}

static void free_state(struct pf_writer *w)
{
	struct proto *st = state(w);

	for (size_t i = 0; i < w->nthreads; i++) {
		struct thread_seqs *ts = w->threads[i].fmt;

		if (ts) {
			seq_free(&ts->main);
			seq_free(&ts->late);
		}
		free(ts);
		w->threads[i].fmt = NULL;
	}
	if (!st)
		return;
	seq_free(&st->trigger);
	pb_free(&st->te);
	pb_free(&st->in);
	pb_free(&st->pkt);
	free(st);
	w->fmt = NULL;
}

const struct pf_format_ops pf_proto_ops = {
	.start = start,
	.process = process,
	.thread = thread,
	.begin = begin,
	.end = end,
	.instant = instant,
	.trigger_track = trigger_track,
	.trigger = trigger,
	.finish = finish,
	.free = free_state,
};
