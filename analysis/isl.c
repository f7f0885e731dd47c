/* The isl context of a ts_ctx, and small conversions between isl and plain
 * data. */
#include <config.h>

#include <stdlib.h>

#include "analysis/internal.h"

/* Free the isl context "data" when its ts_ctx goes away. */
static void isl_ctx_release(void *data)
{
	isl_ctx_free(data);
}

/* Return the isl context of "ctx", creating it on first use.  isl is told
 * to continue on errors: every isl call is checked, nothing aborts. */
isl_ctx *ts_isl_ctx(ts_ctx *ctx)
{
	void **slot = ts_ctx_slot(ctx, TS_SLOT_ISL);
	isl_ctx *ictx;

	if (*slot)
		return *slot;
	ictx = isl_ctx_alloc();
	if (!ictx)
		return NULL;
	isl_options_set_on_error(ictx, ISL_ON_ERROR_CONTINUE);
	*slot = ictx;
	ts_ctx_on_free(ctx, isl_ctx_release, ictx);
	return ictx;
}

/* Return "set" as isl text in a GC string. */
char *ts_isl_set_str(__isl_keep isl_set *set)
{
	char *s = isl_set_to_str(set);
	char *r = ts_strdup(s ? s : "(error)");

	free(s);
	return r;
}

/* Return "map" as isl text in a GC string. */
char *ts_isl_map_str(__isl_keep isl_map *map)
{
	char *s = isl_map_to_str(map);
	char *r = ts_strdup(s ? s : "(error)");

	free(s);
	return r;
}

/* Return the integer value of "v" (0 when it is not an integer). */
int64_t ts_isl_val_i64(__isl_take isl_val *v)
{
	int64_t r = 0;

	if (v && isl_val_is_int(v) == isl_bool_true)
		r = isl_val_get_num_si(v);
	isl_val_free(v);
	return r;
}
