/* Tessel: tuning by measurement.
 *
 * The tuner measures candidate schedules of one task (a DAG) on this
 * machine and keeps the fastest.  Candidates come from an evolutionary
 * search over the meta-template's knob space, seeded with the static
 * model's top-k and random samples, and ranked by a cost model (XGBoost
 * gradient boosted trees) trained online on the measurements.  A cheaper
 * mode, hardware-guided top-k, measures only the k best configurations of
 * the static model.
 *
 * Candidates are featurised from their lowered loop IR: a fixed-length
 * vector of counts (arithmetic by kind, loop annotations and extents,
 * memory accesses, footprints, strides), summed over the program's store
 * statements and compressed with log2(1 + x).  The tuner's model also
 * sees the static model's estimate of each candidate.
 *
 * Every measurement is appended to a records log when one is given; a
 * tuner started on an existing log first reads the records of its
 * workload and target: those configurations are never measured again and
 * the cost model is trained on them before the first new batch.
 *
 * Every random choice comes from the context's stream: the same seed, the
 * same log and the same measured times give the same sequence of
 * candidates.
 */
#ifndef TESSEL_TUNE_H
#define TESSEL_TUNE_H

#include <tessel/dsl.h>
#include <tessel/loop.h>
#include <tessel/measure.h>
#include <tessel/metatemplate.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The slots of a feature vector.  Counts are dynamic (each statement
 * weighted by how many times it runs) unless said otherwise; the vector
 * holds log2(1 + count) of each. */
enum ts_feature {
	TS_FEAT_STORES,		/* stores executed */
	TS_FEAT_STORE_STMTS,	/* store statements in the program (static) */
	TS_FEAT_FLOAT_ADDSUB,	/* float add and sub */
	TS_FEAT_FLOAT_MUL,	/* float mul */
	TS_FEAT_FLOAT_FMA,	/* float mul feeding an add: FMA candidates */
	TS_FEAT_FLOAT_DIV,	/* float div, floordiv, mod */
	TS_FEAT_FLOAT_SPECIAL,	/* exp, log, sqrt, tanh, pow, ... */
	TS_FEAT_FLOAT_CMP,	/* float min, max, compares, selects */
	TS_FEAT_INT_ARITH,	/* integer add, sub, mul in values */
	TS_FEAT_INT_DIV,	/* integer div and mod in values */
	TS_FEAT_CASTS,		/* casts */
	TS_FEAT_LOADS,		/* loads executed */
	TS_FEAT_VEC_OPS,	/* arithmetic inside a vectorized loop */
	TS_FEAT_PAR_LOOPS,	/* parallel loops around a store (static) */
	TS_FEAT_PAR_EXTENT,	/* product of their extents */
	TS_FEAT_VEC_LOOPS,	/* vectorized loops around a store (static) */
	TS_FEAT_VEC_WIDTH,	/* extent of the vectorized loop */
	TS_FEAT_UNROLL_LOOPS,	/* unrolled loops around a store (static) */
	TS_FEAT_UNROLL_EXTENT,	/* product of their extents */
	TS_FEAT_LOOP_DEPTH,	/* loops around a store (static) */
	TS_FEAT_INNER_EXTENT,	/* extent of the innermost loop */
	TS_FEAT_OUTER_EXTENT,	/* product of the extents of the others */
	TS_FEAT_GUARDS,		/* conditions around a store (static) */
	TS_FEAT_BYTES,		/* bytes read and written */
	TS_FEAT_UNIQUE_BYTES,	/* bytes in the box of the indices */
	TS_FEAT_LINES,		/* cache lines of those boxes */
	TS_FEAT_REUSE,		/* accesses per unique element */
	TS_FEAT_REUSE_DIST,	/* bytes touched between two uses */
	TS_FEAT_STRIDE0,	/* accesses invariant in the innermost loop */
	TS_FEAT_STRIDE1,	/* accesses contiguous in the innermost loop */
	TS_FEAT_STRIDED,	/* accesses with a larger or unknown stride */
	TS_FEAT_STRIDE,		/* sum of innermost strides in elements */
	TS_FEAT_LOCAL_BYTES,	/* bytes accessed in local buffers */
	TS_FEAT_ARG_BYTES,	/* bytes accessed in arguments and globals */
	TS_FEAT_ALLOC_BYTES,	/* bytes allocated by ALLOC statements */
	TS_FEAT_PAR_WORK,	/* stores per parallel iteration */
	TS_FEAT_COUNT
};

/* The name of feature slot "i" ("stores", ...), a static string, or
 * NULL. */
__ts_keep __ts_null const char *ts_feature_name(int i);
/* Fill "out" (TS_FEAT_COUNT floats) with the features of "f"; "line"
 * is the cache line size in bytes (0: 64).  Deterministic. */
