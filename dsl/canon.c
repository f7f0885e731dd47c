/* The canonical form of a DAG: one reduction per stage, at its root.
 *
 * However a declaration is written, the analysis sees the same DAG.  A
 * reduction nested inside an expression (a sum plus a bias, a norm under a
 * square root, a softmax written in one statement) would otherwise be
 * recomputed for every instance of the enclosing stage, and no template
 * could tile its reduction axes.  This pass moves every such reduction
 * into a stage of its own, over exactly the axes it depends on, named
 * after its consumer ("Y.sum0"), and replaces it by a load.  Reductions
 * that are equal up to the names of their axes share one stage, and so
 * does a reduction equal to a stage the user wrote.  What is left of the
 * consumer is elementwise, and the templates fuse it back as an epilogue.
 *
 * A nested reduction evaluated only under a condition (an arm of a
 * select, the right operand of && or ||) may read out of bounds where the
 * condition is false, as a padding stage does.  Its stage then carries
 * the condition inside the reduction, unless every index it reads is
 * provably in bounds over the whole stage.
 *
 * A read guarded by bounds tests inside a window (a convolution or a pool
 * over padded data written "select(y + r - 1 >= 0 && ..., X[..], 0.0)")
 * becomes a padding stage, as a user would write it, read without a
 * guard; the templates then choose where to compute it.  So does a read
 * through floor divisions or remainders of a reduction axis that only
 * rearranges its tensor (space-to-depth or pixel shuffle feeding a
 * product): a gather stage ("Y.gather0").
 *
 * Last, a transcendental function that several stages compute alike (the
 * exponentials of a softmax, for its sum and for its quotient) becomes a
 * stage that each reads ("Y.shared0"), when it is large enough to be
 * worth a stage and small enough to stay in a cache between them
 * (share_dear).
 *
 * Requires: stages in topological order.  Produces: stages whose body is
 * either free of reductions or a single reduction at the root with no
 * reduction and no guarded window read inside; new stages for the
 * reductions moved out, for padding, for gathers and for shared
 * transcendentals.
 */
#include <config.h>

#include <inttypes.h>

#include "dsl/internal.h"

/* The state of the pass over one DAG. */
struct canon {
	ts_ctx *ctx;
	ts_vec names;		/* every tensor name in use (char *) */
	ts_vec keys;		/* keys of reduction stages (char *) */
	ts_vec shared;		/* the tensor of each key (ts_tensor *) */
	bool changed;		/* some stage was rewritten */
};

/* Where the walk stands inside the body of one stage. */
struct site {
	ts_stage *stage;
	ts_vec bound;		/* reduction axes bound around the node */
	ts_vec guards;		/* conditions that hold where it is evaluated */
};

