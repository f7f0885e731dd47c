/* Declarations whose sum of products the tensor cores take, shared by
 * the emission and the emulation tests. */
#ifndef TESSEL_TESTS_TC_DECLS_H
#define TESSEL_TESTS_TC_DECLS_H

/* Declarations whose reduction the tensor cores take: an f16 matmul with
 * f32 accumulation and a fused f16 epilogue, a batched matmul, both
 * operands stored transposed (column-major fragments), an f16
 * accumulator, a 1x1 convolution and a batched matmul with a shared
 * right operand. */
static const char *const ts_test_tc_decls[] = {
	"input A: f16[64, 48]\ninput B: f16[48, 32]\n"
	"C[i: 64, j: 32] = sum(k: 48) f32(A[i, k]) * f32(B[k, j])\n"
	"output D[i: 64, j: 32]: f16 = max(C[i, j], 0.0)\n",
	"input A: f16[3, 32, 32]\ninput B: f16[3, 32, 48]\n"
	"output C[b: 3, i: 32, j: 48] = sum(k: 32) f32(A[b, i, k]) * "
	"f32(B[b, k, j])\n",
	"input A: f16[32, 48]\ninput B: f16[64, 32]\n"
	"output C[i: 48, j: 64] = sum(k: 32) f32(A[k, i]) * f32(B[j, k])\n",
	"input A: f16[32, 64]\ninput B: f16[64, 16]\n"
	"output C[i: 32, j: 16]: f16 = sum(k: 64) A[i, k] * B[k, j]\n",
	"input W: f16[48, 32]\ninput X: f16[2, 32, 3, 16]\n"
	"output C[n: 2, co: 48, h: 3, w: 16] = sum(ci: 32) f32(W[co, ci]) * "
	"f32(X[n, ci, h, w])\n",
	"input A: f16[2, 32, 32]\ninput B: f16[32, 48]\n"
	"output C[b: 2, i: 32, j: 48] = sum(k: 32) f32(A[b, i, k]) * "
	"f32(B[k, j])\n",
};

#define TS_TEST_NTC_DECLS \
	((int)(sizeof(ts_test_tc_decls) / sizeof(ts_test_tc_decls[0])))

#endif
