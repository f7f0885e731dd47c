/* tessel run, build and tune on network files, run as programs: the
 * network is recognised without any flag, each task takes its best
 * record or its static schedule (said per task), the library of build
 * and the outputs of run agree with the interpreter, and bad input gets
 * a message that names it. */
#include <config.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gc.h>

#include "tests/common.h"

/* The example "name".tsl of the source tree (not freed). */
static char *example(const char *name)
{
	char *p = malloc(1024);

	snprintf(p, 1024, "%s/examples/%s.tsl", ts_test_srcdir(), name);
	return p;
}

/* Run the tessel program with "args"; return its exit code and its
 * standard output and error (not freed). */
static int run_tessel(const char *args, char **out, char **err)
{
	const char *bdir = getenv("TS_BUILDDIR");
	char *o = ts_test_temp_path("netcli", "out");
	char *e = ts_test_temp_path("netcli", "err");
	char cmd[8192];
	int status;

	snprintf(cmd, sizeof(cmd), "'%s/tools/tessel' %s >'%s' 2>'%s'",
		bdir ? bdir : TS_BUILDDIR, args, o, e);
	status = system(cmd);
	for (int k = 0; k < 2; k++) {
		char **dst = k ? err : out;
		FILE *fp = fopen(k ? e : o, "r");
		*dst = calloc(1, 1 << 20);
		assert_non_null(fp);
		fread(*dst, 1, (1 << 20) - 1, fp);
		fclose(fp);
	}
	unlink(o);
	unlink(e);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Fail unless "text" contains "part". */
static void assert_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected \"%s\" in:\n%s", part, text);
}

/* The host target with "cores" cores, as the tuner keys its records. */
static ts_target *host_cores(ts_ctx *ctx, int cores)
{
	ts_target *t = ts_target_host(ctx);

	assert_non_null(t);
	t->cpu.cores = cores;
	return t;
}

/* Append to "log" a record of "sch" for "dag" on "tg" with "median"
 * seconds, failed with "error" unless it is TS_ERR_NONE. */
static void add_record(ts_ctx *ctx, const char *log, const ts_dag *dag,
	const ts_target *tg, const ts_schedule *sch, double median,
	ts_error_code error)
{
	double samples[3] = { median, median, median };
	ts_measure_result res = {
		.error = error, .median_s = error ? 0 : median,
		.nsamples = error ? 0 : 3, .samples = samples,
		.max_abs_err = error ? NAN : 0, .message = error ?
		"wrong answer" : NULL,
	};
	ts_record *r = ts_record_new(ctx, dag, tg, NULL, sch, &res, 1);

	assert_non_null(r);
	assert_int_equal(ts_record_append(ctx, log, r), TS_OK);
}

/* The partition of the example "name" for the host. */
static ts_partition *partition_of(ts_ctx *ctx, const char *name)
{
	ts_dag *dag = ts_parse_file(ctx, example(name));
	ts_partition *p;

	assert_non_null(dag);
	p = ts_partition_dag(ctx, dag, ts_target_host(ctx));
	assert_non_null(p);
	return p;
}

/* The partition the command line runs a network with under
 * --declared-layouts: the weights the static rule blocks, converted by
 * subgraphs of their own. */
static ts_partition *declared_partition_of(ts_ctx *ctx, const char *name)
{
	ts_target *host = ts_target_host(ctx);
	ts_partition *p = ts_partition_block_weights(ctx,
		partition_of(ctx, name), host, NULL);

	assert_non_null(p);
	return p;
}

/* The partition the command line runs a network with by default on
 * "threads" threads (0: every core): the model's layouts, which depend
 * on the host's vectors (LeNet keeps NCHW on an AVX2 host and takes a
 * conversion more on an AVX-512 one). */
