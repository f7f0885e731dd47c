/* Per-stage facts: operation counts and bytes, strides and contiguous
 * axes, fusable consumers, inlinable stages, rfactor, the traffic model
 * per loop level, and bounds inference for a fused producer. */
#include <config.h>

#include <time.h>

#include "tests/common.h"

#include <tessel/analysis.h>

#define V(a) ts_var(ctx, (a))
#define I(v) ts_int(ctx, (v))

/* C[i, j] = sum_k A[i, k] * B[k, j] with A: MxK, B: KxN. */
static ts_tensor *matmul(ts_ctx *ctx, int64_t M, int64_t K, int64_t N)
{
	int64_t sa[2] = { M, K }, sb[2] = { K, N };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 2, sb);
	ts_axis *i = ts_axis_new(ctx, "i", M), *j = ts_axis_new(ctx, "j", N);
	ts_axis *k = ts_reduce_axis(ctx, "k", K);
	ts_axis *ax[2] = { i, j };

	return ts_compute(ctx, "C", 2, ax, ts_sum(ctx, 1, &k, ts_mul(ctx,
		ts_at(ctx, A, 2, V(i), V(k)), ts_at(ctx, B, 2, V(k), V(j)))));
}

/* Return a stage "name" over "n" x "m" applying "body" to it. */
static ts_tensor *over2(ts_ctx *ctx, const char *name, int64_t n, int64_t m,
	ts_expr *(*body)(ts_ctx *, ts_axis *, ts_axis *, void *), void *arg)
{
	ts_axis *i = ts_axis_new(ctx, "i", n), *j = ts_axis_new(ctx, "j", m);
	ts_axis *ax[2] = { i, j };

	return ts_compute(ctx, name, 2, ax, body(ctx, i, j, arg));
}

static ts_expr *relu_of(ts_ctx *ctx, ts_axis *i, ts_axis *j, void *t)
{
	return ts_max(ctx, ts_at(ctx, t, 2, V(i), V(j)), ts_float(ctx, 0));
}

static ts_expr *exp_of(ts_ctx *ctx, ts_axis *i, ts_axis *j, void *t)
{
	return ts_unary(ctx, TS_OP_EXP, ts_at(ctx, t, 2, V(i), V(j)));
}

static ts_expr *transpose_of(ts_ctx *ctx, ts_axis *i, ts_axis *j, void *t)
{
	return ts_at(ctx, t, 2, V(j), V(i));
}

static ts_expr *column0_of(ts_ctx *ctx, ts_axis *i, ts_axis *j, void *t)
{
	return ts_at(ctx, t, 2, V(i), I(0));
}

/* Return the info of "t"'s stage in "di". */
static ts_stage_info *info_of(ts_dag_info *di, const ts_tensor *t)
{
	int i = ts_dag_stage_index(di->dag, t->stage);

	assert_true(i >= 0);
	return di->stages[i];
}

static void test_facts_matmul__counts_and_bytes(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *C = matmul(ctx, 8, 12, 16);
	ts_stage_info *si = ts_analyze_stage(ctx, C->stage);

	assert_non_null(si);
	assert_int_equal(si->counts.fma, 8 * 12 * 16);
	assert_int_equal(si->counts.add, 0);
	assert_int_equal(si->counts.mul, 0);
	assert_int_equal(si->counts.flops, 2 * 8 * 12 * 16);
	assert_int_equal(si->counts.bytes_read, (8 * 12 + 12 * 16) * 4);
	assert_int_equal(si->counts.bytes_written, 8 * 16 * 4);
	/* 3072 flops for 1152 + 512 bytes. */
	assert_true(si->counts.intensity > 1.84 && si->counts.intensity < 1.85);
	assert_int_equal(si->accesses[0].instances, 8 * 12 * 16);
	assert_int_equal(si->accesses[0].distinct, 8 * 12);
	assert_true(si->accesses[0].distinct_exact);
	assert_string_equal(si->accesses[2].text, "C[i, j]");
	assert_true(si->accesses[2].write);
}

