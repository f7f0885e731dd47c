/* The tuner: static filling, then batches of measured candidates chosen
 * by evolutionary search under a learned cost model.
 *
 * Requires: a DAG and a CPU target.  Produces: the fastest measured
 * schedule, the history of best times, error counts, and records.
 *
 * One round: ask the search for a batch of unmeasured configurations
 * (random ranking until the model has two batches of samples), turn each
 * into a schedule, measure the batch, keep the history and the best,
 * append records, retrain the model on every sample (target: best time /
 * time, 0 for a failure), and seed the next search with the static top-k
 * and the best measured configurations.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <tessel/lower.h>
#include <tessel/records.h>
#include <tessel/search.h>
#include <tessel/tune.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "search/model.h"
#include "support/support.h"

#define ELITE 16
/* The model's inputs: the loop-IR features, then the static model's
 * estimate as log2(1 + nanoseconds), a prior the trees can lean on
 * before they have seen much. */
#define NFEAT (TS_FEAT_COUNT + 1)

/* Features of the configurations rated so far, by hash (open
 * addressing): the search rates the same seeds and survivors again and
 * again. */
struct feature_cache {
	int n, cap;
	ts_config **cfg;
	uint64_t *hash;		/* atomic */
	float *x;		/* cap * NFEAT, atomic */
	bool *ok;		/* atomic: whether it lowered */
};

struct ts_tuner {
	ts_ctx *ctx;
	const ts_dag *dag;
	const ts_target *target;	/* cores = the threads of the options */
	ts_tune_options opt;
	ts_static_result *st;
	const ts_template *tp;
	ts_evolve *evo;
	ts_cost_model *model;	/* owns XGBoost handles */
	ts_model rating;	/* the static model of "tp", built once:
				 * its estimate is a feature */
	ts_measurer *measurer;	/* made at the first measurement */
	int nsamples, cap;	/* training samples: features and times */
	float *feat;
	double *time;		/* INFINITY: failed */
	int nprior;		/* samples learned from other tuners */
	float *prior_x;
	double *prior_y;	/* their target: their best / their time */
	int nelite;		/* best measured, fastest first */
	ts_config *elite[ELITE];
	double elite_s[ELITE];
	int nadopt, adopt_next;	/* configurations taken from tuners of
				 * same-shape stages, measured first */
	ts_config **adopt;
	int topk_next;		/* next static candidate of the top-k */
	int lead_taken;		/* distinct kernels taken from it */
	int planned;		/* trials of this run */
	int hcap;		/* room in "history" */
	int trials;		/* measured in this run */
	int resumed;		/* records reused from the log */
	bool verified;		/* the run ended with verify() */
	bool log_verified;	/* the log holds verified records of its
				 * workload */
	double *history;	/* best time after each trial */
	double best_s, static_s;
	ts_config *best_cfg;
	const ts_schedule *best_sch;
	const ts_schedule *static_sch;	/* of st->best */
	double candidate_s;	/* verified: the fastest other candidate */
	int errors[TS_ERR_COUNT];
	struct feature_cache cache;
	int nkernels, kcap;	/* hashes of the schedules measured */
	uint64_t *kernels;
	ts_tune_phases phases;	/* over every run */
};

static ts_status log_load(ts_tuner *t);
static ts_status log_append(ts_tuner *t, const ts_config *c,
	const ts_schedule *sch, const ts_measure_result *r, bool verified);

ts_tune_options ts_tune_options_default(void)
{
	ts_tune_options o = {
		.trials = 200,
		.batch = 16,
		.topk = 0,
		.static_k = 32,
		.verify = 4,
		.threads = 1,
	};
	o.measure = ts_measure_options_default();
	o.evolve = ts_evolve_options_default();
	return o;
}

ts_tune_options *ts_tune_options_new(ts_ctx *ctx, const ts_target *target)
{
	ts_tune_options *o = ts_new(ts_tune_options);

	if (!o) {
		ts_ctx_set_error(ctx, "out of memory");
		return NULL;
	}
	*o = ts_tune_options_default();
	ts_measure_options_target(&o->measure, target);
	return o;
}

/* An integer option of the command line: its name, its field and range. */
struct int_option {
	const char *name;
	size_t offset;
	long long lo, hi;
};

static const struct int_option int_options[] = {
	{ "trials", offsetof(ts_tune_options, trials), 1, 1000000 },
	{ "topk", offsetof(ts_tune_options, topk), 1, 10000 },
	{ "batch", offsetof(ts_tune_options, batch), 1, 4096 },
	{ "verify", offsetof(ts_tune_options, verify), 0, 1000 },
	{ "threads", offsetof(ts_tune_options, threads), 1, 4096 },
	{ "lead", offsetof(ts_tune_options, lead), 0, 10000 },
};

/* Set the integer option "op" of "o" to the text "value". */
static ts_status set_int_option(ts_ctx *ctx, ts_tune_options *o,
	const struct int_option *op, const char *value)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(value, &end, 0);
	if (!*value || *end || errno || v < op->lo || v > op->hi)
		return ts_ctx_set_error(ctx, "tuning option %s: bad value '%s' "
			"(an integer from %lld to %lld)", op->name, value, op->lo,
			op->hi);
	*(int *)((char *)o + op->offset) = (int)v;
	/* The kernels measured run with the threads they are tuned for. */
	if (!strcmp(op->name, "threads"))
		o->measure.threads = (int)v;
	return TS_OK;
}

