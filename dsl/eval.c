/* The reference interpreter.
 *
 * Each stage body is compiled once into a flat register program, then run
 * for every output point.  A program works on a strip of up to VM_LANES
 * consecutive values of one spatial axis (the lane axis) at a time: a
 * register holds either one value per lane ("varying") or one value for
 * every lane ("uniform"), decided at compile time by whether the
 * expression depends on the lane axis.  Reductions are loops inside the
 * program; their accumulators are registers.  Registers hold floats as
 * f64 and integers and bools as i64 (narrower unsigned integers
 * zero-extended, so that i64 order and division are theirs; a u64 as its
 * bit pattern, with instructions of its own for what depends on the
 * sign: order, division, conversion to float), but every operation
 * rounds its result
 * the way compiled code computes it (doc/grammar.md, "Arithmetic"): f32
 * f16 and bf16 operations give the f32 result, integer operations wrap to their
 * dtype, an f16 accumulator rounds to f16 at each step.
 *
 * Loads whose indices are affine in the axes take a fast path: one offset
 * per strip plus a constant stride per lane, checked against the bounds at
 * both ends of the strip.  Other loads compute each index per lane.  The
 * branches of a select (and the right operand of && and ||) run under a
 * mask of active lanes, so that a padded load that would fall outside its
 * tensor in an inactive lane is not an error. */
#include <config.h>

#include <math.h>

#include "dsl/internal.h"

#define VM_LANES 256

enum vm_op {
	VM_CONST, VM_VAR, VM_LOAD_AFFINE, VM_LOAD,
	VM_FADD, VM_FSUB, VM_FMUL, VM_FDIV, VM_FFLOORDIV, VM_FMOD, VM_FMIN,
	VM_FMAX, VM_FPOW, VM_FLT, VM_FLE, VM_FGT, VM_FGE, VM_FEQ, VM_FNE,
	VM_IADD, VM_ISUB, VM_IMUL, VM_IFLOORDIV, VM_IMOD, VM_IMIN, VM_IMAX,
	VM_ILT, VM_ILE, VM_IGT, VM_IGE, VM_IEQ, VM_INE, VM_IAND, VM_IOR,
	VM_UFLOORDIV, VM_UMOD, VM_UMIN, VM_UMAX, VM_ULT, VM_ULE, VM_UGT,
	VM_UGE,
	VM_FNEG, VM_FEXP, VM_FLOG, VM_FSQRT, VM_FRSQRT, VM_FTANH, VM_FSIGMOID,
	VM_FERF, VM_FSIN, VM_FCOS, VM_FTAN, VM_FASIN, VM_FACOS, VM_FATAN,
	VM_FSINH, VM_FCOSH, VM_FASINH, VM_FACOSH, VM_FATANH,
	VM_FABS, VM_FFLOOR, VM_FROUND, VM_FCEIL, VM_FSIGN, VM_FISNAN, VM_FISINF,
	VM_INEG, VM_IABS, VM_ISIGN, VM_INOT,
	VM_FSELECT, VM_ISELECT,
	VM_CAST_II, VM_CAST_IF, VM_CAST_UF, VM_CAST_FI, VM_CAST_FF,
	VM_INIT,
	VM_FACC_SUM, VM_FACC_PROD, VM_FACC_MAX, VM_FACC_MIN,
	VM_IACC_SUM, VM_IACC_PROD, VM_IACC_MAX, VM_IACC_MIN,
	VM_UACC_MAX, VM_UACC_MIN,
	VM_LOOP_BEGIN, VM_LOOP_END,
};

/* One index of a load, affine in the axis slots: c0 + sum coef[s] * iv[s]
 * (the lane slot's value being its strip base plus the lane number). */
struct affine {
	int64_t c0;
	int64_t *coef;		/* one per slot */
};

/* What a load reads. */
struct load {
	const ts_tensor *t;
	const void *data;
	int64_t stride[TS_MAX_DIMS];	/* in elements, C order */
	int idx[TS_MAX_DIMS];		/* general loads: index registers */
	bool vidx[TS_MAX_DIMS];		/* ... and whether each varies */
	struct affine aff[TS_MAX_DIMS];	/* affine loads */
	int64_t *off_coef;	/* affine: offset coefficient per slot */
	int64_t off_c0;		/* affine: constant offset */
	bool inbounds;		/* affine: proven in bounds for all axes */
};

/* An instruction.  Registers are numbers; -1 is none. */
struct insn {
	enum vm_op op;
	int dst, a, b, c;
	int mask;		/* active lanes (bool register), or -1 */
	bool vary, va, vb, vc, vmask;	/* dst and operands vary by lane */
	union { double f; int64_t i; } k;	/* CONST, INIT */
	ts_dtype dtype;		/* CAST target, LOAD source */
	ts_dtype round;		/* the result rounds or wraps to this dtype */
	bool post;		/* ... when set (see post_round) */
	int slot;		/* VAR, LOOP_* */
	int64_t extent;		/* LOOP_END */
	int body;		/* LOOP_END: instructions in the loop body */
	struct load *ld;	/* LOAD_* */
	const char *what;	/* the operator, for messages */
};

/* A register: its offset in the register file, whether it varies, and
 * the loop depth at which it is computed (0: once per strip). */
struct reg {
	size_t off;
	bool vary;
	int level;
};

/* The code of one loop depth while the loops around it are open. */
struct codebuf {
	struct insn *code;
	int n, cap;
};

/* A compiled expression reused when met again in the same scope. */
struct memo {
	const ts_expr *e;
	int mask;
	int scope;
	int reg;
};

/* The compiled program of one stage. */
struct prog {
	ts_ctx *ctx;
	const ts_stage *s;
	int nslots;		/* spatial axes, then reduction axes */
	ts_axis **slot_axis;
	int64_t *slot_extent;
	int lane;		/* slot of the lane axis, or -1 */
	int *slot_level;	/* loop depth binding each slot (0: spatial) */
	int *depth_slot;	/* the slot of each open loop depth */
	struct codebuf *bufs;	/* code per open loop depth, outermost first */
	int depth;		/* innermost open loop depth */
	struct insn *code;	/* the finished program */
	int ncode;
	struct reg *regs;
	int nregs, capregs;
	size_t file_size;	/* in 8-byte words */
	struct memo *memo;
	int nmemo, capmemo;
	int *scopes;		/* open reduction scopes, innermost last */
	int nscopes, next_scope;
	int result;		/* register of the body's value */
	/* The tensors read and their arrays. */
	int ntensors;
	const ts_tensor **tensors;
	const ts_array **arrays;
};

/* Return a new register of "p", varying by lane or not. */
static int new_reg(struct prog *p, bool vary)
{
	if (p->nregs == p->capregs) {
		int cap = p->capregs ? 2 * p->capregs : 32;
		p->regs = ts_grow(p->regs, sizeof(struct reg), p->nregs, cap);
		p->capregs = cap;
	}
	/* Keep varying registers on 64-byte boundaries. */
	if (vary)
		p->file_size = (p->file_size + 7) & ~(size_t)7;
	p->regs[p->nregs].off = p->file_size;
	p->regs[p->nregs].vary = vary;
	p->file_size += vary ? VM_LANES : 1;
	return p->nregs++;
}

/* Append "in" to the code "b". */
static void buf_push(struct codebuf *b, struct insn in)
{
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 64;
		b->code = ts_grow(b->code, sizeof(struct insn), b->n, cap);
		b->cap = cap;
	}
	b->code[b->n++] = in;
}

/* The loop depth of register "r" (-1: none, depth 0). */
static int reg_level(const struct prog *p, int r)
{
	return r >= 0 ? p->regs[r].level : 0;
}

/* Append "in" to the code of loop depth "level" of "p": an instruction is
 * placed in the outermost loop where its operands are known, so that what
 * does not depend on an inner reduction axis runs once, not per
 * iteration. */
static void emit_at(struct prog *p, int level, struct insn in)
{
	if (in.dst >= 0)
		p->regs[in.dst].level = level;
	buf_push(&p->bufs[level], in);
}

/* Append "in" at the depth of its deepest operand or mask. */
static void emit(struct prog *p, struct insn in)
{
	int level = TS_MAX(TS_MAX(reg_level(p, in.a), reg_level(p, in.b)),
		TS_MAX(reg_level(p, in.c), reg_level(p, in.mask)));

	emit_at(p, level, in);
}

/* Return a blank instruction "op" writing to "dst". */
static struct insn insn_new(struct prog *p, enum vm_op op, int dst)
{
	struct insn in = { op, dst, -1, -1, -1, -1 };

	if (dst >= 0)
		in.vary = p->regs[dst].vary;
	return in;
}

/* Whether register "r" of "p" varies by lane (-1: no register). */
static bool reg_vary(struct prog *p, int r)
{
	return r >= 0 && p->regs[r].vary;
}

