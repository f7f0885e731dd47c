/* Promotion of accumulator tiles: a loop-IR pass after lowering.
 *
 * A reduction accumulates into a buffer X (a cache tile, or the output)
 * at indices that do not depend on the reduction loops around the store:
 *
 *	for k in 0..K:				(reduction loops)
 *	  unrolled for i in 0..4:		(tile loops: their variables
 *	    vectorized for j in 0..16:		 index X, one each)
 *	      X[a + i, b + j] = X[a + i, b + j] + ...
 *
 * The pass gives the tile i x j a buffer of its own, loaded from X before
 * the reduction loops and stored back after them:
 *
 *	alloc X.acc[4, 16] (local)
 *	  X.acc[i, j] = X[a + i, b + j]		(same tile loops)
 *	  for k in 0..K: ... X.acc[i, j] = X.acc[i, j] + ...
 *	  X[a + i, b + j] = X.acc[i, j]
 *
 * After unrolling, every index of X.acc is a constant, so LLVM keeps the
 * tile in registers across the reduction loops instead of loading and
 * storing it at every iteration.
 *
 * Requires: lowered loop IR.  Produces: the same program, with small
 * accumulator tiles in TS_SCOPE_LOCAL buffers.
 */
#include <config.h>

#include <tessel/lower.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "support/support.h"

/* The largest tile promoted, in elements: what registers (or at worst L1)
 * hold. */
#define MAX_TILE 2048
#define MAX_CHAIN 32

/* Whether "e" mentions loop variable "v". */
static bool uses_var(const ts_expr *e, const ts_axis *v)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_VAR)
		return e->axis == v;
	for (int i = 0; i < e->nargs; i++)
		if (uses_var(e->args[i], v))
			return true;
	return uses_var(e->a, v) || uses_var(e->b, v) || uses_var(e->c, v);
}

/* Whether index "e" is "v" or "x + v" / "v + x" with "v" appearing once. */
static bool is_offset_by(const ts_expr *e, const ts_axis *v)
{
	if (e->kind == TS_EXPR_VAR)
		return e->axis == v;
	if (e->kind != TS_EXPR_BINARY || e->op != TS_OP_ADD)
		return false;
	if (e->b->kind == TS_EXPR_VAR && e->b->axis == v)
		return !uses_var(e->a, v);
	if (e->a->kind == TS_EXPR_VAR && e->a->axis == v)
		return !uses_var(e->b, v);
	return false;
}

/* Whether two index lists are the same expressions. */
static bool same_index(int n, ts_expr *const *a, ts_expr *const *b)
{
	for (int d = 0; d < n; d++)
		if (strcmp(ts_expr_to_string(a[d]), ts_expr_to_string(b[d])))
			return false;
	return true;
}

/* Whether every load of "x" in "e" reads "x" at "idx". */
static bool loads_only_at(const ts_expr *e, const ts_tensor *x, int n,
	ts_expr *const *idx)
{
	if (!e)
		return true;
	if (e->kind == TS_EXPR_LOAD && e->tensor == x &&
	    !same_index(n, e->args, idx))
		return false;
	for (int i = 0; i < e->nargs; i++)
		if (!loads_only_at(e->args[i], x, n, idx))
			return false;
	return loads_only_at(e->a, x, n, idx) && loads_only_at(e->b, x, n, idx)
		&& loads_only_at(e->c, x, n, idx);
}

/* Return "e" with loads of "x" replaced by loads of "t" at "tidx". */
static ts_expr *replace_loads(ts_ctx *ctx, const ts_expr *e,
	const ts_tensor *x, ts_tensor *t, int nt, ts_expr *const *tidx)
{
	ts_expr *c;

	if (!e)
		return NULL;
	if (e->kind == TS_EXPR_LOAD && e->tensor == x)
		return ts_load(ctx, t, nt, tidx);
	c = ts_new(ts_expr);
	*c = *e;
	if (e->nargs) {
		c->args = ts_new_array(ts_expr *, e->nargs);
		for (int i = 0; i < e->nargs; i++)
			c->args[i] = replace_loads(ctx, e->args[i], x, t, nt,
				tidx);
	}
	c->a = replace_loads(ctx, e->a, x, t, nt, tidx);
	c->b = replace_loads(ctx, e->b, x, t, nt, tidx);
	c->c = replace_loads(ctx, e->c, x, t, nt, tidx);
	return c;
}