static bool vec_has(const ts_vec *v, const void *p)
{
	for (int i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return true;
	return false;
}

/* Add to "out" the axes of "e" not bound inside "e", once each. */
static void free_axes(const ts_expr *e, ts_vec *bound, ts_vec *out)
{
	if (!e)
		return;
	switch (e->kind) {
	case TS_EXPR_VAR:
		if (!vec_has(bound, e->axis) && !vec_has(out, e->axis))
			ts_vec_push(out, e->axis);
		return;
	case TS_EXPR_LOAD:
		for (int i = 0; i < e->nargs; i++)
			free_axes(e->args[i], bound, out);
		return;
	case TS_EXPR_REDUCE:
		for (int i = 0; i < e->nraxes; i++)
			ts_vec_push(bound, e->raxes[i]);
		free_axes(e->a, bound, out);
		bound->n -= e->nraxes;
		return;
	default:
		free_axes(e->a, bound, out);
		free_axes(e->b, bound, out);
		free_axes(e->c, bound, out);
	}
}

/* Return a copy of the node "e" (children shared). */
static ts_expr *expr_copy(const ts_expr *e)
{
	ts_expr *n = ts_new(ts_expr);

	*n = *e;
	if (e->kind == TS_EXPR_LOAD) {
		n->args = ts_new_array(ts_expr *, e->nargs ? e->nargs : 1);
		if (e->nargs)
			memcpy(n->args, e->args, sizeof(ts_expr *) * e->nargs);
	}
	return n;
}

/* "e" with the operands "a", "b" and "x" (its a, b and c): "e" itself
 * when they are its own, else a copy. */
static ts_expr *with_operands(ts_expr *e, ts_expr *a, ts_expr *b, ts_expr *x)
{
	ts_expr *n;

	if (a == e->a && b == e->b && x == e->c)
		return e;
	n = expr_copy(e);
	n->a = a;
	n->b = b;
	n->c = x;
	return n;
}

/* Return "e" with each axis "from[i]" replaced by "to[i]" ("n" pairs),
 * where it is used and where it is bound. */
static ts_expr *subst(ts_expr *e, int n, ts_axis *const *from,
	ts_axis *const *to)
{
	ts_expr *c;

	if (!e)
		return NULL;
	if (e->kind == TS_EXPR_VAR) {
		for (int i = 0; i < n; i++)
			if (e->axis == from[i]) {
				c = expr_copy(e);
				c->axis = to[i];
				return c;
			}
		return e;
	}
	if (e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT)
		return e;
	c = expr_copy(e);
	if (e->kind == TS_EXPR_REDUCE) {
		c->raxes = ts_new_array(ts_axis *, e->nraxes);
		for (int i = 0; i < e->nraxes; i++) {
			c->raxes[i] = e->raxes[i];
			for (int j = 0; j < n; j++)
				if (e->raxes[i] == from[j])
					c->raxes[i] = to[j];
		}
	}
	for (int i = 0; e->kind == TS_EXPR_LOAD && i < e->nargs; i++)
		c->args[i] = subst(e->args[i], n, from, to);
	c->a = subst(e->a, n, from, to);
	c->b = subst(e->b, n, from, to);
	c->c = subst(e->c, n, from, to);
	return c;
}

/* The key of a reduction stage over "axes" ("n") computing the reduction
 * "body": its text with every axis renamed by position, so that two
 * reductions equal up to the names of their axes share one key. */
static char *reduction_key(int n, ts_axis *const *axes, ts_expr *body)
{
	int m = n + body->nraxes;
	ts_axis **from = ts_new_array(ts_axis *, m);
	ts_axis **to = ts_new_array(ts_axis *, m);
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", ts_dtype_name(body->dtype));
	for (int i = 0; i < m; i++) {
		from[i] = i < n ? axes[i] : body->raxes[i - n];
		to[i] = ts_new(ts_axis);
		*to[i] = *from[i];
		to[i]->name = ts_asprintf("%c%d", i < n ? 's' : 'r', i);
		if (i < n)
			ts_buf_printf(&b, "%" PRId64 ",", axes[i]->extent);
	}
	ts_buf_printf(&b, "] %s", ts_expr_to_string(subst(body, m, from, to)));
	return b.s;
}

/* Return the tensor registered under "key" in "c", or NULL. */
static ts_tensor *find_shared(struct canon *c, const char *key)
{
	for (int i = 0; i < c->keys.n; i++)
		if (!strcmp(c->keys.v[i], key))
			return c->shared.v[i];
	return NULL;
}

/* Return an unused name "base.<kind><n>" for a stage of "site". */
static char *fresh_name(struct canon *c, struct site *site, const char *kind)
{
	for (int n = 0;; n++) {
		char *name = ts_asprintf("%s.%s%d", site->stage->name, kind, n);
		bool used = false;
		for (int i = 0; i < c->names.n && !used; i++)
			used = !strcmp(c->names.v[i], name);
		if (!used) {
			ts_vec_push(&c->names, name);
			return name;
		}
	}
}

/* Order "axes" ("n" of them) as the stage of "site" binds them: its
 * spatial axes first, then the reduction axes around the node. */
static void order_axes(struct site *site, int n, ts_axis **axes)
{
	int k = 0;

	for (int i = 0; i < site->stage->ndim; i++)
		for (int j = k; j < n; j++)
			if (axes[j] == site->stage->axes[i]) {
				ts_axis *t = axes[k];
				axes[k++] = axes[j];
				axes[j] = t;
			}
	for (int i = 0; i < site->bound.n; i++)
		for (int j = k; j < n; j++)
			if (axes[j] == site->bound.v[i]) {
				ts_axis *t = axes[k];
				axes[k++] = axes[j];
				axes[j] = t;
			}
}

/* Return the conjunction of the guards of "site", or NULL if none. */
static ts_expr *guard_of(struct canon *c, struct site *site)
{
	ts_expr *g = NULL;

	for (int i = 0; i < site->guards.n; i++)
		g = g ? ts_binary(c->ctx, TS_OP_AND, g, site->guards.v[i])
			: site->guards.v[i];
	return g;
}

/* Make the stage "name" over "axes" ("n") computing "body"; its output
 * has the dtype of "body". */
static ts_tensor *stage_new(struct canon *c, const char *name, int n,
	ts_axis **axes, ts_expr *body)
{
	int64_t shape[TS_MAX_DIMS];
	ts_stage *s = ts_new(ts_stage);
	ts_tensor *t;

	for (int i = 0; i < n; i++)
		shape[i] = axes[i]->extent;
	t = ts_tensor_make(c->ctx, name, body->dtype, n, shape);
	s->name = t->name;
	s->out = t;
	s->ndim = n;
	s->axes = ts_new_array(ts_axis *, n ? n : 1);
	if (n)
		memcpy(s->axes, axes, sizeof(ts_axis *) * n);
	t->stage = s;
	if (ts_stage_set_body(c->ctx, s, body) < 0)
		return NULL;
	return t;
}

static ts_status hoist_stage(struct canon *c, ts_stage *s);
static ts_status pad_stage_reads(struct canon *c, ts_stage *s);
static ts_status gather_stage_reads(struct canon *c, ts_stage *s);

/* Move the expression "r" of "site" into a stage "kind" over the "n"
 * axes "axes" (in the order of its dimensions), or find the stage that
 * already computes it; "guard", when not NULL, holds where "r" is
 * evaluated.  Return the load that replaces "r". */
static ts_expr *extract_over(struct canon *c, struct site *site, ts_expr *r,
	const char *kind, int n, ts_axis **axes, ts_expr *guard)
{
	ts_axis *own[TS_MAX_DIMS + 1];
	ts_expr *idx[TS_MAX_DIMS + 1], *body = r;
	ts_tensor *t;
	char *key;

	if (guard) {
		body = expr_copy(r);
		body->a = ts_select(c->ctx, guard, r->a,
			ts_const(c->ctx, r->a->dtype, 0));
		if (!body->a)
			return NULL;
	}
	key = reduction_key(n, axes, body);
	if (!(t = find_shared(c, key))) {
		for (int i = 0; i < n; i++)
			own[i] = ts_axis_new(c->ctx, axes[i]->name,
				axes[i]->extent);
		t = stage_new(c, fresh_name(c, site, kind), n, own,
			subst(body, n, axes, own));
		if (!t)
			return NULL;
		t->stage->line = site->stage->line;
		if (pad_stage_reads(c, t->stage) < 0 ||
		    gather_stage_reads(c, t->stage) < 0 ||
		    hoist_stage(c, t->stage) < 0)
			return NULL;
		ts_vec_push(&c->keys, key);
		ts_vec_push(&c->shared, t);
	}
	for (int i = 0; i < n; i++)
		idx[i] = ts_var(c->ctx, axes[i]);
	return ts_load(c->ctx, t, n, idx);
}

/* Move the expression "r" of "site" (a nested reduction, its body already
 * canonical, or an invariant named "kind") into a stage of its own over
 * the axes it depends on, the stage's spatial axes first, or find the
 * stage that already computes it; return the load that replaces it. */
static ts_expr *extract(struct canon *c, struct site *site, ts_expr *r,
	const char *kind)
{
	ts_vec fv = { 0 }, none = { 0 };
	ts_axis *axes[TS_MAX_DIMS + 1];
	ts_expr *guard = NULL;

	if (site->guards.n && !ts_expr_safe_everywhere(r)) {
		guard = guard_of(c, site);
		free_axes(guard, &none, &fv);
	}
	free_axes(r, &none, &fv);
	if (fv.n > TS_MAX_DIMS) {
		ts_ctx_set_error(c->ctx, "stage '%s': a nested %s depends on "
			"%d axes; a stage has at most %d",
			site->stage->name, ts_reducer_name(r->reducer), fv.n,
			TS_MAX_DIMS);
		return NULL;
	}
	for (int i = 0; i < fv.n; i++)
		axes[i] = fv.v[i];
	order_axes(site, fv.n, axes);
	return extract_over(c, site, r, kind, fv.n, axes, guard);
}

static ts_expr *rewrite(struct canon *c, struct site *site, ts_expr *e);

/* Rewrite "e" evaluated only where "guard" holds. */
static ts_expr *rewrite_under(struct canon *c, struct site *site,
	ts_expr *guard, ts_expr *e)
{
	ts_expr *r;

	ts_vec_push(&site->guards, guard);
	r = rewrite(c, site, e);
	site->guards.n--;
	return r;
}

/* Rewrite the body of the reduction "e", its axes bound. */
static ts_expr *rewrite_reduce_body(struct canon *c, struct site *site,
	ts_expr *e)
{
	ts_expr *body;

	for (int i = 0; i < e->nraxes; i++)
		ts_vec_push(&site->bound, e->raxes[i]);
	body = rewrite(c, site, e->a);
	site->bound.n -= e->nraxes;
	if (!body)
		return NULL;
	if (body == e->a)
		return e;
	e = expr_copy(e);
	e->a = body;
	return e;
}

/* Return "e" with every reduction inside it moved to a stage of its own;
 * "e" itself when nothing changed. */
static ts_expr *rewrite(struct canon *c, struct site *site, ts_expr *e)
{
	ts_expr *a, *b = NULL, *x = NULL, *n;
	bool same;

	if (!e || !ts_expr_has_reduce(e))
		return e;
	if (e->kind == TS_EXPR_REDUCE) {
		if (!(n = rewrite_reduce_body(c, site, e)))
			return NULL;
		c->changed = true;
		return extract(c, site, n, ts_reducer_name(n->reducer));
	}
	if (e->kind == TS_EXPR_LOAD) {
		n = expr_copy(e);
		for (int i = 0; i < e->nargs; i++)
			if (!(n->args[i] = rewrite(c, site, e->args[i])))
				return NULL;
		return n;
	}
	if (!(a = rewrite(c, site, e->a)))
		return NULL;
	if (e->kind == TS_EXPR_SELECT) {
		b = rewrite_under(c, site, a, e->b);
		x = b ? rewrite_under(c, site,
			ts_unary(c->ctx, TS_OP_NOT, a), e->c) : NULL;
		if (!x)
			return NULL;
	} else if (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_AND ||
	    e->op == TS_OP_OR)) {
		b = rewrite_under(c, site, e->op == TS_OP_AND ? a :
			ts_unary(c->ctx, TS_OP_NOT, a), e->b);
	} else if (e->b && !(b = rewrite(c, site, e->b))) {
		return NULL;
	}
	if (e->b && !b)
		return NULL;
	same = a == e->a && b == e->b && (e->kind != TS_EXPR_SELECT ||
		x == e->c);
	if (same)
		return e;
	n = expr_copy(e);
	n->a = a;
	n->b = b;
	if (e->kind == TS_EXPR_SELECT)
		n->c = x;
	return n;
}

