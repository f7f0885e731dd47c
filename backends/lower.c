/* Lowering: a DAG and its schedule become one function of the loop IR.
 *
 * Each stage is emitted as a loop nest over its live loops.  A nest is
 * emitted for a domain (per axis an origin and a constant extent: the
 * whole axis at root, the region a consumer tile needs at a compute_at
 * loop) and for a choice of partitioned tails; loop extents and guards
 * are recomputed for each, so every loop has a constant extent.  Writes
 * and reads of buffers go through views (tensor -> buffer, origin,
 * layout), pushed while the scope that allocates them is emitted. */
#include <config.h>

#include <inttypes.h>
#include <math.h>

#include <tessel/analysis.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "backends/ir.h"
#include "backends/lower_internal.h"

#define MAX_AXES TS_MAX_AXES

/* A buffer standing for tensor "t": elements at "origin" + index, the
 * buffer's dimension j holding the tensor's dimension perm[j]. */
struct view {
	const ts_tensor *t;
	const ts_stage *reader;	/* only for loads in this stage; NULL: all */
	bool cache_write;	/* the local tile of a cache_write */
	ts_tensor *buf;
	ts_expr *origin[TS_MAX_DIMS];	/* NULL: 0 */
	int nperm;
	int perm[TS_MAX_DIMS];
};

/* A footprint computed once per (stage, tensor). */
struct fp_cache {
	const ts_stage *s;
	const ts_tensor *t;
	ts_footprint *fp;
};

struct lower {
	ts_ctx *ctx;
	const ts_dag *dag;
	const ts_schedule *sch;
	ts_vec views;
	ts_vec fps;
	int nacc;		/* accumulators made so far, for names */
	bool failed;
};

enum mode { MODE_MAIN, MODE_INIT, MODE_WRITEBACK };

/* One instance of the loop nest of a stage. */
struct nest {
	struct lower *L;
	const ts_sched_stage *ss;
	const ts_stage *st;
	int si;
	enum mode mode;
	ts_expr *origin[MAX_AXES];	/* per axis; NULL: 0 */
	int64_t dext[MAX_AXES];		/* per axis: extent of the domain */
	int region[TS_MAX_DIMS];	/* spatial axis may leave the tensor:
					 * 1 below, 2 above */
	int64_t *ext;		/* per loop, in this instance */
	signed char *part;	/* per relation: 0, 1 main, 2 tail */
	ts_expr **val;		/* per loop: value once emitted */
	int first_reduce;	/* position of the outermost reduction loop */
};

static ts_stmt *emit(struct nest *n, int p);

/* Whether loop "l" of "ss" is a reduction loop (the rfactor loop is
 * not: it indexes the partial results). */
static bool is_reduce(const ts_sched_stage *ss, int l)
{
	return ss->loops[l].reduce && !(ss->rfactor &&
		strcmp(ss->rfactor, ss->loops[l].name) == 0);
}

/* The relation that consumed loop "l" (split of it, or fusion of it), or
 * -1 when "l" is live. */
static int consumer_rel(const ts_sched_stage *ss, int l)
{
	for (int r = 0; r < ss->nrels; r++) {
		const ts_sched_rel *rel = &ss->rels[r];
		if (rel->fuse ? (rel->outer == l || rel->inner == l)
		    : rel->parent == l)
			return r;
	}
	return -1;
}

/* Position of live loop "l", or -1. */
static int loop_pos(const ts_sched_stage *ss, int l)
{
	for (int p = 0; p < ss->norder; p++)
		if (ss->order[p] == l)
			return p;
	return -1;
}

/* The largest position of a live loop whose value loop "l" depends on;
 * "all_spatial" is cleared when one of them is a reduction loop. */
static int max_leaf_pos(const ts_sched_stage *ss, int l, bool *all_spatial)
{
	int r = consumer_rel(ss, l);
	const ts_sched_rel *rel;

	if (r < 0) {
		if (is_reduce(ss, l))
			*all_spatial = false;
		return loop_pos(ss, l);
	}
	rel = &ss->rels[r];
	if (rel->fuse)
		return max_leaf_pos(ss, rel->parent, all_spatial);
	return TS_MAX(max_leaf_pos(ss, rel->outer, all_spatial),
		max_leaf_pos(ss, rel->inner, all_spatial));
}

/* Compute the extents of every loop of "n" from its domain and tails. */
static void compute_extents(struct nest *n)
{
	const ts_sched_stage *ss = n->ss;

	for (int l = 0; l < ss->nloops; l++)
		if (ss->loops[l].axis >= 0)
			n->ext[l] = n->dext[ss->loops[l].axis];
	for (int r = 0; r < ss->nrels; r++) {
		const ts_sched_rel *rel = &ss->rels[r];
		int64_t P, f;
		if (rel->fuse) {
			n->ext[rel->parent] = n->ext[rel->outer] *
				n->ext[rel->inner];
			continue;
		}
		P = n->ext[rel->parent];
		f = TS_MIN(rel->factor, TS_MAX(P, 1));
		n->ext[rel->inner] = n->part[r] == 2 ? P % f : f;
		n->ext[rel->outer] = n->part[r] == 2 ? 1 : n->part[r] == 1
			? P / f : (P + f - 1) / f;
	}
}

/* Whether split "r" of "n" runs more iterations than its parent has. */
static bool split_needs_guard(const struct nest *n, int r)
{
	const ts_sched_rel *rel = &n->ss->rels[r];

	return !rel->fuse && !n->part[r] &&
		n->ext[rel->outer] * n->ext[rel->inner] > n->ext[rel->parent];
}

/* The split "r" is partitioned with a tail in "n" and not yet chosen. */
static bool split_partitions(const struct nest *n, int r)
{
	const ts_sched_rel *rel = &n->ss->rels[r];
	int64_t P = n->ext[rel->parent], f = TS_MIN(rel->factor, TS_MAX(P, 1));

	return !rel->fuse && rel->tail == TS_TAIL_PARTITION && !n->part[r] &&
		P % f != 0;
}

/* Return a copy of "n" with its own extents, tails and values. */
static struct nest *nest_clone(const struct nest *n)
{
	struct nest *c = ts_new(struct nest);
	int nl = n->ss->nloops, nr = n->ss->nrels;

	*c = *n;
	c->ext = ts_new_atomic(int64_t, nl);
	memcpy(c->ext, n->ext, sizeof(int64_t) * nl);
	c->part = ts_new_atomic(signed char, nr + 1);
	memcpy(c->part, n->part, nr);
	c->val = ts_new_array(ts_expr *, nl);
	memcpy(c->val, n->val, sizeof(ts_expr *) * nl);
	return c;
}

/* The values of loop "l" in "n": origin "*o" and count "*s", over the
 * loops emitted so far (the others range over their whole extent). */
static void interval(struct nest *n, int l, ts_expr **o, int64_t *s)
{
	ts_ctx *ctx = n->L->ctx;
	const ts_sched_stage *ss = n->ss;
	int r = consumer_rel(ss, l);
	const ts_sched_rel *rel;
	ts_expr *o1, *o2;
	int64_t s1, s2, f, ei;

	if (r < 0) {
		*o = n->val[l] ? n->val[l] : ts_lower_int(ctx, 0);
		*s = n->val[l] ? 1 : n->ext[l];
		return;
	}
	rel = &ss->rels[r];
	if (!rel->fuse) {
		f = TS_MIN(rel->factor, TS_MAX(n->ext[rel->parent], 1));
		interval(n, rel->outer, &o1, &s1);
		interval(n, rel->inner, &o2, &s2);
		*o = ts_index_simplify(ctx, ts_add(ctx, ts_mul(ctx, o1,
			ts_lower_int(ctx, f)), o2));
		*s = (s1 - 1) * f + s2;
		return;
	}
	interval(n, rel->parent, &o1, &s1);
	ei = n->ext[rel->inner];
	if (s1 == 1) {
		*o = ts_index_simplify(ctx, ts_binary(ctx, l == rel->outer ?
			TS_OP_FLOORDIV : TS_OP_MOD, o1, ts_lower_int(ctx, ei)));
		*s = 1;
	} else if (l == rel->inner || (o1->kind == TS_EXPR_INT &&
		   o1->ival == 0 && s1 >= n->ext[rel->parent])) {
		*o = ts_lower_int(ctx, 0);
		*s = n->ext[l];
	} else {
		*o = ts_index_simplify(ctx, ts_floordiv(ctx, o1,
			ts_lower_int(ctx, ei)));
		*s = TS_MIN((s1 - 1) / ei + 2, n->ext[l]);
	}
}

