/* The bodies of the scheduling IR: knobs, spaces and configurations,
 * schedules and their steps, the plans of a meta-template and the loop
 * nests the model rates.  The public headers declare them as opaque
 * handles with accessors; the library and its tests read the fields
 * directly.  Not installed. */
#ifndef TESSEL_METATEMPLATES_IR_H
#define TESSEL_METATEMPLATES_IR_H

#include <tessel/metatemplate.h>
#include <tessel/schedule.h>
#include <tessel/space.h>

#include "dsl/ir.h"

/* A knob.  A split knob of an axis of extent "extent" over "nparts"
 * levels takes factors f[0..nparts), outermost first, with
 * f[1] * ... * f[nparts-1] <= extent and f[0] = ceil(extent / that
 * product): the outermost level covers the rest, with a tail when the
 * inner product does not divide the extent. */
struct ts_knob {
	const char *name;
	ts_knob_kind kind;
	int offset;		/* index of its first value in a config */
	/* SPLIT */
	int64_t extent;
	int nparts;
	bool divisors_only;	/* inner factors must divide the extent */
	int64_t max_inner;	/* largest allowed innermost factor (0: any) */
	int ncands;		/* candidate inner factors */
	int64_t *cands;
	/* CHOICE */
	int nchoices;
	const char **choices;
	/* INT */
	int64_t lo, hi;
};

struct ts_space {
	ts_ctx *ctx;
	const char *name;	/* e.g. the stage and template it came from */
	int nknobs;
	ts_knob **knobs;
	int nvalues;		/* length of a config */
};

struct ts_config {
	const ts_space *space;
	int64_t *v;		/* nvalues entries */
};

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
 */
struct ts_step {
	ts_step_kind kind;
	const char *stage;
	const char *loop;
	const char *loop2;
	int64_t factor;
	ts_tail tail;
	int nloops;
	const char **loops;
	const char *target;
	int nperm;
	int perm[TS_MAX_DIMS];
	ts_bind bind;
};

/* How the loops of a stage came to be: a split of "parent" into "outer"
 * and "inner", or a fusion of "outer" and "inner" into "parent".  The
 * numbers index ts_sched_stage.loops. */
struct ts_sched_rel {
	bool fuse;
	int parent, outer, inner;
	int64_t factor;		/* split */
	ts_tail tail;		/* split */
};

/* A loop of a stage, live or replaced by a split or a fusion. */
struct ts_sched_loop {
	const char *name;
	int64_t extent;		/* trip count over the whole stage */
	bool reduce;		/* derived from reduction axes */
	int axis;		/* < 0 unless an original axis: index in
				 * spatial axes, then reduction axes */
	ts_loop_kind kind;	/* annotation */
	ts_bind bind;
};

/* A cache_read: "tensor" copied at loop "loop" (a name). */
struct ts_sched_read {
	const ts_tensor *tensor;
	const char *loop;
	int nperm;
	int perm[TS_MAX_DIMS];
};

/* The state of one stage after the steps applied so far. */
struct ts_sched_stage {
	const ts_stage *stage;
	bool nested_reduce;	/* reductions inside the body: not loops */
	int nloops;		/* every loop ever made */
	ts_sched_loop *loops;
	int norder;		/* live loops, outermost first */
	int *order;		/* indices into loops */
	int nrels;
	ts_sched_rel *rels;
	ts_attach attach;
	int attach_stage;	/* TS_ATTACH_AT: index of the consumer */
	const char *attach_loop;	/* TS_ATTACH_AT: its loop's name */
	const char *cache_write;	/* loop name, or NULL */
	const char *rfactor;	/* loop name, or NULL */
	const char *tensorize;	/* loop name, or NULL */
	int nreads;
	ts_sched_read *reads;
};

struct ts_schedule {
	ts_ctx *ctx;
	const ts_dag *dag;
	int nsteps;
	ts_step *steps;		/* in the order applied */
	ts_sched_stage *stages;	/* one per dag->stages[i] */
};

