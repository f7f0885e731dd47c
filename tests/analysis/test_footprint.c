/* Footprints: the closed forms derived with isl are compared with a brute
 * force enumeration of the tile (apply each index expression to every
 * point, take min and max), on random small tiles. */
#include <config.h>

#include "tests/common.h"

#include <tessel/analysis.h>

/* Return the integer index "e" at the point "x" of stage "s". */
static int64_t idx_eval(const ts_stage *s, const ts_expr *e, const int64_t *x)
{
	int64_t a, b, q;

	switch (e->kind) {
	case TS_EXPR_INT:
		return e->ival;
	case TS_EXPR_VAR:
		for (int i = 0; i < s->ndim; i++)
			if (s->axes[i] == e->axis)
				return x[i];
		for (int i = 0; i < s->nraxes; i++)
			if (s->raxes[i] == e->axis)
				return x[s->ndim + i];
		fail_msg("unknown axis %s", e->axis->name);
		return 0;
	case TS_EXPR_CAST:
		return idx_eval(s, e->a, x);
	case TS_EXPR_UNARY:
		return -idx_eval(s, e->a, x);
	case TS_EXPR_BINARY:
		a = idx_eval(s, e->a, x);
		b = idx_eval(s, e->b, x);
		q = b ? a / b - ((a % b) != 0 && ((a < 0) != (b < 0))) : 0;
		switch (e->op) {
		case TS_OP_ADD: return a + b;
		case TS_OP_SUB: return a - b;
		case TS_OP_MUL: return a * b;
		case TS_OP_FLOORDIV: return q;
		case TS_OP_MOD: return a - b * q;
		case TS_OP_MIN: return a < b ? a : b;
		case TS_OP_MAX: return a > b ? a : b;
		default: break;
		}
		/* fall through */
	default:
		fail_msg("index expression not handled by the test");
		return 0;
	}
}

struct brute {
	const ts_stage *s;
	const ts_tensor *t;
	int64_t lo[TS_MAX_DIMS], hi[TS_MAX_DIMS];
	bool any;
};

/* Widen the box of "b" with every load of "b->t" in "e" at point "x". */
static void brute_expr(struct brute *b, const ts_expr *e, const int64_t *x)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD && e->tensor == b->t) {
		for (int d = 0; d < e->nargs; d++) {
			int64_t v = idx_eval(b->s, e->args[d], x);
			if (!b->any || v < b->lo[d])
				b->lo[d] = v;
			if (!b->any || v > b->hi[d])
				b->hi[d] = v;
		}
		b->any = true;
		return;
	}
	if (e->kind == TS_EXPR_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			brute_expr(b, e->args[d], x);
		return;
	}
	brute_expr(b, e->a, x);
	brute_expr(b, e->b, x);
	brute_expr(b, e->c, x);
}

/* Widen the box of "b" with the write at point "x". */
static void brute_write(struct brute *b, const int64_t *x)
{
	for (int d = 0; d < b->s->ndim; d++) {
		if (!b->any || x[d] < b->lo[d])
			b->lo[d] = x[d];
		if (!b->any || x[d] > b->hi[d])
			b->hi[d] = x[d];
	}
	b->any = true;
}

/* Enumerate the tile "origin", "size" of "b->s" and take the hull. */
static void brute_tile(struct brute *b, const int64_t *origin,
	const int64_t *size)
{
	int n = b->s->ndim + b->s->nraxes;
	int64_t x[TS_MAX_AXES], c[TS_MAX_AXES] = { 0 };

	b->any = false;
	for (;;) {
		int a;
		for (a = 0; a < n; a++)
			x[a] = origin[a] + c[a];
		if (b->t == b->s->out)
			brute_write(b, x);
		else
			brute_expr(b, b->s->body, x);
		for (a = n - 1; a >= 0; a--) {
			if (++c[a] < size[a])
				break;
			c[a] = 0;
		}
		if (a < 0)
			break;
	}
}

/* Check the footprint of "s" on "t" against enumeration on "ntiles"
 * random tiles; dimensions in "whole_mask" must be whole. */
