/* Fuzz the ONNX importer: any bytes give a program that parses (the
 * importer's text goes through the .tsl front end) or one message, never
 * a crash. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	const char *shapes[1] = { "batch=2" };
	ts_onnx_options opt = { 0 };
	ts_onnx_model *m;

	opt.nshapes = 1;
	opt.shapes = shapes;
	m = ts_onnx_import_bytes(ctx, "fuzz.onnx", data, size, &opt);
	if (!m)
		fuzz_check_error(ctx);
	else if (!ts_onnx_dag(m) || !ts_onnx_source(m))
		abort();
	ts_ctx_free(ctx);
	return 0;
}
