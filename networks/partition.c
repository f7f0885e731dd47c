/* Partition of a network into subgraphs and distinct tasks.
 *
 * The meta-templates of the whole network decide what each stage becomes
 * (its own nest, inlined, fused into an anchor, computed at a consumer);
 * the partition only follows them: every stage with a nest of its own
 * starts a subgraph, the rest join the subgraphs that read them.  Each
 * subgraph is then rebuilt as a DAG whose inputs are placeholders named
 * after the tensors it reads from outside, so that equal subgraphs print
 * the same canonical string.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>

#include <tessel/lower.h>
#include <tessel/network.h>
#include <tessel/records.h>
#include <tessel/search.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "backends/ir.h"
#include "support/support.h"
#include "networks/network_internal.h"

/* Tensors and axes of the network mapped to their copies in a subgraph. */
struct clone_map {
	ts_ctx *ctx;
	ts_vec from, to;	/* tensors */
	ts_vec afrom, ato;	/* axes */
	ts_vec vfrom, vto;	/* axes read as expressions (ts_expr *) */
	ts_vec phys;		/* copies stored in the layout of "rl" */
	bool through_views;	/* read a view's source directly */
	const ts_relayout *rl;	/* NULL: every stage as it is */
};

/* The copy of "p" in "m" (a tensor or an axis), or NULL. */
static void *map_find(const ts_vec *from, const ts_vec *to, const void *p)
{
	for (int i = 0; i < from->n; i++)
		if (from->v[i] == p)
			return to->v[i];
	return NULL;
}

/* Return the copy of axis "a" in "m", creating it on first use. */
static ts_axis *clone_axis(struct clone_map *m, ts_axis *a)
{
	ts_axis *c = map_find(&m->afrom, &m->ato, a);

	if (c)
		return c;
	c = a->reduce ? ts_reduce_axis(m->ctx, a->name, a->extent)
		: ts_axis_new(m->ctx, a->name, a->extent);
	ts_vec_push(&m->afrom, a);
	ts_vec_push(&m->ato, c);
	return c;
}

static ts_expr *clone_expr(struct clone_map *m, const ts_expr *e);

/* Copy the constant "e". */
static ts_expr *clone_const(struct clone_map *m, const ts_expr *e)
{
	/* A typed integer through the cast of a literal: exact, where a
	 * double would round an i64 or u64 past 2^53. */
	if (e->kind == TS_EXPR_INT)
		return e->literal ? ts_int(m->ctx, e->ival)
			: ts_cast(m->ctx, e->dtype, ts_int(m->ctx, e->ival));
	return e->literal ? ts_float(m->ctx, e->fval)
		: ts_const(m->ctx, e->dtype, e->fval);
}

/* Index expression "e" with each axis "axes"[i] replaced by "vals"[i];
 * NULL for anything but integers, variables and arithmetic. */
static ts_expr *subst_index(ts_ctx *ctx, const ts_expr *e,
	ts_axis *const *axes, ts_expr *const *vals, int n)
{
	ts_expr *a, *b;

	switch (e->kind) {
	case TS_EXPR_INT:
		return ts_int(ctx, e->ival);
	case TS_EXPR_VAR:
		for (int i = 0; i < n; i++)
			if (axes[i] == e->axis)
				return vals[i];
		return NULL;
	case TS_EXPR_BINARY:
		a = subst_index(ctx, e->a, axes, vals, n);
		b = subst_index(ctx, e->b, axes, vals, n);
		return a && b ? ts_binary(ctx, e->op, a, b) : NULL;
	default:
		return NULL;
	}
}

/* A load of "t" at "idx" ("n" indices); under a change of layout, each
 * index simplified by the ranges of its axes ((8 co + ci) // 8 is co),
 * so that the analysis sees the strides the code will have.  Copies in
 * their declared layout keep their indices as written. */
static ts_expr *relaid_load(struct clone_map *m, ts_tensor *t, int n,
	ts_expr **idx)
{
	for (int i = 0; m->rl && i < n; i++)
		idx[i] = ts_index_simplify(m->ctx, idx[i]);
	return ts_load(m->ctx, t, n, idx);
}

/* Copy the load "e" with its tensor mapped through "m".  With
 * "through_views", a load of a tensor whose stage is a view (its body
 * one load of an input, a change of layout) reads that input at the
 * view's indices instead, so that the analysis sees the real layout. */
