/* bench_network: a whole network compiled by Tessel, timed on request.
 *
 *	bench_network NET BATCH DIR [--threads N] [--topk K] [--naive]
 *		[--tune ROUNDS [--trials N]] [--records LOG] [--seed N]
 *
 * NET is lenet, mlp, resnet18 or transformer (BATCH is the sequence
 * length for the transformer).  The program builds the network, writes
 * every input to DIR/<input>.npy (weights scaled by 1/sqrt(fan-in) so
 * that activations stay of order one through deep networks), compiles
 * it, runs it once and writes DIR/<output>.npy.  Then it serves its
 * driver (bench/bench_network.py) on stdin: "time S" times whole runs for
 * at least S seconds and prints "median_s min_s runs"; "quit" ends.  The
 * driver interleaves these with PyTorch's runs, so both see the same
 * load on a shared machine.  With --records, each task takes its best
 * record in LOG for the host with N cores (tessel tune --threads N) where
 * it runs faster than the static schedule timed alongside it, as tessel
 * run does (ts_partition_schedules).  With BENCH_CPU_TIME set in the
 * environment, runs are timed with the process's CPU clock (the time it
 * ran, not the time it waited for a shared core).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessel/tessel.h>

#include "examples/networks.h"

/* Build network "name" at "batch". */
static ts_dag *build(ts_ctx *ctx, const char *name, int batch)
{
	if (!strcmp(name, "lenet"))
		return ts_network_lenet(ctx, batch);
	if (!strcmp(name, "mlp"))
		return ts_network_mlp(ctx, batch);
	if (!strcmp(name, "resnet18"))
		return ts_network_resnet18(ctx, batch, 224, 64, 1000);
	if (!strcmp(name, "transformer"))
		return ts_network_transformer(ctx, batch, 768, 12, 3072);
	ts_ctx_set_error(ctx, "unknown network '%s'", name);
	return NULL;
}

/* Scale the weights among "in" (every input after the first) so that a
 * layer keeps the magnitude of its input: 1/sqrt(fan-in) for tensors of
 * two or more dimensions, 0.1 for biases and gains stay near 1. */
static void scale_weights(const ts_dag *dag, ts_array **in)
{
	for (int i = 1; i < ts_dag_ninputs(dag); i++) {
		ts_array *a = in[i];
		double s = 0.1;
		if (a->ndim >= 2)
			s = sqrt(3.0 / (double)(a->size / a->shape[0]));
		for (int64_t k = 0; k < a->size; k++)
			ts_array_set(a, k, ts_array_get(a, k) * s);
		/* Layer norm gains: around one. */
		if (a->ndim == 1 &&
			ts_tensor_name(ts_dag_input(dag, i))[0] == 'G')
			for (int64_t k = 0; k < a->size; k++)
				ts_array_set(a, k, 1.0 + ts_array_get(a, k));
	}
}

/* Write "a" as "dir"/"name".npy. */
static int write_npy(ts_ctx *ctx, const char *dir, const char *name,
	const ts_array *a)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
	return ts_npy_write(ctx, path, a) == TS_OK ? 0 : -1;
}

/* Seconds of the clock runs are timed with: the process's CPU time when
 * BENCH_CPU_TIME is set, else the monotonic clock. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(getenv("BENCH_CPU_TIME") ? CLOCK_PROCESS_CPUTIME_ID :
		CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Order two doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Time runs of "net" on "in" adding up to "seconds" at least (three at
 * least, after one warm-up) into "*median" and "*min"; the run count, or
 * -1 when a run fails. */
static int time_runs(ts_network *net, ts_array **in, ts_array **out,
	double seconds, double *median, double *min)
{
	enum { CAP = 4096 };
	static double s[CAP];
	double total = 0;
	int n = 0;

	if (ts_network_run(net, in, out) != TS_OK)
		return -1;
	while ((n < 3 || total < seconds) && n < CAP) {
		double t0 = now_s();
		if (ts_network_run(net, in, out) != TS_OK)
			return -1;
		s[n] = now_s() - t0;
		total += s[n++];
	}
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	*median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
	*min = s[0];
	return n;
}

/* Serve "time S" requests on stdin for "net". */
static int serve(ts_network *net, ts_array **in, ts_array **out)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		double s, median, min;
		int n;
		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "time %lf", &s) != 1 ||
		    (n = time_runs(net, in, out, s, &median, &min)) < 0) {
			printf("error\n");
			fflush(stdout);
			continue;
		}
		printf("%.9g %.9g %d\n", median, min, n);
		fflush(stdout);
	}
	return 0;
}

/* Parse the options after the three positional arguments. */
static void options(int argc, char **argv, ts_network_options *o,
	int *rounds, int *trials, const char **records, uint64_t *seed)
{
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			*seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--records") && i + 1 < argc)
			*records = argv[++i];
		else if (!strcmp(argv[i], "--tune") && i + 1 < argc)
			*rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			*trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			o->threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--topk") && i + 1 < argc)
			o->topk = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--naive"))
			o->naive = true;
		else if (!strcmp(argv[i], "--declared-layouts"))
			o->declared_layouts = true;
	}
}

/* "host" as the tuner keys its records: "threads" cores when positive,
 * every other field as it is. */
