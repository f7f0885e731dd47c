/* The learned cost model, the evolutionary search and the tuner. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tests/common.h"

#include <tessel/records.h>
#include <tessel/search.h>
#include <tessel/tune.h>

static const char *tiny_matmul =
	"input A: f32[32, 24]\n"
	"input B: f32[24, 40]\n"
	"output C[i: 32, j: 40] = sum(k: 24) A[i, k] * B[k, j]\n";

/* A uniform number in [0, 1) from the stream of "ctx". */
static double uniform(ts_ctx *ctx)
{
	return (double)(ts_ctx_random(ctx) >> 11) * 0x1.0p-53;
}

/* Ranks of "v" ("n"), ties broken by position. */
static void ranks(int n, const double *v, double *r)
{
	for (int i = 0; i < n; i++) {
		int below = 0;
		for (int j = 0; j < n; j++)
			below += v[j] < v[i] || (v[j] == v[i] && j < i);
		r[i] = below;
	}
}

/* Spearman's rank correlation of "a" and "b" ("n"). */
static double spearman(int n, const double *a, const double *b)
{
	double *ra = malloc(sizeof(double) * n), *rb = malloc(sizeof(double) * n);
	double d2 = 0;

	ranks(n, a, ra);
	ranks(n, b, rb);
	for (int i = 0; i < n; i++)
		d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
	free(ra);
	free(rb);
	return 1 - 6 * d2 / ((double)n * ((double)n * n - 1));
}

static void test_costmodel_monotone__ranks_held_out_data(void **state)
{
	ts_ctx *ctx = *state;
	enum { NF = 8, NTRAIN = 300, NTEST = 100 };
	ts_cost_model *m = ts_cost_model_new(ctx, NF, 7);
	float x[NTEST * NF];
	double want[NTEST], got[NTEST];

	assert_non_null(m);
	for (int i = 0; i < NTRAIN + NTEST; i++) {
		float *row = i < NTRAIN ? (float[NF]){ 0 } : x + (i - NTRAIN) * NF;
		double y;
		for (int f = 0; f < NF; f++)
			row[f] = (float)uniform(ctx);
		y = 3 * row[0] + row[1] * row[1] + 0.5 * exp(row[2]);
		if (i < NTRAIN)
			assert_int_equal(ts_cost_model_add(m, row, y), TS_OK);
		else
			want[i - NTRAIN] = y;
	}
	assert_int_equal(ts_cost_model_size(m), NTRAIN);
	assert_int_equal(ts_cost_model_train(m, 0), TS_OK);
	assert_true(ts_cost_model_trained(m));
	assert_int_equal(ts_cost_model_predict(m, NTEST, x, got), TS_OK);
	assert_true(spearman(NTEST, want, got) > 0.8);
	ts_cost_model_free(m);
}

static void test_costmodel_errors__name_the_problem(void **state)
{
	ts_ctx *ctx = *state;
	ts_cost_model *m = ts_cost_model_new(ctx, 2, 1);
	float x[2] = { 1, 2 };
	double out;

	assert_null(ts_cost_model_new(ctx, 0, 1));
	assert_error_contains(ctx, "cost model: 0 features");
	assert_int_equal(ts_cost_model_predict(m, 1, x, &out), TS_ERROR);
	assert_error_contains(ctx, "predict before training");
	assert_int_equal(ts_cost_model_add(m, x, NAN), TS_ERROR);
	assert_error_contains(ctx, "sample 0 has a target that is not finite");
	assert_int_equal(ts_cost_model_add(m, x, 1.0), TS_OK);
	assert_int_equal(ts_cost_model_train(m, 0), TS_ERROR);
	assert_error_contains(ctx, "1 samples are too few");
}

/* The template of the tiny matmul for the host, 1 core. */
static const ts_template *tiny_template(ts_ctx *ctx, const ts_dag **dagp)
{
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_target *t = ts_target_host(ctx);
	ts_static_result *r;

	assert_non_null(dag);
	assert_non_null(t);
	t->cpu.cores = 1;
	r = ts_static_fill(ctx, dag, t, 8);
	assert_non_null(r);
	if (dagp)
		*dagp = dag;
	return r->tp;
}

/* A score that depends on every knob value: rewards large inner
 * factors. */
static ts_status fake_score(void *data, int n, ts_config *const *cfgs,
	double *out)
{
	for (int i = 0; i < n; i++) {
		uint64_t h = ts_config_hash(cfgs[i]);
		out[i] = (double)(h % 1000) / 1000;
	}
	return TS_OK;
}

/* Draw "nbatch" batches of 16 from a fresh search in a context seeded
 * with "seed"; return the JSON of every proposal, one per line. */
static char *proposals(uint64_t seed, int nbatch, ts_score_fn score)
{
	ts_ctx *ctx = ts_ctx_alloc();
	const ts_template *tp;
	ts_evolve_options o = ts_evolve_options_default();
	ts_evolve *e;
	size_t len = 0, cap = 1 << 16;
	char *all = malloc(cap);

	ts_ctx_set_seed(ctx, seed);
	tp = tiny_template(ctx, NULL);
	o.population = 32;
	o.generations = 2;
	e = ts_evolve_new(ctx, tp->space, &o);
	*all = '\0';
	for (int b = 0; b < nbatch; b++) {
		ts_config *out[16];
		int k = ts_evolve_next(e, 16, score, NULL, out);
		assert_int_equal(k, 16);
		for (int i = 0; i < k; i++) {
			const char *j = ts_config_to_json(out[i]);
			assert_true(ts_evolve_is_marked(e, out[i]));
			if (len + strlen(j) + 2 > cap)
				all = realloc(all, cap *= 2);
			len += sprintf(all + len, "%s\n", j);
		}
	}
	assert_int_equal(ts_evolve_marked(e), 16 * nbatch);
	ts_ctx_free(ctx);
	return all;
}

