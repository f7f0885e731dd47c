/* tessel tune: tune every task of a .tsl program by measurement, with a
 * progress bar on stderr, a summary table on stdout, and the tuning
 * curve (CSV and SVG) next to the records log.  A network (two or more
 * layers with weights of their own, or any partition of several
 * subgraphs with --network) is tuned task by task by the task scheduler
 * (tools/cmd_tasks.c); anything else is one task. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gc.h>

#include <tessel/measure.h>
#include <tessel/records.h>
#include <tessel/tune.h>

#include "tools/commands.h"
#include "tools/network_tool.h"
#include "tools/options.h"

/* The command line of one tuning run. */
struct tune_opts {
	const char *file;	/* the .tsl program */
	const char *target;	/* "host", a shipped name or a JSON file */
	const char *log;	/* records log, or NULL */
	int trials;
	bool trials_given;	/* --trials on the command line */
	int topk;		/* > 0: hardware-guided top-k only */
	int batch;
	int threads;
	int verify;		/* best candidates measured again */
	int lead;		/* static top-k measured first (-1: a
				 * network's batch, else none) */
	double budget;		/* wall-clock seconds (0: no limit) */
	uint64_t seed;
	bool quiet;		/* no progress bar */
	bool network;		/* tune the tasks of a network together */
	bool no_layout;		/* a network keeps its declared layouts */
	ts_cluster *cluster;	/* the ranks of an MPI job, or NULL */
};

/* Take "v" as the trials of "o". */
static bool set_trials(void *o, const char *v)
{
	((struct tune_opts *)o)->trials_given = true;
	return ts_tool_set_int(&((struct tune_opts *)o)->trials, v, 1, 1000000);
}

/* Take "v" as the top-k of "o". */
static bool set_topk(void *o, const char *v)
{
	return ts_tool_set_int(&((struct tune_opts *)o)->topk, v, 1, 10000);
}

/* Take "v" as the batch size of "o". */
static bool set_batch(void *o, const char *v)
{
	return ts_tool_set_int(&((struct tune_opts *)o)->batch, v, 1, 4096);
}

/* Take "v" as the candidates "o" measures again at the end. */
static bool set_verify(void *o, const char *v)
{
	return ts_tool_set_int(&((struct tune_opts *)o)->verify, v, 0, 1000);
}

/* Take "v" as the lead of "o": static candidates measured first. */
static bool set_lead(void *o, const char *v)
{
	return ts_tool_set_int(&((struct tune_opts *)o)->lead, v, 0, 10000);
}

/* Take "v" as the time budget of "o", in seconds. */
static bool set_budget(void *o, const char *v)
{
	double *b = &((struct tune_opts *)o)->budget;
	char *end;

	errno = 0;
	*b = strtod(v, &end);
	return *v && !*end && !errno && *b > 0 && *b <= 1e7;
}

/* Take "v" as the records log of "o". */
static bool set_log(void *o, const char *v)
{
	return ts_tool_set_string(&((struct tune_opts *)o)->log, v);
}

/* Take "v" as the seed of "o". */
static bool set_seed(void *o, const char *v)
{
	long long n;

	if (!ts_tool_parse_int(v, 1, INT64_MAX, &n))
		return false;
	((struct tune_opts *)o)->seed = (uint64_t)n;
	return true;
}

/* Take "v" as the threads of "o". */
static bool set_threads(void *o, const char *v)
{
	return ts_tool_set_int(&((struct tune_opts *)o)->threads, v, 1, 4096);
}

/* Take "v" as the target of "o". */
static bool set_target(void *o, const char *v)
{
	return ts_tool_set_string(&((struct tune_opts *)o)->target, v);
}

/* Silence the progress bar of "o" ("v" unused). */
static bool set_quiet(void *o, const char *v)
{
	((struct tune_opts *)o)->quiet = true;
	return true;
}

/* Tune "o"'s file as a network ("v" unused). */
static bool set_network(void *o, const char *v)
{
	((struct tune_opts *)o)->network = true;
	return true;
}

/* Keep a network's layouts as declared ("v" unused). */
static bool set_no_layout(void *o, const char *v)
{
	((struct tune_opts *)o)->no_layout = true;
	return true;
}

