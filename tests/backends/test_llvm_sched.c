/* The LLVM backend on lowered schedules: tiled matmuls with guarded and
 * partitioned tails, a register tile kept in a local buffer, parallel
 * and vectorized loops, and fused elementwise epilogues, each checked
 * against ts_eval on 1 and 2 threads. */
#include <config.h>

#include <stdio.h>

#include <gc.h>

#include "tests/common.h"
#include "support/support.h"

static const char *matmul_src =
	"input A: f32[130, 72]\n"
	"input B: f32[72, 200]\n"
	"output C[i: 130, j: 200] = sum(k: 72) A[i, k] * B[k, j]\n";

static const char *dense_src =
	"input X: f32[37, 64]\n"
	"input W: f32[64, 90]\n"
	"input b: f32[90]\n"
	"Y[i: 37, j: 90] = sum(k: 64) X[i, k] * W[k, j]\n"
	"output Z[i: 37, j: 90] = max(Y[i, j] + b[j], 0.0)\n";

/* Parse "src" or fail. */
static ts_dag *parse(ts_ctx *ctx, const char *src)
{
	ts_dag *dag = ts_parse_string(ctx, "test.tsl", src);

	if (!dag)
		fail_msg("parse: %s", ts_ctx_error(ctx));
	return dag;
}

/* Fail with the context's message unless "st" is TS_OK. */
static void ok(ts_ctx *ctx, ts_status st, const char *what)
{
	if (st != TS_OK)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
}

/* Tile stage "s" of "sch": "i" by "ti", "j" by "tj" with "tail", "k"
 * between the tile loops, the tile accumulated locally at j.o, rows
 * unrolled, columns vectorized, row blocks parallel. */
static void tile(ts_ctx *ctx, ts_schedule *sch, const char *s, int ti,
	int tj, ts_tail tail)
{
	const char *order[5] = { "i.o", "j.o", "k", "i.i", "j.i" };

	ok(ctx, ts_schedule_split(sch, s, "i", ti, tail), "split i");
	ok(ctx, ts_schedule_split(sch, s, "j", tj, tail), "split j");
	ok(ctx, ts_schedule_reorder(sch, s, 5, order), "reorder");
	ok(ctx, ts_schedule_cache_write(sch, s, "j.o"), "cache_write");
	ok(ctx, ts_schedule_unroll(sch, s, "i.i"), "unroll");
	ok(ctx, ts_schedule_vectorize(sch, s, "j.i"), "vectorize");
	ok(ctx, ts_schedule_parallel(sch, s, "i.o"), "parallel");
}

/* Lower "dag" under "sch", run it on 1 and 2 threads, and check both runs
 * against the interpreter; the two runs must agree exactly. */
static void check_schedule(ts_ctx *ctx, ts_dag *dag, ts_schedule *sch,
	const char *what)
{
	ts_func *f = ts_lower(ctx, dag, sch);
	ts_array **in, **want, *got[2];
	ts_module *m;
	double err;
	int n;

	if (!f)
		fail_msg("%s: lower: %s", what, ts_ctx_error(ctx));
	m = ts_module_compile(ctx, f, NULL);
	if (!m)
		fail_msg("%s: compile: %s", what, ts_ctx_error(ctx));
	in = ts_dag_random_inputs(ctx, dag, 3);
	want = GC_MALLOC((size_t)dag->noutputs * sizeof(*want));
	ok(ctx, ts_eval(ctx, dag, in, want), "eval");
	n = dag->ninputs + dag->noutputs;
	for (int t = 0; t < 2; t++) {
		ts_array **args = GC_MALLOC((size_t)n * sizeof(*args));
		for (int i = 0; i < n; i++)
			args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(
				ctx, dag->outputs[i - dag->ninputs]);
		ts_module_set_threads(m, t + 1);
		ok(ctx, ts_module_run(m, args), what);
		if (!ts_array_close(args[dag->ninputs], want[0], &err))
			fail_msg("%s, %d thread(s): differs from ts_eval by %g",
				what, t + 1, err);
		got[t] = args[dag->ninputs];
	}
	assert_memory_equal(got[0]->data, got[1]->data,
		(size_t)got[0]->size * ts_dtype_size(got[0]->dtype));
	ts_module_free(m);
}

