/* NVRTC compilation of handwritten CUDA C (no GPU needed), and the driver
 * API on a device when there is one: results checked against ts_eval. */
#include <config.h>

#include <stdio.h>

#include "tests/common.h"

#include <tessel/cuda.h>

/* A 32x32-tiled f32 matmul: shared-memory tiles filled with float4 loads,
 * each thread computing four neighbouring outputs of one row.  Needs M, N
 * and K multiples of 32; blocks of 8 x 32 threads. */
static const char matmul_src[] =
	"#define TILE 32\n"
	"extern \"C\" __global__ void matmul_tiled(const float *__restrict__ A,\n"
	"\tconst float *__restrict__ B, float *__restrict__ C,\n"
	"\tint M, int N, int K)\n"
	"{\n"
	"\t__shared__ float As[TILE][TILE];\n"
	"\t__shared__ float Bs[TILE][TILE + 4];\n"
	"\tint tx = threadIdx.x, ty = threadIdx.y;\n"
	"\tint row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + 4 * tx;\n"
	"\tfloat acc[4] = { 0.f, 0.f, 0.f, 0.f };\n"
	"\tfor (int k0 = 0; k0 < K; k0 += TILE) {\n"
	"\t\tfloat4 a = *(const float4 *)&A[row * K + k0 + 4 * tx];\n"
	"\t\tfloat4 b = *(const float4 *)&B[(k0 + ty) * N + col];\n"
	"\t\tAs[ty][4 * tx] = a.x; As[ty][4 * tx + 1] = a.y;\n"
	"\t\tAs[ty][4 * tx + 2] = a.z; As[ty][4 * tx + 3] = a.w;\n"
	"\t\tBs[ty][4 * tx] = b.x; Bs[ty][4 * tx + 1] = b.y;\n"
	"\t\tBs[ty][4 * tx + 2] = b.z; Bs[ty][4 * tx + 3] = b.w;\n"
	"\t\t__syncthreads();\n"
	"#pragma unroll 8\n"
	"\t\tfor (int k = 0; k < TILE; k++) {\n"
	"\t\t\tfloat av = As[ty][k];\n"
	"\t\t\tfor (int j = 0; j < 4; j++)\n"
	"\t\t\t\tacc[j] += av * Bs[k][4 * tx + j];\n"
	"\t\t}\n"
	"\t\t__syncthreads();\n"
	"\t}\n"
	"\t*(float4 *)&C[row * N + col] =\n"
	"\t\tmake_float4(acc[0], acc[1], acc[2], acc[3]);\n"
	"}\n";

/* An f16 matmul with f32 products and accumulation through
 * <cuda_fp16.h>, reading two halves of A at a time as a __half2; K must be
 * even. */
static const char matmul_f16_src[] =
	"#include <cuda_fp16.h>\n"
	"extern \"C\" __global__ void matmul_f16(const __half *A,\n"
	"\tconst __half *B, __half *C, int M, int N, int K)\n"
	"{\n"
	"\tint i = blockIdx.y * blockDim.y + threadIdx.y;\n"
	"\tint j = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tfloat acc = 0.f;\n"
	"\tif (i >= M || j >= N)\n"
	"\t\treturn;\n"
	"\tfor (int k = 0; k < K; k += 2) {\n"
	"\t\t__half2 a = *(const __half2 *)&A[i * K + k];\n"
	"\t\tfloat2 af = __half22float2(a);\n"
	"\t\tacc += af.x * __half2float(B[k * N + j]);\n"
	"\t\tacc += af.y * __half2float(B[(k + 1) * N + j]);\n"
	"\t}\n"
	"\tC[i * N + j] = __float2half_rn(acc);\n"
	"}\n";

/* A kernel with an error on line 4. */
static const char bad_src[] =
	"extern \"C\" __global__ void bad(float *x)\n"
	"{\n"
	"\tint i = threadIdx.x;\n"
	"\tx[i] = undefined_name * 2.0f;\n"
	"}\n";

