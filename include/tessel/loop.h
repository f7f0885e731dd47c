/* Tessel: the loop IR.
 *
 * Lowering turns a DAG and its schedule into one ts_func: a tree of
 * statements over buffers.  Expressions are the DSL's ts_expr, restricted:
 * no REDUCE nodes; VAR nodes name loop variables (ts_axis objects made by
 * the lowering, one per loop); LOAD nodes read buffers, each buffer being
 * a ts_tensor made by the lowering (or a DAG tensor for arguments), indexed
 * with one index per dimension in C order.  Loop extents are constants;
 * non-dividing tiles are handled by guards (TS_STMT_IF) or by partitioning
 * a loop into a main part and a tail part, both with constant extents.
 *
 * Printing the IR shows exactly what will run.
 */
#ifndef TESSEL_LOOP_H
#define TESSEL_LOOP_H

#include <tessel/dsl.h>
#include <tessel/schedule.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_stmt_kind {
	TS_STMT_FOR,		/* for var in [0, extent of var): body */
	TS_STMT_BLOCK,		/* its statements in order */
	TS_STMT_IF,		/* if (cond) body else orelse */
	TS_STMT_STORE,		/* buffer[index...] = value */
	TS_STMT_ALLOC,		/* buffer exists during body */
	TS_STMT_SYNC,		/* GPU: barrier among the threads of a block */
	TS_STMT_KIND_COUNT
} ts_stmt_kind;

/* A statement of the loop IR.  Statements and functions are opaque:
 * built by the constructors below and by lowering, read through the
 * accessors. */
typedef struct ts_stmt ts_stmt;

/* A lowered program: one function whose arguments are the DAG's inputs
 * followed by its outputs, each a dense C-order array. */
typedef struct ts_func ts_func;

/* The symbol-safe name of "f", its arguments (inputs, then outputs),
 * how many of them are inputs, its body and the DAG it computes. */
__ts_keep const char *ts_func_name(__ts_keep const ts_func *f);
int ts_func_nargs(__ts_keep const ts_func *f);
__ts_gc __ts_null ts_tensor *ts_func_arg(__ts_keep const ts_func *f, int i);
int ts_func_ninputs(__ts_keep const ts_func *f);
__ts_gc ts_stmt *ts_func_body(__ts_keep const ts_func *f);
__ts_gc const ts_dag *ts_func_dag(__ts_keep const ts_func *f);

/* What "s" is, and its parts; an accessor that does not apply to the
 * kind of "s" returns NULL, 0 or -1.  FOR: its variable, loop kind and
 * body; BLOCK: its statements; IF: its condition, body and else branch
 * (may be NULL); STORE: its buffer, indices and value; ALLOC: its buffer,
 * scope and body. */
ts_stmt_kind ts_stmt_get_kind(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_axis *ts_stmt_var(__ts_keep const ts_stmt *s);
ts_loop_kind ts_stmt_loop_kind(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_stmt *ts_stmt_body(__ts_keep const ts_stmt *s);
int ts_stmt_nstmts(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_stmt *ts_stmt_child(__ts_keep const ts_stmt *s, int i);
__ts_gc __ts_null ts_expr *ts_stmt_cond(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_stmt *ts_stmt_orelse(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_tensor *ts_stmt_buffer(__ts_keep const ts_stmt *s);
ts_scope ts_stmt_scope(__ts_keep const ts_stmt *s);
int ts_stmt_nidx(__ts_keep const ts_stmt *s);
__ts_gc __ts_null ts_expr *ts_stmt_index(__ts_keep const ts_stmt *s, int i);
__ts_gc __ts_null ts_expr *ts_stmt_value(__ts_keep const ts_stmt *s);
/* Whether the loop "s" heads a nest that its schedule tensorized: "s"
 * and the two loops inside it are a 16 x 16 x 16 multiply-accumulate
 * for the target's matrix units (TS_STEP_TENSORIZE). */
bool ts_stmt_tensorized(__ts_keep const ts_stmt *s);

/* Statement constructors ("orelse" NULL: an if without else). */
__ts_gc ts_stmt *ts_stmt_for(__ts_keep ts_axis *var, ts_loop_kind loop,
	__ts_keep ts_stmt *body);
__ts_gc ts_stmt *ts_stmt_block(int n, __ts_keep ts_stmt *const *stmts);
__ts_gc ts_stmt *ts_stmt_if(__ts_keep ts_expr *cond, __ts_keep ts_stmt *body,
	__ts_keep __ts_null ts_stmt *orelse);
__ts_gc ts_stmt *ts_stmt_store(__ts_keep ts_tensor *buffer, int nidx,
	__ts_keep ts_expr *const *idx, __ts_keep ts_expr *value);
__ts_gc ts_stmt *ts_stmt_alloc(__ts_keep ts_tensor *buffer, ts_scope scope,
	__ts_keep ts_stmt *body);
__ts_gc ts_stmt *ts_stmt_sync(void);
/* Append "s" to the block "block". */
void ts_stmt_block_append(__ts_keep ts_stmt *block, __ts_keep ts_stmt *s);

/* Whether the loads of "e" read "t". */
bool ts_expr_reads(__ts_keep const ts_expr *e, __ts_keep const ts_tensor *t);
/* Whether the store "st" is "B[idx] = B[idx] op x" with "op" a reducer's
 * combine (+, *, min, max) and "x" free of B. */
bool ts_stmt_is_update(__ts_keep const ts_stmt *st);
/* Whether the store "st" is "B[idx] = B[idx] + x * y" in floats: the only
 * multiply-add compiled code fuses (doc/grammar.md). */
bool ts_stmt_is_fma_update(__ts_keep const ts_stmt *st);

/* A buffer for the loop IR: a tensor that no stage computes and that is
 * not registered by name in "ctx". */
__ts_gc ts_tensor *ts_buffer_new(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name, ts_dtype t, int ndim,
	__ts_keep const int64_t *shape);
/* A loop variable over [0, "extent"). */
__ts_gc ts_axis *ts_loop_var(__ts_keep ts_ctx *ctx, __ts_keep const char *name,
	int64_t extent);

/* Print "f" or "s" as indented pseudo-code. */
void ts_func_print(__ts_keep FILE *out, __ts_keep const ts_func *f);
void ts_stmt_print(__ts_keep FILE *out, __ts_keep const ts_stmt *s, int indent);
__ts_gc char *ts_func_to_string(__ts_keep const ts_func *f);

#ifdef __cplusplus
}
#endif

#endif