/* The options of tessel tune; add a row to add one. */
static const struct ts_tool_option tune_options[] = {
	{ "--trials", true, set_trials, "measurements per task (default 200)" },
	{ "--topk", true, set_topk, "measure only the K (default 10) best "
	  "configurations of the static model", "10" },
	{ "--batch", true, set_batch, "candidates measured per round "
	  "(default 16)" },
	{ "--verify", true, set_verify, "measure the N best again at the end "
	  "and choose by the new times (default 4)" },
	{ "--lead", true, set_lead, "the search starts with the N best "
	  "configurations of the static\n                     model, in "
	  "rank order (default: a network's first round, --batch;\n"
	  "                     else 0)" },
	{ "--budget", true, set_budget, "stop after SECONDS of wall clock (a "
	  "network: no round starts\n                     after them; without "
	  "--trials, rounds until then)" },
	{ "--log", true, set_log, "records log (JSON lines): resumed from, "
	  "appended to; the curve goes next to it" },
	{ "--seed", true, set_seed, "seed of the search and the inputs "
	  "(default 1)" },
	{ "--threads", true, set_threads, "threads of the kernels (default 1)" },
	{ "--target", true, set_target, "host (default), a shipped name or "
	  "FILE.json" },
	{ "--quiet", false, set_quiet, "no progress bar" },
	{ "--network", false, set_network, "tune as a network even with fewer "
	  "than two layers with\n                     weights of their own: "
	  "its tasks share --trials by expected gain" },
	{ "--no-layout", false, set_no_layout, "a network: keep the layouts "
	  "as declared (weights blocked)\n                     instead of "
	  "choosing them by timing (kept in --log)" },
};

/* The command line of tessel tune. */
static const struct ts_tool_options tune_command = {
	"tune", tune_options, sizeof(tune_options) / sizeof(tune_options[0]),
	"usage: tessel tune FILE.tsl [options]\n\n"
	"Tune every task of FILE.tsl by measuring candidate schedules on "
	"this machine\n(evolutionary search guided by a learned cost model, "
	"or the static model's\ntop-k), then print naive, static and tuned "
	"times per task.  With --log, every\nmeasurement is appended to the "
	"log, a later run resumes from it, and the\ntuning curve is written "
	"as LOG.csv and LOG.svg (LOG without its extension).\nA network "
	"(two or more layers with weights of their own, or "
	TS_TOOL_STRING(TS_NETWORK_MIN_SUBGRAPHS) " loop nests\n"
	"or more) first gets its layouts (the log's layout record, else "
	"chosen by\ntiming and appended to it), then is tuned task by task: "
	"its tasks share\n--trials in rounds of --batch, by expected gain; "
	"a task retires when a round\nis expected to gain less than 0.1% of "
	"the network's latency.\n\n",
	"0 success, 1 tuning failed, 2 bad usage or input",
};

