/* Small ONNX models built in C for the tests, with the protobuf-c
 * bindings the build generates: a graph of nodes, inputs, outputs and
 * initializers, packed into the bytes of a file.  Memory is never freed
 * (a test builds a few models). */
#ifndef TESSEL_TESTS_ONNX_BUILDER_H
#define TESSEL_TESTS_ONNX_BUILDER_H

#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"

struct mb {
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto opset, *opsets[1];
};

#define MB_GROW(arr, n) \
	((arr) = realloc((arr), sizeof(*(arr)) * ((n) + 1)), &(arr)[(n)++])

static inline struct mb *mb_new(int opset)
{
	struct mb *b = calloc(1, sizeof(*b));

	onnx__model_proto__init(&b->model);
	onnx__graph_proto__init(&b->graph);
	onnx__operator_set_id_proto__init(&b->opset);
	b->model.has_ir_version = 1;
	b->model.ir_version = 8;
	b->model.producer_name = "tessel-tests";
	b->opset.domain = "";
	b->opset.has_version = 1;
	b->opset.version = opset;
	b->opsets[0] = &b->opset;
	b->model.n_opset_import = 1;
	b->model.opset_import = b->opsets;
	b->graph.name = "g";
	b->model.graph = &b->graph;
	return b;
}

/* A tensor type: "dims" with -1 for the symbolic dimension "sym". */
static inline Onnx__ValueInfoProto *mb_value(const char *name, int elem,
	int nd, const int64_t *dims, const char *sym)
{
	Onnx__ValueInfoProto *v = calloc(1, sizeof(*v));
	Onnx__TypeProto *t = calloc(1, sizeof(*t));
	Onnx__TypeProto__Tensor *tt = calloc(1, sizeof(*tt));
	Onnx__TensorShapeProto *s = calloc(1, sizeof(*s));

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(s);
	for (int i = 0; i < nd; i++) {
		Onnx__TensorShapeProto__Dimension *d = calloc(1, sizeof(*d));

		onnx__tensor_shape_proto__dimension__init(d);
		if (dims[i] < 0) {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)sym;
		} else {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		*MB_GROW(s->dim, s->n_dim) = d;
	}
	tt->has_elem_type = 1;
	tt->elem_type = elem;
	tt->shape = s;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = (char *)name;
	v->type = t;
	return v;
}

static inline void mb_input(struct mb *b, const char *name, int nd,
	const int64_t *dims, const char *sym)
{
	*MB_GROW(b->graph.input, b->graph.n_input) =
		mb_value(name, 1, nd, dims, sym);
}

static inline void mb_output(struct mb *b, const char *name)
{
	*MB_GROW(b->graph.output, b->graph.n_output) =
		mb_value(name, 1, 0, NULL, NULL);
}

/* An f32 initializer. */
static inline void mb_weight(struct mb *b, const char *name, int nd,
	const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = calloc(1, sizeof(*t));
	size_t n = 1;

	onnx__tensor_proto__init(t);
	for (int i = 0; i < nd; i++)
		n *= (size_t)dims[i];
	t->name = (char *)name;
	t->n_dims = (size_t)nd;
	t->dims = (int64_t *)dims;
	t->has_data_type = 1;
	t->data_type = 1;
	t->n_float_data = n;
	t->float_data = (float *)data;
	*MB_GROW(b->graph.initializer, b->graph.n_initializer) = t;
}

/* A node; inputs and outputs as NULL-terminated lists. */
static inline Onnx__NodeProto *mb_node(struct mb *b, const char *op,
	const char *name, const char *const *in, const char *const *out)
{
	Onnx__NodeProto *n = calloc(1, sizeof(*n));

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	for (; *in; in++)
		*MB_GROW(n->input, n->n_input) = (char *)*in;
	for (; *out; out++)
		*MB_GROW(n->output, n->n_output) = (char *)*out;
	*MB_GROW(b->graph.node, b->graph.n_node) = n;
	return n;
}

static inline Onnx__AttributeProto *mb_attr(Onnx__NodeProto *n,
	const char *name, int type)
{
	Onnx__AttributeProto *a = calloc(1, sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = type;
	*MB_GROW(n->attribute, n->n_attribute) = a;
	return a;
}

static inline void mb_attr_int(Onnx__NodeProto *n, const char *name,
	int64_t v)
{
	Onnx__AttributeProto *a = mb_attr(n, name,
		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	a->has_i = 1;
	a->i = v;
}

static inline void mb_attr_float(Onnx__NodeProto *n, const char *name,
	float v)
{
	Onnx__AttributeProto *a = mb_attr(n, name,
		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);

	a->has_f = 1;
	a->f = v;
}

/* A GRAPH attribute (If's branches): the graph of "sub", a model built
 * with mb_new whose nodes and outputs are the branch's. */
static inline void mb_attr_graph(Onnx__NodeProto *n, const char *name,
	struct mb *sub)
{
	Onnx__AttributeProto *a = mb_attr(n, name,
		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);

	a->g = &sub->graph;
}

/* The model's bytes. */
static inline uint8_t *mb_pack(struct mb *b, size_t *len)
{
	uint8_t *buf;

	*len = onnx__model_proto__get_packed_size(&b->model);
	buf = malloc(*len + 1);
	onnx__model_proto__pack(&b->model, buf);
	return buf;
}

#endif