static void test_facts_counts__by_kind(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 4, 10 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_axis *k = ts_reduce_axis(ctx, "k", 10);
	/* S[i] = sqrt(max_k X[i, k]) / (X[i, 0] * 2 + 1) - (X[i, 1] < 0 ? 1 : 0) */
	ts_expr *mx = ts_rmax(ctx, 1, &k, ts_at(ctx, X, 2, V(i), V(k)));
	ts_expr *den = ts_add(ctx, ts_mul(ctx, ts_at(ctx, X, 2, V(i), I(0)),
		ts_float(ctx, 2)), ts_float(ctx, 1));
	ts_expr *neg = ts_select(ctx, ts_binary(ctx, TS_OP_LT,
		ts_at(ctx, X, 2, V(i), I(1)), ts_float(ctx, 0)),
		ts_float(ctx, 1), ts_float(ctx, 0));
	ts_tensor *S = ts_compute(ctx, "S", 1, &i, ts_sub(ctx,
		ts_div(ctx, ts_unary(ctx, TS_OP_SQRT, mx), den), neg));
	ts_stage_info *si = ts_analyze_stage(ctx, S->stage);

	assert_non_null(si);
	assert_int_equal(si->counts.compare, 4 * 10 + 4);	/* max, < */
	assert_int_equal(si->counts.special, 4);	/* sqrt */
	assert_int_equal(si->counts.special_cost,
		4 * ts_special_cost(TS_OP_SQRT));
	assert_int_equal(si->counts.div, 4);
	assert_int_equal(si->counts.fma, 4);		/* x * 2 + 1 */
	assert_int_equal(si->counts.add, 4);		/* the outer sub */
	assert_int_equal(si->counts.flops, 40 + 4 + 4 + 4 + 8 + 4);
	assert_int_equal(si->counts.bytes_read, 4 * 10 * 4);
	assert_int_equal(si->counts.bytes_written, 4 * 4);
}

/* The trigonometric and hyperbolic functions are special operations,
 * isnan and isinf comparisons, sign and ceil neither:
 * S[i] = select(isnan(X[i, 0]) || isinf(X[i, 1]), atanh(X[i, 2]),
 * sin(X[i, 3]) + sign(ceil(X[i, 4]))). */
static void test_facts_counts__math_functions(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 4, 5 };
	ts_tensor *X = ts_placeholder(ctx, "Xm", TS_F32, 2, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_expr *x[5];
	ts_tensor *S;
	ts_stage_info *si;

	for (int k = 0; k < 5; k++)
		x[k] = ts_at(ctx, X, 2, V(i), I(k));
	S = ts_compute(ctx, "Sm", 1, &i, ts_select(ctx, ts_binary(ctx,
		TS_OP_OR, ts_unary(ctx, TS_OP_ISNAN, x[0]),
		ts_unary(ctx, TS_OP_ISINF, x[1])),
		ts_unary(ctx, TS_OP_ATANH, x[2]),
		ts_add(ctx, ts_unary(ctx, TS_OP_SIN, x[3]),
		ts_unary(ctx, TS_OP_SIGN, ts_unary(ctx, TS_OP_CEIL, x[4])))));
	assert_non_null(si = ts_analyze_stage(ctx, S->stage));
	assert_int_equal(si->counts.special, 4 * 2);	/* atanh, sin */
	/* Library calls, one element at a time: far above an expansion. */
	assert_int_equal(si->counts.special_cost, 4 * (ts_special_cost(
		TS_OP_ATANH) + ts_special_cost(TS_OP_SIN)));
	assert_true(ts_special_cost(TS_OP_SIN) > 10 * ts_special_cost(
		TS_OP_EXP));
	assert_int_equal(si->counts.compare, 4 * 2);	/* isnan, isinf */
	assert_int_equal(si->counts.add, 4);
	/* select on data, ||, sign, ceil */
	assert_int_equal(si->counts.other, 4 * 4);
}

