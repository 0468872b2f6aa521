// SPDX-License-Identifier: MIT
/*
 * Writers for the descriptor-based sections: CPU, PT config and data,
 * trigger, embedded files, kernel text and kallsyms.
 */
#include "bundle/bundle_writer_internal.h"
#include "util/regfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EMBED_CHUNK (1024 * 1024)

int mt_bundle_write_cpu(struct mt_bundle_writer *w, const struct mt_bundle_cpu_desc *cpu)
{
	struct mt_bundle_cpu_desc d;
	int err;

	if (!w || !cpu)
		return w ? wr_error(w, -EINVAL, "write_cpu: invalid argument") : -EINVAL;
	if ((err = wr_claim_singleton(w, MT_BUNDLE_SEC_CPU)))
		return err;
	d = *cpu;
	d.size = sizeof(d);
	return mt_bundle_write_section(w, MT_BUNDLE_SEC_CPU, &d, sizeof(d), NULL, 0,
				       MT_BUNDLE_COMP_NONE);
}

int mt_bundle_write_pt_config(struct mt_bundle_writer *w,
			      const struct mt_bundle_pt_config_desc *cfg)
{
	struct mt_bundle_pt_config_desc d;
	int err;

	if (!w || !cfg)
		return w ? wr_error(w, -EINVAL, "write_pt_config: invalid argument") : -EINVAL;
	if ((err = wr_claim_singleton(w, MT_BUNDLE_SEC_PT_CONFIG)))
		return err;
	d = *cfg;
	d.size = sizeof(d);
	return mt_bundle_write_section(w, MT_BUNDLE_SEC_PT_CONFIG, &d, sizeof(d), NULL, 0,
				       MT_BUNDLE_COMP_NONE);
}

static int pt_begin(struct mt_bundle_writer *w, const struct mt_bundle_pt_desc *pt,
		    uint64_t len)
{
	struct mt_bundle_pt_desc d = *pt;
	int err;

	if ((err = wr_claim_pt_cpu(w, pt->cpu)))
		return err;
	d.size = sizeof(d);
	return wr_section_begin(w, MT_BUNDLE_SEC_PT_DATA, &d, sizeof(d), len,
				MT_BUNDLE_COMP_AUTO);
}

int mt_bundle_write_pt(struct mt_bundle_writer *w, const struct mt_bundle_pt_desc *pt,
		       const void *data, size_t len)
{
	int err;

	if (!w || !pt || (len && !data))
		return w ? wr_error(w, -EINVAL, "write_pt: invalid argument") : -EINVAL;
	if ((err = pt_begin(w, pt, len)) || (err = wr_section_append(w, data, len)))
		return err;
	return wr_section_end(w);
}

int mt_bundle_write_pt_ring(struct mt_bundle_writer *w, const struct mt_bundle_pt_desc *pt,
			    const void *ring, size_t ring_size)
{
	const uint8_t *r = ring;
	size_t off;
	int err;

	if (!w || !pt || (ring_size && !ring))
		return w ? wr_error(w, -EINVAL, "write_pt_ring: invalid argument") : -EINVAL;
	if (pt->write_offset > ring_size)
		return wr_error(w, -EINVAL, "cpu %u: write offset %llu beyond ring of %zu bytes",
				pt->cpu, (unsigned long long)pt->write_offset, ring_size);
	off = (size_t)pt->write_offset;
	if (!(pt->flags & MT_BUNDLE_PT_WRAPPED))
		return mt_bundle_write_pt(w, pt, r, off);
	/* Oldest first: the bytes after the write pointer were written before those below it. */
	if ((err = pt_begin(w, pt, ring_size)) ||
	    (err = wr_section_append(w, r + off, ring_size - off)) ||
	    (err = wr_section_append(w, r, off)))
		return err;
	return wr_section_end(w);
}

int mt_bundle_write_trigger(struct mt_bundle_writer *w, const struct mt_bundle_trigger *t)
{
	struct mt_bundle_trigger_desc d;
	int err;

	if (!w || !t)
		return w ? wr_error(w, -EINVAL, "write_trigger: invalid argument") : -EINVAL;
	if ((err = wr_claim_singleton(w, MT_BUNDLE_SEC_TRIGGER)))
		return err;
	d = t->d;
	d.size = sizeof(d);
	if ((err = wr_section_tail(w, MT_BUNDLE_SEC_TRIGGER, &d, sizeof(d), t->spec, 0,
				   MT_BUNDLE_COMP_NONE)))
		return err;
	return wr_section_end(w);
}

