/* The canonical form: nested reductions become stages of their own, equal
 * ones are shared, a declaration written in one statement and in several
 * is one workload, and the kernels of the canonical DAG agree with the
 * interpreter. */
#include <config.h>

#include <math.h>

#include "tests/common.h"

/* One computation written in one statement and as separate stages. */
struct twin {
	const char *name;
	const char *one;	/* one statement */
	const char *many;	/* separate stages */
	int nstages;		/* stages of the canonical form */
};

static const struct twin twins[] = {
	{ "dense_bias",
	  "input x: f32[24]\ninput W: f32[24, 10]\ninput b: f32[10]\n"
	  "output Y[j: 10] = (sum(k: 24) x[k] * W[k, j]) + b[j]\n",
	  "input x: f32[24]\ninput W: f32[24, 10]\ninput b: f32[10]\n"
	  "S[j: 10] = sum(k: 24) x[k] * W[k, j]\n"
	  "output Y[j: 10] = S[j] + b[j]\n", 2 },
	{ "l2_norm",
	  "input X: f32[6, 13]\n"
	  "output N[i: 6] = sqrt(sum(j: 13) X[i, j] * X[i, j])\n",
	  "input X: f32[6, 13]\n"
	  "Q[i: 6] = sum(j: 13) X[i, j] * X[i, j]\n"
	  "output N[i: 6] = sqrt(Q[i])\n", 2 },
	/* The two maxima are one stage, and the exponentials, which the
	 * sum and the quotient both compute, another. */
	{ "softmax",
	  "input X: f32[8, 160]\n"
	  "output Y[i: 8, j: 160] = exp(X[i, j] - max(a: 160) X[i, a]) /\n"
	  "  sum(b: 160) exp(X[i, b] - max(c: 160) X[i, c])\n",
	  "input X: f32[8, 160]\n"
	  "M[i: 8] = max(k: 160) X[i, k]\n"
	  "E[i: 8] = sum(k: 160) exp(X[i, k] - M[i])\n"
	  "output Y[i: 8, j: 160] = exp(X[i, j] - M[i]) / E[i]\n", 4 },
	/* The exponentials written as a stage: the sum and the quotient
	 * read it rather than compute them. */
	{ "softmax_exp_stage",
	  "input X: f32[8, 160]\n"
	  "M[i: 8] = max(k: 160) X[i, k]\n"
	  "E[i: 8] = sum(k: 160) exp(X[i, k] - M[i])\n"
	  "output Y[i: 8, j: 160] = exp(X[i, j] - M[i]) / E[i]\n",
	  "input X: f32[8, 160]\n"
	  "M[i: 8] = max(k: 160) X[i, k]\n"
	  "T[i: 8, k: 160] = exp(X[i, k] - M[i])\n"
	  "E[i: 8] = sum(k: 160) T[i, k]\n"
	  "output Y[i: 8, j: 160] = T[i, j] / E[i]\n", 4 },
	{ "conv_bias_relu",
	  "input X: f32[1, 3, 9, 9]\ninput W: f32[4, 3, 3, 3]\n"
	  "input B: f32[4]\n"
	  "output Y[n: 1, k: 4, h: 7, w: 7] = max((sum(c: 3, r: 3, s: 3)\n"
	  "  X[n, c, h + r, w + s] * W[k, c, r, s]) + B[k], 0.0)\n",
	  "input X: f32[1, 3, 9, 9]\ninput W: f32[4, 3, 3, 3]\n"
	  "input B: f32[4]\n"
	  "C[n: 1, k: 4, h: 7, w: 7] = sum(c: 3, r: 3, s: 3)\n"
	  "  X[n, c, h + r, w + s] * W[k, c, r, s]\n"
	  "output Y[n: 1, k: 4, h: 7, w: 7] = max(C[n, k, h, w] + B[k], 0.0)\n",
	  2 },
	/* A reduction inside a reduction, over an axis of the outer one. */
	{ "nested",
	  "input A: f32[7, 5]\ninput B: f32[5, 11]\n"
	  "output Y[i: 7] = sum(k: 5) A[i, k] * (max(j: 11) B[k, j])\n",
	  "input A: f32[7, 5]\ninput B: f32[5, 11]\n"
	  "M[k: 5] = max(j: 11) B[k, j]\n"
	  "output Y[i: 7] = sum(k: 5) A[i, k] * M[k]\n", 2 },
	/* Two layers in one statement: the hidden layer's sigmoid, which
	 * the outer sum would compute once per output, is a stage. */
	{ "mlp",
	  "input X: f32[4, 6]\ninput W1: f32[6, 5]\ninput B1: f32[5]\n"
	  "input W2: f32[5, 3]\n"
	  "output Y[i: 4, o: 3] = sum(j: 5) sigmoid((sum(k: 6) X[i, k] *\n"
	  "  W1[k, j]) + B1[j]) * W2[j, o]\n",
	  "input X: f32[4, 6]\ninput W1: f32[6, 5]\ninput B1: f32[5]\n"
	  "input W2: f32[5, 3]\n"
	  "H[i: 4, j: 5] = sum(k: 6) X[i, k] * W1[k, j]\n"
	  "A[i: 4, j: 5] = sigmoid(H[i, j] + B1[j])\n"
	  "output Y[i: 4, o: 3] = sum(j: 5) A[i, j] * W2[j, o]\n", 3 },
	/* A guard tested for every tap of a window becomes a padding
	 * stage, written as a user would. */
	{ "padded_pool",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, y: 5, x: 5] = max(r: 3, q: 3) select(y * 2 + r - 1\n"
	  "  >= 0 && y * 2 + r - 1 < 9 && 0 <= x * 2 + q - 1 &&\n"
	  "  9 > x * 2 + q - 1, X[c, y * 2 + r - 1, x * 2 + q - 1], -inf)\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], -inf)\n"
	  "output Y[c: 4, y: 5, x: 5] = max(r: 3, q: 3) P[c, y * 2 + r,\n"
	  "  x * 2 + q]\n", 2 },
	/* The same guard written on the index plus a constant ("h + r >=
	 * 1" for X[.., h + r - 1, ..]), as an average pooling divided
	 * after its sum. */
	{ "padded_avg_pool_offset_guard",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, h: 9, w: 9] = (sum(r: 3, s: 3) select(h + r >= 1\n"
	  "  && h + r < 10 && w + s > 0 && w + s <= 9,\n"
	  "  X[c, h + r - 1, w + s - 1], 0.0)) / 9.0\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], 0.0)\n"
	  "S[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) P[c, h + r, w + s]\n"
	  "output Y[c: 4, h: 9, w: 9] = S[c, h, w] / 9.0\n", 3 },
	/* The same guard with the index's terms in another order ("h + r"
	 * guards X[.., r + h - 1, ..]) and as nested selects of one fill. */
	{ "padded_sum_commuted_guard",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) select(h + r >= 1\n"
	  "  && h + r < 10 && w + s > 0 && w + s <= 9,\n"
	  "  X[c, r + h - 1, s + w - 1], 0.0)\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], 0.0)\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) P[c, r + h, s + w]\n",
	  2 },
	{ "padded_sum_nested_guards",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) select(h + r - 1 >= 0,\n"
	  "  select(h + r - 1 < 9, select(w + s - 1 >= 0, select(w + s - 1\n"
	  "  < 9, X[c, h + r - 1, w + s - 1], 0.0), 0.0), 0.0), 0.0)\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], 0.0)\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) P[c, h + r, w + s]\n",
	  2 },
	/* The same guard as a test out of bounds, the fill first, and as a
	 * negated disjunction. */
	{ "padded_sum_outside_first",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) select(h + r < 1\n"
	  "  || h + r > 9 || w + s - 1 < 0 || w + s - 1 >= 9, 0.0,\n"
	  "  X[c, h + r - 1, w + s - 1])\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], 0.0)\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) P[c, h + r, w + s]\n",
	  2 },
	{ "padded_sum_negated_guard",
	  "input X: f32[4, 9, 9]\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) select(!(h + r < 1\n"
	  "  || h + r > 9 || w + s < 1 || w + s > 9),\n"
	  "  X[c, h + r - 1, w + s - 1], 0.0)\n",
	  "input X: f32[4, 9, 9]\n"
	  "P[c: 4, h: 11, w: 11] = select(h >= 1 && h < 10 && w >= 1 &&\n"
	  "  w < 10, X[c, h - 1, w - 1], 0.0)\n"
	  "output Y[c: 4, h: 9, w: 9] = sum(r: 3, s: 3) P[c, h + r, w + s]\n",
	  2 },
	/* The same in a convolution with bias and ReLU, in one statement. */
	{ "padded_conv",
	  "input X: f32[3, 6, 6]\ninput W: f32[4, 3, 3, 3]\n"
	  "input B: f32[4]\n"
	  "output Y[k: 4, y: 6, x: 6] = max((sum(c: 3, r: 3, s: 3)\n"
	  "  select(y + r - 1 >= 0 && y + r - 1 < 6 && x + s - 1 >= 0 &&\n"
	  "  x + s - 1 < 6, X[c, y + r - 1, x + s - 1], 0.0) *\n"
	  "  W[k, c, r, s]) + B[k], 0.0)\n",
	  "input X: f32[3, 6, 6]\ninput W: f32[4, 3, 3, 3]\n"
	  "input B: f32[4]\n"
	  "P[c: 3, h: 8, w: 8] = select(h >= 1 && h < 7 && w >= 1 &&\n"
	  "  w < 7, X[c, h - 1, w - 1], 0.0)\n"
	  "C[k: 4, y: 6, x: 6] = sum(c: 3, r: 3, s: 3) P[c, y + r, x + s] *\n"
	  "  W[k, c, r, s]\n"
	  "output Y[k: 4, y: 6, x: 6] = max(C[k, y, x] + B[k], 0.0)\n", 3 },
	/* A sine of the reduction axis alone is dear: computed once per
	 * j, not once per output. */
	{ "sin_weights",
	  "input W: f32[5, 3]\n"
	  "output Y[o: 3] = sum(j: 5) sin(f32(j) * 0.5) * W[j, o]\n",
	  "input W: f32[5, 3]\n"
	  "S[j: 5] = sin(f32(j) * 0.5)\n"
	  "output Y[o: 3] = sum(j: 5) S[j] * W[j, o]\n", 2 },
	/* The same with a cheap activation: the clamped hidden layer is
	 * still one stage, not recomputed once per output. */
	{ "mlp_clamp",
	  "input X: f32[4, 6]\ninput W1: f32[6, 5]\ninput B1: f32[5]\n"
	  "input W2: f32[5, 3]\n"
	  "output Y[i: 4, o: 3] = sum(j: 5) clamp((sum(k: 6) X[i, k] *\n"
	  "  W1[k, j]) + B1[j], -2.0, 2.0) * W2[j, o]\n",
	  "input X: f32[4, 6]\ninput W1: f32[6, 5]\ninput B1: f32[5]\n"
	  "input W2: f32[5, 3]\n"
	  "H[i: 4, j: 5] = sum(k: 6) X[i, k] * W1[k, j]\n"
	  "A[i: 4, j: 5] = clamp(H[i, j] + B1[j], -2.0, 2.0)\n"
	  "output Y[i: 4, o: 3] = sum(j: 5) A[i, j] * W2[j, o]\n", 3 },
	/* A space-to-depth read inside a 1x1 convolution becomes a gather
	 * stage over the axes it reads, in its source's order. */
	{ "space_to_depth",
	  "input X: f32[4, 8, 6]\ninput W: f32[5, 16]\n"
	  "output Y[k: 5, y: 4, x: 3] = sum(c: 16) W[k, c] *\n"
	  "  X[c // 4, y * 2 + (c % 4) // 2, x * 2 + c % 2]\n",
	  "input X: f32[4, 8, 6]\ninput W: f32[5, 16]\n"
	  "G[c: 16, y: 4, x: 3] = X[c // 4, y * 2 + (c % 4) // 2,\n"
	  "  x * 2 + c % 2]\n"
	  "output Y[k: 5, y: 4, x: 3] = sum(c: 16) W[k, c] * G[c, y, x]\n",
	  2 },
	/* A grouped convolution divides an output axis: its read spans
	 * far more than its tensor and stays where it is. */
	{ "grouped_conv",
	  "input X: f32[8, 6, 6]\ninput W: f32[8, 4, 3, 3]\n"
	  "output Y[k: 8, y: 4, x: 4] = sum(c: 4, r: 3, q: 3)\n"
	  "  X[(k // 4) * 4 + c, y + r, x + q] * W[k, c, r, q]\n",
	  "input X: f32[8, 6, 6]\ninput W: f32[8, 4, 3, 3]\n"
	  "output Y[k: 8, y: 4, x: 4] = sum(c: 4, r: 3, q: 3)\n"
	  "  X[(k // 4) * 4 + c, y + r, x + q] * W[k, c, r, q]\n", 1 },
	/* An integer matmul requantised to i8 in the same statement. */
	{ "requant",
	  "input A: i8[6, 16]\ninput B: i8[16, 8]\n"
	  "output Q[i: 6, j: 8]: i8 = i8(clamp(f32(sum(k: 16)\n"
	  "  i32(A[i, k]) * i32(B[k, j])) * 0.5, -128.0, 127.0))\n",
	  "input A: i8[6, 16]\ninput B: i8[16, 8]\n"
	  "C[i: 6, j: 8] = sum(k: 16) i32(A[i, k]) * i32(B[k, j])\n"
	  "output Q[i: 6, j: 8]: i8 = i8(clamp(f32(C[i, j]) * 0.5, -128.0,\n"
	  "  127.0))\n", 2 },
};

/* Assert the invariant of the canonical form on "dag": a reduction only
 * at the root of a body, with none inside it. */
static void assert_canonical(const ts_dag *dag)
{
	for (int i = 0; i < dag->nstages; i++) {
		const ts_expr *b = dag->stages[i]->body;
		if (b->kind == TS_EXPR_REDUCE)
			b = b->a;
		if (ts_expr_has_reduce(b))
			fail_msg("stage %s keeps a nested reduction",
				dag->stages[i]->name);
	}
}

static ts_dag *parse(ts_ctx *ctx, const char *name, const char *src)
{
	ts_dag *dag = ts_parse_string(ctx, name, src);

	if (!dag)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
	assert_canonical(dag);
	return dag;
}

/* Compile "dag" under "sch" and compare with the interpreter on "in". */
static void check_kernel(ts_ctx *ctx, const char *what, const ts_dag *dag,
	ts_schedule *sch, ts_array **in)
{
	ts_compile_options o = ts_compile_options_default();
	ts_array *want[8];
	const char *bad;
	ts_func *f;
	ts_module *m;
	double err = 0;

	if (!sch || !(f = ts_lower(ctx, dag, sch)) ||
	    !(m = ts_module_compile(ctx, f, &o)))
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	bad = ts_test_run_compare(ctx, m, dag, in, want, &err);
	if (bad)
		fail_msg("%s: output %s differs by %g", what, bad, err);
	ts_module_free(m);
}

static void test_canon_twins__one_workload(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t t = 0; t < sizeof(twins) / sizeof(twins[0]); t++) {
		const struct twin *w = &twins[t];
		ts_dag *one = parse(ctx, w->name, w->one);
		ts_dag *many = parse(ctx, w->name, w->many);
		if (one->nstages != w->nstages)
			fail_msg("%s: %d stages, expected %d", w->name,
				one->nstages, w->nstages);
		if (strcmp(ts_dag_hash(one), ts_dag_hash(many)) != 0)
			fail_msg("%s: the two forms hash apart:\n%s\n%s",
				w->name, ts_dag_canonical_string(one),
				ts_dag_canonical_string(many));
	}
}

