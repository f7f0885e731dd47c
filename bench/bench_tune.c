/* Tuned fp32 matmul against OpenBLAS and against Tessel's own static
 * schedule, in the same run.  For each seed: the static schedule, a full
 * tuning run (evolutionary search with the learned cost model, at most
 * --trials measurements) and a hardware-guided run (only the static
 * model's top --topk configurations measured) are compiled; then the four
 * kernels run interleaved and the table gives medians and ratios.  Every
 * candidate the tuner timed was first checked against the reference
 * interpreter; the kernels here are checked against cblas_sgemm.
 *
 * What the targets ask, printed under the table:
 *   tuned / OpenBLAS                 >= 0.9
 *   tuned / static                   >= 1.2, or static within 5% of tuned
 *   top-k / tuned (as speed)         >= 0.9, top-k tuning under 15 s
 *
 * --curve FILE.svg draws the full run's tuning curve of the last seed
 * with the static, tuned and OpenBLAS times of the interleaved run as
 * reference lines.
 *
 *   usage: bench_tune [--size M N K] [--threads T] [--trials N]
 *                     [--topk K] [--seeds S] [--min-time S]
 *                     [--curve FILE.svg]
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include <tessel/tune.h>

#include "bench/bench.h"
#include "bench/tuned.h"

/* The options of the program. */
struct tune_opts {
	int64_t m, n, k;
	int threads, trials, topk, seeds;
	double min_time;
	const char *curve;	/* SVG of the tuning curve, or NULL */
};

/* One sgemm call on arrays held as ts_array. */
struct tune_blas {
	const struct tune_opts *o;
	const float *a, *b;
	float *c;
};

/* Run cblas_sgemm on "arg" (a struct tune_blas). */
static void blas_run(void *arg)
{
	struct tune_blas *p = arg;
	const struct tune_opts *o = p->o;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)o->m,
		(int)o->n, (int)o->k, 1.0f, p->a, (int)o->k, p->b, (int)o->n,
		0.0f, p->c, (int)o->n);
}

/* The matmul of "o", declared from text with compute only. */
static ts_dag *tune_declare(ts_ctx *ctx, const struct tune_opts *o)
{
	char src[512];

	snprintf(src, sizeof(src),
		"input A: f32[%lld, %lld]\n"
		"input B: f32[%lld, %lld]\n"
		"output C[i: %lld, j: %lld] = sum(k: %lld) A[i, k] * B[k, j]\n",
		(long long)o->m, (long long)o->k, (long long)o->k,
		(long long)o->n, (long long)o->m, (long long)o->n,
		(long long)o->k);
	return ts_parse_string(ctx, "bench_tune", src);
}

/* Whether "got" matches "want" for a sum of "k" products. */
static bool tune_close(ts_ctx *ctx, ts_array *got, ts_array *want, int64_t k)
{
	double err = 0, rel = 0;

	if (ts_array_compare(ctx, got, want, &err, &rel) < 0)
		bench_die(ctx, "comparing with cblas");
	return err <= 1e-3 * sqrt((double)k);
}

/* Draw the curve of the tuning "full" of "seed" into o->curve, with the
 * medians "r" (static, tuned, top-k, OpenBLAS) of the interleaved run as
 * reference lines. */
static void write_curve(ts_ctx *ctx, const struct tune_opts *o,
	uint64_t seed, const struct bench_tuning *full,
	const struct bench_runner *r)
{
	ts_tune_curve c = ts_tune_curve_default();
	char title[128];

	snprintf(title, sizeof(title), "matmul %lldx%lldx%lld, %d thread(s), "
		"seed %llu", (long long)o->m, (long long)o->n, (long long)o->k,
		o->threads, (unsigned long long)seed);
	c.title = title;
	c.n = full->nhistory;
	c.best = full->history;
	c.static_s = r[0].median;
	c.tuned_s = r[1].median;
	c.library_s = r[3].median;
	c.library = "OpenBLAS";
	if (ts_tune_curve_draw(ctx, o->curve, &c) < 0)
		bench_die(ctx, "writing the curve");
	fprintf(stderr, "bench_tune: curve in %s\n", o->curve);
}

/* Tune and measure with "seed"; print one row per kernel and the target
 * lines.  Return false when a kernel disagrees with cblas. */
