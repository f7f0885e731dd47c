/* ONNX import in a build without protobuf-c: every entry point says what
 * to install. */
#include <config.h>

#include <tessel/onnx.h>

static ts_status unavailable(ts_ctx *ctx)
{
	return ts_ctx_set_error(ctx, "this build of Tessel cannot read ONNX "
		"files: install the Debian packages libprotobuf-c-dev, "
		"protobuf-c-compiler and libonnx-dev, then configure and build "
		"again");
}

bool ts_onnx_available(void)
{
	return false;
}

ts_onnx_model *ts_onnx_import(ts_ctx *ctx, const char *path,
	const ts_onnx_options *opt)
{
	(void)path, (void)opt;
	unavailable(ctx);
	return NULL;
}

ts_onnx_model *ts_onnx_import_bytes(ts_ctx *ctx, const char *name,
	const void *data, size_t len, const ts_onnx_options *opt)
{
	(void)name, (void)data, (void)len, (void)opt;
	unavailable(ctx);
	return NULL;
}

ts_array *ts_onnx_read_tensor(ts_ctx *ctx, const char *path,
	const char **name)
{
	(void)path, (void)name;
	unavailable(ctx);
	return NULL;
}

/* No model is ever made, so these are never reached with one. */
const char *ts_onnx_source(const ts_onnx_model *m) { (void)m; return ""; }
ts_dag *ts_onnx_dag(const ts_onnx_model *m) { (void)m; return NULL; }
int ts_onnx_nweights(const ts_onnx_model *m) { (void)m; return 0; }
int ts_onnx_ninputs(const ts_onnx_model *m) { (void)m; return 0; }
int ts_onnx_noutputs(const ts_onnx_model *m) { (void)m; return 0; }

const char *ts_onnx_weight_name(const ts_onnx_model *m, int i)
{
	(void)m, (void)i;
	return NULL;
}

const ts_array *ts_onnx_weight(const ts_onnx_model *m, int i)
{
	(void)m, (void)i;
	return NULL;
}

const ts_array *ts_onnx_find_weight(const ts_onnx_model *m, const char *name)
{
	(void)m, (void)name;
	return NULL;
}

const char *ts_onnx_input_name(const ts_onnx_model *m, int i, bool onnx)
{
	(void)m, (void)i, (void)onnx;
	return NULL;
}

const char *ts_onnx_output_name(const ts_onnx_model *m, int i, bool onnx)
{
	(void)m, (void)i, (void)onnx;
	return NULL;
}

ts_array **ts_onnx_inputs(ts_ctx *ctx, const ts_onnx_model *m, uint64_t seed)
{
	(void)m, (void)seed;
	unavailable(ctx);
	return NULL;
}

ts_status ts_onnx_write(ts_ctx *ctx, const ts_onnx_model *m, const char *dir,
	const char *name)
{
	(void)m, (void)dir, (void)name;
	return unavailable(ctx);
}
