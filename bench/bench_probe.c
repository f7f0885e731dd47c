/* Look inside one static schedule: the configuration chosen for a
 * catalogue operator at its real size (or the DAG of a .tsl file), the model's estimate with its
 * parts per stage, the measured time, and on request the loop IR and the
 * assembly.  A configuration given as JSON replaces the static choice, to
 * measure what the model would have predicted for another point.
 *
 *   usage: bench_probe NAME|FILE.tsl [--threads N] [--config JSON] [--ir]
 *                      [--asm FILE] [--min-time S] [--naive]
 *                      [--target NAME|FILE.json] [--cold]
 *
 * With --cold, each run follows a plain copy of as many bytes as the
 * arguments hold (as bench_ops times its rows), which leaves them in the
 * last-level cache rather than the core's own: what a stage meets after
 * another stage ran, not after itself.
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include "bench/bench.h"
#include "examples/catalogue.h"

/* The options of the program. */
struct probe_opts {
	const char *name;
	int threads;
	const char *config;	/* JSON, or NULL for the static choice */
	bool ir;
	const char *asm_path;
	double min_time;
	bool naive;		/* also measure the naive schedule */
	bool cold;		/* a copy of the arguments' bytes between runs */
};

/* Time "m" on "args" of "dag" into "t" as --cold asks: interleaved with a
 * copy of the bytes the arguments hold.  Exit on failure. */
static void probe_time_cold(const ts_dag *dag, ts_module *m,
	ts_array **args, double min_time, ts_timing *t)
{
	struct bench_kernel k = { .m = m, .args = args };
	struct bench_copy c;
	struct bench_runner r[2];
	size_t n = 64;

	for (int i = 0; i < ts_dag_ninputs(dag) + ts_dag_noutputs(dag); i++)
		n += (size_t)args[i]->size * ts_dtype_size(args[i]->dtype);
	bench_copy_new(&c, n);
	r[0] = (struct bench_runner){ .name = "kernel",
		.run = bench_kernel_run, .arg = &k };
	r[1] = (struct bench_runner){ .name = "copy", .run = bench_copy_run,
		.arg = &c };
	bench_interleave(r, 2, 3, 100000, min_time);
	t->median_s = r[0].median;
	t->min_s = r[0].samples[0];
	for (int i = 1; i < r[0].nsamples; i++)
		if (r[0].samples[i] < t->min_s)
			t->min_s = r[0].samples[i];
	t->nsamples = r[0].nsamples;
	bench_copy_free(&c);
}

/* Print the model's estimate of every stage of "est" for "tp". */
static void probe_estimate(const ts_template *tp, const ts_estimate *est)
{
	for (int i = 0; i < ts_dag_nstages(ts_template_dag(tp)); i++) {
		const ts_estimate *e = &est[i];
		if (e->total <= 0)
			continue;
		printf("  stage %-6s %-9s total %.3f ms: compute %.3f, "
		       "L1 %.3f, L2 %.3f, L3 %.3f, DRAM %.3f, overhead %.3f "
		       "ms; "
		       "efficiency %.2f, %d threads\n",
			ts_stage_name(ts_dag_stage(ts_template_dag(tp), i)),
			ts_rule_name(
				ts_stage_plan_rule(ts_template_plan(tp, i))),
			e->total * 1e3, e->compute * 1e3, e->memory[0] * 1e3,
			e->memory[1] * 1e3, e->memory[2] * 1e3,
			e->memory[3] * 1e3, e->overhead * 1e3, e->efficiency,
			e->threads);
	}
}

/* Print the nest of every stage of "tp" under "cfg": trip counts, kinds,
 * vector and register tile. */
static void probe_nests(const ts_template *tp, const ts_config *cfg)
{
	for (int i = 0; i < ts_dag_nstages(ts_template_dag(tp)); i++)
		ts_template_print_nest(stdout, tp, cfg, i);
}

/* Write the assembly of "f" compiled for "o" (and the programs'
 * target) to o->asm_path, or its optimised LLVM IR when that ends in
 * ".ll". */
static ts_status probe_asm(ts_ctx *ctx, const ts_func *f,
	const struct probe_opts *o)
{
	ts_compile_options opt = bench_compile_options(ctx, o->threads);
	char *text;
	FILE *fp;

	size_t n = strlen(o->asm_path);
	bool ir = n > 3 && !strcmp(o->asm_path + n - 3, ".ll");

	if ((ir ? ts_module_emit_llvm_ir(ctx, f, &opt, &text) :
	    ts_module_emit_asm(ctx, f, &opt, &text)) < 0)
		return TS_ERROR;
	if (!(fp = fopen(o->asm_path, "w")))
		return ts_ctx_set_error(ctx, "cannot write '%s'", o->asm_path);
	fputs(text, fp);
	fclose(fp);
	return TS_OK;
}

