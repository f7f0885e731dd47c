/* CUDA C from the loop IR: kernels, their launch description and the
 * buffers they take (see the comment above ts_cuda_emit in
 * <tessel/cuda.h>).
 *
 * Requires: a lowered function (ts_lower).  Produces: a ts_cuda_program
 * whose source NVRTC compiles, one kernel per top-level statement. */
#include <config.h>

#include <inttypes.h>
#include <math.h>

#include <tessel/cuda.h>

#include "backends/ir.h"
#include "backends/lower_internal.h"
#include "dsl/internal.h"

/* The CUDA maxima used when no target is given. */
#define MAX_THREADS 1024
#define MAX_SHARED (48 * 1024)

/* A name given to an axis or a tensor in the source. */
struct name {
	const void *key;
	const char *cname;
};

/* The kernel being emitted. */
struct kern {
	const char *name;
	int64_t grid[3], block[3];
	bool bused[3], tused[3];	/* some loop binds the dimension */
	int64_t nthreads;
	bool warp;		/* a thread of the IR is a warp (tensor cores) */
	bool stage_f, stage_h;	/* uses the f32 / f16 staging tiles */
	int64_t shared;
	int nred;		/* cross-thread reductions so far */
};

/* A reduction across the threads of a loop: the update "acc = acc op x"
 * ("update"), and when the accumulator was promoted into a buffer of its
 * own, the store that loads it from the output ("init") and the one that
 * stores it back ("write"); the output element is "out"["idx"]. */
struct red {
	const ts_stmt *update, *init, *write;
	const ts_tensor *out;
	int nidx;
	ts_expr **idx;
	ts_op op;
};

struct emit {
	ts_ctx *ctx;
	const ts_func *f;
	const ts_cuda_options *opts;
	ts_cuda_program *p;
	ts_vec names;
	struct kern *k;
	ts_buf *b;		/* where statements go */
	bool failed;
	bool uses_f16;
	bool narrow;		/* in an index that fits in 32 bits */
	int bdepth[3], tdepth[3];	/* loops entered, per dimension */
	bool divergent;		/* under a condition on the thread index */
	ts_vec thread_axes;	/* variables bound to threads in scope */
	ts_vec shared_bufs;	/* buffers in shared memory in scope */
	ts_vec thread_bufs;	/* per-thread buffers in scope */
	bool in_copy;		/* in a copy spread over the block */
	const struct red *red;	/* the cross-thread reduction in progress */
	const char *red_var;	/* its per-thread partial result */
	ts_vec frags;		/* accumulators on tensor cores (kernel) */
	ts_vec mem_bufs;	/* shared buffers of the kernel */
	const ts_tensor *stage_buf;	/* read from "stage_text" instead */
	const char *stage_text;
	bool uses_wmma;
};

static void emit_stmt(struct emit *E, const ts_stmt *s, int ind);
static void emit_expr(struct emit *E, ts_buf *b, const ts_expr *e);
static void emit_store(struct emit *E, const ts_stmt *s, int ind);
static bool emit_tc_nest(struct emit *E, const ts_stmt *s, int ind);
static bool in_warp(struct emit *E);
static const struct frag *frag_of(struct emit *E, const ts_tensor *t);
static void emit_frag_alloc(struct emit *E, const ts_stmt *s,
	const struct frag *fr, int ind);
static bool has_load(const ts_expr *e);
static const char *identity(ts_op op, ts_dtype t);

static const char *const dims = "xyz";

/* Record a failure of "E" with a message; returns nothing useful. */
static void fail(struct emit *E, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct emit *E, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (E->failed)
		return;
	va_start(ap, fmt);
	msg = ts_vasprintf(fmt, ap);
	va_end(ap);
	ts_ctx_set_error(E->ctx, "cuda: %s", msg);
	E->failed = true;
}

/* Names the source must not use for a buffer or a variable. */
static const char *const reserved[] = {
	"auto", "bool", "break", "case", "char", "const", "continue",
	"default", "do", "double", "else", "enum", "extern", "float", "for",
	"goto", "if", "int", "long", "register", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef",
	"union", "unsigned", "void", "volatile", "while", "half", "min",
	"max", "abs", "exp", "log", "sqrt", "pow", "floor", "round", "erf",
	"tanh", "rint", "new", "delete", "class", "this", "template",
	"true", "false", "dim3", "blockIdx", "threadIdx", "blockDim",
	"gridDim", "warpSize", "signbit", "isnan", "isinf", "fabs",
	"ceil", "fmin", "fmax", "rsqrt", "try", "catch", "using",
	"namespace", "operator", "private", "public", "virtual", "sin",
	"cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
	"acosh", "atanh", NULL,
};

/* Whether "s" is already used by "E" or reserved. */
static bool name_taken(struct emit *E, const char *s)
{
	for (int i = 0; reserved[i]; i++)
		if (!strcmp(reserved[i], s))
			return true;
	if (!strncmp(s, "ts_", 3))
		return true;
	for (int i = 0; i < E->names.n; i++)
		if (!strcmp(((struct name *)E->names.v[i])->cname, s))
			return true;
	return false;
}

/* The C name of "key" (an axis or a tensor called "base"), made on first
 * use from "base": other characters than letters and digits become '_'. */
static const char *cname(struct emit *E, const void *key, const char *base)
{
	struct name *n;
	char *s;

	for (int i = 0; i < E->names.n; i++)
		if (((struct name *)E->names.v[i])->key == key)
			return ((struct name *)E->names.v[i])->cname;
	s = ts_strdup(base && *base ? base : "v");
	for (char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '_'))
			*c = '_';
	if (s[0] >= '0' && s[0] <= '9')
		s = ts_asprintf("_%s", s);
	if (name_taken(E, s)) {
		char *t;
		int k = 1;
		do
			t = ts_asprintf("%s_%d", s, k++);
		while (name_taken(E, t));
		s = t;
	}
	n = ts_new(struct name);
	n->key = key;
	n->cname = s;
	ts_vec_push(&E->names, n);
	return s;
}

const char *ts_cuda_mem_type(ts_dtype t)
{
	static const char *const n[TS_DTYPE_COUNT] = {
		[TS_BOOL] = "unsigned char", [TS_I8] = "signed char",
		[TS_U8] = "unsigned char", [TS_I16] = "short",
		[TS_U16] = "unsigned short", [TS_I32] = "int",
		[TS_U32] = "unsigned int", [TS_I64] = "long long",
		[TS_U64] = "unsigned long long", [TS_F16] = "__half",
		[TS_F32] = "float", [TS_F64] = "double",
	};
	/* bf16 is refused before (no_bf16): a name that does not
	 * compile rather than NULL. */
	return n[t] ? n[t] : "__unsupported_dtype";
}

/* The type arithmetic on dtype "t" uses in "E". */
static const char *ctype(struct emit *E, ts_dtype t)
{
	switch (t) {
	case TS_BOOL: return "bool";
	case TS_I8: case TS_U8: case TS_I16: case TS_U16: case TS_I32:
		return "int";
	/* Unsigned arithmetic wraps in C: u32 and u64 compute in their
	 * own types, whose order and division are unsigned too. */
	case TS_U32: return "unsigned int";
	case TS_U64: return "unsigned long long";
	case TS_I64: return E->narrow ? "int" : "long long";
	case TS_F16: case TS_F32: return "float";
	default: return "double";
	}
}

/* Whether float arithmetic of "t" is single precision. */
static bool is_single(ts_dtype t)
{
	return t == TS_F16 || t == TS_F32;
}

/* Print the floating constant "v" of dtype "t". */
static void emit_float(ts_buf *b, ts_dtype t, double v)
{
	char s[64];
	bool single = is_single(t);

	if (t == TS_F16)
		v = ts_round_to_dtype(TS_F16, v);
	if (isnan(v)) {
		ts_buf_puts(b, single ? "__int_as_float(0x7fc00000)" :
			"__longlong_as_double(0x7ff8000000000000LL)");
		return;
	}
	if (isinf(v)) {
		ts_buf_printf(b, "(%s%s)", v < 0 ? "-" : "", single ?
			"__int_as_float(0x7f800000)" :
			"__longlong_as_double(0x7ff0000000000000LL)");
		return;
	}
	snprintf(s, sizeof(s), single ? "%.9g" : "%.17g", v);
	if (!strpbrk(s, ".e"))
		strcat(s, ".0");
	ts_buf_printf(b, v < 0 ? "(%s%s)" : "%s%s", s, single ? "f" : "");
}

