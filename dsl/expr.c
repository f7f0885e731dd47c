/* Expressions: construction and type checking.
 *
 * Typing is strict: the two operands of a binary operator have the same
 * dtype, except that an untyped literal (ts_int, ts_float) takes the dtype
 * of the operand it meets.  Index variables are i64.  Comparisons give
 * bool; logical operators take bool.  Math intrinsics take floats. */
#include <config.h>

#include <math.h>
#include <stdarg.h>

#include "dsl/internal.h"

static const char *op_names[TS_OP_COUNT] = {
	[TS_OP_ADD] = "+", [TS_OP_SUB] = "-", [TS_OP_MUL] = "*",
	[TS_OP_DIV] = "/", [TS_OP_FLOORDIV] = "//", [TS_OP_MOD] = "%",
	[TS_OP_MIN] = "min", [TS_OP_MAX] = "max", [TS_OP_POW] = "pow",
	[TS_OP_LT] = "<", [TS_OP_LE] = "<=", [TS_OP_GT] = ">",
	[TS_OP_GE] = ">=", [TS_OP_EQ] = "==", [TS_OP_NE] = "!=",
	[TS_OP_AND] = "&&", [TS_OP_OR] = "||",
	[TS_OP_NEG] = "-", [TS_OP_NOT] = "!", [TS_OP_EXP] = "exp",
	[TS_OP_LOG] = "log", [TS_OP_SQRT] = "sqrt", [TS_OP_RSQRT] = "rsqrt",
	[TS_OP_TANH] = "tanh", [TS_OP_SIGMOID] = "sigmoid",
	[TS_OP_ERF] = "erf", [TS_OP_ABS] = "abs", [TS_OP_FLOOR] = "floor",
	[TS_OP_ROUND] = "round", [TS_OP_SIN] = "sin", [TS_OP_COS] = "cos",
	[TS_OP_TAN] = "tan", [TS_OP_ASIN] = "asin", [TS_OP_ACOS] = "acos",
	[TS_OP_ATAN] = "atan", [TS_OP_SINH] = "sinh", [TS_OP_COSH] = "cosh",
	[TS_OP_ASINH] = "asinh", [TS_OP_ACOSH] = "acosh",
	[TS_OP_ATANH] = "atanh", [TS_OP_CEIL] = "ceil", [TS_OP_SIGN] = "sign",
	[TS_OP_ISNAN] = "isnan", [TS_OP_ISINF] = "isinf",
};

static const char *reducer_names[TS_RED_COUNT] = {
	[TS_RED_SUM] = "sum", [TS_RED_MAX] = "max",
	[TS_RED_MIN] = "min", [TS_RED_PROD] = "prod",
};

bool ts_expr_has_reduce(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_REDUCE)
		return true;
	for (int i = 0; e->kind == TS_EXPR_LOAD && i < e->nargs; i++)
		if (ts_expr_has_reduce(e->args[i]))
			return true;
	return ts_expr_has_reduce(e->a) || ts_expr_has_reduce(e->b) ||
		ts_expr_has_reduce(e->c);
}

/* Whether "a" and "b" are the same expression, node by node. */
bool ts_expr_equal(const ts_expr *a, const ts_expr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || a->dtype != b->dtype)
		return false;
	switch (a->kind) {
	case TS_EXPR_INT:
		return a->ival == b->ival;
	case TS_EXPR_FLOAT:
		return a->fval == b->fval;
	case TS_EXPR_VAR:
		return a->axis == b->axis;
	case TS_EXPR_LOAD:
		if (a->tensor != b->tensor || a->nargs != b->nargs)
			return false;
		for (int i = 0; i < a->nargs; i++)
			if (!ts_expr_equal(a->args[i], b->args[i]))
				return false;
		return true;
	case TS_EXPR_REDUCE:
		return false;
	default:
		return a->op == b->op && ts_expr_equal(a->a, b->a) &&
			ts_expr_equal(a->b, b->b) && ts_expr_equal(a->c, b->c);
	}
}

