/* A network's layouts kept in a records log: the timed layout choice is
 * appended as one record, and every later build of the same network on
 * the same target replays it instead of timing again.
 *
 * A layout record names the whole network as its workload and holds, in
 * its "layout" object, the layout chosen for each subgraph, whether its
 * weights are blocked, and the subgraph's anchor (which a replay checks,
 * so that a record written for another partition is refused rather than
 * misapplied).
 */
#include <config.h>

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <tessel/network.h>
#include <tessel/records.h>
#include <tessel/search.h>

#include "dsl/ir.h"
#include "support/support.h"
#include "networks/network_internal.h"

/* The anchor's name of subgraph "g" of "p". */
static const char *anchor_of(const ts_partition *p, int g)
{
	return p->dag->stages[p->subgraphs[g].anchor]->name;
}

/* The "layout" object of "plan" for "p" as compact JSON. */
static char *layout_json(const ts_partition *p, const ts_layout_plan *plan)
{
	json_t *o = json_object(), *c = json_array(), *w = json_array();
	json_t *a = json_array();
	char *s, *copy;

	for (int g = 0; g < p->nsubgraphs; g++) {
		json_array_append_new(c,
			json_integer(plan->solution->choice[g]));
		json_array_append_new(w, json_boolean(plan->weights[g]));
		json_array_append_new(a, json_string(anchor_of(p, g)));
	}
	json_object_set_new(o, "choice", c);
	json_object_set_new(o, "weights", w);
	json_object_set_new(o, "anchors", a);
	json_object_set_new(o, "chosen_s", json_real(plan->solution->total));
	json_object_set_new(o, "declared_s",
		json_real(plan->solution->default_total));
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	copy = s ? ts_strdup(s) : NULL;
	free(s);
	return copy;
}

/* Append the layout record of "plan" for the network "dag" (partition
 * "p") on "key" to the log "log". */
static ts_status append_plan(ts_ctx *ctx, const ts_dag *dag,
	const ts_partition *p, const ts_target *key,
	const ts_layout_plan *plan, const char *log)
{
	ts_record *r = ts_record_new_layout(ctx, dag, key,
		layout_json(p, plan), plan->solution->total);

	return r ? ts_record_append(ctx, log, r) : TS_ERROR;
}

/* The newest layout record of "recs" ("n") for "workload" on "key". */
static const ts_record *newest_layout(ts_record *const *recs, int n,
	const char *workload, const char *key)
{
	for (int i = n - 1; i >= 0; i--)
		if (recs[i]->layout && !strcmp(recs[i]->workload, workload) &&
		    !strcmp(recs[i]->target, key))
			return recs[i];
	return NULL;
}

/* Read the choice and weights of layout record "r" for "p" into "choice"
 * and "weights"; TS_ERROR saying what does not fit. */
static ts_status read_layout(ts_ctx *ctx, const ts_partition *p,
	const ts_record *r, int *choice, bool *weights)
{
	json_t *o = json_loads(r->layout, 0, NULL);
	json_t *c = json_object_get(o, "choice");
	json_t *w = json_object_get(o, "weights");
	json_t *a = json_object_get(o, "anchors");
	ts_status st = TS_OK;

	if (!json_is_array(c) || !json_is_array(w) || !json_is_array(a) ||
	    (int)json_array_size(c) != p->nsubgraphs ||
	    (int)json_array_size(w) != p->nsubgraphs ||
	    (int)json_array_size(a) != p->nsubgraphs)
		st = ts_ctx_set_error(ctx, "its layout needs 'choice', "
			"'weights' and 'anchors' of %d subgraphs each",
			p->nsubgraphs);
	for (int g = 0; st == TS_OK && g < p->nsubgraphs; g++) {
		json_t *cg = json_array_get(c, (size_t)g);
		json_t *ag = json_array_get(a, (size_t)g);
		if (!json_is_integer(cg) ||
		    !json_is_boolean(json_array_get(w, (size_t)g)) ||
		    !json_is_string(ag))
			st = ts_ctx_set_error(ctx, "subgraph %d: a layout "
				"needs an integer, a boolean and a name", g);
		else if (strcmp(json_string_value(ag), anchor_of(p, g)))
			st = ts_ctx_set_error(ctx, "subgraph %d is anchored "
				"on '%s', not '%s'", g, anchor_of(p, g),
				json_string_value(ag));
		else {
			choice[g] = (int)json_integer_value(cg);
			weights[g] = json_is_true(json_array_get(w,
				(size_t)g));
		}
	}
	json_decref(o);
	return st;
}