static void test_facts_strides__and_contiguous_axis(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *C = matmul(ctx, 8, 12, 16);
	ts_tensor *T = over2(ctx, "T", 16, 8, transpose_of, C);
	ts_stage_info *si = ts_analyze_stage(ctx, C->stage);
	ts_stage_info *ti = ts_analyze_stage(ctx, T->stage);

	/* A[i, k]: i moves 12 elements, j none, k one. */
	assert_int_equal(si->accesses[0].stride[0], 12);
	assert_int_equal(si->accesses[0].stride[1], 0);
	assert_int_equal(si->accesses[0].stride[2], 1);
	assert_int_equal(si->accesses[0].contiguous_axis, 2);
	/* B[k, j]: j is contiguous, k moves a row of 16. */
	assert_int_equal(si->accesses[1].stride[2], 16);
	assert_int_equal(si->accesses[1].contiguous_axis, 1);
	assert_int_equal(si->accesses[2].contiguous_axis, 1);
	/* T[i, j] = C[j, i]: the load is contiguous along i, the write
	 * along j. */
	assert_int_equal(ti->accesses[0].stride[0], 1);
	assert_int_equal(ti->accesses[0].stride[1], 16);
	assert_int_equal(ti->accesses[0].contiguous_axis, 0);
	assert_int_equal(ti->accesses[1].contiguous_axis, 1);
}

static void test_facts_strides__unknown_for_data_dependent(void **state)
{
	ts_ctx *ctx = *state;
	int64_t st[2] = { 10, 3 }, si_[1] = { 4 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 2, st);
	ts_tensor *Ix = ts_placeholder(ctx, "Ix", TS_I32, 1, si_);
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 3);
	ts_axis *ax[2] = { i, j };
	ts_tensor *G = ts_compute(ctx, "G", 2, ax, ts_at(ctx, T, 2,
		ts_at(ctx, Ix, 1, V(i)), V(j)));
	ts_stage_info *si = ts_analyze_stage(ctx, G->stage);

	/* T[Ix[i], j]: unknown along i, but j only moves the last index. */
	assert_int_equal(si->accesses[0].stride[0], TS_STRIDE_UNKNOWN);
	assert_int_equal(si->accesses[0].stride[1], 1);
	assert_int_equal(si->accesses[0].contiguous_axis, 1);
	assert_int_equal(si->accesses[1].stride[0], 1);	/* Ix[i] */
	assert_int_equal(si->accesses[1].stride[1], 0);
}

static void test_facts_consumers__fusable_and_not(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *C = matmul(ctx, 8, 12, 8);
	ts_tensor *R = over2(ctx, "R", 8, 8, relu_of, C);
	ts_tensor *T = over2(ctx, "T", 8, 8, transpose_of, C);
	ts_tensor *K = over2(ctx, "K", 8, 8, column0_of, C);
	ts_tensor *outs[3] = { R, T, K };
	ts_dag *dag = ts_dag_new(ctx, 0, NULL, 3, outs);
	ts_dag_info *di = ts_analyze_dag(ctx, dag);
	ts_stage_info *ci;

	assert_non_null(di);
	ci = info_of(di, C);
	assert_int_equal(ci->nconsumers, 3);
	for (int k = 0; k < 3; k++) {
		const ts_stage *c = dag->stages[ci->consumers[k]];
		/* Elementwise and transposed reads are bijective; reading
		 * column 0 for every j is not. */
		assert_int_equal(ci->fusable[k], c != K->stage);
	}
	assert_int_equal(ci->consumer_reads, 3 * 64);
}