const char *ts_op_name(ts_op op)
{
	return (unsigned)op < TS_OP_COUNT ? op_names[op] : "?";
}

const char *ts_reducer_name(ts_reducer r)
{
	return (unsigned)r < TS_RED_COUNT ? reducer_names[r] : "?";
}

bool ts_op_is_unary(ts_op op)
{
	return op >= TS_OP_NEG;
}

bool ts_op_is_comparison(ts_op op)
{
	return op >= TS_OP_LT && op <= TS_OP_NE;
}

bool ts_op_is_special(ts_op op)
{
	return op >= TS_OP_EXP && op <= TS_OP_ATANH;
}

/* Return a new axis named "name" over [0, "extent"). */
static ts_axis *axis_new(ts_ctx *ctx, const char *name, int64_t extent,
	bool reduce)
{
	ts_axis *a;

	if (!name || !*name) {
		ts_ctx_set_error(ctx, "an axis needs a name");
		return NULL;
	}
	if (extent < 0) {
		ts_ctx_set_error(ctx, "axis '%s' has negative extent %lld",
			name, (long long)extent);
		return NULL;
	}
	a = ts_new(ts_axis);
	a->name = ts_strdup(name);
	a->extent = extent;
	a->reduce = reduce;
	a->id = ts_ctx_next_id(ctx);
	return a;
}

ts_axis *ts_axis_new(ts_ctx *ctx, const char *name, int64_t extent)
{
	return axis_new(ctx, name, extent, false);
}

ts_axis *ts_reduce_axis(ts_ctx *ctx, const char *name, int64_t extent)
{
	return axis_new(ctx, name, extent, true);
}

static ts_expr *expr_new(ts_expr_kind kind, ts_dtype t)
{
	ts_expr *e = ts_new(ts_expr);

	e->kind = kind;
	e->dtype = t;
	return e;
}

ts_expr *ts_int(ts_ctx *ctx, int64_t v)
{
	/* An integer literal defaults to i32, or to i64 when it needs
	 * more bits. */
	ts_expr *e = expr_new(TS_EXPR_INT, v >= INT32_MIN && v <= INT32_MAX ?
		TS_I32 : TS_I64);

	e->literal = true;
	e->ival = v;
	e->fval = (double)v;
	return e;
}

ts_expr *ts_float(ts_ctx *ctx, double v)
{
	ts_expr *e = expr_new(TS_EXPR_FLOAT, TS_F32);

	e->literal = true;
	e->fval = v;
	return e;
}

/* A typed constant of value "v" rounded to "t". */
ts_expr *ts_const(ts_ctx *ctx, ts_dtype t, double v)
{
	ts_expr *e;

	if ((unsigned)t >= TS_DTYPE_COUNT) {
		ts_ctx_set_error(ctx, "unknown dtype %d", (int)t);
		return NULL;
	}
	v = ts_round_to_dtype(t, v);
	if (ts_dtype_is_float(t)) {
		e = expr_new(TS_EXPR_FLOAT, t);
		e->fval = v;
	} else {
		e = expr_new(TS_EXPR_INT, t);
		e->ival = ts_float_to_int(t, v);
		e->fval = v;
	}
	return e;
}

ts_expr *ts_var(ts_ctx *ctx, ts_axis *axis)
{
	ts_expr *e;

	if (!axis)
		return NULL;
	e = expr_new(TS_EXPR_VAR, TS_I64);
	e->axis = axis;
	return e;
}

/* The integer constant "v" of dtype "t", wrapped to it like a C cast. */
static ts_expr *int_const(ts_dtype t, int64_t v)
{
	ts_expr *e = expr_new(TS_EXPR_INT, t);

	e->ival = ts_int_wrap(t, v);
	e->fval = ts_int_to_double(t, e->ival);
	return e;
}

/* Whether the integer constant "x" is less than "y", both of dtype "t". */
static bool int_less(ts_dtype t, int64_t x, int64_t y)
{
	return t == TS_U64 ? (uint64_t)x < (uint64_t)y : x < y;
}

/* Return the untyped literal "e" given the dtype "t", or NULL with an
 * error when its value does not belong to "t"; an integer literal keeps
 * all its 64 bits, which a double would round. */
