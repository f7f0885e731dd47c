/* The ONNX importer's own vocabulary: values, nodes, and the helpers with
 * which an operator writes its stages as .tsl text.  Not installed.
 *
 * Each operator is a function that reads its node's inputs and attributes,
 * declares its outputs (dtype and static shape) and writes one or more
 * statements.  Text is the importer's only product: the program is parsed
 * by the .tsl front end like any hand-written file, so an operator's
 * meaning is the meaning of what it writes.  A node whose inputs are all
 * known at import (initializers, constants, shapes) is evaluated at once by
 * the reference interpreter on the statements it wrote: the same text,
 * folded. */
#ifndef TESSEL_ONNX_INTERNAL_H
#define TESSEL_ONNX_INTERNAL_H

#include <tessel/onnx.h>

#include "support/support.h"
#include "onnx/onnx.pb-c.h"

/* ONNX's TensorProto data types. */
enum {
	ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4,
	ONNX_INT16 = 5, ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_STRING = 8,
	ONNX_BOOL = 9, ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11, ONNX_UINT32 = 12,
	ONNX_UINT64 = 13, ONNX_COMPLEX64 = 14, ONNX_COMPLEX128 = 15,
	ONNX_BFLOAT16 = 16,
};

/* A value of the graph: a tensor with a static shape. */
struct ox_value {
	const char *onnx;	/* its name in the model */
	const char *name;	/* its name in the program, once it has one */
	ts_dtype dtype;
	int ndim;
	int64_t shape[TS_MAX_DIMS];
	ts_array *konst;	/* its contents when known at import */
	bool declared;		/* declared in the program (input or stage) */
};

/* A statement of the program: a stage, and the names it reads. */
struct ox_stmt {
	const char *name;
	const char *text;	/* without "output" */
	ts_vec reads;		/* const char * */
	const char *comment;	/* a line above it, or NULL */
};

struct ox_importer;

/* The node being lowered. */
struct ox_node {
	const Onnx__NodeProto *p;
	int index;
	const char *op;
	int nin;		/* inputs given, absent optional ones NULL */
	struct ox_value **in;
	int nout;
	struct ox_value **out;	/* filled by ox_output */
	ts_vec stmts;		/* what the node wrote */
	ts_vec reads;		/* values it read */
	int fresh;		/* counter of helper names */
};

/* An operator: its name, the first opset this lowering follows, and the
 * function. */
struct ox_op {
	const char *name;
	ts_status (*lower)(struct ox_importer *im, struct ox_node *n);
};

/* The tables of the operator files, each ended by a NULL name. */
extern const struct ox_op ox_ops_elementwise[];
extern const struct ox_op ox_ops_linalg[];
extern const struct ox_op ox_ops_shape[];
extern const struct ox_op ox_ops_reduce[];
extern const struct ox_op ox_ops_nn[];
extern const struct ox_op ox_ops_quant[];
extern const struct ox_op ox_ops_misc[];

/* The context of the import. */
ts_ctx *ox_ctx(const struct ox_importer *im);
/* The opset of the default domain the model imports. */
int ox_opset(const struct ox_importer *im);

