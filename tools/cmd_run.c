/* tessel run: compile a .tsl program under a schedule with the LLVM
 * backend, optionally check it against the reference interpreter, time
 * it and print milliseconds and GFLOP/s. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include <tessel/search.h>

#include "tools/commands.h"
#include "tools/network_tool.h"
#include "tools/options.h"

/* The command line of one run. */
struct run_opts {
	const char *file;	/* the .tsl program */
	const char *schedule;	/* "static", "naive" or a JSON file */
	const char *records;	/* a records log, or NULL */
	int threads;		/* 0: OpenMP's default */
	bool check;		/* compare with the interpreter */
	bool json;		/* one JSON object on stdout */
	uint64_t seed;		/* inputs */
	double min_time;	/* seconds of timed runs, at least */
	const char *target;	/* a CPU target this machine runs, NAME or
				 * FILE.json; cuda[:NAME|FILE.json]; or
				 * NULL: this CPU */
	const char *inputs;	/* folder of <input>.npy files, or NULL */
	const char *out;	/* folder receiving <output>.npy, or NULL */
	bool layout;		/* a network: choose its layouts by timing */
	bool layout_model;	/* ... or with the model (the default) */
	bool declared;		/* ... or keep them as declared */
};

/* Take "v" as the schedule of "o". */
static bool set_schedule(void *o, const char *v)
{
	return ts_tool_set_string(&((struct run_opts *)o)->schedule, v);
}

/* Take "v" as the records log of "o". */
static bool set_records(void *o, const char *v)
{
	return ts_tool_set_string(&((struct run_opts *)o)->records, v);
}

/* Take "v" as the thread count of "o". */
static bool set_threads(void *o, const char *v)
{
	return ts_tool_set_int(&((struct run_opts *)o)->threads, v, 1, 4096);
}

/* Ask "o" to check the outputs ("v" unused). */
static bool set_check(void *o, const char *v)
{
	((struct run_opts *)o)->check = true;
	return true;
}

/* Ask "o" for JSON output ("v" unused). */
static bool set_json(void *o, const char *v)
{
	((struct run_opts *)o)->json = true;
	return true;
}

/* Take "v" as the input seed of "o". */
static bool set_seed(void *o, const char *v)
{
	long long n;

	if (!ts_tool_parse_int(v, 0, INT64_MAX, &n))
		return false;
	((struct run_opts *)o)->seed = (uint64_t)n;
	return true;
}

/* Take "v" as the minimum timed seconds of "o". */
static bool set_min_time(void *o, const char *v)
{
	struct run_opts *r = o;
	char *end;

	r->min_time = strtod(v, &end);
	return *v && !*end && r->min_time >= 0 && r->min_time <= 600;
}

/* Take "v" as the target of "o" (checked when the program is read). */
static bool set_target(void *o, const char *v)
{
	return ts_tool_set_string(&((struct run_opts *)o)->target, v);
}

/* Take "v" as the folder of input files of "o". */
static bool set_inputs(void *o, const char *v)
{
	return ts_tool_set_string(&((struct run_opts *)o)->inputs, v);
}

/* Ask "o" to choose a network's layouts by timing ("v" unused). */
static bool set_layout(void *o, const char *v)
{
	((struct run_opts *)o)->layout = true;
	return true;
}

/* Ask "o" to choose a network's layouts with the model ("v" unused). */
static bool set_layout_model(void *o, const char *v)
{
	((struct run_opts *)o)->layout_model = true;
	return true;
}

/* Ask "o" to keep a network's layouts as declared ("v" unused). */
static bool set_declared(void *o, const char *v)
{
	((struct run_opts *)o)->declared = true;
	return true;
}

/* Take "v" as the folder "o" writes its outputs to. */
static bool set_out(void *o, const char *v)
{
	return ts_tool_set_string(&((struct run_opts *)o)->out, v);
}

