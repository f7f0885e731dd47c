/* The emitted CUDA C run on the CPU: with no GPU at hand, each program is
 * compiled by the host C++ compiler against a small emulation of the CUDA
 * execution model (every thread of a block an OS thread, __syncthreads a
 * barrier, __shfl_down_sync an exchange between the 32 threads of a warp,
 * __shared__ arrays one per block, blocks one after another, the wmma
 * fragment calls collective among the 32 lanes of a warp), then its
 * outputs are compared with ts_eval.  This checks what NVRTC cannot: the
 * barriers, the cooperative copies, the cross-thread reductions, the
 * guards and the tensor-core fragments compute the right values.  It
 * does not check what only a device shows (memory model beyond barriers,
 * warp scheduling, speed). */
#include <config.h>

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/common.h"
#include "tests/backends/tc_decls.h"
#include "tests/backends/semantics_decls.h"

#include <tessel/cuda.h>
#include <tessel/gpu.h>

#include "dsl/internal.h"
#include "examples/catalogue.h"

/* The CUDA names the emitted code uses, for the host compiler. */
static const char shim[] =
	"#include <cmath>\n#include <cstring>\n#include <thread>\n"
	"#include <vector>\n#include <functional>\n#include <pthread.h>\n"
	"#include <cstdio>\n#include <cstdlib>\n#include <type_traits>\n"
	"using std::exp; using std::log; using std::isnan; using std::isinf;\n"
	"typedef _Float16 __half;\n"
	"static inline __half __float2half_rn(float f) { return (__half)f; }\n"
	"static inline float __half2float(__half h) { return (float)h; }\n"
	"struct ts_emu_dim { unsigned x, y, z; };\n"
	"struct float4 { float x, y, z, w; };\n"
	"struct uint4 { unsigned x, y, z, w; };\n"
	"static thread_local ts_emu_dim threadIdx, blockIdx;\n"
	"static thread_local int ts_emu_tid;\n"
	"static pthread_barrier_t ts_emu_bar, ts_emu_warp[32];\n"
	"#define __global__\n#define __device__\n"
	"#define __forceinline__ inline\n#define __shared__ static\n"
	"#define __restrict__ __restrict\n#define __launch_bounds__(n)\n"
	"#define __align__(n) __attribute__((aligned(n)))\n"
	"static inline void __syncthreads(void)\n"
	"{ pthread_barrier_wait(&ts_emu_bar); }\n"
	"static inline float __int_as_float(int i)\n"
	"{ float f; memcpy(&f, &i, 4); return f; }\n"
	"static inline double __longlong_as_double(long long i)\n"
	"{ double f; memcpy(&f, &i, 8); return f; }\n"
	/* glibc has __expf, __logf and __powf. */
	"static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }\n"
	"static inline double rsqrt(double x) { return 1.0 / sqrt(x); }\n"
	"template <typename T> T __shfl_down_sync(unsigned, T v, int o)\n"
	"{\n\tstatic T buf[1024];\n\tint w = ts_emu_tid / 32, l = ts_emu_tid % 32;\n"
	"\tT r;\n\tbuf[ts_emu_tid] = v;\n\tpthread_barrier_wait(&ts_emu_warp[w]);\n"
	"\tr = l + o < 32 ? buf[ts_emu_tid + o] : v;\n"
	"\tpthread_barrier_wait(&ts_emu_warp[w]);\n\treturn r;\n}\n"
	/* nvcuda::wmma: every lane holds the whole 16 x 16 tile of a
	 * fragment (the emitted code never looks at which lane owns which
	 * element); each call is collective: the 32 lanes of the warp meet
	 * in it, and the loads and stores check that they all name the same
	 * memory. */
	"static inline void __syncwarp(unsigned m = 0xffffffffu)\n"
	"{ (void)m; pthread_barrier_wait(&ts_emu_warp[ts_emu_tid / 32]); }\n"
	"static void ts_emu_collective(const void *p, unsigned ld)\n{\n"
	"\tstatic const void *ptr[1024];\n\tstatic unsigned lds[1024];\n"
	"\tint w = ts_emu_tid / 32;\n"
	"\tptr[ts_emu_tid] = p;\n\tlds[ts_emu_tid] = ld;\n"
	"\tpthread_barrier_wait(&ts_emu_warp[w]);\n"
	"\tfor (int l = w * 32; l < w * 32 + 32; l++)\n"
	"\t\tif (ptr[l] != p || lds[l] != ld) {\n"
	"\t\t\tfprintf(stderr, \"wmma: the lanes of warp %d name different"
	" tiles\\n\", w);\n\t\t\tabort();\n\t\t}\n"
	"\tpthread_barrier_wait(&ts_emu_warp[w]);\n}\n"
	"namespace nvcuda { namespace wmma {\n"
	"struct matrix_a {}; struct matrix_b {}; struct accumulator {};\n"
	"struct row_major {}; struct col_major {};\n"
	"enum layout_t { mem_row_major, mem_col_major };\n"
	"template <typename U, int M, int N, int K, typename T, typename L = void>\n"
	"struct fragment { T x[256]; };\n"
	"template <typename U, typename T, typename L>\n"
	"void load_matrix_sync(fragment<U, 16, 16, 16, T, L> &f, const T *p,\n"
	"\tunsigned ld)\n{\n\tts_emu_collective(p, ld);\n"
	"\tfor (int r = 0; r < 16; r++)\n\t\tfor (int c = 0; c < 16; c++)\n"
	"\t\t\tf.x[r * 16 + c] = std::is_same<L, col_major>::value ?\n"
	"\t\t\t\tp[r + c * ld] : p[r * ld + c];\n}\n"
	"template <typename F, typename V> void fill_fragment(F &f, V v)\n{\n"
	"\tts_emu_collective(NULL, 0);\n"
	"\tfor (int i = 0; i < 256; i++)\n\t\tf.x[i] = v;\n}\n"
	"template <typename D, typename A, typename B, typename C>\n"
	"void mma_sync(D &d, const A &a, const B &b, const C &c)\n{\n"
	"\tfloat t[256];\n\tts_emu_collective(NULL, 0);\n"
	"\tfor (int m = 0; m < 16; m++)\n\t\tfor (int n = 0; n < 16; n++) {\n"
	"\t\t\tfloat s = (float)c.x[m * 16 + n];\n"
	"\t\t\tfor (int k = 0; k < 16; k++)\n"
	"\t\t\t\ts += (float)a.x[m * 16 + k] * (float)b.x[k * 16 + n];\n"
	"\t\t\tt[m * 16 + n] = s;\n\t\t}\n"
	"\tfor (int i = 0; i < 256; i++)\n\t\td.x[i] = t[i];\n}\n"
	"template <typename T, typename F>\n"
	"void store_matrix_sync(T *p, const F &f, unsigned ld, layout_t l)\n{\n"
	"\tts_emu_collective(p, ld);\n"
	"\tif (ts_emu_tid % 32 == 0)\n"
	"\t\tfor (int r = 0; r < 16; r++)\n\t\t\tfor (int c = 0; c < 16; c++)\n"
	"\t\t\t\tp[l == mem_col_major ? r + c * ld : r * ld + c] =\n"
	"\t\t\t\t\tf.x[r * 16 + c];\n"
	"\tts_emu_collective(p, ld);\n}\n"
	"} }\n"
	"static void ts_emu_launch(unsigned gx, unsigned gy, unsigned gz,\n"
	"\tunsigned bx, unsigned by, unsigned bz, std::function<void()> k)\n"
	"{\n\tunsigned n = bx * by * bz;\n"
	"\tfor (unsigned z = 0; z < gz; z++)\n"
	"\tfor (unsigned y = 0; y < gy; y++)\n"
	"\tfor (unsigned x = 0; x < gx; x++) {\n"
	"\t\tstd::vector<std::thread> ts;\n"
	"\t\tpthread_barrier_init(&ts_emu_bar, NULL, n);\n"
	"\t\tfor (unsigned w = 0; w < 32; w++)\n"
	"\t\t\tpthread_barrier_init(&ts_emu_warp[w], NULL, n < 32 ? n : 32);\n"
	"\t\tfor (unsigned t = 0; t < n; t++)\n"
	"\t\t\tts.emplace_back([=] {\n"
	"\t\t\t\tblockIdx = { x, y, z };\n"
	"\t\t\t\tthreadIdx = { t % bx, t / bx % by, t / (bx * by) };\n"
	"\t\t\t\tts_emu_tid = t;\n\t\t\t\tk();\n\t\t\t});\n"
	"\t\tfor (auto &t : ts)\n\t\t\tt.join();\n"
	"\t\tpthread_barrier_destroy(&ts_emu_bar);\n"
	"\t\tfor (unsigned w = 0; w < 32; w++)\n"
	"\t\t\tpthread_barrier_destroy(&ts_emu_warp[w]);\n"
	"\t}\n}\n";