/* Errors: "file: node N 'NAME' (OP): message", return TS_ERROR. */
ts_status ox_fail(struct ox_importer *im, const struct ox_node *n,
	const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Attributes: each returns TS_ERROR (with a message) when present with
 * another type; absent, the default is stored. */
ts_status ox_attr_int(struct ox_importer *im, const struct ox_node *n,
	const char *name, int64_t dflt, int64_t *v);
ts_status ox_attr_float(struct ox_importer *im, const struct ox_node *n,
	const char *name, double dflt, double *v);
ts_status ox_attr_string(struct ox_importer *im, const struct ox_node *n,
	const char *name, const char *dflt, const char **v);
/* A list of ints: "*count" is -1 when absent. */
ts_status ox_attr_ints(struct ox_importer *im, const struct ox_node *n,
	const char *name, int64_t *v, int max, int *count);
ts_status ox_attr_floats(struct ox_importer *im, const struct ox_node *n,
	const char *name, double *v, int max, int *count);
/* The attribute "name" or NULL. */
const Onnx__AttributeProto *ox_attr(const struct ox_node *n,
	const char *name);
/* A tensor attribute as an array, or NULL with an error. */
ts_array *ox_tensor_array(struct ox_importer *im, const struct ox_node *n,
	const Onnx__TensorProto *t);

/* Inputs: "k"-th input, which must be present (error otherwise). */
ts_status ox_need(struct ox_importer *im, const struct ox_node *n, int k,
	int min_nin);
/* Whether input "k" is given. */
bool ox_has(const struct ox_node *n, int k);
/* The integers of input "k", which must be known at import ("what" names
 * it in the message); "*count" receives their number. */
ts_status ox_const_ints(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what, int64_t *v, int max, int *count);
/* A float scalar input "k" known at import, or "dflt" when absent. */
ts_status ox_const_float(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what, double dflt, double *v);

/* Outputs: declare output "k" with its dtype and shape; its name in the
 * program is returned.  Missing (unwanted) outputs return NULL. */
const char *ox_output(struct ox_importer *im, struct ox_node *n, int k,
	ts_dtype t, int ndim, const int64_t *shape);
/* Whether output "k" is wanted. */
bool ox_wants(const struct ox_node *n, int k);

/* Writing.  Axes of a stage of rank r are named i0 .. i<r-1>; reduction
 * axes r0, r1, ... (ox_fresh_axis).  "stage" writes
 * NAME[i0: d0, ...]: DTYPE = BODY (the dtype only when "cast"); a NULL
 * name (an output ox_output says nobody wants) writes nothing. */
void ox_stage(struct ox_importer *im, struct ox_node *n, const char *name,
	int ndim, const int64_t *shape, const ts_dtype *cast,
	const char *body);
/* A helper stage named after the node's first output: its name. */
const char *ox_temp(struct ox_importer *im, struct ox_node *n,
	const char *suffix);
/* The name of "v" in the text of node "n" (declaring it, when it is a
 * constant, as a weight of the program). */
const char *ox_ref(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v);
/* Read "v" at the index expressions "idx" (v->ndim of them); a known
 * single-element value is written as a literal instead. */
char *ox_load(struct ox_importer *im, struct ox_node *n, struct ox_value *v,
	const char *const *idx);
/* "name[idx0, idx1, ...]": a read of a stage the node wrote itself, at
 * "idx", or at the axes i0 .. i<ndim-1>. */
char *ox_load_name(const char *name, int ndim, const char *const *idx);
char *ox_load_name_same(const char *name, int ndim);
/* A value known at import that node "n" makes (a table of indices or
 * weights), named after its first output and "what", with a fresh array
 * to fill; read by stages, it becomes a weight of the program. */
struct ox_value *ox_new_const(struct ox_importer *im, struct ox_node *n,
	const char *what, ts_dtype t, int ndim, const int64_t *shape);
/* Read "v" broadcast (numpy rules, aligned right) to the axes i0 .. of a
 * stage of rank "ndim". */
char *ox_load_bcast(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v, int ndim, const int64_t *shape);
/* Read "v" at its own axes i0 .. (same rank as the stage). */
char *ox_load_same(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v);
/* Read "v" reinterpreted, in C order, as a tensor of the stage's shape
 * (same number of elements): the load of Reshape and its kin. */
char *ox_reshape_load(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v, int ndim, const int64_t *shape);
/* A literal of dtype "t": bare (it takes the dtype of what it meets) or
 * typed (a cast, for where it stands alone). */
char *ox_lit(ts_dtype t, double v);
char *ox_tlit(ts_dtype t, double v);
/* The axis name "i<k>" and a list "i0, i1, ..." of the first "n". */
const char *ox_axis(int k);
/* A fresh reduction axis name for node "n". */
const char *ox_raxis(struct ox_node *n);

/* Shapes. */
int64_t ox_numel(int ndim, const int64_t *shape);
/* Numpy broadcasting of "a" and "b" into "out" (which may be "a" or
 * "b"); error when they do not broadcast. */
ts_status ox_broadcast(struct ox_importer *im, const struct ox_node *n,
	int nda, const int64_t *a, int ndb, const int64_t *b, int *nd,
	int64_t *out);
/* Normalize an axis in [-rank, rank) to [0, rank); error otherwise. */
ts_status ox_axis_norm(struct ox_importer *im, const struct ox_node *n,
	int64_t axis, int rank, int *out);
/* The ts_dtype of ONNX's "elem", or an error naming it. */
ts_status ox_dtype(struct ox_importer *im, const struct ox_node *n,
	int elem, ts_dtype *t);
const char *ox_onnx_type_name(int elem);

/* Convolutions (onnx/ops_nn.c), for the quantized ones: the sum of
 * Conv's window (its attributes read from node "n") of "x" by "w", each
 * element converted by "xtpl" and "wtpl" ("{x}" stands for it; NULL for
 * none), reading where the window leaves x a stage of converted x padded
 * with "fill".  The result's shape goes to "shape" (x's rank); NULL on
 * error. */
char *ox_conv_sum(struct ox_importer *im, struct ox_node *n,
	struct ox_value *x, struct ox_value *w, const char *xtpl,
	const char *wtpl, const char *fill, int64_t *shape);

/* Before the nodes are lowered: fold each BatchNormalization whose
 * input is a Conv's output read by it alone, every parameter an
 * initializer, into that Conv (new initializers for its weights and
 * bias), removing the BN node from "g" (onnx/ops_nn.c). */
ts_status ox_fold_batchnorm(struct ox_importer *im, Onnx__GraphProto *g);

/* Reading (onnx/read.c). */
ts_array *ox_read_tensor(ts_ctx *ctx, const Onnx__TensorProto *t,
	const char *where);

#endif