/* Whether the lines of "s" are distinct. */
static bool lines_distinct(const char *s)
{
	for (const char *a = s; *a; a = strchr(a, '\n') + 1) {
		size_t n = strchr(a, '\n') - a;
		for (const char *b = strchr(a, '\n') + 1; *b;
		     b = strchr(b, '\n') + 1)
			if ((size_t)(strchr(b, '\n') - b) == n &&
			    !strncmp(a, b, n))
				return false;
	}
	return true;
}

static void test_evolve_batches__never_repeat_a_config(void **state)
{
	char *scored = proposals(3, 8, fake_score);
	char *random = proposals(3, 8, NULL);

	assert_true(lines_distinct(scored));
	assert_true(lines_distinct(random));
	free(scored);
	free(random);
}

static void test_evolve_same_seed__same_candidates(void **state)
{
	char *a = proposals(11, 4, fake_score);
	char *b = proposals(11, 4, fake_score);
	char *c = proposals(12, 4, fake_score);

	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	free(a);
	free(b);
	free(c);
}

static void test_evolve_marked__is_not_proposed(void **state)
{
	ts_ctx *ctx = *state;
	const ts_template *tp = tiny_template(ctx, NULL);
	ts_evolve_options o = ts_evolve_options_default();
	ts_config *seed = ts_template_default(tp), *out[8];
	ts_evolve *e;

	o.population = 16;
	o.generations = 1;
	e = ts_evolve_new(ctx, tp->space, &o);
	ts_evolve_seed(e, 1, &seed);
	ts_evolve_mark(e, seed);
	assert_true(ts_evolve_is_marked(e, seed));
	assert_int_equal(ts_evolve_next(e, 8, NULL, NULL, out), 8);
	for (int i = 0; i < 8; i++)
		assert_false(ts_config_equal(out[i], seed));
}

static void test_crossover__takes_each_knob_from_a_parent(void **state)
{
	ts_ctx *ctx = *state;
	const ts_template *tp = tiny_template(ctx, NULL);
	const ts_space *sp = tp->space;

	for (int r = 0; r < 20; r++) {
		ts_config *a = ts_space_sample(sp, ctx);
		ts_config *b = ts_space_sample(sp, ctx);
		ts_config *c = ts_config_crossover(a, b, ctx);
		for (int k = 0; k < sp->nknobs; k++) {
			const ts_knob *kn = sp->knobs[k];
			int len = kn->kind == TS_KNOB_SPLIT ? kn->nparts : 1;
			size_t bytes = sizeof(int64_t) * len;
			assert_true(!memcmp(c->v + kn->offset, a->v + kn->offset,
				bytes) || !memcmp(c->v + kn->offset,
				b->v + kn->offset, bytes));
		}
		assert_true(ts_config_is_valid(c));
	}
}

/* A measurer for tests: counts calls, remembers every schedule measured
 * and makes up a time from the schedule's text; one in ten is a wrong
 * answer unless "no_errors". */
struct fake {
	int calls;
	int n;
	char *seen[512];
	bool no_errors;
	double min_s;
	bool reverse;		/* a schedule measured again gets 4 ms minus
				 * its first time: slower than any first
				 * time, in the reverse order */
	double again_min_s;	/* the best of those */
	double scale;		/* times of schedules measured first, times
				 * this when not 0 */
	char *slow;		/* a schedule (JSON) that takes 10 ms */
	char *quick;		/* one that takes 0.5 ms */
	double delay_s;		/* sleep this long per call */
};

/* FNV-1a of "s". */
static uint64_t text_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static ts_status fake_measure(void *data, int n,
	const ts_schedule *const *sch, ts_measure_result *out)
{
	struct fake *f = data;

	f->calls++;
	if (f->delay_s > 0) {
		struct timespec d = { 0, (long)(f->delay_s * 1e9) };
		nanosleep(&d, NULL);
	}
	for (int i = 0; i < n; i++) {
		char *j = ts_schedule_to_json(sch[i]);
		uint64_t h = text_hash(j);
		bool again = false;
		memset(&out[i], 0, sizeof(out[i]));
		for (int k = 0; k < f->n && !again; k++)
			again = !strcmp(f->seen[k], j);
		assert_true(f->n < 512);
		f->seen[f->n++] = strdup(j);
		if (h % 10 == 0 && !f->no_errors) {
			out[i].error = TS_ERR_WRONG_ANSWER;
			out[i].message = "made up";
			continue;
		}
		out[i].median_s = 1e-3 * (1 + (double)(h % 997) / 997);
		if (!again && f->scale)
			out[i].median_s *= f->scale;
		if (f->slow && !strcmp(f->slow, j))
			out[i].median_s = 10e-3;
		if (f->quick && !strcmp(f->quick, j))
			out[i].median_s = 0.5e-3;
		out[i].nsamples = 1;
		out[i].samples = &out[i].median_s;
		if (again && f->reverse) {
			out[i].median_s = 4e-3 - out[i].median_s;
			f->again_min_s = fmin(f->again_min_s, out[i].median_s);
		} else {
			f->min_s = fmin(f->min_s, out[i].median_s);
		}
	}
	return TS_OK;
}

/* Free what "f" remembers. */
static void fake_free(struct fake *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->seen[i]);
}

/* Options for a short tuning run measured by "f". */
static ts_tune_options fake_options(struct fake *f, int trials,
	const char *log)
{
	ts_tune_options o = ts_tune_options_default();

	o.trials = trials;
	o.batch = 8;
	o.log = log;
	o.evolve.population = 32;
	o.evolve.generations = 2;
	o.measure_fn = fake_measure;
	o.measure_data = f;
	o.verify = 0;
	f->min_s = f->again_min_s = INFINITY;
	return o;
}

