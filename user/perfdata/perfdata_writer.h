/* SPDX-License-Identifier: MIT */
/*
 * Writing a perf.data file (layout in perfdata_format.h): attrs first, then
 * records in the order perf should see them, then feature sections. The
 * writer keeps the AUXTRACE index and the event descriptions itself. The
 * file appears at its path, complete, only on perfdata_writer_finish().
 */
#ifndef MTRACE_PERFDATA_WRITER_H
#define MTRACE_PERFDATA_WRITER_H

#include "perfdata/perfdata_format.h"

#include <stddef.h>
#include <stdint.h>

struct perfdata_writer;

int perfdata_writer_create(struct perfdata_writer **out, const char *path, char *err,
			   size_t errlen);
/* Removes the unfinished file. Accepts NULL. */
void perfdata_writer_free(struct perfdata_writer *w);
const char *perfdata_writer_errmsg(const struct perfdata_writer *w);

/*
 * Adds an event (attr.size is set to PERFDATA_ATTR_SIZE) named NAME, before
 * any record; its one sample id is returned in *id.
 */
int perfdata_writer_add_attr(struct perfdata_writer *w, const struct perf_event_attr *attr,
			     const char *name, uint64_t *id);
/* A whole record: rec->size bytes, a multiple of 8. */
int perfdata_writer_record(struct perfdata_writer *w, const struct perf_event_header *rec);
/*
 * A kernel record of TYPE/MISC: BODY (LEN bytes, zero-padded to 8) and the
 * sample_id trailer SID.
 */
int perfdata_writer_sideband(struct perfdata_writer *w, uint32_t type, uint16_t misc,
			     const void *body, size_t len, const struct perfdata_sample_id *sid);
/* PERF_RECORD_AUXTRACE with its payload; indexed in the AUXTRACE feature. */
int perfdata_writer_auxtrace(struct perfdata_writer *w, const struct perfdata_auxtrace *rec,
			     const void *data);
/* Feature section BIT holds a copy of DATA (the writer owns EVENT_DESC and AUXTRACE). */
int perfdata_writer_feature(struct perfdata_writer *w, unsigned int bit, const void *data,
			    size_t len);
/* A feature holding one perf header string. */
int perfdata_writer_feature_string(struct perfdata_writer *w, unsigned int bit, const char *s);
/* Writes the features and the header, and renames the file into place. */
int perfdata_writer_finish(struct perfdata_writer *w);

#endif