/* Set the operands "a", "b", "c" of "in" and their variation flags. */
static void set_operands(struct prog *p, struct insn *in, int a, int b, int c)
{
	in->a = a;
	in->b = b;
	in->c = c;
	in->va = reg_vary(p, a);
	in->vb = reg_vary(p, b);
	in->vc = reg_vary(p, c);
}

/* The slot of axis "a" in "p", or -1. */
static int axis_slot(const struct prog *p, const ts_axis *a)
{
	for (int i = 0; i < p->nslots; i++)
		if (p->slot_axis[i] == a)
			return i;
	return -1;
}

/* Whether "e" depends on the lane axis of "p". */
static bool expr_varies(const struct prog *p, const ts_expr *e)
{
	if (!e || p->lane < 0)
		return false;
	switch (e->kind) {
	case TS_EXPR_VAR:
		return axis_slot(p, e->axis) == p->lane;
	case TS_EXPR_LOAD:
		for (int i = 0; i < e->nargs; i++)
			if (expr_varies(p, e->args[i]))
				return true;
		return false;
	default:
		return expr_varies(p, e->a) || expr_varies(p, e->b) ||
			expr_varies(p, e->c);
	}
}

static int compile(struct prog *p, const ts_expr *e, int mask);

/* Whether "scope" is open in "p". */
static bool scope_open(const struct prog *p, int scope)
{
	for (int i = 0; i < p->nscopes; i++)
		if (p->scopes[i] == scope)
			return true;
	return scope == 0;
}

/* The register already holding "e" under "mask" in an open scope, or -1. */
static int memo_find(const struct prog *p, const ts_expr *e, int mask)
{
	for (int i = p->nmemo - 1; i >= 0; i--)
		if (p->memo[i].e == e && p->memo[i].mask == mask &&
		    scope_open(p, p->memo[i].scope))
			return p->memo[i].reg;
	return -1;
}

/* Remember that register "r" holds "e" under "mask" in the current scope. */
static void memo_add(struct prog *p, const ts_expr *e, int mask, int r)
{
	if (p->nmemo == p->capmemo) {
		int cap = p->capmemo ? 2 * p->capmemo : 32;
		p->memo = ts_grow(p->memo, sizeof(struct memo), p->nmemo, cap);
		p->capmemo = cap;
	}
	p->memo[p->nmemo].e = e;
	p->memo[p->nmemo].mask = mask;
	p->memo[p->nmemo].scope = p->nscopes ? p->scopes[p->nscopes - 1] : 0;
	p->memo[p->nmemo].reg = r;
	p->nmemo++;
}

/* Emit the constant "e" as f64 or i64 by its dtype. */
static int compile_const(struct prog *p, const ts_expr *e)
{
	int r = new_reg(p, false);
	struct insn in = insn_new(p, VM_CONST, r);

	if (ts_dtype_is_float(e->dtype))
		in.k.f = e->fval;
	else
		in.k.i = e->kind == TS_EXPR_INT ? e->ival : (int64_t)e->fval;
	emit_at(p, 0, in);
	return r;
}

/* Emit the value of the axis of "e": the strip base plus the lane for the
 * lane axis. */
static int compile_var(struct prog *p, const ts_expr *e)
{
	int slot = axis_slot(p, e->axis);
	int r = new_reg(p, slot == p->lane && slot >= 0);
	struct insn in = insn_new(p, VM_VAR, r);

	in.slot = slot;
	emit_at(p, slot >= 0 ? p->slot_level[slot] : 0, in);
	return r;
}

/* Add "x" times "y" to "*acc"; return false when a step overflows 64
 * bits. */
static bool add_product(int64_t *acc, int64_t x, int64_t y)
{
	int64_t v;

	return !__builtin_mul_overflow(x, y, &v) &&
		!__builtin_add_overflow(*acc, v, acc);
}

static bool affine_of_scaled(const struct prog *p, const ts_expr *e,
	struct affine *aff, int64_t scale, int64_t k);

/* Decompose the index "e" into "aff" over the slots of "p"; return false
 * when it is not affine with constant coefficients, or when a constant or
 * coefficient overflows 64 bits (the index then runs as code, which
 * wraps). */
static bool affine_of(const struct prog *p, const ts_expr *e,
	struct affine *aff, int64_t scale)
{
	switch (e->kind) {
	case TS_EXPR_INT:
		return add_product(&aff->c0, scale, e->ival);
	case TS_EXPR_VAR: {
		int s = axis_slot(p, e->axis);
		return s >= 0 && add_product(&aff->coef[s], scale, 1);
	}
	case TS_EXPR_UNARY:
		return e->op == TS_OP_NEG && scale != INT64_MIN &&
			ts_dtype_is_signed(e->dtype) &&
			affine_of(p, e->a, aff, -scale);
	case TS_EXPR_BINARY:
		if (e->dtype != TS_I64)
			return false;
		if (e->op == TS_OP_ADD)
			return affine_of(p, e->a, aff, scale) &&
				affine_of(p, e->b, aff, scale);
		if (e->op == TS_OP_SUB)
			return affine_of(p, e->a, aff, scale) &&
				scale != INT64_MIN &&
				affine_of(p, e->b, aff, -scale);
		if (e->op == TS_OP_MUL && e->b->kind == TS_EXPR_INT)
			return affine_of_scaled(p, e->a, aff, scale,
				e->b->ival);
		if (e->op == TS_OP_MUL && e->a->kind == TS_EXPR_INT)
			return affine_of_scaled(p, e->b, aff, scale,
				e->a->ival);
		return false;
	default:
		return false;
	}
}

/* Decompose "e" times "scale" times "k" into "aff", as affine_of. */
static bool affine_of_scaled(const struct prog *p, const ts_expr *e,
	struct affine *aff, int64_t scale, int64_t k)
{
	int64_t v;

	return !__builtin_mul_overflow(scale, k, &v) &&
		affine_of(p, e, aff, v);
}

/* Set "*lo" and "*hi" to the least and greatest value of "c0" plus
 * "coef"[s] times each value of slot s of "p"; return false when they
 * do not fit in 64 bits.  Every partial sum lies between the two. */
static bool affine_range(const struct prog *p, int64_t c0,
	const int64_t *coef, int64_t *lo, int64_t *hi)
{
	*lo = *hi = c0;
	for (int s = 0; s < p->nslots; s++) {
		int64_t d;
		if (__builtin_mul_overflow(coef[s], p->slot_extent[s] - 1, &d) ||
		    __builtin_add_overflow(d < 0 ? *lo : *hi, d,
		    d < 0 ? lo : hi))
			return false;
	}
	return true;
}

/* The array that holds tensor "t" while "p" runs. */
static const ts_array *tensor_array(const struct prog *p, const ts_tensor *t)
{
	for (int i = 0; i < p->ntensors; i++)
		if (p->tensors[i] == t)
			return p->arrays[i];
	return NULL;
}

/* Return a new load of "e" with its array and strides. */
static struct load *load_new(struct prog *p, const ts_expr *e)
{
	struct load *ld = ts_new(struct load);
	const ts_tensor *t = e->tensor;
	int64_t st = 1;

	const ts_array *a = tensor_array(p, t);

	if (!a) {
		ts_ctx_set_error(p->ctx, "stage '%s': tensor '%s' is read but "
			"is neither an input nor computed before it", p->s->name,
			t->name);
		return NULL;
	}
	ld->t = t;
	ld->data = a->data;
	for (int d = t->ndim - 1; d >= 0; d--) {
		ld->stride[d] = st;
		st *= t->shape[d];
	}
	return ld;
}

/* Try the affine form of the load "e"; return false when an index is not
 * affine, or when an index or the offset could leave 64 bits over the
 * loops, so that the affine load's arithmetic never overflows. */
static bool load_affine(struct prog *p, const ts_expr *e, struct load *ld)
{
	const ts_tensor *t = e->tensor;
	int64_t lo, hi;

	ld->off_coef = ts_new_atomic(int64_t, p->nslots + 1);
	ld->inbounds = true;
	for (int d = 0; d < t->ndim; d++) {
		struct affine *aff = &ld->aff[d];
		aff->coef = ts_new_atomic(int64_t, p->nslots + 1);
		if (!affine_of(p, e->args[d], aff, 1) ||
		    !affine_range(p, aff->c0, aff->coef, &lo, &hi) ||
		    !add_product(&ld->off_c0, aff->c0, ld->stride[d]))
			return false;
		ld->inbounds &= lo >= 0 && hi < t->shape[d];
		for (int s = 0; s < p->nslots; s++)
			if (!add_product(&ld->off_coef[s], aff->coef[s],
			    ld->stride[d]))
				return false;
	}
	return affine_range(p, ld->off_c0, ld->off_coef, &lo, &hi);
}

/* Emit the load "e" under "mask": affine when every index is, else with
 * index registers. */
/* The loop depth of the load "in" of "e": its deepest index or mask. */
static int load_level(const struct prog *p, const ts_expr *e,
	const struct load *ld, const struct insn *in)
{
	int level = reg_level(p, in->mask);

	if (in->op == VM_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			level = TS_MAX(level, reg_level(p, ld->idx[d]));
		return level;
	}
	for (int d = 0; d < e->nargs; d++)
		for (int s = 0; s < p->nslots; s++)
			if (ld->aff[d].coef[s])
				level = TS_MAX(level, p->slot_level[s]);
	return level;
}