/* Draw the progress bar of "p" on stderr ("data" unused). */
static void progress_bar(const ts_tune_progress *p, void *data)
{
	enum { WIDTH = 30 };
	int fill = p->total ? WIDTH * p->trials / p->total : WIDTH;
	char bar[WIDTH + 1];

	for (int i = 0; i < WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[WIDTH] = '\0';
	fprintf(stderr, "\r%s [%s] %d/%d", p->task, bar, p->trials, p->total);
	if (isfinite(p->best_s))
		fprintf(stderr, "  best %.4f ms", p->best_s * 1e3);
	fprintf(stderr, "  %.1f trials/s  %d errors  ", p->trials_per_s,
		p->errors);
	fflush(stderr);
}

/* What one task's tuning produced, for the summary. */
struct task_result {
	const char *name;
	double naive_s, static_s, tuned_s;
	int trials, resumed;
	int errors[TS_ERR_COUNT];
	double elapsed_s;
	const char *static_hash;	/* ts_schedule_hash of the baseline */
	bool kept_static;	/* the best is the static choice */
	double candidate_s;	/* verified time of the fastest other */
	ts_tune_phases phases;	/* where the time went */
	int built_ahead;	/* candidates built while another ran */
};

/* Seconds of the monotonic clock. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Measure the naive schedule of "dag" with "m" into "*out" (INFINITY
 * when it fails). */
static ts_status measure_naive(ts_ctx *ctx, const ts_dag *dag,
	ts_measurer *m, double *out)
{
	ts_measure_result r;
	const ts_schedule *naive = ts_schedule_naive(ctx, dag);

	*out = INFINITY;
	if (ts_measure(m, naive, &r) < 0)
		return TS_ERROR;
	if (r.error == TS_ERR_NONE)
		*out = r.median_s;
	else
		fprintf(stderr, "tessel tune: naive schedule of '%s': %s%s%s\n",
			ts_dag_name(dag) ? ts_dag_name(dag) : "dag",
			ts_error_code_name(r.error), r.message ? ": " : "",
			r.message ? r.message : "");
	return TS_OK;
}

/* Write the curve of "t" next to the log of "o", with the naive and
 * static times of "r" as reference lines. */
static ts_status write_curve(ts_ctx *ctx, const struct tune_opts *o,
	const ts_tuner *t, const struct task_result *r)
{
	ts_tune_curve c = ts_tune_curve_default();
	const double *best;
	char *csv = ts_tool_replace_ext(o->log, ".csv"), *svg = ts_tool_replace_ext(o->log,
		".svg");

	c.n = ts_tuner_history(t, &best);
	c.best = best;
	c.title = r->name;
	c.naive_s = r->naive_s;
	c.static_s = r->static_s;
	c.tuned_s = r->tuned_s;
	if (ts_tune_curve_write_csv(ctx, csv, c.n, best) < 0 ||
	    ts_tune_curve_draw(ctx, svg, &c) < 0)
		return TS_ERROR;
	fprintf(stderr, "tessel tune: curve in %s and %s\n", csv, svg);
	return TS_OK;
}

/* Tune the task "dag" of "o" on "target" into "r". */
static ts_status tune_task(ts_ctx *ctx, const struct tune_opts *o,
	const ts_dag *dag, const ts_target *target, struct task_result *r)
{
	ts_tune_options to = ts_tune_options_default();
	ts_tuner *t;
	ts_status st;

	to.trials = o->trials;
	to.topk = o->topk;
	to.batch = o->batch;
	to.seed = o->seed;
	to.threads = o->threads;
	to.verify = o->verify;
	to.lead = o->lead > 0 ? o->lead : 0;
	to.budget_s = o->budget;
	to.log = o->log;
	to.measure.threads = o->threads;
	to.measure.cluster = o->cluster;
	ts_measure_options_target(&to.measure, target);
	r->name = ts_dag_name(dag) ? ts_dag_name(dag) : o->file;
	to.measurer = ts_measurer_new(ctx, dag, &to.measure, o->seed);
	if (!to.measurer)
		return TS_ERROR;
	if (measure_naive(ctx, dag, to.measurer, &r->naive_s) < 0) {
		ts_measurer_free(to.measurer);
		return TS_ERROR;
	}
	r->elapsed_s = now_s();
	if (!(t = ts_tuner_new(ctx, dag, target, &to))) {
		ts_measurer_free(to.measurer);
		return TS_ERROR;
	}
	ts_tool_warnings(ctx);
	st = ts_tuner_run(t, o->quiet ? NULL : progress_bar, NULL);
	r->elapsed_s = now_s() - r->elapsed_s;
	r->phases = ts_tuner_phases(t);
	r->built_ahead = ts_measurer_built_ahead(to.measurer);
	ts_tuner_free(t);
	ts_measurer_free(to.measurer);
	if (st < 0)
		return TS_ERROR;
	if (!o->quiet)
		fputc('\n', stderr);
	r->static_s = ts_tuner_static_time(t);
	r->static_hash = ts_schedule_hash(ts_tuner_static_schedule(t));
	r->kept_static = ts_tuner_kept_static(t, &r->candidate_s);
	r->tuned_s = ts_tuner_best_time(t);
	r->trials = ts_tuner_trials(t);
	r->resumed = ts_tuner_resumed(t);
	for (int c = 0; c < TS_ERR_COUNT; c++)
		r->errors[c] = ts_tuner_errors(t, c);
	if (o->log && write_curve(ctx, o, t, r) < 0)
		return TS_ERROR;
	return TS_OK;
}

/* Print "v" seconds as milliseconds in a column of "w", or "-". */
static void print_ms(double v, int w)
{
	if (isfinite(v))
		printf(" %*.4f", w, v * 1e3);
	else
		printf(" %*s", w, "-");
}

/* Print "a" / "b" as a speedup in a column of 8, or "-". */
static void print_ratio(double a, double b)
{
	if (isfinite(a) && isfinite(b) && b > 0)
		printf(" %7.2fx", a / b);
	else
		printf(" %8s", "-");
}

/* Print the summary table of the "n" tasks "r". */
static void print_summary(int n, const struct task_result *r)
{
	printf("%-16s %10s %10s %10s %8s %8s %7s %8s  %s\n", "task",
		"naive ms", "static ms", "tuned ms", "speedup", "vs stat",
		"trials", "tuning s", "errors");
	for (int i = 0; i < n; i++) {
		bool any = false;
		printf("%-16.16s", r[i].name);
		print_ms(r[i].naive_s, 10);
		print_ms(r[i].static_s, 10);
		print_ms(r[i].tuned_s, 10);
		print_ratio(r[i].naive_s, r[i].tuned_s);
		print_ratio(r[i].static_s, r[i].tuned_s);
		printf(" %7d %8.1f ", r[i].trials, r[i].elapsed_s);
		for (int c = 1; c < TS_ERR_COUNT; c++)
			if (r[i].errors[c]) {
				printf(" %s:%d", ts_error_code_name(c),
					r[i].errors[c]);
				any = true;
			}
		printf("%s\n", any ? "" : " -");
		if (r[i].resumed)
			printf("%-16s (%d records resumed from the log)\n", "",
				r[i].resumed);
	}
}

/* Say what the static baseline of "r" is (the schedule tessel run
 * --schedule static compiles for the threads and seed of "o") and which
 * schedule the tuner kept, and why. */
static void print_choice(const struct tune_opts *o,
	const struct task_result *r)
{
	printf("static baseline: schedule %s, %d thread%s, seed %llu (tessel "
		"run %s --schedule static --threads %d --seed %llu)\n",
		r->static_hash ? r->static_hash : "-", o->threads,
		o->threads == 1 ? "" : "s", (unsigned long long)o->seed,
		o->file, o->threads, (unsigned long long)o->seed);
	if (!isfinite(r->tuned_s))
		return;
	if (!r->kept_static)
		printf("kept: the tuned schedule, %.4f ms against static %.4f "
			"ms%s\n", r->tuned_s * 1e3, r->static_s * 1e3,
			o->verify ? " (medians of interleaved rounds)" : "");
	else if (isfinite(r->candidate_s))
		printf("kept: the static schedule; measured again alongside "
			"it, the fastest candidate took %.4f ms against %.4f "
			"ms (a candidate must be %.0f%% faster)\n",
			r->candidate_s * 1e3, r->static_s * 1e3,
			TS_TUNE_MARGIN * 100);
	else
		printf("kept: the static schedule; no candidate was faster\n");
}

/* Say where the time of "r" went. */
static void print_time(const struct task_result *r)
{
	printf("time %.1f s: search %.1f s, measuring %.1f s (%d of %d "
	       "candidates built while another ran), final comparison %.1f "
	       "s (%d runs)\n", r->elapsed_s, r->phases.search_s,
		r->phases.measure_s, r->built_ahead,
		r->trials + r->phases.verify_runs, r->phases.verify_s,
		r->phases.verify_runs);
}

/* Tune the program of "o" in "ctx"; return the exit code. */
static int tune_program(ts_ctx *ctx, const struct tune_opts *o)
{
	ts_dag *dag = ts_tool_load(ctx, o->file);
	ts_target *target;
	struct task_result r = { 0 };

	if (dag && ts_dag_check_memory(ctx, dag) < 0)
		dag = NULL;
	target = dag ? ts_tool_target(ctx, o->target) : NULL;

	if (!dag || !target) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	if (target->kind != TS_TARGET_CPU) {
		fprintf(stderr, "tessel tune: target '%s' is a %s; tuning "
			"measures on this CPU\n", target->name,
			ts_target_kind_name(target->kind));
		return TS_EXIT_USAGE;
	}
	ts_ctx_set_seed(ctx, o->seed);
	if (o->network || ts_tool_network_partition(ctx, dag, target, false,
	    NULL, NULL)) {
		ts_tune_options to = ts_tune_options_default();
		int code;
		/* A network with a time budget and no --trials tunes until
		 * the time is spent or every task is retired. */
		to.trials = o->budget > 0 && !o->trials_given ? 1000000 :
			o->trials;
		to.batch = o->batch;
		to.topk = o->topk;
		to.verify = o->verify;
		to.lead = o->lead >= 0 ? o->lead : o->batch;
		to.budget_s = o->budget;
		to.seed = o->seed;
		to.threads = to.measure.threads = o->threads;
		to.measure.cluster = o->cluster;
		to.log = o->log;
		code = ts_tool_tune_network(ctx, dag, target, &to, o->quiet,
			!o->no_layout);
		if (code >= 0)
			return code;
	}
	if (tune_task(ctx, o, dag, target, &r) < 0) {
		if (!o->quiet)
			fputc('\n', stderr);
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	ts_tool_warnings(ctx);
	print_summary(1, &r);
	print_choice(o, &r);
	print_time(&r);
	return isfinite(r.tuned_s) ? TS_EXIT_OK : TS_EXIT_FAIL;
}

/* Join the MPI job "o" may run in, with the target key of "o": rank 0
 * returns -1 and goes on tuning, measuring on the others (o->cluster);
 * another rank measures until rank 0 is done and returns its exit
 * code. */
static int join_job(ts_ctx *ctx, struct tune_opts *o)
{
	ts_target *target;
	int rank = 0, code;

	/* Join first: a rank leaves mpirun's binding before it describes
	 * its machine. */
	o->cluster = ts_cluster_join(ctx, &rank);
	if (!o->cluster && ts_ctx_error(ctx)) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	if (!(target = ts_tool_target(ctx, o->target)) && !o->cluster) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	/* A rank that cannot read the target still introduces itself, with
	 * a key no one has, so that rank 0 does not wait for it. */
	if (o->cluster)
		ts_cluster_meet(o->cluster, target ? ts_target_key(
			ts_records_target(target, o->threads)) : "none");
	if (rank == 0) {
		if (o->cluster && !o->quiet)
			fprintf(stderr, "tessel tune: measuring on %d of %d "
				"ranks\n", ts_cluster_workers(o->cluster),
				ts_cluster_size(o->cluster));
		ts_tool_warnings(ctx);
		return -1;
	}
	code = ts_cluster_serve(o->cluster);
	if (code)
		ts_tool_report(ctx);
	ts_tool_warnings(ctx);
	return code;
}

/* Run "tessel tune" with the "argc" arguments "argv" (argv[0] is
 * "tune"). */
int ts_cmd_tune(int argc, char **argv)
{
	struct tune_opts o = { .target = "host", .trials = 200, .batch = 16,
		.threads = 1, .verify = 4, .lead = -1, .seed = 1 };
	ts_ctx *ctx;
	int code = ts_tool_parse_args(&tune_command, argc, argv, &o, &o.file);

	if (code >= 0)
		return code;
	ctx = ts_ctx_alloc();
	if (!ctx) {
		fprintf(stderr, "tessel tune: out of memory\n");
		return TS_EXIT_FAIL;
	}
	code = join_job(ctx, &o);
	if (code < 0)
		code = tune_program(ctx, &o);
	if (o.cluster && ts_cluster_lost(o.cluster))
		fprintf(stderr, "tessel tune: %d rank%s lost; %d still "
			"measuring\n", ts_cluster_lost(o.cluster),
			ts_cluster_lost(o.cluster) == 1 ? "" : "s",
			ts_cluster_workers(o.cluster));
	ts_ctx_free(ctx);
	return code;
}