static ts_expr *retype_literal(ts_ctx *ctx, ts_expr *e, ts_dtype t)
{
	if (t == TS_BOOL) {
		ts_ctx_set_error(ctx, "dtype mismatch: numeric literal %g "
			"used with a bool operand", e->fval);
		return NULL;
	}
	if (e->kind == TS_EXPR_FLOAT && !ts_dtype_is_float(t) &&
	    e->fval != floor(e->fval)) {
		ts_ctx_set_error(ctx, "dtype mismatch: literal %g used with "
			"an %s operand (cast it, or write an integer)",
			e->fval, ts_dtype_name(t));
		return NULL;
	}
	if (e->kind == TS_EXPR_INT && ts_dtype_is_int(t))
		return int_const(t, e->ival);
	return ts_const(ctx, t, e->fval);
}

/* Give "*a" and "*b" one dtype, retyping an untyped literal; return the
 * common dtype in "*t" and whether both stay literal in "*lit".  Two
 * integer literals share i32, or i64 when one of them needs 64 bits. */
static ts_status unify(ts_ctx *ctx, const char *what, ts_expr **a,
	ts_expr **b, ts_dtype *t, bool *lit)
{
	*lit = false;
	if ((*a)->literal && (*b)->literal) {
		*lit = true;
		if ((*a)->kind == TS_EXPR_FLOAT || (*b)->kind == TS_EXPR_FLOAT)
			*t = TS_F32;
		else if ((*a)->dtype == TS_I64 || (*b)->dtype == TS_I64)
			*t = TS_I64;
		else
			*t = TS_I32;
		return TS_OK;
	}
	if ((*a)->literal) {
		*a = retype_literal(ctx, *a, (*b)->dtype);
	} else if ((*b)->literal) {
		*b = retype_literal(ctx, *b, (*a)->dtype);
	} else if ((*a)->dtype != (*b)->dtype) {
		return ts_ctx_set_error(ctx, "dtype mismatch: %s %s %s "
			"(cast one operand explicitly)",
			ts_dtype_name((*a)->dtype), what,
			ts_dtype_name((*b)->dtype));
	}
	if (!*a || !*b)
		return TS_ERROR;
	*t = (*a)->dtype;
	return TS_OK;
}

/* Report that folding the literals "x" "op" "y" overflows 64 bits. */
static ts_status literal_overflow(ts_ctx *ctx, ts_op op, int64_t x,
	int64_t y)
{
	return ts_ctx_set_error(ctx, "integer overflow in a constant "
		"expression: %lld %s %lld does not fit in 64 bits",
		(long long)x, ts_op_name(op), (long long)y);
}

/* Fold the binary "op" over the integer literals "a" and "b" exactly into
 * "*out", left NULL when "op" is not folded; an error when the result
 * does not fit in 64 bits. */
static ts_status fold_int_literals(ts_ctx *ctx, ts_op op, const ts_expr *a,
	const ts_expr *b, ts_expr **out)
{
	int64_t x = a->ival, y = b->ival, r;
	bool overflow = false;

	switch (op) {
	case TS_OP_ADD: overflow = __builtin_add_overflow(x, y, &r); break;
	case TS_OP_SUB: overflow = __builtin_sub_overflow(x, y, &r); break;
	case TS_OP_MUL: overflow = __builtin_mul_overflow(x, y, &r); break;
	case TS_OP_MIN: r = x < y ? x : y; break;
	case TS_OP_MAX: r = x > y ? x : y; break;
	default: return TS_OK;
	}
	if (overflow)
		return literal_overflow(ctx, op, x, y);
	*out = ts_int(ctx, r);
	return TS_OK;
}

/* Fold the binary "op" over two literals "a" and "b" into "*out", left
 * NULL when it is not foldable without a dtype; an error when integers
 * overflow. */
