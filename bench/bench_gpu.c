/* Tessel's CUDA kernels on the device against cuBLAS, cuDNN and the
 * device's copy bandwidth, in one run.
 *
 *   bench_gpu [--candidates N] [--runs N] [--case NAME] [--dry GPU]
 *
 * Each case is a declaration; Tessel's static GPU schedule ("static") and
 * the fastest of the model's best N configurations measured on the device
 * ("measured", the static one among them) are compiled with NVRTC, run,
 * checked (against the library's result where one computes the same
 * thing, else against the reference interpreter) and timed with CUDA
 * events.  The libraries (cuBLAS, cuDNN) are loaded with dlopen; a case
 * whose library is missing is checked against the interpreter and timed
 * without a ratio.  Matmuls report TFLOP/s and the fraction of the
 * device's peak, memory-bound operators the bandwidth their inputs and
 * outputs need against the measured device-to-device copy bandwidth.
 * Exit status 2 without a device. */
#include <config.h>

#if !__has_include(<cublas_v2.h>)
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "bench_gpu: built without cublas_v2.h\n");
	return 2;
}
#else
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <gc.h>
#include <cublas_v2.h>
#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define HAVE_CUDNN_H 1
#endif

#include <tessel/tessel.h>

#include "bench/bench.h"

/* The driver calls the benchmark makes itself (timing the libraries and
 * the copy), from the library the runtime uses. */
static struct {
	CUresult (*event_create)(CUevent *, unsigned);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_synchronize)(CUevent);
	CUresult (*event_elapsed)(float *, CUevent, CUevent);
	CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*synchronize)(void);
} drv;

static struct {
	cublasHandle_t h;
	__typeof__(&cublasCreate_v2) create;
	__typeof__(&cublasSgemm_v2) sgemm;
	__typeof__(&cublasSgemmStridedBatched) sgemm_batched;
	__typeof__(&cublasGemmEx) gemm_ex;
} blas;

#ifdef HAVE_CUDNN_H
static struct {
	cudnnHandle_t h;
	__typeof__(&cudnnCreate) create;
	__typeof__(&cudnnCreateTensorDescriptor) tensor_desc;
	__typeof__(&cudnnSetTensor4dDescriptor) set_tensor;
	__typeof__(&cudnnCreateFilterDescriptor) filter_desc;
	__typeof__(&cudnnSetFilter4dDescriptor) set_filter;
	__typeof__(&cudnnCreateConvolutionDescriptor) conv_desc;
	__typeof__(&cudnnSetConvolution2dDescriptor) set_conv;
	__typeof__(&cudnnFindConvolutionForwardAlgorithm) find;
	__typeof__(&cudnnGetConvolutionForwardWorkspaceSize) workspace;
	__typeof__(&cudnnConvolutionForward) forward;
} dnn;
#endif

static void *sym(void *lib, const char *name)
{
	void *p = lib ? dlsym(lib, name) : NULL;
	if (lib && !p)
		fprintf(stderr, "bench_gpu: %s lacks %s\n", "library", name);
	return p;
}

/* Open the first of "names" that loads. */
static void *open_first(const char *const *names)
{
	for (; *names; names++) {
		void *h = dlopen(*names, RTLD_NOW | RTLD_GLOBAL);
		if (h)
			return h;
	}
	return NULL;
}

static bool load_driver(void)
{
	void *l = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	*(void **)&drv.event_create = sym(l, "cuEventCreate");
	*(void **)&drv.event_record = sym(l, "cuEventRecord");
	*(void **)&drv.event_synchronize = sym(l, "cuEventSynchronize");
	*(void **)&drv.event_elapsed = sym(l, "cuEventElapsedTime");
	*(void **)&drv.memcpy_dtod = sym(l, "cuMemcpyDtoD_v2");
	*(void **)&drv.synchronize = sym(l, "cuCtxSynchronize");
	return drv.event_create && drv.event_record && drv.event_synchronize &&
		drv.event_elapsed && drv.memcpy_dtod && drv.synchronize;
}

