/* Tuning records: JSON round trip, loading a log with bad lines (each
 * skipped with a warning naming its line), best-record selection, appends
 * from two processes, and replaying a record's schedule to the same
 * program. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gc.h>

#include <tessel/search.h>

#include "tests/common.h"

static const char *matmul_src =
	"input A: f32[16, 12]\n"
	"input B: f32[12, 32]\n"
	"output C[i: 16, j: 32] = sum(k: 12) A[i, k] * B[k, j]\n";

/* "path" followed by "rest" (not freed: a test). */
static const char *at(const char *path, const char *rest)
{
	char *s = malloc(strlen(path) + strlen(rest) + 1);

	strcpy(s, path);
	strcat(s, rest);
	return s;
}

/* Write "text" to "path". */
static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* A tiled schedule of "dag". */
static ts_schedule *tiled(ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "i.o", "j.o", "k", "i.i", "j.i" };

	assert_int_equal(ts_schedule_split(sch, "C", "j", 8, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_split(sch, "C", "i", 3,
		TS_TAIL_PARTITION), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 5, order), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "C", "j.i"), TS_OK);
	assert_int_equal(ts_schedule_unroll(sch, "C", "i.i"), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_OK);
	return sch;
}

/* A record of "sch" on "target" with "median" and "error". */
static ts_record *make_record(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const ts_schedule *sch, double median,
	ts_error_code error, uint64_t seed)
{
	double samples[3] = { median * 1.1, median, median * 0.95 };
	ts_measure_result res = {
		.error = error, .median_s = error ? 0 : median,
		.nsamples = error ? 0 : 3, .samples = samples,
		.max_abs_err = error ? NAN : 1e-6, .build_s = 0.25,
		.message = error ? "the candidate crashed" : NULL,
	};
	ts_record *r = ts_record_new(ctx, dag, target, NULL, sch, &res, seed);

	assert_non_null(r);
	return r;
}

/* A target called "name" with "cores" cores. */
static ts_target *cpu_target(ts_ctx *ctx, const char *name, int cores)
{
	ts_target *t = ts_target_lookup(ctx, "zen3");

	assert_non_null(t);
	t->name = name;
	t->cpu.cores = cores;
	return t;
}

static void test_record_json__round_trip(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *t = cpu_target(ctx, "host", 2);
	ts_record *r = make_record(ctx, dag, t, tiled(ctx, dag), 2e-3,
		TS_ERR_NONE, 42);
	char *line = ts_record_to_json(r);
	ts_record *back = ts_record_from_json(ctx, line);

	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	assert_non_null(strstr(line, "{\"version\":1,\"workload\":\""));
	assert_non_null(back);
	assert_string_equal(back->workload, ts_dag_hash(dag));
	assert_string_equal(back->dag, "mm");
	assert_string_equal(back->target, ts_target_key(t));
	assert_string_equal(back->schedule, r->schedule);
	assert_null(back->config);
	assert_int_equal(back->ntimes, 3);
	assert_true(back->times[2] == r->times[2]);
	assert_true(back->median_s == 2e-3);
	assert_int_equal(back->error, TS_ERR_NONE);
	assert_true(back->max_abs_err == 1e-6);
	assert_true(back->build_s == 0.25);
	assert_int_equal(back->seed, 42);
	assert_int_equal(strlen(back->timestamp), 20);
	assert_int_equal(back->timestamp[10], 'T');
	/* A failed candidate: no time, its message kept. */
	r = make_record(ctx, dag, t, tiled(ctx, dag), 1, TS_ERR_RUNTIME, 1);
	back = ts_record_from_json(ctx, ts_record_to_json(r));
	assert_non_null(back);
	assert_int_equal(back->error, TS_ERR_RUNTIME);
	assert_true(isinf(back->median_s));
	assert_true(isnan(back->max_abs_err));
	assert_string_equal(back->message, "the candidate crashed");
}

static void test_target_key__follows_every_field(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *a = cpu_target(ctx, "host", 2);
	ts_target *b = cpu_target(ctx, "host", 2);
	ts_target *c = cpu_target(ctx, "host", 1);
	const char *ka = ts_target_key(a);

	assert_string_equal(ka, ts_target_key(b));
	assert_string_not_equal(ka, ts_target_key(c));
	assert_int_equal(strncmp(ka, "host-", 5), 0);
	assert_int_equal(strlen(ka), 5 + 16);
}

