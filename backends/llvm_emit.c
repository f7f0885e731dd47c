/* Loop IR to LLVM IR.
 *
 * Requires: a ts_func whose buffers are its arguments or allocated by
 * ALLOC statements, and whose variables are bound by enclosing loops.
 * Produces: one verified LLVM module holding the external function
 * "void name(T *noalias arg0, ...)" and, per parallel loop, an internal
 * body function and a trampoline called by ts_runtime_parallel_for.
 *
 * Values live in registers with the "register type" of their dtype: bool
 * is i1 (i8 in memory), f16 and bf16 are computed as float (in memory
 * half, and i16 holding the upper half of a float, each cast to f16 or
 * bf16 rounds), the integers are the LLVM integers of their width (the
 * unsigned ones told apart by the instructions on them), other dtypes
 * are themselves.  Inside a vectorized
 * loop of extent W the body is emitted once: the loop variable is the
 * vector <0, 1, ..., W-1>, values that do not depend on it stay scalar
 * and are splatted where they meet a vector, guards whose condition is a
 * vector become masks of the loads and stores beneath them.
 */
#include <config.h>

#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "backends/llvm_internal.h"

/* Unrolled loops longer than this run as scalar loops instead.
 * Vectorized loops wider than TS_MAX_VECTOR_LANES do too. */
#define TS_MAX_UNROLL 1024

struct binding {
	const void *key;	/* a ts_tensor (buffers) or a ts_axis (vars) */
	LLVMValueRef v;
};

struct env {
	struct binding *b;
	int n, cap;
};

typedef struct emitter {
	ts_ctx *ctx;
	const ts_func *f;
	const ts_compile_options *opt;
	const struct ts_llvm_target *target;
	LLVMContextRef c;
	LLVMModuleRef m;
	LLVMBuilderRef b;	/* the current insertion point */
	LLVMBuilderRef ab;	/* allocas, at the end of the entry block */
	LLVMValueRef fn;	/* the function being emitted */
	const char *sym;	/* the external function's name */
	struct env bufs;	/* buffer -> pointer */
	struct env vars;	/* loop variable -> i64 (or vector of i64) */
	const ts_axis *inner;	/* the innermost loop's variable, or NULL */
	bool reciprocal;	/* the store being emitted lets a quotient
				 * by an invariant be a reciprocal product
				 * (reciprocal_quotient) */
	const ts_axis *vaxis;	/* the vectorized variable, or NULL */
	unsigned width;		/* its extent, 0 outside vector code */
	LLVMValueRef mask;	/* active lanes under vector guards, or NULL */
	bool lane0;		/* read "vaxis" as 0: contiguous addresses */
	int nouter;		/* parallel bodies outlined so far */
	ts_status status;	/* TS_ERROR once a message is set */
	LLVMTypeRef i1, i8, i16, i32, i64, half, f32, f64, ptr, vd;
} emitter;

static LLVMValueRef emit_expr(emitter *e, const ts_expr *x);
static void emit_stmt(emitter *e, const ts_stmt *s);

/* Record the error "fmt" in the context of "e" unless one is recorded. */
static void emit_error(emitter *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void emit_error(emitter *e, const char *fmt, ...)
{
	va_list ap;

	if (e->status == TS_ERROR)
		return;
	va_start(ap, fmt);
	ts_ctx_set_error(e->ctx, "%s", ts_vasprintf(fmt, ap));
	va_end(ap);
	e->status = TS_ERROR;
}

/* Bind "key" to "v" in "env", shadowing earlier bindings. */
static void env_push(struct env *env, const void *key, LLVMValueRef v)
{
	if (env->n == env->cap) {
		int cap = env->cap ? 2 * env->cap : 16;
		env->b = ts_grow(env->b, sizeof(*env->b), env->n, cap);
		env->cap = cap;
	}
	env->b[env->n].key = key;
	env->b[env->n++].v = v;
}

/* The innermost value bound to "key" in "env", or NULL. */
static LLVMValueRef env_find(const struct env *env, const void *key)
{
	for (int i = env->n - 1; i >= 0; i--)
		if (env->b[i].key == key)
			return env->b[i].v;
	return NULL;
}

/* Types. */

/* The register type of "t". */
static LLVMTypeRef reg_type(emitter *e, ts_dtype t)
{
	switch (t) {
	case TS_BOOL: return e->i1;
	case TS_I8: case TS_U8: return e->i8;
	case TS_I16: case TS_U16: return e->i16;
	case TS_I32: case TS_U32: return e->i32;
	case TS_I64: case TS_U64: return e->i64;
	case TS_F64: return e->f64;
	default: return e->f32;
	}
}

/* The memory type of "t". */
static LLVMTypeRef mem_type(emitter *e, ts_dtype t)
{
	if (t == TS_BOOL)
		return e->i8;
	if (t == TS_F16)
		return e->half;
	if (t == TS_BF16)
		return e->i16;
	return reg_type(e, t);
}

/* Whether "v" is a vector. */
static bool is_vec(LLVMValueRef v)
{
	return LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind;
}

/* "t", or the vector of "t" when "like" is a vector. */
static LLVMTypeRef shaped(emitter *e, LLVMTypeRef t, LLVMValueRef like)
{
	return like && is_vec(like) ? LLVMVectorType(t, e->width) : t;
}

/* "v" broadcast to the current vector width. */
static LLVMValueRef splat(emitter *e, LLVMValueRef v)
{
	LLVMTypeRef vt;
	LLVMValueRef ins;

	if (!e->width || is_vec(v))
		return v;
	vt = LLVMVectorType(LLVMTypeOf(v), e->width);
	ins = LLVMBuildInsertElement(e->b, LLVMGetPoison(vt), v,
		LLVMConstInt(e->i32, 0, 0), "");
	return LLVMBuildShuffleVector(e->b, ins, LLVMGetPoison(vt),
		LLVMConstNull(LLVMVectorType(e->i32, e->width)), "");
}

/* Give "*a" and "*b" the same shape (both scalar or both vectors). */
static void unify(emitter *e, LLVMValueRef *a, LLVMValueRef *b)
{
	if (is_vec(*a) || is_vec(*b)) {
		*a = splat(e, *a);
		*b = splat(e, *b);
	}
}

/* The constant "v" of type "t", shaped like "like". */
static LLVMValueRef int_like(emitter *e, LLVMValueRef like, long long v)
{
	LLVMTypeRef t = LLVMTypeOf(like);

	if (!is_vec(like))
		return LLVMConstInt(t, (unsigned long long)v, 1);
	return splat(e, LLVMConstInt(LLVMGetElementType(t),
		(unsigned long long)v, 1));
}

/* The float constant "v" of the type of "like", shaped like "like". */
static LLVMValueRef real_like(emitter *e, LLVMValueRef like, double v)
{
	LLVMTypeRef t = LLVMTypeOf(like);

	if (!is_vec(like))
		return LLVMConstReal(t, v);
	return splat(e, LLVMConstReal(LLVMGetElementType(t), v));
}

/* Calls. */

/* Call the intrinsic "name" overloaded on "types" with "args". */
static LLVMValueRef call_intrinsic(emitter *e, const char *name,
	LLVMTypeRef *types, int ntypes, LLVMValueRef *args, int nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->m, id, types, ntypes);
	LLVMTypeRef ft = LLVMIntrinsicGetType(e->c, id, types, ntypes);

	return LLVMBuildCall2(e->b, ft, fn, args, nargs, "");
}

/* The intrinsic "name" applied to "v", overloaded on its type. */
static LLVMValueRef call_math1(emitter *e, const char *name, LLVMValueRef v)
{
	LLVMTypeRef t = LLVMTypeOf(v);

	return call_intrinsic(e, name, &t, 1, &v, 1);
}

/* The intrinsic "name"("a", "b"), overloaded on the type of "a". */
static LLVMValueRef call_math2(emitter *e, const char *name, LLVMValueRef a,
	LLVMValueRef b)
{
	LLVMTypeRef t = LLVMTypeOf(a);
	LLVMValueRef args[2] = { a, b };

	return call_intrinsic(e, name, &t, 1, args, 2);
}

/* The intrinsic "name"("a", "b", "c"), overloaded on the type of "a". */
static LLVMValueRef call_math3(emitter *e, const char *name, LLVMValueRef a,
	LLVMValueRef b, LLVMValueRef c)
{
	LLVMTypeRef t = LLVMTypeOf(a);
	LLVMValueRef args[3] = { a, b, c };

	return call_intrinsic(e, name, &t, 1, args, 3);
}

/* The external function "name" of type "ft", declared once. */
static LLVMValueRef declare(emitter *e, const char *name, LLVMTypeRef ft)
{
	LLVMValueRef fn = LLVMGetNamedFunction(e->m, name);

	if (!fn)
		fn = LLVMAddFunction(e->m, name, ft);
	return fn;
}

/* The C library function "name" (float) or "name64" (double) applied to
 * each lane of "v". */
static LLVMValueRef call_libm(emitter *e, const char *name,
	const char *name64, LLVMValueRef v)
{
	LLVMTypeRef st = LLVMTypeOf(v), ft;
	LLVMValueRef fn, out;

	if (is_vec(v))
		st = LLVMGetElementType(st);
	ft = LLVMFunctionType(st, &st, 1, 0);
	fn = declare(e, st == e->f64 ? name64 : name, ft);
	if (!is_vec(v))
		return LLVMBuildCall2(e->b, ft, fn, &v, 1, "");
	out = LLVMGetPoison(LLVMTypeOf(v));
	for (unsigned i = 0; i < e->width; i++) {
		LLVMValueRef k = LLVMConstInt(e->i32, i, 0);
		LLVMValueRef x = LLVMBuildExtractElement(e->b, v, k, "");
		x = LLVMBuildCall2(e->b, ft, fn, &x, 1, "");
		out = LLVMBuildInsertElement(e->b, out, x, k, "");
	}
	return out;
}

/* Analysis of index expressions. */

/* Whether "x" depends on the variable "v". */
static bool depends(const ts_expr *x, const ts_axis *v)
{
	if (!x)
		return false;
	if (x->kind == TS_EXPR_VAR)
		return x->axis == v;
	if (x->kind == TS_EXPR_LOAD) {
		for (int i = 0; i < x->nargs; i++)
			if (depends(x->args[i], v))
				return true;
		return false;
	}
	return depends(x->a, v) || depends(x->b, v) || depends(x->c, v);
}

/* Whether "x" is "v" plus something that does not depend on "v". */
static bool unit_stride(const ts_expr *x, const ts_axis *v)
{
	if (x->kind == TS_EXPR_VAR)
		return x->axis == v;
	if (x->kind != TS_EXPR_BINARY)
		return false;
	if (x->op == TS_OP_ADD)
		return (unit_stride(x->a, v) && !depends(x->b, v)) ||
			(unit_stride(x->b, v) && !depends(x->a, v));
	if (x->op == TS_OP_SUB)
		return unit_stride(x->a, v) && !depends(x->b, v);
	return false;
}

/* A positive number that the integer "x" is always a multiple of (0 for
 * the constant 0, a multiple of everything); 1 when nothing is known. */
