/* Every example operator at its real size: the naive schedule against the
 * static one, both compiled with the LLVM backend, one thread each (the
 * static schedule with two threads is shown too).  Outputs of the two are
 * compared with each other, and with the reference interpreter where it
 * is affordable.
 *
 * Beside each static time: the bytes its inputs and outputs hold, once,
 * per second, and that rate as a share of a plain copy (memcpy) moving as
 * many bytes (reading half, writing half), timed interleaved with it in
 * the same run: what a memory-bound operator could reach here.  A share
 * above 100% is an operator whose bytes stay in a cache level that the
 * copy of the same size leaves.
 *
 * The verdict column applies two rules on the one-thread speedup, using
 * the stage classes of ts_analyze_dag: an operator with a complex
 * reduction (data reuse) must be at least 10x faster statically; any
 * other must not be slower than naive (within TOLERANCE, for timing
 * noise).  A naive run expected to take longer than NAIVE_LIMIT_S is not
 * timed and the row says so.
 *
 * A network (ts_partition_is_network: LeNet, the MLP, ResNet-18, the
 * transformer layer) is compiled as tessel run and the C API compile it
 * (ts_network_compile: partitioned into tasks, weights blocked, each task
 * scheduled statically, or naively for the naive column) and run through
 * the executor.
 *
 * Each operator runs in a child process with a time limit, so that one
 * whose compilation runs away (or crashes) gets a FAIL row and the table
 * goes on.
 *
 * With --target, every operator is scheduled and compiled for that CPU
 * target (one this host can run: an AVX2 target on an AVX-512 host).
 *
 *   usage: bench_ops [--only NAME]... [--min-time S] [--timeout S]
 *                    [--target NAME|FILE.json]
 */
#include <config.h>

#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gc.h>

#include <tessel/network.h>

#include "bench/bench.h"
#include "examples/catalogue.h"

#define SPEEDUP_REUSE 10.0	/* required with a complex reduction */
#define TOLERANCE 0.9		/* "not slower": speedup above this */
#define NAIVE_RATE 0.2e9	/* pessimistic naive FLOP/s for the limit */
#define NAIVE_LIMIT_S 20.0	/* skip naive timing above this estimate */
#define EVAL_LIMIT_FLOPS 5e8	/* check with ts_eval below this */

/* The options of the program. */
struct ops_opts {
	int nonly;
	const char *only[64];
	double min_time;
	int timeout;		/* seconds per operator, in its child */
};

/* Write the classes of the stages of "info" into "buf" of "size" bytes
 * ("complex+direct") and return whether one is a complex reduction. */
static bool ops_classes(const ts_dag_info *info, char *buf, size_t size)
{
	static const char *const short_name[TS_CLASS_COUNT] = {
		[TS_CLASS_DIRECT] = "direct",
		[TS_CLASS_SIMPLE_REDUCTION] = "simple",
		[TS_CLASS_COMPLEX_REDUCTION] = "complex",
		[TS_CLASS_LOCATION_TUNABLE] = "location",
	};
	bool seen[TS_CLASS_COUNT] = { false };
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < info->nstages; i++)
		seen[info->stages[i]->klass] = true;
	for (int c = TS_CLASS_COUNT - 1; c >= 0; c--)
		if (seen[c] && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
				len ? "+" : "", short_name[c]);
	return seen[TS_CLASS_COMPLEX_REDUCTION];
}

/* The measurements of one operator. */
struct ops_row {
	const char *name;
	char classes[64];
	bool reuse;		/* a complex reduction */
	double gflop;
	double naive_s;		/* NAN: not timed */
	double naive_est_s;	/* the estimate that decided */
	double static1_s, static2_s;
	double bytes;		/* read and written once: inputs, outputs */
	double copy_s;		/* a copy moving as many bytes, same run */
	const char *check;	/* what the outputs were compared with */
	bool check_ok;
};

/* The bytes "args" of "dag" hold: every input and output once. */
static double ops_bytes(const ts_dag *dag, ts_array *const *args)
{
	double b = 0;

	for (int i = 0; i < ts_dag_ninputs(dag) + ts_dag_noutputs(dag); i++)
		b += (double)args[i]->size * (double)ts_dtype_size(
			args[i]->dtype);
	return b;
}

