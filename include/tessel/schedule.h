/* Tessel: schedules as data.
 *
 * A schedule says HOW a DAG runs: per stage, an ordered list of steps in
 * the manner of TVM (split, reorder, fuse, compute_at, compute_inline,
 * compute_root, cache_write, cache_read, rfactor, parallel, vectorize,
 * unroll, bind, tensorize).  The schedule keeps every step in the order
 * it was applied (each step names its stage) and, as derived state, the
 * loops of every stage.  Steps are validated when applied;
 * ts_schedule_check checks what only the whole schedule can tell (an
 * attach loop renamed by a later split, a vectorized loop that is no
 * longer innermost, ...).
 *
 * Loops.  A stage starts with one loop per axis: its spatial axes, then
 * (for a stage whose body is a reduction) its reduction axes, named as
 * the axes are.  split "i" makes "i.o" and "i.i"; fuse "a" "b" makes
 * "a@b".  A stage whose body holds reductions nested inside other
 * expressions (e.g. "(sum(k) A[i, k]) / 4.0", or two reductions) has only
 * its spatial loops: its reductions run as inner loop nests over local
 * accumulators at each spatial point, and cannot be scheduled.
 *
 * The naive schedule (no step: every stage at root, loops in declaration
 * order) is valid for every DAG.
 */
#ifndef TESSEL_SCHEDULE_H
#define TESSEL_SCHEDULE_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Annotations of a loop, which schedules set and the loop IR keeps. */
typedef enum ts_loop_kind {
	TS_LOOP_SERIAL,
	TS_LOOP_PARALLEL,	/* iterations run on the CPU's threads */
	TS_LOOP_VECTORIZED,	/* one SIMD vector of "extent" lanes */
	TS_LOOP_UNROLLED,	/* fully unrolled */
	TS_LOOP_BOUND,		/* bound to a GPU block or thread index */
	TS_LOOP_KIND_COUNT
} ts_loop_kind;

/* The most lanes the CPU code generator emits a vectorized loop as one
 * vector of; a longer one runs as a serial loop, which LLVM may
 * vectorize itself. */
#define TS_MAX_VECTOR_LANES 64

typedef enum ts_bind {
	TS_BIND_NONE,
	TS_BIND_BLOCK_X, TS_BIND_BLOCK_Y, TS_BIND_BLOCK_Z,
	TS_BIND_THREAD_X, TS_BIND_THREAD_Y, TS_BIND_THREAD_Z,
	TS_BIND_VTHREAD,	/* virtual thread: unrolled, interleaved */
	TS_BIND_COUNT
} ts_bind;

/* Where a buffer lives. */
typedef enum ts_scope {
	TS_SCOPE_ARG,		/* a function argument (DAG input or output) */
	TS_SCOPE_GLOBAL,	/* a temporary in main memory */
	TS_SCOPE_LOCAL,		/* per-thread: stack or registers */
	TS_SCOPE_SHARED,	/* GPU shared memory of a block */
	TS_SCOPE_COUNT
} ts_scope;

/* The names of "k", "b" and "s", static strings. */
__ts_keep const char *ts_loop_kind_name(ts_loop_kind k);
__ts_keep const char *ts_bind_name(ts_bind b);
__ts_keep const char *ts_scope_name(ts_scope s);

typedef enum ts_step_kind {
	TS_STEP_SPLIT,
	TS_STEP_REORDER,
	TS_STEP_FUSE,
	TS_STEP_COMPUTE_AT,
	TS_STEP_COMPUTE_INLINE,
	TS_STEP_COMPUTE_ROOT,
	TS_STEP_CACHE_WRITE,
	TS_STEP_CACHE_READ,
	TS_STEP_RFACTOR,
	TS_STEP_PARALLEL,
	TS_STEP_VECTORIZE,
	TS_STEP_UNROLL,
	TS_STEP_BIND,
	TS_STEP_TENSORIZE,
	TS_STEP_KIND_COUNT
} ts_step_kind;

/* How a split handles a factor that does not divide the extent. */
typedef enum ts_tail {
	TS_TAIL_GUARD,		/* ceil(n/f) x f iterations, an if guards */
	TS_TAIL_PARTITION,	/* whole tiles, then a tail loop nest */
	TS_TAIL_COUNT
} ts_tail;

/* One step.  Which fields matter depends on "kind":
 *	SPLIT		loop, factor, tail
 *	REORDER		nloops, loops (the listed loops take the places
 *			they held, in the listed order)
 *	FUSE		loop (outer), loop2 (inner, adjacent)
 *	COMPUTE_AT	target (consumer stage), loop (a loop of target)
 *	CACHE_WRITE	loop (accumulate into a local tile there)
 *	CACHE_READ	target (a tensor the stage reads), loop, nperm, perm
 *			(buffer dimension j holds tensor dimension perm[j];
 *			nperm 0: identity)
 *	RFACTOR		loop (a reduction loop whose partial results become
 *			a buffer indexed by it)
 *	PARALLEL, VECTORIZE, UNROLL	loop
 *	BIND		loop, bind
 *	TENSORIZE	loop (the outermost of the three innermost loops:
 *			rows and columns, 16 each, then a reduction loop
 *			of 16; the nest runs as one 16 x 16 x 16
 *			multiply-accumulate of the target's matrix units,
 *			its accumulator tile held in their registers; a
 *			backend without them runs the nest as written)
 */
