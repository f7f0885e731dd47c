/* tessel schedule: choose a schedule statically (no measurement) from the
 * analysis and a hardware description, and print it: per stage its class
 * and rule, the chosen knobs, the schedule steps, and optionally the
 * lowered loop IR and the top-k ranked configurations. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <tessel/tessel.h>

#include "tools/commands.h"

struct schedule_opts {
	const char *file;
	const char *target;	/* "host", a shipped name or a JSON file */
	int topk;
	int threads;		/* 0: every core of the target */
	uint64_t seed;
	const char *config;	/* a configuration to rate instead, or NULL */
	bool json;
	bool show_ir;
	bool show_code;		/* GPU targets: print the CUDA C */
};

static void schedule_usage(FILE *out)
{
	fprintf(out, "usage: tessel schedule FILE.tsl [--target host|NAME|FILE.json] "
		"[--topk K]\n       [--threads N] [--seed S] [--json] "
		"[--show-ir]\n\n"
		"Choose a schedule for every stage of FILE.tsl from the analysis "
		"and a\nhardware description, with no measurement, and print it.\n\n"
		"  --target T   host (default: this machine), a shipped "
		"description\n               (zen3, zen4, zen5, skylake-sp, "
		"sapphire-rapids,\n               neoverse-n1, apple-m1) or a "
		"JSON file\n"
		"  --topk K     also print the K best ranked configurations\n"
		"  --config C   rate and print configuration C (JSON text or a "
		"file\n               holding it, as --json prints under "
		"\"config\")\n               instead of the best one; a knob "
		"it leaves out takes\n               its first value, a split "
		"keeps its whole extent outermost\n"
		"  --threads N  schedule for N threads (default: the target's "
		"cores)\n"
		"  --seed S     seed of the random part of the search (default 1)\n"
		"  --json       print one JSON object\n"
		"  --show-ir    print the lowered loop IR\n"
		"  --show-code  GPU targets (cuda, cuda:NAME|FILE.json): print "
		"the CUDA C\n\n"
		"exit codes: 0 success, 1 failure, 2 bad usage or input\n");
}

/* Parse "argv" into "o"; return -1 after printing the usage on error. */
static int parse_opts(int argc, char **argv, struct schedule_opts *o)
{
	o->target = "host";
	o->seed = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (!strcmp(a, "--help")) {
			schedule_usage(stdout);
			exit(TS_EXIT_OK);
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--show-ir")) {
			o->show_ir = true;
		} else if (!strcmp(a, "--show-code")) {
			o->show_code = true;
		} else if (!strcmp(a, "--target") && has_value) {
			o->target = argv[++i];
		} else if (!strcmp(a, "--config") && has_value) {
			o->config = argv[++i];
		} else if (!strcmp(a, "--topk") && has_value) {
			o->topk = atoi(argv[++i]);
		} else if (!strcmp(a, "--threads") && has_value) {
			o->threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--seed") && has_value) {
			o->seed = strtoull(argv[++i], NULL, 10);
		} else if (a[0] == '-' || o->file) {
			fprintf(stderr, "tessel schedule: unexpected argument "
				"'%s'\n", a);
			return -1;
		} else {
			o->file = a;
		}
	}
	if (!o->file || o->topk < 0 || o->threads < 0) {
		fprintf(stderr, "tessel schedule: %s\n", !o->file ?
			"no input file" : "--topk and --threads take a "
			"non-negative number");
		return -1;
	}
	return 0;
}

/* The hardware description named by "name": the host, a shipped
 * description, or a JSON file. */
ts_target *ts_tool_target(ts_ctx *ctx, const char *name)
{
	if (!name || !strcmp(name, "host"))
		return ts_target_host(ctx);
	if (ts_tool_is_cuda_target(name))
		return ts_tool_cuda_target(ctx, name);
	if (strchr(name, '/') || strstr(name, ".json"))
		return ts_target_from_json_file(ctx, name);
	return ts_target_lookup(ctx, name);
}

/* Print the result "r" for "dag" as text. */
static void print_text(const struct schedule_opts *o, const ts_dag *dag,
	const ts_static_result *r, const ts_schedule *sch, const ts_func *f)
{
	const ts_template *tp = r->tp;

	printf("# %s on %s: %d configurations rated in %.1f ms, "
	       "estimated %.4g ms\n",
		ts_dag_name(dag), ts_template_target(tp)->name, r->rated,
		r->elapsed_ms, r->best_cost * 1e3);
	ts_template_print(stdout, tp);
	printf("\nknobs: %s\n\nschedule:\n", ts_config_to_json(r->best));
	ts_schedule_print(stdout, sch);
	for (int i = 1; i < r->k; i++)
		printf("%s#%d (%.4g ms): %s\n", i == 1 ? "\nranked:\n" : "",
			i + 1, r->topk_cost[i] * 1e3,
			ts_config_to_json(r->topk[i]));
	if (f) {
		printf("\nloop IR:\n");
		ts_func_print(stdout, f);
	}
}