static int64_t known_multiple(const ts_expr *x)
{
	int64_t a, b;

	if (x->kind == TS_EXPR_INT)
		return x->ival == INT64_MIN ? 1 : x->ival < 0 ? -x->ival :
			x->ival;
	if (x->kind != TS_EXPR_BINARY || !ts_dtype_is_int(x->dtype))
		return 1;
	a = known_multiple(x->a);
	b = known_multiple(x->b);
	switch (x->op) {
	case TS_OP_ADD:
	case TS_OP_SUB:
		return ts_gcd64(a, b);
	case TS_OP_MUL:
		if (!a || !b)
			return 0;
		return a > INT64_MAX / b ? 1 : a * b;
	default:
		return 1;
	}
}

/* Whether "x" is "v" plus something independent of "v" that is a
 * multiple of "w": over the "w" lanes of "v" it stays inside one aligned
 * run of "w" integers. */
static bool aligned_unit_stride(const ts_expr *x, const ts_axis *v,
	int64_t w)
{
	if (x->kind == TS_EXPR_VAR)
		return x->axis == v;
	if (x->kind != TS_EXPR_BINARY ||
	    (x->op != TS_OP_ADD && x->op != TS_OP_SUB))
		return false;
	if (aligned_unit_stride(x->a, v, w) && !depends(x->b, v))
		return known_multiple(x->b) % w == 0;
	return x->op == TS_OP_ADD && aligned_unit_stride(x->b, v, w) &&
		!depends(x->a, v) && known_multiple(x->a) % w == 0;
}

/* Whether "x" is "X // B" or "X % B" ("op") with X an aligned unit
 * stride in "v" over its "w" lanes and B a positive multiple of "w": the
 * lanes then stay inside one block of B, so that the quotient is the
 * same on every lane and the remainder steps by one (the index of a
 * blocked layout, NCHW[x]c, read along its inner dimension). */
static bool block_index(const ts_expr *x, const ts_axis *v, int64_t w,
	ts_op op)
{
	return w > 0 && x->kind == TS_EXPR_BINARY && x->op == op &&
		x->b->kind == TS_EXPR_INT && x->b->ival > 0 &&
		x->b->ival % w == 0 && aligned_unit_stride(x->a, v, w);
}

/* Whether the access "idx" of a vector loop reads or writes W elements
 * next to each other. */
static bool contiguous(emitter *e, int n, ts_expr *const *idx)
{
	if (!e->vaxis || n == 0)
		return false;
	for (int k = 0; k < n - 1; k++)
		if (depends(idx[k], e->vaxis) && !block_index(idx[k],
		    e->vaxis, e->width, TS_OP_FLOORDIV))
			return false;
	return unit_stride(idx[n - 1], e->vaxis) || block_index(idx[n - 1],
		e->vaxis, e->width, TS_OP_MOD);
}

/* Whether the body "s" of the vectorized loop over "v" can be emitted
 * once with vectors: every store's address depends on "v", and nothing
 * beneath needs its own copy per lane (allocations, nested parallel or
 * vector loops, barriers). */
static bool vec_ok(const ts_stmt *s, const ts_axis *v)
{
	bool ok = false;

	if (!s)
		return true;
	switch (s->kind) {
	case TS_STMT_FOR:
		return s->loop != TS_LOOP_PARALLEL &&
			s->loop != TS_LOOP_VECTORIZED &&
			s->loop != TS_LOOP_BOUND && vec_ok(s->body, v);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (!vec_ok(s->stmts[i], v))
				return false;
		return true;
	case TS_STMT_IF:
		return vec_ok(s->body, v) && vec_ok(s->orelse, v);
	case TS_STMT_STORE:
		for (int i = 0; i < s->nidx; i++)
			ok = ok || depends(s->idx[i], v);
		return ok;
	default:
		return false;
	}
}

/* Expressions. */

/* "v" (an integer of dtype "t") as i64, shaped as it is. */
static LLVMValueRef to_i64(emitter *e, LLVMValueRef v, ts_dtype t)
{
	LLVMTypeRef it = shaped(e, e->i64, v);

	if (t == TS_I64 || t == TS_U64)
		return v;
	if (!ts_dtype_is_signed(t))
		return LLVMBuildZExt(e->b, v, it, "");
	return LLVMBuildSExt(e->b, v, it, "");
}

/* The C-order linear index of "idx" into "t". */
static LLVMValueRef emit_index(emitter *e, const ts_tensor *t, int n,
	ts_expr *const *idx)
{
	LLVMValueRef lin = NULL;
	int64_t stride = 1;

	for (int k = n - 1; k >= 0; k--) {
		LLVMValueRef v = to_i64(e, emit_expr(e, idx[k]), idx[k]->dtype);
		if (stride != 1)
			v = LLVMBuildNSWMul(e->b, v, int_like(e, v, stride), "");
		if (lin) {
			unify(e, &lin, &v);
			lin = LLVMBuildNSWAdd(e->b, lin, v, "");
		} else {
			lin = v;
		}
		stride *= t->shape[k];
	}
	return lin ? lin : LLVMConstInt(e->i64, 0, 0);
}

/* The pointer to buffer "t", or NULL with an error naming "what". */
static LLVMValueRef buffer_ptr(emitter *e, const ts_tensor *t,
	const char *what)
{
	LLVMValueRef p = env_find(&e->bufs, t);

	if (!p)
		emit_error(e, "%s buffer '%s', which is neither an argument of "
			"'%s' nor allocated around this statement", what,
			t->name, e->f->name);
	return p;
}

/* The address of the first element of a contiguous access. */
static LLVMValueRef lane0_address(emitter *e, const ts_tensor *t,
	LLVMValueRef base, int n, ts_expr *const *idx)
{
	LLVMValueRef lin;
	bool saved = e->lane0;

	e->lane0 = true;
	lin = emit_index(e, t, n, idx);
	e->lane0 = saved;
	return LLVMBuildGEP2(e->b, mem_type(e, t->dtype), base, &lin, 1, "");
}

/* The bf16 bits "v" (i16) widened exactly to float. */
static LLVMValueRef bf16_to_float(emitter *e, LLVMValueRef v)
{
	v = LLVMBuildZExt(e->b, v, shaped(e, e->i32, v), "");
	v = LLVMBuildShl(e->b, v, int_like(e, v, 16), "");
	return LLVMBuildBitCast(e->b, v, shaped(e, e->f32, v), "");
}

/* The float "v" rounded to the nearest even bf16, as bits (i16): add
 * 0x7fff plus the lowest kept bit, then drop the low half; a NaN stays
 * a quiet NaN (ts_f32_to_bf16).  Integer operations, as no LLVM 16
 * target lowers bfloat conversions everywhere. */
static LLVMValueRef float_to_bf16(emitter *e, LLVMValueRef v)
{
	LLVMValueRef x = LLVMBuildBitCast(e->b, v, shaped(e, e->i32, v), "");
	LLVMValueRef hi = LLVMBuildLShr(e->b, x, int_like(e, x, 16), "");
	LLVMValueRef odd = LLVMBuildAnd(e->b, hi, int_like(e, x, 1), "");
	LLVMValueRef r = LLVMBuildAdd(e->b, x, LLVMBuildAdd(e->b, odd,
		int_like(e, x, 0x7fff), ""), "");
	LLVMValueRef nan = LLVMBuildFCmp(e->b, LLVMRealUNO, v, v, "");

	r = LLVMBuildLShr(e->b, r, int_like(e, x, 16), "");
	r = LLVMBuildSelect(e->b, nan, LLVMBuildOr(e->b, hi,
		int_like(e, x, 0x40), ""), r, "");
	return LLVMBuildTrunc(e->b, r, shaped(e, e->i16, v), "");
}

/* "v" loaded from memory of dtype "t" in its register type. */
static LLVMValueRef from_mem(emitter *e, LLVMValueRef v, ts_dtype t)
{
	if (t == TS_BOOL)
		return LLVMBuildICmp(e->b, LLVMIntNE, v,
			LLVMConstNull(LLVMTypeOf(v)), "");
	if (t == TS_F16)
		return LLVMBuildFPExt(e->b, v, shaped(e, e->f32, v), "");
	if (t == TS_BF16)
		return bf16_to_float(e, v);
	return v;
}

/* "v" in register type converted to the memory type of "t". */
static LLVMValueRef to_mem(emitter *e, LLVMValueRef v, ts_dtype t)
{
	if (t == TS_BOOL)
		return LLVMBuildZExt(e->b, v, shaped(e, e->i8, v), "");
	if (t == TS_F16)
		return LLVMBuildFPTrunc(e->b, v, shaped(e, e->half, v), "");
	if (t == TS_BF16)
		return float_to_bf16(e, v);
	return v;
}

/* The mask of the current guards, all lanes when there is none. */
static LLVMValueRef current_mask(emitter *e)
{
	if (e->mask)
		return e->mask;
	return LLVMConstAllOnes(LLVMVectorType(e->i1, e->width));
}

/* The W lanes of "v", then lane 0 of "v" again up to "n" lanes. */
static LLVMValueRef pad_lanes(emitter *e, LLVMValueRef v, unsigned n)
{
	LLVMValueRef *idx = ts_new_array(LLVMValueRef, n);

	for (unsigned i = 0; i < n; i++)
		idx[i] = LLVMConstInt(e->i32, i < e->width ? i : 0, 0);
	return LLVMBuildShuffleVector(e->b, v, LLVMGetPoison(LLVMTypeOf(v)),
		LLVMConstVector(idx, n), "");
}

static LLVMValueRef widened_mask(emitter *e, unsigned w2);
static LLVMValueRef resize_lanes(emitter *e, LLVMValueRef v, unsigned n);

/* The power of two at or above the vector width of "e". */
static unsigned pow2_width(const emitter *e)
{
	unsigned n = 1;

	while (n < (unsigned)e->width)
		n *= 2;
	return n;
}

/* Load W lanes of "mt" from the pointers "ptrs" (a vector).  A width that
 * is no power of two is padded with lanes that are off and point where
 * lane 0 does: LLVM 16 widens such a gather with undefined pointers, and
 * on AVX-512 may then give the gather its index register as destination,
 * which the processor refuses (SIGILL). */
static LLVMValueRef gather(emitter *e, LLVMTypeRef mt, LLVMValueRef ptrs,
	unsigned align)
{
	unsigned n = pow2_width(e);
	LLVMTypeRef vt = LLVMVectorType(mt, n);
	LLVMValueRef mask = current_mask(e), args[4], v;

	if (n != (unsigned)e->width) {
		ptrs = pad_lanes(e, ptrs, n);
		mask = widened_mask(e, n);
	}
	args[0] = ptrs;
	args[1] = LLVMConstInt(e->i32, align, 0);
	args[2] = mask;
	args[3] = LLVMGetPoison(vt);
	v = call_intrinsic(e, "llvm.masked.gather", (LLVMTypeRef[]){ vt,
		LLVMTypeOf(ptrs) }, 2, args, 4);
	return n == (unsigned)e->width ? v : resize_lanes(e, v, e->width);
}

/* The power of two a vector of W "mt" is widened to in memory, or 0:
 * W itself is a power of two, or the target has no masked moves of
 * 4- or 8-byte elements (AVX and later on x86).  LLVM splits a load or a
 * store of 7, 14 or 28 lanes into pieces of 8, 4, 2 and 1 stitched
 * together; a masked move of the next power of two is one instruction,
 * and the arithmetic on the lanes is widened the same way. */