/* The options of tessel run; add a row to add one. */
static const struct ts_tool_option run_options[] = {
	{ "--schedule", true, set_schedule,
	  "static (default), naive, or a schedule in a JSON file" },
	{ "--records", true, set_records,
	  "the best record of this log (else the static schedule);\n"
	  "                     of each task of a network" },
	{ "--threads", true, set_threads,
	  "threads of parallel loops (default: OpenMP's)" },
	{ "--layout", false, set_layout,
	  "a network: choose each subgraph's layout by timing\n"
	  "                     where --records holds none (and append it)" },
	{ "--layout-model", false, set_layout_model,
	  "a network: choose each subgraph's layout with the\n"
	  "                     model, no timing (not recorded; the default)" },
	{ "--declared-layouts", false, set_declared,
	  "a network: keep the layouts as declared (weights\n"
	  "                     blocked), no choice" },
	{ "--check", false, set_check,
	  "compare the outputs with the reference interpreter" },
	{ "--json", false, set_json,
	  "print one JSON object instead of text" },
	{ "--seed", true, set_seed, "seed of the random inputs (default 1)" },
	{ "--inputs", true, set_inputs,
	  "read every input from DIR/<name>.npy (dtype and shape\n"
	  "                     must match the declaration) instead of random "
	  "ones" },
	{ "--out", true, set_out,
	  "write every output as DIR/<name>.npy (DIR created if\n"
	  "                     missing)" },
	{ "--min-time", true, set_min_time,
	  "seconds of timed runs at least (default 0.2)" },
	{ "--target", true, set_target,
	  "a CPU this machine can stand in for (zen3 on an AVX-512\n"
	  "                     machine: its schedules and AVX2 code), NAME or\n"
	  "                     FILE.json; or cuda, cuda:NAME, cuda:FILE.json: on\n"
	  "                     the GPU, checked" },
};

/* The command line of tessel run. */
static const struct ts_tool_options run_command = {
	"run", run_options, sizeof(run_options) / sizeof(run_options[0]),
	"usage: tessel run FILE.tsl [options]\n\n"
	"Compile FILE.tsl with the LLVM backend for this machine, run it on "
	"random\ninputs and print the median time of repeated runs (after "
	"one warm-up)\nand GFLOP/s.  A network (two or more layers with weights of "
	"their own, or\n" TS_TOOL_STRING(TS_NETWORK_MIN_SUBGRAPHS) " loop "
	"nests or more) runs task by task through the executor, each task "
	"with\nits best record (--records) or its static schedule.  With "
	"--inputs and --out\nit runs on the data of .npy files (named as "
	"tessel eval names them) and\n--check compares with the interpreter "
	"on those inputs.\n\n",
	"0 success, 1 the compilation or the check failed, 2 bad usage\n"
	"or input",
};

char *ts_tool_read_text(ts_ctx *ctx, const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!fp) {
		ts_ctx_set_error(ctx, "cannot read '%s': %s", path,
			strerror(errno));
		return NULL;
	}
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (s = GC_MALLOC_ATOMIC(n + 1)) &&
	    fread(s, 1, (size_t)n, fp) == (size_t)n)
		s[n] = '\0';
	else
		s = NULL;
	fclose(fp);
	if (!s)
		ts_ctx_set_error(ctx, "cannot read '%s'", path);
	return s;
}

/* Lower "dag" under "schedule" ("naive", "static" or NULL, or a JSON
 * file) in "ctx"; "static" is the baseline the tuner measures, for the
 * host run with "threads" threads. */
ts_func *ts_tool_lower(ts_ctx *ctx, const ts_dag *dag, const char *schedule,
	const ts_target *target, int threads, const ts_schedule **used)
{
	ts_schedule *sch;
	char *text;

	if (schedule && !strcmp(schedule, "naive")) {
		sch = ts_schedule_naive(ctx, dag);
	} else if (!schedule || !strcmp(schedule, "static")) {
		const ts_target *tg = target ? target : ts_target_host(ctx);
		sch = tg ? ts_static_baseline(ctx, dag, tg, threads) : NULL;
	} else {
		text = ts_tool_read_text(ctx, schedule);
		sch = text ? ts_schedule_from_json(ctx, dag, text) : NULL;
	}
	if (used)
		*used = sch;
	return sch ? ts_lower(ctx, dag, sch) : NULL;
}

/* The floating-point operations of one run of "dag", from the analysis
 * of each stage (0 when a stage cannot be analysed). */
static double dag_flops(ts_ctx *ctx, const ts_dag *dag)
{
	double flops = 0;

	for (int i = 0; i < ts_dag_nstages(dag); i++) {
		ts_stage_info *si = ts_analyze_stage(ctx, ts_dag_stage(dag, i));
		if (!si) {
			ts_ctx_clear_error(ctx);
			return 0;
		}
		flops += (double)si->counts.flops;
	}
	return flops;
}

