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

/* What a stage becomes, on CPUs and GPUs alike (the rule table of
 * metatemplates/rules.c decides; the target's actions choose among
 * these). */
typedef enum ts_rule {
	TS_RULE_INLINE,		/* inlined into its consumers */
	TS_RULE_TILE,		/* its own tiled loop nest at root (CPUs:
				 * every reduction and direct stage; GPUs:
				 * complex reductions) */
	TS_RULE_LOCATION,	/* where it is computed is a knob */
	TS_RULE_PLAIN,		/* spatial loops only (CPUs: nested
				 * reductions; GPUs: one thread per output
				 * element) */
	TS_RULE_REDUCE,		/* a simple reduction per thread or across
				 * the threads of a block (GPUs) */
	TS_RULE_COUNT
} ts_rule;

/* The plan of one stage: its rule and the knobs that fill it. */
typedef struct ts_stage_plan ts_stage_plan;

/* A meta-template instantiated on a DAG and a target. */
typedef struct ts_template ts_template;

/* Build the knob space of "dag" for "target" (rules in the order written
 * in metatemplates/rules.c, each target's actions: metatemplates/template.c
 * for CPUs, metatemplates/gpu.c for GPUs).  ts_template_apply,
 * ts_template_default and ts_template_print take either; the CPU nest
 * and the naive configuration are CPU templates' only.
 * Requires: an analysed DAG.  Produces: a space and a plan per stage. */
__ts_gc ts_template *ts_template_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_dag_info *info,
	__ts_keep const ts_target *target);
/* The schedule that "cfg" stands for; NULL with an error if a step is
 * refused (a template bug: every config of the space must apply). */
__ts_gc ts_schedule *ts_template_apply(__ts_keep const ts_template *tp,
	__ts_keep const ts_config *cfg);
/* Print the loop nest of stage "stage" under "cfg", the nest the model
 * rates: each loop as s|r, axis, trip count and kind, then the vector
 * width, the unrolled iterations and the share of guarded tails.  False
 * (nothing printed) for a stage without a nest of its own (inlined). */
bool ts_template_print_nest(__ts_keep FILE *out,
	__ts_keep const ts_template *tp, __ts_keep const ts_config *cfg,
	int stage);
/* What the template was made for, its knob space, and the plan of stage
 * "stage" (NULL outside the DAG). */
__ts_gc const ts_dag *ts_template_dag(__ts_keep const ts_template *tp);
__ts_gc const ts_target *ts_template_target(
	__ts_keep const ts_template *tp);
__ts_gc ts_space *ts_template_space(__ts_keep const ts_template *tp);
__ts_gc __ts_null const ts_stage_plan *ts_template_plan(
	__ts_keep const ts_template *tp, int stage);
/* The rule of plan "p", the entry of the rule table that decided it (a
 * static string), and the class of its stage. */
ts_rule ts_stage_plan_rule(__ts_keep const ts_stage_plan *p);
__ts_keep const char *ts_stage_plan_decided_by(
	__ts_keep const ts_stage_plan *p);
ts_class ts_stage_plan_class(__ts_keep const ts_stage_plan *p);
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
 * picks a configuration its model rates worse than that nest.  A GPU
 * template has no such nest: its default. */
__ts_gc ts_config *ts_template_naive(__ts_keep const ts_template *tp);
/* The name of "r", a static string. */
__ts_keep const char *ts_rule_name(ts_rule r);
void ts_template_print(__ts_keep FILE *out, __ts_keep const ts_template *tp);

#ifdef __cplusplus
}
#endif

#endif
