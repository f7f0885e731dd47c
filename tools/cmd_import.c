/* tessel import: an ONNX model as a readable .tsl program (one or a few
 * stages per node, each under a comment naming the node, its op and its
 * attributes) and its weights as .npy files. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <tessel/tessel.h>

#include "tools/commands.h"
#include "tools/options.h"

struct import_opts {
	const char *file;
	const char *out;	/* folder, or NULL: the program to stdout */
	const char *name;	/* of the .tsl file, without .tsl */
};

static bool set_out(void *s, const char *v)
{
	return ts_tool_set_string(&((struct import_opts *)s)->out, v);
}

static bool set_name(void *s, const char *v)
{
	return ts_tool_set_string(&((struct import_opts *)s)->name, v);
}

static const struct ts_tool_option import_options[] = {
	{ "-o", true, set_out, "write DIR/NAME.tsl and DIR/<weight>.npy "
	  "(DIR created\n                     if needed); without it the "
	  "program goes to stdout", NULL },
	{ "--name", true, set_name, "the program's file name (default: the "
	  "model's, less .onnx)", NULL },
};

static const struct ts_tool_options import_command = {
	"import", import_options,
	sizeof(import_options) / sizeof(import_options[0]),
	"usage: tessel import MODEL.onnx [-o DIR] [--name NAME] "
	"[--shape NAME=DIMS]...\n\n"
	"Import an ONNX model (opsets 7 to 17) as a .tsl program: one or a "
	"few stages\nper node, named after its outputs, under a comment with "
	"the node's op and\nattributes.  Initializers become weights, written "
	"as .npy files beside the\nprogram; shape arithmetic and other nodes "
	"on constants are folded.  Every\nother command also takes the .onnx "
	"file directly.\n\n",
	"0 success, 2 bad usage or a model that cannot be imported (the "
	"message\nnames the node, its op and what is wrong)",
};

/* "dir/resnet18.onnx" -> "resnet18" */
static char *stem(const char *path)
{
	const char *base = strrchr(path, '/');
	char *s = strdup(base ? base + 1 : path);
	size_t n = strlen(s);

	if (n > 5 && !strcmp(s + n - 5, ".onnx"))
		s[n - 5] = 0;
	return s;
}

int ts_cmd_import(int argc, char **argv)
{
	struct import_opts o = { 0 };
	int code = ts_tool_parse_args(&import_command, argc, argv, &o, &o.file);
	ts_ctx *ctx;
	ts_dag *dag;
	const ts_onnx_model *m;
	int64_t bytes = 0;

	if (code >= 0)
		return code;
	if (!ts_tool_is_onnx(o.file)) {
		fprintf(stderr, "tessel import: %s: expected an .onnx file\n",
			o.file);
		return TS_EXIT_USAGE;
	}
	ctx = ts_ctx_alloc();
	if (!(dag = ts_tool_load(ctx, o.file))) {
		ts_tool_report(ctx);
		ts_ctx_free(ctx);
		return TS_EXIT_USAGE;
	}
	ts_tool_warnings(ctx);
	m = ts_tool_model(dag);
	if (!o.out) {
		fputs(ts_onnx_source(m), stdout);
		ts_ctx_free(ctx);
		return TS_EXIT_OK;
	}
	if (!o.name)
		o.name = stem(o.file);
	if (ts_tool_make_dir(o.out, "import", "-o") < 0 ||
	    ts_onnx_write(ctx, m, o.out, o.name) < 0) {
		ts_tool_report(ctx);
		ts_ctx_free(ctx);
		return TS_EXIT_FAIL;
	}
	for (int i = 0; i < ts_onnx_nweights(m); i++)
		bytes += ts_onnx_weight(m, i)->size *
			(int64_t)ts_dtype_size(ts_onnx_weight(m, i)->dtype);
	printf("%s/%s.tsl: %d stages, %d inputs, %d weights (%.1f MB) in "
	       "%s/<name>.npy\n",
		o.out, o.name, ts_dag_nstages(dag), ts_onnx_ninputs(m),
		ts_onnx_nweights(m), bytes / 1e6, o.out);
	ts_ctx_free(ctx);
	return TS_EXIT_OK;
}
