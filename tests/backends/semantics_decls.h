/* Declarations whose compiled results must equal the interpreter's
 * exactly (doc/grammar.md, "Arithmetic"): the interpreter, the LLVM
 * backend and the CUDA C emitter share one semantics of rounding, casts,
 * integer wrap-around, short-circuit guards and reductions.  Shared by
 * tests/backends/test_semantics.c (LLVM) and test_cuda_emulate.c. */
#ifndef TESSEL_TESTS_SEMANTICS_DECLS_H
#define TESSEL_TESTS_SEMANTICS_DECLS_H

/* One declaration; "exact" when every output must be bit-equal (float
 * sums that a schedule may reorder are only close). */
struct ts_test_sem_decl {
	const char *name, *src;
	bool exact;
};

static const struct ts_test_sem_decl ts_test_sem_decls[] = {
	/* int8 matmul with i32 accumulation, requantised with f32 math. */
	{ "requant", "input A: i8[64, 64]\ninput B: i8[64, 64]\n"
	  "Acc[i: 64, j: 64] = sum(k: 64) i32(A[i, k]) * i32(B[k, j])\n"
	  "output Q[i: 64, j: 64]: i8 = i8(clamp(round(f32(Acc[i, j]) * "
	  "0.0125), -128.0, 127.0))\n", true },
	{ "requant1", "input A: i8[64, 64]\ninput B: i8[64, 64]\n"
	  "output Q[i: 64, j: 64]: i8 = i8(clamp(round(f32(sum(k: 64) "
	  "i32(A[i, k]) * i32(B[k, j])) * 0.0125), -128.0, 127.0))\n", true },
	/* a * b + c outside a sum's update rounds twice, as written: an
	 * FMA would change the last bits of Z and the integers of R. */
	{ "no_fma", "input X: f32[256]\ninput Y: f32[256]\n"
	  "input A: i8[64, 64]\ninput B: i8[64, 64]\n"
	  "output Z[i: 256] = X[i] * Y[i] + X[i]\n"
	  "output W[i: 256] = X[i] * 0.1 - Y[i] * 0.3\n"
	  "output R[i: 64, j: 64]: i8 = i8(clamp(round(f32(sum(k: 64) "
	  "i32(A[i, k]) * i32(B[k, j])) * 0.0125 + 0.37), -128.0, 127.0))\n",
	  true },
	/* A zero divisor gives 0; // -1 wraps the least value. */
	{ "div_zero", "input A: i32[64]\ninput B: i8[64]\n"
	  "output Q[i: 64] = A[i] // (i32(i) % 3)\n"
	  "output R[i: 64] = A[i] % (i32(i) % 3 - 1)\n"
	  "output S[i: 64]: i8 = B[i] // i8(i % 2 - 1)\n"
	  "output T[i: 64]: i8 = (B[i] - B[i] - 128) // i8(-1)\n", true },
	/* round: half to even, in f16, f32 and f64. */
	{ "round", "output R[i: 16]: i32 = i32(round(f32(i) - 7.5))\n"
	  "output S[i: 16]: i32 = i32(round(f64(i) * 0.5 - 3.5))\n"
	  "output H[i: 16]: i32 = i32(round(f16(i) - 7.5))\n", true },
	/* Float to integer casts saturate; NaN gives 0; bool is != 0. */
	{ "saturate", "output A[i: 16]: i8 = i8((f32(i) - 7.5) * 40.0)\n"
	  "output B[i: 16]: u8 = u8((f32(i) - 7.5) * 40.0)\n"
	  "output C[i: 16]: i32 = i32((f32(i) - 7.0) * 1e9)\n"
	  "output D[i: 16]: i64 = i64((f64(i) - 8.0) * 3e18)\n"
	  "output E[i: 16]: i32 = i32(sqrt(f32(i) - 8.0))\n"
	  "output F[i: 16]: i64 = i64(log(f32(i) - 8.0))\n"
	  "output G[i: 16]: i8 = i8(bool(sqrt(f32(i) - 8.0)))\n"
	  "output H[i: 16]: u8 = u8((f16(i) - 3.0) * 30.0)\n", true },
	/* && and || guard their right operand like a select arm. */
	{ "guard_and", "input X: f32[5]\noutput Y[h: 7] = select(h - 1 >= 0 "
	  "&& h - 1 < 5 && X[h - 1] > 0.0, 1.0, 0.0)\n", true },
	{ "guard_or", "input X: f32[5]\noutput Y[h: 7] = select(h < 1 || "
	  "h > 5 || X[h - 1] > 0.0, 1.0, 0.0)\n", true },
	/* Integer arithmetic wraps around in its dtype. */
	{ "wrap", "input A: i8[40]\ninput B: u8[40]\ninput C: i32[40]\n"
	  "input D: i64[40]\n"
	  "output P[i: 40] = i32(A[i] * 20 + A[i] * 7)\n"
	  "output Q[i: 40] = i32(B[i] - 9)\n"
	  "output R[i: 40] = i64(C[i] * 1000000000 + 2147483647)\n"
	  "output S[i: 40] = D[i] * 4611686018427387904 + "
	  "9223372036854775807\n"
	  "output T[i: 40] = i32(-(A[i] * 16))\n", true },
	/* f16 and f32 are computed in f32, f16 stored rounded. */
	{ "f16", "input H: f16[64]\ninput X: f32[64]\n"
	  "output Y[i: 64]: f16 = (H[i] + 0.3) / (H[i] - 1.5) * 7.0\n"
	  "output Z[i: 64] = (X[i] + 0.1) / (X[i] - 1.7) * 3.3\n"
	  "output W[i: 64] = f16(X[i]) * 3.0\n"
	  "output V[i: 64] = f16(f64(X[i]) * 0.001)\n", true },
	/* min over an i64 axis, and argmax written with min and select. */
	{ "min_i64", "output Y[i: 2] = min(k: 2) k\n"
	  "output Z[i: 3] = max(k: 4) -k - i\n", true },
	{ "argmax", "input X: f32[8, 20]\nM[i: 8] = max(k: 20) X[i, k]\n"
	  "output A[i: 8] = min(k: 20) select(X[i, k] == M[i], k, 20)\n",
	  true },
	/* ceil, sign (of zeros too), isnan and isinf are exact. */
	{ "exact_functions", "input X: f32[64]\ninput D: f64[64]\n"
	  "input H: f16[64]\ninput I: i8[64]\ninput U: u8[64]\n"
	  "output C[i: 64] = ceil(X[i] * 3.0) + sign(round(X[i] * 2.0))\n"
	  "output E[i: 64] = ceil(D[i] * 3.0) * sign(round(D[i]))\n"
	  "output F[i: 64]: f16 = ceil(H[i] * 3.0) + sign(H[i])\n"
	  "output S[i: 64] = i32(sign(I[i])) * 10 + i32(sign(U[i] - 7))\n"
	  "output B[i: 64] = isnan(sqrt(X[i])) || isinf(D[i] * 1e308 * 10.0)"
	  " || isnan(log(H[i]))\n", true },
};

#define TS_TEST_NSEM_DECLS \
	((int)(sizeof(ts_test_sem_decls) / sizeof(ts_test_sem_decls[0])))

/* The dtypes a reduction can take, and the reducers. */
static const char *const ts_test_sem_dtypes[] = {
	"i8", "u8", "i32", "i64", "f16", "f32", "f64",
};
static const char *const ts_test_sem_reducers[] = {
	"sum", "max", "min", "prod",
};

/* The declaration of reducer "r" over an input of dtype "t" (indices
 * into the tables above), in "buf" of "n" bytes. */
static inline const char *ts_test_sem_reduce_decl(char *buf, size_t n,
	int t, int r)
{
	snprintf(buf, n, "input X: %s[6, 9]\n"
		"output Y[i: 6] = %s(k: 9) X[i, k]\n"
		"output Z[i: 6] = %s(k: 3) %s(X[i, k] * X[i, k + 3])\n",
		ts_test_sem_dtypes[t], ts_test_sem_reducers[r],
		ts_test_sem_reducers[r], ts_test_sem_dtypes[t]);
	return buf;
}

#endif