typedef struct ts_step ts_step;

/* How the loops of a stage came to be: a split of "parent" into "outer"
 * and "inner", or a fusion of "outer" and "inner" into "parent".  The
 * numbers index ts_sched_stage.loops. */
typedef struct ts_sched_rel ts_sched_rel;

/* A loop of a stage, live or replaced by a split or a fusion. */
typedef struct ts_sched_loop ts_sched_loop;

typedef enum ts_attach {
	TS_ATTACH_ROOT,
	TS_ATTACH_AT,		/* at a loop of a consumer stage */
	TS_ATTACH_INLINE,
} ts_attach;

/* A cache_read: "tensor" copied at loop "loop" (a name). */
typedef struct ts_sched_read ts_sched_read;

/* The state of one stage after the steps applied so far. */
typedef struct ts_sched_stage ts_sched_stage;

typedef struct ts_schedule ts_schedule;

/* An empty schedule of "dag": the naive schedule. */
__ts_gc ts_schedule *ts_schedule_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag);
__ts_gc ts_schedule *ts_schedule_naive(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag);
__ts_gc ts_schedule *ts_schedule_copy(__ts_keep const ts_schedule *sch);

/* Validate "step" against "sch" and apply it; on error the schedule is
 * unchanged and the context holds a message naming the stage and loop. */
ts_status ts_schedule_apply(__ts_keep ts_schedule *sch,
	__ts_keep const ts_step *step);
/* Check what individual steps cannot: attach and cache loops still
 * exist, vectorized loops are innermost, ... */
ts_status ts_schedule_check(__ts_keep const ts_schedule *sch);

/* Shorthands for ts_schedule_apply. */
ts_status ts_schedule_split(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop, int64_t factor,
	ts_tail tail);
ts_status ts_schedule_reorder(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, int n, __ts_keep const char *const *loops);
ts_status ts_schedule_fuse(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *outer,
	__ts_keep const char *inner);
ts_status ts_schedule_compute_at(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *consumer,
	__ts_keep const char *loop);
ts_status ts_schedule_compute_inline(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage);
ts_status ts_schedule_compute_root(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage);
ts_status ts_schedule_cache_write(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);
ts_status ts_schedule_cache_read(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *tensor,
	__ts_keep const char *loop, int nperm, __ts_keep const int *perm);
ts_status ts_schedule_rfactor(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);
ts_status ts_schedule_parallel(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);
ts_status ts_schedule_vectorize(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);
ts_status ts_schedule_unroll(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);
ts_status ts_schedule_bind(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop, ts_bind bind);
ts_status ts_schedule_tensorize(__ts_keep ts_schedule *sch,
	__ts_keep const char *stage, __ts_keep const char *loop);

/* The state of the stage called "name", or NULL. */
__ts_gc __ts_null const ts_sched_stage *ts_schedule_find_stage(
	__ts_keep const ts_schedule *sch, __ts_keep const char *name);
/* Index in "ss"->loops of the live loop "name", or -1. */
int ts_sched_stage_find_loop(__ts_keep const ts_sched_stage *ss,
	__ts_keep const char *name);
/* Position in "ss"->order of the live loop "name", or -1. */
int ts_sched_stage_loop_pos(__ts_keep const ts_sched_stage *ss,
	__ts_keep const char *name);

/* The name ("split", ...) and the tag ("SP", ...) of "k", static
 * strings. */
__ts_keep const char *ts_step_kind_name(ts_step_kind k);
__ts_keep const char *ts_step_tag(ts_step_kind k);

/* Printing: one line per step, "C: split i by 32 -> i.o, i.i". */
__ts_gc char *ts_step_to_string(__ts_keep const ts_step *step);
__ts_gc char *ts_schedule_to_string(__ts_keep const ts_schedule *sch);
void ts_schedule_print(__ts_keep FILE *out, __ts_keep const ts_schedule *sch);

/* JSON: {"dag": <hash>, "steps": [{"kind": "SP", ...}, ...]}.
 * ts_schedule_from_json replays the steps on "dag", validating each;
 * "dag", when present, must be ts_dag_hash of "dag". */
__ts_gc char *ts_schedule_to_json(__ts_keep const ts_schedule *sch);
__ts_gc ts_schedule *ts_schedule_from_json(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const char *text);
/* A 64-bit FNV-1a hash of ts_schedule_to_json, as 16 hex digits: two
 * schedules share it when they replay the same steps on the same DAG. */
__ts_gc const char *ts_schedule_hash(__ts_keep const ts_schedule *sch);

#ifdef __cplusplus
}
#endif

#endif
