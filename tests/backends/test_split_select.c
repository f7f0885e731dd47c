/* Loops split where a select's condition changes (backends/
 * split_select.c): a concatenation and a padding lose their selects
 * where the condition is decided, pieces of one iteration become
 * constants, guards and parallel loops are left alone, and random
 * conditions on indices (guarded reads out of bounds where they are not
 * chosen) under random schedules compute what the interpreter does, with
 * every buffer against an inaccessible page. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "tests/common.h"
#include "tests/backends/fence.h"
#include "tests/backends/random_schedule.h"
#include "support/support.h"

/* Occurrences of "what" in "text". */
static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Parse "src" in "ctx", failing the test on an error. */
static ts_dag *parse(ts_ctx *ctx, const char *src)
{
	ts_dag *dag = ts_parse_string(ctx, NULL, src);

	if (!dag)
		fail_msg("parse: %s\n%s", ts_ctx_error(ctx), src);
	return dag;
}

/* Compile "f" of "dag" (at -O0 unless "optimise"), run it with every
 * buffer fenced on the side "at_end" says, and compare with the
 * interpreter on inputs of "seed". */
static void check_run(ts_ctx *ctx, const ts_dag *dag, const ts_func *f,
	uint64_t seed, bool optimise, bool at_end, const char *what)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_array **in = ts_dag_random_inputs(ctx, dag, seed);
	ts_array *args[16], *want[8];
	ts_fence fences[16];
	int nargs = dag->ninputs + dag->noutputs;
	ts_module *m;

	if (!optimise)
		opt.opt_level = 0;
	assert_non_null(in);
	assert_true(nargs <= 16 && dag->noutputs <= 8);
	if (!(m = ts_module_compile(ctx, f, &opt)))
		fail_msg("%s: %s\n%s", what, ts_ctx_error(ctx),
			ts_func_to_string(f));
	if (ts_eval(ctx, dag, in, want) < 0)
		fail_msg("%s: eval: %s", what, ts_ctx_error(ctx));
	for (int i = 0; i < nargs; i++) {
		args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(ctx,
			dag->outputs[i - dag->ninputs]);
		fences[i] = ts_test_fence(ctx, args[i], at_end);
		args[i] = fences[i].a;
	}
	assert_int_equal(ts_module_run(m, args), TS_OK);
	for (int i = 0; i < nargs; i++) {
		ts_array *plain = i < dag->ninputs ? in[i] :
			ts_array_for_tensor(ctx, dag->outputs[i - dag->ninputs]);
		ts_test_unfence(&fences[i], plain);
		args[i] = plain;
	}
	for (int o = 0; o < dag->noutputs; o++) {
		double err = 0;
		if (!ts_array_close(args[dag->ninputs + o], want[o], &err))
			fail_msg("%s: output differs from ts_eval by %g\n%s", what,
				err, ts_func_to_string(ts_func_split_selects(ctx,
				f)));
	}
	ts_module_free(m);
}

static const char concat_src[] =
	"input A: f32[4, 24]\n"
	"input B: f32[4, 40]\n"
	"output C[i: 4, j: 64] = select(j < 24, A[i, j], B[i, j - 24])\n";

/* The concatenation's loop over j becomes two copies, 24 and 40 long,
 * with no select left. */
static void test_split_select_concat__two_copies(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, concat_src);
	ts_func *f = ts_lower(ctx, dag, NULL);
	char *before, *after;

	assert_non_null(f);
	before = ts_func_to_string(f);
	after = ts_func_to_string(ts_func_split_selects(ctx, f));
	assert_int_equal(count(before, "select("), 1);
	if (count(after, "select(") || !strstr(after, "in 0..24:") ||
	    !strstr(after, "in 0..40:") || !strstr(after, "B[i, j]"))
		fail_msg("not split:\n%s", after);
	/* The pass makes a new function; the lowered one is unchanged. */
	assert_string_equal(ts_func_to_string(f), before);
	check_run(ctx, dag, f, 3, true, true, "concat");
	check_run(ctx, dag, f, 4, false, false, "concat");
}

static const char pad_src[] =
	"input X: f32[3, 6, 7]\n"
	"output P[c: 3, h: 8, w: 9] = select(h >= 1 && h < 7 && w >= 1 && "
	"w < 8, X[c, h - 1, w - 1], 0.0)\n";

/* A padding by one: the first and last rows and columns become
 * iterations of their own (constants), the interior a plain copy. */
static void test_split_select_pad__interior_is_a_copy(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, pad_src);
	ts_func *f = ts_lower(ctx, dag, NULL);
	char *after;

	assert_non_null(f);
	after = ts_func_to_string(ts_func_split_selects(ctx, f));
	/* Rows 0 and 7 store zeros; in rows 1..6, columns 0 and 8 store
	 * zeros and columns 1..7 copy. */
	if (count(after, "select(") || !strstr(after, "in 0..6:") ||
	    !strstr(after, "in 0..7:") || !strstr(after, "P[c, 0, w] = 0.0") ||
	    !strstr(after, "P[c, 7, w] = 0.0") ||
	    !strstr(after, "X[c, h, w]"))
		fail_msg("not split as expected:\n%s", after);
	check_run(ctx, dag, f, 5, true, true, "pad");
	check_run(ctx, dag, f, 6, false, false, "pad");
}

