/* Evolutionary search over a knob space.
 *
 * Requires: a space, seed configurations and (optionally) a scoring
 * function.  Produces: batches of distinct configurations never proposed
 * before.
 *
 * A batch starts from a population of the seeds (the static model's best
 * and the best measured so far) and random samples.  Each generation
 * rates the population, remembers the best unmeasured candidates seen,
 * and breeds the next population from parents picked by tournaments of
 * two: a mutation (ts_config_mutate) or a crossover of two parents.  The
 * batch is the best candidates seen over all generations, with a share
 * "eps" replaced by random samples so that the cost model also learns
 * about regions it rates badly.  Every random choice comes from the
 * context's stream.
 */
#include <config.h>

#include <math.h>

#include <tessel/tune.h>

#include "metatemplates/ir.h"
#include "support/support.h"

/* A set of configurations by hash, open addressing. */
struct cfg_set {
	int n, cap;
	ts_config **slot;
	uint64_t *hash;		/* atomic */
};

struct ts_evolve {
	ts_ctx *ctx;
	const ts_space *sp;
	ts_evolve_options opt;
	struct cfg_set marked;	/* proposed (measured) configurations */
	ts_vec seeds;
};

/* The best candidates of a batch, by score, distinct. */
struct pool {
	int k, n;
	ts_config **cfg;
	double *score;
	struct cfg_set seen;	/* every configuration rated in the batch */
};

ts_evolve_options ts_evolve_options_default(void)
{
	ts_evolve_options o = {
		.population = 128,
		.generations = 4,
		.mutation = 0.85,
		.eps = 0.1,
	};
	return o;
}

/* Whether "s" holds a configuration equal to "c" of hash "h". */
static bool set_has(const struct cfg_set *s, const ts_config *c, uint64_t h)
{
	if (!s->cap)
		return false;
	for (int i = h & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->hash[i] == h && ts_config_equal(s->slot[i], c))
			return true;
	return false;
}

/* Put "c" of hash "h" into "s" without checking for it. */
static void set_put(struct cfg_set *s, ts_config *c, uint64_t h)
{
	int i = h & (s->cap - 1);

	while (s->slot[i])
		i = (i + 1) & (s->cap - 1);
	s->slot[i] = c;
	s->hash[i] = h;
	s->n++;
}

/* Add "c" to "s"; return false if it was there already. */
static bool set_add(struct cfg_set *s, const ts_config *c)
{
	uint64_t h = ts_config_hash(c);

	if (set_has(s, c, h))
		return false;
	if (2 * (s->n + 1) > s->cap) {
		struct cfg_set o = *s;
		s->cap = o.cap ? 2 * o.cap : 64;
		s->n = 0;
		s->slot = ts_new_array(ts_config *, s->cap);
		s->hash = ts_new_atomic(uint64_t, s->cap);
		for (int i = 0; i < o.cap; i++)
			if (o.slot[i])
				set_put(s, o.slot[i], o.hash[i]);
	}
	set_put(s, ts_config_copy(c), h);
	return true;
}

ts_evolve *ts_evolve_new(ts_ctx *ctx, const ts_space *sp,
	const ts_evolve_options *opt)
{
	ts_evolve *e = ts_new(ts_evolve);

	e->ctx = ctx;
	e->sp = sp;
	e->opt = opt ? *opt : ts_evolve_options_default();
	if (e->opt.population < 2)
		e->opt.population = 2;
	if (e->opt.generations < 1)
		e->opt.generations = 1;
	return e;
}

void ts_evolve_seed(ts_evolve *e, int n, ts_config *const *cfgs)
{
	e->seeds.n = 0;
	for (int i = 0; i < n; i++)
		if (cfgs[i] && cfgs[i]->space == e->sp)
			ts_vec_push(&e->seeds, cfgs[i]);
}

void ts_evolve_mark(ts_evolve *e, const ts_config *c)
{
	set_add(&e->marked, c);
}

bool ts_evolve_is_marked(const ts_evolve *e, const ts_config *c)
{
	return set_has(&e->marked, c, ts_config_hash(c));
}

int ts_evolve_marked(const ts_evolve *e)
{
	return e->marked.n;
}

ts_config *ts_config_crossover(const ts_config *a, const ts_config *b,
	ts_ctx *ctx)
{
	const ts_space *sp = a->space;
	ts_config *c = ts_config_copy(a);

	for (int i = 0; i < sp->nknobs; i++) {
		const ts_knob *k = sp->knobs[i];
		int len = k->kind == TS_KNOB_SPLIT ? k->nparts : 1;
		if (ts_ctx_random_below(ctx, 2))
			memcpy(c->v + k->offset, b->v + k->offset,
				sizeof(int64_t) * len);
	}
	return c;
}

/* A uniform number in [0, 1) from the stream of "ctx". */
static double uniform(ts_ctx *ctx)
{
	return (double)(ts_ctx_random(ctx) >> 11) * 0x1.0p-53;
}

/* Offer "c" of score "s" to "p" if it is unmarked and not rated before in
 * this batch. */
