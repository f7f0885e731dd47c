/* Transcendental functions as straight-line LLVM IR.
 *
 * Requires: a builder positioned in a function of a module, and a float or
 * double value, scalar or vector.
 * Produces: the value of exp, log, tanh, sigmoid, erf (f32) or pow (f32)
 * computed with integer and floating arithmetic only: no call, so that a
 * vectorized loop stays vectorized without a vector math library.
 *
 * Every function is a range reduction, a polynomial and a reconstruction:
 *
 *   exp(x)   x = n ln2 + r, |r| <= ln2/2 (Cody-Waite, two constants);
 *            e^r = 1 + r P(r), P fitted (degree 5) for f32, Taylor
 *            (degree 12) for f64; 2^n is applied in two halves so that
 *            overflow gives inf and gradual underflow stays correct.  A
 *            vector of f32 whose results are all normal adds n to the
 *            exponent bits instead (m_exp_vector; sigmoid and erf
 *            use it too).
 *   expm1(x) the same reduction, 2^n (e^r - 1) + (2^n - 1): no
 *            cancellation near 0.  Only for arguments in [-40, 0].
 *   log(x)   x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1,
 *            s = f / (2 + f), log(1 + f) = f - s (f - R(s^2)) where
 *            2 atanh(s) = 2s + s R(s^2) (its series, to degree 11 or 23).
 *   tanh(x)  -expm1(-2|x|) / (2 + expm1(-2|x|)), with the sign of x.
 *   sigmoid  with e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e)
 *            below, so that neither overflows nor cancels.
 *   erf(x)   f32: x P(x^2) for |x| < 0.921875, else 1 - exp(Q(|x| - 2.5))
 *            where Q fits log(erfc) on [0.921875, 4] (least-squares
 *            Chebyshev fits, relative error 5e-10 and absolute 1.3e-8).
 *   pow(a,b) f32: exp(b log|a|) in f64, with the C99 special cases.
 *
 * Largest errors in f32 over all 2^32 inputs (vectorized, against libm
 * in double): exp 1.06 ulp, log 1.52, tanh 2.56, sigmoid 2.40, erf 2.76;
 * NaN, infinities, zeros and subnormals as libm.  In f64 (sampled): exp
 * 0.87, log 1.46, tanh 2.57, sigmoid 2.17.  tests/backends/
 * test_llvm_math.c checks 4 ulp on millions of points.  f64 erf and f64
 * pow have no expansion here (the caller calls the library): a
 * polynomial for erf accurate to 1e-16, and a double-double log for pow,
 * are left for later.
 *
 * Rounding to an integer never uses llvm.rint or fptosi of a float (both
 * may become library calls on old targets): adding 1.5 * 2^p rounds, the
 * integer comes from the bits, and the float of the integer from sitofp
 * (a reassociating fast-math pipeline could fold (y + c) - c into y).
 */
#include <config.h>

#include <math.h>

#include "backends/llvm_internal.h"

/* Where to build and the shapes involved. */
typedef struct mb {
	LLVMModuleRef m;
	LLVMBuilderRef b;
	LLVMContextRef c;
	unsigned width;		/* lanes, 0 for a scalar */
	bool dbl;		/* f64 (else f32) */
	LLVMTypeRef fs, is;	/* element types: float and same-size int */
	LLVMTypeRef ft, it;	/* the shaped types */
	LLVMTypeRef i32t;	/* i32 shaped */
} mb;

/* Fill "s" for values of type "t" built by "b" in "m". */
static void mb_init(mb *s, LLVMModuleRef m, LLVMBuilderRef b, LLVMTypeRef t)
{
	bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
	LLVMTypeRef el = vec ? LLVMGetElementType(t) : t;

	s->m = m;
	s->b = b;
	s->c = LLVMGetTypeContext(t);
	s->width = vec ? LLVMGetVectorSize(t) : 0;
	s->dbl = LLVMGetTypeKind(el) == LLVMDoubleTypeKind;
	s->fs = el;
	s->is = LLVMIntTypeInContext(s->c, s->dbl ? 64 : 32);
	s->ft = t;
	s->it = vec ? LLVMVectorType(s->is, s->width) : s->is;
	s->i32t = LLVMInt32TypeInContext(s->c);
	if (vec)
		s->i32t = LLVMVectorType(s->i32t, s->width);
}