/* Print the integer constant "v" of dtype "t". */
static void emit_int(struct emit *E, ts_buf *b, ts_dtype t, int64_t v)
{
	if (ts_dtype_is_float(t)) {
		emit_float(b, t, (double)v);
		return;
	}
	if (t == TS_BOOL) {
		ts_buf_puts(b, v ? "true" : "false");
		return;
	}
	if (t == TS_I64 && !(E->narrow && v > INT32_MIN && v <= INT32_MAX)) {
		ts_buf_printf(b, v < 0 ? "(%" PRId64 "LL)" : "%" PRId64 "LL", v);
		return;
	}
	if (t == TS_U32 || t == TS_U64) {
		ts_buf_printf(b, "%" PRIu64 "%s", (uint64_t)v, t == TS_U32 ?
			"u" : "ull");
		return;
	}
	ts_buf_printf(b, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
}

/* Whether "e" is an integer that cannot be negative (loop variables,
 * non-negative constants, and sums, products and divisions of them). */
static bool nonneg(const ts_expr *e)
{
	switch (e->kind) {
	case TS_EXPR_INT: return e->ival >= 0;
	case TS_EXPR_VAR: return true;
	case TS_EXPR_BINARY:
		switch (e->op) {
		case TS_OP_ADD: case TS_OP_MUL: case TS_OP_MIN:
			return nonneg(e->a) && nonneg(e->b);
		case TS_OP_MAX:
			return nonneg(e->a) || nonneg(e->b);
		case TS_OP_FLOORDIV: case TS_OP_MOD:
			return nonneg(e->a) && e->b->kind == TS_EXPR_INT &&
				e->b->ival > 0;
		default: return false;
		}
	default: return false;
	}
}

/* Print "e" converted to the arithmetic type of "t". */
static void emit_as(struct emit *E, ts_buf *b, ts_dtype t, const ts_expr *e)
{
	ts_buf_printf(b, "(%s)(", ctype(E, t));
	emit_expr(E, b, e);
	ts_buf_puts(b, ")");
}

/* Print the flat offset of "idx" ("n" indices) into "t". */
static void emit_offset(struct emit *E, ts_buf *b, const ts_tensor *t,
	int n, ts_expr *const *idx)
{
	bool saved = E->narrow;

	E->narrow = ts_tensor_size(t) < INT32_MAX;
	if (n == 0)
		ts_buf_puts(b, "0");
	for (int d = 0; d < n; d++)
		ts_buf_puts(b, "(");
	for (int d = 0; d < n; d++) {
		if (d > 0)
			ts_buf_printf(b, " * %" PRId64 " + ", t->shape[d]);
		emit_expr(E, b, idx[d]);
		ts_buf_puts(b, ")");
	}
	E->narrow = saved;
}

/* The name of buffer "t" in the source. */
static const char *buf_name(struct emit *E, const ts_tensor *t)
{
	return cname(E, t, t->name);
}

/* Print the load "e". */
static void emit_load(struct emit *E, ts_buf *b, const ts_expr *e)
{
	const ts_tensor *t = e->tensor;

	if (t == E->stage_buf) {
		ts_buf_printf(b, t->dtype == TS_F16 ? "__half2float(%s)" : "%s",
			E->stage_text);
		return;
	}
	if (t->dtype == TS_F16)
		ts_buf_puts(b, "__half2float(");
	else if (t->dtype == TS_BOOL)
		ts_buf_puts(b, "(");
	ts_buf_printf(b, "%s[", buf_name(E, t));
	emit_offset(E, b, t, e->nargs, e->args);
	ts_buf_puts(b, "]");
	if (t->dtype == TS_F16)
		ts_buf_puts(b, ")");
	else if (t->dtype == TS_BOOL)
		ts_buf_puts(b, " != 0)");
}

/* The C function of the unary op "op" on floats of dtype "t". */
static const char *float_fn(struct emit *E, ts_op op, ts_dtype t)
{
	bool s = is_single(t), fast = s && E->opts->fast_math;

	switch (op) {
	case TS_OP_EXP: return fast ? "__expf" : s ? "expf" : "exp";
	case TS_OP_LOG: return fast ? "__logf" : s ? "logf" : "log";
	case TS_OP_SQRT: return s ? "sqrtf" : "sqrt";
	case TS_OP_RSQRT: return s ? "rsqrtf" : "rsqrt";
	case TS_OP_TANH: return s ? "tanhf" : "tanh";
	case TS_OP_ERF: return s ? "erff" : "erf";
	case TS_OP_ABS: return s ? "fabsf" : "fabs";
	case TS_OP_FLOOR: return s ? "floorf" : "floor";
	case TS_OP_ROUND: return s ? "rintf" : "rint";
	case TS_OP_CEIL: return s ? "ceilf" : "ceil";
	case TS_OP_SIN: return s ? "sinf" : "sin";
	case TS_OP_COS: return s ? "cosf" : "cos";
	case TS_OP_TAN: return s ? "tanf" : "tan";
	case TS_OP_ASIN: return s ? "asinf" : "asin";
	case TS_OP_ACOS: return s ? "acosf" : "acos";
	case TS_OP_ATAN: return s ? "atanf" : "atan";
	case TS_OP_SINH: return s ? "sinhf" : "sinh";
	case TS_OP_COSH: return s ? "coshf" : "cosh";
	case TS_OP_ASINH: return s ? "asinhf" : "asinh";
	case TS_OP_ACOSH: return s ? "acoshf" : "acosh";
	case TS_OP_ATANH: return s ? "atanhf" : "atanh";
	case TS_OP_POW: return fast ? "__powf" : s ? "powf" : "pow";
	default: return NULL;
	}
}

/* The cast that wraps an integer result of dtype "t" computed in int to
 * "t" (i8, u8, i16, u16), or NULL: their arithmetic is done in int, so
 * it would not wrap where the interpreter and LLVM do. */
static const char *wrap_cast(ts_dtype t)
{
	switch (t) {
	case TS_I8: return "(int)(signed char)";
	case TS_U8: return "(int)(unsigned char)";
	case TS_I16: return "(int)(short)";
	case TS_U16: return "(int)(unsigned short)";
	default: return NULL;
	}
}

static void emit_unary_op(struct emit *E, ts_buf *b, const ts_expr *e);
static void emit_binary_op(struct emit *E, ts_buf *b, const ts_expr *e);

/* Print the unary expression "e", wrapped to its dtype. */
static void emit_unary(struct emit *E, ts_buf *b, const ts_expr *e)
{
	const char *w = wrap_cast(e->dtype);

	if (!w || (e->op != TS_OP_NEG && e->op != TS_OP_ABS)) {
		emit_unary_op(E, b, e);
		return;
	}
	ts_buf_printf(b, "(%s(", w);
	emit_unary_op(E, b, e);
	ts_buf_puts(b, "))");
}

/* Print the unary expression "e" in its arithmetic type. */
static void emit_unary_op(struct emit *E, ts_buf *b, const ts_expr *e)
{
	ts_dtype t = e->dtype;
	const char *fn;

	switch (e->op) {
	case TS_OP_NEG:
		ts_buf_printf(b, "((%s)(-", ctype(E, t));
		emit_expr(E, b, e->a);
		ts_buf_puts(b, "))");
		return;
	case TS_OP_NOT:
		ts_buf_puts(b, "(!");
		emit_expr(E, b, e->a);
		ts_buf_puts(b, ")");
		return;
	case TS_OP_SIGMOID:
		ts_buf_printf(b, is_single(t) ? "(1.0f / (1.0f + %s(-" :
			"(1.0 / (1.0 + %s(-", float_fn(E, TS_OP_EXP, t));
		emit_expr(E, b, e->a);
		ts_buf_puts(b, ")))");
		return;
	case TS_OP_SIGN:
		ts_buf_puts(b, "ts_sign(");
		emit_as(E, b, t, e->a);
		ts_buf_puts(b, ")");
		return;
	case TS_OP_ISNAN:
	case TS_OP_ISINF:
		/* CUDA's isnan and isinf, overloaded on float and double. */
		ts_buf_printf(b, "(%s(", ts_op_name(e->op));
		emit_as(E, b, e->a->dtype, e->a);
		ts_buf_puts(b, ") != 0)");
		return;
	default:
		break;
	}
	if (!ts_dtype_is_float(t)) {
		if (e->op != TS_OP_ABS && e->op != TS_OP_FLOOR &&
		    e->op != TS_OP_ROUND) {
			fail(E, "operation '%s' on the integer type %s",
				ts_op_name(e->op), ts_dtype_name(t));
			return;
		}
		ts_buf_puts(b, e->op == TS_OP_ABS ? "ts_abs(" : "(");
		emit_as(E, b, t, e->a);
		ts_buf_puts(b, ")");
		return;
	}
	fn = float_fn(E, e->op, t);
	ts_buf_printf(b, "%s(", fn ? fn : "?");
	emit_expr(E, b, e->a);
	ts_buf_puts(b, ")");
}

/* Whether "op" is arithmetic that can leave the range of its dtype. */
static bool may_overflow(ts_op op)
{
	return op == TS_OP_ADD || op == TS_OP_SUB || op == TS_OP_MUL ||
		op == TS_OP_FLOORDIV || op == TS_OP_MOD;
}

/* Print the binary expression "e": i8 and u8 results wrapped to their
 * dtype, i32 sums and products computed unsigned so that they wrap
 * (signed overflow is undefined in C++). */
static void emit_binary(struct emit *E, ts_buf *b, const ts_expr *e)
{
	const char *w = wrap_cast(e->dtype);

	if (e->dtype == TS_I32 && e->op != TS_OP_FLOORDIV &&
	    e->op != TS_OP_MOD && may_overflow(e->op)) {
		ts_buf_puts(b, "((int)((unsigned)(");
		emit_expr(E, b, e->a);
		ts_buf_printf(b, ") %s (unsigned)(", e->op == TS_OP_ADD ? "+" :
			e->op == TS_OP_SUB ? "-" : "*");
		emit_expr(E, b, e->b);
		ts_buf_puts(b, ")))");
		return;
	}
	if (!w || !may_overflow(e->op)) {
		emit_binary_op(E, b, e);
		return;
	}
	ts_buf_printf(b, "(%s(", w);
	emit_binary_op(E, b, e);
	ts_buf_puts(b, "))");
}

/* Print the binary expression "e" in its arithmetic type. */
static void emit_binary_op(struct emit *E, ts_buf *b, const ts_expr *e)
{
	static const char *const infix[TS_OP_COUNT] = {
		[TS_OP_ADD] = "+", [TS_OP_SUB] = "-", [TS_OP_MUL] = "*",
		[TS_OP_DIV] = "/", [TS_OP_LT] = "<", [TS_OP_LE] = "<=",
		[TS_OP_GT] = ">", [TS_OP_GE] = ">=", [TS_OP_EQ] = "==",
		[TS_OP_NE] = "!=", [TS_OP_AND] = "&&", [TS_OP_OR] = "||",
	};
	ts_dtype t = e->a->dtype;
	bool fl = ts_dtype_is_float(t);
	const char *fn = NULL;

	if (infix[e->op]) {
		/* C's promotions give the arithmetic type, but for bools. */
		bool cast = e->dtype == TS_BOOL && !ts_op_is_comparison(e->op)
			&& e->op != TS_OP_AND && e->op != TS_OP_OR;
		if (cast)
			ts_buf_printf(b, "((%s)", ctype(E, e->dtype));
		ts_buf_puts(b, "(");
		emit_expr(E, b, e->a);
		ts_buf_printf(b, " %s ", infix[e->op]);
		emit_expr(E, b, e->b);
		ts_buf_puts(b, cast ? "))" : ")");
		return;
	}
	switch (e->op) {
	case TS_OP_MIN: fn = "ts_min"; break;
	case TS_OP_MAX: fn = "ts_max"; break;
	case TS_OP_POW: fn = fl ? float_fn(E, TS_OP_POW, t) : "ts_ipow"; break;
	case TS_OP_FLOORDIV:
		if (!fl && nonneg(e->a) && e->b->kind == TS_EXPR_INT &&
		    e->b->ival > 0) {
			ts_buf_puts(b, "(");
			emit_expr(E, b, e->a);
			ts_buf_puts(b, " / ");
			emit_expr(E, b, e->b);
			ts_buf_puts(b, ")");
			return;
		}
		fn = fl ? (is_single(t) ? "ts_floordivf" : "ts_floordivd")
			: "ts_floordiv";
		break;
	case TS_OP_MOD:
		if (!fl && nonneg(e->a) && e->b->kind == TS_EXPR_INT &&
		    e->b->ival > 0) {
			ts_buf_puts(b, "(");
			emit_expr(E, b, e->a);
			ts_buf_puts(b, " % ");
			emit_expr(E, b, e->b);
			ts_buf_puts(b, ")");
			return;
		}
		fn = fl ? (is_single(t) ? "ts_modf" : "ts_modd") : "ts_mod";
		break;
	default:
		fail(E, "unknown binary operation %d", (int)e->op);
		return;
	}
	ts_buf_printf(b, "%s(", fn);
	emit_as(E, b, t, e->a);
	ts_buf_puts(b, ", ");
	emit_as(E, b, t, e->b);
	ts_buf_puts(b, ")");
}

/* Print the cast "e". */
static void emit_cast(struct emit *E, ts_buf *b, const ts_expr *e)
{
	ts_dtype to = e->dtype, from = e->a->dtype;

	if (to == TS_BOOL) {
		ts_buf_puts(b, "(");
		emit_expr(E, b, e->a);
		ts_buf_puts(b, " != 0)");
		return;
	}
	if (to == TS_F16) {
		ts_buf_puts(b, "__half2float(__float2half_rn((float)(");
		emit_expr(E, b, e->a);
		ts_buf_puts(b, ")))");
		return;
	}
	if (ts_dtype_is_float(from) && !ts_dtype_is_float(to)) {
		/* Truncate toward zero and saturate, NaN giving 0. */
		static const char *const range[TS_DTYPE_COUNT] = {
			[TS_I8] = "-128LL, 127LL", [TS_U8] = "0LL, 255LL",
			[TS_I16] = "-32768LL, 32767LL",
			[TS_U16] = "0LL, 65535LL",
			[TS_I32] = "-2147483647LL - 1, 2147483647LL",
			[TS_U32] = "0LL, 4294967295LL",
			[TS_I64] = "-9223372036854775807LL - 1, "
				"9223372036854775807LL",
		};
		if (to == TS_U64) {	/* past the range of long long */
			ts_buf_puts(b, "ts_ftou64(");
			emit_expr(E, b, e->a);
			ts_buf_puts(b, ")");
			return;
		}
		ts_buf_printf(b, "((%s)ts_ftoi(", ctype(E, to));
		emit_expr(E, b, e->a);
		ts_buf_printf(b, ", %s))", range[to]);
		return;
	}
	if (wrap_cast(to)) {
		ts_buf_printf(b, "((int)(%s)(", ts_cuda_mem_type(to));
		emit_expr(E, b, e->a);
		ts_buf_puts(b, "))");
		return;
	}
	emit_as(E, b, to, e->a);
}

/* Print the expression "e" in its arithmetic type. */
static void emit_expr(struct emit *E, ts_buf *b, const ts_expr *e)
{
	if (E->failed)
		return;
	if (!e) {
		fail(E, "missing expression");
		return;
	}
	if (e->dtype == TS_F16)
		E->uses_f16 = true;
	switch (e->kind) {
	case TS_EXPR_INT:
		emit_int(E, b, e->dtype, e->ival);
		return;
	case TS_EXPR_FLOAT:
		emit_float(b, e->dtype, e->fval);
		return;
	case TS_EXPR_VAR:
		ts_buf_puts(b, cname(E, e->axis, e->axis->name));
		return;
	case TS_EXPR_LOAD:
		emit_load(E, b, e);
		return;
	case TS_EXPR_UNARY:
		emit_unary(E, b, e);
		return;
	case TS_EXPR_BINARY:
		emit_binary(E, b, e);
		return;
	case TS_EXPR_SELECT:
		ts_buf_printf(b, "((%s)(", ctype(E, e->dtype));
		emit_expr(E, b, e->a);
		ts_buf_puts(b, " ? ");
		emit_as(E, b, e->dtype, e->b);
		ts_buf_puts(b, " : ");
		emit_as(E, b, e->dtype, e->c);
		ts_buf_puts(b, "))");
		return;
	case TS_EXPR_CAST:
		emit_cast(E, b, e);
		return;
	default:
		fail(E, "a reduction is left in the lowered program");
	}
}

/* Indent "b" by "ind" tabs. */
static void indent(ts_buf *b, int ind)
{
	for (int i = 0; i < ind; i++)
		ts_buf_putc(b, '\t');
}

/* Print the value "val" (C text in the arithmetic type) converted for a
 * store into "t". */
static char *store_value(const ts_tensor *t, const char *val)
{
	switch (t->dtype) {
	case TS_F16: return ts_asprintf("__float2half_rn(%s)", val);
	case TS_BOOL: return ts_asprintf("(unsigned char)((%s) != 0)", val);
	case TS_I8: case TS_U8: case TS_I16: case TS_U16:
		return ts_asprintf("(%s)(%s)", ts_cuda_mem_type(t->dtype), val);
	default: return (char *)val;
	}
}

/* Whether the kernel uses thread dimensions that "E" has not entered. */
static bool outside_threads(struct emit *E)
{
	for (int d = 0; d < 3; d++)
		if (E->k->tused[d] && !E->tdepth[d])
			return true;
	return false;
}

/* The condition that only the first thread of each unentered thread
 * dimension runs, or NULL. */
static char *first_thread_cond(struct emit *E)
{
	ts_buf c;

	if (E->in_copy)
		return NULL;	/* spread over every thread of the block */
	ts_buf_init(&c);
	for (int d = 0; d < 3; d++)
		if (E->k->tused[d] && !E->tdepth[d])
			ts_buf_printf(&c, "%sthreadIdx.%c == 0",
				c.len ? " && " : "", dims[d]);
	return c.len ? c.s : NULL;
}

/* Emit a store of the C text "val" into "t" at "idx". */
static void emit_store_text(struct emit *E, const ts_tensor *t, int nidx,
	ts_expr *const *idx, const char *val, int ind)
{
	ts_buf *b = E->b;
	char *cond;

	for (int d = 0; d < 3; d++)
		if (E->k->bused[d] && !E->bdepth[d])
			return fail(E, "kernel '%s': the store to '%s' is "
				"outside the loop bound to blockIdx.%c",
				E->k->name, t->name, dims[d]);
	if (t->dtype == TS_F16)
		E->uses_f16 = true;
	cond = first_thread_cond(E);
	indent(b, ind);
	if (cond)
		ts_buf_printf(b, "if (%s)\n", cond), indent(b, ind + 1);
	ts_buf_printf(b, "%s[", buf_name(E, t));
	emit_offset(E, b, t, nidx, idx);
	ts_buf_printf(b, "] = %s;\n", store_value(t, val));
}

static bool mentions(const ts_expr *e, const ts_axis *v);

/* Fail when the store "s" to memory other threads see does not depend on
 * the variable of an enclosing thread loop: every thread of that loop
 * would write the same element. */
static ts_status check_race(struct emit *E, const ts_stmt *s)
{
	for (int i = 0; i < E->thread_bufs.n; i++)
		if (E->thread_bufs.v[i] == s->buffer)
			return TS_OK;
	for (int i = 0; i < E->thread_axes.n; i++) {
		const ts_axis *v = E->thread_axes.v[i];
		bool dep = v->extent == 1;
		for (int d = 0; d < s->nidx; d++)
			dep |= mentions(s->idx[d], v);
		if (!dep) {
			fail(E, "kernel '%s': the store to '%s' does not depend "
				"on loop '%s' bound to a thread index: its "
				"threads would all write the same element",
				E->k->name, s->buffer->name, v->name);
			return TS_ERROR;
		}
	}
	return TS_OK;
}

/* Emit "acc + x * y", the value of the accumulation "u" (see
 * ts_stmt_is_fma_update) onto the C text "acc", as one fused multiply-add:
 * NVRTC runs with --fmad=false, so this is the only fused one. */
static void emit_fma(struct emit *E, ts_buf *b, const ts_expr *u,
	const char *acc)
{
	ts_dtype t = u->dtype == TS_F64 ? TS_F64 : TS_F32;

	ts_buf_printf(b, "%s(", t == TS_F64 ? "fma" : "fmaf");
	emit_as(E, b, t, u->b->a);
	ts_buf_puts(b, ", ");
	emit_as(E, b, t, u->b->b);
	ts_buf_printf(b, ", (%s)(%s))", ctype(E, t), acc ? acc : "0");
}

/* Emit the store "s". */
static void emit_store(struct emit *E, const ts_stmt *s, int ind)
{
	ts_buf v;

	ts_buf_init(&v);
	if (E->red && s == E->red->init) {
		/* A promoted accumulator starts from the identity. */
		emit_store_text(E, s->buffer, s->nidx, s->idx,
			identity(E->red->op, s->buffer->dtype), ind);
		return;
	}
	if (E->red && s == E->red->write) {
		/* ... and ends as the thread's partial result. */
		indent(E->b, ind);
		ts_buf_printf(E->b, "%s = ", E->red_var);
		emit_expr(E, E->b, s->value);
		ts_buf_puts(E->b, ";\n");
		return;
	}
	if (E->red && !E->red->init && s == E->red->update) {
		/* The combine of a cross-thread reduction: into the
		 * thread's partial result. */
		const ts_expr *x = s->value;
		indent(E->b, ind);
		ts_buf_printf(E->b, "%s = ", E->red_var);
		if (ts_stmt_is_fma_update(s)) {
			emit_fma(E, E->b, x, E->red_var);
		} else if (x->op == TS_OP_ADD || x->op == TS_OP_MUL) {
			ts_buf_printf(E->b, "%s %s ", E->red_var,
				x->op == TS_OP_ADD ? "+" : "*");
			emit_expr(E, E->b, x->b);
		} else {
			ts_buf_printf(E->b, "%s(%s, ", x->op == TS_OP_MIN ?
				"ts_min" : "ts_max", E->red_var);
			emit_as(E, E->b, x->dtype, x->b);
			ts_buf_puts(E->b, ")");
		}
		ts_buf_puts(E->b, ";\n");
		return;
	}
	if (!E->in_copy && check_race(E, s) < 0)
		return;
	if (ts_stmt_is_fma_update(s)) {
		ts_buf acc;

		ts_buf_init(&acc);
		emit_expr(E, &acc, s->value->a);
		emit_fma(E, &v, s->value, acc.s);
	} else {
		emit_expr(E, &v, s->value);
	}
	emit_store_text(E, s->buffer, s->nidx, s->idx, v.s ? v.s : "0", ind);
}

/* Whether "s" holds a store. */
static bool has_store(const ts_stmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case TS_STMT_STORE: return true;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (has_store(s->stmts[i]))
				return true;
		return false;
	case TS_STMT_IF: return has_store(s->body) || has_store(s->orelse);
	case TS_STMT_FOR: case TS_STMT_ALLOC: return has_store(s->body);
	default: return false;
	}
}