ts_status ts_tune_options_set(ts_ctx *ctx, ts_tune_options *o,
	const char *name, const char *value)
{
	unsigned long long seed;
	char *end;

	for (size_t i = 0; i < sizeof(int_options) / sizeof(int_options[0]);
	     i++)
		if (!strcmp(name, int_options[i].name))
			return set_int_option(ctx, o, &int_options[i], value);
	if (!strcmp(name, "log")) {
		o->log = ts_strdup(value);
		return TS_OK;
	}
	if (!strcmp(name, "budget")) {
		double v;
		errno = 0;
		v = strtod(value, &end);
		if (!*value || *end || errno || !(v >= 0) || !isfinite(v))
			return ts_ctx_set_error(ctx, "tuning option budget: bad "
				"value '%s' (seconds, 0 or more)", value);
		o->budget_s = v;
		return TS_OK;
	}
	if (strcmp(name, "seed"))
		return ts_ctx_set_error(ctx, "unknown tuning option '%s' (trials, "
			"topk, batch, verify, seed, threads, log, lead, budget)",
			name);
	errno = 0;
	seed = strtoull(value, &end, 0);
	if (!*value || *end || errno || !seed || *value == '-')
		return ts_ctx_set_error(ctx, "tuning option seed: bad value "
			"'%s' (a positive integer)", value);
	o->seed = seed;
	return TS_OK;
}

/* Check the options "o" of a tuner of "ctx". */
static ts_status check_options(ts_ctx *ctx, const ts_tune_options *o)
{
	if (o->trials < 0 || o->batch < 1 || o->topk < 0 || o->threads < 1 ||
	    o->static_k < 1 || o->verify < 0 || o->lead < 0 ||
	    !(o->budget_s >= 0))
		return ts_ctx_set_error(ctx, "tune: bad options: trials %d, "
			"batch %d, topk %d, static_k %d, threads %d, verify %d, "
			"lead %d, budget %g (trials, topk, verify, lead and "
			"budget >= 0, the others >= 1)",
			o->trials, o->batch, o->topk, o->static_k, o->threads,
			o->verify, o->lead, o->budget_s);
	return TS_OK;
}

/* Release the handles of "data" (a ts_tuner). */
static void tuner_release(void *data)
{
	ts_tuner *t = data;

	ts_cost_model_free(t->model);
}

ts_tuner *ts_tuner_new(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const ts_tune_options *opt)
{
	ts_tuner *t = ts_new(ts_tuner);

	t->opt = opt ? *opt : ts_tune_options_default();
	if (!dag || !target || check_options(ctx, &t->opt) < 0)
		return NULL;
	if (t->opt.seed)
		ts_ctx_set_seed(ctx, t->opt.seed);
	t->ctx = ctx;
	t->dag = dag;
	/* The records' key: the cores set to the threads, nothing else
	 * changed, as logs written before have it. */
	t->target = ts_records_target(target, t->opt.threads);
	t->opt.measure.threads = t->opt.threads;
	if (!t->opt.measure.cpu)
		ts_measure_options_target(&t->opt.measure, target);
	/* The static choice is the baseline tessel run --schedule static
	 * compiles for these threads and this seed. */
	t->st = ts_static_baseline_fill(ctx, dag, target, t->opt.threads,
		TS_MAX(t->opt.static_k, TS_MAX(t->opt.topk, t->opt.lead)));
	if (!t->st)
		return NULL;
	t->tp = t->st->tp;
	if (ts_model_init(&t->rating, t->tp) < 0)
		return NULL;
	t->static_sch = ts_template_apply(t->tp, t->st->best);
	t->candidate_s = INFINITY;
	t->evo = ts_evolve_new(ctx, t->tp->space, &t->opt.evolve);
	t->model = ts_cost_model_new(ctx, NFEAT, ts_ctx_get_seed(ctx));
	if (!t->model)
		return NULL;
	ts_ctx_on_free(ctx, tuner_release, t);
	t->best_s = t->static_s = INFINITY;
	ts_evolve_seed(t->evo, t->st->k, t->st->topk);
	if (log_load(t) < 0)
		return NULL;
	return t;
}

/* Append "x" (features) and "time" (INFINITY: failed) to the samples of
 * "t". */
static void sample_add(ts_tuner *t, const float *x, double time)
{
	if (t->nsamples == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		float *nx = ts_new_atomic(float, (size_t)cap * NFEAT);
		double *nt = ts_new_atomic(double, cap);
		if (t->nsamples) {
			memcpy(nx, t->feat, sizeof(float) * t->nsamples *
				NFEAT);
			memcpy(nt, t->time, sizeof(double) * t->nsamples);
		}
		t->feat = nx;
		t->time = nt;
		t->cap = cap;
	}
	memcpy(t->feat + (size_t)t->nsamples * NFEAT, x,
		sizeof(float) * NFEAT);
	t->time[t->nsamples++] = time;
}