/* The results of one run. */
struct run_result {
	const char *kernel;	/* the function, or the network's name */
	int subgraphs, tasks;	/* of a network; 0 for one kernel */
	ts_timing timing;
	double flops;
	bool checked, passed;
	double max_abs_err;
	const ts_schedule *schedule;	/* of one kernel, or NULL */
	const char **task_hashes;	/* of a network: per task */
};

/* Compare the outputs in "args" with the interpreter on its inputs. */
static ts_status check_outputs(ts_ctx *ctx, const ts_dag *dag,
	ts_array **args, struct run_result *r)
{
	ts_array **want = GC_MALLOC(sizeof(*want) * (ts_dag_noutputs(dag) + 1));

	if (!want || ts_eval(ctx, dag, args, want) < 0)
		return TS_ERROR;
	r->checked = true;
	r->passed = true;
	r->max_abs_err = 0;
	for (int i = 0; i < ts_dag_noutputs(dag); i++) {
		double err = 0;
		if (!ts_array_close(args[ts_dag_ninputs(dag) + i], want[i],
			    &err))
			r->passed = false;
		r->max_abs_err = fmax(r->max_abs_err, err);
	}
	return TS_OK;
}

/* The inputs of "dag" for "o": read from o->inputs, else random from
 * o->seed; NULL after saying why ("*code": the exit code). */
static ts_array **run_inputs(ts_ctx *ctx, const struct run_opts *o,
	const ts_dag *dag, int *code)
{
	ts_array **in;

	if (o->inputs) {
		*code = TS_EXIT_USAGE;
		return ts_tool_read_inputs(ctx, dag, o->inputs, "run");
	}
	*code = TS_EXIT_FAIL;
	in = ts_tool_random_inputs(ctx, dag, o->seed);
	if (!in)
		ts_tool_report(ctx);
	return in;
}

/* Write the "n" outputs "out" of "dag" into o->out, when set. */
static ts_status write_outputs(ts_ctx *ctx, const struct run_opts *o,
	const ts_dag *dag, ts_array *const *out)
{
	for (int i = 0; o->out && i < ts_dag_noutputs(dag); i++)
		if (ts_tool_write_array(ctx, o->out,
			    ts_tensor_name(ts_dag_output(dag, i)), out[i],
			    "run") < 0)
			return TS_ERROR;
	return TS_OK;
}

/* The arguments of "dag": the inputs "in", then fresh outputs. */
static ts_array **make_args(ts_ctx *ctx, const ts_dag *dag, ts_array **in)
{
	int n = ts_dag_ninputs(dag) + ts_dag_noutputs(dag);
	ts_array **args = in ? GC_MALLOC(sizeof(*args) * (n + 1)) : NULL;

	if (!args)
		return NULL;
	for (int i = 0; i < n; i++) {
		args[i] = i < ts_dag_ninputs(dag)
			? in[i]
			: ts_array_for_tensor(ctx,
				  ts_dag_output(dag, i - ts_dag_ninputs(dag)));
		if (!args[i])
			return NULL;
	}
	return args;
}

/* Print "s" as a JSON string. */
static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* Print "r" for "o" as text or JSON. */
static void print_result(const struct run_opts *o,
	const struct run_result *r)
{
	double ms = r->timing.median_s * 1e3;
	double gflops = r->timing.median_s > 0 ? r->flops * 1e-9 /
		r->timing.median_s : 0;

	if (o->json) {
		printf("{\"file\": ");
		print_json_string(o->file);
		printf(", \"kernel\": ");
		print_json_string(r->kernel);
		if (r->subgraphs)
			printf(", \"subgraphs\": %d, \"tasks\": %d",
				r->subgraphs, r->tasks);
		if (r->schedule)
			printf(", \"schedule_hash\": \"%s\"",
				ts_schedule_hash(r->schedule));
		for (int t = 0; r->task_hashes && t < r->tasks; t++)
			printf("%s\"%s\"%s", t ? ", " :
				", \"task_schedules\": [", r->task_hashes[t],
				t == r->tasks - 1 ? "]" : "");
		printf(", \"median_ms\": %.6g, \"min_ms\": %.6g, \"runs\": %d, "
			"\"flops\": %.0f, \"gflops\": %.6g, \"threads\": %d, "
			"\"checked\": %s, \"passed\": %s, \"max_abs_err\": ", ms,
			r->timing.min_s * 1e3, r->timing.nsamples, r->flops,
			gflops, o->threads ? o->threads : ts_runtime_get_threads(),
			r->checked ? "true" : "false", !r->checked ? "null"
			: r->passed ? "true" : "false");
		if (r->checked && isfinite(r->max_abs_err))
			printf("%.6g}\n", r->max_abs_err);
		else
			printf("null}\n");
		return;
	}
	if (r->subgraphs)
		printf("%s: network %s (%d subgraphs, %d tasks) median %.4f ms "
			"(min %.4f ms, %d runs), %.2f GFLOP/s\n", o->file,
			r->kernel, r->subgraphs, r->tasks, ms,
			r->timing.min_s * 1e3, r->timing.nsamples, gflops);
	else
		printf("%s: %s median %.4f ms (min %.4f ms, %d runs), %.2f "
			"GFLOP/s\n", o->file, r->kernel, ms,
			r->timing.min_s * 1e3, r->timing.nsamples, gflops);
	if (r->checked)
		printf("check: %s (max abs error %.3g)\n", r->passed ? "pass"
			: "FAIL", r->max_abs_err);
}