static void test_facts_inlinable__counts_recomputation(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 4, 6 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_tensor *E = over2(ctx, "E", 4, 6, exp_of, X);
	ts_tensor *R = over2(ctx, "R", 4, 6, relu_of, X);
	ts_tensor *T = over2(ctx, "T", 6, 4, transpose_of, X);
	/* E is read twice per element (Y and Z), R once, T (a pure copy)
	 * twice. */
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 6);
	ts_axis *ax[2] = { i, j };
	ts_tensor *Y = ts_compute(ctx, "Y", 2, ax, ts_add(ctx,
		ts_at(ctx, E, 2, V(i), V(j)), ts_at(ctx, R, 2, V(i), V(j))));
	ts_axis *i2 = ts_axis_new(ctx, "i", 4), *j2 = ts_axis_new(ctx, "j", 6);
	ts_axis *ax2[2] = { i2, j2 };
	ts_tensor *Z = ts_compute(ctx, "Z", 2, ax2, ts_mul(ctx,
		ts_at(ctx, E, 2, V(i2), V(j2)), ts_add(ctx,
		ts_at(ctx, T, 2, V(j2), V(i2)), ts_at(ctx, T, 2, V(j2), V(i2)))));
	ts_tensor *outs[2] = { Y, Z };
	ts_dag *dag = ts_dag_new(ctx, 0, NULL, 2, outs);
	ts_dag_info *di = ts_analyze_dag(ctx, dag);

	assert_non_null(di);
	assert_false(info_of(di, E)->inlinable);
	assert_int_equal(info_of(di, E)->consumer_reads, 2 * 24);
	assert_true(info_of(di, R)->inlinable);
	assert_true(info_of(di, T)->inlinable);
	assert_false(info_of(di, Y)->inlinable);	/* an output */
}

static void test_facts_rfactor__when_spatial_extent_is_small(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 8, 100 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_axis *k = ts_reduce_axis(ctx, "k", 100);
	ts_tensor *S = ts_compute(ctx, "S", 1, &i, ts_sum(ctx, 1, &k,
		ts_at(ctx, X, 2, V(i), V(k))));
	ts_tensor *R = over2(ctx, "R", 8, 100, relu_of, X);
	ts_stage_info *si = ts_analyze_stage(ctx, S->stage);

	assert_false(ts_stage_info_needs_rfactor(si, 4));
	assert_false(ts_stage_info_needs_rfactor(si, 8));
	assert_true(ts_stage_info_needs_rfactor(si, 16));
	/* No reduction, nothing to factor. */
	assert_false(ts_stage_info_needs_rfactor(
		ts_analyze_stage(ctx, R->stage), 1000));
}

static void test_facts_traffic__per_loop_level(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *C = matmul(ctx, 8, 12, 16);
	ts_traffic *tr = ts_traffic_new(ctx, C->stage);
	int axis[3] = { 0, 1, 2 };
	int64_t trip[3] = { 8, 16, 12 }, bytes[3];
	double reuse[3];
	/* i split 2 x 4 and j 4 x 4: i.o, j.o, k, i.i, j.i. */
	int taxis[5] = { 0, 1, 2, 0, 1 };
	int64_t ttrip[5] = { 2, 4, 12, 4, 4 }, tbytes[5];

	assert_non_null(tr);
	ts_traffic_eval(tr, 3, axis, trip, bytes, reuse);
	/* One i: A row (12), all of B (192), a C row (16). */
	assert_int_equal(bytes[0], (12 + 192 + 16) * 4);
	/* One j: A row, a B column, one C element. */
	assert_int_equal(bytes[1], (12 + 12 + 1) * 4);
	/* One k: one element of each. */
	assert_int_equal(bytes[2], 3 * 4);
	/* The j loop touches 16 x 100 bytes for 880 distinct. */
	assert_true(reuse[1] > 1.818 && reuse[1] < 1.819);
	/* The k loop re-touches nothing: 12 x 12 bytes for 12 + 12 + 1. */
	assert_true(reuse[2] > 1.43 && reuse[2] < 1.45);
	ts_traffic_eval(tr, 5, taxis, ttrip, tbytes, NULL);
	/* One i.o: 4 rows of A, all of B, 4 rows of C. */
	assert_int_equal(tbytes[0], (48 + 192 + 64) * 4);
	/* One j.o: 4 rows of A, 12 x 4 of B, 4 x 4 of C. */
	assert_int_equal(tbytes[1], (48 + 48 + 16) * 4);
	/* One k: a 4-column of A, a 4-row of B, the 4 x 4 tile of C. */
	assert_int_equal(tbytes[2], (4 + 4 + 16) * 4);
}

