/* CUDA C emission: every kernel of the catalogue (tiny and real sizes,
 * the static GPU schedule for h100 and sampled GPU configurations)
 * compiles with NVRTC to PTX for sm_75, sm_80 and sm_90 and to a cubin
 * for sm_90 (NVRTC 13 has no sm_70 any more); the structure of the
 * emitted code; errors of schedules a GPU cannot run; and, on a device,
 * results checked against ts_eval. */
#include <config.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common.h"
#include "tests/backends/tc_decls.h"

#include <tessel/cuda.h>
#include <tessel/gpu.h>

#include "dsl/internal.h"
#include "examples/catalogue.h"

static const char *const ptx_archs[] = { "sm_75", "sm_80", "sm_90" };

/* Skip the calling test, with a printed reason, without NVRTC. */
#define NEED_NVRTC(ctx) do { \
	if (!ts_nvrtc_supports(ctx, "sm_90")) { \
		print_message("skipping: no NVRTC for sm_90 (%s)\n", \
			ts_ctx_error(ctx)); \
		skip(); \
	} \
} while (0)

/* The program of "dag" under "cfg" of "tp" (NULL: the static best);
 * fails the test with the context's error. */
static ts_cuda_program *emit_config(ts_ctx *ctx, const ts_dag *dag,
	const ts_gpu_template *tp, const ts_config *cfg, const char *what)
{
	ts_schedule *sch = ts_gpu_template_apply(tp, cfg);
	ts_func *f;
	ts_cuda_program *p;

	if (!sch)
		fail_msg("%s: apply: %s", what, ts_ctx_error(ctx));
	if (!(f = ts_lower(ctx, dag, sch)))
		fail_msg("%s: lower: %s", what, ts_ctx_error(ctx));
	if (!(p = ts_cuda_emit(ctx, f, &(ts_cuda_options){ .target =
	    tp->target })))
		fail_msg("%s: emit: %s", what, ts_ctx_error(ctx));
	return p;
}

/* Compile "p" for every architecture of "archs" to PTX and, with
 * "cubin", for sm_90 to a cubin; fail with NVRTC's log. */
static void compile_all(ts_ctx *ctx, ts_cuda_program *p, const char *what,
	int narchs, bool cubin)
{
	for (int a = 0; a < narchs; a++) {
		if (ts_cuda_program_compile(ctx, p, ptx_archs[a], false) < 0)
			fail_msg("%s: %s: %s\n%s", what, ptx_archs[a],
				ts_ctx_error(ctx), p->source);
		assert_non_null(strstr(p->image, ".entry"));
	}
	if (!cubin)
		return;
	if (ts_cuda_program_compile(ctx, p, "sm_90", true) < 0)
		fail_msg("%s: cubin: %s", what, ts_ctx_error(ctx));
	assert_memory_equal(p->image, "\177ELF", 4);
}

/* Static schedule and a few sampled fitting configurations of "dag" for
 * "target": every kernel compiles; returns the static program. */
static ts_cuda_program *check_dag(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const char *what, int nsamples, bool all)
{
	ts_gpu_static_result *r = ts_gpu_static_fill(ctx, dag, target, 2);
	ts_cuda_program *p;
	int found = 0;

	if (!r)
		fail_msg("%s: static filling: %s", what, ts_ctx_error(ctx));
	p = emit_config(ctx, dag, r->tp, r->best, what);
	assert_true(p->nkernels >= 1);
	compile_all(ctx, p, what, all ? 3 : 1, all);
	for (int tries = 0; found < nsamples && tries < 200; tries++) {
		ts_config *c = ts_space_sample(r->tp->space, ctx);
		char *w;
		if (!ts_gpu_template_fits(r->tp, c))
			continue;
		w = ts_asprintf("%s, sampled %s", what, ts_config_to_json(c));
		compile_all(ctx, emit_config(ctx, dag, r->tp, c, w), w, 1,
			false);
		found++;
	}
	return p;
}

/* Every catalogue operator at both sizes, static schedule for h100 (PTX
 * for sm_75, sm_80, sm_90, cubin for sm_90) and two sampled
 * configurations (PTX for sm_75). */
static void test_cuda_emit_catalogue__compiles(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *h100;

	NEED_NVRTC(ctx);
	assert_non_null(h100 = ts_target_lookup(ctx, "h100"));
	for (int i = 0; i < ts_catalogue_count; i++)
		for (int size = TS_SIZE_TINY; size <= TS_SIZE_REAL; size++) {
			ts_ctx *c = ts_ctx_alloc();
			ts_dag *dag = ts_catalogue[i].build(c, size);
			char *what = ts_asprintf("%s (%s)", ts_catalogue[i].name,
				size ? "real" : "tiny");
			ts_ctx_set_seed(c, 7);
			if (!dag)
				fail_msg("%s: %s", what, ts_ctx_error(c));
			check_dag(c, dag, ts_target_lookup(c, "h100"), what, 2,
				true);
			ts_ctx_free(c);
		}
}

/* Every example .tsl file, static schedules for v100, a100 and h100,
 * to PTX for sm_75 (the catalogue test covers the other architectures). */
