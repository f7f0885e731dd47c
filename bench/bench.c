/* Helpers shared by the benchmark programs: pipelines, arguments and
 * interleaved timing. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gc.h>

#include "bench/bench.h"

/* Return the seconds of the monotonic clock or, when BENCH_CPU_TIME is
 * set, of the CPU time of this process: on a machine shared with other
 * work, the CPU time of a one-thread run does not count the time slices
 * other processes took (it still counts what they do to the caches). */
double bench_now(void)
{
	struct timespec ts;

	clock_gettime(getenv("BENCH_CPU_TIME") ? CLOCK_PROCESS_CPUTIME_ID :
		CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run the module of "arg" (a struct bench_kernel); exit on failure. */
void bench_kernel_run(void *arg)
{
	struct bench_kernel *k = arg;

	if (ts_module_run(k->m, k->args) < 0) {
		fprintf(stderr, "bench: a kernel failed to run\n");
		exit(1);
	}
}

void bench_copy_new(struct bench_copy *c, size_t n)
{
	c->n = n;
	c->src = malloc(n);
	c->dst = malloc(n);
	if (!c->src || !c->dst) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	memset(c->src, 1, n);
	memset(c->dst, 0, n);
}

void bench_copy_run(void *arg)
{
	struct bench_copy *c = arg;

	memcpy(c->dst, c->src, c->n);
	__asm__ volatile("" : : "r"(c->dst) : "memory");
}

void bench_copy_free(struct bench_copy *c)
{
	free(c->src);
	free(c->dst);
}

/* Order the doubles "a" and "b" for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Return the median of the "n" values "v", sorting them. */
double bench_median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Print the error of "ctx" after "what" and exit with status 1. */
void bench_die(ts_ctx *ctx, const char *what)
{
	const char *msg = ctx ? ts_ctx_error(ctx) : NULL;

	fprintf(stderr, "bench: %s: %s\n", what, msg ? msg : "failed");
	exit(1);
}

ts_ctx *bench_ctx(void)
{
	ts_ctx *ctx = ts_ctx_alloc();

	if (!ctx) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	ts_ctx_set_seed(ctx, 1);
	return ctx;
}

/* The target named by bench_use_target, or NULL: the host. */
static const char *bench_target_name;

void bench_use_target(const char *name)
{
	ts_ctx *ctx;

	if (!strcmp(name, "host")) {
		bench_target_name = NULL;
		return;
	}
	ctx = ts_ctx_alloc();
	ts_target *t = ts_target_lookup(ctx, name), *host = ts_target_host(ctx);
	const char *why = NULL;

	if (!t || !host || !ts_target_runs_on(t, host, &why)) {
		if (!t || !host)
			fprintf(stderr, "target '%s': %s\n", name,
				ts_ctx_error(ctx));
		else
			fprintf(stderr, "target '%s': this host cannot run its "
				"code: %s\n", name, why);
		exit(2);
	}
	bench_target_name = name;
	ts_ctx_free(ctx);
}

/* The target the programs schedule for, in "ctx". */
static ts_target *bench_base_target(ts_ctx *ctx)
{
	return bench_target_name ? ts_target_lookup(ctx, bench_target_name)
		: ts_target_host(ctx);
}

/* Return a copy of the target the programs schedule for with "threads"
 * cores. */
ts_target *bench_host_target(ts_ctx *ctx, int threads)
{
	ts_target *host = bench_base_target(ctx), *t;

	if (!host || !(t = GC_MALLOC(sizeof(*t))))
		return NULL;
	*t = *host;
	t->cpu.cores = threads;
	t->cpu.peak_gflops_f32 = t->cpu.peak_gflops_f32_core * threads;
	ts_target_finish(t);
	return t;
}

/* The options that compile for the programs' target in "ctx" at -O3
 * with "threads" threads. */
ts_compile_options bench_compile_options(ts_ctx *ctx, int threads)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_target *t = bench_target_name ? bench_base_target(ctx) : NULL;

	opt.threads = threads;
	if (t) {
		opt.cpu = t->cpu.llvm_cpu;
		opt.features = t->cpu.llvm_features;
	}
	return opt;
}

/* Compile "f" in "ctx" at -O3 with "threads" threads. */
ts_module *bench_compile_func(ts_ctx *ctx, const ts_func *f, int threads)
{
	ts_compile_options opt = bench_compile_options(ctx, threads);

	return f ? ts_module_compile(ctx, f, &opt) : NULL;
}

/* The static choice for "dag" with "threads" cores of the target in
 * "ctx": the baseline that tessel run --schedule static compiles and the
 * tuner measures first, whatever the context drew before. */
ts_static_result *bench_static(ts_ctx *ctx, const ts_dag *dag, int threads)
{
	ts_target *tg = bench_base_target(ctx);

	return tg ? ts_static_baseline_fill(ctx, dag, tg, threads, 1) : NULL;
}

/* Schedule "dag" statically for "threads" host cores in "ctx", lower and
 * compile it; store the static result in "res" when not NULL. */
ts_module *bench_compile_static(ts_ctx *ctx, const ts_dag *dag, int threads,
	ts_static_result **res)
{
	ts_static_result *r = bench_static(ctx, dag, threads);
	ts_schedule *sch = r ? ts_template_apply(r->tp, r->best) : NULL;

	if (res)
		*res = r;
	if (!sch)
		return NULL;
	return bench_compile_func(ctx, ts_lower(ctx, dag, sch), threads);
}

/* Lower "dag" naively in "ctx" and compile it with one thread. */
ts_module *bench_compile_naive(ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_naive(ctx, dag);

	return sch ? bench_compile_func(ctx, ts_lower(ctx, dag, sch), 1)
		: NULL;
}

/* Return the arguments of "dag" in "ctx": inputs from "seed", then
 * outputs. */
ts_array **bench_args(ts_ctx *ctx, const ts_dag *dag, uint64_t seed)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, seed);

	return in ? bench_args_fresh_outputs(ctx, dag, in) : NULL;
}

