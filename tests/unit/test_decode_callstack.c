// SPDX-License-Identifier: MIT
/*
 * Call-stack rebuild over synthetic block sequences: every rule of
 * decode/callstack.h, checked as the exact event sequence it produces.
 */
#include "test_decode_evfmt.h"

#include <stdlib.h>

/* Functions of 0x100 bytes each: A at 0x1000, B at 0x2000, ..., and in
 * kernel space K, L, M, ... at the same offsets from KBASE. */
#define FN(c) (0x1000u * (uint64_t)((c) - 'A' + 1))
#define KBASE 0xffffffff80000000ull
#define KFN(c) (KBASE + FN((c) - 'K' + 'A'))

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	uint64_t off = ip >= KBASE ? ip - KBASE : ip;

	(void)ctx;
	if (off >= 0x1000 && off < 0x9000 && (off & 0xfff) < 0x100) {
		fn->start = ip & ~0xfffull;
		fn->end = fn->start + 0x100;
		fn->id = MT_FN_FIRST_USER + (uint32_t)(off >> 12) - 1 + (ip >= KBASE ? 10 : 0);
	} else {
		fn->start = ip;
		fn->end = ip + 1;
		fn->id = MT_FN_UNKNOWN;
	}
}

static struct mt_cs cs;

static void start(void)
{
	static const struct mt_cs_ops ops = { resolve, evfmt_emit, NULL };

	evfmt_reset();
	mt_cs_init(&cs, &ops);
}

static void call(uint64_t ts, uint64_t ret, uint64_t target)
{
	mt_cs_transfer(&cs, MT_XFER_CALL, ret);
	mt_cs_block(&cs, ts, target);
}

static void xfer(uint64_t ts, enum mt_xfer x, uint64_t target)
{
	mt_cs_transfer(&cs, x, 0);
	mt_cs_block(&cs, ts, target);
}

static void expect(const char *want)
{
	mt_cs_fini(&cs);
	MT_ASSERT_STREQ(evfmt_text(), want);
}

MT_TEST(call_and_return)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	xfer(115, MT_XFER_NONE, FN('B') + 0x10);	/* a branch inside B */
	xfer(120, MT_XFER_RET, FN('A') + 5);
	mt_cs_finish(&cs, 130);
	expect("100:+A* 110:+B 120:-B 130:-A!");
}

MT_TEST(returns_past_the_first_frame_infer_callers)
{
	start();
	mt_cs_block(&cs, 100, FN('C') + 0x10);
	xfer(110, MT_XFER_RET, FN('B') + 0x20);
	call(112, FN('B') + 0x25, FN('D'));
	xfer(114, MT_XFER_RET, FN('B') + 0x25);
	xfer(120, MT_XFER_RET, FN('A') + 0x30);
	mt_cs_finish(&cs, 130);
	/* Inferred callers start at the segment's first timestamp. */
	expect("100:+C* 110:-C 100:+B* 112:+D 114:-D 120:-B 100:+A* 130:-A!");
}

MT_TEST(tail_call_keeps_the_return_address)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	xfer(115, MT_XFER_JUMP, FN('C'));
	xfer(120, MT_XFER_RET, FN('A') + 5);
	mt_cs_finish(&cs, 130);
	expect("100:+A* 110:+B 115:-B 115:+C^ 120:-C 130:-A!");
}

MT_TEST(longjmp_unwinds_to_the_jump_target)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	call(120, FN('B') + 8, FN('C'));
	/* longjmp: an indirect jump into the middle of A (setjmp's return). */
	xfer(130, MT_XFER_JUMP, FN('A') + 0x40);
	call(140, FN('A') + 0x45, FN('D'));
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+B 120:+C 130:-C 130:-B 140:+D 150:-D! 150:-A!");
}

MT_TEST(exception_return_to_landing_pad_unwinds)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	call(120, FN('B') + 8, FN('C'));
	/* The unwinder's final return goes to A's landing pad, not to B+8. */
	xfer(130, MT_XFER_RET, FN('A') + 0x50);
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+B 120:+C 130:-C 130:-B 150:-A!");
}

MT_TEST(return_skipping_frames_pops_them)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	call(120, FN('B') + 8, FN('C'));
	xfer(130, MT_XFER_RET, FN('A') + 5);	/* e.g. a frame-skipping return */
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+B 120:+C 130:-C 130:-B 150:-A!");
}

MT_TEST(return_into_unseen_caller_replaces_it)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	xfer(120, MT_XFER_RET, FN('D') + 3);
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+B 120:-B 120:-A 120:+D^ 150:-D!");
}

MT_TEST(syscall_without_kernel_trace)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('A') + 0x10);
	mt_cs_disable(&cs, 150, MT_OFF_OTHER, 0);
	mt_cs_block(&cs, 200, FN('A') + 0x10);
	mt_cs_finish(&cs, 250);
	expect("100:+A* 150:+[sys] 200:-[sys] 250:-A!");
}

