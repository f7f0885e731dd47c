/* The importer on models built here with the protobuf-c structs of
 * onnx.proto: BatchNormalization folded into the Conv before it, which
 * ONNX's node tests do not exercise. */
#include <config.h>

#include <math.h>

#include "tests/common.h"
#include "onnx/onnx.pb-c.h"

/* Model construction: everything malloc'd and left (a test). */

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);

	assert_non_null(p);
	return p;
}

static Onnx__TensorProto *tensor(const char *name, int ndim,
	const int64_t *dims, const float *v)
{
	Onnx__TensorProto *t = zalloc(sizeof(*t));
	size_t count = 1;

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = (size_t)ndim;
	t->dims = (int64_t *)dims;
	for (int i = 0; i < ndim; i++)
		count *= (size_t)dims[i];
	t->n_float_data = count;
	t->float_data = (float *)v;
	return t;
}

static Onnx__ValueInfoProto *value_info(const char *name, int ndim,
	const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = zalloc(sizeof(*vi));
	Onnx__TypeProto *tp = zalloc(sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = zalloc(sizeof(*tt));
	Onnx__TensorShapeProto *sh = zalloc(sizeof(*sh));

	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	sh->n_dim = (size_t)ndim;
	sh->dim = zalloc(sizeof(*sh->dim) * (size_t)ndim);
	for (int i = 0; i < ndim; i++) {
		Onnx__TensorShapeProto__Dimension *d = zalloc(sizeof(*d));

		onnx__tensor_shape_proto__dimension__init(d);
		d->value_case =
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d->dim_value = dims[i];
		sh->dim[i] = d;
	}
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = (char *)name;
	vi->type = tp;
	return vi;
}

static Onnx__NodeProto *node(const char *op, int nin, const char **in,
	const char *out)
{
	Onnx__NodeProto *n = zalloc(sizeof(*n));

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = (size_t)nin;
	n->input = (char **)in;
	n->n_output = 1;
	n->output = zalloc(sizeof(char *));
	n->output[0] = (char *)out;
	return n;
}

static void add_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
	n->attribute = realloc(n->attribute, sizeof(*n->attribute) *
		(n->n_attribute + 1));
	n->attribute[n->n_attribute++] = a;
}

