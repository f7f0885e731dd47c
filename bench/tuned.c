/* Tuning inside a benchmark program (see tuned.h). */
#include <config.h>

#include <stdio.h>

#include <tessel/tessel.h>

#include "bench/bench.h"
#include "bench/tuned.h"

/* Show the progress "p" of the tuning labelled "data" on stderr. */
static void show_progress(const ts_tune_progress *p, void *data)
{
	fprintf(stderr, "\r  tuning %s: %d/%d trials, best %.3f ms, "
		"%.1f trials/s   ", (const char *)data, p->trials, p->total,
		p->best_s * 1e3, p->trials_per_s);
	if (p->trials >= p->total)
		fputc('\n', stderr);
}

/* Tune "dag" with "threads" threads as "t" says and return the best
 * schedule, labelling the progress with "what". */
const ts_schedule *bench_tune(ts_ctx *ctx, const ts_dag *dag, int threads,
	struct bench_tuning *t, const char *what)
{
	ts_tune_options o = ts_tune_options_default();
	ts_target *tg = bench_host_target(ctx, threads);
	ts_tuner *tu;
	const ts_schedule *best = NULL;
	double t0 = bench_now();

	if (!tg)
		return NULL;
	o.trials = t->trials;
	o.topk = t->topk;
	o.seed = t->seed;
	o.threads = threads;
	o.log = t->log;
	tu = ts_tuner_new(ctx, dag, tg, &o);
	if (!tu)
		return NULL;
	if (ts_tuner_run(tu, show_progress, (void *)what) == TS_OK) {
		t->seconds = bench_now() - t0;
		t->measured = ts_tuner_trials(tu);
		t->best_s = ts_tuner_best_time(tu);
		t->nhistory = ts_tuner_history(tu, &t->history);
		best = ts_tuner_best_schedule(tu);
		if (!best)
			ts_ctx_set_error(ctx, "%s: no valid candidate in %d "
				"trials", what, t->measured);
	}
	ts_tuner_free(tu);
	return best;
}

/* Tune "dag" with "threads" threads as "t" says and compile the best,
 * labelling the progress with "what". */
ts_module *bench_compile_tuned(ts_ctx *ctx, const ts_dag *dag, int threads,
	struct bench_tuning *t, const char *what)
{
	const ts_schedule *best = bench_tune(ctx, dag, threads, t, what);

	return best ? bench_compile_func(ctx, ts_lower(ctx, dag, best),
		threads) : NULL;
}