static void test_llvm_sched_matmul_tiled_guarded__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, matmul_src);
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	tile(ctx, sch, "C", 4, 16, TS_TAIL_GUARD);
	check_schedule(ctx, dag, sch, "matmul 4x16 guarded");
}

static void test_llvm_sched_matmul_tiled_partitioned__matches_eval(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, matmul_src);
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	tile(ctx, sch, "C", 6, 8, TS_TAIL_PARTITION);
	check_schedule(ctx, dag, sch, "matmul 6x8 partitioned");
}

static void test_llvm_sched_dense_relu_fused__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, dense_src);
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	ok(ctx, ts_schedule_split(sch, "Z", "i", 4, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_split(sch, "Z", "j", 16, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_reorder(sch, "Z", 4, (const char *[]){ "i.o",
		"j.o", "i.i", "j.i" }), "reorder");
	ok(ctx, ts_schedule_compute_at(sch, "Y", "Z", "j.o"), "compute_at");
	ok(ctx, ts_schedule_vectorize(sch, "Z", "j.i"), "vectorize");
	ok(ctx, ts_schedule_parallel(sch, "Z", "i.o"), "parallel");
	check_schedule(ctx, dag, sch, "dense + relu");
}

/* rfactor of a loop fused back from a split with a guarded tail: the
 * partial results the guard skips still enter the final reduction, so
 * they must hold the reducer's identity. */
static void test_llvm_sched_rfactor_guarded_fused__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input X: f32[4, 5]\n"
		"output Y[i: 4] = sum(j: 5) X[i, j]\n");
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	ok(ctx, ts_schedule_split(sch, "Y", "j", 3, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_fuse(sch, "Y", "j.o", "j.i"), "fuse");
	ok(ctx, ts_schedule_rfactor(sch, "Y", "j.o@j.i"), "rfactor");
	check_schedule(ctx, dag, sch, "rfactor of a guarded fused loop");
}

/* Gathers and scatters of a width that is no power of two (18 lanes of
 * f64): this schedule of a two-layer network once compiled, on AVX-512,
 * to a gather whose destination was its index register (SIGILL). */
/* A 2-lane f16 output vectorised over a 3-row product of f16 operands
 * (corpus seed 2545): with AVX512-FP16 on, LLVM 16 aborted selecting
 * instructions ("Cannot select extract_vector_elt"). */