/* Return "e" with variable "from" replaced by variable "to". */
static ts_expr *rename_var(ts_ctx *ctx, const ts_expr *e, ts_axis *from,
	ts_axis *to)
{
	ts_expr *c;

	if (!e)
		return NULL;
	if (e->kind == TS_EXPR_VAR)
		return e->axis == from ? ts_var(ctx, to) : (ts_expr *)e;
	c = ts_new(ts_expr);
	*c = *e;
	if (e->nargs) {
		c->args = ts_new_array(ts_expr *, e->nargs);
		for (int i = 0; i < e->nargs; i++)
			c->args[i] = rename_var(ctx, e->args[i], from, to);
	}
	c->a = rename_var(ctx, e->a, from, to);
	c->b = rename_var(ctx, e->b, from, to);
	c->c = rename_var(ctx, e->c, from, to);
	return c;
}

/* A perfect nest from a loop down to one store. */
struct chain {
	int n;
	ts_stmt *loops[MAX_CHAIN];
	ts_stmt *store;
	int first_tile;		/* loops[first_tile..n) index the store */
};

/* The single statement of "s" if it is a block of one, else "s". */
static ts_stmt *single(ts_stmt *s)
{
	while (s && s->kind == TS_STMT_BLOCK && s->nstmts == 1)
		s = s->stmts[0];
	return s;
}

/* Fill "c" with the perfect nest under the loop "f"; false if "f" is not
 * the top of a promotable nest. */
static bool find_chain(ts_stmt *f, struct chain *c)
{
	ts_stmt *s = f;

	c->n = 0;
	while (s && s->kind == TS_STMT_FOR && c->n < MAX_CHAIN) {
		c->loops[c->n++] = s;
		s = single(s->body);
	}
	if (!s || s->kind != TS_STMT_STORE || c->n == 0)
		return false;
	c->store = s;
	/* Tile loops at the bottom, reduction loops (not indexing the
	 * store) above them. */
	c->first_tile = c->n;
	while (c->first_tile > 0) {
		const ts_stmt *l = c->loops[c->first_tile - 1];
		bool indexes = false;
		for (int d = 0; d < s->nidx; d++)
			indexes |= uses_var(s->idx[d], l->var);
		if (!indexes)
			break;
		c->first_tile--;
	}
	for (int k = 0; k < c->first_tile; k++) {
		if (c->loops[k]->loop == TS_LOOP_PARALLEL ||
		    c->loops[k]->loop == TS_LOOP_BOUND ||
		    c->loops[k]->loop == TS_LOOP_VECTORIZED)
			return false;
		for (int d = 0; d < s->nidx; d++)
			if (uses_var(s->idx[d], c->loops[k]->var))
				return false;
	}
	return c->first_tile > 0;
}

/* Whether the store of "c" accumulates into a tile that can be promoted:
 * every tile loop offsets exactly one index, loads of the buffer read the
 * stored element, the tile is small. */
static bool promotable(const struct chain *c)
{
	const ts_stmt *s = c->store;
	int64_t size = 1;

	if (!loads_only_at(s->value, s->buffer, s->nidx, s->idx))
		return false;
	for (int k = c->first_tile; k < c->n; k++) {
		const ts_axis *v = c->loops[k]->var;
		int dims = 0;
		if (c->loops[k]->loop == TS_LOOP_PARALLEL ||
		    c->loops[k]->loop == TS_LOOP_BOUND)
			return false;
		for (int d = 0; d < s->nidx; d++) {
			if (!uses_var(s->idx[d], v))
				continue;
			if (!is_offset_by(s->idx[d], v))
				return false;
			dims++;
		}
		if (dims != 1)
			return false;
		size *= v->extent;
	}
	return size <= MAX_TILE;
}

/* A copy of the tile loops of "c" around "body", with fresh variables
 * recorded in "vars". */