/* Print the result "r" for "dag" as one JSON object. */
static void print_json(const ts_dag *dag, const ts_static_result *r,
	const ts_schedule *sch, const ts_func *f)
{
	json_t *o = json_object(), *stages = json_array(), *top = json_array();
	json_error_t err;
	char *text;

	json_object_set_new(o, "dag", json_string(ts_dag_name(dag)));
	json_object_set_new(o, "workload", json_string(ts_dag_hash(dag)));
	json_object_set_new(o, "target",
		json_string(ts_template_target(r->tp)->name));
	json_object_set_new(o, "elapsed_ms", json_real(r->elapsed_ms));
	json_object_set_new(o, "rated", json_integer(r->rated));
	json_object_set_new(o, "estimate_s", json_real(r->best_cost));
	for (int s = 0; s < ts_dag_nstages(dag); s++) {
		const ts_stage_plan *p = ts_template_plan(r->tp, s);
		json_t *st = json_object();
		json_object_set_new(st, "name",
			json_string(ts_stage_name(ts_dag_stage(dag, s))));
		json_object_set_new(st, "class",
			json_string(ts_class_name(ts_stage_plan_class(p))));
		json_object_set_new(st, "rule",
			json_string(ts_rule_name(ts_stage_plan_rule(p))));
		json_array_append_new(stages, st);
	}
	json_object_set_new(o, "stages", stages);
	json_object_set_new(o, "config",
		json_loads(ts_config_to_json(r->best), 0, &err));
	json_object_set_new(o, "schedule",
		json_loads(ts_schedule_to_json(sch), 0, &err));
	for (int i = 0; i < r->k; i++) {
		json_t *c = json_object();
		json_object_set_new(c, "estimate_s", json_real(r->topk_cost[i]));
		json_object_set_new(c, "config",
			json_loads(ts_config_to_json(r->topk[i]), 0, &err));
		json_array_append_new(top, c);
	}
	json_object_set_new(o, "topk", top);
	if (f)
		json_object_set_new(o, "ir", json_string(ts_func_to_string(f)));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", text);
	free(text);
	json_decref(o);
}

/* Make configuration "text" (JSON, or the name of a file holding it)
 * the one "r" reports, rated by the model; false with an error in "ctx"
 * when it is not a configuration of r's space. */
static bool use_config(ts_ctx *ctx, ts_static_result *r, const char *text)
{
	char *file = text[0] == '{' ? NULL : ts_tool_read_text(ctx, text);
	ts_config *cfg;

	if (text[0] != '{' && !file)
		return false;
	cfg = ts_config_from_json(ctx, ts_template_space(r->tp),
		file ? file : text);
	if (!cfg)
		return false;
	r->best = cfg;
	r->best_cost = ts_model_estimate(r->tp, cfg, NULL);
	r->k = 0;
	return true;
}

int ts_cmd_schedule(int argc, char **argv)
{
	struct schedule_opts o = { 0 };
	ts_static_result *r;
	ts_schedule *sch = NULL;
	ts_func *f = NULL;
	ts_target *tg;
	ts_dag *dag;
	ts_ctx *ctx;
	int code = TS_EXIT_USAGE;

	if (parse_opts(argc, argv, &o) < 0) {
		schedule_usage(stderr);
		return TS_EXIT_USAGE;
	}
	ctx = ts_ctx_alloc();
	ts_ctx_set_seed(ctx, o.seed);
	dag = ts_tool_load(ctx, o.file);
	tg = dag ? ts_tool_target(ctx, o.target) : NULL;
	if (tg && tg->kind == TS_TARGET_GPU) {
		code = ts_tool_cuda_schedule(ctx, dag, tg, o.show_code);
		ts_ctx_free(ctx);
		return code;
	}
	/* The static baseline: the schedule tessel run --schedule static
	 * compiles and the tuner measures for these threads and seed. */
	r = tg ? ts_static_baseline_fill(ctx, dag, tg, o.threads,
		o.topk > 1 ? o.topk : 1) : NULL;
	if (r && o.config && !use_config(ctx, r, o.config))
		r = NULL;
	if (r) {
		code = TS_EXIT_FAIL;
		sch = ts_template_apply(r->tp, r->best);
	}
	if (sch && o.show_ir)
		f = ts_lower(ctx, dag, sch);
	if (!sch || (o.show_ir && !f)) {
		ts_tool_report(ctx);
		ts_ctx_free(ctx);
		return code;
	}
	ts_tool_warnings(ctx);
	if (o.json)
		print_json(dag, r, sch, f);
	else
		print_text(&o, dag, r, sch, f);
	ts_ctx_free(ctx);
	return TS_EXIT_OK;
}
