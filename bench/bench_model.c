/* How well the analytical model ranks: for each case, a fixed sample of
 * configurations (the static top-k, mutations of the static choice and
 * random points of the space, drawn from a fixed seed) is rated by the
 * model and measured, and the program prints Kendall's tau-b between the
 * two orders, over the whole sample and over its near part (top-k and
 * mutations, where the static choice is made), with the regret of the
 * static choice: its measured time over the best measured in the sample.
 *
 *   usage: bench_model [--case NAME]... [--samples N] [--min-time S]
 *                      [--target NAME|FILE.json] [--seed S] [--points]
 *
 * --points prints every configuration of the sample on stderr: estimate,
 * measured time, near or random, and the configuration.
 *
 * Cases are catalogue operators at their real size, one thread.  Each
 * configuration is built, checked and timed by the tuner's measurer, in
 * a process of its own with build and run timeouts (a random point of a
 * space may unroll enough to keep LLVM busy for minutes); those that
 * fail or time out are left out of the sample.  Code is compiled for
 * this host: --target changes the description the model rates (a
 * calibration of this host, say), not the code.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include <tessel/measure.h>

#include "bench/bench.h"
#include "examples/catalogue.h"

/* The cases measured when none is named. */
static const char *const default_cases[] = {
	"matmul_128_768_3072", "batch_matmul", "matmul_int8_requant",
	"conv2d_nchw_s1", "conv2d_nchw_s2", "conv1x1", "depthwise_conv",
	"dense_bias_relu", "gemv", "softmax", "layer_norm", "l2_norm",
	"max_pool", "avg_pool",
};

#define NDEFAULT (int)(sizeof(default_cases) / sizeof(default_cases[0]))
#define MAX_CASES 64

struct model_opts {
	const char *cases[MAX_CASES];
	int ncases;
	int samples;		/* configurations per case */
	double min_time;	/* timed runs of a configuration add up to
				 * this at least */
	uint64_t seed;
	bool points;		/* print every point on stderr */
};

/* One configuration of a case: its estimate and measured time. */
struct point {
	ts_config *cfg;
	bool near;		/* top-k or a mutation of the static choice */
	double est, time;
	ts_schedule *sch;
};

/* Kendall's tau-b between "est" and "time" of the "n" points of "p"
 * (only those with "near" when "near_only"); NAN with fewer than 3. */
static double kendall(const struct point *p, int n, bool near_only)
{
	double conc = 0, disc = 0, tie_a = 0, tie_b = 0, pairs = 0;
	int m = 0;

	for (int i = 0; i < n; i++) {
		if (near_only && !p[i].near)
			continue;
		m++;
		for (int j = 0; j < i; j++) {
			double a, b;
			if (near_only && !p[j].near)
				continue;
			a = p[i].est - p[j].est;
			b = p[i].time - p[j].time;
			pairs++;
			if (a == 0 && b == 0)
				continue;
			if (a == 0)
				tie_a++;
			else if (b == 0)
				tie_b++;
			else if ((a > 0) == (b > 0))
				conc++;
			else
				disc++;
		}
	}
	if (m < 3)
		return NAN;
	return (conc - disc) / sqrt((pairs - tie_a) * (pairs - tie_b));
}

/* Add "c" to "p" ("*n" so far) unless it is there, invalid, or gives no
 * schedule in "ctx"; return whether it was added. */
static bool add_point(ts_ctx *ctx, ts_template *tp, ts_config *c, bool near,
	struct point *p, int *n)
{
	ts_schedule *sch;

	if (!c || !ts_config_is_valid(c))
		return false;
	for (int i = 0; i < *n; i++)
		if (ts_config_equal(p[i].cfg, c))
			return false;
	if (!(sch = ts_template_apply(tp, c))) {
		ts_ctx_clear_error(ctx);
		return false;
	}
	p[*n] = (struct point){ .cfg = c, .near = near, .sch = sch,
		.est = ts_model_estimate(tp, c, NULL) };
	(*n)++;
	return true;
}

/* Fill "p" with the sample of case "dag" (at most "want" points); return
 * how many. */
static int sample(ts_ctx *ctx, ts_static_result *r, int want,
	struct point *p)
{
	int n = 0, near = want * 2 / 3;

	for (int i = 0; i < r->k && n < want / 3; i++)
		add_point(ctx, r->tp, r->topk[i], true, p, &n);
	for (int tries = 0; n < near && tries < 20 * want; tries++) {
		ts_config *c = ts_config_mutate(r->best, ctx);
		if (ts_ctx_random_below(ctx, 2))
			c = ts_config_mutate(c, ctx);
		add_point(ctx, r->tp, c, true, p, &n);
	}
	for (int tries = 0; n < want && tries < 20 * want; tries++)
		add_point(ctx, r->tp,
			ts_space_sample(ts_template_space(r->tp), ctx), false,
			p, &n);
	return n;
}

/* Measure the "n" points of "p" of "dag" in "ctx"; keep those measured
 * without error, in order, and return how many. */
