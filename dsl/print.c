/* Printing expressions, stages and DAGs in the .tsl syntax, and the
 * canonical form used as a workload key. */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "dsl/internal.h"

/* How names are printed: as declared, or renamed by position. */
struct printer {
	ts_buf out;
	const ts_dag *canon;	/* rename by position in this DAG, or NULL */
	const ts_stage *stage;	/* stage being printed, for axis numbers */
	int depth;		/* levels open, as the parser counts them */
	int deepest;		/* the most levels open at once */
	bool bare_i64;		/* the expression printed next reads an
				 * integer literal back as i64 */
	bool loose;		/* every i64 constant bare: text for people
				 * (loop IR, messages), not to read back */
};

static void print_expr(struct printer *p, const ts_expr *e, int prec);

/* Whether "e" is a constant, which reads back as a literal unless it is
 * printed as a cast. */
static bool is_constant(const ts_expr *e)
{
	return e->kind == TS_EXPR_INT || e->kind == TS_EXPR_FLOAT;
}

/* Print "e" into "p" at "prec"; a small i64 constant in it prints bare
 * when "sibling" is an operand beside it that is no constant (it reads
 * back as a literal retyped to i64 then), else as a cast. */
static void print_operand(struct printer *p, const ts_expr *e, int prec,
	const ts_expr *sibling)
{
	p->bare_i64 = sibling && !is_constant(sibling);
	print_expr(p, e, prec);
}

/* Open one more level of nesting, as the parser counts them, in "p". */
static void nest(struct printer *p)
{
	if (++p->depth > p->deepest)
		p->deepest = p->depth;
}

/* Close the level of nesting opened last in "p". */
static void unnest(struct printer *p)
{
	p->depth--;
}

/* Count the unary minus that prints a negative number in "p", when
 * "negative". */
static void nest_sign(struct printer *p, bool negative)
{
	if (negative) {
		nest(p);
		unnest(p);
	}
}

/* Binding strength of each binary operator; atoms bind tightest. */
enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL, PREC_UNARY,
	PREC_ATOM };

static int binary_prec(ts_op op)
{
	switch (op) {
	case TS_OP_OR: return PREC_OR;
	case TS_OP_AND: return PREC_AND;
	case TS_OP_ADD: case TS_OP_SUB: return PREC_ADD;
	case TS_OP_MUL: case TS_OP_DIV: case TS_OP_FLOORDIV: case TS_OP_MOD:
		return PREC_MUL;
	case TS_OP_MIN: case TS_OP_MAX: case TS_OP_POW: return PREC_ATOM;
	default: return PREC_CMP;
	}
}

static const char *tensor_name(struct printer *p, const ts_tensor *t)
{
	if (!p->canon)
		return t->name;
	for (int i = 0; i < p->canon->ninputs; i++)
		if (p->canon->inputs[i] == t)
			return ts_asprintf("in%d", i);
	for (int i = 0; i < p->canon->nstages; i++)
		if (p->canon->stages[i]->out == t)
			return ts_asprintf("t%d", i);
	return t->name;
}

static const char *axis_name(struct printer *p, const ts_axis *a)
{
	if (!p->canon || !p->stage)
		return a->name;
	for (int i = 0; i < p->stage->ndim; i++)
		if (p->stage->axes[i] == a)
			return ts_asprintf("s%d", i);
	for (int i = 0; i < p->stage->nraxes; i++)
		if (p->stage->raxes[i] == a)
			return ts_asprintf("r%d", i);
	return a->name;
}

/* Print the float "v" so that it reads back as a float. */
static void print_float(ts_buf *b, double v)
{
	char s[40];

	if (isinf(v)) {
		ts_buf_puts(b, v > 0 ? "inf" : "-inf");
		return;
	}
	snprintf(s, sizeof(s), "%.9g", v);
	if ((double)strtod(s, NULL) != v)
		snprintf(s, sizeof(s), "%.17g", v);
	if (!strpbrk(s, ".eEn"))
		strcat(s, ".0");
	ts_buf_puts(b, s);
}