static ts_expr *clone_load(struct clone_map *m, const ts_expr *e)
{
	ts_expr *idx[TS_MAX_DIMS], *src[TS_MAX_DIMS];
	ts_tensor *t = map_find(&m->from, &m->to, e->tensor);
	const ts_expr *body = t->stage ? t->stage->body : NULL;
	int n = e->nargs;

	for (int i = 0; i < n; i++)
		idx[i] = clone_expr(m, e->args[i]);
	if (m->through_views && body && body->kind == TS_EXPR_LOAD &&
	    !body->tensor->stage) {
		bool ok = true;
		for (int d = 0; d < body->nargs && ok; d++)
			ok = (src[d] = subst_index(m->ctx, body->args[d],
				t->stage->axes, idx, t->stage->ndim)) != NULL;
		if (ok)
			return relaid_load(m, body->tensor, body->nargs, src);
	}
	if (map_find(&m->phys, &m->phys, t)) {	/* stored physically */
		n = ts_layout_physical_index(m->ctx, m->rl->l, m->rl->x, idx,
			src);
		memcpy(idx, src, sizeof(ts_expr *) * (size_t)n);
	}
	return relaid_load(m, t, n, idx);
}

/* Whether "e" loads a tensor whose copy "m" stores physically at the
 * channel index "a" (an axis of the original). */
static bool reads_channel_at(struct clone_map *m, const ts_expr *e,
	const ts_axis *a)
{
	ts_tensor *t;

	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD) {
		t = map_find(&m->from, &m->to, e->tensor);
		return t && map_find(&m->phys, &m->phys, t) && e->nargs == 4 &&
			e->args[1]->kind == TS_EXPR_VAR && e->args[1]->axis == a;
	}
	if (e->kind == TS_EXPR_REDUCE)
		return reads_channel_at(m, e->a, a);
	return e->kind != TS_EXPR_VAR && (reads_channel_at(m, e->a, a) ||
		reads_channel_at(m, e->b, a) || reads_channel_at(m, e->c, a));
}

/* Copy the reduction "e" over fresh reduction axes.  In a layout that
 * blocks the channels, an axis that sums over the channels of a tensor
 * stored in it becomes two, the blocks and the channels of a block (c =
 * c * x + c_blk), so that the reduction walks the blocked tensor in its
 * own order rather than through a quotient and a remainder. */
static ts_expr *clone_reduce(struct clone_map *m, const ts_expr *e)
{
	ts_axis **ax = ts_new_array(ts_axis *, 2 * e->nraxes);
	int x = m->rl ? ts_layout_channel_block(m->rl->l, m->rl->x) : 0;
	int n = 0;

	for (int i = 0; i < e->nraxes; i++) {
		ts_axis *a = e->raxes[i], *o, *b;
		if (x <= 1 || a->extent % x != 0 ||
		    map_find(&m->afrom, &m->ato, a) ||
		    !reads_channel_at(m, e->a, a)) {
			ax[n++] = clone_axis(m, a);
			continue;
		}
		o = ts_reduce_axis(m->ctx, a->name, a->extent / x);
		b = ts_reduce_axis(m->ctx, ts_asprintf("%s_blk", a->name), x);
		ts_vec_push(&m->vfrom, a);
		ts_vec_push(&m->vto, ts_add(m->ctx, ts_mul(m->ctx,
			ts_var(m->ctx, o), ts_int(m->ctx, x)),
			ts_var(m->ctx, b)));
		ax[n++] = o;
		ax[n++] = b;
	}
	return ts_reduce(m->ctx, e->reducer, n, ax, clone_expr(m, e->a));
}

/* Copy expression "e", reading the tensors and axes mapped by "m". */
static ts_expr *clone_expr(struct clone_map *m, const ts_expr *e)
{
	switch (e->kind) {
	case TS_EXPR_INT:
	case TS_EXPR_FLOAT:
		return clone_const(m, e);
	case TS_EXPR_VAR: {
		ts_expr *v = map_find(&m->vfrom, &m->vto, e->axis);
		return v ? v : ts_var(m->ctx, clone_axis(m, e->axis));
	}
	case TS_EXPR_LOAD:
		return clone_load(m, e);
	case TS_EXPR_UNARY:
		return ts_unary(m->ctx, e->op, clone_expr(m, e->a));
	case TS_EXPR_BINARY:
		return ts_binary(m->ctx, e->op, clone_expr(m, e->a),
			clone_expr(m, e->b));
	case TS_EXPR_SELECT:
		return ts_select(m->ctx, clone_expr(m, e->a),
			clone_expr(m, e->b), clone_expr(m, e->c));
	case TS_EXPR_CAST:
		return ts_cast(m->ctx, e->dtype, clone_expr(m, e->a));
	case TS_EXPR_REDUCE:
		return clone_reduce(m, e);
	default:
		return NULL;
	}
}

/* The axes of the copy of "s" stored in the layout of "m->rl", into
 * "ax": one per physical dimension, named after the logical one it
 * walks; each logical axis of "s" is read as its expression of them. */