/* Append program "p" as namespace "ts_p<id>" to "b", with one launcher
 * "ts_emu_<id>_<k>" per kernel. */
static void add_program(ts_buf *b, const ts_cuda_program *p, int id)
{
	const char *s = p->source;
	const char *inc = "#include <cuda_fp16.h>\n", *ext = "extern \"C\" ";
	const char *mma = "#include <mma.h>\n";

	ts_buf_printf(b, "namespace ts_p%d {\n", id);
	while (*s) {
		if (!strncmp(s, inc, strlen(inc)))
			s += strlen(inc);
		else if (!strncmp(s, mma, strlen(mma)))
			s += strlen(mma);
		else if (!strncmp(s, ext, strlen(ext)))
			s += strlen(ext);
		else
			ts_buf_putc(b, *s++);
	}
	ts_buf_puts(b, "}\n");
	for (int k = 0; k < p->nkernels; k++) {
		const ts_cuda_launch_desc *l = &p->kernels[k];
		ts_buf_printf(b, "extern \"C\" void ts_emu_%d_%d(void **b)\n{\n"
			"\tts_emu_launch(%u, %u, %u, %u, %u, %u, [=] {\n"
			"\t\tts_p%d::%s(", id, k, l->grid[0], l->grid[1],
			l->grid[2], l->block[0], l->block[1], l->block[2], id,
			l->name);
		for (int i = 0; i < p->nbuffers; i++)
			ts_buf_printf(b, "%s(%s *)b[%d]", i ? ", " : "",
				ts_cuda_mem_type(p->buffers[i].tensor->dtype), i);
		ts_buf_puts(b, ");\n\t});\n}\n");
	}
}