/* Keep "c" of time "time" among the best measured configurations of
 * "t". */
static void elite_add(ts_tuner *t, ts_config *c, double time)
{
	int i;

	if (!isfinite(time) || (t->nelite == ELITE &&
	    time >= t->elite_s[ELITE - 1]))
		return;
	i = t->nelite < ELITE ? t->nelite++ : ELITE - 1;
	while (i > 0 && t->elite_s[i - 1] > time) {
		t->elite[i] = t->elite[i - 1];
		t->elite_s[i] = t->elite_s[i - 1];
		i--;
	}
	t->elite[i] = c;
	t->elite_s[i] = time;
}

/* Seed the search of "t" with the best measured configurations and the
 * static top-k. */
static void reseed(ts_tuner *t)
{
	int n = 0;
	ts_config **s = ts_new_array(ts_config *, ELITE + t->st->k);

	for (int i = 0; i < t->nelite; i++)
		s[n++] = t->elite[i];
	for (int i = 0; i < t->st->k; i++)
		s[n++] = t->st->topk[i];
	ts_evolve_seed(t->evo, n, s);
}

/* Features of configuration "c" of "t" into "x"; TS_ERROR (context error
 * cleared by the caller) when it does not apply or lower. */
static ts_status config_features(ts_tuner *t, const ts_config *c, float *x)
{
	ts_schedule *sch = ts_template_apply(t->tp, c);
	ts_func *f = sch ? ts_lower(t->ctx, t->dag, sch) : NULL;
	double est;

	if (!f || ts_func_features(t->ctx, f, t->target->cpu.line_bytes,
	    x) < 0)
		return TS_ERROR;
	est = ts_model_estimate_with(&t->rating, c, NULL);
	/* NAN is what the model takes as missing */
	x[TS_FEAT_COUNT] = isfinite(est) ? (float)log2(1 + 1e9 * fmax(0, est))
		: NAN;
	return TS_OK;
}

/* Slot of "c" (hash "h") in "fc": where it is, or the empty slot where
 * it goes. */
static int cache_slot(const struct feature_cache *fc, const ts_config *c,
	uint64_t h)
{
	int i = h & (fc->cap - 1);

	while (fc->cfg[i] && !(fc->hash[i] == h && ts_config_equal(fc->cfg[i],
	    c)))
		i = (i + 1) & (fc->cap - 1);
	return i;
}

/* Make room in "fc" for one more entry. */
static void cache_grow(struct feature_cache *fc)
{
	struct feature_cache o = *fc;

	if (2 * (fc->n + 1) <= fc->cap)
		return;
	fc->cap = o.cap ? 2 * o.cap : 1024;
	fc->cfg = ts_new_array(ts_config *, fc->cap);
	fc->hash = ts_new_atomic(uint64_t, fc->cap);
	fc->x = ts_new_atomic(float, (size_t)fc->cap * NFEAT);
	fc->ok = ts_new_atomic(bool, fc->cap);
	for (int i = 0; i < o.cap; i++) {
		int j;
		if (!o.cfg[i])
			continue;
		j = cache_slot(fc, o.cfg[i], o.hash[i]);
		fc->cfg[j] = o.cfg[i];
		fc->hash[j] = o.hash[i];
		fc->ok[j] = o.ok[i];
		memcpy(fc->x + (size_t)j * NFEAT, o.x + (size_t)i *
			NFEAT, sizeof(float) * NFEAT);
	}
}

/* Features of "c" into "x" through the cache of "t"; false when it does
 * not lower (the context's error cleared). */
static bool cached_features(ts_tuner *t, const ts_config *c, float *x)
{
	struct feature_cache *fc = &t->cache;
	uint64_t h = ts_config_hash(c);
	int i;

	cache_grow(fc);
	i = cache_slot(fc, c, h);
	if (!fc->cfg[i]) {
		fc->cfg[i] = ts_config_copy(c);
		fc->hash[i] = h;
		fc->ok[i] = config_features(t, c, fc->x + (size_t)i *
			NFEAT) == TS_OK;
		fc->n++;
		if (!fc->ok[i])
			ts_ctx_clear_error(t->ctx);
	}
	memcpy(x, fc->x + (size_t)i * NFEAT,
		sizeof(float) * NFEAT);
	return fc->ok[i];
}

/* Retrain the model of "t" on its samples and those it learned from
 * other tuners, once there are enough; the target of its own is its best
 * time over their time (0 for a failure). */
static ts_status retrain(ts_tuner *t)
{
	double best = INFINITY;

	if (t->nsamples + t->nprior < 2 * t->opt.batch)
		return TS_OK;
	for (int i = 0; i < t->nsamples; i++)
		best = fmin(best, t->time[i]);
	if (!isfinite(best) && !t->nprior)
		return TS_OK;
	ts_cost_model_clear(t->model);
	for (int i = 0; i < t->nsamples; i++) {
		double y = isfinite(t->time[i]) ? best / t->time[i] : 0;
		if (ts_cost_model_add(t->model, t->feat + (size_t)i *
		    NFEAT, y) < 0)
			return TS_ERROR;
	}
	for (int i = 0; i < t->nprior; i++)
		if (ts_cost_model_add(t->model, t->prior_x + (size_t)i *
		    NFEAT, t->prior_y[i]) < 0)
			return TS_ERROR;
	return ts_cost_model_train(t->model, 0);
}