static int compile_load(struct prog *p, const ts_expr *e, int mask)
{
	struct load *ld = load_new(p, e);
	bool vary = expr_varies(p, e);
	struct insn in;
	int r;

	if (!ld)
		return -1;
	if (load_affine(p, e, ld)) {
		r = new_reg(p, vary);
		in = insn_new(p, VM_LOAD_AFFINE, r);
	} else {
		for (int d = 0; d < e->nargs; d++) {
			ld->idx[d] = compile(p, e->args[d], mask);
			if (ld->idx[d] < 0)
				return -1;
			ld->vidx[d] = reg_vary(p, ld->idx[d]);
		}
		r = new_reg(p, vary);
		in = insn_new(p, VM_LOAD, r);
	}
	in.ld = ld;
	in.dtype = e->tensor->dtype;
	in.mask = mask;
	in.vmask = reg_vary(p, mask);
	emit_at(p, load_level(p, e, ld, &in), in);
	return r;
}

/* Emit "op" on "a", "b", "c" into a new register; "t" and "what" are the
 * target dtype of a cast and the operator's name for messages. */
static int emit_op_ex(struct prog *p, enum vm_op op, int a, int b, int c,
	int mask, ts_dtype t, const char *what)
{
	bool vary = reg_vary(p, a) || reg_vary(p, b) || reg_vary(p, c);
	int r = new_reg(p, vary);
	struct insn in = insn_new(p, op, r);

	set_operands(p, &in, a, b, c);
	in.mask = mask;
	in.vmask = reg_vary(p, mask);
	in.dtype = t;
	in.what = what;
	emit(p, in);
	return r;
}

/* Emit "op" on "a", "b", "c" under "mask" into a new register. */
static int emit_op(struct prog *p, enum vm_op op, int a, int b, int c,
	int mask)
{
	return emit_op_ex(p, op, a, b, c, mask, TS_F64, NULL);
}

/* Whether an i64 or f64 result must be rounded to dtype "t": the floats
 * computed in f32 and the integers narrower than 64 bits. */
static bool rounds(ts_dtype t)
{
	if (ts_dtype_is_float(t))
		return t != TS_F64;
	return ts_dtype_is_int(t) && ts_dtype_size(t) < 8;
}

/* Whether the result of "op" on values of dtype "t" must be rounded to
 * "t" by post_round: f32, f16 and bf16 float arithmetic (rounded to
 * f32, the precision compiled code computes f16 and bf16 in), arithmetic on the integers
 * narrower than i64 (wrapped).  Comparisons, min, max, negation and
 * selections give a value that is already exact. */
static bool op_rounds(enum vm_op op, ts_dtype t)
{
	switch (op) {
	case VM_FADD: case VM_FSUB: case VM_FMUL: case VM_FDIV:
	case VM_FFLOORDIV: case VM_FMOD: case VM_FPOW: case VM_FEXP:
	case VM_FLOG: case VM_FSQRT: case VM_FRSQRT: case VM_FTANH:
	case VM_FSIGMOID: case VM_FERF: case VM_FSIN: case VM_FCOS:
	case VM_FTAN: case VM_FASIN: case VM_FACOS: case VM_FATAN:
	case VM_FSINH: case VM_FCOSH: case VM_FASINH: case VM_FACOSH:
	case VM_FATANH:
		return rounds(t);
	case VM_IADD: case VM_ISUB: case VM_IMUL: case VM_IFLOORDIV:
	case VM_IMOD: case VM_INEG: case VM_IABS:
		return rounds(t);
	default:
		return false;
	}
}

/* Emit the arithmetic "op" of a node of dtype "t" on "a" and "b" under
 * "mask", its result rounded as op_rounds says. */
static int emit_arith(struct prog *p, enum vm_op op, int a, int b, int mask,
	ts_dtype t, const char *what)
{
	int r = emit_op_ex(p, op, a, b, -1, mask, TS_F64, what);
	struct codebuf *buf = &p->bufs[p->regs[r].level];
	struct insn *in = &buf->code[buf->n - 1];

	in->round = ts_dtype_is_float(t) && t != TS_F64 ? TS_F32 : t;
	in->post = op_rounds(op, t);
	return r;
}

/* The mask of lanes active in "mask" where "cond" holds ("neg": fails). */
static int sub_mask(struct prog *p, int mask, int cond, bool neg)
{
	int m = neg ? emit_op(p, VM_INOT, cond, -1, -1, -1) : cond;

	return mask < 0 ? m : emit_op(p, VM_IAND, mask, m, -1, -1);
}

/* Whether "e" holds an operation that can fail on some lanes (a load or
 * an integer division), so that it must know which lanes are active. */
static bool needs_mask(const ts_expr *e)
{
	if (!e || e->kind == TS_EXPR_LOAD)
		return e != NULL;
	if (e->kind == TS_EXPR_BINARY && !ts_dtype_is_float(e->a->dtype) &&
	    (e->op == TS_OP_FLOORDIV || e->op == TS_OP_MOD))
		return true;
	return needs_mask(e->a) || needs_mask(e->b) || needs_mask(e->c);
}

/* The mask under which "e" runs: "mask" narrowed by "cond" (or its
 * negation) when "e" can fail on a lane. */
static int branch_mask(struct prog *p, const ts_expr *e, int mask, int cond,
	bool neg)
{
	return needs_mask(e) ? sub_mask(p, mask, cond, neg) : mask;
}

/* Instructions of the DSL operators on f64 and on i64 (0: none). */
static const enum vm_op float_binary[TS_OP_COUNT] = {
	[TS_OP_ADD] = VM_FADD, [TS_OP_SUB] = VM_FSUB, [TS_OP_MUL] = VM_FMUL,
	[TS_OP_DIV] = VM_FDIV, [TS_OP_FLOORDIV] = VM_FFLOORDIV,
	[TS_OP_MOD] = VM_FMOD, [TS_OP_MIN] = VM_FMIN, [TS_OP_MAX] = VM_FMAX,
	[TS_OP_POW] = VM_FPOW, [TS_OP_LT] = VM_FLT, [TS_OP_LE] = VM_FLE,
	[TS_OP_GT] = VM_FGT, [TS_OP_GE] = VM_FGE, [TS_OP_EQ] = VM_FEQ,
	[TS_OP_NE] = VM_FNE,
};

static const enum vm_op int_binary[TS_OP_COUNT] = {
	[TS_OP_ADD] = VM_IADD, [TS_OP_SUB] = VM_ISUB, [TS_OP_MUL] = VM_IMUL,
	[TS_OP_FLOORDIV] = VM_IFLOORDIV, [TS_OP_MOD] = VM_IMOD,
	[TS_OP_MIN] = VM_IMIN, [TS_OP_MAX] = VM_IMAX, [TS_OP_LT] = VM_ILT,
	[TS_OP_LE] = VM_ILE, [TS_OP_GT] = VM_IGT, [TS_OP_GE] = VM_IGE,
	[TS_OP_EQ] = VM_IEQ, [TS_OP_NE] = VM_INE, [TS_OP_AND] = VM_IAND,
	[TS_OP_OR] = VM_IOR,
};

/* ... and on u64, where they differ from i64. */
static const enum vm_op u64_binary[TS_OP_COUNT] = {
	[TS_OP_FLOORDIV] = VM_UFLOORDIV, [TS_OP_MOD] = VM_UMOD,
	[TS_OP_MIN] = VM_UMIN, [TS_OP_MAX] = VM_UMAX, [TS_OP_LT] = VM_ULT,
	[TS_OP_LE] = VM_ULE, [TS_OP_GT] = VM_UGT, [TS_OP_GE] = VM_UGE,
};

static const enum vm_op float_unary[TS_OP_COUNT] = {
	[TS_OP_NEG] = VM_FNEG, [TS_OP_EXP] = VM_FEXP, [TS_OP_LOG] = VM_FLOG,
	[TS_OP_SQRT] = VM_FSQRT, [TS_OP_RSQRT] = VM_FRSQRT,
	[TS_OP_TANH] = VM_FTANH, [TS_OP_SIGMOID] = VM_FSIGMOID,
	[TS_OP_ERF] = VM_FERF, [TS_OP_ABS] = VM_FABS,
	[TS_OP_FLOOR] = VM_FFLOOR, [TS_OP_ROUND] = VM_FROUND,
	[TS_OP_SIN] = VM_FSIN, [TS_OP_COS] = VM_FCOS, [TS_OP_TAN] = VM_FTAN,
	[TS_OP_ASIN] = VM_FASIN, [TS_OP_ACOS] = VM_FACOS,
	[TS_OP_ATAN] = VM_FATAN, [TS_OP_SINH] = VM_FSINH,
	[TS_OP_COSH] = VM_FCOSH, [TS_OP_ASINH] = VM_FASINH,
	[TS_OP_ACOSH] = VM_FACOSH, [TS_OP_ATANH] = VM_FATANH,
	[TS_OP_CEIL] = VM_FCEIL, [TS_OP_SIGN] = VM_FSIGN,
	[TS_OP_ISNAN] = VM_FISNAN, [TS_OP_ISINF] = VM_FISINF,
};

