/* Applying tuning records on the command line: tessel run and tessel
 * build with --records LOG.  The best record is never taken on its word:
 * it is timed against the static baseline in this process, interleaved,
 * and kept only when it is faster. */
#include <config.h>

#include <math.h>

#include <gc.h>

#include <tessel/records.h>
#include <tessel/search.h>

#include "tools/commands.h"

bool ts_tool_record_wins(ts_ctx *ctx, const ts_dag *dag, const ts_func *rec,
	const ts_func *st, int threads)
{
	const char *why = NULL;
	bool wins = ts_record_beats_static(ctx, dag, rec, st, NULL, threads,
		&why);

	fprintf(stderr, "%s\n", why);
	return wins;
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
	const ts_target *tg = ts_records_target(ts_target_host(ctx), threads);
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