void ts_tuner_learn(ts_tuner *t, const ts_tuner *from)
{
	double best = INFINITY;
	int n = t->nprior + from->nsamples;

	for (int i = 0; i < from->nsamples; i++)
		best = fmin(best, from->time[i]);
	if (!isfinite(best) || from == t)
		return;
	t->prior_x = ts_grow(t->prior_x, sizeof(float) * NFEAT, t->nprior, n);
	t->prior_y = ts_grow(t->prior_y, sizeof(double), t->nprior, n);
	memcpy(t->prior_x + (size_t)t->nprior * NFEAT, from->feat,
		sizeof(float) * (size_t)from->nsamples * NFEAT);
	for (int i = 0; i < from->nsamples; i++)
		t->prior_y[t->nprior + i] = isfinite(from->time[i]) ?
			best / from->time[i] : 0;
	t->nprior = n;
}

int ts_tuner_learned(const ts_tuner *t)
{
	return t->nprior;
}

/* The stage of "dag" called "name", or NULL. */
static const ts_stage *stage_named(const ts_dag *dag, const char *name)
{
	for (int s = 0; s < dag->nstages; s++)
		if (!strcmp(dag->stages[s]->name, name))
			return dag->stages[s];
	return NULL;
}

/* Whether stages "a" and "b" have the same axes and read tensors of the
 * same shapes in the same order: a weight blocked in one and declared in
 * the other makes the same tiling another kernel. */
static bool same_stage_shape(const ts_stage *a, const ts_stage *b)
{
	if (!a || !b || a->ndim != b->ndim || a->nraxes != b->nraxes ||
	    a->ninputs != b->ninputs)
		return false;
	for (int d = 0; d < a->ndim; d++)
		if (a->axes[d]->extent != b->axes[d]->extent)
			return false;
	for (int r = 0; r < a->nraxes; r++)
		if (a->raxes[r]->extent != b->raxes[r]->extent)
			return false;
	for (int i = 0; i < a->ninputs; i++) {
		const ts_tensor *x = a->inputs[i], *y = b->inputs[i];
		if (x->ndim != y->ndim)
			return false;
		for (int d = 0; d < x->ndim; d++)
			if (x->shape[d] != y->shape[d])
				return false;
	}
	return true;
}

/* The pack knob of stage "to" ("ts") for the tensor that stage "fs"
 * reads at the place where it reads "tensor", or NULL. */
static const char *pack_knob(const ts_stage *fs, const ts_stage *ts,
	const char *to, const char *tensor)
{
	for (int i = 0; i < fs->ninputs; i++)
		if (!strcmp(fs->inputs[i]->name, tensor))
			return ts_asprintf("%s.pack.%s", to,
				ts->inputs[i]->name);
	return NULL;
}

/* The static choice of "t" with the knobs of its stage "to" taken from
 * those of stage "from" of "fdag" in "src", a configuration of another
 * template (its packs by the place of the tensor they name); NULL when
 * the stages differ in shape, no knob maps, or the result is not a
 * configuration of "t". */
static ts_config *adopt_one(ts_tuner *t, const ts_dag *fdag,
	const ts_config *src, const char *from, const char *to)
{
	const ts_stage *fs = stage_named(fdag, from);
	const ts_stage *ts = stage_named(t->dag, to);
	json_t *a, *b;
	size_t fl = strlen(from);
	ts_config *c = NULL;
	const char *key;
	json_t *v;
	int mapped = 0;

	if (!same_stage_shape(fs, ts))
		return NULL;
	a = json_loads(ts_config_to_json(src), 0, NULL);
	b = json_loads(ts_config_to_json(t->st->best), 0, NULL);
	if (a && b) {
		char *text;
		json_object_foreach(a, key, v) {
			const char *nk;
			if (strncmp(key, from, fl) || key[fl] != '.')
				continue;
			nk = !strncmp(key + fl, ".pack.", 6) ? pack_knob(fs, ts,
				to, key + fl + 6) : ts_asprintf("%s%s", to,
				key + fl);
			if (nk && json_object_get(b, nk))
				mapped += json_object_set(b, nk, v) == 0;
		}
		text = mapped ? json_dumps(b, JSON_COMPACT) : NULL;
		c = text ? ts_config_from_json(t->ctx, t->tp->space, text) :
			NULL;
		free(text);
		ts_ctx_clear_error(t->ctx);
	}
	json_decref(a);
	json_decref(b);
	return c;
}