/* One program to emulate and how to check it. */
struct job {
	const char *what;
	ts_ctx *ctx;
	const ts_dag *dag;
	ts_cuda_program *p;
	bool exact;		/* outputs must equal ts_eval bit for bit */
};

/* Compile "src" into a shared object in a temporary folder and open it;
 * fail the test with the compiler's output. */
static void *build(const char *src)
{
	char dir[] = "/tmp/tessel-emu-XXXXXX";
	char *cpp, *so, *cmd, *log;
	FILE *f;
	void *h;

	assert_non_null(mkdtemp(dir));
	cpp = ts_asprintf("%s/emu.cpp", dir);
	so = ts_asprintf("%s/emu.so", dir);
	log = ts_asprintf("%s/log", dir);
	assert_non_null(f = fopen(cpp, "w"));
	fputs(src, f);
	fclose(f);
	cmd = ts_asprintf("${CXX_FOR_TESTS:-g++} -std=c++17 -O1 -ffp-contract=off -w -fPIC "
		"-shared -pthread -o %s %s > %s 2>&1", so, cpp, log);
	if (system(cmd) != 0) {
		char text[4000] = "";
		if ((f = fopen(log, "r"))) {
			text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
			fclose(f);
		}
		fail_msg("the host compiler failed on %s:\n%s", cpp, text);
	}
	if (!(h = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
		fail_msg("dlopen: %s", dlerror());
	unlink(cpp);
	unlink(so);
	unlink(log);
	rmdir(dir);
	return h;
}

/* Run job "j" (number "id") from "h" and compare with ts_eval. */
static void check_job(void *h, const struct job *j, int id)
{
	ts_ctx *ctx = j->ctx;
	const ts_cuda_program *p = j->p;
	ts_array **in = ts_dag_random_inputs(ctx, j->dag, 5);
	ts_array **want = ts_new_array(ts_array *, j->dag->noutputs + 1);
	ts_array **out = ts_new_array(ts_array *, p->nbuffers + 1);
	void **bufs = ts_new_array(void *, p->nbuffers + 1);

	assert_non_null(in);
	assert_int_equal(ts_eval(ctx, j->dag, in, want), TS_OK);
	for (int i = 0; i < p->nbuffers; i++) {
		const ts_cuda_buffer *b = &p->buffers[i];
		if (b->arg >= 0 && b->arg < p->func->ninputs) {
			bufs[i] = in[b->arg]->data;
		} else if (b->arg >= 0) {
			out[i] = ts_array_for_tensor(ctx, b->tensor);
			bufs[i] = out[i]->data;
		} else {
			bufs[i] = ts_new_atomic(char, b->bytes + 1);
		}
	}
	for (int k = 0; k < p->nkernels; k++) {
		void (*run)(void **) = (void (*)(void **))dlsym(h,
			ts_asprintf("ts_emu_%d_%d", id, k));
		assert_non_null(run);
		run(bufs);
	}
	for (int i = 0; i < p->nbuffers; i++) {
		int o = p->buffers[i].arg - p->func->ninputs;
		double err = 0;
		if (p->buffers[i].arg < p->func->ninputs)
			continue;
		if (j->exact && memcmp(out[i]->data, want[o]->data,
		    (size_t)out[i]->size * ts_dtype_size(out[i]->dtype)))
			fail_msg("%s: output '%s' is not exactly ts_eval's\n%s",
				j->what, p->buffers[i].tensor->name, p->source);
		if (!ts_array_close(out[i], want[o], &err))
			fail_msg("%s: output '%s' differs from ts_eval by %g\n%s",
				j->what, p->buffers[i].tensor->name, err,
				p->source);
	}
}

/* The program of "dag" under "cfg" of "tp" emitted with "opts" (may be
 * NULL), or NULL when it launches more threads than the emulation runs
 * quickly. */
static ts_cuda_program *program(ts_ctx *ctx, const ts_dag *dag,
	const ts_gpu_template *tp, const ts_config *cfg,
	const ts_cuda_options *opts)
{
	ts_schedule *sch = ts_gpu_template_apply(tp, cfg);
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_cuda_program *p = f ? ts_cuda_emit(ctx, f, opts) : NULL;
	int64_t threads = 0;

	if (!p)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	for (int k = 0; k < p->nkernels; k++)
		threads += (int64_t)p->kernels[k].grid[0] * p->kernels[k].grid[1]
			* p->kernels[k].grid[2] * p->kernels[k].block[0] *
			p->kernels[k].block[1] * p->kernels[k].block[2];
	return threads <= 40000 ? p : NULL;
}

/* Skip the test when there is no host C++ compiler; else start the
 * source "src" with the emulation shim. */
static void emulation_begin(ts_buf *src)
{
	if (system("${CXX_FOR_TESTS:-g++} --version > /dev/null 2>&1") != 0) {
		print_message("skipping: no host C++ compiler\n");
		skip();
	}
	ts_buf_init(src);
	ts_buf_puts(src, shim);
}

/* Every tiny catalogue operator: the static h100 schedule and two
 * sampled configurations, emulated and compared with ts_eval. */
static void test_cuda_emulate_catalogue__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	struct job *jobs = ts_new_array(struct job, 4 * ts_catalogue_count);
	ts_ctx **ctxs = ts_new_array(ts_ctx *, ts_catalogue_count + 1);
	int n = 0;
	ts_buf src;
	void *h;

	emulation_begin(&src);
	for (int i = 0; i < ts_catalogue_count; i++) {
		ts_ctx *c = ctxs[i] = ts_ctx_alloc();
		ts_dag *dag = ts_catalogue[i].build(c, TS_SIZE_TINY);
		ts_gpu_static_result *r;
		int found = 0;
		ts_ctx_set_seed(c, 11);
		assert_non_null(dag);
		r = ts_gpu_static_fill(c, dag, ts_target_lookup(c, "h100"), 1);
		if (!r)
			fail_msg("%s: %s", ts_catalogue[i].name, ts_ctx_error(c));
		for (int tries = 0; found < 3 && tries < 100; tries++) {
			ts_config *cfg = tries ? ts_space_sample(r->tp->space,
				c) : r->best;
			ts_cuda_program *p;
			if (!ts_gpu_template_fits(r->tp, cfg) ||
			    !(p = program(c, dag, r->tp, cfg, NULL)))
				continue;
			jobs[n] = (struct job){ ts_asprintf("%s %s",
				ts_catalogue[i].name, ts_config_to_json(cfg)), c,
				dag, p };
			add_program(&src, p, n++);
			found++;
		}
	}
	h = build(src.s);
	for (int j = 0; j < n; j++)
		check_job(h, &jobs[j], j);
	print_message("%d programs emulated\n", n);
	assert_true(n >= ts_catalogue_count);
	dlclose(h);
	for (int i = 0; i < ts_catalogue_count; i++)
		ts_ctx_free(ctxs[i]);
	(void)ctx;
}

/* Declarations the catalogue lacks: f16 inputs with f32 accumulation and
 * an f16 result, a product of reductions, a 3-d max over two axes, the
 * trigonometric and hyperbolic functions in f32 and f64. */
static const char *const extra[] = {
	"input A: f16[48, 64]\ninput B: f16[64, 32]\n"
	"C[i: 48, j: 32] = sum(k: 64) f32(A[i, k]) * f32(B[k, j])\n"
	"output D[i: 48, j: 32]: f16 = max(C[i, j], 0.0)\n",
	"input X: f32[6, 40, 9]\n"
	"output M[b: 6] = max(i: 40, j: 9) X[b, i, j] * 2.0 - 1.0\n",
	"input X: f32[12, 300]\n"
	"output N[i: 12] = prod(k: 300) (X[i, k] * 0.01 + 1.0)\n",
	"input X: f32[40, 30]\ninput D: f64[30]\n"
	"output Y[i: 40, j: 30] = sin(X[i, j]) + cos(X[i, j]) + tan(X[i, j])\n"
	"  + asin(X[i, j] * 0.9) + acos(X[i, j] * 0.9) + atan(X[i, j])\n"
	"  + sinh(X[i, j]) + cosh(X[i, j]) + asinh(X[i, j])\n"
	"  + acosh(abs(X[i, j]) + 1.0) + atanh(X[i, j] * 0.9)\n"
	"  + f32(sin(D[j]) * cos(D[j]) + atanh(D[j] * 0.5))\n",
};

/* The extra declarations: static schedules for h100 and a100 and three
 * sampled configurations each, emulated and compared with ts_eval. */
static void test_cuda_emulate_extra__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	int nx = (int)(sizeof(extra) / sizeof(extra[0]));
	struct job *jobs = ts_new_array(struct job, 8 * nx);
	ts_ctx **ctxs = ts_new_array(ts_ctx *, nx + 1);
	int n = 0;
	ts_buf src;
	void *h;

	emulation_begin(&src);
	for (int i = 0; i < nx; i++) {
		ts_ctx *c = ctxs[i] = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(c, ts_asprintf("extra%d", i),
			extra[i]);
		static const char *const gpus[] = { "h100", "a100" };
		if (!dag)
			fail_msg("%s", ts_ctx_error(c));
		for (int g = 0; g < 2; g++) {
			ts_gpu_static_result *r = ts_gpu_static_fill(c, dag,
				ts_target_lookup(c, gpus[g]), 1);
			int found = 0;
			if (!r)
				fail_msg("%s", ts_ctx_error(c));
			for (int t = 0; found < (g ? 1 : 4) && t < 100; t++) {
				ts_config *cfg = t ? ts_space_sample(r->tp->space,
					c) : r->best;
				ts_cuda_program *p;
				if (!ts_gpu_template_fits(r->tp, cfg) ||
				    !(p = program(c, dag, r->tp, cfg, NULL)))
					continue;
				jobs[n] = (struct job){ ts_asprintf("extra%d %s",
					i, ts_config_to_json(cfg)), c, dag, p };
				add_program(&src, p, n++);
				found++;
			}
		}
	}
	h = build(src.s);
	for (int j = 0; j < n; j++)
		check_job(h, &jobs[j], j);
	print_message("%d programs emulated\n", n);
	assert_true(n >= 2 * nx);
	dlclose(h);
	for (int i = 0; i < nx; i++)
		ts_ctx_free(ctxs[i]);
	(void)ctx;
}