/* The target the tests tune for: the shipped Zen 4 description, on
 * every host (nothing here runs its code: the measurer is the fake one).
 * Not the host's: the fake's times come from the text of each schedule,
 * so the static choice, which depends on the target, decided whether the
 * candidates beat it (on a Zen 3 host none did, and nothing was compared
 * again). */
static ts_target *tune_target(ts_ctx *ctx)
{
	ts_target *t = ts_target_lookup(ctx, "zen4");

	assert_non_null(t);
	return t;
}

/* Where a run's time went: every call of the measuring function (20 ms
 * each) counted as measuring, or as the final comparison, whose runs are
 * the measurements beyond the trials; rating candidates as search. */
static void test_tuner_phases__measuring_search_and_comparison(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	struct fake f = { .delay_s = 0.02, .no_errors = true };
	ts_tune_options o = fake_options(&f, 24, NULL);
	ts_tuner *t;
	ts_tune_phases ph;
	int first_calls;

	o.verify = 2;
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	ph = ts_tuner_phases(t);
	assert_true(ph.search_s == 0 && ph.measure_s == 0 &&
		ph.verify_s == 0 && ph.verify_runs == 0);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	ph = ts_tuner_phases(t);
	first_calls = f.calls;
	assert_true(ts_tuner_verified(t));
	assert_int_equal(ph.verify_runs, f.n - 24);
	assert_true(ph.verify_runs >= 3 * 2);
	/* Three trial batches of 8, then three rounds of comparison. */
	assert_int_equal(f.calls, 3 + 3);
	assert_true(ph.measure_s >= 3 * 0.02);
	assert_true(ph.verify_s >= 3 * 0.02);
	assert_true(ph.search_s > 0);
	/* A later run adds to them. */
	ts_tuner_extend(t, 8);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_true(ts_tuner_phases(t).measure_s >= ph.measure_s + 0.02);
	assert_true(f.calls > first_calls);
}

static void test_tuner_fake__measures_distinct_and_keeps_best(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	struct fake f = { 0 };
	ts_tune_options o = fake_options(&f, 40, NULL);
	ts_tuner *t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	const double *hist;
	int n, errors = 0;

	assert_non_null(t);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(t), 40);
	assert_int_equal(f.n, 40);
	assert_int_equal(f.calls, 5);
	for (int i = 0; i < f.n; i++)
		for (int j = 0; j < i; j++)
			assert_string_not_equal(f.seen[i], f.seen[j]);
	assert_float_equal(ts_tuner_best_time(t), f.min_s, 0);
	assert_non_null(ts_tuner_best_schedule(t));
	assert_non_null(ts_tuner_best_config(t));
	assert_true(isfinite(ts_tuner_static_time(t)) ||
		ts_tuner_errors(t, TS_ERR_WRONG_ANSWER) > 0);
	n = ts_tuner_history(t, &hist);
	assert_int_equal(n, 40);
	for (int i = 1; i < n; i++)
		assert_true(hist[i] <= hist[i - 1] || isinf(hist[i - 1]));
	assert_float_equal(hist[n - 1], f.min_s, 0);
	for (int c = 0; c < TS_ERR_COUNT; c++)
		errors += ts_tuner_errors(t, c);
	assert_int_equal(errors, ts_tuner_errors(t, TS_ERR_WRONG_ANSWER));
	ts_tuner_free(t);
	fake_free(&f);
}

static void test_tuner_verify__chooses_by_the_new_times(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	/* No made-up failures: the static choice must have a time to be
	 * measured again. */
	struct fake f = { .reverse = true, .no_errors = true };
	ts_tune_options o = fake_options(&f, 24, NULL);
	const double *hist;
	ts_tuner *t;

	o.verify = 4;
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	/* 3 batches, then the 4 best again, and the static choice unless
	 * it is one of them; those are not trials */
	assert_int_equal(ts_tuner_trials(t), 24);
	/* three interleaved rounds of the 4 or 5 verified schedules */
	assert_int_equal(f.calls, 6);
	assert_true(f.n == 24 + 3 * 4 || f.n == 24 + 3 * 5);
	assert_true(isfinite(ts_tuner_static_time(t)));
	for (int i = 24; i < f.n; i++) {
		bool seen = false;
		for (int j = 0; j < 24 && !seen; j++)
			seen = !strcmp(f.seen[i], f.seen[j]);
		assert_true(seen);
	}
	/* the new times reverse the order: the best is the best of them,
	 * no longer the fastest first measurement, unless the static
	 * choice is within the margin of it (then the static choice) */
	if (ts_tuner_static_time(t) <= f.again_min_s * (1 + TS_TUNE_MARGIN))
		assert_float_equal(ts_tuner_best_time(t),
			ts_tuner_static_time(t), 0);
	else
		assert_float_equal(ts_tuner_best_time(t), f.again_min_s, 0);
	assert_true(ts_tuner_best_time(t) > f.min_s);
	assert_true(ts_tuner_best_time(t) <= ts_tuner_static_time(t));
	assert_int_equal(ts_tuner_history(t, &hist), 24);
	assert_float_equal(hist[23], f.min_s, 0);
	fake_free(&f);
}

/* A measurer where the static choice "static_json" always takes 1 ms
 * and every other schedule is lucky the first time (0.1 to 0.5 ms) and
 * takes 2 ms whenever measured again. */
struct lucky {
	const char *static_json;
	double again_s;		/* a schedule measured again; 0: 2 ms */
	int n, calls;
	char *seen[512];
};

