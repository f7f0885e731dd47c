/* Tessel: the analysis of compute stages (isl underneath; no isl object
 * escapes: every answer here is plain data).
 *
 * Axis numbering.  Everywhere in this header an "axis index" of a stage
 * counts its spatial axes first (stage->axes[0..ndim)) and then its
 * reduction axes (stage->raxes[0..nraxes)), so a stage has
 * ndim + nraxes axes in all.
 */
#ifndef TESSEL_ANALYSIS_H
#define TESSEL_ANALYSIS_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_MAX_AXES 16

/* One term of a quasi-affine index: "coef" times the floor of
 * (r + sum_a q[a] * x[a]) / "div", or times its remainder (from 0 to
 * div - 1) when "mod".  A term with div 1 is affine. */
typedef struct ts_box_term {
	int64_t coef;
	int64_t r;
	int64_t div;
	bool mod;
	int64_t q[TS_MAX_AXES];
} ts_box_term;

#define TS_BOX_TERMS 4

/* One dimension of a box footprint, in closed form in the tile.
 *
 * For a tile of the stage's iteration space that covers, on each axis a,
 * [origin[a], origin[a] + size[a]) (size[a] >= 1), the elements touched
 * along this tensor dimension are [lo, lo + extent) where
 *
 *	lo     = cst + sum_a origin_coef[a] * origin[a]
 *	             + sum_a size_shift[a] * (size[a] - 1)
 *	extent = 1 + sum_a size_coef[a] * (size[a] - 1)
 *
 * When "whole" is set the access could not be described affinely (a
 * data-dependent or non-affine index): the footprint is the whole
 * dimension [0, tensor extent). */
typedef struct ts_box_dim {
	bool whole;
	int64_t cst;
	int naxes;		/* the coefficients past it are 0 */
	int64_t origin_coef[TS_MAX_AXES];
	int64_t size_shift[TS_MAX_AXES];
	int64_t size_coef[TS_MAX_AXES];
	/* block > 0: the dimension is indexed by axis "block_axis" // block
	 * (or % block when "block_mod"), a blocked layout: a tile of size s
	 * along that axis, aligned to the block, touches ceil(s / block)
	 * indices (min(s, block) for the remainder).  The other fields are
	 * then unused and "whole" is false. */
	int64_t block;
	int block_axis;
	bool block_mod;
	/* nterms > 0: the dimension is indexed by the quasi-affine
	 * cst + sum_t term[t] (floor divisions and remainders by
	 * constants), every axis in at most one term: the box along it is
	 * exactly the sum of the ranges of the terms over the tile, each
	 * term's range read off its argument's.  The other fields but
	 * "cst" are then unused and "whole" is false. */
	int nterms;
	ts_box_term term[TS_BOX_TERMS];
} ts_box_dim;

/* The box of elements of "tensor" that a stage touches (the hull of all
 * its accesses to that tensor), as a function of a tile. */
typedef struct ts_footprint {
	const ts_tensor *tensor;
	int ndim;
	ts_box_dim dim[TS_MAX_DIMS];
} ts_footprint;

/* Evaluate "fp" on the tile "origin", "size" (one entry per stage axis):
 * write the box origin and extent of each tensor dimension. */
void ts_footprint_eval(__ts_keep const ts_footprint *fp,
	__ts_keep const int64_t *origin, __ts_keep const int64_t *size,
	__ts_keep int64_t *lo, __ts_keep int64_t *extent);

/* Return the footprint of stage "s" on tensor "t": the hull of every
 * access of "s" to "t" (a tensor it reads, or its own output for the
 * write), as written: an access under an affine guard (padding) is not
 * clamped, the bounds check proves it in bounds under its guard.  The
 * coefficients come from isl (box hulls of parametric tiles).  An index
 * with floor divisions or remainders by constants, each on axes of its
 * own, gets quasi-affine terms, checked against isl on sample tiles.  A
 * dimension whose hull has no such closed form (a non-affine index, two
 * accesses at different constant offsets) is marked whole.  Returns NULL with an error when "s" does not access "t".
 *
 * This is also the answer of bounds inference for fusion: for a tile of a
 * consumer, the region of a producer P that must be computed is the
 * footprint of the consumer on P's output, evaluated on that tile
 * (ts_region_for_consumer). */