static void test_llvm_sched_f16_short_vector__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input X: f16[3, 7]\ninput Wt: f16[7, 12]\n"
		"input Bias: f16[12]\n"
		"D[i: 3, j: 12] = sum(k: 7) f32(X[i, k]) * f32(Wt[k, j])\n"
		"output Y[i: 3, j: 12]: f16 = tanh(D[i, j] + f32(Bias[j]))\n");
	ts_schedule *t = ts_schedule_new(ctx, dag);

	ok(ctx, ts_schedule_split(t, "Y", "i", 2, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_split(t, "Y", "j", 6, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_reorder(t, "Y", 4, (const char *[]){ "j.i", "i.i",
		"j.o", "i.o" }), "reorder");
	ok(ctx, ts_schedule_parallel(t, "Y", "j.i"), "parallel");
	ok(ctx, ts_schedule_vectorize(t, "Y", "i.o"), "vectorize");
	ok(ctx, ts_schedule_split(t, "D", "i", 1, TS_TAIL_PARTITION), "split");
	ok(ctx, ts_schedule_split(t, "D", "j", 11, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_reorder(t, "D", 5, (const char *[]){ "j.o", "j.i",
		"k", "i.o", "i.i" }), "reorder");
	ok(ctx, ts_schedule_vectorize(t, "D", "i.i"), "vectorize");
	check_schedule(ctx, dag, t, "2-lane f16 vectors");
}

static void test_llvm_sched_gather_odd_width__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input X: f64[51, 1]\n"
		"input W1: f64[1, 10]\ninput B1: f64[10]\n"
		"input W2: f64[10, 7]\n"
		"Hd[i: 51, j: 10] = sum(k: 1) X[i, k] * W1[k, j]\n"
		"A[i: 51, j: 10] = tanh(Hd[i, j] + B1[j])\n"
		"output Y[i: 51, o: 7] = sum(j: 10) A[i, j] * W2[j, o]\n");
	ts_schedule *sch = ts_schedule_from_json(ctx, dag, "{\"steps\": ["
		"{\"kind\":\"SP\",\"stage\":\"Y\",\"loop\":\"o\",\"factor\":7,"
		"\"tail\":\"guard\"},{\"kind\":\"PA\",\"stage\":\"Y\","
		"\"loop\":\"i\"},{\"kind\":\"UR\",\"stage\":\"Y\",\"loop\":\"j\"},"
		"{\"kind\":\"CA\",\"stage\":\"A\",\"target\":\"Y\",\"loop\":\"j\"},"
		"{\"kind\":\"RE\",\"stage\":\"A\",\"loops\":[\"j\",\"i\"]},"
		"{\"kind\":\"CW\",\"stage\":\"A\",\"loop\":\"j\"},{\"kind\":\"VE\","
		"\"stage\":\"A\",\"loop\":\"i\"},{\"kind\":\"SP\",\"stage\":\"Hd\","
		"\"loop\":\"i\",\"factor\":35,\"tail\":\"guard\"},{\"kind\":\"SP\","
		"\"stage\":\"Hd\",\"loop\":\"i.i\",\"factor\":2,\"tail\":\"guard\"},"
		"{\"kind\":\"SP\",\"stage\":\"Hd\",\"loop\":\"j\",\"factor\":5,"
		"\"tail\":\"guard\"},{\"kind\":\"SP\",\"stage\":\"Hd\",\"loop\":"
		"\"j.i\",\"factor\":5,\"tail\":\"guard\"},{\"kind\":\"RE\","
		"\"stage\":\"Hd\",\"loops\":[\"j.i.o\",\"i.i.i\",\"i.o\",\"k\","
		"\"j.o\",\"j.i.i\",\"i.i.o\"]},{\"kind\":\"CW\",\"stage\":\"Hd\","
		"\"loop\":\"j.i.o\"},{\"kind\":\"VE\",\"stage\":\"Hd\",\"loop\":"
		"\"i.i.o\"}]}");
	ts_schedule *t;
	ts_dag *tr = parse(ctx, "input X: f64[51, 10]\n"
		"output Y[j: 10, i: 51] = X[i, j] * 2.0\n");

	if (!sch)
		fail_msg("schedule: %s", ts_ctx_error(ctx));
	check_schedule(ctx, dag, sch, "gathers of 18 lanes");
	t = ts_schedule_new(ctx, tr);
	ok(ctx, ts_schedule_split(t, "Y", "i", 18, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_reorder(t, "Y", 3, (const char *[]){ "i.o", "j",
		"i.i" }), "reorder");
	ok(ctx, ts_schedule_vectorize(t, "Y", "i.i"), "vectorize");
	check_schedule(ctx, tr, t, "a transpose in vectors of 18");
}

/* A blocked layout read and written along its inner block in vectors
 * that stay inside one block (an 8-lane vector of k over k // 16 and
 * k % 16, as a convolution over NCHW16c weights vectorizes its output
 * channels) is a plain vector load and store, not a gather; vectors that
 * cross a block (12 lanes) or blocks of another size gather, and every
 * case matches the interpreter. */
static void test_llvm_sched_blocked_layout__vector_loads(void **state)
{
	ts_ctx *ctx = *state;
	static const struct { int lanes, block; bool plain; } cases[] = {
		{ 8, 16, true }, { 16, 16, true }, { 4, 16, true },
		{ 12, 16, false }, { 8, 12, false },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int b = cases[c].block;
		ts_dag *dag = parse(ctx, ts_asprintf("input W: f32[6, %d, %d]\n"
			"output Y[i: 6, k: %d] = W[i, k // %d, k %% %d] * 2.0\n",
			96 / b, b, 96, b, b));
		ts_schedule *sch = ts_schedule_new(ctx, dag);
		ts_compile_options co = ts_compile_options_default();
		char *ir = NULL, what[64];
		ok(ctx, ts_schedule_split(sch, "Y", "k", cases[c].lanes,
			TS_TAIL_GUARD), "split");
		ok(ctx, ts_schedule_vectorize(sch, "Y", "k.i"), "vectorize");
		snprintf(what, sizeof(what), "%d lanes in blocks of %d",
			cases[c].lanes, b);
		check_schedule(ctx, dag, sch, what);
		ok(ctx, ts_module_emit_llvm_ir(ctx, ts_lower(ctx, dag, sch), &co,
			&ir), "emit");
		if ((strstr(ir, "gather") == NULL) != cases[c].plain)
			fail_msg("%s: %s", what, cases[c].plain ?
				"gathered" : "loaded as one vector");
	}
}

/* A dense layer over weights blocked by 8, its outputs in tiles of 40
 * (five blocks) left to LLVM's vectoriser in a parallel loop: the
 * quotient and remainder of the output index, never negative, are
 * unsigned, so that the optimised IR of the loop's body (whose index
 * arrives as an argument) has no signed division and loads the weights
 * in vectors of 8 for an AVX2 target.  With signed floor divisions LLVM
 * left the body scalar there, 18 times slower.  An index that can be
 * negative keeps the floor division's rounding; every case matches the
 * interpreter. */
static void test_llvm_sched_blocked_layout__parallel_quotients(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input X: f32[1, 64]\n"
		"input W: f32[25, 64, 8]\n"
		"output Y[n: 1, j: 200] = sum(k: 64) X[n, k] * "
		"W[j // 8, k, j % 8]\n");
	ts_dag *neg = parse(ctx, "input X: f32[40]\n"
		"output Y[i: 40] = select(i >= 3, "
		"X[(i - 3) // 2 + (i - 3) % 2], 0.0)\n");
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "j.o", "n", "k", "j.i" };
	ts_compile_options co = ts_compile_options_default();
	char *ir = NULL;

	ok(ctx, ts_schedule_split(sch, "Y", "j", 40, TS_TAIL_GUARD), "split");
	ok(ctx, ts_schedule_reorder(sch, "Y", 4, order), "reorder");
	ok(ctx, ts_schedule_cache_write(sch, "Y", "j.o"), "cache_write");
	ok(ctx, ts_schedule_parallel(sch, "Y", "j.o"), "parallel");
	check_schedule(ctx, dag, sch, "blocked weights, parallel tiles of 40");
	co.cpu = "znver3";
	co.features = "+avx2,+fma";
	ok(ctx, ts_module_emit_llvm_ir(ctx, ts_lower(ctx, dag, sch), &co, &ir),
		"emit");
	if (strstr(ir, "sdiv") || strstr(ir, "srem"))
		fail_msg("a signed division of an index left in the IR");
	if (!strstr(ir, "load <8 x float>"))
		fail_msg("the blocked weights not loaded in vectors of 8");
	check_schedule(ctx, neg, ts_schedule_new(ctx, neg),
		"floor quotients of an index that can be negative");
}

