/* Writing styles at real sizes: each corpus style (tests/corpus/gen.c)
 * written as one statement and as separate stages, from the same seed,
 * both under the naive and the static schedule, one thread each.
 *
 * One table per style, one row per seed: the time of each form under
 * each schedule, the ratio of the static time to the naive one for each
 * form, and the ratio of the one-statement time to the staged time under
 * each schedule (below 1: the numerator is faster).  A last table gives
 * the geometric means per style.  The outputs of every run are compared
 * with the naive run of the staged form.
 *
 * With --tune N, each form is also tuned (N trials, one thread) and the
 * tuned kernel timed beside the static one: tuned/static of each form and
 * one statement/stages tuned.
 *
 * A naive run that takes longer than --naive-limit seconds is timed once.
 * Each seed runs in a child process with a time limit, so that a
 * declaration the compiler fails on gets a FAIL row and the tables go on.
 *
 *   usage: bench_styles [--seeds N] [--first S] [--style NAME]...
 *                       [--min-time S] [--naive-limit S] [--timeout S]
 *                       [--tune N] [--target NAME|FILE.json] [--print]
 *
 * --target schedules and compiles for another CPU the host can run (an
 * AVX2 description on an AVX-512 host). */
#include <config.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gc.h>

#include "bench/bench.h"
#include "bench/tuned.h"
#include "tests/corpus/gen.h"

#define MAX_STYLES 64

/* The options of the program. */
struct styles_opts {
	int nseeds;
	uint64_t first;
	bool only[MAX_STYLES];
	bool any_only;
	double min_time, naive_limit;
	int timeout;
	int tune;		/* trials of tuning per form, or 0 */
	bool print;		/* print both declarations */
};

/* Times of one seed: [form][0 naive, 1 static, 2 tuned] in seconds. */
struct styles_row {
	double t[2][3];
	bool same;		/* every output matched */
};

/* Time the kernels "k" (naive, static and, when k[2].m is set, tuned)
 * on their arguments, interleaved; the naive one is timed once when one
 * run of it is long.  Fill "t". */
static void styles_time(struct bench_kernel *k, double *t,
	const struct styles_opts *o)
{
	struct bench_runner r[3] = {
		{ .name = "naive", .run = bench_kernel_run, .arg = &k[0] },
		{ .name = "static", .run = bench_kernel_run, .arg = &k[1] },
		{ .name = "tuned", .run = bench_kernel_run, .arg = &k[2] },
	};
	int n = k[2].m ? 3 : 2, skip;
	double t0 = bench_now();

	bench_kernel_run(&k[0]);
	t[0] = bench_now() - t0;
	t[2] = 0;
	skip = t[0] > o->naive_limit;
	bench_interleave(r + skip, n - skip, 3, 1000, o->min_time);
	for (int i = skip; i < n; i++)
		t[i] = r[i].median;
}

/* Whether the outputs in "got" match those in "want" for "dag". */
static bool styles_same(const ts_dag *dag, ts_array *const *got,
	ts_array *const *want)
{
	for (int i = 0; i < ts_dag_noutputs(dag); i++)
		if (!ts_array_close(got[ts_dag_ninputs(dag) + i],
			    want[ts_dag_ninputs(dag) + i], NULL))
			return false;
	return true;
}

/* Measure the declaration "text" (form "f") into "row"; its outputs are
 * compared with "ref" (the staged naive outputs; NULL: this is it, and
 * "*out" receives them).  Exit on a failure. */
static void styles_form(const char *text, int f, struct styles_row *row,
	ts_array ***ref, const struct styles_opts *o)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = ts_parse_string(ctx, "corpus.tsl", text);
	ts_module *mn, *ms, *mt = NULL;
	ts_array **an, **as, **at = NULL;
	struct bench_kernel k[3] = { { 0 } };
	struct bench_tuning tune = { .trials = o->tune,
		.seed = BENCH_TUNE_SEED };

	ts_ctx_set_seed(ctx, BENCH_TUNE_SEED);
	if (!dag)
		bench_die(ctx, "parse");
	if (!(mn = bench_compile_naive(ctx, dag)))
		bench_die(ctx, "naive");
	if (!(ms = bench_compile_static(ctx, dag, 1, NULL)))
		bench_die(ctx, "static");
	if (o->tune && !(mt = bench_compile_tuned(ctx, dag, 1, &tune,
	    f ? "stages" : "one statement")))
		bench_die(ctx, "tuned");
	an = bench_args(ctx, dag, 11);
	as = an ? bench_args_fresh_outputs(ctx, dag, an) : NULL;
	at = as && mt ? bench_args_fresh_outputs(ctx, dag, an) : NULL;
	if (!as || (mt && !at))
		bench_die(ctx, "arguments");
	k[0] = (struct bench_kernel){ mn, an };
	k[1] = (struct bench_kernel){ ms, as };
	k[2] = (struct bench_kernel){ mt, at };
	styles_time(k, row->t[f], o);
	row->same &= styles_same(dag, as, an);
	if (mt)
		row->same &= styles_same(dag, at, an);
	if (*ref)
		row->same &= styles_same(dag, an, *ref);
	else
		*ref = an;
	ts_module_free(mn);
	ts_module_free(ms);
	if (mt)
		ts_module_free(mt);
	/* The context stays: "*ref" lives in it. */
}

