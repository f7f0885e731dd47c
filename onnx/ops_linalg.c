/* Contractions: MatMul (NumPy's batched, broadcast product), Gemm and
 * Einsum. */
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

/* Einsum's subscripts: a label per dimension, letters by their character
 * and the dimensions an ellipsis stands for by ELL + k, k counted from the
 * left of the widest ellipsis (operands' ellipses align right).  While
 * the widest is not known, an ellipsis "w" wide is labelled
 * ELL + TS_MAX_DIMS - w + k, and relabelled after. */
#define ELL 128
#define NLABELS (ELL + TS_MAX_DIMS)

/* Parse one term of "eq" from "*p" up to ',' '-' or the end into "lab"
 * ("nd" dimensions; for an operand, "rank" of them, else -1 and the
 * ellipsis is "ell" wide); *p moves past it. */
static ts_status einsum_term(struct ox_importer *im, const struct ox_node *n,
	const char **p, int rank, int *ell, int *lab, int *nd)
{
	const char *s = *p;
	int letters = 0, dots = -1, k = 0, width;

	for (; *s && *s != ',' && *s != '-'; s++) {
		if (*s == ' ')
			continue;
		if (!strncmp(s, "...", 3) && dots < 0) {
			dots = letters;
			s += 2;
		} else if (((*s >= 'a' && *s <= 'z') ||
		    (*s >= 'A' && *s <= 'Z')) && letters < TS_MAX_DIMS) {
			lab[letters++] = *s;
		} else {
			return ox_fail(im, n, "equation: unexpected '%c'", *s);
		}
	}
	*p = s;
	width = rank < 0 ? (dots < 0 ? 0 : *ell) : rank - letters;
	if (width < 0 || (dots < 0 && width > 0))
		return ox_fail(im, n, "equation: a term has %d subscripts for "
			"%d dimensions", letters, rank);
	if (rank >= 0 && width > *ell)
		*ell = width;
	if (letters + width > TS_MAX_DIMS)
		return ox_fail(im, n, "equation: too many dimensions");
	/* Shift the letters after the ellipsis and label its dimensions;
	 * an operand's are relabelled once the widest is known. */
	if (dots >= 0) {
		memmove(lab + dots + width, lab + dots,
			sizeof(int) * (size_t)(letters - dots));
		for (k = 0; k < width; k++)
			lab[dots + k] = ELL + TS_MAX_DIMS - width + k;
	}
	*nd = letters + width;
	return TS_OK;
}

/* Einsum (equation): sums of products of the operands, for the equations
 * NumPy accepts: a letter repeated in one operand takes its diagonal,
 * letters missing from the output (or, with no "->", those that appear
 * more than once, the output then being the rest in alphabetical order,
 * after the ellipsis) are summed over; the ellipsis broadcasts. */
static ts_status lower_einsum(struct ox_importer *im, struct ox_node *n)
{
	int lab[16][TS_MAX_DIMS], nd[16], out[TS_MAX_DIMS], nout = 0, ell = 0;
	int uses[NLABELS] = { 0 }, pos[NLABELS];
	int64_t size[NLABELS], shape[TS_MAX_DIMS];
	const char *eq, *p, *axis[NLABELS], *name;
	ts_buf binders, body;
	ts_dtype t;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_string(im, n, "equation", "", &eq) < 0)
		return TS_ERROR;
	if (n->nin > 16)
		return ox_fail(im, n, "more than 16 operands");
	t = n->in[0]->dtype;
	p = eq;
	for (int i = 0; i < n->nin; i++) {
		if (ox_need(im, n, i, n->nin) < 0)
			return TS_ERROR;
		if (n->in[i]->dtype != t || t == TS_BOOL)
			return ox_fail(im, n, "operands of types %s and %s are "
				"not supported", ts_dtype_name(t),
				ts_dtype_name(n->in[i]->dtype));
		if (i && *p++ != ',')
			return ox_fail(im, n, "equation '%s' has %d terms for "
				"%d operands", eq, i, n->nin);
		if (einsum_term(im, n, &p, n->in[i]->ndim, &ell, lab[i],
		    &nd[i]) < 0)
			return TS_ERROR;
	}
	while (*p == ' ')
		p++;
	if (*p && *p != '-')
		return ox_fail(im, n, "equation '%s' has more terms than the "
			"%d operands", eq, n->nin);
	/* Labels, sizes and uses; ellipsis dimensions as the widest's. */
	for (int l = 0; l < NLABELS; l++)
		size[l] = 1;
	for (int i = 0; i < n->nin; i++)
		for (int k = 0; k < nd[i]; k++) {
			int l = lab[i][k];
			int64_t d = n->in[i]->shape[k];

			if (l >= ELL)
				l = lab[i][k] += ell - TS_MAX_DIMS;
			/* Only the ellipsis broadcasts, as in NumPy. */
			if (uses[l] && d != size[l] && (l < ELL ||
			    (d != 1 && size[l] != 1)))
				return ox_fail(im, n, "subscript dimensions "
					"differ: %lld and %lld", (long long)d,
					(long long)size[l]);
			if (!uses[l] || size[l] == 1)
				size[l] = d;
			uses[l]++;
		}
	if (*p == '-') {
		p++;
		if (*p++ != '>')
			return ox_fail(im, n, "equation: expected '->'");
		if (einsum_term(im, n, &p, -1, &ell, out, &nout) < 0)
			return TS_ERROR;
		if (*p)
			return ox_fail(im, n, "equation: unexpected '%c'", *p);
		for (int k = 0; k < nout; k++)
			if (out[k] >= ELL)
				out[k] += ell - TS_MAX_DIMS;
	} else {
		for (int l = ELL; l < ELL + ell; l++)
			out[nout++] = l;
		for (int l = 0; l < ELL; l++)
			if (uses[l] == 1)
				out[nout++] = l;
	}
	for (int l = 0; l < NLABELS; l++)
		pos[l] = -1;
	for (int k = 0; k < nout; k++) {
		int l = out[k];

		if (l < ELL && !uses[l])
			return ox_fail(im, n, "output subscript '%c' is no "
				"operand's", l);
		if (pos[l] >= 0)
			return ox_fail(im, n, "output subscript '%c' is "
				"repeated", l < ELL ? l : '.');
		pos[l] = k;
		axis[l] = ox_axis(k);
		shape[k] = size[l];
	}
	ts_buf_init(&binders);
	for (int l = 0; l < NLABELS; l++)
		if (uses[l] && pos[l] < 0) {
			axis[l] = ox_raxis(n);
			ts_buf_printf(&binders, "%s%s: %lld", binders.len ?
				", " : "", axis[l], (long long)size[l]);
		}
	ts_buf_init(&body);
	for (int i = 0; i < n->nin; i++) {
		const char *idx[TS_MAX_DIMS];

		for (int k = 0; k < nd[i]; k++)
			idx[k] = n->in[i]->shape[k] == 1 &&
				size[lab[i][k]] != 1 ? "0" : axis[lab[i][k]];
		ts_buf_printf(&body, "%s%s", i ? " * " : "",
			ox_load(im, n, n->in[i], idx));
	}
	name = ox_output(im, n, 0, t, nout, shape);
	ox_stage(im, n, name, nout, shape, NULL, binders.len ?
		ts_asprintf("sum(%s) %s", binders.s, body.s) : body.s);
	return TS_OK;
}

const struct ox_op ox_ops_linalg[] = {
	{ "MatMul", lower_matmul },
	{ "Gemm", lower_gemm },
	{ "Einsum", lower_einsum },
	{ NULL, NULL },
};
