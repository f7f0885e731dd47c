/* The .tsl front end: valid programs give the expected DAG and print back
 * to the same DAG; invalid programs give the expected message at the
 * expected line and column. */
#include <config.h>

#include <glob.h>
#include <stdio.h>

#include "tests/common.h"

/* Return "dag" printed in the .tsl syntax. */
static char *dag_text(const ts_dag *dag)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ts_dag_print(f, dag);
	fclose(f);
	return buf;
}

/* Check that printing "dag" and parsing the text back, in a fresh context
 * (tensor names are unique per context), gives the same DAG. */
static void assert_round_trip(const ts_dag *dag)
{
	ts_ctx *ctx2 = ts_ctx_alloc();
	char *text = dag_text(dag);
	ts_dag *again = ts_parse_string(ctx2, "printed.tsl", text);

	if (!again)
		fail_msg("printed DAG does not parse:\n%s\n%s", text,
			ts_ctx_error(ctx2));
	if (strcmp(ts_dag_canonical_string(dag),
	    ts_dag_canonical_string(again)) != 0)
		fail_msg("round trip changed the DAG:\n%s--- became ---\n%s",
			ts_dag_canonical_string(dag),
			ts_dag_canonical_string(again));
	free(text);
	ts_ctx_free(ctx2);
}

/* Parse the test file "name" of tests/dsl/parse. */
static ts_dag *parse_test_file(ts_ctx *ctx, const char *name)
{
	char path[4096];
	ts_dag *dag;

	snprintf(path, sizeof(path), "%s/tests/dsl/parse/%s",
		ts_test_srcdir(), name);
	dag = ts_parse_file(ctx, path);
	if (!dag)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
	return dag;
}

/* Valid programs and the facts their DAG must show. */
struct valid_case {
	const char *file;
	int ninputs, nstages, noutputs;
	const char *stage;	/* the stage inspected below */
	ts_dtype dtype;		/* its output dtype */
	int ndim;
	int64_t shape[4];
	int nraxes;		/* reduction axes bound in its body */
	ts_expr_kind body;	/* kind of its body's root */
};

static const struct valid_case valid_cases[] = {
	{ "matmul.tsl", 2, 1, 1, "C", TS_F32, 2, { 64, 64 }, 1,
	  TS_EXPR_REDUCE },
	{ "conv2d.tsl", 2, 2, 1, "conv", TS_F32, 4, { 1, 4, 4, 4 }, 3,
	  TS_EXPR_REDUCE },
	{ "conv2d.tsl", 2, 2, 1, "padded", TS_F32, 4, { 1, 3, 10, 10 }, 0,
	  TS_EXPR_SELECT },
	{ "softmax.tsl", 1, 4, 1, "Y", TS_F32, 2, { 4, 16 }, 0,
	  TS_EXPR_BINARY },
	{ "softmax.tsl", 1, 4, 1, "rowmax", TS_F32, 1, { 4 }, 1,
	  TS_EXPR_REDUCE },
	/* Canonical form: the two equal sums share one stage. */
	{ "variance.tsl", 1, 3, 1, "V", TS_F32, 1, { 8 }, 0,
	  TS_EXPR_BINARY },
	{ "variance.tsl", 1, 3, 1, "V.sum0", TS_F32, 1, { 8 }, 1,
	  TS_EXPR_REDUCE },
	{ "quantize.tsl", 2, 1, 1, "Q", TS_I8, 1, { 16 }, 0, TS_EXPR_CAST },
	{ "lets.tsl", 1, 1, 1, "Y", TS_F32, 2, { 4, 2 }, 0, TS_EXPR_LOAD },
	{ "out_of_order.tsl", 1, 3, 1, "t2", TS_F32, 1, { 4 }, 0,
	  TS_EXPR_BINARY },
	{ "exprs.tsl", 4, 4, 1, "Z", TS_F32, 1, { 8 }, 0, TS_EXPR_BINARY },
	{ "exprs.tsl", 4, 4, 1, "Z.prod0", TS_F64, 0, { 0 }, 1,
	  TS_EXPR_REDUCE },
};

/* Check one valid case. */
static void check_valid(ts_ctx *ctx, const struct valid_case *c)
{
	ts_dag *dag = parse_test_file(ctx, c->file);
	ts_stage *s = ts_dag_find_stage(dag, c->stage);

	assert_int_equal(dag->ninputs, c->ninputs);
	assert_int_equal(dag->nstages, c->nstages);
	assert_int_equal(dag->noutputs, c->noutputs);
	assert_non_null(s);
	assert_int_equal(s->out->dtype, c->dtype);
	assert_int_equal(s->ndim, c->ndim);
	for (int i = 0; i < c->ndim; i++)
		assert_int_equal(s->out->shape[i], c->shape[i]);
	assert_int_equal(s->nraxes, c->nraxes);
	assert_int_equal(s->body->kind, c->body);
	assert_true(s->line > 0);
	assert_null(ts_ctx_warnings(ctx));
	assert_round_trip(dag);
}

static void test_parse_valid__dag_has_expected_shape(void **state)
{
	size_t n = sizeof(valid_cases) / sizeof(valid_cases[0]);

	for (size_t i = 0; i < n; i++) {
		/* Tensor names are unique per context: one per case. */
		ts_ctx *ctx = ts_ctx_alloc();
		check_valid(ctx, &valid_cases[i]);
		ts_ctx_free(ctx);
	}
}