static int measure(ts_ctx *ctx, const ts_dag *dag, struct point *p, int n,
	const struct model_opts *o)
{
	ts_measure_options mo = ts_measure_options_default();
	const ts_schedule **sch = GC_MALLOC(sizeof(*sch) * (size_t)(n + 1));
	ts_measure_result *res = GC_MALLOC(sizeof(*res) * (size_t)(n + 1));
	ts_measurer *m;
	int kept = 0;

	mo.min_repeat_s = o->min_time;
	mo.build_timeout_s = 10;
	if (!(m = ts_measurer_new(ctx, dag, &mo, 1)))
		bench_die(ctx, "measurer");
	for (int i = 0; i < n; i++)
		sch[i] = p[i].sch;
	if (ts_measure_batch(m, n, sch, res) < 0)
		bench_die(ctx, "measure");
	for (int i = 0; i < n; i++) {
		if (res[i].error != TS_ERR_NONE)
			continue;
		p[kept] = p[i];
		p[kept++].time = res[i].median_s;
	}
	ts_measurer_free(m);
	return kept;
}

/* Measure case "name"; print its row and return its tau (NAN when it
 * could not be measured). */
static double model_case(const char *name, const struct model_opts *o,
	double *near_tau)
{
	const struct ts_catalogue_entry *e = ts_catalogue_find(name);
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag;
	ts_static_result *r;
	struct point *p;
	double tau, best = INFINITY, chosen = NAN;
	int n;

	*near_tau = NAN;
	if (!e) {
		fprintf(stderr, "bench_model: no catalogue case '%s'\n", name);
		exit(2);
	}
	ts_ctx_set_seed(ctx, o->seed);
	dag = e->build(ctx, TS_SIZE_REAL);
	r = dag ? bench_static(ctx, dag, 1) : NULL;
	if (!r)
		bench_die(ctx, name);
	ts_ctx_set_seed(ctx, o->seed);
	p = GC_MALLOC(sizeof(*p) * (size_t)(o->samples + 1));
	n = measure(ctx, dag, p, sample(ctx, r, o->samples, p), o);
	for (int i = 0; i < n; i++) {
		best = fmin(best, p[i].time);
		if (ts_config_equal(p[i].cfg, r->best))
			chosen = p[i].time;
	}
	for (int i = 0; o->points && i < n; i++)
		fprintf(stderr, "%s: est %.4f ms, measured %.4f ms, %s%s %s\n",
			name, p[i].est * 1e3, p[i].time * 1e3, p[i].near ?
			"near" : "random", ts_config_equal(p[i].cfg, r->best) ?
			" (static)" : "", ts_config_to_json(p[i].cfg));
	tau = kendall(p, n, false);
	*near_tau = kendall(p, n, true);
	printf("| %s | %d | %.2f | %.2f | %.2fx |\n", name, n, tau, *near_tau,
		chosen / best);	/* NAN when the static choice failed */
	fflush(stdout);
	ts_ctx_free(ctx);
	return tau;
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void model_parse(int argc, char **argv, struct model_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--case") && i + 1 < argc &&
		    o->ncases < MAX_CASES) {
			o->cases[o->ncases++] = argv[++i];
		} else if (!strcmp(argv[i], "--samples") && i + 1 < argc &&
		    atoi(argv[i + 1]) >= 3) {
			o->samples = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			o->seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			bench_use_target(argv[++i]);
		} else if (!strcmp(argv[i], "--points")) {
			o->points = true;
		} else {
			fprintf(stderr, "usage: bench_model [--case NAME]... "
				"[--samples N] [--min-time S] "
				"[--seed S] [--target NAME|FILE.json] [--points]\n");
			exit(2);
		}
	}
	if (o->ncases == 0) {
		for (int i = 0; i < NDEFAULT; i++)
			o->cases[i] = default_cases[i];
		o->ncases = NDEFAULT;
	}
}

int main(int argc, char **argv)
{
	struct model_opts o = { .samples = 24, .min_time = 0.2, .seed = 1 };
	double sum = 0, nsum = 0;
	int m = 0, nm = 0;

	model_parse(argc, argv, &o);
	printf("# Model ranking: Kendall tau-b of estimate against measured "
		"time (one thread, %d configurations a case: static top-k "
		"and mutations of its choice, \"near\", and random points)\n\n"
		"| case | configs | tau | near tau | static / best measured "
		"|\n|---|---|---|---|---|\n", o.samples);
	fflush(stdout);
	for (int i = 0; i < o.ncases; i++) {
		double near, t = model_case(o.cases[i], &o, &near);
		if (!isnan(t)) {
			sum += t;
			m++;
		}
		if (!isnan(near)) {
			nsum += near;
			nm++;
		}
	}
	if (m)
		printf("\nmean tau %.2f over %d cases, mean near tau %.2f over "
			"%d\n", sum / m, m, nm ? nsum / nm : NAN, nm);
	return 0;
}