static bool load_cublas(void)
{
	static const char *const names[] = { "libcublas.so",
		"libcublas.so.13", "libcublas.so.12", NULL };
	void *l = open_first(names);

	if (!l)
		return false;
	*(void **)&blas.create = sym(l, "cublasCreate_v2");
	*(void **)&blas.sgemm = sym(l, "cublasSgemm_v2");
	*(void **)&blas.sgemm_batched = sym(l, "cublasSgemmStridedBatched");
	*(void **)&blas.gemm_ex = sym(l, "cublasGemmEx");
	return blas.create && blas.sgemm && blas.sgemm_batched &&
		blas.gemm_ex && blas.create(&blas.h) == CUBLAS_STATUS_SUCCESS;
}

static bool load_cudnn(void)
{
#ifdef HAVE_CUDNN_H
	static const char *const names[] = { "libcudnn.so", "libcudnn.so.9",
		NULL };
	void *l = open_first(names);

	if (!l)
		return false;
	*(void **)&dnn.create = sym(l, "cudnnCreate");
	*(void **)&dnn.tensor_desc = sym(l, "cudnnCreateTensorDescriptor");
	*(void **)&dnn.set_tensor = sym(l, "cudnnSetTensor4dDescriptor");
	*(void **)&dnn.filter_desc = sym(l, "cudnnCreateFilterDescriptor");
	*(void **)&dnn.set_filter = sym(l, "cudnnSetFilter4dDescriptor");
	*(void **)&dnn.conv_desc = sym(l, "cudnnCreateConvolutionDescriptor");
	*(void **)&dnn.set_conv = sym(l, "cudnnSetConvolution2dDescriptor");
	*(void **)&dnn.find = sym(l, "cudnnFindConvolutionForwardAlgorithm");
	*(void **)&dnn.workspace =
		sym(l, "cudnnGetConvolutionForwardWorkspaceSize");
	*(void **)&dnn.forward = sym(l, "cudnnConvolutionForward");
	return dnn.create && dnn.tensor_desc && dnn.set_tensor &&
		dnn.filter_desc && dnn.set_filter && dnn.conv_desc &&
		dnn.set_conv && dnn.find && dnn.workspace && dnn.forward &&
		dnn.create(&dnn.h) == CUDNN_STATUS_SUCCESS;
#else
	return false;
#endif
}

/* What the library computes for a case. */
enum lib {
	LIB_NONE,	/* the interpreter checks, nothing to compare with */
	LIB_SGEMM,	/* C[b, i, j] = sum_k A[b, i, k] B[b, k, j], f32 */
	LIB_HGEMM,	/* the same, f16 in, f32 out, tensor cores */
	LIB_CONV,	/* 3x3 convolution, padding 1, NCHW, f32 */
};

struct bench_case {
	const char *name;
	enum lib lib;
	int64_t b, m, n, k;	/* GEMM sizes; conv: 1, K, H, C */
	int stride;		/* conv */
	double flops;		/* 0: memory-bound, rated by bytes */
	const char *src;
};

#define MATMUL(T, CAST_A, CAST_B) \
	"input A: " T "[4096, 4096]\ninput B: " T "[4096, 4096]\n" \
	"output C[i: 4096, j: 4096] = sum(k: 4096) " CAST_A " * " CAST_B "\n"
#define CONV(C, K, H, HP, S, HO) \
	"input X: f32[1, " #C ", " #H ", " #H "]\n" \
	"input W: f32[" #K ", " #C ", 3, 3]\n" \
	"P[n: 1, c: " #C ", h: " #HP ", w: " #HP "] = select(h >= 1 && " \
	"h <= " #H " && w >= 1 && w <= " #H ", X[n, c, h - 1, w - 1], 0.0)\n" \
	"output Y[n: 1, k: " #K ", h: " #HO ", w: " #HO "] = sum(rc: " #C \
	", r: 3, s: 3) P[n, rc, " #S " * h + r, " #S " * w + s] * " \
	"W[k, rc, r, s]\n"