/* A loop around a register tile the schedule unrolled (the reduction
 * loop) is marked for LLVM not to unroll it again when the tile's
 * accumulators take more than half the vector registers (64 scalars
 * here); a tile of 4 and a loop with nothing unrolled inside are left
 * to LLVM.  All match the interpreter.  The IR is read before LLVM's
 * passes: on a Zen 3 LLVM runtime-unrolls a loop of the tile of 4 itself
 * and marks what it unrolled the same way. */
static void test_llvm_sched_register_tile__not_unrolled_again(void **state)
{
	static const struct { int tile; bool marked; } cases[] = {
		{ 0, false }, { 4, false }, { 64, true },
	};
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input A: f32[64, 3]\n"
		"input B: f32[3, 16]\n"
		"output C[i: 64, j: 16] = sum(k: 3) A[i, k] * B[k, j]\n");
	ts_compile_options co = ts_compile_options_default();

	co.opt_level = 0;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ts_schedule *sch = ts_schedule_new(ctx, dag);
		const char *order[] = { "i.o", "j", "k", "i.i" };
		char *ir = NULL, what[32];
		snprintf(what, sizeof(what), "tile of %d", cases[c].tile);
		if (cases[c].tile) {
			ok(ctx, ts_schedule_split(sch, "C", "i",
				cases[c].tile, TS_TAIL_GUARD), "split");
			ok(ctx, ts_schedule_reorder(sch, "C", 4, order),
				"reorder");
			ok(ctx, ts_schedule_unroll(sch, "C", "i.i"), "unroll");
		}
		check_schedule(ctx, dag, sch, what);
		ok(ctx, ts_module_emit_llvm_ir(ctx, ts_lower(ctx, dag, sch),
			&co, &ir), "emit");
		if (!strstr(ir, "llvm.loop.unroll.disable") != !cases[c].marked)
			fail_msg("%s: %s", what, cases[c].marked ?
				"its loops left to LLVM's unroller" :
				"a loop kept from LLVM's unroller");
	}
}