static unsigned widened(emitter *e, LLVMTypeRef mt, unsigned align)
{
	const char *f = e->target->features;
	unsigned w2 = 1;

	if (!e->width || !(e->width & (e->width - 1)) || (align != 4 &&
	    align != 8) || LLVMGetTypeKind(mt) == LLVMPointerTypeKind ||
	    !f || !strstr(f, "+avx"))
		return 0;
	while (w2 < e->width)
		w2 *= 2;
	return w2;
}

/* The mask of the current guards widened to "w2" lanes, the new lanes
 * off. */
static LLVMValueRef widened_mask(emitter *e, unsigned w2)
{
	LLVMValueRef m = current_mask(e);
	LLVMValueRef *idx = ts_new_array(LLVMValueRef, w2);

	for (unsigned i = 0; i < w2; i++)
		idx[i] = LLVMConstInt(e->i32, i < e->width ? i : e->width, 0);
	return LLVMBuildShuffleVector(e->b, m, LLVMConstNull(LLVMTypeOf(m)),
		LLVMConstVector(idx, w2), "");
}

/* "v" (of W or "w2" lanes) resized to "n" lanes: its first lanes, then
 * poison. */
static LLVMValueRef resize_lanes(emitter *e, LLVMValueRef v, unsigned n)
{
	LLVMValueRef *idx = ts_new_array(LLVMValueRef, n);
	unsigned have = LLVMGetVectorSize(LLVMTypeOf(v));

	for (unsigned i = 0; i < n; i++)
		idx[i] = i < have ? LLVMConstInt(e->i32, i, 0) :
			LLVMGetPoison(e->i32);
	return LLVMBuildShuffleVector(e->b, v, LLVMGetPoison(LLVMTypeOf(v)),
		LLVMConstVector(idx, n), "");
}

/* Load a vector of W contiguous "mt" at "p", under the current mask;
 * widened (widened()) when "wide", which a buffer kept on the stack must
 * not be: LLVM keeps it in registers only under plain loads and stores. */
static LLVMValueRef load_vector(emitter *e, LLVMTypeRef mt, LLVMValueRef p,
	unsigned align, bool wide)
{
	LLVMTypeRef vt = LLVMVectorType(mt, e->width);
	LLVMTypeRef types[2] = { vt, e->ptr };
	LLVMValueRef args[4] = { p, LLVMConstInt(e->i32, align, 0), e->mask,
		LLVMGetPoison(vt) };
	LLVMValueRef v;
	unsigned w2 = wide ? widened(e, mt, align) : 0;

	if (w2) {
		types[0] = LLVMVectorType(mt, w2);
		args[2] = widened_mask(e, w2);
		args[3] = LLVMGetPoison(types[0]);
		return resize_lanes(e, call_intrinsic(e, "llvm.masked.load",
			types, 2, args, 4), e->width);
	}
	if (e->mask)
		return call_intrinsic(e, "llvm.masked.load", types, 2, args, 4);
	v = LLVMBuildLoad2(e->b, vt, p, "");
	LLVMSetAlignment(v, align);
	return v;
}

/* A load from a buffer (LOAD node "x"). */
static LLVMValueRef emit_load(emitter *e, const ts_expr *x)
{
	const ts_tensor *t = x->tensor;
	LLVMTypeRef mt = mem_type(e, t->dtype);
	LLVMValueRef base = buffer_ptr(e, t, "load from"), lin, p, v;
	unsigned align = ts_dtype_size(t->dtype);

	if (!base)
		return LLVMGetPoison(reg_type(e, x->dtype));
	if (!e->lane0 && contiguous(e, x->nargs, x->args)) {
		p = lane0_address(e, t, base, x->nargs, x->args);
		return from_mem(e, load_vector(e, mt, p, align,
			!LLVMIsAAllocaInst(base)), t->dtype);
	}
	lin = emit_index(e, t, x->nargs, x->args);
	if (!e->lane0 && e->width && (is_vec(lin) || e->mask)) {
		/* Lanes apart, or one address under a mask that may be
		 * empty: a gather loads only the active lanes. */
		p = LLVMBuildGEP2(e->b, mt, base, (LLVMValueRef[]){
			splat(e, lin) }, 1, "");
		return from_mem(e, gather(e, mt, p, align), t->dtype);
	}
	p = LLVMBuildGEP2(e->b, mt, base, &lin, 1, "");
	v = LLVMBuildLoad2(e->b, mt, p, "");
	LLVMSetAlignment(v, align);
	return from_mem(e, v, t->dtype);
}

/* The float "v" converted to the integer dtype "to" (not bool):
 * truncated toward zero and saturated to the range of "to", NaN giving
 * 0, as llvm.fpto[su]i.sat define it. */
static LLVMValueRef float_to_int(emitter *e, LLVMValueRef v, ts_dtype to)
{
	LLVMTypeRef types[2] = { shaped(e, reg_type(e, to), v),
		LLVMTypeOf(v) };

	return call_intrinsic(e, ts_dtype_is_signed(to) ? "llvm.fptosi.sat" :
		"llvm.fptoui.sat", types, 2, &v, 1);
}

/* "v" of dtype "from" converted to dtype "to" (CAST semantics: floats
 * to integers truncate toward zero and saturate, NaN giving 0; integers
 * to integers wrap; f16 rounds, from f64 through f32). */
static LLVMValueRef emit_convert(emitter *e, LLVMValueRef v, ts_dtype from,
	ts_dtype to)
{
	LLVMTypeRef rt = shaped(e, reg_type(e, to), v);
	bool ffrom = ts_dtype_is_float(from), fto = ts_dtype_is_float(to);
	LLVMValueRef r;

	if (from == to)
		return v;
	if (to == TS_BOOL)
		return ffrom ? LLVMBuildFCmp(e->b, LLVMRealUNE, v,
				real_like(e, v, 0), "")
			: LLVMBuildICmp(e->b, LLVMIntNE, v, int_like(e, v, 0), "");
	if (to == TS_F16) {
		LLVMTypeRef ht = shaped(e, e->half, v);
		if (from == TS_F64)
			v = LLVMBuildFPTrunc(e->b, v, shaped(e, e->f32, v), "");
		if (ffrom)
			r = LLVMBuildFPTrunc(e->b, v, ht, "");
		else if (ts_dtype_is_signed(from))
			r = LLVMBuildSIToFP(e->b, v, ht, "");
		else
			r = LLVMBuildUIToFP(e->b, v, ht, "");
		return LLVMBuildFPExt(e->b, r, rt, "");
	}
	if (to == TS_BF16) {
		/* Through f32 (one rounding from an integer or f64, as the
		 * interpreter), then to the nearest bf16. */
		v = emit_convert(e, v, from, TS_F32);
		return bf16_to_float(e, float_to_bf16(e, v));
	}
	if (ffrom && fto)
		return LLVMBuildFPCast(e->b, v, rt, "");
	if (fto)
		return ts_dtype_is_signed(from) ? LLVMBuildSIToFP(e->b, v, rt, "")
			: LLVMBuildUIToFP(e->b, v, rt, "");
	if (ffrom)
		return float_to_int(e, v, to);
	return LLVMBuildIntCast2(e->b, v, rt, ts_dtype_is_signed(from), "");
}

/* Integer floor division or modulo (Python semantics) of "a" by "b" of
 * dtype "t".  A zero divisor gives 0, so no lane can trap. */
static LLVMValueRef int_floordiv(emitter *e, ts_op op, LLVMValueRef a,
	LLVMValueRef b, ts_dtype t)
{
	LLVMValueRef zero = int_like(e, a, 0), one = int_like(e, a, 1);
	LLVMValueRef bz, m1, sb, q, r, fix;

	bz = LLVMBuildICmp(e->b, LLVMIntEQ, b, zero, "");
	if (!ts_dtype_is_signed(t)) {
		sb = LLVMBuildSelect(e->b, bz, one, b, "");
		q = op == TS_OP_FLOORDIV ? LLVMBuildUDiv(e->b, a, sb, "")
			: LLVMBuildURem(e->b, a, sb, "");
		return LLVMBuildSelect(e->b, bz, zero, q, "");
	}
	/* a / -1 overflows for the smallest value: divide by 1, negate. */
	m1 = LLVMBuildICmp(e->b, LLVMIntEQ, b, int_like(e, a, -1), "");
	sb = LLVMBuildSelect(e->b, LLVMBuildOr(e->b, bz, m1, ""), one, b, "");
	q = LLVMBuildSDiv(e->b, a, sb, "");
	r = LLVMBuildSRem(e->b, a, sb, "");
	fix = LLVMBuildAnd(e->b, LLVMBuildICmp(e->b, LLVMIntNE, r, zero, ""),
		LLVMBuildICmp(e->b, LLVMIntSLT, LLVMBuildXor(e->b, r, sb, ""),
			zero, ""), "");
	if (op == TS_OP_FLOORDIV) {
		q = LLVMBuildSub(e->b, q, LLVMBuildZExt(e->b, fix,
			LLVMTypeOf(q), ""), "");
		q = LLVMBuildSelect(e->b, m1, LLVMBuildNeg(e->b, a, ""), q, "");
	} else {
		q = LLVMBuildSelect(e->b, fix, LLVMBuildAdd(e->b, r, sb, ""),
			r, "");
		q = LLVMBuildSelect(e->b, m1, zero, q, "");
	}
	return LLVMBuildSelect(e->b, bz, zero, q, "");
}

static const LLVMRealPredicate fcmp_of[TS_OP_COUNT] = {
	[TS_OP_LT] = LLVMRealOLT, [TS_OP_LE] = LLVMRealOLE,
	[TS_OP_GT] = LLVMRealOGT, [TS_OP_GE] = LLVMRealOGE,
	[TS_OP_EQ] = LLVMRealOEQ, [TS_OP_NE] = LLVMRealUNE,
};

static const LLVMIntPredicate scmp_of[TS_OP_COUNT] = {
	[TS_OP_LT] = LLVMIntSLT, [TS_OP_LE] = LLVMIntSLE,
	[TS_OP_GT] = LLVMIntSGT, [TS_OP_GE] = LLVMIntSGE,
	[TS_OP_EQ] = LLVMIntEQ, [TS_OP_NE] = LLVMIntNE,
};

static const LLVMIntPredicate ucmp_of[TS_OP_COUNT] = {
	[TS_OP_LT] = LLVMIntULT, [TS_OP_LE] = LLVMIntULE,
	[TS_OP_GT] = LLVMIntUGT, [TS_OP_GE] = LLVMIntUGE,
	[TS_OP_EQ] = LLVMIntEQ, [TS_OP_NE] = LLVMIntNE,
};