/* Whether "e" computes something dearer than a few additions: a
 * transcendental function, a root, a division or a power. */
static bool is_costly(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_UNARY && ts_op_is_special(e->op))
		return true;
	if (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_POW ||
	    (e->op == TS_OP_DIV && ts_dtype_is_float(e->dtype))))
		return true;
	for (int i = 0; e->kind == TS_EXPR_LOAD && i < e->nargs; i++)
		if (is_costly(e->args[i]))
			return true;
	return is_costly(e->a) || is_costly(e->b) || is_costly(e->c);
}

/* Whether "e" computes something beyond loads and casts: an operator,
 * a function, a select (indices inside loads do not count). */
static bool computes(const ts_expr *e)
{
	if (!e || e->kind == TS_EXPR_LOAD || e->kind == TS_EXPR_INT ||
	    e->kind == TS_EXPR_FLOAT || e->kind == TS_EXPR_VAR)
		return false;
	if (e->kind != TS_EXPR_CAST)
		return true;
	return computes(e->a);
}

/* Whether "e" reads memory (indices inside loads included). */
static bool reads_memory(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD)
		return true;
	return reads_memory(e->a) || reads_memory(e->b) || reads_memory(e->c);
}

/* Whether "e", where a spatial axis does not change it, is worth a stage
 * of its own: something dear, or any computation on loaded values (a
 * bias and a clamp of the hidden layer of an MLP written in one
 * statement, recomputed under the next layer's sum once per output:
 * 2.2x slower than the staged twin).  A load, a cast of one or a
 * constant expression stays: it is an operand the templates read in
 * place. */
static bool worth_hoisting(const ts_expr *e)
{
	return is_costly(e) || (computes(e) && reads_memory(e));
}

/* Whether "e" reads none of some spatial axis (of extent 2 or more) of
 * the stage of "site": the reduction would compute it again for every
 * value of that axis. */
static bool is_invariant(struct site *site, const ts_expr *e)
{
	ts_vec fv = { 0 }, none = { 0 };

	free_axes(e, &none, &fv);
	for (int i = 0; i < site->stage->ndim; i++)
		if (site->stage->axes[i]->extent > 1 &&
		    !vec_has(&fv, site->stage->axes[i]))
			return true;
	return false;
}

/* The name of the stage made for the invariant "e". */
static const char *invariant_kind(const ts_expr *e)
{
	if (e->kind == TS_EXPR_UNARY && e->op >= TS_OP_EXP)
		return ts_op_name(e->op);
	return "e";
}

/* Return the body "e" of a reduction of "site" with every computed
 * subexpression that a spatial axis does not change (worth_hoisting)
 * moved into a stage of its own (as the hidden layer of an MLP written
 * in one statement, sigmoid(h) under the sum of the next layer, is once
 * per hidden unit and not once per output).  Conditional parts stay
 * where they are. */
static ts_expr *hoist(struct canon *c, struct site *site, ts_expr *e)
{
	ts_expr *a, *b = NULL;

	if (!e || e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT ||
	    e->kind == TS_EXPR_VAR || e->kind == TS_EXPR_LOAD ||
	    !worth_hoisting(e))
		return e;
	if (is_invariant(site, e) && !ts_expr_has_reduce(e)) {
		c->changed = true;
		return extract(c, site, e, invariant_kind(e));
	}
	if (e->kind == TS_EXPR_SELECT || e->kind == TS_EXPR_REDUCE ||
	    (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_AND ||
	    e->op == TS_OP_OR)))
		return e;
	if (!(a = hoist(c, site, e->a)) || (e->b && !(b = hoist(c, site,
	    e->b))))
		return NULL;
	return with_operands(e, a, e->b ? b : NULL, e->c);
}

/* A rewriting of the body of a reduction at "site". */
typedef ts_expr *body_pass(struct canon *c, struct site *site, ts_expr *e);

/* Rewrite by "pass" the body of the reduction at the root of "s", its
 * axes bound; nothing when "s" is no reduction. */
static ts_status reduce_body_pass(struct canon *c, ts_stage *s,
	body_pass *pass)
{
	struct site site = { s };
	ts_expr *body = s->body, *r;

	if (body->kind != TS_EXPR_REDUCE)
		return TS_OK;
	for (int i = 0; i < body->nraxes; i++)
		ts_vec_push(&site.bound, body->raxes[i]);
	if (!(r = pass(c, &site, body->a)))
		return TS_ERROR;
	if (r == body->a)
		return TS_OK;
	body = expr_copy(body);
	body->a = r;
	return ts_stage_set_body(c->ctx, s, body);
}