/* sm_70 is gone from NVRTC 13; sm_75 keeps a pre-Ampere target there. */
static const char *const archs[] = { "sm_70", "sm_75", "sm_80", "sm_90" };

#ifdef TS_HAVE_CUDA

/* Compile "src" to PTX for "arch"; return false (after a printed notice)
 * when this NVRTC cannot target "arch" at all. */
static bool compile_ptx(ts_ctx *ctx, const char *src, const char *name,
	const char *arch, char **ptx)
{
	size_t size = 0;

	if (!ts_nvrtc_supports(ctx, arch)) {
		print_message("skipping %s for %s: %s\n", name, arch,
			ts_ctx_error(ctx));
		assert_int_equal(ts_nvrtc_compile(ctx, src, name, arch, false,
			ptx, &size), TS_ERROR);
		assert_error_contains(ctx, "cannot compile for");
		return false;
	}
	if (ts_nvrtc_compile(ctx, src, name, arch, false, ptx, &size) < 0)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_int_equal(size, strlen(*ptx));
	return true;
}

/* The tiled matmul compiles to PTX for every architecture, with shared
 * memory and vector loads. */
static void test_nvrtc_compile__matmul_ptx(void **state)
{
	ts_ctx *ctx = *state;

	int compiled = 0;

	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		char *ptx = NULL;
		char target[32];
		if (!compile_ptx(ctx, matmul_src, "matmul.cu", archs[i], &ptx))
			continue;
		compiled++;
		snprintf(target, sizeof(target), ".target %s", archs[i]);
		assert_non_null(strstr(ptx, target));
		assert_non_null(strstr(ptx, ".entry matmul_tiled"));
		assert_non_null(strstr(ptx, ".shared"));
		assert_non_null(strstr(ptx, ".v4.f32"));
	}
	assert_true(compiled >= 2);
}

/* The f16 matmul compiles with <cuda_fp16.h> from the toolkit. */
static void test_nvrtc_compile__f16_ptx(void **state)
{
	ts_ctx *ctx = *state;

	int compiled = 0;

	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		char *ptx = NULL;
		if (!compile_ptx(ctx, matmul_f16_src, "matmul_f16.cu", archs[i],
				 &ptx))
			continue;
		compiled++;
		assert_non_null(strstr(ptx, ".entry matmul_f16"));
		assert_non_null(strstr(ptx, ".f16"));
	}
	assert_true(compiled >= 2);
}

/* A cubin for sm_90 is an ELF image. */
static void test_nvrtc_compile__cubin_sm90(void **state)
{
	ts_ctx *ctx = *state;
	const char *srcs[] = { matmul_src, matmul_f16_src };

	for (int i = 0; i < 2; i++) {
		char *cubin = NULL;
		size_t size = 0;
		if (ts_nvrtc_compile(ctx, srcs[i], "k.cu", "sm_90", true,
				     &cubin, &size) < 0)
			fail_msg("%s", ts_ctx_error(ctx));
		assert_true(size > 64);
		assert_memory_equal(cubin, "\177ELF", 4);
	}
}

/* A compile error gives NVRTC's log with the file and line. */
static void test_nvrtc_compile__error_has_log_and_line(void **state)
{
	ts_ctx *ctx = *state;
	char *out = NULL;
	size_t size = 0;

	assert_int_equal(ts_nvrtc_compile(ctx, bad_src, "bad.cu", "sm_80",
		false, &out, &size), TS_ERROR);
	assert_error_contains(ctx, "NVRTC could not compile 'bad.cu' for sm_80");
	assert_error_contains(ctx, "bad.cu(4)");
	assert_error_contains(ctx, "undefined_name");
	assert_int_equal(ts_nvrtc_compile(ctx, matmul_src, "m.cu", "ampere",
		false, &out, &size), TS_ERROR);
	assert_error_contains(ctx, "'ampere' is not a CUDA architecture");
	assert_int_equal(ts_nvrtc_compile(ctx, NULL, "m.cu", "sm_80",
		false, &out, &size), TS_ERROR);
	assert_error_contains(ctx, "'m.cu' has no source");
}

