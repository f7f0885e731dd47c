/* The JIT: a module compiled in memory through ORC's LLJIT, run on
 * arrays and timed. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "backends/llvm_internal.h"

struct ts_module {
	ts_ctx *ctx;
	const ts_func *f;
	LLVMOrcLLJITRef jit;	/* owns the code; NULL once freed */
	void (*packed)(void **args);	/* <sym>_packed */
	void *address;		/* <sym> */
	int threads;		/* 0: OpenMP's default */
	bool unaligned;		/* compiled with unaligned_args */
	ts_module *next;	/* in the context's list of live modules */
};

/* Functions the emitted code calls, defined in the JIT by address so
 * that they resolve even in a statically linked program. */
static const struct {
	const char *name;
	void *address;
} runtime_symbols[] = {
	{ "ts_runtime_parallel_for", (void *)ts_runtime_parallel_for },
	{ "ts_runtime_alloc", (void *)ts_runtime_alloc },
	{ "ts_runtime_free", (void *)ts_runtime_free },
	/* Math the emitted code calls (llvm_emit.c, emit_libm). */
	{ "erff", (void *)erff }, { "erf", (void *)erf },
	{ "sinf", (void *)sinf }, { "sin", (void *)sin },
	{ "cosf", (void *)cosf }, { "cos", (void *)cos },
	{ "tanf", (void *)tanf }, { "tan", (void *)tan },
	{ "asinf", (void *)asinf }, { "asin", (void *)asin },
	{ "acosf", (void *)acosf }, { "acos", (void *)acos },
	{ "atanf", (void *)atanf }, { "atan", (void *)atan },
	{ "sinhf", (void *)sinhf }, { "sinh", (void *)sinh },
	{ "coshf", (void *)coshf }, { "cosh", (void *)cosh },
	{ "asinhf", (void *)asinhf }, { "asinh", (void *)asinh },
	{ "acoshf", (void *)acoshf }, { "acosh", (void *)acosh },
	{ "atanhf", (void *)atanhf }, { "atanh", (void *)atanh },
};

/* Define the runtime symbols in the main dylib of "jit", and let it look
 * up anything else in this process. */
static ts_status define_runtime(ts_ctx *ctx, LLVMOrcLLJITRef jit)
{
	enum { N = sizeof(runtime_symbols) / sizeof(runtime_symbols[0]) };
	LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
	LLVMOrcCSymbolMapPair pairs[N];
	LLVMOrcMaterializationUnitRef mu;
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMErrorRef err;

	for (int i = 0; i < N; i++) {
		pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit,
			runtime_symbols[i].name);
		pairs[i].Sym.Address =
			(LLVMOrcExecutorAddress)runtime_symbols[i].address;
		pairs[i].Sym.Flags.GenericFlags =
			LLVMJITSymbolGenericFlagsExported |
			LLVMJITSymbolGenericFlagsCallable;
		pairs[i].Sym.Flags.TargetFlags = 0;
	}
	mu = LLVMOrcAbsoluteSymbols(pairs, N);	/* takes the names */
	err = LLVMOrcJITDylibDefine(jd, mu);	/* takes "mu" on success */
	if (err) {
		LLVMOrcDisposeMaterializationUnit(mu);
		return ts_llvm_error(ctx, err, "defining the runtime in the JIT");
	}
	err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
		LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
	if (err)
		return ts_llvm_error(ctx, err, "searching this process's symbols");
	LLVMOrcJITDylibAddGenerator(jd, gen);	/* the dylib owns "gen" */
	return TS_OK;
}

/* A new LLJIT generating code with "tm", which it takes. */
static LLVMOrcLLJITRef make_jit(ts_ctx *ctx, LLVMTargetMachineRef tm)
{
	LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITRef jit = NULL;
	LLVMErrorRef err;

	/* The builder takes the target machine builder, which took "tm". */
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b,
		LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
	err = LLVMOrcCreateLLJIT(&jit, b);	/* takes "b" */
	if (err) {
		ts_llvm_error(ctx, err, "creating the JIT");
		return NULL;
	}
	if (define_runtime(ctx, jit) < 0) {
		LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
		return NULL;
	}
	return jit;
}

/* The address of "name" in "jit", or NULL with an error. */
static void *lookup(ts_ctx *ctx, LLVMOrcLLJITRef jit, const char *name)
{
	LLVMOrcExecutorAddress addr = 0;
	LLVMErrorRef err = LLVMOrcLLJITLookup(jit, &addr, name);

	if (err) {
		ts_llvm_error(ctx, err, ts_asprintf("looking up '%s'", name));
		return NULL;
	}
	return (void *)(uintptr_t)addr;
}

/* Hand "m" (built in "tsc") to "jit" and look up the functions of "mod".
 * Return TS_ERROR with a message; "m" is consumed either way. */
