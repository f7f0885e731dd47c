/* tessel build: compile a .tsl program ahead of time into DIR/<name>.o,
 * DIR/<name>.h and (for this machine's architecture) DIR/lib<name>.so,
 * for any target triple and CPU. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tessel/search.h>

#include "tools/commands.h"
#include "tools/network_tool.h"
#include "tools/options.h"

/* The command line of one build. */
struct build_opts {
	const char *file;	/* the .tsl program */
	const char *out;	/* the output folder */
	const char *schedule;	/* "static", "naive" or a JSON file */
	const char *records;	/* a records log, or NULL */
	const char *triple;	/* NULL: this machine */
	const char *cpu;
	const char *features;
	bool fast_math;
	bool emit_text;		/* also <name>.ll and <name>.s */
	const char *target;	/* cuda[:NAME|FILE.json], or NULL: the CPU */
	int threads;		/* cores of the schedules; 0: all */
	int64_t seed;		/* draws the static choices */
	bool layout;		/* a network: choose its layouts by timing */
	bool layout_model;	/* ... or with the model (the default) */
	bool declared;		/* ... or keep them as declared */
};

/* Take "v" as the output folder of "o". */
static bool set_out(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->out, v);
}

/* Take "v" as the records log of "o". */
static bool set_records(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->records, v);
}

/* Take "v" as the schedule of "o". */
static bool set_schedule(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->schedule, v);
}

/* Take "v" as the target triple of "o". */
static bool set_triple(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->triple, v);
}

/* Take "v" as the target CPU of "o". */
static bool set_cpu(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->cpu, v);
}

/* Take "v" as the target features of "o" (may be empty). */
static bool set_features(void *o, const char *v)
{
	((struct build_opts *)o)->features = v;
	return true;
}

/* Ask "o" for fast math ("v" unused). */
static bool set_fast_math(void *o, const char *v)
{
	((struct build_opts *)o)->fast_math = true;
	return true;
}

/* Ask "o" for the LLVM IR and assembly as text too ("v" unused). */
static bool set_emit_text(void *o, const char *v)
{
	((struct build_opts *)o)->emit_text = true;
	return true;
}

/* Take "v" as the target of "o": a CPU description (host, a shipped
 * name, a JSON file) or "cuda", "cuda:NAME|FILE.json". */
static bool set_target(void *o, const char *v)
{
	return ts_tool_set_string(&((struct build_opts *)o)->target, v);
}

/* Take "v" as the cores the schedules of "o" are for. */
static bool set_threads(void *o, const char *v)
{
	return ts_tool_set_int(&((struct build_opts *)o)->threads, v, 1, 4096);
}

/* Take "v" as the seed of "o". */
static bool set_seed(void *o, const char *v)
{
	int n = 0;

	if (!ts_tool_set_int(&n, v, 0, INT32_MAX))
		return false;
	((struct build_opts *)o)->seed = n;
	return true;
}

/* Ask "o" to choose a network's layouts by timing ("v" unused). */
static bool set_layout(void *o, const char *v)
{
	((struct build_opts *)o)->layout = true;
	return true;
}

/* Ask "o" to choose a network's layouts with the model ("v" unused). */
static bool set_layout_model(void *o, const char *v)
{
	((struct build_opts *)o)->layout_model = true;
	return true;
}

/* Ask "o" to keep a network's layouts as declared ("v" unused). */
static bool set_declared(void *o, const char *v)
{
	((struct build_opts *)o)->declared = true;
	return true;
}

/* The options of tessel build; add a row to add one. */
static const struct ts_tool_option build_options[] = {
	{ "-o", true, set_out, "the output folder (created if missing)" },
	{ "--schedule", true, set_schedule,
	  "static (default), naive, or a schedule in a JSON file" },
	{ "--records", true, set_records,
	  "the best record of this log for the host (else static);\n"
	  "                     a network's layouts too, when it has them" },
	{ "--layout", false, set_layout,
	  "a network: choose each subgraph's layout by timing\n"
	  "                     where --records holds none (and append it)" },
	{ "--layout-model", false, set_layout_model,
	  "a network: choose each subgraph's layout with the\n"
	  "                     model, no timing (not recorded; the default)" },
	{ "--declared-layouts", false, set_declared,
	  "a network: keep the layouts as declared (weights\n"
	  "                     blocked), no choice" },
	{ "--target-triple", true, set_triple,
	  "e.g. aarch64-linux-gnu (default: this machine)" },
	{ "--cpu", true, set_cpu,
	  "e.g. znver3, skylake-avx512, neoverse-n1 (default: this CPU)" },
	{ "--features", true, set_features,
	  "LLVM target features, e.g. +avx2,-avx512f" },
	{ "--fast-math", false, set_fast_math,
	  "allow reassociation and approximate functions" },
	{ "--target", true, set_target,
	  "the CPU to schedule for: host (default), zen3, zen4, zen5,\n"
	  "                     skylake-sp, sapphire-rapids, neoverse-n1,\n"
	  "                     apple-m1 or FILE.json (its triple and\n"
	  "                     cpu are the defaults); or cuda, cuda:NAME,\n"
	  "                     cuda:FILE.json: CUDA C, cubin or PTX, header" },
	{ "--emit-text", false, set_emit_text,
	  "also write DIR/<name>.ll (LLVM IR) and DIR/<name>.s (assembly)" },
	{ "--threads", true, set_threads,
	  "the cores the schedules are for, and of the host whose\n"
	  "                     records apply (default: all)" },
	{ "--seed", true, set_seed,
	  "seed of the static choices, as tessel run's (default 1)" },
};

