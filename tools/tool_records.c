/* Applying tuning records on the command line: tessel run and tessel
 * build with --records LOG. */
#include <config.h>

#include <gc.h>

#include "tools/commands.h"

/* The host target with "threads" cores (0: all of them). */
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

/* Lower "dag" under the best valid record of the log "log" for the host
 * with "threads" cores (0: all), or under the static schedule when the
 * log has none; say which on stderr as "tessel "verb": ...". */
ts_func *ts_tool_lower_records(ts_ctx *ctx, const ts_dag *dag,
	const char *log, int threads, const char *verb)
{
	ts_target *tg = host_target(ctx, threads);
	ts_record **recs;
	const ts_record *best;
	ts_schedule *sch;
	int n = 0;

	if (!tg || !(recs = ts_records_load(ctx, log, &n)))
		return NULL;
	ts_tool_warnings(ctx);
	best = ts_records_best(recs, n, ts_dag_hash(dag), ts_target_key(tg));
	if (best) {
		fprintf(stderr, "tessel %s: schedule of the record at %s:%d "
			"(median %.4g ms)\n", verb, log, best->line,
			best->median_s * 1e3);
		sch = ts_record_schedule(ctx, dag, best);
	} else {
		fprintf(stderr, "tessel %s: no valid record in %s for workload "
			"%s on target %s: using the static schedule\n", verb,
			log, ts_dag_hash(dag), ts_target_key(tg));
		sch = ts_static_schedule(ctx, dag, tg);
	}
	return sch ? ts_lower(ctx, dag, sch) : NULL;
}
