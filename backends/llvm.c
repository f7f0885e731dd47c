/* The LLVM backend's common parts: per-context state, errors, target
 * machines for any triple and CPU, and the optimisation pipeline. */
#include <config.h>

#include <stdio.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <tessel/lower.h>

#include "backends/ir.h"
#include "backends/llvm_internal.h"

/* Return the default options: O3, sums' updates contracted, fast math off,
 * the host. */
ts_compile_options ts_compile_options_default(void)
{
	ts_compile_options o;

	memset(&o, 0, sizeof(o));
	o.opt_level = 3;
	o.contract = true;
	return o;
}

ts_compile_options ts_compile_options_for(const ts_target *t)
{
	ts_compile_options o = ts_compile_options_default();

	if (t && t->kind == TS_TARGET_CPU) {
		o.cpu = t->cpu.llvm_cpu;
		o.features = t->cpu.llvm_features;
	}
	return o;
}

/* Return "opt", or the defaults written to "storage" when "opt" is NULL. */
const ts_compile_options *ts_llvm_options(const ts_compile_options *opt,
	ts_compile_options *storage)
{
	if (opt)
		return opt;
	*storage = ts_compile_options_default();
	return storage;
}

/* Return the backend state of "ctx", made (with its cleanup) on first use. */
struct ts_llvm_state *ts_llvm_state(ts_ctx *ctx)
{
	void **slot = ts_ctx_slot(ctx, TS_SLOT_LLVM);

	if (!*slot) {
		*slot = ts_new(struct ts_llvm_state);
		ts_ctx_on_free(ctx, ts_llvm_free_modules, *slot);
	}
	return *slot;
}

/* Register every LLVM target, once per "ctx". */
void ts_llvm_init(ts_ctx *ctx)
{
	struct ts_llvm_state *st = ts_llvm_state(ctx);

	if (st->targets_ready)
		return;
	LLVMInitializeAllTargetInfos();
	LLVMInitializeAllTargets();
	LLVMInitializeAllTargetMCs();
	LLVMInitializeAllAsmPrinters();
	LLVMInitializeAllAsmParsers();
	st->targets_ready = true;
}

/* Record "what" and the message of "err" in "ctx"; consumes "err". */
ts_status ts_llvm_error(ts_ctx *ctx, LLVMErrorRef err, const char *what)
{
	char *msg = LLVMGetErrorMessage(err);	/* consumes "err" */

	ts_ctx_set_error(ctx, "%s: %s", what, msg ? msg : "(no message)");
	LLVMDisposeErrorMessage(msg);
	return TS_ERROR;
}

/* The "k"-th dash-separated component of "triple" (GC string). */
static char *triple_part(const char *triple, int k)
{
	const char *p = triple, *q;

	for (int i = 0; i < k && p; i++) {
		p = strchr(p, '-');
		if (p)
			p++;
	}
	if (!p)
		return ts_strdup("");
	q = strchr(p, '-');
	return q ? ts_strndup(p, (size_t)(q - p)) : ts_strdup(p);
}

/* Copy the LLVM string "s" into GC memory and dispose it. */
static const char *take_message(char *s)
{
	const char *r = ts_strdup(s ? s : "");

	LLVMDisposeMessage(s);
	return r;
}

/* "features" with "+name" turned into "-name" (a GC string). */
static const char *feature_off(const char *features, const char *name)
{
	char *on = ts_asprintf("+%s", name), *out = ts_strdup(features);
	size_t n = strlen(on);

	for (char *p = strstr(out, on); p; p = strstr(p + 1, on))
		if (p[n] == ',' || p[n] == '\0')
			*p = '-';
	return out;
}

/* "features" and every feature the host lacks turned off ("-name" in
 * LLVM's list of the host's features): a CPU name such as
 * sapphirerapids implies extensions its target description does not
 * list (AVX512-FP16), and JIT code runs here. */
static const char *host_lacks_off(const char *features)
{
	const char *host = take_message(LLVMGetHostCPUFeatures());
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_puts(&b, features);
	for (const char *f = host; *f;) {
		size_t n = strcspn(f, ",");

		if (*f == '-')
			ts_buf_printf(&b, "%s%.*s", b.len ? "," : "", (int)n, f);
		f += n + (f[n] == ',');
	}
	return b.s;
}