static bool tune_case(const struct tune_opts *o, uint64_t seed)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = tune_declare(ctx, o);
	struct bench_tuning full = { .trials = o->trials, .seed = seed };
	struct bench_tuning top = { .trials = o->topk, .topk = o->topk,
		.seed = seed };
	struct bench_kernel kern[3];
	struct tune_blas bp;
	struct bench_runner r[4];
	ts_module *ms[3];
	ts_array **args, *ref;
	static const char *names[3] = { "static", "tuned", "top-k" };
	double flops = 2.0 * o->m * o->n * o->k;
	bool ok = true;

	ts_ctx_set_seed(ctx, seed);
	if (!dag || !(args = bench_args(ctx, dag, 7)) ||
		!(ref = ts_array_for_tensor(ctx, ts_dag_output(dag, 0))))
		bench_die(ctx, "declaring the matmul");
	ms[0] = bench_compile_static(ctx, dag, o->threads, NULL);
	ms[1] = ms[0] ? bench_compile_tuned(ctx, dag, o->threads, &full,
		"full") : NULL;
	ms[2] = ms[1] ? bench_compile_tuned(ctx, dag, o->threads, &top,
		"top-k") : NULL;
	if (!ms[2])
		bench_die(ctx, "tuning");
	openblas_set_num_threads(o->threads);
	bp = (struct tune_blas){ o, args[0]->data, args[1]->data, ref->data };
	blas_run(&bp);
	for (int i = 0; i < 3; i++) {
		kern[i] = (struct bench_kernel){ ms[i],
			bench_args_fresh_outputs(ctx, dag, args) };
		bench_kernel_run(&kern[i]);
		if (!tune_close(ctx, kern[i].args[2], ref, o->k)) {
			fprintf(stderr, "bench_tune: %s kernel disagrees with "
				"cblas\n", names[i]);
			ok = false;
		}
		r[i] = (struct bench_runner){ .name = names[i],
			.run = bench_kernel_run, .arg = &kern[i] };
	}
	r[3] = (struct bench_runner){ .name = "openblas", .run = blas_run,
		.arg = &bp };
	if (o->threads > 1)
		bench_alternate(r, 4, 4, o->min_time / 4, 0.2);
	else
		bench_interleave(r, 4, 10, 2000, o->min_time);
	for (int i = 0; i < 4; i++)
		printf("| %llu | %s | %s | %.3f | %.1f | %.2f |\n",
			(unsigned long long)seed, r[i].name,
			i == 1 ? "full" : i == 2 ? "top-k" : "",
			r[i].median * 1e3, flops / r[i].median * 1e-9,
			r[3].median / r[i].median);
	printf("| %llu | targets | tuned/OpenBLAS %.2f (>= 0.9) | "
		"tuned/static %.2f (>= 1.2 or static within 5%%) | top-k %.0f%% "
		"of tuned (>= 90%%) | top-k in %.1f s (< 15 s), full in %.0f s "
		"|\n", (unsigned long long)seed,
		r[3].median / r[1].median, r[0].median / r[1].median,
		100.0 * r[1].median / r[2].median, top.seconds, full.seconds);
	fflush(stdout);
	if (o->curve)
		write_curve(ctx, o, seed, &full, r);
	for (int i = 0; i < 3; i++)
		ts_module_free(ms[i]);
	ts_ctx_free(ctx);
	return ok;
}

/* Print the usage and exit with 2. */
static void tune_usage(void)
{
	fprintf(stderr, "usage: bench_tune [--size M N K] [--threads T] "
		"[--trials N] [--topk K] [--seeds S] [--min-time S]\n"
		"                  [--curve FILE.svg]\n");
	exit(2);
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void tune_parse(int argc, char **argv, struct tune_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int left = argc - i - 1;
		if (!strcmp(a, "--size") && left >= 3) {
			o->m = atoll(argv[++i]);
			o->n = atoll(argv[++i]);
			o->k = atoll(argv[++i]);
		} else if (!strcmp(a, "--threads") && left >= 1) {
			o->threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--trials") && left >= 1) {
			o->trials = atoi(argv[++i]);
		} else if (!strcmp(a, "--topk") && left >= 1) {
			o->topk = atoi(argv[++i]);
		} else if (!strcmp(a, "--seeds") && left >= 1) {
			o->seeds = atoi(argv[++i]);
		} else if (!strcmp(a, "--min-time") && left >= 1) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(a, "--curve") && left >= 1) {
			o->curve = argv[++i];
		} else {
			tune_usage();
		}
	}
	if (o->m <= 0 || o->n <= 0 || o->k <= 0 || o->threads <= 0 ||
	    o->trials <= 0 || o->topk <= 0 || o->seeds <= 0)
		tune_usage();
}

int main(int argc, char **argv)
{
	struct tune_opts o = { 1024, 1024, 1024, 1, 300, 10, 1, 2.0, NULL };
	bool ok = true;

	tune_parse(argc, argv, &o);
	printf("matmul %lld x %lld x %lld, %d thread(s); OpenBLAS kernels: "
		"%s\n\n", (long long)o.m, (long long)o.n, (long long)o.k,
		o.threads, openblas_get_corename());
	printf("| seed | kernel | tuning | ms | GFLOP/s | OpenBLAS/kernel |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int s = 1; s <= o.seeds; s++)
		ok &= tune_case(&o, (uint64_t)s);
	return ok ? 0 : 1;
}