/* Measure both forms of "seed" in style "style"; write the row as one
 * line on "fd" (in a child). */
static void styles_seed(int fd, uint64_t seed, int style,
	const struct styles_opts *o)
{
	ts_corpus_opts go = ts_corpus_opts_default();
	ts_corpus_case c[2];
	struct styles_row row = { .same = true };
	ts_array **ref = NULL;
	char line[256];
	int n;

	go.size = TS_CORPUS_BENCH;
	go.style = style;
	go.form = TS_CORPUS_STAGED;
	if (ts_corpus_generate(seed, &go, &c[1]) < 0)
		exit(1);
	go.form = TS_CORPUS_ONE_STATEMENT;
	if (ts_corpus_generate(seed, &go, &c[0]) < 0)
		exit(1);
	if (o->print)
		fprintf(stderr, "%s%s", c[0].text, c[1].text);
	styles_form(c[1].text, 1, &row, &ref, o);
	styles_form(c[0].text, 0, &row, &ref, o);
	n = snprintf(line, sizeof(line), "%.9g %.9g %.9g %.9g %.9g %.9g "
		"%d\n", row.t[0][0], row.t[0][1], row.t[0][2], row.t[1][0],
		row.t[1][1], row.t[1][2], row.same);
	if (write(fd, line, (size_t)n) != n)
		exit(1);
}

/* Run "seed" of "style" in a child limited to o->timeout seconds; fill
 * "row" and return true, or false with a reason in "why". */
static bool styles_isolated(uint64_t seed, int style, struct styles_row *row,
	const struct styles_opts *o, char *why, size_t size)
{
	char buf[256] = "";
	int p[2], status, same = 0;
	ssize_t n, len = 0;
	pid_t pid;

	fflush(stdout);
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		snprintf(why, size, "fork failed");
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		alarm((unsigned)o->timeout);
		styles_seed(p[1], seed, style, o);
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    sscanf(buf, "%lg %lg %lg %lg %lg %lg %d", &row->t[0][0],
	    &row->t[0][1], &row->t[0][2], &row->t[1][0], &row->t[1][1],
	    &row->t[1][2], &same) == 7) {
		row->same = same;
		return true;
	}
	snprintf(why, size, "%s", WIFSIGNALED(status) &&
		WTERMSIG(status) == SIGALRM ? "over the time limit" :
		WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) :
		"error, see stderr");
	return false;
}

/* Print "t" seconds as milliseconds in a cell. */
static void cell_ms(double t)
{
	printf(" %.3f |", t * 1e3);
}

/* The ratios a style's table reports per seed, in its column order. */
enum { R_ONE_SN, R_STAGES_SN, R_NAIVE, R_STATIC, R_ONE_TS, R_STAGES_TS,
	R_TUNED, R_COUNT };

/* Fill "v" with the ratios of "r" (the tuned ones when "tuned"). */
static void styles_ratios(const struct styles_row *r, bool tuned, double *v)
{
	v[R_ONE_SN] = r->t[0][1] / r->t[0][0];
	v[R_STAGES_SN] = r->t[1][1] / r->t[1][0];
	v[R_NAIVE] = r->t[0][0] / r->t[1][0];
	v[R_STATIC] = r->t[0][1] / r->t[1][1];
	if (!tuned)
		return;
	v[R_ONE_TS] = r->t[0][2] / r->t[0][1];
	v[R_STAGES_TS] = r->t[1][2] / r->t[1][1];
	v[R_TUNED] = r->t[0][2] / r->t[1][2];
}

