/* Graph-level layout choice: one candidate layout per node, weighing the
 * kernel time of each candidate against the transformations it forces
 * on the edges to its neighbours.
 *
 * The exact solver is a dynamic programme over the topological order.
 * Its state is the choice of every "open" node: a node already decided
 * that still has an undecided successor.  On a chain the open set is one
 * node, on a tree the open nodes are the pending branches, on a DAG it is
 * whatever is live across the cut.  A table indexed by the mixed-radix
 * code of the open choices keeps the cheapest prefix per state; when a
 * table would exceed the bound the approximate solver takes over.
 */
#include <config.h>

#include <math.h>

#include <tessel/lower.h>
#include <tessel/network.h>
#include <tessel/search.h>

#include "dsl/ir.h"
#include "analysis/facts.h"

#include "support/support.h"
#include "networks/network_internal.h"

ts_layout_problem *ts_layout_problem_new(ts_ctx *ctx, int nnodes,
	const int *ncands)
{
	ts_layout_problem *lp;

	if (nnodes < 0) {
		ts_ctx_set_error(ctx, "layout problem: %d nodes", nnodes);
		return NULL;
	}
	lp = ts_new(ts_layout_problem);
	lp->nnodes = nnodes;
	lp->ncands = ts_new_atomic(int, nnodes + 1);
	lp->cost = ts_new_array(double *, nnodes + 1);
	lp->names = ts_new_array(const char **, nnodes + 1);
	for (int n = 0; n < nnodes; n++) {
		if (ncands[n] < 1) {
			ts_ctx_set_error(ctx, "layout problem: node %d has %d "
				"candidates", n, ncands[n]);
			return NULL;
		}
		lp->ncands[n] = ncands[n];
		lp->cost[n] = ts_new_atomic(double, ncands[n]);
		lp->names[n] = ts_new_array(const char *, ncands[n]);
	}
	return lp;
}

int ts_layout_problem_add_edge(ts_layout_problem *lp, ts_ctx *ctx, int u,
	int v)
{
	int e = lp->nedges;

	if (u < 0 || v >= lp->nnodes || u >= v) {
		ts_ctx_set_error(ctx, "layout problem: edge %d -> %d is not "
			"in topological order", u, v);
		return -1;
	}
	lp->eu = ts_grow(lp->eu, sizeof(int), e, e + 1);
	lp->ev = ts_grow(lp->ev, sizeof(int), e, e + 1);
	lp->trans = ts_grow(lp->trans, sizeof(double *), e, e + 1);
	lp->eu[e] = u;
	lp->ev[e] = v;
	lp->trans[e] = ts_new_atomic(double, lp->ncands[u] * lp->ncands[v]);
	lp->nedges++;
	return e;
}

double ts_layout_cost(const ts_layout_problem *lp, const int *choice)
{
	double c = 0;

	for (int n = 0; n < lp->nnodes; n++)
		c += lp->cost[n][choice[n]];
	for (int e = 0; e < lp->nedges; e++)
		c += lp->trans[e][choice[lp->eu[e]] * lp->ncands[lp->ev[e]] +
			choice[lp->ev[e]]];
	return c;
}

/* A solution for "choice" in "lp". */
static ts_layout_solution *solution(const ts_layout_problem *lp,
	const int *choice, bool exact)
{
	ts_layout_solution *s = ts_new(ts_layout_solution);
	int *zero = ts_new_atomic(int, lp->nnodes + 1);

	s->choice = ts_new_atomic(int, lp->nnodes + 1);
	memcpy(s->choice, choice, sizeof(int) * (size_t)lp->nnodes);
	s->total = ts_layout_cost(lp, choice);
	s->default_total = ts_layout_cost(lp, zero);
	s->exact = exact;
	return s;
}

/* The cost node "v" adds at candidate "c" given the choices of its
 * predecessors in "choice" (only edges into "v"). */
static double node_cost_in(const ts_layout_problem *lp, const int *choice,
	int v, int c)
{
	double x = lp->cost[v][c];

	for (int e = 0; e < lp->nedges; e++)
		if (lp->ev[e] == v)
			x += lp->trans[e][choice[lp->eu[e]] * lp->ncands[v] + c];
	return x;
}

/* The cost of every term that involves node "v" at candidate "c". */
static double node_cost_all(const ts_layout_problem *lp, const int *choice,
	int v, int c)
{
	double x = node_cost_in(lp, choice, v, c);

	for (int e = 0; e < lp->nedges; e++)
		if (lp->eu[e] == v)
			x += lp->trans[e][c * lp->ncands[lp->ev[e]] +
				choice[lp->ev[e]]];
	return x;
}

/* Change one node at a time in "choice" while that lowers the cost. */
static void improve(const ts_layout_problem *lp, int *choice)
{
	bool changed = true;

	for (int round = 0; changed && round < 100; round++) {
		changed = false;
		for (int v = 0; v < lp->nnodes; v++) {
			double best = node_cost_all(lp, choice, v, choice[v]);
			for (int c = 0; c < lp->ncands[v]; c++) {
				double x = node_cost_all(lp, choice, v, c);
				if (x < best - 1e-15) {
					best = x;
					choice[v] = c;
					changed = true;
				}
			}
		}
	}
}

ts_layout_solution *ts_layout_solve_approx(ts_ctx *ctx,
	const ts_layout_problem *lp)
{
	int *greedy = ts_new_atomic(int, lp->nnodes + 1);
	int *dflt = ts_new_atomic(int, lp->nnodes + 1);

	(void)ctx;
	for (int v = 0; v < lp->nnodes; v++) {
		double best = INFINITY;
		for (int c = 0; c < lp->ncands[v]; c++) {
			double x = node_cost_in(lp, greedy, v, c);
			if (x < best) {
				best = x;
				greedy[v] = c;
			}
		}
	}
	improve(lp, greedy);
	/* From the defaults, improvement can only lower the cost: the
	 * result is never worse than the all-default layout. */
	improve(lp, dflt);
	return solution(lp, ts_layout_cost(lp, greedy) <=
		ts_layout_cost(lp, dflt) ? greedy : dflt, false);
}

/* One step of the DP: the open nodes and the table over their choices. */
struct dp_step {
	int nopen;
	int *open;		/* node ids, increasing */
	int64_t size;		/* product of their candidate counts */
	double *cost;		/* per code: the cheapest prefix */
	int *parent;		/* per code: the code in the previous step */
	int *choice;		/* per code: the candidate of the new node */
};