/* Hoist the invariant parts of the reduction at the root of "s". */
static ts_status hoist_stage(struct canon *c, ts_stage *s)
{
	return reduce_body_pass(c, s, hoist);
}

/* A bounds test of one index of a guarded read: "lo" <= index < "hi". */
struct bound_test {
	int dim;
	int64_t lo, hi;
};

/* The most axes an index of a bounds test is taken to combine. */
#define LINEAR_AXES 16

/* An integer expression as a sum of axes times constants plus a
 * constant. */
struct linear {
	int n;
	const ts_axis *axis[LINEAR_AXES];
	int64_t coef[LINEAR_AXES];
	int64_t k;
};

/* Add "scale" times "e" to "l"; false when "e" is not affine in the
 * axes (a division, a load) or a coefficient would grow past 2^60. */
static bool linearize(const ts_expr *e, int64_t scale, struct linear *l)
{
	const int64_t big = (int64_t)1 << 60;
	int64_t v;

	if (scale > big || scale < -big)
		return false;
	switch (e->kind) {
	case TS_EXPR_INT:
		if (__builtin_mul_overflow(e->ival, scale, &v) ||
		    __builtin_add_overflow(l->k, v, &l->k))
			return false;
		return l->k <= big && l->k >= -big;
	case TS_EXPR_VAR:
		for (int i = 0; i < l->n; i++)
			if (l->axis[i] == e->axis) {
				l->coef[i] += scale;
				return l->coef[i] <= big && l->coef[i] >= -big;
			}
		if (l->n == LINEAR_AXES)
			return false;
		l->axis[l->n] = e->axis;
		l->coef[l->n++] = scale;
		return true;
	case TS_EXPR_BINARY:
		if (e->op == TS_OP_ADD || e->op == TS_OP_SUB)
			return linearize(e->a, scale, l) && linearize(e->b,
				e->op == TS_OP_ADD ? scale : -scale, l);
		if (e->op != TS_OP_MUL)
			return false;
		if (e->b->kind == TS_EXPR_INT)
			return !__builtin_mul_overflow(scale, e->b->ival, &v) &&
				linearize(e->a, v, l);
		if (e->a->kind == TS_EXPR_INT)
			return !__builtin_mul_overflow(scale, e->a->ival, &v) &&
				linearize(e->b, v, l);
		return false;
	default:
		return false;
	}
}

/* The coefficient of "axis" in "l". */
static int64_t coef_of(const struct linear *l, const ts_axis *axis)
{
	for (int i = 0; i < l->n; i++)
		if (l->axis[i] == axis)
			return l->coef[i];
	return 0;
}

/* Whether "a" is "b" plus a constant, into "*delta" (a - b): equal
 * expressions, or affine ones with the same coefficients in any order
 * ("h + r" is "r + h - 1" plus one). */
static bool const_apart(const ts_expr *a, const ts_expr *b, int64_t *delta)
{
	struct linear la = { 0 }, lb = { 0 };

	if (ts_expr_equal(a, b)) {
		*delta = 0;
		return true;
	}
	if (!linearize(a, 1, &la) || !linearize(b, 1, &lb))
		return false;
	for (int i = 0; i < la.n; i++)
		if (la.coef[i] != coef_of(&lb, la.axis[i]))
			return false;
	for (int i = 0; i < lb.n; i++)
		if (lb.coef[i] != coef_of(&la, lb.axis[i]))
			return false;
	*delta = la.k - lb.k;
	return true;
}

/* Add to "t" the bound that the comparison "e" puts on an index of the
 * load "x" ("index op constant" or "constant op index"); false when "e"
 * is no such test. */
static bool bound_test_of(const ts_expr *e, const ts_expr *x,
	bool negated, struct bound_test *t)
{
	const ts_expr *idx = e->a, *k = e->b;
	ts_op op = e->op;
	int64_t delta = 0, b;
	static const ts_op flip[TS_OP_COUNT] = {
		[TS_OP_LT] = TS_OP_GT, [TS_OP_LE] = TS_OP_GE,
		[TS_OP_GT] = TS_OP_LT, [TS_OP_GE] = TS_OP_LE,
	};
	static const ts_op complement[TS_OP_COUNT] = {
		[TS_OP_LT] = TS_OP_GE, [TS_OP_LE] = TS_OP_GT,
		[TS_OP_GT] = TS_OP_LE, [TS_OP_GE] = TS_OP_LT,
	};

	if (e->kind != TS_EXPR_BINARY || op < TS_OP_LT || op > TS_OP_GE)
		return false;
	if (idx->kind == TS_EXPR_INT) {
		idx = e->b;
		k = e->a;
		op = flip[op];
	}
	if (negated)
		op = complement[op];
	/* An unsigned comparison orders values otherwise than the
	 * signed bounds below. */
	if (k->kind != TS_EXPR_INT || k->ival <= INT64_MIN + 1 ||
	    k->ival >= INT64_MAX - 1 || !ts_dtype_is_signed(k->dtype))
		return false;
	/* The test may be written on the index plus a constant: "h + r >=
	 * 1" guards X[.., h + r - 1, ..] as "h + r - 1 >= 0" does. */
	for (t->dim = 0; t->dim < x->nargs; t->dim++)
		if (const_apart(idx, x->args[t->dim], &delta))
			break;
	if (t->dim == x->nargs || __builtin_sub_overflow(k->ival, delta, &b))
		return false;
	t->lo = INT64_MIN;
	t->hi = INT64_MAX;
	switch (op) {
	case TS_OP_LT: t->hi = b; break;
	case TS_OP_LE: t->hi = b + 1; break;
	case TS_OP_GT: t->lo = b + 1; break;
	default: t->lo = b; break;
	}
	return true;
}

/* Narrow "lo" and "hi" (one pair per index of the load "x") by the
 * conjunction "cond" of bounds tests, or when "negated" by the negation
 * of "cond" (a disjunction of tests out of bounds, "!" over either);
 * false when a term is anything else. */
static bool bounds_of_guard(const ts_expr *cond, const ts_expr *x,
	bool negated, int64_t *lo, int64_t *hi)
{
	struct bound_test t;

	if (cond->kind == TS_EXPR_UNARY && cond->op == TS_OP_NOT)
		return bounds_of_guard(cond->a, x, !negated, lo, hi);
	if (cond->kind == TS_EXPR_BINARY && cond->op == (negated ? TS_OP_OR
	    : TS_OP_AND))
		return bounds_of_guard(cond->a, x, negated, lo, hi) &&
			bounds_of_guard(cond->b, x, negated, lo, hi);
	if (!bound_test_of(cond, x, negated, &t))
		return false;
	lo[t.dim] = TS_MAX(lo[t.dim], t.lo);
	hi[t.dim] = TS_MIN(hi[t.dim], t.hi);
	return true;
}