static void test_cuda_emit_examples__compile(void **state)
{
	ts_ctx *ctx = *state;
	const char *dir = ts_asprintf("%s/examples", ts_test_srcdir());
	static const char *const gpus[] = { "v100", "a100", "h100" };
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	NEED_NVRTC(ctx);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".tsl"))
			continue;
		for (int g = 0; g < 3; g++) {
			ts_ctx *c = ts_ctx_alloc();
			ts_dag *dag = ts_parse_file(c, ts_asprintf("%s/%s", dir,
				e->d_name));
			if (!dag)
				fail_msg("%s: %s", e->d_name, ts_ctx_error(c));
			check_dag(c, dag, ts_target_lookup(c, gpus[g]),
				ts_asprintf("%s on %s", e->d_name, gpus[g]), 0,
				false);
			ts_ctx_free(c);
		}
		n++;
	}
	closedir(d);
	assert_true(n >= 5);
}

/* The tiled matmul: blocks, threads, shared staging between barriers,
 * register accumulators; the launch description matches the source. */
static void test_cuda_emit_matmul__structure(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_catalogue_find("matmul")->build(ctx, TS_SIZE_REAL);
	ts_gpu_static_result *r;
	ts_config *cfg = NULL;
	ts_cuda_program *p;
	char *hdr;

	assert_non_null(dag);
	assert_non_null(r = ts_gpu_static_fill(ctx, dag,
		ts_target_lookup(ctx, "h100"), 64));
	/* The best ranked configuration that stages both operands in
	 * shared memory (the model may prefer reading them through L1). */
	for (int i = 0; i < r->k && !cfg; i++) {
		bool staged = true;
		for (int k = 0; k < r->tp->plans[0].nshared; k++)
			staged &= ts_config_get(r->topk[i],
				r->tp->plans[0].knob_shared[k], 0) == 1;
		if (staged)
			cfg = r->topk[i];
	}
	assert_non_null(cfg);
	p = emit_config(ctx, dag, r->tp, cfg, "matmul");
	assert_int_equal(p->nkernels, 1);
	assert_non_null(strstr(p->source, "blockIdx.x"));
	assert_non_null(strstr(p->source, "threadIdx.x"));
	assert_non_null(strstr(p->source, "__shared__"));
	assert_non_null(strstr(p->source, "__syncthreads();"));
	assert_non_null(strstr(p->source, "per thread"));
	assert_true(p->kernels[0].shared_bytes > 0);
	assert_true(p->kernels[0].grid[0] * p->kernels[0].block[0] > 1000);
	assert_int_equal(p->nbuffers, 3);
	assert_string_equal(p->buffers[0].cname, "A");
	assert_int_equal(p->buffers[2].arg, 2);
	hdr = ts_cuda_program_header(p);
	assert_non_null(strstr(hdr, p->kernels[0].name));
	assert_non_null(strstr(hdr, ts_asprintf("{ %u, 1, 1 }",
		p->kernels[0].grid[0])));
}

/* A long reduction becomes a cross-thread reduction with shuffles; f16
 * goes through cuda_fp16.h; fast math uses the intrinsics. */
static void test_cuda_emit_kinds__reduction_f16_fast_math(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "k",
		"input X: f32[64, 4096]\n"
		"output S[i: 64] = sum(k: 4096) exp(X[i, k])\n");
	ts_dag *h;
	ts_gpu_template *tp;
	ts_config *c;
	ts_cuda_program *p;

	assert_non_null(dag);
	tp = ts_gpu_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
		ts_target_lookup(ctx, "a100"));
	assert_non_null(tp);
	c = ts_gpu_template_default(tp);
	ts_config_set(c, tp->plans[0].knob_cross, 0, 1);
	ts_config_set(c, tp->plans[0].knob_rthreads, 0, 3);	/* 256 */
	p = emit_config(ctx, dag, tp, c, "sum");
	assert_non_null(strstr(p->source, "__shfl_down_sync"));
	assert_non_null(strstr(p->source, "expf("));
	assert_int_equal(p->kernels[0].block[0], 256);
	assert_int_equal(p->kernels[0].grid[0], 64);
	p = ts_cuda_emit(ctx, ts_lower(ctx, dag, ts_gpu_template_apply(tp, c)),
		&(ts_cuda_options){ .fast_math = true });
	assert_non_null(p);
	assert_non_null(strstr(p->source, "__expf("));
	h = ts_catalogue_find("cast_f16")->build(ts_ctx_alloc(), TS_SIZE_TINY);
	assert_non_null(h);
	p = ts_cuda_emit(h->ctx, ts_lower(h->ctx, h, NULL), NULL);
	assert_non_null(p);
	assert_non_null(strstr(p->source, "#include <cuda_fp16.h>"));
	assert_non_null(strstr(p->source, "__float2half_rn"));
	if (ts_nvrtc_supports(ctx, "sm_80"))
		compile_all(h->ctx, p, "cast_f16", 3, true);
	ts_ctx_free(h->ctx);
	/* An f16 input that nothing reads is still a kernel parameter, so
	 * the header comes with it. */
	h = ts_parse_string(ctx, "unread", "input A: i32[31, 8]\n"
		"input F: f16[31, 8]\n"
		"output Y[i: 31, j: 8] = A[i, j] * 3\n");
	assert_non_null(h);
	p = ts_cuda_emit(ctx, ts_lower(ctx, h, NULL), NULL);
	assert_non_null(p);
	assert_non_null(strstr(p->source, "const __half *__restrict__ F"));
	assert_non_null(strstr(p->source, "#include <cuda_fp16.h>"));
	if (ts_nvrtc_supports(ctx, "sm_80"))
		compile_all(ctx, p, "unread f16 input", 3, false);
}

