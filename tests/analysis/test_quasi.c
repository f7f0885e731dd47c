/* Quasi-affine indices (floor divisions and remainders by constants):
 * a grouped convolution, nearest upsampling, pixel shuffle and a
 * transposed convolution written as a gather (tests/analysis/quasi/).
 * Every fact the analysis gives — footprints, their volumes, reuse,
 * injectivity, distinct elements, strides, bounds — is compared with a
 * brute-force enumeration of the instances, and the static kernels with
 * the reference interpreter. */
#include <config.h>

#include "tests/common.h"

#include <stdio.h>

#include <tessel/tessel.h>

static const char *const files[] = {
	"grouped_conv", "deconv_s2", "upsample", "pixel_shuffle",
};

/* Parse tests/analysis/quasi/"name".tsl. */
static ts_dag *load(ts_ctx *ctx, const char *name)
{
	char path[4096];
	ts_dag *dag;

	snprintf(path, sizeof(path), "%s/tests/analysis/quasi/%s.tsl",
		ts_test_srcdir(), name);
	dag = ts_parse_file(ctx, path);
	if (!dag)
		fail_msg("%s: %s", path, ts_ctx_error(ctx));
	return dag;
}

/* The value of integer or bool expression "e" at point "x" of "s". */
static int64_t eval(const ts_stage *s, const ts_expr *e, const int64_t *x)
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
		return eval(s, e->a, x);
	case TS_EXPR_UNARY:
		a = eval(s, e->a, x);
		return e->op == TS_OP_NOT ? !a : -a;
	case TS_EXPR_BINARY:
		a = eval(s, e->a, x);
		if (e->op == TS_OP_AND && !a)
			return 0;
		if (e->op == TS_OP_OR && a)
			return 1;
		b = eval(s, e->b, x);
		q = b ? a / b - ((a % b) != 0 && ((a < 0) != (b < 0))) : 0;
		switch (e->op) {
		case TS_OP_ADD: return a + b;
		case TS_OP_SUB: return a - b;
		case TS_OP_MUL: return a * b;
		case TS_OP_FLOORDIV: return q;
		case TS_OP_MOD: return a - b * q;
		case TS_OP_LT: return a < b;
		case TS_OP_LE: return a <= b;
		case TS_OP_GT: return a > b;
		case TS_OP_GE: return a >= b;
		case TS_OP_EQ: return a == b;
		case TS_OP_NE: return a != b;
		case TS_OP_AND: case TS_OP_OR: return b != 0;
		default: break;
		}
		/* fall through */
	default:
		fail_msg("expression not handled by the test");
		return 0;
	}
}

/* The element of "ld" at "x", flattened in C order. */
static int64_t flat(const ts_stage *s, const ts_expr *ld, const int64_t *x)
{
	int64_t f = 0;

	for (int d = 0; d < ld->nargs; d++)
		f = f * ld->tensor->shape[d] + eval(s, ld->args[d], x);
	return f;
}

/* Whether the load "ld" runs at "x" of "s": every select around it
 * chooses its side ("e" is the subtree searched). */
static int runs(const ts_stage *s, const ts_expr *e, const ts_expr *ld,
	const int64_t *x)
{
	int r;

	if (!e)
		return -1;
	if (e == ld)
		return 1;
	if (e->kind == TS_EXPR_SELECT) {
		bool c = eval(s, e->a, x) != 0;
		if ((r = runs(s, e->b, ld, x)) >= 0)
			return c ? r : 0;
		if ((r = runs(s, e->c, ld, x)) >= 0)
			return c ? 0 : r;
		return -1;
	}
	if (e->kind == TS_EXPR_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			if ((r = runs(s, e->args[d], ld, x)) >= 0)
				return r;
		return -1;
	}
	if ((r = runs(s, e->a, ld, x)) >= 0 || (r = runs(s, e->b, ld, x)) >= 0)
		return r;
	return runs(s, e->c, ld, x);
}

/* The extent of axis "a" of "s". */
static int64_t extent(const ts_stage *s, int a)
{
	return a < s->ndim ? s->axes[a]->extent : s->raxes[a - s->ndim]->extent;
}

/* Step "x" to the next point of the box "origin", "size" over "n" axes;
 * false after the last. */