/* Compare the outputs of "got" with those of "want" for "dag". */
static bool ops_same(const ts_dag *dag, ts_array *const *got,
	ts_array *const *want)
{
	for (int i = 0; i < ts_dag_noutputs(dag); i++) {
		const ts_array *g = got[ts_dag_ninputs(dag) + i];
		const ts_array *w = want[ts_dag_ninputs(dag) + i];
		double err = 0, scale = 0;
		if (ts_array_close(g, w, &err))
			continue;
		/* A deep network on random weights (ResNet-18: outputs near
		 * 1e20) sums terms far larger than its results: summation
		 * order alone moves them by 1e-6 of the largest. */
		for (int64_t e = 0; e < w->size; e++)
			scale = fmax(scale, fabs(ts_array_get(w, e)));
		if (!ts_dtype_is_float(w->dtype) || err > 1e-4 * scale)
			return false;
	}
	return true;
}

/* Compare the outputs in "args" with the interpreter on "dag" in "ctx". */
static bool ops_same_as_eval(ts_ctx *ctx, const ts_dag *dag,
	ts_array *const *args)
{
	ts_array **want = GC_MALLOC(sizeof(*want) *
		(size_t)(ts_dag_noutputs(dag) + ts_dag_ninputs(dag) + 1));

	if (!want || ts_eval(ctx, dag, args, want + ts_dag_ninputs(dag)) < 0)
		bench_die(ctx, "interpreter");
	return ops_same(dag, args, want);
}

/* A compiled operator: one module, or a network of tasks. */
struct ops_prog {
	ts_module *m;
	ts_network *net;
	ts_array **args;	/* inputs, then outputs */
	int ninputs;
};

/* Run "arg", an ops_prog, once. */
static void ops_prog_run(void *arg)
{
	struct ops_prog *p = arg;

	if (p->net)
		ts_network_run(p->net, p->args, p->args + p->ninputs);
	else
		ts_module_run(p->m, p->args);
}

/* Time the naive program "naive" interleaved with the one-thread
 * static program rs[0] (or that one alone when one naive run is long),
 * then the two-thread one rs[1] on its own: the worker threads of a
 * parallel run spin for a while after it, and under BENCH_CPU_TIME that
 * process time would fall on whichever kernel runs next (measured: a
 * 12 microsecond kernel timed 2x slower after a two-thread run); fill
 * "row". */
static void ops_time(struct bench_runner *rs, struct ops_prog *naive,
	struct ops_row *row, double min_time)
{
	struct bench_runner all[3];
	double t0 = bench_now();

	ops_prog_run(naive);
	row->naive_s = bench_now() - t0;
	if (row->naive_s > 0.5) {
		bench_interleave(rs, 1, 3, 1000, min_time);
	} else {
		all[0] = (struct bench_runner){ .name = "naive",
			.run = ops_prog_run, .arg = naive };
		all[1] = rs[0];
		all[2] = rs[2];
		bench_interleave(all, 3, 3, 1000, min_time);
		row->naive_s = all[0].median;
		rs[0] = all[1];
		rs[2] = all[2];
	}
	bench_interleave(&rs[1], 1, 3, 1000, min_time);
	row->static1_s = rs[0].median;
	row->static2_s = rs[1].median;
	row->copy_s = rs[2].median;
}

/* Check the static outputs "a1" (one thread) against "a2" (two threads),
 * the naive outputs "an" (NULL: not run) and the interpreter when
 * affordable; record what was compared in "row". */
static void ops_check(ts_ctx *ctx, const ts_dag *dag, struct ops_row *row,
	ts_array *const *a1, ts_array *const *a2, ts_array *const *an)
{
	bool eval = row->gflop * 1e9 <= EVAL_LIMIT_FLOPS;

	row->check_ok = ops_same(dag, a2, a1);
	if (an)
		row->check_ok &= ops_same(dag, a1, an);
	if (eval)
		row->check_ok &= ops_same_as_eval(ctx, dag, a1);
	row->check = an && eval ? "2T, naive, eval" : an ? "2T, naive"
		: eval ? "2T, eval" : "2T only";
}

/* Compile "dag" in "ctx" for "threads" threads, naively or statically,
 * as a network through the executor when "network"; exit on failure. */
static struct ops_prog ops_compile(ts_ctx *ctx, const ts_dag *dag,
	int threads, bool naive, bool network, const char *name)
{
	struct ops_prog p = { .ninputs = ts_dag_ninputs(dag) };

	if (network) {
		ts_network_options no = ts_network_options_default();
		no.threads = threads;
		no.naive = naive;
		p.net = ts_network_compile(ctx, dag, bench_host_target(ctx,
			threads), &no);
	} else {
		p.m = naive ? bench_compile_naive(ctx, dag) :
			bench_compile_static(ctx, dag, threads, NULL);
	}
	if (!p.m && !p.net)
		bench_die(ctx, name);
	return p;
}

