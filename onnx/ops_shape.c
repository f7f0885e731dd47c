/* Shapes and constants: Constant, ConstantOfShape, Shape, Size, Reshape,
 * Flatten, Squeeze, Unsqueeze, Transpose.  Whatever only moves elements
 * is a stage that reads its input at computed indices. */
#include <config.h>

#include <math.h>

#include "onnx/internal.h"

/* Integer element "i" of "a", exactly. */
static int64_t int_at(const ts_array *a, int64_t i)
{
	if (a->dtype == TS_I64)
		return ((const int64_t *)a->data)[i];
	return (int64_t)ts_array_get(a, i);
}

char *ox_reshape_load(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v, int ndim, const int64_t *shape)
{
	const char *idx[TS_MAX_DIMS];
	int p = 0, s = 0, r = v->ndim;
	ts_buf flat;
	int64_t stride = 1;

	/* Dimensions equal at the front and the back map one to one. */
	while (p < r && p < ndim && v->shape[p] == shape[p])
		p++;
	while (s < r - p && s < ndim - p &&
	    v->shape[r - 1 - s] == shape[ndim - 1 - s])
		s++;
	for (int i = 0; i < p; i++)
		idx[i] = v->shape[i] == 1 ? "0" : ox_axis(i);
	for (int i = 0; i < s; i++)
		idx[r - 1 - i] = v->shape[r - 1 - i] == 1 ? "0" :
			ox_axis(ndim - 1 - i);
	/* The middle: the flat position among the output's middle axes,
	 * split again by the input's. */
	ts_buf_init(&flat);
	for (int j = ndim - s - 1; j >= p; j--) {
		if (shape[j] == 1)
			continue;
		ts_buf_printf(&flat, stride == 1 ? "%s%s" : "%s%s * %lld",
			flat.len ? " + " : "", ox_axis(j), (long long)stride);
		stride *= shape[j];
	}
	if (!flat.len)
		ts_buf_puts(&flat, "0");
	stride = 1;
	for (int m = r - s - 1; m >= p; m--) {
		const char *e = flat.s;
		bool first = true;

		for (int q = p; q < m; q++)
			first &= v->shape[q] == 1;
		if (v->shape[m] == 1) {
			idx[m] = "0";
			continue;
		}
		if (stride != 1)
			e = ts_asprintf("(%s) // %lld", e, (long long)stride);
		if (!first)
			e = ts_asprintf("(%s) %% %lld", e,
				(long long)v->shape[m]);
		idx[m] = e;
		stride *= v->shape[m];
	}
	return ox_load(im, n, v, idx);
}

/* A stage of node "n"'s output 0 that reads input 0 reshaped. */
static ts_status reshape_to(struct ox_importer *im, struct ox_node *n,
	int ndim, const int64_t *shape)
{
	struct ox_value *x = n->in[0];
	const char *name;

	if (ox_numel(ndim, shape) != ox_numel(x->ndim, x->shape))
		return ox_fail(im, n, "cannot reshape %lld elements into %lld",
			(long long)ox_numel(x->ndim, x->shape),
			(long long)ox_numel(ndim, shape));
	name = ox_output(im, n, 0, x->dtype, ndim, shape);
	ox_stage(im, n, name, ndim, shape, NULL,
		ox_reshape_load(im, n, x, ndim, shape));
	return TS_OK;
}