/* The partition "p" with the layouts of record "r" of "log"; NULL with
 * an error naming the line when they do not apply. */
static ts_partition *replay(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, const ts_record *r, const char *log)
{
	int *choice = ts_new_atomic(int, p->nsubgraphs + 1);
	bool *weights = ts_new_atomic(bool, p->nsubgraphs + 1);
	ts_partition *q = NULL;

	if (read_layout(ctx, p, r, choice, weights) == TS_OK)
		q = ts_network_apply_layouts(ctx, p, target, choice, weights,
			NULL);
	if (!q)
		ts_ctx_set_error(ctx, "%s:%d: the layout record does not "
			"apply: %s", log, r->line, ts_ctx_error(ctx));
	return q;
}

/* The layout record of the log "log" for "dag" on "key" into "*out"
 * (NULL when none, or when the log does not exist). */
static ts_status find_record(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *key, const char *log, const ts_record **out)
{
	ts_record **recs;
	int n = 0;

	*out = NULL;
	if (!log || access(log, F_OK) != 0)
		return TS_OK;
	if (!(recs = ts_records_load(ctx, log, &n)))
		return TS_ERROR;
	*out = newest_layout(recs, n, ts_dag_hash(dag), ts_target_key(key));
	return TS_OK;
}

ts_partition *ts_network_lay_out(ts_ctx *ctx, const ts_dag *dag,
	const ts_partition *p, const ts_target *target,
	const ts_layout_options *o, const char **how, ts_layout_plan **out)
{
	/* Keyed as run, build and tune key it, whichever of the host and
	 * the host for these threads the caller holds. */
	const ts_target *key = ts_records_target(ts_target_for_threads(
		target, o->threads), o->threads);
	const ts_record *r;
	ts_layout_plan *plan;
	bool estimate;

	if (out)
		*out = NULL;
	if (find_record(ctx, dag, key, o->records, &r) < 0)
		return NULL;
	if (r) {
		if (how)
			*how = ts_asprintf("layouts of the record at %s:%d",
				o->records, r->line);
		return replay(ctx, p, target, r, o->records);
	}
	if (!o->choose && (o->declared || o->keep_weights)) {
		if (how)
			*how = o->keep_weights ? "layouts as declared" :
				"layouts as declared, weights blocked";
		return o->keep_weights ? (ts_partition *)p :
			ts_partition_block_weights(ctx, p, target, NULL);
	}
	estimate = o->estimate || !o->choose;
	plan = estimate ? ts_network_estimate_layouts(ctx, p, target,
		o->threads, 1 << 16) : ts_network_choose_layouts(ctx, p, target,
		o->threads, 1 << 16);
	if (!plan)
		return NULL;
	if (out)
		*out = plan;
	if (estimate) {
		if (how)
			*how = ts_asprintf("layouts chosen by the model (%.4f "
				"ms against %.4f ms as declared, estimated)",
				plan->solution->total * 1e3,
				plan->solution->default_total * 1e3);
		return plan->partition;
	}
	if (o->records && append_plan(ctx, dag, p, key, plan, o->records) < 0)
		return NULL;
	if (how)
		*how = ts_asprintf("layouts chosen by timing (%.4f ms against "
			"%.4f ms as declared)%s%s", plan->solution->total * 1e3,
			plan->solution->default_total * 1e3,
			o->records ? ", recorded in " : "",
			o->records ? o->records : "");
	return plan->partition;
}