static ts_status fold_literals(ts_ctx *ctx, ts_op op, const ts_expr *a,
	const ts_expr *b, ts_expr **out)
{
	double x = a->fval, y = b->fval, r;

	*out = NULL;
	if (a->kind == TS_EXPR_INT && b->kind == TS_EXPR_INT)
		return fold_int_literals(ctx, op, a, b, out);
	switch (op) {
	case TS_OP_ADD: r = x + y; break;
	case TS_OP_SUB: r = x - y; break;
	case TS_OP_MUL: r = x * y; break;
	case TS_OP_MIN: r = x < y ? x : y; break;
	case TS_OP_MAX: r = x > y ? x : y; break;
	default: return TS_OK;
	}
	*out = ts_float(ctx, r);
	return TS_OK;
}

/* Whether "e" is a constant, an untyped literal or a typed one. */
static bool is_constant(const ts_expr *e)
{
	return e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT;
}

/* Fold the binary "op" over the typed constants "a" and "b" of dtype
 * "t" as the compiled code computes it (integers wrap, floats round to
 * "t" after each operation), or return NULL when "op" is not folded.
 * Folding typed constants as eagerly as literals keeps a printed DAG
 * equal to the one it was printed from. */
static ts_expr *fold_typed(ts_ctx *ctx, ts_op op, const ts_expr *a,
	const ts_expr *b, ts_dtype t)
{
	if (ts_dtype_is_int(t)) {
		uint64_t x = (uint64_t)a->ival, y = (uint64_t)b->ival;

		switch (op) {
		case TS_OP_ADD: return int_const(t, (int64_t)(x + y));
		case TS_OP_SUB: return int_const(t, (int64_t)(x - y));
		case TS_OP_MUL: return int_const(t, (int64_t)(x * y));
		case TS_OP_MIN: return int_const(t, int_less(t, b->ival,
			a->ival) ? b->ival : a->ival);
		case TS_OP_MAX: return int_const(t, int_less(t, a->ival,
			b->ival) ? b->ival : a->ival);
		default: return NULL;
		}
	}
	if (!ts_dtype_is_float(t))
		return NULL;
	switch (op) {
	/* One rounding of the exact double result: double has more than
	 * twice the bits of f32 and f16, so this is the f32 result. */
	case TS_OP_ADD: return ts_const(ctx, t, a->fval + b->fval);
	case TS_OP_SUB: return ts_const(ctx, t, a->fval - b->fval);
	case TS_OP_MUL: return ts_const(ctx, t, a->fval * b->fval);
	default: return NULL;
	}
}

ts_expr *ts_binary(ts_ctx *ctx, ts_op op, ts_expr *a, ts_expr *b)
{
	ts_expr *e, *folded;
	ts_dtype t;
	bool lit;

	if (!a || !b)
		return NULL;
	if ((unsigned)op >= TS_OP_COUNT || ts_op_is_unary(op)) {
		ts_ctx_set_error(ctx, "'%s' is not a binary operator",
			ts_op_name(op));
		return NULL;
	}
	if (a->literal && b->literal) {
		if (fold_literals(ctx, op, a, b, &folded) < 0)
			return NULL;
		if (folded)
			return folded;
	}
	if (unify(ctx, ts_op_name(op), &a, &b, &t, &lit) < 0)
		return NULL;
	if (op == TS_OP_AND || op == TS_OP_OR) {
		if (t != TS_BOOL) {
			ts_ctx_set_error(ctx, "'%s' needs bool operands, got %s",
				ts_op_name(op), ts_dtype_name(t));
			return NULL;
		}
	} else if (t == TS_BOOL && op != TS_OP_EQ && op != TS_OP_NE) {
		ts_ctx_set_error(ctx, "'%s' needs numeric operands, got bool",
			ts_op_name(op));
		return NULL;
	}
	if ((op == TS_OP_DIV || op == TS_OP_POW) && !lit &&
	    !ts_dtype_is_float(t)) {
		ts_ctx_set_error(ctx, "'%s' needs floating-point operands, got "
			"%s%s", ts_op_name(op), ts_dtype_name(t),
			op == TS_OP_DIV ? " (integer division is '//')" : "");
		return NULL;
	}
	if (!lit && is_constant(a) && is_constant(b) &&
	    (folded = fold_typed(ctx, op, a, b, t)))
		return folded;
	if (lit && (op == TS_OP_DIV || op == TS_OP_POW)) {
		/* 1 / 2 between literals is a float literal division. */
		a = ts_float(ctx, a->fval);
		b = ts_float(ctx, b->fval);
		t = TS_F32;
	}
	e = expr_new(TS_EXPR_BINARY, ts_op_is_comparison(op) ? TS_BOOL : t);
	e->op = op;
	e->a = a;
	e->b = b;
	if (lit) {
		/* Literals that do not fold take their default dtype. */
		e->a = retype_literal(ctx, a, t);
		e->b = retype_literal(ctx, b, t);
		if (!e->a || !e->b)
			return NULL;
	}
	return e;
}