static bool next(int n, const int64_t *origin, const int64_t *size,
	int64_t *x)
{
	for (int a = n - 1; a >= 0; a--) {
		if (++x[a] < origin[a] + size[a])
			return true;
		x[a] = origin[a];
	}
	return false;
}

/* Widen "lo", "hi" with every load of "t" in "e" at "x" (unguarded: a
 * footprint is the hull as written). */
static void hull(const ts_stage *s, const ts_expr *e, const ts_tensor *t,
	const int64_t *x, int64_t *lo, int64_t *hi)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t) {
		for (int d = 0; d < e->nargs; d++) {
			int64_t v = eval(s, e->args[d], x);
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
		return;
	}
	if (e->kind == TS_EXPR_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			hull(s, e->args[d], t, x, lo, hi);
		return;
	}
	hull(s, e->a, t, x, lo, hi);
	hull(s, e->b, t, x, lo, hi);
	hull(s, e->c, t, x, lo, hi);
}

/* Check the footprint of "s" on input "t" against enumeration: exact
 * (no whole dimension) on tiles of random sizes and origins, some
 * crossing a divisor, and its volume no smaller than the box of a tile
 * at the origin (it is the most a tile at a multiple of its sizes
 * touches). */
static void check_footprint(ts_ctx *ctx, const ts_stage *s,
	const ts_tensor *t)
{
	ts_footprint *fp = ts_stage_footprint(ctx, s, t);
	int n = s->ndim + s->nraxes;

	assert_non_null(fp);
	for (int d = 0; d < t->ndim; d++)
		if (fp->dim[d].whole)
			fail_msg("%s on %s: dimension %d is whole", s->name,
				t->name, d);
	for (int k = 0; k < 60; k++) {
		int64_t o[TS_MAX_AXES], sz[TS_MAX_AXES], x[TS_MAX_AXES];
		int64_t lo[TS_MAX_DIMS], ext[TS_MAX_DIMS];
		int64_t blo[TS_MAX_DIMS], bhi[TS_MAX_DIMS], vol = 1;
		int big = (int)ts_ctx_random_below(ctx, (uint64_t)n);
		for (int a = 0; a < n; a++) {
			int64_t e = extent(s, a), m = a == big ? 20 : 3;
			sz[a] = 1 + (int64_t)ts_ctx_random_below(ctx,
				(uint64_t)(e < m ? e : m));
			o[a] = k % 3 == 0 ? 0 : (int64_t)ts_ctx_random_below(
				ctx, (uint64_t)(e - sz[a] + 1));
			x[a] = o[a];
		}
		for (int d = 0; d < t->ndim; d++) {
			blo[d] = INT64_MAX;
			bhi[d] = INT64_MIN;
		}
		do
			hull(s, s->body, t, x, blo, bhi);
		while (next(n, o, sz, x));
		ts_footprint_eval(fp, o, sz, lo, ext);
		for (int d = 0; d < t->ndim; d++) {
			if (lo[d] != blo[d] || ext[d] != bhi[d] - blo[d] + 1)
				fail_msg("%s on %s, dim %d, tile %d: [%lld, +%lld)"
					" against [%lld, %lld]", s->name,
					t->name, d, k, (long long)lo[d],
					(long long)ext[d], (long long)blo[d],
					(long long)bhi[d]);
			vol *= ext[d];
		}
		if (k % 3 == 0)
			assert_true(ts_footprint_volume(fp, sz) >= vol);
	}
}

/* Whether some two instances of "ld" in "s" that run and differ only
 * along spatial axis "a" read the same element ("elem": the element at
 * every instance, -1 where it does not run). */
static bool brute_reuse(const ts_stage *s, const int64_t *elem, int a)
{
	int n = s->ndim + s->nraxes;
	int64_t inner = 1, total = 1, ea = extent(s, a);

	for (int b = a + 1; b < n; b++)
		inner *= extent(s, b);
	for (int b = 0; b < n; b++)
		total *= extent(s, b);
	for (int64_t i = 0; i < total; i++) {
		if ((i / inner) % ea != 0)
			continue;	/* one line per point with x[a] = 0 */
		for (int64_t p = 0; p < ea; p++)
			for (int64_t q = p + 1; q < ea; q++)
				if (elem[i + p * inner] >= 0 &&
				    elem[i + p * inner] == elem[i + q * inner])
					return true;
	}
	return false;
}

