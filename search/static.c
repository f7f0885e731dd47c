/* Static filling: choose a configuration with the analytical model, with
 * no measurement.  Candidates are the template's default, random samples
 * of the space, and local search (mutations that lower the estimate)
 * from the best of those; the best k distinct ones are kept. */
#include <config.h>

#include <math.h>
#include <time.h>

#include <tessel/search.h>

#include "dsl/internal.h"
#include "search/model.h"

/* The best configurations seen, sorted by cost, without duplicates. */
struct pool {
	int k, n;
	ts_config **cfg;
	double *cost;
	int rated;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Offer "c" of cost "cost" to "p"; keep it if among the k best. */
static void pool_offer(struct pool *p, ts_config *c, double cost)
{
	int i;

	p->rated++;
	if (!isfinite(cost) || (p->n == p->k && cost >= p->cost[p->n - 1]))
		return;
	for (i = 0; i < p->n; i++)
		if (ts_config_equal(p->cfg[i], c))
			return;
	i = p->n < p->k ? p->n++ : p->n - 1;
	while (i > 0 && p->cost[i - 1] > cost) {
		p->cfg[i] = p->cfg[i - 1];
		p->cost[i] = p->cost[i - 1];
		i--;
	}
	p->cfg[i] = c;
	p->cost[i] = cost;
}

/* Hill-climb from "start" for "steps" mutations; offer every improvement
 * to "p". */
static void climb(ts_ctx *ctx, const ts_model *m, struct pool *p,
	ts_config *start, double cost, int steps)
{
	ts_config *cur = start;

	for (int i = 0; i < steps; i++) {
		ts_config *next = ts_config_mutate(cur, ctx);
		double c = ts_model_estimate_with(m, next, NULL);
		pool_offer(p, next, c);
		if (c < cost) {
			cur = next;
			cost = c;
		}
	}
}

ts_static_result *ts_static_fill(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k)
{
	double t0 = now_ms();
	ts_static_result *r;
	ts_dag_info *info;
	struct pool p = { 0 };
	ts_model m;
	int nsamples, nstarts;

	if (target->kind != TS_TARGET_CPU) {
		ts_ctx_set_error(ctx, "static filling: target '%s' is a %s; "
			"this filler rates CPU nests", target->name,
			ts_target_kind_name(target->kind));
		return NULL;
	}
	info = ts_analyze_dag(ctx, dag);
	if (!info)
		return NULL;
	r = ts_new(ts_static_result);
	r->tp = ts_template_new(ctx, dag, info, target);
	if (!r->tp || ts_model_init(&m, r->tp) < 0)
		return NULL;
	p.k = k > 16 ? k : 16;
	p.cfg = ts_new_array(ts_config *, p.k);
	p.cost = ts_new_atomic(double, p.k);
	{
		ts_config *d = ts_template_default(r->tp);
		pool_offer(&p, d, ts_model_estimate_with(&m, d, NULL));
	}
	nsamples = 1000 + 400 * dag->nstages;
	for (int i = 0; i < nsamples; i++) {
		ts_config *c = ts_space_sample(r->tp->space, ctx);
		pool_offer(&p, c, ts_model_estimate_with(&m, c, NULL));
	}
	/* Climb from copies of the best: the pool changes as it climbs. */
	nstarts = p.n < 10 ? p.n : 10;
	{
		ts_config *start[10];
		double cost[10];
		for (int i = 0; i < nstarts; i++) {
			start[i] = p.cfg[i];
			cost[i] = p.cost[i];
		}
		for (int i = 0; i < nstarts; i++)
			climb(ctx, &m, &p, start[i], cost[i],
				250 + 80 * dag->nstages);
	}
	r->k = k < p.n ? k : p.n;
	r->topk = p.cfg;
	r->topk_cost = p.cost;
	r->best = p.cfg[0];
	r->best_cost = p.cost[0];
	r->rated = p.rated;
	r->elapsed_ms = now_ms() - t0;
	return r;
}

ts_schedule *ts_static_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target)
{
	ts_static_result *r = ts_static_fill(ctx, dag, target, 1);

	return r ? ts_template_apply(r->tp, r->best) : NULL;
}
