/* Contractions: MatMul (NumPy's batched, broadcast product) and Gemm. */
#include <config.h>

#include "onnx/internal.h"

/* MatMul: vectors are promoted to matrices (a row for A, a column for
 * B) and the added dimension removed from the result; the batch
 * dimensions broadcast. */
static ts_status lower_matmul(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *a, *b;
	int64_t ba[TS_MAX_DIMS], bb[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	int64_t m, k, kb, nn;
	int nba, nbb, nd, r = 0;
	const char *ia[TS_MAX_DIMS], *ib[TS_MAX_DIMS], *red, *name;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0)
		return TS_ERROR;
	a = n->in[0];
	b = n->in[1];
	if (a->dtype != b->dtype || a->dtype == TS_BOOL)
		return ox_fail(im, n, "inputs of types %s and %s are not "
			"supported", ts_dtype_name(a->dtype),
			ts_dtype_name(b->dtype));
	if (a->ndim < 1 || b->ndim < 1)
		return ox_fail(im, n, "scalar inputs are not allowed");
	nba = a->ndim > 2 ? a->ndim - 2 : 0;
	nbb = b->ndim > 2 ? b->ndim - 2 : 0;
	memcpy(ba, a->shape, sizeof(int64_t) * (size_t)nba);
	memcpy(bb, b->shape, sizeof(int64_t) * (size_t)nbb);
	m = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
	k = a->shape[a->ndim - 1];
	kb = b->ndim > 1 ? b->shape[b->ndim - 2] : b->shape[0];
	nn = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
	if (k != kb)
		return ox_fail(im, n, "inner dimensions differ: %lld and %lld",
			(long long)k, (long long)kb);
	if (ox_broadcast(im, n, nba, ba, nbb, bb, &nd, shape) < 0)
		return TS_ERROR;
	if (nd + 2 > TS_MAX_DIMS)
		return ox_fail(im, n, "too many dimensions");
	red = ox_raxis(n);
	/* Batch axes, then rows of A, then columns of B. */
	for (int i = 0; i < nba; i++)
		ia[i] = ba[i] == 1 && shape[nd - nba + i] != 1 ? "0" :
			ox_axis(nd - nba + i);
	for (int i = 0; i < nbb; i++)
		ib[i] = bb[i] == 1 && shape[nd - nbb + i] != 1 ? "0" :
			ox_axis(nd - nbb + i);
	r = nd;
	if (a->ndim > 1) {
		ia[nba] = ox_axis(r);
		shape[r++] = m;
	}
	ia[a->ndim - 1] = red;
	ib[b->ndim > 1 ? nbb : 0] = red;
	if (b->ndim > 1) {
		ib[nbb + 1] = ox_axis(r);
		shape[r++] = nn;
	}
	name = ox_output(im, n, 0, a->dtype, r, shape);
	ox_stage(im, n, name, r, shape, NULL, ts_asprintf("sum(%s: %lld) %s * %s",
		red, (long long)k, ox_load(im, n, a, ia), ox_load(im, n, b, ib)));
	return TS_OK;
}

/* Gemm: alpha * A' B' + beta * C, with A' and B' optionally transposed
 * and C broadcast to the result. */
static ts_status lower_gemm(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *a, *b;
	int64_t ta, tb, m, k, kb, shape[2];
	double alpha, beta;
	const char *ia[2], *ib[2], *red, *name;
	char *body;
	ts_dtype t;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "transA", 0, &ta) < 0 ||
	    ox_attr_int(im, n, "transB", 0, &tb) < 0 ||
	    ox_attr_float(im, n, "alpha", 1.0, &alpha) < 0 ||
	    ox_attr_float(im, n, "beta", 1.0, &beta) < 0)
		return TS_ERROR;
	a = n->in[0];
	b = n->in[1];
	t = a->dtype;
	if (a->ndim != 2 || b->ndim != 2)
		return ox_fail(im, n, "A and B must be matrices (ranks %d and "
			"%d)", a->ndim, b->ndim);
	if (b->dtype != t || t == TS_BOOL)
		return ox_fail(im, n, "inputs of types %s and %s are not "
			"supported", ts_dtype_name(t), ts_dtype_name(b->dtype));
	m = a->shape[ta ? 1 : 0];
	k = a->shape[ta ? 0 : 1];
	kb = b->shape[tb ? 1 : 0];
	shape[0] = m;
	shape[1] = b->shape[tb ? 0 : 1];
	if (k != kb)
		return ox_fail(im, n, "inner dimensions differ: %lld and %lld",
			(long long)k, (long long)kb);
	red = ox_raxis(n);
	ia[ta ? 1 : 0] = "i0";
	ia[ta ? 0 : 1] = red;
	ib[tb ? 1 : 0] = red;
	ib[tb ? 0 : 1] = "i1";
	name = ox_output(im, n, 0, t, 2, shape);
	body = ts_asprintf("(sum(%s: %lld) %s * %s)", red, (long long)k,
		ox_load(im, n, a, ia), ox_load(im, n, b, ib));
	if (alpha != 1.0)
		body = ts_asprintf("%s * %s", ox_lit(t, alpha), body);
	if (ox_has(n, 2) && beta != 0.0) {
		struct ox_value *c = n->in[2];
		int nd;
		int64_t out[TS_MAX_DIMS];

		if (c->dtype != t)
			return ox_fail(im, n, "C of type %s, not %s",
				ts_dtype_name(c->dtype), ts_dtype_name(t));
		if (ox_broadcast(im, n, 2, shape, c->ndim, c->shape, &nd,
		    out) < 0 || out[0] != shape[0] || out[1] != shape[1])
			return ox_fail(im, n, "C does not broadcast to the "
				"result");
		body = ts_asprintf("%s + %s%s", body, beta != 1.0 ?
			ts_asprintf("%s * ", ox_lit(t, beta)) : "",
			ox_load_bcast(im, n, c, 2, shape));
	}
	ox_stage(im, n, name, 2, shape, NULL, body);
	return TS_OK;
}

const struct ox_op ox_ops_linalg[] = {
	{ "MatMul", lower_matmul },
	{ "Gemm", lower_gemm },
	{ NULL, NULL },
};