/* Check reuse, injectivity, distinct elements and strides of every load
 * of "s" (analysed as "si") against enumeration of all instances. */
static void check_access(const ts_stage *s, const ts_stage_info *si)
{
	int n = s->ndim + s->nraxes;
	int64_t total = 1, o[TS_MAX_AXES] = { 0 }, sz[TS_MAX_AXES];
	int64_t x[TS_MAX_AXES];

	for (int a = 0; a < n; a++)
		total *= sz[a] = extent(s, a);
	for (int k = 0; k < si->naccesses; k++) {
		const ts_access_info *ai = &si->accesses[k];
		int64_t *elem, numel = 1, i = 0, distinct = 0, ran = 0;
		unsigned char *seen;
		if (ai->write)
			continue;
		for (int d = 0; d < ai->tensor->ndim; d++)
			numel *= ai->tensor->shape[d];
		elem = malloc(sizeof(int64_t) * (size_t)total);
		seen = malloc((size_t)numel);
		memset(seen, 0, (size_t)numel);
		memcpy(x, o, sizeof(x));
		do {
			elem[i] = runs(s, s->body, ai->load, x) == 1 ?
				flat(s, ai->load, x) : -1;
			if (elem[i] >= 0) {
				ran++;
				if (elem[i] >= numel)
					fail_msg("%s out of bounds", ai->text);
				distinct += !seen[elem[i]];
				seen[elem[i]] = 1;
			}
			i++;
		} while (next(n, o, sz, x));
		assert_true(ai->distinct_exact);
		assert_int_equal(ai->distinct, distinct);
		assert_int_equal(ai->injective, distinct == ran);
		for (int a = 0; a < s->ndim; a++)
			if (ai->reuse[a] != brute_reuse(s, elem, a))
				fail_msg("%s: reuse along %s", ai->text,
					s->axes[a]->name);
		/* A known stride moves every instance by that much (within
		 * its block, if any). */
		for (int a = 0; a < n; a++) {
			int64_t st = ai->stride[a], b = ai->block[a];
			if (st == TS_STRIDE_UNKNOWN || sz[a] < 2)
				continue;
			memcpy(x, o, sizeof(x));
			do {
				int64_t f = flat(s, ai->load, x), g;
				if (x[a] == sz[a] - 1 || (b && x[a] % b == b - 1))
					continue;
				x[a]++;
				g = flat(s, ai->load, x);
				x[a]--;
				if (g - f != st)
					fail_msg("%s: stride along axis %d", ai->text,
						a);
			} while (next(n, o, sz, x));
		}
		free(elem);
		free(seen);
	}
}

static void test_quasi_footprints__match_enumeration(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		ts_dag *dag = load(ctx, files[f]);
		for (int i = 0; i < dag->nstages; i++) {
			const ts_stage *s = dag->stages[i];
			for (int k = 0; k < s->ninputs; k++)
				check_footprint(ctx, s, s->inputs[k]);
		}
	}
}

/* Smaller twins of the two convolutions, with the same index
 * structure, for enumerating every instance. */
static const char *const small[] = {
	"input X: f32[1, 8, 6, 6]\n"
	"input W: f32[8, 4, 3, 3]\n"
	"P[n: 1, c: 8, h: 8, w: 8] = select(h >= 1 && h < 7 && w >= 1 && "
	"w < 7, X[n, c, h - 1, w - 1], 0.0)\n"
	"output Y[n: 1, k: 8, h: 6, w: 6] = sum(ci: 4, r: 3, s: 3) "
	"P[n, (k // 4) * 4 + ci, h + r, w + s] * W[k, ci, r, s]\n",
	"input X: f32[1, 3, 5, 5]\n"
	"input W: f32[3, 2, 3, 3]\n"
	"output Y[n: 1, k: 2, h: 9, w: 9] = sum(c: 3, r: 3, s: 3) "
	"select((h + 1 - r) % 2 == 0 && (w + 1 - s) % 2 == 0 && "
	"h + 1 - r >= 0 && h + 1 - r < 10 && w + 1 - s >= 0 && "
	"w + 1 - s < 10, X[n, c, (h + 1 - r) // 2, (w + 1 - s) // 2] * "
	"W[c, k, r, s], 0.0)\n",
};