static void test_canon_twins__kernels_match_interpreter(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *host = ts_target_host(ctx);

	assert_non_null(host);
	for (size_t t = 0; t < sizeof(twins) / sizeof(twins[0]); t++) {
		const struct twin *w = &twins[t];
		ts_dag *one = parse(ctx, w->name, w->one);
		ts_array **in = ts_dag_random_inputs(ctx, one, 7);
		char what[128];
		snprintf(what, sizeof(what), "%s naive", w->name);
		check_kernel(ctx, what, one, ts_schedule_naive(ctx, one), in);
		snprintf(what, sizeof(what), "%s static", w->name);
		check_kernel(ctx, what, one,
			ts_static_schedule(ctx, one, host), in);
	}
}

static void test_canon_names__follow_the_consumer(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "names.tsl", twins[2].one);

	assert_non_null(ts_dag_find_stage(dag, "Y.max0"));
	assert_non_null(ts_dag_find_stage(dag, "Y.sum0"));
	/* The sum reads the shared exponentials, which read the input and
	 * the maximum. */
	assert_int_equal(ts_dag_find_stage(dag, "Y.sum0")->ninputs, 1);
	assert_int_equal(ts_dag_find_stage(dag, "Y.shared0")->ninputs, 2);
	/* A user's name is never taken. */
	dag = parse(ctx, "taken.tsl", "input X: f32[4, 3]\n"
		"Y.sum0[i: 4] = X[i, 0]\n"
		"output Y[i: 4] = (sum(k: 3) X[i, k]) + Y.sum0[i]\n");
	assert_int_equal(dag->nstages, 3);
	assert_non_null(ts_dag_find_stage(dag, "Y.sum1"));
}

