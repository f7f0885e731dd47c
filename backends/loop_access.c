/* The accessors of the loop IR's opaque handles (<tessel/loop.h>): what a
 * program outside the library reads of statements and lowered
 * functions.  An accessor that does not apply to a statement's kind, or
 * an index out of range, gives NULL, 0 or -1. */
#include <config.h>

#include <tessel/loop.h>

#include "backends/ir.h"

const char *ts_func_name(const ts_func *f)
{
	return f->name;
}

int ts_func_nargs(const ts_func *f)
{
	return f->nargs;
}

ts_tensor *ts_func_arg(const ts_func *f, int i)
{
	return i >= 0 && i < f->nargs ? f->args[i] : NULL;
}

int ts_func_ninputs(const ts_func *f)
{
	return f->ninputs;
}

ts_stmt *ts_func_body(const ts_func *f)
{
	return f->body;
}

const ts_dag *ts_func_dag(const ts_func *f)
{
	return f->dag;
}

ts_stmt_kind ts_stmt_get_kind(const ts_stmt *s)
{
	return s->kind;
}

ts_axis *ts_stmt_var(const ts_stmt *s)
{
	return s->kind == TS_STMT_FOR ? s->var : NULL;
}

ts_loop_kind ts_stmt_loop_kind(const ts_stmt *s)
{
	return s->kind == TS_STMT_FOR ? s->loop : TS_LOOP_SERIAL;
}

ts_stmt *ts_stmt_body(const ts_stmt *s)
{
	switch (s->kind) {
	case TS_STMT_FOR:
	case TS_STMT_IF:
	case TS_STMT_ALLOC:
		return s->body;
	default:
		return NULL;
	}
}

int ts_stmt_nstmts(const ts_stmt *s)
{
	return s->kind == TS_STMT_BLOCK ? s->nstmts : 0;
}

ts_stmt *ts_stmt_child(const ts_stmt *s, int i)
{
	return i >= 0 && i < ts_stmt_nstmts(s) ? s->stmts[i] : NULL;
}

ts_expr *ts_stmt_cond(const ts_stmt *s)
{
	return s->kind == TS_STMT_IF ? s->cond : NULL;
}

ts_stmt *ts_stmt_orelse(const ts_stmt *s)
{
	return s->kind == TS_STMT_IF ? s->orelse : NULL;
}

ts_tensor *ts_stmt_buffer(const ts_stmt *s)
{
	if (s->kind != TS_STMT_STORE && s->kind != TS_STMT_ALLOC)
		return NULL;
	return s->buffer;
}

ts_scope ts_stmt_scope(const ts_stmt *s)
{
	return s->kind == TS_STMT_ALLOC ? s->scope : TS_SCOPE_ARG;
}

int ts_stmt_nidx(const ts_stmt *s)
{
	return s->kind == TS_STMT_STORE ? s->nidx : 0;
}

ts_expr *ts_stmt_index(const ts_stmt *s, int i)
{
	return i >= 0 && i < ts_stmt_nidx(s) ? s->idx[i] : NULL;
}

ts_expr *ts_stmt_value(const ts_stmt *s)
{
	return s->kind == TS_STMT_STORE ? s->value : NULL;
}

bool ts_stmt_tensorized(const ts_stmt *s)
{
	return s->kind == TS_STMT_FOR && s->tensorize;
}