int ts_tuner_adopt(ts_tuner *t, const ts_tuner *from, const char *from_stage,
	const char *to_stage, int k)
{
	int n = 0;

	for (int i = 0; i < from->nelite && n < k; i++) {
		ts_config *c = adopt_one(t, from->dag, from->elite[i],
			from_stage, to_stage);
		bool dup = !c;
		for (int j = 0; j < t->nadopt && !dup; j++)
			dup = ts_config_equal(t->adopt[j], c);
		if (dup)
			continue;
		t->adopt = ts_grow(t->adopt, sizeof(ts_config *), t->nadopt,
			t->nadopt + 1);
		t->adopt[t->nadopt++] = c;
		n++;
	}
	return n;
}

/* The scoring function of the search: the model's prediction for each
 * of "n" configurations "cfgs" of the tuner "data", -INFINITY when one
 * does not lower. */
static ts_status score(void *data, int n, ts_config *const *cfgs,
	double *out)
{
	ts_tuner *t = data;
	float *x = ts_new_atomic(float, (size_t)n * NFEAT);
	bool *ok = ts_new_atomic(bool, n);

	for (int i = 0; i < n; i++)
		ok[i] = cached_features(t, cfgs[i], x + (size_t)i *
			NFEAT);
	if (ts_cost_model_predict(t->model, n, x, out) < 0)
		return TS_ERROR;
	for (int i = 0; i < n; i++)
		if (!ok[i])
			out[i] = -INFINITY;
	return TS_OK;
}

/* Measure the "n" schedules "sch" of "t" into "res" with its measurer or
 * the measuring function of its options. */
static ts_status measure(ts_tuner *t, int n, const ts_schedule *const *sch,
	ts_measure_result *res)
{
	if (t->opt.measure_fn)
		return t->opt.measure_fn(t->opt.measure_data, n, sch, res);
	if (!t->measurer && t->opt.measurer)
		t->measurer = t->opt.measurer;
	if (!t->measurer)
		t->measurer = ts_measurer_new(t->ctx, t->dag, &t->opt.measure,
			ts_ctx_get_seed(t->ctx));
	if (!t->measurer)
		return TS_ERROR;
	return ts_measure_batch(t->measurer, n, sch, res);
}

/* Account for the measurement "r" of "c" (schedule "sch", may be NULL)
 * in "t": history, best, errors, samples, log. */
static ts_status account(ts_tuner *t, ts_config *c, const ts_schedule *sch,
	const ts_measure_result *r)
{
	float x[NFEAT];
	bool ok = r->error == TS_ERR_NONE && r->median_s > 0;
	double time = ok ? r->median_s : INFINITY;

	t->errors[r->error < TS_ERR_COUNT ? r->error : TS_ERR_RUNTIME] +=
		!ok;
	if (ok && time < t->best_s) {
		t->best_s = time;
		t->best_cfg = c;
		t->best_sch = sch;
	}
	if (ts_config_equal(c, t->st->best))
		t->static_s = time;
	t->history[t->trials++] = t->best_s;
	if (cached_features(t, c, x))
		sample_add(t, x, time);
	elite_add(t, c, time);
	return log_append(t, c, sch, r, false);
}

/* Measure the "n" configurations "cfgs" in "t", whose schedules are
 * "applied" (NULL where one did not apply: it is applied again for its
 * message and counts as an invalid schedule without a measurement). */
static ts_status measure_configs(ts_tuner *t, int n, ts_config **cfgs,
	ts_schedule **applied)
{
	const ts_schedule **sch = ts_new_array(const ts_schedule *, n);
	ts_measure_result *res = ts_new_array(ts_measure_result, n);
	ts_config **ok = ts_new_array(ts_config *, n);
	int m = 0;

	for (int i = 0; i < n; i++) {
		ts_schedule *s = applied[i] ? applied[i] :
			ts_template_apply(t->tp, cfgs[i]);
		ts_measure_result bad = { .error = TS_ERR_INVALID_SCHEDULE };
		if (s) {
			ok[m] = cfgs[i];
			sch[m++] = s;
			continue;
		}
		bad.message = ts_strdup(ts_ctx_error(t->ctx));
		ts_ctx_clear_error(t->ctx);
		if (account(t, cfgs[i], NULL, &bad) < 0)
			return TS_ERROR;
	}
	if (m && measure(t, m, sch, res) < 0)
		return TS_ERROR;
	for (int j = 0; j < m; j++)
		if (account(t, ok[j], sch[j], &res[j]) < 0)
			return TS_ERROR;
	return TS_OK;
}

/* Report progress of "t" to "fn"("data"). */
static void report(const ts_tuner *t, double t0, ts_tune_progress_fn fn,
	void *data)
{
	ts_tune_progress p = { 0 };
	double el = ts_now_s() - t0;

	if (!fn)
		return;
	p.task = t->dag->name ? t->dag->name : "dag";
	p.trials = t->trials;
	p.total = t->planned;
	p.resumed = t->resumed;
	p.best_s = t->best_s;
	p.elapsed_s = el;
	p.trials_per_s = el > 0 ? t->trials / el : 0;
	for (int i = 1; i < TS_ERR_COUNT; i++)
		p.errors += t->errors[i];
	fn(&p, data);
}

/* Up to "n" configurations of "list" (of "len") from "*next" on that "t"
 * has not proposed yet into "out", marked; return how many. */