static void test_canon_print__parses_back(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t t = 0; t < sizeof(twins) / sizeof(twins[0]); t++) {
		ts_dag *dag = parse(ctx, twins[t].name, twins[t].one), *back;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ts_dag_print(f, dag);
		fclose(f);
		back = parse(ctx, twins[t].name, text);
		assert_int_equal(back->nstages, dag->nstages);
		assert_string_equal(ts_dag_hash(back), ts_dag_hash(dag));
		free(text);
	}
}

/* A literal stage of another dtype prints as what it holds and reads
 * back as the same DAG. */
static void test_canon_print__literal_stage_cast(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "lit.tsl", "output Q[i: 3]: i8 = inf\n");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ts_dag_print(f, dag);
	fclose(f);
	assert_non_null(strstr(text, "i8(127)"));
	assert_string_equal(ts_dag_hash(parse(ctx, "lit2.tsl", text)),
		ts_dag_hash(dag));
	free(text);
	/* An integer literal past i32 is an i64, exactly. */
	dag = parse(ctx, "big.tsl", "output Q[i: 3] = 9223372036854775807\n");
	assert_int_equal(dag->stages[0]->out->dtype, TS_I64);
	assert_true(dag->stages[0]->body->ival == INT64_MAX);
	/* The least i64 has no literal of its own. */
	dag = parse(ctx, "min.tsl", "output Q[i: 3] = i8(i - (-9223372036854775807"
		" - 1))\n");
	f = open_memstream(&text, &len);
	ts_dag_print(f, dag);
	fclose(f);
	assert_string_equal(ts_dag_hash(parse(ctx, "min2.tsl", text)),
		ts_dag_hash(dag));
	free(text);
}

