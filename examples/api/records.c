/* Tuning records from C: tune a matmul for a few trials into a records
 * log (when the log has no record of it yet), then build the kernel the
 * way "tessel run --records LOG" does: the best record of the log for
 * this workload and this machine, timed here against the static schedule
 * and kept only when it is faster, then run on the program's own arrays
 * and compared with the reference interpreter.
 *
 *   build:  cc records.c $(pkg-config --cflags --libs tessel) -o records
 *   usage:  ./records LOG [TRIALS]     (TRIALS = 16)
 *
 * The same log serves "tessel run --records LOG" on the same .tsl text,
 * and "tessel tune --log LOG" resumes from it.  Tuning measures in a
 * separate worker process, the installed "tessel measure-worker".
 *
 * Exit status: 0 when the result matches, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>

#include <tessel/tessel.h>

static const char matmul_tsl[] =
	"let N = 192\n"
	"input A: f32[N, N]\n"
	"input B: f32[N, N]\n"
	"output C[i: N, j: N] = sum(k: N) A[i, k] * B[k, j]\n";

/* Records key a machine with the threads the kernels ran with: tune and
 * apply with the same number. */
#define THREADS 1

/* Print the tuner's progress after each batch ("data" unused). */
static void progress(const ts_tune_progress *p, void *data)
{
	(void)data;
	printf("  %d/%d trials, best %.4f ms\n", p->trials, p->total,
		p->best_s * 1e3);
}

/* Tune "dag" on "host" for "trials" measurements, appending every one
 * to "log"; false with a message in "ctx" on failure. */
static bool tune(ts_ctx *ctx, const ts_dag *dag, const ts_target *host,
	const char *log, int trials)
{
	ts_tune_options opt = ts_tune_options_default();
	ts_tuner *t;
	bool ok;

	opt.trials = trials;
	opt.batch = trials < 8 ? trials : 8;
	opt.verify = 2;
	opt.threads = opt.measure.threads = THREADS;
	opt.measure.min_repeat_s = 0.02;
	opt.log = log;
	printf("tuning %d trials into %s\n", trials, log);
	t = ts_tuner_new(ctx, dag, host, &opt);
	if (!t)
		return false;
	ok = ts_tuner_run(t, progress, NULL) == TS_OK;
	if (ok)
		printf("tuned %.4f ms, static %.4f ms\n",
			ts_tuner_best_time(t) * 1e3,
			ts_tuner_static_time(t) * 1e3);
	ts_tuner_free(t);
	return ok;
}

/* The best valid record of "log" for "dag" on "host" run with THREADS
 * threads, or NULL (also when the log cannot be read yet). */
static const ts_record *best_record(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *host, const char *log)
{
	const ts_target *keyed = ts_records_target(host, THREADS);
	ts_record **recs;
	int n = 0;

	recs = ts_records_load(ctx, log, &n);
	ts_ctx_clear_error(ctx);
	if (!recs)
		return NULL;
	return ts_records_best(recs, n, ts_dag_hash(dag), ts_target_key(keyed));
}

/* Lower "dag" under the best record of "log" when it beats the static
 * schedule here, else under the static schedule; NULL on failure. */
static ts_func *lower_with_records(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *host, const ts_record *best)
{
	ts_schedule *st = ts_static_baseline(ctx, dag, host, THREADS);
	ts_func *fst = st ? ts_lower(ctx, dag, st) : NULL;
	ts_schedule *rec;
	ts_func *frec;
	const char *why = NULL;

	if (!fst || !best)
		return fst;
	printf("best record: line %d of the log, median %.4f ms\n",
		best->line, best->median_s * 1e3);
	rec = ts_record_schedule(ctx, dag, best);
	frec = rec ? ts_lower(ctx, dag, rec) : NULL;
	if (!frec)
		return NULL;
	/* A record was timed in another process, perhaps on another day:
	 * time it again, here, alongside the static schedule. */
	if (ts_record_beats_static(ctx, dag, frec, fst, NULL, THREADS, &why)) {
		printf("using the record: %s\n", why);
		return frec;
	}
	printf("using the static schedule: %s\n", why);
	return fst;
}

/* Run "f" of "dag" on arrays of the program's own and compare with the
 * interpreter; false on failure. */
static bool run_checked(ts_ctx *ctx, const ts_dag *dag, const ts_func *f)
{
	ts_compile_options opt = ts_compile_options_default();
	int64_t n = ts_tensor_dim(ts_dag_input(dag, 0), 0);
	size_t bytes = (size_t)(n * n) * sizeof(float);
	float *mem[3] = { aligned_alloc(64, bytes), aligned_alloc(64, bytes),
		aligned_alloc(64, bytes) };
	ts_array arr[3], *args[3], *want[1];
	ts_module *m;
	bool ok = false;

	opt.threads = THREADS;
	for (int a = 0; a < 3; a++) {
		arr[a] = (ts_array){ .dtype = TS_F32, .ndim = 2,
			.shape = { n, n }, .size = n * n, .data = mem[a] };
		args[a] = &arr[a];
		for (int64_t e = 0; mem[a] && e < n * n; e++)
			mem[a][e] = (float)((e * 13 + a) % 19 - 9) / 9;
	}
	m = mem[0] && mem[1] && mem[2] ? ts_module_compile(ctx, f, &opt) : NULL;
	if (m && ts_module_run(m, args) == TS_OK &&
	    ts_eval(ctx, dag, args, want) == TS_OK) {
		ok = ts_array_close(args[2], want[0], NULL);
		printf("C matches the interpreter: %s\n", ok ? "yes" : "NO");
	}
	ts_module_free(m);
	for (int a = 0; a < 3; a++)
		free(mem[a]);
	return ok;
}

int main(int argc, char **argv)
{
	int trials = argc > 2 ? atoi(argv[2]) : 16;
	ts_ctx *ctx;
	const ts_target *host;
	const ts_record *best;
	ts_dag *dag;
	ts_func *f;
	bool ok;

	if (argc < 2 || argc > 3 || trials < 1) {
		fprintf(stderr, "usage: %s LOG [TRIALS]\n", argv[0]);
		return 2;
	}
	ctx = ts_ctx_alloc();
	if (!ctx)
		return 1;
	ts_ctx_set_seed(ctx, 1);
	dag = ts_parse_string(ctx, "matmul.tsl", matmul_tsl);
	host = dag ? ts_target_host(ctx) : NULL;
	best = host ? best_record(ctx, dag, host, argv[1]) : NULL;
	ok = host != NULL;
	if (ok && !best) {
		ok = tune(ctx, dag, host, argv[1], trials);
		best = ok ? best_record(ctx, dag, host, argv[1]) : NULL;
	}
	f = ok ? lower_with_records(ctx, dag, host, best) : NULL;
	ok = f && run_checked(ctx, dag, f);
	if (!ok)
		fprintf(stderr, "%s: %s\n", argv[0], ts_ctx_error(ctx) ?
			ts_ctx_error(ctx) : "wrong result");
	ts_ctx_free(ctx);
	return ok ? 0 : 1;
}