/* Print the row of "r" after its seed cell. */
static void styles_print_row(const struct styles_row *r, bool tuned)
{
	double v[R_COUNT];

	styles_ratios(r, tuned, v);
	for (int f = 0; f < 2; f++) {
		cell_ms(r->t[f][0]);
		cell_ms(r->t[f][1]);
		printf(" %.2fx |", v[f ? R_STAGES_SN : R_ONE_SN]);
	}
	printf(" %.2fx | %.2fx |", v[R_NAIVE], v[R_STATIC]);
	if (tuned) {
		cell_ms(r->t[0][2]);
		cell_ms(r->t[1][2]);
		printf(" %.2fx | %.2fx | %.2fx |", v[R_ONE_TS], v[R_STAGES_TS],
			v[R_TUNED]);
	}
	printf(" %s |\n", r->same ? "same" : "DIFFER");
}

/* Measure and print the table of style "s"; store the geometric means
 * of its ratios in "mean" (R_COUNT of them) and return the seeds
 * measured. */
static int styles_table(int s, const struct styles_opts *o, double *mean)
{
	double v[R_COUNT][64], row[R_COUNT];
	bool tuned = o->tune > 0;
	int n = 0;

	printf("\n### %s\n\n", ts_corpus_style_name(s));
	printf("| seed | one stmt naive ms | one stmt static ms | "
		"one stmt static/naive | stages naive ms | stages static ms | "
		"stages static/naive | one/stages naive | one/stages static |"
		"%s outputs |\n", tuned ? " one stmt tuned ms | stages tuned "
		"ms | one stmt tuned/static | stages tuned/static | "
		"one/stages tuned |" : "");
	printf("|---|---|---|---|---|---|---|---|---|%s---|\n",
		tuned ? "---|---|---|---|---|" : "");
	for (int i = 0; i < o->nseeds && i < 64; i++) {
		uint64_t seed = o->first + (uint64_t)i;
		struct styles_row r;
		char why[128];
		printf("| %llu |", (unsigned long long)seed);
		if (!styles_isolated(seed, s, &r, o, why, sizeof(why))) {
			printf(" FAIL (%s) |\n", why);
			continue;
		}
		styles_print_row(&r, tuned);
		fflush(stdout);
		styles_ratios(&r, tuned, row);
		for (int k = 0; k < (tuned ? R_COUNT : R_ONE_TS); k++)
			v[k][n] = row[k];
		n++;
	}
	for (int k = 0; k < (tuned ? R_COUNT : R_ONE_TS); k++)
		mean[k] = bench_geomean(v[k], n);
	return n;
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void styles_parse(int argc, char **argv, struct styles_opts *o)
{
	for (int i = 1; i < argc; i++) {
		int s;
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0) {
			o->nseeds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--first") && i + 1 < argc) {
			o->first = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--style") && i + 1 < argc &&
		    (s = ts_corpus_style_find(argv[i + 1])) >= 0) {
			o->only[s] = o->any_only = true;
			i++;
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--naive-limit") && i + 1 < argc) {
			o->naive_limit = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0) {
			o->timeout = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--tune") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0) {
			o->tune = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			bench_use_target(argv[++i]);
		} else if (!strcmp(argv[i], "--print")) {
			o->print = true;
		} else {
			fprintf(stderr, "usage: bench_styles [--seeds N] "
				"[--first S] [--style NAME]... [--min-time S] "
				"[--naive-limit S] [--timeout S] [--tune N] "
				"[--target NAME|FILE.json] [--print]\n"
				"styles:");
			for (int k = 0; k < ts_corpus_style_count(); k++)
				fprintf(stderr, " %s", ts_corpus_style_name(k));
			fprintf(stderr, "\n");
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	struct styles_opts o = { .nseeds = 1, .min_time = 0.2,
		.naive_limit = 1.0, .timeout = 300 };
	double mean[MAX_STYLES][R_COUNT];
	int measured[MAX_STYLES] = { 0 };
	int ns = ts_corpus_style_count();

	styles_parse(argc, argv, &o);
	printf("# Writing styles: one statement against stages, naive "
		"against static (one thread)\n");
	for (int s = 0; s < ns && s < MAX_STYLES; s++)
		if (!o.any_only || o.only[s])
			measured[s] = styles_table(s, &o, mean[s]);
	printf("\n### geometric means\n\n| style | seeds | one stmt "
		"static/naive | stages static/naive | one/stages naive | "
		"one/stages static |%s\n|---|---|---|---|---|---|%s\n",
		o.tune ? " one stmt tuned/static | stages tuned/static | "
		"one/stages tuned |" : "", o.tune ? "---|---|---|" : "");
	for (int s = 0; s < ns && s < MAX_STYLES; s++) {
		if (!measured[s])
			continue;
		printf("| %s | %d |", ts_corpus_style_name(s), measured[s]);
		for (int k = 0; k < (o.tune ? R_COUNT : R_ONE_TS); k++)
			printf(" %.2fx |", mean[s][k]);
		printf("\n");
	}
	return 0;
}