static void test_quasi_accesses__match_enumeration(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t f = 0; f < 4; f++) {
		ts_dag *dag = f < 2 ? ts_parse_string(ctx, "small.tsl",
			small[f]) : load(ctx, files[f]);
		const ts_stage *s;
		assert_non_null(dag);
		s = dag->stages[dag->nstages - 1];
		ts_stage_info *si = ts_analyze_stage(ctx, s);
		assert_non_null(si);
		check_access(s, si);
	}
}

static void test_quasi_grouped_conv__strides_classes_and_volume(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = load(ctx, "grouped_conv");
	ts_dag_info *di = ts_analyze_dag(ctx, dag);
	const ts_stage_info *y = di->stages[1];
	const ts_access_info *p = &y->accesses[0];
	/* A tile of 16 output channels, all 16 input channels of their
	 * group, 4 x 8 pixels and the 3 x 3 window. */
	int64_t size[7] = { 1, 16, 4, 8, 16, 3, 3 };
	ts_footprint *fp = ts_stage_footprint(ctx, y->stage,
		ts_dag_find_tensor(dag, "P"));

	assert_int_equal(y->klass, TS_CLASS_COMPLEX_REDUCTION);
	assert_int_equal(di->stages[0]->klass, TS_CLASS_LOCATION_TUNABLE);
	/* Along k the input does not move within a group of 16; the
	 * other axes keep their affine strides. */
	assert_int_equal(p->stride[1], 0);
	assert_int_equal(p->block[1], 16);
	assert_int_equal(p->stride[3], 1);
	assert_int_equal(p->stride[4], 900);
	assert_true(p->reuse[1]);
	/* One group's 16 channels, not the whole 64; a tile of 24 output
	 * channels at a multiple of 24 spans two groups. */
	assert_int_equal(ts_footprint_volume(fp, size), 16 * 6 * 10);
	size[1] = 24;
	assert_int_equal(ts_footprint_volume(fp, size), 32 * 6 * 10);
}

static void test_quasi_bounds__exact_both_ways(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *bad;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		ts_dag *dag = load(ctx, files[f]);
		for (int i = 0; i < dag->nstages; i++)
			assert_int_equal(ts_stage_check_bounds(ctx,
				dag->stages[i]), TS_OK);
	}
	/* (h + 1) // 2 reaches row 28 of 28 at h = 55. */
	bad = ts_parse_string(ctx, "bad.tsl",
		"input X: f32[1, 4, 28, 28]\n"
		"output Y[n: 1, c: 4, h: 56, w: 56] = "
		"X[n, c, (h + 1) // 2, w // 2]\n");
	assert_non_null(bad);
	assert_int_equal(ts_stage_check_bounds(ctx, bad->stages[0]), TS_ERROR);
	assert_error_contains(ctx, "X[n, c, (h + 1) // 2, w // 2]");
}

/* Compile the static schedule of "dag" and compare with the
 * interpreter. */
static void check_static(ts_ctx *ctx, const char *what, const ts_dag *dag)
{
	ts_target *tg = ts_target_host(ctx);
	ts_schedule *sch = tg ? ts_static_schedule(ctx, dag, tg) : NULL;
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_compile_options o = ts_compile_options_default();
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array *want[16];
	const char *bad;
	ts_module *m;
	double err = 0;

	if (!f)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
	o.threads = 2;
	m = ts_module_compile(ctx, f, &o);
	if (!m)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	bad = ts_test_run_compare(ctx, m, dag, in, want, &err);
	if (bad)
		fail_msg("%s: output %s differs by %g", what, bad, err);
	ts_module_free(m);
}

static void test_quasi_static_kernels__match_interpreter(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		check_static(ctx, files[f], load(ctx, files[f]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_quasi_footprints__match_enumeration),
		TS_TEST(test_quasi_accesses__match_enumeration),
		TS_TEST(test_quasi_grouped_conv__strides_classes_and_volume),
		TS_TEST(test_quasi_bounds__exact_both_ways),
		TS_TEST(test_quasi_static_kernels__match_interpreter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
