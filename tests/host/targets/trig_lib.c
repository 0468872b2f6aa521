// SPDX-License-Identifier: MIT
/* Shared library that trig_target loads only after the triggers are armed. */
__attribute__((noinline)) long tt_lib_fn(long v)
{
	__asm__ volatile("" ::: "memory");
	return v + 1;
}