/* Whether "t" is float or double, scalar or vector. */
static bool is_float_type(LLVMTypeRef t)
{
	LLVMTypeKind k;

	if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
		t = LLVMGetElementType(t);
	k = LLVMGetTypeKind(t);
	return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

/* The constant "el" broadcast to the shape of "s". */
static LLVMValueRef shape(const mb *s, LLVMValueRef el)
{
	LLVMValueRef *v;

	if (!s->width)
		return el;
	v = ts_new_array(LLVMValueRef, s->width);
	for (unsigned i = 0; i < s->width; i++)
		v[i] = el;
	return LLVMConstVector(v, s->width);
}

/* The float constant "v". */
static LLVMValueRef fc(const mb *s, double v)
{
	return shape(s, LLVMConstReal(s->fs, v));
}

/* The integer constant "v" of the same size as the floats. */
static LLVMValueRef ic(const mb *s, long long v)
{
	return shape(s, LLVMConstInt(s->is, (unsigned long long)v, 1));
}

/* The intrinsic "name" overloaded on the type of "args"[0]. */
static LLVMValueRef intrinsic(const mb *s, const char *name,
	LLVMValueRef *args, unsigned n)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMTypeRef t = LLVMTypeOf(args[0]);
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(s->m, id, &t, 1);
	LLVMTypeRef ty = LLVMIntrinsicGetType(s->c, id, &t, 1);

	return LLVMBuildCall2(s->b, ty, fn, args, n, "");
}

/* "a" * "b" + "c", fused where the target has an FMA. */
static LLVMValueRef fma3(const mb *s, LLVMValueRef a, LLVMValueRef b,
	LLVMValueRef c)
{
	LLVMValueRef args[3] = { a, b, c };

	return intrinsic(s, "llvm.fmuladd", args, 3);
}

/* |"x"|. */
static LLVMValueRef fabs1(const mb *s, LLVMValueRef x)
{
	return intrinsic(s, "llvm.fabs", &x, 1);
}

/* The magnitude of "x" with the sign of "y". */
static LLVMValueRef copysign2(const mb *s, LLVMValueRef x, LLVMValueRef y)
{
	LLVMValueRef args[2] = { x, y };

	return intrinsic(s, "llvm.copysign", args, 2);
}

/* "x" "op" "y" for floats ("op" an LLVMRealPredicate). */
static LLVMValueRef fcmp(const mb *s, LLVMRealPredicate op, LLVMValueRef x,
	LLVMValueRef y)
{
	return LLVMBuildFCmp(s->b, op, x, y, "");
}

/* "c" ? "a" : "b". */
static LLVMValueRef sel(const mb *s, LLVMValueRef c, LLVMValueRef a,
	LLVMValueRef b)
{
	return LLVMBuildSelect(s->b, c, a, b, "");
}

/* "x" clamped above by "hi" (a NaN stays a NaN). */
static LLVMValueRef clamp_hi(const mb *s, LLVMValueRef x, double hi)
{
	return sel(s, fcmp(s, LLVMRealOGT, x, fc(s, hi)), fc(s, hi), x);
}

/* "x" clamped below by "lo" (a NaN stays a NaN). */
static LLVMValueRef clamp_lo(const mb *s, LLVMValueRef x, double lo)
{
	return sel(s, fcmp(s, LLVMRealOLT, x, fc(s, lo)), fc(s, lo), x);
}

/* The polynomial with the "n" coefficients "k" (highest degree first) at
 * "x", by Horner's rule. */
static LLVMValueRef poly(const mb *s, LLVMValueRef x, const double *k, int n)
{
	LLVMValueRef p = fc(s, k[0]);

	for (int i = 1; i < n; i++)
		p = fma3(s, p, x, fc(s, k[i]));
	return p;
}

/* The bits of "x" as an integer. */
static LLVMValueRef bits(const mb *s, LLVMValueRef x)
{
	return LLVMBuildBitCast(s->b, x, s->it, "");
}

/* The float whose bits are "i". */
static LLVMValueRef from_bits(const mb *s, LLVMValueRef i)
{
	return LLVMBuildBitCast(s->b, i, s->ft, "");
}

/* The float 2^"n" for an integer "n" in the normal exponent range. */
static LLVMValueRef pow2i(const mb *s, LLVMValueRef n)
{
	LLVMValueRef e = LLVMBuildAdd(s->b, n, ic(s, s->dbl ? 1023 : 127), "");

	return from_bits(s, LLVMBuildShl(s->b, e, ic(s, s->dbl ? 52 : 23), ""));
}