/* The new integer dtypes in their C types (u32 and u64 unsigned, i16 and
 * u16 in int wrapped by casts, float casts to u64 saturating past the
 * range of long long); bf16 is refused with a message. */
static void test_cuda_emit_new_dtypes__types_and_bf16_refused(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "n",
		"input A: u64[64]\ninput B: u32[64]\ninput C: i16[64]\n"
		"input F: f32[64]\n"
		"output P[i: 64] = A[i] // u64(B[i] + 1) + u64(F[i])\n"
		"output Q[i: 64] = C[i] * i16(300) + i16(u16(F[i]))\n"
		"output R[i: 64] = max(k: 4) B[i] - u32(k)\n");
	ts_cuda_program *p;

	assert_non_null(dag);
	p = ts_cuda_emit(ctx, ts_lower(ctx, dag, NULL), NULL);
	if (!p)
		fail_msg("emit: %s", ts_ctx_error(ctx));
	assert_non_null(strstr(p->source, "const unsigned long long *"));
	assert_non_null(strstr(p->source, "ts_ftou64("));
	assert_non_null(strstr(p->source, "(int)(short)"));
	assert_non_null(strstr(p->source, "(unsigned int)"));
	assert_non_null(strstr(p->source, "0u"));
	if (ts_nvrtc_supports(ctx, "sm_80"))
		compile_all(ctx, p, "new dtypes", 3, true);
	dag = ts_parse_string(ctx, "b", "input X: f32[8]\n"
		"output Y[i: 8] = bf16(X[i]) * 2.0\n");
	assert_non_null(dag);
	assert_null(ts_cuda_emit(ctx, ts_lower(ctx, dag, NULL), NULL));
	assert_error_contains(ctx, "uses bf16, which the CUDA C emitter does "
		"not support");
}

/* The functions of an ONNX graph call CUDA's math library, in float for
 * f32 and f16 and in double for f64; sign is the prelude's ts_sign; the
 * program compiles with NVRTC where there is one. */
static void test_cuda_emit_math_functions__library_calls(void **state)
{
	static const char *const fns[] = {
		"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
		"asinh", "acosh", "atanh", "ceil",
	};
	ts_ctx *ctx = *state;
	char src[2048], call[32];
	int n = snprintf(src, sizeof(src), "input X: f32[256]\n"
		"input D: f64[256]\ninput I: i8[256]\n"
		"output B[i: 256] = isnan(X[i]) || isinf(D[i])\n"
		"output S[i: 256] = sign(X[i]) + f32(sign(I[i]))\n");
	ts_dag *dag;
	ts_cuda_program *p;

	for (size_t k = 0; k < sizeof(fns) / sizeof(*fns); k++)
		n += snprintf(src + n, sizeof(src) - (size_t)n,
			"output %s_[i: 256] = %s(X[i]) + f32(%s(D[i]))\n",
			fns[k], fns[k], fns[k]);
	assert_non_null(dag = ts_parse_string(ctx, "fns", src));
	p = ts_cuda_emit(ctx, ts_lower(ctx, dag, NULL), NULL);
	if (!p)
		fail_msg("%s", ts_ctx_error(ctx));
	for (size_t k = 0; k < sizeof(fns) / sizeof(*fns); k++) {
		snprintf(call, sizeof(call), "(%sf(", fns[k]);
		if (!strstr(p->source, call))
			fail_msg("no '%s' in:\n%s", call, p->source);
		snprintf(call, sizeof(call), "(%s(", fns[k]);
		if (!strstr(p->source, call))
			fail_msg("no '%s' in:\n%s", call, p->source);
	}
	assert_non_null(strstr(p->source, "(isnan((float)("));
	assert_non_null(strstr(p->source, "(isinf((double)("));
	assert_non_null(strstr(p->source, "ts_sign((float)("));
	assert_non_null(strstr(p->source, "ts_sign((int)("));
	if (ts_nvrtc_supports(ctx, "sm_80"))
		compile_all(ctx, p, "functions", 3, false);
}

/* A kernel "body" made of one serial loop of one iteration around
 * "body", over the buffer "X" (f32[2048]). */
static ts_func *func_of(ts_ctx *ctx, ts_tensor *x, ts_stmt *body)
{
	ts_func *f = ts_new(ts_func);

	f->args = ts_new_array(ts_tensor *, 1);
	f->args[0] = x;
	f->name = "bad";
	f->nargs = 1;
	f->ninputs = 0;
	f->body = ts_stmt_for(ts_loop_var(ctx, "t", 1), TS_LOOP_SERIAL, body);
	return f;
}

/* X[i] = v. */
static ts_stmt *store(ts_ctx *ctx, ts_tensor *x, ts_expr *i, double v)
{
	return ts_stmt_store(x, 1, &i, ts_const(ctx, TS_F32, v));
}

/* A loop over "v" bound to "b" around "body". */
static ts_stmt *bound(ts_axis *v, ts_bind b, ts_stmt *body)
{
	ts_stmt *s = ts_stmt_for(v, TS_LOOP_BOUND, body);

	s->bind = b;
	return s;
}