/* Release what "p" holds. */
static void ops_prog_free(struct ops_prog *p)
{
	ts_module_free(p->m);
	ts_network_free(p->net);
}

/* Whether "dag" is a network for the host. */
static bool ops_is_network(ts_ctx *ctx, const ts_dag *dag)
{
	ts_partition *p = ts_partition_dag(ctx, dag, bench_host_target(ctx,
		0));
	bool net = p && ts_partition_is_network(p);

	ts_ctx_clear_error(ctx);
	return net;
}

/* Measure "dag" in "ctx" into "row": static with 1 and 2 threads, naive
 * when affordable; check the outputs. */
static void ops_measure(ts_ctx *ctx, const ts_dag *dag, struct ops_row *row,
	double min_time)
{
	ts_dag_info *info = ts_analyze_dag(ctx, dag);
	bool network = ops_is_network(ctx, dag);
	struct ops_prog s1, s2, sn = { 0 };
	ts_array **a1, **a2, **an;
	struct bench_runner rs[3];
	struct bench_copy cp;

	if (!info)
		bench_die(ctx, row->name);
	row->reuse = ops_classes(info, row->classes, sizeof(row->classes));
	row->gflop = bench_dag_flops(ctx, dag) * 1e-9;
	row->naive_est_s = row->gflop * 1e9 / NAIVE_RATE;
	s1 = ops_compile(ctx, dag, 1, false, network, row->name);
	s2 = ops_compile(ctx, dag, 2, false, network, row->name);
	a1 = bench_args(ctx, dag, 11);
	a2 = a1 ? bench_args_fresh_outputs(ctx, dag, a1) : NULL;
	an = a2 ? bench_args_fresh_outputs(ctx, dag, a1) : NULL;
	if (!an)
		bench_die(ctx, row->name);
	s1.args = a1;
	s2.args = a2;
	rs[0] = (struct bench_runner){ .name = "static1",
		.run = ops_prog_run, .arg = &s1 };
	rs[1] = (struct bench_runner){ .name = "static2",
		.run = ops_prog_run, .arg = &s2 };
	row->bytes = ops_bytes(dag, a1);
	bench_copy_new(&cp, (size_t)(row->bytes / 2) + 64);
	rs[2] = (struct bench_runner){ .name = "copy", .run = bench_copy_run,
		.arg = &cp };
	row->naive_s = NAN;
	if (row->naive_est_s <= NAIVE_LIMIT_S) {
		sn = ops_compile(ctx, dag, 1, true, network, row->name);
		sn.args = an;
		ops_time(rs, &sn, row, min_time);
	} else {
		struct bench_runner one[2] = { rs[0], rs[2] };
		bench_interleave(one, 2, 3, 1000, min_time);
		bench_interleave(&rs[1], 1, 3, 1000, min_time);
		row->static1_s = one[0].median;
		row->static2_s = rs[1].median;
		row->copy_s = one[1].median;
	}
	bench_copy_free(&cp);
	ops_check(ctx, dag, row, a1, a2, sn.args ? an : NULL);
	ops_prog_free(&s1);
	ops_prog_free(&s2);
	ops_prog_free(&sn);
}

/* The verdict of "row" under the rules of the file comment. */
static const char *ops_verdict(const struct ops_row *row)
{
	double speedup = row->naive_s / row->static1_s;

	if (!row->check_ok)
		return "FAIL (wrong output)";
	if (isnan(row->naive_s))
		return "n/a (naive not timed)";
	if (row->reuse)
		return speedup >= SPEEDUP_REUSE ? "PASS" : "FAIL (< 10x)";
	return speedup >= TOLERANCE ? "PASS" : "FAIL (slower)";
}

/* Print "row" as a table row. */
static void ops_print(const struct ops_row *row)
{
	char naive[64];

	if (isnan(row->naive_s))
		snprintf(naive, sizeof(naive), "skipped (est. %.0f s)",
			row->naive_est_s);
	else
		snprintf(naive, sizeof(naive), "%.3f", row->naive_s * 1e3);
	printf("| %s | %s | %.4f | %s | %.3f | %.3f | ", row->name,
		row->classes, row->gflop, naive, row->static1_s * 1e3,
		row->static2_s * 1e3);
	if (isnan(row->naive_s))
		printf("- | ");
	else
		printf("%.1fx | ", row->naive_s / row->static1_s);
	printf("%.1f GB/s, %.0f%% | ", row->bytes / row->static1_s * 1e-9,
		100.0 * row->copy_s / row->static1_s);
	printf("%s | %s | %s |\n", row->reuse ? ">= 10x" : ">= 1x",
		row->check, ops_verdict(row));
	fflush(stdout);
}