/* The value of axis "a" of the stage (its domain origin included), or
 * NULL when a loop it needs is not emitted. */
static ts_expr *axis_value(struct nest *n, int a)
{
	ts_ctx *ctx = n->L->ctx;
	ts_expr *o;
	int64_t s;

	for (int l = 0; l < n->ss->nloops; l++) {
		if (n->ss->loops[l].axis != a)
			continue;
		interval(n, l, &o, &s);
		if (s != 1)
			return NULL;
		if (n->origin[a])
			o = ts_add(ctx, n->origin[a], o);
		return ts_index_simplify(ctx, o);
	}
	return NULL;
}

/* The tile of every axis of "n" under the loops emitted so far. */
static void tile(struct nest *n, ts_expr **o, int64_t *s)
{
	ts_ctx *ctx = n->L->ctx;
	const ts_stage *st = n->st;

	for (int a = 0; a < st->ndim + st->nraxes; a++) {
		o[a] = ts_lower_int(ctx, 0);
		s[a] = ts_stage_axis(st, a)->extent;
	}
	for (int l = 0; l < n->ss->nloops; l++) {
		int a = n->ss->loops[l].axis;
		if (a < 0)
			continue;
		interval(n, l, &o[a], &s[a]);
		if (n->origin[a])
			o[a] = ts_index_simplify(ctx, ts_add(ctx, n->origin[a],
				o[a]));
	}
}

/* Push the view "v"; return the mark to pop back to. */
static int view_push(struct lower *L, struct view *v)
{
	int mark = L->views.n;

	ts_vec_push(&L->views, v);
	return mark;
}

/* The innermost view of "t" for a load in "reader" (or, with "write",
 * for the stores of its producer "reader"). */
static struct view *view_find(struct lower *L, const ts_tensor *t,
	const ts_stage *reader, bool write)
{
	for (int i = L->views.n - 1; i >= 0; i--) {
		struct view *v = L->views.v[i];
		if (v->t != t)
			continue;
		if (v->cache_write && (!write || v->reader != reader))
			continue;
		if (!v->cache_write && v->reader && v->reader != reader)
			continue;
		return v;
	}
	return NULL;
}

/* Indices into the buffer of "v" of the tensor element "idx". */
static void view_index(struct lower *L, const struct view *v,
	ts_expr *const *idx, ts_expr **out)
{
	int nd = v->t->ndim;

	for (int j = 0; j < nd; j++) {
		int d = v->nperm ? v->perm[j] : j;
		ts_expr *e = idx[d];
		if (v->origin[d])
			e = ts_sub(L->ctx, e, v->origin[d]);
		out[j] = ts_index_simplify(L->ctx, e);
	}
}

/* The footprint of "s" on "t", computed once. */
static ts_footprint *footprint(struct lower *L, const ts_stage *s,
	const ts_tensor *t)
{
	struct fp_cache *c;

	for (int i = 0; i < L->fps.n; i++) {
		c = L->fps.v[i];
		if (c->s == s && c->t == t)
			return c->fp;
	}
	c = ts_new(struct fp_cache);
	c->s = s;
	c->t = t;
	c->fp = ts_stage_footprint(L->ctx, s, t);
	if (!c->fp)
		L->failed = true;
	ts_vec_push(&L->fps, c);
	return c->fp;
}

/* An environment: axes replaced by expressions. */
struct env {
	int n;
	const ts_axis *from[MAX_AXES + TS_MAX_DIMS];
	ts_expr *to[MAX_AXES + TS_MAX_DIMS];
};

static ts_expr *rewrite(struct lower *L, const ts_expr *e,
	const struct env *env, const ts_stage *reader);

/* Rewrite the load "e" of stage "reader": through a view, by inlining
 * the producer, or of the tensor itself. */
static ts_expr *rewrite_load(struct lower *L, const ts_expr *e,
	const struct env *env, const ts_stage *reader)
{
	ts_expr *idx[TS_MAX_DIMS], *bidx[TS_MAX_DIMS];
	const ts_tensor *t = e->tensor;
	struct view *v;

	for (int i = 0; i < e->nargs; i++)
		idx[i] = ts_index_simplify(L->ctx,
			rewrite(L, e->args[i], env, reader));
	v = view_find(L, t, reader, false);
	if (v) {
		view_index(L, v, idx, bidx);
		return ts_lower_load(v->buf, e->nargs, bidx);
	}
	if (t->stage && L->sch->stages[ts_dag_stage_index(L->dag,
	    t->stage)].attach == TS_ATTACH_INLINE) {
		struct env sub = { .n = t->stage->ndim };
		for (int i = 0; i < sub.n; i++) {
			sub.from[i] = t->stage->axes[i];
			sub.to[i] = idx[i];
		}
		return rewrite(L, t->stage->body, &sub, t->stage);
	}
	return ts_lower_load((ts_tensor *)t, e->nargs, idx);
}

/* Return "e" with the axes of "env" replaced and loads rewritten; a
 * reduction is left to the caller (it must not occur here). */
static ts_expr *rewrite(struct lower *L, const ts_expr *e,
	const struct env *env, const ts_stage *reader)
{
	ts_expr *c;

	switch (e->kind) {
	case TS_EXPR_VAR:
		for (int i = 0; i < env->n; i++)
			if (env->from[i] == e->axis)
				return env->to[i];
		return (ts_expr *)e;
	case TS_EXPR_LOAD:
		return rewrite_load(L, e, env, reader);
	case TS_EXPR_INT:
	case TS_EXPR_FLOAT:
		return (ts_expr *)e;
	default:
		c = ts_new(ts_expr);
		*c = *e;
		if (e->a)
			c->a = rewrite(L, e->a, env, reader);
		if (e->b)
			c->b = rewrite(L, e->b, env, reader);
		if (e->c)
			c->c = rewrite(L, e->c, env, reader);
		return c;
	}
}

/* The identity of "r" for dtype "t". */
static ts_expr *reduce_identity(ts_ctx *ctx, ts_reducer r, ts_dtype t)
{
	double lo = ts_dtype_is_float(t) ? -INFINITY : ts_dtype_is_signed(t)
		? -ldexp(1.0, (int)ts_dtype_size(t) * 8 - 1) : 0;
	double hi = ts_dtype_is_float(t) ? INFINITY : ts_dtype_is_signed(t)
		? ldexp(1.0, (int)ts_dtype_size(t) * 8 - 1) - 1
		: ldexp(1.0, (int)ts_dtype_size(t) * 8) - 1;

	switch (r) {
	case TS_RED_SUM: return ts_const(ctx, t, 0);
	case TS_RED_PROD: return ts_const(ctx, t, 1);
	case TS_RED_MAX: return ts_const(ctx, t, lo);
	default: return ts_const(ctx, t, hi);
	}
}

/* "acc" combined with "x" by "r". */
static ts_expr *reduce_combine(ts_ctx *ctx, ts_reducer r, ts_expr *acc,
	ts_expr *x)
{
	static const ts_op ops[TS_RED_COUNT] = {
		[TS_RED_SUM] = TS_OP_ADD, [TS_RED_MAX] = TS_OP_MAX,
		[TS_RED_MIN] = TS_OP_MIN, [TS_RED_PROD] = TS_OP_MUL,
	};

	return ts_binary(ctx, ops[r], acc, x);
}

/* Record that the loops of "st" did not define every axis at "where"
 * (a defect of the lowering, reported rather than crashing). */