/* Turn every store in "s" of a plain load of another buffer named
 * "*.local" into a buffer of more than one element (the write-backs of
 * accumulator tiles, not their promotion into scalars) into the same value
 * through a max with -65504, so that the emitter cannot store fragments
 * straight to memory and goes through the warps' staging tiles. */
static void mask_writebacks(ts_ctx *ctx, ts_stmt *s)
{
	const char *n;

	if (!s)
		return;
	switch (s->kind) {
	case TS_STMT_STORE:
		if (s->value->kind != TS_EXPR_LOAD || s->value->tensor ==
		    s->buffer || ts_tensor_size(s->buffer) == 1)
			return;
		n = s->value->tensor->name;
		if (strlen(n) > 6 && !strcmp(n + strlen(n) - 6, ".local"))
			s->value = ts_binary(ctx, TS_OP_MAX, s->value,
				ts_float(ctx, -65504.0));
		return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			mask_writebacks(ctx, s->stmts[i]);
		return;
	case TS_STMT_IF:
		mask_writebacks(ctx, s->body);
		mask_writebacks(ctx, s->orelse);
		return;
	case TS_STMT_FOR: case TS_STMT_ALLOC:
		mask_writebacks(ctx, s->body);
		return;
	default:
		return;
	}
}

/* The program of "dag" under "cfg" of "tp" with its write-backs masked
 * (see mask_writebacks). */