/* Programs a GPU cannot run as written fail with a message naming the
 * kernel and the loop or buffer. */
static void test_cuda_emit_errors__messages(void **state)
{
	ts_ctx *ctx = *state;
	int64_t n = 2048;
	ts_tensor *x = ts_buffer_new(ctx, "X", TS_F32, 1, &n);
	ts_tensor *big = ts_buffer_new(ctx, "big", TS_F32, 1, &(int64_t){
		20000 });
	ts_axis *b = ts_loop_var(ctx, "b", 8), *t = ts_loop_var(ctx, "t", 64);
	ts_axis *t2 = ts_loop_var(ctx, "u", 2048);
	ts_expr *bv = ts_var(ctx, b), *tv = ts_var(ctx, t);
	ts_stmt *s;

	/* A store outside the block loop of its kernel. */
	s = ts_stmt_block(2, (ts_stmt *[]){ store(ctx, x, ts_int(ctx, 0), 1),
		bound(b, TS_BIND_BLOCK_X, store(ctx, x, bv, 2)) });
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "kernel 'bad_k0': the store to 'X' is "
		"outside the loop bound to blockIdx.x");
	/* A block loop inside a thread loop. */
	s = bound(t, TS_BIND_THREAD_X, bound(b, TS_BIND_BLOCK_X,
		store(ctx, x, bv, 1)));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "loop 'b' bound to blockIdx.x is inside a "
		"loop bound to threadIdx.x");
	/* The same index bound twice. */
	s = bound(t, TS_BIND_THREAD_X, bound(ts_loop_var(ctx, "t2", 4),
		TS_BIND_THREAD_X, store(ctx, x, tv, 1)));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "loop 't2' is bound to threadIdx.x inside "
		"another loop bound to it");
	/* A barrier that only some threads reach. */
	s = bound(t, TS_BIND_THREAD_X, ts_stmt_if(ts_binary(ctx, TS_OP_LT, tv,
		ts_int(ctx, 32)), ts_stmt_sync(), NULL));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "a barrier under a condition on the "
		"thread index");
	/* Every thread writing the same element, not as a reduction. */
	s = bound(t, TS_BIND_THREAD_X, store(ctx, x, ts_int(ctx, 3), 1));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "the store to 'X' does not depend on loop "
		"'t' bound to a thread index");
	/* Too many threads, too much shared memory. */
	s = bound(t2, TS_BIND_THREAD_X, store(ctx, x, ts_var(ctx, t2), 1));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "2048 threads along x (at most 1024)");
	s = ts_stmt_alloc(big, TS_SCOPE_SHARED, bound(t, TS_BIND_THREAD_X,
		store(ctx, big, tv, 1)));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "80000 bytes of shared memory (at most "
		"49152)");
	/* A global temporary inside a kernel. */
	s = ts_stmt_alloc(big, TS_SCOPE_GLOBAL, store(ctx, big, ts_int(ctx, 0),
		1));
	assert_null(ts_cuda_emit(ctx, func_of(ctx, x, s), NULL));
	assert_error_contains(ctx, "buffer 'big' in global memory is "
		"allocated inside a kernel");
	/* A CPU target for GPU templates. */
	assert_null(ts_gpu_template_new(ctx, NULL, NULL,
		ts_target_lookup(ctx, "zen3")));
	assert_error_contains(ctx, "target 'zen3' is not a GPU");
}

/* GPU static filling: the same seed gives the same choice, the best
 * fits the target, ranks first, and is no faster than the arithmetic
 * peak allows; a configuration with more threads than a block may have
 * does not fit. */
static void test_gpu_static_fill__model(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_catalogue_find("matmul")->build(ctx, TS_SIZE_REAL);
	ts_target *h100 = ts_target_lookup(ctx, "h100");
	ts_gpu_static_result *a, *b;
	ts_gpu_template *tp;
	ts_config *c;
	double flops = 2.0 * 1024 * 1024 * 1024;

	assert_non_null(dag);
	ts_ctx_set_seed(ctx, 5);
	assert_non_null(a = ts_gpu_static_fill(ctx, dag, h100, 4));
	ts_ctx_set_seed(ctx, 5);
	assert_non_null(b = ts_gpu_static_fill(ctx, dag, h100, 4));
	assert_string_equal(ts_config_to_json(a->best),
		ts_config_to_json(b->best));
	assert_true(ts_gpu_template_fits(a->tp, a->best));
	for (int i = 1; i < a->k; i++)
		assert_true(a->topk_cost[i] >= a->topk_cost[0]);
	assert_true(a->best_cost >= flops / (h100->gpu.peak_tflops_f32 * 1e12));
	assert_true(a->best_cost < 0.01);
	tp = a->tp;
	c = ts_config_copy(a->best);
	/* 32 x 64 threads per block: too many. */
	{
		int64_t in[2][3] = { { 1, 32, 1 }, { 1, 64, 1 } };
		ts_config_set_split(c, tp->plans[0].split[0], in[0]);
		ts_config_set_split(c, tp->plans[0].split[1], in[1]);
	}
	assert_false(ts_gpu_template_fits(tp, c));
	assert_true(isinf(ts_gpu_model_estimate(tp, c)));
}

/* The command line: schedule --show-code prints the kernels, build
 * writes the CUDA C, the image and the header, run without a device
 * fails with a message. */
