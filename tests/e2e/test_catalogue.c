/* The operator catalogue: every entry builds at both sizes, runs in the
 * reference interpreter at the tiny size, and computes what its
 * description says (checked against plain C loops). */
#include <config.h>

#include <ctype.h>
#include <math.h>

#include "tests/common.h"
#include "examples/catalogue.h"

/* One tiny run of a catalogue entry, in a context of its own (entries
 * declare tensors under fixed names). */
struct run {
	ts_ctx *ctx;
	ts_dag *dag;
	ts_array **in;		/* follows dag->inputs */
	ts_array *out[4];	/* follows dag->outputs */
};

/* Build entry "name" at the tiny size in a fresh context and evaluate it
 * into "r" on random inputs, integers drawn from ["lo", "hi") when
 * "lo" < "hi". */
static void run_range(const char *name, struct run *r, int64_t lo,
	int64_t hi)
{
	const struct ts_catalogue_entry *e = ts_catalogue_find(name);
	ts_ctx *ctx;

	assert_non_null(e);
	r->ctx = ctx = ts_ctx_alloc();
	r->dag = e->build(ctx, TS_SIZE_TINY);
	if (!r->dag)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
	assert_true(r->dag->noutputs <= 4);
	r->in = ts_dag_random_inputs(ctx, r->dag, 7);
	assert_non_null(r->in);
	for (int i = 0; lo < hi && i < r->dag->ninputs; i++)
		ts_array_fill_range(r->in[i], 11 + i, lo, hi);
	if (ts_eval(ctx, r->dag, r->in, r->out) != TS_OK)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
}

/* Run entry "name" into "r" on the default random inputs. */
static void run_tiny(const char *name, struct run *r)
{
	run_range(name, r, 0, 0);
}

/* Release the context of "r". */
static void run_done(struct run *r)
{
	ts_ctx_free(r->ctx);
	r->ctx = NULL;
}

/* Element ("i", "j", "k", "l") of the array "a" of rank at most 4
 * (trailing indices of a lower rank are ignored). */
static double at(const ts_array *a, int64_t i, int64_t j, int64_t k,
	int64_t l)
{
	int64_t idx[4] = { i, j, k, l }, flat = 0;

	for (int d = 0; d < a->ndim; d++)
		flat = flat * a->shape[d] + idx[d];
	return ts_array_get(a, flat);
}

/* Assert that "got" is within 1e-4 (relative to max(1, |want|)) of
 * "want", naming "what" and the flat index "i". */
static void check_close(const char *what, int64_t i, double got, double want)
{
	if (fabs(got - want) > 1e-4 * fmax(1.0, fabs(want)))
		fail_msg("%s: element %lld is %.9g, expected %.9g", what,
			(long long)i, got, want);
}

static void test_catalogue__has_32_unique_lowercase_names(void **state)
{
	(void)state;
	assert_true(ts_catalogue_count >= 32);
	for (int i = 0; i < ts_catalogue_count; i++) {
		const char *n = ts_catalogue[i].name;
		assert_non_null(ts_catalogue[i].description);
		assert_non_null(ts_catalogue[i].build);
		for (const char *p = n; *p; p++)
			if (!islower((unsigned char)*p) &&
			    !isdigit((unsigned char)*p) && *p != '_')
				fail_msg("name '%s' is not a lowercase "
					"identifier", n);
		assert_ptr_equal(ts_catalogue_find(n), &ts_catalogue[i]);
	}
	assert_null(ts_catalogue_find("no_such_operator"));
	assert_null(ts_catalogue_find(NULL));
}

static void test_catalogue_build__unknown_size_class__names_operator(
	void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_catalogue_find("conv2d_nchw_s2")->build(ctx, 7));
	assert_error_contains(ctx, "catalogue operator 'conv2d_nchw_s2': "
		"unknown size class 7");
}

static void test_catalogue_build__real_size__every_entry_builds(
	void **state)
{
	(void)state;
	for (int i = 0; i < ts_catalogue_count; i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_catalogue[i].build(ctx, TS_SIZE_REAL);
		if (!dag)
			fail_msg("%s: %s", ts_catalogue[i].name,
				ts_ctx_error(ctx));
		assert_int_equal(dag->noutputs, 1);
		ts_ctx_free(ctx);
	}
}