/* The integer "i" (same size as the floats) as a float. */
static LLVMValueRef int_to_float(const mb *s, LLVMValueRef i)
{
	/* Through i32: the values are small, and i32 converts in one
	 * instruction on every x86 vector unit, i64 does not. */
	if (s->dbl)
		i = LLVMBuildTrunc(s->b, i, s->i32t, "");
	return LLVMBuildSIToFP(s->b, i, s->ft, "");
}

/* The reduction of exp: "*n" (integer) and "*nf" (float) nearest to
 * "x" / ln2, and "x" - n ln2 returned.  "x" is finite and small, or NaN. */
static LLVMValueRef exp_reduce(const mb *s, LLVMValueRef x, LLVMValueRef *n,
	LLVMValueRef *nf)
{
	double magic = s->dbl ? 0x1.8p52 : 0x1.8p23;
	double hi = s->dbl ? 0x1.62e42feep-1 : 0x1.63p-1;
	double lo = s->dbl ? 0x1.a39ef35793c76p-33 : -2.1219444005469058277e-4;
	LLVMValueRef k = fma3(s, x, fc(s, M_LOG2E), fc(s, magic)), r;

	*n = LLVMBuildSub(s->b, bits(s, k), bits(s, fc(s, magic)), "");
	*nf = int_to_float(s, *n);
	r = fma3(s, LLVMBuildFNeg(s->b, *nf, ""), fc(s, hi), x);
	return fma3(s, LLVMBuildFNeg(s->b, *nf, ""), fc(s, lo), r);
}

/* (e^"r" - 1) / "r" for |r| <= ln2 / 2.  f64: Taylor coefficients
 * 1/(k+1)!.  f32: a degree-5 polynomial fitted to it (weighted least
 * squares iterated toward the minimax, relative error of 1 + r P(r)
 * 2e-9, a thirtieth of an f32 ulp): one FMA fewer than the Taylor
 * polynomial of the same accuracy.  expm1 needs P itself accurate near
 * 0 ("taylor"): the seven Taylor terms. */
static LLVMValueRef exp_poly(const mb *s, LLVMValueRef r, bool taylor)
{
	static const double k[] = {
		1.0 / 6227020800, 1.0 / 479001600, 1.0 / 39916800,
		1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040,
		1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0,
	};
	static const double k32[] = {
		0x1.6ae73p-10, 0x1.126782p-7, 0x1.555822p-5, 0x1.55541ap-3,
		0x1.fffffcp-2, 1.0,
	};

	if (!s->dbl && !taylor)
		return poly(s, r, k32, 6);
	return s->dbl ? poly(s, r, k, 13) : poly(s, r, k + 6, 7);
}

static LLVMValueRef m_exp_vector(const mb *s, LLVMValueRef x);

/* e^"x" for every float "x", without a branch. */
static LLVMValueRef m_exp_any(const mb *s, LLVMValueRef x)
{
	LLVMValueRef n, nf, r, p, n1, n2;

	/* Past these bounds the result is inf or 0 anyway. */
	x = clamp_hi(s, clamp_lo(s, x, s->dbl ? -746.0 : -104.0),
		s->dbl ? 710.0 : 89.0);
	r = exp_reduce(s, x, &n, &nf);
	p = fma3(s, r, exp_poly(s, r, false), fc(s, 1.0));
	/* 2^n as 2^n1 2^n2: each is normal, p 2^n1 is exact, and the
	 * second product rounds once, to inf or to a subnormal. */
	n1 = LLVMBuildAShr(s->b, n, ic(s, 1), "");
	n2 = LLVMBuildSub(s->b, n, n1, "");
	p = LLVMBuildFMul(s->b, p, pow2i(s, n1), "");
	return LLVMBuildFMul(s->b, p, pow2i(s, n2), "");
}

/* e^"x" for every float "x": a vector of f32 through m_exp_vector. */
static LLVMValueRef m_exp(const mb *s, LLVMValueRef x)
{
	return s->width && !s->dbl ? m_exp_vector(s, x) : m_exp_any(s, x);
}

/* e^"x" - 1 for "x" in [-40, 0] or NaN. */
static LLVMValueRef m_expm1_neg(const mb *s, LLVMValueRef x)
{
	LLVMValueRef n, nf, r, q, sc;

	r = exp_reduce(s, x, &n, &nf);
	q = LLVMBuildFMul(s->b, r, exp_poly(s, r, true), "");
	sc = pow2i(s, n);
	/* 2^n q is exact, so one rounding whether or not this fuses. */
	return fma3(s, sc, q, LLVMBuildFSub(s->b, sc, fc(s, 1.0), ""));
}