static ts_status lucky_measure(void *data, int n,
	const ts_schedule *const *sch, ts_measure_result *out)
{
	struct lucky *f = data;

	f->calls++;
	for (int i = 0; i < n; i++) {
		char *j = ts_schedule_to_json(sch[i]);
		bool again = false;
		for (int k = 0; k < f->n && !again; k++)
			again = !strcmp(f->seen[k], j);
		assert_true(f->n < 512);
		f->seen[f->n++] = strdup(j);
		memset(&out[i], 0, sizeof(out[i]));
		if (!strcmp(j, f->static_json))
			out[i].median_s = 1e-3;
		else if (again)
			out[i].median_s = f->again_s > 0 ? f->again_s : 2e-3;
		else
			out[i].median_s = 1e-4 * (1 + text_hash(j) % 5);
		out[i].nsamples = 1;
		out[i].samples = &out[i].median_s;
	}
	return TS_OK;
}

/* Whatever a run of the search measured, the tuner reports and records
 * no best slower than the static choice measured alongside it: lucky
 * first measurements that the verification finds slower leave the
 * static choice as the best, in the tuner and in the log. */
static void test_tuner_verify__never_keeps_a_best_slower_than_static(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	char *log = ts_test_temp_path("tuner", "lucky.jsonl");
	struct lucky f = { 0 };
	ts_tune_options o = ts_tune_options_default();
	const ts_record *best;
	ts_record **recs;
	ts_tuner *t;
	double other;
	int n = 0;

	o.trials = 16;
	o.batch = 8;
	o.verify = 4;
	o.log = log;
	o.evolve.population = 32;
	o.evolve.generations = 2;
	o.measure_fn = lucky_measure;
	o.measure_data = &f;
	unlink(log);
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	f.static_json = ts_schedule_to_json(ts_tuner_static_schedule(t));
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_float_equal(ts_tuner_static_time(t), 1e-3, 0);
	assert_float_equal(ts_tuner_best_time(t), 1e-3, 0);
	assert_true(ts_tuner_kept_static(t, &other));
	assert_float_equal(other, 2e-3, 0);
	assert_string_equal(ts_schedule_to_json(ts_tuner_best_schedule(t)),
		f.static_json);
	/* the log's best is the verified static choice, not a lucky first
	 * measurement of 0.1 ms */
	recs = ts_records_load(ctx, log, &n);
	assert_non_null(recs);
	best = ts_records_best(recs, n, ts_dag_hash(dag), NULL);
	assert_non_null(best);
	assert_true(best->verified);
	assert_string_equal(best->schedule, f.static_json);
	assert_float_equal(best->median_s, 1e-3, 0);
	ts_tuner_free(t);
	for (int i = 0; i < f.n; i++)
		free(f.seen[i]);
	unlink(log);
}

/* A candidate that the verification finds faster than the static
 * choice by less than TS_TUNE_MARGIN does not replace it; one faster by
 * more does. */
static void test_tuner_verify__margin_keeps_static(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	const double again[] = { 1e-3 / (1 + TS_TUNE_MARGIN / 2),
		1e-3 / (1 + 2 * TS_TUNE_MARGIN) };

	for (int k = 0; k < 2; k++) {
		struct lucky f = { .again_s = again[k] };
		ts_tune_options o = ts_tune_options_default();
		ts_tuner *t;

		o.trials = 16;
		o.batch = 8;
		o.verify = 4;
		o.evolve.population = 32;
		o.evolve.generations = 2;
		o.measure_fn = lucky_measure;
		o.measure_data = &f;
		t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
		assert_non_null(t);
		f.static_json = ts_schedule_to_json(
			ts_tuner_static_schedule(t));
		assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
		assert_int_equal(ts_tuner_kept_static(t, NULL), k == 0);
		assert_float_equal(ts_tuner_best_time(t), k == 0 ? 1e-3 :
			again[k], 0);
		ts_tuner_free(t);
		for (int i = 0; i < f.n; i++)
			free(f.seen[i]);
	}
}

static const char *baseline_decls[] = {
	"input A: f32[64, 48]\n"
	"input B: f32[48, 80]\n"
	"output C[i: 64, j: 80] = sum(k: 48) A[i, k] * B[k, j]\n",
	"input X: f32[32, 100]\n"
	"output Y[i: 32, j: 100] = exp(X[i, j] - max(k: 100) X[i, k])\n",
	"input X: f32[256, 64]\n"
	"output Y[i: 256, j: 64] = X[i, j] * 2.0 + 1.0\n",
	"input I: f32[1, 8, 18, 18]\n"
	"input W: f32[16, 8, 3, 3]\n"
	"output O[n: 1, f: 16, y: 16, x: 16] = sum(c: 8, r: 3, s: 3) "
	"I[n, c, y + r, x + s] * W[f, c, r, s]\n",
};

/* The tuner's static choice is the static baseline that tessel run
 * --schedule static compiles (ts_static_baseline), for several
 * declarations, thread counts and seeds, even when the context's stream
 * was used before. */
static void test_static_baseline__is_the_tuners_static_choice(void **state)
{
	(void)state;
	for (size_t d = 0; d < sizeof(baseline_decls) /
	     sizeof(baseline_decls[0]); d++)
		for (int threads = 1; threads <= 4; threads *= 2)
			for (uint64_t seed = 1; seed <= 2; seed++) {
				ts_ctx *ctx = ts_ctx_alloc();
				ts_dag *dag = ts_parse_string(ctx, "b.tsl",
					baseline_decls[d]);
				struct fake f = { 0 };
				ts_tune_options o = fake_options(&f, 1, NULL);
				const ts_schedule *a, *b;
				ts_tuner *t;
				assert_non_null(dag);
				o.threads = threads;
				o.seed = seed;
				t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
				assert_non_null(t);
				a = ts_tuner_static_schedule(t);
				ts_ctx_free(ctx);
				ctx = ts_ctx_alloc();
				dag = ts_parse_string(ctx, "b.tsl",
					baseline_decls[d]);
				ts_ctx_set_seed(ctx, seed);
				(void)ts_ctx_random(ctx);
				b = ts_static_baseline(ctx, dag, tune_target(ctx),
					threads);
				assert_non_null(a);
				assert_non_null(b);
				if (strcmp(ts_schedule_hash(a),
				    ts_schedule_hash(b)))
					fail_msg("declaration %zu, %d threads, "
						"seed %llu: tuner %s, run %s", d,
						threads, (unsigned long long)seed,
						ts_schedule_to_json(a),
						ts_schedule_to_json(b));
				ts_ctx_free(ctx);
			}
}