static void test_cuda_cli__schedule_build_run(void **state)
{
	ts_ctx *ctx = *state;
	const char *bd = getenv("TS_BUILDDIR") ? getenv("TS_BUILDDIR") :
		TS_BUILDDIR;
	const char *tsl = ts_asprintf("%s/examples/softmax.tsl",
		ts_test_srcdir());
	char dir[] = "/tmp/tessel-cuda-cli-XXXXXX";
	char *out, *cmd;
	FILE *f;
	char text[8192];
	size_t n;

	NEED_NVRTC(ctx);
	assert_non_null(mkdtemp(dir));
	out = ts_asprintf("%s/out.txt", dir);
	cmd = ts_asprintf("%s/tools/tessel schedule %s --target cuda:h100 "
		"--show-code > %s 2>&1", bd, tsl, out);
	assert_int_equal(system(cmd), 0);
	assert_non_null(f = fopen(out, "r"));
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "on h100 (sm_90)"));
	assert_non_null(strstr(text, "kernel softmax_k0: grid"));
	assert_non_null(strstr(text, "extern \"C\" __global__"));
	cmd = ts_asprintf("%s/tools/tessel build %s --target cuda:a100 -o %s "
		"> %s 2>&1", bd, tsl, dir, out);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(access(ts_asprintf("%s/softmax.cu", dir), R_OK), 0);
	assert_int_equal(access(ts_asprintf("%s/softmax.cubin", dir), R_OK), 0);
	assert_int_equal(access(ts_asprintf("%s/softmax_cuda.h", dir), R_OK), 0);
	cmd = ts_asprintf("%s/tools/tessel schedule %s --target cuda:zen3 "
		"> %s 2>&1", bd, tsl, out);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	if (!ts_cuda_available(ctx)) {
		cmd = ts_asprintf("%s/tools/tessel run %s --target cuda > %s "
			"2>&1", bd, tsl, out);
		assert_int_equal(WEXITSTATUS(system(cmd)), 1);
		assert_non_null(f = fopen(out, "r"));
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
		assert_non_null(strstr(text, "tessel: no CUDA driver"));
	}
	unlink(out);
	unlink(ts_asprintf("%s/softmax.cu", dir));
	unlink(ts_asprintf("%s/softmax.cubin", dir));
	unlink(ts_asprintf("%s/softmax_cuda.h", dir));
	rmdir(dir);
}

/* Every tiny catalogue operator on the device, static schedule for the
 * device, against ts_eval. */
static void test_cuda_run_catalogue__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *dev;

	TS_NEED_CUDA_DEVICE(ctx);
	assert_non_null(dev = ts_cuda_device_target(ctx, 0));
	for (int i = 0; i < ts_catalogue_count; i++) {
		ts_ctx *c = ts_ctx_alloc();
		ts_dag *dag = ts_catalogue[i].build(c, TS_SIZE_TINY);
		ts_schedule *sch = ts_gpu_static_schedule(c, dag,
			ts_cuda_device_target(c, 0));
		ts_func *f = sch ? ts_lower(c, dag, sch) : NULL;
		ts_cuda_program *p = f ? ts_cuda_emit(c, f, NULL) : NULL;
		ts_array **in, **want, **args;
		if (!p)
			fail_msg("%s: %s", ts_catalogue[i].name, ts_ctx_error(c));
		in = ts_dag_random_inputs(c, dag, 3);
		want = ts_new_array(ts_array *, dag->noutputs + 1);
		args = ts_new_array(ts_array *, f->nargs + 1);
		assert_int_equal(ts_eval(c, dag, in, want), TS_OK);
		for (int a = 0; a < f->nargs; a++)
			args[a] = a < dag->ninputs ? in[a] :
				ts_array_for_tensor(c, f->args[a]);
		if (ts_cuda_program_run(c, p, args) < 0)
			fail_msg("%s: %s", ts_catalogue[i].name, ts_ctx_error(c));
		for (int o = 0; o < dag->noutputs; o++) {
			double err = 0;
			if (!ts_array_close(args[dag->ninputs + o], want[o], &err))
				fail_msg("%s: output %d differs by %g\n%s",
					ts_catalogue[i].name, o, err, p->source);
		}
		ts_ctx_free(c);
	}
}

/* The GPU template of the declaration "src" for "target". */
static ts_gpu_template *tc_template(ts_ctx *ctx, const char *src,
	const char *target)
{
	ts_dag *dag = ts_parse_string(ctx, "tc", src);
	const ts_dag_info *info = dag ? ts_analyze_dag(ctx, dag) : NULL;
	ts_gpu_template *tp = info ? ts_gpu_template_new(ctx, dag, info,
		ts_target_lookup(ctx, target)) : NULL;

	if (!tp)
		fail_msg("%s: %s", src, ts_ctx_error(ctx));
	return tp;
}

/* A fitting configuration of "tp" with stage C on tensor cores and its
 * epilogue fused when "fuse" (and the knob exists): sampled. */
