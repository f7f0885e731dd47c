/* Applying tuning records on the command line: tessel run and tessel
 * build with --records LOG.  The best record is never taken on its word:
 * it is timed against the static baseline in this process, interleaved,
 * and kept only when it is faster. */
#include <config.h>

#include <tessel/records.h>
#include <tessel/search.h>

#include "tools/commands.h"

/* Lower "dag" under the schedule ts_records_choose takes from the log
 * "log" for the host with "threads" cores (0: all), saying which and why
 * on stderr.  "*used" (may be NULL) receives the schedule. */
ts_func *ts_tool_lower_records(ts_ctx *ctx, const ts_dag *dag,
	const char *log, int threads, const char *verb,
	const ts_schedule **used)
{
	const char *why = NULL;
	ts_schedule *sch = ts_records_choose(ctx, dag, log, threads, &why);

	ts_tool_warnings(ctx);
	if (!sch)
		return NULL;
	fprintf(stderr, "tessel %s: %s\n", verb, why);
	if (used)
		*used = sch;
	return ts_lower(ctx, dag, sch);
}