/* Print the call "name" of the "n" arguments "x", "y", "z" into "p":
 * the operands of min, max and pow, or a condition and the two branches
 * of a select. */
static void print_call(struct printer *p, const char *name, int n,
	const ts_expr *x, const ts_expr *y, const ts_expr *z)
{
	ts_buf_printf(&p->out, "%s(", name);
	nest(p);
	print_operand(p, x, 0, n == 2 ? y : NULL);
	if (n > 1) {
		ts_buf_puts(&p->out, ", ");
		print_operand(p, y, 0, n == 2 ? x : z);
	}
	if (n > 2) {
		ts_buf_puts(&p->out, ", ");
		print_operand(p, z, 0, y);
	}
	unnest(p);
	ts_buf_putc(&p->out, ')');
}

/* Print "e" into "p", parenthesised when it binds less than "prec". */
static void print_expr(struct printer *p, const ts_expr *e, int prec)
{
	ts_buf *b = &p->out;
	bool bare_i64 = p->bare_i64;
	int mine;

	p->bare_i64 = false;
	switch (e->kind) {
	case TS_EXPR_INT:
		/* 2^63 is no literal: the least i64 reads back as a
		 * difference of two. */
		if (e->ival == INT64_MIN && (e->literal ||
		    e->dtype == TS_I64)) {
			ts_buf_printf(b, "(%" PRId64 " - 1)", e->ival + 1);
			nest(p);
			nest_sign(p, true);
			unnest(p);
		} else if (e->literal || e->dtype == TS_I32 ||
		    (e->dtype == TS_I64 && (bare_i64 || p->loose ||
		    e->ival < INT32_MIN || e->ival > INT32_MAX))) {
			ts_buf_printf(b, "%" PRId64, e->ival);
			nest_sign(p, e->ival < 0);
		} else {
			ts_buf_printf(b, "%s(%" PRId64 ")",
				ts_dtype_name(e->dtype), e->ival);
			nest(p);
			nest_sign(p, e->ival < 0);
			unnest(p);
		}
		return;
	case TS_EXPR_FLOAT:
		if (e->literal || e->dtype == TS_F32) {
			print_float(b, e->fval);
			nest_sign(p, signbit(e->fval));
		} else {
			ts_buf_printf(b, "%s(", ts_dtype_name(e->dtype));
			nest(p);
			print_float(b, e->fval);
			nest_sign(p, signbit(e->fval));
			unnest(p);
			ts_buf_putc(b, ')');
		}
		return;
	case TS_EXPR_VAR:
		ts_buf_puts(b, axis_name(p, e->axis));
		return;
	case TS_EXPR_LOAD:
		ts_buf_printf(b, "%s[", tensor_name(p, e->tensor));
		nest(p);
		for (int i = 0; i < e->nargs; i++) {
			if (i)
				ts_buf_puts(b, ", ");
			p->bare_i64 = true;	/* indices are i64 */
			print_expr(p, e->args[i], 0);
		}
		unnest(p);
		ts_buf_putc(b, ']');
		return;
	case TS_EXPR_UNARY:
		if (e->op == TS_OP_NEG || e->op == TS_OP_NOT) {
			if (prec > PREC_UNARY) {
				ts_buf_putc(b, '(');
				nest(p);
			}
			ts_buf_puts(b, ts_op_name(e->op));
			nest(p);
			print_expr(p, e->a, PREC_UNARY + 1);
			unnest(p);
			if (prec > PREC_UNARY) {
				unnest(p);
				ts_buf_putc(b, ')');
			}
		} else {
			print_call(p, ts_op_name(e->op), 1, e->a, NULL, NULL);
		}
		return;
	case TS_EXPR_BINARY:
		mine = binary_prec(e->op);
		if (mine == PREC_ATOM) {
			print_call(p, ts_op_name(e->op), 2, e->a, e->b, NULL);
			return;
		}
		if (mine < prec) {
			ts_buf_putc(b, '(');
			nest(p);
		}
		print_operand(p, e->a, mine, e->b);
		ts_buf_printf(b, " %s ", ts_op_name(e->op));
		print_operand(p, e->b, mine + 1, e->a);
		if (mine < prec) {
			unnest(p);
			ts_buf_putc(b, ')');
		}
		return;
	case TS_EXPR_SELECT:
		print_call(p, "select", 3, e->a, e->b, e->c);
		return;
	case TS_EXPR_CAST:
		print_call(p, ts_dtype_name(e->dtype), 1, e->a, NULL, NULL);
		return;
	case TS_EXPR_REDUCE:
		/* A reducer's body extends to the right as far as it can. */
		if (prec > 0) {
			ts_buf_putc(b, '(');
			nest(p);
		}
		ts_buf_printf(b, "%s(", ts_reducer_name(e->reducer));
		for (int i = 0; i < e->nraxes; i++)
			ts_buf_printf(b, "%s%s: %" PRId64, i ? ", " : "",
				axis_name(p, e->raxes[i]), e->raxes[i]->extent);
		ts_buf_puts(b, ") ");
		nest(p);
		print_expr(p, e->a, 0);
		unnest(p);
		if (prec > 0) {
			unnest(p);
			ts_buf_putc(b, ')');
		}
		return;
	default:
		ts_buf_puts(b, "?");
	}
}

