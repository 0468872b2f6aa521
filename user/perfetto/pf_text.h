/* SPDX-License-Identifier: MIT */
/* Text clean-up shared by the trace formats. */
#ifndef MTRACE_PF_TEXT_H
#define MTRACE_PF_TEXT_H

/* Copy of @s that is valid UTF-8: every byte that does not start a valid,
 * shortest-form sequence (and surrogates) becomes U+FFFD. NULL on ENOMEM. */
char *pf_utf8_dup(const char *s);

#endif