static ts_cuda_program *staged_program(ts_ctx *ctx, const ts_dag *dag,
	const ts_gpu_template *tp, const ts_config *cfg)
{
	ts_schedule *sch = ts_gpu_template_apply(tp, cfg);
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_cuda_program *p;

	if (!f)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	mask_writebacks(ctx, f->body);
	if (!(p = ts_cuda_emit(ctx, f, NULL)))
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	return p;
}

/* The tensor-core declarations: sampled configurations of the h100
 * template with the tensor_core knob on (fused and not), emulated and
 * compared with ts_eval; each program must use wmma.  The first of them
 * is also emitted for a GPU without tensor cores, where the schedule
 * keeps its scalar meaning (one thread per warp of the schedule), and
 * with its write-backs masked, so that they go through the warps'
 * staging tiles. */
static void test_cuda_emulate_tensor_core__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	int nx = TS_TEST_NTC_DECLS;
	struct job *jobs = ts_new_array(struct job, 8 * nx);
	ts_ctx **ctxs = ts_new_array(ts_ctx *, nx + 1);
	int n = 0;
	ts_buf src;
	void *h;

	emulation_begin(&src);
	for (int i = 0; i < nx; i++) {
		ts_ctx *c = ctxs[i] = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(c, ts_asprintf("tc%d", i),
			ts_test_tc_decls[i]);
		const ts_dag_info *info = dag ? ts_analyze_dag(c, dag) : NULL;
		ts_gpu_template *tp = info ? ts_gpu_template_new(c, dag, info,
			ts_target_lookup(c, "h100")) : NULL;
		int knob, fuse, found = 0;
		ts_target *old = ts_new(ts_target);
		ts_cuda_program *scalar;
		ts_ctx_set_seed(c, 7);
		*old = *ts_target_lookup(c, "h100");
		old->gpu.arch = "sm_60";
		old->gpu.peak_tflops_tensor_f16 = 0;
		ts_target_finish(old);
		if (!tp)
			fail_msg("tc%d: %s", i, ts_ctx_error(c));
		knob = ts_space_find(tp->space, "C.tensor_core");
		fuse = ts_space_find(tp->space, "C.fuse");
		if (knob < 0)
			fail_msg("tc%d: no tensor_core knob: %s", i,
				ts_gpu_template_tc_reason(tp, dag->nstages - 1));
		for (int t = 0; found < 5 && t < 200; t++) {
			ts_config *cfg = ts_space_sample(tp->space, c);
			ts_cuda_program *p;
			ts_config_set(cfg, knob, 0, 1);
			if (fuse >= 0)
				ts_config_set(cfg, fuse, 0, found % 2);
			if (!ts_gpu_template_fits(tp, cfg) ||
			    !(p = program(c, dag, tp, cfg, NULL)))
				continue;
			if (found == 0 && (scalar = program(c, dag, tp, cfg,
			    &(ts_cuda_options){ .target = old }))) {
				assert_null(strstr(scalar->source, "wmma"));
				jobs[n] = (struct job){ ts_asprintf("tc%d for "
					"sm_60 %s", i, ts_config_to_json(cfg)), c,
					dag, scalar };
				add_program(&src, scalar, n++);
				scalar = staged_program(c, dag, tp, cfg);
				if (!strstr(scalar->source, "wmma::mma_sync") ||
				    !strstr(scalar->source, "__syncwarp();"))
					fail_msg("tc%d: no staged write-back in\n%s",
						i, scalar->source);
				jobs[n] = (struct job){ ts_asprintf("tc%d staged "
					"%s", i, ts_config_to_json(cfg)), c, dag,
					scalar };
				add_program(&src, scalar, n++);
			}
			if (!strstr(p->source, "wmma::mma_sync"))
				fail_msg("tc%d %s: no tensor cores in\n%s", i,
					ts_config_to_json(cfg), p->source);
			jobs[n] = (struct job){ ts_asprintf("tc%d %s", i,
				ts_config_to_json(cfg)), c, dag, p };
			add_program(&src, p, n++);
			found++;
		}
		if (found < 2)
			fail_msg("tc%d: only %d fitting configurations", i, found);
	}
	h = build(src.s);
	for (int j = 0; j < n; j++)
		check_job(h, &jobs[j], j);
	print_message("%d tensor-core programs emulated\n", n);
	dlclose(h);
	for (int i = 0; i < nx; i++)
		ts_ctx_free(ctxs[i]);
	(void)ctx;
}

