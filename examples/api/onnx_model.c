/* An ONNX model from C: import the file, fix its symbolic dimensions,
 * compile it as a network scheduled statically for this machine, run it
 * on inputs the program fills itself (the weights come from the model)
 * into output arrays of its own, and compare with the reference
 * interpreter.
 *
 *   build:  cc onnx_model.c $(pkg-config --cflags --libs tessel) -o onnx_model
 *   usage:  ./onnx_model MODEL.onnx [NAME=DIMS ...]
 *           (as tessel's --shape: x=1x3x224x224 for an input, batch=1
 *            for a symbolic dimension)
 *
 * Exit status: 0 when every output matches, 1 otherwise, 2 on bad usage
 * or a model that does not import, 77 when this build of the library
 * reads no ONNX files (configured without protobuf-c).
 */
#include <stdio.h>
#include <stdlib.h>

#include <tessel/tessel.h>

/* An array shaped like tensor "t" whose data the caller allocates and
 * frees: "*mem", 64-byte aligned; NULL when out of memory. */
static ts_array *own_array(const ts_tensor *t, void **mem)
{
	ts_array *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->dtype = ts_tensor_dtype(t);
	a->ndim = ts_tensor_ndim(t);
	a->size = 1;
	for (int d = 0; d < ts_tensor_ndim(t); d++)
		a->size *= a->shape[d] = ts_tensor_dim(t, d);
	*mem = a->data = aligned_alloc(64,
		((size_t)a->size * ts_dtype_size(ts_tensor_dtype(t)) + 63) /
			64 * 64);
	if (!a->data) {
		free(a);
		return NULL;
	}
	return a;
}

/* The arrays of the network's inputs: the model's own weights, and
 * arrays of the program for the rest, filled with a pattern; "mem"
 * collects what to free.  False when out of memory. */
static bool make_inputs(const ts_onnx_model *m, const ts_dag *dag,
	ts_array **in, void **mem)
{
	for (int i = 0; i < ts_dag_ninputs(dag); i++) {
		const ts_tensor *t = ts_dag_input(dag, i);
		const ts_array *w = ts_onnx_find_weight(m, ts_tensor_name(t));
		if (w) {
			/* Inputs are only read: the cast is safe. */
			in[i] = (ts_array *)w;
			continue;
		}
		if (!(in[i] = own_array(t, &mem[i])))
			return false;
		for (int64_t e = 0; e < in[i]->size; e++)
			ts_array_set(in[i], e, (double)(e % 17 - 8) / 8);
		printf("input '%s': %s, %lld values\n", ts_tensor_name(t),
			ts_dtype_name(ts_tensor_dtype(t)),
			(long long)in[i]->size);
	}
	return true;
}

/* Run the network "net" of "m" on "in" into outputs of the program's
 * own, compare them with the interpreter and print them; "mem" collects
 * what to free.  False on failure or a mismatch. */
static bool run_compare(ts_ctx *ctx, const ts_onnx_model *m,
	const ts_dag *dag, ts_network *net, ts_array **in, void **mem)
{
	ts_array **out = calloc((size_t)ts_dag_noutputs(dag), sizeof(*out));
	ts_array **want = calloc((size_t)ts_dag_noutputs(dag), sizeof(*want));
	bool ok = out && want;

	for (int o = 0; ok && o < ts_dag_noutputs(dag); o++)
		ok = (out[o] = own_array(ts_dag_output(dag, o), &mem[o])) !=
			NULL;
	/* Outputs given: the network writes into them. */
	ok = ok && ts_network_run(net, in, out) == TS_OK &&
		ts_eval(ctx, dag, in, want) == TS_OK;
	for (int o = 0; ok && o < ts_dag_noutputs(dag); o++) {
		double err;
		ok = ts_array_close(out[o], want[o], &err);
		printf("output '%s': %lld values, first %.6g; largest "
			"difference from the interpreter %.3g: %s\n",
			ts_onnx_output_name(m, o, true),
			(long long)out[o]->size, ts_array_get(out[o], 0), err,
			ok ? "match" : "MISMATCH");
	}
	for (int o = 0; out && o < ts_dag_noutputs(dag); o++)
		free(out[o]);
	free(out);
	free(want);
	return ok;
}

/* Import, compile and run "path" with the "n" shapes "shapes"; return
 * the exit status. */
static int run_model(ts_ctx *ctx, const char *path, int n,
	const char *const *shapes)
{
	ts_onnx_options opt = { .nshapes = n, .shapes = shapes };
	ts_onnx_model *m = ts_onnx_import(ctx, path, &opt);
	ts_dag *dag = m ? ts_onnx_dag(m) : NULL;
	ts_network *net;
	ts_array **in;
	void **mem;
	bool ok;

	if (!dag)
		return 2;
	printf("%s: %d inputs, %d weights, %d outputs, %d stages\n", path,
		ts_onnx_ninputs(m), ts_onnx_nweights(m), ts_dag_noutputs(dag),
		ts_dag_nstages(dag));
	/* Partition into tasks, schedule each statically, compile. */
	net = ts_network_compile(ctx, dag, ts_target_host(ctx), NULL);
	if (!net)
		return 1;
	in = calloc((size_t)ts_dag_ninputs(dag), sizeof(*in));
	mem = calloc((size_t)(ts_dag_ninputs(dag) + ts_dag_noutputs(dag)),
		sizeof(*mem));
	ok = in && mem && make_inputs(m, dag, in, mem) &&
		run_compare(ctx, m, dag, net, in, mem + ts_dag_ninputs(dag));
	ts_network_free(net);
	for (int i = 0; in && mem && i < ts_dag_ninputs(dag); i++)
		if (mem[i])
			free(in[i]);
	for (int i = 0; mem && i < ts_dag_ninputs(dag) + ts_dag_noutputs(dag);
		i++)
		free(mem[i]);
	free(in);
	free(mem);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	ts_ctx *ctx;
	int code;

	if (argc < 2) {
		fprintf(stderr, "usage: %s MODEL.onnx [NAME=DIMS ...]\n",
			argv[0]);
		return 2;
	}
	if (!ts_onnx_available()) {
		printf("this libtessel was built without ONNX import\n");
		return 77;
	}
	ctx = ts_ctx_alloc();
	if (!ctx)
		return 1;
	code = run_model(ctx, argv[1], argc - 2, (const char *const *)argv + 2);
	if (code)
		fprintf(stderr, "%s: %s\n", argv[0], ts_ctx_error(ctx) ?
			ts_ctx_error(ctx) : "wrong result");
	ts_ctx_free(ctx);
	return code;
}
