/* The class of a stage and the reasons for it, one line each (the rules
 * are written down in include/tessel/analysis.h), then the facts that
 * need the consumers: location-tunable stages, fusable consumers and
 * inlinable stages. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Append the formatted reason "fmt" to "si", unless it is already there
 * (a load written twice gives one line). */
void ts_reason(ts_stage_info *si, const char *fmt, ...)
{
	const char **r;
	const char *line;
	va_list ap;

	va_start(ap, fmt);
	line = ts_vasprintf(fmt, ap);
	va_end(ap);
	for (int i = 0; i < si->nreasons; i++)
		if (strcmp(si->reasons[i], line) == 0)
			return;
	r = ts_new_array(const char *, si->nreasons + 1);
	if (si->nreasons)
		memcpy(r, si->reasons, sizeof(*r) * si->nreasons);
	r[si->nreasons++] = line;
	si->reasons = r;
}

/* Return the names of the axes set in "flags" of "s", comma separated. */
static const char *axis_list(const ts_stage *s, const bool *flags, int n)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_puts(&b, "");
	for (int a = 0; a < n; a++)
		if (flags[a])
			ts_buf_printf(&b, "%s%s", b.len ? ", " : "",
				ts_stage_axis(s, a)->name);
	return b.s;
}

/* Return the names of the reduction axes of "s", comma separated. */
static const char *reduce_names(const ts_stage *s)
{
	ts_buf b;

	ts_buf_init(&b);
	for (int i = 0; i < s->nraxes; i++)
		ts_buf_printf(&b, "%s%s", i ? ", " : "", s->raxes[i]->name);
	return b.s;
}

/* Return whether "ai" carries reuse along some spatial axis of "s". */
static bool has_reuse(const ts_access_info *ai, const ts_stage *s)
{
	for (int a = 0; a < s->ndim; a++)
		if (ai->reuse[a])
			return true;
	return false;
}

/* Give each load of "si" one reason: its reuse axes, or that it streams;
 * return whether every load under a reducer carries reuse and at least
 * one such load exists. */
static bool reasons_for_loads(ts_stage_info *si)
{
	const ts_stage *s = si->stage;
	int under = 0, streams = 0;

	for (int i = 0; i < si->naccesses; i++) {
		const ts_access_info *ai = &si->accesses[i];
		if (ai->write)
			continue;
		if (!ai->affine)
			ts_reason(si, "%s: an index is not affine (data-"
				"dependent or non-linear): the whole dimension "
				"is assumed", ai->text);
		else if (has_reuse(ai, s))
			ts_reason(si, "%s carries reuse along %s", ai->text,
				axis_list(s, ai->reuse, s->ndim));
		else if (ai->in_reduction)
			ts_reason(si, "%s has no reuse across spatial axes "
				"(injective in each once the others and the "
				"reduction axes are fixed)", ai->text);
		if (!ai->in_reduction)
			continue;
		under++;
		streams += !ai->affine || !has_reuse(ai, s);
	}
	return under > 0 && streams == 0;
}

/* Set the class of "si" from its own accesses (not its consumers). */
void ts_classify_stage(ts_stage_info *si)
{
	const ts_stage *s = si->stage;
	bool all_reuse = reasons_for_loads(si);

	if (s->nraxes == 0) {
		si->klass = TS_CLASS_DIRECT;
		ts_reason(si, "direct: no reduction axis");
		return;
	}
	ts_reason(si, "reduction over %s (%lld instances per output "
		"element)", reduce_names(s), (long long)si->reduce_extent);
	if (all_reuse) {
		si->klass = TS_CLASS_COMPLEX_REDUCTION;
		ts_reason(si, "complex reduction: every load under the reducer "
			"carries reuse along a spatial axis, so tiling the "
			"spatial axes cuts traffic");
	} else {
		si->klass = TS_CLASS_SIMPLE_REDUCTION;
		ts_reason(si, "simple reduction: some load under the reducer "
			"has no reuse across spatial axes (memory bound)");
	}
}

/* Return the load of "c" that reads "t" under a reducer with reuse, or
 * NULL. */
static const ts_access_info *reused_read(const ts_stage_info *c,
	const ts_tensor *t)
{
	for (int i = 0; i < c->naccesses; i++) {
		const ts_access_info *ai = &c->accesses[i];
		if (!ai->write && ai->tensor == t && ai->in_reduction &&
		    has_reuse(ai, c->stage))
			return ai;
	}
	return NULL;
}