/* A guard (if) does not split a loop, and a parallel loop is not
 * split; a condition that no value decides stays. */
static void test_split_select_leaves_guards_and_parallel_loops(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, concat_src);
	ts_schedule *sch = ts_schedule_naive(ctx, dag);
	ts_func *f;
	char *after;

	assert_int_equal(ts_schedule_parallel(sch, "C", "j"), TS_OK);
	f = ts_lower(ctx, dag, sch);
	assert_non_null(f);
	after = ts_func_to_string(ts_func_split_selects(ctx, f));
	if (count(after, "select(") != 1)
		fail_msg("a parallel loop was split:\n%s", after);
	check_run(ctx, dag, f, 7, false, true, "parallel concat");

	/* j split by 5 with a guarded tail: the select splits the loop
	 * over j.o around j = 24 (j.o = 4 on its own, its j.i split at 4),
	 * no select is left and the guard stays in the last piece. */
	sch = ts_schedule_naive(ctx, dag);
	assert_int_equal(ts_schedule_split(sch, "C", "j", 5, TS_TAIL_GUARD),
		TS_OK);
	f = ts_lower(ctx, dag, sch);
	assert_non_null(f);
	assert_int_equal(count(ts_func_to_string(f), "if ("), 1);
	after = ts_func_to_string(ts_func_split_selects(ctx, f));
	if (count(after, "if (") != 1 || count(after, "select("))
		fail_msg("the guard went, or a select stayed:\n%s",
			after);
	check_run(ctx, dag, f, 9, false, true, "guarded concat");
	check_run(ctx, dag, f, 10, true, false, "guarded concat");

	dag = parse(ctx, "input X: f32[5, 5]\n"
		"output Y[i: 5, j: 5] = select(j <= i, X[i, j], 0.0)\n");
	f = ts_lower(ctx, dag, NULL);
	after = ts_func_to_string(ts_func_split_selects(ctx, f));
	/* j <= i: the first iteration of j is always inside (j = 0), the
	 * rest depends on i; the loop over i splits where i >= j for all j
	 * (i = 4).  A select remains wherever both can hold. */
	if (!count(after, "select("))
		fail_msg("an undecided condition was folded:\n%s", after);
	check_run(ctx, dag, f, 8, false, true, "triangle");
}

/* A reproducible stream. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A value in [lo, hi] from "s". */
static int64_t draw(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next(s) % (uint64_t)(hi - lo + 1));
}

/* A random comparison of an affine form of i and j with a constant. */
static char *comparison(uint64_t *s)
{
	static const char *ops[] = { "<", "<=", ">", ">=" };
	int64_t a = draw(s, -3, 3), b = draw(s, -2, 2), c = draw(s, -6, 20);

	return ts_asprintf("%lld * i + %lld * j %s %lld", (long long)a,
		(long long)b, ops[draw(s, 0, 3)], (long long)c);
}

/* Random conditions on indices, some guarding reads that leave the input
 * where they are not chosen, under the naive schedule and random ones:
 * every piece computes what the interpreter does and reads only inside
 * the buffers. */
static void test_split_select_random_conditions__match_eval(void **state)
{
	ts_ctx *ctx = *state;
	uint64_t s = 0x5eed5eedULL;

	for (int t = 0; t < 40; t++) {
		int64_t n = draw(&s, 3, 12), m = draw(&s, 3, 17);
		int64_t off = draw(&s, 1, 5);
		char *c1 = comparison(&s), *c2 = comparison(&s);
		const char *join = draw(&s, 0, 1) ? "&&" : "||";
		char *src = ts_asprintf(
			"input X: f32[%lld, %lld]\n"
			"input Z: f32[%lld]\n"
			"output Y[i: %lld, j: %lld] = select(%s %s %s, X[i, j], "
			"select(j >= %lld, Z[j - %lld] + X[i, j], 2.0))\n",
			(long long)n, (long long)m, (long long)(m - 0),
			(long long)n, (long long)m, c1, join, c2,
			(long long)off, (long long)off);
		ts_dag *dag = parse(ctx, src);
		ts_schedule *sch = t % 4 ? ts_random_schedule(ctx, dag,
			(uint64_t)t, NULL) : NULL;
		ts_func *f = ts_lower(ctx, dag, sch);
		char *what = ts_asprintf("case %d:\n%s%s", t, src,
			sch ? ts_schedule_to_string(sch) : "naive\n");

		if (!f)
			fail_msg("%s: lowering: %s", what, ts_ctx_error(ctx));
		check_run(ctx, dag, f, (uint64_t)t, false, t % 2, what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_split_select_concat__two_copies,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_split_select_pad__interior_is_a_copy,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_split_select_leaves_guards_and_parallel_loops,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_split_select_random_conditions__match_eval,
			ts_test_setup, ts_test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
