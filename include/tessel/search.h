/* Tessel: filling knob spaces.
 *
 * Static filling rates configurations with an analytical model of the
 * target (compute throughput, register pressure, traffic per cache level
 * from the analysis' footprints, parallel balance, tails) and picks the
 * best, with no measurement.  The same model ranks the top-k candidates
 * the tuner measures.
 */
#ifndef TESSEL_SEARCH_H
#define TESSEL_SEARCH_H

#include <tessel/gpu.h>
#include <tessel/metatemplate.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model's estimate for one stage nest, in seconds, with its parts. */
typedef struct ts_estimate {
	double total;		/* the estimate */
	double compute;		/* arithmetic at the achievable rate */
	double memory[4];	/* L1, L2, L3, DRAM traffic times */
	double overhead;	/* loop and parallel overhead */
	double efficiency;	/* achieved / peak arithmetic rate */
	int threads;		/* workers the parallel loops use */
} ts_estimate;

/* Estimate the time of "cfg" on the target of "tp"; "per_stage" (may be
 * NULL) receives one estimate per DAG stage. */
double ts_model_estimate(__ts_keep const ts_template *tp,
	__ts_keep const ts_config *cfg,
	__ts_keep __ts_null ts_estimate *per_stage);

/* The result of static filling. */
typedef struct ts_static_result {
	ts_template *tp;
	ts_config *best;
	double best_cost;	/* estimated seconds */
	int k;			/* ranked candidates kept */
	ts_config **topk;	/* best first; topk[0] == best */
	double *topk_cost;
	int rated;		/* configurations rated */
	double elapsed_ms;	/* time spent choosing */
} ts_static_result;

/* Statically schedule "dag" for "target", a CPU or a GPU: build the
 * template, rate candidates with the target's model (structured seeds,
 * random samples, then local search from the best) and keep the "k"
 * best.  The context's seed drives the random
 * part.
 * Requires: a DAG and a target.  Produces: ranked configurations. */
__ts_gc ts_static_result *ts_static_fill(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target, int k);

/* Shorthand: the schedule of the best static configuration. */
__ts_gc ts_schedule *ts_static_schedule(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target);

/* "target" for kernels that run with "threads" threads: a copy (memory
 * of the collector) with its cores set to "threads" and its total peak
 * scaled to match, or "target" itself when "threads" is not positive or
 * "target" is not a CPU. */
__ts_gc const ts_target *ts_target_for_threads(
	__ts_keep const ts_target *target, int threads);

/* The static baseline of "dag": static filling for "target" run with
 * "threads" threads (ts_target_for_threads; 0: its own cores), its
 * random stream seeded by the context's seed and the DAG's hash (the
 * context's stream restarts from its seed afterwards), the "k" best
 * kept.
 * Its best is the schedule "tessel run --schedule static" compiles and
 * the one the tuner measures as its static choice: both come from here,
 * so that the same target, threads and seed give one schedule.  A
 * context fills each task once for a CPU target: asked again for the
 * DAG or one equal to it up to renaming (ts_dag_hash), the same target,
 * threads and seed, it returns the ranked configurations of that search
 * (for the DAG's own template) without searching again (a network's
 * layout pass and its schedules ask for the same subgraphs).
 * Requires: a DAG and a CPU target.  Produces: ranked configurations. */
__ts_gc ts_static_result *ts_static_baseline_fill(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	int threads, int k);
/* The schedule of the best configuration of ts_static_baseline_fill. */
__ts_gc ts_schedule *ts_static_baseline(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	int threads);

/* GPUs. */

/* The result of GPU static filling: the same as a CPU's (one search,
 * search/static.c, with the GPU's model and seeds). */
typedef ts_static_result ts_gpu_static_result;

/* The model's estimate of "cfg" in seconds: per kernel, the larger of
 * its arithmetic time (peak scaled by occupancy, register tiling and
 * waves over the SMs) and its memory time (global traffic after shared
 * staging, uncoalesced accesses costing a sector each), plus a launch
 * overhead.  Configurations that do not fit cost INFINITY. */
double ts_gpu_model_estimate(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg);

/* ts_static_fill for the GPU "target" (an error for a CPU one).
 * Requires: a DAG and a GPU target.  Produces: ranked configurations. */
__ts_gc ts_gpu_static_result *ts_gpu_static_fill(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target, int k);
/* Shorthand: the schedule of the best static configuration. */
__ts_gc ts_schedule *ts_gpu_static_schedule(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target);

#ifdef __cplusplus
}
#endif

#endif