static ts_partition *cli_partition_of(ts_ctx *ctx, const char *name,
	int threads)
{
	const ts_target *tg = ts_target_for_threads(ts_target_host(ctx),
		threads);
	ts_partition *p = partition_of(ctx, name);
	ts_layout_options lo = { 0 };
	uint64_t seed = ts_ctx_get_seed(ctx);

	/* The command line's default seed, which seeds the static
	 * searches the layout choice rates candidates with. */
	ts_ctx_set_seed(ctx, 1);
	lo.threads = threads;
	p = ts_network_lay_out(ctx, p->dag, p, tg, &lo, NULL, NULL);
	ts_ctx_set_seed(ctx, seed);
	assert_non_null(p);
	return p;
}

static void test_run_lenet__network_checked_without_flag(void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = cli_partition_of(ctx, "lenet", 1);
	char args[2048], want[256], *out, *err;

	/* Nine subgraphs, and one more per weight the host's vectors
	 * block (which depends on their width). */
	assert_true(p->nsubgraphs >= 9);
	snprintf(args, sizeof(args), "run '%s' --check --threads 1 "
		"--min-time 0", example("lenet"));
	assert_int_equal(run_tessel(args, &out, &err), 0);
	snprintf(want, sizeof(want), "network lenet (%d subgraphs, %d "
		"tasks) median", p->nsubgraphs, p->ntasks);
	assert_has(out, want);
	assert_has(out, "check: pass");
	snprintf(args, sizeof(args), "run '%s' --check --threads 1 "
		"--min-time 0 --json --schedule naive", example("mlp"));
	assert_int_equal(run_tessel(args, &out, &err), 0);
	/* Its two 512-wide layers' weights blocked: two conversions. */
	assert_has(out, "\"kernel\": \"mlp\", \"subgraphs\": 8, \"tasks\": 7");
	assert_has(out, "\"passed\": true");
}

static void test_run_softmax__stays_one_kernel(void **state)
{
	ts_ctx *ctx = *state;
	char args[2048], *out, *err;

	/* Three subgraphs that all read the same input: one operator. */
	assert_false(ts_partition_is_network(partition_of(ctx, "softmax")));
	assert_true(ts_partition_is_network(partition_of(ctx, "mlp")));
	snprintf(args, sizeof(args), "run '%s' --check --min-time 0",
		example("softmax"));
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_has(out, ": softmax median");
	assert_null(strstr(out, "network"));
}

/* A recurrence unrolled over 40 steps, every step reading the same
 * weights (as an RNN exported from PyTorch does): no subgraph has
 * weights of its own, but its 40 loop nests make it a network, run
 * through the executor and checked. */
static void test_run_recurrence__many_steps_are_a_network(void **state)
{
	ts_ctx *ctx = *state;
	char *path = ts_test_temp_path("netcli", "rnn.tsl");
	char args[2048], *out, *err;
	ts_dag *dag;
	ts_partition *p;
	FILE *f;

	assert_non_null(f = fopen(path, "w"));
	fputs("input X: f32[40, 16]\nweight W: f32[16, 16]\n"
		"H0[j: 16] = tanh(sum(k: 16) X[0, k] * W[k, j])\n", f);
	for (int t = 1; t < 40; t++)
		fprintf(f, "%sH%d[j: 16] = tanh(sum(k: 16) (X[%d, k] + H%d[k]) "
			"* W[k, j])\n", t == 39 ? "output " : "", t, t, t - 1);
	fclose(f);
	assert_non_null(dag = ts_parse_file(ctx, path));
	assert_non_null(p = ts_partition_dag(ctx, dag, ts_target_host(ctx)));
	assert_true(p->nsubgraphs >= TS_NETWORK_MIN_SUBGRAPHS);
	assert_true(ts_partition_is_network(p));
	snprintf(args, sizeof(args), "run '%s' --check --threads 1 "
		"--min-time 0", path);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_has(out, "-rnn (");
	assert_has(out, ": network ");
	assert_has(out, "check: pass");
	unlink(path);
}

