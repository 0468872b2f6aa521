/* SPDX-License-Identifier: MIT */
/*
 * /dev/mtrace access: open with the version and capability handshake, the
 * session ioctls, the read-only ring mappings and sideband reads. Every
 * failure becomes one line saying what failed, why, and what to do.
 */
#ifndef MTRACE_CAPTURE_DEV_H
#define MTRACE_CAPTURE_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/mtrace.h"

struct mt_dev {
	int fd;
	const char *path;
	struct mtrace_version version;
	struct mtrace_caps caps;
};

/* The device path: $MTRACE_DEVICE if set (for tests and odd setups), else MTRACE_DEVICE. */
const char *mt_dev_path(void);

/* Whether the device is there and is mtrace's (as far as sysfs tells),
 * told without opening it: 0, or -errno with the reason (as mt_dev_open()
 * gives it) in ERR. */
int mt_dev_check(char *err, size_t errlen);
/* Opens, checks the ABI version and reads the capabilities. */
int mt_dev_open(struct mt_dev *d, char *err, size_t errlen);
void mt_dev_close(struct mt_dev *d);

int mt_dev_configure(struct mt_dev *d, const struct mtrace_config *cfg, char *err, size_t errlen);
int mt_dev_arm(struct mt_dev *d, char *err, size_t errlen);
int mt_dev_freeze(struct mt_dev *d, uint32_t path, uint64_t cookie, char *err, size_t errlen);
int mt_dev_status(struct mt_dev *d, struct mtrace_status *st, char *err, size_t errlen);
int mt_dev_cpu(struct mt_dev *d, uint32_t cpu, struct mtrace_cpu_info *ci, char *err,
	       size_t errlen);

/* Maps one CPU's frozen ring read-only; unmap with munmap(ring, ci->ring_size). */
int mt_dev_map_ring(struct mt_dev *d, const struct mtrace_cpu_info *ci, const void **ring,
		    char *err, size_t errlen);

/*
 * Every sideband record of one CPU, oldest first, in a malloc'ed array.
 * *lost is the number of records overwritten before they could be read.
 */
int mt_dev_read_sideband(struct mt_dev *d, uint32_t cpu, struct mtrace_sb_record **recs,
			 size_t *n, uint64_t *lost, char *err, size_t errlen);

#endif
