/* The bodies of the DSL's IR objects: axes, expressions, tensors, stages
 * and DAGs.  The public header <tessel/dsl.h> declares them as opaque
 * handles with accessors, so that a program built against it keeps
 * compiling and running when a field here changes; the library and its
 * tests read the fields directly.  Not installed. */
#ifndef TESSEL_DSL_IR_H
#define TESSEL_DSL_IR_H

#include <tessel/dsl.h>

/* Index variables.  A spatial axis names one output dimension of a stage;
 * a reduction axis is bound by a reducer.  Both range over [0, extent). */
struct ts_axis {
	const char *name;
	int64_t extent;
	bool reduce;		/* bound by a reducer, not an output dimension */
	int id;			/* unique in the context */
};

/* An expression node.  Nodes are immutable once built. */
struct ts_expr {
	ts_expr_kind kind;
	ts_dtype dtype;		/* result type */
	bool literal;		/* untyped literal: takes the type of its peer */
	ts_op op;		/* UNARY, BINARY */
	ts_reducer reducer;	/* REDUCE */
	int64_t ival;		/* INT */
	double fval;		/* FLOAT */
	ts_axis *axis;		/* VAR */
	ts_tensor *tensor;	/* LOAD */
	int nargs;		/* LOAD: number of indices */
	ts_expr **args;		/* LOAD: indices */
	ts_expr *a, *b, *c;	/* operands; SELECT: a ? b : c; REDUCE: body in a */
	int nraxes;		/* REDUCE: number of bound axes */
	ts_axis **raxes;	/* REDUCE: bound axes, outermost first */
};

/* Tensors.  A placeholder has no stage; a computed tensor is the output of
 * exactly one stage. */
struct ts_tensor {
	const char *name;
	ts_dtype dtype;
	int ndim;
	int64_t shape[TS_MAX_DIMS];
	ts_stage *stage;	/* producing stage, NULL for a placeholder */
	int id;			/* unique in the context, in creation order */
	/* A placeholder whose contents stay the same from one run to the
	 * next (a layer's weights): a network may keep it in a layout of
	 * its own choosing, converted once rather than at every run. */
	bool weight;
};

/* A compute stage. */
struct ts_stage {
	const char *name;	/* the name of its output */
	ts_tensor *out;
	int ndim;		/* spatial axes, one per output dimension */
	ts_axis **axes;
	ts_expr *body;
	int nraxes;		/* every reduction axis bound in body, in order */
	ts_axis **raxes;
	int ninputs;		/* distinct tensors read, in first-use order */
	ts_tensor **inputs;
	int line;		/* source line in a .tsl file, 0 if none */
	/* Footprints of the stage on the tensors it accesses, computed
	 * once (ts_stage_footprint): a stage does not change after it is
	 * made, and lowering asks for them at every candidate. */
	struct ts_footprint_memo *footprints;
};

/* A DAG: the stages reachable from its outputs, in topological order. */
struct ts_dag {
	ts_ctx *ctx;
	int ninputs;		/* placeholders, the kernel's input arguments */
	ts_tensor **inputs;
	int noutputs;
	ts_tensor **outputs;
	int nstages;		/* topological order: producers first */
	ts_stage **stages;
	/* consumers[s] lists the indices of stages that read stage s. */
	int *nconsumers;
	int **consumers;
	const char *name;	/* file or user name, for messages */
};

#endif