static void test_run_records__record_per_task_else_static(void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = partition_of(ctx, "lenet");
	const ts_dag *t0 = p->tasks[0]->dag, *t1 = p->tasks[1]->dag;
	char *log = ts_test_temp_path("netcli", "log.jsonl");
	char args[2048];
	char want[2048];
	char *out, *err;
	int nt;

	/* Task 0: a valid record for one core.  Task 1: a faster one that
	 * failed, and a valid one for another core count. */
	add_record(ctx, log, t0, host_cores(ctx, 1),
		ts_schedule_naive(ctx, t0), 2e-3, TS_ERR_NONE);
	add_record(ctx, log, t1, host_cores(ctx, 1),
		ts_schedule_naive(ctx, t1), 1e-9, TS_ERR_WRONG_ANSWER);
	add_record(ctx, log, t1, host_cores(ctx, 3),
		ts_schedule_naive(ctx, t1), 1e-3, TS_ERR_NONE);
	/* The records are of the declared layouts' tasks. */
	snprintf(args, sizeof(args), "run '%s' --records '%s' --threads 1 "
		"--declared-layouts --check --min-time 0", example("lenet"),
		log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	/* the record is timed against the static schedule, and kept only
	 * when faster */
	snprintf(want, sizeof(want), "tessel run: task 0 (anchor %s): "
		"schedule of the record at %s:1 (median 2 ms) against the "
		"static schedule, 5 interleaved rounds: ", p->tasks[0]->name,
		log);
	assert_has(err, want);
	snprintf(want, sizeof(want), "tessel run: task 1 (anchor %s): no "
		"valid record in %s for workload %s", p->tasks[1]->name, log,
		p->tasks[1]->hash);
	assert_has(err, want);
	assert_has(err, "using the static schedule");
	/* The command line runs the weights the static rule blocks. */
	nt = declared_partition_of(ctx, "lenet")->ntasks;
	snprintf(want, sizeof(want), "tessel run: 1 of %d tasks from "
		"records, %d static", nt, nt - 1);
	if (!strstr(err, want)) {
		snprintf(want, sizeof(want), "tessel run: 0 of %d tasks from "
			"records, %d static", nt, nt);
		assert_has(err, want);
	}
	assert_has(out, "check: pass");
	unlink(log);
}

/* "0 of N tasks from records". */
static const char *summary(int n)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "0 of %d tasks from records", n);
	return buf;
}

/* Collects the lines of ts_partition_schedules. */
static void collect(void *data, const char *line)
{
	char *buf = data;

	snprintf(buf + strlen(buf), 8192 - strlen(buf), "%s\n", line);
}

/* The library's choice, as bench_network makes it: a record that claims
 * a time it does not reach (the naive schedule of a convolution at one
 * nanosecond) is timed against the static schedule and loses. */
static void test_partition_schedules__record_timed_not_believed(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = declared_partition_of(ctx, "lenet");
	char *log = ts_test_temp_path("netcli", "lie.jsonl");
	char said[8192] = "";
	int t = 0;
	ts_schedule **st, **sch;

	while (t < p->ntasks && p->tasks[t]->dag->nstages < 2)
		t++;
	assert_true(t < p->ntasks);
	add_record(ctx, log, p->tasks[t]->dag, host_cores(ctx, 1),
		ts_schedule_naive(ctx, p->tasks[t]->dag), 1e-9, TS_ERR_NONE);
	sch = ts_partition_schedules(ctx, p, ts_target_host(ctx), log, 0, 1,
		collect, said);
	st = ts_partition_schedules(ctx, p, ts_target_host(ctx), NULL, 0, 1,
		NULL, NULL);
	assert_non_null(sch);
	assert_non_null(st);
	assert_string_equal(ts_schedule_hash(sch[t]),
		ts_schedule_hash(st[t]));
	assert_has(said, "kept the static schedule (the record is");
	assert_has(said, summary(p->ntasks));
	unlink(log);
}

static void test_run_records_unreadable__names_log(void **state)
{
	char args[2048], *out, *err;

	(void)state;
	snprintf(args, sizeof(args), "run '%s' --records /nonexistent/log "
		"--min-time 0", example("lenet"));
	assert_int_equal(run_tessel(args, &out, &err), 2);
	assert_has(err, "/nonexistent/log");
}

/* Load "dir"/lib"name".so, run its entry point on seeded inputs of
 * "dag" and compare the outputs with the interpreter. */
