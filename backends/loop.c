/* The loop IR: statement constructors, buffers, loop variables and the
 * printer that shows a lowered function as indented pseudo-code. */
#include <config.h>

#include <inttypes.h>

#include <tessel/loop.h>

#include "backends/ir.h"
#include "backends/lower_internal.h"
#include "dsl/internal.h"

/* Return a new statement of kind "kind". */
static ts_stmt *stmt_new(ts_stmt_kind kind)
{
	ts_stmt *s = ts_new(ts_stmt);

	s->kind = kind;
	return s;
}

/* A loop over "var" of kind "loop" around "body". */
ts_stmt *ts_stmt_for(ts_axis *var, ts_loop_kind loop, ts_stmt *body)
{
	ts_stmt *s;

	if (!var || !body)
		return NULL;
	s = stmt_new(TS_STMT_FOR);
	s->var = var;
	s->loop = loop;
	s->body = body;
	return s;
}

/* A block of the "n" statements "stmts" (NULL entries are skipped). */
ts_stmt *ts_stmt_block(int n, ts_stmt *const *stmts)
{
	ts_stmt *s = stmt_new(TS_STMT_BLOCK);

	for (int i = 0; i < n; i++)
		ts_stmt_block_append(s, stmts[i]);
	return s;
}

/* Append "s" to "block"; a NULL "s" is ignored. */
void ts_stmt_block_append(ts_stmt *block, ts_stmt *s)
{
	if (!block || !s)
		return;
	block->stmts = ts_grow(block->stmts, sizeof(ts_stmt *),
		block->nstmts, block->nstmts + 1);
	block->stmts[block->nstmts++] = s;
}

/* "if ("cond") "body" else "orelse"". */
ts_stmt *ts_stmt_if(ts_expr *cond, ts_stmt *body, ts_stmt *orelse)
{
	ts_stmt *s;

	if (!cond || !body)
		return NULL;
	s = stmt_new(TS_STMT_IF);
	s->cond = cond;
	s->body = body;
	s->orelse = orelse;
	return s;
}

/* "buffer"["idx"...] = "value", with "nidx" indices. */
ts_stmt *ts_stmt_store(ts_tensor *buffer, int nidx, ts_expr *const *idx,
	ts_expr *value)
{
	ts_stmt *s;

	if (!buffer || !value)
		return NULL;
	for (int i = 0; i < nidx; i++)
		if (!idx[i])
			return NULL;
	s = stmt_new(TS_STMT_STORE);
	s->buffer = buffer;
	s->nidx = nidx;
	s->idx = ts_new_array(ts_expr *, nidx ? nidx : 1);
	for (int i = 0; i < nidx; i++)
		s->idx[i] = idx[i];
	s->value = value;
	return s;
}

/* Whether the loads of "e" read "t". */
bool ts_expr_reads(const ts_expr *e, const ts_tensor *t)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t)
		return true;
	for (int i = 0; e->kind == TS_EXPR_LOAD && i < e->nargs; i++)
		if (ts_expr_reads(e->args[i], t))
			return true;
	return ts_expr_reads(e->a, t) || ts_expr_reads(e->b, t) ||
		ts_expr_reads(e->c, t);
}

/* Whether the store "st" is "B[idx] = B[idx] op x", "op" a reducer's
 * combine and "x" free of B. */
bool ts_stmt_is_update(const ts_stmt *st)
{
	const ts_expr *v = st->value;

	if (v->kind != TS_EXPR_BINARY || (v->op != TS_OP_ADD &&
	    v->op != TS_OP_MUL && v->op != TS_OP_MIN && v->op != TS_OP_MAX))
		return false;
	if (v->a->kind != TS_EXPR_LOAD || v->a->tensor != st->buffer ||
	    v->a->nargs != st->nidx || ts_expr_reads(v->b, st->buffer))
		return false;
	for (int d = 0; d < st->nidx; d++)
		if (!ts_expr_equal(v->a->args[d], st->idx[d]))
			return false;
	return true;
}

/* Whether the store "st" adds a float product to its accumulator,
 * "B[idx] = B[idx] + x * y": the one place where compiled code fuses a
 * multiply and an add (one rounding).  Everywhere else "a * b + c" rounds
 * twice, as the interpreter computes it, so that integers derived from
 * float arithmetic agree exactly; the sum's order is free anyway. */
bool ts_stmt_is_fma_update(const ts_stmt *st)
{
	const ts_expr *x = st->value;

	return st->kind == TS_STMT_STORE && ts_stmt_is_update(st) &&
		x->op == TS_OP_ADD && ts_dtype_is_float(x->dtype) &&
		x->b->kind == TS_EXPR_BINARY && x->b->op == TS_OP_MUL;
}

/* The buffer "buffer" living in "scope" during "body". */
ts_stmt *ts_stmt_alloc(ts_tensor *buffer, ts_scope scope, ts_stmt *body)
{
	ts_stmt *s;

	if (!buffer || !body)
		return NULL;
	s = stmt_new(TS_STMT_ALLOC);
	s->buffer = buffer;
	s->scope = scope;
	s->body = body;
	return s;
}

ts_stmt *ts_stmt_sync(void)
{
	return stmt_new(TS_STMT_SYNC);
}

/* A buffer "name" of dtype "t" and shape "shape" ("ndim" dimensions),
 * not registered in "ctx" so that lowering may reuse names freely. */