static int physical_axes(struct clone_map *m, const ts_stage *s, ts_axis **ax)
{
	int64_t shape[TS_MAX_DIMS];
	ts_expr *v[TS_MAX_DIMS], *lg[TS_MAX_DIMS];
	int n = ts_layout_physical_shape(m->rl->l, m->rl->x, s->out->shape,
		shape);

	for (int d = 0; d < n; d++) {
		int from = ts_layout_source_dim(m->rl->l, d);
		bool again = false;
		const char *name = s->axes[from]->name;
		for (int k = 0; k < d; k++)
			again |= ts_layout_source_dim(m->rl->l, k) == from;
		ax[d] = ts_axis_new(m->ctx, again ? ts_asprintf("%s_blk",
			name) : name, shape[d]);
		v[d] = ts_var(m->ctx, ax[d]);
	}
	ts_layout_logical_index(m->ctx, m->rl->l, m->rl->x, v, lg);
	for (int d = 0; d < s->ndim; d++) {
		ts_vec_push(&m->vfrom, s->axes[d]);
		ts_vec_push(&m->vto, lg[d]);
	}
	return n;
}

/* The channel index of the physical copy of "s" in "m" (after
 * physical_axes) when the layout's block does not divide its channels,
 * or NULL. */
static ts_expr *padded_channel(struct clone_map *m, const ts_stage *s)
{
	int x = ts_layout_channel_block(m->rl->l, m->rl->x);

	if (x <= 1 || s->ndim < 2 || s->out->shape[1] % x == 0)
		return NULL;
	for (int i = 0; i < m->vfrom.n; i++)
		if (m->vfrom.v[i] == s->axes[1])
			return m->vto.v[i];
	return NULL;
}

/* Copy stage "s" into "m" and map its output to the copy; with
 * "physical", over the axes of the layout of "m->rl". */
static ts_tensor *clone_stage(struct clone_map *m, const ts_stage *s,
	bool physical)
{
	ts_axis *ax[TS_MAX_DIMS];
	ts_tensor *t;
	int n = s->ndim;

	ts_expr *body, *c;

	if (physical)
		n = physical_axes(m, s, ax);
	else
		for (int i = 0; i < s->ndim; i++)
			ax[i] = clone_axis(m, s->axes[i]);
	body = clone_expr(m, s->body);
	/* Channels the layout's block pads: past them, a body that is not
	 * a reduction is zero and reads nothing (a reduction reads there
	 * only what is padded too, networks/layout.c). */
	if (physical && (c = padded_channel(m, s)) &&
	    s->body->kind != TS_EXPR_REDUCE)
		body = ts_select(m->ctx, ts_binary(m->ctx, TS_OP_LT, c,
			ts_int(m->ctx, s->out->shape[1])), body,
			ts_cast(m->ctx, s->out->dtype, ts_int(m->ctx, 0)));
	t = ts_compute_typed(m->ctx, s->name, s->out->dtype, n, ax, body);
	if (t) {
		t->stage->line = s->line;
		ts_vec_push(&m->from, s->out);
		ts_vec_push(&m->to, t);
		if (physical)
			ts_vec_push(&m->phys, t);
	}
	return t;
}

ts_status ts_dag_copy_stages(ts_ctx *ctx, const ts_dag *src,
	ts_tensor *const *inputs, ts_tensor **outs, bool through_views,
	const ts_relayout *rl)
{
	struct clone_map m = { ctx };

	m.through_views = through_views;
	m.rl = rl;
	for (int i = 0; i < src->ninputs; i++) {
		ts_vec_push(&m.from, src->inputs[i]);
		ts_vec_push(&m.to, inputs[i]);
	}
	for (int i = 0; i < src->nstages; i++)
		if (!clone_stage(&m, src->stages[i], rl && rl->physical[i]))
			return TS_ERROR;
	for (int i = 0; i < src->noutputs; i++)
		outs[i] = map_find(&m.from, &m.to, src->outputs[i]);
	return TS_OK;
}

/* Per stage: the subgraphs it belongs to (a bit set over subgraphs is
 * too large for big networks; a short list is enough). */
struct membership {
	int n;
	int *g;
};

/* Add subgraph "g" to "ms" unless it is there. */
static void member_add(struct membership *ms, int g)
{
	for (int i = 0; i < ms->n; i++)
		if (ms->g[i] == g)
			return;
	ms->g = ts_grow(ms->g, sizeof(int), ms->n, ms->n + 1);
	ms->g[ms->n++] = g;
}

static bool member_has(const struct membership *ms, int g)
{
	for (int i = 0; i < ms->n; i++)
		if (ms->g[i] == g)
			return true;
	return false;
}

/* Whether stage "s" under "tp" starts a subgraph of its own. */
static bool is_anchor(const ts_template *tp, int s)
{
	const ts_stage_plan *p = &tp->plans[s];

	return (p->rule == TS_RULE_TILE || p->rule == TS_RULE_PLAIN) &&
		p->fused_into < 0 && p->row_host < 0;
}

/* Assign every stage of "tp"'s DAG to subgraphs in "ms"; return the
 * number of subgraphs, numbered by their anchors' order. */
