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

#include <tessel/network.h>

#include "dsl/internal.h"

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