/* Add to "jobs" (at "*n") and "src" the static h100 schedule and two
 * sampled configurations of "dag" ("name"), checked exactly when
 * "exact". */
static void add_sem_jobs(ts_ctx *c, const char *name, const ts_dag *dag,
	bool exact, struct job *jobs, int *n, ts_buf *src)
{
	ts_gpu_static_result *r = ts_gpu_static_fill(c, dag,
		ts_target_lookup(c, "h100"), 1);
	int found = 0;

	if (!r)
		fail_msg("%s: %s", name, ts_ctx_error(c));
	for (int t = 0; found < 3 && t < 100; t++) {
		ts_config *cfg = t ? ts_space_sample(r->tp->space, c) : r->best;
		ts_cuda_program *p;
		if (!ts_gpu_template_fits(r->tp, cfg) ||
		    !(p = program(c, dag, r->tp, cfg, NULL)))
			continue;
		jobs[*n] = (struct job){ ts_asprintf("%s %s", name,
			ts_config_to_json(cfg)), c, dag, p, exact };
		add_program(src, p, (*n)++);
		found++;
	}
	if (!found)
		fail_msg("%s: no configuration to emulate", name);
}

/* The declarations of semantics_decls.h and every reducer on every
 * dtype, emulated: the CUDA C gives exactly ts_eval's outputs (float
 * sums and products within rounding). */