static void test_catalogue_build__real_size__resnet_stem_shape(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_catalogue_find("conv2d_7x7_s2")->build(ctx,
		TS_SIZE_REAL);
	const int64_t want[4] = { 1, 64, 112, 112 };

	assert_non_null(dag);
	assert_int_equal(dag->outputs[0]->ndim, 4);
	for (int d = 0; d < 4; d++)
		assert_int_equal(dag->outputs[0]->shape[d], want[d]);
}

static void test_catalogue_eval__tiny__every_entry_runs_finite(void **state)
{
	(void)state;
	for (int i = 0; i < ts_catalogue_count; i++) {
		struct run r;
		run_tiny(ts_catalogue[i].name, &r);
		for (int o = 0; o < r.dag->noutputs; o++) {
			assert_non_null(r.out[o]);
			for (int64_t k = 0; k < r.out[o]->size; k++)
				if (!isfinite(ts_array_get(r.out[o], k)))
					fail_msg("%s: output %d element %lld "
						"is not finite",
						ts_catalogue[i].name, o,
						(long long)k);
		}
		run_done(&r);
	}
}

/* A convolution of the catalogue and its parameters. */
struct conv_case {
	const char *name;
	int64_t r, stride, pad, dil, groups;	/* groups 0: depthwise */
};

/* Return output (n, k, y, x) of the NCHW convolution "c" of "x" by "w"
 * computed with plain loops; "w" has K * C/g * R * R elements in C
 * order whatever its rank. */
static double conv_ref(const struct conv_case *c, const ts_array *x,
	const ts_array *w, int64_t k, int64_t ko, int64_t y, int64_t v)
{
	int64_t cin = x->shape[1], h = x->shape[2], wd = x->shape[3];
	int64_t g = c->groups ? c->groups : cin, cg = cin / g, kg = ko / g;
	double s = 0;

	for (int64_t rc = 0; rc < cg; rc++)
		for (int64_t r = 0; r < c->r; r++)
			for (int64_t q = 0; q < c->r; q++) {
				int64_t hy = y * c->stride + r * c->dil - c->pad;
				int64_t wx = v * c->stride + q * c->dil - c->pad;
				int64_t ch = k / kg * cg + rc;
				if (hy < 0 || hy >= h || wx < 0 || wx >= wd)
					continue;
				s += at(x, 0, ch, hy, wx) * ts_array_get(w,
					((k * cg + rc) * c->r + r) * c->r + q);
			}
	return s;
}

