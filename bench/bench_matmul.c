/* fp32 matmul: Tessel's static schedule against OpenBLAS's cblas_sgemm in
 * the same run, for 1 and 2 threads.  The matmul is declared with compute
 * only; the schedule comes from the static baseline on the host target with as
 * many cores as threads.  Tessel's output is checked against cblas before
 * any timing; repetitions alternate between the two and the table gives
 * medians and the ratio OpenBLAS time / Tessel time (above 1: Tessel is
 * faster).
 *
 * OpenBLAS picks its kernels when it is loaded from the CPU model; a
 * model newer than the library falls back to old SSE kernels
 * ("Prescott"), so the core it chose is printed and bench/run.sh sets
 * OPENBLAS_CORETYPE when it is not set.
 *
 * --target schedules and compiles for another CPU the host can run (AVX2
 * code on an AVX-512 host); compare it with OpenBLAS's kernels for that
 * CPU (OPENBLAS_CORETYPE=Haswell for AVX2).
 *
 *   usage: bench_matmul [--threads N]... [--min-time S] [--verbose]
 *                       [--target NAME|FILE.json]
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

/* Declared by OpenBLAS's own cblas.h; repeated for other cblas.h. */
char *openblas_get_corename(void);

#include "bench/bench.h"

/* The shapes measured: C[M, N] = A[M, K] B[K, N]. */
static const struct mm_shape {
	int64_t m, n, k;
} mm_shapes[] = {
	{ 1024, 1024, 1024 },
	{ 128, 768, 3072 },
	{ 4096, 64, 4096 },
};

/* One sgemm call on arrays held as ts_array. */
struct mm_blas {
	const struct mm_shape *s;
	const float *a, *b;
	float *c;
};

/* Run cblas_sgemm on "arg" (a struct mm_blas). */
static void blas_run(void *arg)
{
	struct mm_blas *p = arg;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)p->s->m,
		(int)p->s->n, (int)p->s->k, 1.0f, p->a, (int)p->s->k, p->b,
		(int)p->s->n, 0.0f, p->c, (int)p->s->n);
}

/* Declare C = A B for "s" in "ctx" with compute only; return the DAG. */
static ts_dag *mm_declare(ts_ctx *ctx, const struct mm_shape *s)
{
	const int64_t sa[2] = { s->m, s->k }, sb[2] = { s->k, s->n };
	ts_tensor *a = ts_placeholder(ctx, "A", TS_F32, 2, sa);
	ts_tensor *b = ts_placeholder(ctx, "B", TS_F32, 2, sb);
	ts_axis *i = ts_axis_new(ctx, "i", s->m);
	ts_axis *j = ts_axis_new(ctx, "j", s->n);
	ts_axis *k = ts_reduce_axis(ctx, "k", s->k);
	ts_expr *body;
	ts_tensor *c;

	body = ts_mul(ctx, ts_at(ctx, a, 2, ts_var(ctx, i), ts_var(ctx, k)),
		ts_at(ctx, b, 2, ts_var(ctx, k), ts_var(ctx, j)));
	c = ts_compute(ctx, "C", 2, (ts_axis *[]){ i, j },
		ts_sum(ctx, 1, &k, body));
	return c ? ts_dag_new(ctx, 2, (ts_tensor *[]){ a, b }, 1, &c) : NULL;
}

/* The options of the program. */
struct mm_opts {
	int nthreads;
	int threads[8];
	double min_time;	/* seconds of interleaved runs per case */
	bool verbose;		/* print the chosen configurations */
	int nnotes;
	char *notes[32];	/* one line per case, printed after the table */
};

/* Measure shape "s" with "threads" threads in a fresh context; print one
 * table row.  Return false when the check fails. */
static bool mm_case(const struct mm_shape *s, int threads,
	struct mm_opts *o)
{
	ts_ctx *ctx = bench_ctx();
	ts_dag *dag = mm_declare(ctx, s);
	ts_static_result *res = NULL;
	ts_module *m;
	ts_array **args, *ref;
	struct bench_kernel tp;
	struct mm_blas bp;
	struct bench_runner r[2];
	double err = 0, rel = 0, flops = 2.0 * s->m * s->n * s->k;
	double t0 = bench_now(), t_static;

