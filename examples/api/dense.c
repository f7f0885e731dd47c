/* A dense layer declared as .tsl text inside a C program: parse it,
 * schedule it statically for this machine with a number of threads of
 * your choice, compile it, run it on the program's own arrays, and
 * compare with the reference interpreter on the same arrays.  A wrong
 * call shows how the library reports errors: a message in the context,
 * never a crash.
 *
 *   build:  cc dense.c $(pkg-config --cflags --libs tessel) -o dense
 *   usage:  ./dense [THREADS]      (0, the default: all of OpenMP's)
 *
 * Exit status: 0 when the results match, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>

#include <tessel/tessel.h>

/* What is computed, never how: Tessel derives the loops. */
static const char layer_tsl[] =
	"let B = 32\n"
	"let K = 512\n"
	"let N = 256\n"
	"input x: f32[B, K]\n"
	"weight W: f32[K, N]\n"
	"weight bias: f32[N]\n"
	"output y[b: B, n: N] = max((sum(k: K) x[b, k] * W[k, n]) + bias[n], "
	"0.0)\n";

/* An array of the shape of tensor "t" over memory of the program's own
 * (64-byte aligned), or NULL; the caller frees "*mem". */
static ts_array *own_array(const ts_tensor *t, void **mem)
{
	ts_array *a = calloc(1, sizeof(*a));
	size_t bytes;

	if (!a)
		return NULL;
	a->dtype = ts_tensor_dtype(t);
	a->ndim = ts_tensor_ndim(t);
	a->size = 1;
	for (int d = 0; d < ts_tensor_ndim(t); d++) {
		a->shape[d] = ts_tensor_dim(t, d);
		a->size *= ts_tensor_dim(t, d);
	}
	bytes = ((size_t)a->size * ts_dtype_size(ts_tensor_dtype(t)) + 63) /
		64 * 64;
	*mem = a->data = aligned_alloc(64, bytes);
	if (!a->data) {
		free(a);
		return NULL;
	}
	return a;
}

/* Fill the f32 array "a" with a pattern of its own, scaled by "s". */
static void fill(ts_array *a, float s)
{
	float *v = a->data;

	for (int64_t e = 0; e < a->size; e++)
		v[e] = s * (float)((e * 37 % 101) - 50) / 50;
}

/* Run the layer of "dag" with "threads" threads on "args" (x, W, bias,
 * then y) and compare "y" with the interpreter; false with a message in
 * "ctx" on failure. */
static bool run_layer(ts_ctx *ctx, const ts_dag *dag, int threads,
	ts_array **args)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_schedule *sch = ts_static_baseline(ctx, dag, ts_target_host(ctx),
		threads);
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_module *m;
	ts_array *want[1];
	double err;
	bool ok;

	opt.threads = threads;
	if (!f || !(m = ts_module_compile(ctx, f, &opt)))
		return false;
	printf("static schedule %s, %d thread(s)\n", ts_schedule_hash(sch),
		threads);
	ok = ts_module_run(m, args) == TS_OK &&
		ts_eval(ctx, dag, args, want) == TS_OK;
	ts_module_free(m);
	if (!ok)
		return false;
	ok = ts_array_close(args[3], want[0], &err);
	printf("y[0, 0] = %.6f (interpreter %.6f); largest difference %.3g: "
		"%s\n", ts_array_get(args[3], 0), ts_array_get(want[0], 0), err,
		ok ? "match" : "MISMATCH");
	return ok;
}

/* Show the message of a call with a wrong array ("args" with x and W
 * swapped); false when the library accepts it. */
static bool show_error(ts_ctx *ctx, const ts_dag *dag, ts_array **args)
{
	ts_module *m = ts_module_compile(ctx, ts_lower(ctx, dag, NULL), NULL);
	ts_array *swapped[4] = { args[1], args[0], args[2], args[3] };
	bool refused;

	if (!m)
		return false;
	refused = ts_module_run(m, swapped) == TS_ERROR;
	printf("x and W swapped: %s\n", refused ? ts_ctx_error(ctx) :
		"accepted");
	ts_ctx_clear_error(ctx);
	ts_module_free(m);
	return refused;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	ts_ctx *ctx = ts_ctx_alloc();
	void *mem[4] = { 0 };
	ts_array *args[4] = { 0 };
	ts_dag *dag;
	bool ok = false;

	if (!ctx || argc > 2 || threads < 0) {
		fprintf(stderr, "usage: %s [THREADS]\n", argv[0]);
		return 2;
	}
	dag = ts_parse_string(ctx, "layer.tsl", layer_tsl);
	if (dag) {
		/* Inputs in order of declaration, then the output. */
		for (int i = 0; i < 3; i++)
			args[i] = own_array(ts_dag_input(dag, i), &mem[i]);
		args[3] = own_array(ts_dag_output(dag, 0), &mem[3]);
		if (args[0] && args[1] && args[2] && args[3]) {
			fill(args[0], 1.0f);
			fill(args[1], 0.05f);
			fill(args[2], 0.1f);
			ok = run_layer(ctx, dag, threads, args) &&
				show_error(ctx, dag, args);
		}
	}
	if (!ok)
		fprintf(stderr, "%s: %s\n", argv[0], ts_ctx_error(ctx) ?
			ts_ctx_error(ctx) : "wrong result");
	for (int i = 0; i < 4; i++) {
		free(mem[i]);
		free(args[i]);
	}
	ts_ctx_free(ctx);
	return ok ? 0 : 1;
}