MT_TEST(syscall_with_kernel_trace_nests_kernel_frames)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('A') + 0x10);
	mt_cs_block(&cs, 110, FN('H'));			/* kernel entry */
	call(120, FN('H') + 4, FN('G'));
	xfer(130, MT_XFER_RET, FN('H') + 4);
	xfer(140, MT_XFER_FAR_RET, FN('A') + 0x10);	/* sysret */
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+H 120:+G 130:-G 140:-H 150:-A!");
}

/* sync_core(): kernel code serialises with an IRET to the instruction
 * right after it. No frame ends (found by the kernel-mode walk in the VM:
 * such an IRET used to pop the caller's frame). */
MT_TEST(iret_to_self_is_not_a_return)
{
	start();
	mt_cs_block(&cs, 100, FN('H'));
	call(110, FN('H') + 4, FN('G'));
	mt_cs_transfer(&cs, MT_XFER_FAR_RET, FN('G') + 0x12);	/* iretq at G+0x10 */
	mt_cs_block(&cs, 120, FN('G') + 0x12);
	xfer(130, MT_XFER_RET, FN('H') + 4);
	mt_cs_finish(&cs, 150);
	expect("100:+H* 110:+G 130:-G 150:-H!");
}

/* A VMCALL comes straight back to the next instruction: no frame opens
 * (found by the user and kernel walk in the VM: such a far call used to
 * open a frame that never closed). */
MT_TEST(far_call_to_the_next_instruction_nests_nothing)
{
	start();
	mt_cs_block(&cs, 100, KFN('K'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, KFN('K') + 0x13);	/* vmcall at K+0x10 */
	mt_cs_block(&cs, 110, KFN('K') + 0x13);
	mt_cs_finish(&cs, 150);
	expect("100:+K* 150:-K!");
}

/* An interrupt nested in the kernel whose IRET the trace does not show,
 * then a return to user space: every kernel frame closes, not just the
 * interrupt's (found by the user and kernel walk: user frames used to be
 * replaced by kernel ones). */
MT_TEST(far_return_to_user_space_closes_every_kernel_frame)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('A') + 0x12);	/* syscall */
	mt_cs_block(&cs, 110, KFN('K'));
	call(120, KFN('K') + 5, KFN('L'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, KFN('L') + 0x20);	/* interrupt */
	mt_cs_block(&cs, 130, KFN('M'));
	xfer(140, MT_XFER_FAR_RET, FN('A') + 0x12);	/* sysret */
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+K 120:+L 130:+M 140:-M 140:-L 140:-K 150:-A!");
}

MT_TEST(far_return_into_the_kernel_closes_the_interrupt_only)
{
	start();
	mt_cs_block(&cs, 100, KFN('K'));
	call(110, KFN('K') + 5, KFN('L'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, KFN('L') + 0x20);	/* interrupt */
	mt_cs_block(&cs, 120, KFN('M'));
	call(125, KFN('M') + 5, KFN('N'));
	xfer(130, MT_XFER_FAR_RET, KFN('L') + 0x20);	/* iret */
	xfer(140, MT_XFER_RET, KFN('K') + 5);
	mt_cs_finish(&cs, 150);
	expect("100:+K* 110:+L 120:+M 125:+N 130:-N 130:-M 140:-L 150:-K!");
}

/* The kernel delivers a signal: its IRET lands in the handler, which opens
 * as entered asynchronously. */
MT_TEST(far_return_to_a_signal_handler_opens_it)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('A') + 0x12);
	mt_cs_block(&cs, 110, KFN('K'));
	xfer(120, MT_XFER_FAR_RET, FN('E'));
	mt_cs_finish(&cs, 150);
	expect("100:+A* 110:+K 120:-K 120:+E~ 150:-E! 150:-A!");
}

/* The snapshot began in the kernel: a return to user space closes every
 * kernel frame and reveals the system call's user frame (the user frame
 * used to replace the outermost kernel one). */
MT_TEST(far_return_from_a_kernel_only_stack_reveals_the_caller)
{
	start();
	mt_cs_block(&cs, 100, KFN('K'));
	call(110, KFN('K') + 5, KFN('L'));
	xfer(130, MT_XFER_FAR_RET, FN('A') + 0x12);
	mt_cs_finish(&cs, 150);
	expect("100:+K* 110:+L 130:-L 130:-K 100:+A* 150:-A!");
}

/* With kernel tracing, trace stops (a context switch) right after an
 * interrupt, before its handler ran: the handler was entered all the same
 * (it used to be taken for a system call without kernel tracing). */
MT_TEST(stop_right_after_an_interrupt_enters_its_handler)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('A') + 0x20);
	mt_cs_disable(&cs, 110, MT_OFF_OTHER, KFN('K'));
	mt_cs_block(&cs, 200, KFN('K'));
	mt_cs_finish(&cs, 250);
	expect("100:+A* 110:+K 110:+[off] 200:-[off] 250:-K! 250:-A!");
}