static ts_stmt *lower_bug(struct lower *L, const ts_stage *st,
	const char *where)
{
	L->failed = true;
	ts_ctx_set_error(L->ctx, "lowering of stage '%s': an axis has no "
		"value at the %s", st->name, where);
	return NULL;
}

/* The environment of stage "n" at its innermost point. */
static ts_status body_env(struct nest *n, struct env *env, ts_expr **vals)
{
	const ts_stage *st = n->st;
	const ts_expr *b = st->body;

	for (int a = 0; a < st->ndim; a++) {
		env->from[env->n] = st->axes[a];
		if (!(env->to[env->n++] = vals[a] = axis_value(n, a)))
			return TS_ERROR;
	}
	if (n->ss->nested_reduce || b->kind != TS_EXPR_REDUCE)
		return TS_OK;
	for (int a = st->ndim; a < st->ndim + st->nraxes; a++) {
		env->from[env->n] = ts_stage_axis(st, a);
		if (!(env->to[env->n++] = axis_value(n, a)))
			return TS_ERROR;
	}
	return TS_OK;
}

/* The buffer and indices stage "n" writes at the spatial point "vals":
 * its rfactor buffer, its cache tile, its region or its tensor. */
static ts_tensor *write_target(struct nest *n, ts_expr **vals,
	ts_expr **idx, bool skip_cache, int *nidx)
{
	struct lower *L = n->L;
	const ts_stage *st = n->st;
	struct view *v = NULL;

	for (int i = L->views.n - 1; i >= 0 && !v; i--) {
		struct view *w = L->views.v[i];
		if (w->t == st->out && !(skip_cache && w->cache_write) &&
		    (!w->cache_write || w->reader == st))
			v = w;
	}
	*nidx = st->ndim;
	if (!v) {
		for (int d = 0; d < st->ndim; d++)
			idx[d] = vals[d];
		return st->out;
	}
	if (v->buf->ndim == st->ndim + 1 && n->ss->rfactor) {
		int l = ts_sched_stage_find_loop(n->ss, n->ss->rfactor);
		ts_expr *o;
		int64_t s;
		interval(n, l, &o, &s);
		for (int d = 0; d < st->ndim; d++)
			idx[d] = v->origin[d] ? ts_index_simplify(L->ctx,
				ts_sub(L->ctx, vals[d], v->origin[d])) :
				vals[d];
		idx[st->ndim] = o;
		*nidx = st->ndim + 1;
		return v->buf;
	}
	view_index(L, v, vals, idx);
	return v->buf;
}

/* Lower the reductions inside "e" into accumulators whose loops go into
 * "pre"; return "e" with each reduction replaced by its accumulator. */
static ts_expr *expand_reduce(struct nest *n, const ts_expr *e,
	struct env *env, ts_stmt *pre, ts_vec *accs)
{
	ts_ctx *ctx = n->L->ctx;
	ts_tensor *acc;
	ts_stmt *inner, *loop;
	ts_expr *c, *x, *ld;
	int mark = env->n;

	if (e->kind == TS_EXPR_LOAD || e->kind == TS_EXPR_VAR ||
	    e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT)
		return rewrite(n->L, e, env, n->st);
	if (e->kind != TS_EXPR_REDUCE) {
		c = ts_new(ts_expr);
		*c = *e;
		if (e->a)
			c->a = expand_reduce(n, e->a, env, pre, accs);
		if (e->b)
			c->b = expand_reduce(n, e->b, env, pre, accs);
		if (e->c)
			c->c = expand_reduce(n, e->c, env, pre, accs);
		return c;
	}
	acc = ts_buffer_new(ctx, ts_asprintf("%s.acc%d", n->st->name,
		n->L->nacc++), e->dtype, 0, NULL);
	ts_vec_push(accs, acc);
	ld = ts_lower_load(acc, 0, NULL);
	ts_stmt_block_append(pre, ts_stmt_store(acc, 0, NULL,
		reduce_identity(ctx, e->reducer, e->dtype)));
	inner = ts_stmt_block(0, NULL);
	for (int i = 0; i < e->nraxes; i++) {
		env->from[env->n] = e->raxes[i];
		env->to[env->n++] = ts_var(ctx, ts_loop_var(ctx,
			e->raxes[i]->name, e->raxes[i]->extent));
	}
	x = expand_reduce(n, e->a, env, inner, accs);
	ts_stmt_block_append(inner, ts_stmt_store(acc, 0, NULL,
		reduce_combine(ctx, e->reducer, ld, x)));
	loop = inner;
	for (int i = e->nraxes - 1; i >= 0; i--)
		loop = ts_stmt_for(env->to[mark + i]->axis, TS_LOOP_SERIAL, loop);
	ts_stmt_block_append(pre, loop);
	env->n = mark;
	return ld;
}

/* The statement at the innermost point of the main nest "n". */
static ts_stmt *body_main(struct nest *n)
{
	ts_ctx *ctx = n->L->ctx;
	const ts_expr *b = n->st->body;
	ts_expr *vals[TS_MAX_DIMS], *idx[TS_MAX_DIMS + 1], *x;
	struct env env = { 0 };
	ts_tensor *buf;
	ts_stmt *pre;
	ts_vec accs = { 0 };
	int ni;

	if (body_env(n, &env, vals) < 0)
		return lower_bug(n->L, n->st, "body");
	buf = write_target(n, vals, idx, false, &ni);
	if (!n->ss->nested_reduce && b->kind == TS_EXPR_REDUCE) {
		x = rewrite(n->L, b->a, &env, n->st);
		x = reduce_combine(ctx, b->reducer,
			ts_lower_load(buf, ni, idx), x);
		return ts_stmt_store(buf, ni, idx, x);
	}
	pre = ts_stmt_block(0, NULL);
	x = expand_reduce(n, b, &env, pre, &accs);
	ts_stmt_block_append(pre, ts_stmt_store(buf, ni, idx, x));
	for (int i = accs.n - 1; i >= 0; i--)
		pre = ts_stmt_alloc(accs.v[i], TS_SCOPE_LOCAL, pre);
	return pre;
}

/* The statement at the innermost point of an init or write-back nest. */
static ts_stmt *body_sub(struct nest *n)
{
	ts_expr *vals[TS_MAX_DIMS], *idx[TS_MAX_DIMS + 1], *src[TS_MAX_DIMS + 1];
	ts_tensor *buf, *cache;
	int ni;

	for (int a = 0; a < n->st->ndim; a++)
		if (!(vals[a] = axis_value(n, a)))
			return lower_bug(n->L, n->st, "init or write-back");
	if (n->mode == MODE_INIT) {
		buf = write_target(n, vals, idx, false, &ni);
		return ts_stmt_store(buf, ni, idx, reduce_identity(n->L->ctx,
			n->st->body->reducer, n->st->body->dtype));
	}
	cache = write_target(n, vals, src, false, &ni);
	buf = write_target(n, vals, idx, true, &ni);
	return ts_stmt_store(buf, ni, idx, ts_lower_load(cache, ni, src));
}

/* A nest like "n" over its spatial loops from position "p" on, in mode
 * "mode" (init of a reduction, or write-back of a cache tile). */
static ts_stmt *emit_sub(struct nest *n, int p, enum mode mode)
{
	struct nest *c = nest_clone(n);

	c->mode = mode;
	c->first_reduce = -1;
	return emit(c, p);
}

/* "a" + "b", folding constants. */
static ts_expr *add_index(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	if (a->kind == TS_EXPR_INT && b->kind == TS_EXPR_INT)
		return ts_lower_int(ctx, a->ival + b->ival);
	return ts_binary(ctx, TS_OP_ADD, a, b);
}

/* The alignment of the tile origins "o" of the axes term "t" reads (the
 * greatest common divisor of its coefficients and constant; 1 when not
 * affine) into "align". */
static void origin_align(ts_ctx *ctx, const ts_box_term *t, ts_expr **o,
	int64_t *align)
{
	for (int k = 0; k < MAX_AXES; k++) {
		ts_aff a;
		int64_t g;
		align[k] = 1;
		if (!t->q[k])
			continue;
		a = ts_aff_of_expr(ctx, o[k]);
		g = a.cst;
		for (int i = 0; i < a.n; i++)
			g = ts_gcd64(g, a.coef[i]);
		align[k] = a.ok ? g : 1;
	}
}