static ts_stmt *tile_nest(ts_ctx *ctx, const struct chain *c,
	ts_axis **vars, ts_stmt *body)
{
	for (int k = c->n - 1; k >= c->first_tile; k--)
		body = ts_stmt_for(vars[k - c->first_tile], c->loops[k]->loop,
			body);
	return body;
}

/* Rename the tile variables of "c" to "vars" in the list "idx". */
static ts_expr **renamed_index(ts_ctx *ctx, const struct chain *c,
	ts_axis **vars)
{
	const ts_stmt *s = c->store;
	ts_expr **idx = ts_new_array(ts_expr *, s->nidx);

	for (int d = 0; d < s->nidx; d++) {
		idx[d] = s->idx[d];
		for (int k = c->first_tile; k < c->n; k++)
			idx[d] = rename_var(ctx, idx[d], c->loops[k]->var,
				vars[k - c->first_tile]);
	}
	return idx;
}

/* Promote the tile of "c" (whose top loop is "top"); return the
 * statement replacing "top". */
static ts_stmt *promote(ts_ctx *ctx, const struct chain *c)
{
	ts_stmt *s = c->store, *in, *out, *store;
	int nt = c->n - c->first_tile;
	int64_t shape[TS_MAX_DIMS];
	ts_axis *vin[MAX_CHAIN], *vout[MAX_CHAIN];
	ts_expr *tidx[MAX_CHAIN], *tin[MAX_CHAIN], *tout[MAX_CHAIN];
	ts_tensor *t;

	for (int k = 0; k < nt; k++) {
		const ts_axis *v = c->loops[c->first_tile + k]->var;
		shape[k] = v->extent;
		tidx[k] = ts_var(ctx, c->loops[c->first_tile + k]->var);
		vin[k] = ts_loop_var(ctx, v->name, v->extent);
		vout[k] = ts_loop_var(ctx, v->name, v->extent);
		tin[k] = ts_var(ctx, vin[k]);
		tout[k] = ts_var(ctx, vout[k]);
	}
	t = ts_buffer_new(ctx, ts_asprintf("%s.acc", s->buffer->name),
		s->buffer->dtype, nt, shape);
	in = tile_nest(ctx, c, vin, ts_stmt_store(t, nt, tin,
		ts_load(ctx, s->buffer, s->nidx, renamed_index(ctx, c, vin))));
	out = tile_nest(ctx, c, vout, ts_stmt_store(s->buffer, s->nidx,
		renamed_index(ctx, c, vout), ts_load(ctx, t, nt, tout)));
	store = ts_stmt_store(t, nt, tidx, replace_loads(ctx, s->value,
		s->buffer, t, nt, tidx));
	/* The chain is a perfect nest: rebuild it around the new store. */
	for (int k = c->n - 1; k >= 0; k--) {
		ts_stmt *l = ts_stmt_for(c->loops[k]->var, c->loops[k]->loop,
			store);
		l->bind = c->loops[k]->bind;
		l->tensorize = c->loops[k]->tensorize;
		l->comment = c->loops[k]->comment;
		store = l;
	}
	return ts_stmt_alloc(t, TS_SCOPE_LOCAL, ts_stmt_block(3,
		(ts_stmt *[]){ in, store, out }));
}

/* Promote every accumulator tile in "s"; return the new statement. */
static ts_stmt *promote_stmt(ts_ctx *ctx, ts_stmt *s)
{
	struct chain c;

	if (!s)
		return NULL;
	if (s->kind == TS_STMT_FOR && find_chain(s, &c) && promotable(&c))
		return promote(ctx, &c);
	switch (s->kind) {
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			s->stmts[i] = promote_stmt(ctx, s->stmts[i]);
		return s;
	case TS_STMT_FOR:
	case TS_STMT_ALLOC:
		s->body = promote_stmt(ctx, s->body);
		return s;
	case TS_STMT_IF:
		s->body = promote_stmt(ctx, s->body);
		s->orelse = promote_stmt(ctx, s->orelse);
		return s;
	default:
		return s;
	}
}

void ts_func_promote_accumulators(ts_ctx *ctx, ts_func *f)
{
	f->body = promote_stmt(ctx, f->body);
}
