/* Tessel: the CPU backend (LLVM) and its small runtime.
 *
 * A ts_func of the loop IR becomes one LLVM function
 *
 *	void name(T0 *restrict in0, ..., Tk *restrict out0, ...)
 *
 * with one pointer per argument tensor (inputs, then outputs), each a
 * dense C-order array aligned to 64 bytes.  bool is stored as one byte
 * (0 or 1), f16 as IEEE binary16 bits.  It is compiled in memory (ORC
 * LLJIT) for running and timing, or ahead of time into an object file, a
 * shared library and a C header for any target LLVM knows.
 *
 * Parallel loops call ts_runtime_parallel_for (OpenMP underneath).  The
 * JIT resolves it in this process; an AOT shared library links the static
 * runtime libtessel_rt.a (installed next to libtessel) and OpenMP, so it
 * does not need libtessel at run time.
 *
 * Modules hold LLVM resources: free them with ts_module_free before their
 * context is freed, or leave them to be freed with it (and then do not
 * call ts_module_free).  Bound loops are for the CUDA backend, except
 * virtual threads, which run unrolled.
 */
#ifndef TESSEL_BACKEND_H
#define TESSEL_BACKEND_H

#include <tessel/dsl.h>
#include <tessel/loop.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How to compile.  Start from ts_compile_options_default(); a NULL
 * options pointer means the defaults. */
typedef struct ts_compile_options {
	int opt_level;		/* 0 to 3: the default<On> pipeline (3) */
	bool contract;		/* a float sum's update acc + x*y as
				 * llvm.fmuladd: FMA where the target
				 * has one (true); nothing else fuses */
	bool fast_math;		/* also allow reassociation, no NaN/inf,
				 * approximate functions (false) */
	const char *triple;	/* target triple; NULL: the host */
	const char *cpu;	/* target CPU; NULL: the host's CPU when
				 * compiling for the host, else "generic" */
	const char *features;	/* "+avx2,-avx512f"...; NULL: the host's
				 * features with the host CPU, else "" */
	int vector_width;	/* preferred vector width in bits for LLVM's
				 * own vectorisers; 0: the target's choice */
	int threads;		/* threads of parallel loops; 0: OpenMP's
				 * default */
	bool unaligned_args;	/* the arguments' data may be aligned to no
				 * more than their element (NumPy's arrays):
				 * no 64-byte promise to LLVM (false) */
} ts_compile_options;

ts_compile_options ts_compile_options_default(void);
/* The defaults, compiling for the CPU target "t": its LLVM cpu and
 * features (not its triple: for running here, on a CPU that
 * ts_target_runs_on accepts); NULL or a GPU: this machine. */
ts_compile_options ts_compile_options_for(
	__ts_keep __ts_null const ts_target *t);

/* A compiled function, ready to run. */
typedef struct ts_module ts_module;

/* Compile "f" for the host with "opt" (NULL: defaults) through the JIT.
 * Return NULL with a message in "ctx" on failure. */
__ts_give ts_module *ts_module_compile(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_func *f,
	__ts_keep __ts_null const ts_compile_options *opt);
/* Run the module's function on "args": one array per argument of the
 * function (inputs, then outputs), each checked against the argument's
 * dtype and shape. */
ts_status ts_module_run(__ts_keep ts_module *m,
	__ts_keep ts_array *const *args);

/* Run the module's function on the data pointers "ptrs", one per
 * argument (inputs, then outputs), with the module's threads and no
 * check: for bindings that check their arrays themselves, each against
 * its argument's dtype and shape, and its alignment (64 bytes, or the
 * element's size when compiled with unaligned_args). */
void ts_module_call(__ts_keep ts_module *m, __ts_keep void *const *ptrs);

/* Timings of repeated runs, in seconds. */
typedef struct ts_timing {
	double median_s;
	double min_s;
	double max_s;
	double mean_s;
	int nsamples;
	double *samples;	/* nsamples runs, in order (GC-allocated) */
} ts_timing;