static const struct bench_case cases[] = {
	{ "matmul_f32", LIB_SGEMM, 1, 4096, 4096, 4096, 0, 2.0 * 4096 * 4096 *
	  4096, MATMUL("f32", "A[i, k]", "B[k, j]") },
	{ "matmul_f16", LIB_HGEMM, 1, 4096, 4096, 4096, 0, 2.0 * 4096 * 4096 *
	  4096, MATMUL("f16", "f32(A[i, k])", "f32(B[k, j])") },
	{ "bmm_f32", LIB_SGEMM, 16, 512, 512, 512, 0, 2.0 * 16 * 512 * 512 *
	  512, "input A: f32[16, 512, 512]\ninput B: f32[16, 512, 512]\n"
	  "output C[b: 16, i: 512, j: 512] = sum(k: 512) A[b, i, k] * "
	  "B[b, k, j]\n" },
	{ "conv_56x64", LIB_CONV, 1, 64, 56, 64, 1, 2.0 * 64 * 56 * 56 * 64 * 9,
	  CONV(64, 64, 56, 58, 1, 56) },
	{ "conv_28x128", LIB_CONV, 1, 128, 28, 128, 1, 2.0 * 128 * 28 * 28 *
	  128 * 9, CONV(128, 128, 28, 30, 1, 28) },
	{ "conv_14x256", LIB_CONV, 1, 256, 14, 256, 1, 2.0 * 256 * 14 * 14 *
	  256 * 9, CONV(256, 256, 14, 16, 1, 14) },
	{ "conv_7x512", LIB_CONV, 1, 512, 7, 512, 1, 2.0 * 512 * 7 * 7 * 512 *
	  9, CONV(512, 512, 7, 9, 1, 7) },
	{ "softmax_4096", LIB_NONE, 0, 0, 0, 0, 0, 0,
	  "input X: f32[4096, 4096]\n"
	  "M[i: 4096] = max(k: 4096) X[i, k]\n"
	  "E[i: 4096] = sum(k: 4096) exp(X[i, k] - M[i])\n"
	  "output Y[i: 4096, j: 4096] = exp(X[i, j] - M[i]) / E[i]\n" },
	{ "layer_norm_4096", LIB_NONE, 0, 0, 0, 0, 0, 0,
	  "input X: f32[4096, 4096]\ninput G: f32[4096]\ninput B: f32[4096]\n"
	  "Mu[i: 4096] = (sum(k: 4096) X[i, k]) / 4096.0\n"
	  "Var[i: 4096] = (sum(k: 4096) (X[i, k] - Mu[i]) * (X[i, k] - "
	  "Mu[i])) / 4096.0\n"
	  "output Y[i: 4096, j: 4096] = (X[i, j] - Mu[i]) * rsqrt(Var[i] + "
	  "1e-5) * G[j] + B[j]\n" },
	{ "row_sum_4096", LIB_NONE, 0, 0, 0, 0, 0, 0,
	  "input X: f32[4096, 4096]\n"
	  "output S[i: 4096] = sum(k: 4096) X[i, k]\n" },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static void drv_check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "bench_gpu: %s failed (%d)\n", what, (int)r);
		exit(1);
	}
}

/* A library call of a case, on device buffers. */
struct lib_call {
	const struct bench_case *c;
	ts_cuda_ptr in0, in1, out, work;
	size_t work_bytes;
#ifdef HAVE_CUDNN_H
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	cudnnConvolutionFwdAlgo_t algo;
#endif
};