/* Whether "e" mentions the variable "v". */
static bool mentions(const ts_expr *e, const ts_axis *v)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_VAR)
		return e->axis == v;
	for (int i = 0; i < e->nargs; i++)
		if (mentions(e->args[i], v))
			return true;
	return mentions(e->a, v) || mentions(e->b, v) || mentions(e->c, v);
}

/* Whether "e" mentions a variable of a loop inside "s". */
static bool mentions_inner(const ts_expr *e, const ts_stmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case TS_STMT_FOR:
		return mentions(e, s->var) || mentions_inner(e, s->body);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (mentions_inner(e, s->stmts[i]))
				return true;
		return false;
	case TS_STMT_IF:
		return mentions_inner(e, s->body) ||
			mentions_inner(e, s->orelse);
	case TS_STMT_ALLOC: return mentions_inner(e, s->body);
	default: return false;
	}
}

/* Append the stores of "s" to "v" in program order. */
static void collect_stores(const ts_stmt *s, ts_vec *v)
{
	if (!s)
		return;
	switch (s->kind) {
	case TS_STMT_STORE: ts_vec_push(v, (void *)s); return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			collect_stores(s->stmts[i], v);
		return;
	case TS_STMT_IF:
		collect_stores(s->body, v);
		collect_stores(s->orelse, v);
		return;
	case TS_STMT_FOR: case TS_STMT_ALLOC:
		collect_stores(s->body, v);
		return;
	default: return;
	}
}


/* Whether "e" loads "t" at exactly "idx". */
static bool is_load_of(const ts_expr *e, const ts_tensor *t, int n,
	ts_expr *const *idx)
{
	if (e->kind != TS_EXPR_LOAD || e->tensor != t || e->nargs != n)
		return false;
	for (int d = 0; d < n; d++)
		if (!ts_expr_equal(e->args[d], idx[d]))
			return false;
	return true;
}

/* Whether the loop "s" bound to threads is a reduction across them: its
 * stores are one update (see is_update), or an accumulator loaded from
 * the output, updated and stored back; the output's indices depend
 * neither on "s" nor on a loop inside it.  Fills "r". */
static bool reduction_of(const ts_stmt *s, struct red *r)
{
	ts_vec v = { 0 };
	const ts_stmt *u;

	collect_stores(s->body, &v);
	memset(r, 0, sizeof(*r));
	if (v.n == 1 && ts_stmt_is_update(v.v[0])) {
		u = r->update = v.v[0];
		r->out = u->buffer;
		r->nidx = u->nidx;
		r->idx = u->idx;
	} else if (v.n == 3 && ts_stmt_is_update(v.v[1])) {
		const ts_stmt *i = v.v[0], *w = v.v[2];
		u = r->update = v.v[1];
		if (i->buffer != u->buffer || w->value->kind != TS_EXPR_LOAD ||
		    !is_load_of(w->value, u->buffer, i->nidx, i->idx) ||
		    !is_load_of(i->value, w->buffer, w->nidx, w->idx))
			return false;
		r->init = i;
		r->write = w;
		r->out = w->buffer;
		r->nidx = w->nidx;
		r->idx = w->idx;
	} else {
		return false;
	}
	r->op = u->value->op;
	for (int d = 0; d < r->nidx; d++)
		if (mentions(r->idx[d], s->var) ||
		    mentions_inner(r->idx[d], s->body))
			return false;
	return true;
}

/* The identity of "op" in the arithmetic type of "t" as C text. */
static const char *identity(ts_op op, ts_dtype t)
{
	bool fl = ts_dtype_is_float(t), s = is_single(t);

	switch (op) {
	case TS_OP_ADD: return fl ? (s ? "0.0f" : "0.0") : "0";
	case TS_OP_MUL: return fl ? (s ? "1.0f" : "1.0") : "1";
	case TS_OP_MIN:
		if (fl)
			return s ? "__int_as_float(0x7f800000)" :
				"__longlong_as_double(0x7ff0000000000000LL)";
		if (t == TS_U32 || t == TS_U64)
			return t == TS_U32 ? "4294967295u" :
				"18446744073709551615ull";
		return t == TS_I64 ? "9223372036854775807LL" : "2147483647";
	default:
		if (fl)
			return s ? "(-__int_as_float(0x7f800000))" :
				"(-__longlong_as_double(0x7ff0000000000000LL))";
		if (t == TS_U32 || t == TS_U64)
			return t == TS_U32 ? "0u" : "0ull";
		return t == TS_I64 ? "(-9223372036854775807LL - 1)" :
			"(-2147483647 - 1)";
	}
}

/* "a op b" as C text. */
static char *combine_text(ts_op op, const char *a, const char *b)
{
	switch (op) {
	case TS_OP_ADD: return ts_asprintf("(%s + %s)", a, b);
	case TS_OP_MUL: return ts_asprintf("(%s * %s)", a, b);
	case TS_OP_MIN: return ts_asprintf("ts_min(%s, %s)", a, b);
	default: return ts_asprintf("ts_max(%s, %s)", a, b);
	}
}

/* Emit the reduction of "var" over thread dimension "d" of the block
 * (every thread ends with the result of its row in "var"; thread 0 of the
 * dimension is the one that uses it). */
static void emit_block_reduce(struct emit *E, int d, ts_op op,
	const char *T, const char *id, const char *var, int ind)
{
	struct kern *k = E->k;
	ts_buf *b = E->b;
	int64_t bd = k->block[d], stride = 1, p2 = 1;
	int n = k->nred++;

	for (int j = 0; j < d; j++)
		stride *= k->block[j];
	while (p2 < bd)
		p2 *= 2;
	if (d == 0 && bd % 32 == 0) {
		/* Warp shuffles, then one value per warp through shared
		 * memory. */
		indent(b, ind);
		ts_buf_printf(b, "for (int ts_o = 16; ts_o > 0; ts_o >>= 1)\n");
		indent(b, ind + 1);
		ts_buf_printf(b, "%s = %s;\n", var, combine_text(op, var,
			ts_asprintf("__shfl_down_sync(0xffffffffu, %s, ts_o)",
			var)));
		if (bd == 32)
			return;
		indent(b, ind);
		ts_buf_printf(b, "__shared__ %s ts_warp%d[%" PRId64 "];\n", T,
			n, k->nthreads / 32);
		k->shared += (int64_t)(k->nthreads / 32) * 8;
		indent(b, ind);
		ts_buf_printf(b, "if (threadIdx.x %% 32 == 0)\n");
		indent(b, ind + 1);
		ts_buf_printf(b, "ts_warp%d[ts_tid / 32] = %s;\n", n, var);
		indent(b, ind);
		ts_buf_puts(b, "__syncthreads();\n");
		indent(b, ind);
		ts_buf_printf(b, "if (threadIdx.x < 32) {\n");
		indent(b, ind + 1);
		ts_buf_printf(b, "%s = threadIdx.x < %" PRId64 " ? ts_warp%d[(ts_tid"
			" - threadIdx.x) / 32 + threadIdx.x] : %s;\n", var,
			bd / 32, n, id);
		indent(b, ind + 1);
		ts_buf_printf(b, "for (int ts_o = 16; ts_o > 0; ts_o >>= 1)\n");
		indent(b, ind + 2);
		ts_buf_printf(b, "%s = %s;\n", var, combine_text(op, var,
			ts_asprintf("__shfl_down_sync(0xffffffffu, %s, ts_o)",
			var)));
		indent(b, ind);
		ts_buf_puts(b, "}\n");
		indent(b, ind);
		ts_buf_puts(b, "__syncthreads();\n");
		return;
	}
	/* A tree in shared memory. */
	indent(b, ind);
	ts_buf_printf(b, "__shared__ %s ts_red%d[%" PRId64 "];\n", T, n,
		k->nthreads);
	k->shared += k->nthreads * 8;
	indent(b, ind);
	ts_buf_printf(b, "ts_red%d[ts_tid] = %s;\n", n, var);
	indent(b, ind);
	ts_buf_puts(b, "__syncthreads();\n");
	indent(b, ind);
	ts_buf_printf(b, "for (int ts_s = %" PRId64 "; ts_s > 0; ts_s >>= 1) {\n",
		p2 / 2);
	indent(b, ind + 1);
	ts_buf_printf(b, "if (threadIdx.%c < ts_s && threadIdx.%c + ts_s < "
		"%" PRId64 ")\n", dims[d], dims[d], bd);
	indent(b, ind + 2);
	ts_buf_printf(b, "ts_red%d[ts_tid] = %s;\n", n, combine_text(op,
		ts_asprintf("ts_red%d[ts_tid]", n), ts_asprintf("ts_red%d["
		"ts_tid + ts_s * %" PRId64 "]", n, stride)));
	indent(b, ind + 1);
	ts_buf_puts(b, "__syncthreads();\n");
	indent(b, ind);
	ts_buf_puts(b, "}\n");
	indent(b, ind);
	ts_buf_printf(b, "%s = ts_red%d[ts_tid - threadIdx.%c * %" PRId64 "];\n",
		var, n, dims[d], stride);
	indent(b, ind);
	ts_buf_puts(b, "__syncthreads();\n");
}

/* The C type of a loop variable over "extent". */
static const char *var_type(int64_t extent)
{
	return extent <= INT32_MAX ? "int" : "long long";
}

/* Emit the body of a bound loop "s" with its variable set to "idx"
 * (guarded when the extent is below the launch's "dim"). */
static void emit_bound_body(struct emit *E, const ts_stmt *s,
	const char *idx, int64_t dim, int ind)
{
	ts_buf *b = E->b;
	const char *v = cname(E, s->var, s->var->name);

	indent(b, ind);
	ts_buf_printf(b, "{\n");
	indent(b, ind + 1);
	ts_buf_printf(b, "const %s %s = %s;\t/* %s */\n",
		var_type(s->var->extent), v, idx, s->var->name);
	if (s->var->extent < dim) {
		indent(b, ind + 1);
		ts_buf_printf(b, "if (%s < %" PRId64 ") {\n", v,
			s->var->extent);
		emit_stmt(E, s->body, ind + 2);
		indent(b, ind + 1);
		ts_buf_puts(b, "}\n");
	} else {
		emit_stmt(E, s->body, ind + 1);
	}
	indent(b, ind);
	ts_buf_puts(b, "}\n");
}

/* Emit the loop "s" bound to thread dimension "d" as the cross-thread
 * reduction "r". */
