/* The traffic model (distinct bytes per loop level, from footprints in
 * closed form) and bounds inference for fused producers. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Return the traffic model of "s": the footprints of its inputs and of
 * its output. */
ts_traffic *ts_traffic_new(ts_ctx *ctx, const ts_stage *s)
{
	ts_traffic *tr = ts_new(ts_traffic);
	int n = s->ninputs + 1;

	tr->stage = s;
	tr->naxes = s->ndim + s->nraxes;
	tr->nfootprints = n;
	tr->footprints = ts_new_array(ts_footprint *, n);
	tr->elem_size = ts_new_atomic(size_t, n);
	for (int i = 0; i < n; i++) {
		const ts_tensor *t = i < s->ninputs ? s->inputs[i] : s->out;
		tr->footprints[i] = ts_stage_footprint(ctx, s, t);
		if (!tr->footprints[i])
			return NULL;
		tr->elem_size[i] = ts_dtype_size(t->dtype);
	}
	return tr;
}

/* Return the distinct bytes that "tr" touches for tiles of "size". */
static int64_t traffic_bytes(const ts_traffic *tr, const int64_t *size)
{
	int64_t bytes = 0;

	for (int i = 0; i < tr->nfootprints; i++)
		bytes += ts_footprint_volume(tr->footprints[i], size) *
			(int64_t)tr->elem_size[i];
	return bytes;
}

/* Fill "size" with the tile inside loop "l" of the nest: per axis, the
 * product of the trips of the loops below "l"; an axis that no loop runs
 * is whole. */
static void tile_below(const ts_traffic *tr, int nloops, const int *axis,
	const int64_t *trip, int l, int64_t *size)
{
	bool seen[TS_MAX_AXES] = { false };

	for (int a = 0; a < tr->naxes; a++)
		size[a] = 1;
	for (int j = 0; j < nloops; j++)
		seen[axis[j]] = true;
	for (int j = l + 1; j < nloops; j++)
		size[axis[j]] *= trip[j];
	for (int a = 0; a < tr->naxes; a++)
		if (!seen[a])
			size[a] = ts_stage_axis(tr->stage, a)->extent;
}

/* Write per loop level of the nest "axis", "trip" the bytes one iteration
 * touches, and (when "reuse" is not NULL) the reuse of the loop. */
void ts_traffic_eval(const ts_traffic *tr, int nloops, const int *axis,
	const int64_t *trip, int64_t *bytes, double *reuse)
{
	int64_t size[TS_MAX_AXES];

	for (int l = 0; l < nloops; l++) {
		int64_t whole;
		tile_below(tr, nloops, axis, trip, l, size);
		bytes[l] = traffic_bytes(tr, size);
		if (!reuse)
			continue;
		size[axis[l]] *= trip[l];
		whole = traffic_bytes(tr, size);
		reuse[l] = whole ? (double)(trip[l] * bytes[l]) / (double)whole
			: 1.0;
	}
}

/* Evaluate, for the tile "origin", "size" of the consumer "c", the region
 * of the producer "p" it reads. */
ts_status ts_region_for_consumer(ts_ctx *ctx, const ts_stage *c,
	const ts_stage *p, const int64_t *origin, const int64_t *size,
	int64_t *lo, int64_t *extent)
{
	ts_footprint *fp;

	if (!c || !p)
		return TS_ERROR;
	fp = ts_stage_footprint(ctx, c, p->out);
	if (!fp)
		return ts_ctx_set_error(ctx, "stage '%s' does not read the "
			"output of stage '%s'", c->name, p->name);
	ts_footprint_eval(fp, origin, size, lo, extent);
	return TS_OK;
}