static int file_begin(struct mt_bundle_writer *w, const struct mt_bundle_file *f,
		      uint64_t len)
{
	struct mt_bundle_file_desc d;

	if (!f->path || !f->path[0])
		return wr_error(w, -EINVAL, "embedded file needs a path");
	if (f->build_id_len > sizeof(d.build_id) || (f->build_id_len && !f->build_id))
		return wr_error(w, -EINVAL, "%s: build-id of %zu bytes (at most %zu)", f->path,
				f->build_id_len, sizeof(d.build_id));
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.build_id_len = (uint32_t)f->build_id_len;
	if (f->build_id_len)
		memcpy(d.build_id, f->build_id, f->build_id_len);
	d.mtime_ns = f->mtime_ns;
	return wr_section_tail(w, MT_BUNDLE_SEC_FILE, &d, sizeof(d), f->path, len,
			       MT_BUNDLE_COMP_AUTO);
}

int mt_bundle_write_file(struct mt_bundle_writer *w, const struct mt_bundle_file *f,
			 const void *data, size_t len)
{
	int err;

	if (!w || !f || (len && !data))
		return w ? wr_error(w, -EINVAL, "write_file: invalid argument") : -EINVAL;
	if ((err = file_begin(w, f, len)) || (err = wr_section_append(w, data, len)))
		return err;
	return wr_section_end(w);
}

/* Copies the source into the open section; *src_failed tells source errors from bundle errors. */
static int embed_copy(struct mt_bundle_writer *w, int fd, const char *src, uint64_t size,
		      bool *src_failed)
{
	uint8_t *buf = malloc(EMBED_CHUNK);
	uint64_t done = 0;
	int err = 0;

	*src_failed = false;
	if (!buf)
		return wr_error(w, -ENOMEM, "out of memory");
	while (done < size && !err) {
		size_t want = size - done < EMBED_CHUNK ? (size_t)(size - done) : EMBED_CHUNK;
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*src_failed = true;
			err = n < 0 ? wr_error(w, -errno, "%s: read: %s", src, strerror(errno)) :
				      wr_error(w, -EIO, "%s: file shrank while being embedded", src);
			break;
		}
		err = wr_section_append(w, buf, (size_t)n);
		done += (uint64_t)n;
	}
	free(buf);
	return err;
}

int mt_bundle_embed_file(struct mt_bundle_writer *w, const struct mt_bundle_file *f,
			 const char *src_path)
{
	struct mt_bundle_file fi;
	const char *kind;
	struct stat st;
	int fd, err;

	if (!w || !f || !src_path)
		return w ? wr_error(w, -EINVAL, "embed_file: invalid argument") : -EINVAL;
	if ((err = wr_usable(w)))
		return err;
	fd = mt_open_regular(src_path, &kind);
	if (fd < 0 && kind)
		return wr_error(w, -EINVAL, "%s: %s, not a regular file", src_path, kind);
	if (fd < 0)
		return wr_error(w, -errno, "%s: %s", src_path, strerror(errno));
	if (fstat(fd, &st)) {
		err = wr_error(w, -errno, "%s: %s", src_path, strerror(errno));
		close(fd);
		return err;
	}
	fi = *f;
	if (!fi.mtime_ns)
		fi.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
			      (uint64_t)st.st_mtim.tv_nsec;
	err = file_begin(w, &fi, (uint64_t)st.st_size);
	if (!err) {
		bool src_failed;

		err = embed_copy(w, fd, src_path, (uint64_t)st.st_size, &src_failed);
		/* A source that fails to read costs its section, not the bundle. */
		if (err && src_failed && wr_section_abort(w))
			err = -EIO;
		else if (!err)
			err = wr_section_end(w);
	}
	close(fd);
	return err;
}

int mt_bundle_write_ktext(struct mt_bundle_writer *w, const struct mt_bundle_ktext *kt,
			  const void *code, size_t len)
{
	struct mt_bundle_ktext_desc d;
	int err;

	if (!w || !kt || (len && !code))
		return w ? wr_error(w, -EINVAL, "write_ktext: invalid argument") : -EINVAL;
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.addr = kt->addr;
	if ((err = wr_section_tail(w, MT_BUNDLE_SEC_KTEXT, &d, sizeof(d), kt->name, len,
				   MT_BUNDLE_COMP_AUTO)) ||
	    (err = wr_section_append(w, code, len)))
		return err;
	return wr_section_end(w);
}

int mt_bundle_write_kallsyms(struct mt_bundle_writer *w, const char *text, size_t len)
{
	struct mt_bundle_blob_desc d = { sizeof(d), 0 };
	int err;

	if (!w || (len && !text))
		return w ? wr_error(w, -EINVAL, "write_kallsyms: invalid argument") : -EINVAL;
	if ((err = wr_claim_singleton(w, MT_BUNDLE_SEC_KALLSYMS)))
		return err;
	return mt_bundle_write_section(w, MT_BUNDLE_SEC_KALLSYMS, &d, sizeof(d), text, len,
				       MT_BUNDLE_COMP_AUTO);
}