static void emit_thread_reduce(struct emit *E, const ts_stmt *s, int d,
	const struct red *r, int ind)
{
	ts_buf *b = E->b;
	ts_dtype t = r->out->dtype;
	const char *T = ctype(E, t), *id = identity(r->op, t);
	char *var = ts_asprintf("ts_acc%d", E->k->nred), *cur;
	ts_expr *ld = ts_lower_load((ts_tensor *)r->out, r->nidx, r->idx);
	ts_buf lb;
	bool div = E->divergent;

	if (E->divergent)
		return fail(E, "kernel '%s': the reduction over threads of "
			"loop '%s' is under a condition on the thread index",
			E->k->name, s->var->name);
	indent(b, ind);
	ts_buf_printf(b, "{\t/* %s: reduction across threadIdx.%c */\n",
		s->var->name, dims[d]);
	indent(b, ind + 1);
	ts_buf_printf(b, "%s %s = %s;\n", T, var, id);
	E->red = r;
	E->red_var = var;
	E->tdepth[d]++;
	ts_vec_push(&E->thread_axes, s->var);
	E->divergent = s->var->extent < E->k->block[d];
	emit_bound_body(E, s, ts_asprintf("threadIdx.%c", dims[d]),
		E->k->block[d], ind + 1);
	E->divergent = div;
	E->thread_axes.n--;
	E->tdepth[d]--;
	E->red = NULL;
	emit_block_reduce(E, d, r->op, T, id, var, ind + 1);
	ts_buf_init(&lb);
	emit_expr(E, &lb, ld);
	cur = lb.s ? lb.s : "0";
	emit_store_text(E, r->out, r->nidx, r->idx,
		combine_text(r->op, ts_asprintf("(%s)%s", T, cur), var), ind + 1);
	indent(b, ind);
	ts_buf_puts(b, "}\n");
}

/* Emit the loop "s" bound to a block or thread index. */
static void emit_bound(struct emit *E, const ts_stmt *s, int ind)
{
	ts_bind bd = s->bind;
	bool block = bd >= TS_BIND_BLOCK_X && bd <= TS_BIND_BLOCK_Z;
	int d = block ? bd - TS_BIND_BLOCK_X : bd - TS_BIND_THREAD_X;
	struct red *r = ts_new(struct red);
	bool div = E->divergent;

	if (block) {
		for (int j = 0; j < 3; j++)
			if (E->tdepth[j])
				return fail(E, "kernel '%s': loop '%s' bound "
					"to blockIdx.%c is inside a loop bound "
					"to threadIdx.%c", E->k->name,
					s->var->name, dims[d], dims[j]);
		E->bdepth[d]++;
		emit_bound_body(E, s, ts_asprintf("blockIdx.%c", dims[d]),
			E->k->grid[d], ind);
		E->bdepth[d]--;
		return;
	}
	if (reduction_of(s, r))
		return emit_thread_reduce(E, s, d, r, ind);
	E->tdepth[d]++;
	ts_vec_push(&E->thread_axes, s->var);
	if (s->var->extent < E->k->block[d])
		E->divergent = true;
	emit_bound_body(E, s, ts_asprintf("threadIdx.%c", dims[d]),
		E->k->block[d], ind);
	E->divergent = div;
	E->thread_axes.n--;
	E->tdepth[d]--;
}

/* Whether "e" mentions a variable bound to a thread in "E". */
static bool mentions_thread(struct emit *E, const ts_expr *e)
{
	for (int i = 0; i < E->thread_axes.n; i++)
		if (mentions(e, E->thread_axes.v[i]))
			return true;
	return false;
}

/* Whether "t" is in shared memory in "E". */
static bool is_shared(struct emit *E, const ts_tensor *t)
{
	for (int i = 0; i < E->shared_bufs.n; i++)
		if (E->shared_bufs.v[i] == t)
			return true;
	return false;
}

/* If "s" is a nest of plain loops (possibly none) copying into a shared
 * buffer, each iteration writing its own element (the store's indices are
 * the nest's variables, each once, and constants) with values that do not
 * depend on the thread, return the loops (outermost first) in "loops" and
 * their count; else -1. */
static int copy_nest(struct emit *E, const ts_stmt *s, const ts_stmt **loops,
	const ts_stmt **store)
{
	int n = 0;
	const ts_stmt *st;

	while (s && s->kind == TS_STMT_FOR && s->loop != TS_LOOP_BOUND &&
	       n < TS_MAX_DIMS) {
		loops[n++] = s;
		s = s->body;
	}
	if (!s)
		return -1;
	st = s;
	if (st->kind == TS_STMT_IF && !st->orelse && !mentions_thread(E,
	    st->cond))
		st = st->body;
	if (!st || st->kind != TS_STMT_STORE || !is_shared(E, st->buffer) ||
	    st->nidx < n || ts_expr_reads(st->value, st->buffer) ||
	    mentions_thread(E, st->value))
		return -1;
	/* Each loop variable is one index, the other indices constants. */
	for (int i = 0; i < n; i++) {
		int found = 0;
		for (int d = 0; d < st->nidx; d++)
			found += st->idx[d]->kind == TS_EXPR_VAR &&
				st->idx[d]->axis == loops[i]->var;
		if (found != 1)
			return -1;
	}
	for (int d = 0; d < st->nidx; d++)
		if (st->idx[d]->kind != TS_EXPR_VAR &&
		    st->idx[d]->kind != TS_EXPR_INT)
			return -1;
	for (int d = 0; d < st->nidx; d++)
		if (mentions_thread(E, st->idx[d]))
			return -1;
	*store = s;
	return n;
}

/* Whether the affine form of "e" has "iv" with coefficient 1 (or not at
 * all) and every other coefficient and its constant multiples of "w". */
static bool aligned_w(struct emit *E, const ts_expr *e, const ts_axis *iv,
	int w)
{
	ts_aff a = ts_aff_of_expr(E->ctx, (ts_expr *)e);

	if (!a.ok || a.cst % w)
		return false;
	for (int i = 0; i < a.n; i++) {
		bool is_iv = a.atom[i]->kind == TS_EXPR_VAR &&
			a.atom[i]->axis == iv;
		if (is_iv ? a.coef[i] != 1 : a.coef[i] % w != 0)
			return false;
	}
	return true;
}

/* Whether the guard "c" has the same value for "iv" = wm .. wm + w - 1:
 * it does not mention "iv", or is a conjunction of "x >= n" and "x < n"
 * with "x" aligned (aligned_w) and "n" a multiple of "w". */
static bool same_for_w(struct emit *E, const ts_expr *c, const ts_axis *iv,
	int w)
{
	if (!mentions(c, iv))
		return true;
	if (c->kind != TS_EXPR_BINARY)
		return false;
	if (c->op == TS_OP_AND)
		return same_for_w(E, c->a, iv, w) && same_for_w(E, c->b, iv, w);
	if ((c->op != TS_OP_GE && c->op != TS_OP_LT) ||
	    c->b->kind != TS_EXPR_INT || c->b->ival % w)
		return false;
	return aligned_w(E, c->a, iv, w);
}

/* The flat offset of "idx" ("n" indices) into "t", as an expression. */
static ts_expr *flat_offset(struct emit *E, const ts_tensor *t, int n,
	ts_expr *const *idx)
{
	ts_expr *off = idx[0];

	for (int d = 1; d < n; d++)
		off = ts_add(E->ctx, ts_mul(E->ctx, off, ts_lower_int(E->ctx,
			t->shape[d])), idx[d]);
	return off;
}

/* How many elements the copy "inner" of the nest "loops" ("n" loops)
 * moves at a time: 16 bytes (4 f32 or 8 f16 values) when the source is
 * read 16 aligned bytes at a time: a plain load of the destination's
 * dtype, no guard that changes within 16 bytes, the innermost variable
 * (an extent that is a multiple of the width) the last destination index
 * and the unit stride of a source offset that is otherwise a multiple of
 * the width.  1 otherwise. */
static int copy_width(struct emit *E, const ts_stmt **loops, int n,
	const ts_stmt *inner)
{
	const ts_axis *iv = loops[n - 1]->var;
	const ts_stmt *st = inner->kind == TS_STMT_IF ? inner->body : inner;
	const ts_expr *v = st->value;
	ts_dtype t = st->buffer->dtype;
	int w = t == TS_F32 ? 4 : t == TS_F16 ? 8 : 1;

	if (w == 1 || iv->extent % w || v->kind != TS_EXPR_LOAD ||
	    v->tensor->dtype != t ||
	    st->idx[st->nidx - 1]->kind != TS_EXPR_VAR ||
	    st->idx[st->nidx - 1]->axis != iv ||
	    !mentions(v, iv))
		return 1;
	if (inner->kind == TS_STMT_IF && !same_for_w(E, inner->cond, iv, w))
		return 1;
	for (int d = 0; d + 1 < st->nidx; d++)
		if (mentions(st->idx[d], iv))
			return 1;
	if (!aligned_w(E, flat_offset(E, v->tensor, v->nargs, v->args), iv, w))
		return 1;
	return w;
}

/* Emit the body of a copy "inner" of "w" elements at a time (see
 * copy_width): one 16-byte load, and one 16-byte store where the
 * destination offset is aligned too, else a store per element. */
static void emit_copy_vec_body(struct emit *E, const ts_stmt *inner, int w,
	int ind)
{
	ts_buf *b = E->b;
	const ts_stmt *st = inner->kind == TS_STMT_IF ? inner->body : inner;
	const ts_expr *v = st->value;
	const char *vt = w == 4 ? "float4" : "uint4";
	const char *et = w == 4 ? "float" : "__half";
	bool vec_store = aligned_w(E, flat_offset(E, st->buffer, st->nidx,
		st->idx), st->idx[st->nidx - 1]->axis, w);

	if (inner->kind == TS_STMT_IF) {
		indent(b, ind);
		ts_buf_puts(b, "if (");
		E->narrow = !has_load(inner->cond);
		emit_expr(E, b, inner->cond);
		E->narrow = false;
		ts_buf_puts(b, ") {\n");
		ind++;
	}
	indent(b, ind);
	ts_buf_printf(b, "const %s ts_v = *(const %s *)&%s[", vt, vt,
		buf_name(E, v->tensor));
	emit_offset(E, b, v->tensor, v->nargs, v->args);
	ts_buf_puts(b, "];\n");
	if (vec_store) {
		indent(b, ind);
		ts_buf_printf(b, "*(%s *)&%s[", vt, buf_name(E, st->buffer));
		emit_offset(E, b, st->buffer, st->nidx, st->idx);
		ts_buf_puts(b, "] = ts_v;\n");
	} else {
		indent(b, ind);
		ts_buf_printf(b, "const %s *ts_e = (const %s *)&ts_v;\n", et,
			et);
		for (int k = 0; k < w; k++) {
			indent(b, ind);
			ts_buf_printf(b, "%s[", buf_name(E, st->buffer));
			emit_offset(E, b, st->buffer, st->nidx, st->idx);
			ts_buf_printf(b, " + %d] = ts_e[%d];\n", k, k);
		}
	}
	if (inner->kind == TS_STMT_IF) {
		indent(b, ind - 1);
		ts_buf_puts(b, "}\n");
	}
}

/* Emit the copy nest "loops" (of "n" loops around "inner") spread over
 * every thread of the block, between two barriers; 16 bytes at a
 * time where copy_width allows. */
static void emit_coop_copy(struct emit *E, const ts_stmt **loops, int n,
	const ts_stmt *inner, int ind)
{
	ts_buf *b = E->b;
	int64_t total = 1, div = 1;
	const ts_stmt *st = inner->kind == TS_STMT_IF ? inner->body : inner;
	int w = n > 0 ? copy_width(E, loops, n, inner) : 1;

	if (E->divergent)
		return fail(E, "kernel '%s': shared buffer '%s' is filled under "
			"a condition on the thread index", E->k->name,
			st->buffer->name);
	for (int i = 0; i < n; i++)
		total *= loops[i]->var->extent;
	total /= w;
	indent(b, ind);
	ts_buf_printf(b, "__syncthreads();\t/* %s: filled by the whole "
		"block%s */\n", st->buffer->name, w > 1 ? ", 16-byte loads" : "");
	indent(b, ind);
	ts_buf_printf(b, "for (%s ts_f = ts_tid; ts_f < %" PRId64 "; ts_f += "
		"%" PRId64 ") {\n", var_type(total), total, E->k->nthreads);
	for (int i = n - 1; i >= 0; i--) {
		const ts_axis *v = loops[i]->var;
		int64_t ext = i == n - 1 ? v->extent / w : v->extent;
		const char *xw = w > 1 && i == n - 1 ? ts_asprintf(" * %d", w)
			: "";
		indent(b, ind + 1);
		ts_buf_printf(b, "const %s %s = ", var_type(v->extent),
			cname(E, v, v->name));
		if (i == 0)
			ts_buf_printf(b, "ts_f / %" PRId64 "%s;\n", div, xw);
		else if (div == 1)
			ts_buf_printf(b, "ts_f %% %" PRId64 "%s;\n", ext, xw);
		else
			ts_buf_printf(b, "ts_f / %" PRId64 " %% %" PRId64 "%s;\n",
				div, ext, xw);
		div *= ext;
	}
	E->in_copy = true;
	if (w > 1)
		emit_copy_vec_body(E, inner, w, ind + 1);
	else
		emit_stmt(E, inner, ind + 1);
	E->in_copy = false;
	indent(b, ind);
	ts_buf_puts(b, "}\n");
	indent(b, ind);
	ts_buf_puts(b, "__syncthreads();\n");
}

/* Tensor cores.
 *
 * They run what the schedule asked for with its tensorize step
 * (ts_stmt_tensorized): nothing else.  A kernel whose thread loops stand
 * for warps (under a loop bound to threadIdx.y or z with none bound to
 * threadIdx.x above it; the kernel's threadIdx.x, if any, has 32
 * threads) computes a per-thread accumulator tile of the IR with
 * nvcuda::wmma when a tensorized nest updates it and every use of it is
 * one of three loop nests whose two innermost loops walk a 16 x 16 tile
 * of it (guards that always hold are allowed):
 *
 *	fill	tile = constant			-> wmma::fill_fragment
 *	mma	tile += a * b over a loop of 16	-> load_matrix_sync of both
 *		(tensorized; the accumulator	   operands (16 x 16 tiles of
 *		possibly promoted into a	   f16 buffers in shared or
 *		scalar)				   global memory), mma_sync
 *	store	x = f(tile), anything else	-> store_matrix_sync into the
 *						   warp's staging tile, then
 *						   its 32 lanes compute f; a
 *						   copy into a 16 x 16 tile
 *						   of the same type, aligned,
 *						   straight into it
 *
 * The tile is then an array of fragments, the launch gets 32 lanes along
 * threadIdx.x, and every other statement in the warp runs on lane 0 as
 * statements outside a thread loop do.  What is read here is only where
 * the step's operands lie (leading dimensions, majors, alignment): a
 * tensorized nest whose operands wmma cannot load, or a target without
 * tensor cores, runs the nest as written on CUDA cores, and the context
 * gets a warning saying why. */