static void test_parse_matmul__body_is_sum_of_product(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse_test_file(ctx, "matmul.tsl");
	ts_stage *s = dag->stages[0];
	ts_expr *mul = s->body->a;

	assert_string_equal(dag->name, "matmul");
	assert_int_equal(s->line, 6);
	assert_int_equal(s->body->reducer, TS_RED_SUM);
	assert_int_equal(s->raxes[0]->extent, 32);
	assert_int_equal(mul->kind, TS_EXPR_BINARY);
	assert_int_equal(mul->op, TS_OP_MUL);
	assert_int_equal(mul->a->kind, TS_EXPR_LOAD);
	assert_string_equal(mul->a->tensor->name, "A");
	assert_ptr_equal(mul->a->args[0]->axis, s->axes[0]);
	assert_ptr_equal(mul->a->args[1]->axis, s->raxes[0]);
	assert_ptr_equal(mul->b->args[0]->axis, s->raxes[0]);
	assert_ptr_equal(mul->b->args[1]->axis, s->axes[1]);
}

/* The elementwise functions of an ONNX graph: each its own stage, of the
 * dtype of its argument but for the tests isnan and isinf (bool); the
 * printed program names each and parses back. */
static void test_parse_functions__typed_printed_and_read_back(void **state)
{
	static const struct {
		const char *name;
		ts_op op;
	} fns[] = {
		{ "sin", TS_OP_SIN }, { "cos", TS_OP_COS },
		{ "tan", TS_OP_TAN }, { "asin", TS_OP_ASIN },
		{ "acos", TS_OP_ACOS },
		{ "atan", TS_OP_ATAN }, { "sinh", TS_OP_SINH },
		{ "cosh", TS_OP_COSH }, { "asinh", TS_OP_ASINH },
		{ "acosh", TS_OP_ACOSH }, { "atanh", TS_OP_ATANH },
		{ "ceil", TS_OP_CEIL }, { "sign", TS_OP_SIGN },
		{ "isnan", TS_OP_ISNAN }, { "isinf", TS_OP_ISINF },
	};
	ts_ctx *ctx = *state;
	char src[2048], want[64];
	int n = snprintf(src, sizeof(src), "input X: f64[4]\n"
		"input I: i8[4]\noutput S[i: 4] = sign(I[i])\n"
		"output T[i: 4] = sin(f32(I[i]))\n");
	ts_dag *dag;
	char *text;

	for (size_t k = 0; k < sizeof(fns) / sizeof(*fns); k++)
		n += snprintf(src + n, sizeof(src) - (size_t)n,
			"output %s_[i: 4] = %s(X[i])\n", fns[k].name,
			fns[k].name);
	if (!(dag = ts_parse_string(ctx, "functions.tsl", src)))
		fail_msg("%s", ts_ctx_error(ctx));
	text = dag_text(dag);
	for (size_t k = 0; k < sizeof(fns) / sizeof(*fns); k++) {
		bool test = fns[k].op == TS_OP_ISNAN ||
			fns[k].op == TS_OP_ISINF;
		ts_stage *st;
		snprintf(want, sizeof(want), "%s_", fns[k].name);
		assert_non_null(st = ts_dag_find_stage(dag, want));
		assert_int_equal(st->out->dtype, test ? TS_BOOL : TS_F64);
		assert_int_equal(st->body->op, fns[k].op);
		snprintf(want, sizeof(want), "= %s(", fns[k].name);
		if (!strstr(text, want))
			fail_msg("'%s' not printed:\n%s", want, text);
	}
	assert_int_equal(ts_dag_find_stage(dag, "S")->out->dtype, TS_I8);
	assert_int_equal(ts_dag_find_stage(dag, "T")->out->dtype, TS_F32);
	free(text);
	assert_round_trip(dag);
}

static void test_parse_out_of_order__stages_in_dependency_order(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse_test_file(ctx, "out_of_order.tsl");

	assert_int_equal(dag->nstages, 3);
	assert_string_equal(dag->stages[0]->name, "t1");
	assert_string_equal(dag->stages[1]->name, "t2");
	assert_string_equal(dag->stages[2]->name, "Y");
	/* Lines are those of the declarations, not of the order. */
	assert_int_equal(dag->stages[0]->line, 4);
	assert_int_equal(dag->stages[2]->line, 2);
	assert_string_equal(dag->inputs[0]->name, "X");
}

static void test_parse_lets__constant_arithmetic(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse_test_file(ctx, "lets.tsl");

	/* B = (3 + 1) * 4 - 2 // 3 % 5 = 16, A * 2 = 6, -7 // 2 + 8 = 4,
	 * -7 % 3 = 2 (floor division and modulo). */
	assert_int_equal(dag->inputs[0]->shape[0], 16);
	assert_int_equal(dag->inputs[0]->shape[1], 6);
	assert_int_equal(dag->outputs[0]->shape[0], 4);
	assert_int_equal(dag->outputs[0]->shape[1], 2);
}