static void test_cuda_emulate_semantics__equals_eval_exactly(void **state)
{
	int nt = (int)(sizeof(ts_test_sem_dtypes) / sizeof(char *));
	int nd = TS_TEST_NSEM_DECLS + 4 * nt, n = 0, k = 0;
	struct job *jobs = ts_new_array(struct job, 3 * nd);
	ts_ctx **ctxs = ts_new_array(ts_ctx *, nd + 1);
	ts_buf src;
	void *h;

	emulation_begin(&src);
	for (int i = 0; i < TS_TEST_NSEM_DECLS; i++, k++) {
		const struct ts_test_sem_decl *d = &ts_test_sem_decls[i];
		ts_ctx *c = ctxs[k] = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(c, d->name, d->src);
		ts_ctx_set_seed(c, 5);
		if (!dag)
			fail_msg("%s: %s", d->name, ts_ctx_error(c));
		add_sem_jobs(c, d->name, dag, d->exact, jobs, &n, &src);
	}
	for (int t = 0; t < nt; t++)
		for (int r = 0; r < 4; r++, k++) {
			char text[512];
			ts_ctx *c = ctxs[k] = ts_ctx_alloc();
			const char *name = ts_asprintf("%s_%s",
				ts_test_sem_reducers[r], ts_test_sem_dtypes[t]);
			ts_dag *dag = ts_parse_string(c, name,
				ts_test_sem_reduce_decl(text, sizeof(text), t, r));
			ts_ctx_set_seed(c, 5);
			if (!dag)
				fail_msg("%s: %s", name, ts_ctx_error(c));
			add_sem_jobs(c, name, dag, t < 4 || r == 1 || r == 2,
				jobs, &n, &src);
		}
	h = build(src.s);
	for (int j = 0; j < n; j++)
		check_job(h, &jobs[j], j);
	print_message("%d programs emulated\n", n);
	dlclose(h);
	for (int i = 0; i < k; i++)
		ts_ctx_free(ctxs[i]);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_cuda_emulate_catalogue__matches_eval),
		TS_TEST(test_cuda_emulate_extra__matches_eval),
		TS_TEST(test_cuda_emulate_tensor_core__matches_eval),
		TS_TEST(test_cuda_emulate_semantics__equals_eval_exactly),
	};

	if (getenv("TS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TS_TEST_FILTER"));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
