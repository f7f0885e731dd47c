/* Internal: the one table of meta-template rules that the CPU and GPU
 * templates both decide by.  Not installed.
 *
 * A rule is a condition on the analysed stage; the first rule of the
 * table that applies to the target's kind and holds decides what the
 * stage becomes (ts_decision).  What a decision means on a target, the
 * rule and the knobs its plan gets, is that target's action, supplied
 * through a table of operations (template.c for CPUs, gpu.c for GPUs). */
#ifndef TESSEL_METATEMPLATES_RULES_H
#define TESSEL_METATEMPLATES_RULES_H

#include <tessel/analysis.h>

/* What a rule decides a stage becomes. */
typedef enum ts_decision {
	TS_DECIDE_NESTED,	/* reductions inside its body: spatial only */
	TS_DECIDE_INLINE,	/* inlined into its consumers */
	TS_DECIDE_LOCATION,	/* where it is computed is a knob */
	TS_DECIDE_COMPLEX,	/* a complex reduction: multi-level tiles */
	TS_DECIDE_SIMPLE,	/* a simple reduction */
	TS_DECIDE_DIRECT,	/* its own nest of spatial loops */
	TS_DECIDE_COUNT
} ts_decision;

/* The kinds of target a rule applies to (a mask). */
enum { TS_RULES_CPU = 1, TS_RULES_GPU = 2, TS_RULES_ALL = 3 };

typedef struct ts_rule_def {
	const char *name;
	unsigned targets;	/* TS_RULES_* mask */
	bool (*holds)(const ts_dag *dag, const ts_dag_info *info, int s);
	ts_decision decision;
	const char *why;	/* the reason, for readers and printing */
} ts_rule_def;

/* A target's actions: "act"[d] makes the plan of stage "s" of the
 * template "tp" follow decision "d" (its rule; knobs come after every
 * stage has its rule, since fusion looks at consumers). */
typedef struct ts_rule_ops {
	const char *target;	/* "cpu", "gpu" */
	unsigned kind;		/* TS_RULES_CPU or TS_RULES_GPU */
	void (*act[TS_DECIDE_COUNT])(void *tp, int s);
} ts_rule_ops;

/* The first rule of the table for "kind" that holds for stage "s" (one
 * always does: the last rule holds for every stage). */
const ts_rule_def *ts_rule_find(const ts_dag *dag, const ts_dag_info *info,
	int s, unsigned kind);
/* Decide stage "s" of "tp" (a template over "dag" and "info") by the
 * table and apply "ops"' action; return the rule that decided. */
const ts_rule_def *ts_rule_decide(const ts_rule_ops *ops, void *tp,
	const ts_dag *dag, const ts_dag_info *info, int s);
/* The table and its length, in the order rules are tried. */
const ts_rule_def *ts_rule_table(int *n);

#endif