static int assign(const ts_template *tp, struct membership *ms,
	int *anchors)
{
	const ts_dag *dag = tp->dag;
	int ng = 0;

	for (int s = 0; s < dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		if (is_anchor(tp, s)) {
			anchors[ng] = s;
			member_add(&ms[s], ng++);
		} else if (p->rule == TS_RULE_TILE && p->fused_into >= 0) {
			for (int i = 0; i < ms[p->fused_into].n; i++)
				member_add(&ms[s], ms[p->fused_into].g[i]);
		}
	}
	/* Consumers come later in topological order: walk backwards.  A
	 * stage of a row group goes with its host, whose tiles may compute
	 * it (the knob decides in the subgraph). */
	for (int s = dag->nstages - 1; s >= 0; s--) {
		const ts_stage_plan *p = &tp->plans[s];
		if (p->row_host >= 0) {
			const struct membership *mh = &ms[p->row_host];
			for (int i = 0; i < mh->n; i++)
				member_add(&ms[s], mh->g[i]);
			continue;
		}
		if (p->rule != TS_RULE_INLINE && p->rule != TS_RULE_LOCATION)
			continue;
		for (int c = 0; c < dag->nconsumers[s]; c++) {
			const struct membership *mc = &ms[dag->consumers[s][c]];
			for (int i = 0; i < mc->n; i++)
				member_add(&ms[s], mc->g[i]);
		}
	}
	return ng;
}

/* Whether tensor "t" is read by a stage of "dag" outside subgraph "g", or
 * is an output of the network. */
static bool read_outside(const ts_dag *dag, const struct membership *ms,
	int s, int g)
{
	if (ts_dag_is_output(dag, dag->stages[s]->out))
		return true;
	for (int c = 0; c < dag->nconsumers[s]; c++)
		if (!member_has(&ms[dag->consumers[s][c]], g))
			return true;
	return false;
}

/* Collect the stages of subgraph "g" and the tensors it reads from
 * outside (in first-use order) and writes for outside. */
static void collect(const ts_dag *dag, const struct membership *ms, int g,
	ts_subgraph *sg)
{
	ts_vec st = { 0 }, in = { 0 }, out = { 0 };

	for (int s = 0; s < dag->nstages; s++) {
		const ts_stage *stage = dag->stages[s];
		if (!member_has(&ms[s], g))
			continue;
		ts_vec_push(&st, (void *)(intptr_t)s);
		for (int i = 0; i < stage->ninputs; i++) {
			ts_tensor *t = stage->inputs[i];
			int p = t->stage ? ts_dag_stage_index(dag, t->stage) : -1;
			bool inside = p >= 0 && member_has(&ms[p], g);
			bool seen = false;
			for (int k = 0; k < in.n; k++)
				seen |= in.v[k] == t;
			if (!inside && !seen)
				ts_vec_push(&in, t);
		}
		if (read_outside(dag, ms, s, g))
			ts_vec_push(&out, stage->out);
	}
	sg->nstages = st.n;
	sg->stages = ts_new_atomic(int, st.n);
	for (int i = 0; i < st.n; i++)
		sg->stages[i] = (int)(intptr_t)st.v[i];
	sg->ninputs = in.n;
	sg->inputs = (ts_tensor **)in.v;
	sg->noutputs = out.n;
	sg->outputs = (ts_tensor **)out.v;
}

/* Build the DAG of subgraph "sg" of "dag". */
static ts_dag *subgraph_dag(ts_ctx *ctx, const ts_dag *dag,
	const ts_subgraph *sg)
{
	struct clone_map m = { ctx };
	ts_tensor **ins = ts_new_array(ts_tensor *, sg->ninputs + 1);
	ts_tensor **outs = ts_new_array(ts_tensor *, sg->noutputs + 1);
	ts_dag *sub;

	for (int i = 0; i < sg->ninputs; i++) {
		const ts_tensor *t = sg->inputs[i];
		ins[i] = ts_placeholder(ctx, t->name, t->dtype, t->ndim,
			t->shape);
		ts_vec_push(&m.from, sg->inputs[i]);
		ts_vec_push(&m.to, ins[i]);
	}
	for (int i = 0; i < sg->nstages; i++)
		if (!clone_stage(&m, dag->stages[sg->stages[i]], false))
			return NULL;
	for (int i = 0; i < sg->noutputs; i++)
		outs[i] = map_find(&m.from, &m.to, sg->outputs[i]);
	sub = ts_dag_new(ctx, sg->ninputs, ins, sg->noutputs, outs);
	if (sub)
		sub->name = ts_asprintf("%s:%s", dag->name ? dag->name : "dag",
			dag->stages[sg->anchor]->name);
	return sub;
}

/* Flops of one occurrence of "sub": the analysis' counts of its stages
 * (an inlined stage counts once per element it stores, a fair proxy). */
static int64_t task_flops(ts_ctx *ctx, const ts_dag *sub)
{
	ts_dag_info *info = ts_analyze_dag(ctx, sub);
	int64_t f = 0;

	if (!info)
		return -1;
	for (int s = 0; s < info->nstages; s++)
		f += info->stages[s]->counts.flops;
	return f;
}