/* The plan of one stage: its rule and the knobs that fill it. */
struct ts_stage_plan {
	int stage;		/* index in the DAG */
	ts_rule rule;
	const char *decided_by;	/* the rule of the table that decided */
	ts_class klass;
	const char *structure;	/* "SSRSRS", "SSRRS", "SS" */
	int nlevels;		/* strlen(structure) */
	int nspatial, nreduce;
	int nslevels, nrlevels;	/* S and R letters */
	int split[TS_MAX_AXES];	/* split knob per axis (spatial, reduce) */
	int knob_vec;		/* choice: CPUs: a spatial axis name or
				 * "none"; GPUs: elements per thread */
	int vec_default;	/* the contiguous axis, or -1 */
	int knob_par;		/* int: outer loops fused and parallel */
	int knob_unroll;	/* bool: unroll the register tile */
	int knob_cache_write;	/* bool, or -1 */
	int knob_rfvec;		/* bool: vectorize the reduction through
				 * rfactor ("SSSRR"), or -1 */
	int knob_fuse;		/* bool: fuse into consumer, or -1 */
	int fuse_consumer;	/* stage index of that consumer, or -1 */
	int fused_into;		/* FUSED candidates: the anchor, or -1 */
	int knob_rows;		/* bool: compute its row group in its tiles
				 * of rows, or -1 */
	int row_host;		/* member of that group: the host, or -1 */
	int nrow_axes;		/* host: its leading axes tiled as rows */
	int knob_at;		/* LOCATION: choice, or -1 */
	int at_consumer;	/* LOCATION: the consumer stage */
	int npack;		/* inputs that may be packed */
	int pack_input[TS_MAX_DIMS];	/* index in stage->inputs */
	int knob_pack[TS_MAX_DIMS];	/* choice: none, outer, inner */
	/* GPUs: the threads of a block, and the inputs a tile stages in
	 * shared memory. */
	int knob_threads;	/* choice: threads per block (plain, reduce) */
	int knob_cross;		/* bool: cross-thread reduction, or -1 */
	int knob_rthreads;	/* choice: threads of a cross reduction */
	int nshared;
	int shared_input[TS_MAX_DIMS];	/* index in stage->inputs */
	int knob_shared[TS_MAX_DIMS];	/* bool per staged input */
	/* GPU tiles: the footprint of each input (stage->inputs order,
	 * the first TS_MAX_DIMS), NULL where isl has none. */
	ts_footprint *fp[TS_MAX_DIMS];
	/* GPU tiles on tensor cores. */
	int knob_tc;		/* bool, or -1 when the facts rule it out */
	const char *tc_reason;	/* why there is no knob_tc, or NULL */
	int tc_m, tc_n;		/* spatial axes of fragment rows, columns */
	int tc_k;		/* the reduction axis (index in raxes) */
	int tc_split[3];	/* m/16 and n/16 into block, warp and
				 * fragments per warp; k/16 into outer and
				 * inner steps */
};

/* Start the plan "p" of stage "s" of "tp", CPU or GPU: its stage, class
 * and axes, every knob absent (-1) and no partner stage. */
void ts_stage_plan_init(ts_stage_plan *p, const ts_template *tp, int s);

/* A meta-template instantiated on a DAG and a target. */
struct ts_template {
	ts_ctx *ctx;
	const ts_dag *dag;
	const ts_dag_info *info;
	const ts_target *target;
	ts_space *space;
	ts_stage_plan *plans;	/* one per stage */
};

/* One loop of a stage under a configuration: what the model rates. */
typedef struct ts_nest_loop ts_nest_loop;
typedef struct ts_nest ts_nest;

struct ts_nest_loop {
	int axis;		/* stage axis (spatial, then reduction) */
	int level;		/* tiling level */
	int64_t trip;		/* iterations */
	ts_loop_kind kind;
};

struct ts_nest {
	int stage;
	int nloops;
	ts_nest_loop loops[TS_MAX_NEST];
	int npar;		/* outer loops run in parallel */
	int vec_axis;		/* -1: none */
	int64_t vec_width;	/* lanes of the vector loop */
	int64_t unrolled;	/* iterations of the unrolled register tile */
	int64_t padded;		/* iterations including guarded tails */
	int64_t useful;		/* iterations of the stage */
	bool guarded;		/* some tile overshoots its axis and tests
				 * a guard (a tail run as a loop of its own,
				 * tail_loop, does not) */
	bool cache_write;
	bool fused;		/* computed in its consumer's tile */
	int row_host;		/* computed in the row tiles of that stage
				 * with the others of its row group, or -1 */
	int tail_loop;		/* the axis whose tail runs as a loop of its
				 * own after the whole tiles, or -1 */
	int npacked;
	int at_loop[2];		/* the loop where a stage located in this
				 * one at its outer (inner) tile is
				 * computed, or -1: at root */
};

/* The loop nest of stage "stage" under "cfg" (false for stages that have
 * no nest of their own: inlined). */
bool ts_template_nest(const ts_template *tp, const ts_config *cfg,
	int stage, ts_nest *nest);

/* The axis of stage "stage" whose loop runs in parallel when the stage
 * is computed at root with no tiling of its own (a location stage placed
 * there), or -1: serial. */
int ts_template_root_parallel_axis(const ts_template *tp, int stage);

/* The vector registers that the operands of a register tile hold at
 * once, its "n" loops outermost first (loop "k" runs axis "axis[k]" and
 * holds "regs[k]" registers of an operand that depends on it: its trip,
 * or its vectors for the vector loop), "nops" operands, operand "o"
 * depending on the axes of the bit mask "dep[o]".  An operand reused
 * across a loop keeps live every register it takes in the loops inside
 * that one: all of them, when the loop it does not depend on is
 * outside the loops it does. */
int64_t ts_tile_operand_registers(int n, const int *axis,
	const int64_t *regs, int nops, const uint32_t *dep);

#endif
