/* SPDX-License-Identifier: MIT */
/*
 * Call-stack rebuild for one thread.
 *
 * The block decoder reports what ran as a sequence of blocks (straight-line
 * code starting at an address) separated by the control transfer that ended
 * the previous block. This state machine turns that sequence into properly
 * nested frame BEGIN/END events:
 *
 * - call: a frame for the target's function opens; its return address is
 *   remembered.
 * - return: the frame whose return address is the target closes, with any
 *   frames above it (so a longjmp-style return or an exception unwinding
 *   several frames closes them all). A return to an address no frame
 *   expects, landing in a function on the stack, unwinds to that function.
 *   A return past the oldest frame (the snapshot began mid-stack) closes it
 *   and reveals its caller, which is reported as an inferred frame that was
 *   open since the segment's first timestamp.
 * - jump into another function: a tail call (the top frame is replaced),
 *   unless the target is inside a function further down the stack and not
 *   at its entry (longjmp, exception landing pad): then unwind to it.
 * - far call (syscall, interrupt, with kernel tracing): like a call, so
 *   kernel code nests above the user frame it interrupted; far return
 *   (sysret, iret): every frame since the latest far call closes (with a
 *   return to user space, every kernel frame), and control lands as when
 *   trace resumes. A far transfer to the next instruction nests nothing.
 * - trace off (user-only tracing entering the kernel, or a context switch):
 *   a synthetic "[syscall]" or "[untraced]" frame covers the time off;
 *   when trace resumes in a function below the top (signal return) the
 *   stack unwinds to it, and when it resumes elsewhere (a signal handler)
 *   that function opens as an asynchronously entered frame.
 * - gap (decode error, overflow): every frame closes, a GAP event says why,
 *   and the next block starts a new segment with inferred frames.
 *
 * Timestamps are made monotonic: a step back is clamped to the previous
 * timestamp and counted.
 */
#ifndef MTRACE_DECODE_CALLSTACK_H
#define MTRACE_DECODE_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

/* Function identities with a fixed meaning; resolvers use ids above these. */
enum {
	MT_FN_UNKNOWN = 0,	/* code in no known function */
	MT_FN_SYSCALL = 1,	/* "[syscall]": in the kernel, not traced */
	MT_FN_UNTRACED = 2,	/* "[untraced]": trace off for another reason */
	MT_FN_FIRST_USER = 3,
};

/* The function containing an address: its [start, end) range and an id. */
struct mt_cs_fn {
	uint64_t start, end;
	uint32_t id;
};

enum mt_ev_kind {
	MT_EV_BEGIN,
	MT_EV_END,
	MT_EV_INSTANT,
	MT_EV_GAP,
};

#define MT_EV_INFERRED (1u << 0)	/* BEGIN: open since the segment's start */
#define MT_EV_TRUNCATED (1u << 1)	/* END: still open when the data ended */
#define MT_EV_ASYNC (1u << 2)		/* BEGIN: entered without a call (signal) */
#define MT_EV_TAIL (1u << 3)		/* BEGIN/END: tail call replaced the frame */
#define MT_EV_RET (1u << 4)		/* END: the frame executed a return */
#define MT_EV_INLINE (1u << 5)		/* BEGIN/END: code inlined into the
					 * frame below (decode/inlines.h) */
#define MT_EV_EXCESS (1u << 6)		/* BEGIN/END: an inferred frame past
					 * MT_CS_MAX_INFERRED in its stretch */

struct mt_ev {
	uint64_t ts;
	uint8_t kind;		/* enum mt_ev_kind */
	uint8_t flags;		/* MT_EV_* */
	uint16_t reserved;
	/* BEGIN: function id; GAP, INSTANT: reason code of the producer */
	uint32_t arg;
	/* BEGIN: address the frame was entered at; END with MT_EV_RET: the
	 * address returned to */
	uint64_t addr;
};

struct mt_cs_ops {
	/* Fills FN for IP; an unknown address gets MT_FN_UNKNOWN and the
	 * widest range known to hold no function. */
	void (*resolve)(void *ctx, uint64_t ip, struct mt_cs_fn *fn);
	/*
	 * Receives every event in order. Inferred BEGINs carry the segment's
	 * first timestamp and arrive innermost first, later than events
	 * already emitted for the segment: the consumer places them, in
	 * reverse arrival order, before the segment's other events.
	 */
	void (*emit)(void *ctx, const struct mt_ev *ev);
	void *ctx;
};