static void collect_loads(const ts_expr *e, const ts_tensor *t, ts_vec *v);
static bool mentions_buffer(const ts_stmt *s, const ts_tensor *t);

/* A per-warp accumulator held in fragments. */
struct frag {
	const ts_tensor *buf;
	int64_t nfrag;		/* 16 x 16 tiles */
	int nmma;		/* tensorized nests updating it */
};

/* One 16 x 16 tile of a buffer in a fragment nest: the loop variables of
 * its rows and columns, the offset of its first element ("base"), the
 * distance between rows ("ld", or between columns when "col_major"). */
struct tile {
	const ts_tensor *buf;
	ts_expr *base;
	int64_t ld;
	bool col_major;
	ts_aff aff;		/* the offset without rows and columns */
};

/* A fragment nest (see above): its loops kept as loops, the loops of
 * the tile's rows, columns and reduction, and the statement inside. */
struct fnest {
	int nouter;
	const ts_stmt *outer[2 * TS_MAX_DIMS + 2];
	const ts_stmt *head;	/* the loop of the rows or columns outside */
	const ts_axis *row, *col, *k;
	const ts_stmt *store;	/* fill, store: the store; mma: the update */
	struct tile acc, a, b;
	bool direct;		/* store: a plain copy into "out", no staging */
	struct tile out;
};

/* The bounds of the integer index "e" (loop variables over their
 * extents, sums, constant products, floor divisions and modulos by
 * positive constants); false when "e" is none of these. */
static bool index_range(const ts_expr *e, int64_t *lo, int64_t *hi)
{
	int64_t l1, h1, l2, h2, c;

	switch (e->kind) {
	case TS_EXPR_INT:
		*lo = *hi = e->ival;
		return true;
	case TS_EXPR_VAR:
		*lo = 0;
		*hi = e->axis->extent - 1;
		return true;
	case TS_EXPR_CAST:
		return index_range(e->a, lo, hi);
	case TS_EXPR_BINARY:
		break;
	default:
		return false;
	}
	if (!index_range(e->a, &l1, &h1))
		return false;
	if (e->op == TS_OP_FLOORDIV || e->op == TS_OP_MOD) {
		if (e->b->kind != TS_EXPR_INT || (c = e->b->ival) <= 0)
			return false;
		if (e->op == TS_OP_MOD && (l1 < 0 || h1 >= c)) {
			*lo = 0;
			*hi = c - 1;
		} else if (e->op == TS_OP_MOD) {
			*lo = l1;
			*hi = h1;
		} else {
			*lo = l1 >= 0 ? l1 / c : -((-l1 + c - 1) / c);
			*hi = h1 >= 0 ? h1 / c : -((-h1 + c - 1) / c);
		}
		return true;
	}
	if (!index_range(e->b, &l2, &h2))
		return false;
	switch (e->op) {
	case TS_OP_ADD: *lo = l1 + l2; *hi = h1 + h2; return true;
	case TS_OP_SUB: *lo = l1 - h2; *hi = h1 - l2; return true;
	case TS_OP_MUL:
		if (l2 != h2 && l1 != h1)
			return false;
		c = l2 == h2 ? l2 : l1;
		if (l2 != h2) {
			l1 = l2;
			h1 = h2;
		}
		*lo = c >= 0 ? l1 * c : h1 * c;
		*hi = c >= 0 ? h1 * c : l1 * c;
		return true;
	default:
		return false;
	}
}

/* Whether the guard "c" holds for every value of the loop variables. */
static bool always_true(const ts_expr *c)
{
	int64_t la, ha, lb, hb;

	if (c->kind == TS_EXPR_INT)
		return c->ival != 0;
	if (c->kind != TS_EXPR_BINARY)
		return false;
	if (c->op == TS_OP_AND)
		return always_true(c->a) && always_true(c->b);
	if (!index_range(c->a, &la, &ha) || !index_range(c->b, &lb, &hb))
		return false;
	switch (c->op) {
	case TS_OP_GE: return la >= hb;
	case TS_OP_GT: return la > hb;
	case TS_OP_LE: return ha <= lb;
	case TS_OP_LT: return ha < lb;
	default: return false;
	}
}

/* The perfect nest of plain loops at "s" (guards that always hold
 * skipped), outermost first, into "loops" (at most "max"); the statement
 * inside goes to "*body".  Returns the number of loops. */
static int nest_of(const ts_stmt *s, const ts_stmt **loops, int max,
	const ts_stmt **body)
{
	int n = 0;

	for (;;) {
		if (s && s->kind == TS_STMT_IF && !s->orelse &&
		    always_true(s->cond)) {
			s = s->body;
			continue;
		}
		if (!s || s->kind != TS_STMT_FOR || s->loop == TS_LOOP_BOUND ||
		    n == max)
			break;
		loops[n++] = s;
		s = s->body;
	}
	*body = s;
	return n;
}

/* The affine form of the flat offset of "t" at "idx". */
static ts_aff flat_aff(struct emit *E, const ts_tensor *t, int n,
	ts_expr *const *idx)
{
	ts_expr *off = n ? idx[0] : ts_lower_int(E->ctx, 0);

	for (int d = 1; d < n; d++)
		off = ts_add(E->ctx, ts_mul(E->ctx, off, ts_lower_int(E->ctx,
			t->shape[d])), idx[d]);
	return ts_aff_of_expr(E->ctx, off);
}

/* The coefficient of the loop variable "v" in "a", removed from "a". */
static int64_t take_coef(ts_aff *a, const ts_axis *v)
{
	int64_t c = 0;

	for (int i = 0; i < a->n; i++)
		if (a->atom[i]->kind == TS_EXPR_VAR && a->atom[i]->axis == v) {
			c += a->coef[i];
			a->coef[i] = 0;
		}
	return c;
}

/* Drop the terms of "a" whose coefficient is zero. */
static void aff_compact(ts_aff *a)
{
	int n = 0;

	for (int i = 0; i < a->n; i++)
		if (a->coef[i] != 0) {
			a->atom[n] = a->atom[i];
			a->coef[n++] = a->coef[i];
		}
	a->n = n;
}

/* Whether every coefficient of "a" and its constant are multiples of
 * "m". */
static bool aff_multiple(const ts_aff *a, int64_t m)
{
	if (!a->ok || a->cst % m)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->coef[i] % m)
			return false;
	return true;
}

/* Fill "tl" with the 16 x 16 tile of "t" at "idx" whose rows the loop
 * "u" and columns the loop "v" walk, "z" (may be NULL) having no part;
 * false unless the offset is base + ld * u + v (or base + u + ld * v,
 * column-major, when "any_major") with "ld" at least 16 and a multiple
 * of 16 bytes and "base" a multiple of 32 bytes (wmma's alignment). */
static bool tile_of(struct emit *E, const ts_tensor *t, int n,
	ts_expr *const *idx, const ts_axis *u, const ts_axis *v,
	const ts_axis *z, bool any_major, struct tile *tl)
{
	int64_t esz = (int64_t)ts_dtype_size(t->dtype), cu, cv;

	tl->buf = t;
	tl->aff = flat_aff(E, t, n, idx);
	cu = take_coef(&tl->aff, u);
	cv = take_coef(&tl->aff, v);
	if ((z && take_coef(&tl->aff, z) != 0) || !tl->aff.ok)
		return false;
	tl->col_major = cu == 1 && cv != 1;
	if (tl->col_major && !any_major)
		return false;
	tl->ld = tl->col_major ? cv : cu;
	if ((tl->col_major ? cu : cv) != 1 || tl->ld < 16 ||
	    (tl->ld * esz) % 16 || !aff_multiple(&tl->aff, 32 / esz))
		return false;
	aff_compact(&tl->aff);
	for (int i = 0; i < tl->aff.n; i++)
		if (mentions(tl->aff.atom[i], u) || mentions(tl->aff.atom[i], v) ||
		    (z && mentions(tl->aff.atom[i], z)))
			return false;
	tl->base = ts_aff_to_expr(E->ctx, &tl->aff);
	return true;
}

/* The fragment of "fr" that the tile "tl" of its buffer is, as an index
 * expression; NULL unless the tile starts on a fragment boundary (rows a
 * multiple of 16 apart, columns a multiple of 16 within a row). */
static ts_expr *frag_index(struct emit *E, const struct tile *tl)
{
	ts_aff rows = tl->aff, cols = tl->aff;
	int64_t ld = tl->ld, lo, hi;

	if (tl->col_major || ld % 16 || ts_tensor_size(tl->buf) % (16 * ld))
		return NULL;
	rows.n = cols.n = 0;
	rows.cst = tl->aff.cst / (16 * ld) * (16 * ld);
	cols.cst = tl->aff.cst - rows.cst;
	for (int i = 0; i < tl->aff.n; i++) {
		ts_aff *to = tl->aff.coef[i] % (16 * ld) == 0 ? &rows : &cols;
		if (tl->aff.coef[i] == 0)
			continue;
		to->atom[to->n] = tl->aff.atom[i];
		to->coef[to->n++] = tl->aff.coef[i];
	}
	if (!index_range(ts_aff_to_expr(E->ctx, &cols), &lo, &hi) ||
	    lo < 0 || hi + 16 > ld || !aff_multiple(&cols, 16))
		return NULL;
	for (int i = 0; i < rows.n; i++)
		rows.coef[i] /= 256;
	for (int i = 0; i < cols.n; i++)
		cols.coef[i] /= 16;
	rows.cst /= 256;
	cols.cst /= 16;
	rows = ts_aff_add(rows, &cols, 1);
	return rows.ok ? ts_aff_to_expr(E->ctx, &rows) : NULL;
}

/* Whether "t" is memory every lane of a warp sees: an argument, a global
 * temporary or a buffer in shared memory. */
static bool warp_visible(struct emit *E, const ts_tensor *t)
{
	for (int i = 0; i < E->p->nbuffers; i++)
		if (E->p->buffers[i].tensor == t)
			return true;
	for (int i = 0; i < E->mem_bufs.n; i++)
		if (E->mem_bufs.v[i] == t)
			return true;
	return false;
}

/* The f16 load "e" is, or whose f32 cast it is, or NULL. */
static const ts_expr *f16_operand(const ts_expr *e)
{
	if (e->kind == TS_EXPR_CAST && e->dtype == TS_F32)
		e = e->a;
	return e->kind == TS_EXPR_LOAD && e->tensor->dtype == TS_F16 ? e : NULL;
}

/* Whether the rows "r" and columns "c" of "nest" walk a fragment of
 * "acc" at "idx" (either loop may be the rows); fills nest->acc,
 * nest->row and nest->col. */
static bool acc_tile(struct emit *E, struct fnest *nest, const ts_tensor *acc,
	int n, ts_expr *const *idx, const ts_axis *r, const ts_axis *c)
{
	for (int swap = 0; swap < 2; swap++) {
		const ts_axis *u = swap ? c : r, *v = swap ? r : c;
		if (tile_of(E, acc, n, idx, u, v, nest->k, false, &nest->acc) &&
		    frag_index(E, &nest->acc)) {
			nest->row = u;
			nest->col = v;
			return true;
		}
	}
	return false;
}

/* The loops of "s" for a fragment nest: the two innermost walk 16 x 16;
 * the others go to nest->outer.  Returns the statement inside. */
static const ts_stmt *fnest_loops(const ts_stmt *s, struct fnest *nest)
{
	const ts_stmt *loops[2 * TS_MAX_DIMS + 4], *body;
	int n = nest_of(s, loops, 2 * TS_MAX_DIMS + 4, &body);

	if (n < 2 || loops[n - 1]->var->extent != 16 ||
	    loops[n - 2]->var->extent != 16)
		return NULL;
	nest->nouter = n - 2;
	for (int i = 0; i < n - 2; i++)
		nest->outer[i] = loops[i];
	nest->head = loops[n - 2];
	nest->row = loops[n - 2]->var;
	nest->col = loops[n - 1]->var;
	return body;
}

/* Whether "s" is a fill nest of the accumulator "acc" (see above). */
static bool match_fill(struct emit *E, const ts_stmt *s, const ts_tensor *acc,
	struct fnest *nest)
{
	const ts_stmt *b;

	memset(nest, 0, sizeof(*nest));
	if (!(b = fnest_loops(s, nest)) || b->kind != TS_STMT_STORE ||
	    b->buffer != acc || (b->value->kind != TS_EXPR_INT &&
	    b->value->kind != TS_EXPR_FLOAT))
		return false;
	nest->store = b;
	return acc_tile(E, nest, acc, b->nidx, b->idx, nest->row, nest->col);
}

/* Whether "s" is a store nest reading the accumulator "acc" (see
 * above): every load of "acc" in the stored value at one index. */
static bool match_store(struct emit *E, const ts_stmt *s, const ts_tensor *acc,
	struct fnest *nest)
{
	const ts_stmt *b;
	ts_vec loads = { 0 };

	memset(nest, 0, sizeof(*nest));
	if (!(b = fnest_loops(s, nest)) || b->kind != TS_STMT_STORE ||
	    b->buffer == acc || !ts_expr_reads(b->value, acc) ||
	    !warp_visible(E, b->buffer))
		return false;
	for (int d = 0; d < b->nidx; d++)
		if (ts_expr_reads(b->idx[d], acc))
			return false;
	collect_loads(b->value, acc, &loads);
	for (int i = 1; i < loads.n; i++)
		if (!is_load_of(loads.v[i], acc, ((ts_expr *)loads.v[0])->nargs,
		    ((ts_expr *)loads.v[0])->args))
			return false;
	nest->store = b;
	if (!acc_tile(E, nest, acc, ((ts_expr *)loads.v[0])->nargs,
	    ((ts_expr *)loads.v[0])->args, nest->row, nest->col))
		return false;
	nest->direct = b->value->kind == TS_EXPR_LOAD &&
		b->buffer->dtype == acc->dtype && tile_of(E, b->buffer, b->nidx,
		b->idx, nest->row, nest->col, NULL, true, &nest->out);
	return true;
}