static void pool_offer(const ts_evolve *e, struct pool *p, ts_config *c,
	double s)
{
	int i;

	if (ts_evolve_is_marked(e, c) || !set_add(&p->seen, c) ||
	    (p->n == p->k && !(s > p->score[p->n - 1])))
		return;
	i = p->n < p->k ? p->n++ : p->n - 1;
	while (i > 0 && p->score[i - 1] < s) {
		p->cfg[i] = p->cfg[i - 1];
		p->score[i] = p->score[i - 1];
		i--;
	}
	p->cfg[i] = c;
	p->score[i] = s;
}

/* Rate the "n" configurations "pop" into "sc" with "score" and offer them
 * to "p". */
static ts_status rate(ts_evolve *e, struct pool *p, int n, ts_config **pop,
	double *sc, ts_score_fn score, void *data)
{
	if (score(data, n, pop, sc) < 0)
		return TS_ERROR;
	for (int i = 0; i < n; i++) {
		if (isnan(sc[i]))
			sc[i] = -INFINITY;
		if (sc[i] > -INFINITY)
			pool_offer(e, p, pop[i], sc[i]);
	}
	return TS_OK;
}

/* A parent from "pop" ("n" with scores "sc"): the better of two. */
static ts_config *tournament(ts_evolve *e, int n, ts_config **pop,
	const double *sc)
{
	int a = ts_ctx_random_below(e->ctx, n);
	int b = ts_ctx_random_below(e->ctx, n);

	return sc[a] >= sc[b] ? pop[a] : pop[b];
}

/* Breed the next population "next" from "pop" (both "n" long). */
static void breed(ts_evolve *e, int n, ts_config **pop, const double *sc,
	ts_config **next)
{
	for (int i = 0; i < n; i++) {
		ts_config *a = tournament(e, n, pop, sc), *c;
		if (uniform(e->ctx) < e->opt.mutation) {
			c = ts_config_mutate(a, e->ctx);
		} else {
			c = ts_config_crossover(a, tournament(e, n, pop, sc),
				e->ctx);
			if (!ts_config_is_valid(c))
				c = ts_config_mutate(a, e->ctx);
		}
		next[i] = c;
	}
}

/* The first population: the seeds, then random samples, "n" in all. */
static void initial(ts_evolve *e, int n, ts_config **pop)
{
	int i = 0;

	for (int s = 0; s < e->seeds.n && i < n; s++)
		pop[i++] = e->seeds.v[s];
	while (i < n)
		pop[i++] = ts_space_sample(e->sp, e->ctx);
}

/* Evolve with "score" and leave the best unmarked candidates in "p". */
static ts_status evolve(ts_evolve *e, struct pool *p, ts_score_fn score,
	void *data)
{
	int n = e->opt.population;
	ts_config **pop = ts_new_array(ts_config *, n);
	ts_config **next = ts_new_array(ts_config *, n);
	double *sc = ts_new_atomic(double, n);

	initial(e, n, pop);
	for (int g = 0; g < e->opt.generations; g++) {
		ts_config **t;
		if (rate(e, p, n, pop, sc, score, data) < 0)
			return TS_ERROR;
		breed(e, n, pop, sc, next);
		t = pop, pop = next, next = t;
	}
	return rate(e, p, n, pop, sc, score, data);
}

/* Without a score: the unmarked seeds in order for half of "want",
 * then random samples, into "p". */
static void unrated(ts_evolve *e, struct pool *p, int want)
{
	for (int s = 0; s < e->seeds.n && p->n < (want + 1) / 2; s++)
		pool_offer(e, p, e->seeds.v[s], -(double)p->n);
	for (int tries = 0; p->n < want && tries < 64 * want; tries++)
		pool_offer(e, p, ts_space_sample(e->sp, e->ctx), -(double)p->n);
}

/* Append random unmarked configurations to "out" ("*k" so far) until it
 * holds "n"; skip those in "p". */
static void fill_random(ts_evolve *e, struct pool *p, int n,
	ts_config **out, int *k)
{
	for (int tries = 0; *k < n && tries < 64 * n; tries++) {
		ts_config *c = ts_space_sample(e->sp, e->ctx);
		if (!ts_evolve_is_marked(e, c) && set_add(&p->seen, c)) {
			ts_evolve_mark(e, c);
			out[(*k)++] = c;
		}
	}
}

int ts_evolve_next(ts_evolve *e, int n, ts_score_fn score, void *data,
	ts_config **out)
{
	struct pool p = { 0 };
	int nrand = score ? (int)floor(e->opt.eps * n + 0.5) : 0;
	int k = 0;

	if (n <= 0)
		return 0;
	p.k = n - nrand;
	p.cfg = ts_new_array(ts_config *, p.k + 1);
	p.score = ts_new_atomic(double, p.k + 1);
	if (score && p.k > 0 && evolve(e, &p, score, data) < 0)
		return -1;
	if (!score)
		unrated(e, &p, p.k);
	for (int i = 0; i < p.n; i++) {
		ts_evolve_mark(e, p.cfg[i]);
		out[k++] = p.cfg[i];
	}
	fill_random(e, &p, n, out, &k);
	return k;
}
