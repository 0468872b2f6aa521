/* SPDX-License-Identifier: MIT */
/* Decodes an open bundle into a Chrome JSON file of the test's directory,
 * for tests that check the Perfetto writer's view of the events. */
#ifndef TEST_DECODE_JSON_H
#define TEST_DECODE_JSON_H

#include "test_decode_fixture.h"

#include "decode/decode.h"
#include "out_perfetto/pfout.h"

static inline void fx_decode_json(struct mt_bundle_reader *r, struct mt_decode *d,
				  const char *name)
{
	struct mt_decode_sink sink;
	struct pf_options o;
	struct mt_pfout po;
	struct pf_stats st;
	struct pf_writer *w;
	char err[256];

	pf_options_init(&o);
	o.format = PF_FORMAT_JSON;
	MT_ASSERT_MSG(pf_writer_open(&w, fx_path(name), &o, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_pfout_init(&po, d, r, w, &sink), 0);
	MT_ASSERT_MSG(mt_decode_run(d, &sink) == 0, "%s", po.err);
	MT_ASSERT_MSG(mt_pfout_finish(&po, UINT64_MAX) == 0, "%s", po.err);
	MT_ASSERT_MSG(pf_writer_close(w, mt_pfout_end_ns(&po), &st, err, sizeof(err)) == 0, "%s", err);
	mt_pfout_fini(&po);
}

#endif