/* The update "acc = acc + a * b" inside the loop of 16 "kl" (its only
 * statement), or NULL. */
static const ts_stmt *mma_update(const ts_stmt *kl)
{
	const ts_stmt *u;

	if (!kl || kl->kind != TS_STMT_FOR || kl->loop == TS_LOOP_BOUND ||
	    kl->var->extent != 16 || nest_of(kl->body, NULL, 0, &u) != 0 ||
	    !u || u->kind != TS_STMT_STORE || !ts_stmt_is_update(u) ||
	    u->value->op != TS_OP_ADD || u->value->b->kind != TS_EXPR_BINARY ||
	    u->value->b->op != TS_OP_MUL)
		return NULL;
	return u;
}

/* Whether "s" is a multiply-add nest into the accumulator "acc" (see
 * above). */
static bool match_mma(struct emit *E, const ts_stmt *s, const ts_tensor *acc,
	struct fnest *nest)
{
	const ts_stmt *b, *u, *init = NULL, *wr = NULL;
	const ts_expr *x, *y, *prod;
	int nidx;
	ts_expr *const *idx;

	memset(nest, 0, sizeof(*nest));
	if (!(b = fnest_loops(s, nest)) || !nest->head->tensorize)
		return false;
	if (b->kind == TS_STMT_ALLOC && ts_tensor_size(b->buffer) == 1 &&
	    b->body && b->body->kind == TS_STMT_BLOCK &&
	    b->body->nstmts == 3) {
		/* The accumulator promoted into a scalar. */
		init = b->body->stmts[0];
		wr = b->body->stmts[2];
		b = b->body->stmts[1];
	}
	if (!(u = mma_update(b)))
		return false;
	nest->k = b->var;
	if (init) {
		if (init->kind != TS_STMT_STORE || wr->kind != TS_STMT_STORE ||
		    init->buffer != u->buffer || wr->buffer != acc ||
		    !is_load_of(init->value, acc, wr->nidx, wr->idx) ||
		    !is_load_of(wr->value, u->buffer, init->nidx, init->idx))
			return false;
		nidx = wr->nidx;
		idx = wr->idx;
	} else {
		if (u->buffer != acc)
			return false;
		nidx = u->nidx;
		idx = u->idx;
	}
	prod = u->value->b;
	if (!(x = f16_operand(prod->a)) || !(y = f16_operand(prod->b)) ||
	    !warp_visible(E, x->tensor) || !warp_visible(E, y->tensor) ||
	    !acc_tile(E, nest, acc, nidx, idx, nest->row, nest->col))
		return false;
	nest->store = u;
	/* "a" walks rows and the reduction, "b" the reduction and
	 * columns. */
	for (int swap = 0; swap < 2; swap++) {
		const ts_expr *p = swap ? y : x, *q = swap ? x : y;
		if (tile_of(E, p->tensor, p->nargs, p->args, nest->row, nest->k,
		    nest->col, true, &nest->a) && tile_of(E, q->tensor,
		    q->nargs, q->args, nest->k, nest->col, nest->row, true,
		    &nest->b))
			return true;
	}
	return false;
}

/* Append the loads of "t" in "e" to "v". */
static void collect_loads(const ts_expr *e, const ts_tensor *t, ts_vec *v)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t)
		ts_vec_push(v, (void *)e);
	for (int i = 0; i < e->nargs; i++)
		collect_loads(e->args[i], t, v);
	collect_loads(e->a, t, v);
	collect_loads(e->b, t, v);
	collect_loads(e->c, t, v);
}

/* Whether every use of "acc" in "s" is inside a fill, multiply-add or
 * store nest; counts the multiply-add nests in "*nmma". */
static bool frag_uses(struct emit *E, const ts_stmt *s, const ts_tensor *acc,
	int *nmma)
{
	struct fnest nest;

	if (!s)
		return true;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_BOUND && s->bind != TS_BIND_VTHREAD)
			return !mentions_buffer(s->body, acc);
		if (match_mma(E, s, acc, &nest)) {
			(*nmma)++;
			return true;
		}
		if (match_fill(E, s, acc, &nest) || match_store(E, s, acc, &nest))
			return true;
		return frag_uses(E, s->body, acc, nmma);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (!frag_uses(E, s->stmts[i], acc, nmma))
				return false;
		return true;
	case TS_STMT_IF:
		return !ts_expr_reads(s->cond, acc) &&
			frag_uses(E, s->body, acc, nmma) &&
			frag_uses(E, s->orelse, acc, nmma);
	case TS_STMT_ALLOC:
		return frag_uses(E, s->body, acc, nmma);
	case TS_STMT_STORE:
		return !mentions_buffer(s, acc);
	default:
		return true;
	}
}

/* Whether the statement "s" stores to or loads "t". */
static bool mentions_buffer(const ts_stmt *s, const ts_tensor *t)
{
	if (!s)
		return false;
	switch (s->kind) {
	case TS_STMT_STORE:
		if (s->buffer == t || ts_expr_reads(s->value, t))
			return true;
		for (int d = 0; d < s->nidx; d++)
			if (ts_expr_reads(s->idx[d], t))
				return true;
		return false;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (mentions_buffer(s->stmts[i], t))
				return true;
		return false;
	case TS_STMT_IF:
		return ts_expr_reads(s->cond, t) || mentions_buffer(s->body, t) ||
			mentions_buffer(s->orelse, t);
	case TS_STMT_FOR: case TS_STMT_ALLOC:
		return mentions_buffer(s->body, t);
	default:
		return false;
	}
}

/* The fragments of buffer "t" in "E", or NULL. */
static const struct frag *frag_of(struct emit *E, const ts_tensor *t)
{
	for (int i = 0; i < E->frags.n; i++)
		if (((struct frag *)E->frags.v[i])->buf == t)
			return E->frags.v[i];
	return NULL;
}

/* Find the accumulators of kernel "s" that tensor cores can hold (see
 * above) and the buffers every lane sees; "in_x": under a loop bound to
 * threadIdx.x, "in_t": under some thread loop, "warp": under a loop bound
 * to threadIdx.y or z and none to threadIdx.x (a thread of the IR is a
 * warp there). */
static void tc_scan(struct emit *E, const ts_stmt *s, bool in_x, bool in_t,
	bool warp)
{
	int nmma = 0;

	if (!s)
		return;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_BOUND && s->bind == TS_BIND_THREAD_X) {
			in_x = in_t = true;
			warp = false;
		} else if (s->loop == TS_LOOP_BOUND && (s->bind ==
			   TS_BIND_THREAD_Y || s->bind == TS_BIND_THREAD_Z)) {
			in_t = true;
			warp = !in_x;
		}
		tc_scan(E, s->body, in_x, in_t, warp);
		return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			tc_scan(E, s->stmts[i], in_x, in_t, warp);
		return;
	case TS_STMT_IF:
		tc_scan(E, s->body, in_x, in_t, warp);
		tc_scan(E, s->orelse, in_x, in_t, warp);
		return;
	case TS_STMT_ALLOC:
		if (s->scope == TS_SCOPE_SHARED || (s->scope == TS_SCOPE_LOCAL &&
		    !in_t))
			ts_vec_push(&E->mem_bufs, s->buffer);
		tc_scan(E, s->body, in_x, in_t, warp);
		if (s->scope == TS_SCOPE_LOCAL && warp &&
		    (s->buffer->dtype == TS_F32 || s->buffer->dtype == TS_F16) &&
		    ts_tensor_size(s->buffer) % 256 == 0 &&
		    frag_uses(E, s->body, s->buffer, &nmma) && nmma > 0) {
			struct frag *fr = ts_new(struct frag);
			fr->buf = s->buffer;
			fr->nfrag = ts_tensor_size(s->buffer) / 256;
			fr->nmma = nmma;
			ts_vec_push(&E->frags, fr);
		}
		return;
	default:
		return;
	}
}

/* Whether "E" is in a warp of a tensor-core kernel, outside its lanes. */
static bool in_warp(struct emit *E)
{
	return E->k->warp && !E->tdepth[0] && (E->tdepth[1] || E->tdepth[2]);
}

/* Open the loops "nest"->outer at "ind"; return the indentation inside. */
static int open_outer(struct emit *E, const struct fnest *nest, int ind)
{
	for (int i = 0; i < nest->nouter; i++) {
		const ts_axis *v = nest->outer[i]->var;
		const char *n = cname(E, v, v->name);
		if (nest->outer[i]->loop == TS_LOOP_UNROLLED) {
			indent(E->b, ind);
			ts_buf_puts(E->b, "#pragma unroll\n");
		}
		indent(E->b, ind);
		ts_buf_printf(E->b, "for (%s %s = 0; %s < %" PRId64 "; %s++) {\n",
			var_type(v->extent), n, n, v->extent, n);
		ind++;
	}
	return ind;
}

/* Close the loops "nest"->outer opened at "ind". */
static void close_outer(struct emit *E, const struct fnest *nest, int ind)
{
	for (int i = nest->nouter - 1; i >= 0; i--) {
		indent(E->b, ind + i);
		ts_buf_puts(E->b, "}\n");
	}
}

/* The index expression "e" as C text (32-bit arithmetic when "narrow"). */
static char *index_text(struct emit *E, const ts_expr *e, bool narrow)
{
	ts_buf b;

	ts_buf_init(&b);
	E->narrow = narrow;
	emit_expr(E, &b, e);
	E->narrow = false;
	return b.s ? b.s : (char *)"0";
}

/* The fragment that the accumulator tile of "nest" is, as C text. */
static char *frag_text(struct emit *E, const struct fnest *nest)
{
	return ts_asprintf("%s[%s]", buf_name(E, nest->acc.buf),
		index_text(E, frag_index(E, &nest->acc), true));
}

/* The address of the first element of tile "tl" as C text. */
static char *tile_addr(struct emit *E, const struct tile *tl)
{
	return ts_asprintf("&%s[%s]", buf_name(E, tl->buf),
		index_text(E, tl->base, ts_tensor_size(tl->buf) < INT32_MAX));
}

/* Emit the fill nest "nest". */
static void emit_tc_fill(struct emit *E, const struct fnest *nest, int ind)
{
	int in = open_outer(E, nest, ind);
	ts_buf v;

	ts_buf_init(&v);
	emit_expr(E, &v, nest->store->value);
	indent(E->b, in);
	ts_buf_printf(E->b, "wmma::fill_fragment(%s, %s);\n", frag_text(E, nest),
		store_value(nest->acc.buf, v.s ? v.s : "0"));
	close_outer(E, nest, ind);
}

/* Emit the multiply-add nest "nest": one 16 x 16 x 16 step per
 * iteration of its outer loops. */
static void emit_tc_mma(struct emit *E, const struct fnest *nest, int ind)
{
	int in = open_outer(E, nest, ind);
	ts_buf *b = E->b;
	char *c = frag_text(E, nest);

	indent(b, in);
	ts_buf_printf(b, "{\t/* %s, %s, %s: 16 x 16 x 16 on tensor cores */\n",
		nest->row->name, nest->col->name, nest->k->name);
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, "
		"wmma::%s> ts_a;\n", nest->a.col_major ? "col_major" :
		"row_major");
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, "
		"wmma::%s> ts_b;\n", nest->b.col_major ? "col_major" :
		"row_major");
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::load_matrix_sync(ts_a, %s, %" PRId64 ");\n",
		tile_addr(E, &nest->a), nest->a.ld);
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::load_matrix_sync(ts_b, %s, %" PRId64 ");\n",
		tile_addr(E, &nest->b), nest->b.ld);
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::mma_sync(%s, ts_a, ts_b, %s);\n", c, c);
	indent(b, in);
	ts_buf_puts(b, "}\n");
	close_outer(E, nest, ind);
}

/* Emit the store nest "nest": each fragment goes to the warp's staging
 * tile, then the 32 lanes compute the stored values from it. */
static void emit_tc_store(struct emit *E, const struct fnest *nest, int ind)
{
	int in = open_outer(E, nest, ind);
	ts_buf *b = E->b;
	bool half = nest->acc.buf->dtype == TS_F16;
	const char *st = half ? "ts_stage_h" : "ts_stage_f";

	if (nest->direct) {
		indent(b, in);
		ts_buf_printf(b, "wmma::store_matrix_sync(%s, %s, %" PRId64
			", wmma::mem_%s_major);\n", tile_addr(E, &nest->out),
			frag_text(E, nest), nest->out.ld, nest->out.col_major ?
			"col" : "row");
		close_outer(E, nest, ind);
		return;
	}
	if (half)
		E->k->stage_h = true;
	else
		E->k->stage_f = true;
	indent(b, in);
	ts_buf_printf(b, "{\t/* %s, %s: through the warp's staging tile */\n",
		nest->row->name, nest->col->name);
	indent(b, in + 1);
	ts_buf_printf(b, "wmma::store_matrix_sync(%s + 256 * (ts_tid / 32), %s, "
		"16, wmma::mem_row_major);\n", st, frag_text(E, nest));
	indent(b, in + 1);
	ts_buf_puts(b, "__syncwarp();\n");
	indent(b, in + 1);
	ts_buf_puts(b, "for (int ts_e = threadIdx.x; ts_e < 256; ts_e += 32) {\n");
	indent(b, in + 2);
	ts_buf_printf(b, "const int %s = ts_e / 16;\n", cname(E, nest->row,
		nest->row->name));
	indent(b, in + 2);
	ts_buf_printf(b, "const int %s = ts_e %% 16;\n", cname(E, nest->col,
		nest->col->name));
	E->stage_buf = nest->acc.buf;
	E->stage_text = ts_asprintf("%s[256 * (ts_tid / 32) + ts_e]", st);
	E->tdepth[0]++;
	emit_store(E, nest->store, in + 2);
	E->tdepth[0]--;
	E->stage_buf = NULL;
	indent(b, in + 1);
	ts_buf_puts(b, "}\n");
	indent(b, in + 1);
	ts_buf_puts(b, "__syncwarp();\n");
	indent(b, in);
	ts_buf_puts(b, "}\n");
	close_outer(E, nest, ind);
}