/* The lowest value of term "t" over the tile "o", "s" as an expression
 * (a remainder: its lowest value whatever the tile), and the most
 * values past it that any origin aligned like "o" gives into "*span". */
static ts_expr *term_low(ts_ctx *ctx, const ts_box_term *t, ts_expr **o,
	const int64_t *s, int64_t *span)
{
	ts_expr *v = ts_lower_int(ctx, t->r);
	int64_t align[MAX_AXES];

	origin_align(ctx, t, o, align);
	*span = ts_box_term_span(t, s, align);
	if (t->mod)
		return ts_lower_int(ctx, t->coef < 0 ? t->coef * (t->div - 1) :
			0);
	for (int k = 0; k < MAX_AXES; k++) {
		int64_t q = t->q[k];
		if (!q)
			continue;
		/* The low end of the argument when "coef" >= 0, else the
		 * high end. */
		v = add_index(ctx, v, ts_binary(ctx, TS_OP_MUL,
			ts_lower_int(ctx, q), (q > 0) == (t->coef >= 0) ? o[k] :
			add_index(ctx, o[k], ts_lower_int(ctx, s[k] - 1))));
	}
	if (t->div > 1)
		v = ts_binary(ctx, TS_OP_FLOORDIV, v, ts_lower_int(ctx, t->div));
	return ts_binary(ctx, TS_OP_MUL, ts_lower_int(ctx, t->coef), v);
}

/* The region of the quasi-affine dimension "bd" for the tile "o", "s":
 * its first index, and in "*ext" the most indices any origin of the
 * tile touches (a tile across a divisor touches one more quotient). */
static ts_expr *quasi_region(struct lower *L, const ts_box_dim *bd,
	ts_expr **o, const int64_t *s, int64_t *ext)
{
	ts_expr *lo = ts_lower_int(L->ctx, bd->cst);

	*ext = 1;
	for (int t = 0; t < bd->nterms; t++) {
		int64_t span;
		lo = add_index(L->ctx, lo, term_low(L->ctx, &bd->term[t], o, s,
			&span));
		*ext += span;
	}
	return ts_index_simplify(L->ctx, lo);
}

/* Whether the tile "o" gives every axis that the footprint "fp" depends
 * on a value: a loop outside some of the stage's loops (a cache_read at
 * a loop of a cache_write's copy-out, which has no reduction loop) does
 * not. */
static bool region_defined(const ts_footprint *fp, ts_expr **o)
{
	for (int d = 0; d < fp->ndim; d++) {
		const ts_box_dim *bd = &fp->dim[d];
		if (bd->whole || bd->block)
			continue;
		for (int k = 0; k < MAX_AXES; k++) {
			bool used = bd->origin_coef[k] || bd->size_shift[k] ||
				bd->size_coef[k];
			for (int t = 0; t < bd->nterms; t++)
				used |= bd->term[t].q[k] != 0;
			if (used && !o[k])
				return false;
		}
	}
	return true;
}

/* Region of "t" (with the footprint "fp") that the tile "o", "s" of
 * stage "c" touches: origins in "lo", extents in "ext". */
static void region(struct lower *L, const ts_footprint *fp, const ts_tensor *t,
	ts_expr **o, const int64_t *s, ts_expr **lo, int64_t *ext)
{
	for (int d = 0; d < t->ndim; d++) {
		const ts_box_dim *bd = &fp->dim[d];
		ts_aff a = ts_aff_const(bd->cst);
		/* A blocked dimension: the whole of it (a tile need not
		 * start on a block). */
		if (bd->whole || bd->block) {
			lo[d] = ts_lower_int(L->ctx, 0);
			ext[d] = t->shape[d];
			continue;
		}
		if (bd->nterms) {
			lo[d] = quasi_region(L, bd, o, s, &ext[d]);
			continue;
		}
		ext[d] = 1;
		for (int k = 0; k < MAX_AXES; k++) {
			ts_aff ok;
			if (!bd->origin_coef[k] && !bd->size_shift[k] &&
			    !bd->size_coef[k])
				continue;
			ok = ts_aff_of_expr(L->ctx, o[k]);
			a = ts_aff_add(a, &ok, bd->origin_coef[k]);
			a.cst += bd->size_shift[k] * (s[k] - 1);
			ext[d] += bd->size_coef[k] * (s[k] - 1);
		}
		lo[d] = ts_aff_to_expr(L->ctx, &a);
		if (a.n == 0 && a.cst == 0)
			ext[d] = TS_MIN(ext[d], t->shape[d]);
	}
}

/* Whether the region "lo", "ext" along dimension "d" of "t" may leave
 * the tensor: 1 below it, 2 above it, 3 both. */
static int region_may_leave(struct lower *L, const ts_tensor *t, int d,
	ts_expr *lo, int64_t ext)
{
	ts_aff a = ts_aff_of_expr(L->ctx, lo);
	int64_t mn, mx;

	if (!ts_aff_bounds(&a, &mn, &mx))
		return 3;
	return (mn < 0 ? 1 : 0) | (mx + ext > t->shape[d] ? 2 : 0);
}

/* The condition that "v" lies inside dimension "d" of "t", checking the
 * sides in "which" (1 below, 2 above); NULL when none. */
static ts_expr *inside(ts_ctx *ctx, const ts_tensor *t, int d, ts_expr *v,
	int which)
{
	ts_expr *lo = ts_binary(ctx, TS_OP_GE, v, ts_lower_int(ctx, 0));
	ts_expr *hi = ts_binary(ctx, TS_OP_LT, v,
		ts_lower_int(ctx, t->shape[d]));

	if (which == 3)
		return ts_binary(ctx, TS_OP_AND, lo, hi);
	return which == 1 ? lo : which == 2 ? hi : NULL;
}

/* "a" && "b", either may be NULL. */
static ts_expr *and_cond(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	if (!a || !b)
		return a ? a : b;
	return ts_binary(ctx, TS_OP_AND, a, b);
}

/* Emit stage "p" for the region "lo", "ext" of its output, with its
 * local buffer already pushed as a view. */
static ts_stmt *emit_attached(struct lower *L, int pi, ts_expr **lo,
	const int64_t *ext)
{
	const ts_sched_stage *ss = &L->sch->stages[pi];
	const ts_stage *st = ss->stage;
	struct nest *n = ts_new(struct nest);

	n->L = L;
	n->ss = ss;
	n->st = st;
	n->si = pi;
	for (int a = 0; a < st->ndim; a++) {
		n->origin[a] = lo[a];
		n->dext[a] = ext[a];
		n->region[a] = lo[a] ? region_may_leave(L, st->out, a, lo[a],
			ext[a]) : 0;
	}
	for (int a = st->ndim; a < st->ndim + st->nraxes; a++)
		n->dext[a] = ts_stage_axis(st, a)->extent;
	n->ext = ts_new_atomic(int64_t, ss->nloops + 1);
	n->part = ts_new_atomic(signed char, ss->nrels + 1);
	n->val = ts_new_array(ts_expr *, ss->nloops + 1);
	n->first_reduce = ss->norder;
	for (int p = ss->norder - 1; p >= 0; p--)
		if (is_reduce(ss, ss->order[p]))
			n->first_reduce = p;
	compute_extents(n);
	return emit(n, 0);
}

/* A loop nest copying the region "lo", "ext" of "t" into "buf" (layout
 * "perm"), reading "t" as stage "reader" would. */