/* The load under the casts of "e", or NULL. */
static const ts_expr *read_of(const ts_expr *e)
{
	while (e->kind == TS_EXPR_CAST)
		e = e->a;
	return e->kind == TS_EXPR_LOAD ? e : NULL;
}

/* Return "e" with the load of "x" replaced by "y". */
static ts_expr *replace_read(ts_expr *e, const ts_expr *x, ts_expr *y)
{
	ts_expr *n;

	if (e == x)
		return y;
	n = expr_copy(e);
	n->a = replace_read(e->a, x, y);
	return n;
}

/* "e" + "k", folding "k" into a constant that "e" adds or subtracts
 * last ("y * 2 + r - 1" plus 1 is "y * 2 + r"). */
static ts_expr *add_const(ts_ctx *ctx, ts_expr *e, int64_t k)
{
	int64_t v;

	if (e->kind == TS_EXPR_BINARY && e->b->kind == TS_EXPR_INT &&
	    (e->op == TS_OP_ADD || e->op == TS_OP_SUB) &&
	    !(e->op == TS_OP_ADD ? __builtin_add_overflow(e->b->ival, k, &v)
	    : __builtin_sub_overflow(e->b->ival, k, &v)) && v != INT64_MIN) {
		if (v == 0)
			return e->a;
		return ts_binary(ctx, v > 0 ? TS_OP_ADD : TS_OP_SUB, e->a,
			ts_int(ctx, v > 0 ? v : -v));
	}
	return ts_binary(ctx, TS_OP_ADD, e, ts_int(ctx, k));
}

/* The padding stage of a guarded read: "P"[p] = select(lo <= p - off <
 * hi, "arm" at p - off, "fill") over "ext", per index of "x". */
static ts_expr *pad_stage(struct canon *c, struct site *site, ts_expr *arm,
	const ts_expr *x, ts_expr *fill, const int64_t *lo, const int64_t *hi,
	const int64_t *off, const int64_t *ext)
{
	ts_axis *axes[TS_MAX_DIMS];
	ts_expr *idx[TS_MAX_DIMS], *cond = NULL, *body, *ld;
	ts_tensor *X = x->tensor, *t;
	char *key;

	for (int d = 0; d < x->nargs; d++) {
		ts_expr *v;
		axes[d] = ts_axis_new(c->ctx, X->stage ?
			X->stage->axes[d]->name : ts_asprintf("d%d", d), ext[d]);
		v = ts_var(c->ctx, axes[d]);
		idx[d] = off[d] ? ts_binary(c->ctx, TS_OP_SUB, v,
			ts_int(c->ctx, off[d])) : v;
		if (lo[d] > INT64_MIN) {
			ts_expr *g = ts_binary(c->ctx, TS_OP_GE, v,
				ts_int(c->ctx, lo[d] + off[d]));
			cond = cond ? ts_binary(c->ctx, TS_OP_AND, cond, g) : g;
		}
		if (hi[d] < INT64_MAX) {
			ts_expr *g = ts_binary(c->ctx, TS_OP_LT, v,
				ts_int(c->ctx, hi[d] + off[d]));
			cond = cond ? ts_binary(c->ctx, TS_OP_AND, cond, g) : g;
		}
	}
	ld = ts_load(c->ctx, X, x->nargs, idx);
	body = ts_select(c->ctx, cond, replace_read(arm, x, ld), fill);
	if (!body)
		return NULL;
	key = reduction_key(x->nargs, axes, body);
	if (!(t = find_shared(c, key))) {
		t = stage_new(c, fresh_name(c, site, "pad"), x->nargs, axes,
			body);
		if (!t)
			return NULL;
		t->stage->line = site->stage->line;
		ts_vec_push(&c->keys, key);
		ts_vec_push(&c->shared, t);
	}
	for (int d = 0; d < x->nargs; d++)
		idx[d] = off[d] ? add_const(c->ctx, x->args[d], off[d]) :
			x->args[d];
	return ts_load(c->ctx, t, x->nargs, idx);
}

/* Whether "e" reads one of the reduction axes bound at "site". */
static bool reads_bound_axis(struct site *site, const ts_expr *e)
{
	ts_vec fv = { 0 }, none = { 0 };

	free_axes(e, &none, &fv);
	for (int i = 0; i < fv.n; i++)
		if (vec_has(&site->bound, fv.v[i]))
			return true;
	return false;
}

/* Whether "e" is an integer or floating-point literal. */
static bool is_literal(const ts_expr *e)
{
	return e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT;
}

/* Whether the literals "a" and "b" are the same value of one type. */
static bool same_literal(const ts_expr *a, const ts_expr *b)
{
	if (a->kind != b->kind || a->dtype != b->dtype)
		return false;
	if (a->kind == TS_EXPR_INT)
		return a->ival == b->ival;
	return a->kind == TS_EXPR_FLOAT &&
		memcmp(&a->fval, &b->fval, sizeof(double)) == 0;
}

/* If "e" is a guarded read inside a window, "select(tests, X[idx], k)"
 * with "tests" bounds tests on indices that move with a reduction axis,
 * return a load of a padding stage that computes it once per element
 * of X (plus the border); else return "e".  Tested in the window, the
 * guard is evaluated for every tap and keeps loads from vectorising; a
 * padding stage, as a user would write, lets the templates choose where
 * to compute it.  Indices without a test must be in bounds. */
static ts_expr *pad_read(struct canon *c, struct site *site, ts_expr *e)
{
	int64_t lo[TS_MAX_DIMS], hi[TS_MAX_DIMS], off[TS_MAX_DIMS];
	int64_t ext[TS_MAX_DIMS];
	const ts_expr *x, *arm, *s, *fill;
	bool window = false, outside;
	ts_range r;

	if (e->kind != TS_EXPR_SELECT)
		return e;
	/* select(out of bounds, k, X[..]) tests the other way round. */
	outside = is_literal(e->b) && !is_literal(e->c);
	fill = outside ? e->b : e->c;
	if (!is_literal(fill))
		return e;
	/* Guards nested as select(a, select(b, X[..], k), k) are one
	 * conjunction. */
	for (arm = outside ? e->c : e->b; !outside &&
	     arm->kind == TS_EXPR_SELECT && same_literal(arm->c, fill);
	     arm = arm->b)
		;
	if (!(x = read_of(arm)))
		return e;
	for (int d = 0; d < x->nargs; d++) {
		lo[d] = INT64_MIN;
		hi[d] = INT64_MAX;
	}
	if (outside && !bounds_of_guard(e->a, x, true, lo, hi))
		return e;
	for (s = e; !outside && s != arm; s = s->b)
		if (!bounds_of_guard(s->a, x, false, lo, hi))
			return e;
	for (int d = 0; d < x->nargs; d++) {
		int64_t n = x->tensor->shape[d];
		bool tested = lo[d] > INT64_MIN || hi[d] < INT64_MAX;
		if (!ts_expr_range(x->args[d], &r))
			return e;
		if (tested) {
			lo[d] = TS_MAX(lo[d], 0);
			hi[d] = TS_MIN(hi[d], n);
			window |= reads_bound_axis(site, x->args[d]);
		} else if (r.lo < 0 || r.hi >= n) {
			return e;
		}
		off[d] = r.lo < 0 ? -r.lo : 0;
		ext[d] = tested ? TS_MAX(r.hi + off[d] + 1, 1) : n;
		if (r.lo > INT64_MAX / 4 || r.hi > INT64_MAX / 4 ||
		    off[d] > INT64_MAX / 4)
			return e;
	}
	if (!window)
		return e;
	c->changed = true;
	return pad_stage(c, site, (ts_expr *)arm, x, (ts_expr *)fill, lo, hi,
		off, ext);
}

