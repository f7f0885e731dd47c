/* Counts: operations by kind over the iteration space, distinct elements
 * read and written, arithmetic intensity. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"
#include "analysis/facts.h"

/* Return the number of points of the bounded set "set": exact when it is a
 * box or small enough to enumerate, otherwise the volume of its bounding
 * box, with "*exact" cleared. */
int64_t ts_set_count(__isl_keep isl_set *set, bool *exact)
{
	int n = isl_set_dim(set, isl_dim_set);
	isl_set *box = isl_set_universe(isl_set_get_space(set));
	int64_t vol = 1;
	isl_val *v;

	*exact = true;
	if (isl_set_is_empty(set) == isl_bool_true) {
		isl_set_free(box);
		return 0;
	}
	for (int d = 0; d < n; d++) {
		int64_t lo = ts_isl_val_i64(isl_set_dim_min_val(
			isl_set_copy(set), d));
		int64_t hi = ts_isl_val_i64(isl_set_dim_max_val(
			isl_set_copy(set), d));
		box = isl_set_lower_bound_si(box, isl_dim_set, d, lo);
		box = isl_set_upper_bound_si(box, isl_dim_set, d, hi);
		vol *= hi - lo + 1;
	}
	if (isl_set_is_subset(box, set) != isl_bool_true) {
		*exact = false;
		if (vol <= (1 << 20) && (v = isl_set_count_val(set))) {
			vol = ts_isl_val_i64(v);
			*exact = true;
		}
	}
	isl_set_free(box);
	return vol;
}

/* State of the walk that counts the operations of a stage. */
struct counter {
	const ts_stage *s;
	ts_counts *c;
};

/* Return whether "e" reads data (contains a load). */
static bool reads_data(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD)
		return true;
	return reads_data(e->a) || reads_data(e->b) || reads_data(e->c);
}

/* Return whether "e" is a multiplication. */
static bool is_mul(const ts_expr *e)
{
	return e && e->kind == TS_EXPR_BINARY && e->op == TS_OP_MUL;
}

static void count_expr(struct counter *k, const ts_expr *e, int64_t n);

int ts_special_cost(ts_op op)
{
	switch (op) {
	case TS_OP_EXP: return 29;
	case TS_OP_LOG: return 48;
	case TS_OP_SQRT: return 21;
	case TS_OP_RSQRT: return 32;
	case TS_OP_TANH: return 38;
	case TS_OP_SIGMOID: return 39;
	case TS_OP_ERF: return 77;
	case TS_OP_POW: return 384;
	case TS_OP_ATAN: case TS_OP_ASIN: case TS_OP_ACOS: return 1200;
	default: return ts_op_is_special(op) ? 470 : 1;
	}
}

int ts_special_vec_cost(ts_op op, ts_dtype t)
{
	if (t != TS_F32)
		return ts_special_cost(op);
	switch (op) {
	case TS_OP_EXP: return 16;
	case TS_OP_SIGMOID: return 30;
	case TS_OP_ERF: return 63;
	default: return ts_special_cost(op);
	}
}

/* Of "n" evaluations of the special function "e", those that differ:
 * an argument that does not depend on a spatial axis of the stage is
 * computed once for all of it, the compiler hoisting it out of that
 * loop (an rsqrt of a per-row value, used by every element of the row:
 * priced per element, it made a stage over rows of 768 rate 2x its
 * measured time). */
static int64_t distinct_calls(const struct counter *k, const ts_expr *e,
	int64_t n)
{
	for (int a = 0; a < k->s->ndim; a++) {
		int64_t x = k->s->axes[a]->extent;
		if (x > 1 && n % x == 0 && !ts_expr_uses_axis(e->a, k->s->axes[a])
		    && !(e->b && ts_expr_uses_axis(e->b, k->s->axes[a])))
			n /= x;
	}
	return n;
}

/* Count the unary "e", "n" times. */
static void count_unary(struct counter *k, const ts_expr *e, int64_t n)
{
	if (ts_op_is_special(e->op)) {
		int64_t d = distinct_calls(k, e, n);
		k->c->special += d;
		k->c->special_cost += d * ts_special_cost(e->op);
		k->c->special_vec_cost += d * ts_special_vec_cost(e->op,
			e->dtype);
	} else if (e->op == TS_OP_NEG)
		k->c->add += n;
	else if (e->op == TS_OP_ISNAN || e->op == TS_OP_ISINF)
		k->c->compare += n;
	else
		k->c->other += n;
	count_expr(k, e->a, n);
}

