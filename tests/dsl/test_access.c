/* The accessors of the IR's opaque handles (DAGs, loop IR, templates):
 * each reads what the declaration says, indices out of range give NULL
 * or -1, the accessors of one kind of node give nothing for another, and
 * weights can be declared only on placeholders.  Every check reads
 * through the public headers' functions alone. */
#include <config.h>

#include "tests/common.h"

/* C = A B with i8 B cast to f32, R = max(C, 0) and
 * D[i] = R[i, 0] > 1 ? R[i, 1] : 2.5. */
static const char *src =
	"input A: f32[2, 3]\n"
	"weight B: i8[3, 4]\n"
	"C[i: 2, j: 4] = sum(k: 3) A[i, k] * f32(B[k, j])\n"
	"R[i: 2, j: 4] = max(C[i, j], 0.0)\n"
	"output D[i: 2] = select(R[i, 0] > 1.0, R[i, 1], 2.5)\n";

static void test_dag__inputs_outputs_stages_consumers(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "access.tsl", src);
	ts_tensor *a, *b, *d;

	assert_non_null(dag);
	assert_string_equal(ts_dag_name(dag), "access");
	assert_int_equal(ts_dag_ninputs(dag), 2);
	a = ts_dag_input(dag, 0);
	b = ts_dag_input(dag, 1);
	assert_string_equal(ts_tensor_name(a), "A");
	assert_string_equal(ts_tensor_name(b), "B");
	assert_int_equal(ts_tensor_dtype(b), TS_I8);
	assert_int_equal(ts_tensor_ndim(a), 2);
	assert_int_equal(ts_tensor_dim(a, 0), 2);
	assert_int_equal(ts_tensor_dim(a, 1), 3);
	assert_int_equal(ts_tensor_shape(b)[1], 4);
	assert_int_equal(ts_tensor_dim(a, 2), -1);
	assert_int_equal(ts_tensor_dim(a, -1), -1);
	assert_false(ts_tensor_is_weight(a));
	assert_true(ts_tensor_is_weight(b));
	assert_null(ts_tensor_stage(a));
	assert_null(ts_dag_input(dag, 2));
	assert_null(ts_dag_input(dag, -1));

	assert_int_equal(ts_dag_noutputs(dag), 1);
	d = ts_dag_output(dag, 0);
	assert_string_equal(ts_tensor_name(d), "D");
	assert_null(ts_dag_output(dag, 1));
	assert_int_equal(ts_dag_nstages(dag), 3);
	assert_ptr_equal(ts_stage_output(ts_dag_stage(dag, 2)), d);
	assert_ptr_equal(ts_tensor_stage(d), ts_dag_stage(dag, 2));
	assert_null(ts_dag_stage(dag, 3));
	/* C is read by R, R by D, D by nothing. */
	assert_int_equal(ts_dag_nconsumers(dag, 0), 1);
	assert_int_equal(ts_dag_consumer(dag, 0, 0), 1);
	assert_int_equal(ts_dag_consumer(dag, 0, 1), -1);
	assert_int_equal(ts_dag_consumer(dag, 1, 0), 2);
	assert_int_equal(ts_dag_nconsumers(dag, 2), 0);
	assert_int_equal(ts_dag_nconsumers(dag, 3), -1);

	ts_dag_set_name(dag, "renamed");
	assert_string_equal(ts_dag_name(dag), "renamed");
}

static void test_stage__axes_inputs_body(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, src);
	ts_stage *c = ts_dag_stage(dag, 0);
	const ts_axis *k;

	assert_string_equal(ts_stage_name(c), "C");
	assert_int_equal(ts_stage_line(c), 3);
	assert_int_equal(ts_stage_ndim(c), 2);
	assert_int_equal(ts_stage_nraxes(c), 1);
	assert_string_equal(ts_axis_name(ts_stage_axis(c, 0)), "i");
	assert_int_equal(ts_axis_extent(ts_stage_axis(c, 1)), 4);
	assert_false(ts_axis_is_reduce(ts_stage_axis(c, 1)));
	k = ts_stage_axis(c, 2);
	assert_string_equal(ts_axis_name(k), "k");
	assert_int_equal(ts_axis_extent(k), 3);
	assert_true(ts_axis_is_reduce(k));
	assert_int_equal(ts_stage_ninputs(c), 2);
	assert_string_equal(ts_tensor_name(ts_stage_input(c, 1)), "B");
	assert_null(ts_stage_input(c, 2));
	assert_int_equal(ts_expr_get_kind(ts_stage_body(c)), TS_EXPR_REDUCE);
}