/* Return the body "e" of a reduction of "site" with every guarded read
 * in a window replaced by a load of a padding stage (pad_read). */
static ts_expr *pad_reads(struct canon *c, struct site *site, ts_expr *e)
{
	ts_expr *n, *a, *b = NULL, *x = NULL;

	if (!e || e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT ||
	    e->kind == TS_EXPR_VAR || e->kind == TS_EXPR_LOAD ||
	    e->kind == TS_EXPR_REDUCE)
		return e;
	if ((n = pad_read(c, site, e)) != e)
		return n;
	if (!(a = pad_reads(c, site, e->a)) ||
	    (e->b && !(b = pad_reads(c, site, e->b))) ||
	    (e->c && !(x = pad_reads(c, site, e->c))))
		return NULL;
	return with_operands(e, a, b, x);
}

/* Pad the guarded reads of the reduction at the root of "s". */
static ts_status pad_stage_reads(struct canon *c, ts_stage *s)
{
	return reduce_body_pass(c, s, pad_reads);
}

/* Whether "e" divides or takes a remainder of something that reads one
 * of the reduction axes bound at "site". */
static bool splits_bound_axis(struct site *site, const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_FLOORDIV ||
	    e->op == TS_OP_MOD) && reads_bound_axis(site, e->a))
		return true;
	return splits_bound_axis(site, e->a) ||
		splits_bound_axis(site, e->b) || splits_bound_axis(site, e->c);
}

/* If the load "x" reads its tensor through floor divisions or remainders
 * of a reduction axis, every index in bounds, and the axes it depends on
 * span at most twice the tensor (a rearrangement, not a window), return
 * a load of a gather stage that computes it; else return "x".  Read in
 * place, such an index moves by steps other than one along every axis a
 * template would vectorise, and the loads become gathers (measured: a
 * space-to-depth feeding a 1x1 convolution, 1.2x to 1.6x slower in one
 * statement than with the gather a stage). */
static ts_expr *gather_read(struct canon *c, struct site *site, ts_expr *x)
{
	ts_vec fv = { 0 }, none = { 0 };
	ts_axis *axes[TS_MAX_DIMS + 1];
	double points = 1, elems = 1;
	bool split = false;
	ts_range r;

	for (int d = 0; d < x->nargs; d++) {
		split |= splits_bound_axis(site, x->args[d]);
		if (!ts_expr_range(x->args[d], &r) || r.lo < 0 ||
		    r.hi >= x->tensor->shape[d])
			return x;
		elems *= (double)x->tensor->shape[d];
	}
	/* The axes in the order the tensor's dimensions first read them:
	 * the gather keeps its source's layout. */
	for (int d = 0; d < x->nargs; d++)
		free_axes(x->args[d], &none, &fv);
	for (int i = 0; i < fv.n; i++)
		points *= (double)((ts_axis *)fv.v[i])->extent;
	if (!split || fv.n > TS_MAX_DIMS || points > 2 * elems)
		return x;
	for (int i = 0; i < fv.n; i++)
		axes[i] = fv.v[i];
	c->changed = true;
	return extract_over(c, site, x, "gather", fv.n, axes, NULL);
}

/* Return the body "e" of a reduction of "site" with every read through
 * divisions of a reduction axis replaced by a load of a gather stage
 * (gather_read).  Arms of selects and right operands of && and || are
 * not entered: a read there may be out of bounds where not chosen. */
static ts_expr *gather_reads(struct canon *c, struct site *site, ts_expr *e)
{
	ts_expr *a, *b = NULL;

	if (!e || e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT ||
	    e->kind == TS_EXPR_VAR || e->kind == TS_EXPR_REDUCE ||
	    e->kind == TS_EXPR_SELECT || (e->kind == TS_EXPR_BINARY &&
	    (e->op == TS_OP_AND || e->op == TS_OP_OR)))
		return e;
	if (e->kind == TS_EXPR_LOAD)
		return gather_read(c, site, e);
	if (!(a = gather_reads(c, site, e->a)) ||
	    (e->b && !(b = gather_reads(c, site, e->b))))
		return NULL;
	return with_operands(e, a, b, e->c);
}

/* Move the gathered reads of the reduction at the root of "s" into
 * stages of their own (gather_reads). */
static ts_status gather_stage_reads(struct canon *c, ts_stage *s)
{
	return reduce_body_pass(c, s, gather_reads);
}

/* Register the stage "s" in "c" when it is a reduction at its root, so
 * that an equal nested reduction loads from it. */
static void register_stage(struct canon *c, ts_stage *s)
{
	if (s->body->kind != TS_EXPR_REDUCE || ts_expr_has_reduce(s->body->a))
		return;
	ts_vec_push(&c->keys, reduction_key(s->ndim, s->axes, s->body));
	ts_vec_push(&c->shared, s->out);
}

/* Return the elementwise expression "e" of "site" with every && or ||
 * whose right operand reads memory out of bounds somewhere (a guarded
 * mask) moved into a stage of its own, unless it is the whole body.
 * Evaluated in the stage that uses it, such a guard is a branch for
 * every element and keeps the whole stage from vectorising; as its own
 * stage, the mask can be computed in one pass (measured on an AVX2
 * target: a select under such a mask, 4.3 ms in one statement against
 * 1.0 ms with the mask a stage).  Arms of selects and right operands
 * are not entered: what they compute runs only where chosen. */