int ts_partition_find_task(const ts_partition *p, const ts_dag *dag)
{
	const char *canon = ts_dag_canonical_string(dag);

	for (int i = 0; i < p->ntasks; i++)
		if (!strcmp(ts_dag_canonical_string(p->tasks[i]->dag), canon))
			return i;
	return -1;
}

int ts_partition_add_task(ts_partition *p, ts_dag *dag, const char *name,
	ts_class klass, int64_t flops)
{
	int i = ts_partition_find_task(p, dag);
	ts_task *t;

	if (i >= 0) {
		p->tasks[i]->weight++;
		return i;
	}
	t = ts_new(ts_task);
	t->id = p->ntasks;
	t->dag = dag;
	t->hash = ts_dag_hash(dag);
	t->name = name;
	t->weight = 1;
	t->klass = klass;
	t->flops = flops;
	p->tasks = ts_grow(p->tasks, sizeof(ts_task *), p->ntasks,
		p->ntasks + 1);
	p->tasks[p->ntasks++] = t;
	return t->id;
}

/* The task of "sub" in "p": an existing one with the same canonical
 * string, or a new one. */
static int find_task(ts_ctx *ctx, ts_partition *p, ts_dag *sub,
	const ts_dag *dag, const ts_subgraph *sg, const ts_dag_info *info)
{
	int i = ts_partition_find_task(p, sub);
	int64_t flops;

	if (i >= 0) {
		p->tasks[i]->weight++;
		return i;
	}
	flops = task_flops(ctx, sub);
	if (flops < 0)
		return -1;
	return ts_partition_add_task(p, sub, dag->stages[sg->anchor]->name,
		info->stages[sg->anchor]->klass, flops);
}

/* Whether subgraph "g" reads a tensor that subgraph "h" writes. */
static bool reads_from(const ts_subgraph *g, const ts_subgraph *h)
{
	for (int i = 0; i < g->ninputs; i++)
		for (int o = 0; o < h->noutputs; o++)
			if (g->inputs[i] == h->outputs[o])
				return true;
	return false;
}

/* Order the "n" subgraphs "sg" so that each comes after every subgraph it
 * reads from (anchors in topological order break ties); write the order
 * into "order".  A subgraph that reads from a later one exists when a
 * stage fused or inlined into it reads a tensor whose anchor comes later
 * in the DAG's order (a residual branch). */
static ts_status order_subgraphs(ts_ctx *ctx, const ts_dag *dag,
	const ts_subgraph *sg, int n, int *order)
{
	bool *done = ts_new_atomic(bool, n + 1);

	for (int k = 0; k < n; k++) {
		int pick = -1;
		for (int g = 0; g < n && pick < 0; g++) {
			bool ready = !done[g];
			for (int h = 0; h < n && ready; h++)
				ready = h == g || done[h] ||
					!reads_from(&sg[g], &sg[h]);
			if (ready)
				pick = g;
		}
		if (pick < 0)
			return ts_ctx_set_error(ctx, "network '%s': the "
				"subgraphs read each other in a cycle",
				dag->name ? dag->name : "dag");
		done[pick] = true;
		order[k] = pick;
	}
	return TS_OK;
}

/* Build the DAG and the task of subgraph "sg" of "p". */
static ts_status build_subgraph(ts_ctx *ctx, ts_partition *p,
	ts_subgraph *sg, const ts_dag_info *info)
{
	ts_dag *sub = subgraph_dag(ctx, p->dag, sg);

	if (!sub)
		return ts_ctx_set_error(ctx, "network '%s': cannot build the "
			"subgraph of stage '%s': %s", p->dag->name ?
			p->dag->name : "dag", p->dag->stages[sg->anchor]->name,
			ts_ctx_error(ctx));
	sg->task = find_task(ctx, p, sub, p->dag, sg, info);
	return sg->task < 0 ? TS_ERROR : TS_OK;
}

ts_partition *ts_partition_dag(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target)
{
	ts_dag_info *info;
	ts_template *tp;
	struct membership *ms;
	ts_subgraph *sg;
	ts_partition *p;
	int *anchors, *order, ng;

	if (!dag || !target)
		return NULL;
	info = ts_analyze_dag(ctx, dag);
	tp = info ? ts_template_new(ctx, dag, info, target) : NULL;
	if (!tp)
		return NULL;
	ms = ts_new_array(struct membership, dag->nstages);
	anchors = ts_new_atomic(int, dag->nstages);
	ng = assign(tp, ms, anchors);
	sg = ts_new_array(ts_subgraph, ng + 1);
	order = ts_new_atomic(int, ng + 1);
	for (int g = 0; g < ng; g++) {
		sg[g].anchor = anchors[g];
		collect(dag, ms, g, &sg[g]);
	}
	if (order_subgraphs(ctx, dag, sg, ng, order) < 0)
		return NULL;
	p = ts_new(ts_partition);
	p->dag = dag;
	p->nsubgraphs = ng;
	p->subgraphs = ts_new_array(ts_subgraph, ng + 1);
	for (int k = 0; k < ng; k++) {
		p->subgraphs[k] = sg[order[k]];
		if (build_subgraph(ctx, p, &p->subgraphs[k], info) < 0)
			return NULL;
	}
	return p;
}