/* Call "run"("data") once to warm up, then repeatedly until the calls add
 * up to at least "min_total_s" seconds (at least 3 calls), timed by the
 * monotonic clock; fill "out".  A failing call stops it with TS_ERROR. */
ts_status ts_time_calls(__ts_keep ts_status (*run)(void *data),
	__ts_keep __ts_null void *data, double min_total_s,
	__ts_keep ts_timing *out);

/* Run "m" once to warm up, then repeatedly until the runs add up to at
 * least "min_total_s" seconds (at least 3 runs); fill "out". */
ts_status ts_module_time(__ts_keep ts_module *m,
	__ts_keep ts_array *const *args, double min_total_s,
	__ts_keep ts_timing *out);
/* Time the "n" modules "m", which take the same arguments "args",
 * interleaved: "rounds" rounds, in each of which every module in turn is
 * timed by ts_module_time for "min_round_s" seconds at least (A B A B
 * ...), so that a change of load hits them alike.  "median_s"[i]
 * receives the median of module i's round medians. */
ts_status ts_module_time_interleaved(__ts_keep ts_module *const *m, int n,
	__ts_keep ts_array *const *args, int rounds, double min_round_s,
	__ts_keep double *median_s);
/* Set the number of threads of the module's parallel loops (0: the
 * OpenMP default). */
void ts_module_set_threads(__ts_keep ts_module *m, int threads);
/* The address of the compiled function, valid until "m" is released
 * (ts_module_free, or with its context). */
__ts_keep void *ts_module_address(__ts_keep ts_module *m);
/* The function "m" was compiled from. */
__ts_gc const ts_func *ts_module_func(__ts_keep ts_module *m);
void ts_module_free(__ts_take __ts_null ts_module *m);

/* Write the optimised LLVM IR (or the target's assembly) of "f" compiled
 * with "opt" into "*out" (GC-allocated text).  For reading, not for
 * running. */
ts_status ts_module_emit_llvm_ir(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_func *f,
	__ts_keep __ts_null const ts_compile_options *opt,
	__ts_keep char **out);
ts_status ts_module_emit_asm(__ts_keep ts_ctx *ctx, __ts_keep const ts_func *f,
	__ts_keep __ts_null const ts_compile_options *opt,
	__ts_keep char **out);

/* Ahead-of-time: write "dir"/<name>.o and "dir"/<name>.h, and when the
 * target is the host's architecture also "dir"/lib<name>.so, linked with
 * $CC (or cc).  For another architecture the object is written and a
 * warning says that the shared library needs a cross linker.  <name> is
 * f->name made a C identifier. */
ts_status ts_build_aot(__ts_keep ts_ctx *ctx, __ts_keep const ts_func *f,
	__ts_keep const char *dir,
	__ts_keep __ts_null const ts_compile_options *opt);
/* The C identifier used for "f" as symbol and file name. */
__ts_gc const char *ts_func_symbol(__ts_keep const ts_func *f);

/* The runtime.  "fn"("i", "closure") runs once for each i in [0, "n"),
 * spread over the threads (static schedule). */
typedef void (*ts_parallel_body)(int64_t i, void *closure);
void ts_runtime_parallel_for(int64_t n, __ts_keep ts_parallel_body fn,
	__ts_keep __ts_null void *closure);
/* Set the number of threads of later parallel loops started from the
 * calling thread (OpenMP's per-thread setting; 0 keeps it). */
void ts_runtime_set_threads(int threads);
int ts_runtime_get_threads(void);
/* Memory for a kernel's temporaries, 64-byte aligned, NULL when out of
 * memory; give it back with ts_runtime_free.  A few freed blocks are kept
 * per thread and handed out again, so that a kernel run over and over
 * does not get fresh pages from the system at each call. */
__ts_give __ts_null void *ts_runtime_alloc(int64_t bytes);
void ts_runtime_free(__ts_take __ts_null void *p);

#ifdef __cplusplus
}
#endif

#endif