/* The binary "op" on floats "a" and "b". */
static LLVMValueRef float_binary(emitter *e, ts_op op, LLVMValueRef a,
	LLVMValueRef b)
{
	LLVMValueRef q;

	switch (op) {
	case TS_OP_ADD: return LLVMBuildFAdd(e->b, a, b, "");
	case TS_OP_SUB: return LLVMBuildFSub(e->b, a, b, "");
	case TS_OP_MUL: return LLVMBuildFMul(e->b, a, b, "");
	case TS_OP_DIV: return LLVMBuildFDiv(e->b, a, b, "");
	case TS_OP_FLOORDIV:
	case TS_OP_MOD:
		q = call_math1(e, "llvm.floor", LLVMBuildFDiv(e->b, a, b, ""));
		if (op == TS_OP_FLOORDIV)
			return q;
		return LLVMBuildFSub(e->b, a, LLVMBuildFMul(e->b, b, q, ""), "");
	case TS_OP_MIN:		/* b < a ? b : a, as the interpreter */
		return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOLT,
			b, a, ""), b, a, "");
	case TS_OP_MAX:
		return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, LLVMRealOGT,
			b, a, ""), b, a, "");
	case TS_OP_POW:
		q = ts_llvm_math_pow(e->m, e->b, a, b);
		return q ? q : call_math2(e, "llvm.pow", a, b);
	default: return LLVMBuildFCmp(e->b, fcmp_of[op], a, b, "");
	}
}

/* The binary "op" on integers (or bools) "a" and "b" of dtype "t". */
static LLVMValueRef int_binary(emitter *e, ts_op op, LLVMValueRef a,
	LLVMValueRef b, ts_dtype t)
{
	bool sg = ts_dtype_is_signed(t);

	switch (op) {
	case TS_OP_ADD: return LLVMBuildAdd(e->b, a, b, "");
	case TS_OP_SUB: return LLVMBuildSub(e->b, a, b, "");
	case TS_OP_MUL: return LLVMBuildMul(e->b, a, b, "");
	case TS_OP_FLOORDIV:
	case TS_OP_MOD: return int_floordiv(e, op, a, b, t);
	case TS_OP_MIN:
		return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b,
			sg ? LLVMIntSLT : LLVMIntULT, a, b, ""), a, b, "");
	case TS_OP_MAX:
		return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b,
			sg ? LLVMIntSGT : LLVMIntUGT, a, b, ""), a, b, "");
	case TS_OP_AND: return LLVMBuildAnd(e->b, a, b, "");
	case TS_OP_OR: return LLVMBuildOr(e->b, a, b, "");
	case TS_OP_DIV:
	case TS_OP_POW:
		/* The DSL gives these float operands only; integers (from a
		 * hand-built tree) go through f64 and truncate. */
		a = emit_convert(e, a, t, TS_F64);
		b = emit_convert(e, b, t, TS_F64);
		return LLVMBuildCast(e->b, sg ? LLVMFPToSI : LLVMFPToUI,
			float_binary(e, op, a, b), shaped(e, reg_type(e, t), a),
			"");
	default:
		return LLVMBuildICmp(e->b, sg ? scmp_of[op] : ucmp_of[op], a, b,
			"");
	}
}

/* x*y + z as llvm.fmuladd (one FMA where the target has it). */
static LLVMValueRef emit_fmuladd(emitter *e, const ts_expr *mul,
	LLVMValueRef z)
{
	LLVMValueRef x = emit_expr(e, mul->a), y = emit_expr(e, mul->b);

	unify(e, &x, &y);
	unify(e, &x, &z);
	unify(e, &y, &z);
	return call_math3(e, "llvm.fmuladd", x, y, z);
}

static LLVMValueRef emit_select(emitter *e, const ts_expr *x);
static bool reads_memory(const ts_expr *x);

/* Whether the operand "x" of a select, && or || must run only where it
 * is chosen: it reads memory that is not in bounds on the whole range of
 * its loops (a loop variable ranges over [0, extent)).  An operand safe
 * everywhere is evaluated eagerly, without a branch or a mask, so that
 * the loop stays straight-line code LLVM can vectorise. */
static bool needs_guard(const ts_expr *x)
{
	return reads_memory(x) && !ts_expr_safe_everywhere(x);
}

/* "a && b" as select(a, b, false) and "a || b" as select(a, true, b)
 * ("x"), so that "b" runs only where "a" leaves the result open, like
 * the arm of a select: a guard may protect a load. */
static LLVMValueRef emit_logic_guarded(emitter *e, const ts_expr *x)
{
	ts_expr sel = *x, k = { .kind = TS_EXPR_INT, .dtype = TS_BOOL };

	k.ival = x->op == TS_OP_OR;
	sel.kind = TS_EXPR_SELECT;
	sel.b = x->op == TS_OP_OR ? &k : x->b;
	sel.c = x->op == TS_OP_OR ? x->b : &k;
	return emit_select(e, &sel);
}

/* Whether "x" holds a float quotient. */
static bool has_quotient(const ts_expr *x)
{
	if (!x || x->kind == TS_EXPR_LOAD)
		return false;
	if (x->kind == TS_EXPR_BINARY && x->op == TS_OP_DIV &&
	    ts_dtype_is_float(x->dtype))
		return true;
	return has_quotient(x->a) || has_quotient(x->b) ||
		has_quotient(x->c);
}

/* Whether "x" could tell a quotient from the product by its reciprocal:
 * a rounding, a sign, a float floor division or remainder, a float
 * comparison or a cast to an integer above a quotient (round(x /
 * scale) would move by one where the two differ in their last bit). */
static bool sees_last_bit(const ts_expr *x)
{
	bool sensitive;

	if (!x || x->kind == TS_EXPR_LOAD)
		return false;
	switch (x->kind) {
	case TS_EXPR_UNARY:
		sensitive = x->op == TS_OP_FLOOR || x->op == TS_OP_ROUND ||
			x->op == TS_OP_CEIL || x->op == TS_OP_SIGN;
		break;
	case TS_EXPR_BINARY:
		sensitive = ts_dtype_is_float(x->a->dtype) &&
			(x->op == TS_OP_FLOORDIV || x->op == TS_OP_MOD ||
			(x->op >= TS_OP_LT && x->op <= TS_OP_NE));
		break;
	case TS_EXPR_CAST:
		sensitive = !ts_dtype_is_float(x->dtype);
		break;
	default:
		sensitive = false;
	}
	if (sensitive && has_quotient(x))
		return true;
	return sees_last_bit(x->a) || sees_last_bit(x->b) ||
		sees_last_bit(x->c);
}

/* Whether the float quotient "x" may be emitted as a product by the
 * reciprocal of its divisor: the divisor does not change in the
 * innermost loop while the dividend does (a row scaled by one of its
 * statistics, exp(x - m) / sum; an average's sum(x / 9)), and the value
 * being stored does not round it (e->reciprocal, set by emit_store).
 * One division per iteration costs as much as the rest of such a loop
 * (vdivps: a vector each 5 cycles on Zen 3, 16 with AVX-512 on Skylake;
 * nine a vector of a 3x3 average pooling, whose canonical form divides
 * each term, ran it at 9% of a copy's bandwidth on a Zen 4); a multiply
 * by the reciprocal, which LLVM computes once outside the loop, costs
 * one FMA-port cycle.  It rounds twice: the value may differ from the
 * quotient in its last bit or two (doc/grammar.md). */
static bool reciprocal_quotient(const emitter *e, const ts_expr *x)
{
	return e->reciprocal && e->inner && x->op == TS_OP_DIV &&
		ts_dtype_is_float(x->dtype) && !depends(x->b, e->inner) &&
		depends(x->a, e->inner);
}

/* The quotient "x" as its dividend times the reciprocal of its divisor
 * (reciprocal_quotient). */
static LLVMValueRef emit_reciprocal_product(emitter *e, const ts_expr *x)
{
	LLVMValueRef a = emit_expr(e, x->a), b = emit_expr(e, x->b);

	b = LLVMBuildFDiv(e->b, real_like(e, b, 1.0), b, "");
	unify(e, &a, &b);
	return LLVMBuildFMul(e->b, a, b, "");
}

/* Whether the integer "x" is never negative: built from loop variables
 * (which run from 0), constants of at least 0, and sums, products,
 * minima, maxima, quotients and remainders of such by positive
 * constants. */
static bool nonneg(const ts_expr *x)
{
	switch (x->kind) {
	case TS_EXPR_VAR:
		return true;
	case TS_EXPR_INT:
		return x->ival >= 0;
	case TS_EXPR_BINARY:
		switch (x->op) {
		case TS_OP_ADD:
		case TS_OP_MUL:
		case TS_OP_MIN:
			return nonneg(x->a) && nonneg(x->b);
		case TS_OP_MAX:
			return nonneg(x->a) || nonneg(x->b);
		case TS_OP_FLOORDIV:
		case TS_OP_MOD:
			return nonneg(x->a) && x->b->kind == TS_EXPR_INT &&
				x->b->ival > 0;
		default:
			return false;
		}
	default:
		return false;
	}
}

/* The floor quotient or remainder "x" of a dividend that is never
 * negative by a positive constant: an unsigned division, which LLVM
 * turns into a shift or a multiply at once.  The signed form with its
 * correction for negative dividends hid from LLVM, in a parallel loop's
 * body whose variables arrive as arguments, that the blocks of a
 * blocked layout are contiguous: it neither unrolled nor vectorised the
 * loop (measured for an AVX2 target: a sum of 1280 products into 1000
 * outputs read through blocks of 8, in tiles of 40, 1.14 ms in a parallel loop on one
 * thread against 0.062 ms serial). */
static bool unsigned_quotient(const ts_expr *x)
{
	return (x->op == TS_OP_FLOORDIV || x->op == TS_OP_MOD) &&
		ts_dtype_is_int(x->dtype) && x->b->kind == TS_EXPR_INT &&
		x->b->ival > 0 && nonneg(x->a);
}

/* A BINARY node "x". */
static LLVMValueRef emit_binary(emitter *e, const ts_expr *x)
{
	ts_dtype t = x->a->dtype;
	LLVMValueRef a, b;

	if ((x->op == TS_OP_AND || x->op == TS_OP_OR) && needs_guard(x->b))
		return emit_logic_guarded(e, x);
	if (reciprocal_quotient(e, x))
		return emit_reciprocal_product(e, x);

	a = emit_expr(e, x->a);
	/* pow(a, 2) is a * a, exactly (the square of an f32 is exact in
	 * the f64 the interpreter computes in): a layer norm's variance as
	 * exported from PyTorch squares 98,304 elements through the
	 * general pow, 0.49 ms of a 26 ms transformer layer. */
	if (x->op == TS_OP_POW && ts_dtype_is_float(t) &&
	    x->b->kind == TS_EXPR_FLOAT && x->b->fval == 2.0)
		return LLVMBuildFMul(e->b, a, a, "");
	b = emit_expr(e, x->b);
	unify(e, &a, &b);
	if (ts_dtype_is_float(t))
		return float_binary(e, x->op, a, b);
	if (unsigned_quotient(x))
		return x->op == TS_OP_FLOORDIV ? LLVMBuildUDiv(e->b, a, b, "")
			: LLVMBuildURem(e->b, a, b, "");
	return int_binary(e, x->op, a, b, t);
}

/* tanh("v") = sign(v) (1 - t) / (1 + t) with t = exp(-2|v|). */
static LLVMValueRef emit_tanh(emitter *e, LLVMValueRef v)
{
	LLVMValueRef one = real_like(e, v, 1.0);
	LLVMValueRef t = call_math1(e, "llvm.fabs", v);

	t = call_math1(e, "llvm.exp", LLVMBuildFMul(e->b, t,
		real_like(e, v, -2.0), ""));
	t = LLVMBuildFDiv(e->b, LLVMBuildFSub(e->b, one, t, ""),
		LLVMBuildFAdd(e->b, one, t, ""), "");
	return call_math2(e, "llvm.copysign", t, v);
}