ts_status ts_func_features(__ts_keep ts_ctx *ctx, __ts_keep const ts_func *f,
	int line, __ts_keep float *out);

/* The learned cost model: gradient boosted trees predicting a score
 * (higher is faster) from a feature vector.  It owns XGBoost handles:
 * free it with ts_cost_model_free, or leave it to its context. */
typedef struct ts_cost_model ts_cost_model;

__ts_give ts_cost_model *ts_cost_model_new(__ts_keep ts_ctx *ctx, int nfeatures,
	uint64_t seed);
/* Add one training sample: features "x", target "y". */
ts_status ts_cost_model_add(__ts_keep ts_cost_model *m,
	__ts_keep const float *x, double y);
/* Forget every sample (the booster stays until the next training). */
void ts_cost_model_clear(__ts_keep ts_cost_model *m);
/* Number of samples added. */
int ts_cost_model_size(__ts_keep const ts_cost_model *m);
/* Train from scratch on every sample added, for "rounds" boosting
 * rounds (0: a default). */
ts_status ts_cost_model_train(__ts_keep ts_cost_model *m, int rounds);
bool ts_cost_model_trained(__ts_keep const ts_cost_model *m);
/* Predict the scores of "n" samples "x" (n * nfeatures floats) into
 * "out". */
ts_status ts_cost_model_predict(__ts_keep ts_cost_model *m, int n,
	__ts_keep const float *x, __ts_keep double *out);
void ts_cost_model_free(__ts_take __ts_null ts_cost_model *m);

/* The evolutionary search over one template's space.  It remembers the
 * configurations measured and never proposes one of them again. */
typedef struct ts_evolve ts_evolve;

/* Scores of "n" configurations "cfgs" into "out" (higher is better); a
 * candidate that cannot be rated gets -INFINITY. */
typedef ts_status (*ts_score_fn)(void *data, int n, ts_config *const *cfgs,
	double *out);

typedef struct ts_evolve_options {
	int population;		/* candidates per generation (128) */
	int generations;	/* generations per batch (4) */
	double mutation;	/* probability of a mutation, else a crossover
				 * (0.85) */
	double eps;		/* share of a batch drawn at random (0.1) */
} ts_evolve_options;

ts_evolve_options ts_evolve_options_default(void);
/* A search over "sp" with "opt" (NULL: defaults). */
__ts_gc ts_evolve *ts_evolve_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_space *sp,
	__ts_keep __ts_null const ts_evolve_options *opt);
/* Make the "n" configurations "cfgs" the seeds of every later initial
 * population (the static top-k, the best measured so far). */
void ts_evolve_seed(__ts_keep ts_evolve *e, int n,
	__ts_keep ts_config *const *cfgs);
/* Remember that "c" was measured. */
void ts_evolve_mark(__ts_keep ts_evolve *e, __ts_keep const ts_config *c);
bool ts_evolve_is_marked(__ts_keep const ts_evolve *e,
	__ts_keep const ts_config *c);
int ts_evolve_marked(__ts_keep const ts_evolve *e);
/* The next "n" configurations to measure: never marked, distinct,
 * ranked by "score", with a share "eps" drawn at random.  Without a
 * score: half from the seeds in order, the rest random samples.  They are marked.  Returns the number found in "*out" (fewer
 * than "n" when the space is exhausted), or -1 on error. */
int ts_evolve_next(__ts_keep ts_evolve *e, int n,
	__ts_keep __ts_null ts_score_fn score, __ts_keep __ts_null void *data,
	__ts_keep ts_config **out);
/* Crossover: each knob of the child from "a" or "b". */
__ts_gc ts_config *ts_config_crossover(__ts_keep const ts_config *a,
	__ts_keep const ts_config *b, __ts_keep ts_ctx *ctx);

/* Options of a tuning run.  Start from ts_tune_options_default(). */
typedef struct ts_tune_options {
	int trials;		/* measurements at most (200) */
	int batch;		/* measured per round (16) */
	int topk;		/* > 0: hardware-guided: measure only the k
				 * best static configurations */
	int static_k;		/* static candidates seeding the search (32) */
	int verify;		/* at the end, measure the best few and the
				 * static choice again and choose by the new
				 * times (4; 0: no) */
	uint64_t seed;		/* 0: the context's seed */
	int threads;		/* threads of the kernels (1) */
	const char *log;	/* records log (JSON lines), or NULL */
	int lead;		/* the search starts by measuring this many
				 * best static configurations, in rank
				 * order (0) */
	double budget_s;	/* wall-clock seconds at most: a tuner starts
				 * no batch, a network no round, after them
				 * (0: no limit) */
	ts_measure_options measure;
	ts_evolve_options evolve;
	/* A measurer of the same DAG to use (borrowed; NULL: the tuner makes
	 * its own with "measure"). */
	ts_measurer *measurer;
	/* How to measure, for tests and for other measurers (NULL: ts_measure
	 * with the measurer): fill "out"[0..n) for "sch"[0..n). */
	ts_status (*measure_fn)(void *data, int n,
		const ts_schedule *const *sch, ts_measure_result *out);
	void *measure_data;
} ts_tune_options;