__ts_gc ts_footprint *ts_stage_footprint(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_stage *s, __ts_keep const ts_tensor *t);

/* The most values past the first that term "t" takes over tiles of
 * sizes "size" whose origins are multiples of "align" (one per stage
 * axis; 1: any origin): a floor division counts the quotients its
 * argument can span from any such origin, a remainder its whole
 * range. */
int64_t ts_box_term_span(__ts_keep const ts_box_term *t,
	__ts_keep const int64_t *size, __ts_keep const int64_t *align);

/* Number of elements of the box of "fp" for tiles of sizes "size" (one
 * per stage axis); whole dimensions count their full extent, blocked
 * ones the tile aligned to the block, quasi-affine ones the most that a
 * tile at a multiple of its sizes touches (ts_box_term_span), which is
 * what lowering allocates for it.  Plain arithmetic, no isl: cheap
 * enough for a search loop. */
int64_t ts_footprint_volume(__ts_keep const ts_footprint *fp,
	__ts_keep const int64_t *size);
/* The extent of that box along dimension "d" of the tensor. */
int64_t ts_footprint_extent(__ts_keep const ts_footprint *fp, int d,
	__ts_keep const int64_t *size);

/* The region of the producer "p" that a tile "origin", "size" of its
 * consumer "c" needs: the footprint of "c" on p's output, evaluated.
 * Returns TS_ERROR when "c" does not read "p". */
ts_status ts_region_for_consumer(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_stage *c, __ts_keep const ts_stage *p,
	__ts_keep const int64_t *origin, __ts_keep const int64_t *size,
	__ts_keep int64_t *lo, __ts_keep int64_t *extent);

/* The four stage classes.  The rules, from isl facts only:
 *
 * Reuse.  A load carries reuse along the spatial axis a when its access
 * relation is not injective in a with every other axis, reduction axes
 * included, fixed: two instances that differ only in a read the same
 * element (matmul: A[i, k] is the same for every j, so A carries reuse
 * along j).  Fixing the reduction axes keeps the halo of a sliding
 * window (X[h + r]: h and r move together) out of it: a window overlap
 * is not reuse that tiling the spatial axes could exploit.
 *
 * TS_CLASS_DIRECT: no reduction axis.
 * TS_CLASS_COMPLEX_REDUCTION: a reduction in which every load bound
 *	under a reducer is affine and carries reuse along some spatial axis
 *	(a data-dependent load counts as streaming).  Then
 *	the elements read by a tile of the spatial axes grow more slowly
 *	than the tile, and multi-level tiling pays (matmul, conv, batched
 *	matmul).  When one load streams without reuse (GEMV: A[i, k] is read
 *	once per instance; depthwise conv: X[n, c, h + r, w + s]), the stage
 *	is memory bound whatever the tiling, so it is a simple reduction
 *	even though another input (x[k], the weights) is reused.
 * TS_CLASS_SIMPLE_REDUCTION: any other reduction (sums, norms, pooling,
 *	GEMV).
 * TS_CLASS_LOCATION_TUNABLE: a direct stage that a complex reduction
 *	reads under its reducer with reuse (padding or a layout packing
 *	before a conv): inlining would recompute it once per reuse, so where
 *	it is computed is a knob.  Only ts_analyze_dag, which knows the
 *	consumers, gives this class.
 *
 * Strictly inlinable (ts_stage_info.inlinable): a direct stage that is not
 * a DAG output and either costs no operation per element (a copy, a
 * transpose, a padding select on an affine condition) or whose consumers
 * together read each of its elements at most once, so inlining recomputes
 * nothing.  A consumer is fusable when it has no reduction, has as many
 * instances as the stage has elements, and reads it through one injective
 * access that covers it (elementwise, possibly transposed).
 */
typedef enum ts_class {
	TS_CLASS_DIRECT,
	TS_CLASS_SIMPLE_REDUCTION,
	TS_CLASS_COMPLEX_REDUCTION,
	TS_CLASS_LOCATION_TUNABLE,
	TS_CLASS_COUNT
} ts_class;