static const enum vm_op int_unary[TS_OP_COUNT] = {
	[TS_OP_NEG] = VM_INEG, [TS_OP_ABS] = VM_IABS, [TS_OP_NOT] = VM_INOT,
	[TS_OP_SIGN] = VM_ISIGN,
};

/* Report an operator the interpreter cannot run (a malformed node). */
static int unsupported(struct prog *p, const ts_expr *e)
{
	ts_ctx_set_error(p->ctx, "stage '%s': the interpreter cannot run '%s' "
		"on %s", p->s->name, ts_op_name(e->op),
		ts_dtype_name(e->a->dtype));
	return -1;
}

/* Compile a binary node; the right operand of && and || runs only where
 * the left one leaves the result open. */
static int compile_binary(struct prog *p, const ts_expr *e, int mask)
{
	bool fl = ts_dtype_is_float(e->a->dtype);
	enum vm_op op = fl ? float_binary[e->op] : int_binary[e->op];
	int a, b, bmask = mask;

	if (e->a->dtype == TS_U64 && u64_binary[e->op])
		op = u64_binary[e->op];
	if (op == 0)
		return unsupported(p, e);
	if ((a = compile(p, e->a, mask)) < 0)
		return -1;
	if (e->op == TS_OP_AND || e->op == TS_OP_OR)
		bmask = branch_mask(p, e->b, mask, a, e->op == TS_OP_OR);
	if ((b = compile(p, e->b, bmask)) < 0)
		return -1;
	return emit_arith(p, op, a, b, mask, e->a->dtype, ts_op_name(e->op));
}

/* Emit the unary node "e" under "mask". */
static int compile_unary(struct prog *p, const ts_expr *e, int mask)
{
	bool fl = ts_dtype_is_float(e->a->dtype);
	enum vm_op op = fl ? float_unary[e->op] : int_unary[e->op];
	int a;

	if (op == 0)
		return unsupported(p, e);
	if ((a = compile(p, e->a, mask)) < 0)
		return -1;
	if (e->op == TS_OP_ABS && !fl && !ts_dtype_is_signed(e->a->dtype))
		return a;	/* an unsigned value is its own magnitude */
	return emit_arith(p, op, a, -1, mask, e->a->dtype, NULL);
}

/* select(c, a, b): each branch under the lanes that take it. */
static int compile_select(struct prog *p, const ts_expr *e, int mask)
{
	int c, a, b;

	if ((c = compile(p, e->a, mask)) < 0)
		return -1;
	if ((a = compile(p, e->b, branch_mask(p, e->b, mask, c, false))) < 0)
		return -1;
	if ((b = compile(p, e->c, branch_mask(p, e->c, mask, c, true))) < 0)
		return -1;
	return emit_op(p, ts_dtype_is_float(e->dtype) ? VM_FSELECT : VM_ISELECT,
		c, a, b, mask);
}

/* Emit the cast "e", which rounds to its dtype, under "mask". */
static int compile_cast(struct prog *p, const ts_expr *e, int mask)
{
	bool from_f = ts_dtype_is_float(e->a->dtype);
	bool to_f = ts_dtype_is_float(e->dtype);
	enum vm_op op;
	int a;

	if ((a = compile(p, e->a, mask)) < 0)
		return -1;
	if (from_f)
		op = to_f ? VM_CAST_FF : VM_CAST_FI;
	else
		op = !to_f ? VM_CAST_II : e->a->dtype == TS_U64 ? VM_CAST_UF :
			VM_CAST_IF;
	return emit_op_ex(p, op, a, -1, -1, -1, e->dtype, NULL);
}

/* The identity of "red" on values of dtype "t". */
static void reduce_identity(ts_reducer red, ts_dtype t, struct insn *in)
{
	bool fl = ts_dtype_is_float(t);
	/* The extremes of the dtype, from its width; the largest u64 is
	 * all ones. */
	int bits = fl ? 64 : (int)ts_dtype_size(t) * 8;
	int64_t imax = t == TS_BOOL ? 1 : ts_dtype_is_signed(t) ?
		(int64_t)(UINT64_MAX >> (65 - bits)) :
		ts_int_wrap(t, -1);
	int64_t imin = ts_dtype_is_signed(t) ? -imax - 1 : 0;

	switch (red) {
	case TS_RED_SUM: in->k.i = 0; if (fl) in->k.f = 0; break;
	case TS_RED_PROD: in->k.i = 1; if (fl) in->k.f = 1; break;
	case TS_RED_MAX: in->k.i = imin; if (fl) in->k.f = -INFINITY; break;
	default: in->k.i = imax; if (fl) in->k.f = INFINITY; break;
	}
}

/* Open the loop over "slot" one depth below the current one in "p". */
static void open_loop(struct prog *p, int slot)
{
	p->depth++;
	p->slot_level[slot] = p->depth;
	p->depth_slot[p->depth] = slot;
	p->bufs[p->depth].n = 0;
}

/* Close the innermost loop of "p", of "extent" iterations: its code goes
 * into the code of the enclosing depth between LOOP_BEGIN and LOOP_END. */
static void close_loop(struct prog *p, int64_t extent)
{
	struct codebuf *b = &p->bufs[p->depth];
	struct codebuf *outer = &p->bufs[p->depth - 1];
	struct insn in = insn_new(p, VM_LOOP_BEGIN, -1);

	in.slot = p->depth_slot[p->depth];
	in.extent = extent;
	in.body = b->n;
	buf_push(outer, in);
	for (int i = 0; i < b->n; i++)
		buf_push(outer, b->code[i]);
	in.op = VM_LOOP_END;
	in.extent = extent;
	in.body = b->n;
	buf_push(outer, in);
	b->n = 0;
	p->depth--;
}

/* A reduction: initialise the accumulator, loop over the bound axes
 * (outermost first) around the body and accumulate. */
static int compile_reduce(struct prog *p, const ts_expr *e, int mask)
{
	static const enum vm_op facc[TS_RED_COUNT] = { VM_FACC_SUM,
		VM_FACC_MAX, VM_FACC_MIN, VM_FACC_PROD };
	static const enum vm_op iacc[TS_RED_COUNT] = { VM_IACC_SUM,
		VM_IACC_MAX, VM_IACC_MIN, VM_IACC_PROD };
	bool fl = ts_dtype_is_float(e->dtype);
	int acc = new_reg(p, expr_varies(p, e->a)), outer = p->depth, body;
	struct insn in = insn_new(p, VM_INIT, acc);
	enum vm_op op = fl ? facc[e->reducer] : iacc[e->reducer];

	reduce_identity(e->reducer, e->dtype, &in);
	emit_at(p, outer, in);
	p->scopes[p->nscopes++] = ++p->next_scope;
	for (int i = 0; i < e->nraxes; i++)
		open_loop(p, axis_slot(p, e->raxes[i]));
	if ((body = compile(p, e->a, mask)) < 0)
		return -1;
	if (e->dtype == TS_U64 && op == VM_IACC_MAX)
		op = VM_UACC_MAX;
	if (e->dtype == TS_U64 && op == VM_IACC_MIN)
		op = VM_UACC_MIN;
	in = insn_new(p, op, acc);
	set_operands(p, &in, acc, body, -1);
	/* The accumulator is a buffer of the reduction's dtype in compiled
	 * code: each step rounds (f32, f16, bf16) or wraps to it. */
	in.round = e->dtype;
	in.post = rounds(e->dtype);
	emit_at(p, p->depth, in);
	for (int i = e->nraxes - 1; i >= 0; i--)
		close_loop(p, e->raxes[i]->extent);
	p->nscopes--;
	p->regs[acc].level = outer;
	return acc;
}

/* Compile "e" under the active lanes "mask" and return its register, or
 * -1 with an error in the context. */
static int compile(struct prog *p, const ts_expr *e, int mask)
{
	int r = memo_find(p, e, mask);

	if (r >= 0)
		return r;
	switch (e->kind) {
	case TS_EXPR_INT:
	case TS_EXPR_FLOAT: r = compile_const(p, e); break;
	case TS_EXPR_VAR: r = compile_var(p, e); break;
	case TS_EXPR_LOAD: r = compile_load(p, e, mask); break;
	case TS_EXPR_UNARY: r = compile_unary(p, e, mask); break;
	case TS_EXPR_BINARY: r = compile_binary(p, e, mask); break;
	case TS_EXPR_SELECT: r = compile_select(p, e, mask); break;
	case TS_EXPR_CAST: r = compile_cast(p, e, mask); break;
	case TS_EXPR_REDUCE: r = compile_reduce(p, e, mask); break;
	default:
		ts_ctx_set_error(p->ctx, "stage '%s': unknown expression kind "
			"%d", p->s->name, (int)e->kind);
		return -1;
	}
	if (r >= 0)
		memo_add(p, e, mask, r);
	return r;
}