/* Whether the unary "op" is a math intrinsic defined on floats only. */
static bool unary_needs_float(ts_op op)
{
	return op != TS_OP_NEG && op != TS_OP_NOT && op != TS_OP_ABS &&
		op != TS_OP_SIGN;
}

/* The dtype of the unary "op" on a value of dtype "t": the tests of a
 * float give bool, every other operator keeps "t". */
static ts_dtype unary_dtype(ts_op op, ts_dtype t)
{
	return op == TS_OP_ISNAN || op == TS_OP_ISINF ? TS_BOOL : t;
}

ts_expr *ts_unary(ts_ctx *ctx, ts_op op, ts_expr *a)
{
	ts_expr *e;

	if (!a)
		return NULL;
	if ((unsigned)op >= TS_OP_COUNT || !ts_op_is_unary(op)) {
		ts_ctx_set_error(ctx, "'%s' is not a unary operator",
			ts_op_name(op));
		return NULL;
	}
	if (a->literal) {
		if (op == TS_OP_NEG && a->kind == TS_EXPR_INT &&
		    a->ival == INT64_MIN) {
			ts_ctx_set_error(ctx, "integer overflow in a constant "
				"expression: -(%lld) does not fit in 64 bits",
				(long long)a->ival);
			return NULL;
		}
		if (op == TS_OP_NEG)
			return a->kind == TS_EXPR_INT ? ts_int(ctx, -a->ival)
				: ts_float(ctx, -a->fval);
		a = retype_literal(ctx, a, unary_needs_float(op) ? TS_F32
			: a->dtype);
		if (!a)
			return NULL;
	}
	if (op == TS_OP_NEG && is_constant(a) && a->dtype != TS_BOOL)
		return a->kind == TS_EXPR_INT ? int_const(a->dtype,
			(int64_t)(0 - (uint64_t)a->ival)) :
			ts_const(ctx, a->dtype, -a->fval);
	if (op == TS_OP_NOT && a->dtype != TS_BOOL) {
		ts_ctx_set_error(ctx, "'!' needs a bool operand, got %s",
			ts_dtype_name(a->dtype));
		return NULL;
	}
	if (op != TS_OP_NOT && a->dtype == TS_BOOL) {
		ts_ctx_set_error(ctx, "'%s' needs a numeric operand, got bool",
			ts_op_name(op));
		return NULL;
	}
	if (unary_needs_float(op) && !ts_dtype_is_float(a->dtype)) {
		ts_ctx_set_error(ctx, "'%s' needs a floating-point operand, "
			"got %s (cast it first)", ts_op_name(op),
			ts_dtype_name(a->dtype));
		return NULL;
	}
	e = expr_new(TS_EXPR_UNARY, unary_dtype(op, a->dtype));
	e->op = op;
	e->a = a;
	return e;
}

ts_expr *ts_select(ts_ctx *ctx, ts_expr *cond, ts_expr *a, ts_expr *b)
{
	ts_expr *e;
	ts_dtype t;
	bool lit;

	if (!cond || !a || !b)
		return NULL;
	if (cond->dtype != TS_BOOL || cond->literal) {
		ts_ctx_set_error(ctx, "select: the condition must be bool, "
			"got %s", cond->literal ? "a number"
			: ts_dtype_name(cond->dtype));
		return NULL;
	}
	if (unify(ctx, "select", &a, &b, &t, &lit) < 0)
		return NULL;
	if (lit) {
		a = retype_literal(ctx, a, t);
		b = retype_literal(ctx, b, t);
		if (!a || !b)
			return NULL;
	}
	e = expr_new(TS_EXPR_SELECT, t);
	e->a = cond;
	e->b = a;
	e->c = b;
	return e;
}