/* Tune the tiny matmul in a fresh context seeded "seed" with "trials"
 * trials, the log "log", measured by "f"; return the tuner's resumed
 * count. */
static int tune_fresh(uint64_t seed, int trials, const char *log,
	struct fake *f)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_tune_options o = fake_options(f, trials, log);
	ts_tuner *t;
	int resumed;

	ts_ctx_set_seed(ctx, seed);
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(t), trials);
	resumed = ts_tuner_resumed(t);
	ts_ctx_free(ctx);
	return resumed;
}

static void test_tuner_resume__skips_measured_configs(void **state)
{
	char log[] = "/tmp/ts_tune_logXXXXXX";
	int fd = mkstemp(log);
	struct fake a = { 0 }, b = { 0 };
	ts_ctx *ctx = *state;
	ts_record **recs;
	int n;

	assert_true(fd >= 0);
	close(fd);
	unlink(log);
	assert_int_equal(tune_fresh(5, 24, log, &a), 0);
	assert_int_equal(a.n, 24);
	/* the same seed again: without the log it would propose the same
	 * candidates; with it, every one is new */
	assert_int_equal(tune_fresh(5, 16, log, &b), 24);
	assert_int_equal(b.n, 16);
	for (int i = 0; i < b.n; i++)
		for (int j = 0; j < a.n; j++)
			assert_string_not_equal(b.seen[i], a.seen[j]);
	recs = ts_records_load(ctx, log, &n);
	assert_non_null(recs);
	assert_int_equal(n, 40);
	unlink(log);
	fake_free(&a);
	fake_free(&b);
}

/* Tune the tiny matmul from "log" with "trials" trials measured by "f"
 * (verifying the best 2); return whether the run verified, and the
 * number of verified records in the log into "*nverified". */
static bool tune_verifying(uint64_t seed, int trials, const char *log,
	struct fake *f, int *nverified)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_tune_options o = fake_options(f, trials, log);
	ts_record **recs;
	ts_tuner *t;
	bool verified;
	int n;

	o.verify = 2;
	ts_ctx_set_seed(ctx, seed);
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	/* A slow static choice: the candidates are worth comparing. */
	f->slow = ts_schedule_to_json(ts_tuner_static_schedule(t));
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	f->slow = NULL;
	verified = ts_tuner_verified(t);
	recs = ts_records_load(ctx, log, &n);
	*nverified = 0;
	for (int i = 0; i < n; i++)
		*nverified += recs[i]->verified;
	ts_ctx_free(ctx);
	return verified;
}

/* A run resumed from a judged log verifies only when it finds something
 * faster than the log's best; a run where nothing beats the static
 * choice keeps it without comparing. */
static void test_tuner_resume__verifies_only_what_is_faster(void **state)
{
	char *log = ts_test_temp_path("tuner", "verify.jsonl");
	struct fake a = { 0 }, slow = { .scale = 3 }, fast = { .scale = 0.1 };
	int nv = 0, before;

	(void)state;
	assert_true(tune_verifying(5, 16, log, &a, &nv));
	assert_true(nv >= 2);
	before = nv;
	/* Every new candidate slower than the best of the log: nothing is
	 * measured again and no verified record is added. */
	assert_false(tune_verifying(6, 8, log, &slow, &nv));
	assert_int_equal(nv, before);
	assert_int_equal(slow.n, 8);
	/* Faster ones: the best are compared again. */
	assert_true(tune_verifying(7, 8, log, &fast, &nv));
	assert_true(nv > before);
	unlink(log);
	{
		ts_ctx *ctx = ts_ctx_alloc();
		ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
		struct fake g = { .no_errors = true };
		ts_tune_options o = fake_options(&g, 8, NULL);
		ts_tuner *t;
		o.verify = 2;
		t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
		assert_non_null(t);
		/* The static choice faster than every candidate: no
		 * comparison, and it is the best. */
		g.quick = ts_schedule_to_json(ts_tuner_static_schedule(t));
		assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
		assert_false(ts_tuner_verified(t));
		assert_true(ts_tuner_kept_static(t, NULL));
		assert_true(ts_tuner_best_time(t) == ts_tuner_static_time(t));
		fake_free(&g);
		ts_ctx_free(ctx);
	}
	fake_free(&a);
	fake_free(&slow);
	fake_free(&fast);
}

/* Tune the tiny matmul with "f" in a fresh context seeded "seed" and
 * return the schedules measured, one JSON per line. */
static char *tuned_sequence(uint64_t seed)
{
	struct fake f = { 0 };
	size_t len = 0;
	char *all;

	tune_fresh(seed, 24, NULL, &f);
	for (int i = 0; i < f.n; i++)
		len += strlen(f.seen[i]) + 1;
	all = malloc(len + 1);
	*all = '\0';
	for (int i = 0; i < f.n; i++)
		strcat(strcat(all, f.seen[i]), "\n");
	fake_free(&f);
	return all;
}

static void test_tuner_same_seed__same_candidates(void **state)
{
	char *a = tuned_sequence(21), *b = tuned_sequence(21);
	char *c = tuned_sequence(22);

	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	free(a);
	free(b);
	free(c);
}

static void test_tuner_topk__measures_the_static_top_k(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	struct fake f = { 0 };
	ts_tune_options o = fake_options(&f, 100, NULL);
	ts_tuner *t;

	o.topk = 5;
	o.batch = 3;
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(t), 5);
	assert_int_equal(f.n, 5);
	assert_int_equal(f.calls, 2);
	fake_free(&f);
}