/* Count the axes bound by the reducers of "e": a bound on the depth of
 * nested loops and on the number of reducers. */
static int count_reduce_axes(const ts_expr *e)
{
	int n = 0;

	if (!e)
		return 0;
	if (e->kind == TS_EXPR_LOAD) {
		for (int i = 0; i < e->nargs; i++)
			n += count_reduce_axes(e->args[i]);
		return n;
	}
	if (e->kind == TS_EXPR_REDUCE)
		n += e->nraxes;
	return n + count_reduce_axes(e->a) + count_reduce_axes(e->b) +
		count_reduce_axes(e->c);
}

/* Add to "*cost" the weight of each node of "e" that depends on "axis",
 * "w" being how often the node runs per output point; return whether "e"
 * depends on "axis". */
static bool lane_cost(const ts_expr *e, const ts_axis *axis, double w,
	double *cost)
{
	bool dep = false;

	if (!e)
		return false;
	switch (e->kind) {
	case TS_EXPR_VAR:
		dep = e->axis == axis;
		break;
	case TS_EXPR_LOAD:
		for (int i = 0; i < e->nargs; i++)
			dep |= lane_cost(e->args[i], axis, w, cost);
		break;
	case TS_EXPR_REDUCE: {
		double inner = w;
		for (int i = 0; i < e->nraxes; i++)
			inner *= (double)e->raxes[i]->extent;
		dep = lane_cost(e->a, axis, inner, cost);
		break;
	}
	default:
		dep |= lane_cost(e->a, axis, w, cost);
		dep |= lane_cost(e->b, axis, w, cost);
		dep |= lane_cost(e->c, axis, w, cost);
		break;
	}
	if (dep)
		*cost += w;
	return dep;
}

/* Choose the lane axis of "s" among its long spatial axes: the one along
 * which the fewest operations vary, weighted by how often they run (so a
 * padding condition that does not depend on it stays scalar), the
 * innermost on ties. */
static int choose_lane(const ts_stage *s)
{
	int64_t longest = 0;
	double best_cost = 0;
	int best = -1;

	for (int i = 0; i < s->ndim; i++)
		longest = TS_MAX(longest, s->axes[i]->extent);
	for (int i = s->ndim - 1; i >= 0; i--) {
		double cost = 0;
		if (s->axes[i]->extent < TS_MIN(longest, 32))
			continue;
		lane_cost(s->body, s->axes[i], 1, &cost);
		if (best < 0 || cost < best_cost) {
			best = i;
			best_cost = cost;
		}
	}
	return best;
}

/* Return the program of stage "s" reading the arrays "arrays" of the
 * tensors "tensors" ("n" of them), or NULL. */
static struct prog *prog_new(ts_ctx *ctx, const ts_stage *s, int n,
	const ts_tensor **tensors, const ts_array **arrays)
{
	struct prog *p = ts_new(struct prog);
	int nloops;

	p->ctx = ctx;
	p->s = s;
	p->ntensors = n;
	p->tensors = tensors;
	p->arrays = arrays;
	p->nslots = s->ndim + s->nraxes;
	p->slot_axis = ts_new_array(ts_axis *, p->nslots + 1);
	p->slot_extent = ts_new_atomic(int64_t, p->nslots + 1);
	for (int i = 0; i < s->ndim; i++)
		p->slot_axis[i] = s->axes[i];
	for (int i = 0; i < s->nraxes; i++)
		p->slot_axis[s->ndim + i] = s->raxes[i];
	for (int i = 0; i < p->nslots; i++)
		p->slot_extent[i] = p->slot_axis[i]->extent;
	p->lane = choose_lane(s);
	nloops = count_reduce_axes(s->body) + 1;
	p->scopes = ts_new_atomic(int, nloops);
	p->slot_level = ts_new_atomic(int, p->nslots + 1);
	p->depth_slot = ts_new_atomic(int, nloops);
	p->bufs = ts_new_array(struct codebuf, nloops);
	p->result = compile(p, s->body, -1);
	if (p->result < 0)
		return NULL;
	p->code = p->bufs[0].code;
	p->ncode = p->bufs[0].n;
	return p;
}

/* The state of one run: register file, axis values and strip length. */
struct vm {
	struct prog *p;
	uint64_t *file;
	int64_t *iv;
	int64_t *scratch;	/* VM_LANES offsets for loads */
	int64_t n;		/* lanes in the current strip */
};

#define FREG(vm, r) ((double *)((vm)->file + (vm)->p->regs[r].off))
#define IREG(vm, r) ((int64_t *)((vm)->file + (vm)->p->regs[r].off))

/* Lanes of "in"'s destination in the current strip. */
#define NL(vm, in) ((in)->vary ? (vm)->n : 1)

/* A binary operation on registers of element type TA into TD: x and y are
 * the operands of lane l; uniform operands are read once. */
#define BINARY(TD, TA, EXPR) do { \
	TD *d_ = (TD *)(vm->file + p->regs[in->dst].off); \
	const TA *a_ = (const TA *)(vm->file + p->regs[in->a].off); \
	const TA *b_ = (const TA *)(vm->file + p->regs[in->b].off); \
	int64_t n_ = NL(vm, in); \
	if (in->va && in->vb) { \
		for (int64_t l = 0; l < n_; l++) { \
			TA x = a_[l], y = b_[l]; d_[l] = (EXPR); } \
	} else if (in->va) { \
		TA y = b_[0]; \
		for (int64_t l = 0; l < n_; l++) { \
			TA x = a_[l]; d_[l] = (EXPR); } \
	} else if (in->vb) { \
		TA x = a_[0]; \
		for (int64_t l = 0; l < n_; l++) { \
			TA y = b_[l]; d_[l] = (EXPR); } \
	} else { \
		TA x = a_[0], y = b_[0]; d_[0] = (EXPR); \
	} \
} while (0)

#define UNARY(TD, TA, EXPR) do { \
	TD *d_ = (TD *)(vm->file + p->regs[in->dst].off); \
	const TA *a_ = (const TA *)(vm->file + p->regs[in->a].off); \
	int64_t n_ = NL(vm, in); \
	for (int64_t l = 0; l < n_; l++) { \
		TA x = a_[l]; d_[l] = (EXPR); } \
} while (0)

/* Accumulate operand b into the accumulator a (== dst). */
#define ACCUM(T, EXPR) do { \
	T *d_ = (T *)(vm->file + p->regs[in->dst].off); \
	const T *b_ = (const T *)(vm->file + p->regs[in->b].off); \
	int64_t n_ = NL(vm, in); \
	if (in->vb) { \
		for (int64_t l = 0; l < n_; l++) { \
			T x = d_[l], y = b_[l]; d_[l] = (EXPR); } \
	} else { \
		T y = b_[0]; \
		for (int64_t l = 0; l < n_; l++) { \
			T x = d_[l]; d_[l] = (EXPR); } \
	} \
} while (0)

/* i64 arithmetic on "x" and "y" that wraps instead of overflowing. */
static inline int64_t iwrap_add(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x + (uint64_t)y);
}

static inline int64_t iwrap_sub(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x - (uint64_t)y);
}

static inline int64_t iwrap_mul(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x * (uint64_t)y);
}

/* Floor division of "x" by the non-zero "y" (Python's //). */
static inline int64_t ifloordiv(int64_t x, int64_t y)
{
	int64_t q;

	if (y == -1)
		return iwrap_sub(0, x);
	q = x / y;
	if ((x % y != 0) && ((x < 0) != (y < 0)))
		q--;
	return q;
}

/* Floor modulo of "x" by the non-zero "y": the sign of "y". */
static inline int64_t ifloormod(int64_t x, int64_t y)
{
	int64_t r;

	if (y == -1)
		return 0;
	r = x % y;
	if (r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}

/* 1 / (1 + exp(-"x")). */
static inline double fsigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/* sign("x"): 1 above zero, -1 below, and a zero or a NaN itself (so
 * sign(-0.0) is -0.0). */
static inline double fsign(double x)
{
	return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}

/* Wrap "v" to the integer dtype "t" like a C cast. */
static inline int64_t iwrap(int64_t v, ts_dtype t)
{
	return ts_int_wrap(t, v);
}

/* Truncate "v" toward zero and saturate it to the integer dtype "t". */
static inline int64_t ftoi(double v, ts_dtype t)
{
	return ts_float_to_int(t, v);
}

/* Round the float "v" to the float dtype "t". */
static inline double fround(double v, ts_dtype t)
{
	if (t == TS_F32)
		return (float)v;
	if (t == TS_F16)
		return ts_f16_to_f32(ts_f32_to_f16((float)v));
	if (t == TS_BF16)
		return ts_bf16_to_f32(ts_f32_to_bf16((float)v));
	return v;
}

/* Convert the integer "v" to the float dtype "t" with one rounding. */
static inline double itof(int64_t v, ts_dtype t)
{
	return t == TS_F64 ? (double)v : fround((float)v, t);
}

/* Convert the u64 "v" to the float dtype "t", as itof. */
static inline double utof(int64_t v, ts_dtype t)
{
	uint64_t u = (uint64_t)v;

	return t == TS_F64 ? (double)u : fround((float)u, t);
}

/* Floor division and modulo of u64 by the non-zero "y": C's. */
static inline int64_t udiv(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x / (uint64_t)y);
}

