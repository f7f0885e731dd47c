/* Classification: a table of operators with the expected class and reuse
 * axes of every stage.  Most come from the operator catalogue; the rest
 * (packing, a cast before an int8 matmul, a Gram matrix, an overlapping
 * pooling window) are declared here. */
#include <config.h>

#include "tests/common.h"

#include <tessel/analysis.h>

#include "examples/catalogue.h"

#define D TS_CLASS_DIRECT
#define SR TS_CLASS_SIMPLE_REDUCTION
#define CR TS_CLASS_COMPLEX_REDUCTION
#define LT TS_CLASS_LOCATION_TUNABLE

/* The expected facts of one stage: class and reuse axes, comma separated
 * in axis order ("" for none). */
struct want {
	const char *stage;
	ts_class klass;
	const char *reuse;
};

struct op_case {
	const char *name;		/* catalogue entry, or a local builder */
	ts_dag *(*build)(ts_ctx *ctx);	/* NULL: from the catalogue */
	struct want stages[16];
};

#define V(a) ts_var(ctx, (a))
#define I(v) ts_int(ctx, (v))

/* Return the DAG computing "out" (NULL on failure). */
static ts_dag *dag_of(ts_ctx *ctx, ts_tensor *out)
{
	return out ? ts_dag_new(ctx, 0, NULL, 1, &out) : NULL;
}

/* Bp[jo, k, ji] = B[k, jo * 4 + ji]; C[i, j] = sum_k A[i, k] * Bp[j // 4,
 * k, j % 4]: a layout packing before a matmul. */
static ts_dag *build_packed_matmul(ts_ctx *ctx)
{
	int64_t sa[2] = { 6, 5 }, sb[2] = { 5, 8 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 2, sb);
	ts_axis *jo = ts_axis_new(ctx, "jo", 2), *kk = ts_axis_new(ctx, "kk", 5);
	ts_axis *ji = ts_axis_new(ctx, "ji", 4);
	ts_axis *pax[3] = { jo, kk, ji };
	ts_tensor *Bp = ts_compute(ctx, "Bp", 3, pax, ts_at(ctx, B, 2, V(kk),
		ts_add(ctx, ts_mul(ctx, V(jo), I(4)), V(ji))));
	ts_axis *i = ts_axis_new(ctx, "i", 6), *j = ts_axis_new(ctx, "j", 8);
	ts_axis *k = ts_reduce_axis(ctx, "k", 5);
	ts_axis *ax[2] = { i, j };
	ts_expr *b = ts_at(ctx, Bp, 3, ts_floordiv(ctx, V(j), I(4)), V(k),
		ts_mod(ctx, V(j), I(4)));

	return dag_of(ctx, ts_compute(ctx, "C", 2, ax, ts_sum(ctx, 1, &k,
		ts_mul(ctx, ts_at(ctx, A, 2, V(i), V(k)), b))));
}

/* A32[i, k] = i32(A[i, k]) as its own stage before an int32 matmul. */
static ts_dag *build_cast_then_matmul(ts_ctx *ctx)
{
	int64_t sa[2] = { 4, 6 }, sb[2] = { 6, 5 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_I8, 2, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I32, 2, sb);
	ts_axis *ci = ts_axis_new(ctx, "ci", 4), *ck = ts_axis_new(ctx, "ck", 6);
	ts_axis *cax[2] = { ci, ck };
	ts_tensor *A32 = ts_compute_typed(ctx, "A32", TS_I32, 2, cax,
		ts_at(ctx, A, 2, V(ci), V(ck)));
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 5);
	ts_axis *k = ts_reduce_axis(ctx, "k", 6);
	ts_axis *ax[2] = { i, j };

	return dag_of(ctx, ts_compute(ctx, "C", 2, ax, ts_sum(ctx, 1, &k,
		ts_mul(ctx, ts_at(ctx, A32, 2, V(i), V(k)),
			ts_at(ctx, B, 2, V(k), V(j))))));
}