static ts_stmt *copy_nest(struct lower *L, const ts_tensor *t, ts_tensor *buf,
	ts_expr **lo, const int64_t *ext, const ts_sched_read *rd,
	const ts_stage *reader)
{
	ts_ctx *ctx = L->ctx;
	ts_expr *r[TS_MAX_DIMS], *idx[TS_MAX_DIMS], *bidx[TS_MAX_DIMS];
	ts_expr *cond = NULL, *x;
	ts_axis *vars[TS_MAX_DIMS];
	ts_stmt *s;

	for (int j = 0; j < t->ndim; j++) {
		int d = rd->nperm ? rd->perm[j] : j;
		vars[j] = ext[d] == 1 ? NULL : ts_loop_var(ctx,
			ts_asprintf("%s.c%d", t->name, d), ext[d]);
		r[d] = vars[j] ? ts_var(ctx, vars[j]) : ts_lower_int(ctx, 0);
		bidx[j] = r[d];
	}
	for (int d = 0; d < t->ndim; d++) {
		idx[d] = ts_index_simplify(ctx, ts_add(ctx, lo[d], r[d]));
		cond = and_cond(ctx, cond, inside(ctx, t, d, idx[d],
			region_may_leave(L, t, d, lo[d], ext[d])));
	}
	{
		ts_expr *ld = ts_lower_load((ts_tensor *)t, t->ndim, idx);
		struct env env = { 0 };
		x = rewrite(L, ld, &env, reader);
	}
	s = ts_stmt_store(buf, t->ndim, bidx, x);
	if (cond)
		s = ts_stmt_if(cond, s, NULL);
	for (int j = t->ndim - 1; j >= 0; j--)
		if (vars[j])
			s = ts_stmt_for(vars[j], TS_LOOP_SERIAL, s);
	return s;
}

/* Scope items opened at a loop: an allocation, the statements that fill
 * it, and (for a cache tile) the statements that empty it. */
struct scope_item {
	ts_tensor *buf;
	ts_scope scope;		/* LOCAL, or SHARED for a GPU block's copy */
	ts_stmt *fill;
	ts_stmt *drain;
};

/* The original axis that loop "l" of "ss" was split from, or -1 (a
 * fused loop). */
static int split_root(const ts_sched_stage *ss, int l)
{
	while (ss->loops[l].axis < 0) {
		int r;
		for (r = 0; r < ss->nrels; r++)
			if (!ss->rels[r].fuse && (ss->rels[r].outer == l ||
			    ss->rels[r].inner == l))
				break;
		if (r == ss->nrels)
			return -1;
		l = ss->rels[r].parent;
	}
	return ss->loops[l].axis;
}

/* The spatial axis of "n"'s vectorized loop after position "p", or -1. */
static int vector_axis_after(const struct nest *n, int p)
{
	for (int q = p + 1; q < n->ss->norder; q++) {
		int l = n->ss->order[q];
		if (n->ss->loops[l].kind == TS_LOOP_VECTORIZED) {
			int a = split_root(n->ss, l);
			return a < n->st->ndim ? a : -1;
		}
	}
	return -1;
}

/* Open the cache_write tile of "n" at position "p".  The tile keeps the
 * output's dimensions in order, except that the vectorized axis comes
 * last: the register tile stores into it contiguously, and only the
 * write back to the output is strided when the output's own layout is
 * (an NCHW output vectorized along its channels). */
static void open_cache_write(struct nest *n, int p, ts_vec *items)
{
	struct lower *L = n->L;
	const ts_stage *st = n->st;
	ts_expr *o[MAX_AXES];
	int64_t s[MAX_AXES], shape[TS_MAX_DIMS];
	struct view *v = ts_new(struct view);
	struct scope_item *it = ts_new(struct scope_item);
	int va = vector_axis_after(n, p);

	tile(n, o, s);
	for (int d = 0; d < st->ndim; d++) {
		shape[d] = s[d];
		v->origin[d] = o[d];
	}
	if (va >= 0 && va < st->ndim - 1) {
		int j = 0;
		v->nperm = st->ndim;
		for (int d = 0; d < st->ndim; d++)
			if (d != va)
				v->perm[j++] = d;
		v->perm[j] = va;
		for (j = 0; j < st->ndim; j++)
			shape[j] = s[v->perm[j]];
	}
	v->t = st->out;
	v->reader = st;
	v->cache_write = true;
	v->buf = ts_buffer_new(L->ctx, ts_asprintf("%s.local", st->name),
		st->out->dtype, st->ndim, shape);
	it->buf = v->buf;
	it->scope = TS_SCOPE_LOCAL;
	view_push(L, v);
	it->drain = emit_sub(n, p + 1, MODE_WRITEBACK);
	ts_vec_push(items, it);
}

/* The footprint of stage "c" on the output of stage "p" computed at it:
 * "c" reads it directly, or through the chain of inlined stages that
 * compute_at accepts, each loading the one before at its own indices, so
 * that the footprint on the last of them is the one on "p". */
static ts_footprint *attached_footprint(struct lower *L, const ts_stage *c,
	int p)
{
	const ts_stage *ps = L->dag->stages[p];
	int m;

	for (int i = 0; i < c->ninputs; i++)
		if (c->inputs[i] == ps->out)
			return footprint(L, c, ps->out);
	if (L->dag->nconsumers[p] != 1 || L->sch->stages[m =
	    L->dag->consumers[p][0]].attach != TS_ATTACH_INLINE)
		return footprint(L, c, ps->out);
	return attached_footprint(L, c, m);
}

/* Widen the region "lo", "ext" of "nd" dimensions to hold "lo2", "ext2"
 * as well; false when their origins are not a constant apart. */
static bool region_union(struct lower *L, ts_expr **lo, int64_t *ext,
	ts_expr *const *lo2, const int64_t *ext2, int nd)
{
	for (int d = 0; d < nd; d++) {
		ts_aff a = ts_aff_of_expr(L->ctx, lo[d]);
		ts_aff b = ts_aff_of_expr(L->ctx, lo2[d]);
		int64_t c;
		b = ts_aff_add(b, &a, -1);
		if (!b.ok || b.n != 0)
			return false;
		c = b.cst;	/* lo2 - lo */
		if (c < 0) {
			ext[d] = TS_MAX(ext[d] - c, ext2[d]);
			lo[d] = lo2[d];
		} else
			ext[d] = TS_MAX(ext[d], c + ext2[d]);
	}
	return true;
}

/* The domain of stage "c" over its region "lo", "ext" as a tile: its
 * spatial axes over the region, its reduction axes whole. */
static void region_tile(struct lower *L, const ts_stage *c, ts_expr *const *lo,
	const int64_t *ext, ts_expr **o, int64_t *s)
{
	for (int a = 0; a < c->ndim + c->nraxes; a++) {
		o[a] = a < c->ndim && lo[a] ? lo[a] : ts_lower_int(L->ctx, 0);
		s[a] = a < c->ndim ? ext[a] : ts_stage_axis(c, a)->extent;
	}
}

/* The buffer, partial results and nest of stage "i", computed at a loop
 * over its region "lo", "ext" (its view already pushed, as "out"). */
static ts_stmt *attached_nest(struct lower *L, int i, ts_expr **lo,
	const int64_t *ext, ts_tensor *out);

/* The layout of "v", the region buffer of the stage "ss" computes: its
 * dimensions in order, but the one its vectorized loop walks, which goes
 * last, so that its vectors store contiguously (a reduction tile
 * vectorized along the second of four dimensions, computed in its
 * consumer's tile, had its vectors of accumulators gathered and
 * scattered 196 floats apart: 2.7 against 2.1 ms). */
static void layout_vector_last(const ts_sched_stage *ss, struct view *v)
{
	int nd = v->t->ndim, va = -1, j = 0;

	for (int q = 0; q < ss->norder; q++)
		if (ss->loops[ss->order[q]].kind == TS_LOOP_VECTORIZED)
			va = split_root(ss, ss->order[q]);
	if (va < 0 || va >= nd - 1)
		return;
	v->nperm = nd;
	for (int d = 0; d < nd; d++)
		if (d != va)
			v->perm[j++] = d;
	v->perm[j] = va;
}

/* Open the stages computed at loop "p" of "n", producers first, each
 * over the region its readers there need: the tile of "n", or the region
 * of another stage computed at the same loop (a row's maximum read by the
 * row's sum, both computed in a tile of rows of the stage that reads
 * them). */