/* Fill the triple, CPU and features of "out" from "opt" and the host;
 * for the JIT ("jit"), code runs here and uses nothing the host lacks.
 * AVX512-FP16 is turned off: f16 arithmetic is computed in f32 (the
 * conversions need only F16C or AVX-512F), and LLVM 16 fails to select
 * instructions for some short f16 vectors with it ("Cannot select
 * extract_vector_elt", an abort, on a 2-lane f16 output vectorised over
 * a 3-row matrix product). */
static void target_names(const ts_compile_options *opt, bool jit,
	struct ts_llvm_target *out)
{
	const char *host = take_message(LLVMGetDefaultTargetTriple());
	const char *triple = take_message(LLVMNormalizeTargetTriple(
		opt->triple ? opt->triple : host));
	bool host_cpu;

	host = take_message(LLVMNormalizeTargetTriple(host));
	out->triple = triple;
	out->host_arch = !strcmp(triple_part(triple, 0), triple_part(host, 0))
		&& !strcmp(triple_part(triple, 2), triple_part(host, 2));
	host_cpu = !opt->cpu && (!opt->triple || !strcmp(triple, host));
	out->cpu = opt->cpu ? opt->cpu : host_cpu
		? take_message(LLVMGetHostCPUName()) : "generic";
	out->features = opt->features ? opt->features : host_cpu
		? take_message(LLVMGetHostCPUFeatures()) : "";
	out->features = feature_off(out->features, "avx512fp16");
	if (!strncmp(triple, "x86_64", 6) &&
	    !strstr(out->features, "-avx512fp16"))
		out->features = ts_asprintf("%s%s-avx512fp16", out->features,
			*out->features ? "," : "");
	if (jit && out->host_arch && !host_cpu)
		out->features = host_lacks_off(out->features);
}

/* The text LLVM wrote to stderr while "f" ran on "arg" (GC string). */
static const char *capture_stderr(void (*f)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	char *text = ts_new_atomic(char, 1025);
	int saved = -1;
	size_t n = 0;

	fflush(stderr);
	if (tmp && (saved = dup(2)) >= 0)
		dup2(fileno(tmp), 2);
	f(arg);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	if (tmp) {
		rewind(tmp);
		n = fread(text, 1, 1024, tmp);
		fclose(tmp);
	}
	text[n] = '\0';
	return text;
}

/* The arguments and result of LLVMCreateTargetMachine. */
struct machine_args {
	LLVMTargetRef t;
	const struct ts_llvm_target *names;
	LLVMCodeGenOptLevel level;
	bool jit;
	LLVMTargetMachineRef tm;
};

/* Call LLVMCreateTargetMachine with "p", a struct machine_args. */
static void create_machine_raw(void *p)
{
	struct machine_args *a = p;

	a->tm = LLVMCreateTargetMachine(a->t, a->names->triple,
		a->names->cpu, a->names->features, a->level, LLVMRelocPIC,
		a->jit ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
}

/* The target machine of target "t" named by "names".  LLVM prints
 * unknown CPUs and features to stderr and ignores them; when "check" (the
 * user named them) that text is captured and becomes an error of "ctx",
 * since the library never prints. */
static LLVMTargetMachineRef create_machine(ts_ctx *ctx, LLVMTargetRef t,
	const struct ts_llvm_target *names, LLVMCodeGenOptLevel level,
	bool jit, bool check)
{
	struct machine_args a = { t, names, level, jit, NULL };
	const char *said;
	size_t n;

	if (!check) {
		create_machine_raw(&a);
		return a.tm;
	}
	said = capture_stderr(create_machine_raw, &a);
	if (!strstr(said, "is not a recognized"))
		return a.tm;
	n = strcspn(said, "\n");
	ts_ctx_set_error(ctx, "target %s, cpu '%s', features '%s': %.*s",
		names->triple, names->cpu, names->features, (int)n, said);
	if (a.tm)
		LLVMDisposeTargetMachine(a.tm);
	return NULL;
}

/* Make the target machine of "opt" into "out" ("jit": JIT code model). */
ts_status ts_llvm_target(ts_ctx *ctx, const ts_compile_options *opt,
	bool jit, struct ts_llvm_target *out)
{
	static const LLVMCodeGenOptLevel levels[4] = {
		LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
		LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive,
	};
	LLVMTargetRef t;
	char *msg = NULL;
	int level = TS_MIN(TS_MAX(opt->opt_level, 0), 3);

	ts_llvm_init(ctx);
	memset(out, 0, sizeof(*out));
	target_names(opt, jit, out);
	if (LLVMGetTargetFromTriple(out->triple, &t, &msg)) {
		ts_ctx_set_error(ctx, "target triple '%s': %s", opt->triple ?
			opt->triple : out->triple, msg ? msg : "unknown target");
		LLVMDisposeMessage(msg);
		return TS_ERROR;
	}
	out->tm = create_machine(ctx, t, out, levels[level], jit,
		opt->cpu || opt->features);
	if (!out->tm && ts_ctx_error(ctx))
		return TS_ERROR;
	if (!out->tm)
		return ts_ctx_set_error(ctx, "LLVM made no target machine for "
			"'%s' (cpu '%s')", out->triple, out->cpu);
	return TS_OK;
}

/* Run the default<On> pipeline of "opt" over "m" for "target". */
ts_status ts_llvm_optimize(ts_ctx *ctx, LLVMModuleRef m,
	const ts_compile_options *opt, const struct ts_llvm_target *target)
{
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	int level = TS_MIN(TS_MAX(opt->opt_level, 0), 3);
	LLVMErrorRef err;

	LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
	LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 2);
	LLVMPassBuilderOptionsSetLoopUnrolling(po, level >= 2);
	LLVMPassBuilderOptionsSetLoopInterleaving(po, level >= 2);
	err = LLVMRunPasses(m, ts_asprintf("default<O%d>", level), target->tm,
		po);
	LLVMDisposePassBuilderOptions(po);
	if (err)
		return ts_llvm_error(ctx, err, ts_asprintf("optimising '%s'",
			LLVMGetModuleIdentifier(m, &(size_t){ 0 })));
	return TS_OK;
}