static void test_catalogue_eval__convolutions__match_loops(void **state)
{
	static const struct conv_case cases[] = {
		{ "conv2d_nchw_s1", 3, 1, 1, 1, 1 },
		{ "conv2d_nchw_s2", 3, 2, 1, 1, 1 },
		{ "conv1x1", 1, 1, 0, 1, 1 },
		{ "conv2d_dilated", 3, 1, 2, 2, 1 },
		{ "conv2d_grouped", 3, 1, 1, 1, 4 },
		{ "conv2d_7x7_s2", 7, 2, 3, 1, 1 },
		{ "depthwise_conv", 3, 1, 1, 1, 0 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const ts_array *y;
		struct run r;
		run_tiny(cases[c].name, &r);
		y = r.out[0];
		for (int64_t k = 0; k < y->shape[1]; k++)
			for (int64_t i = 0; i < y->shape[2]; i++)
				for (int64_t j = 0; j < y->shape[3]; j++)
					check_close(cases[c].name,
						(k * y->shape[2] + i) *
						y->shape[3] + j,
						at(y, 0, k, i, j),
						conv_ref(&cases[c], r.in[0],
						r.in[1], k, y->shape[1], i, j));
		run_done(&r);
	}
}

static void test_catalogue_eval__conv2d_nhwc__matches_loops(void **state)
{
	(void)state;
	const ts_array *x, *w, *y;
	struct run r;

	run_tiny("conv2d_nhwc", &r);
	x = r.in[0];
	w = r.in[1];
	y = r.out[0];
	assert_int_equal(y->shape[1], (x->shape[1] - 1) / 2 + 1);
	for (int64_t i = 0; i < y->shape[1]; i++)
	for (int64_t j = 0; j < y->shape[2]; j++)
	for (int64_t k = 0; k < y->shape[3]; k++) {
		double s = 0;
		for (int64_t a = 0; a < 3; a++)
		for (int64_t b = 0; b < 3; b++)
		for (int64_t c = 0; c < x->shape[3]; c++) {
			int64_t h = i * 2 + a - 1, v = j * 2 + b - 1;
			if (h >= 0 && h < x->shape[1] && v >= 0 &&
			    v < x->shape[2])
				s += at(x, 0, h, v, c) * at(w, a, b, c, k);
		}
		check_close("conv2d_nhwc", k, at(y, 0, i, j, k), s);
	}
	run_done(&r);
}

static void test_catalogue_eval__pooling__matches_loops(void **state)
{
	(void)state;
	const ts_array *x, *y;
	struct run mp, ap;

	run_tiny("max_pool", &mp);
	x = mp.in[0];
	y = mp.out[0];
	for (int64_t c = 0; c < y->shape[1]; c++)
	for (int64_t i = 0; i < y->shape[2]; i++)
	for (int64_t j = 0; j < y->shape[3]; j++) {
		double m = -INFINITY;
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 2; b++)
				m = fmax(m, at(x, 0, c, 2 * i + a, 2 * j + b));
		check_close("max_pool", c, at(y, 0, c, i, j), m);
	}
	run_done(&mp);
	run_tiny("avg_pool", &ap);
	x = ap.in[0];
	y = ap.out[0];
	for (int64_t c = 0; c < y->shape[1]; c++)
	for (int64_t i = 0; i < y->shape[2]; i++)
	for (int64_t j = 0; j < y->shape[3]; j++) {
		double s = 0;
		for (int64_t a = i - 1; a <= i + 1; a++)
			for (int64_t b = j - 1; b <= j + 1; b++)
				if (a >= 0 && a < x->shape[2] && b >= 0 &&
				    b < x->shape[3])
					s += at(x, 0, c, a, b);
		check_close("avg_pool", c, at(y, 0, c, i, j), s / 9);
	}
	run_done(&ap);
}

static void test_catalogue_eval__matmuls__match_loops(void **state)
{
	(void)state;
	const ts_array *a, *b, *c;
	struct run mm, bm;

	run_tiny("matmul", &mm);
	a = mm.in[0];
	b = mm.in[1];
	c = mm.out[0];
	assert_int_not_equal(a->shape[0], b->shape[1]);
	for (int64_t i = 0; i < c->shape[0]; i++)
	for (int64_t j = 0; j < c->shape[1]; j++) {
		double s = 0;
		for (int64_t k = 0; k < a->shape[1]; k++)
			s += at(a, i, k, 0, 0) * at(b, k, j, 0, 0);
		check_close("matmul", i * c->shape[1] + j, at(c, i, j, 0, 0), s);
	}
	run_tiny("batch_matmul", &bm);
	a = bm.in[0];
	b = bm.in[1];
	c = bm.out[0];
	for (int64_t n = 0; n < c->shape[0]; n++)
	for (int64_t i = 0; i < c->shape[1]; i++)
	for (int64_t j = 0; j < c->shape[2]; j++) {
		double s = 0;
		for (int64_t k = 0; k < a->shape[2]; k++)
			s += at(a, n, i, k, 0) * at(b, n, j, k, 0);
		check_close("batch_matmul", j, at(c, n, i, j, 0), s);
	}
	run_done(&mm);
	run_done(&bm);
}

static void test_catalogue_eval__int8_requant__rounds_and_clamps(
	void **state)
{
	const ts_array *a, *b, *q;
	bool low = false, high = false;
	struct run r;

	(void)state;
	/* Full-range int8 inputs, so that requantisation clamps. */
	run_range("matmul_int8_requant", &r, -128, 128);
	a = r.in[0];
	b = r.in[1];
	q = r.out[0];
	assert_int_equal(q->dtype, TS_I8);
	for (int64_t i = 0; i < q->shape[0]; i++)
	for (int64_t j = 0; j < q->shape[1]; j++) {
		int64_t acc = 0;
		double v;
		for (int64_t k = 0; k < a->shape[1]; k++)
			acc += (int64_t)at(a, i, k, 0, 0) *
				(int64_t)at(b, k, j, 0, 0);
		v = fmin(fmax(rint((double)acc * 0.0625), -128), 127);
		low |= v == -128;
		high |= v == 127;
		if (at(q, i, j, 0, 0) != v)
			fail_msg("Q[%lld, %lld] is %g, expected %g from the "
				"accumulator %lld", (long long)i, (long long)j,
				at(q, i, j, 0, 0), v, (long long)acc);
	}
	assert_true(low && high);
	run_done(&r);
}