static ts_expr *mask_out(struct canon *c, struct site *site, ts_expr *e)
{
	ts_expr *a, *b;
	bool logic;

	if (!e || e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT ||
	    e->kind == TS_EXPR_VAR || e->kind == TS_EXPR_LOAD)
		return e;
	b = e->b;
	logic = e->kind == TS_EXPR_BINARY && (e->op == TS_OP_AND ||
		e->op == TS_OP_OR);
	if (logic && e != site->stage->body && reads_memory(e->b) &&
	    !ts_expr_safe_everywhere(e->b)) {
		c->changed = true;
		return extract(c, site, e, "mask");
	}
	if (!(a = mask_out(c, site, e->a)))
		return NULL;
	if (e->kind == TS_EXPR_BINARY && !logic && !(b = mask_out(c, site,
	    e->b)))
		return NULL;
	return with_operands(e, a, b, e->c);
}

/* Move the guarded masks of the elementwise stage "s" out (mask_out). */
static ts_status mask_stage(struct canon *c, ts_stage *s)
{
	struct site site = { s };
	ts_expr *body;

	if (s->body->kind == TS_EXPR_REDUCE)
		return TS_OK;
	if (!(body = mask_out(c, &site, s->body)))
		return TS_ERROR;
	return body == s->body ? TS_OK : ts_stage_set_body(c->ctx, s, body);
}

/* Bring the stage "s" to canonical form. */
static ts_status canon_stage(struct canon *c, ts_stage *s)
{
	struct site site = { s };
	ts_expr *body = s->body;

	if (body->kind == TS_EXPR_REDUCE)
		body = rewrite_reduce_body(c, &site, body);
	else
		body = rewrite(c, &site, body);
	if (!body)
		return TS_ERROR;
	if (body != s->body && ts_stage_set_body(c->ctx, s, body) < 0)
		return TS_ERROR;
	if (pad_stage_reads(c, s) < 0 || gather_stage_reads(c, s) < 0 ||
	    hoist_stage(c, s) < 0 || mask_stage(c, s) < 0)
		return TS_ERROR;
	register_stage(c, s);
	return TS_OK;
}

/* A transcendental function or a power met in a stage's body, evaluated
 * wherever the stage is (not in an arm of a select, not in the right
 * operand of && or ||), with the axes it depends on in the order they
 * first appear in it. */
struct dear {
	ts_stage *stage;
	ts_expr *e;
	ts_expr *body;		/* "e" with every axis of extent 1 as 0 */
	char *key;		/* reduction_key of "body" over "axes" */
	bool whole;		/* "e" is the whole body of an elementwise
				 * stage */
	int naxes;
	ts_axis *axes[TS_MAX_DIMS];
};

/* Whether "e" calls, at its root, a function dearer than a few
 * arithmetic instructions (a root is not). */
static bool dear_root(const ts_expr *e)
{
	if (e->kind == TS_EXPR_UNARY)
		return ts_op_is_special(e->op) && e->op != TS_OP_SQRT &&
			e->op != TS_OP_RSQRT;
	return e->kind == TS_EXPR_BINARY && e->op == TS_OP_POW;
}

/* Whether "e" calls such a function anywhere. */
static bool calls_dear(const ts_expr *e)
{
	if (!e || e->kind == TS_EXPR_LOAD)
		return false;
	return dear_root(e) || calls_dear(e->a) || calls_dear(e->b) ||
		calls_dear(e->c);
}

/* "e" with every axis of extent 1 replaced by 0, the one value it takes
 * (an importer keeps a reduced dimension as such an axis, "M[i, j0]", in
 * one stage and writes "M[i, 0]" in another). */
static ts_expr *zero_unit_axes(ts_ctx *ctx, ts_expr *e)
{
	ts_expr *c;

	if (!e)
		return NULL;
	if (e->kind == TS_EXPR_VAR)
		return e->axis->extent == 1 ? ts_int(ctx, 0) : e;
	if (e->kind != TS_EXPR_LOAD)
		return with_operands(e, zero_unit_axes(ctx, e->a),
			zero_unit_axes(ctx, e->b), zero_unit_axes(ctx, e->c));
	c = expr_copy(e);
	for (int i = 0; i < e->nargs; i++)
		c->args[i] = zero_unit_axes(ctx, e->args[i]);
	return c;
}

/* Add to "out" every subexpression of "e" (in stage "s") that calls a
 * dear function and is evaluated wherever "s" is. */
static void collect_dear(struct canon *c, ts_stage *s, ts_expr *e,
	ts_vec *out)
{
	ts_vec fv = { 0 }, none = { 0 };
	ts_expr *body;

	if (!e || e->kind == TS_EXPR_LOAD || e->kind == TS_EXPR_VAR ||
	    e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT ||
	    !calls_dear(e))
		return;
	if (e->kind == TS_EXPR_SELECT || e->kind == TS_EXPR_REDUCE ||
	    (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_AND ||
	    e->op == TS_OP_OR))) {
		collect_dear(c, s, e->a, out);
		return;
	}
	body = zero_unit_axes(c->ctx, e);
	free_axes(body, &none, &fv);
	/* Stored in its own type, a value of a narrower float would be
	 * rounded where the stage computing it keeps it wider. */
	if ((e->dtype == TS_F32 || e->dtype == TS_F64) && fv.n > 0 &&
	    fv.n <= TS_MAX_DIMS && !ts_expr_has_reduce(e)) {
		struct dear *d = ts_new(struct dear);
		d->stage = s;
		d->e = e;
		d->body = body;
		d->whole = e == s->body;
		d->naxes = fv.n;
		for (int i = 0; i < fv.n; i++)
			d->axes[i] = fv.v[i];
		d->key = reduction_key(d->naxes, d->axes, body);
		ts_vec_push(out, d);
	}
	collect_dear(c, s, e->a, out);
	collect_dear(c, s, e->b, out);
	collect_dear(c, s, e->c, out);
}

/* Add to "all" the stage "s" and every stage it reads, once each. */
static void reach_stages(ts_stage *s, ts_vec *all);

/* Add to "all" the stages whose outputs "e" loads. */
static void reach_loads(const ts_expr *e, ts_vec *all)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD) {
		if (e->tensor->stage)
			reach_stages(e->tensor->stage, all);
		for (int i = 0; i < e->nargs; i++)
			reach_loads(e->args[i], all);
		return;
	}
	reach_loads(e->a, all);
	reach_loads(e->b, all);
	reach_loads(e->c, all);
}

static void reach_stages(ts_stage *s, ts_vec *all)
{
	if (vec_has(all, s))
		return;
	ts_vec_push(all, s);
	reach_loads(s->body, all);
}

/* The bytes a shared subexpression is stored in.  A stage writes it once
 * and two read it back, which pays while it stays in a core's cache
 * (measured on an AMD Zen 4, softmax over rows of 1000: 1.23x faster at
 * 0.5 MiB, 1.13x at 4 MiB, 1.3x slower at 16 MiB; 1 MiB is the L2 of
 * most cores seen, half of Zen 3's is less); under 1024 values the work
 * saved (the softmax of 4 x 10: 0.2 us either way) is less than a stage
 * of its own costs a network, one more task to call. */