/* The last successor of each node of "lp" (-1 if none). */
static int *last_successors(const ts_layout_problem *lp)
{
	int *last = ts_new_atomic(int, lp->nnodes + 1);

	for (int v = 0; v < lp->nnodes; v++)
		last[v] = -1;
	for (int e = 0; e < lp->nedges; e++)
		last[lp->eu[e]] = TS_MAX(last[lp->eu[e]], lp->ev[e]);
	return last;
}

/* Decode "code" of step "st" into "choice" (at the open nodes). */
static void dp_decode(const ts_layout_problem *lp, const struct dp_step *st,
	int64_t code, int *choice)
{
	for (int i = st->nopen - 1; i >= 0; i--) {
		int n = st->open[i];
		choice[n] = (int)(code % lp->ncands[n]);
		code /= lp->ncands[n];
	}
}

/* The code of the open nodes of "st" under "choice". */
static int64_t dp_encode(const ts_layout_problem *lp,
	const struct dp_step *st, const int *choice)
{
	int64_t code = 0;

	for (int i = 0; i < st->nopen; i++)
		code = code * lp->ncands[st->open[i]] + choice[st->open[i]];
	return code;
}

/* Set up step "next" after deciding node "v" from "prev"; false when its
 * table would exceed "max_states". */
static bool dp_open(const ts_layout_problem *lp, const int *last,
	const struct dp_step *prev, int v, struct dp_step *next,
	int64_t max_states)
{
	next->open = ts_new_atomic(int, prev->nopen + 1);
	next->nopen = 0;
	next->size = 1;
	for (int i = 0; i <= prev->nopen; i++) {
		int n = i < prev->nopen ? prev->open[i] : v;
		if (last[n] <= v)
			continue;
		next->open[next->nopen++] = n;
		next->size *= lp->ncands[n];
		if (next->size > max_states)
			return false;
	}
	next->cost = ts_new_atomic(double, next->size);
	next->parent = ts_new_atomic(int, next->size);
	next->choice = ts_new_atomic(int, next->size);
	for (int64_t k = 0; k < next->size; k++)
		next->cost[k] = INFINITY;
	return true;
}

/* Decide node "v": fill "next" from "prev". */
static void dp_step_node(const ts_layout_problem *lp, const struct dp_step *prev,
	int v, struct dp_step *next, int *choice)
{
	for (int64_t k = 0; k < prev->size; k++) {
		if (prev->cost[k] == INFINITY)
			continue;
		dp_decode(lp, prev, k, choice);
		for (int c = 0; c < lp->ncands[v]; c++) {
			double x;
			int64_t code;
			choice[v] = c;
			x = prev->cost[k] + node_cost_in(lp, choice, v, c);
			code = dp_encode(lp, next, choice);
			if (x < next->cost[code]) {
				next->cost[code] = x;
				next->parent[code] = (int)k;
				next->choice[code] = c;
			}
		}
	}
}

ts_layout_solution *ts_layout_solve(ts_ctx *ctx, const ts_layout_problem *lp,
	int64_t max_states)
{
	struct dp_step *st = ts_new_array(struct dp_step, lp->nnodes + 1);
	int *last = last_successors(lp), *choice;
	int64_t peak = 1, code = 0;
	ts_layout_solution *sol;

	choice = ts_new_atomic(int, lp->nnodes + 1);
	st[0].size = 1;
	st[0].cost = ts_new_atomic(double, 1);
	for (int v = 0; v < lp->nnodes; v++) {
		if (!dp_open(lp, last, &st[v], v, &st[v + 1], max_states)) {
			sol = ts_layout_solve_approx(ctx, lp);
			sol->states = st[v + 1].size;
			return sol;
		}
		dp_step_node(lp, &st[v], v, &st[v + 1], choice);
		peak = TS_MAX(peak, st[v + 1].size);
	}
	/* The last step has no open node: one entry.  Walk back. */
	for (int v = lp->nnodes - 1; v >= 0; v--) {
		choice[v] = st[v + 1].choice[code];
		code = st[v + 1].parent[code];
	}
	sol = solution(lp, choice, true);
	sol->states = peak;
	return sol;
}

ts_layout_solution *ts_layout_solve_exhaustive(ts_ctx *ctx,
	const ts_layout_problem *lp)
{
	int *c = ts_new_atomic(int, lp->nnodes + 1);
	int *best = ts_new_atomic(int, lp->nnodes + 1);
	double best_cost = ts_layout_cost(lp, c);

	(void)ctx;
	for (;;) {
		int n = 0;
		double x;
		while (n < lp->nnodes && ++c[n] == lp->ncands[n])
			c[n++] = 0;
		if (n == lp->nnodes)
			break;
		x = ts_layout_cost(lp, c);
		if (x < best_cost) {
			best_cost = x;
			memcpy(best, c, sizeof(int) * (size_t)lp->nnodes);
		}
	}
	return solution(lp, best, true);
}

/* Layouts of 4-D activations [n, c, h, w]. */
enum { LAYOUT_NCHW, LAYOUT_NHWC, LAYOUT_NCHWC, LAYOUT_COUNT };

/* The name of layout "l" with channel block "x". */
static const char *layout_name(int l, int x)
{
	if (l == LAYOUT_NHWC)
		return "NHWC";
	if (l == LAYOUT_NCHWC)
		return ts_asprintf("NCHW%dc", x);
	return "NCHW";
}

/* The number of dimensions of layout "l". */
static int layout_ndim(int l)
{
	return l == LAYOUT_NCHWC ? 5 : 4;
}

int ts_layout_physical_shape(int l, int x, const int64_t *s, int64_t *shape)
{
	int n = layout_ndim(l);

	for (int d = 0; d < n; d++)
		shape[d] = s[ts_layout_source_dim(l, d)];
	if (l == LAYOUT_NCHWC) {
		shape[1] = (shape[1] + x - 1) / x;
		shape[4] = x;
	}
	return n;
}

int ts_layout_source_dim(int l, int d)
{
	static const int nhwc[4] = { 0, 2, 3, 1 }, nchwc[5] = { 0, 1, 2, 3, 1 };

	return l == LAYOUT_NHWC ? nhwc[d] : l == LAYOUT_NCHWC ? nchwc[d] : d;
}

int ts_layout_channel_block(int l, int x)
{
	return l == LAYOUT_NCHWC ? x : 0;
}