/* A user stage equal to a nested reduction is shared with it. */
static void test_canon_share__with_a_user_stage(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "share.tsl", "input X: f32[4, 9]\n"
		"M[i: 4] = max(k: 9) X[i, k]\n"
		"output Y[i: 4, j: 9] = X[i, j] - M[i] + max(q: 9) X[i, q]\n");

	assert_int_equal(dag->nstages, 2);
	assert_null(ts_dag_find_stage(dag, "Y.max0"));
}

/* Programs whose stages compute something alike, and the number of
 * stages of their canonical form. */
static const struct alike {
	const char *name, *src;
	int nstages;
} alikes[] = {
	/* 2 MiB of exponentials: computed twice. */
	{ "big", "input X: f32[512, 1024]\n"
	  "M[i: 512] = max(k: 1024) X[i, k]\n"
	  "E[i: 512] = sum(k: 1024) exp(X[i, k] - M[i])\n"
	  "output Y[i: 512, j: 1024] = exp(X[i, j] - M[i]) / E[i]\n", 3 },
	/* 160 bytes: a stage would cost more than the work it saves. */
	{ "small", "input X: f32[4, 10]\n"
	  "M[i: 4] = max(k: 10) X[i, k]\n"
	  "E[i: 4] = sum(k: 10) exp(X[i, k] - M[i])\n"
	  "output Y[i: 4, j: 10] = exp(X[i, j] - M[i]) / E[i]\n", 3 },
	/* A division is not worth a stage. */
	{ "div", "input X: f32[32, 64]\ninput D: f32[32]\n"
	  "E[i: 32] = sum(k: 64) X[i, k] / D[i]\n"
	  "output Y[i: 32, j: 64] = X[i, j] / D[i] + E[i]\n", 2 },
	/* An arm of a select runs only where chosen. */
	{ "arm", "input X: f32[32, 64]\n"
	  "E[i: 32] = sum(k: 64) exp(X[i, k])\n"
	  "output Y[i: 32, j: 64] = select(X[i, j] > 0.0, exp(X[i, j]), "
	  "E[i])\n", 2 },
	/* An f16 exponential stored would be rounded where each stage
	 * keeps it in its arithmetic. */
	{ "half", "input X: f16[64, 64]\n"
	  "E[i: 64] = sum(k: 64) exp(X[i, k])\n"
	  "output Y[i: 64, j: 64] = exp(X[i, j]) / E[i]\n", 2 },
	/* The same over other extents is another computation. */
	{ "other", "input X: f32[32, 64]\n"
	  "E[i: 32] = sum(k: 64) exp(X[i, k])\n"
	  "output Y[i: 32, j: 48] = exp(X[i, j]) / E[i]\n", 2 },
	/* A user's stage of the exponentials, its axes in another order,
	 * is read by the two stages that compute them (below). */
	{ "user", "input X: f32[32, 64]\n"
	  "M[i: 32] = max(k: 64) X[i, k]\n"
	  "T[k: 64, i: 32] = exp(X[i, k] - M[i])\n"
	  "E[i: 32] = sum(k: 64) exp(X[i, k] - M[i])\n"
	  "O[i: 32, j: 64] = exp(X[i, j] - M[i]) / E[i]\n"
	  "output Y[i: 32, j: 64] = O[i, j] + T[j, i]\n", 5 },
	/* A reduced dimension kept as an axis of extent 1 in one stage
	 * and read at 0 in another, as the ONNX importer writes them. */
	{ "unit", "input X: f32[32, 64]\n"
	  "M[i: 32, u: 1] = max(k: 64) X[i, k]\n"
	  "E[i: 32, u: 1] = sum(k: 64) exp(X[i, k] - M[i, u])\n"
	  "output Y[i: 32, j: 64] = exp(X[i, j] - M[i, 0]) / E[i, 0]\n", 4 },
	/* GELU's erf twice, in two stages: once. */
	{ "gelu", "input X: f32[32, 64]\n"
	  "A[i: 32, j: 64] = erf(X[i, j] * 0.7071) + 1.0\n"
	  "output Y[i: 32, j: 64] = A[i, j] * erf(X[i, j] * 0.7071)\n", 3 },
};