/* sign("v") of dtype "t": 1 above zero, -1 below, and otherwise a float
 * zero or NaN itself (as the interpreter), an integer 0. */
static LLVMValueRef emit_sign(emitter *e, LLVMValueRef v, ts_dtype t)
{
	LLVMValueRef pos, neg, zero;

	if (ts_dtype_is_float(t)) {
		zero = real_like(e, v, 0.0);
		pos = LLVMBuildFCmp(e->b, LLVMRealOGT, v, zero, "");
		neg = LLVMBuildFCmp(e->b, LLVMRealOLT, v, zero, "");
		v = LLVMBuildSelect(e->b, neg, real_like(e, v, -1.0), v, "");
		return LLVMBuildSelect(e->b, pos, real_like(e, v, 1.0), v, "");
	}
	zero = int_like(e, v, 0);
	pos = LLVMBuildICmp(e->b, ts_dtype_is_signed(t) ? LLVMIntSGT
		: LLVMIntUGT, v, zero, "");
	if (!ts_dtype_is_signed(t))
		return LLVMBuildZExt(e->b, pos, LLVMTypeOf(v), "");
	neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, zero, "");
	return LLVMBuildSelect(e->b, pos, int_like(e, v, 1),
		LLVMBuildSelect(e->b, neg, int_like(e, v, -1), zero, ""), "");
}

/* The unary "op" of the float "v" that is a C library call (or an
 * intrinsic LLVM expands into one), or NULL when "op" is not one.  The
 * calls run lane by lane in a vectorized loop (call_libm, or LLVM's own
 * expansion of a vector llvm.sin); the JIT defines each of these names
 * (llvm_jit.c), and AOT objects link with -lm. */
static LLVMValueRef emit_libm(emitter *e, ts_op op, LLVMValueRef v)
{
	switch (op) {
	case TS_OP_ERF: return call_libm(e, "erff", "erf", v);
	case TS_OP_SIN: return call_math1(e, "llvm.sin", v);
	case TS_OP_COS: return call_math1(e, "llvm.cos", v);
	case TS_OP_TAN: return call_libm(e, "tanf", "tan", v);
	case TS_OP_ASIN: return call_libm(e, "asinf", "asin", v);
	case TS_OP_ACOS: return call_libm(e, "acosf", "acos", v);
	case TS_OP_ATAN: return call_libm(e, "atanf", "atan", v);
	case TS_OP_SINH: return call_libm(e, "sinhf", "sinh", v);
	case TS_OP_COSH: return call_libm(e, "coshf", "cosh", v);
	case TS_OP_ASINH: return call_libm(e, "asinhf", "asinh", v);
	case TS_OP_ACOSH: return call_libm(e, "acoshf", "acosh", v);
	case TS_OP_ATANH: return call_libm(e, "atanhf", "atanh", v);
	default: return NULL;
	}
}

/* A UNARY node "x". */
static LLVMValueRef emit_unary(emitter *e, const ts_expr *x)
{
	LLVMValueRef v = emit_expr(e, x->a), one;
	bool fl = ts_dtype_is_float(x->a->dtype);

	/* Inline math where there is one (llvm_math.c), else the cases. */
	if (fl && (one = ts_llvm_math_unary(e->m, e->b, x->op, v)))
		return one;
	if (fl && (one = emit_libm(e, x->op, v)))
		return one;
	switch (x->op) {
	case TS_OP_NEG: return fl ? LLVMBuildFNeg(e->b, v, "")
		: LLVMBuildNeg(e->b, v, "");
	case TS_OP_NOT: return LLVMBuildNot(e->b, v, "");
	case TS_OP_EXP: return call_math1(e, "llvm.exp", v);
	case TS_OP_LOG: return call_math1(e, "llvm.log", v);
	case TS_OP_SQRT: return call_math1(e, "llvm.sqrt", v);
	case TS_OP_RSQRT:
		return LLVMBuildFDiv(e->b, real_like(e, v, 1.0),
			call_math1(e, "llvm.sqrt", v), "");
	case TS_OP_TANH: return emit_tanh(e, v);
	case TS_OP_SIGMOID:
		one = real_like(e, v, 1.0);
		return LLVMBuildFDiv(e->b, one, LLVMBuildFAdd(e->b, one,
			call_math1(e, "llvm.exp", LLVMBuildFNeg(e->b, v, "")),
			""), "");
	case TS_OP_ABS:
		if (fl)
			return call_math1(e, "llvm.fabs", v);
		if (!ts_dtype_is_signed(x->dtype))
			return v;
		return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v,
			int_like(e, v, 0), ""), LLVMBuildNeg(e->b, v, ""), v, "");
	case TS_OP_FLOOR: return call_math1(e, "llvm.floor", v);
	case TS_OP_ROUND: return call_math1(e, "llvm.rint", v);
	case TS_OP_CEIL: return call_math1(e, "llvm.ceil", v);
	case TS_OP_SIGN: return emit_sign(e, v, x->a->dtype);
	case TS_OP_ISNAN: return LLVMBuildFCmp(e->b, LLVMRealUNO, v, v, "");
	case TS_OP_ISINF:
		return LLVMBuildFCmp(e->b, LLVMRealOEQ, call_math1(e,
			"llvm.fabs", v), real_like(e, v, INFINITY), "");
	default:
		emit_error(e, "unknown unary operator %d", (int)x->op);
		return v;
	}
}

/* Whether evaluating "x" reads memory. */
static bool reads_memory(const ts_expr *x)
{
	if (!x)
		return false;
	if (x->kind == TS_EXPR_LOAD)
		return true;
	for (int i = 0; i < x->nargs; i++)
		if (reads_memory(x->args[i]))
			return true;
	return reads_memory(x->a) || reads_memory(x->b) || reads_memory(x->c);
}

/* "v" shaped as a vector when "like" is one, built at the end of the
 * block "bb" (before its terminator is added). */
static LLVMValueRef shape_at(emitter *e, LLVMBasicBlockRef bb, LLVMValueRef v,
	LLVMValueRef like)
{
	if (!is_vec(like) || is_vec(v))
		return v;
	LLVMPositionBuilderAtEnd(e->b, bb);
	return splat(e, v);
}

/* A SELECT node "x" whose arms read memory, under the scalar condition
 * "c": only the chosen arm runs, so that a guarded load (the border of
 * a padded input, say) never reads outside its buffer. */
static LLVMValueRef emit_select_branch(emitter *e, const ts_expr *x,
	LLVMValueRef c)
{
	LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(e->c, e->fn,
		"sel.then");
	LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(e->c, e->fn,
		"sel.else");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->c, e->fn,
		"sel.end");
	LLVMBasicBlockRef from[2];
	LLVMValueRef v[2], phi;

	LLVMBuildCondBr(e->b, c, then, other);
	LLVMPositionBuilderAtEnd(e->b, then);
	v[0] = emit_expr(e, x->b);
	from[0] = LLVMGetInsertBlock(e->b);
	LLVMPositionBuilderAtEnd(e->b, other);
	v[1] = emit_expr(e, x->c);
	from[1] = LLVMGetInsertBlock(e->b);
	v[0] = shape_at(e, from[0], v[0], v[1]);
	v[1] = shape_at(e, from[1], v[1], v[0]);
	for (int i = 0; i < 2; i++) {
		LLVMPositionBuilderAtEnd(e->b, from[i]);
		LLVMBuildBr(e->b, done);
	}
	LLVMPositionBuilderAtEnd(e->b, done);
	if (LLVMTypeOf(v[0]) != LLVMTypeOf(v[1])) {
		emit_error(e, "the arms of a select have different types");
		return v[0];
	}
	phi = LLVMBuildPhi(e->b, LLVMTypeOf(v[0]), "sel");
	LLVMAddIncoming(phi, v, from, 2);
	return phi;
}

/* A SELECT node "x".  Arms that read memory a guard may protect
 * (needs_guard) are evaluated only where they are chosen: by a branch
 * under a scalar condition, under a lane mask (masked loads and gathers)
 * under a vector one. */
static LLVMValueRef emit_select(emitter *e, const ts_expr *x)
{
	LLVMValueRef c = emit_expr(e, x->a), a, b, saved = e->mask;
	bool guarded = needs_guard(x->b) || needs_guard(x->c);

	if (guarded && !is_vec(c))
		return emit_select_branch(e, x, c);
	if (guarded) {
		LLVMValueRef nc = LLVMBuildNot(e->b, c, "");
		e->mask = saved ? LLVMBuildAnd(e->b, saved, c, "") : c;
		a = emit_expr(e, x->b);
		e->mask = saved ? LLVMBuildAnd(e->b, saved, nc, "") : nc;
		b = emit_expr(e, x->c);
		e->mask = saved;
	} else {
		a = emit_expr(e, x->b);
		b = emit_expr(e, x->c);
	}
	unify(e, &a, &b);
	if (is_vec(c)) {
		a = splat(e, a);
		b = splat(e, b);
	}
	return LLVMBuildSelect(e->b, c, a, b, "");
}

/* A constant node "x". */
static LLVMValueRef emit_const(emitter *e, const ts_expr *x)
{
	LLVMTypeRef t = reg_type(e, x->dtype);

	if (ts_dtype_is_float(x->dtype))
		return LLVMConstReal(t, x->fval);
	if (x->dtype == TS_BOOL)
		return LLVMConstInt(t, x->ival != 0, 0);
	return LLVMConstInt(t, (unsigned long long)x->ival, 1);
}

/* A VAR node "x". */
static LLVMValueRef emit_var(emitter *e, const ts_expr *x)
{
	LLVMValueRef v;

	if (e->lane0 && x->axis == e->vaxis)
		return LLVMConstInt(e->i64, 0, 0);
	v = env_find(&e->vars, x->axis);
	if (!v) {
		emit_error(e, "variable '%s' is used outside of its loop in "
			"'%s'", x->axis->name, e->f->name);
		return LLVMConstInt(e->i64, 0, 0);
	}
	return v;
}

/* The value of "x" in its register type: scalar, or a vector of the
 * current width when it depends on the vectorized variable. */
static LLVMValueRef emit_expr(emitter *e, const ts_expr *x)
{
	switch (x->kind) {
	case TS_EXPR_INT:
	case TS_EXPR_FLOAT: return emit_const(e, x);
	case TS_EXPR_VAR: return emit_var(e, x);
	case TS_EXPR_LOAD: return emit_load(e, x);
	case TS_EXPR_UNARY: return emit_unary(e, x);
	case TS_EXPR_BINARY: return emit_binary(e, x);
	case TS_EXPR_SELECT: return emit_select(e, x);
	case TS_EXPR_CAST:
		return emit_convert(e, emit_expr(e, x->a), x->a->dtype,
			x->dtype);
	default:
		emit_error(e, "'%s': a reduction is left in the loop IR of "
			"'%s' (lowering removes them)", ts_expr_to_string(x),
			e->f->name);
		return LLVMGetPoison(reg_type(e, x->dtype));
	}
}