/* Emit "s" on tensor cores if it is a fragment nest of an accumulator
 * of "E"; return whether it was. */
static bool emit_tc_nest(struct emit *E, const ts_stmt *s, int ind)
{
	struct fnest nest;

	for (int i = 0; i < E->frags.n; i++) {
		const ts_tensor *acc = ((struct frag *)E->frags.v[i])->buf;
		if (match_mma(E, s, acc, &nest))
			emit_tc_mma(E, &nest, ind);
		else if (match_fill(E, s, acc, &nest))
			emit_tc_fill(E, &nest, ind);
		else if (match_store(E, s, acc, &nest))
			emit_tc_store(E, &nest, ind);
		else
			continue;
		return true;
	}
	return false;
}

/* Emit the allocation "s" of the accumulator "fr" as fragments. */
static void emit_frag_alloc(struct emit *E, const ts_stmt *s,
	const struct frag *fr, int ind)
{
	bool half = fr->buf->dtype == TS_F16;

	E->uses_wmma = true;
	E->uses_f16 |= half;
	indent(E->b, ind);
	ts_buf_puts(E->b, "{\n");
	indent(E->b, ind + 1);
	ts_buf_printf(E->b, "wmma::fragment<wmma::accumulator, 16, 16, 16, %s> "
		"%s[%" PRId64 "];\t/* %s, per warp: 16 x 16 tiles */\n",
		half ? "__half" : "float", buf_name(E, fr->buf), fr->nfrag,
		fr->buf->name);
	emit_stmt(E, s->body, ind + 1);
	indent(E->b, ind);
	ts_buf_puts(E->b, "}\n");
}

/* Emit the plain loop "s". */
static void emit_for(struct emit *E, const ts_stmt *s, int ind)
{
	ts_buf *b = E->b, *saved = E->b, inner;
	const ts_stmt *loops[TS_MAX_DIMS], *st = NULL;
	const char *v = cname(E, s->var, s->var->name);
	int n;

	if (in_warp(E) && emit_tc_nest(E, s, ind))
		return;
	if (E->k->nthreads > 1 && (n = copy_nest(E, s, loops, &st)) >= 0)
		return emit_coop_copy(E, loops, n, st, ind);
	if (s->loop == TS_LOOP_UNROLLED || (s->loop == TS_LOOP_BOUND &&
	    s->bind == TS_BIND_VTHREAD) || s->loop == TS_LOOP_VECTORIZED) {
		indent(b, ind);
		ts_buf_puts(b, "#pragma unroll\n");
	}
	indent(b, ind);
	ts_buf_printf(b, "for (%s %s = 0; %s < %" PRId64 "; %s++) {\n",
		var_type(s->var->extent), v, v, s->var->extent, v);
	ts_buf_init(&inner);
	E->b = &inner;
	emit_stmt(E, s->body, ind + 1);
	E->b = saved;
	if (inner.s)
		ts_buf_puts(b, inner.s);
	/* A barrier in the body: the next iteration must not overwrite
	 * what threads of this one still read. */
	if (inner.s && strstr(inner.s, "__syncthreads") && !E->divergent &&
	    outside_threads(E)) {
		indent(b, ind + 1);
		ts_buf_puts(b, "__syncthreads();\n");
	}
	indent(b, ind);
	ts_buf_puts(b, "}\n");
}

/* Emit the block "s": between two statements that run outside some
 * thread loop, a barrier makes the first one's stores visible. */
static void emit_block(struct emit *E, const ts_stmt *s, int ind)
{
	bool prev = false;

	for (int i = 0; i < s->nstmts; i++) {
		const ts_stmt *c = s->stmts[i];
		if (!c)
			continue;
		if (prev && E->k->nthreads > 1 && outside_threads(E)) {
			if (E->divergent)
				return fail(E, "kernel '%s': a barrier is "
					"needed under a condition on the "
					"thread index", E->k->name);
			indent(E->b, ind);
			ts_buf_puts(E->b, "__syncthreads();\n");
		}
		emit_stmt(E, c, ind);
		prev = has_store(c);
	}
}

/* Emit the allocation "s". */
static void emit_alloc(struct emit *E, const ts_stmt *s, int ind)
{
	ts_buf *b = E->b;
	const ts_tensor *t = s->buffer;
	int64_t n = ts_tensor_size(t);
	bool shared = s->scope == TS_SCOPE_SHARED;
	int mark = E->shared_bufs.n, tmark = E->thread_bufs.n;
	const struct frag *fr = frag_of(E, t);

	if (fr)
		return emit_frag_alloc(E, s, fr, ind);
	if (s->scope == TS_SCOPE_GLOBAL || s->scope == TS_SCOPE_ARG)
		return fail(E, "kernel '%s': buffer '%s' in %s memory is "
			"allocated inside a kernel", E->k->name, t->name,
			ts_scope_name(s->scope));
	/* In a warp of a tensor-core kernel a local buffer is the warp's
	 * (its statements run on lane 0). */
	if (!shared && E->k->nthreads > 1 && outside_threads(E) &&
	    !in_warp(E)) {
		for (int d = 0; d < 3; d++)
			if (E->tdepth[d])
				return fail(E, "kernel '%s': buffer '%s' is "
					"allocated inside the loop bound to "
					"threadIdx.%c but outside another "
					"thread loop", E->k->name, t->name,
					dims[d]);
		shared = true;
	}
	if (t->dtype == TS_F16)
		E->uses_f16 = true;
	indent(b, ind);
	ts_buf_puts(b, "{\n");
	indent(b, ind + 1);
	if (shared) {
		ts_buf_printf(b, "__shared__ __align__(32) %s %s[%" PRId64 "];"
			"\t/* %s */\n", ts_cuda_mem_type(t->dtype), buf_name(E, t), n,
			t->name);
		E->k->shared += n * (int64_t)ts_dtype_size(t->dtype);
		ts_vec_push(&E->shared_bufs, (void *)t);
	} else {
		ts_buf_printf(b, "%s %s[%" PRId64 "];\t/* %s, per thread */\n",
			ts_cuda_mem_type(t->dtype), buf_name(E, t), n, t->name);
		ts_vec_push(&E->thread_bufs, (void *)t);
	}
	emit_stmt(E, s->body, ind + 1);
	E->shared_bufs.n = mark;
	E->thread_bufs.n = tmark;
	indent(b, ind);
	ts_buf_puts(b, "}\n");
}

/* Whether "e" loads from memory. */
static bool has_load(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD)
		return true;
	return has_load(e->a) || has_load(e->b) || has_load(e->c);
}

/* Emit the conditional "s" (a condition without loads is on indices:
 * 32-bit arithmetic). */
static void emit_if(struct emit *E, const ts_stmt *s, int ind)
{
	ts_buf *b = E->b;
	bool div = E->divergent;

	if (mentions_thread(E, s->cond))
		E->divergent = true;
	indent(b, ind);
	ts_buf_puts(b, "if (");
	E->narrow = !has_load(s->cond);
	emit_expr(E, b, s->cond);
	E->narrow = false;
	ts_buf_puts(b, ") {\n");
	emit_stmt(E, s->body, ind + 1);
	if (s->orelse) {
		indent(b, ind);
		ts_buf_puts(b, "} else {\n");
		emit_stmt(E, s->orelse, ind + 1);
	}
	indent(b, ind);
	ts_buf_puts(b, "}\n");
	E->divergent = div;
}

/* Emit the statement "s" at indentation "ind". */
static void emit_stmt(struct emit *E, const ts_stmt *s, int ind)
{
	const ts_stmt *st = NULL;

	if (!s || E->failed)
		return;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_BOUND && s->bind != TS_BIND_VTHREAD &&
		    s->bind != TS_BIND_NONE)
			emit_bound(E, s, ind);
		else
			emit_for(E, s, ind);
		return;
	case TS_STMT_BLOCK:
		emit_block(E, s, ind);
		return;
	case TS_STMT_IF:
	case TS_STMT_STORE:
		/* A copy of one element into shared memory: by one thread. */
		if (E->k->nthreads > 1 && !E->in_copy &&
		    copy_nest(E, s, NULL, &st) == 0)
			return emit_coop_copy(E, NULL, 0, st, ind);
		if (s->kind == TS_STMT_IF)
			emit_if(E, s, ind);
		else
			emit_store(E, s, ind);
		return;
	case TS_STMT_ALLOC:
		emit_alloc(E, s, ind);
		return;
	case TS_STMT_SYNC:
		if (E->divergent)
			return fail(E, "kernel '%s': a barrier under a "
				"condition on the thread index", E->k->name);
		indent(E->b, ind);
		ts_buf_puts(E->b, "__syncthreads();\n");
		return;
	default:
		fail(E, "unknown statement kind %d", (int)s->kind);
	}
}

/* Collect the launch extents of the bound loops of "s" into "k"; fail on
 * a loop bound inside another loop bound to the same index. */
static void scan_bound(struct emit *E, const ts_stmt *s, struct kern *k,
	int *depth)
{
	if (!s || E->failed)
		return;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_BOUND && s->bind >= TS_BIND_BLOCK_X &&
		    s->bind <= TS_BIND_THREAD_Z) {
			int b = s->bind - TS_BIND_BLOCK_X;
			int64_t *dim = b < 3 ? &k->grid[b] : &k->block[b - 3];
			if (depth[b])
				return fail(E, "kernel '%s': loop '%s' is bound "
					"to %s inside another loop bound to it",
					k->name, s->var->name,
					ts_bind_name(s->bind));
			*dim = TS_MAX(*dim, s->var->extent);
			if (b < 3)
				k->bused[b] = true;
			else
				k->tused[b - 3] = true;
			depth[b]++;
			scan_bound(E, s->body, k, depth);
			depth[b]--;
			return;
		}
		scan_bound(E, s->body, k, depth);
		return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			scan_bound(E, s->stmts[i], k, depth);
		return;
	case TS_STMT_IF:
		scan_bound(E, s->body, k, depth);
		scan_bound(E, s->orelse, k, depth);
		return;
	case TS_STMT_ALLOC:
		scan_bound(E, s->body, k, depth);
		return;
	default:
		return;
	}
}

/* Check the launch of "k" against the limits of "E"'s target. */
static void check_launch(struct emit *E, struct kern *k)
{
	const ts_target *t = E->opts->target;
	int64_t maxt = t && t->gpu.max_threads_per_block ?
		t->gpu.max_threads_per_block : MAX_THREADS;
	static const int64_t gmax[3] = { INT32_MAX, 65535, 65535 };
	static const int64_t bmax[3] = { 1024, 1024, 64 };

	for (int d = 0; d < 3; d++) {
		if (k->grid[d] > gmax[d])
			fail(E, "kernel '%s': %" PRId64 " blocks along %c "
				"(at most %" PRId64 ")", k->name, k->grid[d],
				dims[d], gmax[d]);
		if (k->block[d] > bmax[d])
			fail(E, "kernel '%s': %" PRId64 " threads along %c "
				"(at most %" PRId64 ")", k->name, k->block[d],
				dims[d], bmax[d]);
	}
	if (k->nthreads > maxt)
		fail(E, "kernel '%s': %" PRId64 " threads per block (at most "
			"%" PRId64 ")", k->name, k->nthreads, maxt);
}

/* The parameter list every kernel of "E" takes. */
static char *params(struct emit *E)
{
	ts_buf b;

	ts_buf_init(&b);
	for (int i = 0; i < E->p->nbuffers; i++) {
		const ts_cuda_buffer *cb = &E->p->buffers[i];
		bool in = cb->arg >= 0 && cb->arg < E->f->ninputs;
		ts_buf_printf(&b, "%s%s%s *__restrict__ %s", i ? ",\n\t" : "",
			in ? "const " : "", ts_cuda_mem_type(cb->tensor->dtype),
			cb->cname);
	}
	return b.s ? b.s : (char *)"void";
}

/* Why kernel "k" cannot run on tensor cores whatever its nests, or
 * NULL. */
static const char *tc_refusal(struct emit *E, const struct kern *k)
{
	const ts_target *t = E->opts->target;

	if (t && t->gpu.cc_major > 0 && t->gpu.cc_major < 7)
		return ts_asprintf("target sm_%d%d has no tensor cores",
			t->gpu.cc_major, t->gpu.cc_minor);
	if (k->block[0] != 1 && k->block[0] != 32)
		return ts_asprintf("its threads are not warps (%d threads "
			"along threadIdx.x)", (int)k->block[0]);
	return NULL;
}

/* The number of tensorized loops in "s". */
static int count_tensorized(const ts_stmt *s)
{
	int n = 0;

	if (!s)
		return 0;
	switch (s->kind) {
	case TS_STMT_FOR:
		return s->tensorize + count_tensorized(s->body);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			n += count_tensorized(s->stmts[i]);
		return n;
	case TS_STMT_IF:
		return count_tensorized(s->body) + count_tensorized(s->orelse);
	case TS_STMT_ALLOC:
		return count_tensorized(s->body);
	default:
		return 0;
	}
}

/* Warn when a tensorized nest of kernel "k" (top-level statement "s")
 * runs on CUDA cores: "why" the kernel cannot use tensor cores, or NULL
 * when some nest's operands or accumulator are the reason. */
static void tc_report(struct emit *E, const struct kern *k, const ts_stmt *s,
	const char *why)
{
	int asked = count_tensorized(s), done = 0;

	for (int i = 0; i < E->frags.n; i++)
		done += ((struct frag *)E->frags.v[i])->nmma;
	if (done >= asked)
		return;
	ts_ctx_warn(E->ctx, "kernel %s: %d of %d tensorized nests run on CUDA "
		"cores: %s", k->name, asked - done, asked, why ? why :
		"wmma cannot hold their accumulator or load their operands "
		"(16 x 16 tiles of f16 in memory every lane sees, rows 16 "
		"bytes and tiles 32 bytes aligned)");
}