/* The name of "c", a static string: "direct", "simple_reduction",
 * "complex_reduction", "location_tunable". */
__ts_keep const char *ts_class_name(ts_class c);

/* The stride of an axis in an access that is not affine in it. */
#define TS_STRIDE_UNKNOWN INT64_MIN

/* One access of a stage. */
typedef struct ts_access_info {
	const ts_tensor *tensor;
	const ts_expr *load;	/* the LOAD node; NULL for the write */
	bool write;
	bool affine;		/* every index affine in the axes */
	bool guarded;		/* under an affine select condition */
	bool in_reduction;	/* bound under a reducer */
	int64_t instances;	/* times it is evaluated: the spatial extent
				 * times the reducers' extents around it */
	const char *text;	/* "X[h - 1, w]" as written */
	const char *relation;	/* isl text of instance -> element */
	/* reuse[a]: not injective in spatial axis a (other axes fixed). */
	bool reuse[TS_MAX_AXES];
	/* Elements moved in the flattened tensor (C order) by a unit step
	 * of each axis; TS_STRIDE_UNKNOWN where an index that is not affine
	 * (or has a floor division) mentions the axis. */
	int64_t stride[TS_MAX_AXES];
	/* block[a] > 0: stride[a] holds within aligned blocks of
	 * B = block[a] only: the access reads axis a through a blocked
	 * layout, [..., a // B, ..., a % B] (stride 1), or only as a // B
	 * (stride 0: a group of a grouped convolution, an upsampling), so a
	 * vector of the axis wider than B, or not dividing it, is a
	 * gather. */
	int64_t block[TS_MAX_AXES];
	/* The axis of stride 1 (the innermost one if several), or -1: the
	 * axis to vectorise or coalesce for this access. */
	int contiguous_axis;
	bool injective;		/* no two instances touch the same element */
	bool covers;		/* touches every element of the tensor */
	int64_t distinct;	/* distinct elements touched */
	bool distinct_exact;	/* false: "distinct" is an upper bound */
} ts_access_info;

/* Operation counts of a stage, over its whole iteration space.  An
 * operation under a reducer counts once per instance of the reduction
 * axes around it; the reducer's own combine step counts too (sum: an add,
 * max/min: a compare, prod: a mul).  A multiply whose result feeds an add
 * (a * b + c, or the body of a sum) is one fma.  Index arithmetic and
 * affine guards are not counted. */
typedef struct ts_counts {
	int64_t add;		/* add, sub, neg */
	int64_t mul;
	int64_t fma;		/* fused multiply-add pairs */
	int64_t div;		/* div, floordiv, mod */
	int64_t special;	/* exp, log, roots, tanh, sigmoid, erf,
				 * trigonometric and hyperbolic (see
				 * ts_op_is_special), pow */
	int64_t special_cost;	/* the same in multiply-add equivalents
				 * (ts_special_cost) */
	int64_t special_vec_cost;	/* the same where the schedule
				 * vectorizes the stage
				 * (ts_special_vec_cost) */
	int64_t compare;	/* comparisons, isnan, isinf, min, max,
				 * select on data */
	int64_t other;		/* casts, abs, sign, floor, ceil, round,
				 * logic */
	int64_t flops;		/* add + mul + 2 fma + div + special + compare */
	int64_t bytes_read;	/* distinct elements read x dtype size */
	int64_t bytes_written;
	double intensity;	/* flops / (bytes read + written) */
} ts_counts;

/* What one evaluation of the special function "op" (ts_op_is_special,
 * or TS_OP_POW) costs in f32 floating-point operations at the FMA peak,
 * as the LLVM backend computes it.  Measured on an AMD Zen 4 (AVX-512)
 * over 128 x 1000 elements, vectorised: exp 29, log 48, sqrt 21, rsqrt
 * 32, tanh 38, sigmoid 39, erf 77; the others are library calls, one
 * element at a time: sin 471, atan 1264, pow 384. */
