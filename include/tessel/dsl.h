/* Tessel: the compute DSL.
 *
 * A program is declared, never scheduled: placeholders (inputs) and compute
 * stages whose bodies are expressions over index variables.  A stage's
 * spatial axes are its output dimensions; its reduction axes are bound by
 * reducers (sum, max, min, prod) inside the body.  The DAG collects the
 * stages reachable from the outputs in topological order.
 *
 * Who owns what is written on each declaration (<tessel/ownership.h>).
 * Constructors return NULL on bad input and leave a message in the context;
 * passing a NULL argument to a constructor returns NULL without a new
 * message, so a chain of constructors can be checked once at its end.
 */
#ifndef TESSEL_DSL_H
#define TESSEL_DSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tessel/ownership.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_MAX_DIMS 8

typedef struct ts_ctx ts_ctx;
typedef struct ts_axis ts_axis;
typedef struct ts_expr ts_expr;
typedef struct ts_tensor ts_tensor;
typedef struct ts_stage ts_stage;
typedef struct ts_dag ts_dag;
typedef struct ts_array ts_array;

typedef enum ts_status {
	TS_OK = 0,
	TS_ERROR = -1,
} ts_status;

/* Element types.  The order is the promotion order of nothing: Tessel never
 * promotes implicitly; casts are explicit. */
typedef enum ts_dtype {
	TS_BOOL,
	TS_I8,
	TS_U8,
	TS_I32,
	TS_I64,
	TS_F16,
	TS_F32,
	TS_F64,
	TS_I16,
	TS_U16,
	TS_U32,
	TS_U64,
	TS_BF16,		/* bfloat16: f32's exponent, 8 bits of mantissa */
	TS_DTYPE_COUNT
} ts_dtype;

/* The version of the library linked in (a static string), which a
 * program compiled against another header can compare with
 * TESSEL_VERSION. */
__ts_keep const char *ts_version(void);

/* Contexts.  All state lives here: errors, the random seed, and the
 * lazily created isl context of the analysis.  Free a context with
 * ts_ctx_free. */
__ts_give ts_ctx *ts_ctx_alloc(void);
void ts_ctx_free(__ts_take __ts_null ts_ctx *ctx);
/* Return the message of the last error in "ctx", or NULL. */
__ts_gc __ts_null const char *ts_ctx_error(__ts_keep ts_ctx *ctx);
void ts_ctx_clear_error(__ts_keep ts_ctx *ctx);
/* Record a formatted error message in "ctx"; always returns TS_ERROR. */
ts_status ts_ctx_set_error(__ts_keep ts_ctx *ctx, __ts_keep const char *fmt,
	...) __attribute__((format(printf, 2, 3)));