static void test_expr__each_kind_answers_its_own_accessors(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, src);
	ts_expr *red = ts_stage_body(ts_dag_stage(dag, 0));
	ts_expr *body = ts_stage_body(ts_dag_stage(dag, 1));
	ts_expr *mul, *load, *cast, *sel, *cmp;

	/* max(C[i, j], 0.0) */
	assert_int_equal(ts_expr_op(body), TS_OP_MAX);
	assert_int_equal(ts_expr_dtype(body), TS_F32);
	assert_null(ts_expr_operand(body, 2));
	assert_int_equal(ts_expr_get_kind(ts_expr_operand(body, 0)),
		TS_EXPR_LOAD);
	assert_int_equal(ts_expr_get_kind(red), TS_EXPR_REDUCE);
	assert_int_equal(ts_expr_reducer(red), TS_RED_SUM);
	assert_int_equal(ts_expr_nraxes(red), 1);
	assert_string_equal(ts_axis_name(ts_expr_raxis(red, 0)), "k");
	assert_null(ts_expr_raxis(red, 1));
	assert_null(ts_expr_operand(red, 1));
	assert_int_equal(ts_expr_get_kind(ts_expr_operand(body, 1)),
		TS_EXPR_FLOAT);
	assert_true(ts_expr_float_value(ts_expr_operand(body, 1)) == 0.0);

	mul = ts_expr_operand(red, 0);
	load = ts_expr_operand(mul, 0);
	assert_int_equal(ts_expr_get_kind(load), TS_EXPR_LOAD);
	assert_string_equal(ts_tensor_name(ts_expr_tensor(load)), "A");
	assert_int_equal(ts_expr_nargs(load), 2);
	assert_int_equal(ts_expr_get_kind(ts_expr_arg(load, 1)), TS_EXPR_VAR);
	assert_string_equal(ts_axis_name(ts_expr_axis(ts_expr_arg(load, 1))),
		"k");
	assert_null(ts_expr_arg(load, 2));
	/* A load has no operands and no axes of its own. */
	assert_null(ts_expr_operand(load, 0));
	assert_null(ts_expr_axis(load));
	assert_int_equal(ts_expr_nraxes(load), 0);
	cast = ts_expr_operand(mul, 1);
	assert_int_equal(ts_expr_get_kind(cast), TS_EXPR_CAST);
	assert_int_equal(ts_expr_dtype(ts_expr_operand(cast, 0)), TS_I8);
	/* A variable is no load. */
	assert_null(ts_expr_tensor(ts_expr_arg(load, 0)));
	assert_int_equal(ts_expr_nargs(ts_expr_arg(load, 0)), 0);

	sel = ts_stage_body(ts_dag_stage(dag, 2));
	assert_int_equal(ts_expr_get_kind(sel), TS_EXPR_SELECT);
	cmp = ts_expr_operand(sel, 0);
	assert_int_equal(ts_expr_op(cmp), TS_OP_GT);
	assert_int_equal(ts_expr_dtype(cmp), TS_BOOL);
	assert_int_equal(ts_expr_int_value(ts_expr_arg(ts_expr_operand(cmp,
		0), 1)), 0);
	assert_true(ts_expr_float_value(ts_expr_operand(sel, 2)) == 2.5);
	assert_null(ts_expr_operand(sel, 3));
}

static void test_literals__untyped_until_they_meet_a_peer(void **state)
{
	ts_ctx *ctx = *state;
	ts_expr *lit = ts_int(ctx, 7), *typed = ts_const(ctx, TS_I64, 7);

	assert_true(ts_expr_is_literal(lit));
	assert_false(ts_expr_is_literal(typed));
	assert_int_equal(ts_expr_int_value(lit), 7);
	assert_int_equal(ts_expr_dtype(typed), TS_I64);
	assert_true(ts_expr_float_value(lit) == 0.0);
}

static void test_set_weight__placeholders_only(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, src);

	assert_int_equal(ts_tensor_set_weight(ctx, ts_dag_input(dag, 0), true),
		TS_OK);
	assert_true(ts_tensor_is_weight(ts_dag_input(dag, 0)));
	assert_int_equal(ts_tensor_set_weight(ctx, ts_dag_output(dag, 0),
		true), TS_ERROR);
	assert_error_contains(ctx, "tensor D is computed by a stage");
	assert_false(ts_tensor_is_weight(ts_dag_output(dag, 0)));
}