static void test_records_load__bad_lines_skipped_with_warning(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *t = cpu_target(ctx, "host", 2);
	char *good = ts_record_to_json(make_record(ctx, dag, t,
		tiled(ctx, dag), 1e-3, TS_ERR_NONE, 1));
	char *v2 = strdup(good), *missing = strdup(good);
	char *path = ts_test_temp_path("records", "bad.jsonl"), text[16384];
	const char *w;
	ts_record **recs;
	int n = -1;

	memcpy(strstr(v2, "\"version\":1"), "\"version\":2", 11);
	memcpy(strstr(missing, "\"workload\""), "\"workloaX\"", 10);
	snprintf(text, sizeof(text), "%s\n{\"version\": 1, garbled\n%s\n\n"
		"%s\n%s\n%.*s", good, v2, good, missing,
		(int)strlen(good) - 10, good);
	write_text(path, text);
	recs = ts_records_load(ctx, path, &n);
	assert_non_null(recs);
	assert_int_equal(n, 2);
	assert_int_equal(recs[0]->line, 1);
	assert_int_equal(recs[1]->line, 5);
	assert_null(ts_ctx_error(ctx));
	w = ts_ctx_warnings(ctx);
	assert_non_null(w);
	assert_non_null(strstr(w, at(path, ":2: skipped: not "
		"JSON")));
	assert_non_null(strstr(w, at(path, ":3: skipped: "
		"format version 2 (this build reads version 1)")));
	assert_non_null(strstr(w, at(path, ":6: skipped: "
		"needs 'workload'")));
	assert_non_null(strstr(w, at(path, ":7: skipped a "
		"partial last line")));
	assert_null(strstr(w, ":4:"));
	unlink(path);
	free(path);
	free(v2);
	free(missing);
}

static void test_record_append__after_partial_line_starts_new_line(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *t = cpu_target(ctx, "host", 2);
	ts_record *r = make_record(ctx, dag, t, tiled(ctx, dag), 1e-3,
		TS_ERR_NONE, 1);
	char *line = ts_record_to_json(r);
	char *path = ts_test_temp_path("records", "partial.jsonl");
	char text[16384];
	ts_record **recs;
	int n = 0;

	snprintf(text, sizeof(text), "%s\n%.*s", line, 40, line);
	write_text(path, text);
	assert_int_equal(ts_record_append(ctx, path, r), TS_OK);
	recs = ts_records_load(ctx, path, &n);
	assert_non_null(recs);
	assert_int_equal(n, 2);
	assert_int_equal(recs[1]->line, 3);
	assert_non_null(strstr(ts_ctx_warnings(ctx), ":2: skipped: not "
		"JSON"));
	unlink(path);
	free(path);
}

static void test_records_load__missing_file_is_error(void **state)
{
	ts_ctx *ctx = *state;
	int n = 5;

	assert_null(ts_records_load(ctx, "/nonexistent/log.jsonl", &n));
	assert_int_equal(n, 0);
	assert_error_contains(ctx, "cannot read records "
		"'/nonexistent/log.jsonl'");
}

static void test_records_best__lowest_valid_for_workload_and_target(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_dag *other = ts_parse_string(ctx, "o.tsl",
		"input X: f32[8]\noutput Y[i: 8] = X[i] + 1.0\n");
	ts_target *t = cpu_target(ctx, "host", 2);
	ts_target *t1 = cpu_target(ctx, "host", 1);
	ts_schedule *sch = tiled(ctx, dag);
	ts_record *recs[7];
	const ts_record *best;

	recs[0] = make_record(ctx, dag, t, sch, 3e-3, TS_ERR_NONE, 1);
	recs[1] = make_record(ctx, dag, t, sch, 2e-3, TS_ERR_NONE, 2);
	recs[2] = make_record(ctx, dag, t, sch, 1e-9, TS_ERR_WRONG_ANSWER, 3);
	recs[3] = make_record(ctx, dag, t1, sch, 1e-4, TS_ERR_NONE, 4);
	recs[4] = make_record(ctx, other, t, ts_schedule_naive(ctx, other),
		1e-5, TS_ERR_NONE, 5);
	recs[5] = make_record(ctx, dag, t, sch, 2.5e-3, TS_ERR_NONE, 6);
	recs[6] = make_record(ctx, dag, t, sch, 1e-9, TS_ERR_RUN_TIMEOUT, 7);
	recs[2]->median_s = 1e-9;	/* a wrong answer's time never counts */
	best = ts_records_best(recs, 7, ts_dag_hash(dag), ts_target_key(t));
	assert_non_null(best);
	assert_int_equal(best->seed, 2);
	best = ts_records_best(recs, 7, ts_dag_hash(dag), ts_target_key(t1));
	assert_int_equal(best->seed, 4);
	best = ts_records_best(recs, 7, ts_dag_hash(dag), NULL);
	assert_int_equal(best->seed, 4);
	best = ts_records_best(recs, 7, ts_dag_hash(other), ts_target_key(t));
	assert_int_equal(best->seed, 5);
	assert_null(ts_records_best(recs, 7, ts_dag_hash(other),
		ts_target_key(t1)));
	assert_null(ts_records_best(recs, 0, NULL, NULL));
}