/* The command line of tessel build. */
static const struct ts_tool_options build_command = {
	"build", build_options, sizeof(build_options) /
	sizeof(build_options[0]),
	"usage: tessel build FILE.tsl -o DIR [options]\n\n"
	"Compile FILE.tsl ahead of time: DIR/<name>.o and DIR/<name>.h for "
	"the target,\nand DIR/lib<name>.so when the target has this "
	"machine's architecture\n(linked with $CC, default cc).  A network "
	"(two or more layers with weights\nof their own, or "
	TS_TOOL_STRING(TS_NETWORK_MIN_SUBGRAPHS) " loop nests or "
	"more) becomes one library for this\nmachine, DIR/lib<file>.so, with "
	"one entry point; each task takes its best\nrecord (--records) or "
	"the static schedule.\n\n",
	"0 success, 1 the compilation failed, 2 bad usage or input",
};

/* Fill "o" from "argc" and "argv"; return -1 to go on, or the exit
 * code. */
static int parse_args(int argc, char **argv, struct build_opts *o)
{
	int code = ts_tool_parse_args(&build_command, argc, argv, o, &o->file);

	if (code < 0 && !o->out) {
		fprintf(stderr, "tessel build: -o DIR is required\n");
		return TS_EXIT_USAGE;
	}
	return code;
}

/* Write the LLVM IR ("assembly": the assembly) of "f" under "opt" to
 * "dir"/"sym".ll (.s) and print its path. */
static ts_status write_text(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, const char *dir, const char *sym,
	bool assembly)
{
	char path[4096], *text = NULL;
	FILE *fp;
	bool ok;

	if ((assembly ? ts_module_emit_asm(ctx, f, opt, &text)
	     : ts_module_emit_llvm_ir(ctx, f, opt, &text)) < 0)
		return TS_ERROR;
	snprintf(path, sizeof(path), "%s/%s.%s", dir, sym, assembly ? "s"
		: "ll");
	fp = fopen(path, "w");
	ok = fp && fputs(text, fp) >= 0;
	if (fp)
		ok = fclose(fp) == 0 && ok;
	if (!ok)
		return ts_ctx_set_error(ctx, "cannot write '%s'", path);
	printf("%s\n", path);
	return TS_OK;
}

/* The lowered program of "dag" under the schedule "o" asks for: the best
 * record of a log, a given schedule, or (the default) the static
 * schedule for the CPU description "cpu". */
static ts_func *build_func(ts_ctx *ctx, const ts_dag *dag,
	const struct build_opts *o, const ts_target *cpu)
{
	ts_schedule *sch;

	if (o->records)
		return ts_tool_lower_records(ctx, dag, o->records, o->threads,
			"build", NULL);
	if (o->schedule && strcmp(o->schedule, "static"))
		return ts_tool_lower(ctx, dag, o->schedule, NULL, o->threads,
			NULL);
	sch = ts_static_baseline(ctx, dag, cpu, o->threads);
	return sch ? ts_lower(ctx, dag, sch) : NULL;
}

/* The option of "o" that a network build cannot honour, or NULL. */
static const char *network_conflict(const struct build_opts *o)
{
	if (o->triple)
		return "--target-triple";
	if (o->cpu)
		return "--cpu";
	if (o->features)
		return "--features";
	if (o->fast_math)
		return "--fast-math";
	if (o->emit_text)
		return "--emit-text";
	if (o->target && strcmp(o->target, "host"))
		return "--target";
	return NULL;
}

/* Build the network "p" of "o" for "host" as "no" says into one library;
 * return the exit code. */
static int build_network(ts_ctx *ctx, const struct build_opts *o,
	const struct ts_tool_network_opts *no, const ts_partition *p,
	const ts_target *host)
{
	const char *bad = network_conflict(o), *name;
	ts_network *net;
	int code = TS_EXIT_OK;

	if (bad || (o->schedule && strcmp(o->schedule, "naive") &&
	    strcmp(o->schedule, "static"))) {
		fprintf(stderr, "tessel build: '%s' is a network of %d "
			"subgraphs: it is built for this machine, each task "
			"with its record or static schedule (%s does not "
			"apply)\n", o->file, p->nsubgraphs, bad ? bad :
			"--schedule FILE");
		return TS_EXIT_USAGE;
	}
	if (!(net = ts_tool_network_compile(ctx, p, host, no, &code)))
		return code;
	name = ts_tool_network_name(o->file);
	mkdir(o->out, 0777);
	if (ts_network_build_aot(ctx, net, o->out, name) < 0) {
		ts_tool_report(ctx);
		ts_network_free(net);
		return TS_EXIT_FAIL;
	}
	ts_tool_warnings(ctx);
	printf("%s/%s.h\n%s/lib%s.so\n", o->out, name, o->out, name);
	ts_tool_print_schedules(stdout, net);
	ts_network_free(net);
	return TS_EXIT_OK;
}