/* Check the naive schedule of "dag" against the interpreter, compile it
 * for "cpu" with "features", and check that the loop marked
 * llvm.loop.unroll.disable is there or not as "marked" says. */
static void check_unroll_mark(ts_ctx *ctx, ts_dag *dag, const char *cpu,
	const char *features, bool marked, const char *what)
{
	ts_compile_options co = ts_compile_options_default();
	char *ir = NULL;

	co.opt_level = 0;
	co.cpu = cpu;
	co.features = features;
	check_schedule(ctx, dag, ts_schedule_new(ctx, dag), what);
	ok(ctx, ts_module_emit_llvm_ir(ctx, ts_lower(ctx, dag,
		ts_schedule_new(ctx, dag)), &co, &ir), "emit");
	if (!strstr(ir, "llvm.loop.unroll.disable") != !marked)
		fail_msg("%s: %s", what, marked ? "left to LLVM's unroller" :
			"kept from LLVM's unroller");
}

/* A loop of half a vector to a vector (a tail of 8 on a 16-lane target)
 * around a small window is marked for LLVM not to unroll it, so that it
 * vectorizes that loop instead of unrolling it whole and gathering along
 * the loop around it; for an 8-lane target the same loop is a whole
 * vector and left to LLVM, as is a loop around a large inner nest.  All
 * match the interpreter. */
static void test_llvm_sched_half_vector_loop__not_unrolled(void **state)
{
	static const struct {
		const char *cpu, *features;
		int width, window;
		bool marked;
	} cases[] = {
		{ "znver4", "+avx2,+fma,+avx512f", 8, 3, true },
		{ "znver4", "+avx2,+fma,+avx512f", 8, 40, false },
		{ "znver4", "+avx2,+fma,+avx512f", 4, 3, false },
		{ "znver3", "+avx2,+fma", 8, 3, false },
	};
	ts_ctx *ctx = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ts_dag *dag = parse(ctx, ts_asprintf("input X: f32[4, %d]\n"
			"output Y[i: 4, j: %d] = sum(r: %d) X[i, j + r]\n",
			cases[c].width + cases[c].window - 1, cases[c].width,
			cases[c].window));
		char what[64];

		snprintf(what, sizeof(what), "%s, %d columns, window of %d",
			cases[c].cpu, cases[c].width, cases[c].window);
		check_unroll_mark(ctx, dag, cases[c].cpu, cases[c].features,
			cases[c].marked, what);
	}
}

/* An innermost loop of one AVX-512 vector that stores along it, around
 * which the rows are 16 apart (a clipped epilogue over channel blocks of
 * 16): LLVM would unroll it whole and vectorise the loop around it with
 * gathers and scatters, so it is kept from LLVM's unroller; on AVX2, or
 * at another width, it is left alone.  The code computes what the
 * interpreter does either way. */
static void test_llvm_sched_vector_row_loop__not_unrolled(void **state)
{
	static const struct {
		const char *cpu, *features;
		int width;
		bool marked;
	} cases[] = {
		{ "znver4", "+avx2,+fma,+avx512f", 16, true },
		{ "znver4", "+avx2,+fma,+avx512f", 32, false },
		{ "znver3", "+avx2,+fma", 16, false },
		{ "znver3", "+avx2,+fma", 8, false },
	};
	ts_ctx *ctx = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ts_dag *dag = parse(ctx, ts_asprintf("input X: f32[56, %d]\n"
			"output Y[i: 56, j: %d] = min(max(X[i, j], 0.0), 6.0)\n",
			cases[c].width, cases[c].width));
		char what[64];

		snprintf(what, sizeof(what), "%s, rows of %d", cases[c].cpu,
			cases[c].width);
		check_unroll_mark(ctx, dag, cases[c].cpu, cases[c].features,
			cases[c].marked, what);
	}
}

/* rfactor of a reduction whose stage is empty: its partial results are
 * an empty buffer, not an error or a stray write. */