static void test_parse_inputs__all_declared_in_order(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "two.tsl",
		"input Zed: f32[4]\n"
		"input Unused: i8[2, 2]\n"
		"input Alpha: f32[4]\n"
		"output O[i: 4] = Alpha[i] + Zed[i]\n");

	assert_non_null(dag);
	assert_string_equal(dag->name, "two");
	assert_int_equal(dag->ninputs, 3);
	assert_string_equal(dag->inputs[0]->name, "Zed");
	assert_string_equal(dag->inputs[1]->name, "Unused");
	assert_string_equal(dag->inputs[2]->name, "Alpha");
	assert_int_equal(dag->inputs[1]->dtype, TS_I8);
}

/* Constant expressions with typed operands and the stage they fold to,
 * in the arithmetic of their dtype (integers wrap, floats round once per
 * operation); each must print and read back as the same DAG. */
static const struct {
	const char *src, *canonical;
} typed_constant_cases[] = {
	{ "output Q[i: 3]: i8 = f32(2.5) - --6 - -inf\n",
	  "output t0[s0: 3] = i8(127)\n" },
	{ "output Q[i: 2]: i8 = i8(100) + i8(100)\n",
	  "output t0[s0: 2] = i8(-56)\n" },
	{ "output Q[i: 2] = i64(9223372036854775807) + 1\n",
	  "output t0[s0: 2] = (-9223372036854775807 - 1)\n" },
	{ "output Q[i: 2] = f32(16777216) + f32(1)\n",
	  "output t0[s0: 2] = 16777216.0\n" },
	{ "output Q[i: 2] = -i32(-2147483648) * 1\n",
	  "output t0[s0: 2] = -2147483648\n" },
	{ "output Q[i: 2] = f64(i64(9007199254740993))\n",
	  "output t0[s0: 2] = f64(9007199254740992.0)\n" },
	{ "output Q[i: 2] = i16(32767) + i16(1)\n",
	  "output t0[s0: 2] = i16(-32768)\n" },
	{ "output Q[i: 2] = u32(0) - u32(1)\n",
	  "output t0[s0: 2] = u32(4294967295)\n" },
	{ "output Q[i: 2] = u16(70000.0) + u16(-3.0)\n",
	  "output t0[s0: 2] = u16(65535)\n" },
	/* A u64 above INT64_MAX prints as the cast of its bit pattern;
	 * max compares unsigned. */
	{ "output Q[i: 2] = max(u64(-1), u64(1)) + u64(1e30) * 0\n",
	  "output t0[s0: 2] = u64(-1)\n" },
	{ "output Q[i: 2] = bf16(1.00390625) + bf16(1.01171875)\n",
	  "output t0[s0: 2] = bf16(2.015625)\n" },
};

/* An untyped literal takes the dtype of the operand it meets, the new
 * dtypes included: integers wrap into it, a fraction is refused. */
static void test_parse_new_dtypes__literals_take_operand_dtype(void **state)
{
	static const struct {
		const char *src, *want;
	} cases[] = {
		{ "input A: u32[2]\noutput Q[i: 2] = A[i] + 4294967295\n",
		  "input in0: u32[2]\noutput t0[s0: 2] = in0[s0] + "
		  "u32(4294967295)\n" },
		{ "input A: u64[2]\noutput Q[i: 2] = A[i] * -1\n",
		  "input in0: u64[2]\noutput t0[s0: 2] = in0[s0] * u64(-1)\n" },
		{ "input A: i16[2]\noutput Q[i: 2] = A[i] < 40000\n",
		  "input in0: i16[2]\noutput t0[s0: 2] = in0[s0] < "
		  "i16(-25536)\n" },
		{ "input A: bf16[2]\noutput Q[i: 2] = A[i] * 3.0\n",
		  "input in0: bf16[2]\noutput t0[s0: 2] = in0[s0] * "
		  "bf16(3.0)\n" },
		{ "input A: u16[2]\noutput Q[i: 2] = A[i] + 0.5\n",
		  "literal 0.5 used with an u16 operand" },
		{ "input A: u32[2]\ninput B: i32[2]\n"
		  "output Q[i: 2] = A[i] + B[i]\n",
		  "dtype mismatch: u32 + i32" },
		{ "input A: u8[2]\noutput Q[i: 2] = A[i] / 2\n",
		  "'/' needs floating-point operands, got u8" },
		{ "input A: f8[2]\n", "(one of bool i8 u8 i16 u16 i32 u32 i64 "
		  "u64 f16 bf16 f32 f64)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(ctx, "c.tsl", cases[i].src);

		if (dag) {
			assert_string_equal(ts_dag_canonical_string(dag),
				cases[i].want);
			assert_round_trip(dag);
		} else if (!strstr(ts_ctx_error(ctx), cases[i].want)) {
			fail_msg("%s: %s", cases[i].src, ts_ctx_error(ctx));
		}
		ts_ctx_free(ctx);
	}
}

static void test_parse_typed_constants__fold_in_their_dtype(void **state)
{
	for (size_t i = 0; i < sizeof(typed_constant_cases) /
	    sizeof(typed_constant_cases[0]); i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(ctx, "c.tsl",
			typed_constant_cases[i].src);

		if (!dag)
			fail_msg("%s: %s", typed_constant_cases[i].src,
				ts_ctx_error(ctx));
		assert_string_equal(ts_dag_canonical_string(dag),
			typed_constant_cases[i].canonical);
		assert_round_trip(dag);
		ts_ctx_free(ctx);
	}
}

static void test_parse_weights__flagged_printed_and_round_trip(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "w.tsl",
		"input X: f32[4]\n"
		"weight W: f32[4, 3]\n"
		"output O[j: 3] = sum(i: 4) X[i] * W[i, j]\n");
	char *text;

	if (!dag)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_int_equal(dag->ninputs, 2);
	assert_false(dag->inputs[0]->weight);
	assert_true(dag->inputs[1]->weight);
	text = dag_text(dag);
	assert_non_null(strstr(text, "input X: f32[4]\n"));
	assert_non_null(strstr(text, "weight W: f32[4, 3]\n"));
	free(text);
	assert_round_trip(dag);
}

