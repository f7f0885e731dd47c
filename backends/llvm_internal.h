/* Shared by the files of the LLVM backend: emission, target machines and
 * the pass pipeline, the JIT and the AOT writer.  Not installed. */
#ifndef TESSEL_BACKENDS_LLVM_INTERNAL_H
#define TESSEL_BACKENDS_LLVM_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include <tessel/backend.h>

#include "support/support.h"

/* A target machine and the strings it was made from (GC-allocated). */
struct ts_llvm_target {
	LLVMTargetMachineRef tm;	/* owned by the caller */
	const char *triple;
	const char *cpu;
	const char *features;
	bool host_arch;		/* same architecture and OS as this process */
};

/* The backend's state in a context (TS_SLOT_LLVM). */
struct ts_llvm_state {
	bool targets_ready;	/* LLVM's targets are registered */
	ts_module *modules;	/* live JIT modules, freed with the context */
};

/* The state of "ctx", created on first use. */
struct ts_llvm_state *ts_llvm_state(ts_ctx *ctx);
/* Register every LLVM target once for "ctx" (LLVM keeps them itself). */
void ts_llvm_init(ts_ctx *ctx);
/* Free the live modules of "state" (a context cleanup). */
void ts_llvm_free_modules(void *state);
/* Turn "err" into a message "what: <LLVM's message>" in "ctx"; consumes
 * "err".  Return TS_ERROR. */
ts_status ts_llvm_error(ts_ctx *ctx, LLVMErrorRef err, const char *what);
/* Make the target machine described by "opt" into "out"; "jit" picks the
 * JIT code model. */
ts_status ts_llvm_target(ts_ctx *ctx, const ts_compile_options *opt,
	bool jit, struct ts_llvm_target *out);
/* Emit "f" as a new module of "c" for "target", verified.  Return NULL
 * with a message in "ctx" on failure. */
LLVMModuleRef ts_llvm_emit(ts_ctx *ctx, LLVMContextRef c, const ts_func *f,
	const ts_compile_options *opt, const struct ts_llvm_target *target);
/* Run the default<On> pipeline of "opt" over "m" for "target". */
ts_status ts_llvm_optimize(ts_ctx *ctx, LLVMModuleRef m,
	const ts_compile_options *opt, const struct ts_llvm_target *target);
/* Emit, verify and optimise "f" into a new module of "c". */
LLVMModuleRef ts_llvm_build(ts_ctx *ctx, LLVMContextRef c, const ts_func *f,
	const ts_compile_options *opt, const struct ts_llvm_target *target);
/* "opt", or the defaults when it is NULL. */
const ts_compile_options *ts_llvm_options(const ts_compile_options *opt,
	ts_compile_options *storage);
/* Whether "f" contains a parallel loop (it then needs the runtime). */
bool ts_func_has_parallel(const ts_func *f);
/* The unary "op" (exp, log, tanh, sigmoid; erf for f32) of the float or
 * double scalar or vector "v" as inline IR built by "b" in "m" (no call,
 * so it vectorizes), or NULL when "op" has no expansion for its type. */
LLVMValueRef ts_llvm_math_unary(LLVMModuleRef m, LLVMBuilderRef b, ts_op op,
	LLVMValueRef v);
/* pow("a", "y") as inline IR for f32 scalars or vectors, or NULL. */
LLVMValueRef ts_llvm_math_pow(LLVMModuleRef m, LLVMBuilderRef b,
	LLVMValueRef a, LLVMValueRef y);

#endif