static void check_fp(ts_ctx *ctx, const ts_stage *s, const ts_tensor *t,
	unsigned whole_mask)
{
	ts_footprint *fp = ts_stage_footprint(ctx, s, t);
	int n = s->ndim + s->nraxes;
	struct brute b = { s, t };

	assert_non_null(fp);
	assert_int_equal(fp->ndim, t->ndim);
	bool blocked = false;

	for (int d = 0; d < t->ndim; d++) {
		assert_int_equal(fp->dim[d].whole, !!(whole_mask & (1u << d)));
		blocked |= fp->dim[d].block > 0;
	}
	for (int k = 0; k < 40; k++) {
		int64_t origin[TS_MAX_AXES], size[TS_MAX_AXES];
		int64_t lo[TS_MAX_DIMS], ext[TS_MAX_DIMS], vol = 1;
		for (int a = 0; a < n; a++) {
			const ts_axis *ax = a < s->ndim ? s->axes[a]
				: s->raxes[a - s->ndim];
			size[a] = 1 + (int64_t)ts_ctx_random_below(ctx,
				ax->extent < 4 ? ax->extent : 4);
			origin[a] = (int64_t)ts_ctx_random_below(ctx,
				ax->extent - size[a] + 1);
		}
		ts_footprint_eval(fp, origin, size, lo, ext);
		brute_tile(&b, origin, size);
		assert_true(b.any);
		for (int d = 0; d < t->ndim; d++) {
			if (fp->dim[d].whole) {
				assert_true(lo[d] <= b.lo[d]);
				assert_true(b.hi[d] < lo[d] + ext[d]);
			} else {
				assert_int_equal(lo[d], b.lo[d]);
				assert_int_equal(ext[d], b.hi[d] - b.lo[d] + 1);
			}
			vol *= ext[d];
		}
		/* The volume of a blocked box holds for aligned tiles. */
		if (!blocked)
			assert_int_equal(ts_footprint_volume(fp, size), vol);
	}
}

static ts_expr *V(ts_ctx *ctx, ts_axis *a)
{
	return ts_var(ctx, a);
}

static ts_expr *I(ts_ctx *ctx, int64_t v)
{
	return ts_int(ctx, v);
}

static void test_footprint_matmul__matches_enumeration(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sa[2] = { 6, 5 }, sb[2] = { 5, 7 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 2, sb);
	ts_axis *i = ts_axis_new(ctx, "i", 6), *j = ts_axis_new(ctx, "j", 7);
	ts_axis *k = ts_reduce_axis(ctx, "k", 5);
	ts_axis *ax[2] = { i, j };
	ts_tensor *C = ts_compute(ctx, "C", 2, ax, ts_sum(ctx, 1, &k,
		ts_mul(ctx, ts_at(ctx, A, 2, V(ctx, i), V(ctx, k)),
			ts_at(ctx, B, 2, V(ctx, k), V(ctx, j)))));
	ts_footprint *fp;

	assert_non_null(C);
	check_fp(ctx, C->stage, A, 0);
	check_fp(ctx, C->stage, B, 0);
	check_fp(ctx, C->stage, C, 0);
	fp = ts_stage_footprint(ctx, C->stage, A);
	/* A[i, k]: dimension 1 follows axis k (index 2), not j. */
	assert_int_equal(fp->dim[1].origin_coef[2], 1);
	assert_int_equal(fp->dim[1].size_coef[2], 1);
	assert_int_equal(fp->dim[1].size_coef[1], 0);
	fp = ts_stage_footprint(ctx, C->stage, C);
	assert_int_equal(fp->dim[0].size_coef[2], 0);
	/* Computed once per stage and tensor, then shared. */
	assert_ptr_equal(ts_stage_footprint(ctx, C->stage, C), fp);
	assert_ptr_not_equal(ts_stage_footprint(ctx, C->stage, A), fp);
	assert_ptr_equal(ts_stage_footprint(ctx, C->stage, A),
		ts_stage_footprint(ctx, C->stage, A));
}

/* Return "a" followed by "b" in "buf". */
static const char *cat(char *buf, const char *a, const char *b)
{
	snprintf(buf, 32, "%s%s", a, b);
	return buf;
}

/* Out[n, f, h, w] = sum_{c, r, s} X[n, c, h*S + r*D, w*S + s*D] * W[f, c, r, s] */
static ts_tensor *conv(ts_ctx *ctx, const char *name, int64_t S, int64_t D)
{
	int64_t H = 4, R = 3, HI = (H - 1) * S + (R - 1) * D + 1;
	int64_t sx[4] = { 2, 3, HI, HI }, sw[4] = { 4, 3, R, R };
	char bx[32], bw[32];
	ts_tensor *X = ts_placeholder(ctx, cat(bx, "X_", name), TS_F32, 4, sx);
	ts_tensor *W = ts_placeholder(ctx, cat(bw, "W_", name), TS_F32, 4, sw);
	ts_axis *n = ts_axis_new(ctx, "n", 2), *f = ts_axis_new(ctx, "f", 4);
	ts_axis *h = ts_axis_new(ctx, "h", H), *w = ts_axis_new(ctx, "w", H);
	ts_axis *c = ts_reduce_axis(ctx, "c", 3);
	ts_axis *r = ts_reduce_axis(ctx, "r", R), *s = ts_reduce_axis(ctx, "s", R);
	ts_axis *ax[4] = { n, f, h, w }, *rx[3] = { c, r, s };
	ts_expr *hh = ts_add(ctx, ts_mul(ctx, V(ctx, h), I(ctx, S)),
		ts_mul(ctx, V(ctx, r), I(ctx, D)));
	ts_expr *ww = ts_add(ctx, ts_mul(ctx, V(ctx, w), I(ctx, S)),
		ts_mul(ctx, V(ctx, s), I(ctx, D)));
	ts_expr *x = ts_at(ctx, X, 4, V(ctx, n), V(ctx, c), hh, ww);
	ts_expr *k = ts_at(ctx, W, 4, V(ctx, f), V(ctx, c), V(ctx, r),
		V(ctx, s));

	return ts_compute(ctx, name, 4, ax, ts_sum(ctx, 3, rx,
		ts_mul(ctx, x, k)));
}