static ts_config *tc_config(ts_ctx *ctx, const ts_gpu_template *tp,
	bool fuse)
{
	int knob = ts_space_find(tp->space, "C.tensor_core");
	int fk = ts_space_find(tp->space, "C.fuse");

	assert_true(knob >= 0);
	for (int t = 0; t < 200; t++) {
		ts_config *c = ts_space_sample(tp->space, ctx);
		ts_config_set(c, knob, 0, 1);
		if (fk >= 0)
			ts_config_set(c, fk, 0, fuse);
		if (ts_gpu_template_fits(tp, c))
			return c;
	}
	fail_msg("no fitting tensor-core configuration");
	return NULL;
}

/* Whether "p" computes on tensor cores: wmma fragments, one warp of 32
 * lanes per thread of the IR. */
static void assert_wmma(const ts_cuda_program *p, const char *what)
{
	if (!strstr(p->source, "#include <mma.h>") ||
	    !strstr(p->source, "wmma::load_matrix_sync") ||
	    !strstr(p->source, "wmma::mma_sync") ||
	    !strstr(p->source, "wmma::store_matrix_sync") ||
	    !strstr(p->source, "wmma::fill_fragment"))
		fail_msg("%s: no tensor cores in\n%s", what, p->source);
	assert_int_equal(p->kernels[0].block[0], 32);
}

/* Every tensor-core declaration, its epilogue fused and not, with the
 * knob on: wmma in the source, PTX for sm_75, sm_80, sm_90 and a cubin
 * for sm_90. */
static void test_cuda_emit_tensor_core__compiles(void **state)
{
	ts_ctx *ctx = *state;

	NEED_NVRTC(ctx);
	for (size_t i = 0; i < (size_t)TS_TEST_NTC_DECLS; i++) {
		ts_gpu_template *tp = tc_template(ctx, ts_test_tc_decls[i], "h100");
		for (int fuse = 0; fuse < 2; fuse++) {
			ts_config *c = tc_config(ctx, tp, fuse);
			char *what = ts_asprintf("tc%zu %s", i,
				ts_config_to_json(c));
			ts_cuda_program *p = emit_config(ctx, tp->dag, tp, c,
				what);
			assert_true(ts_gpu_template_tensor_core(tp, c,
				tp->dag->nstages - 1 - (tp->plans[0].fuse_consumer
				>= 0)));
			assert_wmma(p, what);
			{
				/* The launch the model rates is the one
				 * emitted. */
				ts_gpu_launch l;
				ts_gpu_template_launch(tp, c, 0, &l);
				assert_true(l.tensor_core);
				assert_int_equal(l.threads, p->kernels[0].block[0] *
					p->kernels[0].block[1]);
				assert_int_equal(l.blocks, p->kernels[0].grid[0]);
				assert_true(p->kernels[0].shared_bytes <=
					l.shared_bytes);
			}
			compile_all(ctx, p, what, 3, true);
		}
	}
}

/* Stages the tensor cores cannot take have no tensor_core knob, and the
 * template says why; a target without tensor cores has none either, and
 * a tensor-core peak on it is an error. */
static void test_gpu_template_tensor_core__absent(void **state)
{
	static const struct {
		const char *src, *reason;
	} cases[] = {
		{ "input A: f32[32, 32]\ninput B: f32[32, 32]\n"
		  "output C[i: 32, j: 32] = sum(k: 32) A[i, k] * B[k, j]\n",
		  "stage 'C': the summand is not a product of two f16 loads" },
		{ "input A: f16[32, 32]\ninput B: f16[32, 40]\n"
		  "output C[i: 32, j: 40] = sum(k: 32) f32(A[i, k]) * "
		  "f32(B[k, j])\n",
		  "stage 'C': the extent 40 of axis 'j' is not a multiple of 16" },
		{ "input A: f16[32, 48]\ninput B: f16[48, 32]\n"
		  "output C[i: 32, j: 32] = max(k: 48) f32(A[i, k]) * "
		  "f32(B[k, j])\n",
		  "stage 'C': tensor cores need a sum over one reduction axis" },
		{ "input A: f16[32, 48]\ninput B: f16[32, 32]\n"
		  "output C[i: 32, j: 32] = sum(k: 32) f32(A[i, k + 16]) * "
		  "f32(B[k, j])\n",
		  "stage 'C': index 1 of operand 'A' is not a plain axis" },
		/* Neither operand reads j: the canonical form computes the
		 * product once per (i, k), in a stage of its own. */
		{ "input A: f16[32, 32]\ninput B: f16[32, 32]\n"
		  "output C[i: 32, j: 16] = sum(k: 32) f32(A[i, k]) * "
		  "f32(B[i, k])\n",
		  "stage 'C.e0' is not a complex reduction" },
	};
	ts_ctx *ctx = *state;
	ts_target *h100 = ts_target_lookup(ctx, "h100"), *p100;
	ts_gpu_template *tp;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tp = tc_template(ctx, cases[i].src, "h100");
		assert_true(ts_space_find(tp->space, "C.tensor_core") < 0);
		if (!strstr(ts_gpu_template_tc_reason(tp, 0), cases[i].reason))
			fail_msg("expected \"%s\", got \"%s\"", cases[i].reason,
				ts_gpu_template_tc_reason(tp, 0));
	}
	/* The same matmul has the knob on V100 (sm_70), not on sm_60. */
	tp = tc_template(ctx, ts_test_tc_decls[0], "v100");
	assert_true(ts_space_find(tp->space, "C.tensor_core") >= 0);
	assert_null(ts_gpu_template_tc_reason(tp, 0));
	p100 = ts_new(ts_target);
	*p100 = *h100;
	p100->name = "p100";
	p100->gpu.arch = "sm_60";
	ts_target_finish(p100);
	assert_int_equal(ts_target_check(ctx, p100, "p100"), TS_ERROR);
	assert_error_contains(ctx, "'peak_tflops_tensor_f16' is given but "
		"sm_60 has no tensor cores");
	assert_null(ts_target_from_json(ctx, ts_target_to_json(p100), "p100"));
	assert_error_contains(ctx, "sm_60 has no tensor cores");
	p100->gpu.peak_tflops_tensor_f16 = 0;
	assert_int_equal(ts_target_check(ctx, p100, "p100"), TS_OK);
	/* A tensor-core schedule emitted for it keeps its scalar meaning:
	 * one thread per warp of the schedule, no wmma. */
	{
		ts_gpu_template *t = tc_template(ctx, ts_test_tc_decls[1], "h100");
		ts_schedule *sch = ts_gpu_template_apply(t, tc_config(ctx, t,
			false));
		ts_func *f = sch ? ts_lower(ctx, t->dag, sch) : NULL;
		ts_cuda_program *p = f ? ts_cuda_emit(ctx, f,
			&(ts_cuda_options){ .target = p100 }) : NULL;
		assert_non_null(p);
		assert_null(strstr(p->source, "wmma"));
		assert_int_equal(p->kernels[0].block[0], 1);
	}
	{
		ts_dag *dag = ts_parse_string(ctx, "tc", ts_test_tc_decls[0]);
		tp = ts_gpu_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
			p100);
		assert_non_null(tp);
		assert_true(ts_space_find(tp->space, "C.tensor_core") < 0);
		assert_string_equal(ts_gpu_template_tc_reason(tp, 0),
			"target 'p100' (sm_60) has no tensor cores");
		assert_string_equal(ts_gpu_template_tc_reason(tp, 1),
			"stage 'D' is not a complex reduction");
	}
}