/* Lower and compile the program of "o" in "ctx"; return the exit code. */
static int build_program(ts_ctx *ctx, const struct build_opts *o)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_dag *dag = ts_tool_load(ctx, o->file);
	ts_target *cpu;
	const char *sym;
	char so[4096];
	ts_partition *p;
	ts_func *f;
	struct ts_tool_network_opts no = { "build", o->records, o->threads,
		0, o->schedule && !strcmp(o->schedule, "naive"), o->layout,
		o->layout_model, o->declared };
	int code = TS_EXIT_OK;

	if (dag && o->target && ts_tool_is_cuda_target(o->target)) {
		ts_target *tg = ts_tool_cuda_target(ctx, o->target);
		if (!tg) {
			ts_tool_report(ctx);
			return TS_EXIT_USAGE;
		}
		mkdir(o->out, 0777);
		return ts_tool_cuda_build(ctx, dag, tg, o->out, o->fast_math);
	}
	cpu = dag ? ts_tool_target(ctx, o->target) : NULL;
	if (cpu && cpu->kind != TS_TARGET_CPU) {
		ts_ctx_set_error(ctx, "target '%s' is a GPU: write --target "
			"cuda:%s", o->target, o->target);
		cpu = NULL;
	}
	if (cpu && cpu->kind == TS_TARGET_CPU && (p = ts_tool_network_partition(
	    ctx, dag, ts_tool_target_threads(cpu, o->threads), false, &no,
	    &code)))
		return build_network(ctx, o, &no, p, cpu);
	if (code != TS_EXIT_OK)
		return code;
	if (!cpu || !(f = build_func(ctx, dag, o, cpu))) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	/* A description given with --target also says what to generate
	 * code for, unless --target-triple or --cpu say otherwise. */
	opt.triple = o->triple ? o->triple : o->target ? cpu->cpu.triple : NULL;
	opt.cpu = o->cpu ? o->cpu : o->target ? cpu->cpu.llvm_cpu : NULL;
	opt.features = o->features ? o->features :
		o->target && !o->cpu ? cpu->cpu.llvm_features : NULL;
	opt.fast_math = o->fast_math;
	if (ts_build_aot(ctx, f, o->out, &opt) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	ts_tool_warnings(ctx);
	sym = ts_func_symbol(f);
	if (o->emit_text && (write_text(ctx, f, &opt, o->out, sym, false) < 0 ||
	    write_text(ctx, f, &opt, o->out, sym, true) < 0)) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	printf("%s/%s.h\n%s/%s.o\n", o->out, sym, o->out, sym);
	snprintf(so, sizeof(so), "%s/lib%s.so", o->out, sym);
	if (access(so, F_OK) == 0)
		printf("%s\n", so);
	return TS_EXIT_OK;
}

/* An ONNX model's weights beside what was built, as DIR/<name>.npy: the
 * built function takes them as arguments. */
static int write_weights(ts_ctx *ctx, const struct build_opts *o)
{
	const ts_onnx_model *m;
	ts_dag *dag = ts_tool_is_onnx(o->file) ? ts_tool_load(ctx, o->file) :
		NULL;

	if (!dag || !(m = ts_tool_model(dag)))
		return TS_EXIT_OK;
	for (int i = 0; i < ts_onnx_nweights(m); i++)
		if (ts_tool_write_array(ctx, o->out, ts_onnx_weight_name(m, i),
		    ts_onnx_weight(m, i), "build") < 0)
			return TS_EXIT_FAIL;
	if (ts_onnx_nweights(m))
		printf("%s/<weight>.npy (%d weights of the model)\n", o->out,
			ts_onnx_nweights(m));
	return TS_EXIT_OK;
}

/* Run "tessel build" with the "argc" arguments "argv" (argv[0] is
 * "build"). */
int ts_cmd_build(int argc, char **argv)
{
	struct build_opts o = { .seed = 1 };
	ts_ctx *ctx;
	int code = parse_args(argc, argv, &o);

	if (code >= 0)
		return code;
	ctx = ts_ctx_alloc();
	if (!ctx) {
		fprintf(stderr, "tessel build: out of memory\n");
		return TS_EXIT_FAIL;
	}
	/* The seed of tessel run: both compile the same static choices. */
	ts_ctx_set_seed(ctx, (uint64_t)o.seed);
	code = build_program(ctx, &o);
	if (code == TS_EXIT_OK)
		code = write_weights(ctx, &o);
	ts_ctx_free(ctx);
	return code;
}
