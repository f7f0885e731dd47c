/* Tuning inside a benchmark program: measure candidates of one DAG on
 * this machine and compile the fastest, so that a benchmark can set the
 * tuned kernel beside the static one and a library in the same run. */
#ifndef TESSEL_BENCH_TUNED_H
#define TESSEL_BENCH_TUNED_H

#include <stdint.h>

#include <tessel/backend.h>
#include <tessel/schedule.h>

/* The seed the programs tune with, and set in their contexts before the
 * static baseline is drawn: the tuner measures against the baseline of
 * its seed (tessel run --schedule static --seed), so a program's static
 * kernel must come from the same seed to be the one the tuner kept or
 * beat (a dense layer's tuned kernel timed 1.07x slower than a static
 * kernel of another seed that the tuner never saw). */
enum { BENCH_TUNE_SEED = 1 };

/* How to tune, and what the tuning took. */
struct bench_tuning {
	int trials;		/* measurements at most */
	int topk;		/* > 0: measure only the static top-k */
	uint64_t seed;
	const char *log;	/* records log appended to, or NULL */
	/* Filled by bench_compile_tuned: */
	double seconds;		/* wall time of the tuning */
	int measured;		/* measurements made */
	double best_s;		/* the tuner's own time of its best */
	int nhistory;		/* best time after each trial (the curve) */
	const double *history;
};

/* Tune "dag" for the host with "threads" threads as "t" says and return
 * the fastest candidate's schedule.  NULL with an error in "ctx". */
const ts_schedule *bench_tune(ts_ctx *ctx, const ts_dag *dag, int threads,
	struct bench_tuning *t, const char *what);
/* Tune "dag" for the host with "threads" threads as "t" says, lower the
 * fastest candidate and compile it with "threads" threads.  Progress
 * goes to stderr under the label "what".  NULL with an error in "ctx". */
ts_module *bench_compile_tuned(ts_ctx *ctx, const ts_dag *dag, int threads,
	struct bench_tuning *t, const char *what);

#endif