static void test_record_schedule__replays_to_same_program(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_dag *other = ts_parse_string(ctx, "o.tsl",
		"input X: f32[8]\noutput Y[i: 8] = X[i] + 1.0\n");
	ts_target *t = cpu_target(ctx, "host", 2);
	ts_schedule *sch = tiled(ctx, dag), *again;
	char *path = ts_test_temp_path("records", "replay.jsonl");
	ts_record **recs;
	int n = 0;

	assert_int_equal(ts_record_append(ctx, path, make_record(ctx, dag, t,
		sch, 1e-3, TS_ERR_NONE, 1)), TS_OK);
	recs = ts_records_load(ctx, path, &n);
	assert_int_equal(n, 1);
	again = ts_record_schedule(ctx, dag, recs[0]);
	assert_non_null(again);
	assert_string_equal(ts_func_to_string(ts_lower(ctx, dag, again)),
		ts_func_to_string(ts_lower(ctx, dag, sch)));
	assert_string_equal(ts_schedule_to_string(again),
		ts_schedule_to_string(sch));
	/* Through the log, for the matching target only. */
	assert_int_equal(ts_records_best_schedule(ctx, dag, t, path, &again),
		TS_OK);
	assert_non_null(again);
	assert_string_equal(ts_func_to_string(ts_lower(ctx, dag, again)),
		ts_func_to_string(ts_lower(ctx, dag, sch)));
	assert_int_equal(ts_records_best_schedule(ctx, dag, cpu_target(ctx,
		"host", 1), path, &again), TS_OK);
	assert_null(again);
	/* Another workload's record does not replay on this DAG. */
	assert_null(ts_record_schedule(ctx, other, recs[0]));
	assert_error_contains(ctx, "record (line 1) is for workload");
	unlink(path);
	free(path);
}

enum { APPENDS = 150 };

/* In a child: append APPENDS records of seeds "base" + i to "path". */
static void append_many(ts_ctx *ctx, const ts_dag *dag, const ts_target *t,
	const ts_schedule *sch, const char *path, uint64_t base)
{
	ts_record *r = make_record(ctx, dag, t, sch, 1e-3, TS_ERR_NONE, 0);
	char *big = malloc(8192);

	/* Long lines make a torn or interleaved write likely to show. */
	memset(big, 'x', 8191);
	big[8191] = '\0';
	r->message = big;
	for (int i = 0; i < APPENDS; i++) {
		r->seed = base + (uint64_t)i;
		if (ts_record_append(ctx, path, r) < 0)
			_exit(1);
	}
	_exit(0);
}

static void test_record_append__two_processes_do_not_interleave(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *t = cpu_target(ctx, "host", 2);
	ts_schedule *sch = tiled(ctx, dag);
	char *path = ts_test_temp_path("records", "two.jsonl");
	bool seen[2 * APPENDS] = { false };
	pid_t pid[2];
	ts_record **recs;
	int n = 0, status;

	for (int k = 0; k < 2; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0)
			append_many(ctx, dag, t, sch, path,
				(uint64_t)k * APPENDS);
	}
	for (int k = 0; k < 2; k++) {
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	recs = ts_records_load(ctx, path, &n);
	assert_non_null(recs);
	assert_null(ts_ctx_warnings(ctx));
	assert_int_equal(n, 2 * APPENDS);
	for (int i = 0; i < n; i++) {
		assert_true(recs[i]->seed < 2 * APPENDS);
		assert_false(seen[recs[i]->seed]);
		seen[recs[i]->seed] = true;
		assert_int_equal(strlen(recs[i]->message), 8191);
	}
	unlink(path);
	free(path);
}

/* Run the tessel program with "args" in the temporary folder; return
 * its exit code and its standard output and error (not freed). */