enum mt_xfer {
	MT_XFER_NONE,		/* fall-through or conditional branch */
	MT_XFER_CALL,
	MT_XFER_RET,
	MT_XFER_JUMP,		/* direct or indirect jump */
	MT_XFER_FAR_CALL,	/* syscall, interrupt, exception entry */
	MT_XFER_FAR_RET,	/* sysret, iret */
};

enum mt_cs_off {
	MT_OFF_SYSCALL,		/* the last block ended in a syscall */
	MT_OFF_OTHER,		/* interrupt, fault, context switch, filter */
};

/* Frame flag, never in an event: entered by a far call (kernel entry). */
#define MT_CS_FAR (1u << 7)

struct mt_cs_frame {
	struct mt_cs_fn fn;
	uint64_t ret;		/* expected return address; 0: unknown */
	uint8_t flags;		/* MT_EV_ASYNC for frames entered without a call,
				 * MT_CS_FAR */
};

/* Deeper call chains are counted, not stored (runaway recursion). */
#define MT_CS_MAX_DEPTH 4096
/*
 * Inferred frames per stretch (the run of events between gaps) that an
 * output with a nesting limit shows. They nest below everything else of
 * the stretch, all from its first timestamp, so the limit must leave them
 * room; a real program reveals as many callers as its stack was deep when
 * the trace started, a random walk without end. The frames found after
 * these are flagged MT_EV_EXCESS, BEGIN and END, in every pass alike.
 */
#define MT_CS_MAX_INFERRED 64

struct mt_cs {
	struct mt_cs_ops ops;
	struct mt_cs_frame *stack;
	size_t depth, cap;
	size_t hidden;		/* calls beyond MT_CS_MAX_DEPTH */
	enum mt_xfer pending;	/* how the next block is reached */
	uint64_t pending_ret;	/* return address of a pending call; for a
				 * far return, the address right after it */
	int off;		/* trace is off (a synthetic frame is on top) */
	int in_segment;		/* a block was seen since the last gap */
	uint64_t seg_start;	/* first timestamp of the segment */
	unsigned int inferred;	/* inferred frames found in the stretch */
	uint64_t last_ts;
	uint64_t backsteps;	/* timestamps clamped to keep time monotonic */
	uint64_t blocks;
	/* Set after mt_cs_init(): emit receives only inferred BEGINs and GAPs
	 * (a consumer that looks for those alone is spared the call for every
	 * other event). */
	int inferred_only;
	/* The event being emitted: not on the stack, so that handing it on
	 * can be a tail call (emit receives it for the call only). */
	struct mt_ev ev;
};

void mt_cs_init(struct mt_cs *cs, const struct mt_cs_ops *ops);
void mt_cs_fini(struct mt_cs *cs);

/* The previous block ended in transfer X; RET_ADDR is the address after a
 * call or far return instruction (0 for other transfers, or unknown).
 * Inline: the replay calls it for every op. */
static inline void mt_cs_transfer(struct mt_cs *cs, enum mt_xfer x, uint64_t ret_addr)
{
	cs->pending = x;
	cs->pending_ret = ret_addr;
}

/* A block starting at IP ran at TS. */
void mt_cs_block(struct mt_cs *cs, uint64_t ts, uint64_t ip);
/* Tracing stopped at TS; AT is the next instruction's address when known
 * (an asynchronous stop), else 0. */
void mt_cs_disable(struct mt_cs *cs, uint64_t ts, enum mt_cs_off why, uint64_t at);
/* Data was lost at TS; REASON is passed through in the GAP event. */
void mt_cs_gap(struct mt_cs *cs, uint64_t ts, uint32_t reason);
/* A marker at TS (e.g. the trigger); REASON passed through. */
void mt_cs_instant(struct mt_cs *cs, uint64_t ts, uint32_t reason);
/* The thread's data ends at TS: open frames end, marked truncated. */
void mt_cs_finish(struct mt_cs *cs, uint64_t ts);

#endif