static void test_parse_keywords__name_a_stage_before_bracket(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "kw.tsl",
		"input x: f32[4]\n"
		"input[i: 4] = x[i] + 1.0\n"
		"output output[i: 4] = input[i] * 2.0\n");

	if (!dag)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_int_equal(dag->nstages, 2);
	assert_non_null(ts_dag_find_stage(dag, "input"));
	assert_true(ts_dag_is_output(dag, ts_dag_find_tensor(dag, "output")));
}

static void test_parse_reducer__body_extends_right(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "lam.tsl",
		"input A: f32[4]\n"
		"output O[] = 2.0 * sum(k: 4) A[k] + 1.0\n"
		"output P[i: 4] = max(A[i], 0.0) + (max(k: 4) A[k])\n");
	ts_stage *o, *p;

	assert_non_null(dag);
	o = ts_dag_find_stage(dag, "O");
	p = ts_dag_find_stage(dag, "P");
	/* 2 * (sum over k of (A[k] + 1)); the canonical form moves the
	 * sum into a stage of its own. */
	assert_int_equal(o->ndim, 0);
	assert_int_equal(o->body->op, TS_OP_MUL);
	assert_int_equal(o->body->b->kind, TS_EXPR_LOAD);
	o = ts_dag_find_stage(dag, "O.sum0");
	assert_non_null(o);
	assert_int_equal(o->body->kind, TS_EXPR_REDUCE);
	assert_int_equal(o->body->a->op, TS_OP_ADD);
	/* max(a, b) is the function, max(k: 4) the reducer. */
	assert_int_equal(p->body->a->kind, TS_EXPR_BINARY);
	assert_int_equal(p->body->a->op, TS_OP_MAX);
	assert_int_equal(p->body->b->kind, TS_EXPR_LOAD);
	p = ts_dag_find_stage(dag, "P.max0");
	assert_non_null(p);
	assert_int_equal(p->body->kind, TS_EXPR_REDUCE);
	assert_int_equal(p->body->reducer, TS_RED_MAX);
	assert_round_trip(dag);
}

static void test_parse_unused_stage__warns_and_leaves_it_out(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "w.tsl",
		"input A: f32[4]\n"
		"T[i: 4] = A[i]\n"
		"output B[i: 4] = A[i]\n");
	const char *w;

	assert_non_null(dag);
	assert_int_equal(dag->nstages, 1);
	assert_null(ts_dag_find_stage(dag, "T"));
	w = ts_ctx_warnings(ctx);
	assert_non_null(w);
	assert_non_null(strstr(w, "w.tsl:2:1: warning: stage 'T' is not "
		"used by any output"));
}

static void test_parse_outputs__ordered_for_round_trip(void **state)
{
	ts_ctx *ctx = *state;
	/* P reads R and Q: printing lists Q first, so Q must come first. */
	ts_dag *dag = ts_parse_string(ctx, "multi.tsl",
		"input X: f32[4]\n"
		"output P[i: 4] = R[i] + Q[i]\n"
		"R[i: 4] = X[i] * 2.0\n"
		"output Q[i: 4] = X[i] + 1.0\n");

	assert_non_null(dag);
	assert_int_equal(dag->noutputs, 2);
	assert_round_trip(dag);
}

/* Round trip every file of "dir" matching *.tsl; return how many. */
static int round_trip_dir(const char *dir)
{
	char pattern[4096];
	glob_t g;
	int n = 0;

	snprintf(pattern, sizeof(pattern), "%s/%s/*.tsl", ts_test_srcdir(),
		dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_file(ctx, g.gl_pathv[i]);
		if (!dag)
			fail_msg("%s", ts_ctx_error(ctx));
		assert_round_trip(dag);
		ts_ctx_free(ctx);
		n++;
	}
	globfree(&g);
	return n;
}

static void test_parse_test_files__print_round_trip(void **state)
{
	assert_true(round_trip_dir("tests/dsl/parse") >= 8);
}

static void test_parse_examples__print_round_trip(void **state)
{
	if (round_trip_dir("examples") == 0)
		skip();
}

static void test_parse_file__missing_file(void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_parse_file(ctx, "/nonexistent/x.tsl"));
	assert_error_contains(ctx, "/nonexistent/x.tsl: cannot open");
}

/* Invalid programs: the message fragment and where it must point. */
struct invalid_case {
	const char *what;
	const char *src;
	int line, col;
	const char *msg;
};

/* Integer literals and the stage they fold to: exactly, in 64 bits,
 * also past the 53 bits of a double.  A small i64 constant prints as a
 * cast where a bare literal would read back as i32. */