/* Statements. */

/* Store W lanes of "v" at the pointers "ptrs" (a vector), padded to a
 * power of two as a gather is. */
static void scatter(emitter *e, LLVMValueRef v, LLVMValueRef ptrs,
	unsigned align)
{
	unsigned n = pow2_width(e);
	LLVMValueRef mask = current_mask(e), args[4];

	if (n != (unsigned)e->width) {
		mask = widened_mask(e, n);
		v = pad_lanes(e, v, n);
		ptrs = pad_lanes(e, ptrs, n);
	}
	args[0] = v;
	args[1] = ptrs;
	args[2] = LLVMConstInt(e->i32, align, 0);
	args[3] = mask;
	call_intrinsic(e, "llvm.masked.scatter", (LLVMTypeRef[]){
		LLVMTypeOf(v), LLVMTypeOf(ptrs) }, 2, args, 4);
}

/* Store the vector "v" at "p", under the current mask. */
static void store_vector(emitter *e, LLVMValueRef v, LLVMValueRef p,
	unsigned align, bool wide)
{
	LLVMTypeRef types[2] = { LLVMTypeOf(v), e->ptr };
	LLVMValueRef args[4] = { v, p, LLVMConstInt(e->i32, align, 0), e->mask };
	unsigned w2 = wide ? widened(e, LLVMGetElementType(LLVMTypeOf(v)),
		align) : 0;

	if (w2) {
		args[0] = resize_lanes(e, v, w2);
		args[3] = widened_mask(e, w2);
		types[0] = LLVMTypeOf(args[0]);
		call_intrinsic(e, "llvm.masked.store", types, 2, args, 4);
	} else if (e->mask)
		call_intrinsic(e, "llvm.masked.store", types, 2, args, 4);
	else
		LLVMSetAlignment(LLVMBuildStore(e->b, v, p), align);
}

/* A STORE statement "s". */
static void emit_store(emitter *e, const ts_stmt *s)
{
	const ts_tensor *t = s->buffer;
	LLVMTypeRef mt = mem_type(e, t->dtype);
	LLVMValueRef base = buffer_ptr(e, t, "store to"), v, lin, p;
	unsigned align = ts_dtype_size(t->dtype);

	if (!base)
		return;
	if (s->nidx != t->ndim) {
		emit_error(e, "store to '%s' has %d indices, the buffer has %d "
			"dimensions", t->name, s->nidx, t->ndim);
		return;
	}
	e->reciprocal = ts_dtype_is_float(t->dtype) &&
		!sees_last_bit(s->value);
	/* Only a float sum's update fuses (ts_stmt_is_fma_update). */
	if (e->opt->contract && ts_stmt_is_fma_update(s))
		v = emit_fmuladd(e, s->value->b, emit_expr(e, s->value->a));
	else
		v = emit_expr(e, s->value);
	e->reciprocal = false;
	if (e->width && contiguous(e, s->nidx, s->idx)) {
		p = lane0_address(e, t, base, s->nidx, s->idx);
		store_vector(e, to_mem(e, splat(e, v), t->dtype), p, align,
			!LLVMIsAAllocaInst(base));
		return;
	}
	lin = emit_index(e, t, s->nidx, s->idx);
	if (e->width) {
		p = LLVMBuildGEP2(e->b, mt, base, (LLVMValueRef[]){
			splat(e, lin) }, 1, "");
		scatter(e, to_mem(e, splat(e, v), t->dtype), p, align);
		return;
	}
	p = LLVMBuildGEP2(e->b, mt, base, &lin, 1, "");
	LLVMSetAlignment(LLVMBuildStore(e->b, to_mem(e, v, t->dtype), p),
		align);
}

/* The body of the loop "s" emitted "s->var->extent" times, with the
 * variable a constant each time. */
static void emit_unrolled(emitter *e, const ts_stmt *s)
{
	const ts_axis *inner = e->inner;

	e->inner = s->var;
	for (int64_t k = 0; k < s->var->extent && e->status == TS_OK; k++) {
		env_push(&e->vars, s->var, LLVMConstInt(e->i64, k, 0));
		emit_stmt(e, s->body);
		e->vars.n--;
	}
	e->inner = inner;
}

/* Whether the target has AVX-512. */
static bool avx512(const emitter *e)
{
	const char *f = e->target->features;

	return f && strstr(f, "+avx512f");
}

/* The vector registers of the target (AVX-512: 32, else 16). */
static int vector_registers(const emitter *e)
{
	return avx512(e) ? 32 : 16;
}

/* The lanes of an f32 vector of the target. */
static int f32_lanes(const emitter *e)
{
	const char *f = e->target->features;

	return avx512(e) ? 16 : f && strstr(f, "+avx") ? 8 : 4;
}

/* The stores that the loops the schedule unrolled in "s" make, each
 * entered "mult" times (0 where nothing is unrolled): the accumulators of
 * a register tile, one per register of "lanes" 4-byte lanes.  Outside
 * unrolled loops, statements in sequence count as the largest of them: a
 * tile is zeroed, loaded, updated and stored by four unrolled nests in a
 * row over the same accumulators (counting the four made a tile of 4
 * scalars take 16 registers). */
static double unrolled_stores(const ts_stmt *s, double mult, bool inside,
	int lanes)
{
	double n = 0;

	if (!s)
		return 0;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop == TS_LOOP_UNROLLED)
			return unrolled_stores(s->body,
				mult * (double)s->var->extent, true, lanes);
		if (s->loop == TS_LOOP_VECTORIZED)
			mult *= ceil((double)s->var->extent / lanes);
		return unrolled_stores(s->body, mult, inside, lanes);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++) {
			double k = unrolled_stores(s->stmts[i], mult, inside,
				lanes);
			n = inside ? n + k : fmax(n, k);
		}
		return n;
	case TS_STMT_IF:
		return unrolled_stores(s->body, mult, inside, lanes) +
			unrolled_stores(s->orelse, mult, inside, lanes);
	case TS_STMT_ALLOC:
		return unrolled_stores(s->body, mult, inside, lanes);
	case TS_STMT_STORE:
		return inside ? mult : 0;
	default:
		return 0;
	}
}

/* Mark the loop whose latch branch is "br" as one LLVM must not unroll:
 * a loop around a register tile that the schedule unrolled already and
 * whose accumulators take more than half the vector registers.  LLVM
 * fully unrolls such a loop when its trip count is small (the 3 columns
 * of a 3x3 window), keeps the operands the copies share live across
 * them, and spills the accumulators (measured on AVX-512: two 3x3
 * convolutions over 256 channels at 14x14 with 2 x 14 accumulator
 * vectors, 2.7 to 2.8 ms unrolled by LLVM against 2.02 to 2.06 ms not;
 * eight configurations the model rates alike all ran 2.02 to 2.06 ms
 * once LLVM left them alone).  Around a small tile its unrolling pays
 * (AVX2 code for ResNet-18's 512-channel layers, 3.2 ms unrolled by
 * LLVM against 4.7 ms not). */
static void forbid_unroll(emitter *e, LLVMValueRef br)
{
	static const char key[] = "llvm.loop.unroll.disable";
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(e->c, NULL, 0);
	LLVMMetadataRef off = LLVMMDNodeInContext2(e->c,
		(LLVMMetadataRef[]){ LLVMMDStringInContext2(e->c, key,
		sizeof(key) - 1) }, 1);
	LLVMMetadataRef loop = LLVMMDNodeInContext2(e->c,
		(LLVMMetadataRef[]){ tmp, off }, 2);

	LLVMMetadataReplaceAllUsesWith(tmp, loop);
	LLVMSetMetadata(br, LLVMGetMDKindIDInContext(e->c, "llvm.loop", 9),
		LLVMMetadataAsValue(e->c, loop));
}

/* The iterations of the serial loops nested in "s" (the largest over
 * statements in sequence), or -1 when a loop there is unrolled or
 * vectorized by the schedule. */
static int64_t nested_trips(const ts_stmt *s)
{
	int64_t n = 1, k;

	if (!s)
		return 1;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (s->loop != TS_LOOP_SERIAL)
			return -1;
		k = nested_trips(s->body);
		return k < 0 ? -1 : k * s->var->extent;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++) {
			k = nested_trips(s->stmts[i]);
			if (k < 0)
				return -1;
			n = TS_MAX(n, k);
		}
		return n;
	case TS_STMT_IF:
		k = nested_trips(s->body);
		n = nested_trips(s->orelse);
		return k < 0 || n < 0 ? -1 : TS_MAX(k, n);
	case TS_STMT_ALLOC:
		return nested_trips(s->body);
	default:
		return 1;
	}
}

/* Whether a store in "s" writes consecutive elements along "v" (its last
 * index steps by one with "v", the others do not move): the loop LLVM
 * would vectorize. */
static bool stores_along(const ts_stmt *s, const ts_axis *v)
{
	bool any = false;

	if (!s)
		return false;
	switch (s->kind) {
	case TS_STMT_FOR:
	case TS_STMT_ALLOC:
		return stores_along(s->body, v);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts && !any; i++)
			any = stores_along(s->stmts[i], v);
		return any;
	case TS_STMT_IF:
		return stores_along(s->body, v) || stores_along(s->orelse, v);
	case TS_STMT_STORE:
		if (s->nidx < 1 || !unit_stride(s->idx[s->nidx - 1], v))
			return false;
		for (int k = 0; k < s->nidx - 1; k++)
			if (depends(s->idx[k], v))
				return false;
		return true;
	default:
		return false;
	}
}

/* The loop "s" as a counted loop with an i64 induction variable.  Kept
 * from LLVM's unroller (forbid_unroll): a loop around a register tile
 * whose accumulators take more than half the vector registers, and a
 * loop of half a vector to a vector around a small nest of its own (up
 * to 32 iterations: a window) that stores along it: LLVM would unroll
 * it whole, since it is short, and vectorize the loop around it
 * instead, with gathers on AVX-512 (measured on a Zen 4: a 3x3 average
 * pooling over rows of 56 in tiles of 16, its tail of 8 so unrolled,
 * 0.185 ms; kept, the tail is a vector of 8 and the pooling takes
 * 0.087 ms).  So is, on AVX-512, an innermost loop of one vector
 * that stores along it: LLVM unrolls it whole and vectorizes the loop
 * around it with gathers and scatters (measured on a Zen 4: the clipped
 * epilogue of a 1x1 convolution over blocks of 16 channels, run in
 * MobileNetV2, 1.6 ms for its task against 0.6 ms).  A loop of a whole
 * vector or more around a nest is left alone: LLVM vectorizes it where
 * it pays, and keeping it (every loop of 16 or more around such a nest,
 * tried) made a transpose and a batched product 10 to 15% slower. */
