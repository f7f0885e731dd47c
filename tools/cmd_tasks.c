/* tessel tasks: partition a network (.tsl) into tasks and list them;
 * with --run, compile the whole network (static schedules), run it on
 * seeded or .npy inputs through the executor, check it against the
 * interpreter and time it. */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include <tessel/network.h>
#include <tessel/records.h>
#include <tessel/tune.h>

#define TS_TOOL_MIN(a, b) ((a) < (b) ? (a) : (b))

#include "tools/commands.h"
#include "tools/network_tool.h"

/* The command line. */
struct tasks_opts {
	const char *file;
	const char *target;	/* NULL: the host */
	const char *weights;	/* directory of <input>.npy, or NULL */
	int threads;
	int topk;		/* measured static candidates per task */
	int tune;		/* rounds of tuning shared by the tasks */
	int trials;		/* measurements per round */
	const char *log;	/* records log of the tuner */
	const char *records;	/* best record per task, or NULL */
	const char *build;	/* directory of the AOT library, or NULL */
	const char *dump;	/* directory for each task's .tsl, or NULL */
	bool run, check, naive, profile, layout;
	bool layout_model;	/* choose the layouts with the model */
	bool declared;		/* keep the declared layouts */
	double min_time;	/* seconds of timed runs; 0: no timing */
	uint64_t seed;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: tessel tasks [options] FILE.tsl\n\n"
		"List the tasks of a network: the subgraphs anchored on a\n"
		"reduction, deduplicated, with stages, classes, weights and flops.\n\n"
		"  --target NAME   hardware description (default: this machine)\n"
		"  --run           compile and run the network (static schedules)\n"
		"  --naive         with --run: naive schedules\n"
		"  --check         with --run: compare with the interpreter\n"
		"  --time SECONDS  with --run: time whole runs\n"
		"  --profile       with --run: time each task alone\n"
		"  --layout        choose the layout of each subgraph (timed),\n"
		"                  appended to --records or --log as a layout\n"
		"                  record; a log that has one replays it\n"
		"  --layout-model  choose the layouts with the model: no\n"
		"                  timing, nothing recorded (the default)\n"
		"  --declared-layouts  keep the layouts as declared (weights\n"
		"                  blocked); no choice\n"
		"  --tune R        with --run: tune the tasks for R rounds shared\n"
		"                  by expected gain (task scheduler)\n"
		"  --trials N      measurements per round (default 16)\n"
		"  --log FILE      records log of the tuner\n"
		"  --records FILE  with --run: the best record of each task in\n"
		"                  FILE (static where it has none)\n"
		"  --dump DIR      write each task's subgraph, in the layouts\n"
		"                  chosen, as DIR/task<N>.tsl (its inputs are\n"
		"                  the task's, weights and all)\n"
		"  --build DIR     with --run: write DIR/lib<name>.so (one entry\n"
		"                  point for the whole network) and DIR/<name>.h\n"
		"  --threads N     threads of parallel loops\n"
		"  --topk K        with --run: time the K best static choices of\n"
		"                  each task and keep the fastest\n"
		"  --weights DIR   read input X from DIR/X.npy when it exists\n"
		"  --seed N        seed of generated inputs (default 1)\n");
}

/* Parse the integer "s" in ["lo", "hi"] into "*v". */
static bool parse_long(const char *s, long long lo, long long hi,
	long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	return *s && !*end && !errno && *v >= lo && *v <= hi;
}