/* G[i, j] = sum_k A[i, k] * A[j, k]: two loads of one tensor. */
static ts_dag *build_gram(ts_ctx *ctx)
{
	int64_t sa[2] = { 5, 7 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_axis *i = ts_axis_new(ctx, "i", 5), *j = ts_axis_new(ctx, "j", 5);
	ts_axis *k = ts_reduce_axis(ctx, "k", 7);
	ts_axis *ax[2] = { i, j };

	return dag_of(ctx, ts_compute(ctx, "G", 2, ax, ts_sum(ctx, 1, &k,
		ts_mul(ctx, ts_at(ctx, A, 2, V(i), V(k)),
			ts_at(ctx, A, 2, V(j), V(k))))));
}

/* M[h] = max_r X[h * 2 + r], r < 3: overlapping windows (a halo). */
static ts_dag *build_overlapping_pool(ts_ctx *ctx)
{
	int64_t sx[1] = { 9 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *h = ts_axis_new(ctx, "h", 4);
	ts_axis *r = ts_reduce_axis(ctx, "r", 3);

	return dag_of(ctx, ts_compute(ctx, "M", 1, &h, ts_rmax(ctx, 1, &r,
		ts_at(ctx, X, 1, ts_add(ctx, ts_mul(ctx, V(h), I(2)), V(r))))));
}

/* O[i, j] = a[i] * b[j]: an outer product, direct with reuse. */
static ts_dag *build_outer(ts_ctx *ctx)
{
	int64_t sa[1] = { 4 }, sb[1] = { 6 };
	ts_tensor *a = ts_placeholder(ctx, "a", TS_F32, 1, sa);
	ts_tensor *b = ts_placeholder(ctx, "b", TS_F32, 1, sb);
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 6);
	ts_axis *ax[2] = { i, j };

	return dag_of(ctx, ts_compute(ctx, "O", 2, ax, ts_mul(ctx,
		ts_at(ctx, a, 1, V(i)), ts_at(ctx, b, 1, V(j)))));
}

static const struct op_case cases[] = {
	{ "add", NULL, { { "C", D, "" } } },
	{ "relu", NULL, { { "Y", D, "" } } },
	{ "cast_f16", NULL, { { "Y", D, "" } } },
	{ "bias_add", NULL, { { "Y", D, "h,w" } } },
	{ "transpose", NULL, { { "Y", D, "" } } },
	{ "pad", NULL, { { "P", D, "" } } },
	{ "concat", NULL, { { "C", D, "" } } },
	{ "gelu", NULL, { { "Y", D, "" } } },
	/* The gather: W[Idx[i], d] is over-approximated, Idx[i] is reused
	 * along d. */
	{ "embedding", NULL, { { "Y", D, "d" } } },
	{ "sum_axis", NULL, { { "S", SR, "" } } },
	{ "sum_all", NULL, { { "S", SR, "" } } },
	{ "max_axis", NULL, { { "M", SR, "" } } },
	{ "l2_norm", NULL, { { "N.sum0", SR, "" }, { "N", D, "" } } },
	/* GEMV: v[k] is reused along i, but W[i, k] streams. */
	{ "gemv", NULL, { { "y", SR, "i" } } },
	{ "softmax", NULL, { { "M", SR, "" }, { "E", SR, "" },
		{ "Y", D, "j" } } },
	{ "layer_norm", NULL, { { "Mu.sum0", SR, "" }, { "Var.sum0", SR, "" },
		{ "Mu", D, "" }, { "Var", D, "" },
		{ "Y", D, "i,j" } } },
	{ "rms_norm", NULL, { { "Ms.sum0", SR, "" }, { "Ms", D, "" },
		{ "Y", D, "i,j" } } },
	{ "max_pool", NULL, { { "Y", SR, "" } } },
	/* The guard in the window becomes a padding stage. */
	{ "avg_pool", NULL, { { "Y.sum0.pad0", D, "" }, { "Y.sum0", SR, "" },
		{ "Y", D, "" } } },
	{ "matmul", NULL, { { "C", CR, "i,j" } } },
	{ "matmul_128_768_3072", NULL, { { "C", CR, "i,j" } } },
	{ "batch_matmul", NULL, { { "C", CR, "i,j" } } },
	{ "matmul_int8_requant", NULL, { { "Acc", CR, "i,j" },
		{ "Q", D, "" } } },
	{ "conv2d_nchw_s1", NULL, { { "P", LT, "" }, { "Y", CR, "k,h,w" } } },
	{ "conv2d_nchw_s2", NULL, { { "P", LT, "" }, { "Y", CR, "k,h,w" } } },
	{ "conv2d_nhwc", NULL, { { "Y.pad0", LT, "" },
		{ "Y", CR, "h,w,k" } } },
	/* Depthwise: P[n, c, h + r, w + s] streams, only the weights are
	 * reused: memory bound.  Its padding stays direct. */
	{ "depthwise_conv", NULL, { { "P", D, "" }, { "Y", SR, "h,w" } } },
	{ "conv1x1", NULL, { { "Y", CR, "k,h,w" } } },
	{ "conv2d_dilated", NULL, { { "Y.pad0", LT, "" },
		{ "Y", CR, "k,h,w" } } },
	{ "conv2d_grouped", NULL, { { "P", LT, "" }, { "Y", CR, "k,h,w" } } },
	{ "conv2d_7x7_s2", NULL, { { "P", LT, "" }, { "Y", CR, "k,h,w" } } },
	{ "dense_bias_relu", NULL, { { "D", CR, "i,o" }, { "Y", D, "i" } } },
	/* Batch 1: every dense layer is a GEMV. */
	{ "mlp", NULL, { { "D1", SR, "o" }, { "H1", D, "" },
		{ "D2", SR, "o" }, { "H2", D, "" }, { "D3", SR, "o" },
		{ "Y", D, "" } } },
	{ "lenet", NULL, { { "C1", CR, "k,h,w" }, { "R1", D, "h,w" },
		{ "P1", SR, "" }, { "C2", CR, "k,h,w" }, { "R2", D, "h,w" },
		{ "P2", SR, "" }, { "D1", SR, "o" }, { "F1", D, "" },
		{ "D2", SR, "o" }, { "L", D, "" }, { "SM", SR, "" },
		{ "SE", SR, "" }, { "SY", D, "j" } } },
	{ "packed_matmul", build_packed_matmul, { { "Bp", LT, "" },
		{ "C", CR, "i,j" } } },
	{ "cast_then_matmul", build_cast_then_matmul, { { "A32", LT, "" },
		{ "C", CR, "i,j" } } },
	{ "gram", build_gram, { { "G", CR, "i,j" } } },
	{ "overlapping_pool", build_overlapping_pool, { { "M", SR, "" } } },
	{ "outer", build_outer, { { "O", D, "i,j" } } },
};

/* Return the reuse axes of "si" as "a,b". */
static const char *reuse_string(const ts_stage_info *si, char *buf)
{
	buf[0] = '\0';
	for (int a = 0; a < si->stage->ndim; a++) {
		if (!si->reuse_axes[a])
			continue;
		if (buf[0])
			strcat(buf, ",");
		strcat(buf, si->stage->axes[a]->name);
	}
	return buf;
}

/* Build the DAG of case "c" in "ctx". */
static ts_dag *case_dag(ts_ctx *ctx, const struct op_case *c)
{
	const struct ts_catalogue_entry *e;

	if (c->build)
		return c->build(ctx);
	e = ts_catalogue_find(c->name);
	if (!e)
		fail_msg("no catalogue entry '%s'", c->name);
	return e->build(ctx, TS_SIZE_TINY);
}

/* Check every stage of case "c" (the DAG must have exactly the listed
 * stages). */
static void check_case(const struct op_case *c)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = case_dag(ctx, c);
	ts_dag_info *di;
	int n = 0;
	char buf[256];

	if (!dag)
		fail_msg("%s: %s", c->name, ts_ctx_error(ctx));
	di = ts_analyze_dag(ctx, dag);
	if (!di)
		fail_msg("%s: %s", c->name, ts_ctx_error(ctx));
	for (; c->stages[n].stage; n++) {
		const struct want *w = &c->stages[n];
		ts_stage *s = ts_dag_find_stage(dag, w->stage);
		const ts_stage_info *si;
		if (!s)
			fail_msg("%s: no stage '%s'", c->name, w->stage);
		si = di->stages[ts_dag_stage_index(dag, s)];
		if (si->klass != w->klass)
			fail_msg("%s: stage %s is %s, expected %s", c->name,
				w->stage, ts_class_name(si->klass),
				ts_class_name(w->klass));
		if (strcmp(reuse_string(si, buf), w->reuse) != 0)
			fail_msg("%s: stage %s reuse axes '%s', expected '%s'",
				c->name, w->stage, buf, w->reuse);
		assert_true(si->nreasons >= 1);
	}
	if (n != di->nstages)
		fail_msg("%s: %d stages listed, the DAG has %d:\n%s", c->name,
			n, di->nstages, ts_dag_canonical_string(dag));
	ts_ctx_free(ctx);
}

static void test_classify_catalogue__classes_and_reuse_axes(void **state)
{
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	assert_true(n >= 30);
	for (int i = 0; i < n; i++)
		check_case(&cases[i]);
}

static void test_classify_catalogue__every_entry_is_listed(void **state)
{
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	for (int e = 0; e < ts_catalogue_count; e++) {
		bool found = false;
		for (int i = 0; i < n; i++)
			found |= strcmp(cases[i].name,
				ts_catalogue[e].name) == 0;
		if (!found)
			fail_msg("catalogue entry '%s' has no expected class",
				ts_catalogue[e].name);
	}
}

static void test_classify_class_names__are_stable(void **state)
{
	assert_string_equal(ts_class_name(D), "direct");
	assert_string_equal(ts_class_name(SR), "simple_reduction");
	assert_string_equal(ts_class_name(CR), "complex_reduction");
	assert_string_equal(ts_class_name(LT), "location_tunable");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_classify_catalogue__classes_and_reuse_axes),
		TS_TEST(test_classify_catalogue__every_entry_is_listed),
		TS_TEST(test_classify_class_names__are_stable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