char *ts_expr_to_string(const ts_expr *e)
{
	struct printer p = { .loose = true };

	ts_buf_init(&p.out);
	print_expr(&p, e, 0);
	return p.out.s;
}

int ts_expr_nesting(const ts_expr *e)
{
	struct printer p = { 0 };

	ts_buf_init(&p.out);
	print_expr(&p, e, 0);
	return p.deepest;
}

void ts_expr_print(FILE *out, const ts_expr *e)
{
	fputs(ts_expr_to_string(e), out);
}

/* Print the declaration of stage "s" into "p". */
static void print_stage(struct printer *p, const ts_stage *s, bool is_output)
{
	p->stage = s;
	ts_buf_printf(&p->out, "%s%s[", is_output ? "output " : "",
		tensor_name(p, s->out));
	for (int i = 0; i < s->ndim; i++)
		ts_buf_printf(&p->out, "%s%s: %" PRId64, i ? ", " : "",
			axis_name(p, s->axes[i]), s->axes[i]->extent);
	ts_buf_puts(&p->out, "] = ");
	print_expr(p, s->body, 0);
	ts_buf_putc(&p->out, '\n');
	p->stage = NULL;
}

void ts_stage_print(FILE *out, const ts_stage *s, bool is_output)
{
	struct printer p = { 0 };

	ts_buf_init(&p.out);
	print_stage(&p, s, is_output);
	fputs(p.out.s, out);
}

/* Print all of "dag" into "p". */
static void print_dag(struct printer *p, const ts_dag *dag)
{
	for (int i = 0; i < dag->ninputs; i++) {
		const ts_tensor *t = dag->inputs[i];
		ts_buf_printf(&p->out, "%s %s: %s[",
			t->weight ? "weight" : "input", tensor_name(p, t),
			ts_dtype_name(t->dtype));
		for (int d = 0; d < t->ndim; d++)
			ts_buf_printf(&p->out, "%s%" PRId64, d ? ", " : "",
				t->shape[d]);
		ts_buf_puts(&p->out, "]\n");
	}
	for (int i = 0; i < dag->nstages; i++)
		print_stage(p, dag->stages[i],
			ts_dag_is_output(dag, dag->stages[i]->out));
}

void ts_dag_print(FILE *out, const ts_dag *dag)
{
	struct printer p = { 0 };

	ts_buf_init(&p.out);
	print_dag(&p, dag);
	fputs(p.out.s, out);
}

char *ts_dag_canonical_string(const ts_dag *dag)
{
	struct printer p = { 0 };

	ts_buf_init(&p.out);
	p.canon = dag;
	print_dag(&p, dag);
	return p.out.s;
}

const char *ts_dag_hash(const ts_dag *dag)
{
	return ts_asprintf("%016" PRIx64,
		ts_fnv1a(ts_dag_canonical_string(dag)));
}