ts_tune_options ts_tune_options_default(void);
/* The defaults in memory of the collector, measuring code compiled for
 * the CPU "target" (ts_measure_options_target): for bindings that cannot
 * lay out the struct. */
__ts_gc ts_tune_options *ts_tune_options_new(__ts_keep ts_ctx *ctx,
	__ts_keep __ts_null const ts_target *target);
/* Set the option "name" of "o" to the text "value", with the names,
 * ranges and meaning of tessel tune's options: trials, topk, batch,
 * verify, seed, threads (of the kernels and of their measurement) and log
 * (copied).  TS_ERROR with a message naming the option when the name is
 * unknown or the value out of range. */
ts_status ts_tune_options_set(__ts_keep ts_ctx *ctx,
	__ts_keep ts_tune_options *o, __ts_keep const char *name,
	__ts_keep const char *value);

/* What the progress callback sees after each batch. */
typedef struct ts_tune_progress {
	const char *task;	/* the DAG's name */
	int trials;		/* measured so far in this run */
	int total;		/* trials planned */
	int resumed;		/* records reused from the log */
	double best_s;		/* best median time so far (INFINITY: none) */
	double elapsed_s;
	double trials_per_s;
	int errors;		/* failed measurements so far */
} ts_tune_progress;

typedef struct ts_tuner ts_tuner;
typedef void (*ts_tune_progress_fn)(const ts_tune_progress *p, void *data);

/* Prepare tuning "dag" on "target" (a CPU) with "opt" (NULL: defaults):
 * static filling, the template, and the records of the log.  "opt" is
 * copied, but the log path, the measurer and the measure data it points
 * to are used until the tuner is released with ts_tuner_free. */
__ts_give ts_tuner *ts_tuner_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	__ts_keep __ts_null const ts_tune_options *opt);
/* Measure up to opt->trials candidates (or the top-k) in all, calling
 * "progress" (may be NULL) after each batch; a second call goes on only
 * if the first stopped early or ts_tuner_extend raised the budget. */
ts_status ts_tuner_run(__ts_keep ts_tuner *t,
	__ts_keep __ts_null ts_tune_progress_fn progress,
	__ts_keep __ts_null void *data);
/* Allow "trials" more measurements to the next ts_tuner_run of "t", which
 * goes on with everything "t" has learned (its samples, cost model and
 * features): a network's tasks are tuned so, round by round. */
void ts_tuner_extend(__ts_keep ts_tuner *t, int trials);
/* Add what "from" (a tuner of another DAG: a task of the same class in
 * a network) has measured to the samples "t" trains its cost model on,
 * each as its speed relative to the best of "from": the search of a task
 * is guided by its neighbours' samples from its first round, before it
 * has enough of its own.  The samples are copied. */
void ts_tuner_learn(__ts_keep ts_tuner *t, __ts_keep const ts_tuner *from);
/* The samples "t" learned from other tuners. */
int ts_tuner_learned(__ts_keep const ts_tuner *t);
/* Make the "k" best configurations "from" measured (a tuner of another
 * DAG whose stage "from_stage" has the shape of stage "to_stage" of the
 * DAG of "t") the first candidates of "t": each is the static choice of
 * "t" with the knobs of "to_stage" (but its packs) set as "from_stage"'s
 * were.  Return how many are configurations of "t" and new to it. */
int ts_tuner_adopt(__ts_keep ts_tuner *t, __ts_keep const ts_tuner *from,
	__ts_keep const char *from_stage, __ts_keep const char *to_stage,
	int k);
/* The fastest valid candidate (NULL and INFINITY before any); after
 * verification, by the times measured again. */
__ts_gc __ts_null const ts_schedule *ts_tuner_best_schedule(
	__ts_keep const ts_tuner *t);
__ts_gc __ts_null const ts_config *ts_tuner_best_config(
	__ts_keep const ts_tuner *t);
double ts_tuner_best_time(__ts_keep const ts_tuner *t);
/* The measured time of the static model's choice (INFINITY if not
 * measured or failed); after verification, measured again with the
 * best, interleaved.  After verification the best is never slower than
 * it: a candidate that does not beat it there leaves the static choice
 * as the best. */
double ts_tuner_static_time(__ts_keep const ts_tuner *t);
/* The static choice: the schedule of ts_static_baseline_fill for the
 * target with opt->threads threads and the tuner's seed, the one that
 * tessel run --schedule static compiles. */