int ts_layout_physical_index(ts_ctx *ctx, int l, int x, ts_expr *const *lg,
	ts_expr **ph)
{
	int n = layout_ndim(l);

	for (int d = 0; d < n; d++)
		ph[d] = lg[ts_layout_source_dim(l, d)];
	if (l == LAYOUT_NCHWC) {
		ph[1] = ts_floordiv(ctx, lg[1], ts_int(ctx, x));
		ph[4] = ts_mod(ctx, lg[1], ts_int(ctx, x));
	}
	return n;
}

void ts_layout_logical_index(ts_ctx *ctx, int l, int x, ts_expr *const *ph,
	ts_expr **lg)
{
	for (int d = 0; d < layout_ndim(l); d++)
		lg[ts_layout_source_dim(l, d)] = ph[d];
	if (l == LAYOUT_NCHWC)
		lg[1] = ts_add(ctx, ts_mul(ctx, ph[1], ts_int(ctx, x)), ph[4]);
}

/* A stage "name" that reads "src" (logical [n, c, h, w]) and stores it
 * in layout "l" (when "to_physical"), or reads "src" in layout "l" and
 * stores it logically. */
static ts_tensor *layout_stage(ts_ctx *ctx, const char *name, ts_tensor *src,
	const ts_tensor *logical, int l, int x, bool to_physical)
{
	int64_t phys[5];
	int nd = ts_layout_physical_shape(l, x, logical->shape, phys), n = to_physical ? nd : 4;
	ts_axis *ax[5];
	ts_expr *v[5], *idx[5];

	for (int d = 0; d < n; d++) {
		ax[d] = ts_axis_new(ctx, ts_asprintf("a%d", d),
			to_physical ? phys[d] : logical->shape[d]);
		v[d] = ts_var(ctx, ax[d]);
	}
	if (to_physical)
		ts_layout_logical_index(ctx, l, x, v, idx);
	else
		ts_layout_physical_index(ctx, l, x, v, idx);
	/* Channels that the block does not divide: the last block's lanes
	 * past them hold zeros. */
	if (to_physical && l == LAYOUT_NCHWC && logical->shape[1] % x)
		return ts_compute(ctx, name, n, ax, ts_select(ctx,
			ts_binary(ctx, TS_OP_LT, idx[1], ts_int(ctx,
			logical->shape[1])), ts_load(ctx, src, 4, idx),
			ts_float(ctx, 0.0)));
	return ts_compute(ctx, name, n, ax, ts_load(ctx, src,
		to_physical ? 4 : nd, idx));
}

/* Weights.  A weight (an input declared "weight") may be kept blocked
 * along one dimension: W[..., d, ...] becomes W'[d / B, ..., B],
 * so that a vector along that dimension is contiguous and the blocks
 * of the register tile follow each other in memory, whatever the
 * declared order (the output-channel blocks of a convolution's OIHW
 * weights, the packed panels of a dense layer).  The conversion runs
 * once, not at every run (ts_subgraph.once). */

/* Add every load of "t" in "e" to "v". */
static void loads_of(const ts_expr *e, const ts_tensor *t, ts_vec *v)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD) {
		if (e->tensor == t)
			ts_vec_push(v, (void *)e);
		for (int d = 0; d < e->nargs; d++)
			loads_of(e->args[d], t, v);
		return;
	}
	loads_of(e->a, t, v);
	loads_of(e->b, t, v);
	loads_of(e->c, t, v);
}

/* Whether some input of stage "s" other than "t" reads axis "a". */
static bool others_read(const ts_stage *s, const ts_tensor *t,
	const ts_axis *a)
{
	for (int i = 0; i < s->ninputs; i++) {
		ts_vec v = { 0 };
		if (s->inputs[i] == t)
			continue;
		loads_of(s->body, s->inputs[i], &v);
		for (int k = 0; k < v.n; k++) {
			const ts_expr *ld = v.v[k];
			for (int d = 0; d < ld->nargs; d++)
				if (ts_expr_uses_axis(ld->args[d], a))
					return true;
		}
	}
	return false;
}

/* Whether some dimension of load "ld" is indexed by a reduction axis of
 * "s". */
static bool reduced_in(const ts_stage *s, const ts_expr *ld)
{
	for (int d = 0; d < ld->nargs; d++)
		for (int r = 0; r < s->nraxes; r++)
			if (ts_expr_uses_axis(ld->args[d], s->raxes[r]))
				return true;
	return false;
}

/* Whether blocks of "x" over an extent "n" would waste more than an
 * eighth of what they hold in padding (10 outputs in blocks of 8: a
 * 10x500 product ran 2x slower padded to 16). */
static bool padded_waste(int64_t n, int x)
{
	return ((n + x - 1) / x * x - n) * 8 > n;
}

/* The dimension of input "t" of task DAG "sub" that a blocked layout of
 * block "x" splits, or -1: "t" is read once, by one stage, and that
 * dimension's index is a spatial axis of the stage of an extent "x"
 * divides; the innermost such dimension.  Without "shared", no other
 * input reads that axis (a dimension the weight owns, like a
 * convolution's output channel).  With it, another input may read it
 * too, as long as the stage reduces over another dimension of "t": the
 * channels of a depthwise convolution's W[c, 0, r, s], which vectors
 * along c read one lane per channel (gathers, 3x slower over a 960
 * channel layer in NHWC, unless blocked).  With "pad", an extent that
 * "x" does not divide is blocked too, its last block padded with zeros,
 * where that wastes little (padded_waste): a dense layer of 500 outputs
 * reading a 50x4x4 feature map otherwise vectorises along the outputs
 * with gathers of rows 800 elements apart (3.3 GFLOP/s). */
static int weight_dim(const ts_dag *sub, const ts_tensor *t, int x,
	bool shared, bool pad)
{
	const ts_stage *reader = NULL;
	const ts_expr *ld = NULL;

	if (x <= 1 || t->ndim < 2)
		return -1;
	for (int s = 0; s < sub->nstages; s++) {
		ts_vec v = { 0 };
		loads_of(sub->stages[s]->body, t, &v);
		if (v.n == 0)
			continue;
		if (reader || v.n > 1)
			return -1;
		reader = sub->stages[s];
		ld = v.v[0];
	}
	if (!reader || (shared && !reduced_in(reader, ld)))
		return -1;
	for (int d = ld->nargs - 1; d >= 0; d--) {
		const ts_expr *e = ld->args[d];
		bool spatial = false;
		if (e->kind != TS_EXPR_VAR || (t->shape[d] % x &&
		    (!pad || padded_waste(t->shape[d], x))))
			continue;
		for (int a = 0; a < reader->ndim; a++)
			spatial |= reader->axes[a] == e->axis;
		if (spatial && (shared || !others_read(reader, t, e->axis)))
			return d;
	}
	return -1;
}