/* "sch" replayed without its tensorize steps. */
static ts_schedule *without_tensorize(ts_ctx *ctx, const ts_schedule *sch)
{
	ts_schedule *c = ts_schedule_new(ctx, sch->dag);
	int ntz = 0;

	for (int i = 0; i < sch->nsteps; i++)
		if (sch->steps[i].kind == TS_STEP_TENSORIZE)
			ntz++;
		else
			assert_int_equal(ts_schedule_apply(c, &sch->steps[i]),
				TS_OK);
	assert_int_equal(ntz, 1);
	return c;
}

/* Tensor cores run what the schedule's tensorize step asks, nothing
 * else: every tensor-core configuration of the template tensorizes its
 * fragment nest; the same schedule without that step emits no wmma (one
 * thread per warp of the schedule); emitted for a GPU without tensor
 * cores, the tensorized nest runs as written and a warning says why. */
static void test_cuda_emit_tensorize__only_where_asked(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *p100 = ts_new(ts_target);

	*p100 = *ts_target_lookup(ctx, "h100");
	p100->gpu.arch = "sm_60";
	p100->gpu.peak_tflops_tensor_f16 = 0;
	ts_target_finish(p100);
	for (size_t i = 0; i < (size_t)TS_TEST_NTC_DECLS; i++) {
		ts_gpu_template *tp = tc_template(ctx, ts_test_tc_decls[i], "h100");
		for (int fuse = 0; fuse < 2; fuse++) {
			ts_config *c = tc_config(ctx, tp, fuse);
			ts_schedule *sch = ts_gpu_template_apply(tp, c);
			ts_func *f = sch ? ts_lower(ctx, tp->dag, sch) : NULL;
			ts_func *g = f ? ts_lower(ctx, tp->dag,
				without_tensorize(ctx, sch)) : NULL;
			ts_cuda_program *p;
			const char *w;
			assert_non_null(g);
			assert_non_null(strstr(ts_schedule_to_string(sch),
				": tensorize "));
			assert_non_null(strstr(ts_func_to_string(f),
				"# tensorized"));
			ts_ctx_clear_warnings(ctx);
			p = ts_cuda_emit(ctx, f, &(ts_cuda_options){
				.target = tp->target });
			assert_non_null(p);
			assert_wmma(p, ts_test_tc_decls[i]);
			assert_null(ts_ctx_warnings(ctx));
			/* Without the step the unfused schedule is plain code;
			 * the fused one cannot be (its epilogue's lanes are
			 * the warps' own), and emitting it is an error. */
			p = ts_cuda_emit(ctx, g, &(ts_cuda_options){
				.target = tp->target });
			if (fuse) {
				assert_true(!p || !strstr(p->source, "wmma"));
				ts_ctx_clear_error(ctx);
				continue;
			}
			if (!p)
				fail_msg("tc%zu: %s", i, ts_ctx_error(ctx));
			if (strstr(p->source, "wmma"))
				fail_msg("tc%zu: wmma without tensorize:\n%s", i,
					p->source);
			assert_int_equal(p->kernels[0].block[0], 1);
			assert_null(ts_ctx_warnings(ctx));
			p = ts_cuda_emit(ctx, f, &(ts_cuda_options){
				.target = p100 });
			assert_non_null(p);
			assert_null(strstr(p->source, "wmma"));
			w = ts_ctx_warnings(ctx);
			if (!w || !strstr(w, "1 of 1 tensorized nests run on "
			    "CUDA cores: target sm_60 has no tensor cores"))
				fail_msg("tc%zu: warning \"%s\"", i, w ? w : "");
			ts_ctx_clear_warnings(ctx);
		}
	}
}