static void open_attached(struct nest *n, int p, ts_vec *items)
{
	struct lower *L = n->L;
	const ts_dag *dag = L->dag;
	const char *name = n->ss->loops[n->ss->order[p]].name;
	ts_expr *o[MAX_AXES], *co[MAX_AXES];
	int64_t s[MAX_AXES], cs[MAX_AXES];
	ts_expr ***lo = ts_new_array(ts_expr **, dag->nstages + 1);
	int64_t **ext = ts_new_array(int64_t *, dag->nstages + 1);

	tile(n, o, s);
	for (int i = dag->nstages - 1; i >= 0; i--) {
		const ts_sched_stage *ps = &L->sch->stages[i];
		const ts_tensor *t = ps->stage->out;
		bool have = false;
		if (ps->attach != TS_ATTACH_AT || ps->attach_stage != n->si ||
		    strcmp(ps->attach_loop, name) != 0)
			continue;
		lo[i] = ts_new_array(ts_expr *, TS_MAX_DIMS);
		ext[i] = ts_new_atomic(int64_t, TS_MAX_DIMS);
		for (int k = 0; k < dag->nconsumers[i]; k++) {
			int c = dag->consumers[i][k];
			const ts_footprint *fp;
			ts_expr *l2[TS_MAX_DIMS];
			int64_t e2[TS_MAX_DIMS];
			if (lo[c]) {
				fp = footprint(L, dag->stages[c], t);
				region_tile(L, dag->stages[c], lo[c], ext[c],
					co, cs);
				if (fp)
					region(L, fp, t, co, cs, l2, e2);
			} else {
				/* The tile of "n" reads it, maybe through
				 * inlined stages (ts_schedule_check). */
				fp = attached_footprint(L, n->st, i);
				if (fp)
					region(L, fp, t, o, s, l2, e2);
			}
			if (!fp)
				return;
			if (!have) {
				memcpy(lo[i], l2, sizeof(l2[0]) * t->ndim);
				memcpy(ext[i], e2, sizeof(e2[0]) * t->ndim);
			} else if (!region_union(L, lo[i], ext[i], l2, e2,
			    t->ndim)) {
				ts_ctx_set_error(L->ctx, "lowering: the readers "
					"of '%s' at loop '%s' of '%s' need "
					"regions that are not a constant "
					"apart", t->name, name, n->st->name);
				L->failed = true;
				return;
			}
			have = true;
		}
	}
	for (int i = 0; i < dag->nstages; i++) {
		struct view *v;
		struct scope_item *it;
		int64_t shape[TS_MAX_DIMS];
		if (!lo[i])
			continue;
		v = ts_new(struct view);
		v->t = dag->stages[i]->out;
		memcpy(v->origin, lo[i], sizeof(v->origin[0]) * v->t->ndim);
		layout_vector_last(&L->sch->stages[i], v);
		for (int j = 0; j < v->t->ndim; j++)
			shape[j] = ext[i][v->nperm ? v->perm[j] : j];
		v->buf = ts_buffer_new(L->ctx, ts_asprintf("%s.local",
			dag->stages[i]->name), v->t->dtype, v->t->ndim, shape);
		view_push(L, v);
		it = ts_new(struct scope_item);
		it->buf = v->buf;
		it->scope = TS_SCOPE_LOCAL;
		it->fill = attached_nest(L, i, lo[i], ext[i], v->buf);
		ts_vec_push(items, it);
	}
}

/* The tile of "n" at position "p" as the threads of one GPU block see
 * it: loops bound to threads or virtual threads at or outside "p" range
 * over their whole extent.  Returns whether such a loop was found (the
 * buffer is then shared by the block's threads). */
static bool block_tile(struct nest *n, int p, ts_expr **o, int64_t *s)
{
	ts_expr **saved = ts_new_array(ts_expr *, n->ss->nloops + 1);
	bool relaxed = false;

	for (int q = 0; q <= p; q++) {
		int l = n->ss->order[q];
		ts_bind b = n->ss->loops[l].bind;
		if (n->ss->loops[l].kind != TS_LOOP_BOUND ||
		    b < TS_BIND_THREAD_X || b > TS_BIND_VTHREAD)
			continue;
		saved[l] = n->val[l];
		n->val[l] = NULL;
		relaxed = true;
	}
	tile(n, o, s);
	for (int l = 0; l < n->ss->nloops; l++)
		if (saved[l])
			n->val[l] = saved[l];
	return relaxed;
}

/* Open the cache_reads of "n" at loop "p"; under a thread-bound loop the
 * copy covers the whole block's tile and lives in shared memory. */
static void open_reads(struct nest *n, int p, ts_vec *items)
{
	struct lower *L = n->L;
	const char *name = n->ss->loops[n->ss->order[p]].name;
	ts_expr *o[MAX_AXES] = { NULL }, *lo[TS_MAX_DIMS];
	int64_t s[MAX_AXES], ext[TS_MAX_DIMS], shape[TS_MAX_DIMS];
	bool shared = block_tile(n, p, o, s);

	for (int i = 0; i < n->ss->nreads; i++) {
		const ts_sched_read *rd = &n->ss->reads[i];
		const ts_tensor *t = rd->tensor;
		const ts_footprint *fp;
		struct view *v;
		struct scope_item *it;
		if (strcmp(rd->loop, name) != 0)
			continue;
		if (!(fp = footprint(L, n->st, t)))
			return;
		if (!region_defined(fp, o)) {
			L->failed = true;
			ts_ctx_set_error(L->ctx, "cache_read of '%s' at loop "
				"'%s' of stage '%s': the loop does not enclose "
				"every loop the read depends on", t->name, name,
				n->st->name);
			return;
		}
		region(L, fp, t, o, s, lo, ext);
		for (int j = 0; j < t->ndim; j++)
			shape[j] = ext[rd->nperm ? rd->perm[j] : j];
		v = ts_new(struct view);
		v->t = t;
		v->reader = n->st;
		memcpy(v->origin, lo, sizeof(lo));
		v->nperm = rd->nperm;
		memcpy(v->perm, rd->perm, sizeof(v->perm));
		v->buf = ts_buffer_new(L->ctx, ts_asprintf("%s.%s.local",
			t->name, n->st->name), t->dtype, t->ndim, shape);
		it = ts_new(struct scope_item);
		it->buf = v->buf;
		it->scope = shared ? TS_SCOPE_SHARED : TS_SCOPE_LOCAL;
		it->fill = copy_nest(L, t, v->buf, lo, ext, rd, n->st);
		view_push(L, v);
		ts_vec_push(items, it);
	}
}

/* The position after which the value of loop "l" of "n" is known: that
 * of its deepest leaf, leaving out leaves of one iteration (their value
 * is 0 wherever they are), so that a guard does not sink below loops it
 * does not depend on, into an unrolled register tile whose every step
 * would then test it and reload what it guards.  -1 when every leaf has
 * one iteration. */
static int known_pos(const struct nest *n, int l, bool *all_spatial)
{
	const ts_sched_stage *ss = n->ss;
	int r = consumer_rel(ss, l);
	const ts_sched_rel *rel;

	if (r < 0) {
		if (n->ext[l] == 1 && ss->loops[l].kind != TS_LOOP_BOUND)
			return -1;
		if (is_reduce(ss, l))
			*all_spatial = false;
		return loop_pos(ss, l);
	}
	rel = &ss->rels[r];
	if (rel->fuse)
		return known_pos(n, rel->parent, all_spatial);
	return TS_MAX(known_pos(n, rel->outer, all_spatial),
		known_pos(n, rel->inner, all_spatial));
}

/* Where the guard on loop "l" of "n" goes (see known_pos).  A nest with
 * loops bound to GPU threads keeps its guards at the deepest leaf: a
 * guard lifted there would hold the fill of a shared buffer under a
 * condition on the thread index. */
static int guard_pos(const struct nest *n, int l, bool *all_spatial)
{
	int p;

	for (int k = 0; k < n->ss->nloops; k++)
		if (n->ss->loops[k].kind == TS_LOOP_BOUND)
			return max_leaf_pos(n->ss, l, all_spatial);
	p = known_pos(n, l, all_spatial);

	return p >= 0 ? p : max_leaf_pos(n->ss, l, all_spatial);
}