	if (!dag)
		bench_die(ctx, "declaring the matmul");
	m = bench_compile_static(ctx, dag, threads, &res);
	t_static = bench_now() - t0;
	if (!m || !(args = bench_args(ctx, dag, 7)) ||
		!(ref = ts_array_for_tensor(ctx, ts_dag_output(dag, 0))))
		bench_die(ctx, "static schedule");
	openblas_set_num_threads(threads);
	tp = (struct bench_kernel){ m, args };
	bp = (struct mm_blas){ s, args[0]->data, args[1]->data, ref->data };
	bench_kernel_run(&tp);
	blas_run(&bp);
	if (ts_array_compare(ctx, args[2], ref, &err, &rel) < 0)
		bench_die(ctx, "comparing with cblas");
	if (o->verbose && o->nnotes < 32 && asprintf(&o->notes[o->nnotes],
	    "- %lld x %lld x %lld, %d threads: `%s` (model %.3f ms, chosen "
	    "in %.0f ms, lowered and compiled by LLVM in %.2f s in all)",
	    (long long)s->m, (long long)s->n, (long long)s->k, threads,
	    ts_config_to_json(res->best), res->best_cost * 1e3,
	    res->elapsed_ms, t_static) >= 0)
		o->nnotes++;
	r[0] = (struct bench_runner){ .name = "tessel",
		.run = bench_kernel_run, .arg = &tp };
	r[1] = (struct bench_runner){ .name = "openblas", .run = blas_run,
		.arg = &bp };
	if (threads > 1)
		bench_alternate(r, 2, 4, o->min_time / 4, 0.2);
	else
		bench_interleave(r, 2, 10, 2000, o->min_time);
	printf("| %lld x %lld x %lld | %d | %.3f | %.1f | %.3f | %.1f | "
		"%.2f | %.3f | %.2g |\n", (long long)s->m, (long long)s->n,
		(long long)s->k, threads, r[0].median * 1e3,
		flops / r[0].median * 1e-9, r[1].median * 1e3,
		flops / r[1].median * 1e-9, r[1].median / r[0].median,
		res->best_cost * 1e3, err);
	fflush(stdout);
	ts_module_free(m);
	ts_ctx_free(ctx);
	return err <= 1e-3 * sqrt((double)s->k);
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void mm_parse(int argc, char **argv, struct mm_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc &&
		    o->nthreads < 8 && atoi(argv[i + 1]) > 0) {
			o->threads[o->nthreads++] = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--verbose")) {
			o->verbose = true;
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			bench_use_target(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_matmul [--threads N]... "
				"[--min-time S] [--verbose] "
				"[--target NAME|FILE.json]\n");
			exit(2);
		}
	}
	if (!o->nthreads) {
		o->threads[0] = 1;
		o->threads[1] = 2;
		o->nthreads = 2;
	}
}

int main(int argc, char **argv)
{
	struct mm_opts o = { .min_time = 2.0 };
	int nshapes = (int)(sizeof(mm_shapes) / sizeof(mm_shapes[0]));
	bool ok = true;

	mm_parse(argc, argv, &o);
	printf("OpenBLAS kernels: %s%s\n\n", openblas_get_corename(),
		strcmp(openblas_get_corename(), "Prescott") ? "" : " (SSE3 "
		"fallback: set OPENBLAS_CORETYPE=SkylakeX on AVX-512 CPUs)");
	printf("| M x N x K | threads | Tessel ms | Tessel GFLOP/s | "
		"OpenBLAS ms | OpenBLAS GFLOP/s | OpenBLAS/Tessel | "
		"model ms | max abs err |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int t = 0; t < o.nthreads; t++)
		for (int i = 0; i < nshapes; i++)
			if (!mm_case(&mm_shapes[i], o.threads[t], &o)) {
				fprintf(stderr, "bench_matmul: Tessel and "
					"cblas disagree\n");
				ok = false;
			}
	if (o.nnotes)
		printf("\nStatic configurations:\n\n");
	for (int i = 0; i < o.nnotes; i++)
		printf("%s\n", o.notes[i]);
	return ok ? 0 : 1;
}