/* Measure "dag", built in "ctx", under "name" and print its row; return
 * whether its verdict is not FAIL. */
static bool ops_one(ts_ctx *ctx, const ts_dag *dag, const char *name,
	double min_time)
{
	struct ops_row row = { .name = name };

	if (!dag)
		bench_die(ctx, name);
	ops_measure(ctx, dag, &row, min_time);
	ops_print(&row);
	return strncmp(ops_verdict(&row), "FAIL", 4) != 0;
}

/* Whether "name" was asked for by "o" (everything when nothing was). */
static bool ops_wanted(const struct ops_opts *o, const char *name)
{
	for (int i = 0; i < o->nonly; i++)
		if (!strcmp(o->only[i], name))
			return true;
	return o->nonly == 0;
}

/* The catalogue entry whose example file is "base" (no ".tsl"), or NULL. */
static const struct ts_catalogue_entry *ops_entry_of(const char *base)
{
	for (int i = 0; i < ts_catalogue_count; i++)
		if (ts_catalogue[i].example &&
		    !strcmp(ts_catalogue[i].example, base))
			return &ts_catalogue[i];
	return NULL;
}

/* Check that examples/"path" declares what its catalogue entry does; one
 * that has no entry is measured from the file.  Return false on a
 * mismatch or a failed verdict. */
static bool ops_example(const char *path, const struct ops_opts *o)
{
	const char *slash = strrchr(path, '/');
	char base[256];
	const struct ts_catalogue_entry *e;
	ts_ctx *ctx = bench_ctx(), *ctx2;
	ts_dag *file = ts_parse_file(ctx, path), *cat;
	bool ok = true;

	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	base[strcspn(base, ".")] = '\0';
	if (!file)
		bench_die(ctx, path);
	if (!(e = ops_entry_of(base))) {
		if (ops_wanted(o, base))
			ok = ops_one(ctx, file, base, o->min_time);
		ts_ctx_free(ctx);
		return ok;
	}
	ctx2 = bench_ctx();
	cat = e->build(ctx2, TS_SIZE_REAL);
	if (!cat || strcmp(ts_dag_hash(cat), ts_dag_hash(file))) {
		fprintf(stderr, "bench_ops: examples/%s.tsl differs from the "
			"catalogue entry %s\n", base, e->name);
		ok = false;
	}
	ts_ctx_free(ctx2);
	ts_ctx_free(ctx);
	return ok;
}

/* Measure catalogue entry "e" in a child process limited to o->timeout
 * seconds; print a FAIL row for it when the child does not finish
 * normally.  Return whether its verdict is not FAIL. */
static bool ops_isolated(const struct ts_catalogue_entry *e,
	const struct ops_opts *o)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ts_ctx *ctx = bench_ctx();
		bool ok;
		alarm((unsigned)o->timeout);
		ok = ops_one(ctx, e->build(ctx, TS_SIZE_REAL), e->name,
			o->min_time);
		ts_ctx_free(ctx);
		fflush(stdout);
		_exit(ok ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("bench_ops: fork");
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		return WEXITSTATUS(status) == 0;
	printf("| %s | | | | | | | | | | FAIL (%s) |\n", e->name,
		WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ?
		"over the time limit: compilation or run" :
		WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) :
		"error, see stderr");
	return false;
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void ops_parse(int argc, char **argv, struct ops_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc &&
		    o->nonly < 64) {
			o->only[o->nonly++] = argv[++i];
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0) {
			o->timeout = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			bench_use_target(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_ops [--only NAME]... "
				"[--min-time S] [--timeout S] "
				"[--target NAME|FILE.json]\n");
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	struct ops_opts o = { .min_time = 0.3, .timeout = 300 };
	const char *srcdir = getenv("TS_SRCDIR");
	char pattern[4096];
	glob_t g;
	int fails = 0;

	ops_parse(argc, argv, &o);
	printf("| operator | classes | GFLOP | naive ms | static 1T ms | "
		"static 2T ms | speedup 1T | static 1T bytes/s, of a copy | "
		"rule | checked against | verdict |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < ts_catalogue_count; i++)
		if (ops_wanted(&o, ts_catalogue[i].name))
			fails += !ops_isolated(&ts_catalogue[i], &o);
	snprintf(pattern, sizeof(pattern), "%s/examples/*.tsl",
		srcdir ? srcdir : TS_SRCDIR);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			fails += !ops_example(g.gl_pathv[i], &o);
		printf("\n%zu example files checked against the catalogue.\n",
			g.gl_pathc);
		globfree(&g);
	}
	printf("%d operator(s) failed the rules.\n", fails);
	return fails ? 1 : 0;
}