__ts_gc const ts_schedule *ts_tuner_static_schedule(
	__ts_keep const ts_tuner *t);
/* How much faster than the static baseline, measured alongside it in
 * interleaved rounds, a tuned schedule must run to replace it (in the
 * tuner's verification and in tessel run --records): within it, rounds
 * on a shared machine cannot tell two kernels apart (a candidate kept at
 * 6.539 ms against 6.540 ms ran 1.06x slower timed in another process),
 * and the baseline needs no records. */
#define TS_TUNE_MARGIN 0.03

/* Whether the best is the static choice; "*candidate_s" (may be NULL)
 * receives the verified time of the fastest other candidate (INFINITY
 * when there was no verification or none ran). */
bool ts_tuner_kept_static(__ts_keep const ts_tuner *t,
	__ts_keep __ts_null double *candidate_s);
/* Whether the run ended with the final comparison (verification).  It
 * is skipped when nothing measured (in this run or in the log) beats the
 * static choice by TS_TUNE_MARGIN: the static choice is then the best.
 * And when a run resumed from a log that holds verified records of its
 * workload found nothing faster than the log's best: a comparison has
 * already judged that best, and the best stays the log's, as first
 * measured.  A caller that keeps the best of several runs takes only
 * verified ones, or the static choice. */
bool ts_tuner_verified(__ts_keep const ts_tuner *t);
/* Best time after each trial of this run: "*best" gets an array of the
 * returned length (INFINITY before the first valid one). */
int ts_tuner_history(__ts_keep const ts_tuner *t,
	__ts_keep const double **best);
/* Measurements made by this run, and records reused from the log. */
int ts_tuner_trials(__ts_keep const ts_tuner *t);
int ts_tuner_resumed(__ts_keep const ts_tuner *t);
/* Where the wall-clock time of every run of a tuner went: proposing
 * and rating candidates (the search, the cost model's training),
 * measuring them, and measuring the best again in the final comparison
 * ("verify_runs" measurements). */
typedef struct ts_tune_phases {
	double search_s;
	double measure_s;
	double verify_s;
	int verify_runs;
} ts_tune_phases;
ts_tune_phases ts_tuner_phases(__ts_keep const ts_tuner *t);
/* Failed measurements of this run with error "code". */
int ts_tuner_errors(__ts_keep const ts_tuner *t, ts_error_code code);
__ts_gc const ts_template *ts_tuner_template(__ts_keep const ts_tuner *t);
/* Release the cost model's handles and the measurer the tuner made
 * (also done when the context is freed); the results stay readable. */
void ts_tuner_free(__ts_keep __ts_null ts_tuner *t);

/* The tuning curve (best time against trials): CSV with a header
 * "trial,best_s", and an SVG picture entitled "title" (NULL: "tuning
 * curve"): ts_tune_curve_draw without reference lines. */
ts_status ts_tune_curve_write_csv(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path, int n, __ts_keep const double *best);
ts_status ts_tune_curve_write_svg(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path, __ts_keep __ts_null const char *title,
	int n, __ts_keep const double *best);

/* What a tuning curve shows.  Start from ts_tune_curve_default(). */
typedef struct ts_tune_curve {
	const char *title;	/* NULL: "tuning curve" */
	const char *x_label;	/* NULL: "trials" */
	const char *y_label;	/* NULL: "best time (ms)" */
	int n;			/* points: trials, or a network's rounds */
	const double *best;	/* seconds after each (INFINITY: none yet) */
	const double *x;	/* NULL: the points by number; else each
				 * point's abscissa, rising (seconds of
				 * tuning), on an axis from 0 */
	/* Reference lines, in seconds (0 or not finite: not drawn). */
	double naive_s;		/* the naive schedule */
	double static_s;	/* the static baseline */
	double library_s;	/* a library's kernel, named by "library" */
	const char *library;	/* NULL: "library" */
	/* The result after the tuner timed its best again alongside the
	 * static baseline (ts_tuner_best_time; 0: the last point): marked
	 * at the end of the curve, and the gain is taken on it. */
	double tuned_s;
} ts_tune_curve;

ts_tune_curve ts_tune_curve_default(void);
/* Draw "c" as an SVG picture at "path": the best so far as a step (it
 * holds until the next improvement), on a time axis from 0 so that
 * heights compare, the reference lines dashed and labelled with their
 * times (one far above the curve is named at the top edge, off the
 * scale, rather than squashing it), and the gain as a label: the result
 * (the verified time, else the last point) against the static time in
 * percent, against the naive and the library's as ratios, or, without a
 * static time, against the first valid point. */
ts_status ts_tune_curve_draw(__ts_keep ts_ctx *ctx, __ts_keep const char *path,
	__ts_keep const ts_tune_curve *c);

#ifdef __cplusplus
}
#endif

#endif
