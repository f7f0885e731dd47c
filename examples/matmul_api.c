/* The C API end to end on a matmul: declare what is computed, build the
 * DAG, run it in the reference interpreter on random inputs and print a
 * checksum.
 *
 *   usage: matmul_api [N]      (default N = 64; C = A B with A, B N x N)
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessel/tessel.h>

/* Declare C[i, j] = sum over k of A[i, k] * B[k, j] for "n" x "n"
 * matrices in "ctx" and return its DAG, or NULL. */
static ts_dag *matmul_declare(ts_ctx *ctx, int64_t n)
{
	const int64_t shape[2] = { n, n };
	ts_tensor *a, *b, *c;
	ts_axis *i, *j, *k;
	ts_expr *body;

	a = ts_placeholder(ctx, "A", TS_F32, 2, shape);
	b = ts_placeholder(ctx, "B", TS_F32, 2, shape);
	i = ts_axis_new(ctx, "i", n);
	j = ts_axis_new(ctx, "j", n);
	k = ts_reduce_axis(ctx, "k", n);
	body = ts_mul(ctx, ts_at(ctx, a, 2, ts_var(ctx, i), ts_var(ctx, k)),
		ts_at(ctx, b, 2, ts_var(ctx, k), ts_var(ctx, j)));
	body = ts_sum(ctx, 1, &k, body);
	c = ts_compute(ctx, "C", 2, (ts_axis *[]){ i, j }, body);
	if (!c)
		return NULL;
	return ts_dag_new(ctx, 0, NULL, 1, &c);
}

/* Return element ("i", "j") of A B computed by hand from "a" and "b". */
static double matmul_at(const ts_array *a, const ts_array *b, int64_t i,
	int64_t j)
{
	int64_t n = a->shape[1];
	double s = 0;

	for (int64_t k = 0; k < n; k++)
		s += ts_array_get(a, i * n + k) * ts_array_get(b, k * n + j);
	return s;
}

/* Run the example on "n" x "n" matrices in "ctx"; return the exit code. */
static int matmul_run(ts_ctx *ctx, int64_t n)
{
	ts_array *in[2], *out[1];
	double sum = 0, want;
	ts_dag *dag;

	dag = matmul_declare(ctx, n);
	if (!dag)
		return 2;
	ts_dag_print(stdout, dag);
	for (int t = 0; t < 2; t++) {
		in[t] = ts_array_for_tensor(ctx, dag->inputs[t]);
		if (!in[t])
			return 1;
		ts_array_fill_random(in[t], 42 + t);
	}
	if (ts_eval(ctx, dag, in, out) < 0)
		return 1;
	for (int64_t e = 0; e < out[0]->size; e++)
		sum += ts_array_get(out[0], e);
	want = matmul_at(in[0], in[1], n - 1, n / 2);
	printf("checksum %.6f, C[%lld, %lld] = %.6f (by hand %.6f)\n", sum,
		(long long)(n - 1), (long long)(n / 2),
		ts_array_get(out[0], (n - 1) * n + n / 2), want);
	return fabs(ts_array_get(out[0], (n - 1) * n + n / 2) - want) <
		1e-3 * (1 + fabs(want)) ? 0 : 1;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 64;
	ts_ctx *ctx = ts_ctx_alloc();
	int code;

	if (!ctx)
		return 1;
	code = matmul_run(ctx, n);
	if (code)
		fprintf(stderr, "matmul_api: %s\n", ts_ctx_error(ctx) ?
			ts_ctx_error(ctx) : "wrong result");
	ts_ctx_free(ctx);
	return code;
}