static void test_footprint_conv_strided_dilated__matches_enumeration(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *o1 = conv(ctx, "plain", 1, 1);
	ts_tensor *o2 = conv(ctx, "strided", 2, 1);
	ts_tensor *o3 = conv(ctx, "dilated", 1, 2);
	ts_tensor *o4 = conv(ctx, "both", 2, 3);
	ts_tensor *outs[4] = { o1, o2, o3, o4 };
	ts_footprint *fp;

	for (int i = 0; i < 4; i++) {
		assert_non_null(outs[i]);
		check_fp(ctx, outs[i]->stage, outs[i]->stage->inputs[0], 0);
		check_fp(ctx, outs[i]->stage, outs[i]->stage->inputs[1], 0);
		check_fp(ctx, outs[i]->stage, outs[i], 0);
	}
	/* Stride 2, dilation 3: rows h*2 + r*3 span 2(sh-1) + 3(sr-1) + 1. */
	fp = ts_stage_footprint(ctx, o4->stage, o4->stage->inputs[0]);
	assert_int_equal(fp->dim[2].size_coef[2], 2);
	assert_int_equal(fp->dim[2].size_coef[5], 3);
	assert_int_equal(fp->dim[2].origin_coef[2], 2);
}

static void test_footprint_transpose_and_reverse__matches_enumeration(
	void **state)
{
	ts_ctx *ctx = *state;
	int64_t sa[2] = { 5, 6 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_axis *i = ts_axis_new(ctx, "i", 6), *j = ts_axis_new(ctx, "j", 5);
	ts_axis *ax[2] = { i, j };
	ts_tensor *T = ts_compute(ctx, "T", 2, ax,
		ts_at(ctx, A, 2, V(ctx, j), V(ctx, i)));
	ts_tensor *R = ts_compute(ctx, "R", 2, ax, ts_at(ctx, A, 2,
		ts_sub(ctx, I(ctx, 4), V(ctx, j)),
		ts_sub(ctx, I(ctx, 5), V(ctx, i))));
	ts_footprint *fp;

	check_fp(ctx, T->stage, A, 0);
	check_fp(ctx, R->stage, A, 0);
	fp = ts_stage_footprint(ctx, R->stage, A);
	assert_int_equal(fp->dim[0].cst, 4);
	assert_int_equal(fp->dim[0].origin_coef[1], -1);
	assert_int_equal(fp->dim[0].size_shift[1], -1);
}

static void test_footprint_padding__is_unclamped(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 4, 4 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *h = ts_axis_new(ctx, "h", 6), *w = ts_axis_new(ctx, "w", 6);
	ts_axis *ax[2] = { h, w };
	ts_expr *hh = ts_sub(ctx, V(ctx, h), I(ctx, 1));
	ts_expr *ww = ts_sub(ctx, V(ctx, w), I(ctx, 1));
	ts_expr *in = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, hh, I(ctx, 0)),
			ts_binary(ctx, TS_OP_LT, hh, I(ctx, 4))),
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, ww, I(ctx, 0)),
			ts_binary(ctx, TS_OP_LT, ww, I(ctx, 4))));
	ts_tensor *P = ts_compute(ctx, "P", 2, ax, ts_select(ctx, in,
		ts_at(ctx, X, 2, hh, ww), ts_float(ctx, 0)));
	ts_footprint *fp;
	int64_t o[2] = { 0, 2 }, sz[2] = { 3, 2 }, lo[2], ext[2];

	assert_non_null(P);
	check_fp(ctx, P->stage, X, 0);
	fp = ts_stage_footprint(ctx, P->stage, X);
	ts_footprint_eval(fp, o, sz, lo, ext);
	assert_int_equal(lo[0], -1);
	assert_int_equal(ext[0], 3);
	assert_int_equal(lo[1], 1);
	assert_int_equal(ext[1], 2);
}

