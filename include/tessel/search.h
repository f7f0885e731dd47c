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
double ts_model_estimate(const ts_template *tp, const ts_config *cfg,
	ts_estimate *per_stage);

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

/* Statically schedule "dag" for "target": build the template, rate
 * candidates (structured seeds, random samples, then local search from
 * the best) and keep the "k" best.  The context's seed drives the random
 * part.
 * Requires: a DAG and a target.  Produces: ranked configurations. */
ts_static_result *ts_static_fill(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k);

/* Shorthand: the schedule of the best static configuration. */
ts_schedule *ts_static_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target);

#ifdef __cplusplus
}
#endif

#endif
