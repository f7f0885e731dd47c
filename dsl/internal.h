/* Internal to the DSL and what builds on it: making tensors and stages,
 * canonical form, and the dtype conversions every evaluator shares.
 * Not installed. */
#ifndef TESSEL_DSL_INTERNAL_H
#define TESSEL_DSL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tessel/dsl.h>

#include "dsl/ir.h"

#include "support/support.h"

/* A new tensor "name" of dtype "t" and shape "shape" ("ndim" dimensions)
 * with a fresh id of "ctx", unchecked and without a stage. */
ts_tensor *ts_tensor_make(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape);

/* Set the body of the stage "s" to "body", checking that its variables
 * are in scope, and collect its reduction axes and inputs anew. */
ts_status ts_stage_set_body(ts_ctx *ctx, ts_stage *s, ts_expr *body);
/* Bring the "nstages" stages "stages" (in topological order) to canonical
 * form (dsl/canon.c); "placeholders" name the inputs, whose names new
 * stages avoid.  Set "changed" when a stage was made or rewritten. */
ts_status ts_canonicalize(ts_ctx *ctx, int nstages, ts_stage *const *stages,
	int nplaceholders, ts_tensor *const *placeholders, bool *changed);
/* How deeply the printed form of "e" nests, in the levels the parser
 * counts: parentheses, brackets, unary operators, calls and reducers. */
int ts_expr_nesting(const ts_expr *e);
/* The first dimension of "shape" ("ndim" extents, none negative) at which
 * the size in bytes of an array of "elem"-byte elements would pass
 * INT64_MAX, zero extents counting as one; -1 when it fits. */
int ts_shape_overflow_dim(int ndim, const int64_t *shape, size_t elem);
/* The physical memory of this machine in bytes (INT64_MAX if unknown). */
int64_t ts_memory_bytes(void);
/* "bytes" written with a binary unit for messages: "4.00 TiB". */
const char *ts_bytes_string(double bytes);

/* Half precision conversions (IEEE binary16, round to nearest even). */
uint16_t ts_f32_to_f16(float f);
float ts_f16_to_f32(uint16_t h);
/* bfloat16 conversions (the upper half of an f32, round to nearest
 * even, NaN kept quiet). */
uint16_t ts_f32_to_bf16(float f);
float ts_bf16_to_f32(uint16_t h);
/* The integer "v" wrapped to the integer dtype "t" like a C cast (u64
 * is held in an int64_t as its bit pattern; bool: v != 0). */
int64_t ts_int_wrap(ts_dtype t, int64_t v);
/* The integer "v" of dtype "t" as a double (u64 read unsigned). */
double ts_int_to_double(ts_dtype t, int64_t v);
/* Round "v" to what a store of dtype "t" keeps. */
double ts_round_to_dtype(ts_dtype t, double v);
/* The float "v" cast to the integer dtype "t": truncated toward zero and
 * saturated to the range of "t", NaN giving 0 (bool: v != 0); a u64
 * comes back as its bit pattern. */
int64_t ts_float_to_int(ts_dtype t, double v);

#endif