/* The first statement of kind "k" in "s", depth first, or NULL. */
static ts_stmt *find_stmt(ts_stmt *s, ts_stmt_kind k)
{
	ts_stmt *kids[3], *r;
	int n = 0;

	if (!s)
		return NULL;
	if (ts_stmt_get_kind(s) == k)
		return s;
	for (int i = 0; i < ts_stmt_nstmts(s); i++)
		if ((r = find_stmt(ts_stmt_child(s, i), k)))
			return r;
	kids[n++] = ts_stmt_body(s);
	kids[n++] = ts_stmt_orelse(s);
	for (int i = 0; i < n; i++)
		if ((r = find_stmt(kids[i], k)))
			return r;
	return NULL;
}

static void test_func__naive_lowering_read_back(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "access", src);
	ts_func *f = ts_lower(ctx, dag, NULL);
	ts_stmt *loop, *store, *block;

	assert_non_null(f);
	assert_ptr_equal(ts_func_dag(f), dag);
	assert_string_equal(ts_func_name(f), "access");
	assert_int_equal(ts_func_nargs(f), 3);
	assert_int_equal(ts_func_ninputs(f), 2);
	assert_string_equal(ts_tensor_name(ts_func_arg(f, 2)), "D");
	assert_null(ts_func_arg(f, 3));

	loop = find_stmt(ts_func_body(f), TS_STMT_FOR);
	assert_non_null(loop);
	assert_int_equal(ts_axis_extent(ts_stmt_var(loop)), 2);
	assert_int_equal(ts_stmt_loop_kind(loop), TS_LOOP_SERIAL);
	assert_false(ts_stmt_tensorized(loop));
	assert_non_null(ts_stmt_body(loop));
	assert_null(ts_stmt_buffer(loop));
	assert_null(ts_stmt_value(loop));
	assert_int_equal(ts_stmt_nidx(loop), 0);

	store = find_stmt(ts_func_body(f), TS_STMT_STORE);
	assert_non_null(store);
	assert_int_equal(ts_stmt_nidx(store), ts_tensor_ndim(
		ts_stmt_buffer(store)));
	assert_non_null(ts_stmt_index(store, 0));
	assert_null(ts_stmt_index(store, ts_stmt_nidx(store)));
	assert_non_null(ts_stmt_value(store));
	assert_null(ts_stmt_var(store));
	assert_false(ts_stmt_tensorized(store));
	assert_null(ts_stmt_body(store));

	block = find_stmt(ts_func_body(f), TS_STMT_BLOCK);
	if (block) {
		assert_non_null(ts_stmt_child(block, 0));
		assert_null(ts_stmt_child(block, ts_stmt_nstmts(block)));
		assert_null(ts_stmt_cond(block));
	}
}

static void test_template__plans_and_nests(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, src);
	ts_target *tg = ts_target_lookup(ctx, "zen3");
	ts_template *tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
		tg);
	ts_config *cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	assert_non_null(tp);
	assert_ptr_equal(ts_template_dag(tp), dag);
	assert_ptr_equal(ts_template_target(tp), tg);
	assert_non_null(ts_template_space(tp));
	assert_null(ts_template_plan(tp, 3));
	assert_null(ts_template_plan(tp, -1));
	/* C is the reduction; its plan says so and names its rule. */
	assert_int_equal(ts_stage_plan_class(ts_template_plan(tp, 0)),
		TS_CLASS_COMPLEX_REDUCTION);
	assert_int_equal(ts_stage_plan_rule(ts_template_plan(tp, 0)),
		TS_RULE_TILE);
	assert_non_null(ts_stage_plan_decided_by(ts_template_plan(tp, 0)));

	cfg = ts_template_default(tp);
	mem = open_memstream(&text, &len);
	assert_true(ts_template_print_nest(mem, tp, cfg, 0));
	assert_false(ts_template_print_nest(mem, tp, cfg, 3));
	fclose(mem);
	assert_non_null(strstr(text, "  nest C: s0:"));
	assert_non_null(strstr(text, "vector width "));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_dag__inputs_outputs_stages_consumers),
		TS_TEST(test_stage__axes_inputs_body),
		TS_TEST(test_expr__each_kind_answers_its_own_accessors),
		TS_TEST(test_literals__untyped_until_they_meet_a_peer),
		TS_TEST(test_set_weight__placeholders_only),
		TS_TEST(test_func__naive_lowering_read_back),
		TS_TEST(test_template__plans_and_nests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
