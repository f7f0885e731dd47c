/* Arrays in .npy files on the command line: tessel eval and tessel run
 * read each input from DIR/<name>.npy and write each output as
 * DIR/<name>.npy, with one naming and one set of messages. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gc.h>

#include "tools/commands.h"

/* Return "dir"/"name".npy, malloc'ed. */
static char *npy_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 6;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s.npy", dir, name);
	return p;
}

/* Print "dtype[shape]" of "ndim" extents "shape" to "out". */
static void print_type(FILE *out, ts_dtype t, int ndim, const int64_t *shape)
{
	fprintf(out, "%s[", ts_dtype_name(t));
	for (int d = 0; d < ndim; d++)
		fprintf(out, "%s%" PRId64, d ? ", " : "", shape[d]);
	fputc(']', out);
}

void ts_tool_print_type(FILE *out, const ts_array *a)
{
	print_type(out, a->dtype, a->ndim, a->shape);
}

/* Whether the array "a" has the dtype and shape of tensor "t". */
static bool array_fits(const ts_array *a, const ts_tensor *t)
{
	if (a->dtype != ts_tensor_dtype(t) || a->ndim != ts_tensor_ndim(t))
		return false;
	for (int d = 0; d < ts_tensor_ndim(t); d++)
		if (a->shape[d] != ts_tensor_dim(t, d))
			return false;
	return true;
}

/* Read input "t" from "dir"/<name>.npy in "ctx"; on failure print why as
 * "tessel "verb": ..." and return NULL. */
static ts_array *read_input(ts_ctx *ctx, const char *dir, const ts_tensor *t,
	const char *file, const char *verb)
{
	char *path = npy_path(dir, file);
	ts_array *a = path ? ts_npy_read(ctx, path) : NULL;

	if (!a) {
		fprintf(stderr, "tessel %s: input '%s': %s\n", verb,
			ts_tensor_name(t),
			path && ts_ctx_error(ctx) ? ts_ctx_error(ctx)
						  : "out of memory");
		ts_ctx_clear_error(ctx);
	} else if (!array_fits(a, t)) {
		fprintf(stderr, "tessel %s: input '%s': %s holds ", verb,
			ts_tensor_name(t), path);
		print_type(stderr, a->dtype, a->ndim, a->shape);
		fprintf(stderr, " but the program declares ");
		print_type(stderr, ts_tensor_dtype(t), ts_tensor_ndim(t),
			ts_tensor_shape(t));
		fputc('\n', stderr);
		a = NULL;
	}
	free(path);
	return a;
}

/* The file name (without .npy) input "i" of "dag" is read from in
 * "dir": its name in the program, or its name in the ONNX model when
 * only that file exists (PyTorch calls an input "input", which the
 * program renames). */
static const char *input_file(const ts_dag *dag, const char *dir, int i)
{
	const char *name = ts_tensor_name(ts_dag_input(dag, i));
	const char *onnx = ts_tool_onnx_input_name(dag, name);
	char *mine, *theirs;
	bool use;

	if (!onnx || !strcmp(onnx, name) || strchr(onnx, '/'))
		return name;
	mine = npy_path(dir, name);
	theirs = npy_path(dir, onnx);
	use = mine && theirs && access(mine, R_OK) && !access(theirs, R_OK);
	free(mine);
	free(theirs);
	return use ? onnx : name;
}

ts_array **ts_tool_read_inputs(ts_ctx *ctx, const ts_dag *dag,
	const char *dir, const char *verb)
{
	/* Scanned by the collector: it holds GC arrays. */
	ts_array **in = GC_MALLOC(sizeof(*in) * (ts_dag_ninputs(dag) + 1));

	if (!in)
		return NULL;
	for (int i = 0; i < ts_dag_ninputs(dag); i++) {
		const ts_array *w = ts_tool_weight(dag,
			ts_tensor_name(ts_dag_input(dag, i)));
		char *path = npy_path(dir,
			ts_tensor_name(ts_dag_input(dag, i)));

		/* A model's weight not in the folder comes from the model. */
		if (w && path && access(path, R_OK)) {
			in[i] = (ts_array *)w;
			free(path);
			continue;
		}
		free(path);
		if (!(in[i] = read_input(ctx, dir, ts_dag_input(dag, i),
		    input_file(dag, dir, i), verb)))
			return NULL;
	}
	return in;
}

ts_status ts_tool_write_array(ts_ctx *ctx, const char *dir, const char *name,
	const ts_array *a, const char *verb)
{
	char *path = npy_path(dir, name);
	ts_status st = path ? ts_npy_write(ctx, path, a) : TS_ERROR;

	if (st != TS_OK) {
		fprintf(stderr, "tessel %s: %s\n", verb, path &&
			ts_ctx_error(ctx) ? ts_ctx_error(ctx) : "out of memory");
		ts_ctx_clear_error(ctx);
	}
	free(path);
	return st;
}

ts_status ts_tool_make_dir(const char *dir, const char *verb,
	const char *opt)
{
	struct stat st;

	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return TS_OK;
		fprintf(stderr, "tessel %s: %s %s is not a folder\n", verb,
			opt, dir);
		return TS_ERROR;
	}
	if (mkdir(dir, 0777) == 0)
		return TS_OK;
	fprintf(stderr, "tessel %s: cannot create %s: %s\n", verb, dir,
		strerror(errno));
	return TS_ERROR;
}