/* Make the direct stage "si" location-tunable when a complex reduction
 * among its consumers reads it with reuse. */
static void mark_location_tunable(ts_dag_info *di, ts_stage_info *si)
{
	for (int k = 0; k < si->nconsumers; k++) {
		const ts_stage_info *c = di->stages[si->consumers[k]];
		const ts_access_info *ai;
		if (c->klass != TS_CLASS_COMPLEX_REDUCTION ||
		    !(ai = reused_read(c, si->stage->out)))
			continue;
		si->klass = TS_CLASS_LOCATION_TUNABLE;
		ts_reason(si, "location tunable: complex reduction '%s' reads "
			"it as %s with reuse along %s; inlining would "
			"recompute it per reuse", c->stage->name, ai->text,
			axis_list(c->stage, ai->reuse, c->stage->ndim));
		return;
	}
}

/* Return whether the consumer "c" of "p" is elementwise on it: no
 * reduction, the same number of instances as p's elements, and every
 * load of p the same injective access that covers p's output. */
static bool is_fusable(const ts_stage_info *p, const ts_stage_info *c)
{
	const char *rel = NULL;

	if (c->stage->nraxes > 0 ||
	    c->spatial_extent != ts_tensor_size(p->stage->out))
		return false;
	for (int i = 0; i < c->naccesses; i++) {
		const ts_access_info *ai = &c->accesses[i];
		if (ai->write || ai->tensor != p->stage->out)
			continue;
		if (!ai->injective || !ai->covers ||
		    (rel && strcmp(rel, ai->relation) != 0))
			return false;
		rel = ai->relation;
	}
	return rel != NULL;
}

/* Return the loads of "t" by "c", over its whole iteration space. */
static int64_t reads_of(const ts_stage_info *c, const ts_tensor *t)
{
	int64_t n = 0;

	for (int i = 0; i < c->naccesses; i++)
		if (!c->accesses[i].write && c->accesses[i].tensor == t)
			n += c->accesses[i].instances;
	return n;
}

/* Fill the consumers of stage "i" of "di" with their fusability. */
static void fill_consumers(ts_dag_info *di, int i)
{
	const ts_dag *dag = di->dag;
	ts_stage_info *si = di->stages[i];

	si->nconsumers = dag->nconsumers[i];
	si->consumers = ts_new_atomic(int, si->nconsumers + 1);
	si->fusable = ts_new_atomic(bool, si->nconsumers + 1);
	for (int k = 0; k < si->nconsumers; k++) {
		const ts_stage_info *c = di->stages[dag->consumers[i][k]];
		si->consumers[k] = dag->consumers[i][k];
		si->fusable[k] = is_fusable(si, c);
		si->consumer_reads += reads_of(c, si->stage->out);
		if (si->fusable[k])
			ts_reason(si, "consumer '%s' is fusable (elementwise "
				"on it)", c->stage->name);
	}
}

/* Decide whether the direct stage "si" is strictly inlinable: it is not
 * an output, and inlining costs nothing (a pure data movement) or its
 * consumers read each element at most once, so no expression is
 * recomputed. */
static void mark_inlinable(ts_dag_info *di, ts_stage_info *si)
{
	int64_t size = ts_tensor_size(si->stage->out);
	double per = size ? (double)si->consumer_reads / (double)size : 0;

	if (si->klass != TS_CLASS_DIRECT || si->nconsumers == 0 ||
	    ts_dag_is_output(di->dag, si->stage->out))
		return;
	if (si->counts.flops == 0)
		si->inlinable = true;
	else
		si->inlinable = si->consumer_reads <= size;
	if (si->inlinable)
		ts_reason(si, "inlinable: consumers read each element %.3g "
			"times, %lld ops per element", per,
			(long long)(si->counts.flops / (size ? size : 1)));
	else
		ts_reason(si, "not inlinable: consumers read each element "
			"%.3g times and each costs %lld ops", per,
			(long long)(si->counts.flops / (size ? size : 1)));
}

/* Fill the facts of "di" that need consumers. */
void ts_classify_dag(ts_dag_info *di)
{
	for (int i = 0; i < di->nstages; i++)
		fill_consumers(di, i);
	for (int i = 0; i < di->nstages; i++)
		if (di->stages[i]->klass == TS_CLASS_DIRECT)
			mark_location_tunable(di, di->stages[i]);
	for (int i = 0; i < di->nstages; i++)
		mark_inlinable(di, di->stages[i]);
}