enum { SHARED_MIN_BYTES = 4 << 10, SHARED_MAX_BYTES = 1 << 20 };

/* The bytes "d" takes stored. */
static double dear_bytes(const struct dear *d)
{
	double n = (double)ts_dtype_size(d->e->dtype);

	for (int i = 0; i < d->naxes; i++)
		n *= (double)d->axes[i]->extent;
	return n;
}

/* The occurrence of "ds" whose key is the longest among those met in two
 * stages or more (the largest common part) and small enough to store,
 * or NULL. */
static struct dear *widest_shared(const ts_vec *ds)
{
	struct dear *best = NULL;

	for (int i = 0; i < ds->n; i++) {
		struct dear *a = ds->v[i];
		bool shared = false;
		if ((best && strlen(a->key) <= strlen(best->key)) ||
		    dear_bytes(a) < SHARED_MIN_BYTES ||
		    dear_bytes(a) > SHARED_MAX_BYTES)
			continue;
		for (int j = 0; j < ds->n && !shared; j++) {
			struct dear *b = ds->v[j];
			shared = b->stage != a->stage && !strcmp(a->key, b->key);
		}
		if (shared)
			best = a;
	}
	return best;
}

/* Return "e" with each node of "from" ("n") replaced by the same entry
 * of "to". */
static ts_expr *replace_nodes(ts_expr *e, int n, ts_expr *const *from,
	ts_expr *const *to)
{
	ts_expr *c;

	if (!e)
		return NULL;
	for (int i = 0; i < n; i++)
		if (e == from[i])
			return to[i];
	if (e->kind == TS_EXPR_LOAD || e->kind == TS_EXPR_VAR ||
	    e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT)
		return e;
	c = with_operands(e, replace_nodes(e->a, n, from, to),
		replace_nodes(e->b, n, from, to),
		replace_nodes(e->c, n, from, to));
	return c;
}

/* The tensor computing the occurrences of "key" in "ds": an elementwise
 * stage whose whole body it is, over those axes, or a new stage named
 * after the stage of "first".  "*perm"[q] receives the position, among
 * the axes of an occurrence, of the tensor's dimension q. */
static ts_tensor *shared_tensor(struct canon *c, const ts_vec *ds,
	struct dear *first, int *perm)
{
	struct site site = { first->stage };
	ts_axis *own[TS_MAX_DIMS];
	ts_tensor *t;

	for (int i = 0; i < ds->n; i++) {
		struct dear *d = ds->v[i];
		bool all = d->whole && d->naxes == d->stage->ndim;
		if (strcmp(d->key, first->key))
			continue;
		for (int q = 0; all && q < d->stage->ndim; q++) {
			perm[q] = -1;
			for (int p = 0; p < d->naxes; p++)
				if (d->axes[p] == d->stage->axes[q])
					perm[q] = p;
			all = perm[q] >= 0;
		}
		if (all)
			return d->stage->out;
	}
	for (int p = 0; p < first->naxes; p++) {
		own[p] = ts_axis_new(c->ctx, first->axes[p]->name,
			first->axes[p]->extent);
		perm[p] = p;
	}
	t = stage_new(c, fresh_name(c, &site, "shared"), first->naxes, own,
		subst(first->body, first->naxes, first->axes, own));
	if (t)
		t->stage->line = first->stage->line;
	return t;
}

/* Replace in each stage of "all" the occurrences of the key of "first"
 * (in "ds") by loads of "t" (dimensions ordered by "perm"). */
static ts_status load_shared(struct canon *c, const ts_vec *all,
	const ts_vec *ds, struct dear *first, ts_tensor *t, const int *perm)
{
	for (int k = 0; k < all->n; k++) {
		ts_stage *s = all->v[k];
		ts_vec from = { 0 }, to = { 0 };
		ts_expr *body;
		if (s == t->stage)
			continue;
		for (int i = 0; i < ds->n; i++) {
			struct dear *d = ds->v[i];
			ts_expr *idx[TS_MAX_DIMS];
			if (d->stage != s || strcmp(d->key, first->key))
				continue;
			for (int q = 0; q < t->ndim; q++)
				idx[q] = ts_var(c->ctx, d->axes[perm[q]]);
			ts_vec_push(&from, d->e);
			ts_vec_push(&to, ts_load(c->ctx, t, t->ndim, idx));
		}
		if (!from.n)
			continue;
		body = replace_nodes(s->body, from.n, (ts_expr **)from.v,
			(ts_expr **)to.v);
		if (ts_stage_set_body(c->ctx, s, body) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

/* Compute once what several stages compute alike: a subexpression that
 * calls a transcendental function or a power, met in two stages or more
 * over the same index space (up to the names of the axes), becomes a
 * stage of its own that each reads (or the stage that already computes
 * it whole).  A softmax written as its formula computes each exponential
 * twice, for the sum and for the quotient (measured on an AMD Zen 4:
 * 128 x 1000, 0.084 ms against 0.068 ms with the exponentials a stage);
 * a stored exponential is exactly the value each stage computed.  Only
 * what takes SHARED_MIN_BYTES to SHARED_MAX_BYTES is stored. */
static ts_status share_dear(struct canon *c, int nstages,
	ts_stage *const *stages)
{
	ts_vec all = { 0 };

	for (int i = 0; i < nstages; i++)
		reach_stages(stages[i], &all);
	for (;;) {
		ts_vec ds = { 0 };
		struct dear *first;
		ts_tensor *t;
		int perm[TS_MAX_DIMS];
		for (int k = 0; k < all.n; k++)
			collect_dear(c, all.v[k], ((ts_stage *)all.v[k])->body,
				&ds);
		if (!(first = widest_shared(&ds)))
			return TS_OK;
		if (!(t = shared_tensor(c, &ds, first, perm)) ||
		    load_shared(c, &all, &ds, first, t, perm) < 0)
			return TS_ERROR;
		if (!vec_has(&all, t->stage))
			ts_vec_push(&all, t->stage);
		c->changed = true;
	}
}

ts_status ts_canonicalize(ts_ctx *ctx, int nstages, ts_stage *const *stages,
	int nplaceholders, ts_tensor *const *placeholders, bool *changed)
{
	struct canon c = { ctx };

	for (int i = 0; i < nplaceholders; i++)
		ts_vec_push(&c.names, (char *)placeholders[i]->name);
	for (int i = 0; i < nstages; i++)
		ts_vec_push(&c.names, (char *)stages[i]->name);
	for (int i = 0; i < nstages; i++)
		if (canon_stage(&c, stages[i]) < 0)
			return TS_ERROR;
	if (share_dear(&c, nstages, stages) < 0)
		return TS_ERROR;
	*changed = c.changed;
	return TS_OK;
}