static ts_status lower_reshape(struct ox_importer *im, struct ox_node *n)
{
	int64_t shape[TS_MAX_DIMS], allowzero, known = 1;
	int nd, infer = -1;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "allowzero", 0, &allowzero) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_opset(im) < 5 && ox_attr(n, "shape")) {
		if (ox_attr_ints(im, n, "shape", shape, TS_MAX_DIMS, &nd) < 0)
			return TS_ERROR;
	} else if (ox_const_ints(im, n, 1, "the shape", shape, TS_MAX_DIMS,
	    &nd) < 0) {
		return TS_ERROR;
	}
	for (int i = 0; i < nd; i++) {
		if (shape[i] == 0 && !allowzero) {
			if (i >= x->ndim)
				return ox_fail(im, n, "shape[%d] is 0 (copy) "
					"but the input has rank %d", i, x->ndim);
			shape[i] = x->shape[i];
		}
		if (shape[i] == -1) {
			if (infer >= 0)
				return ox_fail(im, n, "more than one -1 in "
					"the shape");
			infer = i;
			continue;
		}
		if (shape[i] < 0)
			return ox_fail(im, n, "shape[%d] is %lld", i,
				(long long)shape[i]);
		known *= shape[i];
	}
	if (infer >= 0) {
		if (!known || ox_numel(x->ndim, x->shape) % known)
			return ox_fail(im, n, "cannot infer the -1 of the "
				"shape from %lld elements",
				(long long)ox_numel(x->ndim, x->shape));
		shape[infer] = ox_numel(x->ndim, x->shape) / known;
	}
	return reshape_to(im, n, nd, shape);
}

