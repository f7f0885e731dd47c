/* Shared by the network passes of search/: copying the stages of a DAG
 * onto other inputs, and static schedules of bounded code size.  Not
 * installed. */
#ifndef TESSEL_SEARCH_NETWORK_INTERNAL_H
#define TESSEL_SEARCH_NETWORK_INTERNAL_H

#include <tessel/network.h>

/* A layout of 4-D activations [n, c, h, w] other than the declared one
 * (networks/layout.c): layout "l" with channel block "x", and which
 * stages of the DAG being copied are stored in it ("physical", one per
 * stage, in the DAG's order). */
typedef struct ts_relayout {
	int l, x;
	const bool *physical;
} ts_relayout;

/* The channel block of layout "l" with block "x": "x" for NCHW[x]c, 0 for
 * the layouts that keep the channel one index. */
int ts_layout_channel_block(int l, int x);

/* The physical shape of the logical [n, c, h, w] "shape" in layout "l"
 * with block "x", into "phys"; return its number of dimensions. */
int ts_layout_physical_shape(int l, int x, const int64_t *shape,
	int64_t *phys);
/* The logical dimension that physical dimension "d" of layout "l"
 * walks. */
int ts_layout_source_dim(int l, int d);
/* The physical index "ph" of the logical index "lg" in layout "l" with
 * block "x"; return its number of dimensions. */
int ts_layout_physical_index(ts_ctx *ctx, int l, int x, ts_expr *const *lg,
	ts_expr **ph);
/* The logical index "lg" (four dimensions) of the physical index "ph"
 * in layout "l" with block "x". */
void ts_layout_logical_index(ts_ctx *ctx, int l, int x, ts_expr *const *ph,
	ts_expr **lg);

/* Copy every stage of "src" in "ctx", reading "inputs"[i] wherever
 * src->inputs[i] was read (a tensor of the same shape and dtype); write
 * the copies of src->outputs into "outs".  With "through_views", where
 * "inputs"[i] is a view of a placeholder (a stage whose body is one
 * load of it), the copies read the placeholder at the view's indices.
 * With "rl" (may be NULL), the stages it marks are computed over the
 * axes of its layout and stored in it, and read through it: a
 * convolution relaid to NCHW8c accumulates its blocks of channels in
 * place instead of being transposed after. */
ts_status ts_dag_copy_stages(ts_ctx *ctx, const ts_dag *src,
	ts_tensor *const *inputs, ts_tensor **outs, bool through_views,
	const ts_relayout *rl);

/* The task of "p" equal to "dag" (the same canonical string), or -1. */
int ts_partition_find_task(const ts_partition *p, const ts_dag *dag);

/* Count one more occurrence of the task of "p" equal to "dag", or add
 * "dag" as a new task of weight 1 named "name" of class "klass" with
 * "flops"; return the task's index. */
int ts_partition_add_task(ts_partition *p, ts_dag *dag, const char *name,
	ts_class klass, int64_t flops);

/* The most straight-line statements the network passes let one task's
 * code have.  The static schedules of ResNet-18's tasks and of their
 * relaid candidates lower to at most a few hundred; schedules that fully
 * unrolled a layout transformation (up to 800,000 statements) kept LLVM
 * optimising a single function for minutes while its memory grew by
 * gigabytes. */
#define TS_NETWORK_MAX_STMTS 8192

/* The statements code generation emits for "f": an unrolled loop copies
 * its body, a vector loop longer than "lanes" emits one operation per
 * register of "lanes" lanes, any other loop emits its body once. */
double ts_func_emitted_stmts(const ts_func *f, int lanes);
/* The static schedule of "dag" for "target": the best of the model's
 * "k" best configurations whose code stays within "max_stmts" statements
 * (lowered into "*f" when "f" is not NULL), else the naive schedule with
 * a warning naming the DAG.  The random part of the filling is seeded by
 * the context's seed and the DAG's hash: equal DAGs get equal schedules
 * whatever was filled before.  NULL with an error when static filling or
 * lowering fails. */
ts_schedule *ts_network_static_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k, double max_stmts, ts_func **f);

#endif