/* The integer "v" of dtype "from" converted to the float dtype "t" with
 * the roundings of compiled code: one to f64 or f32, then to bf16 or
 * f16. */
static double int_to_float(ts_dtype from, int64_t v, ts_dtype t)
{
	if (t == TS_F64)
		return ts_int_to_double(from, v);
	return from == TS_U64 ? (double)(float)(uint64_t)v : (double)(float)v;
}

ts_expr *ts_cast(ts_ctx *ctx, ts_dtype t, ts_expr *a)
{
	ts_expr *e;

	if (!a)
		return NULL;
	if ((unsigned)t >= TS_DTYPE_COUNT) {
		ts_ctx_set_error(ctx, "cast to an unknown dtype %d", (int)t);
		return NULL;
	}
	/* A float literal cast to an integer saturates, as at run time. */
	if (a->literal && a->kind == TS_EXPR_FLOAT && ts_dtype_is_int(t))
		return int_const(t, ts_float_to_int(t, a->fval));
	if (a->literal && a->kind == TS_EXPR_INT && ts_dtype_is_int(t))
		/* Exactly, wrapping: a double would round past 2^53, and
		 * u64(-1) is how a u64 above INT64_MAX is written. */
		return int_const(t, a->ival);
	if (a->literal)
		return ts_const(ctx, t, a->fval);
	if (a->dtype == t)
		return a;
	if (a->kind == TS_EXPR_INT && ts_dtype_is_int(t))
		return int_const(t, a->ival);
	if (a->kind == TS_EXPR_INT)
		/* Straight from the integer: through a double an i64 would
		 * be rounded twice (bf16 and f16 round through f32). */
		return ts_const(ctx, t, int_to_float(a->dtype, a->ival, t));
	if (a->kind == TS_EXPR_FLOAT)
		return ts_dtype_is_int(t) ? int_const(t,
			ts_float_to_int(t, a->fval)) : ts_const(ctx, t, a->fval);
	e = expr_new(TS_EXPR_CAST, t);
	e->a = a;
	return e;
}

ts_expr *ts_reduce(ts_ctx *ctx, ts_reducer reducer, int n,
	ts_axis *const *axes, ts_expr *body)
{
	ts_expr *e;

	if (!body)
		return NULL;
	if ((unsigned)reducer >= TS_RED_COUNT) {
		ts_ctx_set_error(ctx, "unknown reducer %d", (int)reducer);
		return NULL;
	}
	if (n <= 0) {
		ts_ctx_set_error(ctx, "%s: a reduction needs at least one axis",
			ts_reducer_name(reducer));
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (!axes[i])
			return NULL;
		if (!axes[i]->reduce) {
			ts_ctx_set_error(ctx, "%s: axis '%s' is a spatial axis, "
				"not a reduction axis",
				ts_reducer_name(reducer), axes[i]->name);
			return NULL;
		}
		for (int j = 0; j < i; j++)
			if (axes[j] == axes[i]) {
				ts_ctx_set_error(ctx, "%s: reduction axis '%s' "
					"is bound twice",
					ts_reducer_name(reducer), axes[i]->name);
				return NULL;
			}
	}
	if (body->literal)
		body = retype_literal(ctx, body, body->dtype);
	if (body->dtype == TS_BOOL) {
		ts_ctx_set_error(ctx, "%s: cannot reduce bool values (cast "
			"them first)", ts_reducer_name(reducer));
		return NULL;
	}
	e = expr_new(TS_EXPR_REDUCE, body->dtype);
	e->reducer = reducer;
	e->nraxes = n;
	e->raxes = ts_new_array(ts_axis *, n);
	memcpy(e->raxes, axes, sizeof(ts_axis *) * n);
	e->a = body;
	return e;
}