static ts_target *record_target(const ts_target *host, int threads)
{
	ts_target *t = malloc(sizeof(*t));	/* lives with the process */

	*t = *host;
	if (threads > 0)
		t->cpu.cores = threads;
	return t;
}

/* Print "line" of the schedule choice on stderr. */
static void say_choice(void *data, const char *line)
{
	fprintf(stderr, "bench_network: %s\n", line);
}

/* Compile "dag": static schedules (the model's best, or the fastest of
 * its top-k), the best records of "records" where it has them, or tuned
 * for "rounds" rounds of "trials" by the task scheduler, static where
 * tuning found nothing. */
static ts_network *compile(ts_ctx *ctx, const ts_dag *dag, ts_target *tg,
	const ts_network_options *o, int rounds, int trials,
	const char *records)
{
	ts_tune_options to = ts_tune_options_default();
	const ts_target *host = record_target(tg, 0);
	ts_partition *p;
	ts_schedule **st, **tuned;

	if (o->threads > 0) {
		tg->cpu.cores = o->threads;
		tg->cpu.peak_gflops_f32 = tg->cpu.peak_gflops_f32_core *
			o->threads;
	}
	if (rounds <= 0 && !records)
		return ts_network_compile(ctx, dag, tg, o);
	p = ts_partition_dag(ctx, dag, tg);
	if (p) {
		/* As tessel run --records: the log's layouts where it has
		 * them. */
		ts_layout_options lo = { o->threads, o->layout,
			o->keep_weights, records, false,
			o->declared_layouts || o->naive };
		p = ts_network_lay_out(ctx, dag, p, tg, &lo, NULL, NULL);
	}
	/* The choice tessel run makes: a record where it runs faster than
	 * the static schedule timed alongside it. */
	st = p ? ts_partition_schedules(ctx, p, host, records, o->topk,
		o->threads, say_choice, NULL) : NULL;
	if (!st || rounds <= 0)
		return st ? ts_network_build(ctx, p, st, o) : NULL;
	to.trials = trials;
	to.batch = trials < to.batch ? trials : to.batch;
	/* As tessel tune on a network: each task starts from the static
	 * model's best kernels. */
	to.lead = to.batch;
	to.threads = to.measure.threads = o->threads > 0 ? o->threads : 1;
	/* The tuner sets the cores of the host it is given to its threads:
	 * its records are keyed as tessel tune's. */
	tuned = ts_partition_tune(ctx, p, host, rounds, &to, NULL, NULL,
		NULL);
	if (!tuned)
		return NULL;
	for (int t = 0; t < p->ntasks; t++)
		if (tuned[t])
			st[t] = tuned[t];
	return ts_network_build(ctx, p, st, o);
}

int main(int argc, char **argv)
{
	ts_network_options o = ts_network_options_default();
	ts_ctx *ctx;
	ts_dag *dag;
	ts_target *tg;
	ts_network *net = NULL;
	ts_array **in = NULL, *out[4] = { 0 };
	int rounds = 0, trials = 16;
	const char *records = NULL;
	uint64_t seed = 1;	/* tessel run's and tasks' default */

	if (argc < 4) {
		fprintf(stderr, "usage: bench_network NET BATCH DIR "
			"[--threads N] [--topk K] [--naive] [--tune ROUNDS "
			"[--trials N]] [--records LOG] [--seed N] "
			"[--declared-layouts]\n");
		return 2;
	}
	options(argc, argv, &o, &rounds, &trials, &records, &seed);
	ctx = ts_ctx_alloc();
	/* The static choices are drawn with the seed tessel run uses, so
	 * that both run the same schedules. */
	ts_ctx_set_seed(ctx, seed);
	dag = build(ctx, argv[1], atoi(argv[2]));
	tg = dag ? ts_target_host(ctx) : NULL;
	if (tg)
		in = ts_dag_random_inputs(ctx, dag, 1);
	if (in) {
		scale_weights(dag, in);
		for (int i = 0; i < ts_dag_ninputs(dag); i++)
			if (write_npy(ctx, argv[3],
				    ts_tensor_name(ts_dag_input(dag, i)),
				    in[i]))
				in = NULL;
	}
	if (in)
		net = compile(ctx, dag, tg, &o, rounds, trials, records);
	if (!net || ts_network_run(net, in, out) != TS_OK ||
		write_npy(ctx, argv[3], ts_tensor_name(ts_dag_output(dag, 0)),
			out[0])) {
		fprintf(stderr, "bench_network: %s\n", ts_ctx_error(ctx));
		return 1;
	}
	fprintf(stderr, "schedules:");
	for (int t = 0; t < ts_network_partition(net)->ntasks; t++)
		fprintf(stderr, " %s", ts_schedule_hash(
			ts_network_task_schedule(net, t)));
	fprintf(stderr, "\n");
	printf("ready %s %d %.6g\n", ts_tensor_name(ts_dag_output(dag, 0)),
		ts_network_partition(net)->ntasks,
		ts_network_memory(net)->arena_bytes / 1048576.0);
	fflush(stdout);
	serve(net, in, out);
	ts_network_free(net);
	ts_ctx_free(ctx);
	return 0;
}
