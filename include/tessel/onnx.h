/* Tessel: ONNX import.
 *
 * An ONNX model becomes a .tsl program: one stage (or a few) per node,
 * each a compute declaration written in the language's own syntax and
 * parsed by the same front end as a hand-written file, so that an imported
 * model has exactly the semantics of its text.  Initializers and constant
 * nodes become weights (their arrays are kept with the model); what can be
 * computed at import (the shape arithmetic of exported models, scalars) is
 * folded there by the reference interpreter.
 *
 * Built only with protobuf-c (configure's ONNX import); without it every
 * function fails with a message saying what to install. */
#ifndef TESSEL_ONNX_H
#define TESSEL_ONNX_H

#include <stddef.h>

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_onnx_model ts_onnx_model;

/* Whether this build of the library reads ONNX files. */
bool ts_onnx_available(void);

/* How to import.  "shapes" fixes symbolic dimensions, each "NAME=DIMS":
 * NAME a graph input and DIMS its whole shape ("x=1x3x224x224"), or NAME
 * a symbolic dimension and DIMS one extent ("batch=1").  "known" gives
 * the values of graph inputs that are in fact constants (a shape fed as
 * an input): they are folded like initializers and are no longer
 * inputs of the program. */
typedef struct ts_onnx_options {
	int nshapes;
	const char *const *shapes;
	int nknown;
	const char *const *known_names;
	const ts_array *const *known_values;
} ts_onnx_options;

/* Import the ONNX file "path" with "opt" (NULL: no options).  NULL with a
 * message in "ctx" that names the node, its op and what is wrong. */
__ts_gc ts_onnx_model *ts_onnx_import(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path,
	__ts_keep __ts_null const ts_onnx_options *opt);
/* The same from the bytes of a model; "name" is used in messages. */
__ts_gc ts_onnx_model *ts_onnx_import_bytes(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name, __ts_keep const void *data, size_t len,
	__ts_keep __ts_null const ts_onnx_options *opt);

/* The program as .tsl text, and parsed. */
__ts_gc const char *ts_onnx_source(__ts_keep const ts_onnx_model *m);
__ts_gc ts_dag *ts_onnx_dag(__ts_keep const ts_onnx_model *m);

/* The weights: arrays of the dag's inputs declared "weight", by index or
 * by their name in the program (NULL when there is none). */
int ts_onnx_nweights(__ts_keep const ts_onnx_model *m);
__ts_gc const char *ts_onnx_weight_name(__ts_keep const ts_onnx_model *m,
	int i);
__ts_gc const ts_array *ts_onnx_weight(__ts_keep const ts_onnx_model *m,
	int i);
__ts_gc __ts_null const ts_array *ts_onnx_find_weight(
	__ts_keep const ts_onnx_model *m, __ts_keep const char *name);

/* The graph's inputs (initializers excepted) and outputs in the model's
 * order: their ONNX names, and their names in the program. */
int ts_onnx_ninputs(__ts_keep const ts_onnx_model *m);
int ts_onnx_noutputs(__ts_keep const ts_onnx_model *m);
__ts_gc const char *ts_onnx_input_name(__ts_keep const ts_onnx_model *m,
	int i, bool onnx);
__ts_gc const char *ts_onnx_output_name(__ts_keep const ts_onnx_model *m,
	int i, bool onnx);

/* Arrays for every input of ts_onnx_dag(m), in its order: the weights'
 * own arrays, and values from "seed" for the rest (as
 * ts_dag_random_inputs makes them). */
__ts_gc ts_array **ts_onnx_inputs(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_onnx_model *m, uint64_t seed);

/* Write the program as DIR/NAME.tsl and each weight as DIR/<weight>.npy
 * ("dir" must exist). */
ts_status ts_onnx_write(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_onnx_model *m, __ts_keep const char *dir,
	__ts_keep const char *name);

/* A serialized ONNX TensorProto (the .pb files of ONNX's tests) as an
 * array; its name, when it has one, goes to "*name" (when not NULL). */
__ts_gc ts_array *ts_onnx_read_tensor(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path, __ts_keep __ts_null const char **name);

#ifdef __cplusplus
}
#endif

#endif