static void emit_serial(emitter *e, const ts_stmt *s)
{
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b), latch;
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->c, e->fn,
		s->var->name);
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->c, e->fn,
		"");
	LLVMValueRef phi, next, br, zero = LLVMConstInt(e->i64, 0, 0);
	const ts_axis *inner;
	int64_t inside;

	LLVMBuildBr(e->b, body);
	LLVMPositionBuilderAtEnd(e->b, body);
	phi = LLVMBuildPhi(e->b, e->i64, s->var->name);
	LLVMAddIncoming(phi, &zero, &pre, 1);
	env_push(&e->vars, s->var, phi);
	inner = e->inner;
	e->inner = s->var;
	emit_stmt(e, s->body);
	e->inner = inner;
	e->vars.n--;
	next = LLVMBuildNUWAdd(e->b, phi, LLVMConstInt(e->i64, 1, 0), "");
	latch = LLVMGetInsertBlock(e->b);
	LLVMAddIncoming(phi, &next, &latch, 1);
	br = LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntULT, next,
		LLVMConstInt(e->i64, s->var->extent, 0), ""), body, done);
	inside = nested_trips(s->body);
	if (2 * unrolled_stores(s->body, 1, false, vector_registers(e) / 2)
	    > vector_registers(e) || (2 * s->var->extent >= f32_lanes(e) &&
	    s->var->extent < f32_lanes(e) &&
	    inside > 1 && inside <= 32 && stores_along(s->body, s->var)) ||
	    (f32_lanes(e) >= 16 && s->var->extent == f32_lanes(e) &&
	    inside == 1 && stores_along(s->body, s->var)))
		forbid_unroll(e, br);
	LLVMPositionBuilderAtEnd(e->b, done);
}

/* The vectorized loop "s": its body once with vectors of its extent, or
 * lane by lane when the body does not allow vectors. */
static void emit_vectorized(emitter *e, const ts_stmt *s)
{
	int64_t w = s->var->extent;
	LLVMValueRef lanes[TS_MAX_VECTOR_LANES];
	const ts_axis *inner;

	if (e->vaxis || w > TS_MAX_VECTOR_LANES) {
		emit_serial(e, s);
		return;
	}
	if (!vec_ok(s->body, s->var)) {
		emit_unrolled(e, s);
		return;
	}
	for (int64_t k = 0; k < w; k++)
		lanes[k] = LLVMConstInt(e->i64, k, 0);
	inner = e->inner;
	e->inner = e->vaxis = s->var;
	e->width = (unsigned)w;
	env_push(&e->vars, s->var, LLVMConstVector(lanes, (unsigned)w));
	emit_stmt(e, s->body);
	e->vars.n--;
	e->inner = inner;
	e->vaxis = NULL;
	e->width = 0;
	e->mask = NULL;
}

/* Function frames. */

/* Set the attributes every emitted function carries. */
static void add_fn_attrs(emitter *e, LLVMValueRef fn)
{
	const struct { const char *k, *v; bool on; } attrs[] = {
		{ "target-cpu", e->target->cpu, true },
		{ "target-features", e->target->features, true },
		{ "unsafe-fp-math", "true", e->opt->fast_math },
		{ "no-nans-fp-math", "true", e->opt->fast_math },
		{ "no-infs-fp-math", "true", e->opt->fast_math },
		{ "no-signed-zeros-fp-math", "true", e->opt->fast_math },
		{ "approx-func-fp-math", "true", e->opt->fast_math },
		{ "prefer-vector-width", ts_asprintf("%d",
			e->opt->vector_width), e->opt->vector_width > 0 },
	};
	unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		LLVMCreateEnumAttribute(e->c, nounwind, 0));
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].on && attrs[i].v && *attrs[i].v)
			LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(e->c, attrs[i].k,
					strlen(attrs[i].k), attrs[i].v,
					strlen(attrs[i].v)));
}

/* Add the enum attribute "name" (with "val") to parameter "i" of "fn". */
static void add_param_attr(emitter *e, LLVMValueRef fn, unsigned i,
	const char *name, uint64_t val)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));

	LLVMAddAttributeAtIndex(fn, i + 1, LLVMCreateEnumAttribute(e->c, kind,
		val));
}

/* Start emitting "fn": an entry block for allocas and a first block for
 * code, where the builder goes. */
static void frame_begin(emitter *e, LLVMValueRef fn)
{
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(e->c, fn,
		"entry");
	LLVMBasicBlockRef code = LLVMAppendBasicBlockInContext(e->c, fn,
		"code");

	e->fn = fn;
	LLVMPositionBuilderAtEnd(e->ab, entry);
	LLVMPositionBuilderAtEnd(e->b, code);
}

/* Finish the function being emitted: return, and branch from the entry
 * block to the code. */
static void frame_end(emitter *e)
{
	LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(e->fn);

	LLVMBuildRetVoid(e->b);
	LLVMPositionBuilderAtEnd(e->ab, entry);
	LLVMBuildBr(e->ab, LLVMGetNextBasicBlock(entry));
}

/* The state that a nested function frame replaces. */
struct frame {
	LLVMValueRef fn;
	LLVMBasicBlockRef at, alloca_at;
	struct env bufs, vars;
};

/* Save the frame of "e" into "f" and start empty environments. */
static void frame_save(emitter *e, struct frame *f)
{
	f->fn = e->fn;
	f->at = LLVMGetInsertBlock(e->b);
	f->alloca_at = LLVMGetInsertBlock(e->ab);
	f->bufs = e->bufs;
	f->vars = e->vars;
	memset(&e->bufs, 0, sizeof(e->bufs));
	memset(&e->vars, 0, sizeof(e->vars));
}

/* Return "e" to the frame "f". */
static void frame_restore(emitter *e, const struct frame *f)
{
	e->fn = f->fn;
	LLVMPositionBuilderAtEnd(e->b, f->at);
	LLVMPositionBuilderAtEnd(e->ab, f->alloca_at);
	e->bufs = f->bufs;
	e->vars = f->vars;
}

/* The body function "k" of the parallel loop "s": its parameters are the
 * "nb" buffers and "nv" variables in scope ("params"), then the iteration
 * index. */
static LLVMValueRef outline_body(emitter *e, const ts_stmt *s, int k,
	LLVMTypeRef *params, int nb, int nv)
{
	LLVMTypeRef ft = LLVMFunctionType(e->vd, params, nb + nv + 1, 0);
	LLVMValueRef fn = LLVMAddFunction(e->m, ts_asprintf("%s.par%d.body",
		e->sym, k), ft);
	struct env bufs = e->bufs, vars = e->vars;
	struct frame saved;

	LLVMSetLinkage(fn, LLVMInternalLinkage);
	add_fn_attrs(e, fn);
	for (int i = 0; i < nb; i++) {
		add_param_attr(e, fn, i, "noalias", 0);
		add_param_attr(e, fn, i, "nocapture", 0);
		if (!e->opt->unaligned_args)
			add_param_attr(e, fn, i, "align", 64);
	}
	frame_save(e, &saved);
	frame_begin(e, fn);
	for (int i = 0; i < nb; i++)
		env_push(&e->bufs, bufs.b[i].key, LLVMGetParam(fn, i));
	for (int i = 0; i < nv; i++)
		env_push(&e->vars, vars.b[i].key, LLVMGetParam(fn, nb + i));
	env_push(&e->vars, s->var, LLVMGetParam(fn, nb + nv));
	emit_stmt(e, s->body);
	frame_end(e);
	frame_restore(e, &saved);
	return fn;
}

/* The trampoline "k", "void (i64 i, ptr closure)", that unpacks the closure of
 * type "st" and calls "body" of type "bt". */
static LLVMValueRef outline_trampoline(emitter *e, int k, LLVMValueRef body,
	LLVMTypeRef st, LLVMTypeRef *fields, int n)
{
	LLVMTypeRef params[2] = { e->i64, e->ptr };
	LLVMTypeRef ft = LLVMFunctionType(e->vd, params, 2, 0);
	LLVMValueRef fn = LLVMAddFunction(e->m, ts_asprintf("%s.par%d",
		e->sym, k), ft);
	LLVMValueRef *args = ts_new_array(LLVMValueRef, n + 1);
	LLVMBasicBlockRef at = LLVMGetInsertBlock(e->b);

	LLVMSetLinkage(fn, LLVMInternalLinkage);
	add_fn_attrs(e, fn);
	LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(e->c, fn,
		"entry"));
	for (int i = 0; i < n; i++) {
		LLVMValueRef p = LLVMBuildStructGEP2(e->b, st,
			LLVMGetParam(fn, 1), i, "");
		args[i] = LLVMBuildLoad2(e->b, fields[i], p, "");
	}
	args[n] = LLVMGetParam(fn, 0);
	LLVMBuildCall2(e->b, LLVMGlobalGetValueType(body), body, args, n + 1,
		"");
	LLVMBuildRetVoid(e->b);
	LLVMPositionBuilderAtEnd(e->b, at);
	return fn;
}

/* The parallel loop "s": its body outlined, run by the runtime's
 * parallel-for with a closure of everything in scope. */
static void emit_parallel(emitter *e, const ts_stmt *s)
{
	int nb = e->bufs.n, nv = e->vars.n, k;
	LLVMTypeRef *fields = ts_new_array(LLVMTypeRef, nb + nv + 1);
	LLVMTypeRef st, pf[3] = { e->i64, e->ptr, e->ptr };
	LLVMValueRef body, tramp, clos, args[3];

	if (e->vaxis) {
		emit_serial(e, s);
		return;
	}
	for (int i = 0; i < nb + nv; i++)
		fields[i] = i < nb ? e->ptr : e->i64;
	fields[nb + nv] = e->i64;
	k = e->nouter++;
	body = outline_body(e, s, k, fields, nb, nv);
	st = LLVMStructTypeInContext(e->c, fields, nb + nv, 0);
	tramp = outline_trampoline(e, k, body, st, fields, nb + nv);
	clos = LLVMBuildAlloca(e->ab, nb + nv ? st : e->i64, "closure");
	for (int i = 0; i < nb + nv; i++)
		LLVMBuildStore(e->b, i < nb ? e->bufs.b[i].v
			: e->vars.b[i - nb].v,
			LLVMBuildStructGEP2(e->b, st, clos, i, ""));
	args[0] = LLVMConstInt(e->i64, s->var->extent, 0);
	args[1] = tramp;
	args[2] = clos;
	LLVMBuildCall2(e->b, LLVMFunctionType(e->vd, pf, 3, 0),
		declare(e, "ts_runtime_parallel_for",
			LLVMFunctionType(e->vd, pf, 3, 0)), args, 3, "");
}

/* A FOR statement "s". */
static void emit_for(emitter *e, const ts_stmt *s)
{
	if (s->var->extent < 0) {
		emit_error(e, "loop '%s' has extent %lld", s->var->name,
			(long long)s->var->extent);
		return;
	}
	if (s->var->extent == 0)	/* a zero extent: the body never runs */
		return;
	if (s->loop == TS_LOOP_BOUND && s->bind != TS_BIND_VTHREAD) {
		emit_error(e, "loop '%s' is bound to %s: only the CUDA backend "
			"runs bound loops", s->var->name, ts_bind_name(s->bind));
		return;
	}
	if (s->var->extent == 1) {
		env_push(&e->vars, s->var, LLVMConstInt(e->i64, 0, 0));
		emit_stmt(e, s->body);
		e->vars.n--;
		return;
	}
	switch (s->loop) {
	case TS_LOOP_PARALLEL: emit_parallel(e, s); break;
	case TS_LOOP_VECTORIZED: emit_vectorized(e, s); break;
	case TS_LOOP_BOUND:	/* a virtual thread: an unrolled loop */
	case TS_LOOP_UNROLLED:
		if (s->var->extent <= TS_MAX_UNROLL) {
			emit_unrolled(e, s);
			break;
		}
		/* fall through */
	case TS_LOOP_SERIAL: emit_serial(e, s); break;
	default:
		emit_error(e, "loop '%s' has the unknown kind %d", s->var->name,
			(int)s->loop);
	}
}

