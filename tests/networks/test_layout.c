/* Graph-level layout choice: the DP against exhaustive search, the
 * approximate solver against the defaults. */
#include <config.h>

#include <math.h>

#include "tests/common.h"

/* A random problem of "n" nodes with up to 3 candidates each; "shape"
 * 0: a chain, 1: a tree (each node feeds a later one), 2: a DAG. */
static ts_layout_problem *random_problem(ts_ctx *ctx, int n, int shape)
{
	int ncands[16] = { 0 };
	ts_layout_problem *lp;

	for (int v = 0; v < n; v++)
		ncands[v] = 1 + (int)ts_ctx_random_below(ctx, 3);
	lp = ts_layout_problem_new(ctx, n, ncands);
	assert_non_null(lp);
	for (int v = 0; v < n; v++)
		for (int c = 0; c < ncands[v]; c++)
			lp->cost[v][c] = 1.0 + (double)ts_ctx_random_below(ctx,
				100) / 10.0;
	for (int v = 1; v < n; v++) {
		int nin = shape == 2 ? 1 + (int)ts_ctx_random_below(ctx, 2) : 1;
		for (int k = 0; k < nin; k++) {
			int u = shape == 0 ? v - 1
				: (int)ts_ctx_random_below(ctx, (uint64_t)v);
			int e = ts_layout_problem_add_edge(lp, ctx, u, v);
			assert_true(e >= 0);
			for (int a = 0; a < ncands[u]; a++)
				for (int b = 0; b < ncands[v]; b++)
					lp->trans[e][a * ncands[v] + b] = a == b ?
						0 : (double)ts_ctx_random_below(
						ctx, 60) / 10.0;
		}
	}
	return lp;
}

static void test_layout_dp__equals_exhaustive_on_random_graphs(void **state)
{
	ts_ctx *ctx = *state;

	for (int shape = 0; shape < 3; shape++)
		for (int trial = 0; trial < 40; trial++) {
			int n = 2 + (int)ts_ctx_random_below(ctx, 9);
			ts_layout_problem *lp = random_problem(ctx, n, shape);
			ts_layout_solution *dp = ts_layout_solve(ctx, lp, 1 << 16);
			ts_layout_solution *ex =
				ts_layout_solve_exhaustive(ctx, lp);
			assert_true(dp->exact);
			if (fabs(dp->total - ex->total) > 1e-9)
				fail_msg("shape %d trial %d: dp %g, exhaustive %g",
					shape, trial, dp->total, ex->total);
			assert_true(fabs(ts_layout_cost(lp, dp->choice) -
				dp->total) < 1e-9);
			assert_true(dp->total <= dp->default_total + 1e-12);
		}
}

static void test_layout_approx__never_worse_than_default(void **state)
{
	ts_ctx *ctx = *state;

	for (int shape = 0; shape < 3; shape++)
		for (int trial = 0; trial < 40; trial++) {
			int n = 2 + (int)ts_ctx_random_below(ctx, 14);
			ts_layout_problem *lp = random_problem(ctx, n, shape);
			ts_layout_solution *ap = ts_layout_solve_approx(ctx, lp);
			ts_layout_solution *ex = ts_layout_solve(ctx, lp, 1 << 20);
			assert_false(ap->exact);
			assert_true(ap->total <= ap->default_total + 1e-12);
			assert_true(ap->total >= ex->total - 1e-9);
			assert_true(fabs(ts_layout_cost(lp, ap->choice) -
				ap->total) < 1e-9);
		}
}

static void test_layout_chain__blocked_pays_only_when_kept(void **state)
{
	ts_ctx *ctx = *state;
	ts_layout_problem *lp = ts_layout_problem_new(ctx, 3,
		(int[]){ 2, 2, 2 });
	ts_layout_solution *s;

	/* Candidate 1 saves 1.0 per node but a change costs 1.5: keeping
	 * all three in layout 1 pays (3.0 saved), changing once does not. */
	for (int v = 0; v < 3; v++) {
		lp->cost[v][0] = 5.0;
		lp->cost[v][1] = 4.0;
	}
	for (int v = 1; v < 3; v++) {
		int e = ts_layout_problem_add_edge(lp, ctx, v - 1, v);
		lp->trans[e][1] = lp->trans[e][2] = 1.5;
	}
	s = ts_layout_solve(ctx, lp, 100);
	assert_true(s->exact);
	assert_int_equal(s->choice[0], 1);
	assert_int_equal(s->choice[1], 1);
	assert_int_equal(s->choice[2], 1);
	assert_true(fabs(s->total - 12.0) < 1e-12);
	assert_true(fabs(s->default_total - 15.0) < 1e-12);
	assert_int_equal(s->states, 2);
}

static void test_layout_too_many_states__falls_back(void **state)
{
	ts_ctx *ctx = *state;
	int nc[12];
	ts_layout_problem *lp;
	ts_layout_solution *s;

	for (int v = 0; v < 12; v++)
		nc[v] = 3;
	lp = ts_layout_problem_new(ctx, 12, nc);
	/* Six sources all feeding each of six sinks: a frontier of six. */
	for (int u = 0; u < 6; u++)
		for (int v = 6; v < 12; v++)
			assert_true(ts_layout_problem_add_edge(lp, ctx, u, v) >= 0);
	s = ts_layout_solve(ctx, lp, 100);
	assert_false(s->exact);
	assert_true(s->states > 100);
	assert_true(s->total <= s->default_total);
}

static void test_layout_problem__bad_input__errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_layout_problem *lp = ts_layout_problem_new(ctx, 2, (int[]){ 1, 2 });

	assert_int_equal(ts_layout_problem_add_edge(lp, ctx, 1, 0), -1);
	assert_error_contains(ctx, "edge 1 -> 0 is not in topological order");
	assert_null(ts_layout_problem_new(ctx, 2, (int[]){ 1, 0 }));
	assert_error_contains(ctx, "node 1 has 0 candidates");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_layout_dp__equals_exhaustive_on_random_graphs),
		TS_TEST(test_layout_approx__never_worse_than_default),
		TS_TEST(test_layout_chain__blocked_pays_only_when_kept),
		TS_TEST(test_layout_too_many_states__falls_back),
		TS_TEST(test_layout_problem__bad_input__errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