static ts_status lower_flatten(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, shape[2] = { 1, 1 };
	int ax;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "axis", 1, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (axis == x->ndim)
		ax = x->ndim;
	else if (ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	for (int i = 0; i < x->ndim; i++)
		shape[i < ax ? 0 : 1] *= x->shape[i];
	return reshape_to(im, n, 2, shape);
}

/* The axes of Squeeze and Unsqueeze: an attribute before opset 13, an
 * input after. */
static ts_status axes_of(struct ox_importer *im, struct ox_node *n,
	int64_t *axes, int *count)
{
	if (ox_opset(im) < 13)
		return ox_attr_ints(im, n, "axes", axes, TS_MAX_DIMS, count);
	*count = -1;
	if (!ox_has(n, 1))
		return TS_OK;
	return ox_const_ints(im, n, 1, "the axes", axes, TS_MAX_DIMS, count);
}

static ts_status lower_squeeze(struct ox_importer *im, struct ox_node *n)
{
	int64_t axes[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	bool drop[TS_MAX_DIMS] = { false };
	int count, nd = 0;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0 || axes_of(im, n, axes, &count) < 0)
		return TS_ERROR;
	x = n->in[0];
	for (int i = 0; i < count; i++) {
		int a;

		if (ox_axis_norm(im, n, axes[i], x->ndim, &a) < 0)
			return TS_ERROR;
		if (x->shape[a] != 1)
			return ox_fail(im, n, "axis %d has extent %lld, not 1",
				a, (long long)x->shape[a]);
		drop[a] = true;
	}
	for (int i = 0; i < x->ndim; i++)
		if (!(count < 0 ? x->shape[i] == 1 : drop[i]))
			shape[nd++] = x->shape[i];
	return reshape_to(im, n, nd, shape);
}

static ts_status lower_unsqueeze(struct ox_importer *im, struct ox_node *n)
{
	int64_t axes[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	bool add[TS_MAX_DIMS] = { false };
	int count, nd;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0 || axes_of(im, n, axes, &count) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (count < 0)
		return ox_fail(im, n, "the axes are missing");
	nd = x->ndim + count;
	if (nd > TS_MAX_DIMS)
		return ox_fail(im, n, "rank %d is more than %d", nd,
			TS_MAX_DIMS);
	for (int i = 0; i < count; i++) {
		int a;

		if (ox_axis_norm(im, n, axes[i], nd, &a) < 0)
			return TS_ERROR;
		if (add[a])
			return ox_fail(im, n, "axis %d is given twice", a);
		add[a] = true;
	}
	for (int i = 0, j = 0; i < nd; i++)
		shape[i] = add[i] ? 1 : x->shape[j++];
	return reshape_to(im, n, nd, shape);
}

static ts_status lower_transpose(struct ox_importer *im, struct ox_node *n)
{
	int64_t perm[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	const char *idx[TS_MAX_DIMS], *name;
	bool seen[TS_MAX_DIMS] = { false };
	int count;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_ints(im, n, "perm", perm, TS_MAX_DIMS, &count) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (count < 0)
		for (int i = 0; i < x->ndim; i++)
			perm[i] = x->ndim - 1 - i;
	else if (count != x->ndim)
		return ox_fail(im, n, "perm has %d entries for rank %d", count,
			x->ndim);
	for (int i = 0; i < x->ndim; i++) {
		if (perm[i] < 0 || perm[i] >= x->ndim || seen[perm[i]])
			return ox_fail(im, n, "perm is not a permutation");
		seen[perm[i]] = true;
		shape[i] = x->shape[perm[i]];
		idx[perm[i]] = ox_axis(i);
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	ox_stage(im, n, name, x->ndim, shape, NULL, ox_load(im, n, x, idx));
	return TS_OK;
}

/* An output known at import. */
static void known_output(struct ox_importer *im, struct ox_node *n, int k,
	ts_array *a)
{
	if (ox_output(im, n, k, a->dtype, a->ndim, a->shape))
		n->out[k]->konst = a;
}

static ts_array *ints_array(ts_ctx *ctx, int count, const int64_t *v,
	bool scalar)
{
	int64_t shape[1] = { count };
	ts_array *a = ts_array_alloc(ctx, TS_I64, scalar ? 0 : 1, shape);

	if (a)
		memcpy(a->data, v, sizeof(int64_t) * (size_t)count);
	return a;
}

static ts_status lower_shape(struct ox_importer *im, struct ox_node *n)
{
	int64_t start = 0, end, s[TS_MAX_DIMS];
	struct ox_value *x;
	int cnt = 0;
	ts_array *a;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_attr_int(im, n, "start", 0, &start) < 0 ||
	    ox_attr_int(im, n, "end", x->ndim, &end) < 0)
		return TS_ERROR;
	start = start < 0 ? TS_MAX(start + x->ndim, 0) : TS_MIN(start, x->ndim);
	end = end < 0 ? TS_MAX(end + x->ndim, 0) : TS_MIN(end, x->ndim);
	for (int64_t i = start; i < end; i++)
		s[cnt++] = x->shape[i];
	if (!(a = ints_array(ox_ctx(im), cnt, s, false)))
		return TS_ERROR;
	known_output(im, n, 0, a);
	return TS_OK;
}

static ts_status lower_size(struct ox_importer *im, struct ox_node *n)
{
	int64_t size;
	ts_array *a;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	size = ox_numel(n->in[0]->ndim, n->in[0]->shape);
	if (!(a = ints_array(ox_ctx(im), 1, &size, true)))
		return TS_ERROR;
	known_output(im, n, 0, a);
	return TS_OK;
}

/* Constant: value (a tensor), or value_float(s) and value_int(s). */
static ts_status lower_constant(struct ox_importer *im, struct ox_node *n)
{
	const Onnx__AttributeProto *a;
	ts_array *arr = NULL;
	int64_t shape[1];

	if ((a = ox_attr(n, "value"))) {
		if (!a->t)
			return ox_fail(im, n, "attribute 'value' must be a "
				"TENSOR");
		arr = ox_tensor_array(im, n, a->t);
	} else if ((a = ox_attr(n, "value_float")) ||
	    (a = ox_attr(n, "value_int"))) {
		double f;
		int64_t i;

		if (!strcmp(a->name, "value_float")) {
			if (ox_attr_float(im, n, "value_float", 0, &f) < 0)
				return TS_ERROR;
			if ((arr = ts_array_alloc(ox_ctx(im), TS_F32, 0, shape)))
				ts_array_set(arr, 0, f);
		} else {
			if (ox_attr_int(im, n, "value_int", 0, &i) < 0)
				return TS_ERROR;
			arr = ints_array(ox_ctx(im), 1, &i, true);
		}
	} else if ((a = ox_attr(n, "value_floats"))) {
		if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
			return ox_fail(im, n, "attribute 'value_floats' must "
				"be FLOATS");
		shape[0] = (int64_t)a->n_floats;
		if ((arr = ts_array_alloc(ox_ctx(im), TS_F32, 1, shape)))
			memcpy(arr->data, a->floats,
				sizeof(float) * a->n_floats);
	} else if ((a = ox_attr(n, "value_ints"))) {
		if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
			return ox_fail(im, n, "attribute 'value_ints' must be "
				"INTS");
		arr = ints_array(ox_ctx(im), (int)a->n_ints, a->ints, false);
	} else {
		return ox_fail(im, n, "no supported value attribute (value, "
			"value_float(s), value_int(s))");
	}
	if (!arr)
		return TS_ERROR;
	known_output(im, n, 0, arr);
	return TS_OK;
}

static ts_status lower_constant_of_shape(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t shape[TS_MAX_DIMS];
	const Onnx__AttributeProto *a = ox_attr(n, "value");
	ts_dtype t = TS_F32;
	double v = 0;
	const char *name;
	int nd;

	if (ox_const_ints(im, n, 0, "the shape", shape, TS_MAX_DIMS, &nd) < 0)
		return TS_ERROR;
	if (a) {
		ts_array *arr;

		if (!a->t)
			return ox_fail(im, n, "attribute 'value' must be a "
				"TENSOR");
		if (!(arr = ox_tensor_array(im, n, a->t)))
			return TS_ERROR;
		if (arr->size != 1)
			return ox_fail(im, n, "attribute 'value' must hold "
				"one value");
		t = arr->dtype;
		v = ts_array_get(arr, 0);
	}
	for (int i = 0; i < nd; i++)
		if (shape[i] < 0)
			return ox_fail(im, n, "negative extent %lld",
				(long long)shape[i]);
	name = ox_output(im, n, 0, t, nd, shape);
	ox_stage(im, n, name, nd, shape, NULL, ox_tlit(t, v));
	return TS_OK;
}

/* Range(start, limit, delta), known at import. */
static ts_status lower_range(struct ox_importer *im, struct ox_node *n)
{
	double s, l, d;
	int64_t count, shape[1];
	const char *name;
	ts_dtype t;

	if (ox_need(im, n, 0, 3) < 0 || ox_need(im, n, 1, 3) < 0 ||
	    ox_need(im, n, 2, 3) < 0 ||
	    ox_const_float(im, n, 0, "start", 0, &s) < 0 ||
	    ox_const_float(im, n, 1, "limit", 0, &l) < 0 ||
	    ox_const_float(im, n, 2, "delta", 1, &d) < 0)
		return TS_ERROR;
	if (d == 0)
		return ox_fail(im, n, "delta is 0");
	t = n->in[0]->dtype;
	count = (int64_t)TS_MAX(ceil((l - s) / d), 0);
	if (n->in[0]->dtype == TS_I64 || n->in[0]->dtype == TS_I32) {
		int64_t si = int_at(n->in[0]->konst, 0);
		int64_t li = int_at(n->in[1]->konst, 0);
		int64_t di = int_at(n->in[2]->konst, 0);

		count = di > 0 ? (li - si + di - 1) / di :
			(si - li + (-di) - 1) / (-di);
		count = TS_MAX(count, 0);
		shape[0] = count;
		name = ox_output(im, n, 0, t, 1, shape);
		ox_stage(im, n, name, 1, shape, &t, ts_asprintf(
			"%lld + i0 * %lld", (long long)si, (long long)di));
		return TS_OK;
	}
	shape[0] = count;
	name = ox_output(im, n, 0, t, 1, shape);
	ox_stage(im, n, name, 1, shape, NULL, ts_asprintf("%s + %s(i0) * %s",
		ox_lit(t, s), ts_dtype_name(t), ox_lit(t, d)));
	return TS_OK;
}

const struct ox_op ox_ops_shape[] = {
	{ "Reshape", lower_reshape },
	{ "Flatten", lower_flatten },
	{ "Squeeze", lower_squeeze },
	{ "Unsqueeze", lower_unsqueeze },
	{ "Transpose", lower_transpose },
	{ "Shape", lower_shape },
	{ "Size", lower_size },
	{ "Constant", lower_constant },
	{ "ConstantOfShape", lower_constant_of_shape },
	{ "Range", lower_range },
	{ NULL, NULL },
};