static void test_llvm_sched_rfactor_empty_stage__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, "input X: f32[0, 3]\n"
		"output Y[i: 0, j: 3] = X[i, j] * rsqrt((sum(k: 3)\n"
		"  X[i, k] * X[i, k]) + 0.001)\n");
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	ok(ctx, ts_schedule_rfactor(sch, "Y.sum0", "k"), "rfactor");
	check_schedule(ctx, dag, sch, "rfactor of an empty stage");
}

static void test_llvm_sched_naive__examples_match_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = parse(ctx, dense_src);

	check_schedule(ctx, dag, ts_schedule_naive(ctx, dag), "naive dense");
}

/* Programs with zero extents: empty inputs and outputs, and reductions
 * over nothing that give their reducer's identity. */
static const char *const zero_srcs[] = {
	"input X: f32[0, 4]\n"
	"input W: f32[4, 3]\n"
	"output Y[i: 0, j: 3] = sum(k: 4) X[i, k] * W[k, j]\n"
	"output S[j: 4] = sum(i: 0) X[i, j]\n"
	"output M[j: 3] = max(k: 0) W[k, j]\n"
	"output Z[j: 3] = W[0, j] + (prod(k: 0) W[k, j])\n",
	"let N = 0\n"
	"input A: f32[8, N]\n"
	"input B: i32[N, 6]\n"
	"C[i: 8, j: 6] = sum(k: N) A[i, k] * f32(B[k, j])\n"
	"output D[i: 8, j: 6] = max(C[i, j], 0.0) + 1.0\n"
	"output E[i: 8, j: N] = A[i, j] * 2.0\n"
	"output F[i: 8]: i32 = min(k: N) B[k, 0]\n",
};

/* Compile "dag" under "sch" and compare every output with ts_eval. */
static void check_all_outputs(ts_ctx *ctx, ts_dag *dag, ts_schedule *sch,
	const char *what)
{
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_module *m = f ? ts_module_compile(ctx, f, NULL) : NULL;
	ts_array **in = ts_dag_random_inputs(ctx, dag, 5), **want;
	const char *bad;
	double err = 0;

	if (!m)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
	want = GC_MALLOC((size_t)(dag->noutputs + 1) * sizeof(*want));
	ok(ctx, ts_eval(ctx, dag, in, want), "eval");
	if ((bad = ts_test_run_compare(ctx, m, dag, in, want, &err)))
		fail_msg("%s: output '%s' differs from ts_eval by %g", what,
			bad, err);
	ts_module_free(m);
}

static void test_llvm_sched_zero_extents__naive_and_static_match_eval(
	void **state)
{
	for (size_t i = 0; i < sizeof(zero_srcs) / sizeof(*zero_srcs); i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = parse(ctx, zero_srcs[i]);
		ts_target *tg = ts_target_lookup(ctx, "zen3");

		assert_non_null(tg);
		check_all_outputs(ctx, dag, ts_schedule_new(ctx, dag), "naive");
		check_all_outputs(ctx, dag, ts_static_schedule(ctx, dag, tg),
			"static");
		ts_ctx_free(ctx);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_llvm_sched_matmul_tiled_guarded__matches_eval),
		TS_TEST(test_llvm_sched_matmul_tiled_partitioned__matches_eval),
		TS_TEST(test_llvm_sched_dense_relu_fused__matches_eval),
		TS_TEST(test_llvm_sched_rfactor_guarded_fused__matches_eval),
		TS_TEST(test_llvm_sched_rfactor_empty_stage__matches_eval),
		TS_TEST(test_llvm_sched_gather_odd_width__matches_eval),
		TS_TEST(test_llvm_sched_blocked_layout__vector_loads),
		TS_TEST(test_llvm_sched_blocked_layout__parallel_quotients),
		TS_TEST(test_llvm_sched_register_tile__not_unrolled_again),
		TS_TEST(test_llvm_sched_half_vector_loop__not_unrolled),
		TS_TEST(test_llvm_sched_vector_row_loop__not_unrolled),
		TS_TEST(test_llvm_sched_f16_short_vector__matches_eval),
		TS_TEST(test_llvm_sched_naive__examples_match_eval),
		TS_TEST(test_llvm_sched_zero_extents__naive_and_static_match_eval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