/* With a lead of 4, the first candidates measured are the static
 * model's four best kernels in rank order, then the search goes on; a
 * tuner extended runs on from where it stopped, never measuring a kernel
 * twice, its history one curve over both runs. */
static void test_tuner_lead_and_extend__go_on_from_the_top_k(void **state)
{
	(void)state;
	ts_ctx *ctx = ts_ctx_alloc(), *c2 = ts_ctx_alloc();
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_dag *d2 = ts_parse_string(c2, "tiny.tsl", tiny_matmul);
	ts_static_result *st = ts_static_baseline_fill(c2, d2, tune_target(c2), 1,
		32);
	struct fake f = { 0 };
	ts_tune_options o = fake_options(&f, 6, NULL);
	char *want[4];
	const double *hist;
	ts_tuner *t;
	int n = 0;

	assert_non_null(st);
	for (int i = 0; i < st->k && n < 4; i++) {
		char *j = ts_schedule_to_json(ts_template_apply(st->tp,
			st->topk[i]));
		bool seen = false;
		for (int k = 0; k < n; k++)
			seen = seen || !strcmp(want[k], j);
		if (!seen)
			want[n++] = j;
	}
	assert_int_equal(n, 4);
	o.lead = 4;
	o.batch = 3;
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(t), 6);
	for (int i = 0; i < 4; i++)
		assert_string_equal(f.seen[i], want[i]);
	ts_tuner_extend(t, 5);
	assert_int_equal(ts_tuner_run(t, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(t), 11);
	assert_int_equal(f.n, 11);
	for (int i = 0; i < f.n; i++)
		for (int j = 0; j < i; j++)
			assert_string_not_equal(f.seen[i], f.seen[j]);
	assert_int_equal(ts_tuner_history(t, &hist), 11);
	for (int i = 1; i < 11; i++)
		assert_true(hist[i] <= hist[i - 1] || isinf(hist[i - 1]));
	assert_float_equal(ts_tuner_best_time(t), f.min_s, 0);
	ts_tuner_free(t);
	fake_free(&f);
	ts_ctx_free(c2);
	ts_ctx_free(ctx);
}

/* A tuner that learned another's samples trains its model from its
 * first batch: with the same seed, its first search proposes other
 * candidates than a tuner that learned nothing (whose first batches are
 * ranked at random), and it keeps what it learned apart from its own. */