/* Measure the naive schedule of "dag" in "ctx" (its loop IR too when
 * "o" asks for the IR); return the exit code. */
static int probe_naive(ts_ctx *ctx, const ts_dag *dag,
	const struct probe_opts *o)
{
	ts_func *f = ts_lower(ctx, dag, ts_schedule_naive(ctx, dag));
	ts_module *m = f ? bench_compile_func(ctx, f, 1) : NULL;
	ts_array **args;
	ts_timing t;

	if (f && o->ir)
		ts_func_print(stdout, f);
	if (!m || !(args = bench_args(ctx, dag, 1)) ||
	    ts_module_time(m, args, o->min_time, &t) < 0)
		bench_die(ctx, "naive");
	printf("naive median %.3f ms (min %.3f ms, %d runs)\n",
		t.median_s * 1e3, t.min_s * 1e3, t.nsamples);
	ts_module_free(m);
	return 0;
}

/* Probe the operator of "o" in "ctx"; return the exit code. */
static int probe_run(ts_ctx *ctx, const struct probe_opts *o)
{
	const struct ts_catalogue_entry *e = ts_catalogue_find(o->name);
	bool file = strstr(o->name, ".tsl") != NULL;
	ts_dag *dag = file ? ts_parse_file(ctx, o->name) :
		e ? e->build(ctx, TS_SIZE_REAL) : NULL;
	ts_static_result *r = dag ? bench_static(ctx, dag, o->threads) : NULL;
	ts_config *cfg = r ? r->best : NULL;
	ts_estimate *est;
	ts_func *f;
	ts_module *m;
	ts_array **args;
	ts_timing t;

	if (!e && !file)
		fprintf(stderr, "bench_probe: no operator '%s'\n", o->name);
	if (r && o->config)
		cfg = ts_config_from_json(ctx, ts_template_space(r->tp),
			o->config);
	if (!cfg)
		bench_die(ctx, o->name);
	est = GC_MALLOC_ATOMIC(sizeof(*est) * (size_t)ts_dag_nstages(dag));
	printf("%s, %d threads: %s\nmodel %.3f ms\n", o->name, o->threads,
		ts_config_to_json(cfg), ts_model_estimate(r->tp, cfg, est) * 1e3);
	probe_estimate(r->tp, est);
	probe_nests(r->tp, cfg);
	f = ts_lower(ctx, dag, ts_template_apply(r->tp, cfg));
	if (f && o->ir)
		ts_func_print(stdout, f);
	if (f && o->asm_path && probe_asm(ctx, f, o) < 0)
		bench_die(ctx, "assembly");
	m = bench_compile_func(ctx, f, o->threads);
	if (!m || !(args = bench_args(ctx, dag, 1)))
		bench_die(ctx, o->name);
	if (o->cold)
		probe_time_cold(dag, m, args, o->min_time, &t);
	else if (ts_module_time(m, args, o->min_time, &t) < 0)
		bench_die(ctx, o->name);
	printf("measured%s median %.3f ms (min %.3f ms, %d runs), %.1f "
		"GFLOP/s\n", o->cold ? " after a copy" : "", t.median_s * 1e3, t.min_s * 1e3, t.nsamples,
		bench_dag_flops(ctx, dag) / t.median_s * 1e-9);
	ts_module_free(m);
	return o->naive ? probe_naive(ctx, dag, o) : 0;
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void probe_parse(int argc, char **argv, struct probe_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0)
			o->threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--config") && i + 1 < argc)
			o->config = argv[++i];
		else if (!strcmp(argv[i], "--asm") && i + 1 < argc)
			o->asm_path = argv[++i];
		else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
			o->min_time = atof(argv[++i]);
		else if (!strcmp(argv[i], "--ir"))
			o->ir = true;
		else if (!strcmp(argv[i], "--naive"))
			o->naive = true;
		else if (!strcmp(argv[i], "--cold"))
			o->cold = true;
		else if (!strcmp(argv[i], "--target") && i + 1 < argc)
			bench_use_target(argv[++i]);
		else if (argv[i][0] != '-' && !o->name)
			o->name = argv[i];
		else
			o->name = NULL, i = argc;
	}
	if (!o->name) {
		fprintf(stderr, "usage: bench_probe NAME [--threads N] "
			"[--config JSON] [--ir] [--asm FILE] [--min-time S] "
			"[--naive] [--target NAME|FILE.json] [--cold]\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct probe_opts o = { .threads = 1, .min_time = 0.5 };
	ts_ctx *ctx;
	int code;

	probe_parse(argc, argv, &o);
	ctx = bench_ctx();
	code = probe_run(ctx, &o);
	ts_ctx_free(ctx);
	return code;
}