/* How "o" compiles a network. */
static struct ts_tool_network_opts network_opts(const struct run_opts *o)
{
	struct ts_tool_network_opts no = { "run", o->records, o->threads, 0,
		o->schedule && !strcmp(o->schedule, "naive"), o->layout,
		o->layout_model, o->declared };

	return no;
}

/* Compile the network "p" of "dag" (for "host" with o->threads cores)
 * as "o" asks, check and time it; return the exit code. */
static int run_network(ts_ctx *ctx, const struct run_opts *o,
	const ts_dag *dag, const ts_partition *p, const ts_target *host)
{
	struct ts_tool_network_opts no = network_opts(o);
	struct run_result r = {.kernel = ts_dag_name(dag) ? ts_dag_name(dag)
							  : "network",
		.subgraphs = p->nsubgraphs,
		.tasks = p->ntasks};
	int code = TS_EXIT_OK;
	ts_network *net = ts_tool_network_compile(ctx, p, host, &no, &code);
	ts_array **in = net ? run_inputs(ctx, o, dag, &code) : NULL;
	ts_array **out = GC_MALLOC(sizeof(*out) * (ts_dag_noutputs(dag) + 1));

	if (!net)
		return code;
	if (!in) {
		ts_network_free(net);
		return code;
	}
	code = TS_EXIT_OK;	/* run_inputs left its failure code there */
	if (ts_network_run(net, in, out) < 0) {
		ts_tool_report(ctx);
		ts_network_free(net);
		return TS_EXIT_FAIL;
	}
	ts_tool_warnings(ctx);
	if (write_outputs(ctx, o, dag, out) < 0) {
		ts_network_free(net);
		return TS_EXIT_FAIL;
	}
	if (o->check) {
		code = ts_tool_network_check(ctx, dag, in, out, &r.max_abs_err,
			true);
		r.checked = true;
		r.passed = code == TS_EXIT_OK;
	}
	if (ts_network_time(net, in, o->min_time, &r.timing) < 0) {
		ts_tool_report(ctx);
		ts_network_free(net);
		return TS_EXIT_FAIL;
	}
	r.task_hashes = GC_MALLOC(sizeof(*r.task_hashes) * (p->ntasks + 1));
	for (int t = 0; t < p->ntasks; t++)
		r.task_hashes[t] = ts_schedule_hash(ts_network_task_schedule(
			net, t));
	ts_network_free(net);
	r.flops = (double)ts_partition_flops(p);
	print_result(o, &r);
	return code;
}

/* The partition of "dag" when "o" runs it as a network (no GPU target,
 * no schedule file), else NULL; "*host" receives the CPU target "cpu"
 * (NULL: this machine's). */
static ts_partition *network_of(ts_ctx *ctx, const struct run_opts *o,
	const ts_dag *dag, ts_target *cpu, ts_target **host, int *code)
{
	struct ts_tool_network_opts no = network_opts(o);

	if ((o->target && !cpu) || (o->schedule && strcmp(o->schedule,
	    "naive") && strcmp(o->schedule, "static")))
		return NULL;
	*host = cpu ? cpu : ts_target_host(ctx);
	if (!*host) {
		ts_ctx_clear_error(ctx);
		return NULL;
	}
	return ts_tool_network_partition(ctx, dag,
		ts_tool_target_threads(*host, o->threads), false, &no, code);
}

/* The CPU target of "o", when this machine can run its code; NULL
 * after a message otherwise. */