/* Take the value option "name" = "v" into "o"; false when bad. */
static bool set_value(struct tasks_opts *o, const char *name, const char *v)
{
	long long n;

	if (!strcmp(name, "--target"))
		o->target = v;
	else if (!strcmp(name, "--weights"))
		o->weights = v;
	else if (!strcmp(name, "--threads") && parse_long(v, 1, 4096, &n))
		o->threads = (int)n;
	else if (!strcmp(name, "--tune") && parse_long(v, 1, 100000, &n))
		o->tune = (int)n;
	else if (!strcmp(name, "--trials") && parse_long(v, 1, 100000, &n))
		o->trials = (int)n;
	else if (!strcmp(name, "--log"))
		o->log = v;
	else if (!strcmp(name, "--records"))
		o->records = v;
	else if (!strcmp(name, "--build"))
		o->build = v;
	else if (!strcmp(name, "--dump"))
		o->dump = v;
	else if (!strcmp(name, "--topk") && parse_long(v, 1, 1000, &n))
		o->topk = (int)n;
	else if (!strcmp(name, "--seed") && parse_long(v, 0, INT64_MAX, &n))
		o->seed = (uint64_t)n;
	else if (!strcmp(name, "--time"))
		return (o->min_time = strtod(v, NULL)) > 0;
	else
		return false;
	return true;
}

/* Parse "argv" into "o"; return -1 on success or an exit code. */
static int parse_args(int argc, char **argv, struct tasks_opts *o)
{
	static const char *const with_value[] = { "--target", "--weights",
		"--threads", "--seed", "--time", "--topk", "--tune", "--trials",
		"--log", "--build", "--records", "--dump", NULL };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool valued = false;
		for (int k = 0; with_value[k]; k++)
			valued |= !strcmp(a, with_value[k]);
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return TS_EXIT_OK;
		} else if (!strcmp(a, "--layout")) {
			o->layout = true;
		} else if (!strcmp(a, "--layout-model")) {
			o->layout_model = true;
		} else if (!strcmp(a, "--declared-layouts")) {
			o->declared = true;
		} else if (!strcmp(a, "--run") || !strcmp(a, "--check") ||
			   !strcmp(a, "--naive") || !strcmp(a, "--profile")) {
			o->run = true;
			o->profile |= !strcmp(a, "--profile");
			o->check |= !strcmp(a, "--check");
			o->naive |= !strcmp(a, "--naive");
		} else if (valued) {
			if (i + 1 >= argc || !set_value(o, a, argv[i + 1])) {
				fprintf(stderr, "tessel tasks: bad or missing "
					"value for %s\n", a);
				return TS_EXIT_USAGE;
			}
			i++;
		} else if (a[0] == '-' || o->file) {
			fprintf(stderr, "tessel tasks: unexpected argument "
				"'%s'\n", a);
			return TS_EXIT_USAGE;
		} else {
			o->file = a;
		}
	}
	if (!o->file) {
		usage(stderr);
		return TS_EXIT_USAGE;
	}
	o->run |= o->tune > 0 || o->build || o->records;
	return -1;
}

/* The inputs of "dag": DIR/<name>.npy where present, else seeded. */
static ts_array **load_inputs(ts_ctx *ctx, const ts_dag *dag,
	const struct tasks_opts *o)
{
	ts_array **in = ts_tool_random_inputs(ctx, dag, o->seed);

	for (int i = 0; in && o->weights && i < ts_dag_ninputs(dag); i++) {
		char path[4096];
		FILE *f;
		snprintf(path, sizeof(path), "%s/%s.npy", o->weights,
			ts_tensor_name(ts_dag_input(dag, i)));
		f = fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		in[i] = ts_npy_read(ctx, path);
		if (!in[i])
			return NULL;
	}
	return in;
}