/* tanh("x"). */
static LLVMValueRef m_tanh(const mb *s, LLVMValueRef x)
{
	/* Beyond the clamp tanh rounds to 1. */
	LLVMValueRef a = clamp_hi(s, fabs1(s, x), s->dbl ? 20.0 : 9.0);
	LLVMValueRef u = m_expm1_neg(s, LLVMBuildFMul(s->b, a, fc(s, -2.0),
		""));
	LLVMValueRef t = LLVMBuildFDiv(s->b, LLVMBuildFNeg(s->b, u, ""),
		LLVMBuildFAdd(s->b, fc(s, 2.0), u, ""), "");

	return copysign2(s, t, x);
}

/* 1 / (1 + e^-"x"). */
static LLVMValueRef m_sigmoid(const mb *s, LLVMValueRef x)
{
	LLVMValueRef e = m_exp(s, LLVMBuildFNeg(s->b, fabs1(s, x), ""));
	LLVMValueRef num = sel(s, fcmp(s, LLVMRealOLT, x, fc(s, 0.0)), e,
		fc(s, 1.0));

	return LLVMBuildFDiv(s->b, num, LLVMBuildFAdd(s->b, fc(s, 1.0), e,
		""), "");
}

/* log(1 + "f") - "f" for "f" in [sqrt(1/2) - 1, sqrt(2) - 1): returns
 * -s (f - R(s^2)) with "s" = f / (2 + f). */
static LLVMValueRef log1p_tail(const mb *s, LLVMValueRef f)
{
	static const double k[] = {
		2.0 / 23, 2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13,
		2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3,
	};
	int n = s->dbl ? 11 : 5;
	LLVMValueRef q = LLVMBuildFDiv(s->b, f, LLVMBuildFAdd(s->b,
		fc(s, 2.0), f, ""), "");
	LLVMValueRef z = LLVMBuildFMul(s->b, q, q, "");
	LLVMValueRef r = LLVMBuildFMul(s->b, z, poly(s, z, k + 11 - n, n), "");

	return LLVMBuildFMul(s->b, LLVMBuildFNeg(s->b, q, ""),
		LLVMBuildFSub(s->b, f, r, ""), "");
}

/* The natural logarithm of "x". */
static LLVMValueRef m_log(const mb *s, LLVMValueRef x)
{
	long long one = s->dbl ? 0x3ff0000000000000LL : 0x3f800000LL;
	long long rt = s->dbl ? 0x3fe6a09e667f3bcdLL : 0x3f3504f3LL;
	long long mant = s->dbl ? (1LL << 52) - 1 : (1LL << 23) - 1;
	double hi = s->dbl ? 0x1.62e42feep-1 : 0x1.63p-1;
	double lo = s->dbl ? 0x1.a39ef35793c76p-33 : -2.1219444005469058277e-4;
	LLVMValueRef sub, xs, ix, e, f, a, r;

	/* Subnormals: scale into the normal range first. */
	sub = fcmp(s, LLVMRealOLT, x, fc(s, s->dbl ? 0x1p-1022 : 0x1p-126));
	xs = sel(s, sub, LLVMBuildFMul(s->b, x, fc(s, s->dbl ? 0x1p54 : 0x1p23),
		""), x);
	/* Split into 2^e m with m in [sqrt(1/2), sqrt(2)). */
	ix = LLVMBuildAdd(s->b, bits(s, xs), ic(s, one - rt), "");
	e = LLVMBuildSub(s->b, LLVMBuildAShr(s->b, ix, ic(s, s->dbl ? 52 : 23),
		""), ic(s, s->dbl ? 1023 : 127), "");
	e = LLVMBuildAdd(s->b, e, sel(s, sub, ic(s, s->dbl ? -54 : -23),
		ic(s, 0)), "");
	f = from_bits(s, LLVMBuildAdd(s->b, LLVMBuildAnd(s->b, ix,
		ic(s, mant), ""), ic(s, rt), ""));
	f = LLVMBuildFSub(s->b, f, fc(s, 1.0), "");
	/* e ln2 + f + tail, with the hi part of ln2 exact in e hi. */
	e = int_to_float(s, e);
	a = fma3(s, e, fc(s, hi), f);
	r = fma3(s, e, fc(s, lo), log1p_tail(s, f));
	r = LLVMBuildFAdd(s->b, a, r, "");
	/* log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, log(NaN) = NaN. */
	r = sel(s, fcmp(s, LLVMRealOEQ, x, fc(s, 0.0)), fc(s, -INFINITY), r);
	r = sel(s, fcmp(s, LLVMRealOLT, x, fc(s, 0.0)), fc(s, NAN), r);
	return sel(s, fcmp(s, LLVMRealUGE, x, fc(s, INFINITY)), x, r);
}