static const struct {
	const char *src, *canonical;
} int_literal_cases[] = {
	{ "output Q[i: 2] = 9007199254740993 + 0\n",
	  "output t0[s0: 2] = 9007199254740993\n" },
	{ "output Q[i: 2] = max(9223372036854775807, 0)\n",
	  "output t0[s0: 2] = 9223372036854775807\n" },
	{ "output Q[i: 2] = 3037000499 * 3037000499 - 1\n",
	  "output t0[s0: 2] = 9223372030926249000\n" },
	{ "output Q[i: 2] = 9007199254740993 + i\n",
	  "output t0[s0: 2] = 9007199254740993 + s0\n" },
	{ "output Q[i: 2] = i * 9223372036854775807\n",
	  "output t0[s0: 2] = s0 * 9223372036854775807\n" },
	{ "input A: i8[2]\noutput Q[i: 2] = A[i] + 4294967596\n",
	  "input in0: i8[2]\noutput t0[s0: 2] = in0[s0] + i8(44)\n" },
	{ "output Q[i: 2]: u8 = 2 == 9223372036854775807\n",
	  "output t0[s0: 2] = u8(i64(2) == 9223372036854775807)\n" },
	{ "output Q[i: 2]: u8 = i64(2.5) == inf\n",
	  "output t0[s0: 2] = u8(i64(2) == 9223372036854775807)\n" },
	{ "output Q[i: 1]: u8 = i64(2) // 5.0 + -inf\n",
	  "output t0[s0: 1] = u8(i64(2) // i64(5) + "
	  "(-9223372036854775807 - 1))\n" },
	{ "output Q[i: 2] = select(i > 0, i64(2), 3) + abs(i64(-4))\n",
	  "output t0[s0: 2] = select(s0 > 0, i64(2), i64(3)) + "
	  "abs(i64(-4))\n" },
	{ "output Q[i: 2] = i64(7)\n", "output t0[s0: 2] = i64(7)\n" },
	{ "output Q[i: 2] = 9223372036854775807 // 2\n",
	  "output t0[s0: 2] = 9223372036854775807 // i64(2)\n" },
};

static void test_parse_int_literals__fold_exactly(void **state)
{
	for (size_t i = 0; i < sizeof(int_literal_cases) /
	    sizeof(int_literal_cases[0]); i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(ctx, "c.tsl",
			int_literal_cases[i].src);

		if (!dag)
			fail_msg("%s: %s", int_literal_cases[i].src,
				ts_ctx_error(ctx));
		assert_string_equal(ts_dag_canonical_string(dag),
			int_literal_cases[i].canonical);
		assert_round_trip(dag);
		ts_ctx_free(ctx);
	}
}

#define A4 "input A: f32[4]\n"