static inline int64_t umod(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x % (uint64_t)y);
}

/* Whether the u64 "x" is less than "y". */
static inline bool ult(int64_t x, int64_t y)
{
	return (uint64_t)x < (uint64_t)y;
}

/* Whether lane "l" is active under the mask of "in". */
static inline bool lane_on(const struct vm *vm, const struct insn *in,
	int64_t l)
{
	if (in->mask < 0)
		return true;
	return IREG(vm, in->mask)[in->vmask ? l : 0] != 0;
}

/* Whether any lane is active under the mask of "in". */
static bool any_on(const struct vm *vm, const struct insn *in)
{
	for (int64_t l = 0; l < (in->vmask ? vm->n : 1); l++)
		if (lane_on(vm, in, l))
			return true;
	return false;
}

/* Report the index "v" outside dimension "d" of the load "in". */
static ts_status oob_error(struct vm *vm, const struct insn *in, int d,
	int64_t v)
{
	const ts_tensor *t = in->ld->t;

	return ts_ctx_set_error(vm->p->ctx, "stage '%s': index %lld is out of "
		"bounds for dimension %d of tensor '%s' (extent %lld)",
		vm->p->s->name, (long long)v, d, t->name,
		(long long)t->shape[d]);
}

/* The loop of gather() for element type T read as DT. */
#define GATHER(T, DT, CONV) do { \
	const T *src_ = (const T *)data; DT *d_ = (DT *)dst; \
	if (off) { \
		for (int64_t l = 0; l < n; l++) d_[l] = CONV(src_[off[l]]); \
	} else if (step == 1) { \
		src_ += off0; \
		for (int64_t l = 0; l < n; l++) d_[l] = CONV(src_[l]); \
	} else { \
		for (int64_t l = 0; l < n; l++) \
			d_[l] = CONV(src_[off0 + l * step]); \
	} \
} while (0)

#define CONV_ID(x) (x)
#define CONV_BOOL(x) ((x) != 0)
#define CONV_HALF(x) ((double)ts_f16_to_f32(x))
#define CONV_BF16(x) ((double)ts_bf16_to_f32(x))

/* Read "n" elements of dtype "t" from "data" into "dst", at the offsets
 * "off" or, when it is NULL, at "off0" + l * "step". */
static void gather(ts_dtype t, const void *data, const int64_t *off,
	int64_t off0, int64_t step, int64_t n, uint64_t *dst)
{
	switch (t) {
	case TS_BOOL: GATHER(uint8_t, int64_t, CONV_BOOL); break;
	case TS_U8: GATHER(uint8_t, int64_t, CONV_ID); break;
	case TS_I8: GATHER(int8_t, int64_t, CONV_ID); break;
	case TS_I16: GATHER(int16_t, int64_t, CONV_ID); break;
	case TS_U16: GATHER(uint16_t, int64_t, CONV_ID); break;
	case TS_I32: GATHER(int32_t, int64_t, CONV_ID); break;
	case TS_U32: GATHER(uint32_t, int64_t, CONV_ID); break;
	case TS_I64: case TS_U64: GATHER(int64_t, int64_t, CONV_ID); break;
	case TS_F16: GATHER(uint16_t, double, CONV_HALF); break;
	case TS_BF16: GATHER(uint16_t, double, CONV_BF16); break;
	case TS_F32: GATHER(float, double, CONV_ID); break;
	default: GATHER(double, double, CONV_ID); break;
	}
}

/* Check the affine load "in" lane by lane under its mask, and gather the
 * active lanes (inactive ones read element 0). */
static ts_status load_affine_masked(struct vm *vm, const struct insn *in,
	int64_t n, uint64_t *dst)
{
	const struct prog *p = vm->p;
	const struct load *ld = in->ld;
	const ts_tensor *t = ld->t;
	int64_t *off = vm->scratch, base[TS_MAX_DIMS], step[TS_MAX_DIMS];
	bool all = in->vary || any_on(vm, in);

	for (int d = 0; d < t->ndim; d++) {
		const struct affine *aff = &ld->aff[d];
		base[d] = aff->c0;
		for (int s = 0; s < p->nslots; s++)
			base[d] += aff->coef[s] * vm->iv[s];
		step[d] = p->lane >= 0 ? aff->coef[p->lane] : 0;
	}
	for (int64_t l = 0; l < n; l++) {
		off[l] = 0;
		if (in->vary ? !lane_on(vm, in, l) : !all)
			continue;
		for (int d = 0; d < t->ndim; d++) {
			int64_t v = base[d] + step[d] * l;
			if (v < 0 || v >= t->shape[d])
				return oob_error(vm, in, d, v);
			off[l] += v * ld->stride[d];
		}
	}
	gather(in->dtype, ld->data, off, 0, 0, n, dst);
	return TS_OK;
}

/* Whether the affine index "aff" stays in [0, "extent") over the lanes
 * [0, "n") of the current strip. */
static bool strip_inbounds(const struct vm *vm, const struct affine *aff,
	int64_t n, int64_t extent)
{
	const struct prog *p = vm->p;
	int64_t v = aff->c0, last;

	for (int s = 0; s < p->nslots; s++)
		v += aff->coef[s] * vm->iv[s];
	last = p->lane >= 0 ? v + aff->coef[p->lane] * (n - 1) : v;
	return v >= 0 && v < extent && last >= 0 && last < extent;
}

/* Run the affine load "in". */
static ts_status run_load_affine(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;
	const struct load *ld = in->ld;
	int64_t n = NL(vm, in), off0 = ld->off_c0, step = 0;
	uint64_t *dst = vm->file + p->regs[in->dst].off;

	if (!ld->inbounds) {
		for (int d = 0; d < ld->t->ndim; d++)
			if (!strip_inbounds(vm, &ld->aff[d], n, ld->t->shape[d]))
				return load_affine_masked(vm, in, n, dst);
	}
	for (int s = 0; s < p->nslots; s++)
		off0 += ld->off_coef[s] * vm->iv[s];
	if (p->lane >= 0)
		step = ld->off_coef[p->lane];
	gather(in->dtype, ld->data, NULL, off0, step, n, dst);
	return TS_OK;
}

/* Run the general load "in": indices per lane, checked where active. */
static ts_status run_load(struct vm *vm, const struct insn *in)
{
	const struct load *ld = in->ld;
	int64_t n = NL(vm, in);
	int64_t *off = vm->scratch;
	uint64_t *dst = vm->file + vm->p->regs[in->dst].off;

	if (!in->vary && !any_on(vm, in)) {
		dst[0] = 0;
		return TS_OK;
	}
	memset(off, 0, sizeof(int64_t) * (size_t)n);
	for (int64_t l = 0; l < n; l++) {
		bool on = in->vary ? lane_on(vm, in, l) : true;
		for (int d = 0; d < ld->t->ndim && on; d++) {
			int64_t v = IREG(vm, ld->idx[d])[ld->vidx[d] ? l : 0];
			if (v < 0 || v >= ld->t->shape[d])
				return oob_error(vm, in, d, v);
			off[l] += v * ld->stride[d];
		}
	}
	gather(in->dtype, ld->data, off, 0, 0, n, dst);
	return TS_OK;
}

/* Run the integer division or modulo "in"; a zero divisor gives 0, as
 * in compiled code (doc/grammar.md). */
static void run_idiv(struct vm *vm, const struct insn *in)
{
	int64_t *d = IREG(vm, in->dst);
	const int64_t *a = IREG(vm, in->a), *b = IREG(vm, in->b);
	bool mod = in->op == VM_IMOD || in->op == VM_UMOD;
	bool u = in->op == VM_UFLOORDIV || in->op == VM_UMOD;

	for (int64_t l = 0; l < NL(vm, in); l++) {
		int64_t x = a[in->va ? l : 0], y = b[in->vb ? l : 0];
		if (y == 0)
			d[l] = 0;
		else if (u)
			d[l] = mod ? umod(x, y) : udiv(x, y);
		else
			d[l] = mod ? ifloormod(x, y) : ifloordiv(x, y);
	}
}

/* Fill the register of "in" with the value of its axis slot. */
static void run_var(struct vm *vm, const struct insn *in)
{
	int64_t *d = IREG(vm, in->dst);
	int64_t base = vm->iv[in->slot];

	if (!in->vary) {
		d[0] = base;
		return;
	}
	for (int64_t l = 0; l < vm->n; l++)
		d[l] = base + l;
}