/* The blocked shape of "t" split by "x" along "d" (block_stage's
 * layout; the last block padded when "x" does not divide the extent),
 * into "shape". */
static int blocked_shape(const ts_tensor *t, int d, int x, int64_t *shape)
{
	int j = 1;

	shape[0] = (t->shape[d] + x - 1) / x;
	for (int k = 0; k < t->ndim; k++)
		if (k != d)
			shape[j++] = t->shape[k];
	shape[t->ndim] = x;
	return t->ndim + 1;
}

/* A stage "name" that reads "src" (of logical shape "lg") and stores it
 * blocked by "x" along dimension "d" (when "to_blocked"), or reads the
 * blocked "src" and stores it logically.  The blocked layout puts the
 * block index first and the position in the block last, the other
 * dimensions in order between them: [d / x, ..., x], so that one block
 * (a register tile's worth of output channels) is contiguous whatever
 * the declared order (OIHW and HWIO weights give the same layout). */
static ts_tensor *block_stage(ts_ctx *ctx, const char *name, ts_tensor *src,
	const ts_tensor *lg, int d, int x, bool to_blocked)
{
	int n = lg->ndim, j = 1;
	int64_t shape[TS_MAX_DIMS];
	ts_axis *ax[TS_MAX_DIMS];
	ts_expr *idx[TS_MAX_DIMS];

	if (n + 1 > TS_MAX_DIMS)
		return NULL;
	if (to_blocked) {
		blocked_shape(lg, d, x, shape);
		for (int k = 0; k <= n; k++)
			ax[k] = ts_axis_new(ctx, ts_asprintf("a%d", k),
				shape[k]);
		for (int k = 0; k < n; k++)
			idx[k] = k == d ? ts_add(ctx, ts_mul(ctx,
				ts_var(ctx, ax[0]), ts_int(ctx, x)),
				ts_var(ctx, ax[n])) : ts_var(ctx, ax[j++]);
		if (lg->shape[d] % x == 0)
			return ts_compute(ctx, name, n + 1, ax,
				ts_load(ctx, src, n, idx));
		/* Zeros past the extent: a padded lane adds nothing. */
		return ts_compute(ctx, name, n + 1, ax, ts_select(ctx,
			ts_binary(ctx, TS_OP_LT, idx[d], ts_int(ctx,
			lg->shape[d])), ts_load(ctx, src, n, idx),
			ts_float(ctx, 0.0)));
	}
	for (int k = 0; k < n; k++)
		ax[k] = ts_axis_new(ctx, ts_asprintf("a%d", k), lg->shape[k]);
	idx[0] = ts_floordiv(ctx, ts_var(ctx, ax[d]), ts_int(ctx, x));
	for (int k = 0; k < n; k++)
		if (k != d)
			idx[j++] = ts_var(ctx, ax[k]);
	idx[n] = ts_mod(ctx, ts_var(ctx, ax[d]), ts_int(ctx, x));
	return ts_compute(ctx, name, n, ax, ts_load(ctx, src, n + 1, idx));
}

/* Whether every load of "t" in stage "r" reads its channel dimension at
 * the channel axis of "r", or at one of its reduction axes whose extent
 * block "x" (0: none) divides (a convolution summing over the channels
 * of its input: the copy splits that axis by the block,
 * ts_dag_copy_stages). */
static bool channel_kept(const ts_stage *r, const ts_tensor *t, int x)
{
	ts_vec v = { 0 };

	loads_of(r->body, t, &v);
	for (int k = 0; k < v.n; k++) {
		const ts_expr *ld = v.v[k];
		bool ok = ld->args[1]->kind == TS_EXPR_VAR &&
			ld->args[1]->axis == r->axes[1];
		for (int a = 0; !ok && a < r->nraxes; a++)
			ok = ld->args[1]->kind == TS_EXPR_VAR &&
				ld->args[1]->axis == r->raxes[a] &&
				(x <= 1 || r->raxes[a]->extent % x == 0);
		if (!ok)
			return false;
	}
	return true;
}

/* Whether the channel extent "c" may be blocked by "x": the blocks
 * divide it, or pad its last block with little waste. */
static bool channels_block(int64_t c, int x)
{
	return c % x == 0 || !padded_waste(c, x);
}

/* The index of input "t" of "sub", or -1. */
static int input_index(const ts_dag *sub, const ts_tensor *t)
{
	for (int i = 0; i < sub->ninputs; i++)
		if (sub->inputs[i] == t)
			return i;
	return -1;
}

/* Whether dimension "d" of load "ld" in stage "st" of "sub" (of input
 * "in", or -1) exists over the padded channels "padded" when "d" is
 * indexed by the channel axis (padded_reads_ok). */
static bool padded_dim_ok(const ts_dag *sub, const ts_stage *st,
	const ts_expr *ld, int d, int in, int64_t padded, const bool *act,
	const int *wdim, const int *wb, const bool *ph)
{
	const ts_tensor *t = ld->tensor;

	if (!ts_expr_uses_axis(ld->args[d], st->axes[1]))
		return true;
	if (ld->args[d]->kind != TS_EXPR_VAR)
		return false;
	if (in < 0)
		return t->stage && ph[ts_dag_stage_index(sub, t->stage)];
	return (act[in] && d == 1) || (wdim && wdim[in] == d &&
		(t->shape[d] + wb[in] - 1) / wb[in] * wb[in] >= padded);
}

/* Whether stage "st" of "sub", computed over the channels of NCHW[x]c
 * including the last block's padding, reads only what exists there.  A
 * body that is not a reduction is guarded (ts_dag_copy_stages selects
 * zeros past the channels); a reduction (a convolution to 1000
 * channels) may read along its channel axis only activation inputs
 * ("act": stored padded), weights blocked along that dimension whose
 * padding covers the last block ("wdim", "wb") and stages stored in
 * the layout ("ph"). */
static bool padded_reads_ok(const ts_dag *sub, const ts_stage *st, int x,
	const bool *act, const int *wdim, const int *wb, const bool *ph)
{
	int64_t c = st->out->shape[1], padded = (c + x - 1) / x * x;

	if (c % x == 0 || st->body->kind != TS_EXPR_REDUCE)
		return true;
	for (int i = 0; i < st->ninputs; i++) {
		const ts_tensor *t = st->inputs[i];
		int in = input_index(sub, t);
		ts_vec v = { 0 };
		loads_of(st->body, t, &v);
		for (int k = 0; k < v.n; k++)
			for (int d = 0; d < ((ts_expr *)v.v[k])->nargs; d++)
				if (!padded_dim_ok(sub, st, v.v[k], d, in, padded,
				    act, wdim, wb, ph))
					return false;
	}
	return true;
}