static const struct invalid_case invalid_cases[] = {
	{ "literal sum past 64 bits", "output Q[i: 10] = "
	  "6714515034139233848 + 6714515034139233848 + i\n", 1, 39,
	  "integer overflow in a constant expression: 6714515034139233848 "
	  "+ 6714515034139233848 does not fit in 64 bits" },
	{ "literal product past 64 bits", "output Q[i: 2] = "
	  "4294967296 * 4294967296\n", 1, 29,
	  "integer overflow in a constant expression" },
	{ "negated least i64", "output Q[i: 2] = "
	  "-(-9223372036854775807 - 1)\n", 1, 18,
	  "integer overflow in a constant expression: "
	  "-(-9223372036854775808) does not fit in 64 bits" },
	{ "missing ]", A4 "output B[i: 4] = A[i\nC[i: 4] = A[i]\n", 2, 21,
	  "expected ',' or ']' at the end of the line" },
	{ "unterminated (", A4 "output B[i: 4] = exp(A[i]", 2, 21,
	  "unterminated '(': no matching ')'" },
	{ "unterminated [", A4 "output B[i: 4", 2, 9,
	  "unterminated '['" },
	{ "bad character", A4 "output B[i: 4] = A[i] $ 2.0\n", 2, 23,
	  "unexpected character '$'" },
	{ "malformed number", "let N = 12ab\n", 1, 9,
	  "malformed number '12ab'" },
	{ "huge integer", "let N = 99999999999999999999\n", 1, 9,
	  "integer literal '99999999999999999999' is too large" },
	{ "weight without a name", "weight : f32[4]\n", 1, 8,
	  "expected a tensor name before ':'" },
	{ "two statements on a line", A4 "output B[i: 4] = A[i] A[i]\n",
	  2, 23, "unexpected 'A' after the end of the statement" },
	{ "missing operand", A4 "output B[i: 4] = A[i] +* 2\n", 2, 24,
	  "expected an expression before '*'" },
	{ "operand at end of file", A4 "output B[i: 4] = A[i] +\n", 2, 24,
	  "expected an expression before the end of the file" },
	{ "reducer without binder", A4 "output B[i: 4] = sum(A[i])\n", 2, 22,
	  "expected a reduction axis 'name: extent' before 'A'" },
	{ "unknown tensor", A4 "output B[i: 4] = X[i]\n", 2, 18,
	  "unknown tensor 'X'" },
	{ "unknown axis", A4 "output B[i: 4] = A[j]\n", 2, 20,
	  "unknown index variable or constant 'j'" },
	{ "tensor without indices", A4 "output B[i: 4] = A\n", 2, 18,
	  "'A' is a tensor: read it as A[...]" },
	{ "unknown constant", "input A: f32[N]\n", 1, 14,
	  "unknown constant 'N'" },
	{ "unknown function", A4 "output B[i: 4] = foo(A[i])\n", 2, 18,
	  "unknown function 'foo'" },
	{ "arity", A4 "output B[i: 4] = pow(A[i])\n", 2, 18,
	  "'pow' takes 2 arguments, 1 given" },
	{ "unknown dtype", "input A: f33[4]\n", 1, 10,
	  "unknown dtype 'f33'" },
	{ "wrong number of indices", "input A: f32[4, 4]\n"
	  "output B[i: 4] = A[i]\n", 2, 18,
	  "wrong number of indices for tensor 'A': 1 given, it has 2" },
	{ "dtype mismatch", A4 "input I: i32[4]\n"
	  "output B[i: 4] = A[i] + I[i]\n", 3, 23,
	  "dtype mismatch: f32 + i32" },
	{ "integer true division", "input I: i32[4]\n"
	  "output B[i: 4] = I[i] / I[i]\n", 2, 23,
	  "'/' needs floating-point operands, got i32" },
	{ "sine of an integer", "input I: i32[4]\n"
	  "output B[i: 4] = sin(I[i])\n", 2, 18,
	  "'sin' needs a floating-point operand, got i32 (cast it first)" },
	{ "isnan of an integer", "input I: i64[4]\n"
	  "output B[i: 4] = isnan(I[i])\n", 2, 18,
	  "'isnan' needs a floating-point operand, got i64" },
	{ "sign of a bool", "input P: bool[4]\n"
	  "output B[i: 4] = sign(P[i])\n", 2, 18,
	  "'sign' needs a numeric operand, got bool" },
	{ "two arguments to atan", A4 "output B[i: 4] = atan(A[i], 1.0)\n",
	  2, 18, "'atan' takes 1 argument, 2 given" },
	{ "typed stage of a bool reduce", "input P: bool[4]\n"
	  "output B[]: f32 = sum(k: 4) P[k]\n", 2, 19,
	  "sum: cannot reduce bool values" },
	{ "negative extent", "let N = 0\n" A4
	  "output B[i: 4, j: N - 1] = A[i]\n", 3, 16,
	  "axis 'j' has negative extent -1" },
	{ "negative reduction extent", A4 "output B[i: 4] = sum(k: -2) A[0]\n",
	  2, 22, "axis 'k' has negative extent -2" },
	{ "negative input extent", "input A: f32[4, 2 - 3]\n"
	  "output B[i: 4] = 1.0\n", 1, 17,
	  "tensor 'A': dimension 1 has negative extent -1" },
	{ "reduction axis outside its reducer",
	  A4 "output B[i: 4] = (sum(k: 4) A[k]) + A[k]\n", 2, 39,
	  "reduction axis 'k' is used outside its reducer" },
	{ "constant index out of bounds", A4 "output B[i: 4] = A[i] + A[4]\n",
	  2, 27, "constant index 4 is out of bounds for dimension 0 of "
	  "tensor 'A'" },
	{ "cycle", "input X: f32[4]\nP[i: 4] = Q[i]\nQ[i: 4] = P[i]\n"
	  "output R[i: 4] = P[i] + X[i]\n", 2, 1,
	  "cycle between stages: P -> Q -> P" },
	{ "self cycle", "output A[i: 4] = A[i]\n", 1, 8,
	  "cycle between stages: A -> A" },
	{ "duplicate tensor", A4 A4, 2, 7,
	  "redefinition of tensor 'A' (first defined at 1:7)" },
	{ "duplicate stage", A4 "output A[i: 4] = 1.0\n", 2, 8,
	  "redefinition of tensor 'A'" },
	{ "duplicate let", "let N = 1\nlet N = 2\n", 2, 5,
	  "redefinition of constant 'N' (first defined at 1:5)" },
	{ "duplicate axis", A4 "output B[i: 4, i: 4] = A[i]\n", 2, 16,
	  "redefinition of axis 'i'" },
	{ "reducer rebinds a spatial axis",
	  A4 "output B[i: 4] = sum(i: 4) A[i]\n", 2, 22,
	  "redefinition of axis 'i'" },
	{ "axis named like a constant", "let N = 4\n"
	  "input A: f32[N]\noutput B[N: 4] = A[0]\n", 3, 10,
	  "axis 'N' has the name of a constant" },
	{ "no output", A4 "B[i: 4] = A[i]\n", 2, 1, "no output" },
	{ "empty file", "# nothing\n", 1, 1, "no output" },
	{ "division by zero", "let N = 4 // (2 - 2)\n", 1, 11,
	  "division by zero in a constant expression" },
	{ "float constant", "let N = 2.5\n", 1, 9,
	  "expected an integer constant, got '2.5'" },
	{ "slash in a constant", "let N = 4 / 2\n", 1, 11,
	  "use '//' for division" },
	{ "let without a name", "let = 4\n", 1, 5,
	  "expected a constant name before '='" },
	{ "constant overflow", "let N = 4611686018427387904 * 4\n", 1, 29,
	  "integer overflow in a constant expression" },
	{ "extent 2^63-1", "output B[i: 9223372036854775807] = 1.0\n", 1, 10,
	  "tensor 'B' is too large: with dimension 0 (extent "
	  "9223372036854775807) its size in bytes overflows 64 bits" },
	{ "f64 bytes overflow", "output B[i: 2, j: 1152921504606846976]: "
	  "f64 = 1.0\n", 1, 16, "tensor 'B' is too large: with dimension 1" },
	{ "input bytes overflow", "input A: f32[2, 4611686018427387904]\n"
	  "output B[i: 2] = A[i, 0]\n", 1, 17,
	  "tensor 'A' is too large: with dimension 1 (extent "
	  "4611686018427387904)" },
	{ "iterations overflow", A4 "output B[i: 4] = sum(k: "
	  "4611686018427387904, l: 4) A[0]\n", 2, 8,
	  "stage 'B' is too large: with axis 'k' (extent 4611686018427387904) "
	  "its number of "
	  "iterations overflows 64 bits" },
};

