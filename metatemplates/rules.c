/* The meta-template rules, as data: one table, tried in order for each
 * stage, the first rule that holds deciding.  The order is the reason:
 *
 *  1. nested: a body with reductions nested inside expressions can only
 *     have its spatial loops scheduled; nothing else applies to it.
 *  2. guarded-copy (CPUs), before inline so that the exception wins: a
 *     guarded copy (padding) with one consumer, inlined, runs its guard
 *     once per window element and keeps the consumer's loads from being
 *     plain vectors where the target has no masked load of its dtype (a
 *     padded input read through a 3x3 window with one input per output
 *     channel measured 6x slower inlined than computed first), so where
 *     it is computed is a knob.  GPUs inline it (a guard per thread).
 *  3. inline: a cheap direct stage never gets a loop nest of its own.
 *  4. location: a location-tunable stage with one consumer: a knob.
 *  5, 6. reductions by class: complex (reuse: multi-level tiles), then
 *     simple.
 *  7. direct: anything else gets its own nest of spatial loops.
 */
#include <config.h>

#include "dsl/ir.h"
#include "support/support.h"
#include "analysis/facts.h"
#include "metatemplates/rules.h"

static bool nested(const ts_dag *dag, const ts_dag_info *info, int s)
{
	return ts_body_has_nested_reduce(dag->stages[s]->body);
}

/* Direct, cheap to recompute, read by some stage and not an output. */
static bool inlinable(const ts_dag *dag, const ts_dag_info *info, int s)
{
	const ts_stage_info *si = info->stages[s];

	return si->klass == TS_CLASS_DIRECT && si->inlinable &&
		!ts_dag_is_output(dag, dag->stages[s]->out) &&
		dag->nconsumers[s] > 0;
}

static bool guarded_copy(const ts_dag *dag, const ts_dag_info *info, int s)
{
	return inlinable(dag, info, s) && dag->nconsumers[s] == 1 &&
		ts_body_has_guarded_load(dag->stages[s]->body);
}

static bool location(const ts_dag *dag, const ts_dag_info *info, int s)
{
	return info->stages[s]->klass == TS_CLASS_LOCATION_TUNABLE &&
		dag->nconsumers[s] == 1;
}

static bool complex_reduction(const ts_dag *dag, const ts_dag_info *info,
	int s)
{
	return info->stages[s]->klass == TS_CLASS_COMPLEX_REDUCTION;
}

static bool simple_reduction(const ts_dag *dag, const ts_dag_info *info,
	int s)
{
	return info->stages[s]->klass == TS_CLASS_SIMPLE_REDUCTION;
}

static bool always(const ts_dag *dag, const ts_dag_info *info, int s)
{
	return true;
}

static const ts_rule_def rules[] = {
	{ "nested", TS_RULES_ALL, nested, TS_DECIDE_NESTED,
	  "reductions nested in the body: spatial loops only" },
	{ "guarded-copy", TS_RULES_CPU, guarded_copy, TS_DECIDE_LOCATION,
	  "a guarded copy inlined keeps its consumer from vectorising" },
	{ "inline", TS_RULES_ALL, inlinable, TS_DECIDE_INLINE,
	  "direct and cheap: recomputed where it is read" },
	{ "location", TS_RULES_ALL, location, TS_DECIDE_LOCATION,
	  "location-tunable with one consumer: where is a knob" },
	{ "complex", TS_RULES_ALL, complex_reduction, TS_DECIDE_COMPLEX,
	  "a reduction with reuse: multi-level tiles" },
	{ "simple", TS_RULES_ALL, simple_reduction, TS_DECIDE_SIMPLE,
	  "a reduction without reuse" },
	{ "direct", TS_RULES_ALL, always, TS_DECIDE_DIRECT,
	  "anything else: its own nest of spatial loops" },
};

const ts_rule_def *ts_rule_table(int *n)
{
	*n = (int)(sizeof(rules) / sizeof(rules[0]));
	return rules;
}

const ts_rule_def *ts_rule_find(const ts_dag *dag, const ts_dag_info *info,
	int s, unsigned kind)
{
	int n;
	const ts_rule_def *r = ts_rule_table(&n);

	for (int i = 0; i < n; i++)
		if ((r[i].targets & kind) && r[i].holds(dag, info, s))
			return &r[i];
	return &r[n - 1];
}

const ts_rule_def *ts_rule_decide(const ts_rule_ops *ops, void *tp,
	const ts_dag *dag, const ts_dag_info *info, int s)
{
	const ts_rule_def *r = ts_rule_find(dag, info, s, ops->kind);

	ops->act[r->decision](tp, s);
	return r;
}
