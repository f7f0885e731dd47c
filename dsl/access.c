/* The accessors of the IR's opaque handles (<tessel/dsl.h>): what a
 * program outside the library reads of axes, expressions, tensors,
 * stages and DAGs.  Out-of-range indices give NULL or -1 rather than
 * reading past an array. */
#include <config.h>

#include "dsl/ir.h"
#include "dsl/internal.h"

const char *ts_axis_name(const ts_axis *a)
{
	return a->name;
}

int64_t ts_axis_extent(const ts_axis *a)
{
	return a->extent;
}

bool ts_axis_is_reduce(const ts_axis *a)
{
	return a->reduce;
}

ts_expr_kind ts_expr_get_kind(const ts_expr *e)
{
	return e->kind;
}

ts_dtype ts_expr_dtype(const ts_expr *e)
{
	return e->dtype;
}

bool ts_expr_is_literal(const ts_expr *e)
{
	return e->literal;
}

ts_op ts_expr_op(const ts_expr *e)
{
	return e->op;
}

ts_reducer ts_expr_reducer(const ts_expr *e)
{
	return e->reducer;
}

int64_t ts_expr_int_value(const ts_expr *e)
{
	return e->kind == TS_EXPR_INT ? e->ival : 0;
}

double ts_expr_float_value(const ts_expr *e)
{
	return e->kind == TS_EXPR_FLOAT ? e->fval : 0;
}

ts_axis *ts_expr_axis(const ts_expr *e)
{
	return e->kind == TS_EXPR_VAR ? e->axis : NULL;
}

ts_tensor *ts_expr_tensor(const ts_expr *e)
{
	return e->kind == TS_EXPR_LOAD ? e->tensor : NULL;
}

int ts_expr_nargs(const ts_expr *e)
{
	return e->kind == TS_EXPR_LOAD ? e->nargs : 0;
}

ts_expr *ts_expr_arg(const ts_expr *e, int i)
{
	return i >= 0 && i < ts_expr_nargs(e) ? e->args[i] : NULL;
}

ts_expr *ts_expr_operand(const ts_expr *e, int i)
{
	ts_expr *const ops[] = { e->a, e->b, e->c };

	switch (e->kind) {
	case TS_EXPR_BINARY:
		return i == 0 || i == 1 ? ops[i] : NULL;
	case TS_EXPR_SELECT:
		return i >= 0 && i < 3 ? ops[i] : NULL;
	case TS_EXPR_UNARY:
	case TS_EXPR_CAST:
	case TS_EXPR_REDUCE:
		return i == 0 ? e->a : NULL;
	default:
		return NULL;
	}
}

int ts_expr_nraxes(const ts_expr *e)
{
	return e->kind == TS_EXPR_REDUCE ? e->nraxes : 0;
}

ts_axis *ts_expr_raxis(const ts_expr *e, int i)
{
	return i >= 0 && i < ts_expr_nraxes(e) ? e->raxes[i] : NULL;
}

const char *ts_tensor_name(const ts_tensor *t)
{
	return t->name;
}

ts_dtype ts_tensor_dtype(const ts_tensor *t)
{
	return t->dtype;
}

int ts_tensor_ndim(const ts_tensor *t)
{
	return t->ndim;
}

int64_t ts_tensor_dim(const ts_tensor *t, int i)
{
	return i >= 0 && i < t->ndim ? t->shape[i] : -1;
}

const int64_t *ts_tensor_shape(const ts_tensor *t)
{
	return t->shape;
}

ts_stage *ts_tensor_stage(const ts_tensor *t)
{
	return t->stage;
}

bool ts_tensor_is_weight(const ts_tensor *t)
{
	return t->weight;
}

ts_status ts_tensor_set_weight(ts_ctx *ctx, ts_tensor *t, bool weight)
{
	if (t->stage)
		return ts_ctx_set_error(ctx, "tensor %s is computed by a "
			"stage; only a placeholder holds weights", t->name);
	t->weight = weight;
	return TS_OK;
}

const char *ts_stage_name(const ts_stage *s)
{
	return s->name;
}

ts_tensor *ts_stage_output(const ts_stage *s)
{
	return s->out;
}

ts_expr *ts_stage_body(const ts_stage *s)
{
	return s->body;
}

int ts_stage_ndim(const ts_stage *s)
{
	return s->ndim;
}

int ts_stage_nraxes(const ts_stage *s)
{
	return s->nraxes;
}

int ts_stage_ninputs(const ts_stage *s)
{
	return s->ninputs;
}

ts_tensor *ts_stage_input(const ts_stage *s, int i)
{
	return i >= 0 && i < s->ninputs ? s->inputs[i] : NULL;
}

int ts_stage_line(const ts_stage *s)
{
	return s->line;
}

int ts_dag_ninputs(const ts_dag *dag)
{
	return dag->ninputs;
}

ts_tensor *ts_dag_input(const ts_dag *dag, int i)
{
	return i >= 0 && i < dag->ninputs ? dag->inputs[i] : NULL;
}

int ts_dag_noutputs(const ts_dag *dag)
{
	return dag->noutputs;
}

ts_tensor *ts_dag_output(const ts_dag *dag, int i)
{
	return i >= 0 && i < dag->noutputs ? dag->outputs[i] : NULL;
}

int ts_dag_nstages(const ts_dag *dag)
{
	return dag->nstages;
}

ts_stage *ts_dag_stage(const ts_dag *dag, int i)
{
	return i >= 0 && i < dag->nstages ? dag->stages[i] : NULL;
}

int ts_dag_nconsumers(const ts_dag *dag, int s)
{
	return s >= 0 && s < dag->nstages ? dag->nconsumers[s] : -1;
}

int ts_dag_consumer(const ts_dag *dag, int s, int k)
{
	if (k < 0 || k >= ts_dag_nconsumers(dag, s))
		return -1;
	return dag->consumers[s][k];
}

const char *ts_dag_name(const ts_dag *dag)
{
	return dag->name;
}

void ts_dag_set_name(ts_dag *dag, const char *name)
{
	dag->name = ts_strdup(name);
}