/* What two stages compute alike is stored only when it is dear, small
 * enough, of a wide enough type, and computed everywhere by both. */
static void test_canon_share_dear__only_where_it_pays(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t t = 0; t < sizeof(alikes) / sizeof(alikes[0]); t++) {
		ts_dag *dag = parse(ctx, alikes[t].name, alikes[t].src);
		if (dag->nstages != alikes[t].nstages)
			fail_msg("%s: %d stages, expected %d:\n%s",
				alikes[t].name, dag->nstages,
				alikes[t].nstages,
				ts_dag_canonical_string(dag));
		if (!strcmp(alikes[t].name, "user"))
			assert_string_equal(ts_expr_to_string(
				ts_dag_find_stage(dag, "E")->body),
				"sum(k: 64) T[k, i]");
		if (!strcmp(alikes[t].name, "gelu"))
			assert_non_null(ts_dag_find_stage(dag, "A.shared0"));
	}
}

/* f(x) for the function "fn" of the random cases below, in double. */
static double ref_fn(int fn, double x)
{
	switch (fn) {
	case 0: return exp(x);
	case 1: return tanh(x);
	case 2: return erf(x);
	default: return 1 / (1 + exp(-x));
	}
}

/* Random softmax-like programs whose transcendental three stages compute
 * (a sum over the rows, a quotient, a transposed output): the shared
 * stage is made, and the interpreter and the static kernel agree with
 * the formula computed here in double. */