/* Check that "idx" is a valid "k"-th index of "t". */
static ts_status check_index(ts_ctx *ctx, ts_tensor *t, int k, ts_expr *idx)
{
	if (idx->literal && idx->kind == TS_EXPR_FLOAT)
		return ts_ctx_set_error(ctx, "index %d of tensor '%s' is the "
			"float %g; indices are integers", k, t->name, idx->fval);
	if (!idx->literal && !ts_dtype_is_int(idx->dtype))
		return ts_ctx_set_error(ctx, "index %d of tensor '%s' has "
			"dtype %s; indices are integers", k, t->name,
			ts_dtype_name(idx->dtype));
	if (idx->kind == TS_EXPR_INT &&
	    (idx->ival < 0 || idx->ival >= t->shape[k]))
		return ts_ctx_set_error(ctx, "constant index %lld is out of "
			"bounds for dimension %d of tensor '%s' (extent %lld)",
			(long long)idx->ival, k, t->name,
			(long long)t->shape[k]);
	return TS_OK;
}

ts_expr *ts_load(ts_ctx *ctx, ts_tensor *t, int n, ts_expr *const *idx)
{
	ts_expr *e;

	if (!t)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!idx[i])
			return NULL;
	if (n != t->ndim) {
		ts_ctx_set_error(ctx, "wrong number of indices for tensor '%s': "
			"%d given, it has %d dimension%s", t->name, n, t->ndim,
			t->ndim == 1 ? "" : "s");
		return NULL;
	}
	e = expr_new(TS_EXPR_LOAD, t->dtype);
	e->tensor = t;
	e->nargs = n;
	e->args = ts_new_array(ts_expr *, n ? n : 1);
	for (int i = 0; i < n; i++) {
		if (check_index(ctx, t, i, idx[i]) < 0)
			return NULL;
		e->args[i] = idx[i]->literal ? ts_const(ctx, TS_I64,
			idx[i]->fval) : idx[i];
	}
	return e;
}

ts_expr *ts_at(ts_ctx *ctx, ts_tensor *t, int n, ...)
{
	ts_expr *idx[TS_MAX_DIMS + 1];
	va_list ap;

	if (n > TS_MAX_DIMS + 1)
		n = TS_MAX_DIMS + 1;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		idx[i] = va_arg(ap, ts_expr *);
	va_end(ap);
	return ts_load(ctx, t, n, idx);
}

ts_expr *ts_add(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_ADD, a, b);
}

ts_expr *ts_sub(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_SUB, a, b);
}

ts_expr *ts_mul(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_MUL, a, b);
}

ts_expr *ts_div(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_DIV, a, b);
}

ts_expr *ts_floordiv(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_FLOORDIV, a, b);
}

ts_expr *ts_mod(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_MOD, a, b);
}

ts_expr *ts_min(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_MIN, a, b);
}

ts_expr *ts_max(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_MAX, a, b);
}

ts_expr *ts_clamp(ts_ctx *ctx, ts_expr *x, ts_expr *lo, ts_expr *hi)
{
	return ts_min(ctx, ts_max(ctx, x, lo), hi);
}

ts_expr *ts_sum(ts_ctx *ctx, int n, ts_axis *const *axes, ts_expr *body)
{
	return ts_reduce(ctx, TS_RED_SUM, n, axes, body);
}

ts_expr *ts_rmax(ts_ctx *ctx, int n, ts_axis *const *axes, ts_expr *body)
{
	return ts_reduce(ctx, TS_RED_MAX, n, axes, body);
}

ts_expr *ts_rmin(ts_ctx *ctx, int n, ts_axis *const *axes, ts_expr *body)
{
	return ts_reduce(ctx, TS_RED_MIN, n, axes, body);
}

ts_expr *ts_rprod(ts_ctx *ctx, int n, ts_axis *const *axes, ts_expr *body)
{
	return ts_reduce(ctx, TS_RED_PROD, n, axes, body);
}
