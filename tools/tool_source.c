/* Programs as every verb reads them: a .tsl file, or an ONNX model
 * imported on the way in (its symbolic dimensions fixed by --shape, its
 * weights kept to feed the program's weight inputs). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "tools/commands.h"

/* The --shape settings of the command line, and the model last loaded. */
static const char **shapes;
static int nshapes;
static const ts_onnx_model *model;
static const ts_dag *model_dag;

bool ts_tool_add_shape(const char *v)
{
	const char *eq = strchr(v, '=');

	if (!eq || eq == v || !eq[1])
		return false;
	shapes = realloc(shapes, sizeof(*shapes) * (size_t)(nshapes + 1));
	if (!shapes)
		return false;
	shapes[nshapes++] = v;
	return true;
}

bool ts_tool_is_onnx(const char *file)
{
	size_t n = strlen(file);

	return n > 5 && !strcmp(file + n - 5, ".onnx");
}

ts_dag *ts_tool_load(ts_ctx *ctx, const char *file)
{
	ts_onnx_options opt = { 0 };
	ts_onnx_model *m;

	if (!ts_tool_is_onnx(file)) {
		if (nshapes)
			ts_ctx_warn(ctx, "--shape applies to ONNX models only");
		return ts_parse_file(ctx, file);
	}
	opt.nshapes = nshapes;
	opt.shapes = shapes;
	if (!(m = ts_onnx_import(ctx, file, &opt)))
		return NULL;
	model = m;
	model_dag = ts_onnx_dag(m);
	return ts_onnx_dag(m);
}

const ts_onnx_model *ts_tool_model(const ts_dag *dag)
{
	return dag == model_dag ? model : NULL;
}

ts_array **ts_tool_random_inputs(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed)
{
	if (ts_tool_model(dag))
		return ts_onnx_inputs(ctx, model, seed);
	return ts_dag_random_inputs(ctx, dag, seed);
}

const ts_array *ts_tool_weight(const ts_dag *dag, const char *name)
{
	return ts_tool_model(dag) ? ts_onnx_find_weight(model, name) : NULL;
}

const char *ts_tool_onnx_input_name(const ts_dag *dag, const char *name)
{
	if (!ts_tool_model(dag))
		return NULL;
	for (int k = 0; k < ts_onnx_ninputs(model); k++)
		if (!strcmp(ts_onnx_input_name(model, k, false), name))
			return ts_onnx_input_name(model, k, true);
	return NULL;
}