static int take_unmarked(ts_tuner *t, ts_config **list, int len, int *next,
	int n, ts_config **out)
{
	int k = 0;

	while (k < n && *next < len) {
		ts_config *c = list[(*next)++];
		if (!ts_evolve_is_marked(t->evo, c)) {
			ts_evolve_mark(t->evo, c);
			out[k++] = c;
		}
	}
	return k;
}

/* The next batch of at most "n" configurations of "t" into "out": those
 * it adopted, then the static top-k in rank order (all of it in top-k
 * mode, until opt.lead distinct kernels came from it otherwise), then
 * the search; "*lead" says how many came from the top-k. */
static int next_batch(ts_tuner *t, int n, ts_config **out, int *lead)
{
	int k = take_unmarked(t, t->adopt, t->nadopt, &t->adopt_next, n, out);

	*lead = 0;
	if (k)
		return k;
	k = *lead = take_unmarked(t, t->st->topk, t->st->k, &t->topk_next,
		t->opt.topk ? n : TS_MIN(n, t->opt.lead - t->lead_taken), out);
	if (k || t->opt.topk)
		return k;
	if (!ts_evolve_is_marked(t->evo, t->st->best)) {
		ts_evolve_mark(t->evo, t->st->best);
		out[0] = t->st->best;
		return 1 + TS_MAX(0, ts_evolve_next(t->evo, n - 1, NULL, NULL,
			out + 1));
	}
	return ts_evolve_next(t->evo, n, ts_cost_model_trained(t->model) ?
		score : NULL, t, out);
}

/* Whether "t" has already proposed schedule "sch" (another configuration
 * may give the same kernel: knobs that another knob makes irrelevant);
 * remember it if not. */
static bool kernel_seen(ts_tuner *t, const ts_schedule *sch)
{
	uint64_t h = ts_fnv1a(ts_schedule_to_json(sch));

	for (int i = 0; i < t->nkernels; i++)
		if (t->kernels[i] == h)
			return true;
	if (t->nkernels == t->kcap) {
		t->kcap = t->kcap ? 2 * t->kcap : 64;
		t->kernels = ts_grow(t->kernels, sizeof(uint64_t),
			t->nkernels, t->kcap);
	}
	t->kernels[t->nkernels++] = h;
	return false;
}

/* The next batch of at most "n" configurations of "t" into "out", with
 * their schedules into "sch" (NULL where one does not apply), none of
 * which gives a kernel already proposed. */
static int next_distinct(ts_tuner *t, int n, ts_config **out,
	ts_schedule **sch)
{
	ts_config **got = ts_new_array(ts_config *, n + 1);
	int k = 0;

	for (int tries = 0; k < n && tries < 8; tries++) {
		int lead, m = next_batch(t, n - k, got, &lead);
		if (m <= 0)
			return k ? k : m;
		for (int i = 0; i < m; i++) {
			ts_schedule *s = ts_template_apply(t->tp, got[i]);
			ts_ctx_clear_error(t->ctx);
			if (s && kernel_seen(t, s))
				continue;
			t->lead_taken += i < lead;
			sch[k] = s;
			out[k++] = got[i];
		}
	}
	return k;
}

/* The configurations "t" verifies into "cfg": the best measured, and
 * the static choice so that the two are compared in one batch; return
 * how many. */
static int verify_set(ts_tuner *t, ts_config **cfg)
{
	int k = TS_MIN(t->opt.verify, t->nelite), n = 0;
	bool has_static = false;

	for (int i = 0; i < k; i++) {
		cfg[n++] = t->elite[i];
		has_static = has_static || ts_config_equal(t->elite[i],
			t->st->best);
	}
	if (k && !has_static && ts_evolve_is_marked(t->evo, t->st->best))
		cfg[n++] = t->st->best;
	return n;
}

/* Rounds of the final comparison: each verified schedule is measured
 * this many times, interleaved with the others (A B C A B C ...), and
 * judged by the median of its rounds, so that a change of load during
 * the comparison hits every schedule alike. */
#define VERIFY_ROUNDS 3

/* The median of the "n" values "v" (sorted in place). */
static double median_of(int n, double *v)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The verified result of one schedule from its "rounds" results "res"
 * (stride "stride"): the first error if any round failed, else the
 * median of the rounds' medians over every sample. */
static ts_measure_result verified_result(const ts_measure_result *res,
	int stride, int rounds)
{
	ts_measure_result v = res[0];
	double *med = ts_new_atomic(double, rounds);
	int ns = 0;

	for (int r = 0; r < rounds; r++) {
		const ts_measure_result *x = &res[r * stride];
		if (x->error != TS_ERR_NONE || !(x->median_s > 0)) {
			v = *x;
			v.median_s = 0;
			return v;
		}
		med[r] = x->median_s;
		ns += x->nsamples;
	}
	v.samples = ts_new_atomic(double, ns + 1);
	v.nsamples = 0;
	for (int r = 0; r < rounds; r++) {
		const ts_measure_result *x = &res[r * stride];
		memcpy(v.samples + v.nsamples, x->samples,
			sizeof(double) * (size_t)x->nsamples);
		v.nsamples += x->nsamples;
	}
	v.median_s = median_of(rounds, med);
	return v;
}

