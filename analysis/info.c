/* The entry points of the analysis: one stage, or a whole DAG. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

static const char *class_names[TS_CLASS_COUNT] = {
	[TS_CLASS_DIRECT] = "direct",
	[TS_CLASS_SIMPLE_REDUCTION] = "simple_reduction",
	[TS_CLASS_COMPLEX_REDUCTION] = "complex_reduction",
	[TS_CLASS_LOCATION_TUNABLE] = "location_tunable",
};

/* Return the name of the class "c". */
const char *ts_class_name(ts_class c)
{
	return (unsigned)c < TS_CLASS_COUNT ? class_names[c] : "unknown";
}

/* Fill the extents of "si": spatial and reduction products. */
static void fill_extents(ts_stage_info *si)
{
	const ts_stage *s = si->stage;

	si->spatial_extent = 1;
	si->reduce_extent = 1;
	for (int i = 0; i < s->ndim; i++)
		si->spatial_extent *= s->axes[i]->extent;
	for (int i = 0; i < s->nraxes; i++)
		si->reduce_extent *= s->raxes[i]->extent;
}

/* Return the facts of the stage modelled by "m". */
static ts_stage_info *analyze_model(struct ts_stage_model *m)
{
	ts_stage_info *si = ts_new(ts_stage_info);

	si->stage = m->stage;
	si->naxes = m->naxes;
	si->domain = ts_isl_set_str(m->domain);
	fill_extents(si);
	si->naccesses = m->nacc;
	si->accesses = ts_new_array(ts_access_info, m->nacc);
	for (int i = 0; i < m->nacc; i++) {
		ts_access_info *ai = &si->accesses[i];
		ts_access_fill(m, i, ai);
		si->data_dependent |= !ai->affine;
		for (int a = 0; a < m->stage->ndim; a++)
			si->reuse_axes[a] |= ai->reuse[a];
	}
	ts_counts_fill(si, m);
	ts_classify_stage(si);
	return si;
}

/* Analyse the stage "s" on its own. */
ts_stage_info *ts_analyze_stage(ts_ctx *ctx, const ts_stage *s)
{
	struct ts_stage_model *m = ts_stage_model_build(ctx, s);
	ts_stage_info *si;

	if (!m)
		return NULL;
	si = analyze_model(m);
	ts_stage_model_free(m);
	return si;
}

/* Check the bounds of "s" and analyse it; NULL with an error on failure. */
static ts_stage_info *analyze_checked(ts_ctx *ctx, const ts_stage *s)
{
	struct ts_stage_model *m = ts_stage_model_build(ctx, s);
	ts_stage_info *si = NULL;

	if (!m)
		return NULL;
	if (ts_model_check_bounds(m) == TS_OK)
		si = analyze_model(m);
	ts_stage_model_free(m);
	return si;
}

/* Requires: a DAG.  Produces: checked bounds, one ts_stage_info per
 * stage with its class, consumers, fusability and inlinability. */
ts_dag_info *ts_analyze_dag(ts_ctx *ctx, const ts_dag *dag)
{
	ts_dag_info *di;

	if (!dag)
		return NULL;
	di = ts_new(ts_dag_info);
	di->dag = dag;
	di->nstages = dag->nstages;
	di->stages = ts_new_array(ts_stage_info *, dag->nstages + 1);
	for (int i = 0; i < dag->nstages; i++) {
		di->stages[i] = analyze_checked(ctx, dag->stages[i]);
		if (!di->stages[i])
			return NULL;
	}
	ts_classify_dag(di);
	return di;
}

/* Whether "si" has fewer spatial iterations than "cores". */
bool ts_stage_info_needs_rfactor(const ts_stage_info *si, int cores)
{
	return si->stage->nraxes > 0 && si->spatial_extent < cores;
}