static void check_library(ts_ctx *ctx, const ts_dag *dag, const char *dir,
	const char *name)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array **want = GC_MALLOC(sizeof(*want) * (dag->noutputs + 1));
	ts_array **got = GC_MALLOC(sizeof(*got) * (dag->noutputs + 1));
	const void **ins = calloc((size_t)dag->ninputs + 1, sizeof(*ins));
	void **outs = calloc((size_t)dag->noutputs + 1, sizeof(*outs));
	int (*entry)(const void *const *, void *const *);
	char so[1024];
	void *lib;

	assert_non_null(in);
	snprintf(so, sizeof(so), "%s/lib%s.so", dir, name);
	lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s", dlerror());
	entry = (int (*)(const void *const *, void *const *))dlsym(lib, name);
	assert_non_null(entry);
	for (int i = 0; i < dag->ninputs; i++)
		ins[i] = in[i]->data;
	for (int o = 0; o < dag->noutputs; o++) {
		got[o] = ts_array_for_tensor(ctx, dag->outputs[o]);
		outs[o] = got[o]->data;
	}
	assert_int_equal(entry(ins, outs), 0);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	for (int o = 0; o < dag->noutputs; o++)
		assert_true(ts_array_close(got[o], want[o], NULL));
	dlclose(lib);
}

static void test_build_mlp__one_library_matches_interpreter(void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = declared_partition_of(ctx, "mlp");
	/* Task 0 converts the first weight; task 1 is the first layer. */
	const ts_dag *t0 = p->tasks[1]->dag;
	char *log = ts_test_temp_path("netcli", "log.jsonl");
	char *dir = ts_test_temp_path("netcli", "lib");
	char args[2048], want[2048], *out, *err;

	add_record(ctx, log, t0, host_cores(ctx, 1),
		ts_schedule_naive(ctx, t0), 1e-3, TS_ERR_NONE);
	snprintf(args, sizeof(args), "build '%s' -o '%s' --records '%s' "
		"--threads 1", example("mlp"), dir, log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	snprintf(want, sizeof(want), "%s/mlp.h\n%s/libmlp.so\n", dir, dir);
	assert_has(out, want);
	assert_has(err, "tessel build: task 1 (anchor D1): schedule of the "
		"record at");
	if (!strstr(err, "tessel build: 1 of 7 tasks from records, 6 static"))
		assert_has(err, "tessel build: 0 of 7 tasks from records, 7 "
			"static");
	check_library(ctx, p->dag, dir, "mlp");
	ts_test_remove_tree(dir);
	unlink(log);
}

static void test_build_network_bad_options__name_them(void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = cli_partition_of(ctx, "lenet", 0);
	char *dir = ts_test_temp_path("netcli", "lib");
	char args[2048], want[128], *out, *err;

	snprintf(args, sizeof(args), "build '%s' -o '%s' --cpu znver3",
		example("lenet"), dir);
	assert_int_equal(run_tessel(args, &out, &err), 2);
	snprintf(want, sizeof(want), "is a network of %d subgraphs",
		p->nsubgraphs);
	assert_has(err, want);
	assert_has(err, "(--cpu does not apply)");
	snprintf(args, sizeof(args), "build '%s' -o '%s' --schedule "
		"/tmp/s.json", example("lenet"), dir);
	assert_int_equal(run_tessel(args, &out, &err), 2);
	assert_has(err, "(--schedule FILE does not apply)");
	snprintf(args, sizeof(args), "build '%s' -o '%s' --threads 0",
		example("lenet"), dir);
	assert_int_equal(run_tessel(args, &out, &err), 2);
	assert_has(err, "tessel build: bad value '0' for --threads");
	ts_test_remove_tree(dir);
}

/* Check the curve that tessel tune wrote next to the log "log" of a
 * network: the estimated latency per round as a step against the
 * latency of the static schedules, the gain written out. */
static void check_network_curve(const char *log, int ntasks)
{
	char *svg = strdup(log), *csv = strdup(log), *text = calloc(1, 1 << 16);
	char part[128];
	FILE *f;

	strcpy(strrchr(svg, '.'), ".svg");
	strcpy(strrchr(csv, '.'), ".csv");
	f = fopen(csv, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, 1 << 16, f));
	assert_string_equal(text, "round,task,seconds,latency_s\n");
	fclose(f);
	f = fopen(svg, "r");
	assert_non_null(f);
	fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	assert_has(text, ">estimated network latency (ms)</text>");
	(void)ntasks;
	snprintf(part, sizeof(part), ">seconds of tuning, in rounds of 1 "
		"trials</text>");
	assert_has(text, part);
	assert_has(text, "<path class=\"best\" ");
	assert_has(text, "<line class=\"ref-static\" ");
	assert_has(text, "<text class=\"ref-static\" ");
	/* Every task's best is its static time or faster, but the network
	 * is timed again: on a loaded machine it may come out slower. */
	assert_true(strstr(text, "% faster than static</text>") ||
		strstr(text, "% slower than static</text>"));
	unlink(svg);
	unlink(csv);
	free(svg);
	free(csv);
	free(text);
}