/* The guards that become decidable at position "p" of "n", and-ed. */
static ts_expr *guards_at(struct nest *n, int p)
{
	ts_ctx *ctx = n->L->ctx;
	const ts_sched_stage *ss = n->ss;
	ts_expr *cond = NULL, *x, *v;
	bool sp;

	for (int r = 0; r < ss->nrels; r++) {
		int l = ss->rels[r].parent;
		if (!split_needs_guard(n, r))
			continue;
		sp = true;
		if (guard_pos(n, l, &sp) != p ||
		    (n->mode != MODE_MAIN && !sp))
			continue;
		interval(n, l, &v, &(int64_t){ 0 });
		x = ts_binary(ctx, TS_OP_LT, v, ts_lower_int(ctx, n->ext[l]));
		cond = and_cond(ctx, cond, x);
	}
	for (int l = 0; l < ss->nloops; l++) {
		int a = ss->loops[l].axis;
		if (a < 0 || a >= n->st->ndim || !n->region[a])
			continue;
		sp = true;
		if (guard_pos(n, l, &sp) != p)
			continue;
		v = axis_value(n, a);
		cond = and_cond(ctx, cond, inside(ctx, n->st->out, a, v,
			n->region[a]));
	}
	return cond;
}

/* The body of the loop at position "p" of "n" (its variable set). */
static ts_stmt *emit_inner(struct nest *n, int p)
{
	struct lower *L = n->L;
	const char *name = n->ss->loops[n->ss->order[p]].name;
	int mark = L->views.n;
	ts_vec items = { 0 };
	ts_stmt *s, *cond_s;
	ts_expr *cond;

	if (n->mode == MODE_MAIN) {
		if (n->ss->cache_write && strcmp(n->ss->cache_write, name) == 0)
			open_cache_write(n, p, &items);
		open_attached(n, p, &items);
		open_reads(n, p, &items);
	}
	s = emit(n, p + 1);
	for (int i = items.n - 1; i >= 0; i--) {
		struct scope_item *it = items.v[i];
		ts_stmt *b = ts_stmt_block(0, NULL);
		ts_stmt_block_append(b, it->fill);
		ts_stmt_block_append(b, s);
		ts_stmt_block_append(b, it->drain);
		s = ts_stmt_alloc(it->buf, it->scope, b);
	}
	L->views.n = mark;
	cond = guards_at(n, p);
	cond_s = cond && s ? ts_stmt_if(cond, s, NULL) : s;
	return cond_s;
}

/* The loop at position "p" of "n", for the current tail choices. */
static ts_stmt *emit_loop(struct nest *n, int p)
{
	ts_ctx *ctx = n->L->ctx;
	int l = n->ss->order[p];
	const ts_sched_loop *lp = &n->ss->loops[l];
	ts_stmt *body, *s;
	ts_axis *v;

	for (int r = 0; r < n->ss->nrels; r++)
		if (n->part[r] == 2 && n->ss->rels[r].outer == l) {
			const ts_sched_rel *rel = &n->ss->rels[r];
			int64_t P = n->ext[rel->parent];
			n->val[l] = ts_lower_int(ctx,
				P / TS_MIN(rel->factor, TS_MAX(P, 1)));
			body = emit_inner(n, p);
			n->val[l] = NULL;
			return body;
		}
	if (n->ext[l] == 1 && lp->kind != TS_LOOP_BOUND) {
		/* A loop of one iteration is its value 0. */
		n->val[l] = ts_lower_int(ctx, 0);
		body = emit_inner(n, p);
		n->val[l] = NULL;
		return body;
	}
	v = ts_loop_var(ctx, lp->name, n->ext[l]);
	n->val[l] = ts_var(ctx, v);
	body = emit_inner(n, p);
	n->val[l] = NULL;
	if (!body)
		return NULL;
	s = ts_stmt_for(v, lp->kind, body);
	s->bind = lp->bind;
	/* The nest that computes, not its initialisation or write-back. */
	s->tensorize = n->mode == MODE_MAIN && n->ss->tensorize &&
		strcmp(n->ss->tensorize, lp->name) == 0;
	return s;
}

/* The nest of "n" from position "p" inwards. */
static ts_stmt *emit(struct nest *n, int p)
{
	const ts_sched_stage *ss = n->ss;
	ts_stmt *pre = NULL, *loop;
	int l;

	if (n->L->failed)
		return NULL;
	if (n->mode == MODE_MAIN && p == n->first_reduce &&
	    n->st->body->kind == TS_EXPR_REDUCE && !ss->nested_reduce) {
		struct nest *m = nest_clone(n);
		m->first_reduce = -1;
		return ts_stmt_block(2, (ts_stmt *[]){
			emit_sub(n, p, MODE_INIT), emit(m, p) });
	}
	if (p == ss->norder)
		return n->mode == MODE_MAIN ? body_main(n) : body_sub(n);
	l = ss->order[p];
	if (n->mode != MODE_MAIN && is_reduce(ss, l))
		return emit(n, p + 1);
	for (int r = 0; r < ss->nrels; r++) {
		struct nest *m, *t;
		if (ss->rels[r].outer != l || !split_partitions(n, r))
			continue;
		m = nest_clone(n);
		m->part[r] = 1;
		compute_extents(m);
		t = nest_clone(n);
		t->part[r] = 2;
		compute_extents(t);
		loop = ts_stmt_block(2, (ts_stmt *[]){ emit_loop(m, p),
			emit_loop(t, p) });
		return pre ? ts_stmt_block(2, (ts_stmt *[]){ pre, loop }) : loop;
	}
	loop = emit_loop(n, p);
	return pre ? ts_stmt_block(2, (ts_stmt *[]){ pre, loop }) : loop;
}

/* The loop "for j in 0..n: rf[sp, j] = rf[sp, j] op rf[sp, j + off]" of
 * reducer "red" at the spatial indices "sp" ("ndim" of them), of kind
 * "kind". */
static ts_stmt *rfactor_fold(ts_ctx *ctx, ts_reducer red, ts_tensor *rf,
	int ndim, ts_expr *const *sp, int64_t n, int64_t off,
	ts_loop_kind kind)
{
	ts_axis *j = ts_loop_var(ctx, "rf", n);
	ts_expr *at[TS_MAX_DIMS + 1], *from[TS_MAX_DIMS + 1];

	for (int d = 0; d < ndim; d++)
		at[d] = from[d] = sp[d];
	at[ndim] = ts_var(ctx, j);
	from[ndim] = ts_add(ctx, ts_var(ctx, j), ts_lower_int(ctx, off));
	return ts_stmt_for(j, kind, ts_stmt_store(rf, ndim + 1, at,
		reduce_combine(ctx, red, ts_lower_load(rf, ndim + 1, at),
		ts_lower_load(rf, ndim + 1, from))));
}

/* The nest that reduces the partial results "rf" of stage "n" over the
 * rfactor loop into the stage's output: a tree, the upper half of the
 * partials combined into the lower half until one is left, each
 * halving a vector operation (a chain of one combine per partial, 64
 * dependent adds a row, had cost as much as the rows' main loop), then
 * that one into the output. */
