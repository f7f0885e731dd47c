/* Tessel: lowering a DAG and its schedule to the loop IR.
 *
 * Requires: a DAG and a schedule of it (ts_schedule_check passes).
 * Produces: one ts_func whose arguments are the DAG's inputs then its
 * outputs.  Output stages write their argument buffers; intermediate
 * stages at root get global buffers; a stage computed at a loop of its
 * consumer gets a local buffer of the region that the consumer's tile
 * there reads (the footprint from the analysis), indexed relative to the
 * region's origin.  Inlined stages are substituted into their readers.
 *
 * Reductions.  A stage whose body is one reduction gets its init stores
 * just outside its outermost reduction loop and its updates
 * "acc = acc op body" innermost.  A body with reductions nested inside
 * other expressions computes each reduction into a local scalar over an
 * inner loop nest at every spatial point.  rfactor of a reduction loop L
 * keeps partial results in a buffer "<stage>.rf" indexed by L and the
 * spatial axes, then reduces them over L in a second nest.
 *
 * Split tails are guarded (an if around what the tile computes) or
 * partitioned (whole tiles, then a copy of the loop nest over the tail
 * with constant extents).  Loop extents are always constants.
 */
#ifndef TESSEL_LOWER_H
#define TESSEL_LOWER_H

#include <tessel/dsl.h>
#include <tessel/loop.h>
#include <tessel/schedule.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lower "dag" under "sch" (NULL: the naive schedule).  Returns NULL with
 * a message in "ctx" when the schedule is invalid. */
__ts_gc ts_func *ts_lower(__ts_keep ts_ctx *ctx, __ts_keep const ts_dag *dag,
	__ts_keep __ts_null const ts_schedule *sch);

/* Simplify the integer index expression "e" into an i64 one: constants
 * folded, x*1 and x+0 removed, affine sums collected (a*8 + b - a*8 is
 * b). */
__ts_gc ts_expr *ts_index_simplify(__ts_keep ts_ctx *ctx, __ts_keep ts_expr *e);

/* Give every accumulator tile that a reduction updates under loops not
 * indexing it a small local buffer of its own, loaded before those loops
 * and stored after them (backends/promote.c); ts_lower calls it. */
void ts_func_promote_accumulators(__ts_keep ts_ctx *ctx, __ts_keep ts_func *f);

/* "f" with its serial loops split where the conditions of its selects
 * change value, and the conditions that no longer change folded
 * (backends/split_select.c); the CPU code generator calls it. */
__ts_gc ts_func *ts_func_split_selects(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_func *f);

#ifdef __cplusplus
}
#endif

#endif