static void test_catalogue_eval__normalisations__match_loops(void **state)
{
	(void)state;
	const ts_array *x, *y;
	struct run sm, ln, rn;

	run_tiny("softmax", &sm);
	x = sm.in[0];
	y = sm.out[0];
	for (int64_t i = 0; i < x->shape[0]; i++) {
		double m = -INFINITY, s = 0;
		for (int64_t k = 0; k < x->shape[1]; k++)
			m = fmax(m, at(x, i, k, 0, 0));
		for (int64_t k = 0; k < x->shape[1]; k++)
			s += exp(at(x, i, k, 0, 0) - m);
		for (int64_t j = 0; j < x->shape[1]; j++)
			check_close("softmax", j, at(y, i, j, 0, 0),
				exp(at(x, i, j, 0, 0) - m) / s);
	}
	run_tiny("layer_norm", &ln);
	x = ln.in[0];
	y = ln.out[0];
	for (int64_t i = 0; i < x->shape[0]; i++) {
		double mu = 0, var = 0, d = (double)x->shape[1];
		for (int64_t k = 0; k < x->shape[1]; k++)
			mu += at(x, i, k, 0, 0) / d;
		for (int64_t k = 0; k < x->shape[1]; k++)
			var += pow(at(x, i, k, 0, 0) - mu, 2) / d;
		for (int64_t j = 0; j < x->shape[1]; j++)
			check_close("layer_norm", j, at(y, i, j, 0, 0),
				(at(x, i, j, 0, 0) - mu) / sqrt(var + 1e-5) *
				at(ln.in[1], j, 0, 0, 0) +
				at(ln.in[2], j, 0, 0, 0));
	}
	run_tiny("rms_norm", &rn);
	x = rn.in[0];
	y = rn.out[0];
	for (int64_t i = 0; i < x->shape[0]; i++) {
		double ms = 0, d = (double)x->shape[1];
		for (int64_t k = 0; k < x->shape[1]; k++)
			ms += pow(at(x, i, k, 0, 0), 2) / d;
		for (int64_t j = 0; j < x->shape[1]; j++)
			check_close("rms_norm", j, at(y, i, j, 0, 0),
				at(x, i, j, 0, 0) / sqrt(ms + 1e-6) *
				at(rn.in[1], j, 0, 0, 0));
	}
	run_done(&sm);
	run_done(&ln);
	run_done(&rn);
}

static void test_catalogue_eval__data_movement__matches_loops(void **state)
{
	(void)state;
	struct run cc, em, tr;
	const ts_array *a, *b, *y;
	int64_t ma;

	run_tiny("concat", &cc);
	a = cc.in[0];
	b = cc.in[1];
	y = cc.out[0];
	ma = a->shape[1];
	assert_int_equal(y->shape[1], ma + b->shape[1]);
	for (int64_t i = 0; i < y->shape[0]; i++)
		for (int64_t j = 0; j < y->shape[1]; j++)
			assert_true(at(y, i, j, 0, 0) == (j < ma ?
				at(a, i, j, 0, 0) : at(b, i, j - ma, 0, 0)));
	run_tiny("embedding", &em);
	for (int64_t i = 0; i < em.out[0]->shape[0]; i++) {
		int64_t row = (int64_t)at(em.in[0], i, 0, 0, 0);
		assert_in_range(row, 0, em.in[1]->shape[0] - 1);
		for (int64_t d = 0; d < em.out[0]->shape[1]; d++)
			assert_true(at(em.out[0], i, d, 0, 0) ==
				at(em.in[1], row, d, 0, 0));
	}
	run_tiny("transpose", &tr);
	for (int64_t i = 0; i < tr.in[0]->shape[0]; i++)
		for (int64_t j = 0; j < tr.in[0]->shape[1]; j++)
			assert_true(at(tr.out[0], j, i, 0, 0) ==
				at(tr.in[0], i, j, 0, 0));
	run_done(&cc);
	run_done(&em);
	run_done(&tr);
}