static void test_tune_lenet__network_without_flag_then_run(void **state)
{
	char *log = ts_test_temp_path("netcli", "tune.jsonl");
	char args[2048], part[128];
	char *out, *err, *line;
	int nsub, ntasks, rounds;
	struct stat st;

	(void)state;
	snprintf(args, sizeof(args), "tune '%s' --trials 11 --batch 1 "
		"--threads 1 --log '%s' --quiet", example("lenet"), log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	/* Nine tasks (the softmax's row maximum and sum go with its
	 * output); the layouts are chosen by timing, and a layout that
	 * changes between two stages, or a weight blocked, adds a
	 * conversion task.  Every task gets a round, so the rounds are at
	 * least the tasks. */
	line = strstr(out, "lenet: ");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "lenet: %d subgraphs, %d tasks; %d "
		"rounds of 1 trials", &nsub, &ntasks, &rounds), 3);
	assert_true(ntasks >= 9 && ntasks <= 16);
	assert_int_equal(nsub, ntasks);
	assert_int_equal(rounds, ntasks > 11 ? ntasks : 11);
	assert_has(out, "trials shared by expected gain");
	assert_has(out, "estimated network latency");
	assert_has(out, "(static schedules ");
	/* The layouts first, timed and kept in the log. */
	assert_has(err, "tessel tune: layouts chosen by timing");
	assert_int_equal(stat(log, &st), 0);
	assert_true(st.st_size > 0);
	check_network_curve(log, ntasks);
	/* The tuner measured with one thread: its records are for the
	 * host with one core, and every task had a round. */
	/* The records are of the declared layouts' tasks. */
	snprintf(args, sizeof(args), "run '%s' --records '%s' --threads 1 "
		"--declared-layouts --check --min-time 0", example("lenet"),
		log);
	assert_int_equal(run_tessel(args, &out, &err), 0);
	snprintf(part, sizeof(part), " of %d tasks from records", ntasks);
	assert_has(err, part);
	/* Every task but the conversions of weights, which run once and
	 * are not tuned, has a record. */
	for (line = strstr(err, "no valid record"); line;
	    line = strstr(line + 1, "no valid record")) {
		const char *start = line;
		while (start > err && start[-1] != '\n')
			start--;
		if (!strstr(start, "(anchor weight blocked") ||
		    strstr(start, "(anchor weight blocked") > line)
			fail_msg("a task without a record:\n%s", err);
	}
	assert_has(err, "tessel run: layouts of the record at ");
	assert_has(out, "check: pass");
	unlink(log);
}

/* The layouts of a network being tuned are chosen by timing, which
 * decides whether a weight is blocked (a subgraph of its own): the counts
 * vary with the machine and its load (8 subgraphs and 7 tasks, or 7 and
 * 6 under a parallel make), and every task has a round of its own. */
