/* The bodies of the loop IR: statements and lowered functions.  The
 * public header <tessel/loop.h> declares them as opaque handles with
 * accessors; the library and its tests read the fields directly.  Not
 * installed. */
#ifndef TESSEL_BACKENDS_IR_H
#define TESSEL_BACKENDS_IR_H

#include <tessel/loop.h>

#include "dsl/ir.h"

struct ts_stmt {
	ts_stmt_kind kind;
	/* FOR */
	ts_axis *var;		/* loop variable; var->extent is the trip count */
	ts_loop_kind loop;	/* how the loop runs */
	ts_bind bind;		/* for TS_LOOP_BOUND */
	bool tensorize;		/* heads a tensorized nest (TS_STEP_TENSORIZE) */
	/* BLOCK */
	int nstmts;
	ts_stmt **stmts;
	/* IF */
	ts_expr *cond;		/* bool */
	ts_stmt *orelse;	/* may be NULL */
	/* FOR, IF, ALLOC */
	ts_stmt *body;
	/* STORE, ALLOC */
	ts_tensor *buffer;	/* the buffer written or allocated */
	ts_scope scope;		/* ALLOC: where it lives */
	/* STORE */
	int nidx;
	ts_expr **idx;		/* one index per dimension of buffer */
	ts_expr *value;		/* of buffer->dtype */
	const char *comment;	/* printed after the statement, may be NULL */
};

/* A lowered program: one function whose arguments are the DAG's inputs
 * followed by its outputs, each a dense C-order array. */
struct ts_func {
	const char *name;
	int nargs;
	ts_tensor **args;	/* inputs, then outputs */
	int ninputs;
	ts_stmt *body;
	const ts_dag *dag;	/* what it computes */
};

#endif