static void test_catalogue_eval__networks__match_loops(void **state)
{
	(void)state;
	double h1[8], h2[8];
	struct run mlp, ln;

	run_tiny("mlp", &mlp);
	assert_int_equal(mlp.in[1]->shape[0], 8);
	for (int o = 0; o < 8; o++) {
		h1[o] = at(mlp.in[2], o, 0, 0, 0);
		for (int k = 0; k < mlp.in[0]->shape[1]; k++)
			h1[o] += at(mlp.in[0], 0, k, 0, 0) *
				at(mlp.in[1], o, k, 0, 0);
		h1[o] = fmax(h1[o], 0);
	}
	for (int o = 0; o < 8; o++) {
		h2[o] = at(mlp.in[4], o, 0, 0, 0);
		for (int k = 0; k < 8; k++)
			h2[o] += h1[k] * at(mlp.in[3], o, k, 0, 0);
		h2[o] = fmax(h2[o], 0);
	}
	for (int o = 0; o < mlp.out[0]->shape[1]; o++) {
		double y = at(mlp.in[6], o, 0, 0, 0);
		for (int k = 0; k < 8; k++)
			y += h2[k] * at(mlp.in[5], o, k, 0, 0);
		check_close("mlp", o, at(mlp.out[0], 0, o, 0, 0), y);
	}
	run_tiny("lenet", &ln);
	{
		double s = 0;
		assert_int_equal(ln.out[0]->size, 10);
		for (int o = 0; o < 10; o++) {
			double p = at(ln.out[0], 0, o, 0, 0);
			assert_true(p > 0 && p < 1);
			s += p;
		}
		check_close("lenet probabilities", 0, s, 1.0);
	}
	run_done(&mlp);
	run_done(&ln);
}

static void test_catalogue_eval__reductions__match_loops(void **state)
{
	(void)state;
	struct run sa, l2, ge;
	double s = 0;

	run_tiny("sum_all", &sa);
	assert_int_equal(sa.out[0]->ndim, 0);
	for (int64_t k = 0; k < sa.in[0]->size; k++)
		s += ts_array_get(sa.in[0], k);
	check_close("sum_all", 0, ts_array_get(sa.out[0], 0), s);
	run_tiny("l2_norm", &l2);
	for (int64_t i = 0; i < l2.in[0]->shape[0]; i++) {
		s = 0;
		for (int64_t k = 0; k < l2.in[0]->shape[1]; k++)
			s += pow(at(l2.in[0], i, k, 0, 0), 2);
		check_close("l2_norm", i, at(l2.out[0], i, 0, 0, 0), sqrt(s));
	}
	run_tiny("gelu", &ge);
	for (int64_t k = 0; k < ge.in[0]->size; k++) {
		double x = ts_array_get(ge.in[0], k);
		check_close("gelu", k, ts_array_get(ge.out[0], k),
			0.5 * x * (1 + erf(x / sqrt(2))));
	}
	run_done(&sa);
	run_done(&l2);
	run_done(&ge);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_catalogue__has_32_unique_lowercase_names),
		TS_TEST(test_catalogue_build__unknown_size_class__names_operator),
		TS_TEST(test_catalogue_build__real_size__every_entry_builds),
		TS_TEST(test_catalogue_build__real_size__resnet_stem_shape),
		TS_TEST(test_catalogue_eval__tiny__every_entry_runs_finite),
		TS_TEST(test_catalogue_eval__convolutions__match_loops),
		TS_TEST(test_catalogue_eval__conv2d_nhwc__matches_loops),
		TS_TEST(test_catalogue_eval__pooling__matches_loops),
		TS_TEST(test_catalogue_eval__matmuls__match_loops),
		TS_TEST(test_catalogue_eval__int8_requant__rounds_and_clamps),
		TS_TEST(test_catalogue_eval__normalisations__match_loops),
		TS_TEST(test_catalogue_eval__data_movement__matches_loops),
		TS_TEST(test_catalogue_eval__networks__match_loops),
		TS_TEST(test_catalogue_eval__reductions__match_loops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