/* Set every lane of the register of "in" to its constant. */
static void run_init(struct vm *vm, const struct insn *in)
{
	uint64_t *d = vm->file + vm->p->regs[in->dst].off;
	uint64_t k;

	memcpy(&k, &in->k, sizeof(k));
	for (int64_t l = 0; l < NL(vm, in); l++)
		d[l] = k;
}

/* Run the casts. */
static void run_cast(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;
	ts_dtype t = in->dtype;

	switch (in->op) {
	case VM_CAST_II: UNARY(int64_t, int64_t, iwrap(x, t)); break;
	case VM_CAST_IF: UNARY(double, int64_t, itof(x, t)); break;
	case VM_CAST_UF: UNARY(double, int64_t, utof(x, t)); break;
	case VM_CAST_FI: UNARY(int64_t, double, ftoi(x, t)); break;
	default: UNARY(double, double, fround(x, t)); break;
	}
}

/* Run the f32 operations of "in" that round more than once in compiled
 * code (the others round once, in post_round); return false for the
 * others. */
static bool run_float32(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;

	switch (in->op) {
	case VM_FFLOORDIV: BINARY(double, double, floorf((float)(x / y)));
		break;
	case VM_FMOD:
		BINARY(double, double, (float)(x - (float)(y *
			floorf((float)(x / y)))));
		break;
	case VM_FRSQRT: UNARY(double, double, (float)(1.0 / (float)sqrt(x)));
		break;
	default: return false;
	}
	return true;
}

/* Run the float arithmetic "in"; return false if it is not one. */
static bool run_float(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;

	if (in->post && in->round == TS_F32 && run_float32(vm, in))
		return true;
	switch (in->op) {
	case VM_FADD: BINARY(double, double, x + y); break;
	case VM_FSUB: BINARY(double, double, x - y); break;
	case VM_FMUL: BINARY(double, double, x * y); break;
	case VM_FDIV: BINARY(double, double, x / y); break;
	case VM_FFLOORDIV: BINARY(double, double, floor(x / y)); break;
	case VM_FMOD: BINARY(double, double, x - y * floor(x / y)); break;
	case VM_FMIN: BINARY(double, double, y < x ? y : x); break;
	case VM_FMAX: BINARY(double, double, y > x ? y : x); break;
	case VM_FPOW: BINARY(double, double, pow(x, y)); break;
	case VM_FLT: BINARY(int64_t, double, x < y); break;
	case VM_FLE: BINARY(int64_t, double, x <= y); break;
	case VM_FGT: BINARY(int64_t, double, x > y); break;
	case VM_FGE: BINARY(int64_t, double, x >= y); break;
	case VM_FEQ: BINARY(int64_t, double, x == y); break;
	case VM_FNE: BINARY(int64_t, double, x != y); break;
	case VM_FNEG: UNARY(double, double, -x); break;
	case VM_FEXP: UNARY(double, double, exp(x)); break;
	case VM_FLOG: UNARY(double, double, log(x)); break;
	case VM_FSQRT: UNARY(double, double, sqrt(x)); break;
	case VM_FRSQRT: UNARY(double, double, 1.0 / sqrt(x)); break;
	case VM_FTANH: UNARY(double, double, tanh(x)); break;
	case VM_FSIGMOID: UNARY(double, double, fsigmoid(x)); break;
	case VM_FERF: UNARY(double, double, erf(x)); break;
	case VM_FABS: UNARY(double, double, fabs(x)); break;
	case VM_FFLOOR: UNARY(double, double, floor(x)); break;
	case VM_FROUND: UNARY(double, double, rint(x)); break;
	case VM_FSIN: UNARY(double, double, sin(x)); break;
	case VM_FCOS: UNARY(double, double, cos(x)); break;
	case VM_FTAN: UNARY(double, double, tan(x)); break;
	case VM_FASIN: UNARY(double, double, asin(x)); break;
	case VM_FACOS: UNARY(double, double, acos(x)); break;
	case VM_FATAN: UNARY(double, double, atan(x)); break;
	case VM_FSINH: UNARY(double, double, sinh(x)); break;
	case VM_FCOSH: UNARY(double, double, cosh(x)); break;
	case VM_FASINH: UNARY(double, double, asinh(x)); break;
	case VM_FACOSH: UNARY(double, double, acosh(x)); break;
	case VM_FATANH: UNARY(double, double, atanh(x)); break;
	case VM_FCEIL: UNARY(double, double, ceil(x)); break;
	case VM_FSIGN: UNARY(double, double, fsign(x)); break;
	case VM_FISNAN: UNARY(int64_t, double, isnan(x)); break;
	case VM_FISINF: UNARY(int64_t, double, isinf(x)); break;
	default: return false;
	}
	return true;
}

/* Run the integer arithmetic "in"; return false if it is not one. */
static bool run_int(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;

	switch (in->op) {
	case VM_IADD: BINARY(int64_t, int64_t, iwrap_add(x, y)); break;
	case VM_ISUB: BINARY(int64_t, int64_t, iwrap_sub(x, y)); break;
	case VM_IMUL: BINARY(int64_t, int64_t, iwrap_mul(x, y)); break;
	case VM_IMIN: BINARY(int64_t, int64_t, y < x ? y : x); break;
	case VM_IMAX: BINARY(int64_t, int64_t, y > x ? y : x); break;
	case VM_ILT: BINARY(int64_t, int64_t, x < y); break;
	case VM_ILE: BINARY(int64_t, int64_t, x <= y); break;
	case VM_IGT: BINARY(int64_t, int64_t, x > y); break;
	case VM_IGE: BINARY(int64_t, int64_t, x >= y); break;
	case VM_IEQ: BINARY(int64_t, int64_t, x == y); break;
	case VM_INE: BINARY(int64_t, int64_t, x != y); break;
	case VM_UMIN: BINARY(int64_t, int64_t, ult(y, x) ? y : x); break;
	case VM_UMAX: BINARY(int64_t, int64_t, ult(x, y) ? y : x); break;
	case VM_ULT: BINARY(int64_t, int64_t, ult(x, y)); break;
	case VM_ULE: BINARY(int64_t, int64_t, !ult(y, x)); break;
	case VM_UGT: BINARY(int64_t, int64_t, ult(y, x)); break;
	case VM_UGE: BINARY(int64_t, int64_t, !ult(x, y)); break;
	case VM_IAND: BINARY(int64_t, int64_t, x && y); break;
	case VM_IOR: BINARY(int64_t, int64_t, x || y); break;
	case VM_INEG: UNARY(int64_t, int64_t, iwrap_sub(0, x)); break;
	case VM_IABS: UNARY(int64_t, int64_t, x < 0 ? iwrap_sub(0, x) : x);
		break;
	case VM_ISIGN: UNARY(int64_t, int64_t, (x > 0) - (x < 0)); break;
	case VM_INOT: UNARY(int64_t, int64_t, !x); break;
	default: return false;
	}
	return true;
}

/* Round or wrap the result of "in" to the dtype it computes in. */
static void post_round(struct vm *vm, const struct insn *in)
{
	ts_dtype t = in->round;
	int64_t n = NL(vm, in);

	if (ts_dtype_is_float(t)) {
		double *d = FREG(vm, in->dst);
		for (int64_t l = 0; l < n; l++)
			d[l] = fround(d[l], t);
	} else {
		int64_t *d = IREG(vm, in->dst);
		for (int64_t l = 0; l < n; l++)
			d[l] = iwrap(d[l], t);
	}
}

/* Run a select: "a" picks between "b" and "c" lane by lane. */
static void run_select(struct vm *vm, const struct insn *in)
{
	uint64_t *d = vm->file + vm->p->regs[in->dst].off;
	const int64_t *c = IREG(vm, in->a);
	const uint64_t *x = vm->file + vm->p->regs[in->b].off;
	const uint64_t *y = vm->file + vm->p->regs[in->c].off;

	for (int64_t l = 0; l < NL(vm, in); l++)
		d[l] = c[in->va ? l : 0] ? x[in->vb ? l : 0] : y[in->vc ? l : 0];
}

/* Run the accumulation "in". */
static void run_accum(struct vm *vm, const struct insn *in)
{
	const struct prog *p = vm->p;

	switch (in->op) {
	case VM_FACC_SUM: ACCUM(double, x + y); break;
	case VM_FACC_PROD: ACCUM(double, x * y); break;
	case VM_FACC_MAX: ACCUM(double, y > x ? y : x); break;
	case VM_FACC_MIN: ACCUM(double, y < x ? y : x); break;
	case VM_IACC_SUM: ACCUM(int64_t, iwrap_add(x, y)); break;
	case VM_IACC_PROD: ACCUM(int64_t, iwrap_mul(x, y)); break;
	case VM_IACC_MAX: ACCUM(int64_t, y > x ? y : x); break;
	case VM_UACC_MAX: ACCUM(int64_t, ult(x, y) ? y : x); break;
	case VM_UACC_MIN: ACCUM(int64_t, ult(y, x) ? y : x); break;
	default: ACCUM(int64_t, y < x ? y : x); break;
	}
}