/* physical_stages, with "padded": also the stages whose channels the
 * block pads (checked after by padded_reads_ok). */
static bool *physical_stages_padded(const ts_dag *sub, int l, int x,
	bool padded)
{
	bool *ph = ts_new_atomic(bool, sub->nstages + 1);

	memset(ph, 0, sizeof(bool) * (size_t)(sub->nstages + 1));
	for (int s = sub->nstages - 1; s >= 0; s--) {
		const ts_stage *st = sub->stages[s];
		bool ok = st->ndim == 4 && (l != LAYOUT_NCHWC ||
			st->out->shape[1] % x == 0 || (padded &&
			channels_block(st->out->shape[1], x)));
		ok &= ts_dag_is_output(sub, st->out) ||
			sub->nconsumers[s] > 0;
		for (int k = 0; ok && k < sub->nconsumers[s]; k++) {
			int r = sub->consumers[s][k];
			ok = ph[r] && channel_kept(sub->stages[r], st->out,
				ts_layout_channel_block(l, x));
		}
		ph[s] = ok;
	}
	return ph;
}

/* Which stages of "sub" are computed in layout "l" with block "x" when
 * its outputs take it: a 4-D stage whose channels the block divides (or
 * pads, where padded_reads_ok holds for every such stage) and
 * that is an output or read only by such stages, each at its own
 * channel (a padding stage read through a window) or summed over its
 * channels (a convolution's input, whose bias and clip an importer
 * writes as stages of their own: left in the declared NCHW, they were
 * transposed in the convolution's tiles, MobileNetV2's projections at
 * 29 to 56 GFLOP/s).  They then accumulate and store in that layout
 * directly; the others, in their declared layout, are converted as they
 * are read or written. */
static bool *physical_stages(const ts_dag *sub, int l, int x,
	const bool *act, const int *wdim, const int *wb)
{
	bool *ph = physical_stages_padded(sub, l, x, true);

	if (l != LAYOUT_NCHWC)
		return ph;
	for (int s = 0; s < sub->nstages; s++)
		if (ph[s] && !padded_reads_ok(sub, sub->stages[s], x, act,
		    wdim, wb, ph))
			return physical_stages_padded(sub, l, x, false);
	return ph;
}

/* Rewrite task DAG "sub" so that its inputs flagged in "act" and its
 * 4-D outputs are in layout "l" (block "x"), and its inputs with
 * "wdim"[i] >= 0 (may be NULL) are blocked by "wb"[i] along that
 * dimension: each such input becomes a placeholder of the physical shape
 * read through a view stage, each output is stored through a layout
 * stage. */
static ts_dag *relayout_dag(ts_ctx *ctx, const ts_dag *sub, const bool *act,
	int l, int x, const int *wdim, const int *wb)
{
	ts_tensor **in = ts_new_array(ts_tensor *, sub->ninputs + 1);
	ts_tensor **view = ts_new_array(ts_tensor *, sub->ninputs + 1);
	ts_tensor **outs = ts_new_array(ts_tensor *, sub->noutputs + 1);
	ts_relayout rl = { l, x, NULL };
	ts_dag *d;

	for (int i = 0; i < sub->ninputs; i++) {
		const ts_tensor *t = sub->inputs[i];
		int64_t phys[TS_MAX_DIMS];
		bool blk = wdim && wdim[i] >= 0;
		int nd = act[i] ? ts_layout_physical_shape(l, x, t->shape,
			phys) :
			blk ? blocked_shape(t, wdim[i], wb[i], phys) : t->ndim;
		in[i] = ts_placeholder(ctx, t->name, t->dtype, nd,
			act[i] || blk ? phys : t->shape);
		view[i] = act[i] ? layout_stage(ctx, ts_asprintf("%s_view",
			t->name), in[i], t, l, x, false) :
			blk ? block_stage(ctx, ts_asprintf("%s_view",
			t->name), in[i], t, wdim[i], wb[i], false) : in[i];
		if (!view[i])
			return NULL;
	}
	rl.physical = l != LAYOUT_NCHW ? physical_stages(sub, l, x, act, wdim,
		wb) : NULL;
	if (ts_dag_copy_stages(ctx, sub, view, outs, true,
	    rl.physical ? &rl : NULL) < 0)
		return NULL;
	for (int o = 0; o < sub->noutputs; o++)
		if (outs[o]->ndim == 4 && l != LAYOUT_NCHW &&
		    !rl.physical[ts_dag_stage_index(sub,
		    sub->outputs[o]->stage)])
			outs[o] = layout_stage(ctx, ts_asprintf("%s_%s",
				outs[o]->name, layout_name(l, x)), outs[o],
				outs[o], l, x, true);
	d = ts_dag_new(ctx, sub->ninputs, in, sub->noutputs, outs);
	if (d)
		d->name = ts_asprintf("%s@%s%s", sub->name,
			layout_name(l, x), wdim ? "+w" : "");
	return d;
}

/* A DAG that converts "t" from layout "a" to layout "b". */
static ts_dag *transform_dag(ts_ctx *ctx, const ts_tensor *t, int a, int b,
	int x)
{
	int64_t phys[5];
	int nd = ts_layout_physical_shape(a, x, t->shape, phys);
	ts_tensor *in = ts_placeholder(ctx, "T", t->dtype, nd, phys);
	ts_tensor *lg = layout_stage(ctx, "T_logical", in, t, a, x, false);
	ts_tensor *out = lg ? layout_stage(ctx, "T_out", lg, t, b, x, true)
		: NULL;

	return out ? ts_dag_new(ctx, 1, &in, 1, &out) : NULL;
}

/* Whether network tensor "t" is an activation that may change layout:
 * 4-D, computed by a stage, not a network output. */
static bool is_activation(const ts_dag *net, const ts_tensor *t)
{
	return t->ndim == 4 && t->stage && !ts_dag_is_output(net, t);
}

/* The layouts subgraph "sg" may take (a prefix of the layout enum): NCHW
 * only unless it touches an activation and writes no 4-D network output;
 * NCHW[x]c only when "x" blocks every activation's channels (divides
 * them, or pads the last block with little waste: SqueezeNet's 1000
 * channels in 63 blocks of 16). */
