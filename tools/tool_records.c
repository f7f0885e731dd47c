/* Applying tuning records on the command line: tessel run and tessel
 * build with --records LOG.  The best record is never taken on its word:
 * it is timed against the static baseline in this process, interleaved,
 * and kept only when it is faster. */
#include <config.h>

#include <math.h>

#include <gc.h>

#include <tessel/search.h>

#include "tools/commands.h"

/* Rounds of the comparison of a record with the static baseline, and the
 * seconds of each module's share of a round. */
enum { DUEL_ROUNDS = 5 };
#define DUEL_ROUND_S 0.02

/* The host target with "threads" cores (0: all of them), as the tuner
 * keys its records: the cores set, nothing else changed. */
static ts_target *host_target(ts_ctx *ctx, int threads)
{
	ts_target *host = ts_target_host(ctx), *t;

	if (!host || threads <= 0 || host->kind != TS_TARGET_CPU)
		return host;
	t = GC_MALLOC(sizeof(*t));
	if (!t)
		return host;
	*t = *host;
	t->cpu.cores = threads;
	return t;
}

/* Time "a" and "b" of "dag" compiled for "threads" threads against each
 * other on seeded inputs, interleaved, into "*ta" and "*tb". */
static ts_status duel(ts_ctx *ctx, const ts_dag *dag, const ts_func *a,
	const ts_func *b, int threads, double *ta, double *tb)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	int n = dag->ninputs + dag->noutputs;
	ts_array **args = GC_MALLOC(sizeof(*args) * (n + 1));
	ts_module *m[2] = { NULL, NULL };
	double t[2];
	ts_status st = TS_ERROR;

	if (!in || !args || !a || !b)
		return TS_ERROR;
	for (int i = 0; i < n; i++)
		if (!(args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(
		    ctx, dag->outputs[i - dag->ninputs])))
			return TS_ERROR;
	opt.threads = threads;
	if ((m[0] = ts_module_compile(ctx, a, &opt)) &&
	    (m[1] = ts_module_compile(ctx, b, &opt)) &&
	    ts_module_time_interleaved(m, 2, args, DUEL_ROUNDS, DUEL_ROUND_S,
	    t) == TS_OK) {
		*ta = t[0];
		*tb = t[1];
		st = TS_OK;
	}
	ts_module_free(m[0]);
	ts_module_free(m[1]);
	return st;
}

bool ts_tool_record_wins(ts_ctx *ctx, const ts_dag *dag, const ts_func *rec,
	const ts_func *st, int threads)
{
	double tr, ts;

	if (duel(ctx, dag, rec, st, threads, &tr, &ts) < 0) {
		fprintf(stderr, "does not run here (%s): kept the static "
			"schedule\n", ts_ctx_error(ctx) ? ts_ctx_error(ctx)
			: "out of memory");
		ts_ctx_clear_error(ctx);
		return false;
	}
	fprintf(stderr, "against the static schedule, %d interleaved rounds: "
		"%.4g ms against %.4g ms: ", DUEL_ROUNDS, tr * 1e3, ts * 1e3);
	if (tr * (1 + TS_TUNE_MARGIN) < ts) {
		fprintf(stderr, "kept the record (%.2fx)\n", ts / tr);
		return true;
	}
	if (tr < ts)
		fprintf(stderr, "kept the static schedule (the record is "
			"%.2fx faster, within the %.0f%% that rounds cannot "
			"tell apart)\n", ts / tr, TS_TUNE_MARGIN * 100);
	else
		fprintf(stderr, "kept the static schedule (the record is "
			"%.2fx slower)\n", tr / ts);
	return false;
}

/* Lower "dag" under the best valid record of the log "log" for the host
 * with "threads" cores (0: all), or under the static baseline when the
 * log has none or the record is not faster than the baseline timed
 * alongside it; say which and why on stderr.  "*used" (may be NULL)
 * receives the schedule. */
ts_func *ts_tool_lower_records(ts_ctx *ctx, const ts_dag *dag,
	const char *log, int threads, const char *verb,
	const ts_schedule **used)
{
	ts_target *tg = host_target(ctx, threads);
	ts_record **recs;
	const ts_record *best;
	ts_schedule *sch, *st;
	ts_func *frec, *fst, *f;
	int n = 0;

	if (!tg || !(recs = ts_records_load(ctx, log, &n)))
		return NULL;
	ts_tool_warnings(ctx);
	best = ts_records_best(recs, n, ts_dag_hash(dag), ts_target_key(tg));
	st = ts_static_baseline(ctx, dag, ts_target_host(ctx), threads);
	if (!st || !(fst = ts_lower(ctx, dag, st)))
		return NULL;
	if (!best) {
		fprintf(stderr, "tessel %s: no valid record in %s for workload "
			"%s on target %s: using the static schedule\n", verb,
			log, ts_dag_hash(dag), ts_target_key(tg));
		if (used)
			*used = st;
		return fst;
	}
	if (!(sch = ts_record_schedule(ctx, dag, best)) ||
	    !(frec = ts_lower(ctx, dag, sch))) {
		ts_ctx_set_error(ctx, "%s:%d: the best record does not replay: "
			"%s", log, best->line, ts_ctx_error(ctx));
		return NULL;
	}
	fprintf(stderr, "tessel %s: schedule of the record at %s:%d (median "
		"%.4g ms) ", verb, log, best->line, best->median_s * 1e3);
	f = ts_tool_record_wins(ctx, dag, frec, fst, threads) ? frec : fst;
	if (used)
		*used = f == frec ? sch : st;
	return f;
}