/* GPU static filling of f16 matmuls (plain, batched, a 1x1 convolution)
 * at real sizes on targets with tensor cores: the choice uses them, is no
 * faster than the tensor-core peak allows and beats the same
 * configuration without them; on h100 its program uses wmma and
 * compiles for sm_75, sm_80 and sm_90. */
static void test_gpu_static_fill__tensor_core(void **state)
{
	static const char *const src[] = {
		"input A: f16[1024, 1024]\ninput B: f16[1024, 1024]\n"
		"output C[i: 1024, j: 1024] = sum(k: 1024) f32(A[i, k]) * "
		"f32(B[k, j])\n",
		"input A: f16[8, 256, 512]\ninput B: f16[8, 512, 256]\n"
		"output C[b: 8, i: 256, j: 256] = sum(k: 512) f32(A[b, i, k]) * "
		"f32(B[b, k, j])\n",
		"input W: f16[128, 256]\ninput X: f16[4, 256, 32, 64]\n"
		"output C[n: 4, co: 128, h: 32, w: 64] = sum(ci: 256) "
		"f32(W[co, ci]) * f32(X[n, ci, h, w])\n",
	};
	static const double depth[] = { 1024, 512, 256 };
	static const char *const gpus[] = { "h100", "a100", "v100" };
	ts_ctx *ctx = *state;

	for (int i = 0; i < 3; i++)
		for (int g = 0; g < 3; g++) {
			ts_dag *dag = ts_parse_string(ctx, "tc", src[i]);
			ts_target *t = ts_target_lookup(ctx, gpus[g]);
			ts_gpu_static_result *r;
			double flops = 2.0 * (double)ts_tensor_size(
				dag->outputs[0]) * depth[i];
			ts_config *c;
			assert_non_null(r = ts_gpu_static_fill(ctx, dag, t, 2));
			if (!ts_gpu_template_tensor_core(r->tp, r->best, 0))
				fail_msg("%s on %s: no tensor cores in %s", src[i],
					gpus[g], ts_config_to_json(r->best));
			assert_true(r->best_cost >= flops /
				(t->gpu.peak_tflops_tensor_f16 * 1e12));
			c = ts_config_copy(r->best);
			ts_config_set(c, r->tp->plans[0].knob_tc, 0, 0);
			assert_true(ts_gpu_model_estimate(r->tp, c) >
				r->best_cost);
			if (g == 0 && ts_nvrtc_supports(ctx, "sm_90")) {
				ts_cuda_program *p = emit_config(ctx, dag, r->tp,
					r->best, src[i]);
				assert_wmma(p, src[i]);
				compile_all(ctx, p, src[i], 3, false);
			}
		}
}

/* The tensor-core declarations on the device, knob on, against
 * ts_eval. */
static void test_cuda_run_tensor_core__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	TS_NEED_CUDA_DEVICE(ctx);
	for (size_t i = 0; i < (size_t)TS_TEST_NTC_DECLS; i++) {
		ts_gpu_template *tp = tc_template(ctx, ts_test_tc_decls[i], "h100");
		ts_cuda_program *p = emit_config(ctx, tp->dag, tp,
			tc_config(ctx, tp, i % 2), ts_test_tc_decls[i]);
		const ts_dag *dag = tp->dag;
		ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
		ts_array **want = ts_new_array(ts_array *, dag->noutputs + 1);
		ts_array **args = ts_new_array(ts_array *, p->func->nargs + 1);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		for (int a = 0; a < p->func->nargs; a++)
			args[a] = a < dag->ninputs ? in[a] :
				ts_array_for_tensor(ctx, p->func->args[a]);
		if (ts_cuda_program_run(ctx, p, args) < 0)
			fail_msg("tc%zu: %s", i, ts_ctx_error(ctx));
		for (int o = 0; o < dag->noutputs; o++) {
			double err = 0;
			if (!ts_array_close(args[dag->ninputs + o], want[o], &err))
				fail_msg("tc%zu: output %d differs by %g\n%s", i,
					o, err, p->source);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_cuda_emit_errors__messages),
		TS_TEST(test_cuda_emit_matmul__structure),
		TS_TEST(test_cuda_emit_kinds__reduction_f16_fast_math),
		TS_TEST(test_cuda_emit_new_dtypes__types_and_bf16_refused),
		TS_TEST(test_cuda_emit_math_functions__library_calls),
		TS_TEST(test_gpu_static_fill__model),
		TS_TEST(test_gpu_template_tensor_core__absent),
		TS_TEST(test_gpu_static_fill__tensor_core),
		TS_TEST(test_cuda_emit_tensor_core__compiles),
		TS_TEST(test_cuda_emit_tensorize__only_where_asked),
		TS_TEST(test_cuda_run_tensor_core__matches_eval),
		TS_TEST(test_cuda_cli__schedule_build_run),
		TS_TEST(test_cuda_emit_catalogue__compiles),
		TS_TEST(test_cuda_emit_examples__compile),
		TS_TEST(test_cuda_run_catalogue__matches_eval),
	};

	if (getenv("TS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