static Onnx__AttributeProto *attr_ints(const char *name, int count,
	const int64_t *v)
{
	Onnx__AttributeProto *a = zalloc(sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = (size_t)count;
	a->ints = (int64_t *)v;
	return a;
}

static Onnx__AttributeProto *attr_float(const char *name, float v)
{
	Onnx__AttributeProto *a = zalloc(sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	return a;
}

/* The serialized model of "g" at opset 13; its size in "*len". */
static void *pack(Onnx__GraphProto *g, size_t *len)
{
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto op, *ops[1] = { &op };
	void *buf;

	onnx__model_proto__init(&m);
	onnx__operator_set_id_proto__init(&op);
	op.domain = "";
	op.has_version = 1;
	op.version = 13;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.n_opset_import = 1;
	m.opset_import = ops;
	m.graph = g;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = zalloc(*len + 1);
	onnx__model_proto__pack(&m, buf);
	return buf;
}

/* Conv (3x3, pads 1, 2 -> 3 channels, with or without bias) followed by
 * BatchNormalization (epsilon 1e-3); "extra" makes the conv's output a
 * graph output too, which forbids folding. */
enum { C = 2, M = 3, H = 5, W = 4 };

static const int64_t xdims[] = { 1, C, H, W }, ydims[] = { 1, M, H, W };
static const int64_t wdims[] = { M, C, 3, 3 }, mdims[] = { M };
static const int64_t pads[] = { 1, 1, 1, 1 };
static float wv[M * C * 9], bv[M];
static const float scale[M] = { 0.5f, -1.25f, 2.0f };
static const float shift[M] = { 0.1f, 0.0f, -0.7f };
static const float mean[M] = { 0.3f, -0.2f, 1.5f };
static const float var[M] = { 0.8f, 2.5f, 0.05f };
static const float eps = 1e-3f;

static void *conv_bn_model(bool bias, bool extra, size_t *len)
{
	static const char *cin[] = { "X", "Wt", "Bs" };
	static const char *bnin[] = { "T", "scale", "shift", "mean", "var" };
	Onnx__GraphProto *g = zalloc(sizeof(*g));
	Onnx__NodeProto *conv, *bn;

	for (int i = 0; i < M * C * 9; i++)
		wv[i] = (float)((i * 37 % 19) - 9) / 8.0f;
	for (int i = 0; i < M; i++)
		bv[i] = 0.25f * (float)(i + 1);
	onnx__graph_proto__init(g);
	g->name = "conv_bn";
	conv = node("Conv", bias ? 3 : 2, cin, "T");
	add_attr(conv, attr_ints("pads", 4, pads));
	bn = node("BatchNormalization", 5, bnin, "Y");
	add_attr(bn, attr_float("epsilon", eps));
	g->n_node = 2;
	g->node = zalloc(sizeof(*g->node) * 2);
	g->node[0] = conv;
	g->node[1] = bn;
	g->n_initializer = 6;
	g->initializer = zalloc(sizeof(*g->initializer) * 6);
	g->initializer[0] = tensor("Wt", 4, wdims, wv);
	g->initializer[1] = tensor("scale", 1, mdims, scale);
	g->initializer[2] = tensor("shift", 1, mdims, shift);
	g->initializer[3] = tensor("mean", 1, mdims, mean);
	g->initializer[4] = tensor("var", 1, mdims, var);
	g->initializer[5] = tensor("Bs", 1, mdims, bv);
	g->n_input = 1;
	g->input = zalloc(sizeof(*g->input));
	g->input[0] = value_info("X", 4, xdims);
	g->n_output = extra ? 2 : 1;
	g->output = zalloc(sizeof(*g->output) * 2);
	g->output[0] = value_info("Y", 4, ydims);
	g->output[1] = value_info("T", 4, ydims);
	return pack(g, len);
}

/* Y of the model on "x", in double. */
static double reference(const ts_array *x, bool bias, int m, int h, int w)
{
	double acc = bias ? bv[m] : 0;

	for (int c = 0; c < C; c++)
		for (int r = 0; r < 3; r++)
			for (int s = 0; s < 3; s++) {
				int y = h + r - 1, z = w + s - 1;

				if (y < 0 || y >= H || z < 0 || z >= W)
					continue;
				acc += ts_array_get(x, (c * H + y) * W + z) *
					wv[((m * C + c) * 3 + r) * 3 + s];
			}
	return (acc - mean[m]) / sqrt((double)var[m] + eps) * scale[m] +
		shift[m];
}

static void check_folded(void **state, bool bias)
{
	ts_ctx *ctx = *state;
	size_t len;
	void *bytes = conv_bn_model(bias, false, &len);
	ts_onnx_model *m = ts_onnx_import_bytes(ctx, "conv_bn.onnx", bytes,
		len, NULL);
	ts_array **args, *outs[1];
	const ts_array *x = NULL;
	ts_dag *dag;
	int reductions = 0;

	assert_non_null(m);
	dag = ts_onnx_dag(m);
	/* One convolution, nothing of the normalisation left. */
	for (int i = 0; i < dag->nstages; i++)
		reductions += dag->stages[i]->nraxes > 0;
	assert_int_equal(reductions, 1);
	assert_null(strstr(ts_onnx_source(m), "sqrt"));
	assert_null(ts_onnx_find_weight(m, "mean"));
	assert_null(ts_onnx_find_weight(m, "var"));
	assert_int_equal(ts_onnx_nweights(m), 2);
	args = ts_onnx_inputs(ctx, m, 3);
	assert_non_null(args);
	for (int i = 0; i < dag->ninputs; i++)
		if (!strcmp(dag->inputs[i]->name, "X"))
			x = args[i];
	assert_non_null(x);
	assert_int_equal(ts_eval(ctx, dag, args, outs), TS_OK);
	assert_int_equal(outs[0]->size, M * H * W);
	for (int c = 0; c < M; c++)
		for (int h = 0; h < H; h++)
			for (int w = 0; w < W; w++) {
				double want = reference(x, bias, c, h, w);
				double got = ts_array_get(outs[0],
					(c * H + h) * W + w);

				assert_true(fabs(got - want) <=
					1e-5 + 1e-5 * fabs(want));
			}
}

static void test_bn_folded_into_conv__with_bias(void **state)
{
	check_folded(state, true);
}

static void test_bn_folded_into_conv__without_bias(void **state)
{
	check_folded(state, false);
}

/* The conv's output is also a graph output: the BN stays a node of its
 * own (lowered, or refused where it is not supported). */
static void test_bn_not_folded__conv_output_read_twice(void **state)
{
	ts_ctx *ctx = *state;
	size_t len;
	void *bytes = conv_bn_model(true, true, &len);
	ts_onnx_model *m = ts_onnx_import_bytes(ctx, "conv_bn.onnx", bytes,
		len, NULL);

	if (!m) {
		assert_error_contains(ctx, "BatchNormalization");
		return;
	}
	assert_non_null(ts_onnx_find_weight(m, "mean"));
	assert_non_null(ts_onnx_find_weight(m, "Wt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_bn_folded_into_conv__with_bias),
		TS_TEST(test_bn_folded_into_conv__without_bias),
		TS_TEST(test_bn_not_folded__conv_output_read_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