int ts_tool_network_check(ts_ctx *ctx, const ts_dag *dag, ts_array **in,
	ts_array **got, double *max_err, bool quiet)
{
	ts_array **want = GC_MALLOC(
		sizeof(*want) * ((size_t)ts_dag_noutputs(dag) + 1));
	int rc = TS_EXIT_OK;

	if (max_err)
		*max_err = 0;
	if (!want || ts_eval(ctx, dag, in, want) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	for (int o = 0; o < ts_dag_noutputs(dag); o++) {
		double err = 0;
		bool ok = ts_array_close(got[o], want[o], &err);
		if (!quiet)
			printf("check %s: %s (max abs error %.3g)\n",
				ts_tensor_name(ts_dag_output(dag, o)),
				ok ? "ok" : "MISMATCH", err);
		if (max_err && err > *max_err)
			*max_err = err;
		if (!ok)
			rc = TS_EXIT_FAIL;
	}
	return rc;
}

/* Write the DAG of every task of "p" as "dir"/task<N>.tsl ("dir"
 * created if missing), to look at one task alone with tessel schedule,
 * run or tune. */
static int dump_tasks(const ts_partition *p, const char *dir)
{
	if (ts_tool_make_dir(dir, "tasks", "--dump") < 0)
		return TS_EXIT_USAGE;
	for (int t = 0; t < p->ntasks; t++) {
		char path[4096];
		FILE *f;
		snprintf(path, sizeof(path), "%s/task%d.tsl", dir, t);
		if (!(f = fopen(path, "w"))) {
			fprintf(stderr, "tessel tasks: cannot write '%s': %s\n",
				path, strerror(errno));
			return TS_EXIT_FAIL;
		}
		fprintf(f, "# task %d of the network: %s, weight %d\n", t,
			p->tasks[t]->name, p->tasks[t]->weight);
		ts_dag_print(f, p->tasks[t]->dag);
		if (fclose(f) != 0) {
			fprintf(stderr, "tessel tasks: cannot write '%s'\n",
				path);
			return TS_EXIT_FAIL;
		}
	}
	printf("%d tasks written to %s/\n", p->ntasks, dir);
	return TS_EXIT_OK;
}

/* Time each task of "net" alone and print its share of the total. */
static int profile_tasks(ts_ctx *ctx, ts_network *net)
{
	const ts_partition *p = ts_network_partition(net);
	double *ms = calloc((size_t)p->ntasks + 1, sizeof(double)), sum = 0;

	for (int t = 0; t < p->ntasks; t++) {
		ts_timing tm;
		if (ts_network_time_task(net, t, 0.05, &tm) < 0) {
			free(ms);
			ts_tool_report(ctx);
			return TS_EXIT_FAIL;
		}
		ms[t] = tm.median_s * 1e3 * p->tasks[t]->weight;
		if (!ts_partition_task_runs_once(p, t))
			sum += ms[t];
	}
	/* A weight's conversion runs at the first run only: listed, but
	 * not part of a run's total. */
	for (int t = 0; t < p->ntasks; t++)
		if (ts_partition_task_runs_once(p, t))
			printf("profile task %d %-10s weight %d  %.4f ms  (runs "
				"once)\n", t, p->tasks[t]->name,
				p->tasks[t]->weight, ms[t]);
		else
			printf("profile task %d %-10s weight %d  %.4f ms  "
				"%5.1f%%  %.2f GFLOP/s\n", t, p->tasks[t]->name,
				p->tasks[t]->weight, ms[t], 100 * ms[t] / sum,
				ms[t] > 0 ? p->tasks[t]->weight *
				p->tasks[t]->flops / ms[t] * 1e-6 : 0.0);
	printf("profile total %.4f ms (a run after the first)\n", sum);
	free(ms);
	return TS_EXIT_OK;
}

/* Show the estimated network latency after round "round" of tuning
 * task "task" ("data" unused). */
static void tune_progress(void *data, int round, int task, double latency)
{
	(void)data;
	fprintf(stderr, "\rround %4d  task %3d  estimated latency %.4f ms ",
		round, task, latency * 1e3);
}

/* The schedules of the tasks of "p" for "host" (partitioned for "tg"):
 * tuned for o->tune rounds, else the best record of o->records, else
 * static. */
static ts_schedule **schedules(ts_ctx *ctx, const ts_partition *p,
	const ts_target *host, const struct tasks_opts *o)
{
	struct ts_tool_network_opts no = { "tasks", o->records, o->threads,
		o->topk, false };
	ts_schedule **st = ts_tool_network_schedules(ctx, p, host, &no);
	ts_tune_options to = ts_tune_options_default();
	ts_schedule **tuned;
	ts_task_schedule *r;

	if (!st || o->tune <= 0)
		return st;
	to.trials = o->trials > 0 ? o->trials : 16;
	to.batch = TS_TOOL_MIN(to.batch, to.trials);
	to.lead = to.batch;
	to.threads = to.measure.threads = o->threads > 0 ? o->threads : 1;
	to.log = o->log;
	to.seed = o->seed;
	/* The tuner sets the cores of "host" to its threads: its records
	 * are keyed as tessel tune's and --records look them up. */
	tuned = ts_partition_tune(ctx, p, host, o->tune, &to, tune_progress,
		NULL, &r);
	fputc('\n', stderr);
	if (!tuned)
		return NULL;
	for (int t = 0; t < p->ntasks; t++) {
		printf("tuned task %d %-10s rounds %d  best %.4f ms%s\n", t,
			p->tasks[t]->name, r->rounds_of[t], r->best[t] * 1e3,
			r->dead[t] ? "  (no valid schedule: static kept)" : "");
		if (tuned[t])
			st[t] = tuned[t];
	}
	return st;
}

void ts_tool_print_schedules(FILE *out, const ts_network *net)
{
	fprintf(out, "schedules:");
	for (int t = 0; t < ts_network_partition(net)->ntasks; t++)
		fprintf(out, " %s", ts_schedule_hash(
			ts_network_task_schedule(net, t)));
	fprintf(out, "\n");
}

char *ts_tool_network_name(const char *file)
{
	const char *base = strrchr(file, '/');
	char *name;
	int n = 0;

	base = base ? base + 1 : file;
	name = GC_MALLOC_ATOMIC(strlen(base) + 2);
	if (!isalpha((unsigned char)*base))
		name[n++] = 'n';
	for (; *base && *base != '.' && n < 255; base++)
		name[n++] = isalnum((unsigned char)*base) ? *base : '_';
	name[n] = '\0';
	return name;
}

/* Build the AOT library of "net" into o->build, named after the file. */
static int build_library(ts_ctx *ctx, ts_network *net,
	const struct tasks_opts *o)
{
	const char *name = ts_tool_network_name(o->file);

	if (ts_network_build_aot(ctx, net, o->build, name) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	printf("built %s/lib%s.so and %s/%s.h\n", o->build, name, o->build,
		name);
	return TS_EXIT_OK;
}

ts_target *ts_tool_target_threads(const ts_target *tg, int threads)
{
	return (ts_target *)ts_target_for_threads(tg, threads);
}

ts_partition *ts_tool_network_partition(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, bool force, const struct ts_tool_network_opts *o,
	int *code)
{
	ts_partition *p = ts_partition_dag(ctx, dag, tg);
	ts_layout_options lo = { 0 };
	const char *how = NULL;

	/* A DAG the partition cannot follow is left to the single-kernel
	 * path, which reports its own errors. */
	if (!p) {
		ts_ctx_clear_error(ctx);
		return NULL;
	}
	if (!(force ? p->nsubgraphs > 1 : ts_partition_is_network(p)))
		return NULL;
	lo.declared = true;
	if (o) {
		lo.threads = o->threads;
		lo.records = o->records;
		lo.choose = (o->layout || o->layout_model) && !o->naive;
		lo.estimate = o->layout_model;
		lo.declared = o->declared || o->naive;
	}
	if (!(p = ts_network_lay_out(ctx, dag, p, tg, &lo, &how, NULL))) {
		ts_tool_report(ctx);
		if (code)
			*code = TS_EXIT_FAIL;
		return NULL;
	}
	if (o && (o->records || !lo.declared))
		fprintf(stderr, "tessel %s: %s\n", o->verb, how);
	return p;
}

/* Print "line" of the schedule choice on stderr for the verb "data". */
static void say_choice(void *data, const char *line)
{
	fprintf(stderr, "tessel %s: %s\n", (const char *)data, line);
}

ts_schedule **ts_tool_network_schedules(ts_ctx *ctx, const ts_partition *p,
	const ts_target *host, const struct ts_tool_network_opts *o)
{
	ts_schedule **st = ts_partition_schedules(ctx, p, host, o->records,
		o->topk, o->threads, say_choice, (void *)o->verb);

	ts_tool_warnings(ctx);
	return st;
}

ts_network *ts_tool_network_compile(ts_ctx *ctx, const ts_partition *p,
	const ts_target *host, const struct ts_tool_network_opts *o,
	int *code)
{
	ts_network_options no = ts_network_options_default();
	ts_schedule **sch = NULL;
	ts_network *net;

	no.threads = o->threads;
	no.naive = o->naive;
	no.topk = o->topk;
	no.target = host;
	if (!o->naive && !(sch = ts_tool_network_schedules(ctx, p, host, o))) {
		ts_tool_report(ctx);
		*code = TS_EXIT_USAGE;
		return NULL;
	}
	if (!(net = ts_network_build(ctx, p, sch, &no))) {
		ts_tool_report(ctx);
		*code = TS_EXIT_FAIL;
	}
	return net;
}

/* Whether this machine runs the code of target "tg" (for --run), else
 * say why on stderr. */
static bool runs_here(ts_ctx *ctx, const ts_target *tg)
{
	ts_target *self = ts_target_host(ctx);
	const char *why = NULL;

	if (self && ts_target_runs_on(tg, self, &why))
		return true;
	fprintf(stderr, "tessel tasks: --run: this machine cannot run the "
		"code of target '%s': %s\n", tg->name,
		self ? why : ts_ctx_error(ctx));
	return false;
}

/* Compile the tasks of "p" (partitioned for "host" with o->threads
 * cores), run, check and time the network "dag". */
static int run_network(ts_ctx *ctx, const ts_dag *dag, const ts_target *host,
	const ts_partition *p, const struct tasks_opts *o)
{
	ts_network_options no = ts_network_options_default();
	ts_array **in, **out;
	const ts_memory_plan *mp;
	ts_network *net;
	int rc = TS_EXIT_OK;

	no.threads = o->threads;
	no.naive = o->naive;
	no.topk = o->topk;
	no.target = host;
	if (o->naive)
		net = ts_network_build(ctx, p, NULL, &no);
	else {
		ts_schedule **sch = schedules(ctx, p, host, o);
		net = sch ? ts_network_build(ctx, p, sch, &no) : NULL;
	}
	in = net ? load_inputs(ctx, dag, o) : NULL;
	out = GC_MALLOC(sizeof(*out) * ((size_t)ts_dag_noutputs(dag) + 1));
	if (!in || ts_network_run(net, in, out) < 0) {
		ts_tool_report(ctx);
		ts_network_free(net);
		return TS_EXIT_FAIL;
	}
	ts_tool_warnings(ctx);
	mp = ts_network_memory(net);
	printf("memory: %d intermediate buffers, arena %.3f MiB "
		"(%.3f MiB without reuse)\n", mp->nbuffers,
		mp->arena_bytes / 1048576.0, mp->total_bytes / 1048576.0);
	ts_tool_print_schedules(stdout, net);
	if (o->check)
		rc = ts_tool_network_check(ctx, dag, in, out, NULL, false);
	if (o->build && build_library(ctx, net, o) != TS_EXIT_OK)
		rc = TS_EXIT_FAIL;
	if (o->profile && profile_tasks(ctx, net) != TS_EXIT_OK)
		rc = TS_EXIT_FAIL;
	if (o->min_time > 0) {
		ts_timing t;
		if (ts_network_time(net, in, o->min_time, &t) < 0) {
			ts_tool_report(ctx);
			rc = TS_EXIT_FAIL;
		} else {
			printf("time: median %.4f ms (min %.4f, %d runs)\n",
				t.median_s * 1e3, t.min_s * 1e3, t.nsamples);
		}
	}
	ts_network_free(net);
	return rc;
}

/* Print the layouts "lp" chose for "p". */
static void print_plan(const ts_partition *p, const ts_layout_plan *lp)
{
	printf("layout: chosen %.4f ms, all NCHW %.4f ms (%s, %lld states), "
		"%d transformations\n", lp->solution->total * 1e3,
		lp->solution->default_total * 1e3, lp->solution->exact ?
		"exact DP" : "approximate", (long long)lp->solution->states,
		lp->ntransforms);
	for (int g = 0; g < p->nsubgraphs; g++) {
		int c = lp->solution->choice[g];
		if (lp->problem->ncands[g] > 1)
			printf("layout %-10s %-8s (%s)\n",
				p->tasks[p->subgraphs[g].task]->name,
				lp->problem->names[g][c], c ? "changed" : "kept");
	}
}

/* The partition of "dag" for "tg" laid out as "o" asks (its layout
 * record in --records, else in --log; chosen by timing with --layout,
 * and then appended there), printed; NULL after a message. */
static const ts_partition *tasks_partition(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, const struct tasks_opts *o)
{
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q;
	ts_layout_options lo = { o->threads, o->layout || o->layout_model,
		false, o->records ? o->records : o->log, o->layout_model,
		o->declared || o->naive };
	ts_layout_plan *plan = NULL;
	const char *how = NULL;

	if (!p || !(q = ts_network_lay_out(ctx, dag, p, tg, &lo, &how,
	    &plan)))
		return NULL;
	ts_partition_print(stdout, plan ? p : q);
	if (plan)
		print_plan(p, plan);
	if (lo.records || !lo.declared)
		fprintf(stderr, "tessel tasks: %s\n", how);
	return q;
}

/* Write the estimated latency of the network "dag" after each round of
 * "r" (rounds of "trials" measurements) next to the log "log": CSV
 * "round,task,seconds,latency_s" and the picture against the seconds of
 * tuning, with the static latency as reference.  The warm-up rounds,
 * whose sums leave out the tasks not visited yet, have no point on the
 * curve. */
static ts_status write_network_curve(ts_ctx *ctx, const ts_dag *dag,
	const ts_partition *p, const ts_task_schedule *r, int trials,
	const char *log)
{
	ts_tune_curve c = ts_tune_curve_default();
	char *csv = ts_tool_replace_ext(log, ".csv");
	char *svg = ts_tool_replace_ext(log, ".svg");
	double *lat = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)(r->nrounds + 1));
	char *xlabel = GC_MALLOC_ATOMIC(64);
	FILE *f = fopen(csv, "w");

	if (!f || !lat || !xlabel)
		return ts_ctx_set_error(ctx, "tuning curve: cannot write "
			"'%s': %s", csv, strerror(errno));
	fprintf(f, "round,task,seconds,latency_s\n");
	for (int k = 0; k < r->nrounds; k++) {
		fprintf(f, "%d,%s,%.3f,%.9g\n", k + 1,
			p->tasks[r->order[k]]->name, r->elapsed[k],
			r->latency[k]);
		lat[k] = k + 1 < r->warmup ? INFINITY : r->latency[k];
	}
	if (fclose(f) != 0)
		return ts_ctx_set_error(ctx, "tuning curve: error writing "
			"'%s'", csv);
	snprintf(xlabel, 64, "seconds of tuning, in rounds of %d trials",
		trials);
	c.title = ts_dag_name(dag) ? ts_dag_name(dag) : "network";
	c.x_label = xlabel;
	c.y_label = "estimated network latency (ms)";
	c.n = r->nrounds;
	c.best = lat;
	c.x = r->elapsed;
	c.static_s = r->static_latency;
	if (ts_tune_curve_draw(ctx, svg, &c) < 0)
		return TS_ERROR;
	fprintf(stderr, "tessel tune: curve in %s and %s\n", csv, svg);
	return TS_OK;
}

