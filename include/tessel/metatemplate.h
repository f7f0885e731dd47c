/* Tessel: meta-templates.
 *
 * A meta-template turns the analysis of a DAG into a knob space and each
 * point of that space into a schedule.  There is one meta-template per
 * stage class, chosen by the analysis, never by what an operator is
 * called:
 *
 *	direct compute		"SS": parallel outer tiles, vector inner tile;
 *				inlined into its consumer when cheap
 *	simple reduction	"SSRRS": parallel outer tiles, reduction
 *				tiles, an inner spatial tile (vectorized when
 *				contiguous); or "SSSRR" with the inner
 *				reduction tile vectorized through rfactor
 *				when the reduction axis is the contiguous one
 *	complex reduction	"SSRSRS": parallel outer tiles, cache tiles,
 *				a reduction tile, register tiles (unrolled,
 *				vectorized), an accumulator tile
 *				(cache_write), optional packing of inputs
 *				(cache_read) and optional fusion into an
 *				elementwise consumer
 *	location-tunable	root, inlined, or computed at a loop of its
 *				consumer: a knob
 *
 * Each letter of a structure is one tiling level: S splits every spatial
 * axis, R every reduction axis; loops are ordered level by level.
 */
#ifndef TESSEL_METATEMPLATE_H
#define TESSEL_METATEMPLATE_H

#include <tessel/analysis.h>
#include <tessel/schedule.h>
#include <tessel/space.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_MAX_LEVELS 8
#define TS_MAX_NEST (TS_MAX_AXES * TS_MAX_LEVELS)

/* What a stage becomes. */
typedef enum ts_rule {
	TS_RULE_INLINE,		/* inlined into its consumers */
	TS_RULE_TILE,		/* its own tiled loop nest at root */
	TS_RULE_LOCATION,	/* root, inline or at a consumer loop: a knob */
	TS_RULE_PLAIN,		/* nested reductions: spatial tiling only */
	TS_RULE_COUNT
} ts_rule;

/* The plan of one stage: its rule and the knobs that fill it. */
typedef struct ts_stage_plan {
	int stage;		/* index in the DAG */
	ts_rule rule;
	const char *decided_by;	/* the rule of the table that decided */
	ts_class klass;
	const char *structure;	/* "SSRSRS", "SSRRS", "SS" */
	int nlevels;		/* strlen(structure) */
	int nspatial, nreduce;
	int nslevels, nrlevels;	/* S and R letters */
	int split[TS_MAX_AXES];	/* split knob per axis (spatial, reduce) */
	int knob_vec;		/* choice: a spatial axis name or "none" */
	int vec_default;	/* the contiguous axis, or -1 */
	int knob_par;		/* int: outer loops fused and parallel */
	int knob_unroll;	/* bool: unroll the register tile */
	int knob_cache_write;	/* bool, or -1 */
	int knob_rfvec;		/* bool: vectorize the reduction through
				 * rfactor ("SSSRR"), or -1 */
	int knob_fuse;		/* bool: fuse into consumer, or -1 */
	int fuse_consumer;	/* stage index of that consumer, or -1 */
	int fused_into;		/* FUSED candidates: the anchor, or -1 */
	int knob_at;		/* LOCATION: choice, or -1 */
	int at_consumer;	/* LOCATION: the consumer stage */
	int npack;		/* inputs that may be packed */
	int pack_input[TS_MAX_DIMS];	/* index in stage->inputs */
	int knob_pack[TS_MAX_DIMS];	/* choice: none, outer, inner */
} ts_stage_plan;

/* A meta-template instantiated on a DAG and a target. */
typedef struct ts_template {
	ts_ctx *ctx;
	const ts_dag *dag;
	const ts_dag_info *info;
	const ts_target *target;
	ts_space *space;
	ts_stage_plan *plans;	/* one per stage */
} ts_template;

/* One loop of a stage under a configuration: what the model rates. */
typedef struct ts_nest_loop {
	int axis;		/* stage axis (spatial, then reduction) */
	int level;		/* tiling level */
	int64_t trip;		/* iterations */
	ts_loop_kind kind;
} ts_nest_loop;

typedef struct ts_nest {
	int stage;
	int nloops;
	ts_nest_loop loops[TS_MAX_NEST];
	int npar;		/* outer loops run in parallel */
	int vec_axis;		/* -1: none */
	int64_t vec_width;	/* lanes of the vector loop */
	int64_t unrolled;	/* iterations of the unrolled register tile */
	int64_t padded;		/* iterations including guarded tails */
	int64_t useful;		/* iterations of the stage */
	bool cache_write;
	bool fused;		/* computed in its consumer's tile */
	int npacked;
} ts_nest;

/* Build the knob space of "dag" for "target" (rules in the order written
 * in metatemplates/template.c).
 * Requires: an analysed DAG.  Produces: a space and a plan per stage. */
__ts_gc ts_template *ts_template_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_dag_info *info,
	__ts_keep const ts_target *target);
/* The schedule that "cfg" stands for; NULL with an error if a step is
 * refused (a template bug: every config of the space must apply). */
__ts_gc ts_schedule *ts_template_apply(__ts_keep const ts_template *tp,
	__ts_keep const ts_config *cfg);
/* The loop nest of stage "stage" under "cfg" (false for stages that have
 * no nest of their own: inlined). */
bool ts_template_nest(__ts_keep const ts_template *tp,
	__ts_keep const ts_config *cfg, int stage, __ts_keep ts_nest *nest);
/* The layout of the packed copy of input "in" of stage plan "p" under
 * "cfg" as a permutation into "perm" (buffer dimension j holds tensor
 * dimension perm[j]); its length, 0 for the tensor's own layout. */
int ts_template_pack_layout(__ts_keep const ts_template *tp,
	__ts_keep const ts_stage_plan *p, __ts_keep const ts_config *cfg,
	__ts_keep const ts_tensor *in, __ts_keep int *perm);
/* Where pack knob "k" of plan "p" copies its input under "cfg", as
 * scheduled: 0 nowhere, 1 at the outer tile, 2 at the inner tile (an
 * anchor fused into its consumer has no outer tile of its own, and only
 * an input with a buffer at root is copied). */
int ts_template_pack_where(__ts_keep const ts_template *tp,
	__ts_keep const ts_stage_plan *p, __ts_keep const ts_config *cfg,
	int k);
/* A configuration the template thinks sensible before any model: every
 * knob at its default. */
__ts_gc ts_config *ts_template_default(__ts_keep const ts_template *tp);
/* The configuration closest to the naive schedule (ts_schedule_naive):
 * every loop in its declared order, untiled, serial, nothing vectorized
 * but what LLVM vectorizes itself, every location-tunable stage at
 * root.  The static search rates it with the others, so that it never
 * picks a configuration its model rates worse than that nest. */
__ts_gc ts_config *ts_template_naive(__ts_keep const ts_template *tp);
/* The name of "r", a static string. */
__ts_keep const char *ts_rule_name(ts_rule r);
void ts_template_print(__ts_keep FILE *out, __ts_keep const ts_template *tp);

#ifdef __cplusplus
}
#endif

#endif