static ts_stmt *rfactor_final(struct lower *L, const ts_stage *st,
	ts_tensor *rf, ts_tensor *out)
{
	ts_ctx *ctx = L->ctx;
	ts_expr *sp[TS_MAX_DIMS], *ridx[TS_MAX_DIMS + 1], *part;
	ts_axis *vars[TS_MAX_DIMS];
	ts_stmt *steps[72], *s;
	ts_reducer red = st->body->reducer;
	int64_t r = rf->shape[st->ndim], half = 1;
	int n = 0;

	for (int d = 0; d < st->ndim; d++) {
		vars[d] = ts_loop_var(ctx, st->axes[d]->name, rf->shape[d]);
		sp[d] = ridx[d] = ts_var(ctx, vars[d]);
	}
	while (half * 2 <= r)
		half *= 2;
	/* The partials above the largest power of two, then halvings. */
	if (r > half)
		steps[n++] = rfactor_fold(ctx, red, rf, st->ndim, sp, r - half,
			half, TS_LOOP_SERIAL);
	for (int64_t h = half / 2; h >= 1; h /= 2)
		steps[n++] = rfactor_fold(ctx, red, rf, st->ndim, sp, h, h,
			h >= 2 ? TS_LOOP_VECTORIZED : TS_LOOP_SERIAL);
	ridx[st->ndim] = ts_lower_int(ctx, 0);
	part = ts_lower_load(rf, st->ndim + 1, ridx);
	steps[n++] = ts_stmt_store(out, st->ndim, sp, reduce_combine(ctx,
		red, reduce_identity(ctx, red, st->out->dtype), part));
	s = ts_stmt_block(n, steps);
	for (int d = st->ndim - 1; d >= 0; d--)
		s = ts_stmt_for(vars[d], TS_LOOP_SERIAL, s);
	return s;
}

/* The nest that sets every partial result "rf" of stage "st" to the
 * identity of its reducer.  The main nest initialises the entries it
 * computes, but a guarded tail of the rfactor loop skips some, and the
 * final reduction reads them all. */
static ts_stmt *rfactor_fill(struct lower *L, const ts_stage *st,
	ts_tensor *rf)
{
	ts_ctx *ctx = L->ctx;
	ts_expr *idx[TS_MAX_DIMS + 1];
	ts_axis *vars[TS_MAX_DIMS + 1];
	ts_stmt *s;

	for (int d = 0; d < rf->ndim; d++) {
		vars[d] = ts_loop_var(ctx, d < st->ndim ? st->axes[d]->name :
			"rf", rf->shape[d]);
		idx[d] = ts_var(ctx, vars[d]);
	}
	s = ts_stmt_store(rf, rf->ndim, idx, reduce_identity(ctx,
		st->body->reducer, rf->dtype));
	for (int d = rf->ndim - 1; d >= 0; d--)
		s = ts_stmt_for(vars[d], TS_LOOP_SERIAL, s);
	return s;
}

/* The nest of stage "i" over the region "lo", "ext" of its output
 * (whole at root), written to "out" (its tensor at root, the buffer of
 * its region at a loop): with an rfactor, the partial results first,
 * indexed by the rfactor loop last so that a vectorized rfactor loop
 * writes them contiguously, then their combination into "out". */
static ts_stmt *attached_nest(struct lower *L, int i, ts_expr **lo,
	const int64_t *ext, ts_tensor *out)
{
	const ts_sched_stage *ss = &L->sch->stages[i];
	const ts_stage *st = ss->stage;
	int64_t rext[TS_MAX_DIMS + 1];
	struct view *v;
	ts_stmt *main;
	int mark = L->views.n;

	if (!ss->rfactor)
		return emit_attached(L, i, lo, ext);
	v = ts_new(struct view);
	v->t = st->out;
	v->reader = st;
	v->cache_write = true;
	for (int d = 0; d < st->ndim; d++) {
		rext[d] = ext[d];
		v->origin[d] = lo[d];
	}
	rext[st->ndim] = ss->loops[ts_sched_stage_find_loop(ss,
		ss->rfactor)].extent;
	v->buf = ts_buffer_new(L->ctx, ts_asprintf("%s.rf", st->name),
		st->out->dtype, st->ndim + 1, rext);
	if (!v->buf)
		return NULL;
	view_push(L, v);
	main = emit_attached(L, i, lo, ext);
	L->views.n = mark;
	if (!main)
		return NULL;
	return ts_stmt_alloc(v->buf, ss->attach == TS_ATTACH_ROOT ?
		TS_SCOPE_GLOBAL : TS_SCOPE_LOCAL, ts_stmt_block(3,
		(ts_stmt *[]){ rfactor_fill(L, st, v->buf), main,
		rfactor_final(L, st, v->buf, out) }));
}

/* The nest of the root stage "i". */
static ts_stmt *emit_root(struct lower *L, int i)
{
	const ts_stage *st = L->sch->stages[i].stage;
	int64_t ext[TS_MAX_DIMS];
	ts_expr *lo[TS_MAX_DIMS];

	for (int d = 0; d < st->ndim; d++) {
		ext[d] = st->axes[d]->extent;
		lo[d] = NULL;
	}
	return attached_nest(L, i, lo, ext, st->out);
}

/* Check that every vectorized loop of "s" holds only stores, guards and
 * unrolled loops; "in_vec" says whether "s" is inside one. */
static ts_status check_vectorized(ts_ctx *ctx, const ts_stmt *s, bool in_vec)
{
	if (!s)
		return TS_OK;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (in_vec && s->loop != TS_LOOP_UNROLLED)
			return ts_ctx_set_error(ctx, "lowering: loop '%s' is "
				"inside a vectorized loop", s->var->name);
		return check_vectorized(ctx, s->body,
			in_vec || s->loop == TS_LOOP_VECTORIZED);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (check_vectorized(ctx, s->stmts[i], in_vec) < 0)
				return TS_ERROR;
		return TS_OK;
	case TS_STMT_IF:
		if (check_vectorized(ctx, s->orelse, in_vec) < 0)
			return TS_ERROR;
		return check_vectorized(ctx, s->body, in_vec);
	case TS_STMT_ALLOC:
		if (in_vec)
			return ts_ctx_set_error(ctx, "lowering: buffer '%s' is "
				"allocated inside a vectorized loop",
				s->buffer->name);
		return check_vectorized(ctx, s->body, in_vec);
	default:
		return TS_OK;
	}
}

/* Check what lowering needs beyond ts_schedule_check. */
static ts_status check_lowerable(struct lower *L)
{
	for (int i = 0; i < L->dag->nstages; i++) {
		const ts_stage *st = L->dag->stages[i];
		if (st->ndim + st->nraxes > MAX_AXES)
			return ts_ctx_set_error(L->ctx, "stage '%s' has more than "
				"%d axes", st->name, MAX_AXES);
	}
	return TS_OK;
}

/* The function skeleton of "dag": arguments and name. */
static ts_func *func_new(const ts_dag *dag)
{
	ts_func *f = ts_new(ts_func);

	f->name = dag->name ? dag->name : "kernel";
	f->dag = dag;
	f->ninputs = dag->ninputs;
	f->nargs = dag->ninputs + dag->noutputs;
	f->args = ts_new_array(ts_tensor *, f->nargs + 1);
	for (int i = 0; i < dag->ninputs; i++)
		f->args[i] = dag->inputs[i];
	for (int i = 0; i < dag->noutputs; i++)
		f->args[dag->ninputs + i] = dag->outputs[i];
	return f;
}

ts_func *ts_lower(ts_ctx *ctx, const ts_dag *dag, const ts_schedule *sch)
{
	struct lower L = { ctx, dag, sch };
	ts_stmt *body = ts_stmt_block(0, NULL);
	ts_func *f;

	if (!dag)
		return NULL;
	if (!sch)
		L.sch = sch = ts_schedule_naive(ctx, dag);
	if (sch->dag != dag)
		return ts_ctx_set_error(ctx, "lowering: the schedule is for "
			"another DAG"), NULL;
	if (ts_schedule_check(sch) < 0 || check_lowerable(&L) < 0)
		return NULL;
	for (int i = 0; i < dag->nstages; i++) {
		ts_stmt *s;
		if (sch->stages[i].attach != TS_ATTACH_ROOT)
			continue;
		if (!(s = emit_root(&L, i)))
			return NULL;
		ts_stmt_block_append(body, s);
	}
	for (int i = dag->nstages - 1; i >= 0; i--)
		if (sch->stages[i].attach == TS_ATTACH_ROOT &&
		    !ts_dag_is_output(dag, dag->stages[i]->out))
			body = ts_stmt_alloc(dag->stages[i]->out,
				TS_SCOPE_GLOBAL, body);
	if (L.failed || check_vectorized(ctx, body, false) < 0)
		return NULL;
	f = func_new(dag);
	f->body = body;
	ts_func_promote_accumulators(ctx, f);
	return f;
}
