/* Tessel: GPU meta-templates and their static filling.
 *
 * As on CPUs (<tessel/metatemplate.h>) there is one meta-template per
 * stage class, chosen by the analysis and never by an operator's name:
 *
 *	direct compute		spatial loops fused, split into blocks, an
 *				unrolled loop of "vec" elements per thread
 *				and threads (the thread index innermost, so
 *				neighbouring threads touch neighbouring
 *				elements)
 *	simple reduction	one thread per output (as direct, the
 *				reduction inside), or a cross-thread
 *				reduction: one block per output, the fused
 *				reduction split over "rthreads" threads
 *	complex reduction	"SSSRRS": spatial axes split into block,
 *				virtual thread, thread and register levels,
 *				reduction axes into an outer and an inner
 *				level; loops ordered block, thread, outer
 *				and inner reduction, virtual thread and
 *				register (both unrolled: a thread's outputs
 *				are its register tile repeated at the
 *				threads' stride); block and thread levels
 *				fused and bound; the
 *				accumulator tile in registers (cache_write
 *				at the thread loop); inputs with reuse
 *				optionally staged in shared memory at the
 *				outer reduction loop (cooperative copies by
 *				the block); an unroll knob for the inner
 *				reduction loops; an elementwise consumer
 *				optionally fused (the anchor computed into a
 *				block tile in shared memory, the consumer
 *				reading it)
 *	location-tunable	inlined or at root: a knob
 *	nested reductions	one thread per output
 *
 * Splits of complex reductions take divisors only, so no tile has a tail
 * and every barrier is reached by every thread of the block.
 *
 * Tensor cores.  A complex reduction gets a "tensor_core" knob when the
 * analysis allows it (ts_gpu_template_tc_reason says why not otherwise):
 * the target has tensor cores (sm_70 and later), the stage is a sum over
 * one reduction axis of the product of two f16 loads (or their f32
 * casts) into an f32 or f16 accumulator, each operand reads the
 * reduction axis and a spatial axis the other does not (the last such
 * axis is its fragment axis, the other spatial axes go to the blocks),
 * every index a plain axis, and the two fragment axes and the reduction
 * axis have extents that are multiples of 16.  With the
 * knob on, those axes are split into 16 x 16 x 16 fragments: rows and
 * columns into block, warp and fragments per warp, the reduction into
 * outer and inner steps; every thread loop stands for one warp (bound to
 * threadIdx.y), the operands are staged in shared memory and the emitter
 * computes each fragment with nvcuda::wmma.
 */
#ifndef TESSEL_GPU_H
#define TESSEL_GPU_H

#include <tessel/analysis.h>
#include <tessel/metatemplate.h>
#include <tessel/schedule.h>
#include <tessel/space.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A meta-template on a GPU target: the one template type of
 * metatemplates/, its plans decided by the same rule table as on CPUs,
 * its knobs and actions the GPU's (threads, cross-thread reductions,
 * shared-memory staging, tensor cores).  The functions below take the
 * templates ts_gpu_template_new makes; ts_template_dag and
 * ts_template_space read them. */
typedef struct ts_template ts_gpu_template;

/* How one stage runs under a configuration: what the model rates. */
typedef struct ts_gpu_launch {
	int stage;
	bool kernel;		/* false: inlined or fused into another */
	int64_t blocks;
	int64_t threads;	/* per block */
	int64_t per_thread;	/* outputs one thread computes */
	int64_t shared_bytes;
	int64_t registers;	/* estimated 32-bit registers per thread */
	bool cross;		/* cross-thread reduction */
	bool coalesced;		/* neighbouring threads, neighbouring
				 * elements of every access along the
				 * thread axis */
	bool tensor_core;	/* fragments on tensor cores: "threads"
				 * counts the lanes of its warps */
	double operand_loads;	/* a tile's operand values one thread
				 * loads per reduction iteration (the
				 * footprints of its register tile); 0
				 * for the other rules */
	int64_t steps;		/* a tile's outer reduction steps, each
				 * staging its operands between barriers;
				 * 0 for the other rules */
} ts_gpu_launch;

/* Build the knob space of "dag" for the GPU "target".
 * Requires: an analysed DAG and a GPU target.  Produces: a space and a
 * plan per stage. */
__ts_gc ts_gpu_template *ts_gpu_template_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_dag_info *info,
	__ts_keep const ts_target *target);
/* The schedule "cfg" stands for; NULL with an error if a step is
 * refused. */
__ts_gc ts_schedule *ts_gpu_template_apply(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg);
/* Every knob at a sensible default. */
__ts_gc ts_config *ts_gpu_template_default(__ts_keep const ts_gpu_template *tp);
/* How stage "stage" runs under "cfg". */
void ts_gpu_template_launch(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg, int stage,
	__ts_keep ts_gpu_launch *out);
/* Whether stage "stage" computes on tensor cores under "cfg". */
bool ts_gpu_template_tensor_core(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg, int stage);
/* Why stage "stage" has no tensor-core knob (naming the stage, axis or
 * operand at fault), or NULL when it has one. */
__ts_gc __ts_null const char *ts_gpu_template_tc_reason(
	__ts_keep const ts_gpu_template *tp, int stage);
/* Whether anchor "stage" is fused with its epilogue under "cfg". */
bool ts_gpu_template_fused(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg, int stage);
/* Global bytes the inputs of the tiled stage "stage" move under "cfg":
 * every block reads the footprint of its tile once per outer reduction
 * step. */
double ts_gpu_template_tile_traffic(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg, int stage);
/* Whether every kernel of "cfg" fits the target: threads per block,
 * shared memory and registers per block. */
bool ts_gpu_template_fits(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg);
/* The same for the kernel of stage "stage" alone (true where it has
 * none). */
bool ts_gpu_template_stage_fits(__ts_keep const ts_gpu_template *tp,
	__ts_keep const ts_config *cfg, int stage);
void ts_gpu_template_print(__ts_keep FILE *out,
	__ts_keep const ts_gpu_template *tp);

#ifdef __cplusplus
}
#endif

#endif