/* Whether every task of "p" that "r" could tune is retired. */
static bool all_retired(const ts_partition *p, const ts_task_schedule *r)
{
	for (int t = 0; t < p->ntasks; t++)
		if (!r->once[t] && !r->dead[t] && !r->retired[t])
			return false;
	return true;
}

/* Where the tuning time of "r" went. */
static void print_phases(const ts_task_schedule *r)
{
	double total = r->nrounds ? r->elapsed[r->nrounds - 1] : 0;

	printf("time %.1f s: preparing tasks %.1f s, search %.1f s, "
	       "measuring %.1f s, final comparisons %.1f s (%d runs)\n",
		total, r->setup_s, r->search_s, r->measure_s, r->verify_s,
		r->verify_runs);
}

int ts_tool_tune_network(ts_ctx *ctx, const ts_dag *dag, ts_target *target,
	const struct ts_tune_options *opt, bool quiet, bool layout)
{
	ts_partition *p = ts_partition_dag(ctx, dag, target);
	ts_layout_options lo = { opt->threads, layout, false, opt->log, false,
		!layout };
	ts_tune_options to = *opt;
	const char *how = NULL;
	ts_schedule **tuned;
	ts_task_schedule *r;
	int rounds;

	if (!p) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	if (p->nsubgraphs <= 1)
		return -1;
	if (!(p = ts_network_lay_out(ctx, dag, p, ts_tool_target_threads(
	    target, opt->threads), &lo, &how, NULL))) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	fprintf(stderr, "tessel tune: %s\n", how);
	/* The budget of the command line, in rounds of one batch. */
	to.trials = to.batch > 0 ? to.batch : 16;
	/* At least one round per task: the warm-up visits every task. */
	rounds = opt->trials / to.trials;
	if (rounds < p->ntasks)
		rounds = p->ntasks;
	printf("%s: %d subgraphs, %d tasks; %d rounds of %d trials shared by "
	       "expected gain\n",
		ts_dag_name(dag) ? ts_dag_name(dag) : "network", p->nsubgraphs,
		p->ntasks, rounds, to.trials);
	tuned = ts_partition_tune(ctx, p, target, rounds, &to,
		quiet ? NULL : tune_progress, NULL, &r);
	if (!quiet)
		fputc('\n', stderr);
	if (!tuned) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	for (int t = 0; t < p->ntasks; t++) {
		printf("task %3d %-12s weight %d  rounds %d  best %.4f ms%s\n", t,
			p->tasks[t]->name, p->tasks[t]->weight, r->rounds_of[t],
			r->best[t] * 1e3, r->once[t] ? "  (runs once: not tuned)"
			: r->dead[t] ? "  (no valid schedule)" : "");
	}
	if (r->nrounds < rounds)
		printf("stopped after %d of %d rounds, %.1f s: %s\n",
			r->nrounds, rounds, r->nrounds ?
			r->elapsed[r->nrounds - 1] : 0.0, all_retired(p, r) ?
			"every task retired" : "the time budget is spent");
	printf("estimated network latency %.4f ms",
		r->nrounds ? r->latency[r->nrounds - 1] * 1e3 : 0.0);
	if (isfinite(r->static_latency))
		printf(" (static schedules %.4f ms)", r->static_latency * 1e3);
	printf("\n");
	print_phases(r);
	if (opt->log && write_network_curve(ctx, dag, p, r, to.trials,
		opt->log) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	return TS_EXIT_OK;
}

int ts_cmd_tasks(int argc, char **argv)
{
	struct tasks_opts o = { .seed = 1 };
	int rc = parse_args(argc, argv, &o);
	ts_ctx *ctx;
	ts_dag *dag;
	ts_target *host, *tg;
	const ts_partition *p;

	if (rc >= 0)
		return rc;
	ctx = ts_ctx_alloc();
	/* As tessel run: the seed draws the inputs and the static choices,
	 * so that both compile the same schedules. */
	ts_ctx_set_seed(ctx, o.seed);
	dag = ts_tool_load(ctx, o.file);
	if (dag && o.run && ts_dag_check_memory(ctx, dag) < 0)
		dag = NULL;
	host = dag ? ts_tool_target(ctx, o.target ? o.target : "host") : NULL;
	if (host && o.run && o.target && !runs_here(ctx, host)) {
		ts_ctx_free(ctx);
		return TS_EXIT_USAGE;
	}
	tg = ts_tool_target_threads(host, o.threads);
	if (!(p = tg ? tasks_partition(ctx, dag, tg, &o) : NULL)) {
		ts_tool_report(ctx);
		ts_ctx_free(ctx);
		return tg && o.layout ? TS_EXIT_FAIL : TS_EXIT_USAGE;
	}
	rc = o.dump ? dump_tasks(p, o.dump) : TS_EXIT_OK;
	if (rc == TS_EXIT_OK && o.run)
		rc = run_network(ctx, dag, host, p, &o);
	ts_ctx_free(ctx);
	return rc;
}