/* Check that the error of "ctx" is "file:line:col: error: ...msg...",
 * then the source line, then a caret under column "col". */
static void assert_error_at(ts_ctx *ctx, const struct invalid_case *c)
{
	const char *err = ts_ctx_error(ctx), *nl, *caret;
	char prefix[64];
	int col = 1;

	if (!err)
		fail_msg("%s: no error", c->what);
	snprintf(prefix, sizeof(prefix), "bad.tsl:%d:%d: error: ", c->line,
		c->col);
	if (strncmp(err, prefix, strlen(prefix)) != 0 ||
	    !strstr(err, c->msg))
		fail_msg("%s: expected \"%s...%s\", got \"%s\"", c->what,
			prefix, c->msg, err);
	nl = strchr(err, '\n');
	assert_non_null(nl);
	caret = strchr(nl + 1, '\n');
	assert_non_null(caret);
	for (caret++; *caret == ' ' || *caret == '\t'; caret++)
		col++;
	if (*caret != '^' || col != c->col)
		fail_msg("%s: caret at column %d, not %d:\n%s", c->what, col,
			c->col, err);
}

static void test_parse_invalid__message_and_position(void **state)
{
	size_t n = sizeof(invalid_cases) / sizeof(invalid_cases[0]);

	for (size_t i = 0; i < n; i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(ctx, "bad.tsl",
			invalid_cases[i].src);
		if (dag)
			fail_msg("%s: parsed", invalid_cases[i].what);
		assert_error_at(ctx, &invalid_cases[i]);
		ts_ctx_free(ctx);
	}
}

/* Return "head", then "open" "n" times, "leaf", "close" "n" times and a
 * newline. */
static char *nested_source(const char *head, const char *open,
	const char *leaf, const char *close, int n)
{
	size_t len = strlen(head) + n * (strlen(open) + strlen(close)) +
		strlen(leaf) + 2;
	char *s = malloc(len), *q = s;

	q += sprintf(q, "%s", head);
	for (int i = 0; i < n; i++)
		q += sprintf(q, "%s", open);
	q += sprintf(q, "%s", leaf);
	for (int i = 0; i < n; i++)
		q += sprintf(q, "%s", close);
	sprintf(q, "\n");
	return s;
}

/* Deep nesting: the opener of each kind, how often it is repeated, and
 * the column of the first one past the limit of 256. */
struct deep_case {
	const char *what, *head, *open, *leaf, *close;
	int n, line, col;
	const char *msg;
};

#define NEST_MSG "expression nested too deeply (more than 256 levels"
#define B4 "output B[i: 4] = "

static const struct deep_case deep_cases[] = {
	{ "100,000 parentheses", A4 B4, "(", "A[i]", ")", 100000, 2, 18 + 256,
	  NEST_MSG },
	{ "unary minus", A4 B4, "-", "A[i]", "", 100000, 2, 18 + 256,
	  NEST_MSG },
	{ "negations", "input P: bool[4]\noutput B[i: 4] = ", "!", "P[i]", "",
	  300, 2, 18 + 256, NEST_MSG },
	{ "brackets", "input I: i32[4]\noutput B[i: 4] = ", "I[", "i", "]",
	  300, 2, 18 + 256 * 2 + 1, NEST_MSG },
	{ "calls", A4 B4, "exp(", "A[i]", ")", 300, 2, 18 + 256 * 4 + 3,
	  NEST_MSG },
	{ "reducers", A4 "output B[] = ", "sum(k: 4) ", "A[0]", "", 300, 2,
	  14 + 256 * 10, NEST_MSG },
	{ "constant parentheses", "let N = ", "(", "1", ")", 100000, 1,
	  9 + 256, NEST_MSG },
	{ "constant minus", "let N = ", "-", "1", "", 100000, 1, 9 + 256,
	  NEST_MSG },
	{ "long chain", A4 B4, "A[i] + ", "A[i]", "", 5000, 2, 18 + 2046 * 7 + 5,
	  "expression too deep (more than 2048 nested operations)" },
};

static void test_parse_deep__located_error_no_crash(void **state)
{
	size_t n = sizeof(deep_cases) / sizeof(deep_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct deep_case *d = &deep_cases[i];
		struct invalid_case c = { d->what, NULL, d->line, d->col,
			d->msg };
		ts_ctx *ctx = ts_ctx_alloc();
		char *src = nested_source(d->head, d->open, d->leaf, d->close,
			d->n);
		if (ts_parse_string(ctx, "bad.tsl", src))
			fail_msg("%s: parsed", d->what);
		assert_error_at(ctx, &c);
		free(src);
		ts_ctx_free(ctx);
	}
}