/* Emit "f", its loops split where its selects change value
 * (ts_func_split_selects), into a new module of "c", set its data layout,
 * optimise it. */
LLVMModuleRef ts_llvm_build(ts_ctx *ctx, LLVMContextRef c, const ts_func *f,
	const ts_compile_options *opt, const struct ts_llvm_target *target)
{
	LLVMModuleRef m = ts_llvm_emit(ctx, c, ts_func_split_selects(ctx, f),
		opt, target);
	LLVMTargetDataRef td;

	if (!m)
		return NULL;
	td = LLVMCreateTargetDataLayout(target->tm);
	LLVMSetModuleDataLayout(m, td);
	LLVMDisposeTargetData(td);
	if (ts_llvm_optimize(ctx, m, opt, target) < 0) {
		LLVMDisposeModule(m);
		return NULL;
	}
	return m;
}

/* Build "f" with a fresh context and target, then hand the module to
 * "fn" to turn into text ("*out"). */
static ts_status emit_text(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, bool assembly, char **out)
{
	ts_compile_options storage;
	struct ts_llvm_target target;
	LLVMContextRef c;
	LLVMModuleRef m;
	LLVMMemoryBufferRef buf = NULL;
	char *msg = NULL;
	ts_status st = TS_OK;

	opt = ts_llvm_options(opt, &storage);
	if (ts_llvm_target(ctx, opt, false, &target) < 0)
		return TS_ERROR;
	c = LLVMContextCreate();
	m = ts_llvm_build(ctx, c, f, opt, &target);
	if (!m) {
		st = TS_ERROR;
	} else if (!assembly) {
		*out = (char *)take_message(LLVMPrintModuleToString(m));
	} else if (LLVMTargetMachineEmitToMemoryBuffer(target.tm, m,
			LLVMAssemblyFile, &msg, &buf)) {
		st = ts_ctx_set_error(ctx, "assembly of '%s': %s", f->name,
			msg ? msg : "(no message)");
		LLVMDisposeMessage(msg);
	} else {
		*out = ts_strndup(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
		LLVMDisposeMemoryBuffer(buf);
	}
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(c);
	LLVMDisposeTargetMachine(target.tm);
	return st;
}

/* Write the optimised LLVM IR of "f" under "opt" to "*out". */
ts_status ts_module_emit_llvm_ir(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, char **out)
{
	return emit_text(ctx, f, opt, false, out);
}

/* Write the assembly of "f" under "opt" for its target to "*out". */
ts_status ts_module_emit_asm(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, char **out)
{
	return emit_text(ctx, f, opt, true, out);
}