/* Without a driver the device calls fail with a message, not a crash. */
static void test_cuda_driver__absent_or_present(void **state)
{
	ts_ctx *ctx = *state;
	int n = ts_cuda_device_count(ctx);
	ts_cuda_ptr p = 0;

	if (n > 0) {
		assert_true(ts_cuda_available(ctx));
		return;
	}
	assert_false(ts_cuda_available(ctx));
	assert_non_null(ts_ctx_error(ctx));
	assert_int_equal(ts_cuda_alloc(ctx, 16, &p), TS_ERROR);
	assert_non_null(ts_ctx_error(ctx));
}

/* The device's description passes the checks of a target. */
static void test_cuda_device__target(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *t;

	TS_NEED_CUDA_DEVICE(ctx);
	t = ts_cuda_device_target(ctx, 0);
	if (!t)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_int_equal(t->kind, TS_TARGET_GPU);
	assert_true(t->gpu.sm_count > 0);
	assert_int_equal(t->gpu.warp_size, 32);
	assert_true(ts_target_equal(t, ts_target_from_json(ctx,
		ts_target_to_json(t), "device")));
	assert_null(ts_cuda_device_target(ctx, 1000));
	assert_error_contains(ctx, "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE");
}

/* Declare C = A x B of "t" with the DSL, for ts_eval. */
static ts_dag *matmul_dag(ts_ctx *ctx, ts_dtype t, int64_t m, int64_t n,
	int64_t k)
{
	int64_t sa[2] = { m, k }, sb[2] = { k, n };
	ts_tensor *a = ts_placeholder(ctx, "A", t, 2, sa);
	ts_tensor *b = ts_placeholder(ctx, "B", t, 2, sb);
	ts_axis *i = ts_axis_new(ctx, "i", m), *j = ts_axis_new(ctx, "j", n);
	ts_axis *r = ts_reduce_axis(ctx, "k", k);
	ts_axis *sp[2] = { i, j };
	ts_expr *body = ts_sum(ctx, 1, &r, ts_mul(ctx,
		ts_at(ctx, a, 2, ts_var(ctx, i), ts_var(ctx, r)),
		ts_at(ctx, b, 2, ts_var(ctx, r), ts_var(ctx, j))));
	ts_tensor *c = ts_compute(ctx, "C", 2, sp, body);
	ts_tensor *ins[2] = { a, b };

	return ts_dag_new(ctx, 2, ins, 1, &c);
}

/* Copy "in" to the device, run "k" on "grid" x "block", and return the
 * output of "m" x "n" elements of "t". */
static ts_array *run_matmul(ts_ctx *ctx, ts_cuda_kernel *k, ts_array **in,
	ts_dtype t, int m, int n, int kk, const unsigned grid[3],
	const unsigned block[3])
{
	int64_t shape[2] = { m, n };
	ts_array *out = ts_array_alloc(ctx, t, 2, shape);
	size_t es = ts_dtype_size(t);
	ts_cuda_ptr d[3];
	void *args[6] = { &d[0], &d[1], &d[2], &m, &n, &kk };
	double ms = 0;

	assert_int_equal(ts_cuda_alloc(ctx, in[0]->size * es, &d[0]), TS_OK);
	assert_int_equal(ts_cuda_alloc(ctx, in[1]->size * es, &d[1]), TS_OK);
	assert_int_equal(ts_cuda_alloc(ctx, out->size * es, &d[2]), TS_OK);
	assert_int_equal(ts_cuda_copy_in(ctx, d[0], in[0]->data,
		in[0]->size * es), TS_OK);
	assert_int_equal(ts_cuda_copy_in(ctx, d[1], in[1]->data,
		in[1]->size * es), TS_OK);
	if (ts_cuda_launch(ctx, k, grid, block, 0, args) < 0 ||
	    ts_cuda_synchronize(ctx) < 0 ||
	    ts_cuda_time(ctx, k, grid, block, 0, args, 3, &ms) < 0)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_true(ms > 0);
	assert_int_equal(ts_cuda_copy_out(ctx, out->data, d[2],
		out->size * es), TS_OK);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ts_cuda_free(ctx, d[i]), TS_OK);
	return out;
}