static void test_facts_traffic__rate(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *C = matmul(ctx, 1024, 1024, 1024);
	ts_traffic *tr = ts_traffic_new(ctx, C->stage);
	int axis[6] = { 0, 1, 2, 0, 1, 2 };
	int64_t trip[6], bytes[6], sum = 0;
	double reuse[6];
	struct timespec t0, t1;
	int n = 200000;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < n; r++) {
		for (int l = 0; l < 3; l++) {
			trip[l + 3] = 1 << (r + l) % 7;
			trip[l] = 1024 / trip[l + 3];
		}
		ts_traffic_eval(tr, 6, axis, trip, bytes, reuse);
		sum += bytes[5];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(sum, (int64_t)n * 3 * 4);
	print_message("traffic model: %.0f loop nests of 6 levels per second\n",
		n / ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)));
}

static void test_facts_region_for_consumer__of_a_padded_conv(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 6, 6 }, sw[2] = { 3, 3 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_tensor *W = ts_placeholder(ctx, "W", TS_F32, 2, sw);
	ts_axis *ph = ts_axis_new(ctx, "ph", 8), *pw = ts_axis_new(ctx, "pw", 8);
	ts_axis *pax[2] = { ph, pw };
	ts_expr *hh = ts_sub(ctx, V(ph), I(1)), *ww = ts_sub(ctx, V(pw), I(1));
	ts_expr *in = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_AND, ts_binary(ctx, TS_OP_GE, hh, I(0)),
			ts_binary(ctx, TS_OP_LT, hh, I(6))),
		ts_binary(ctx, TS_OP_AND, ts_binary(ctx, TS_OP_GE, ww, I(0)),
			ts_binary(ctx, TS_OP_LT, ww, I(6))));
	ts_tensor *P = ts_compute(ctx, "P", 2, pax, ts_select(ctx, in,
		ts_at(ctx, X, 2, hh, ww), ts_float(ctx, 0)));
	ts_axis *h = ts_axis_new(ctx, "h", 3), *w = ts_axis_new(ctx, "w", 3);
	ts_axis *r = ts_reduce_axis(ctx, "r", 3), *s = ts_reduce_axis(ctx, "s", 3);
	ts_axis *ax[2] = { h, w }, *rx[2] = { r, s };
	/* Stride 2: Y[h, w] = sum P[2h + r, 2w + s] * W[r, s]. */
	ts_tensor *Y = ts_compute(ctx, "Y", 2, ax, ts_sum(ctx, 2, rx,
		ts_mul(ctx, ts_at(ctx, P, 2,
			ts_add(ctx, ts_mul(ctx, V(h), I(2)), V(r)),
			ts_add(ctx, ts_mul(ctx, V(w), I(2)), V(s))),
		ts_at(ctx, W, 2, V(r), V(s)))));
	int64_t origin[4] = { 1, 0, 0, 0 }, size[4] = { 2, 1, 3, 3 };
	int64_t lo[2], ext[2];

	assert_int_equal(ts_region_for_consumer(ctx, Y->stage, P->stage,
		origin, size, lo, ext), TS_OK);
	assert_int_equal(lo[0], 2);
	assert_int_equal(ext[0], 5);	/* rows 2 .. 6 */
	assert_int_equal(lo[1], 0);
	assert_int_equal(ext[1], 3);
	assert_int_equal(ts_region_for_consumer(ctx, P->stage, Y->stage,
		origin, size, lo, ext), TS_ERROR);
	assert_error_contains(ctx, "stage 'P' does not read the output of "
		"stage 'Y'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_facts_matmul__counts_and_bytes),
		TS_TEST(test_facts_counts__by_kind),
		TS_TEST(test_facts_counts__math_functions),
		TS_TEST(test_facts_strides__and_contiguous_axis),
		TS_TEST(test_facts_strides__unknown_for_data_dependent),
		TS_TEST(test_facts_consumers__fusable_and_not),
		TS_TEST(test_facts_inlinable__counts_recomputation),
		TS_TEST(test_facts_rfactor__when_spatial_extent_is_small),
		TS_TEST(test_facts_traffic__per_loop_level),
		TS_TEST(test_facts_traffic__rate),
		TS_TEST(test_facts_region_for_consumer__of_a_padded_conv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