static ts_status add_module(ts_module *mod, LLVMOrcThreadSafeContextRef tsc,
	LLVMModuleRef m)
{
	LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(mod->jit);
	LLVMOrcThreadSafeModuleRef tsm;
	LLVMErrorRef err;
	const char *sym = ts_func_symbol(mod->f);

	tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);	/* takes "m" */
	/* On success the JIT owns "tsm". */
	err = LLVMOrcLLJITAddLLVMIRModule(mod->jit, jd, tsm);
	if (err) {
		/* On failure the module stays ours. */
		LLVMOrcDisposeThreadSafeModule(tsm);
		return ts_llvm_error(mod->ctx, err, ts_asprintf("adding '%s' "
			"to the JIT", mod->f->name));
	}
	mod->address = lookup(mod->ctx, mod->jit, sym);
	mod->packed = lookup(mod->ctx, mod->jit, ts_asprintf("%s_packed", sym));
	return mod->address && mod->packed ? TS_OK : TS_ERROR;
}

/* Dispose the JIT of "m"; the module itself is GC memory. */
static void module_release(ts_module *m)
{
	if (m->jit)
		LLVMConsumeError(LLVMOrcDisposeLLJIT(m->jit));
	m->jit = NULL;
	m->address = NULL;
	m->packed = NULL;
}

/* Release the JIT of every live module of the backend state "state". */
void ts_llvm_free_modules(void *state)
{
	struct ts_llvm_state *st = state;

	for (ts_module *m = st->modules; m; m = m->next)
		module_release(m);
	st->modules = NULL;
}

/* Compile "f" with "opt" in a fresh thread-safe context. */
ts_module *ts_module_compile(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt)
{
	ts_compile_options storage;
	struct ts_llvm_target target;
	struct ts_llvm_state *st;
	LLVMOrcThreadSafeContextRef tsc;
	LLVMModuleRef m;
	ts_module *mod;

	opt = ts_llvm_options(opt, &storage);
	if (ts_llvm_target(ctx, opt, true, &target) < 0)
		return NULL;
	tsc = LLVMOrcCreateNewThreadSafeContext();
	m = ts_llvm_build(ctx, LLVMOrcThreadSafeContextGetContext(tsc), f, opt,
		&target);
	mod = ts_new(ts_module);
	mod->ctx = ctx;
	mod->f = f;
	mod->threads = opt->threads;
	mod->unaligned = opt->unaligned_args;
	if (m)
		mod->jit = make_jit(ctx, target.tm);	/* takes the machine */
	else
		LLVMDisposeTargetMachine(target.tm);
	target.tm = NULL;
	if (m && !mod->jit)
		LLVMDisposeModule(m);
	if (mod->jit && add_module(mod, tsc, m) < 0)
		module_release(mod);
	m = NULL;		/* owned by the JIT now, or disposed */
	/* The thread-safe module keeps the context alive as long as needed. */
	LLVMOrcDisposeThreadSafeContext(tsc);
	if (!mod->jit)
		return NULL;
	st = ts_llvm_state(ctx);
	mod->next = st->modules;
	st->modules = mod;
	return mod;
}

/* Release the JIT of "m" and forget it in its context. */
void ts_module_free(ts_module *m)
{
	struct ts_llvm_state *st;

	if (!m)
		return;
	st = ts_llvm_state(m->ctx);
	for (ts_module **p = &st->modules; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			break;
		}
	module_release(m);
}

/* Run the parallel loops of "m" on "threads" threads (0: the default). */
void ts_module_set_threads(ts_module *m, int threads)
{
	m->threads = threads > 0 ? threads : 0;
}

/* The address of the function compiled in "m". */
void *ts_module_address(ts_module *m)
{
	return m ? m->address : NULL;
}

/* The loop IR function that "m" was compiled from. */
const ts_func *ts_module_func(ts_module *m)
{
	return m ? m->f : NULL;
}

/* "t"'s dtype and shape as text, e.g. "f32[64, 32]". */
static const char *shape_text(ts_dtype t, int ndim, const int64_t *shape)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", ts_dtype_name(t));
	for (int i = 0; i < ndim; i++)
		ts_buf_printf(&b, "%s%lld", i ? ", " : "", (long long)shape[i]);
	ts_buf_putc(&b, ']');
	return b.s;
}

/* Check "a" against argument "i" of "f". */
static ts_status check_arg(ts_ctx *ctx, const ts_func *f, int i,
	const ts_array *a, bool unaligned)
{
	const ts_tensor *t = f->args[i];
	bool same = a && a->dtype == t->dtype && a->ndim == t->ndim;

	if (!a)
		return ts_ctx_set_error(ctx, "argument %d ('%s') of '%s' is "
			"missing", i, t->name, f->name);
	for (int k = 0; same && k < t->ndim; k++)
		same = a->shape[k] == t->shape[k];
	if (!same)
		return ts_ctx_set_error(ctx, "argument %d ('%s') of '%s': "
			"expected %s, got %s", i, t->name, f->name,
			shape_text(t->dtype, t->ndim, t->shape),
			shape_text(a->dtype, a->ndim, a->shape));
	if (!unaligned && (uintptr_t)a->data % 64)
		return ts_ctx_set_error(ctx, "argument %d ('%s') of '%s': its "
			"data is not 64-byte aligned", i, t->name, f->name);
	return TS_OK;
}

