/* Facts about compute declarations shared by the CPU and GPU
 * meta-templates. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/facts.h"

/* Whether "e" holds a reduction, counting "e" itself unless "top". */
static bool has_reduce(const ts_expr *e, bool top)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_REDUCE && !top)
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (has_reduce(e->args[i], false))
			return true;
	return has_reduce(e->a, false) || has_reduce(e->b, false) ||
		has_reduce(e->c, false);
}

bool ts_body_has_nested_reduce(const ts_expr *e)
{
	return has_reduce(e, true);
}

bool ts_body_loads_identity(const ts_expr *e, const ts_tensor *t,
	const ts_stage *s)
{
	if (!e)
		return true;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t) {
		if (e->nargs != s->ndim)
			return false;
		for (int d = 0; d < e->nargs; d++)
			if (e->args[d]->kind != TS_EXPR_VAR ||
			    e->args[d]->axis != s->axes[d])
				return false;
	}
	for (int i = 0; i < e->nargs; i++)
		if (!ts_body_loads_identity(e->args[i], t, s))
			return false;
	return ts_body_loads_identity(e->a, t, s) &&
		ts_body_loads_identity(e->b, t, s) &&
		ts_body_loads_identity(e->c, t, s);
}

bool ts_expr_uses_axis(const ts_expr *e, const ts_axis *axis)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_VAR)
		return e->axis == axis;
	for (int i = 0; i < e->nargs; i++)
		if (ts_expr_uses_axis(e->args[i], axis))
			return true;
	return ts_expr_uses_axis(e->a, axis) || ts_expr_uses_axis(e->b, axis) ||
		ts_expr_uses_axis(e->c, axis);
}

int ts_dag_effective_consumer(const ts_dag *dag, int s,
	bool (*inlined)(const void *arg, int stage), const void *arg)
{
	const ts_tensor *t = dag->stages[s]->out;

	for (;;) {
		int c;
		if (dag->nconsumers[s] != 1 || ts_dag_is_output(dag, t))
			return -1;
		c = dag->consumers[s][0];
		if (dag->stages[c]->ndim != dag->stages[s]->ndim ||
		    !ts_body_loads_identity(dag->stages[c]->body, t,
		    dag->stages[c]))
			return -1;
		if (!inlined(arg, c))
			return c;
		s = c;
		t = dag->stages[c]->out;
	}
}

/* Whether "e" loads from memory. */
static bool reads_memory(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD)
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (reads_memory(e->args[i]))
			return true;
	return reads_memory(e->a) || reads_memory(e->b) || reads_memory(e->c);
}

/* Whether the operand "x" of a select, && or || reads memory that is not
 * in bounds everywhere: code must evaluate it only where it is chosen. */
static bool guarded_operand(const ts_expr *x)
{
	return reads_memory(x) && !ts_expr_safe_everywhere(x);
}

bool ts_body_has_guarded_load(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_SELECT && (guarded_operand(e->b) ||
	    guarded_operand(e->c)))
		return true;
	if (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_AND ||
	    e->op == TS_OP_OR) && guarded_operand(e->b))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (ts_body_has_guarded_load(e->args[i]))
			return true;
	return ts_body_has_guarded_load(e->a) ||
		ts_body_has_guarded_load(e->b) ||
		ts_body_has_guarded_load(e->c);
}