static void test_tune_mlp_network_flag__still_accepted(void **state)
{
	char args[2048], *out, *err;
	int nsub = 0, ntasks = 0, nrounds = 0;
	const char *line;

	(void)state;
	snprintf(args, sizeof(args), "tune '%s' --network --trials 3 "
		"--batch 1 --threads 1 --quiet", example("mlp"));
	assert_int_equal(run_tessel(args, &out, &err), 0);
	assert_has(out, "mlp: ");
	line = strstr(out, "mlp: ");
	assert_int_equal(sscanf(line, "mlp: %d subgraphs, %d tasks; %d "
		"rounds of 1 trials", &nsub, &ntasks, &nrounds), 3);
	assert_true(ntasks >= 6 && nsub > ntasks);
	assert_int_equal(nrounds, ntasks);
}

/* The schedule hashes of the tasks of "name".tsl compiled through the
 * C API (ts_network_compile, seed 1, one thread), as one line. */
static char *api_hashes(ts_ctx *ctx, const char *name)
{
	ts_dag *dag = ts_parse_file(ctx, example(name));
	ts_network_options o = ts_network_options_default();
	ts_network *net;
	char *line = calloc(1, 1 << 16);

	assert_non_null(dag);
	o.threads = 1;
	ts_ctx_set_seed(ctx, 1);
	net = ts_network_compile(ctx, dag, ts_target_host(ctx), &o);
	if (!net)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
	for (int t = 0; t < ts_network_partition(net)->ntasks; t++)
		snprintf(line + strlen(line), (1 << 16) - strlen(line), " %s",
			ts_schedule_hash(ts_network_task_schedule(net, t)));
	ts_network_free(net);
	return line;
}

/* One network, one set of decisions: tessel run, tessel tasks --run,
 * tessel build and the C API compile the catalogue's small networks to
 * the same schedule for every task (same partition, weight blocking,
 * static choice and seed). */
static void test_entry_points__same_schedules(void **state)
{
	static const char *const nets[] = { "lenet", "mlp" };

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
		char *api = api_hashes(*state, nets[i]), *out, *err, *p, *lib;
		char args[2048], want[1 << 16];
		snprintf(args, sizeof(args), "run '%s' --threads 1 --json "
			"--min-time 0.001", example(nets[i]));
		if (run_tessel(args, &out, &err) != 0)
			fail_msg("tessel %s:\n%s%s", args, out, err);
		/* The JSON list, written as the API line. */
		p = strstr(out, "\"task_schedules\": [");
		assert_non_null(p);
		want[0] = '\0';
		for (p = strchr(p, '[') + 1; *p && *p != ']'; p++)
			if (*p == '"') {
				char *q = strchr(p + 1, '"');
				snprintf(want + strlen(want), sizeof(want) -
					strlen(want), " %.*s", (int)(q - p - 1),
					p + 1);
				p = q;
			}
		if (strcmp(want, api))
			fail_msg("%s: run%s\n  API%s", nets[i], want, api);
		snprintf(args, sizeof(args), "tasks '%s' --run --threads 1",
			example(nets[i]));
		if (run_tessel(args, &out, &err) != 0)
			fail_msg("tessel %s:\n%s%s", args, out, err);
		snprintf(want, sizeof(want), "schedules:%s\n", api);
		assert_has(out, want);
		lib = ts_test_temp_path("netcli", "lib");
		snprintf(args, sizeof(args), "build '%s' --threads 1 -o '%s'",
			example(nets[i]), lib);
		if (run_tessel(args, &out, &err) != 0)
			fail_msg("tessel %s:\n%s%s", args, out, err);
		assert_has(out, want);
		ts_test_remove_tree(lib);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_run_lenet__network_checked_without_flag),
		TS_TEST(test_run_softmax__stays_one_kernel),
		TS_TEST(test_run_recurrence__many_steps_are_a_network),
		TS_TEST(test_run_records__record_per_task_else_static),
		TS_TEST(test_run_records_unreadable__names_log),
		TS_TEST(test_build_mlp__one_library_matches_interpreter),
		TS_TEST(test_build_network_bad_options__name_them),
		TS_TEST(test_tune_lenet__network_without_flag_then_run),
		TS_TEST(test_tune_mlp_network_flag__still_accepted),
		TS_TEST(test_entry_points__same_schedules),
		TS_TEST(test_partition_schedules__record_timed_not_believed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
