/* Random valid schedules, for the backend tests: splits (dividing or
 * not, guarded or partitioned tails), reorders, fusions, compute_at
 * locations, inlining, cache_write, cache_read, rfactor, parallel,
 * vectorize and unroll.  Reproducible from a seed. */
#ifndef TESSEL_TESTS_RANDOM_SCHEDULE_H
#define TESSEL_TESTS_RANDOM_SCHEDULE_H

#include <tessel/tessel.h>

/* Return a random schedule of "dag" drawn from "seed" that passes
 * ts_schedule_check; the naive schedule when no attempt
 * succeeds.  "*tries" (may be NULL) receives the attempts made. */
ts_schedule *ts_random_schedule(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed, int *tries);

#endif