/* The data pointers of "args", checked against the arguments of "m". */
static void **arg_pointers(ts_module *m, ts_array *const *args)
{
	void **ptrs;

	if (!m->jit) {
		ts_ctx_set_error(m->ctx, "module '%s' was freed", m->f->name);
		return NULL;
	}
	if (!args) {
		ts_ctx_set_error(m->ctx, "no arguments given to '%s'",
			m->f->name);
		return NULL;
	}
	ptrs = ts_new_array(void *, m->f->nargs + 1);
	for (int i = 0; i < m->f->nargs; i++) {
		if (check_arg(m->ctx, m->f, i, args[i], m->unaligned) < 0)
			return NULL;
		ptrs[i] = args[i]->data;
	}
	return ptrs;
}

/* Call the function of "m" on "ptrs" with the module's thread count. */
static void call(ts_module *m, void **ptrs)
{
	int saved = ts_runtime_get_threads();

	if (m->threads)
		ts_runtime_set_threads(m->threads);
	m->packed(ptrs);
	if (m->threads)
		ts_runtime_set_threads(saved);
}

void ts_module_call(ts_module *m, void *const *ptrs)
{
	call(m, (void **)ptrs);
}

/* Run "m" once on "args" after checking them. */
ts_status ts_module_run(ts_module *m, ts_array *const *args)
{
	void **ptrs;

	if (!m)
		return TS_ERROR;
	ptrs = arg_pointers(m, args);
	if (!ptrs)
		return TS_ERROR;
	call(m, ptrs);
	return TS_OK;
}

/* The monotonic clock in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Order the doubles at "a" and "b" for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Fill "out" with the "n" samples "samples" and their statistics. */
static void timing_stats(ts_timing *out, double *samples, int n)
{
	double *sorted = ts_new_atomic(double, n), sum = 0;

	memcpy(sorted, samples, sizeof(double) * (size_t)n);
	out->samples = samples;
	out->nsamples = n;
	qsort(sorted, (size_t)n, sizeof(double), cmp_double);
	for (int i = 0; i < n; i++)
		sum += sorted[i];
	out->min_s = sorted[0];
	out->max_s = sorted[n - 1];
	out->mean_s = sum / n;
	out->median_s = n % 2 ? sorted[n / 2]
		: 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

ts_status ts_time_calls(ts_status (*run)(void *data), void *data,
	double min_total_s, ts_timing *out)
{
	double total = 0, *samples;
	int cap = 16, n = 0;

	if (!run || !out)
		return TS_ERROR;
	memset(out, 0, sizeof(*out));
	/* The samples are held here, on the collector's roots, until the
	 * end: "out" may live where the collector does not look (a
	 * Python ctypes structure), and an array reachable only from there
	 * was collected and reused while the loop still wrote to it (a
	 * median of 0 s under load). */
	samples = ts_new_atomic(double, cap);
	if (run(data) < 0)	/* warm-up: caches, pages, threads */
		return TS_ERROR;
	while (n < 3 || total < min_total_s) {
		double t0 = now_s(), dt;
		if (run(data) < 0)
			return TS_ERROR;
		dt = now_s() - t0;
		if (n == cap) {
			double *s = ts_new_atomic(double, 2 * cap);
			memcpy(s, samples, sizeof(double) * (size_t)cap);
			samples = s;
			cap *= 2;
		}
		samples[n++] = dt;
		total += dt;
	}
	timing_stats(out, samples, n);
	return TS_OK;
}

/* A module and its argument pointers, for ts_time_calls. */
struct timed_call {
	ts_module *m;
	void **ptrs;
};

/* Call the module of "data" (a struct timed_call) once. */
static ts_status call_timed(void *data)
{
	struct timed_call *t = data;

	call(t->m, t->ptrs);
	return TS_OK;
}

/* Time "m" on "args": a warm-up, then runs until "min_total_s" (at least 3). */
ts_status ts_module_time(ts_module *m, ts_array *const *args,
	double min_total_s, ts_timing *out)
{
	struct timed_call t = { m, NULL };

	if (!m || !out)
		return TS_ERROR;
	t.ptrs = arg_pointers(m, args);
	if (!t.ptrs)
		return TS_ERROR;
	return ts_time_calls(call_timed, &t, min_total_s, out);
}

ts_status ts_module_time_interleaved(ts_module *const *m, int n,
	ts_array *const *args, int rounds, double min_round_s,
	double *median_s)
{
	double *med;
	ts_timing t, all;

	if (!m || n < 1 || rounds < 1 || !median_s)
		return TS_ERROR;
	med = ts_new_atomic(double, (size_t)n * rounds);
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++) {
			if (ts_module_time(m[i], args, min_round_s, &t) < 0)
				return TS_ERROR;
			med[(size_t)i * rounds + r] = t.median_s;
		}
	for (int i = 0; i < n; i++) {
		timing_stats(&all, med + (size_t)i * rounds, rounds);
		median_s[i] = all.median_s;
	}
	return TS_OK;
}