int64_t ts_partition_flops(const ts_partition *p)
{
	int64_t f = 0;

	for (int i = 0; i < p->ntasks; i++)
		f += p->tasks[i]->weight * p->tasks[i]->flops;
	return f;
}

/* Print the stages of task "t" with their classes. */
static void print_task_stages(FILE *out, const ts_task *t)
{
	ts_dag_info *info = ts_analyze_dag(t->dag->ctx, t->dag);

	for (int s = 0; s < t->dag->nstages; s++)
		fprintf(out, "%s%s (%s)", s ? ", " : "    stages: ",
			t->dag->stages[s]->name, info ?
			ts_class_name(info->stages[s]->klass) : "?");
	fputc('\n', out);
}

void ts_partition_print(FILE *out, const ts_partition *p)
{
	fprintf(out, "%d subgraphs, %d tasks, %.3f GFLOP\n", p->nsubgraphs,
		p->ntasks, (double)ts_partition_flops(p) * 1e-9);
	for (int i = 0; i < p->ntasks; i++) {
		const ts_task *t = p->tasks[i];
		fprintf(out, "task %d  anchor %s  class %s  weight %d  "
			"flops %" PRId64 "  hash %s\n", i, t->name,
			ts_class_name(t->klass), t->weight, t->flops, t->hash);
		print_task_stages(out, t);
	}
}

/* The statements emitted for "s" entered "mult" times (as
 * ts_func_emitted_stmts with "lanes"). */
static double stmt_count(const ts_stmt *s, double mult, int lanes)
{
	double n = 0;

	if (!s)
		return 0;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_UNROLLED)
			mult *= (double)s->var->extent;
		else if (s->loop == TS_LOOP_VECTORIZED)
			mult *= TS_MAX(1.0, (double)s->var->extent / lanes);
		return stmt_count(s->body, mult, lanes);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			n += stmt_count(s->stmts[i], mult, lanes);
		return n;
	case TS_STMT_IF:
		return stmt_count(s->body, mult, lanes) +
			stmt_count(s->orelse, mult, lanes);
	case TS_STMT_ALLOC:
		return stmt_count(s->body, mult, lanes);
	case TS_STMT_STORE:
		return mult;
	default:
		return 0;
	}
}

double ts_func_emitted_stmts(const ts_func *f, int lanes)
{
	return f ? stmt_count(f->body, 1, TS_MAX(lanes, 1)) : 0;
}

/* The f32 lanes of "target" (1 for a GPU). */
static int f32_lanes(const ts_target *target)
{
	return target->kind == TS_TARGET_CPU ?
		TS_MAX(1, ts_target_lanes(target, TS_F32)) : 1;
}

/* Fill "dag" statically for "target" ("k" best): the static baseline,
 * whose stream is seeded by the context's seed and the DAG's hash, so
 * that the same task gets the same static schedule wherever a network
 * pass asks for it (the layout pass times exactly the schedule the
 * network then runs) and the tuner measures that schedule as its static
 * choice. */
static ts_static_result *fill_seeded(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k)
{
	return ts_static_baseline_fill(ctx, dag, target, 0, k);
}

/* The first of the ranked configurations of "r" on "dag" whose code
 * stays within "max_stmts", lowered into "*f"; NULL when none does. */
static ts_schedule *first_within(ts_ctx *ctx, const ts_dag *dag,
	const ts_static_result *r, int lanes, double max_stmts, ts_func **f)
{
	for (int i = 0; i < r->k; i++) {
		ts_schedule *sch = ts_template_apply(r->tp, r->topk[i]);
		*f = sch ? ts_lower(ctx, dag, sch) : NULL;
		if (*f && ts_func_emitted_stmts(*f, lanes) <= max_stmts)
			return sch;
		ts_ctx_clear_error(ctx);
	}
	return NULL;
}

ts_schedule *ts_network_static_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k, double max_stmts, ts_func **f)
{
	ts_static_result *r = fill_seeded(ctx, dag, target, TS_MAX(k, 1));
	ts_func *lowered = NULL;
	ts_schedule *sch;

	if (!r)
		return NULL;
	sch = first_within(ctx, dag, r, f32_lanes(target), max_stmts,
		&lowered);
	if (!sch) {
		ts_ctx_warn(ctx, "'%s': every one of the %d best static "
			"configurations emits more than %.0f statements; "
			"using the naive schedule\n", dag->name ? dag->name :
			"dag", r->k, max_stmts);
		sch = ts_schedule_naive(ctx, dag);
		lowered = sch ? ts_lower(ctx, dag, sch) : NULL;
		if (!lowered)
			return NULL;
	}
	if (f)
		*f = lowered;
	return sch;
}