/* erf("x") in f32. */
static LLVMValueRef m_erf32(const mb *s, LLVMValueRef x)
{
	/* erf(x) / x as a polynomial in x^2 on [0, 0.921875^2]. */
	static const double p[] = {
		8.387591045708916e-05, -0.0008147202092613495,
		0.005201466868966306, -0.02685959231070588,
		0.11283699425717714, -0.3761263402817225, 1.12837916667317,
	};
	/* log(erfc(t + 2.5)) on [0.921875 - 2.5, 4 - 2.5]. */
	static const double q[] = {
		-5.211840123028908e-08, 1.5966750652166922e-06,
		-1.3033874531025117e-05, 7.746556838322394e-05,
		-0.00042063146377310735, 0.002165071604463196,
		-0.010858197448661455, -0.9438936061379005,
		-5.352680737840177, -7.806815278992754,
	};
	LLVMValueRef a = fabs1(s, x), small, big, t;

	small = LLVMBuildFMul(s->b, x, poly(s, LLVMBuildFMul(s->b, x, x, ""),
		p, 7), "");
	/* Past 4, erf rounds to 1. */
	t = LLVMBuildFSub(s->b, clamp_hi(s, a, 4.0), fc(s, 2.5), "");
	big = m_exp(s, poly(s, t, q, 10));
	big = copysign2(s, LLVMBuildFSub(s->b, fc(s, 1.0), big, ""), x);
	return sel(s, fcmp(s, LLVMRealOLT, a, fc(s, 0.921875)), small, big);
}

/* e^"x" for a vector "x" of f32: where every lane's 2^n is normal (a
 * result in [2^-125, 2^127), every x in about [-86.6, 87.6]), the
 * reduction and the polynomial of m_exp_any and a scaling by adding n
 * to the exponent bits; a vector with any other lane (NaN, infinities,
 * results that overflow or are subnormal) takes m_exp_any.  The common
 * path spends 9 FMA-unit instructions a vector, m_exp_any 14 (its
 * clamps and two multiplies by powers of two); sigmoid and erf take it
 * too. */
static LLVMValueRef m_exp_vector(const mb *s, LLVMValueRef x)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(s->b);
	LLVMValueRef fn = LLVMGetBasicBlockParent(from), n, nf, r, p, fast,
		slow, ok, phi, in[2];
	LLVMBasicBlockRef rare = LLVMAppendBasicBlockInContext(s->c, fn,
		"exp.rare");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(s->c, fn,
		"exp.done");
	LLVMBasicBlockRef blocks[2];

	r = exp_reduce(s, x, &n, &nf);
	p = fma3(s, r, exp_poly(s, r, false), fc(s, 1.0));
	fast = from_bits(s, LLVMBuildAdd(s->b, bits(s, p),
		LLVMBuildShl(s->b, n, ic(s, 23), ""), ""));
	/* n + 125 in [0, 251] as an unsigned: NaN and infinities give
	 * an n far outside (their k has an exponent far above magic's). */
	ok = LLVMBuildICmp(s->b, LLVMIntULE, LLVMBuildAdd(s->b, n,
		ic(s, 125), ""), ic(s, 251), "");
	ok = intrinsic(s, "llvm.vector.reduce.and", &ok, 1);
	/* Lanes masked off may hold poison (a masked load's), and a
	 * branch on poison is undefined: LLVM deleted the code after it.
	 * Either way is right for the lanes that count. */
	ok = LLVMBuildFreeze(s->b, ok, "");
	LLVMBuildCondBr(s->b, ok, done, rare);
	LLVMPositionBuilderAtEnd(s->b, rare);
	slow = m_exp_any(s, x);
	blocks[1] = LLVMGetInsertBlock(s->b);
	LLVMBuildBr(s->b, done);
	LLVMPositionBuilderAtEnd(s->b, done);
	phi = LLVMBuildPhi(s->b, s->ft, "");
	in[0] = fast;
	in[1] = slow;
	blocks[0] = from;
	LLVMAddIncoming(phi, in, blocks, 2);
	return phi;
}