static int node_layouts(const ts_dag *net, const ts_subgraph *sg, int x)
{
	bool any = false, blocked = x > 1;

	for (int o = 0; o < sg->noutputs; o++) {
		const ts_tensor *t = sg->outputs[o];
		if (t->ndim == 4 && !is_activation(net, t))
			return 1;
		if (t->ndim == 4) {
			any = true;
			blocked &= channels_block(t->shape[1], x);
		}
	}
	for (int i = 0; i < sg->ninputs; i++)
		if (is_activation(net, sg->inputs[i])) {
			any = true;
			blocked &= channels_block(sg->inputs[i]->shape[1], x);
		}
	return !any ? 1 : blocked ? LAYOUT_COUNT : LAYOUT_NCHWC;
}

/* Which inputs of "sg" are activations, into "act". */
static void activation_inputs(const ts_dag *net, const ts_subgraph *sg,
	bool *act)
{
	for (int i = 0; i < sg->ninputs; i++)
		act[i] = is_activation(net, sg->inputs[i]);
}

/* The model's estimate of "dag" under its best static configuration
 * for "threads" threads, in seconds (INFINITY when it has none). */
static double estimate_dag(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, int threads)
{
	ts_static_result *r = ts_static_baseline_fill(ctx, dag, tg, threads,
		1);

	ts_ctx_clear_error(ctx);
	return r && r->k > 0 ? r->best_cost : INFINITY;
}

/* Time "dag" under its static schedule with "threads" threads, or with
 * "estimate" rate it with the model instead; a cache keyed by canonical
 * string avoids rating a DAG twice. */
static double time_dag(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	int threads, bool estimate, ts_vec *keys, ts_vec *vals)
{
	const char *key = ts_dag_canonical_string(dag);
	ts_schedule *sch;
	ts_func *f = NULL;
	ts_array **in, **args;
	ts_module *m = NULL;
	ts_compile_options co = ts_compile_options_for(tg);
	ts_timing t;
	double s = INFINITY, *v;

	for (int i = 0; i < keys->n; i++)
		if (!strcmp(keys->v[i], key))
			return *(double *)vals->v[i];
	if (estimate) {
		v = ts_new_atomic(double, 1);
		*v = estimate_dag(ctx, dag, tg, threads);
		ts_vec_push(keys, (void *)key);
		ts_vec_push(vals, v);
		return *v;
	}
	/* The code size is bounded: a candidate whose static schedule
	 * unrolls a whole tensor would keep LLVM busy for minutes and
	 * gigabytes (the network build bounds it the same way). */
	sch = ts_network_static_schedule(ctx, dag, tg, 8,
		TS_NETWORK_MAX_STMTS, &f);
	co.threads = threads;
	in = ts_dag_random_inputs(ctx, dag, 1);
	args = ts_new_array(ts_array *, dag->ninputs + dag->noutputs + 1);
	for (int i = 0; in && i < dag->ninputs; i++)
		args[i] = in[i];
	for (int o = 0; o < dag->noutputs; o++)
		args[dag->ninputs + o] = ts_array_for_tensor(ctx,
			dag->outputs[o]);
	if (sch && in)
		m = ts_module_compile(ctx, f, &co);
	if (m && ts_module_time(m, args, 0.05, &t) == TS_OK)
		s = t.median_s;
	if (m)
		ts_module_free(m);
	ts_ctx_clear_error(ctx);
	v = ts_new_atomic(double, 1);
	*v = s;
	ts_vec_push(keys, (void *)key);
	ts_vec_push(vals, v);
	return s;
}

/* The subgraph of "p" before "g" that writes "t", or -1. */
static int producer_of(const ts_partition *p, int g, const ts_tensor *t)
{
	for (int h = 0; h < g; h++)
		for (int o = 0; o < p->subgraphs[h].noutputs; o++)
			if (p->subgraphs[h].outputs[o] == t)
				return h;
	return -1;
}

/* What the layout pass measures with, and remembers. */
struct layout_env {
	ts_ctx *ctx;
	const ts_partition *p;
	const ts_target *tg;
	int threads, x;
	bool estimate;		/* rate with the model, not the clock */
	ts_vec keys, vals;	/* timing cache */
	bool **wblock;		/* [g][c]: layout c of node g blocks its
				 * weights (NULL: never) */
	double *plain;		/* [g]: node g in NCHW, weights as declared */
	ts_vec blocked;		/* struct blocked: weights blocked so far */
};

/* A weight "t" blocked by "b" along dimension "d" into "out", by a
 * subgraph that every later reader of the same blocking shares. */
struct blocked {
	const ts_tensor *t;
	int d, b;
	ts_tensor *out;
};

/* The weights of subgraph "g" of "env" that a blocked layout can split:
 * "wdim"[i] the dimension of input i (-1 for none), "wb"[i] its block,
 * two vectors of f32 lanes where the extent allows, else one.  Return
 * whether there is any. */
static bool node_weights(struct layout_env *env, int g, int *wdim, int *wb)
{
	const ts_subgraph *sg = &env->p->subgraphs[g];
	const ts_dag *sub = env->p->tasks[sg->task]->dag;
	bool any = false;

	for (int i = 0; i < sg->ninputs; i++) {
		wb[i] = 2 * env->x;
		wdim[i] = -1;
		if (!sg->inputs[i]->weight || sg->inputs[i]->stage)
			continue;
		wdim[i] = weight_dim(sub, sub->inputs[i], wb[i], false,
			false);
		if (wdim[i] < 0) {
			wb[i] = env->x;
			wdim[i] = weight_dim(sub, sub->inputs[i], wb[i], false,
				false);
		}
		if (wdim[i] < 0)
			wdim[i] = weight_dim(sub, sub->inputs[i], wb[i], true,
				false);
		if (wdim[i] < 0)
			wdim[i] = weight_dim(sub, sub->inputs[i], wb[i], false,
				true);
		any |= wdim[i] >= 0;
	}
	return any;
}

/* The DAG of subgraph "g" of "env" in layout "l", with its weights
 * blocked when "weights" (and it has any that can be). */