/* Measure the best configurations of "t" and its static choice again,
 * in VERIFY_ROUNDS interleaved rounds, and choose by the new times: on a
 * busy machine one lucky measurement must not decide, and the result is
 * never slower than the static choice measured alongside (a candidate
 * less than TS_TUNE_MARGIN faster keeps the static choice).  The new measurements are logged as verified
 * records but are not trials. */
static ts_status verify(ts_tuner *t)
{
	ts_config **all = ts_new_array(ts_config *, t->opt.verify + 2);
	int k = verify_set(t, all);
	const ts_schedule **sch = ts_new_array(const ts_schedule *, k + 1);
	ts_measure_result *res = ts_new_array(ts_measure_result,
		(size_t)(k + 1) * VERIFY_ROUNDS);
	ts_config **cfg = ts_new_array(ts_config *, k + 1);
	double best = INFINITY, other = INFINITY;
	int m = 0, b = -1, s = -1;

	for (int i = 0; i < k; i++) {
		ts_schedule *x = ts_template_apply(t->tp, all[i]);
		if (x) {
			cfg[m] = all[i];
			sch[m++] = x;
		}
		ts_ctx_clear_error(t->ctx);
	}
	if (m == 0)
		return TS_OK;
	t->phases.verify_runs += VERIFY_ROUNDS * m;
	for (int r = 0; r < VERIFY_ROUNDS; r++)
		if (measure(t, m, sch, res + r * m) < 0)
			return TS_ERROR;
	for (int i = 0; i < m; i++) {
		ts_measure_result v = verified_result(res + i, m,
			VERIFY_ROUNDS);
		bool ok = v.error == TS_ERR_NONE && v.median_s > 0;
		bool is_static = ts_config_equal(cfg[i], t->st->best);
		if (log_append(t, cfg[i], sch[i], &v, true) < 0)
			return TS_ERROR;
		if (is_static) {
			t->static_s = ok ? v.median_s : INFINITY;
			s = i;
		} else if (ok && v.median_s < other) {
			other = v.median_s;
		}
		if (ok && v.median_s < best) {
			best = v.median_s;
			b = i;
		}
	}
	if (s >= 0 && isfinite(t->static_s) &&
	    t->static_s <= best * (1 + TS_TUNE_MARGIN))
		b = s;
	t->candidate_s = other;
	if (b >= 0) {
		t->best_s = b == s ? t->static_s : best;
		t->best_cfg = cfg[b];
		t->best_sch = sch[b];
	}
	return TS_OK;
}

/* Whether nothing known to "t" beats its static choice by the margin:
 * the final comparison would keep the static choice. */
static bool static_unbeaten(const ts_tuner *t)
{
	return isfinite(t->static_s) &&
		!(t->best_s * (1 + TS_TUNE_MARGIN) < t->static_s);
}

/* Whether "t" found nothing faster than "before", the best of a log that
 * a final comparison has already judged. */
static bool judged_unbeaten(const ts_tuner *t, double before)
{
	return t->log_verified && isfinite(before) && !(t->best_s < before);
}

ts_status ts_tuner_run(ts_tuner *t, ts_tune_progress_fn progress,
	void *data)
{
	double t0 = ts_now_s(), before = t->best_s;
	ts_config **cfgs = ts_new_array(ts_config *, t->opt.batch);
	ts_schedule **sch = ts_new_array(ts_schedule *, t->opt.batch);

	t->planned = t->opt.topk ? TS_MIN(t->opt.trials,
		TS_MIN(t->opt.topk, t->st->k)) : t->opt.trials;
	if (t->hcap < t->planned + 1) {
		t->history = ts_grow(t->history, sizeof(double), t->trials,
			t->planned + 1);
		t->hcap = t->planned + 1;
	}
	t->verified = false;
	if (retrain(t) < 0)
		return TS_ERROR;
	while (t->trials < t->planned && !(t->opt.budget_s > 0 &&
	    ts_now_s() - t0 >= t->opt.budget_s)) {
		double s0 = ts_now_s(), s1;
		int n = next_distinct(t, TS_MIN(t->opt.batch,
			t->planned - t->trials), cfgs, sch);
		if (n < 0)
			return TS_ERROR;
		if (n == 0)
			break;
		s1 = ts_now_s();
		if (measure_configs(t, n, cfgs, sch) < 0)
			return TS_ERROR;
		t->phases.search_s += s1 - s0;
		t->phases.measure_s += ts_now_s() - s1;
		s0 = ts_now_s();
		if (retrain(t) < 0)
			return TS_ERROR;
		reseed(t);
		t->phases.search_s += ts_now_s() - s0;
		report(t, t0, progress, data);
	}
	/* Comparing the same few again costs as much as the trials (a
	 * network's tasks are tuned in many short runs, each resumed from
	 * the log): only what can change the answer is compared. */
	if (!t->trials || !t->opt.verify || judged_unbeaten(t, before))
		return TS_OK;
	if (static_unbeaten(t)) {
		t->best_s = t->static_s;
		t->best_cfg = t->st->best;
		t->best_sch = t->static_sch;
		return TS_OK;
	}
	t->verified = true;
	/* A later run (ts_tuner_extend) judges against what this one
	 * verifies, as a run resumed from the log does. */
	t->log_verified = true;
	t0 = ts_now_s();
	if (verify(t) < 0)
		return TS_ERROR;
	t->phases.verify_s += ts_now_s() - t0;
	return TS_OK;
}