static int run_tessel(const char *args, char **out, char **err)
{
	const char *bdir = getenv("TS_BUILDDIR");
	char *o = ts_test_temp_path("records", "out.jsonl");
	char *e = ts_test_temp_path("records", "err.jsonl");
	char cmd[4096];
	FILE *fp;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s/tools/tessel' %s >'%s' 2>'%s'",
		bdir ? bdir : TS_BUILDDIR, args, o, e);
	status = system(cmd);
	for (int k = 0; k < 2; k++) {
		char **dst = k ? err : out;
		*dst = calloc(1, 65536);
		fp = fopen(k ? e : o, "r");
		assert_non_null(fp);
		fread(*dst, 1, 65535, fp);
		fclose(fp);
	}
	unlink(o);
	unlink(e);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_tessel_run_records__best_record_else_static(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *host = ts_target_host(ctx), one = *host;
	char *tsl = ts_test_temp_path("records", "tsl.jsonl");
	char *log = ts_test_temp_path("records", "log.jsonl");
	char *out, *err, args[2048], want[2048];

	assert_non_null(host);
	one.cpu.cores = 1;
	write_text(tsl, matmul_src);
	/* A faster failed record, a valid one, and one of another target. */
	assert_int_equal(ts_record_append(ctx, log, make_record(ctx, dag,
		&one, ts_schedule_naive(ctx, dag), 1e-9, TS_ERR_WRONG_ANSWER,
		1)), TS_OK);
	assert_int_equal(ts_record_append(ctx, log, make_record(ctx, dag,
		&one, tiled(ctx, dag), 2e-3, TS_ERR_NONE, 2)), TS_OK);
	assert_int_equal(ts_record_append(ctx, log, make_record(ctx, dag,
		cpu_target(ctx, "zen3", 1), ts_schedule_naive(ctx, dag), 1e-4,
		TS_ERR_NONE, 3)), TS_OK);
	snprintf(args, sizeof(args), "run '%s' --records '%s' --threads 1 "
		"--check --json --min-time 0", tsl, log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	snprintf(want, sizeof(want), "tessel run: schedule of the record at "
		"%s:2 (median 2 ms)", log);
	if (!strstr(err, want))
		fail_msg("expected \"%s\" on stderr, got \"%s\"", want, err);
	assert_non_null(strstr(out, "\"passed\": true"));
	/* With two threads the host target differs: no record applies. */
	snprintf(args, sizeof(args), "run '%s' --records '%s' --threads 2 "
		"--check --json --min-time 0", tsl, log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_non_null(strstr(err, "no valid record in"));
	assert_non_null(strstr(err, "using the static schedule"));
	assert_non_null(strstr(out, "\"passed\": true"));
	unlink(tsl);
	unlink(log);
}

static const char *matmul64_src =
	"input A: f32[64, 64]\n"
	"input B: f32[64, 64]\n"
	"output C[i: 64, j: 64] = sum(k: 64) A[i, k] * B[k, j]\n";

/* A record that claims a made-up time for the naive schedule is timed
 * against the static baseline and dropped: run and build keep the
 * static schedule, say so and why, and run's schedule is the baseline
 * (the one tessel run --schedule static compiles). */
static void test_tessel_run_records__slow_record_keeps_static(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm64.tsl", matmul64_src);
	ts_target *host = ts_target_host(ctx), one;
	char *tsl = ts_test_temp_path("records", "mm64.tsl");
	char *log = ts_test_temp_path("records", "slow.jsonl");
	char *out, *err, args[2048], want[2048], dir[512];

	assert_non_null(host);
	one = *host;
	one.cpu.cores = 1;
	write_text(tsl, matmul64_src);
	assert_int_equal(ts_record_append(ctx, log, make_record(ctx, dag,
		&one, ts_schedule_naive(ctx, dag), 1e-9, TS_ERR_NONE, 1)),
		TS_OK);
	snprintf(args, sizeof(args), "run '%s' --records '%s' --threads 1 "
		"--check --json --min-time 0", tsl, log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	snprintf(want, sizeof(want), "tessel run: schedule of the record at "
		"%s:1 (median 1e-06 ms) against the static schedule, 5 "
		"interleaved rounds: ", log);
	if (!strstr(err, want) || !strstr(err, "kept the static schedule "
	    "(the record is "))
		fail_msg("expected \"%s... kept the static schedule\" on "
			"stderr, got \"%s\"", want, err);
	assert_non_null(strstr(out, "\"passed\": true"));
	ts_ctx_set_seed(ctx, 1);
	snprintf(want, sizeof(want), "\"schedule_hash\": \"%s\"",
		ts_schedule_hash(ts_static_baseline(ctx, dag, host, 1)));
	if (!strstr(out, want))
		fail_msg("expected %s in \"%s\"", want, out);
	snprintf(dir, sizeof(dir), "%s.d", tsl);
	snprintf(args, sizeof(args), "build '%s' --records '%s' --threads 1 "
		"-o '%s'", tsl, log, dir);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_non_null(strstr(err, "tessel build: schedule of the record"));
	assert_non_null(strstr(err, "kept the static schedule"));
	snprintf(args, sizeof(args), "rm -rf '%s'", dir);
	assert_int_equal(system(args), 0);
	unlink(tsl);
	unlink(log);
}

/* A verified record beats unverified ones, even faster ones: the
 * tuner's final comparison decides, not a lucky first measurement. */
static void test_records_best__verified_first(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *host = ts_target_host(ctx);
	ts_record *recs[4];
	ts_record *back;

	assert_non_null(host);
	recs[0] = make_record(ctx, dag, host, tiled(ctx, dag), 1e-4,
		TS_ERR_NONE, 1);
	recs[1] = make_record(ctx, dag, host, tiled(ctx, dag), 3e-3,
		TS_ERR_NONE, 1);
	recs[2] = make_record(ctx, dag, host, tiled(ctx, dag), 2e-3,
		TS_ERR_NONE, 1);
	recs[3] = make_record(ctx, dag, host, tiled(ctx, dag), 1e-5,
		TS_ERR_WRONG_ANSWER, 1);
	recs[1]->verified = recs[2]->verified = recs[3]->verified = true;
	assert_ptr_equal(ts_records_best(recs, 4, ts_dag_hash(dag), NULL),
		recs[2]);
	assert_ptr_equal(ts_records_best(recs, 1, ts_dag_hash(dag), NULL),
		recs[0]);
	/* the flag is written only when set, and read back */
	assert_null(strstr(ts_record_to_json(recs[0]), "verified"));
	back = ts_record_from_json(ctx, ts_record_to_json(recs[2]));
	assert_non_null(back);
	assert_true(back->verified);
	back = ts_record_from_json(ctx, ts_record_to_json(recs[0]));
	assert_non_null(back);
	assert_false(back->verified);
}

static void test_tessel_build_records__applies_host_record(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_target *host = ts_target_host(ctx);
	char *tsl = ts_test_temp_path("records", "tsl.jsonl");
	char *log = ts_test_temp_path("records", "log.jsonl");
	char dir[512], *out, *err, args[2048];

	assert_non_null(host);
	write_text(tsl, matmul_src);
	snprintf(dir, sizeof(dir), "%s.d", tsl);
	assert_int_equal(ts_record_append(ctx, log, make_record(ctx, dag,
		host, tiled(ctx, dag), 1e-3, TS_ERR_NONE, 2)), TS_OK);
	snprintf(args, sizeof(args), "build '%s' --records '%s' -o '%s'", tsl,
		log, dir);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_non_null(strstr(err, "tessel build: schedule of the record"));
	/* A log that cannot be read is an error of the command line. */
	snprintf(args, sizeof(args), "build '%s' --records /nonexistent/l "
		"-o '%s'", tsl, dir);
	assert_int_equal(run_tessel(args, &out, &err), 2);
	assert_non_null(strstr(err, "cannot read records '/nonexistent/l'"));
	snprintf(args, sizeof(args), "rm -rf '%s'", dir);
	assert_int_equal(system(args), 0);
	unlink(tsl);
	unlink(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_record_json__round_trip),
		TS_TEST(test_target_key__follows_every_field),
		TS_TEST(test_records_load__bad_lines_skipped_with_warning),
		TS_TEST(test_record_append__after_partial_line_starts_new_line),
		TS_TEST(test_records_load__missing_file_is_error),
		TS_TEST(test_records_best__lowest_valid_for_workload_and_target),
		TS_TEST(test_record_schedule__replays_to_same_program),
		TS_TEST(test_record_append__two_processes_do_not_interleave),
		TS_TEST(test_tessel_run_records__best_record_else_static),
		TS_TEST(test_tessel_build_records__applies_host_record),
		TS_TEST(test_tessel_run_records__slow_record_keeps_static),
		TS_TEST(test_records_best__verified_first),
	};

	/* The append test forks children that allocate. */
	GC_set_handle_fork(1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