static ts_dag *node_dag(struct layout_env *env, int g, int l, bool weights)
{
	const ts_subgraph *sg = &env->p->subgraphs[g];
	bool *act = ts_new_atomic(bool, sg->ninputs + 1);
	int *wdim = ts_new_atomic(int, sg->ninputs + 1);
	int *wb = ts_new_atomic(int, sg->ninputs + 1);
	const ts_dag *sub = env->p->tasks[sg->task]->dag;

	weights = weights && node_weights(env, g, wdim, wb);
	if (l == LAYOUT_NCHW && !weights)
		return (ts_dag *)sub;
	if (l != LAYOUT_NCHW)
		activation_inputs(env->p->dag, sg, act);
	return relayout_dag(env->ctx, sub, act, l, env->x,
		weights ? wdim : NULL, wb);
}

/* Fill the costs of node "g" and of the edges into it in "lp": each
 * layout's cost is the faster of its kernel with the weights as
 * declared and with them blocked (the conversion of a weight runs once,
 * so it costs nothing per run). */
static ts_status fill_node(struct layout_env *env, ts_layout_problem *lp,
	int g)
{
	const ts_subgraph *sg = &env->p->subgraphs[g];
	int *wdim = ts_new_atomic(int, sg->ninputs + 1);
	int *wb = ts_new_atomic(int, sg->ninputs + 1);
	bool blockable = env->wblock && node_weights(env, g, wdim, wb);

	/* Rated by the model, a layout takes its weights blocked wherever
	 * they can be (the static rule, ts_partition_block_weights): the
	 * model rated BERT's matrix products on declared weights as fast,
	 * and the layer ran 1.1x slower; only the default's declared cost
	 * is rated, for the total as declared. */
	for (int c = 0; c < lp->ncands[g]; c++) {
		ts_dag *d = node_dag(env, g, c, false);
		if (!d)
			return TS_ERROR;
		lp->cost[g][c] = env->estimate && blockable && c > 0 ?
			INFINITY : time_dag(env->ctx, d, env->tg, env->threads,
			env->estimate, &env->keys, &env->vals);
		lp->names[g][c] = layout_name(c, env->x);
		if (c == 0 && env->plain)
			env->plain[g] = lp->cost[g][c];
		if (blockable) {
			double t;
			if (!(d = node_dag(env, g, c, true)))
				return TS_ERROR;
			t = time_dag(env->ctx, d, env->tg, env->threads,
				env->estimate, &env->keys, &env->vals);
			if (t < lp->cost[g][c] || env->estimate) {
				lp->cost[g][c] = t;
				lp->names[g][c] = ts_asprintf("%s, weights "
					"blocked", layout_name(c, env->x));
				env->wblock[g][c] = true;
			}
		}
	}
	for (int i = 0; i < sg->ninputs; i++) {
		int h, e;
		if (!is_activation(env->p->dag, sg->inputs[i]))
			continue;
		h = producer_of(env->p, g, sg->inputs[i]);
		e = h < 0 ? -1 : ts_layout_problem_add_edge(lp, env->ctx, h, g);
		for (int a = 0; e >= 0 && a < lp->ncands[h]; a++)
			for (int b = 0; b < lp->ncands[g]; b++)
				lp->trans[e][a * lp->ncands[g] + b] = a == b ? 0 :
					time_dag(env->ctx, transform_dag(env->ctx,
					sg->inputs[i], a, b, env->x), env->tg,
					env->threads, env->estimate, &env->keys,
					&env->vals);
	}
	return TS_OK;
}

/* Append subgraph "sg" to "q". */
static void push_subgraph(ts_partition *q, const ts_subgraph *sg)
{
	q->subgraphs = ts_grow(q->subgraphs, sizeof(ts_subgraph),
		q->nsubgraphs, q->nsubgraphs + 1);
	q->subgraphs[q->nsubgraphs++] = *sg;
}

/* Insert into "q" the conversion of input "i" of "sg" (written by "h" in
 * layout "a") to layout "b", and read the converted tensor instead. */
static void insert_transform(struct layout_env *env, ts_partition *q,
	ts_subgraph *sg, int i, int a, int b)
{
	const ts_tensor *t = sg->inputs[i];
	ts_subgraph tr = { 0 };
	ts_tensor *conv = ts_placeholder(env->ctx, ts_asprintf("%s_%s",
		t->name, layout_name(b, env->x)), t->dtype, 4, t->shape);

	tr.anchor = sg->anchor;
	tr.ninputs = tr.noutputs = 1;
	tr.inputs = ts_new_array(ts_tensor *, 1);
	tr.outputs = ts_new_array(ts_tensor *, 1);
	tr.inputs[0] = (ts_tensor *)t;
	tr.outputs[0] = conv;
	tr.task = ts_partition_add_task(q,
		transform_dag(env->ctx, t, a, b, env->x),
		ts_asprintf("%s->%s", layout_name(a, env->x),
		layout_name(b, env->x)), TS_CLASS_DIRECT, 0);
	push_subgraph(q, &tr);
	sg->inputs[i] = conv;
}

/* Have input "i" of "sg", a weight, read it blocked by "b" along
 * dimension "d": insert into "q" the blocking, run once
 * (ts_subgraph.once), unless an earlier subgraph of "q" blocked the same
 * weight in the same way (a recurrent layer reads its weights at every
 * step), whose output it then reads.  Returns whether it inserted. */
static bool insert_weight_transform(struct layout_env *env, ts_partition *q,
	ts_subgraph *sg, int i, int d, int b)
{
	ts_ctx *ctx = env->ctx;
	const ts_tensor *t = sg->inputs[i];
	int64_t shape[TS_MAX_DIMS];
	int nd;
	ts_tensor *in, *out;
	ts_subgraph tr = { 0 };
	struct blocked *bl;

	for (int k = 0; k < env->blocked.n; k++) {
		bl = env->blocked.v[k];
		if (bl->t == t && bl->d == d && bl->b == b) {
			sg->inputs[i] = bl->out;
			return false;
		}
	}
	nd = blocked_shape(t, d, b, shape);
	in = ts_placeholder(ctx, "W", t->dtype, t->ndim, t->shape);
	out = block_stage(ctx, "W_blocked", in, t, d, b, true);

	tr.anchor = sg->anchor;
	tr.once = true;
	tr.ninputs = tr.noutputs = 1;
	tr.inputs = ts_new_array(ts_tensor *, 1);
	tr.outputs = ts_new_array(ts_tensor *, 1);
	tr.inputs[0] = (ts_tensor *)t;
	tr.outputs[0] = ts_placeholder(ctx, ts_asprintf("%s_blocked%d",
		t->name, b), t->dtype, nd, shape);
	tr.task = ts_partition_add_task(q, ts_dag_new(ctx, 1, &in, 1, &out),
		ts_asprintf("weight blocked %d", b), TS_CLASS_DIRECT, 0);
	push_subgraph(q, &tr);
	sg->inputs[i] = tr.outputs[0];
	bl = ts_new(struct blocked);
	*bl = (struct blocked){ t, d, b, tr.outputs[0] };
	ts_vec_push(&env->blocked, bl);
	return true;
}