/* Return the inputs of "args" followed by fresh outputs of "dag". */
ts_array **bench_args_fresh_outputs(ts_ctx *ctx, const ts_dag *dag,
	ts_array *const *args)
{
	int n = ts_dag_ninputs(dag) + ts_dag_noutputs(dag);
	ts_array **out = GC_MALLOC(sizeof(*out) * (size_t)(n + 1));

	if (!out)
		return NULL;
	for (int i = 0; i < n; i++) {
		out[i] = i < ts_dag_ninputs(dag)
			? args[i]
			: ts_array_for_tensor(ctx,
				  ts_dag_output(dag, i - ts_dag_ninputs(dag)));
		if (!out[i])
			return NULL;
	}
	return out;
}

/* Time one repetition of "r" and append it to its samples. */
static void time_once(struct bench_runner *r)
{
	double t0 = bench_now();

	r->run(r->arg);
	r->samples[r->nsamples++] = bench_now() - t0;
}

/* Fill the median of each of the "n" runners "r" from its samples, which
 * stay in the order they were taken. */
static void set_medians(struct bench_runner *r, int n)
{
	for (int i = 0; i < n; i++) {
		double *copy = GC_MALLOC_ATOMIC(sizeof(double) *
			(size_t)(r[i].nsamples + 1));
		for (int k = 0; k < r[i].nsamples; k++)
			copy[k] = r[i].samples[k];
		r[i].median = bench_median(copy, r[i].nsamples);
	}
}

/* Run the "n" runners "r" interleaved: one warm-up each, then rounds of
 * one repetition each until "min_total" seconds and "min_reps" rounds, or
 * "max_reps" rounds; fill the samples and medians. */
void bench_interleave(struct bench_runner *r, int n, int min_reps,
	int max_reps, double min_total)
{
	double start;
	int round;

	for (int i = 0; i < n; i++) {
		r[i].samples = GC_MALLOC_ATOMIC(sizeof(double) *
			(size_t)max_reps);
		r[i].nsamples = 0;
		r[i].run(r[i].arg);
	}
	start = bench_now();
	for (round = 0; round < max_reps; round++) {
		if (round >= min_reps && bench_now() - start >= min_total)
			break;
		for (int i = 0; i < n; i++)
			time_once(&r[(i + round) % n]);
	}
	set_medians(r, n);
}

void bench_alternate(struct bench_runner *r, int n, int rounds,
	double block, double pause)
{
	struct timespec rest = { (time_t)pause, (long)((pause -
		(double)(time_t)pause) * 1e9) };
	int cap = 4096;

	for (int i = 0; i < n; i++) {
		r[i].samples = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)cap);
		r[i].nsamples = 0;
	}
	for (int round = 0; round < rounds; round++)
		for (int i = 0; i < n; i++) {
			struct bench_runner *x = &r[(i + round) % n];
			double start;
			/* Let the other contender's workers stop spinning,
			 * then warm this one up. */
			nanosleep(&rest, NULL);
			x->run(x->arg);
			start = bench_now();
			do
				time_once(x);
			while (x->nsamples < cap &&
			    bench_now() - start < block);
		}
	set_medians(r, n);
}

/* Return the floating-point operations of "dag" from the analysis in
 * "ctx" (stages that cannot be analysed count 0). */
double bench_dag_flops(ts_ctx *ctx, const ts_dag *dag)
{
	double flops = 0;

	for (int i = 0; i < ts_dag_nstages(dag); i++) {
		ts_stage_info *si = ts_analyze_stage(ctx, ts_dag_stage(dag, i));
		if (!si) {
			ts_ctx_clear_error(ctx);
			continue;
		}
		flops += (double)si->counts.flops;
	}
	return flops;
}

/* Return the geometric mean of the "n" positive values "v". */
double bench_geomean(const double *v, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += log(v[i]);
	return n > 0 ? exp(s / n) : NAN;
}
