/* SPDX-License-Identifier: MIT */
/* libipt decoder configuration from a bundle's CPU identity and RTIT_CTL. */
#ifndef MTRACE_DECODE_PTCONFIG_H
#define MTRACE_DECODE_PTCONFIG_H

#include "mtrace/bundle_format.h"

#include <intel-pt.h>
#include <stddef.h>

enum mt_errata_source {
	MT_ERRATA_LIBIPT,	/* libipt knows the model */
	MT_ERRATA_NEWER,	/* a model newer than libipt 2.0.5, from our table */
	MT_ERRATA_GUESSED,	/* unknown model: the newest generation's errata */
	MT_ERRATA_SIMULATED,	/* simulated backend on a CPU without PT: none */
};

/*
 * Fills CFG (begin/end left NULL) for decoding PT produced under CPU and
 * PT. Returns the errata source, or -ENOTSUP with a message in ERR when the
 * bundle describes a CPU that cannot have produced Intel PT. A bundle from
 * the module's simulated backend on such a CPU holds bytes some other
 * program wrote (the PT generator): they are decoded as a generic Intel
 * CPU's, without errata workarounds.
 */
int mt_decode_pt_config(const struct mt_bundle_cpu_desc *cpu,
			const struct mt_bundle_pt_config_desc *pt, struct pt_config *cfg,
			char *err, size_t errlen);

#endif
