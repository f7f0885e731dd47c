/* The DAG: stages reachable from the outputs, in topological order. */
#include <config.h>

#include <stdlib.h>

#include "dsl/internal.h"

/* Depth-first walk state: 0 unseen, 1 on the stack, 2 done. */
struct topo {
	ts_ctx *ctx;
	ts_vec order;		/* stages, producers first */
	ts_vec placeholders;	/* placeholders reached */
	ts_vec marks;		/* tensors with mark 1 or 2 */
	ts_vec done;		/* tensors with mark 2 */
	ts_vec path;		/* tensors on the stack, for cycle messages */
};

static bool has(const ts_vec *v, const void *p)
{
	for (int i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return true;
	return false;
}

/* Describe the cycle that closes at "t" on the stack of "tp". */
static ts_status cycle_error(struct topo *tp, ts_tensor *t)
{
	ts_buf b;
	int i = 0;

	ts_buf_init(&b);
	while (i < tp->path.n && tp->path.v[i] != t)
		i++;
	for (; i < tp->path.n; i++)
		ts_buf_printf(&b, "%s -> ", ((ts_tensor *)tp->path.v[i])->name);
	ts_buf_puts(&b, t->name);
	return ts_ctx_set_error(tp->ctx, "cycle between stages: %s", b.s);
}

/* Visit "t" and its producers, appending stages in post-order. */
static ts_status visit(struct topo *tp, ts_tensor *t)
{
	ts_stage *s = t->stage;

	if (has(&tp->done, t))
		return TS_OK;
	if (has(&tp->marks, t))
		return cycle_error(tp, t);
	if (!s) {
		ts_vec_push(&tp->done, t);
		ts_vec_push(&tp->placeholders, t);
		return TS_OK;
	}
	ts_vec_push(&tp->marks, t);
	ts_vec_push(&tp->path, t);
	for (int i = 0; i < s->ninputs; i++)
		if (visit(tp, s->inputs[i]) < 0)
			return TS_ERROR;
	tp->path.n--;
	ts_vec_push(&tp->done, t);
	ts_vec_push(&tp->order, s);
	return TS_OK;
}

static int by_id(const void *a, const void *b)
{
	const ts_tensor *x = *(ts_tensor *const *)a;
	const ts_tensor *y = *(ts_tensor *const *)b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Set "dag"'s inputs from "inputs" or, when "n" is 0, from the placeholders
 * reached in "tp", checking that each placeholder is an input. */
static ts_status set_inputs(ts_dag *dag, struct topo *tp, int n,
	ts_tensor *const *inputs)
{
	if (n == 0) {
		dag->ninputs = tp->placeholders.n;
		dag->inputs = ts_new_array(ts_tensor *, dag->ninputs + 1);
		if (dag->ninputs)
			memcpy(dag->inputs, tp->placeholders.v,
				sizeof(ts_tensor *) * dag->ninputs);
		qsort(dag->inputs, dag->ninputs, sizeof(ts_tensor *), by_id);
		return TS_OK;
	}
	dag->ninputs = n;
	dag->inputs = ts_new_array(ts_tensor *, n);
	for (int i = 0; i < n; i++) {
		if (!inputs[i])
			return TS_ERROR;
		if (inputs[i]->stage)
			return ts_ctx_set_error(tp->ctx, "input '%s' is "
				"computed by a stage, not a placeholder",
				inputs[i]->name);
		for (int j = 0; j < i; j++)
			if (inputs[j] == inputs[i])
				return ts_ctx_set_error(tp->ctx, "input '%s' "
					"is listed twice", inputs[i]->name);
		dag->inputs[i] = inputs[i];
	}
	for (int i = 0; i < tp->placeholders.n; i++) {
		ts_tensor *p = tp->placeholders.v[i];
		bool listed = false;
		for (int j = 0; j < n; j++)
			listed |= inputs[j] == p;
		if (!listed)
			return ts_ctx_set_error(tp->ctx, "placeholder '%s' is "
				"read but is not an input of the DAG", p->name);
	}
	return TS_OK;
}

/* Fill the consumer lists of "dag". */
static void set_consumers(ts_dag *dag)
{
	int n = dag->nstages;

	dag->nconsumers = ts_new_atomic(int, n + 1);
	dag->consumers = ts_new_array(int *, n + 1);
	for (int s = 0; s < n; s++)
		dag->consumers[s] = ts_new_atomic(int, n + 1);
	for (int c = 0; c < n; c++) {
		ts_stage *cs = dag->stages[c];
		for (int i = 0; i < cs->ninputs; i++) {
			int p = cs->inputs[i]->stage ?
				ts_dag_stage_index(dag, cs->inputs[i]->stage) : -1;
			if (p >= 0)
				dag->consumers[p][dag->nconsumers[p]++] = c;
		}
	}
}

/* Check that the tensors of "dag" have distinct names: a name is what
 * the kernel's arguments, messages and files are known by. */
static ts_status check_names(ts_dag *dag)
{
	int n = dag->ninputs + dag->nstages;

	for (int i = 0; i < n; i++) {
		const ts_tensor *a = i < dag->ninputs ? dag->inputs[i]
			: dag->stages[i - dag->ninputs]->out;
		for (int j = 0; j < i; j++) {
			const ts_tensor *b = j < dag->ninputs ? dag->inputs[j]
				: dag->stages[j - dag->ninputs]->out;
			if (strcmp(a->name, b->name) == 0)
				return ts_ctx_set_error(dag->ctx, "tensor '%s' "
					"is defined twice", a->name);
		}
	}
	return TS_OK;
}

/* Sort the stages that compute "outputs" ("n") into "tp", producers
 * first, starting afresh. */
static ts_status topo_sort(struct topo *tp, int n, ts_tensor *const *outputs)
{
	ts_ctx *ctx = tp->ctx;

	memset(tp, 0, sizeof(*tp));
	tp->ctx = ctx;
	for (int i = 0; i < n; i++) {
		if (!outputs[i])
			return TS_ERROR;
		if (!outputs[i]->stage)
			return ts_ctx_set_error(ctx, "output '%s' is a "
				"placeholder, not a computed tensor",
				outputs[i]->name);
		for (int j = 0; j < i; j++)
			if (outputs[j] == outputs[i])
				return ts_ctx_set_error(ctx, "output '%s' is "
					"listed twice", outputs[i]->name);
		if (visit(tp, outputs[i]) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

ts_dag *ts_dag_new(ts_ctx *ctx, int ninputs, ts_tensor *const *inputs,
	int noutputs, ts_tensor *const *outputs)
{
	struct topo tp = { ctx };
	bool changed;
	ts_dag *dag;

	if (noutputs <= 0) {
		ts_ctx_set_error(ctx, "a DAG needs at least one output");
		return NULL;
	}
	if (topo_sort(&tp, noutputs, outputs) < 0)
		return NULL;
	if (ts_canonicalize(ctx, tp.order.n, (ts_stage **)tp.order.v,
	    tp.placeholders.n, (ts_tensor **)tp.placeholders.v, &changed) < 0)
		return NULL;
	if (changed && topo_sort(&tp, noutputs, outputs) < 0)
		return NULL;
	dag = ts_new(ts_dag);
	dag->ctx = ctx;
	dag->nstages = tp.order.n;
	dag->stages = (ts_stage **)tp.order.v;
	dag->noutputs = noutputs;
	dag->outputs = ts_new_array(ts_tensor *, noutputs);
	memcpy(dag->outputs, outputs, sizeof(ts_tensor *) * noutputs);
	if (set_inputs(dag, &tp, ninputs, inputs) < 0)
		return NULL;
	if (check_names(dag) < 0)
		return NULL;
	set_consumers(dag);
	dag->name = "dag";
	return dag;
}

int ts_dag_stage_index(const ts_dag *dag, const ts_stage *s)
{
	for (int i = 0; i < dag->nstages; i++)
		if (dag->stages[i] == s)
			return i;
	return -1;
}

ts_stage *ts_dag_find_stage(const ts_dag *dag, const char *name)
{
	for (int i = 0; i < dag->nstages; i++)
		if (strcmp(dag->stages[i]->name, name) == 0)
			return dag->stages[i];
	return NULL;
}

ts_tensor *ts_dag_find_tensor(const ts_dag *dag, const char *name)
{
	ts_stage *s = ts_dag_find_stage(dag, name);

	if (s)
		return s->out;
	for (int i = 0; i < dag->ninputs; i++)
		if (strcmp(dag->inputs[i]->name, name) == 0)
			return dag->inputs[i];
	return NULL;
}

bool ts_dag_is_output(const ts_dag *dag, const ts_tensor *t)
{
	for (int i = 0; i < dag->noutputs; i++)
		if (dag->outputs[i] == t)
			return true;
	return false;
}
