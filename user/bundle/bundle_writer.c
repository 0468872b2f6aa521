// SPDX-License-Identifier: MIT
/*
 * Bundle writer: creating the file and its header, the rules on which
 * sections may repeat, finishing with END, and errors.
 */
#include "bundle/bundle_writer_internal.h"
#include "util/regfile.h"
#include "util/mt_array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* Level 1: on PT it compresses within 1% of level 3 at three times the speed. */
#define WR_DEFAULT_LEVEL 1

int wr_error(struct mt_bundle_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	/* A section left half-written makes the file unusable (see wr_section_abort). */
	if (w->in_section)
		w->failed = true;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *mt_bundle_writer_errmsg(const struct mt_bundle_writer *w)
{
	if (!w)
		return "no writer";
	return w->errmsg[0] ? w->errmsg : "no error";
}

int wr_usable(struct mt_bundle_writer *w)
{
	if (w->failed)
		return -EIO;    /* the message still names the first failure */
	if (w->finished)
		return wr_error(w, -EINVAL, "bundle already finished");
	return 0;
}

int wr_claim_singleton(struct mt_bundle_writer *w, uint32_t type)
{
	int err = wr_usable(w);

	if (err)
		return err;
	if (type >= 32)
		return wr_error(w, -EINVAL, "internal: type %u is no singleton", type);
	if (w->singletons & (1U << type))
		return wr_error(w, -EINVAL, "section %s may appear only once",
				mt_bundle_section_name(type));
	w->singletons |= 1U << type;
	return 0;
}

int wr_claim_pt_cpu(struct mt_bundle_writer *w, uint32_t cpu)
{
	int err = wr_usable(w);

	if (err)
		return err;
	for (size_t i = 0; i < w->pt_ncpus; i++)
		if (w->pt_cpus[i] == cpu)
			return wr_error(w, -EINVAL, "PT data of cpu %u written twice", cpu);
	if (MT_ARRAY_RESERVE(w->pt_cpus, w->pt_cpus_cap, w->pt_ncpus, 1))
		return wr_error(w, -ENOMEM, "out of memory");
	w->pt_cpus[w->pt_ncpus++] = cpu;
	return 0;
}
static int wr_header(struct mt_bundle_writer *w)
{
	struct mt_bundle_file_header h;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_BUNDLE_MAGIC, MT_BUNDLE_MAGIC_LEN);
	h.version_major = MT_BUNDLE_VERSION_MAJOR;
	h.version_minor = MT_BUNDLE_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.created_realtime_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.header_crc = (uint32_t)crc32_z(0, (const void *)&h, sizeof(h));
	return wr_out(w, &h, sizeof(h));
}

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

int mt_bundle_writer_create(struct mt_bundle_writer **out, const char *path,
			    const struct mt_bundle_writer_opts *opts, char *err, size_t errlen)
{
	struct mt_bundle_writer_opts o = { 0 };
	struct mt_bundle_writer *w;
	int rc;

	if (!out || !path || (opts && opts->size < sizeof(uint32_t))) {
		set_err(err, errlen, "mt_bundle_writer_create: invalid argument");
		return -EINVAL;
	}
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->fd = -1;
	w->level = WR_DEFAULT_LEVEL;
	if (opts) {
		/* Options structs grow at the end: read only what the caller has. */
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
		if (o.zstd_level)
			w->level = o.zstd_level;
		w->no_compression = o.no_compression;
	}
	w->zout_size = ZSTD_CStreamOutSize();
	w->buf = malloc(WR_BUF_SIZE);
	w->zout = malloc(w->zout_size);
	w->cctx = ZSTD_createCCtx();
	if (!w->buf || !w->zout || !w->cctx) {
		mt_bundle_writer_free(w);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->fd = mt_open_write(path, 0644, o.rep);
	if (w->fd < 0) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		mt_bundle_writer_free(w);
		return rc;
	}
	if ((rc = wr_header(w)) || (rc = wr_flush(w))) {
		set_err(err, errlen, w->errmsg);
		mt_bundle_writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int mt_bundle_writer_finish(struct mt_bundle_writer *w)
{
	struct mt_bundle_end_desc end = { sizeof(end), 0, 0 };
	int err;

	if (!w)
		return -EINVAL;
	if ((err = wr_usable(w)))
		return err;
	if (w->in_section)
		return wr_error(w, -EINVAL, "a section is still open");
	end.section_count = w->nsections;
	if ((err = mt_bundle_write_section(w, MT_BUNDLE_SEC_END, &end, sizeof(end), NULL, 0,
					   MT_BUNDLE_COMP_NONE)))
		return err;
	w->finished = true;
	if ((err = wr_flush(w)))
		return err;
	err = close(w->fd);
	w->fd = -1;
	if (err && errno != EINTR)
		return wr_io_error(w, -errno, "close");
	return 0;
}

void mt_bundle_writer_free(struct mt_bundle_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		/* Unfinished: keep the complete sections (readers still see no END). */
		if (!w->failed && !wr_section_abort(w))
			wr_flush(w);
		close(w->fd);
	}
	ZSTD_freeCCtx(w->cctx);
	free(w->buf);
	free(w->zout);
	free(w->desc);
	free(w->pt_cpus);
	free(w);
}