ts_tune_phases ts_tuner_phases(const ts_tuner *t)
{
	return t->phases;
}

void ts_tuner_extend(ts_tuner *t, int trials)
{
	t->opt.trials += TS_MAX(0, trials);
}

bool ts_tuner_verified(const ts_tuner *t)
{
	return t->verified;
}

const ts_schedule *ts_tuner_best_schedule(const ts_tuner *t)
{
	return t->best_sch;
}

const ts_config *ts_tuner_best_config(const ts_tuner *t)
{
	return t->best_cfg;
}

double ts_tuner_best_time(const ts_tuner *t)
{
	return t->best_s;
}

double ts_tuner_static_time(const ts_tuner *t)
{
	return t->static_s;
}

const ts_schedule *ts_tuner_static_schedule(const ts_tuner *t)
{
	return t->static_sch;
}

bool ts_tuner_kept_static(const ts_tuner *t, double *candidate_s)
{
	if (candidate_s)
		*candidate_s = t->candidate_s;
	return t->best_cfg && ts_config_equal(t->best_cfg, t->st->best);
}

int ts_tuner_history(const ts_tuner *t, const double **best)
{
	*best = t->history;
	return t->trials;
}

int ts_tuner_trials(const ts_tuner *t)
{
	return t->trials;
}

int ts_tuner_resumed(const ts_tuner *t)
{
	return t->resumed;
}

int ts_tuner_errors(const ts_tuner *t, ts_error_code code)
{
	return code < TS_ERR_COUNT ? t->errors[code] : 0;
}

const ts_template *ts_tuner_template(const ts_tuner *t)
{
	return t->tp;
}

void ts_tuner_free(ts_tuner *t)
{
	if (!t)
		return;
	tuner_release(t);
	if (t->measurer && t->measurer != t->opt.measurer)
		ts_measurer_free(t->measurer);
	t->measurer = NULL;
}

/* Take the record "rec" of the log of "t" as a measurement of this run's
 * past: mark its configuration, keep its sample and the best. */
static void resume_record(ts_tuner *t, const ts_record *rec)
{
	ts_config *c = ts_config_from_json(t->ctx, t->tp->space, rec->config);
	double time = rec->error == TS_ERR_NONE ? rec->median_s : INFINITY;
	float x[NFEAT];

	if (!c || ts_evolve_is_marked(t->evo, c)) {
		if (!c)
			ts_ctx_warn(t->ctx, "%s:%d: configuration does not fit "
				"the space of '%s'; record skipped\n",
				t->opt.log, rec->line, t->tp->space->name);
		ts_ctx_clear_error(t->ctx);
		return;
	}
	ts_evolve_mark(t->evo, c);
	t->resumed++;
	if (cached_features(t, c, x))
		sample_add(t, x, time);
	elite_add(t, c, time);
	if (ts_config_equal(c, t->st->best))
		t->static_s = time;
	if (isfinite(time) && time < t->best_s) {
		t->best_s = time;
		t->best_cfg = c;
		t->best_sch = ts_template_apply(t->tp, c);
	}
}

/* Read the records of the log of "t" that match its workload and
 * target: mark their configurations measured and keep their samples. */
static ts_status log_load(ts_tuner *t)
{
	const char *workload = ts_dag_hash(t->dag);
	const char *key = ts_target_key(t->target);
	ts_record **recs;
	int n = 0;

	if (!t->opt.log || access(t->opt.log, F_OK) != 0)
		return TS_OK;
	recs = ts_records_load(t->ctx, t->opt.log, &n);
	if (!recs)
		return TS_ERROR;
	for (int i = 0; i < n; i++)
		if (recs[i]->config && !strcmp(recs[i]->workload, workload) &&
		    !strcmp(recs[i]->target, key)) {
			t->log_verified |= recs[i]->verified;
			resume_record(t, recs[i]);
		}
	reseed(t);
	return TS_OK;
}

/* Append the measurement "r" of "c" (schedule "sch"; NULL when the
 * configuration did not apply) to the log of "t", "verified" when it is
 * the result of the final comparison. */
static ts_status log_append(ts_tuner *t, const ts_config *c,
	const ts_schedule *sch, const ts_measure_result *r, bool verified)
{
	ts_record *rec;

	if (!t->opt.log)
		return TS_OK;
	if (!sch)
		sch = ts_schedule_new(t->ctx, t->dag);
	rec = ts_record_new(t->ctx, t->dag, t->target, c, sch, r,
		ts_ctx_get_seed(t->ctx));
	if (!rec)
		return TS_ERROR;
	rec->verified = verified;
	return ts_record_append(t->ctx, t->opt.log, rec);
}