MT_TEST(signal_handler_and_sigreturn)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	mt_cs_disable(&cs, 150, MT_OFF_OTHER, 0);		/* interrupt */
	mt_cs_block(&cs, 160, FN('E'));			/* the handler runs */
	call(162, FN('E') + 4, FN('B'));
	xfer(164, MT_XFER_RET, FN('E') + 4);
	xfer(170, MT_XFER_RET, FN('F'));		/* into the restorer */
	mt_cs_transfer(&cs, MT_XFER_FAR_CALL, FN('F') + 9);	/* rt_sigreturn */
	mt_cs_disable(&cs, 180, MT_OFF_OTHER, 0);
	mt_cs_block(&cs, 190, FN('A') + 0x22);		/* back where A was */
	mt_cs_finish(&cs, 200);
	expect("100:+A* 150:+[off] 160:-[off] 160:+E~ 162:+B 164:-B 170:-E 170:+F~ "
	       "180:+[sys] 190:-[sys] 190:-F 200:-A!");
}

MT_TEST(context_switch_keeps_the_stack)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	mt_cs_disable(&cs, 120, MT_OFF_OTHER, 0);	/* switched out */
	mt_cs_block(&cs, 300, FN('B') + 0x30);	/* in again, maybe elsewhere */
	xfer(310, MT_XFER_RET, FN('A') + 5);
	mt_cs_finish(&cs, 320);
	expect("100:+A* 110:+B 120:+[off] 300:-[off] 310:-B 320:-A!");
}

MT_TEST(gap_closes_frames_and_restarts)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(110, FN('A') + 5, FN('B'));
	mt_cs_gap(&cs, 150, 7);
	mt_cs_block(&cs, 160, FN('C') + 0x30);
	xfer(170, MT_XFER_RET, FN('D') + 0x30);
	mt_cs_finish(&cs, 180);
	expect("100:+A* 110:+B 150:-B! 150:-A! 150:GAP7 160:+C* 170:-C 160:+D* 180:-D!");
}

MT_TEST(time_never_goes_back)
{
	start();
	mt_cs_block(&cs, 100, FN('A'));
	call(90, FN('A') + 5, FN('B'));
	mt_cs_instant(&cs, 95, 3);
	xfer(120, MT_XFER_RET, FN('A') + 5);
	mt_cs_finish(&cs, 130);
	MT_ASSERT_EQ(cs.backsteps, 2);
	expect("100:+A* 100:+B 100:I3 120:-B 130:-A!");
}

MT_TEST(runaway_recursion_is_bounded)
{
	start();
	mt_cs_block(&cs, 1, FN('A'));
	for (int i = 0; i < MT_CS_MAX_DEPTH + 100; i++)
		call(2, FN('A') + 5, FN('A'));
	MT_ASSERT_EQ(cs.depth, MT_CS_MAX_DEPTH);
	MT_ASSERT_EQ(cs.hidden, 101);
	for (int i = 0; i < MT_CS_MAX_DEPTH + 100; i++)
		xfer(3, MT_XFER_RET, FN('A') + 5);
	MT_ASSERT_EQ(cs.depth, 1);
	mt_cs_finish(&cs, 4);
	mt_cs_fini(&cs);
	MT_ASSERT_EQ(evfmt_begins, MT_CS_MAX_DEPTH);
	MT_ASSERT_EQ(evfmt_ends, MT_CS_MAX_DEPTH);
}

/* A walk that keeps returning past its oldest frame reveals callers
 * without end: those after the first MT_CS_MAX_INFERRED of a stretch are
 * flagged, BEGIN and END alike; a gap starts anew. */
static int excess;

static void count_excess(void *ctx, const struct mt_ev *ev)
{
	excess += !!(ev->flags & MT_EV_EXCESS);
	evfmt_emit(ctx, ev);
}

MT_TEST(inferred_frames_past_the_cap_are_flagged)
{
	static const struct mt_cs_ops ops = { resolve, count_excess, NULL };

	evfmt_reset();
	excess = 0;
	mt_cs_init(&cs, &ops);
	mt_cs_block(&cs, 1, FN('A'));
	for (int i = 0; i < MT_CS_MAX_INFERRED + 40; i++)
		xfer(2 + (uint64_t)i, MT_XFER_RET, FN(i & 1 ? 'A' : 'B') + 0x10);
	MT_ASSERT_EQ(evfmt_begins, MT_CS_MAX_INFERRED + 41);
	MT_ASSERT_EQ(excess, 41 + 40);	/* the last is still open */
	call(200, FN('A') + 0x20, FN('C'));
	xfer(201, MT_XFER_RET, FN('A') + 0x20);
	MT_ASSERT_EQ(excess, 41 + 40);	/* a call it makes is not */
	mt_cs_gap(&cs, 300, 1);
	MT_ASSERT_EQ(excess, 82);
	mt_cs_block(&cs, 301, FN('D'));
	xfer(302, MT_XFER_RET, FN('E') + 0x10);
	mt_cs_finish(&cs, 400);
	mt_cs_fini(&cs);
	MT_ASSERT_EQ(excess, 82);
	MT_ASSERT_EQ(evfmt_begins, evfmt_ends);
}
