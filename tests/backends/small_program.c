/* The small program the schedule and lowering tests share. */
#include <config.h>

#include "tests/backends/small_program.h"

ts_dag *ts_test_small_program(ts_ctx *ctx)
{
	int64_t sa[2] = { 10, 6 }, sb[2] = { 6, 12 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 2, sb);
	ts_axis *i = ts_axis_new(ctx, "i", 10), *j = ts_axis_new(ctx, "j", 12);
	ts_axis *k = ts_reduce_axis(ctx, "k", 6);
	ts_axis *pi = ts_axis_new(ctx, "i", 10), *pk = ts_axis_new(ctx, "k", 6);
	ts_axis *mi = ts_axis_new(ctx, "i", 10);
	ts_axis *mk = ts_reduce_axis(ctx, "k", 6);
	ts_axis *ij[2] = { i, j }, *pik[2] = { pi, pk };
	ts_tensor *P, *C, *M, *in[2] = { A, B }, *out[2];

	P = ts_compute(ctx, "P", 2, pik, ts_mul(ctx, ts_at(ctx, A, 2,
		ts_var(ctx, pi), ts_var(ctx, pk)), ts_float(ctx, 2.0)));
	C = ts_compute(ctx, "C", 2, ij, ts_sum(ctx, 1, &k, ts_mul(ctx,
		ts_at(ctx, P, 2, ts_var(ctx, i), ts_var(ctx, k)),
		ts_at(ctx, B, 2, ts_var(ctx, k), ts_var(ctx, j)))));
	M = ts_compute(ctx, "M", 1, &mi, ts_div(ctx, ts_sum(ctx, 1, &mk,
		ts_at(ctx, A, 2, ts_var(ctx, mi), ts_var(ctx, mk))),
		ts_float(ctx, 6.0)));
	out[0] = C;
	out[1] = M;
	return ts_dag_new(ctx, 2, in, 2, out);
}