/* An IF statement "s": a branch, or masks when the condition is a
 * vector. */
static void emit_if(emitter *e, const ts_stmt *s)
{
	LLVMValueRef c = emit_expr(e, s->cond), saved = e->mask;
	LLVMBasicBlockRef then, other, done;

	if (is_vec(c)) {
		e->mask = saved ? LLVMBuildAnd(e->b, saved, c, "") : c;
		emit_stmt(e, s->body);
		if (s->orelse) {
			c = LLVMBuildNot(e->b, c, "");
			e->mask = saved ? LLVMBuildAnd(e->b, saved, c, "") : c;
			emit_stmt(e, s->orelse);
		}
		e->mask = saved;
		return;
	}
	then = LLVMAppendBasicBlockInContext(e->c, e->fn, "then");
	other = s->orelse ? LLVMAppendBasicBlockInContext(e->c, e->fn, "else")
		: NULL;
	done = LLVMAppendBasicBlockInContext(e->c, e->fn, "endif");
	LLVMBuildCondBr(e->b, c, then, other ? other : done);
	LLVMPositionBuilderAtEnd(e->b, then);
	emit_stmt(e, s->body);
	LLVMBuildBr(e->b, done);
	if (other) {
		LLVMPositionBuilderAtEnd(e->b, other);
		emit_stmt(e, s->orelse);
		LLVMBuildBr(e->b, done);
	}
	LLVMPositionBuilderAtEnd(e->b, done);
}

/* An ALLOC statement "s": a stack array in the entry block (so that
 * small accumulators become registers), or aligned heap memory for
 * global temporaries and local tiles over 128 KiB. */
static void emit_alloc(emitter *e, const ts_stmt *s)
{
	const ts_tensor *t = s->buffer;
	int64_t n = ts_tensor_size(t);
	uint64_t bytes = ((uint64_t)n * ts_dtype_size(t->dtype) + 63) & ~63ull;
	LLVMTypeRef at = LLVMArrayType(mem_type(e, t->dtype), (unsigned)n);
	LLVMTypeRef pt[2] = { e->i64, e->i64 };
	LLVMValueRef p, args[2];

	/* Large local tiles go to the heap too: the stacks of the
	 * runtime's worker threads are small. */
	if (s->scope != TS_SCOPE_GLOBAL && bytes <= 128 * 1024) {
		p = LLVMBuildAlloca(e->ab, at, t->name);
		LLVMSetAlignment(p, 64);
		env_push(&e->bufs, t, p);
		emit_stmt(e, s->body);
		e->bufs.n--;
		return;
	}
	/* From the runtime's scratch blocks, kept from call to call. */
	args[0] = LLVMConstInt(e->i64, bytes, 0);
	p = LLVMBuildCall2(e->b, LLVMFunctionType(e->ptr, pt, 1, 0),
		declare(e, "ts_runtime_alloc", LLVMFunctionType(e->ptr, pt, 1,
		0)), args, 1, t->name);
	env_push(&e->bufs, t, p);
	emit_stmt(e, s->body);
	e->bufs.n--;
	LLVMBuildCall2(e->b, LLVMFunctionType(e->vd, &e->ptr, 1, 0),
		declare(e, "ts_runtime_free", LLVMFunctionType(e->vd, &e->ptr,
		1, 0)), &p, 1, "");
}

/* Emit the statement "s" at the builder's position. */
static void emit_stmt(emitter *e, const ts_stmt *s)
{
	if (!s || e->status != TS_OK)
		return;
	switch (s->kind) {
	case TS_STMT_FOR: emit_for(e, s); break;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			emit_stmt(e, s->stmts[i]);
		break;
	case TS_STMT_IF: emit_if(e, s); break;
	case TS_STMT_STORE: emit_store(e, s); break;
	case TS_STMT_ALLOC: emit_alloc(e, s); break;
	default:
		emit_error(e, "'%s' has a barrier: only the CUDA backend runs "
			"barriers", e->f->name);
	}
}

/* Whether "s" stores into "t". */
static bool stores_to(const ts_stmt *s, const ts_tensor *t)
{
	if (!s)
		return false;
	if (s->kind == TS_STMT_STORE)
		return s->buffer == t;
	if (s->kind == TS_STMT_BLOCK) {
		for (int i = 0; i < s->nstmts; i++)
			if (stores_to(s->stmts[i], t))
				return true;
		return false;
	}
	return stores_to(s->body, t) || stores_to(s->orelse, t);
}

/* Whether "s" contains a parallel loop. */
static bool has_parallel(const ts_stmt *s)
{
	if (!s)
		return false;
	if (s->kind == TS_STMT_FOR && s->loop == TS_LOOP_PARALLEL &&
	    s->var->extent > 1)
		return true;
	if (s->kind == TS_STMT_BLOCK) {
		for (int i = 0; i < s->nstmts; i++)
			if (has_parallel(s->stmts[i]))
				return true;
		return false;
	}
	return has_parallel(s->body) || has_parallel(s->orelse);
}

/* Whether "f" has a parallel loop of more than one iteration. */
bool ts_func_has_parallel(const ts_func *f)
{
	return has_parallel(f->body);
}

/* Return f->name made a C identifier. */
const char *ts_func_symbol(const ts_func *f)
{
	const char *name = f && f->name && *f->name ? f->name : "kernel";
	char *s = ts_asprintf("%s%s", isdigit((unsigned char)*name) ? "_" : "",
		name);

	for (char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	return s;
}

/* The external function of "f" with its argument attributes. */
static LLVMValueRef declare_main(emitter *e)
{
	const ts_func *f = e->f;
	LLVMTypeRef *params = ts_new_array(LLVMTypeRef, f->nargs + 1);
	LLVMValueRef fn;

	for (int i = 0; i < f->nargs; i++)
		params[i] = e->ptr;
	fn = LLVMAddFunction(e->m, e->sym, LLVMFunctionType(e->vd, params,
		f->nargs, 0));
	add_fn_attrs(e, fn);
	for (int i = 0; i < f->nargs; i++) {
		const ts_tensor *t = f->args[i];
		add_param_attr(e, fn, i, "noalias", 0);
		add_param_attr(e, fn, i, "nocapture", 0);
		if (!e->opt->unaligned_args)
			add_param_attr(e, fn, i, "align", 64);
		add_param_attr(e, fn, i, "dereferenceable", (uint64_t)
			ts_tensor_size(t) * ts_dtype_size(t->dtype));
		if (!stores_to(f->body, t))
			add_param_attr(e, fn, i, "readonly", 0);
		LLVMSetValueName2(LLVMGetParam(fn, i), t->name,
			strlen(t->name));
	}
	return fn;
}

/* "void <sym>_packed(ptr *args)": calls the function with args[0..n),
 * so that callers need not know its arity. */
static void define_packed(emitter *e, LLVMValueRef main)
{
	LLVMTypeRef ft = LLVMFunctionType(e->vd, &e->ptr, 1, 0);
	LLVMValueRef fn = LLVMAddFunction(e->m, ts_asprintf("%s_packed",
		e->sym), ft);
	LLVMValueRef *args = ts_new_array(LLVMValueRef, e->f->nargs + 1);

	add_fn_attrs(e, fn);
	LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(e->c, fn,
		"entry"));
	for (int i = 0; i < e->f->nargs; i++) {
		LLVMValueRef k = LLVMConstInt(e->i64, i, 0);
		LLVMValueRef p = LLVMBuildGEP2(e->b, e->ptr, LLVMGetParam(fn, 0),
			&k, 1, "");
		args[i] = LLVMBuildLoad2(e->b, e->ptr, p, "");
	}
	LLVMBuildCall2(e->b, LLVMGlobalGetValueType(main), main, args,
		e->f->nargs, "");
	LLVMBuildRetVoid(e->b);
}

/* Check that "f" can be emitted at all. */
static ts_status check_func(ts_ctx *ctx, const ts_func *f)
{
	if (!f || !f->body)
		return ts_ctx_set_error(ctx, "no function to compile%s",
			f ? " (its body is empty)" : "");
	for (int i = 0; i < f->nargs; i++)
		if (!f->args[i])
			return ts_ctx_set_error(ctx, "argument %d of '%s' has no "
				"tensor", i, f->name);
	return TS_OK;
}

/* Set up "e" to emit "f" in "c" with "opt" for "target". */
static void emitter_init(emitter *e, ts_ctx *ctx, LLVMContextRef c,
	const ts_func *f, const ts_compile_options *opt,
	const struct ts_llvm_target *target)
{
	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->f = f;
	e->opt = opt;
	e->target = target;
	e->c = c;
	e->sym = ts_func_symbol(f);
	e->i1 = LLVMInt1TypeInContext(c);
	e->i8 = LLVMInt8TypeInContext(c);
	e->i16 = LLVMInt16TypeInContext(c);
	e->i32 = LLVMInt32TypeInContext(c);
	e->i64 = LLVMInt64TypeInContext(c);
	e->half = LLVMHalfTypeInContext(c);
	e->f32 = LLVMFloatTypeInContext(c);
	e->f64 = LLVMDoubleTypeInContext(c);
	e->ptr = LLVMPointerTypeInContext(c, 0);
	e->vd = LLVMVoidTypeInContext(c);
}

/* Verify "m"; a failure becomes an error of "ctx" naming "f". */
static ts_status verify(ts_ctx *ctx, LLVMModuleRef m, const ts_func *f)
{
	char *msg = NULL;
	ts_status st = TS_OK;

	if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg))
		st = ts_ctx_set_error(ctx, "LLVM rejected the code emitted for "
			"'%s': %s", f->name, msg ? msg : "(no message)");
	LLVMDisposeMessage(msg);
	return st;
}

/* Emit "f" as a new verified module of "c" for "target", or NULL. */
LLVMModuleRef ts_llvm_emit(ts_ctx *ctx, LLVMContextRef c, const ts_func *f,
	const ts_compile_options *opt, const struct ts_llvm_target *target)
{
	emitter e;
	LLVMValueRef fn;

	if (check_func(ctx, f) < 0)
		return NULL;
	emitter_init(&e, ctx, c, f, opt, target);
	e.m = LLVMModuleCreateWithNameInContext(e.sym, c);
	LLVMSetTarget(e.m, target->triple);
	e.b = LLVMCreateBuilderInContext(c);
	e.ab = LLVMCreateBuilderInContext(c);
	fn = declare_main(&e);
	frame_begin(&e, fn);
	for (int i = 0; i < f->nargs; i++)
		env_push(&e.bufs, f->args[i], LLVMGetParam(fn, i));
	emit_stmt(&e, f->body);
	frame_end(&e);
	define_packed(&e, fn);
	LLVMDisposeBuilder(e.b);
	LLVMDisposeBuilder(e.ab);
	if (e.status == TS_OK && verify(ctx, e.m, f) == TS_OK)
		return e.m;
	LLVMDisposeModule(e.m);
	return NULL;
}