/* Run the program of "vm" once for the current strip. */
static ts_status vm_run(struct vm *vm)
{
	const struct prog *p = vm->p;

	for (int pc = 0; pc < p->ncode; pc++) {
		const struct insn *in = &p->code[pc];
		switch (in->op) {
		case VM_CONST:
			memcpy(vm->file + p->regs[in->dst].off, &in->k, 8);
			break;
		case VM_VAR: run_var(vm, in); break;
		case VM_LOAD_AFFINE:
			if (run_load_affine(vm, in) < 0)
				return TS_ERROR;
			break;
		case VM_LOAD:
			if (run_load(vm, in) < 0)
				return TS_ERROR;
			break;
		case VM_IFLOORDIV: case VM_IMOD: case VM_UFLOORDIV:
		case VM_UMOD: run_idiv(vm, in); break;
		case VM_FSELECT: case VM_ISELECT: run_select(vm, in); break;
		case VM_CAST_II: case VM_CAST_IF: case VM_CAST_UF:
		case VM_CAST_FI:
		case VM_CAST_FF: run_cast(vm, in); break;
		case VM_INIT: run_init(vm, in); break;
		case VM_FACC_SUM: case VM_FACC_PROD: case VM_FACC_MAX:
		case VM_FACC_MIN: case VM_IACC_SUM: case VM_IACC_PROD:
		case VM_IACC_MAX: case VM_IACC_MIN: case VM_UACC_MAX:
		case VM_UACC_MIN: run_accum(vm, in); break;
		case VM_LOOP_BEGIN:
			vm->iv[in->slot] = 0;
			if (in->extent <= 0)	/* empty: skip body and end */
				pc += in->body + 1;
			break;
		case VM_LOOP_END:
			if (++vm->iv[in->slot] < in->extent)
				pc -= in->body + 1;
			break;
		default:
			if (!run_float(vm, in))
				run_int(vm, in);
			break;
		}
		if (in->post)
			post_round(vm, in);
	}
	return TS_OK;
}

/* Store the result register of "vm" into "out" at the current strip,
 * rounding to the dtype of "out". */
static void store_strip(struct vm *vm, ts_array *out, const int64_t *ostride)
{
	const struct prog *p = vm->p;
	int r = p->result;
	bool vary = p->regs[r].vary, fl = ts_dtype_is_float(p->s->body->dtype);
	int64_t base = 0, step = p->lane >= 0 ? ostride[p->lane] : 0;

	for (int s = 0; s < p->s->ndim; s++)
		base += vm->iv[s] * ostride[s];
	for (int64_t l = 0; l < vm->n; l++) {
		int64_t i = base + l * step;
		if (fl) {
			ts_array_set(out, i, FREG(vm, r)[vary ? l : 0]);
		} else {
			int64_t v = IREG(vm, r)[vary ? l : 0];
			if (ts_dtype_is_float(out->dtype))
				ts_array_set(out, i, ts_int_to_double(
					p->s->body->dtype, v));
			else
				ts_array_set_int(out, i, v);
		}
	}
}

/* Run "p" over every point of its stage, writing "out". */
static ts_status prog_run(struct prog *p, ts_array *out)
{
	const ts_stage *s = p->s;
	struct vm vm = { p };
	int64_t ostride[TS_MAX_DIMS], st = 1, lane_extent;

	if (out->size == 0)	/* a zero extent: no point to compute */
		return TS_OK;
	vm.file = ts_new_atomic(uint64_t, p->file_size + 8);
	vm.iv = ts_new_atomic(int64_t, p->nslots + 1);
	vm.scratch = ts_new_atomic(int64_t, VM_LANES);
	for (int d = s->ndim - 1; d >= 0; d--) {
		ostride[d] = st;
		st *= s->axes[d]->extent;
	}
	lane_extent = p->lane >= 0 ? s->axes[p->lane]->extent : 1;
	for (;;) {
		int d;
		vm.n = TS_MIN(VM_LANES, lane_extent -
			(p->lane >= 0 ? vm.iv[p->lane] : 0));
		if (vm_run(&vm) < 0)
			return TS_ERROR;
		store_strip(&vm, out, ostride);
		/* Advance the odometer: the lane axis by a strip. */
		for (d = s->ndim - 1; d >= 0; d--) {
			int64_t step = d == p->lane ? VM_LANES : 1;
			vm.iv[d] += step;
			if (vm.iv[d] < s->axes[d]->extent)
				break;
			vm.iv[d] = 0;
		}
		if (d < 0)
			return TS_OK;
	}
}

/* Check that "a" can stand for the input tensor "t". */
static ts_status check_input(ts_ctx *ctx, const ts_tensor *t,
	const ts_array *a)
{
	bool same;

	if (!a)
		return ts_ctx_set_error(ctx, "eval: no array for input '%s'",
			t->name);
	same = a->dtype == t->dtype && a->ndim == t->ndim;
	for (int i = 0; same && i < t->ndim; i++)
		same = a->shape[i] == t->shape[i];
	if (same)
		return TS_OK;
	{
		ts_buf want, got;
		ts_buf_init(&want);
		ts_buf_init(&got);
		for (int i = 0; i < t->ndim; i++)
			ts_buf_printf(&want, "%s%lld", i ? "x" : "",
				(long long)t->shape[i]);
		for (int i = 0; i < a->ndim; i++)
			ts_buf_printf(&got, "%s%lld", i ? "x" : "",
				(long long)a->shape[i]);
		return ts_ctx_set_error(ctx, "eval: input '%s' must be "
			"%s[%s], got %s[%s]", t->name, ts_dtype_name(t->dtype),
			want.s, ts_dtype_name(a->dtype), got.s);
	}
}

ts_status ts_eval(ts_ctx *ctx, const ts_dag *dag, ts_array *const *inputs,
	ts_array **outputs)
{
	int n;
	const ts_tensor **tensors;
	const ts_array **arrays;

	if (!dag)
		return ts_ctx_set_error(ctx, "eval: no DAG");
	n = dag->ninputs + dag->nstages;
	tensors = ts_new_array(const ts_tensor *, n + 1);
	arrays = ts_new_array(const ts_array *, n + 1);
	for (int i = 0; i < dag->ninputs; i++) {
		if (check_input(ctx, dag->inputs[i], inputs ? inputs[i] : NULL) < 0)
			return TS_ERROR;
		tensors[i] = dag->inputs[i];
		arrays[i] = inputs[i];
	}
	for (int i = 0; i < dag->nstages; i++) {
		const ts_stage *s = dag->stages[i];
		int k = dag->ninputs + i;
		ts_array *out = ts_array_for_tensor(ctx, s->out);
		struct prog *p;
		if (!out)
			return TS_ERROR;
		tensors[k] = s->out;
		arrays[k] = out;
		p = prog_new(ctx, s, k + 1, tensors, arrays);
		if (!p || prog_run(p, out) < 0)
			return TS_ERROR;
	}
	for (int o = 0; o < dag->noutputs; o++)
		for (int i = 0; i < n; i++)
			if (tensors[i] == dag->outputs[o])
				outputs[o] = (ts_array *)arrays[i];
	return TS_OK;
}

/* Record in "lim" the smallest extent that each input of "dag" indexes,
 * walking "e" whose value is used as an index of extent "bound" (0: not
 * an index). */
static void index_limits(const ts_dag *dag, const ts_expr *e, int64_t bound,
	int64_t *lim)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_LOAD) {
		for (int i = 0; bound > 0 && i < dag->ninputs; i++)
			if (dag->inputs[i] == e->tensor &&
			    (lim[i] == 0 || bound < lim[i]))
				lim[i] = bound;
		for (int d = 0; d < e->nargs; d++)
			index_limits(dag, e->args[d], e->tensor->shape[d], lim);
		return;
	}
	index_limits(dag, e->a, bound, lim);
	index_limits(dag, e->b, bound, lim);
	index_limits(dag, e->c, bound, lim);
}

ts_array **ts_dag_random_inputs(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed)
{
	ts_array **in;
	int64_t *lim;

	if (!dag) {
		ts_ctx_set_error(ctx, "random inputs: no DAG");
		return NULL;
	}
	in = ts_new_array(ts_array *, dag->ninputs + 1);
	lim = ts_new_atomic(int64_t, dag->ninputs + 1);
	for (int s = 0; s < dag->nstages; s++)
		index_limits(dag, dag->stages[s]->body, 0, lim);
	for (int i = 0; i < dag->ninputs; i++) {
		uint64_t st = seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1));
		uint64_t sub = ts_splitmix64(&st);
		in[i] = ts_array_for_tensor(ctx, dag->inputs[i]);
		if (!in[i])
			return NULL;
		if (lim[i] > 0)
			ts_array_fill_range(in[i], sub, 0, lim[i]);
		else
			ts_array_fill_random(in[i], sub);
	}
	return in;
}