/* Append a warning to "ctx" (warnings accumulate until cleared). */
void ts_ctx_warn(__ts_keep ts_ctx *ctx, __ts_keep const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The warnings of "ctx", one a line, or NULL when there is none. */
__ts_gc __ts_null const char *ts_ctx_warnings(__ts_keep ts_ctx *ctx);
void ts_ctx_clear_warnings(__ts_keep ts_ctx *ctx);
/* Keep "p", memory of the collector, alive as long as "ctx" lives: for a
 * caller that holds it where the collector does not look (an object of
 * another language's runtime, memory from malloc). */
ts_status ts_ctx_keep(__ts_keep ts_ctx *ctx, __ts_keep const void *p);
void ts_ctx_set_seed(__ts_keep ts_ctx *ctx, uint64_t seed);
uint64_t ts_ctx_get_seed(__ts_keep ts_ctx *ctx);
/* Next value of the context's random stream (seeded by ts_ctx_set_seed). */
uint64_t ts_ctx_random(__ts_keep ts_ctx *ctx);
/* A uniform integer in [0, n) from the context's stream. */
uint64_t ts_ctx_random_below(__ts_keep ts_ctx *ctx, uint64_t n);

/* The name of "t" ("f32"), a static string. */
__ts_keep const char *ts_dtype_name(ts_dtype t);
/* Parse "f32", "i8", ...; return TS_ERROR (no message) when unknown. */
ts_status ts_dtype_from_name(__ts_keep const char *name,
	__ts_keep ts_dtype *out);
size_t ts_dtype_size(ts_dtype t);
bool ts_dtype_is_float(ts_dtype t);
bool ts_dtype_is_int(ts_dtype t);	/* integer types, bool excluded */
bool ts_dtype_is_signed(ts_dtype t);

/* Index variables.  A spatial axis names one output dimension of a stage;
 * a reduction axis is bound by a reducer.  Both range over [0, extent).
 *
 * Axes, expressions, tensors, stages and DAGs are opaque: they are built
 * by the constructors below and read through their accessors, so that a
 * program compiled against this header keeps working when the library
 * changes how it stores them. */
__ts_gc ts_axis *ts_axis_new(__ts_keep ts_ctx *ctx, __ts_keep const char *name,
	int64_t extent);
__ts_gc ts_axis *ts_reduce_axis(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name, int64_t extent);
__ts_keep const char *ts_axis_name(__ts_keep const ts_axis *a);
int64_t ts_axis_extent(__ts_keep const ts_axis *a);
/* Whether "a" is bound by a reducer rather than naming an output
 * dimension. */
bool ts_axis_is_reduce(__ts_keep const ts_axis *a);

typedef enum ts_expr_kind {
	TS_EXPR_INT,		/* integer constant */
	TS_EXPR_FLOAT,		/* floating constant */
	TS_EXPR_VAR,		/* index variable */
	TS_EXPR_LOAD,		/* tensor[arg 0, ..., arg nargs-1] */
	TS_EXPR_UNARY,		/* op(operand 0) */
	TS_EXPR_BINARY,		/* operand 0 op operand 1 */
	TS_EXPR_SELECT,		/* operand 0 ? operand 1 : operand 2 */
	TS_EXPR_CAST,		/* dtype(operand 0) */
	TS_EXPR_REDUCE,		/* reducer over its axes of operand 0 */
	TS_EXPR_KIND_COUNT
} ts_expr_kind;

typedef enum ts_op {
	/* binary */
	TS_OP_ADD,
	TS_OP_SUB,
	TS_OP_MUL,
	TS_OP_DIV,		/* true division; floats only */
	TS_OP_FLOORDIV,		/* floor(a / b); integers and floats */
	TS_OP_MOD,		/* a - b * floordiv(a, b) */
	TS_OP_MIN,
	TS_OP_MAX,
	TS_OP_POW,
	TS_OP_LT,
	TS_OP_LE,
	TS_OP_GT,
	TS_OP_GE,
	TS_OP_EQ,
	TS_OP_NE,
	TS_OP_AND,
	TS_OP_OR,
	/* unary */
	TS_OP_NEG,
	TS_OP_NOT,
	TS_OP_EXP,
	TS_OP_LOG,
	TS_OP_SQRT,
	TS_OP_RSQRT,
	TS_OP_TANH,
	TS_OP_SIGMOID,
	TS_OP_ERF,
	TS_OP_SIN,
	TS_OP_COS,
	TS_OP_TAN,
	TS_OP_ASIN,
	TS_OP_ACOS,
	TS_OP_ATAN,
	TS_OP_SINH,
	TS_OP_COSH,
	TS_OP_ASINH,
	TS_OP_ACOSH,
	TS_OP_ATANH,
	TS_OP_ABS,
	TS_OP_FLOOR,
	TS_OP_ROUND,		/* half to even, as IEEE rint */
	TS_OP_CEIL,
	TS_OP_SIGN,		/* -1, 0, 1; a float zero or NaN is itself */
	TS_OP_ISNAN,		/* float -> bool */
	TS_OP_ISINF,		/* float -> bool: +inf or -inf */
	TS_OP_COUNT
} ts_op;

typedef enum ts_reducer {
	TS_RED_SUM,
	TS_RED_MAX,
	TS_RED_MIN,
	TS_RED_PROD,
	TS_RED_COUNT
} ts_reducer;


/* What an expression node is.  Which accessor applies depends on its
 * kind: ts_expr_op (UNARY, BINARY), ts_expr_reducer and the bound axes
 * (REDUCE), ts_expr_int_value (INT), ts_expr_float_value (FLOAT),
 * ts_expr_axis (VAR), ts_expr_tensor and its indices (LOAD); the others
 * return 0 or NULL.  Nodes are immutable once built. */
ts_expr_kind ts_expr_get_kind(__ts_keep const ts_expr *e);
/* The result type of "e". */
ts_dtype ts_expr_dtype(__ts_keep const ts_expr *e);
/* Whether "e" is an untyped literal, which takes the type of its peer. */
bool ts_expr_is_literal(__ts_keep const ts_expr *e);
ts_op ts_expr_op(__ts_keep const ts_expr *e);
ts_reducer ts_expr_reducer(__ts_keep const ts_expr *e);
int64_t ts_expr_int_value(__ts_keep const ts_expr *e);
double ts_expr_float_value(__ts_keep const ts_expr *e);
__ts_gc __ts_null ts_axis *ts_expr_axis(__ts_keep const ts_expr *e);
__ts_gc __ts_null ts_tensor *ts_expr_tensor(__ts_keep const ts_expr *e);
/* The number of indices of a LOAD, and index "i" of it. */
int ts_expr_nargs(__ts_keep const ts_expr *e);
__ts_gc __ts_null ts_expr *ts_expr_arg(__ts_keep const ts_expr *e, int i);
/* Operand "i" of "e": 0 and 1 of a BINARY (a op b), 0 of a UNARY, a
 * CAST or a REDUCE (its body), 0 to 2 of a SELECT (cond ? a : b). */
__ts_gc __ts_null ts_expr *ts_expr_operand(__ts_keep const ts_expr *e, int i);
/* The number of axes a REDUCE binds, and axis "i" (outermost first). */
int ts_expr_nraxes(__ts_keep const ts_expr *e);
__ts_gc __ts_null ts_axis *ts_expr_raxis(__ts_keep const ts_expr *e, int i);

/* Constants.  ts_int and ts_float are untyped literals that take the type
 * of the operand they meet (defaulting to i32 and f32); ts_const is typed. */
__ts_gc ts_expr *ts_int(__ts_keep ts_ctx *ctx, int64_t v);
__ts_gc ts_expr *ts_float(__ts_keep ts_ctx *ctx, double v);
__ts_gc ts_expr *ts_const(__ts_keep ts_ctx *ctx, ts_dtype t, double v);
__ts_gc ts_expr *ts_var(__ts_keep ts_ctx *ctx, __ts_keep ts_axis *axis);
/* Load "t" at "n" indices (integer expressions). */
__ts_gc ts_expr *ts_load(__ts_keep ts_ctx *ctx, __ts_keep ts_tensor *t, int n,
	__ts_keep ts_expr *const *idx);
__ts_gc ts_expr *ts_unary(__ts_keep ts_ctx *ctx, ts_op op,
	__ts_keep ts_expr *a);
__ts_gc ts_expr *ts_binary(__ts_keep ts_ctx *ctx, ts_op op,
	__ts_keep ts_expr *a, __ts_keep ts_expr *b);
__ts_gc ts_expr *ts_select(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *cond,
	__ts_keep ts_expr *a, __ts_keep ts_expr *b);
__ts_gc ts_expr *ts_cast(__ts_keep ts_ctx *ctx, ts_dtype t,
	__ts_keep ts_expr *a);
/* "reducer" of "body" over the "n" reduction axes "axes". */
__ts_gc ts_expr *ts_reduce(__ts_keep ts_ctx *ctx, ts_reducer reducer, int n,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);

/* Shorthands. */
__ts_gc ts_expr *ts_add(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_sub(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_mul(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_div(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_floordiv(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_mod(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_min(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_max(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *a,
	__ts_keep ts_expr *b);
__ts_gc ts_expr *ts_clamp(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *x,
	__ts_keep ts_expr *lo, __ts_keep ts_expr *hi);
__ts_gc ts_expr *ts_sum(__ts_keep ts_ctx *ctx, int n,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
__ts_gc ts_expr *ts_rmax(__ts_keep ts_ctx *ctx, int n,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
__ts_gc ts_expr *ts_rmin(__ts_keep ts_ctx *ctx, int n,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
__ts_gc ts_expr *ts_rprod(__ts_keep ts_ctx *ctx, int n,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
/* Load with indices given as variadic ts_expr pointers. */
__ts_gc ts_expr *ts_at(__ts_keep ts_ctx *ctx, __ts_keep ts_tensor *t, int n,
	...);

/* Whether "e" contains a reduction (at its root or inside). */
bool ts_expr_has_reduce(__ts_keep const ts_expr *e);
/* An integer interval [lo, hi]. */
typedef struct ts_range {
	int64_t lo, hi;
} ts_range;
/* Compute in "r" the range of the integer expression "e" when every axis
 * it reads ranges over [0, extent); false when it cannot be bounded. */
bool ts_expr_range(__ts_keep const ts_expr *e, __ts_keep ts_range *r);
/* Whether "e" can be evaluated everywhere on the box of its axes: every
 * load provably in bounds, no integer division by a value that may be
 * zero. */
bool ts_expr_safe_everywhere(__ts_keep const ts_expr *e);
/* Whether "a" and "b" are the same expression, node by node (reductions
 * are never equal). */
bool ts_expr_equal(__ts_keep const ts_expr *a, __ts_keep const ts_expr *b);

/* The names of "op" and "r", static strings. */
__ts_keep const char *ts_op_name(ts_op op);
__ts_keep const char *ts_reducer_name(ts_reducer r);
bool ts_op_is_unary(ts_op op);
bool ts_op_is_comparison(ts_op op);
/* Whether the unary "op" is a transcendental function or a root (exp, log,
 * sqrt, rsqrt, tanh, sigmoid, erf, the trigonometric and hyperbolic
 * functions and their inverses): a library call or a polynomial, dear
 * beside an addition. */
bool ts_op_is_special(ts_op op);


/* Tensors.  A placeholder has no stage; a computed tensor is the output of
 * exactly one stage. */
__ts_gc ts_tensor *ts_placeholder(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name, ts_dtype t, int ndim,
	__ts_keep const int64_t *shape);
/* Declare the stage "name" whose output has one dimension per axis in
 * "axes" (spatial axes, outermost first) and whose value is "body".  The
 * output's dtype is the body's; ts_compute_typed casts to "t" instead. */
__ts_gc ts_tensor *ts_compute(__ts_keep ts_ctx *ctx, __ts_keep const char *name,
	int ndim, __ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
__ts_gc ts_tensor *ts_compute_typed(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name, ts_dtype t, int ndim,
	__ts_keep ts_axis *const *axes, __ts_keep ts_expr *body);
int64_t ts_tensor_size(__ts_keep const ts_tensor *t);	/* number of elements */



/* A DAG: the stages reachable from its outputs, in topological order
 * (producers first), its placeholders in argument order and its
 * outputs. */
/* Build the DAG that computes "outputs".  "inputs" lists the placeholders
 * in argument order; when "ninputs" is 0 they are collected in order of
 * creation.  Every placeholder reached must be listed. */
__ts_gc ts_dag *ts_dag_new(__ts_keep ts_ctx *ctx, int ninputs,
	__ts_keep ts_tensor *const *inputs, int noutputs,
	__ts_keep ts_tensor *const *outputs);
int ts_dag_ninputs(__ts_keep const ts_dag *dag);
__ts_gc __ts_null ts_tensor *ts_dag_input(__ts_keep const ts_dag *dag, int i);
int ts_dag_noutputs(__ts_keep const ts_dag *dag);
__ts_gc __ts_null ts_tensor *ts_dag_output(__ts_keep const ts_dag *dag,
	int i);
int ts_dag_nstages(__ts_keep const ts_dag *dag);
__ts_gc __ts_null ts_stage *ts_dag_stage(__ts_keep const ts_dag *dag, int i);
/* The number of stages that read stage "s" (an index into the
 * topological order), and the index of the "k"th of them. */
int ts_dag_nconsumers(__ts_keep const ts_dag *dag, int s);
int ts_dag_consumer(__ts_keep const ts_dag *dag, int s, int k);
/* The name of "dag" (its file or the user's name) for messages, or
 * NULL. */
__ts_keep __ts_null const char *ts_dag_name(__ts_keep const ts_dag *dag);
/* Name "dag" "name" (copied) in messages. */
void ts_dag_set_name(__ts_keep ts_dag *dag, __ts_keep const char *name);
__ts_keep const char *ts_tensor_name(__ts_keep const ts_tensor *t);
ts_dtype ts_tensor_dtype(__ts_keep const ts_tensor *t);
int ts_tensor_ndim(__ts_keep const ts_tensor *t);
/* The extent of dimension "i" of "t" (-1 outside [0, ndim)). */
int64_t ts_tensor_dim(__ts_keep const ts_tensor *t, int i);
/* The ndim extents of "t", outermost first, valid as long as "t". */
__ts_keep const int64_t *ts_tensor_shape(__ts_keep const ts_tensor *t);
/* The stage computing "t", NULL for a placeholder. */
__ts_gc __ts_null ts_stage *ts_tensor_stage(__ts_keep const ts_tensor *t);
/* Whether the placeholder "t" holds weights: contents that stay the same
 * from one run to the next, which a network may keep in a layout of its
 * own choosing, converted once rather than at every run. */
bool ts_tensor_is_weight(__ts_keep const ts_tensor *t);
/* Declare the placeholder "t" as weights; TS_ERROR when "t" is computed. */
ts_status ts_tensor_set_weight(__ts_keep ts_ctx *ctx, __ts_keep ts_tensor *t,
	bool weight);

/* Compute stages: a stage has a spatial axis per dimension of its output,
 * reduction axes bound in its body, and the distinct tensors it reads. */
__ts_keep const char *ts_stage_name(__ts_keep const ts_stage *s);
__ts_gc ts_tensor *ts_stage_output(__ts_keep const ts_stage *s);
__ts_gc ts_expr *ts_stage_body(__ts_keep const ts_stage *s);
int ts_stage_ndim(__ts_keep const ts_stage *s);	/* spatial axes */
int ts_stage_nraxes(__ts_keep const ts_stage *s);	/* reduction axes */
/* The tensors "s" reads, in order of first use. */
int ts_stage_ninputs(__ts_keep const ts_stage *s);
__ts_gc __ts_null ts_tensor *ts_stage_input(__ts_keep const ts_stage *s,
	int i);
/* The line of the .tsl source that declared "s", 0 if none. */
int ts_stage_line(__ts_keep const ts_stage *s);
/* Index of "s" in the topological order of "dag", or -1. */
/* The axis of "s" at position "pos", spatial axes first, then reduction
 * axes (0 <= pos < s->ndim + s->nraxes). */
__ts_gc const ts_axis *ts_stage_axis(__ts_keep const ts_stage *s, int pos);
/* The position of "axis" among the axes of "s" in that order, or -1. */
int ts_axis_pos(__ts_keep const ts_stage *s, __ts_keep const ts_axis *axis);
int ts_dag_stage_index(__ts_keep const ts_dag *dag,
	__ts_keep const ts_stage *s);
/* The stage, or the tensor, called "name" in "dag", or NULL. */
__ts_gc __ts_null ts_stage *ts_dag_find_stage(__ts_keep const ts_dag *dag,
	__ts_keep const char *name);
__ts_gc __ts_null ts_tensor *ts_dag_find_tensor(__ts_keep const ts_dag *dag,
	__ts_keep const char *name);
bool ts_dag_is_output(__ts_keep const ts_dag *dag,
	__ts_keep const ts_tensor *t);

/* Printing, in the .tsl syntax. */
void ts_expr_print(__ts_keep FILE *out, __ts_keep const ts_expr *e);
__ts_gc char *ts_expr_to_string(__ts_keep const ts_expr *e);
void ts_stage_print(__ts_keep FILE *out, __ts_keep const ts_stage *s,
	bool is_output);
void ts_dag_print(__ts_keep FILE *out, __ts_keep const ts_dag *dag);
/* Print "dag" with tensors and axes renamed by position, so that two
 * declarations equal up to renaming print the same text. */
__ts_gc char *ts_dag_canonical_string(__ts_keep const ts_dag *dag);
/* A 64-bit FNV-1a hash of the canonical string, as 16 hex digits. */
__ts_gc const char *ts_dag_hash(__ts_keep const ts_dag *dag);

/* The text front end (.tsl).  Errors carry file:line:col, the source line
 * and a caret; ts_parse_string names its text "filename" there (NULL:
 * "<string>"). */
__ts_gc ts_dag *ts_parse_file(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path);
__ts_gc ts_dag *ts_parse_string(__ts_keep ts_ctx *ctx,
	__ts_keep __ts_null const char *filename, __ts_keep const char *src);

/* Dense host arrays in C order, used for inputs, outputs and .npy files. */
struct ts_array {
	ts_dtype dtype;
	int ndim;
	int64_t shape[TS_MAX_DIMS];
	int64_t size;		/* number of elements */
	void *data;		/* 64-byte aligned */
};

__ts_gc ts_array *ts_array_alloc(__ts_keep ts_ctx *ctx, ts_dtype t, int ndim,
	__ts_keep const int64_t *shape);
__ts_gc ts_array *ts_array_for_tensor(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_tensor *t);
/* Element "i" (flat index) as a double, and store "v" rounded to the dtype. */
double ts_array_get(__ts_keep const ts_array *a, int64_t i);
void ts_array_set(__ts_keep ts_array *a, int64_t i, double v);
/* Element "i" of an integer or bool array exactly (a u64 as its bit
 * pattern; a float array: truncated and saturated to i64), and store
 * the integer "v" wrapped to the dtype like a C cast. */
int64_t ts_array_get_int(__ts_keep const ts_array *a, int64_t i);
void ts_array_set_int(__ts_keep ts_array *a, int64_t i, int64_t v);
/* Fill "a" with reproducible values from "seed": floats uniform in
 * [-1, 1), integers in [-8, 8) (unsigned: [0, 16)), bools 0/1. */
void ts_array_fill_random(__ts_keep ts_array *a, uint64_t seed);
/* Fill with integers uniform in [lo, hi). */
void ts_array_fill_range(__ts_keep ts_array *a, uint64_t seed, int64_t lo,
	int64_t hi);
/* Largest absolute and relative difference between "a" and "b" (either
 * pointer may be NULL when that one is not wanted). */
ts_status ts_array_compare(__ts_keep ts_ctx *ctx, __ts_keep const ts_array *a,
	__ts_keep const ts_array *b, __ts_keep __ts_null double *max_abs,
	__ts_keep __ts_null double *max_rel);
/* Whether "got" matches "want" within the tolerance of its dtype; the
 * largest absolute difference goes to "*max_abs_err" when it is not
 * NULL. */
bool ts_array_close(__ts_keep const ts_array *got,
	__ts_keep const ts_array *want,
	__ts_keep __ts_null double *max_abs_err);

/* Check that the arrays of every input and stage of "dag", all at once,
 * fit in the memory of this machine: what the interpreter or a run needs
 * at most.  TS_ERROR with a message naming the largest tensor if not. */
ts_status ts_dag_check_memory(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag);

/* NumPy .npy files, format 1.0, little endian, C order. */
__ts_gc ts_array *ts_npy_read(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path);
ts_status ts_npy_write(__ts_keep ts_ctx *ctx, __ts_keep const char *path,
	__ts_keep const ts_array *a);

/* Generate inputs for "dag" from "seed": each input gets values suited to
 * how it is used (a tensor used as an index gets values inside the extent
 * it indexes). */
__ts_gc ts_array **ts_dag_random_inputs(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, uint64_t seed);

/* The reference interpreter: compute every stage of "dag" naively, exactly
 * as declared, arithmetic in f64 (i64 for integers), rounding each stored
 * value to its tensor's dtype.  "inputs" follow dag->inputs; "outputs"
 * receives one new array per dag->outputs. */
ts_status ts_eval(__ts_keep ts_ctx *ctx, __ts_keep const ts_dag *dag,
	__ts_keep ts_array *const *inputs, __ts_keep ts_array **outputs);

#ifdef __cplusplus
}
#endif

#endif