/* The median time of "sch" on task "dag" compiled for "tg" with
 * "threads" threads on the arrays "args", or INFINITY when it does not
 * lower or compile. */
static double time_candidate(ts_ctx *ctx, const ts_dag *dag,
	const ts_schedule *sch, const ts_target *tg, int threads,
	ts_array **args)
{
	ts_compile_options co = ts_compile_options_for(tg);
	ts_func *f = ts_lower(ctx, dag, sch);
	ts_module *m;
	ts_timing t;
	double s = INFINITY;

	co.threads = threads;
	m = f ? ts_module_compile(ctx, f, &co) : NULL;
	if (m && ts_module_time(m, args, 0.02, &t) == TS_OK)
		s = t.median_s;
	if (m)
		ts_module_free(m);
	ts_ctx_clear_error(ctx);
	return s;
}

/* Seeded inputs and fresh outputs for "dag", in argument order. */
static ts_array **task_args(ts_ctx *ctx, const ts_dag *dag)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	ts_array **args = ts_new_array(ts_array *,
		dag->ninputs + dag->noutputs + 1);

	for (int i = 0; in && i < dag->ninputs; i++)
		args[i] = in[i];
	for (int o = 0; o < dag->noutputs; o++)
		args[dag->ninputs + o] = ts_array_for_tensor(ctx,
			dag->outputs[o]);
	return in ? args : NULL;
}

/* The fastest of the ranked configurations of "r" on "dag" whose code
 * stays within TS_NETWORK_MAX_STMTS statements ("lanes": the target's
 * f32 lanes); the first within the bound, else naive, when none runs. */
static ts_schedule *fastest_of(ts_ctx *ctx, const ts_dag *dag,
	const ts_static_result *r, int threads, int lanes)
{
	ts_array **args = task_args(ctx, dag);
	ts_schedule *best = NULL;
	double best_s = INFINITY;
	ts_func *f;

	for (int i = 0; args && i < r->k; i++) {
		ts_schedule *sch = ts_template_apply(r->tp, r->topk[i]);
		ts_func *fn = sch ? ts_lower(ctx, dag, sch) : NULL;
		double s = fn && ts_func_emitted_stmts(fn, lanes) <=
			TS_NETWORK_MAX_STMTS ? time_candidate(ctx, dag, sch,
			r->tp->target, threads, args) : INFINITY;
		if (s < best_s) {
			best_s = s;
			best = sch;
		}
	}
	if (!best)
		best = first_within(ctx, dag, r, lanes, TS_NETWORK_MAX_STMTS,
			&f);
	return best ? best : ts_schedule_naive(ctx, dag);
}

/* Ranked static configurations a task may fall back on when the best
 * ones emit too much code. */
enum { STATIC_FALLBACKS = 8 };

ts_schedule **ts_partition_static_schedules(ts_ctx *ctx,
	const ts_partition *p, const ts_target *target, int topk,
	int threads)
{
	ts_schedule **sch = ts_new_array(ts_schedule *, p->ntasks + 1);

	for (int t = 0; t < p->ntasks; t++) {
		const ts_dag *dag = p->tasks[t]->dag;
		ts_static_result *r = topk > 1 ? fill_seeded(ctx, dag,
			target, topk) : NULL;
		if (r)
			sch[t] = fastest_of(ctx, dag, r, threads,
				f32_lanes(target));
		else if (topk <= 1)
			sch[t] = ts_network_static_schedule(ctx, dag, target,
				STATIC_FALLBACKS, TS_NETWORK_MAX_STMTS, NULL);
		if (!sch[t]) {
			ts_ctx_warn(ctx, "task %d (anchor '%s'): no static "
				"schedule (%s); running it naively\n", t,
				p->tasks[t]->name, ts_ctx_error(ctx));
			ts_ctx_clear_error(ctx);
		}
	}
	return sch;
}

ts_network *ts_network_compile(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const ts_network_options *opt)
{
	ts_network_options o = opt ? *opt : ts_network_options_default();
	const ts_target *host = target;
	ts_partition *p;
	ts_schedule **sch = NULL;

	if (!dag || !target)
		return NULL;
	target = ts_target_for_threads(target, o.threads);
	if (!o.target)
		o.target = target;
	p = ts_partition_dag(ctx, dag, target);
	if (p) {
		ts_layout_options lo = { o.threads, o.layout, o.keep_weights,
			o.records, false, o.declared_layouts || o.naive };
		p = ts_network_lay_out(ctx, dag, p, target, &lo, NULL, NULL);
	}
	if (!p)
		return NULL;
	/* Records are keyed by the target with its cores set to the
	 * threads, as tessel tune keys them. */
	if (!o.naive)
		sch = o.records ? ts_partition_schedules(ctx, p, host,
			o.records, o.topk, o.threads, NULL, NULL) :
			ts_partition_static_schedules(ctx, p, target, o.topk,
			o.threads);
	if (!o.naive && !sch)
		return NULL;
	return ts_network_build(ctx, p, sch, &o);
}