/* Emit the kernel for the top-level statement "s" into "out". */
static void emit_kernel(struct emit *E, const ts_stmt *s, ts_buf *out)
{
	struct kern *k = ts_new(struct kern);
	int depth[6] = { 0 };
	int64_t smax = E->opts->target && E->opts->target->gpu.shared_per_block
		? E->opts->target->gpu.shared_per_block : MAX_SHARED;
	const char *why;
	ts_buf body;
	ts_cuda_launch_desc *l;

	k->name = ts_asprintf("%s_k%d", E->p->name, E->p->nkernels);
	for (int d = 0; d < 3; d++)
		k->grid[d] = k->block[d] = 1;
	scan_bound(E, s, k, depth);
	E->frags.n = E->mem_bufs.n = 0;
	tc_scan(E, s, false, false, false);
	why = tc_refusal(E, k);
	if (E->frags.n && !why) {
		/* Each thread of the IR is a warp of 32 lanes. */
		k->warp = true;
		k->block[0] = 32;
		k->tused[0] = true;
	} else {
		E->frags.n = 0;
	}
	tc_report(E, k, s, why);
	k->nthreads = k->block[0] * k->block[1] * k->block[2];
	check_launch(E, k);
	if (E->failed)
		return;
	E->k = k;
	ts_buf_init(&body);
	E->b = &body;
	emit_stmt(E, s, 1);
	if (E->failed)
		return;
	for (int h = 0; h < 2; h++)
		if (h ? k->stage_h : k->stage_f)
			k->shared += k->nthreads / 32 * 256 * (h ? 2 : 4);
	if (k->shared > smax)
		return fail(E, "kernel '%s': %" PRId64 " bytes of shared memory "
			"(at most %" PRId64 ")", k->name, k->shared, smax);
	ts_buf_printf(out, "\n/* Kernel %d: grid (%" PRId64 ", %" PRId64 ", "
		"%" PRId64 "), block (%" PRId64 ", %" PRId64 ", %" PRId64 "). */\n"
		"extern \"C\" __global__ void __launch_bounds__(%" PRId64 ")\n"
		"%s(%s)\n{\n", E->p->nkernels, k->grid[0], k->grid[1],
		k->grid[2], k->block[0], k->block[1], k->block[2], k->nthreads,
		k->name, params(E));
	if (k->nthreads > 1)
		ts_buf_printf(out, "\tconst int ts_tid = threadIdx.x + "
			"%" PRId64 " * (threadIdx.y + %" PRId64 " * threadIdx.z);"
			"\n", k->block[0], k->block[1]);
	else
		ts_buf_puts(out, "\tconst int ts_tid = 0;\n");
	for (int h = 0; h < 2; h++)
		if (h ? k->stage_h : k->stage_f)
			ts_buf_printf(out, "\t__shared__ __align__(32) %s "
				"ts_stage_%c[%" PRId64 "];\t/* a 16 x 16 tile "
				"per warp */\n", h ? "__half" : "float",
				h ? 'h' : 'f', k->nthreads / 32 * 256);
	ts_buf_printf(out, "\t(void)ts_tid;\n%s}\n", body.s ? body.s : "");
	E->p->kernels = ts_grow(E->p->kernels, sizeof(ts_cuda_launch_desc),
		E->p->nkernels, E->p->nkernels + 1);
	l = &E->p->kernels[E->p->nkernels++];
	l->name = k->name;
	for (int d = 0; d < 3; d++) {
		l->grid[d] = (unsigned)k->grid[d];
		l->block[d] = (unsigned)k->block[d];
	}
	l->shared_bytes = (unsigned)k->shared;
}

/* Add the buffer "t" (argument "arg", or -1) to the program of "E". */
static void add_buffer(struct emit *E, const ts_tensor *t, int arg)
{
	ts_cuda_program *p = E->p;
	ts_cuda_buffer *cb;

	p->buffers = ts_grow(p->buffers, sizeof(ts_cuda_buffer), p->nbuffers,
		p->nbuffers + 1);
	cb = &p->buffers[p->nbuffers++];
	cb->tensor = t;
	cb->cname = buf_name(E, t);
	cb->arg = arg;
	cb->bytes = (size_t)ts_tensor_size(t) * ts_dtype_size(t->dtype);
}

/* Collect the global temporaries around the kernels of "s" and the
 * kernels themselves, in order. */
static void collect(struct emit *E, const ts_stmt *s, ts_vec *kernels)
{
	if (!s)
		return;
	if (s->kind == TS_STMT_ALLOC && s->scope == TS_SCOPE_GLOBAL) {
		add_buffer(E, s->buffer, -1);
		collect(E, s->body, kernels);
	} else if (s->kind == TS_STMT_BLOCK) {
		for (int i = 0; i < s->nstmts; i++)
			collect(E, s->stmts[i], kernels);
	} else {
		ts_vec_push(kernels, (void *)s);
	}
}

/* The helpers every program starts with. */
static const char prelude[] =
	"template <typename T> __device__ __forceinline__ T ts_min(T a, T b)\n"
	"{\n\treturn b < a ? b : a;\n}\n"
	"template <typename T> __device__ __forceinline__ T ts_max(T a, T b)\n"
	"{\n\treturn b > a ? b : a;\n}\n"
	"template <typename T> __device__ __forceinline__ T ts_abs(T a)\n"
	"{\n\treturn a < 0 ? -a : a;\n}\n"
	"/* 1, -1, or a zero or NaN itself (doc/grammar.md). */\n"
	"template <typename T> __device__ __forceinline__ T ts_sign(T a)\n"
	"{\n\treturn a > 0 ? (T)1 : a < 0 ? (T)-1 : a;\n}\n"
	"/* Floor division and modulo of integers (Python's // and %); a zero\n"
	" * divisor gives 0, and -1 cannot overflow (doc/grammar.md). */\n"
	"template <typename T> __device__ __forceinline__ T ts_floordiv(T a, T b)\n"
	"{\n\tT q;\n\n\tif (b == 0)\n\t\treturn 0;\n"
	"\tif ((T)-1 < (T)0 && b == (T)-1)\n"
	"\t\treturn (T)(0ull - (unsigned long long)a);\n\tq = a / b;\n"
	"\tif (a % b != 0 && ((a < 0) != (b < 0)))\n"
	"\t\tq--;\n\treturn q;\n}\n"
	"template <typename T> __device__ __forceinline__ T ts_mod(T a, T b)\n"
	"{\n\tT r;\n\n\tif (b == 0 || ((T)-1 < (T)0 && b == (T)-1))\n"
	"\t\treturn 0;\n"
	"\tr = a % b;\n\tif (r != 0 && ((r < 0) != (b < 0)))\n"
	"\t\tr += b;\n\treturn r;\n}\n"
	"template <typename T> __device__ __forceinline__ T ts_ipow(T a, T b)\n"
	"{\n\treturn (T)pow((double)a, (double)b);\n}\n"
	"/* A float cast to an integer type of range [lo, hi]: truncated\n"
	" * toward zero and saturated, NaN giving 0. */\n"
	"template <typename F> __device__ __forceinline__ long long\n"
	"ts_ftoi(F x, long long lo, long long hi)\n"
	"{\n\tif (x != x)\n\t\treturn 0;\n\tif (x <= (F)lo)\n\t\treturn lo;\n"
	"\tif (x >= (F)hi)\n\t\treturn hi;\n\treturn (long long)x;\n}\n"
	"/* ... and to u64, whose range long long does not hold. */\n"
	"template <typename F> __device__ __forceinline__ unsigned long long\n"
	"ts_ftou64(F x)\n"
	"{\n\tif (!(x > (F)0))\n\t\treturn 0;\n"
	"\tif (x >= (F)18446744073709551616.0)\n"
	"\t\treturn 18446744073709551615ull;\n"
	"\treturn (unsigned long long)x;\n}\n"
	"__device__ __forceinline__ float ts_floordivf(float a, float b)\n"
	"{\n\treturn floorf(a / b);\n}\n"
	"__device__ __forceinline__ double ts_floordivd(double a, double b)\n"
	"{\n\treturn floor(a / b);\n}\n"
	"__device__ __forceinline__ float ts_modf(float a, float b)\n"
	"{\n\treturn a - b * floorf(a / b);\n}\n"
	"__device__ __forceinline__ double ts_modd(double a, double b)\n"
	"{\n\treturn a - b * floor(a / b);\n}\n";

/* Whether "e" computes or reads a bf16 value anywhere. */
static bool expr_bf16(const ts_expr *e)
{
	if (!e)
		return false;
	if (e->dtype == TS_BF16)
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_bf16(e->args[i]))
			return true;
	return expr_bf16(e->a) || expr_bf16(e->b) || expr_bf16(e->c);
}

/* Whether "s" holds a bf16 buffer or value: bf16 is left to the CPU
 * backend, as cuda_bf16.h would need a device to be checked against. */
static bool has_bf16(const ts_stmt *s)
{
	if (!s)
		return false;
	if (s->buffer && s->buffer->dtype == TS_BF16)
		return true;
	if (expr_bf16(s->cond) || expr_bf16(s->value))
		return true;
	for (int i = 0; i < s->nidx; i++)
		if (expr_bf16(s->idx[i]))
			return true;
	for (int i = 0; i < s->nstmts; i++)
		if (has_bf16(s->stmts[i]))
			return true;
	return has_bf16(s->body) || has_bf16(s->orelse);
}

/* Whether an argument of "f" is bf16. */
static bool args_bf16(const ts_func *f)
{
	for (int i = 0; i < f->nargs; i++)
		if (f->args[i]->dtype == TS_BF16)
			return true;
	return false;
}

ts_cuda_program *ts_cuda_emit(ts_ctx *ctx, const ts_func *f,
	const ts_cuda_options *opts)
{
	static const ts_cuda_options none;
	struct emit E = { ctx, f, opts ? opts : &none };
	ts_cuda_program *p = ts_new(ts_cuda_program);
	ts_vec kernels = { 0 };
	ts_buf out, src;

	if (!f)
		return NULL;
	if (has_bf16(f->body) || args_bf16(f)) {
		ts_ctx_set_error(ctx, "CUDA C: '%s' uses bf16, which the CUDA "
			"C emitter does not support (compute in f16 or f32, or "
			"run it on the CPU)", f->name ? f->name : "kernel");
		return NULL;
	}
	E.p = p;
	p->func = f;
	p->name = cname(&E, p, f->name ? f->name : "kernel");
	for (int i = 0; i < f->nargs; i++) {
		add_buffer(&E, f->args[i], i);
		/* Every kernel takes every buffer: an f16 argument no
		 * statement reads still appears in the parameter lists. */
		E.uses_f16 |= f->args[i]->dtype == TS_F16;
	}
	collect(&E, f->body, &kernels);
	ts_buf_init(&out);
	for (int i = 0; i < kernels.n && !E.failed; i++)
		emit_kernel(&E, kernels.v[i], &out);
	if (E.failed)
		return NULL;
	ts_buf_init(&src);
	ts_buf_printf(&src, "/* CUDA C generated by Tessel for \"%s\": %d "
		"kernel%s, launched in order. */\n", f->name ? f->name : "",
		p->nkernels, p->nkernels == 1 ? "" : "s");
	if (E.uses_f16)
		ts_buf_puts(&src, "#include <cuda_fp16.h>\n");
	if (E.uses_wmma)
		ts_buf_puts(&src, "#include <mma.h>\nnamespace wmma = "
			"nvcuda::wmma;\n");
	ts_buf_puts(&src, prelude);
	if (out.s)
		ts_buf_puts(&src, out.s);
	p->source = src.s;
	return p;
}

void ts_cuda_program_print(FILE *out, const ts_cuda_program *p)
{
	for (int i = 0; i < p->nbuffers; i++) {
		const ts_cuda_buffer *b = &p->buffers[i];
		fprintf(out, "buffer %d %s: %s, %zu bytes, %s\n", i, b->cname,
			ts_dtype_name(b->tensor->dtype), b->bytes, b->arg < 0 ?
			"temporary" : b->arg < p->func->ninputs ? "input" :
			"output");
	}
	for (int i = 0; i < p->nkernels; i++) {
		const ts_cuda_launch_desc *l = &p->kernels[i];
		fprintf(out, "kernel %s: grid (%u, %u, %u), block (%u, %u, %u), "
			"%u bytes of shared memory\n", l->name, l->grid[0],
			l->grid[1], l->grid[2], l->block[0], l->block[1],
			l->block[2], l->shared_bytes);
	}
}

char *ts_cuda_program_header(const ts_cuda_program *p)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "/* Launch description of the CUDA program \"%s\" "
		"generated by Tessel.\n * Every kernel takes every buffer, in "
		"this order:\n", p->name);
	for (int i = 0; i < p->nbuffers; i++)
		ts_buf_printf(&b, " *\t%d %s: %s, %zu bytes, %s\n", i,
			p->buffers[i].cname,
			ts_dtype_name(p->buffers[i].tensor->dtype),
			p->buffers[i].bytes, p->buffers[i].arg < 0 ?
			"temporary (allocate it)" : p->buffers[i].arg <
			p->func->ninputs ? "input" : "output");
	ts_buf_printf(&b, " * Launch the kernels in order. */\n"
		"#ifndef TS_CUDA_%s_H\n#define TS_CUDA_%s_H\n\n"
		"#define %s_NBUFFERS %d\n#define %s_NKERNELS %d\n\n"
		"static const struct {\n\tconst char *name;\n"
		"\tunsigned grid[3], block[3];\n\tunsigned shared_bytes;\n"
		"} %s_kernels[%d] = {\n", p->name, p->name, p->name,
		p->nbuffers, p->name, p->nkernels, p->name,
		p->nkernels ? p->nkernels : 1);
	for (int i = 0; i < p->nkernels; i++) {
		const ts_cuda_launch_desc *l = &p->kernels[i];
		ts_buf_printf(&b, "\t{ \"%s\", { %u, %u, %u }, { %u, %u, %u }, "
			"%u },\n", l->name, l->grid[0], l->grid[1], l->grid[2],
			l->block[0], l->block[1], l->block[2], l->shared_bytes);
	}
	ts_buf_printf(&b, "};\n\n#endif\n");
	return b.s;
}