/* The unary "op" of "v" as inline IR built by "b" in "m", or NULL when
 * "op" has no expansion for the type of "v". */
LLVMValueRef ts_llvm_math_unary(LLVMModuleRef m, LLVMBuilderRef b, ts_op op,
	LLVMValueRef v)
{
	mb s;

	if (!is_float_type(LLVMTypeOf(v)))
		return NULL;
	mb_init(&s, m, b, LLVMTypeOf(v));
	switch (op) {
	case TS_OP_EXP: return m_exp(&s, v);
	case TS_OP_LOG: return m_log(&s, v);
	case TS_OP_TANH: return m_tanh(&s, v);
	case TS_OP_SIGMOID: return m_sigmoid(&s, v);
	case TS_OP_ERF: return s.dbl ? NULL : m_erf32(&s, v);
	default: return NULL;
	}
}

/* Whether the f64 "y" is an integer, and in "*odd" whether it is odd. */
static LLVMValueRef is_integer(const mb *d, LLVMValueRef y, LLVMValueRef *odd)
{
	LLVMValueRef h = LLVMBuildFMul(d->b, y, fc(d, 0.5), "");
	LLVMValueRef in = fcmp(d, LLVMRealOEQ, intrinsic(d, "llvm.floor", &y, 1),
		y);
	LLVMValueRef half = fcmp(d, LLVMRealOEQ,
		intrinsic(d, "llvm.floor", &h, 1), h);

	*odd = LLVMBuildAnd(d->b, in, LLVMBuildNot(d->b, half, ""), "");
	return in;
}

/* pow("a", "y") for f32 "a" and "y", through f64 exp and log. */
static LLVMValueRef m_pow32(const mb *s, LLVMValueRef a, LLVMValueRef y)
{
	LLVMTypeRef dt = LLVMDoubleTypeInContext(s->c);
	LLVMValueRef ad, yd, r, in, odd, neg, one, c;
	mb d;

	if (s->width)
		dt = LLVMVectorType(dt, s->width);
	mb_init(&d, s->m, s->b, dt);
	ad = LLVMBuildFPExt(s->b, a, dt, "");
	yd = LLVMBuildFPExt(s->b, y, dt, "");
	r = m_exp(&d, LLVMBuildFMul(s->b, yd, m_log(&d, fabs1(&d, ad)), ""));
	in = is_integer(&d, yd, &odd);
	/* A negative base (-0 included) with an odd exponent: negative. */
	neg = LLVMBuildICmp(s->b, LLVMIntSLT, bits(s, a), ic(s, 0), "");
	r = sel(&d, LLVMBuildAnd(s->b, neg, odd, ""),
		LLVMBuildFNeg(s->b, r, ""), r);
	/* A finite negative base with a non-integer exponent: NaN. */
	c = LLVMBuildAnd(s->b, fcmp(s, LLVMRealOLT, a, fc(s, 0.0)),
		fcmp(s, LLVMRealONE, a, fc(s, -INFINITY)), "");
	c = LLVMBuildAnd(s->b, c, LLVMBuildNot(s->b, in, ""), "");
	r = sel(&d, c, fc(&d, NAN), r);
	/* pow(1, y) = pow(x, 0) = pow(-1, +-inf) = 1, even with a NaN. */
	one = LLVMBuildAnd(s->b, fcmp(s, LLVMRealOEQ, fabs1(s, a), fc(s, 1.0)),
		fcmp(s, LLVMRealOEQ, fabs1(s, y), fc(s, INFINITY)), "");
	one = LLVMBuildOr(s->b, one, fcmp(s, LLVMRealOEQ, a, fc(s, 1.0)), "");
	one = LLVMBuildOr(s->b, one, fcmp(s, LLVMRealOEQ, y, fc(s, 0.0)), "");
	r = sel(&d, one, fc(&d, 1.0), r);
	return LLVMBuildFPTrunc(s->b, r, s->ft, "");
}

/* pow("a", "y") as inline IR built by "b" in "m", or NULL unless both
 * are f32 (scalars or vectors). */
LLVMValueRef ts_llvm_math_pow(LLVMModuleRef m, LLVMBuilderRef b,
	LLVMValueRef a, LLVMValueRef y)
{
	mb s;

	if (!is_float_type(LLVMTypeOf(a)) || LLVMTypeOf(a) != LLVMTypeOf(y))
		return NULL;
	mb_init(&s, m, b, LLVMTypeOf(a));
	return s.dbl ? NULL : m_pow32(&s, a, y);
}