static void test_tuner_learn__trains_from_the_first_batch(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	struct fake fa = { 0 }, fb = { 0 }, fc = { 0 };
	ts_tune_options oa = fake_options(&fa, 24, NULL);
	ts_tune_options ob = fake_options(&fb, 8, NULL);
	ts_tune_options oc = fake_options(&fc, 8, NULL);
	ts_tuner *a, *b, *c;
	bool differ = false;

	oa.seed = 7;
	ob.seed = oc.seed = 3;
	a = ts_tuner_new(ctx, dag, tune_target(ctx), &oa);
	assert_non_null(a);
	assert_int_equal(ts_tuner_run(a, NULL, NULL), TS_OK);
	b = ts_tuner_new(ctx, dag, tune_target(ctx), &ob);
	c = ts_tuner_new(ctx, dag, tune_target(ctx), &oc);
	assert_non_null(b);
	assert_non_null(c);
	ts_tuner_learn(b, a);
	assert_int_equal(ts_tuner_learned(b), 24);
	assert_int_equal(ts_tuner_learned(c), 0);
	assert_int_equal(ts_tuner_run(b, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_run(c, NULL, NULL), TS_OK);
	assert_int_equal(ts_tuner_trials(b), 8);
	assert_int_equal(fb.n, 8);
	assert_int_equal(fc.n, 8);
	for (int i = 0; i < 8; i++)
		differ = differ || strcmp(fb.seen[i], fc.seen[i]);
	assert_true(differ);
	ts_tuner_free(a);
	ts_tuner_free(b);
	ts_tuner_free(c);
	fake_free(&fa);
	fake_free(&fb);
	fake_free(&fc);
}

/* The value of knob "key" in the configuration JSON "json" ("[..]" or a
 * word), as text. */
static char *knob_text(const char *json, const char *key)
{
	char *at = strstr(json, key), *end;

	assert_non_null(at);
	at += strlen(key);
	end = at + strcspn(at, ",}");
	if (*at == '[')
		end = strchr(at, ']') + 1;
	return strndup(at, (size_t)(end - at));
}

/* A tuner adopts the best configurations of another whose stage has the
 * shape of its own under another name: its first candidate carries that
 * stage's knobs, renamed; a stage that is not there, or that reads an
 * input of another shape, gives none. */
static void test_tuner_adopt__first_candidate_from_same_shape(void **state)
{
	static const char *const knobs[] = { ".i\":", ".j\":", ".k\":",
		".vec\":", ".par\":", ".unroll\":" };
	ts_ctx *ctx = *state;
	ts_dag *da = ts_parse_string(ctx, "a.tsl", tiny_matmul);
	ts_dag *db = ts_parse_string(ctx, "b.tsl",
		"input P: f32[32, 24]\n"
		"input Q: f32[24, 40]\n"
		"output D[i: 32, j: 40] = sum(k: 24) P[i, k] * Q[k, j]\n");
	struct fake fa = { .no_errors = true }, fb = { .no_errors = true };
	ts_tune_options oa = fake_options(&fa, 24, NULL);
	ts_tune_options ob = fake_options(&fb, 1, NULL);
	ts_tuner *a, *b, *t_other;
	char *ja, *jb;

	oa.seed = 11;
	ob.batch = 1;
	a = ts_tuner_new(ctx, da, tune_target(ctx), &oa);
	assert_non_null(a);
	assert_int_equal(ts_tuner_run(a, NULL, NULL), TS_OK);
	b = ts_tuner_new(ctx, db, tune_target(ctx), &ob);
	assert_non_null(b);
	/* The same axes over a transposed input: another kernel. */
	t_other = ts_tuner_new(ctx, ts_parse_string(ctx, "e.tsl",
		"input P: f32[24, 32]\n"
		"input Q: f32[24, 40]\n"
		"output E[i: 32, j: 40] = sum(k: 24) P[k, i] * Q[k, j]\n"),
		tune_target(ctx), &ob);
	assert_non_null(t_other);
	assert_int_equal(ts_tuner_adopt(b, a, "X", "D", 2), 0);
	assert_int_equal(ts_tuner_adopt(t_other, a, "C", "E", 2), 0);
	assert_int_equal(ts_tuner_adopt(b, a, "C", "D", 2), 2);
	assert_int_equal(ts_tuner_run(b, NULL, NULL), TS_OK);
	assert_int_equal(fb.n, 1);
	ja = ts_config_to_json(ts_tuner_best_config(a));
	jb = ts_config_to_json(ts_tuner_best_config(b));
	for (size_t i = 0; i < sizeof(knobs) / sizeof(*knobs); i++) {
		char ka[32], kb[32];
		char *va, *vb;
		snprintf(ka, sizeof(ka), "\"C%s", knobs[i]);
		snprintf(kb, sizeof(kb), "\"D%s", knobs[i]);
		va = knob_text(ja, ka);
		vb = knob_text(jb, kb);
		assert_string_equal(va, vb);
		free(va);
		free(vb);
	}
	ts_tuner_free(t_other);
	ts_tuner_free(a);
	ts_tuner_free(b);
	fake_free(&fa);
	fake_free(&fb);
}

static void test_tuner_bad_options__is_an_error(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_tune_options o = ts_tune_options_default();

	o.batch = 0;
	assert_null(ts_tuner_new(ctx, dag, tune_target(ctx), &o));
	assert_error_contains(ctx, "tune: bad options: trials 200, batch 0,");
	o.batch = 16;
	o.lead = -1;
	assert_null(ts_tuner_new(ctx, dag, tune_target(ctx), &o));
	assert_error_contains(ctx, "lead -1, budget 0");
	o.lead = 0;
	o.budget_s = -1;
	assert_null(ts_tuner_new(ctx, dag, tune_target(ctx), &o));
	assert_error_contains(ctx, "lead 0, budget -1");
	assert_int_equal(ts_tune_options_set(ctx, &o, "budget", "x"),
		TS_ERROR);
	assert_error_contains(ctx, "tuning option budget: bad value 'x' "
		"(seconds, 0 or more)");
	assert_int_equal(ts_tune_options_set(ctx, &o, "budget", "2.5"), TS_OK);
	assert_float_equal(o.budget_s, 2.5, 0);
	assert_int_equal(ts_tune_options_set(ctx, &o, "lead", "8"), TS_OK);
	assert_int_equal(o.lead, 8);
}

/* Count progress reports into "data" (an int). */
static void count_progress(const ts_tune_progress *p, void *data)
{
	(*(int *)data)++;
	assert_true(p->trials <= p->total);
}

static void test_tuner_real__best_schedule_matches_interpreter(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "tiny.tsl", tiny_matmul);
	ts_tune_options o = ts_tune_options_default();
	ts_array **in, *out[1], *args[3];
	ts_tuner *t;
	ts_module *m;
	ts_func *f;
	int reports = 0;
	double err;

	o.trials = 8;
	o.batch = 4;
	o.evolve.population = 32;
	o.evolve.generations = 2;
	o.measure.min_repeat_s = 0.005;
	t = ts_tuner_new(ctx, dag, tune_target(ctx), &o);
	assert_non_null(t);
	if (ts_tuner_run(t, count_progress, &reports) < 0)
		fail_msg("tuning failed: %s", ts_ctx_error(ctx));
	assert_int_equal(reports, 2);
	assert_true(isfinite(ts_tuner_best_time(t)));
	f = ts_lower(ctx, dag, ts_tuner_best_schedule(t));
	assert_non_null(f);
	m = ts_module_compile(ctx, f, NULL);
	assert_non_null(m);
	in = ts_dag_random_inputs(ctx, dag, 9);
	assert_int_equal(ts_eval(ctx, dag, in, out), TS_OK);
	args[0] = in[0];
	args[1] = in[1];
	args[2] = ts_array_for_tensor(ctx, dag->outputs[0]);
	assert_int_equal(ts_module_run(m, args), TS_OK);
	assert_true(ts_array_close(args[2], out[0], &err));
	ts_module_free(m);
	ts_tuner_free(t);
}

/* Check that "svg" draws the best so far as one step path with "nv"
 * improvements after its first point: "M" then "H" and "V" pairs, ending
 * with "H". */
static void assert_step_path(const char *svg, int nv)
{
	const char *p = strstr(svg, "<path class=\"best\"");
	int h = 0, v = 0;

	assert_non_null(p);
	p = strstr(p, " d=\"");
	assert_non_null(p);
	p += 4;
	assert_int_equal(*p, 'M');
	for (; *p != '"'; p++) {
		h += *p == 'H';
		v += *p == 'V';
		assert_true(*p != 'L' && *p != 'C');
	}
	assert_int_equal(v, nv);
	assert_int_equal(h, nv + 1);
}

/* Read the file "path" into "text" ("size" bytes). */
static void read_text(const char *path, char *text, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, size - 1, f);
	text[n] = '\0';
	fclose(f);
}

