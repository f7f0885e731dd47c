/* Internal: facts about compute declarations that the CPU and GPU
 * meta-templates both decide on.  Not installed. */
#ifndef TESSEL_METATEMPLATES_FACTS_H
#define TESSEL_METATEMPLATES_FACTS_H

#include <tessel/dsl.h>

/* Whether the body "e" holds a reduction below its root. */
bool ts_body_has_nested_reduce(const ts_expr *e);
/* Whether every load of "t" in "e" reads "t" at the axes of "s" in
 * order (the consumer walks the producer's elements one for one). */
bool ts_body_loads_identity(const ts_expr *e, const ts_tensor *t,
	const ts_stage *s);
/* Whether "e" loads from memory under a guard the code keeps: in an arm
 * of a select or the right operand of && or ||, where the load is not in
 * bounds everywhere (the border of a padded input).  The LLVM emitter
 * evaluates exactly these operands only where they are chosen. */
bool ts_body_has_guarded_load(const ts_expr *e);
/* Whether "e" mentions the variable of "axis". */
bool ts_expr_uses_axis(const ts_expr *e, const ts_axis *axis);
/* The stage that really consumes stage "s" of "dag" once the stages for
 * which "inlined"("arg", stage) holds are seen through, when there is
 * exactly one and it reads every element one for one; -1 otherwise. */
int ts_dag_effective_consumer(const ts_dag *dag, int s,
	bool (*inlined)(const void *arg, int stage), const void *arg);

#endif