ts_tensor *ts_buffer_new(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape)
{
	if (!name || ndim < 0 || ndim > TS_MAX_DIMS ||
	    (unsigned)t >= TS_DTYPE_COUNT) {
		ts_ctx_set_error(ctx, "buffer '%s': bad dtype or rank %d",
			name ? name : "(null)", ndim);
		return NULL;
	}
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0) {
			ts_ctx_set_error(ctx, "buffer '%s': dimension %d has "
				"extent %" PRId64, name, i, shape[i]);
			return NULL;
		}
	return ts_tensor_make(ctx, name, t, ndim, shape);
}

/* A loop variable "name" over [0, "extent"). */
ts_axis *ts_loop_var(ts_ctx *ctx, const char *name, int64_t extent)
{
	return ts_axis_new(ctx, name, extent);
}

/* Indent "b" by "indent" levels of two spaces. */
static void put_indent(ts_buf *b, int indent)
{
	for (int i = 0; i < indent; i++)
		ts_buf_puts(b, "  ");
}

/* Print "shape" of rank "ndim" into "b" as "[a, b, c]". */
static void put_shape(ts_buf *b, int ndim, const int64_t *shape)
{
	ts_buf_putc(b, '[');
	for (int i = 0; i < ndim; i++)
		ts_buf_printf(b, "%s%" PRId64, i ? ", " : "", shape[i]);
	ts_buf_putc(b, ']');
}

static void put_stmt(ts_buf *b, const ts_stmt *s, int indent);

/* Print the header of the loop "s" into "b". */
static void put_for(ts_buf *b, const ts_stmt *s, int indent)
{
	put_indent(b, indent);
	if (s->loop == TS_LOOP_BOUND)
		ts_buf_printf(b, "bound(%s) ", ts_bind_name(s->bind));
	else if (s->loop != TS_LOOP_SERIAL)
		ts_buf_printf(b, "%s ", ts_loop_kind_name(s->loop));
	ts_buf_printf(b, "for %s in 0..%" PRId64 ":", s->var->name,
		s->var->extent);
	if (s->tensorize)
		ts_buf_puts(b, "  # tensorized");
	if (s->comment)
		ts_buf_printf(b, "  # %s", s->comment);
	ts_buf_putc(b, '\n');
	put_stmt(b, s->body, indent + 1);
}

/* Print the store "s" into "b". */
static void put_store(ts_buf *b, const ts_stmt *s, int indent)
{
	put_indent(b, indent);
	ts_buf_puts(b, s->buffer->name);
	if (s->nidx) {
		ts_buf_putc(b, '[');
		for (int i = 0; i < s->nidx; i++)
			ts_buf_printf(b, "%s%s", i ? ", " : "",
				ts_expr_to_string(s->idx[i]));
		ts_buf_putc(b, ']');
	}
	ts_buf_printf(b, " = %s", ts_expr_to_string(s->value));
	if (s->comment)
		ts_buf_printf(b, "  # %s", s->comment);
	ts_buf_putc(b, '\n');
}

/* Print the conditional "s" into "b". */
static void put_if(ts_buf *b, const ts_stmt *s, int indent)
{
	put_indent(b, indent);
	ts_buf_printf(b, "if (%s):\n", ts_expr_to_string(s->cond));
	put_stmt(b, s->body, indent + 1);
	if (s->orelse) {
		put_indent(b, indent);
		ts_buf_puts(b, "else:\n");
		put_stmt(b, s->orelse, indent + 1);
	}
}

/* Print "s" into "b" at depth "indent". */
static void put_stmt(ts_buf *b, const ts_stmt *s, int indent)
{
	if (!s)
		return;
	switch (s->kind) {
	case TS_STMT_FOR:
		put_for(b, s, indent);
		return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			put_stmt(b, s->stmts[i], indent);
		return;
	case TS_STMT_IF:
		put_if(b, s, indent);
		return;
	case TS_STMT_STORE:
		put_store(b, s, indent);
		return;
	case TS_STMT_ALLOC:
		put_indent(b, indent);
		ts_buf_printf(b, "alloc %s: %s", s->buffer->name,
			ts_dtype_name(s->buffer->dtype));
		put_shape(b, s->buffer->ndim, s->buffer->shape);
		ts_buf_printf(b, " (%s)\n", ts_scope_name(s->scope));
		put_stmt(b, s->body, indent + 1);
		return;
	case TS_STMT_SYNC:
		put_indent(b, indent);
		ts_buf_puts(b, "sync\n");
		return;
	default:
		put_indent(b, indent);
		ts_buf_puts(b, "?\n");
	}
}

void ts_stmt_print(FILE *out, const ts_stmt *s, int indent)
{
	ts_buf b;

	ts_buf_init(&b);
	put_stmt(&b, s, indent);
	fputs(b.s, out);
}

/* Return "f" as text: its signature, then its body. */
char *ts_func_to_string(const ts_func *f)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "func %s(", f->name ? f->name : "kernel");
	for (int i = 0; i < f->nargs; i++) {
		const ts_tensor *t = f->args[i];
		ts_buf_printf(&b, "%s%s%s: %s", i ? ", " : "",
			i >= f->ninputs ? "out " : "", t->name,
			ts_dtype_name(t->dtype));
		put_shape(&b, t->ndim, t->shape);
	}
	ts_buf_puts(&b, "):\n");
	put_stmt(&b, f->body, 1);
	return b.s;
}

void ts_func_print(FILE *out, const ts_func *f)
{
	fputs(ts_func_to_string(f), out);
}