static ts_target *cpu_target(ts_ctx *ctx, const struct run_opts *o)
{
	ts_target *tg = ts_tool_target(ctx, o->target);
	ts_target *host = tg ? ts_target_host(ctx) : NULL;
	const char *why = NULL;

	if (!tg || !host) {
		ts_tool_report(ctx);
		return NULL;
	}
	if (!ts_target_runs_on(tg, host, &why)) {
		fprintf(stderr, "tessel run: this machine cannot run the code "
			"of target '%s': %s\n", tg->name, why);
		return NULL;
	}
	if (o->records) {
		fprintf(stderr, "tessel run: --records picks this machine's "
			"records: not with --target %s\n", o->target);
		return NULL;
	}
	return tg;
}

/* Compile, check and time the program of "o" in "ctx"; return the exit
 * code. */
static int run_program(ts_ctx *ctx, const struct run_opts *o)
{
	struct run_result r = { .max_abs_err = 0 };
	ts_compile_options opt = ts_compile_options_default();
	ts_dag *dag = ts_tool_load(ctx, o->file);
	ts_func *f;
	ts_module *m;
	ts_array **args, **in;
	ts_target *host = NULL, *cpu = NULL;
	ts_partition *p;
	int code = TS_EXIT_OK;

	if (dag && ts_dag_check_memory(ctx, dag) < 0)
		dag = NULL;
	if (dag && o->target && !ts_tool_is_cuda_target(o->target) &&
	    !(cpu = cpu_target(ctx, o)))
		return TS_EXIT_USAGE;

	if (o->out && ts_tool_make_dir(o->out, "run", "--out") < 0)
		return TS_EXIT_USAGE;
	if (dag && o->target && !cpu && (o->inputs || o->out)) {
		fprintf(stderr, "tessel run: --inputs and --out run on this "
			"CPU, not with --target %s\n", o->target);
		return TS_EXIT_USAGE;
	}
	if ((p = dag ? network_of(ctx, o, dag, cpu, &host, &code) : NULL))
		return run_network(ctx, o, dag, p, host);
	if (code != TS_EXIT_OK)
		return code;
	if (dag && o->target && !cpu) {
		ts_target *tg = ts_tool_cuda_target(ctx, o->target);
		if (!tg) {
			ts_tool_report(ctx);
			return TS_EXIT_USAGE;
		}
		return ts_tool_cuda_run(ctx, dag, tg, 20, o->seed);
	}
	if (!dag || !(f = o->records ? ts_tool_lower_records(ctx, dag,
	    o->records, o->threads, "run", &r.schedule) : ts_tool_lower(ctx,
	    dag, o->schedule, cpu, o->threads, &r.schedule))) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	ts_tool_warnings(ctx);
	if (!(in = run_inputs(ctx, o, dag, &code)))
		return code;
	opt = ts_compile_options_for(cpu);
	opt.threads = o->threads;
	if (!(m = ts_module_compile(ctx, f, &opt)) ||
		!(args = make_args(ctx, dag, in)) ||
		((o->check || o->out) && ts_module_run(m, args) < 0) ||
		write_outputs(ctx, o, dag, args + ts_dag_ninputs(dag)) < 0 ||
		(o->check && check_outputs(ctx, dag, args, &r) < 0) ||
		ts_module_time(m, args, o->min_time, &r.timing) < 0) {
		ts_tool_report(ctx);
		ts_module_free(m);
		return TS_EXIT_FAIL;
	}
	r.flops = dag_flops(ctx, dag);
	ts_module_free(m);
	r.kernel = ts_func_name(f);
	print_result(o, &r);
	return r.checked && !r.passed ? TS_EXIT_FAIL : TS_EXIT_OK;
}

/* Run "tessel run" with the "argc" arguments "argv" (argv[0] is "run"). */
int ts_cmd_run(int argc, char **argv)
{
	struct run_opts o = { .seed = 1, .min_time = 0.2 };
	ts_ctx *ctx;
	int code = ts_tool_parse_args(&run_command, argc, argv, &o, &o.file);

	if (code >= 0)
		return code;
	ctx = ts_ctx_alloc();
	if (!ctx) {
		fprintf(stderr, "tessel run: out of memory\n");
		return TS_EXIT_FAIL;
	}
	ts_ctx_set_seed(ctx, o.seed);
	code = run_program(ctx, &o);
	ts_ctx_free(ctx);
	return code;
}