int ts_special_cost(ts_op op);
/* The same for an evaluation in a vector of the schedule's, of dtype
 * "t": f32 exp, and sigmoid and erf which take it, have a cheaper path
 * there (llvm_math.c's m_exp_vector).  Measured on an AMD Zen 3 over
 * 128 x 1000 elements, the time of a copy subtracted, against the same
 * in a loop that LLVM vectorizes: exp 27 against 50 us (16), sigmoid 52
 * against 68 (30), erf 138 against 169 (63). */
int ts_special_vec_cost(ts_op op, ts_dtype t);

/* What the meta-templates need to know about one stage. */
typedef struct ts_stage_info {
	const ts_stage *stage;
	ts_class klass;
	int naxes;		/* ndim + nraxes */
	const char *domain;	/* isl text of the instance set */
	int naccesses;		/* loads in body order, then the write */
	ts_access_info *accesses;
	bool reuse_axes[TS_MAX_AXES];	/* some load carries reuse along it */
	bool data_dependent;	/* some index is not affine */
	int64_t spatial_extent;	/* product of the spatial extents */
	int64_t reduce_extent;	/* product of the reduction extents */
	ts_counts counts;
	int nreasons;		/* why the class: one line each */
	const char **reasons;
	/* Filled by ts_analyze_dag: */
	int nconsumers;
	int *consumers;		/* stage indices in the DAG */
	bool *fusable;		/* per consumer: elementwise, injective access
				 * on the same spatial domain */
	bool inlinable;		/* direct, and inlining recomputes nothing
				 * expensive (see ts_analyze_dag) */
	int64_t consumer_reads;	/* loads of its output by all consumers */
} ts_stage_info;

/* All stages of a DAG, in the DAG's topological order. */
typedef struct ts_dag_info {
	const ts_dag *dag;
	int nstages;
	ts_stage_info **stages;
} ts_dag_info;

/* Analyse "s" alone: accesses, reuse, counts, class (never
 * TS_CLASS_LOCATION_TUNABLE, which needs the consumers).  NULL with an
 * error when isl cannot model it. */
__ts_gc ts_stage_info *ts_analyze_stage(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_stage *s);

/* Analyse every stage of "dag", check bounds, fill consumers, fusability,
 * inlinability and location-tunable stages.
 * Requires: a DAG.  Produces: one ts_stage_info per stage.
 * NULL with an error naming the stage and access when an access is out of
 * bounds. */
__ts_gc ts_dag_info *ts_analyze_dag(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag);

/* Check that every access of "s" stays inside its tensor under its
 * guards; on failure the error names the stage, the access and a
 * sample instance.  A non-affine index is assumed in bounds. */
ts_status ts_stage_check_bounds(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_stage *s);

/* Whether the spatial iterations of "si" are too few to give every one of
 * "cores" parallel workers at least one: then the reduction must be
 * factored (rfactor) to fill the machine. */
bool ts_stage_info_needs_rfactor(__ts_keep const ts_stage_info *si, int cores);

/* The traffic model of a stage: the footprints of every tensor it touches,
 * evaluated in closed form (no isl), so a search can rate thousands of
 * loop nests per second. */
typedef struct ts_traffic {
	const ts_stage *stage;
	int naxes;
	int nfootprints;
	ts_footprint **footprints;	/* inputs, then the output */
	size_t *elem_size;		/* bytes per element of each */
} ts_traffic;

__ts_gc ts_traffic *ts_traffic_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_stage *s);

/* For the loop nest "loops" (outermost first) where loop l runs
 * "trip"[l] iterations of stage axis "axis"[l] (tiles nest: the product
 * of the trips of the loops of an axis is its extent), write in
 * "bytes"[l] the distinct bytes one iteration of loop l touches (the
 * footprint of everything inside it), and in "reuse"[l] (may be NULL) the
 * ratio trip[l] * bytes[l] / (distinct bytes of the whole loop l): how
 * many times loop l re-touches what one of its iterations brings. */
void ts_traffic_eval(__ts_keep const ts_traffic *tr, int nloops,
	__ts_keep const int *axis, __ts_keep const int64_t *trip,
	__ts_keep int64_t *bytes, __ts_keep __ts_null double *reuse);

#ifdef __cplusplus
}
#endif

#endif