static void test_canon_share_dear__random_cases_match_formula(void **state)
{
	static const char *const fns[] = { "exp", "tanh", "erf", "sigmoid" };
	ts_ctx *ctx = *state;
	ts_target *host = ts_target_host(ctx);

	assert_non_null(host);
	for (int t = 0; t < 8; t++) {
		int fn = (int)ts_ctx_random_below(ctx, 4);
		int64_t r = 8 + (int64_t)ts_ctx_random_below(ctx, 40);
		int64_t n = 128 + (int64_t)ts_ctx_random_below(ctx, 900);
		double a = 0.25 + (double)ts_ctx_random_below(ctx, 8) / 8;
		char src[1024];
		ts_dag *dag;
		ts_array **in, *want[2] = { 0 };
		ts_module *m;
		ts_compile_options o = ts_compile_options_default();
		const float *x, *y, *z;
		double err;
		const char *bad;

		snprintf(src, sizeof(src), "input X: f32[%lld, %lld]\n"
			"E[i: %lld] = sum(k: %lld) %s(X[i, k] * %g - 0.5)\n"
			"output Y[i: %lld, j: %lld] = %s(X[i, j] * %g - 0.5) / "
			"(E[i] + 1.0)\n"
			"output Z[j: %lld, i: %lld] = %s(X[i, j] * %g - 0.5) * "
			"2.0\n", (long long)r, (long long)n, (long long)r,
			(long long)n, fns[fn], a, (long long)r, (long long)n,
			fns[fn], a, (long long)n, (long long)r, fns[fn], a);
		dag = parse(ctx, "random", src);
		if (r * n * 4 <= (1 << 20) && dag->nstages != 4)
			fail_msg("case %d: %d stages, expected 4:\n%s", t,
				dag->nstages, ts_dag_canonical_string(dag));
		in = ts_dag_random_inputs(ctx, dag, (uint64_t)t + 3);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		x = in[0]->data;
		y = want[0]->data;
		z = want[1]->data;
		for (int64_t i = 0; i < r; i++) {
			double e = 1;
			for (int64_t k = 0; k < n; k++)
				e += ref_fn(fn, x[i * n + k] * a - 0.5);
			for (int64_t j = 0; j < n; j++) {
				double f = ref_fn(fn, x[i * n + j] * a - 0.5);
				if (fabs(y[i * n + j] - f / e) > 1e-5 * (1 +
				    fabs(f / e)) || fabs(z[j * r + i] - 2 * f) >
				    1e-5 * (1 + fabs(2 * f)))
					fail_msg("case %d (%s): [%lld, %lld] differs "
						"from the formula", t, fns[fn],
						(long long)i, (long long)j);
			}
		}
		if (!(m = ts_module_compile(ctx, ts_lower(ctx, dag,
		    ts_static_schedule(ctx, dag, host)), &o)))
			fail_msg("case %d: %s", t, ts_ctx_error(ctx));
		bad = ts_test_run_compare(ctx, m, dag, in, want, &err);
		if (bad)
			fail_msg("case %d: static %s differs by %g", t, bad, err);
		ts_module_free(m);
	}
}