static void test_footprint_pooling_floordiv__matches_enumeration(
	void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[2] = { 9, 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *h = ts_axis_new(ctx, "h", 4), *w = ts_axis_new(ctx, "w", 8);
	ts_axis *r = ts_reduce_axis(ctx, "r", 3);
	ts_axis *ax[2] = { h, w };
	/* Max pooling 3 rows, stride 2, and an upsampled column w // 2 * 2. */
	ts_tensor *M = ts_compute(ctx, "M", 2, ax, ts_rmax(ctx, 1, &r,
		ts_at(ctx, X, 2, ts_add(ctx, ts_mul(ctx, V(ctx, h), I(ctx, 2)),
			V(ctx, r)), V(ctx, w))));
	ts_tensor *U = ts_compute(ctx, "U", 2, ax, ts_at(ctx, X, 2, V(ctx, h),
		ts_floordiv(ctx, V(ctx, w), I(ctx, 2))));

	check_fp(ctx, M->stage, X, 0);
	/* w // 2 has no affine offset in the origin, but it is a block of
	 * one axis: a closed form per tile. */
	check_fp(ctx, U->stage, X, 0);
	assert_int_equal(ts_stage_footprint(ctx, U->stage, X)->dim[1].block,
		2);
}

static void test_footprint_blocked_layout__matches_enumeration(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sw[3] = { 3, 5, 4 }, aligned[2] = { 4, 2 };
	ts_tensor *W = ts_placeholder(ctx, "W", TS_F32, 3, sw);
	ts_axis *k = ts_axis_new(ctx, "k", 12), *c = ts_axis_new(ctx, "c", 5);
	ts_axis *ax[2] = { k, c };
	/* W blocked by 4 along k: W[k // 4, c, k % 4]. */
	ts_tensor *Y = ts_compute(ctx, "Y", 2, ax, ts_at(ctx, W, 3,
		ts_floordiv(ctx, V(ctx, k), I(ctx, 4)), V(ctx, c),
		ts_mod(ctx, V(ctx, k), I(ctx, 4))));
	ts_footprint *fp;

	check_fp(ctx, Y->stage, W, 0);
	fp = ts_stage_footprint(ctx, Y->stage, W);
	assert_true(fp->dim[2].block_mod);
	/* A tile of 4 k by 2 c aligned to the block: one block of 4. */
	assert_int_equal(ts_footprint_volume(fp, aligned), 8);
}

static void test_footprint_two_offsets__is_whole(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 9 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i, ts_add(ctx,
		ts_at(ctx, X, 1, V(ctx, i)),
		ts_at(ctx, X, 1, ts_add(ctx, V(ctx, i), I(ctx, 1)))));

	/* A hull of two shifted accesses has a constant term the closed
	 * form cannot hold: it is over-approximated by the whole dimension. */
	check_fp(ctx, Y->stage, X, 1);
}

static void test_footprint_gather__is_whole_on_data_dependent_dim(
	void **state)
{
	ts_ctx *ctx = *state;
	int64_t st[2] = { 10, 3 }, si[1] = { 4 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 2, st);
	ts_tensor *Ix = ts_placeholder(ctx, "Ix", TS_I32, 1, si);
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 3);
	ts_axis *ax[2] = { i, j };
	ts_tensor *G = ts_compute(ctx, "G", 2, ax, ts_at(ctx, T, 2,
		ts_at(ctx, Ix, 1, V(ctx, i)), V(ctx, j)));
	ts_footprint *fp = ts_stage_footprint(ctx, G->stage, T);
	int64_t o[2] = { 1, 1 }, sz[2] = { 2, 2 }, lo[2], ext[2];

	assert_non_null(fp);
	assert_true(fp->dim[0].whole);
	assert_false(fp->dim[1].whole);
	ts_footprint_eval(fp, o, sz, lo, ext);
	assert_int_equal(lo[0], 0);
	assert_int_equal(ext[0], 10);
	assert_int_equal(lo[1], 1);
	assert_int_equal(ext[1], 2);
	check_fp(ctx, G->stage, Ix, 0);
}

static void test_footprint_unrelated_tensor__is_error(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 4 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_tensor *Z = ts_placeholder(ctx, "Z", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i,
		ts_at(ctx, X, 1, V(ctx, i)));

	assert_null(ts_stage_footprint(ctx, Y->stage, Z));
	assert_error_contains(ctx, "stage 'Y' does not access tensor 'Z'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_footprint_matmul__matches_enumeration),
		TS_TEST(test_footprint_conv_strided_dilated__matches_enumeration),
		TS_TEST(test_footprint_transpose_and_reverse__matches_enumeration),
		TS_TEST(test_footprint_padding__is_unclamped),
		TS_TEST(test_footprint_pooling_floordiv__matches_enumeration),
		TS_TEST(test_footprint_blocked_layout__matches_enumeration),
		TS_TEST(test_footprint_two_offsets__is_whole),
		TS_TEST(test_footprint_gather__is_whole_on_data_dependent_dim),
		TS_TEST(test_footprint_unrelated_tensor__is_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