static void lib_run(struct lib_call *l)
{
	const struct bench_case *c = l->c;
	float one = 1, zero = 0;
	int r = 0;

	/* Row-major C = A B is column-major C^T = B^T A^T. */
	switch (c->lib) {
	case LIB_SGEMM:
		r = blas.sgemm_batched(blas.h, CUBLAS_OP_N, CUBLAS_OP_N,
			(int)c->n, (int)c->m, (int)c->k, &one,
			(const float *)(uintptr_t)l->in1, (int)c->n,
			c->k * c->n, (const float *)(uintptr_t)l->in0,
			(int)c->k, c->m * c->k, &zero,
			(float *)(uintptr_t)l->out, (int)c->n, c->m * c->n,
			(int)c->b);
		break;
	case LIB_HGEMM:
		r = blas.gemm_ex(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, (int)c->n,
			(int)c->m, (int)c->k, &one, (void *)(uintptr_t)l->in1,
			CUDA_R_16F, (int)c->n, (void *)(uintptr_t)l->in0,
			CUDA_R_16F, (int)c->k, &zero,
			(void *)(uintptr_t)l->out, CUDA_R_32F, (int)c->n,
			CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
		break;
	case LIB_CONV:
#ifdef HAVE_CUDNN_H
		r = dnn.forward(dnn.h, &one, l->x, (void *)(uintptr_t)l->in0,
			l->w, (void *)(uintptr_t)l->in1, l->conv, l->algo,
			(void *)(uintptr_t)l->work, l->work_bytes, &zero, l->y,
			(void *)(uintptr_t)l->out);
#endif
		break;
	case LIB_NONE:
		break;
	}
	if (r != 0) {
		fprintf(stderr, "bench_gpu: %s: library call failed (%d)\n",
			c->name, r);
		exit(1);
	}
}

/* Milliseconds "runs" calls of "l" take back to back, from CUDA
 * events. */
static double lib_batch(struct lib_call *l, int runs)
{
	static CUevent e0, e1;
	float ms;

	if (!e0) {
		drv_check(drv.event_create(&e0, 0), "cuEventCreate");
		drv_check(drv.event_create(&e1, 0), "cuEventCreate");
	}
	drv_check(drv.event_record(e0, NULL), "cuEventRecord");
	for (int i = 0; i < runs; i++)
		lib_run(l);
	drv_check(drv.event_record(e1, NULL), "cuEventRecord");
	drv_check(drv.event_synchronize(e1), "cuEventSynchronize");
	drv_check(drv.event_elapsed(&ms, e0, e1), "cuEventElapsed");
	return ms;
}

/* Milliseconds per call of "l": the median of 5 batches timed with
 * events, each batch long enough to take about 20 ms. */
static double lib_time(struct lib_call *l)
{
	double t[5], ms;
	int runs = 1;

	lib_run(l);
	while ((ms = lib_batch(l, runs)) < 20 && runs < 1 << 14)
		runs *= ms > 1 ? (int)(25 / ms) + 1 : 32;
	for (int s = 0; s < 5; s++)
		t[s] = lib_batch(l, runs) / runs;
	return bench_median(t, 5);
}

/* Device-to-device copy bandwidth in GB/s (bytes read plus written). */
static double copy_bandwidth(ts_ctx *ctx)
{
	size_t bytes = (size_t)256 << 20;
	ts_cuda_ptr a, b;
	CUevent e0, e1;
	double t[5];
	float ms;

	if (ts_cuda_alloc(ctx, bytes, &a) < 0 ||
	    ts_cuda_alloc(ctx, bytes, &b) < 0)
		bench_die(ctx, "copy buffers");
	drv_check(drv.event_create(&e0, 0), "cuEventCreate");
	drv_check(drv.event_create(&e1, 0), "cuEventCreate");
	drv_check(drv.memcpy_dtod(b, a, bytes), "cuMemcpyDtoD");
	for (int s = 0; s < 5; s++) {
		drv_check(drv.event_record(e0, NULL), "cuEventRecord");
		for (int i = 0; i < 10; i++)
			drv_check(drv.memcpy_dtod(b, a, bytes), "cuMemcpyDtoD");
		drv_check(drv.event_record(e1, NULL), "cuEventRecord");
		drv_check(drv.event_synchronize(e1), "cuEventSynchronize");
		drv_check(drv.event_elapsed(&ms, e0, e1), "cuEventElapsed");
		t[s] = ms / 10;
	}
	ts_cuda_free(ctx, a);
	ts_cuda_free(ctx, b);
	return 2.0 * (double)bytes / (bench_median(t, 5) * 1e-3) / 1e9;
}

static size_t array_bytes(const ts_array *a)
{
	return (size_t)a->size * ts_dtype_size(a->dtype);
}

/* Set up the library call of case "c" on "in"; false when its library
 * is not loaded. */
static bool lib_setup(ts_ctx *ctx, const struct bench_case *c,
	ts_array *const *in, const ts_array *out, struct lib_call *l)
{
	memset(l, 0, sizeof(*l));
	l->c = c;
	if (c->lib == LIB_NONE || (c->lib != LIB_CONV && !blas.h))
		return false;
#ifdef HAVE_CUDNN_H
	if (c->lib == LIB_CONV && !dnn.h)
		return false;
#else
	if (c->lib == LIB_CONV)
		return false;
#endif
	if (ts_cuda_alloc(ctx, array_bytes(in[0]), &l->in0) < 0 ||
	    ts_cuda_alloc(ctx, array_bytes(in[1]), &l->in1) < 0 ||
	    ts_cuda_alloc(ctx, array_bytes(out), &l->out) < 0 ||
	    ts_cuda_copy_in(ctx, l->in0, in[0]->data, array_bytes(in[0])) < 0 ||
	    ts_cuda_copy_in(ctx, l->in1, in[1]->data, array_bytes(in[1])) < 0)
		bench_die(ctx, c->name);
#ifdef HAVE_CUDNN_H
	if (c->lib == LIB_CONV) {
		/* b = batch, m = output channels, n = size, k = channels. */
		int ho = (int)((c->n + 2 - 3) / c->stride + 1), count;
		cudnnConvolutionFwdAlgoPerf_t perf[8];
		int s = 0;
		s |= dnn.tensor_desc(&l->x) | dnn.tensor_desc(&l->y) |
			dnn.filter_desc(&l->w) | dnn.conv_desc(&l->conv);
		s |= dnn.set_tensor(l->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
			(int)c->b, (int)c->k, (int)c->n, (int)c->n);
		s |= dnn.set_tensor(l->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
			(int)c->b, (int)c->m, ho, ho);
		s |= dnn.set_filter(l->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
			(int)c->m, (int)c->k, 3, 3);
		s |= dnn.set_conv(l->conv, 1, 1, c->stride, c->stride, 1, 1,
			CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
		s |= dnn.find(dnn.h, l->x, l->w, l->conv, l->y, 8, &count,
			perf);
		if (s || count < 1) {
			fprintf(stderr, "bench_gpu: %s: cuDNN set-up failed\n",
				c->name);
			return false;
		}
		l->algo = perf[0].algo;
		s = dnn.workspace(dnn.h, l->x, l->w, l->conv, l->y, l->algo,
			&l->work_bytes);
		if (s || ts_cuda_alloc(ctx, l->work_bytes ? l->work_bytes : 1,
		    &l->work) < 0)
			bench_die(ctx, "cuDNN workspace");
	}
#endif
	return true;
}

/* The library's result of "l" into "out". */
static void lib_result(ts_ctx *ctx, struct lib_call *l, ts_array *out)
{
	lib_run(l);
	if (ts_cuda_synchronize(ctx) < 0 ||
	    ts_cuda_copy_out(ctx, out->data, l->out, array_bytes(out)) < 0)
		bench_die(ctx, l->c->name);
}

/* One candidate: its program and, once measured, its time. */
struct cand {
	ts_cuda_program *p;
	const ts_config *cfg;
	bool tc;
	double est, ms;
};

static ts_cuda_program *program(ts_ctx *ctx, const ts_dag *dag,
	const ts_gpu_template *tp, const ts_config *cfg, const ts_target *dev)
{
	ts_schedule *sch = ts_gpu_template_apply(tp, cfg);
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_cuda_program *p = f ? ts_cuda_emit(ctx, f,
		&(ts_cuda_options){ .target = dev }) : NULL;

	if (p && ts_cuda_program_compile(ctx, p, dev->gpu.arch, true) < 0)
		return NULL;
	return p;
}

static bool uses_tensor_cores(const ts_gpu_template *tp, const ts_config *c)
{
	for (int s = 0; s < ts_dag_nstages(ts_template_dag(tp)); s++)
		if (ts_gpu_template_tensor_core(tp, c, s))
			return true;
	return false;
}

/* Median of 3 program timings of "runs" runs each. */
static double program_time(ts_ctx *ctx, ts_cuda_program *p, ts_array **args,
	int runs)
{
	double t[3];
	for (int i = 0; i < 3; i++)
		if (ts_cuda_program_time(ctx, p, args, runs, &t[i]) < 0)
			return -1;
	return bench_median(t, 3);
}

static void print_rate(const struct bench_case *c, const ts_target *dev,
	double ms, double bytes, double copy_gbs, bool tc)
{
	if (c->flops > 0) {
		double tflops = c->flops / (ms * 1e-3) / 1e12;
		double peak = tc ? dev->gpu.peak_tflops_tensor_f16
			: dev->gpu.peak_tflops_f32;
		printf(" %8.3f ms %6.1f TFLOP/s (%.2f of %s peak)", ms, tflops,
			peak > 0 ? tflops / peak : 0, tc ? "tensor" : "f32");
	} else {
		double gbs = bytes / (ms * 1e-3) / 1e9;
		printf(" %8.3f ms %6.0f GB/s (%.2f of copy)", ms, gbs,
			gbs / copy_gbs);
	}
}

static int run_case(ts_ctx *ctx, const ts_target *dev,
	const struct bench_case *c, int ncand, int runs, double copy_gbs,
	bool dry)
{
	ts_dag *dag = ts_parse_string(ctx, c->name, c->src);
	ts_gpu_static_result *r;
	ts_array **in = NULL, **args = NULL, *want[4] = { 0 };
	struct cand *cs;
	struct lib_call l;
	double bytes = 0, lib_ms = 0, err = 0, best_ms = -1;
	int n = 0, best = -1, tc_best = -1;
	bool have_lib = false, ok;

	if (!dev || !dag || !(r = ts_gpu_static_fill(ctx, dag, dev, 24)))
		bench_die(ctx, c->name);
	if (dry)
		goto candidates;
	in = args = bench_args(ctx, dag, 1);
	for (int i = 0; i < ts_dag_ninputs(dag) + ts_dag_noutputs(dag); i++)
		bytes += (double)array_bytes(args[i]);
	have_lib = lib_setup(ctx, c, in, args[ts_dag_ninputs(dag)], &l);
	if (have_lib) {
		want[0] = ts_array_for_tensor(ctx, ts_dag_output(dag, 0));
		lib_result(ctx, &l, want[0]);
		lib_ms = lib_time(&l);
	} else if (c->lib != LIB_NONE && c->flops > 4e9) {
		printf("%-16s skipped: no library to check it against\n",
			c->name);
		return 0;
	} else if (ts_eval(ctx, dag, in, want) < 0) {
		bench_die(ctx, c->name);
	}

	/* The model's best "ncand", and its best with tensor cores, in
	 * collected memory where the programs stay reachable. */
candidates:
	cs = GC_MALLOC(((size_t)r->k + 1) * sizeof(*cs));
	for (int i = 0; i < r->k; i++) {
		bool tc = uses_tensor_cores(r->tp, r->topk[i]);
		if (i >= ncand && (!tc || tc_best >= 0))
			continue;
		if (tc && tc_best < 0)
			tc_best = n;
		cs[n].tc = tc;
		cs[n].est = r->topk_cost[i];
		cs[n].cfg = r->topk[i];
		if (!(cs[n].p = program(ctx, dag, r->tp, r->topk[i], dev))) {
			fprintf(stderr, "bench_gpu: %s candidate %d: %s\n",
				c->name, i, ts_ctx_error(ctx));
			if (i == 0)
				return 1;
			ts_ctx_clear_error(ctx);
			continue;
		}
		n++;
	}
	if (dry) {
		printf("%-16s %d candidates compiled for %s%s\n", c->name, n,
			dev->gpu.arch, tc_best >= 0 ? ", one with tensor cores"
			: "");
		for (int i = 0; i < n; i++)
			printf("  # %s candidate %d: est %.3f ms %s\n", c->name,
				i, cs[i].est * 1e3, ts_config_to_json(cs[i].cfg));
		return 0;
	}
	ok = true;
	for (int i = 0; i < n; i++) {
		double abs_err = 0, rel = 0, scale = 0;
		bool close;
		if (ts_cuda_program_run(ctx, cs[i].p, args) < 0)
			bench_die(ctx, c->name);
		if (have_lib) {
			/* Sums of thousands of products: compare to the
			 * largest magnitude. */
			for (int64_t e = 0; e < want[0]->size; e++)
				scale = fmax(scale,
					fabs(ts_array_get(want[0], e)));
			ts_array_compare(ctx, args[ts_dag_ninputs(dag)], want[0],
				&abs_err, &rel);
			close = abs_err <= 1e-3 * fmax(scale, 1);
		} else {
			close = true;
			for (int o = 0; o < ts_dag_noutputs(dag); o++)
				close &= ts_array_close(args[ts_dag_ninputs(dag) + o],
					want[o], &abs_err);
		}
		if (!close) {
			printf("%-16s candidate %d%s WRONG (max error %g)\n",
				c->name, i, i == 0 ? " (static)" : "", abs_err);
			ok = false;
			cs[i].ms = -1;
			continue;
		}
		if (i == 0)
			err = abs_err;
		cs[i].ms = program_time(ctx, cs[i].p, args, runs);
		if (cs[i].ms < 0)
			bench_die(ctx, c->name);
		if (best < 0 || cs[i].ms < best_ms) {
			best = i;
			best_ms = cs[i].ms;
		}
	}
	if (best < 0)
		return 1;

	printf("%-16s static  ", c->name);
	if (cs[0].ms > 0)
		print_rate(c, dev, cs[0].ms, bytes, copy_gbs, cs[0].tc);
	if (have_lib && cs[0].ms > 0)
		printf("  %.2fx %s", lib_ms / cs[0].ms,
			c->lib == LIB_CONV ? "cuDNN" : "cuBLAS");
	printf("%s  (max error %g)\n", cs[0].tc ? " [tensor cores]" : "", err);
	printf("%-16s measured", c->name);
	print_rate(c, dev, best_ms, bytes, copy_gbs, cs[best].tc);
	if (have_lib)
		printf("  %.2fx %s", lib_ms / best_ms,
			c->lib == LIB_CONV ? "cuDNN" : "cuBLAS");
	printf("%s  (best of %d, model rank %d)\n",
		cs[best].tc ? " [tensor cores]" : "", n, best);
	if (tc_best > 0 && cs[tc_best].ms > 0) {
		printf("%-16s tensor  ", c->name);
		print_rate(c, dev, cs[tc_best].ms, bytes, copy_gbs, true);
		if (have_lib)
			printf("  %.2fx cuBLAS", lib_ms / cs[tc_best].ms);
		printf("  (the model's best with tensor cores)\n");
	}
	if (have_lib) {
		printf("%-16s library ", c->name);
		print_rate(c, dev, lib_ms, bytes, copy_gbs,
			c->lib == LIB_HGEMM);
		printf("  (%s)\n", c->lib == LIB_CONV ? "cuDNN, best of its "
			"algorithms" : c->lib == LIB_HGEMM ? "cuBLAS GemmEx, "
			"f16 in, f32 out" : "cuBLAS, f32");
	}
	for (int i = 0; i < n; i++)
		printf("  # %s candidate %d: est %.3f ms, measured %.3f ms "
			"%s\n", c->name, i, cs[i].est * 1e3, cs[i].ms,
			ts_config_to_json(cs[i].cfg));
	fflush(stdout);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	ts_ctx *ctx = bench_ctx();
	const char *only = NULL, *dry = NULL;
	int ncand = 8, runs = 10, status = 0;
	ts_target *dev;
	double copy_gbs;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--candidates") && i + 1 < argc)
			ncand = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--dry") && i + 1 < argc)
			dry = argv[++i];
		else {
			fprintf(stderr, "usage: bench_gpu [--candidates N] "
				"[--runs N] [--case NAME]\n"
				"                 [--dry GPU]   (compile only, "
				"for a shipped GPU)\n");
			return 2;
		}
	}
	if (dry) {
		if (!(dev = ts_target_lookup(ctx, dry)))
			bench_die(ctx, dry);
		for (int i = 0; i < NCASES; i++)
			if (!only || !strcmp(only, cases[i].name))
				status |= run_case(ctx, dev, &cases[i], ncand,
					runs, 0, true);
		return status;
	}
	if (!ts_cuda_available(ctx) || !(dev = ts_cuda_device_target(ctx, 0))) {
		fprintf(stderr, "bench_gpu: %s\n", ts_ctx_error(ctx));
		return 2;
	}
	if (!load_driver()) {
		fprintf(stderr, "bench_gpu: libcuda.so.1 lacks an entry "
			"point\n");
		return 2;
	}
	printf("device: %s (%s, %d SMs, %.2f GHz); peaks from its attributes: "
		"%.1f TFLOP/s f32, %.1f tensor f16, %.0f GB/s\n",
		dev->description && *dev->description ? dev->description
		: dev->name, dev->gpu.arch, dev->gpu.sm_count,
		dev->gpu.clock_ghz, dev->gpu.peak_tflops_f32,
		dev->gpu.peak_tflops_tensor_f16, dev->gpu.bandwidth_gbs);
	copy_gbs = copy_bandwidth(ctx);
	printf("copy: %.0f GB/s device to device (read + write)\n", copy_gbs);
	printf("cuBLAS: %s; cuDNN: %s\n", load_cublas() ? "loaded" : "absent",
		load_cudnn() ? "loaded" : "absent");
	fflush(stdout);
	for (int i = 0; i < NCASES; i++)
		if (!only || !strcmp(only, cases[i].name))
			status |= run_case(ctx, dev, &cases[i], ncand, runs,
				copy_gbs, false);
	return status;
}
#endif