/* A reduction under a condition that guards its reads keeps the guard
 * inside its stage, and runs where the condition is false without
 * reading out of bounds. */
static void test_canon_guard__kept_inside_the_stage(void **state)
{
	ts_ctx *ctx = *state;
	const char *src = "input X: f32[8, 5]\n"
		"output Y[h: 10] = select(h >= 1 && h < 9,\n"
		"  sum(k: 5) X[h - 1, k], 0.0)\n";
	ts_dag *dag = parse(ctx, "guard.tsl", src);
	ts_stage *s = ts_dag_find_stage(dag, "Y.sum0");
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);

	assert_non_null(s);
	assert_int_equal(s->body->kind, TS_EXPR_REDUCE);
	assert_int_equal(s->body->a->kind, TS_EXPR_SELECT);
	check_kernel(ctx, "guard naive", dag, ts_schedule_naive(ctx, dag), in);
	check_kernel(ctx, "guard static", dag,
		ts_static_schedule(ctx, dag, ts_target_host(ctx)), in);
	/* In bounds everywhere: no guard. */
	dag = parse(ctx, "noguard.tsl", "input X: f32[8, 5]\n"
		"output Y[h: 8] = select(h >= 1, sum(k: 5) X[h, k], 0.0)\n");
	s = ts_dag_find_stage(dag, "Y.sum0");
	assert_non_null(s);
	assert_int_equal(s->body->a->kind, TS_EXPR_LOAD);
}

/* The C API builds the same canonical DAG as the text. */
/* A guarded mask inside an elementwise stage becomes a stage of its
 * own; a stage that is nothing but the mask stays as it is, and so does
 * a mask whose reads are in bounds everywhere. */