/* The partition of "env" with the layouts "choice" applied: relaid
 * tasks, the transformations between them, and the blocking of the
 * weights where the choice blocks them. */
static ts_partition *apply_layouts(struct layout_env *env, const int *choice,
	int *ntransforms)
{
	const ts_partition *p = env->p;
	ts_partition *q = ts_new(ts_partition);

	q->dag = p->dag;
	for (int g = 0; g < p->nsubgraphs; g++) {
		ts_subgraph sg = p->subgraphs[g];
		const ts_task *t = p->tasks[sg.task];
		sg.inputs = ts_new_array(ts_tensor *, sg.ninputs + 1);
		memcpy(sg.inputs, p->subgraphs[g].inputs,
			sizeof(ts_tensor *) * (size_t)sg.ninputs);
		for (int i = 0; i < sg.ninputs; i++) {
			int h = is_activation(p->dag, sg.inputs[i]) ?
				producer_of(p, g, sg.inputs[i]) : -1;
			if (h >= 0 && choice[h] != choice[g]) {
				insert_transform(env, q, &sg, i, choice[h],
					choice[g]);
				(*ntransforms)++;
			}
		}
		bool wblk = env->wblock && env->wblock[g][choice[g]];
		if (wblk) {
			int *wdim = ts_new_atomic(int, sg.ninputs + 1);
			int *wb = ts_new_atomic(int, sg.ninputs + 1);
			node_weights(env, g, wdim, wb);
			for (int i = 0; i < sg.ninputs; i++)
				if (wdim[i] >= 0)
					*ntransforms += insert_weight_transform(
						env, q, &sg, i, wdim[i], wb[i]);
		}
		sg.task = ts_partition_add_task(q, node_dag(env, g, choice[g],
			wblk), t->name, t->klass, t->flops);
		push_subgraph(q, &sg);
	}
	return q;
}

/* The channel block of layouts on "target": its f32 vector lanes. */
static int block_of(const ts_target *target)
{
	return target->kind == TS_TARGET_CPU ?
		TS_MAX(1, ts_target_lanes(target, TS_F32)) : 1;
}

int ts_network_layout_count(const ts_partition *p, const ts_target *target,
	int g)
{
	return node_layouts(p->dag, &p->subgraphs[g], block_of(target));
}

ts_partition *ts_network_apply_layouts(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, const int *choice, const bool *weights,
	int *ntransforms)
{
	struct layout_env env = { ctx, p, target, 0, block_of(target) };
	int n = 0;
	ts_partition *q;

	if (weights) {
		env.wblock = ts_new_array(bool *, p->nsubgraphs + 1);
		for (int g = 0; g < p->nsubgraphs; g++) {
			int nc = node_layouts(p->dag, &p->subgraphs[g], env.x);
			env.wblock[g] = ts_new_atomic(bool, nc + 1);
			for (int c = 0; c <= nc; c++)
				env.wblock[g][c] = weights[g];
		}
	}

	for (int g = 0; g < p->nsubgraphs; g++)
		if (choice[g] < 0 || choice[g] >= node_layouts(p->dag,
		    &p->subgraphs[g], env.x)) {
			ts_ctx_set_error(ctx, "subgraph %d (anchor '%s') cannot "
				"take layout %d", g,
				p->dag->stages[p->subgraphs[g].anchor]->name,
				choice[g]);
			return NULL;
		}
	q = apply_layouts(&env, choice, &n);
	if (ntransforms)
		*ntransforms = n;
	return q;
}

ts_partition *ts_partition_block_weights(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, int *nblocked)
{
	int *choice = ts_new_atomic(int, p->nsubgraphs + 1);
	bool *all = ts_new_atomic(bool, p->nsubgraphs + 1);

	for (int g = 0; g < p->nsubgraphs; g++) {
		choice[g] = LAYOUT_NCHW;
		all[g] = true;
	}
	return ts_network_apply_layouts(ctx, p, target, choice, all,
		nblocked);
}

/* The layout plan of "p": its costs timed or, with "estimate", rated by
 * the model. */
static ts_layout_plan *choose_layouts(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, int threads, int64_t max_states,
	bool estimate)
{
	struct layout_env env = { ctx, p, target, threads, block_of(target),
		estimate };
	int *nc = ts_new_atomic(int, p->nsubgraphs + 1);
	ts_layout_plan *plan = ts_new(ts_layout_plan);

	env.wblock = ts_new_array(bool *, p->nsubgraphs + 1);
	env.plain = ts_new_atomic(double, p->nsubgraphs + 1);
	for (int g = 0; g < p->nsubgraphs; g++) {
		nc[g] = node_layouts(p->dag, &p->subgraphs[g], env.x);
		env.wblock[g] = ts_new_atomic(bool, nc[g] + 1);
		memset(env.wblock[g], 0, sizeof(bool) * (size_t)(nc[g] + 1));
	}
	plan->problem = ts_layout_problem_new(ctx, p->nsubgraphs, nc);
	if (!plan->problem)
		return NULL;
	for (int g = 0; g < p->nsubgraphs; g++)
		if (fill_node(&env, plan->problem, g) < 0)
			return NULL;
	plan->solution = ts_layout_solve(ctx, plan->problem, max_states);
	if (!plan->solution)
		return NULL;
	/* The default is every layout as declared: NCHW activations and
	 * weights as the user holds them. */
	plan->solution->default_total = 0;
	for (int g = 0; g < p->nsubgraphs; g++)
		plan->solution->default_total += env.plain[g];
	plan->partition = apply_layouts(&env, plan->solution->choice,
		&plan->ntransforms);
	plan->weights = ts_new_atomic(bool, p->nsubgraphs + 1);
	for (int g = 0; g < p->nsubgraphs; g++)
		plan->weights[g] = env.wblock[g][plan->solution->choice[g]];
	return plan;
}

ts_layout_plan *ts_network_choose_layouts(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, int threads, int64_t max_states)
{
	return choose_layouts(ctx, p, target, threads, max_states, false);
}

ts_layout_plan *ts_network_estimate_layouts(ts_ctx *ctx,
	const ts_partition *p, const ts_target *target, int threads,
	int64_t max_states)
{
	return choose_layouts(ctx, p, target, threads, max_states, true);
}