/* Whether subgraph "g" of "p" reads a network input of two or more
 * dimensions that no other subgraph reads (its own weights). */
static bool reads_own_weights(const ts_partition *p, int g)
{
	const ts_subgraph *sg = &p->subgraphs[g];

	for (int i = 0; i < sg->ninputs; i++) {
		const ts_tensor *t = sg->inputs[i];
		bool shared = false;
		if (t->stage || t->ndim < 2)
			continue;
		for (int h = 0; h < p->nsubgraphs && !shared; h++)
			for (int k = 0; h != g && k < p->subgraphs[h].ninputs;
			     k++)
				shared |= p->subgraphs[h].inputs[k] == t;
		if (!shared)
			return true;
	}
	return false;
}

bool ts_partition_is_network(const ts_partition *p)
{
	int layers = 0;

	/* One program of that many loop nests is searched as a whole by
	 * the static filler, in time that grows with its stages (a GRU of
	 * 16 steps, 70 stages: 20 s against 6 s as a network; two stacked
	 * bidirectional ones, 277 stages: 138 s against 13 s), and runs no
	 * faster than its subgraphs (0.062 against 0.067 ms; 0.35 against
	 * 0.31 ms). */
	if (p && p->nsubgraphs >= TS_NETWORK_MIN_SUBGRAPHS)
		return true;
	for (int g = 0; p && g < p->nsubgraphs; g++)
		layers += reads_own_weights(p, g);
	return layers >= 2;
}

ts_schedule **ts_partition_record_schedules(ts_ctx *ctx,
	const ts_partition *p, const ts_target *target, const char *log,
	const ts_record **used)
{
	ts_schedule **sch = ts_new_array(ts_schedule *, p->ntasks + 1);
	const char *key = ts_target_key(target);
	ts_record **recs;
	int n = 0;

	if (!(recs = ts_records_load(ctx, log, &n)))
		return NULL;
	for (int t = 0; t < p->ntasks; t++) {
		const ts_dag *dag = p->tasks[t]->dag;
		const ts_record *best = ts_records_best(recs, n,
			p->tasks[t]->hash, key);
		if (used)
			used[t] = best;
		if (best && !(sch[t] = ts_record_schedule(ctx, dag, best))) {
			ts_ctx_set_error(ctx, "%s:%d: the record of task %d "
				"(anchor '%s') does not replay: %s", log,
				best->line, t, p->tasks[t]->name,
				ts_ctx_error(ctx));
			return NULL;
		}
	}
	return sch;
}

/* Whether task "t" of "p" takes the schedule "rec" of its record "used"
 * (NULL: none) rather than "st" (its static schedule; NULL: naive); said
 * to "say". */
static bool take_record(ts_ctx *ctx, const ts_partition *p, int t,
	const ts_record *used, const ts_schedule *rec, const ts_schedule *st,
	const ts_target *key, const char *log, int threads,
	ts_network_say_fn say, void *data)
{
	const ts_dag *dag = p->tasks[t]->dag;
	const char *why = NULL;
	bool wins;

	if (!used) {
		if (say)
			say(data, ts_asprintf("task %d (anchor %s): no valid "
				"record in %s for workload %s on target %s: "
				"using the static schedule", t,
				p->tasks[t]->name, log, p->tasks[t]->hash,
				ts_target_key(key)));
		return false;
	}
	wins = ts_record_beats_static(ctx, dag, ts_lower(ctx, dag, rec),
		ts_lower(ctx, dag, st ? st : ts_schedule_naive(ctx, dag)), key,
		threads, &why);
	if (say)
		say(data, ts_asprintf("task %d (anchor %s): schedule of the "
			"record at %s:%d (median %.4g ms) %s", t,
			p->tasks[t]->name, log, used->line,
			used->median_s * 1e3, why));
	return wins;
}

ts_schedule **ts_partition_schedules(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, const char *log, int topk, int threads,
	ts_network_say_fn say, void *data)
{
	const ts_target *tg = ts_target_for_threads(target, threads);
	const ts_target *key = ts_records_target(target, threads);
	const ts_record **used = ts_new_array(const ts_record *,
		p->ntasks + 1);
	ts_schedule **rec = NULL, **st;
	int found = 0;

	if (log && !(rec = ts_partition_record_schedules(ctx, p, key, log,
	    used)))
		return NULL;
	st = ts_partition_static_schedules(ctx, p, tg, topk, threads);
	for (int t = 0; rec && t < p->ntasks; t++)
		if (take_record(ctx, p, t, used[t], rec[t], st[t], key, log,
		    threads, say, data)) {
			st[t] = rec[t];
			found++;
		}
	if (rec && say)
		say(data, ts_asprintf("%d of %d tasks from records, %d static",
			found, p->ntasks, p->ntasks - found));
	return st;
}
