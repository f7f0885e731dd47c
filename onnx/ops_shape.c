/* Shapes and constants: Constant, ConstantOfShape, ConstantFill, Shape,
 * Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose.  Whatever only
 * moves elements is a stage that reads its input at computed indices. */
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

/* The output of "n": "nd" dimensions "shape" (none negative) filled with
 * the value "v" of type "t". */
static ts_status fill(struct ox_importer *im, struct ox_node *n, ts_dtype t,
	int nd, const int64_t *shape, double v)
{
	const char *name;

	for (int i = 0; i < nd; i++)
		if (shape[i] < 0)
			return ox_fail(im, n, "negative extent %lld",
				(long long)shape[i]);
	name = ox_output(im, n, 0, t, nd, shape);
	ox_stage(im, n, name, nd, shape, NULL, ox_tlit(t, v));
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
	return fill(im, n, t, nd, shape, v);
}

/* ConstantFill, an experimental operator of ONNX's first releases that
 * PyTorch still writes at opsets 7 and 8 (the zero initial states of its
 * recurrent layers, before ConstantOfShape): "value" of type "dtype" in
 * the shape that the input holds (input_as_shape=1), the input's own
 * shape, or the attribute "shape" without an input; then "extra_shape". */
static ts_status lower_constant_fill(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t shape[TS_MAX_DIMS], extra[TS_MAX_DIMS], as_shape, elem;
	int nd = 0, ne = 0;
	double v;
	ts_dtype t;

	if (ox_attr_int(im, n, "input_as_shape", 0, &as_shape) < 0 ||
	    ox_attr_int(im, n, "dtype", ONNX_FLOAT, &elem) < 0 ||
	    ox_attr_float(im, n, "value", 0, &v) < 0 ||
	    ox_attr_ints(im, n, "extra_shape", extra, TS_MAX_DIMS, &ne) < 0 ||
	    ox_dtype(im, n, (int)elem, &t) < 0)
		return TS_ERROR;
	if (ox_has(n, 0) && as_shape) {
		if (ox_const_ints(im, n, 0, "the shape", shape, TS_MAX_DIMS,
		    &nd) < 0)
			return TS_ERROR;
	} else if (ox_has(n, 0)) {
		nd = n->in[0]->ndim;
		memcpy(shape, n->in[0]->shape, sizeof(int64_t) * (size_t)nd);
	} else if (ox_attr_ints(im, n, "shape", shape, TS_MAX_DIMS, &nd) < 0) {
		return TS_ERROR;
	}
	nd = TS_MAX(nd, 0);
	ne = TS_MAX(ne, 0);
	if (nd + ne > TS_MAX_DIMS)
		return ox_fail(im, n, "%d dimensions, more than %d", nd + ne,
			TS_MAX_DIMS);
	memcpy(shape + nd, extra, sizeof(int64_t) * (size_t)ne);
	nd += ne;
	return fill(im, n, t, nd, shape, v);
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

/* Index expressions. */

/* "idx" set to the stage's own axes i0 .. i<r-1>. */
static void own_axes(const char **idx, int r)
{
	for (int i = 0; i < r; i++)
		idx[i] = ox_axis(i);
}

/* Axis "a" moved by "off": "i2", "i2 - 3", "i2 + 1". */
static const char *shifted(int a, int64_t off)
{
	if (!off)
		return ox_axis(a);
	return ts_asprintf("%s %c %lld", ox_axis(a), off < 0 ? '-' : '+',
		(long long)(off < 0 ? -off : off));
}

/* An index read from a tensor ("ld", of integer dtype "t") into an
 * extent "d": negative values count from the end, and the result is
 * clamped into [0, d) so that an index out of range (an error in ONNX)
 * never reads outside the tensor. */
static char *wrap_index(const char *ld, ts_dtype t, int64_t d)
{
	const char *e = t == TS_I64 ? ld : ts_asprintf("i64(%s)", ld);

	return ts_asprintf("clamp(select(%s < 0, %s + %lld, %s), 0, %lld)", e,
		e, (long long)d, e, (long long)TS_MAX(d - 1, 0));
}

static ts_status need_int_indices(struct ox_importer *im,
	const struct ox_node *n, const struct ox_value *v)
{
	if (v->dtype == TS_BOOL || ts_dtype_is_float(v->dtype))
		return ox_fail(im, n, "indices of type %s: they must be "
			"integers", ts_dtype_name(v->dtype));
	return TS_OK;
}

/* Concat(axis): the inputs joined along "axis"; one stage whose value
 * selects the input by the position on the axis.  Inputs of extent 0
 * on the axis contribute nothing. */
static ts_status lower_concat(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, shape[TS_MAX_DIMS], off[256];
	const char *idx[TS_MAX_DIMS], *name;
	struct ox_value *x;
	int ax, last = -1;
	char *body = NULL;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	if (!ox_attr(n, "axis"))
		return ox_fail(im, n, "attribute 'axis' is missing");
	if (ox_attr_int(im, n, "axis", 0, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (n->nin > 256)
		return ox_fail(im, n, "%d inputs, more than 256", n->nin);
	if (ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	memcpy(shape, x->shape, sizeof(shape));
	shape[ax] = 0;
	for (int k = 0; k < n->nin; k++) {
		struct ox_value *y;

		if (ox_need(im, n, k, 1) < 0)
			return TS_ERROR;
		y = n->in[k];
		if (y->dtype != x->dtype || y->ndim != x->ndim)
			return ox_fail(im, n, "input %d is %s of rank %d, not "
				"%s of rank %d", k, ts_dtype_name(y->dtype),
				y->ndim, ts_dtype_name(x->dtype), x->ndim);
		for (int d = 0; d < x->ndim; d++)
			if (d != ax && y->shape[d] != x->shape[d])
				return ox_fail(im, n, "input %d has extent %lld "
					"on axis %d, not %lld", k,
					(long long)y->shape[d], d,
					(long long)x->shape[d]);
		off[k] = shape[ax];
		shape[ax] += y->shape[ax];
		if (y->shape[ax])
			last = k;
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	if (last < 0) {
		ox_stage(im, n, name, x->ndim, shape, NULL,
			ox_tlit(x->dtype, 0));
		return TS_OK;
	}
	own_axes(idx, x->ndim);
	for (int k = last; k >= 0; k--) {
		char *ld;

		if (!n->in[k]->shape[ax])
			continue;
		idx[ax] = shifted(ax, -off[k]);
		ld = ox_load(im, n, n->in[k], idx);
		body = !body ? ld : ts_asprintf("select(%s < %lld, %s, %s)",
			ox_axis(ax), (long long)(off[k] + n->in[k]->shape[ax]),
			ld, body);
	}
	ox_stage(im, n, name, x->ndim, shape, NULL, body);
	return TS_OK;
}

/* Split(axis, split): "split" is an attribute before opset 13 and an
 * input from 13; without it the axis is split into equal parts, one per
 * output.  Each output is a stage reading its part. */
static ts_status lower_split(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, split[256], shape[TS_MAX_DIMS], off = 0, total = 0;
	const char *idx[TS_MAX_DIMS];
	struct ox_value *x;
	int ax, count = -1;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "axis", 0, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	if (ox_attr(n, "num_outputs"))
		return ox_fail(im, n, "attribute 'num_outputs' (opset 18) is "
			"not supported");
	if (n->nout > 256)
		return ox_fail(im, n, "%d outputs, more than 256", n->nout);
	if (ox_opset(im) < 13) {
		if (ox_attr_ints(im, n, "split", split, 256, &count) < 0)
			return TS_ERROR;
	} else if (ox_has(n, 1) && ox_const_ints(im, n, 1, "the split",
	    split, 256, &count) < 0) {
		return TS_ERROR;
	}
	if (count < 0) {
		if (!n->nout || x->shape[ax] % n->nout)
			return ox_fail(im, n, "extent %lld does not split into "
				"%d equal parts", (long long)x->shape[ax],
				n->nout);
		count = n->nout;
		for (int k = 0; k < count; k++)
			split[k] = x->shape[ax] / n->nout;
	}
	if (count != n->nout)
		return ox_fail(im, n, "%d parts for %d outputs", count,
			n->nout);
	for (int k = 0; k < count; k++) {
		if (split[k] < 0)
			return ox_fail(im, n, "split[%d] is %lld", k,
				(long long)split[k]);
		total += split[k];
	}
	if (total != x->shape[ax])
		return ox_fail(im, n, "the parts add up to %lld, not the "
			"extent %lld", (long long)total,
			(long long)x->shape[ax]);
	memcpy(shape, x->shape, sizeof(shape));
	own_axes(idx, x->ndim);
	for (int k = 0; k < count; k++) {
		const char *name;

		shape[ax] = split[k];
		idx[ax] = shifted(ax, off);
		off += split[k];
		if (!(name = ox_output(im, n, k, x->dtype, x->ndim, shape)))
			continue;
		ox_stage(im, n, name, x->ndim, shape, NULL,
			ox_load(im, n, x, idx));
	}
	return TS_OK;
}

/* Slice: starts, ends and axes are attributes before opset 10; from 10
 * they are inputs (starts, ends, axes, steps).  Negative starts and ends
 * count from the end, both are clamped to the extent (to [0, d] for a
 * positive step, [-1, d - 1] for a negative one), and the count is
 * ceil((end - start) / step) when positive. */
static ts_status lower_slice(struct ox_importer *im, struct ox_node *n)
{
	int64_t starts[TS_MAX_DIMS], ends[TS_MAX_DIMS], axes[TS_MAX_DIMS];
	int64_t steps[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	int ns, ne, na = -1, nst = -1;
	bool seen[TS_MAX_DIMS] = { false };
	const char *idx[TS_MAX_DIMS], *name;
	struct ox_value *x;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_opset(im) < 10) {
		if (ox_attr_ints(im, n, "starts", starts, TS_MAX_DIMS, &ns) < 0 ||
		    ox_attr_ints(im, n, "ends", ends, TS_MAX_DIMS, &ne) < 0 ||
		    ox_attr_ints(im, n, "axes", axes, TS_MAX_DIMS, &na) < 0)
			return TS_ERROR;
		if (ns < 0 || ne < 0)
			return ox_fail(im, n, "attributes 'starts' and 'ends' "
				"are required");
	} else if (ox_const_ints(im, n, 1, "the starts", starts, TS_MAX_DIMS,
	    &ns) < 0 || ox_const_ints(im, n, 2, "the ends", ends,
	    TS_MAX_DIMS, &ne) < 0 || (ox_has(n, 3) && ox_const_ints(im, n, 3,
	    "the axes", axes, TS_MAX_DIMS, &na) < 0) || (ox_has(n, 4) &&
	    ox_const_ints(im, n, 4, "the steps", steps, TS_MAX_DIMS,
	    &nst) < 0)) {
		return TS_ERROR;
	}
	if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
		return ox_fail(im, n, "starts, ends, axes and steps have "
			"different lengths");
	memcpy(shape, x->shape, sizeof(shape));
	own_axes(idx, x->ndim);
	for (int k = 0; k < ns; k++) {
		int64_t st = nst < 0 ? 1 : steps[k], b = starts[k], e = ends[k];
		int64_t d, cnt;
		int a = k;

		if (na >= 0 && ox_axis_norm(im, n, axes[k], x->ndim, &a) < 0)
			return TS_ERROR;
		if (a >= x->ndim)
			return ox_fail(im, n, "%d starts for rank %d", ns,
				x->ndim);
		if (seen[a])
			return ox_fail(im, n, "axis %d is sliced twice", a);
		seen[a] = true;
		if (!st)
			return ox_fail(im, n, "step %d is 0", k);
		d = x->shape[a];
		b = b < 0 ? b + d : b;
		e = e < 0 ? e + d : e;
		if (st > 0) {
			b = TS_MIN(TS_MAX(b, 0), d);
			e = TS_MIN(TS_MAX(e, 0), d);
			cnt = e > b ? (e - b + st - 1) / st : 0;
		} else {
			b = TS_MIN(TS_MAX(b, 0), d - 1);
			e = TS_MIN(TS_MAX(e, -1), d - 1);
			cnt = b > e ? (b - e - st - 1) / -st : 0;
		}
		shape[a] = cnt;
		if (st == 1)
			idx[a] = shifted(a, b);
		else if (st == -1)
			idx[a] = ts_asprintf("%lld - %s", (long long)b,
				ox_axis(a));
		else
			idx[a] = ts_asprintf("%lld %c %s * %lld", (long long)b,
				st < 0 ? '-' : '+', ox_axis(a),
				(long long)(st < 0 ? -st : st));
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	ox_stage(im, n, name, x->ndim, shape, NULL, ox_numel(x->ndim, shape) ?
		ox_load(im, n, x, idx) : ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* Gather(axis): data's axis indexed by the indices, whose dimensions
 * take the axis's place; negative indices count from the end. */
static ts_status lower_gather(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, shape[TS_MAX_DIMS];
	const char *idx[TS_MAX_DIMS], *iidx[TS_MAX_DIMS], *name;
	struct ox_value *x, *ind;
	int ax, r;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "axis", 0, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	if (need_int_indices(im, n, ind) < 0 ||
	    ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	r = x->ndim - 1 + ind->ndim;
	if (r > TS_MAX_DIMS)
		return ox_fail(im, n, "rank %d is more than %d", r, TS_MAX_DIMS);
	for (int d = 0; d < ax; d++) {
		shape[d] = x->shape[d];
		idx[d] = ox_axis(d);
	}
	for (int d = 0; d < ind->ndim; d++) {
		shape[ax + d] = ind->shape[d];
		iidx[d] = ox_axis(ax + d);
	}
	for (int d = ax + 1; d < x->ndim; d++) {
		shape[d - 1 + ind->ndim] = x->shape[d];
		idx[d] = ox_axis(d - 1 + ind->ndim);
	}
	idx[ax] = wrap_index(ox_load(im, n, ind, iidx), ind->dtype,
		x->shape[ax]);
	name = ox_output(im, n, 0, x->dtype, r, shape);
	ox_stage(im, n, name, r, shape, NULL, ox_numel(r, shape) ?
		ox_load(im, n, x, idx) : ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* GatherElements(axis): the output has the indices' shape; element i
 * reads data at i with the axis's coordinate replaced by indices[i]. */
static ts_status lower_gather_elements(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t axis;
	const char *idx[TS_MAX_DIMS], *name;
	struct ox_value *x, *ind;
	int ax;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "axis", 0, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	if (need_int_indices(im, n, ind) < 0 ||
	    ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	if (ind->ndim != x->ndim)
		return ox_fail(im, n, "indices of rank %d for data of rank %d",
			ind->ndim, x->ndim);
	for (int d = 0; d < x->ndim; d++)
		if (d != ax && ind->shape[d] > x->shape[d])
			return ox_fail(im, n, "indices extent %lld exceeds the "
				"data's %lld on axis %d",
				(long long)ind->shape[d],
				(long long)x->shape[d], d);
	own_axes(idx, x->ndim);
	idx[ax] = wrap_index(ox_load_same(im, n, ind), ind->dtype,
		x->shape[ax]);
	name = ox_output(im, n, 0, x->dtype, ind->ndim, ind->shape);
	ox_stage(im, n, name, ind->ndim, ind->shape, NULL,
		ox_numel(ind->ndim, ind->shape) ? ox_load(im, n, x, idx) :
		ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* GatherND(batch_dims): the last dimension of the indices (of length m)
 * holds coordinates of data's axes batch_dims .. batch_dims + m - 1; the
 * first batch_dims axes are shared by data and indices. */
static ts_status lower_gather_nd(struct ox_importer *im, struct ox_node *n)
{
	int64_t b, m, shape[TS_MAX_DIMS];
	const char *idx[TS_MAX_DIMS], *iidx[TS_MAX_DIMS], *name;
	struct ox_value *x, *ind;
	int q, r = 0;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "batch_dims", 0, &b) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	q = ind->ndim;
	if (need_int_indices(im, n, ind) < 0)
		return TS_ERROR;
	if (q < 1 || b < 0 || b >= q || b >= x->ndim)
		return ox_fail(im, n, "batch_dims %lld for indices of rank %d "
			"and data of rank %d", (long long)b, q, x->ndim);
	m = ind->shape[q - 1];
	if (m < 1 || b + m > x->ndim)
		return ox_fail(im, n, "indices of %lld coordinates for data "
			"of rank %d after %lld batch dimensions", (long long)m,
			x->ndim, (long long)b);
	for (int d = 0; d < b; d++)
		if (ind->shape[d] != x->shape[d])
			return ox_fail(im, n, "batch dimension %d is %lld in the "
				"indices and %lld in the data", d,
				(long long)ind->shape[d],
				(long long)x->shape[d]);
	for (int d = 0; d < q - 1; d++) {
		shape[r] = ind->shape[d];
		iidx[d] = ox_axis(r++);
	}
	if (r + x->ndim - b - m > TS_MAX_DIMS)
		return ox_fail(im, n, "the result has more than %d dimensions",
			TS_MAX_DIMS);
	for (int d = 0; d < b; d++)
		idx[d] = ox_axis(d);
	for (int d = 0; d < m; d++) {
		iidx[q - 1] = ts_asprintf("%d", d);
		idx[b + d] = wrap_index(ox_load(im, n, ind, iidx), ind->dtype,
			x->shape[b + d]);
	}
	for (int d = (int)(b + m); d < x->ndim; d++) {
		shape[r] = x->shape[d];
		idx[d] = ox_axis(r++);
	}
	name = ox_output(im, n, 0, x->dtype, r, shape);
	ox_stage(im, n, name, r, shape, NULL, ox_numel(r, shape) ?
		ox_load(im, n, x, idx) : ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* Pad(mode, pads, value): pads and value are attributes before opset 11;
 * from 11, pads is an input and constant_value an optional one (the
 * axes input of opset 18 is not supported).  Modes constant, reflect
 * (mirrored without repeating the edge) and edge; a negative pad crops. */
static ts_status lower_pad(struct ox_importer *im, struct ox_node *n)
{
	int64_t pads[2 * TS_MAX_DIMS], shape[TS_MAX_DIMS];
	const char *mode, *idx[TS_MAX_DIMS], *name, *fill = NULL;
	char *cond = NULL, *body;
	struct ox_value *x;
	double value = 0;
	int np, r;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_string(im, n, "mode", "constant", &mode) < 0)
		return TS_ERROR;
	x = n->in[0];
	r = x->ndim;
	if (ox_opset(im) < 11) {
		if (ox_attr_ints(im, n, "pads", pads, 2 * TS_MAX_DIMS, &np) < 0 ||
		    ox_attr_float(im, n, "value", 0, &value) < 0)
			return TS_ERROR;
		if (np < 0)
			return ox_fail(im, n, "attribute 'pads' is missing");
	} else {
		if (ox_const_ints(im, n, 1, "the pads", pads, 2 * TS_MAX_DIMS,
		    &np) < 0)
			return TS_ERROR;
		if (ox_has(n, 3))
			return ox_fail(im, n, "the axes input (opset 18) is not "
				"supported");
		if (ox_has(n, 2)) {
			struct ox_value *c = n->in[2];
			const char *zero[TS_MAX_DIMS];

			if (c->dtype != x->dtype || ox_numel(c->ndim,
			    c->shape) != 1)
				return ox_fail(im, n, "constant_value must be "
					"one %s", ts_dtype_name(x->dtype));
			for (int d = 0; d < c->ndim; d++)
				zero[d] = "0";
			fill = ox_load(im, n, c, zero);
		}
	}
	if (np != 2 * r)
		return ox_fail(im, n, "%d pads for rank %d", np, r);
	if (strcmp(mode, "constant") && strcmp(mode, "reflect") &&
	    strcmp(mode, "edge"))
		return ox_fail(im, n, "mode '%s' is not supported (constant, "
			"reflect, edge are)", mode);
	if (!fill)
		fill = ox_lit(x->dtype, value);
	for (int d = 0; d < r; d++) {
		int64_t b = pads[d], e = pads[r + d], ext = x->shape[d];
		const char *j = shifted(d, -b);

		shape[d] = ext + b + e;
		if (shape[d] < 0)
			return ox_fail(im, n, "pads make axis %d negative", d);
		idx[d] = j;
		if (b <= 0 && e <= 0)
			continue;
		if (!ext && shape[d])
			return ox_fail(im, n, "cannot pad the empty axis %d in "
				"mode %s", d, mode);
		if (!strcmp(mode, "constant")) {
			const char *c = b > 0 && e > 0 ?
				ts_asprintf("%s >= %lld && %s < %lld",
				ox_axis(d), (long long)b, ox_axis(d),
				(long long)(b + ext)) : b > 0 ?
				ts_asprintf("%s >= %lld", ox_axis(d),
				(long long)b) : ts_asprintf("%s < %lld",
				ox_axis(d), (long long)(b + ext));

			cond = cond ? ts_asprintf("%s && %s", cond, c) :
				(char *)c;
		} else if (!strcmp(mode, "edge")) {
			idx[d] = ts_asprintf("clamp(%s, 0, %lld)", j,
				(long long)(ext - 1));
		} else {
			if (b >= ext || e >= ext)
				return ox_fail(im, n, "reflect pads %lld and "
					"%lld on axis %d of extent %lld: they "
					"must be less than the extent",
					(long long)b, (long long)e, d,
					(long long)ext);
			/* Mirror about 0 and about ext - 1. */
			idx[d] = ts_asprintf("%lld - abs(%lld - abs(%s))",
				(long long)(ext - 1), (long long)(ext - 1), j);
		}
	}
	name = ox_output(im, n, 0, x->dtype, r, shape);
	if (!ox_numel(r, shape)) {
		ox_stage(im, n, name, r, shape, NULL, ox_tlit(x->dtype, 0));
		return TS_OK;
	}
	body = ox_load(im, n, x, idx);
	if (cond)
		body = ts_asprintf("select(%s, %s, %s)", cond, body, fill);
	ox_stage(im, n, name, r, shape, NULL, body);
	return TS_OK;
}

/* Expand(shape): the input broadcast with the shape, both ways (the
 * result's rank is the larger, and extents of 1 in the shape keep the
 * input's). */
static ts_status lower_expand(struct ox_importer *im, struct ox_node *n)
{
	int64_t want[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	struct ox_value *x;
	const char *name;
	int nw, nd;

	if (ox_need(im, n, 0, 2) < 0 || ox_const_ints(im, n, 1, "the shape",
	    want, TS_MAX_DIMS, &nw) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_broadcast(im, n, x->ndim, x->shape, nw, want, &nd, shape) < 0)
		return TS_ERROR;
	name = ox_output(im, n, 0, x->dtype, nd, shape);
	ox_stage(im, n, name, nd, shape, NULL, ox_numel(nd, shape) ?
		ox_load_bcast(im, n, x, nd, shape) : ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* Tile(repeats): each axis repeated; the output reads i % extent. */
static ts_status lower_tile(struct ox_importer *im, struct ox_node *n)
{
	int64_t rep[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	const char *idx[TS_MAX_DIMS], *name;
	struct ox_value *x;
	int nr;

	if (ox_need(im, n, 0, 2) < 0 || ox_const_ints(im, n, 1,
	    "the repeats", rep, TS_MAX_DIMS, &nr) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (nr != x->ndim)
		return ox_fail(im, n, "%d repeats for rank %d", nr, x->ndim);
	for (int d = 0; d < x->ndim; d++) {
		if (rep[d] < 0)
			return ox_fail(im, n, "repeats[%d] is %lld", d,
				(long long)rep[d]);
		shape[d] = x->shape[d] * rep[d];
		idx[d] = x->shape[d] == 1 ? "0" : rep[d] == 1 ? ox_axis(d) :
			ts_asprintf("%s %% %lld", ox_axis(d),
			(long long)x->shape[d]);
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	ox_stage(im, n, name, x->ndim, shape, NULL, ox_numel(x->ndim, shape) ?
		ox_load(im, n, x, idx) : ox_tlit(x->dtype, 0));
	return TS_OK;
}

/* The block size of DepthToSpace and SpaceToDepth, for an NCHW input. */
static ts_status block_of(struct ox_importer *im, struct ox_node *n,
	int64_t *b)
{
	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	if (!ox_attr(n, "blocksize"))
		return ox_fail(im, n, "attribute 'blocksize' is missing");
	if (ox_attr_int(im, n, "blocksize", 0, b) < 0)
		return TS_ERROR;
	if (*b < 1)
		return ox_fail(im, n, "blocksize %lld", (long long)*b);
	if (n->in[0]->ndim != 4)
		return ox_fail(im, n, "input of rank %d, not 4 (NCHW)",
			n->in[0]->ndim);
	return TS_OK;
}

/* DepthToSpace(blocksize, mode): [N, C, H, W] to [N, C/b², H b, W b].
 * DCR takes the channel as (row offset, column offset, channel), CRD as
 * (channel, row offset, column offset). */
static ts_status lower_depth_to_space(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t b, c, shape[4];
	const char *mode, *idx[4], *name, *hb, *wb;
	struct ox_value *x;

	if (block_of(im, n, &b) < 0 ||
	    ox_attr_string(im, n, "mode", "DCR", &mode) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
		return ox_fail(im, n, "mode '%s' is not DCR or CRD", mode);
	if (x->shape[1] % (b * b))
		return ox_fail(im, n, "%lld channels are not a multiple of "
			"blocksize² %lld", (long long)x->shape[1],
			(long long)(b * b));
	c = x->shape[1] / (b * b);
	shape[0] = x->shape[0];
	shape[1] = c;
	shape[2] = x->shape[2] * b;
	shape[3] = x->shape[3] * b;
	hb = ts_asprintf("i2 %% %lld", (long long)b);
	wb = ts_asprintf("i3 %% %lld", (long long)b);
	idx[0] = "i0";
	if (!strcmp(mode, "DCR"))
		idx[1] = ts_asprintf("(%s) * %lld + (%s) * %lld + i1", hb,
			(long long)(b * c), wb, (long long)c);
	else
		idx[1] = ts_asprintf("i1 * %lld + (%s) * %lld + %s",
			(long long)(b * b), hb, (long long)b, wb);
	idx[2] = ts_asprintf("i2 // %lld", (long long)b);
	idx[3] = ts_asprintf("i3 // %lld", (long long)b);
	name = ox_output(im, n, 0, x->dtype, 4, shape);
	ox_stage(im, n, name, 4, shape, NULL, ox_load(im, n, x, idx));
	return TS_OK;
}

/* SpaceToDepth(blocksize): [N, C, H, W] to [N, C b², H/b, W/b], the
 * channel taken as (row offset, column offset, channel). */
static ts_status lower_space_to_depth(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t b, c, shape[4];
	const char *idx[4], *name;
	struct ox_value *x;

	if (block_of(im, n, &b) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (x->shape[2] % b || x->shape[3] % b)
		return ox_fail(im, n, "spatial extents %lldx%lld are not "
			"multiples of blocksize %lld", (long long)x->shape[2],
			(long long)x->shape[3], (long long)b);
	c = x->shape[1];
	shape[0] = x->shape[0];
	shape[1] = c * b * b;
	shape[2] = x->shape[2] / b;
	shape[3] = x->shape[3] / b;
	idx[0] = "i0";
	idx[1] = ts_asprintf("i1 %% %lld", (long long)c);
	idx[2] = ts_asprintf("i2 * %lld + i1 // %lld", (long long)b,
		(long long)(c * b));
	idx[3] = ts_asprintf("i3 * %lld + i1 // %lld %% %lld", (long long)b,
		(long long)c, (long long)b);
	name = ox_output(im, n, 0, x->dtype, 4, shape);
	ox_stage(im, n, name, 4, shape, NULL, ox_load(im, n, x, idx));
	return TS_OK;
}

/* Trilu(upper, k): the upper (j - i >= k) or lower (j - i <= k) triangle
 * of the last two axes, zero elsewhere; k is an optional input. */
static ts_status lower_trilu(struct ox_importer *im, struct ox_node *n)
{
	int64_t upper, k = 0;
	struct ox_value *x;
	const char *name, *row, *col;
	int r, cnt;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "upper", 1, &upper) < 0)
		return TS_ERROR;
	if (ox_has(n, 1) && ox_const_ints(im, n, 1, "k", &k, 1, &cnt) < 0)
		return TS_ERROR;
	x = n->in[0];
	r = x->ndim;
	if (r < 2)
		return ox_fail(im, n, "input of rank %d, not at least 2", r);
	name = ox_output(im, n, 0, x->dtype, r, x->shape);
	if (!ox_numel(r, x->shape)) {
		ox_stage(im, n, name, r, x->shape, NULL, ox_tlit(x->dtype, 0));
		return TS_OK;
	}
	row = ox_axis(r - 2);
	col = ox_axis(r - 1);
	ox_stage(im, n, name, r, x->shape, NULL, ts_asprintf(
		"select(%s - %s %s %s, %s, %s)", col, row, upper ? ">=" : "<=",
		k < 0 ? ts_asprintf("(%lld)", (long long)k) :
		ts_asprintf("%lld", (long long)k), ox_load_same(im, n, x),
		ox_lit(x->dtype, 0)));
	return TS_OK;
}

/* OneHot(axis): indices (negative ones count from depth), a depth known
 * at import and values [off, on]; a new axis of extent depth at "axis"
 * holds on where it equals the index.  Float indices are truncated. */
static ts_status lower_one_hot(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, depth, shape[TS_MAX_DIMS];
	const char *iidx[TS_MAX_DIMS], *name, *e, *v0[1] = { "0" },
		*v1[1] = { "1" };
	struct ox_value *ind, *val;
	double dd;
	int ax, r, j = 0;

	if (ox_need(im, n, 0, 3) < 0 || ox_need(im, n, 1, 3) < 0 ||
	    ox_need(im, n, 2, 3) < 0 ||
	    ox_attr_int(im, n, "axis", -1, &axis) < 0)
		return TS_ERROR;
	if (!n->in[1]->konst)
		return ox_fail(im, n, "the depth (input 1, '%s') must be known "
			"at import, not computed at run time", n->in[1]->onnx);
	if (ox_const_float(im, n, 1, "the depth", 0, &dd) < 0)
		return TS_ERROR;
	ind = n->in[0];
	val = n->in[2];
	r = ind->ndim + 1;
	depth = (int64_t)dd;
	if (r > TS_MAX_DIMS)
		return ox_fail(im, n, "rank %d is more than %d", r, TS_MAX_DIMS);
	if (depth < 1)
		return ox_fail(im, n, "depth %lld", (long long)depth);
	if (ind->dtype == TS_BOOL)
		return ox_fail(im, n, "indices of type bool");
	if (val->ndim != 1 || val->shape[0] != 2)
		return ox_fail(im, n, "values must be [off, on]");
	if (ox_axis_norm(im, n, axis, r, &ax) < 0)
		return TS_ERROR;
	for (int d = 0; d < r; d++) {
		if (d == ax) {
			shape[d] = depth;
			continue;
		}
		shape[d] = ind->shape[j];
		iidx[j++] = ox_axis(d);
	}
	e = ox_load(im, n, ind, iidx);
	if (ind->dtype != TS_I64)
		e = ts_asprintf("i64(%s)", e);
	name = ox_output(im, n, 0, val->dtype, r, shape);
	ox_stage(im, n, name, r, shape, NULL, ts_asprintf(
		"select(%s == select(%s < 0, %s + %lld, %s), %s, %s)",
		ox_axis(ax), e, e, (long long)depth, e,
		ox_load(im, n, val, v1), ox_load(im, n, val, v0)));
	return TS_OK;
}

/* CumSum(exclusive, reverse): running sums along the axis (an input
 * known at import); a sum over the axis of the terms before (or after)
 * the position. */
static ts_status lower_cumsum(struct ox_importer *im, struct ox_node *n)
{
	int64_t axis, excl, rev;
	const char *idx[TS_MAX_DIMS], *name, *red, *op;
	struct ox_value *x;
	int ax, cnt;

	if (ox_need(im, n, 0, 2) < 0 ||
	    ox_const_ints(im, n, 1, "the axis", &axis, 1, &cnt) < 0 ||
	    ox_attr_int(im, n, "exclusive", 0, &excl) < 0 ||
	    ox_attr_int(im, n, "reverse", 0, &rev) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (cnt != 1)
		return ox_fail(im, n, "the axis must be one value");
	if (x->dtype == TS_BOOL)
		return ox_fail(im, n, "input of type bool is not supported");
	if (ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	if (!ox_numel(x->ndim, x->shape)) {
		ox_stage(im, n, name, x->ndim, x->shape, NULL,
			ox_tlit(x->dtype, 0));
		return TS_OK;
	}
	red = ox_raxis(n);
	own_axes(idx, x->ndim);
	idx[ax] = red;
	op = rev ? (excl ? ">" : ">=") : (excl ? "<" : "<=");
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"sum(%s: %lld) select(%s %s %s, %s, %s)", red,
		(long long)x->shape[ax], red, op, ox_axis(ax),
		ox_load(im, n, x, idx), ox_lit(x->dtype, 0)));
	return TS_OK;
}

/* EyeLike(dtype, k): ones on the k-th diagonal of a matrix shaped like
 * the input, of the input's dtype unless "dtype" says otherwise. */
static ts_status lower_eye_like(struct ox_importer *im, struct ox_node *n)
{
	int64_t k, dt;
	struct ox_value *x;
	const char *name;
	ts_dtype t;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "k", 0, &k) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (ox_attr(n, "dtype") && (ox_attr_int(im, n, "dtype", 0, &dt) < 0 ||
	    ox_dtype(im, n, (int)dt, &t) < 0))
		return TS_ERROR;
	if (x->ndim != 2)
		return ox_fail(im, n, "input of rank %d, not 2", x->ndim);
	name = ox_output(im, n, 0, t, 2, x->shape);
	ox_stage(im, n, name, 2, x->shape, &t, ts_asprintf(
		"select(i1 - i0 == %s, %s, %s)", k < 0 ?
		ts_asprintf("(%lld)", (long long)k) :
		ts_asprintf("%lld", (long long)k), ox_tlit(t, 1),
		ox_tlit(t, 0)));
	return TS_OK;
}

/* Resize and Upsample.  Every output position of a resized axis reads a
 * few input positions (taps) with weights that depend only on the
 * position, so they are computed here, in double precision like ONNX's
 * reference, and the stage combines the taps of all resized axes.  An
 * axis whose positions each read one input position with weight 1 (all
 * of nearest, and an unscaled axis) is a plain index: the axis itself,
 * i // k, i * k, or else a table of positions; the others read tables of
 * positions and weights. */

struct resize {
	const char *mode;	/* nearest, linear, cubic */
	const char *ctm;	/* coordinate_transformation_mode */
	const char *nearest;	/* nearest_mode */
	double cubic_a;
	int64_t exclude;	/* exclude_outside */
	bool f32_scales;	/* scales given as f32: the reference's f32 */
	const double *roi;	/* 2 * rank, tf_crop_and_resize only */
};

/* The taps of one axis: "n" per output position; position "i" reads
 * input idx[t * out + i] with weight w[t * out + i]; valid[i] is false
 * where tf_crop_and_resize extrapolates (NULL: valid everywhere). */
struct taps {
	int n;
	int64_t *idx;
	double *w;
	bool *valid;
};

/* The coefficients for the fractional position "ratio" in (0, 1]. */
static int resize_coeffs(const struct resize *rs, double ratio, double *c)
{
	double a = rs->cubic_a, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;

	if (!strcmp(rs->mode, "linear")) {
		c[0] = 1 - ratio;
		c[1] = ratio;
		return 2;
	}
	if (!strcmp(rs->mode, "cubic")) {
		c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
		c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
		c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
		c[3] = ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
		return 4;
	}
	c[0] = 0;
	c[1] = 1;
	if (ratio == 1 || !strcmp(rs->nearest, "ceil"))
		return 2;
	if (!strcmp(rs->nearest, "floor"))
		c[0] = 1;
	else if (!strcmp(rs->nearest, "round_prefer_ceil"))
		c[0] = ratio < 0.5;
	else
		c[0] = ratio <= 0.5;
	c[1] = 1 - c[0];
	return 2;
}

/* The input coordinate of output position "x" on axis "d"; "*valid" is
 * false where tf_crop_and_resize extrapolates. */
static double resize_coord(const struct resize *rs, int d, int rank,
	double x, double s, double ow, int64_t in, bool *valid)
{
	const char *m = rs->ctm;
	double owm1 = rs->f32_scales ? (double)((float)ow - 1.0f) : ow - 1;

	*valid = true;
	if (!strcmp(m, "half_pixel"))
		return (x + 0.5) / s - 0.5;
	if (!strcmp(m, "pytorch_half_pixel"))
		return ow == 1 ? 0 : (x + 0.5) / s - 0.5;
	if (!strcmp(m, "align_corners"))
		return ow == 1 ? 0 : x * (double)(in - 1) / owm1;
	if (!strcmp(m, "asymmetric"))
		return x / s;
	if (!strcmp(m, "tf_half_pixel_for_nn"))
		return (x + 0.5) / s;
	/* tf_crop_and_resize, with the roi's f32 arithmetic. */
	{
		float r0 = (float)rs->roi[d], r1 = (float)rs->roi[rank + d];
		double xo = ow == 1 ? (double)(r1 - r0) * (double)(in - 1) / 2 :
			x * (double)(r1 - r0) * (double)(in - 1) / owm1;

		xo += (double)(r0 * (float)(in - 1));
		*valid = !(xo < 0 || xo > (double)(in - 1));
		return xo;
	}
}

/* The distinct taps of one output position. */
struct tap4 {
	int64_t idx[4];
	double w[4];
	int cnt;
};

/* The taps of axis "d" from extent "in" to "out" at scale "s" ("ow" is
 * the reference's output width, the scale times the input extent). */
static void resize_taps(const struct resize *rs, int d, int rank, int64_t in,
	int64_t out, double s, double ow, struct taps *tp)
{
	struct tap4 *pos = ts_new_array(struct tap4, out + 1);
	bool any_invalid = false;

	tp->n = 1;
	tp->valid = ts_new_array(bool, out + 1);
	for (int64_t i = 0; i < out; i++) {
		double x = resize_coord(rs, d, rank, (double)i, s, ow, in,
			&tp->valid[i]);
		double fl = floor(x), ratio = x == fl ? 1 : x - fl, c[4], sum = 0;
		int nc = resize_coeffs(rs, ratio, c), pad = (nc + 1) / 2;
		/* The nc nearest positions of the input padded by its edges,
		 * the smaller first, as the reference picks them. */
		int64_t start = (int64_t)(x - ratio) - (nc / 2 - 1) + pad;

		any_invalid |= !tp->valid[i];
		start = TS_MAX(TS_MIN(start, in + 2 * pad - nc), 0);
		for (int k = 0; k < nc; k++) {
			int64_t p = start + k - pad;

			if (rs->exclude && (p < 0 || p >= in))
				c[k] = 0;
			sum += c[k];
		}
		for (int k = 0; k < nc; k++) {
			int64_t p = TS_MIN(TS_MAX(start + k - pad, 0), in - 1);
			double cw = rs->exclude ? c[k] / sum : c[k];
			int j;

			if (cw == 0)
				continue;
			for (j = 0; j < pos[i].cnt && pos[i].idx[j] != p; j++)
				;
			if (j == pos[i].cnt) {
				pos[i].idx[j] = p;
				pos[i].w[pos[i].cnt++] = 0;
			}
			pos[i].w[j] += cw;
		}
		tp->n = TS_MAX(tp->n, pos[i].cnt);
	}
	if (!any_invalid)
		tp->valid = NULL;
	tp->idx = ts_new_array(int64_t, tp->n * out + 1);
	tp->w = ts_new_array(double, tp->n * out + 1);
	for (int t = 0; t < tp->n; t++)
		for (int64_t i = 0; i < out; i++) {
			tp->idx[t * out + i] = t < pos[i].cnt ?
				pos[i].idx[t] : pos[i].cnt ? pos[i].idx[0] : 0;
			tp->w[t * out + i] = t < pos[i].cnt ? pos[i].w[t] : 0;
		}
}

/* The index of a one-tap axis "d": closed forms where the positions
 * follow one, else a table. */
static const char *gather_index(struct ox_importer *im, struct ox_node *n,
	int d, int64_t in, int64_t out, const int64_t *p)
{
	const char *ax = ox_axis(d), *one[1];
	struct ox_value *v;
	int64_t k;
	bool same = true;

	for (int64_t i = 0; i < out && same; i++)
		same = p[i] == p[0];
	if (same || out == 1)
		return ts_asprintf("%lld", (long long)p[0]);
	for (k = 0; k < out && p[k] == k; k++)
		;
	if (k == out)
		return ax;
	for (k = TS_MAX(out / in, 2); k <= out / in + 1; k++) {
		same = p[0] == 0;
		for (int64_t i = 0; i < out && same; i++)
			same = p[i] == i / k;
		if (same)
			return ts_asprintf("%s // %lld", ax, (long long)k);
	}
	k = p[1] - p[0];
	same = p[0] == 0 && k > 1;
	for (int64_t i = 0; i < out && same; i++)
		same = p[i] == i * k;
	if (same)
		return ts_asprintf("%s * %lld", ax, (long long)k);
	v = ox_new_const(im, n, ts_asprintf("index%d", d), TS_I64, 1, &out);
	memcpy(v->konst->data, p, sizeof(int64_t) * (size_t)out);
	one[0] = ax;
	return ox_load(im, n, v, one);
}

/* The stage of a resize of input 0 to "shape" with the taps "tp" of
 * each axis. */
static ts_status resize_stage(struct ox_importer *im, struct ox_node *n,
	const int64_t *shape, struct taps *tp, double extrap)
{
	struct ox_value *x = n->in[0], *wt[TS_MAX_DIMS] = { NULL };
	struct ox_value *it[TS_MAX_DIMS] = { NULL };
	const char *idx[TS_MAX_DIMS], *name;
	ts_dtype t = x->dtype, ft = t == TS_F64 ? TS_F64 : TS_F32;
	int r = x->ndim, interp[TS_MAX_DIMS], ni = 0;
	char *body, *valid = NULL, *weights = NULL, *binders = NULL, *ld;

	for (int d = 0; d < r; d++) {
		bool one = tp[d].n == 1;
		int64_t out = shape[d], sh[2] = { tp[d].n, out };

		for (int64_t i = 0; i < out && one; i++)
			one = fabs(tp[d].w[i] - 1) < 1e-9;
		if (one) {
			idx[d] = gather_index(im, n, d, x->shape[d], out,
				tp[d].idx);
		} else {
			if (!ts_dtype_is_float(t))
				return ox_fail(im, n, "mode %s needs a float "
					"input, not %s", "linear or cubic",
					ts_dtype_name(t));
			it[d] = ox_new_const(im, n, ts_asprintf("index%d", d),
				TS_I64, 2, sh);
			memcpy(it[d]->konst->data, tp[d].idx,
				sizeof(int64_t) * (size_t)(tp[d].n * out));
			wt[d] = ox_new_const(im, n, ts_asprintf("weight%d", d),
				ft, 2, sh);
			for (int64_t k = 0; k < tp[d].n * out; k++)
				ts_array_set(wt[d]->konst, k, tp[d].w[k]);
			interp[ni++] = d;
		}
		if (tp[d].valid) {
			struct ox_value *v = ox_new_const(im, n,
				ts_asprintf("valid%d", d), TS_BOOL, 1, &out);
			const char *one_ax[1] = { ox_axis(d) };
			char *c;

			for (int64_t i = 0; i < out; i++)
				ts_array_set(v->konst, i, tp[d].valid[i]);
			c = ox_load(im, n, v, one_ax);
			valid = valid ? ts_asprintf("%s && %s", valid, c) : c;
		}
	}
	/* A sum over the taps of the interpolated axes. */
	for (int k = 0; k < ni; k++) {
		int d = interp[k];
		const char *ti[2], *ra = ox_raxis(n);

		ti[0] = ra;
		ti[1] = ox_axis(d);
		idx[d] = ox_load(im, n, it[d], ti);
		ld = ox_load(im, n, wt[d], ti);
		weights = weights ? ts_asprintf("%s * %s", weights, ld) : ld;
		binders = ts_asprintf("%s%s%s: %d", binders ? binders : "",
			binders ? ", " : "", ra, tp[d].n);
	}
	body = ox_load(im, n, x, idx);
	if (t != ft)
		body = ts_asprintf("%s(%s)", ts_dtype_name(ft), body);
	if (ni)
		body = ts_asprintf("(sum(%s) %s * %s)", binders, weights, body);
	if (valid)
		body = ts_asprintf("select(%s, %s, %s)", valid, body,
			ox_lit(ft, extrap));
	name = ox_output(im, n, 0, t, r, shape);
	ox_stage(im, n, name, r, shape, t != ft ? &t : NULL, body);
	return TS_OK;
}

/* The float values of input "k", known at import. */
static ts_status const_floats(struct ox_importer *im, struct ox_node *n,
	int k, const char *what, double *v, int max, int *count)
{
	const struct ox_value *in = n->in[k];

	if (!in->konst)
		return ox_fail(im, n, "%s (input %d, '%s') must be known at "
			"import, not computed at run time", what, k, in->onnx);
	if (in->konst->size > max)
		return ox_fail(im, n, "%s (input %d) has %lld values, more "
			"than %d", what, k, (long long)in->konst->size, max);
	for (int64_t i = 0; i < in->konst->size; i++)
		v[i] = ts_array_get(in->konst, i);
	*count = (int)in->konst->size;
	return TS_OK;
}

/* Resize the input with the scales (or sizes) and the method "rs". */
static ts_status resize_with(struct ox_importer *im, struct ox_node *n,
	struct resize *rs, const double *scales, const int64_t *sizes,
	double extrap)
{
	struct ox_value *x = n->in[0];
	int64_t shape[TS_MAX_DIMS];
	struct taps tp[TS_MAX_DIMS];
	int r = x->ndim;

	if (strcmp(rs->mode, "nearest") && strcmp(rs->mode, "linear") &&
	    strcmp(rs->mode, "cubic"))
		return ox_fail(im, n, "mode '%s' is not supported (nearest, "
			"linear, cubic are)", rs->mode);
	if (strcmp(rs->nearest, "round_prefer_floor") &&
	    strcmp(rs->nearest, "round_prefer_ceil") &&
	    strcmp(rs->nearest, "floor") && strcmp(rs->nearest, "ceil"))
		return ox_fail(im, n, "nearest_mode '%s' is not supported",
			rs->nearest);
	for (int d = 0; d < r; d++) {
		double s, ow;

		if (sizes) {
			shape[d] = sizes[d];
			s = (double)sizes[d] / (double)x->shape[d];
			ow = s * (double)x->shape[d];
		} else {
			s = scales[d];
			shape[d] = (int64_t)floor(s * (double)x->shape[d]);
			ow = (double)((float)s * (float)x->shape[d]);
		}
		if (!(s > 0) || shape[d] < 1 || x->shape[d] < 1)
			return ox_fail(im, n, "axis %d of extent %lld cannot be "
				"resized to %lld (scale %g)", d,
				(long long)x->shape[d], (long long)shape[d], s);
		resize_taps(rs, d, r, x->shape[d], shape[d], s, ow, &tp[d]);
	}
	return resize_stage(im, n, shape, tp, extrap);
}

/* Resize: opset 10 (X, scales; asymmetric coordinates, nearest rounding
 * down when enlarging and up when shrinking) and opsets 11 to 13 (X,
 * roi, scales, sizes; coordinate_transformation_mode, nearest_mode,
 * cubic_coeff_a, exclude_outside, extrapolation_value).  Modes nearest,
 * linear and cubic, separable over the axes. */
static ts_status lower_resize(struct ox_importer *im, struct ox_node *n)
{
	struct resize rs = { 0 };
	double scales[TS_MAX_DIMS], roi[2 * TS_MAX_DIMS], extrap;
	int64_t sizes[TS_MAX_DIMS];
	int r, ns = 0, nz = -1, nr;
	struct ox_value *x;

	if (ox_need(im, n, 0, 2) < 0 ||
	    ox_attr_string(im, n, "mode", "nearest", &rs.mode) < 0 ||
	    ox_attr_string(im, n, "coordinate_transformation_mode",
	    "half_pixel", &rs.ctm) < 0 ||
	    ox_attr_string(im, n, "nearest_mode", "round_prefer_floor",
	    &rs.nearest) < 0 ||
	    ox_attr_float(im, n, "cubic_coeff_a", -0.75, &rs.cubic_a) < 0 ||
	    ox_attr_int(im, n, "exclude_outside", 0, &rs.exclude) < 0 ||
	    ox_attr_float(im, n, "extrapolation_value", 0, &extrap) < 0)
		return TS_ERROR;
	x = n->in[0];
	r = x->ndim;
	if (ox_opset(im) < 11) {
		if (ox_need(im, n, 1, 2) < 0 || const_floats(im, n, 1,
		    "the scales", scales, TS_MAX_DIMS, &ns) < 0)
			return TS_ERROR;
		if (ns != r)
			return ox_fail(im, n, "%d scales for rank %d", ns, r);
		rs.ctm = "asymmetric";
		rs.f32_scales = true;
		if (!strcmp(rs.mode, "nearest"))
			rs.nearest = "floor";
		for (int d = 0; d < r; d++)
			if (!strcmp(rs.mode, "nearest") && scales[d] < 1)
				return ox_fail(im, n, "nearest shrinking at "
					"opset 10 is not supported");
		return resize_with(im, n, &rs, scales, NULL, 0);
	}
	if (ox_has(n, 2) && const_floats(im, n, 2, "the scales", scales,
	    TS_MAX_DIMS, &ns) < 0)
		return TS_ERROR;
	if (ox_has(n, 3) && ox_const_ints(im, n, 3, "the sizes", sizes,
	    TS_MAX_DIMS, &nz) < 0)
		return TS_ERROR;
	if (ns > 0 && nz > 0)
		return ox_fail(im, n, "both scales and sizes are given");
	if (ns > 0 ? ns != r : nz != r)
		return ox_fail(im, n, "%d %s for rank %d", ns > 0 ? ns : nz,
			ns > 0 ? "scales" : "sizes", r);
	if (!strcmp(rs.ctm, "tf_crop_and_resize")) {
		if (!ox_has(n, 1) || const_floats(im, n, 1, "the roi", roi,
		    2 * TS_MAX_DIMS, &nr) < 0)
			return ox_has(n, 1) ? TS_ERROR : ox_fail(im, n,
				"tf_crop_and_resize needs the roi");
		if (nr != 2 * r)
			return ox_fail(im, n, "roi of %d values for rank %d",
				nr, r);
		rs.roi = roi;
	} else if (strcmp(rs.ctm, "half_pixel") &&
	    strcmp(rs.ctm, "pytorch_half_pixel") &&
	    strcmp(rs.ctm, "align_corners") && strcmp(rs.ctm, "asymmetric") &&
	    strcmp(rs.ctm, "tf_half_pixel_for_nn")) {
		return ox_fail(im, n, "coordinate_transformation_mode '%s' is "
			"not supported", rs.ctm);
	}
	rs.f32_scales = ns > 0;
	return resize_with(im, n, &rs, scales, ns > 0 ? NULL : sizes, extrap);
}

/* Upsample (opsets 7 to 9, deprecated): scales an attribute at opset 7
 * and an input from 9; modes nearest (rounding down) and linear, with
 * asymmetric coordinates. */
static ts_status lower_upsample(struct ox_importer *im, struct ox_node *n)
{
	struct resize rs = { 0 };
	double scales[TS_MAX_DIMS];
	int ns;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_string(im, n, "mode", "nearest", &rs.mode) < 0)
		return TS_ERROR;
	if (ox_opset(im) > 9)
		return ox_fail(im, n, "Upsample is removed from opset 10 on");
	if (ox_opset(im) < 9) {
		if (ox_attr_floats(im, n, "scales", scales, TS_MAX_DIMS,
		    &ns) < 0)
			return TS_ERROR;
	} else if (ox_need(im, n, 1, 2) < 0 || const_floats(im, n, 1,
	    "the scales", scales, TS_MAX_DIMS, &ns) < 0) {
		return TS_ERROR;
	}
	if (ns != n->in[0]->ndim)
		return ox_fail(im, n, "%d scales for rank %d", ns,
			n->in[0]->ndim);
	if (!strcmp(rs.mode, "bilinear"))
		rs.mode = "linear";
	if (!strcmp(rs.mode, "cubic"))
		return ox_fail(im, n, "mode 'cubic' is not an Upsample mode");
	for (int d = 0; d < ns; d++)
		if (scales[d] < 1)
			return ox_fail(im, n, "scale %g is less than 1",
				scales[d]);
	rs.ctm = "asymmetric";
	rs.nearest = "floor";
	rs.f32_scales = true;
	return resize_with(im, n, &rs, scales, NULL, 0);
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
	{ "ConstantFill", lower_constant_fill },
	{ "Range", lower_range },
	{ "Concat", lower_concat },
	{ "Split", lower_split },
	{ "Slice", lower_slice },
	{ "Gather", lower_gather },
	{ "GatherElements", lower_gather_elements },
	{ "GatherND", lower_gather_nd },
	{ "Pad", lower_pad },
	{ "Expand", lower_expand },
	{ "Tile", lower_tile },
	{ "DepthToSpace", lower_depth_to_space },
	{ "SpaceToDepth", lower_space_to_depth },
	{ "Trilu", lower_trilu },
	{ "OneHot", lower_one_hot },
	{ "CumSum", lower_cumsum },
	{ "EyeLike", lower_eye_like },
	{ "Resize", lower_resize },
	{ "Upsample", lower_upsample },
	{ NULL, NULL },
};