static void test_canon_mask__guarded_and_is_a_stage(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *one = parse(ctx, "mask", "input A: i8[6, 9]\n"
		"input F: f32[6, 9]\n"
		"output Y[i: 6, j: 9] = select(j + 1 < 9 && A[i, j + 1] > -2,\n"
		"  F[i, j] * 2.0, f32(A[i, j]))\n");
	ts_dag *alone = parse(ctx, "alone", "input A: i8[6, 9]\n"
		"output M[i: 6, j: 9] = j + 1 < 9 && A[i, j + 1] > -2\n");
	ts_dag *safe = parse(ctx, "safe", "input A: i8[6, 9]\n"
		"input F: f32[6, 9]\n"
		"output Y[i: 6, j: 9] = select(F[i, j] > 0.0 && A[i, j] > -2,\n"
		"  F[i, j], 0.0)\n");
	ts_stage *m = ts_dag_find_stage(one, "Y.mask0");
	ts_array **in = ts_dag_random_inputs(ctx, one, 3);

	assert_int_equal(one->nstages, 2);
	assert_non_null(m);
	assert_int_equal(m->body->kind, TS_EXPR_BINARY);
	assert_int_equal(m->body->op, TS_OP_AND);
	assert_int_equal(alone->nstages, 1);
	assert_int_equal(safe->nstages, 1);
	check_kernel(ctx, "mask naive", one, ts_schedule_naive(ctx, one), in);
	check_kernel(ctx, "mask static", one, ts_static_schedule(ctx, one,
		ts_target_host(ctx)), in);
}

static void test_canon_api__same_as_text(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 6, 13 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 6), *j = ts_reduce_axis(ctx, "j", 13);
	ts_expr *x = ts_at(ctx, X, 2, ts_var(ctx, i), ts_var(ctx, j));
	ts_tensor *N = ts_compute(ctx, "N", 1, &i, ts_unary(ctx, TS_OP_SQRT,
		ts_sum(ctx, 1, &j, ts_mul(ctx, x, x))));
	ts_dag *api = ts_dag_new(ctx, 1, &X, 1, &N);

	assert_non_null(api);
	assert_canonical(api);
	assert_string_equal(ts_dag_hash(api),
		ts_dag_hash(parse(ctx, "l2", twins[1].many)));
}

/* A term of a sum that reads none of its axes draws a warning that says
 * where it is and how to write it outside. */
static void test_canon_warning__loose_term_in_sum(void **state)
{
	ts_ctx *ctx = *state;
	const char *w;

	assert_non_null(ts_parse_string(ctx, "loose.tsl",
		"input A: f32[4, 6]\ninput b: f32[4]\n"
		"output C[i: 4] = sum(k: 6) A[i, k] + b[i]\n"));
	w = ts_ctx_warnings(ctx);
	assert_non_null(w);
	assert_non_null(strstr(w, "loose.tsl:3:38: warning: 'b[i]' reads no "
		"axis of this sum"));
	assert_non_null(strstr(w, "added 6 times"));
	assert_non_null(strstr(w, "+ b[i]' to add it once"));
	ts_ctx_clear_warnings(ctx);
	/* Written outside, or reading the axis: no warning. */
	assert_non_null(ts_parse_string(ctx, "ok.tsl",
		"input A: f32[4, 6]\ninput b: f32[6]\n"
		"output C[i: 4] = (sum(k: 6) A[i, k]) + 1.0\n"
		"output D[i: 4] = sum(k: 6) A[i, k] + b[k]\n"));
	w = ts_ctx_warnings(ctx);
	assert_true(!w || !strstr(w, "reads no axis"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_canon_twins__one_workload),
		TS_TEST(test_canon_twins__kernels_match_interpreter),
		TS_TEST(test_canon_names__follow_the_consumer),
		TS_TEST(test_canon_print__parses_back),
		TS_TEST(test_canon_print__literal_stage_cast),
		TS_TEST(test_canon_share__with_a_user_stage),
		TS_TEST(test_canon_share_dear__only_where_it_pays),
		TS_TEST(test_canon_share_dear__random_cases_match_formula),
		TS_TEST(test_canon_guard__kept_inside_the_stage),
		TS_TEST(test_canon_mask__guarded_and_is_a_stage),
		TS_TEST(test_canon_api__same_as_text),
		TS_TEST(test_canon_warning__loose_term_in_sum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