static void test_parse_deep__at_the_limit_parses(void **state)
{
	ts_ctx *ctx = *state;
	char *src = nested_source(A4 B4, "(", "A[i]", ")", 255);

	if (!ts_parse_string(ctx, "ok.tsl", src))
		fail_msg("%s", ts_ctx_error(ctx));
	free(src);
}

/* Sources within the limit whose printed form nests deeper: a chain of
 * unary minus prints each level parenthesised, a typed stage prints as a
 * cast and clamp as min(max()).  Each source at the edge parses and
 * round-trips; one level more fails at the stage, not when read back. */
static const struct deep_case printed_deep_cases[] = {
	{ "unary minus on a variable", "output Q[i: 4] = ", "-", "i", "", 129,
	  1, 8, "stage 'Q' prints nested 257 levels deep" },
	{ "typed stage", A4 "output Q[i: 4]: f64 = ", "exp(", "A[i]", ")",
	  255, 2, 8, "stage 'Q' prints nested 257 levels deep" },
	{ "clamp", A4 "output Q[i: 4] = ", "exp(", "clamp(A[i], 0.0, 1.0)",
	  ")", 254, 2, 8, "stage 'Q' prints nested 257 levels deep" },
};

static void test_parse_deep__prints_within_the_limit(void **state)
{
	size_t n = sizeof(printed_deep_cases) / sizeof(printed_deep_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct deep_case *d = &printed_deep_cases[i];
		struct invalid_case c = { d->what, NULL, d->line, d->col,
			d->msg };
		ts_ctx *ctx = ts_ctx_alloc();
		char *ok = nested_source(d->head, d->open, d->leaf, d->close,
			d->n - 1);
		char *bad = nested_source(d->head, d->open, d->leaf, d->close,
			d->n);
		ts_dag *dag = ts_parse_string(ctx, "ok.tsl", ok);

		if (!dag)
			fail_msg("%s: %s", d->what, ts_ctx_error(ctx));
		assert_round_trip(dag);
		if (ts_parse_string(ctx, "bad.tsl", bad))
			fail_msg("%s: parsed", d->what);
		assert_error_at(ctx, &c);
		free(ok);
		free(bad);
		ts_ctx_free(ctx);
	}
}

static void test_parse_error__shows_line_and_caret(void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_parse_string(ctx, "file.tsl",
		"let N = 4\n"
		"input A: f32[N, N]\n"
		" C[i: N] = A[i, j]\n"
		"output D[i: N] = C[i]\n"));
	assert_string_equal(ts_ctx_error(ctx),
		"file.tsl:3:17: error: unknown index variable or constant 'j'\n"
		" C[i: N] = A[i, j]\n"
		"                ^");
}

static void test_parse_twice__one_context_holds_both(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 4 };
	ts_tensor *in[2];
	ts_axis *i;

	/* Names are unique within a DAG, not within a context. */
	assert_non_null(ts_parse_string(ctx, "one.tsl",
		A4 "output B[i: 4] = A[i]\n"));
	assert_non_null(ts_parse_string(ctx, "two.tsl",
		A4 "output B[i: 4] = A[i]\n"));
	in[0] = ts_placeholder(ctx, "X", TS_F32, 1, shape);
	in[1] = ts_placeholder(ctx, "X", TS_F32, 1, shape);
	i = ts_axis_new(ctx, "i", 4);
	{
		ts_expr *v = ts_var(ctx, i);
		ts_expr *sum = ts_add(ctx, ts_load(ctx, in[0], 1, &v),
			ts_load(ctx, in[1], 1, &v));
		ts_tensor *out = ts_compute(ctx, "Y", 1, &i, sum);
		assert_null(ts_dag_new(ctx, 0, NULL, 1, &out));
		assert_error_contains(ctx, "tensor 'X' is defined twice");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_parse_valid__dag_has_expected_shape),
		TS_TEST(test_parse_deep__located_error_no_crash),
		TS_TEST(test_parse_deep__at_the_limit_parses),
		TS_TEST(test_parse_matmul__body_is_sum_of_product),
		TS_TEST(test_parse_functions__typed_printed_and_read_back),
		TS_TEST(test_parse_out_of_order__stages_in_dependency_order),
		TS_TEST(test_parse_lets__constant_arithmetic),
		TS_TEST(test_parse_inputs__all_declared_in_order),
		TS_TEST(test_parse_typed_constants__fold_in_their_dtype),
		TS_TEST(test_parse_new_dtypes__literals_take_operand_dtype),
		TS_TEST(test_parse_int_literals__fold_exactly),
		TS_TEST(test_parse_weights__flagged_printed_and_round_trip),
		TS_TEST(test_parse_keywords__name_a_stage_before_bracket),
		TS_TEST(test_parse_reducer__body_extends_right),
		TS_TEST(test_parse_unused_stage__warns_and_leaves_it_out),
		TS_TEST(test_parse_outputs__ordered_for_round_trip),
		TS_TEST(test_parse_test_files__print_round_trip),
		TS_TEST(test_parse_examples__print_round_trip),
		TS_TEST(test_parse_file__missing_file),
		TS_TEST(test_parse_invalid__message_and_position),
		TS_TEST(test_parse_deep__prints_within_the_limit),
		TS_TEST(test_parse_error__shows_line_and_caret),
		TS_TEST(test_parse_twice__one_context_holds_both),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