/* Add "n" operations of the binary "op" to the counts of "k". */
static void count_op(struct counter *k, ts_op op, int64_t n)
{
	switch (op) {
	case TS_OP_ADD: case TS_OP_SUB: k->c->add += n; break;
	case TS_OP_MUL: k->c->mul += n; break;
	case TS_OP_DIV: case TS_OP_FLOORDIV: case TS_OP_MOD:
		k->c->div += n;
		break;
	case TS_OP_POW:
		k->c->special += n;
		k->c->special_cost += n * ts_special_cost(op);
		k->c->special_vec_cost += n * ts_special_cost(op);
		break;
	case TS_OP_AND: case TS_OP_OR: k->c->other += n; break;
	default: k->c->compare += n; break;
	}
}

/* Count the binary "e", "n" times; a product feeding an add is an fma. */
static void count_binary(struct counter *k, const ts_expr *e, int64_t n)
{
	const ts_expr *m = NULL, *other = NULL;

	if (e->op == TS_OP_ADD || e->op == TS_OP_SUB) {
		m = is_mul(e->a) ? e->a : is_mul(e->b) ? e->b : NULL;
		other = m == e->a ? e->b : e->a;
	}
	if (m) {
		k->c->fma += n;
		count_expr(k, m->a, n);
		count_expr(k, m->b, n);
		count_expr(k, other, n);
		return;
	}
	count_op(k, e->op, n);
	count_expr(k, e->a, n);
	count_expr(k, e->b, n);
}

/* Count the reducer "e" whose enclosing instances number "n". */
static void count_reduce(struct counter *k, const ts_expr *e, int64_t n)
{
	for (int i = 0; i < e->nraxes; i++)
		n *= e->raxes[i]->extent;
	if (e->reducer == TS_RED_SUM && is_mul(e->a)) {
		k->c->fma += n;
		count_expr(k, e->a->a, n);
		count_expr(k, e->a->b, n);
		return;
	}
	if (e->reducer == TS_RED_SUM)
		k->c->add += n;
	else if (e->reducer == TS_RED_PROD)
		k->c->mul += n;
	else
		k->c->compare += n;
	count_expr(k, e->a, n);
}

/* Count the operations of "e", evaluated "n" times.  Loads and their
 * indices are memory traffic, not operations; a select on an affine
 * condition is control, not arithmetic. */
static void count_expr(struct counter *k, const ts_expr *e, int64_t n)
{
	if (!e)
		return;
	switch (e->kind) {
	case TS_EXPR_UNARY: count_unary(k, e, n); return;
	case TS_EXPR_BINARY: count_binary(k, e, n); return;
	case TS_EXPR_REDUCE: count_reduce(k, e, n); return;
	case TS_EXPR_CAST:
		k->c->other += n;
		count_expr(k, e->a, n);
		return;
	case TS_EXPR_SELECT:
		if (reads_data(e->a)) {
			k->c->other += n;
			count_expr(k, e->a, n);
		}
		count_expr(k, e->b, n);
		count_expr(k, e->c, n);
		return;
	default:
		return;
	}
}

/* Return the distinct elements of "t" that the accesses of "m" read. */
static int64_t distinct_read(struct ts_stage_model *m, const ts_tensor *t)
{
	isl_set *u = NULL;
	int64_t n;
	bool exact;

	for (int i = 0; i < m->nacc; i++) {
		isl_set *r;
		if (m->acc[i].tensor != t || m->acc[i].write)
			continue;
		r = isl_map_range(ts_acc_relation(m, &m->acc[i]));
		u = u ? isl_set_union(u, r) : r;
	}
	if (!u)
		return 0;
	n = ts_set_count(u, &exact);
	isl_set_free(u);
	return n;
}

/* Fill the counts of "si" from the body of its stage and the model "m". */
void ts_counts_fill(ts_stage_info *si, struct ts_stage_model *m)
{
	const ts_stage *s = si->stage;
	struct counter k = { s, &si->counts };
	ts_counts *c = &si->counts;
	int64_t moved;

	count_expr(&k, s->body, si->spatial_extent);
	c->flops = c->add + c->mul + 2 * c->fma + c->div + c->special +
		c->compare;
	for (int i = 0; i < s->ninputs; i++)
		c->bytes_read += distinct_read(m, s->inputs[i]) *
			(int64_t)ts_dtype_size(s->inputs[i]->dtype);
	c->bytes_written = ts_tensor_size(s->out) *
		(int64_t)ts_dtype_size(s->out->dtype);
	moved = c->bytes_read + c->bytes_written;
	c->intensity = moved ? (double)c->flops / (double)moved : 0.0;
}