static void test_curve__step_on_axis_from_zero_with_references(void **state)
{
	ts_ctx *ctx = *state;
	double best[] = { INFINITY, 2e-3, 1.5e-3, 1.5e-3, 1e-3 };
	char *svg = ts_test_temp_path("curve", "refs.svg");
	ts_tune_curve c = ts_tune_curve_default();
	static char text[16384];

	c.title = "mm";
	c.n = 5;
	c.best = best;
	c.static_s = 1.2e-3;
	c.naive_s = 50e-3;	/* 25x the curve's top: off the scale */
	c.tuned_s = 1.05e-3;
	c.library_s = 0.84e-3;
	c.library = "OpenBLAS";
	assert_int_equal(ts_tune_curve_draw(ctx, svg, &c), TS_OK);
	read_text(svg, text, sizeof(text));
	assert_step_path(text, 2);
	/* the time axis starts at 0 and ends on a round number above the
	 * curve: 0, 0.5, ..., 2.5 ms */
	assert_non_null(strstr(text, "class=\"ytick\" x=\"64\" y=\"374.0\" "
		"text-anchor=\"end\" font-size=\"11\">0</text>"));
	assert_non_null(strstr(text, ">2.5</text>"));
	{
		int ticks = 0;
		for (const char *p = text; (p = strstr(p, "\"ytick\"")); p++)
			ticks++;
		assert_int_equal(ticks, 6);
	}
	/* the static line at 1.2 of 2.5 ms: y = 56 + 314 * (1 - 0.48) */
	assert_non_null(strstr(text, "<line class=\"ref-static\" x1=\"70\" "
		"y1=\"219.3\""));
	assert_non_null(strstr(text, ">static 1.2 ms</text>"));
	assert_non_null(strstr(text, "<line class=\"ref-library\""));
	assert_non_null(strstr(text, ">OpenBLAS 0.84 ms</text>"));
	/* naive is named, not drawn */
	assert_null(strstr(text, "<line class=\"ref-naive\""));
	assert_non_null(strstr(text, ">naive 50 ms (off the scale)</text>"));
	assert_non_null(strstr(text, "<path class=\"tuned\""));
	assert_non_null(strstr(text, ">tuned 1.05 ms (timed again)</text>"));
	assert_non_null(strstr(text, ">search best 1 ms</text>"));
	assert_non_null(strstr(text, "<text class=\"gain\""));
	assert_non_null(strstr(text, ">tuned 1.05 ms: 12.5% faster than "
		"static, 47.6x faster than naive, 0.80x the speed of "
		"OpenBLAS</text>"));
	unlink(svg);
}

static void test_curve__csv_and_svg(void **state)
{
	ts_ctx *ctx = *state;
	double best[] = { INFINITY, 2e-3, 1.5e-3, 1.5e-3, 1e-3 };
	char csv[] = "/tmp/ts_curveXXXXXX";
	char svg[64], text[4096];
	int fd = mkstemp(csv);
	FILE *f;
	size_t n;

	assert_true(fd >= 0);
	close(fd);
	snprintf(svg, sizeof(svg), "%s.svg", csv);
	assert_int_equal(ts_tune_curve_write_csv(ctx, csv, 5, best), TS_OK);
	f = fopen(csv, "r");
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_string_equal(text, "trial,best_s\n1,\n2,0.002\n3,0.0015\n"
		"4,0.0015\n5,0.001\n");
	assert_int_equal(ts_tune_curve_write_svg(ctx, svg, "C <tiny>", 5, best),
		TS_OK);
	f = fopen(svg, "r");
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "<svg "));
	assert_non_null(strstr(text, "C &lt;tiny&gt;"));
	assert_non_null(strstr(text, ">trials</text>"));
	/* a step from trial 2 (the first has no time): two improvements,
	 * each a horizontal then a vertical segment, held to trial 5 */
	assert_step_path(text, 2);
	assert_null(strstr(text, "<polyline"));
	assert_null(strstr(text, "class=\"ref-"));
	assert_non_null(strstr(text, "best 1 ms: 50.0% below the first point"));
	unlink(csv);
	unlink(svg);
	assert_int_equal(ts_tune_curve_write_csv(ctx, "/nonexistent/dir/c.csv",
		5, best), TS_ERROR);
	assert_error_contains(ctx, "cannot write '/nonexistent/dir/c.csv'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_tuner_phases__measuring_search_and_comparison),
		TS_TEST(test_costmodel_monotone__ranks_held_out_data),
		TS_TEST(test_costmodel_errors__name_the_problem),
		TS_TEST(test_evolve_batches__never_repeat_a_config),
		TS_TEST(test_evolve_same_seed__same_candidates),
		TS_TEST(test_evolve_marked__is_not_proposed),
		TS_TEST(test_crossover__takes_each_knob_from_a_parent),
		TS_TEST(test_tuner_fake__measures_distinct_and_keeps_best),
		TS_TEST(test_tuner_resume__skips_measured_configs),
		TS_TEST(test_tuner_resume__verifies_only_what_is_faster),
		TS_TEST(test_tuner_same_seed__same_candidates),
		TS_TEST(test_tuner_verify__chooses_by_the_new_times),
		TS_TEST(test_tuner_verify__never_keeps_a_best_slower_than_static),
		TS_TEST(test_tuner_verify__margin_keeps_static),
		TS_TEST(test_static_baseline__is_the_tuners_static_choice),
		TS_TEST(test_tuner_topk__measures_the_static_top_k),
		TS_TEST(test_tuner_lead_and_extend__go_on_from_the_top_k),
		TS_TEST(test_tuner_learn__trains_from_the_first_batch),
		TS_TEST(test_tuner_adopt__first_candidate_from_same_shape),
		TS_TEST(test_tuner_bad_options__is_an_error),
		TS_TEST(test_tuner_real__best_schedule_matches_interpreter),
		TS_TEST(test_curve__csv_and_svg),
		TS_TEST(test_curve__step_on_axis_from_zero_with_references),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