/* Compile "src" for the device as a cubin and return its kernel "name". */
static ts_cuda_kernel *device_kernel(ts_ctx *ctx, const char *src,
	const char *name, ts_cuda_module **m)
{
	ts_target *t = ts_cuda_device_target(ctx, 0);
	char *image = NULL;
	size_t size = 0;
	ts_cuda_kernel *k;

	assert_non_null(t);
	if (ts_nvrtc_compile(ctx, src, name, t->gpu.arch, true, &image,
			     &size) < 0 ||
	    !(*m = ts_cuda_module_load(ctx, image, size)) ||
	    !(k = ts_cuda_module_kernel(ctx, *m, name)))
		fail_msg("%s", ts_ctx_error(ctx));
	return k;
}

/* Run the matmul of "src" for "t" on the device, with blocks of "block"
 * threads each computing "cols" neighbouring outputs of a row, and compare
 * with ts_eval. */
static void check_device_matmul(ts_ctx *ctx, const char *src,
	const char *name, ts_dtype t, const unsigned block[3], unsigned cols)
{
	const int m = 128, n = 96, k = 64;
	ts_dag *dag = matmul_dag(ctx, t, m, n, k);
	ts_array **in, *want, *got;
	ts_cuda_module *mod = NULL;
	ts_cuda_kernel *kern;
	unsigned grid[3] = { n / (block[0] * cols), m / block[1], 1 };
	double err = 0;

	assert_non_null(dag);
	in = ts_dag_random_inputs(ctx, dag, 7);
	assert_non_null(in);
	assert_int_equal(ts_eval(ctx, dag, in, &want), TS_OK);
	kern = device_kernel(ctx, src, name, &mod);
	got = run_matmul(ctx, kern, in, t, m, n, k, grid, block);
	if (!ts_array_close(got, want, &err))
		fail_msg("%s differs from ts_eval by %g", name, err);
	ts_cuda_module_unload(ctx, mod);
}

static void test_cuda_device__matmul_f32_matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	const unsigned block[3] = { 8, 32, 1 };

	TS_NEED_CUDA_DEVICE(ctx);
	/* One block covers 32 x 32 outputs: 8 threads x 4 columns. */
	check_device_matmul(ctx, matmul_src, "matmul_tiled", TS_F32, block, 4);
}

static void test_cuda_device__matmul_f16_matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	const unsigned block[3] = { 32, 8, 1 };

	TS_NEED_CUDA_DEVICE(ctx);
	check_device_matmul(ctx, matmul_f16_src, "matmul_f16", TS_F16, block,
		1);
}

#else

/* A build without CUDA says so. */
static void test_nvrtc_compile__built_without_cuda(void **state)
{
	ts_ctx *ctx = *state;
	char *out = NULL;
	size_t size = 0;

	assert_int_equal(ts_nvrtc_compile(ctx, matmul_src, "m.cu", "sm_90",
		false, &out, &size), TS_ERROR);
	assert_error_contains(ctx, "built without CUDA");
	assert_false(ts_cuda_available(ctx));
	assert_error_contains(ctx, "built without CUDA");
	(void)matmul_f16_src;
	(void)bad_src;
	(void)archs;
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef TS_HAVE_CUDA
		TS_TEST(test_nvrtc_compile__matmul_ptx),
		TS_TEST(test_nvrtc_compile__f16_ptx),
		TS_TEST(test_nvrtc_compile__cubin_sm90),
		TS_TEST(test_nvrtc_compile__error_has_log_and_line),
		TS_TEST(test_cuda_driver__absent_or_present),
		TS_TEST(test_cuda_device__target),
		TS_TEST(test_cuda_device__matmul_f32_matches_eval),
		TS_TEST(test_cuda_device__matmul_f16_matches_eval),
#else
		TS_TEST(test_nvrtc_compile__built_without_cuda),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
