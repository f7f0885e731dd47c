/* The table of step operations shared by schedule.c (apply) and
 * schedule_json.c (printing and JSON).  Not installed. */
#ifndef TESSEL_SCHEDULE_OPS_H
#define TESSEL_SCHEDULE_OPS_H

#include <jansson.h>

#include <tessel/schedule.h>

#include "support/support.h"

struct ts_step_ops {
	const char *tag;	/* record tag: "SP", "FU", ... */
	const char *name;	/* printed name: "split", ... */
	/* Validate "st" against "ss" and change "ss"; TS_ERROR with a
	 * message leaves "ss" in an unspecified state. */
	ts_status (*apply)(ts_schedule *sch, ts_sched_stage *ss,
		const ts_step *st);
	/* Print the arguments of "st" after "stage: name". */
	void (*print)(ts_buf *b, const ts_step *st);
	/* Add the arguments of "st" to "obj". */
	void (*to_json)(json_t *obj, const ts_step *st);
	/* Read the arguments of "st" from "obj". */
	ts_status (*from_json)(ts_ctx *ctx, const json_t *obj, ts_step *st);
};

const struct ts_step_ops *ts_step_ops_of(ts_step_kind k);
bool ts_stage_is_top_reduce(const ts_stage *s);

#define TS_STEP_OPS_DECLARE(x) \
	void ts_step_##x##_print(ts_buf *b, const ts_step *st); \
	void ts_step_##x##_to_json(json_t *obj, const ts_step *st); \
	ts_status ts_step_##x##_from_json(ts_ctx *ctx, const json_t *obj, \
		ts_step *st);

TS_STEP_OPS_DECLARE(split)
TS_STEP_OPS_DECLARE(reorder)
TS_STEP_OPS_DECLARE(fuse)
TS_STEP_OPS_DECLARE(target_loop)
TS_STEP_OPS_DECLARE(plain)
TS_STEP_OPS_DECLARE(loop)
TS_STEP_OPS_DECLARE(cache_read)
TS_STEP_OPS_DECLARE(bind)

#endif
