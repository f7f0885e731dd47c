/* Helpers shared by the benchmark programs of bench/: the static and
 * naive pipelines, arguments, and interleaved timing of several
 * contenders in one run.  Not installed; the programs print, exit and
 * use the process' clock, which the library itself never does. */
#ifndef TESSEL_BENCH_H
#define TESSEL_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include <tessel/backend.h>
#include <tessel/lower.h>
#include <tessel/search.h>

/* One contender of an interleaved measurement: "run"("arg") does one
 * repetition; the timer fills "samples" (seconds) and "median". */
struct bench_runner {
	const char *name;
	void (*run)(void *arg);
	void *arg;
	int nsamples;
	double *samples;
	double median;
};

/* One run of a compiled module on its arguments: the argument of
 * bench_kernel_run, which exits on failure. */
struct bench_kernel {
	ts_module *m;
	ts_array **args;
};

void bench_kernel_run(void *arg);

/* A plain copy of "n" bytes from "src" to "dst": what the memory system
 * gives a kernel that moves the same bytes (read "n", write "n").
 * bench_copy_new allocates both (exits when out of memory),
 * bench_copy_run copies once, bench_copy_free releases them. */
struct bench_copy {
	char *src, *dst;
	size_t n;
};

void bench_copy_new(struct bench_copy *c, size_t n);
void bench_copy_run(void *arg);
void bench_copy_free(struct bench_copy *c);

/* A new context with the seed tessel run uses by default (1): its
 * static choices are the ones the command line compiles.  Exits when out
 * of memory. */
ts_ctx *bench_ctx(void);

/* Seconds on a monotonic clock. */
double bench_now(void);
/* The median of the "n" values "v" (reordered). */
double bench_median(double *v, int n);
/* Print the context's error with "what" to stderr and exit with 1. */
void bench_die(ts_ctx *ctx, const char *what) __attribute__((noreturn));

/* Schedule and compile for the CPU target "name" (a shipped name or a
 * JSON file, see ts_target_lookup) instead of the host: its description
 * rates the schedules and its LLVM cpu and features compile them.  Exit
 * with 2 when the host cannot run its code (another architecture, or a
 * feature the host lacks). */
void bench_use_target(const char *name);
/* The target (the host unless bench_use_target named another) with
 * "threads" cores, for static scheduling with "threads" workers. */
ts_target *bench_host_target(ts_ctx *ctx, int threads);
/* Statically schedule "dag" for the host with "threads" cores, lower it
 * and compile it with "threads" threads; "res" (may be NULL) receives the
 * static result.  NULL with an error in "ctx". */
ts_static_result *bench_static(ts_ctx *ctx, const ts_dag *dag, int threads);
ts_module *bench_compile_static(ts_ctx *ctx, const ts_dag *dag, int threads,
	ts_static_result **res);
/* Lower "dag" under the naive schedule and compile it with one thread. */
ts_module *bench_compile_naive(ts_ctx *ctx, const ts_dag *dag);
/* Compile the lowered "f" with "threads" threads at -O3. */
/* The options bench_compile_func compiles with: the programs' target,
 * -O3, "threads" threads. */
ts_compile_options bench_compile_options(ts_ctx *ctx, int threads);
ts_module *bench_compile_func(ts_ctx *ctx, const ts_func *f, int threads);

/* The arguments of "dag": random inputs from "seed", then fresh
 * outputs. */
ts_array **bench_args(ts_ctx *ctx, const ts_dag *dag, uint64_t seed);
/* The arguments "args" with the outputs replaced by fresh arrays (the
 * inputs are shared). */
ts_array **bench_args_fresh_outputs(ts_ctx *ctx, const ts_dag *dag,
	ts_array *const *args);

/* Run the "n" runners of "r" interleaved (r0 r1 ... r0 r1 ...), after one
 * warm-up each, until "min_total" seconds have passed and every runner
 * has at least "min_reps" samples, or "max_reps" rounds were done; fill
 * each runner's samples and median. */
void bench_interleave(struct bench_runner *r, int n, int min_reps,
	int max_reps, double min_total);
/* Run the "n" runners of "r" in blocks: "rounds" rounds in which each
 * runner, in turn, after a pause of "pause" seconds and one warm-up, is
 * timed repeatedly for "block" seconds; fill each runner's samples and
 * median.  For several threads, where one contender's idle workers spin
 * on the cores the next one needs (OpenBLAS's, OpenMP's), interleaving
 * run by run would time them against each other (measured: a two-thread
 * 1024^3 matmul took 22 ms interleaved with OpenBLAS, 10 ms alone). */
void bench_alternate(struct bench_runner *r, int n, int rounds,
	double block, double pause);

/* The floating-point operations of "dag" counted by the analysis. */
double bench_dag_flops(ts_ctx *ctx, const ts_dag *dag);
/* The geometric mean of the "n" positive values "v". */
double bench_geomean(const double *v, int n);

#endif
