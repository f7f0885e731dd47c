/* Static filling: choose a configuration with the target's analytical
 * model (search/model.c for CPUs, search/gpu_model.c for GPUs), with no
 * measurement.  The estimate of a configuration is a sum over stages,
 * and a stage's term depends only on its own knobs and its neighbours',
 * so candidates that change the knobs of one stage are rated by
 * re-estimating that stage and its neighbours: the search costs about
 * the same per stage whatever the size of the DAG.  Candidates are the
 * template's default, the naive nest (ts_template_naive), a few random
 * samples of the whole space, per-stage
 * samples on top of the best so far, register tiles of the dominant
 * stage enumerated from a CPU's registers (climb_tiles) or a GPU's seeds
 * (thread tiles, tensor cores), and local
 * search (mutations that lower the estimate) from the best of those; the
 * best k distinct ones are kept. */
#include <config.h>

#include <math.h>
#include <string.h>
#include <time.h>

#include <tessel/records.h>
#include <tessel/search.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "search/model.h"

/* The best configurations seen, sorted by cost, without duplicates. */
struct pool {
	int k, n;
	ts_config **cfg;
	double *cost;
	int rated;
};

/* A rated configuration with the estimate of each stage. */
struct rated {
	ts_config *cfg;
	double *stage;		/* one term per DAG stage */
	double total;
};

/* What the search knows of the template: the stage owning each knob,
 * and the stages whose estimates a stage's knobs may change. */
struct search {
	ts_ctx *ctx;
	const ts_template *tp;
	const ts_space *sp;
	const ts_model *m;	/* CPU targets; GPU ones: search/gpu_model.c */
	int nstages;
	int *owner;		/* per knob: its stage, or -1 */
	int *naffected;		/* per stage */
	int **affected;		/* per stage: itself and its neighbours */
	struct pool *pool;
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

/* Record in "owner" that knob "k" (may be -1) belongs to stage "s". */
static void own(int *owner, int k, int s)
{
	if (k >= 0)
		owner[k] = s;
}

/* Fill the knob owners of "se" from the plans of "tp". */
static void owners_fill(struct search *se, const ts_template *tp)
{
	for (int k = 0; k < tp->space->nknobs; k++)
		se->owner[k] = -1;
	for (int s = 0; s < se->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		for (int a = 0; a < TS_MAX_AXES; a++)
			own(se->owner, p->split[a], s);
		own(se->owner, p->knob_vec, s);
		own(se->owner, p->knob_par, s);
		own(se->owner, p->knob_unroll, s);
		own(se->owner, p->knob_cache_write, s);
		own(se->owner, p->knob_rfvec, s);
		own(se->owner, p->knob_rows, s);
		own(se->owner, p->knob_fuse, s);
		own(se->owner, p->knob_at, s);
		for (int k = 0; k < p->npack; k++)
			own(se->owner, p->knob_pack[k], s);
		/* GPUs */
		own(se->owner, p->knob_threads, s);
		own(se->owner, p->knob_cross, s);
		own(se->owner, p->knob_rthreads, s);
		own(se->owner, p->knob_tc, s);
		for (int k = 0; k < 3; k++)
			own(se->owner, p->tc_split[k], s);
		for (int k = 0; k < p->nshared; k++)
			own(se->owner, p->knob_shared[k], s);
	}
}

/* Add stage "t" (may be -1) to the affected list of "s" once. */
static void affect(struct search *se, int s, int t)
{
	if (t < 0)
		return;
	for (int i = 0; i < se->naffected[s]; i++)
		if (se->affected[s][i] == t)
			return;
	se->affected[s][se->naffected[s]++] = t;
}

/* Add "s"'s consumers to its affected list, and theirs when "depth". */
static void affect_consumers(struct search *se, const ts_dag *dag, int s,
	int from, bool depth)
{
	for (int i = 0; i < dag->nconsumers[from]; i++) {
		affect(se, s, dag->consumers[from][i]);
		if (depth)
			affect_consumers(se, dag, s, dag->consumers[from][i],
				false);
	}
}

/* Fill the affected lists of "se": a stage's knobs change its own term,
 * its producers' and consumers' (where a producer is computed, and in
 * which layout a consumer reads it), its fusion partner's and that
 * partner's consumers'. */
static void affected_fill(struct search *se, const ts_template *tp)
{
	const ts_dag *dag = tp->dag;

	for (int s = 0; s < se->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		const ts_stage *st = dag->stages[s];
		se->affected[s] = ts_new_atomic(int, 2 * se->nstages + 2);
		affect(se, s, s);
		for (int i = 0; i < st->ninputs; i++)
			if (st->inputs[i]->stage)
				affect(se, s, ts_dag_stage_index(dag,
					st->inputs[i]->stage));
		affect_consumers(se, dag, s, s, true);
		affect(se, s, p->fuse_consumer);
		affect(se, s, p->fused_into);
		affect(se, s, p->at_consumer);
		if (p->fuse_consumer >= 0)
			affect_consumers(se, dag, s, p->fuse_consumer, true);
	}
}

static bool on_gpu(const ts_template *tp)
{
	return tp->target->kind == TS_TARGET_GPU;
}

/* The estimate of stage "s" under "c" by the target's model. */
static double stage_cost(const struct search *se, const ts_config *c, int s)
{
	if (on_gpu(se->tp))
		return ts_gpu_model_stage_estimate(se->tp, c, s);
	return ts_model_stage_estimate(se->m, c, s, NULL);
}

/* Rate "c" stage by stage into a new record. */
static struct rated *rate_full(struct search *se, ts_config *c)
{
	struct rated *r = ts_new(struct rated);

	if (on_gpu(se->tp))
		ts_gpu_config_canonical(se->tp, c);
	r->cfg = c;
	r->stage = ts_new_atomic(double, se->nstages + 1);
	r->total = 0;
	for (int s = 0; s < se->nstages; s++)
		r->total += r->stage[s] = stage_cost(se, c, s);
	pool_offer(se->pool, c, r->total);
	return r;
}

/* Rate "c", which differs from "base" only in knobs of the stages marked
 * in "dirty", by re-estimating the stages they affect. */
static struct rated *rate_change(struct search *se, const struct rated *base,
	ts_config *c, const bool *dirty)
{
	struct rated *r = ts_new(struct rated);
	bool *redo = ts_new_atomic(bool, se->nstages + 1);

	if (on_gpu(se->tp))
		ts_gpu_config_canonical(se->tp, c);
	r->cfg = c;
	r->stage = ts_new_atomic(double, se->nstages + 1);
	memcpy(r->stage, base->stage, sizeof(double) * se->nstages);
	memset(redo, 0, sizeof(bool) * se->nstages);
	for (int s = 0; s < se->nstages; s++)
		for (int i = 0; dirty[s] && i < se->naffected[s]; i++)
			redo[se->affected[s][i]] = true;
	r->total = 0;
	for (int s = 0; s < se->nstages; s++) {
		if (redo[s])
			r->stage[s] = stage_cost(se, c, s);
		r->total += r->stage[s];
	}
	pool_offer(se->pool, c, r->total);
	return r;
}

/* Mark in "dirty" the stages whose knobs differ between "a" and "b". */
static void diff_stages(const struct search *se, const ts_config *a,
	const ts_config *b, bool *dirty)
{
	const ts_space *sp = a->space;

	memset(dirty, 0, sizeof(bool) * se->nstages);
	for (int k = 0; k < sp->nknobs; k++) {
		const ts_knob *kn = sp->knobs[k];
		int n = kn->kind == TS_KNOB_SPLIT ? kn->nparts : 1;
		if (se->owner[k] >= 0 && memcmp(a->v + kn->offset,
		    b->v + kn->offset, sizeof(int64_t) * (size_t)n))
			dirty[se->owner[k]] = true;
	}
}

/* Copy into "c" the values that "from" gives the knobs of stage "s". */
static void copy_stage_knobs(const struct search *se, ts_config *c,
	const ts_config *from, int s)
{
	const ts_space *sp = c->space;

	for (int k = 0; k < sp->nknobs; k++) {
		const ts_knob *kn = sp->knobs[k];
		int n = kn->kind == TS_KNOB_SPLIT ? kn->nparts : 1;
		if (se->owner[k] == s)
			memcpy(c->v + kn->offset, from->v + kn->offset,
				sizeof(int64_t) * (size_t)n);
	}
}

/* Whether some knob belongs to stage "s". */
static bool has_knobs(const struct search *se, int s)
{
	for (int k = 0; k < se->sp->nknobs; k++)
		if (se->owner[k] == s)
			return true;
	return false;
}

/* Draw "n" values for the knobs of each stage in turn on top of the best
 * so far, keeping any that lowers the estimate; return the best. */
static struct rated *sweep_stages(struct search *se, struct rated *best,
	int n)
{
	bool *dirty = ts_new_atomic(bool, se->nstages + 1);

	for (int s = 0; s < se->nstages; s++) {
		if (!has_knobs(se, s))
			continue;
		memset(dirty, 0, sizeof(bool) * se->nstages);
		dirty[s] = true;
		for (int i = 0; i < n; i++) {
			ts_config *r = ts_space_sample(se->sp, se->ctx);
			ts_config *c = ts_config_copy(best->cfg);
			struct rated *x;
			copy_stage_knobs(se, c, r, s);
			if (!ts_config_is_valid(c))
				continue;
			x = rate_change(se, best, c, dirty);
			if (x->total < best->total)
				best = x;
		}
	}
	return best;
}

/* Hill-climb from "start" for "steps" mutations; every candidate goes to
 * the pool. */
static void climb(struct search *se, struct rated *cur, int steps)
{
	bool *dirty = ts_new_atomic(bool, se->nstages + 1);

	for (int i = 0; i < steps; i++) {
		ts_config *next = ts_config_mutate(cur->cfg, se->ctx);
		struct rated *x;
		while (ts_ctx_random_below(se->ctx, 2))
			next = ts_config_mutate(next, se->ctx);
		diff_stages(se, cur->cfg, next, dirty);
		x = rate_change(se, cur, next, dirty);
		if (x->total < cur->total)
			cur = x;
	}
}

/* Fill the knob owners and affected stages of "se" from "tp". */
static void search_init(struct search *se, const ts_template *tp)
{
	se->owner = ts_new_atomic(int, tp->space->nknobs + 1);
	se->naffected = ts_new_atomic(int, se->nstages + 1);
	memset(se->naffected, 0, sizeof(int) * (size_t)(se->nstages + 1));
	se->affected = ts_new_array(int *, se->nstages + 1);
	owners_fill(se, tp);
	affected_fill(se, tp);
}

/* Search the space of "tp" with the model "m" into the pool "p", with
 * "budget" times the default numbers of samples and steps. */
static void search_run(ts_ctx *ctx, const ts_template *tp, const ts_model *m,
	struct pool *p, double budget)
{
	struct search se = { .ctx = ctx, .tp = tp, .sp = tp->space, .m = m,
		.nstages = tp->dag->nstages, .pool = p };
	struct rated *best, *start[10];
	int nstarts;

	search_init(&se, tp);
	best = rate_full(&se, ts_template_default(tp));
	/* The naive nest is a candidate like any other: the choice is
	 * never one the model rates worse than it.  A GPU has seeds of
	 * its own (thread tiles, tensor cores). */
	{
		struct rated *x = rate_full(&se, ts_template_naive(tp));
		ts_config *seeds[TS_GPU_SEEDS];
		int n = on_gpu(tp) ? ts_gpu_static_seeds(tp, seeds) : 0;
		if (x->total < best->total)
			best = x;
		for (int i = 0; i < n; i++)
			if ((x = rate_full(&se, seeds[i]))->total < best->total)
				best = x;
	}
	for (int i = 0; i < (int)(600 * budget); i++) {
		struct rated *x = rate_full(&se,
			ts_space_sample(tp->space, ctx));
		if (x->total < best->total)
			best = x;
	}
	best = sweep_stages(&se, best, (int)(800 * budget));
	best = sweep_stages(&se, best, (int)(100 * budget));
	/* Climb from the best of the pool: the pool changes as it
	 * climbs. */
	nstarts = p->n < 10 ? p->n : 10;
	for (int i = 0; i < nstarts; i++)
		start[i] = rate_full(&se, p->cfg[i]);
	for (int i = 0; i < nstarts; i++)
		climb(&se, start[i], (int)((600 + 80 * se.nstages) * budget));
}

/* How much better than the naive nest the model must rate a
 * configuration to choose it: within this, the model cannot tell them
 * apart (measured: near-ties 2x apart), and the naive nest, which LLVM
 * vectorises itself, is the one with no schedule to get wrong (a row
 * minimum of 1024 columns in memory rated 0.240 ms either way ran 1.17x
 * slower scheduled). */
#define NAIVE_MARGIN 0.03

/* Put the naive nest of "tp" first in "p" when "m" rates the best of "p"
 * less than NAIVE_MARGIN better than it. */
static void prefer_naive(const ts_template *tp, const ts_model *m,
	struct pool *p)
{
	ts_config *naive = ts_template_naive(tp);
	double cost = ts_model_estimate_with(m, naive, NULL);
	int i;

	if (p->n == 0 || !isfinite(cost) ||
	    p->cost[0] * (1 + NAIVE_MARGIN) < cost)
		return;
	for (i = 0; i < p->n && !ts_config_equal(p->cfg[i], naive); i++)
		;
	if (i == p->n)
		i = p->n < p->k ? p->n++ : p->n - 1;
	for (; i > 0; i--) {
		p->cfg[i] = p->cfg[i - 1];
		p->cost[i] = p->cost[i - 1];
	}
	p->cfg[0] = naive;
	p->cost[0] = cost;
}

/* Keep in "p" only the first of configurations that give the same
 * schedule (they differ in knobs that another knob makes irrelevant,
 * and measuring both would measure one kernel twice). */
static void distinct_schedules(ts_ctx *ctx, const ts_template *tp,
	struct pool *p)
{
	char **text = ts_new_array(char *, p->n + 1);
	int n = 0;

	for (int i = 0; i < p->n; i++) {
		ts_schedule *sch = ts_template_apply(tp, p->cfg[i]);
		bool seen = false;
		text[n] = sch ? ts_schedule_to_json(sch) : NULL;
		ts_ctx_clear_error(ctx);
		for (int j = 0; j < n && text[n] && !seen; j++)
			seen = text[j] && !strcmp(text[j], text[n]);
		if (seen)
			continue;
		p->cfg[n] = p->cfg[i];
		p->cost[n++] = p->cost[i];
	}
	p->n = n;
}

/* Independent searches of half the default budget each, merged: one
 * alone ends, under some seeds, in a local minimum well above another's
 * (ResNet-18's 64@56 layer with its residual epilogue, whose kernel then
 * ran twice as slow); with two, a 3x3 f16 convolution for an AVX2
 * target still landed 1.2x above its best estimate at one seed in two
 * and ran 2x slower than its staged twin; three bring the spread over
 * ten seeds from 2.1x to 1.14x for 1.5x the time. */
enum { SEARCH_RUNS = 3 };

/* Climbs from the best register tiles of each vector axis, each of the
 * default steps. */
enum { TILE_CLIMBS = 2 };

/* Random configurations the register tiles are also tried in, besides
 * the best so far and its neighbours: the other knobs of the best suit
 * its own tile. */
enum { TILE_CONTEXTS = 7 };

/* Register tiles.  Random samples rarely draw a good register tile of a
 * tiled stage (the innermost factors of every spatial axis together,
 * the vectorised one a multiple of the lanes), and a climb does not
 * leave the basin of the tile it starts from: changing the vector axis
 * or one factor alone rates worse.  On ResNet-18 for an AVX2 target,
 * three free searches found the best estimate of a 3x3 convolution
 * under one seed in three; under the others they kept a tile
 * vectorised along the image row, rated 1.14x worse, that ran 1.7x
 * slower (48 against 82 GFLOP/s).  So after the first free search, the
 * second climbs from register tiles enumerated for the dominant stage:
 * every vector axis, every product of candidate innermost factors (the
 * vector axis's dividing its extent and a multiple of the lanes) whose
 * accumulators fill between a quarter of the vector registers and all
 * but two, each tried in the configurations of tile_bases; the third is
 * free again (the tiles miss what a stage other than the dominant one
 * gains).  Over six seeds, for an AVX2 target, every ResNet-18
 * convolution then lands within 3% of its best estimate (within 14%
 * before, 1.3x for the 512@7 layers), in about the time of three free
 * searches (a tile is rated by re-estimating its own stage). */
struct tiles {
	struct search *se;
	int stage;
	int lanes, lo, hi;	/* accumulator vectors allowed */
	const struct rated *base;
	struct pool *best;	/* the best tiles, per choice of vector
				 * axis */
	int choice;		/* the vector axis's choice at hand */
	bool *dirty;
};

/* The lowest value and the number of values of a knob that is not a
 * split. */
static int64_t knob_low(const ts_knob *k)
{
	return k->kind == TS_KNOB_CHOICE ? 0 : k->lo;
}

static int64_t knob_values(const ts_knob *k)
{
	return k->kind == TS_KNOB_CHOICE ? k->nchoices : k->hi - k->lo + 1;
}

/* Set the innermost factor of split knob "k" in "c" to "f": where "f"
 * divides the extent, keep the middle levels where they still divide
 * what is left and give the rest to the outermost; else split only
 * there, so that the tail can run as a tile of its own. */
static void set_inner(ts_config *c, const ts_knob *k, int64_t f)
{
	int64_t *v = c->v + k->offset, rest = k->extent / f;

	v[k->nparts - 1] = f;
	for (int i = 1; i < k->nparts - 1; i++) {
		if (k->extent % f || rest % v[i])
			v[i] = 1;
		rest /= v[i];
	}
	v[0] = k->extent % f ? (k->extent + f - 1) / f : rest;
}

/* Enumerate the innermost factors of spatial axes "a" onwards of the
 * tile stage of "t" in "c" ("vec": the vectorised axis; "acc":
 * accumulator vectors so far), rating each complete tile. */
static void tiles_from(struct tiles *t, ts_config *c, int a, int vec,
	int64_t acc)
{
	const ts_stage_plan *p = &t->se->m->tp->plans[t->stage];
	const ts_knob *k;

	if (acc > t->hi)
		return;
	if (a == p->nspatial) {
		struct rated *x;
		if (acc < t->lo || !ts_config_is_valid(c))
			return;
		x = rate_change(t->se, t->base, ts_config_copy(c), t->dirty);
		pool_offer(&t->best[t->choice], x->cfg, x->total);
		return;
	}
	if (p->split[a] < 0) {
		tiles_from(t, c, a + 1, vec, acc);
		return;
	}
	k = t->se->sp->knobs[p->split[a]];
	for (int i = 0; i < k->ncands; i++) {
		int64_t f = k->cands[i];
		if (f < 1 || f > k->extent ||
		    (a == vec && (k->extent % f || f % t->lanes)))
			continue;
		set_inner(c, k, f);
		tiles_from(t, c, a + 1, vec, acc * (a == vec ? f / t->lanes :
			f));
	}
}

/* Add to the "*n" configurations "b" each with the reduction axes of
 * stage "s" whole at their innermost level, where that differs: a
 * register tile keeps its accumulators over the whole reduction (a
 * 512@7 convolution's tile, in a configuration whose channel loop was
 * split 32 x 16, was rated as reloading them 32 times). */
static void with_whole_reductions(struct search *se, int s,
	ts_config **b, int *n)
{
	const ts_stage_plan *p = &se->m->tp->plans[s];
	int n0 = *n;

	for (int i = 0; i < n0; i++) {
		ts_config *c = ts_config_copy(b[i]);
		for (int a = p->nspatial; a < p->nspatial + p->nreduce; a++) {
			const ts_knob *k;
			if (p->split[a] < 0)
				continue;
			k = se->sp->knobs[p->split[a]];
			for (int l = 0; l < k->nparts; l++)
				c->v[k->offset + l] = l == k->nparts - 1 ?
					k->extent : 1;
		}
		if (!ts_config_equal(c, b[i]) && ts_config_is_valid(c))
			b[(*n)++] = c;
	}
}

/* The configurations the register tiles of stage "s" are tried in, into
 * "*n": "best", "best" with one or two of the knobs of "s" but its
 * splits and its vector axis "kv" changed (a tile may want another
 * packing, or its stage at root to run its tail as a tile of its own,
 * and then no packing of its weights: two changes), and TILE_CONTEXTS
 * random ones, each also with its reductions whole in the tile
 * (with_whole_reductions, which the capacity counts twice for). */
static ts_config **tile_bases(struct search *se, ts_config *best, int s,
	int kv, int *n)
{
	const ts_space *sp = se->sp;
	int m = 0, cap;
	int *knob;
	int64_t *value;
	ts_config **b;

	for (int k = 0; k < sp->nknobs; k++)
		if (se->owner[k] == s && k != kv &&
		    sp->knobs[k]->kind != TS_KNOB_SPLIT)
			m += (int)(knob_values(sp->knobs[k]) - 1);
	knob = ts_new_atomic(int, m + 1);
	value = ts_new_atomic(int64_t, m + 1);
	m = 0;
	for (int k = 0; k < sp->nknobs; k++) {
		const ts_knob *kn = sp->knobs[k];
		if (se->owner[k] != s || k == kv || kn->kind == TS_KNOB_SPLIT)
			continue;
		for (int64_t v = knob_low(kn); v < knob_low(kn) +
		     knob_values(kn); v++)
			if (v != best->v[kn->offset]) {
				knob[m] = k;
				value[m++] = v;
			}
	}
	cap = 2 * (1 + m + m * m + TILE_CONTEXTS);
	b = ts_new_array(ts_config *, cap);
	*n = 0;
	b[(*n)++] = best;
	for (int i = 0; i < m; i++)
		for (int j = i; j < m; j++) {
			ts_config *c;
			if (j > i && knob[j] == knob[i])
				continue;
			c = ts_config_copy(best);
			c->v[sp->knobs[knob[i]]->offset] = value[i];
			c->v[sp->knobs[knob[j]]->offset] = value[j];
			if (ts_config_is_valid(c))
				b[(*n)++] = c;
		}
	for (int r = 0; r < TILE_CONTEXTS; r++)
		b[(*n)++] = ts_space_sample(sp, se->ctx);
	with_whole_reductions(se, s, b, n);
	return b;
}

/* The stage of "best" whose term is the largest. */
static int dominant_stage(const struct rated *best, int nstages)
{
	int d = 0;

	for (int s = 1; s < nstages; s++)
		if (best->stage[s] > best->stage[d])
			d = s;
	return d;
}

/* Climb into "p" from the "nclimbs" best register tiles of each vector
 * axis of the dominant stage of p's best; return false where that stage
 * has none. */
static bool climb_tiles(ts_ctx *ctx, const ts_template *tp,
	const ts_model *m, struct pool *p, int nclimbs, double budget)
{
	struct search se = { .ctx = ctx, .tp = tp, .sp = tp->space, .m = m,
		.nstages = tp->dag->nstages, .pool = p };
	bool any = false;
	struct tiles t = { &se };
	const ts_stage_plan *pl;
	const ts_stage *st;
	const ts_knob *kv;
	ts_config **bases;
	int nbases, *vec;

	if (p->n == 0)
		return false;
	search_init(&se, tp);
	t.base = rate_full(&se, p->cfg[0]);
	t.stage = dominant_stage(t.base, se.nstages);
	pl = &tp->plans[t.stage];
	st = tp->dag->stages[t.stage];
	if (pl->rule != TS_RULE_TILE || pl->knob_vec < 0)
		return false;
	kv = tp->space->knobs[pl->knob_vec];
	t.lanes = TS_MAX(1, ts_target_lanes(tp->target, st->out->dtype));
	t.hi = TS_MAX(1, tp->target->cpu.vector_registers - 2);
	t.lo = TS_MAX(1, tp->target->cpu.vector_registers / 4);
	t.best = ts_new_array(struct pool, kv->nchoices);
	for (int i = 0; i < kv->nchoices; i++) {
		t.best[i].k = nclimbs;
		t.best[i].cfg = ts_new_array(ts_config *, nclimbs);
		t.best[i].cost = ts_new_atomic(double, nclimbs);
	}
	t.dirty = ts_new_atomic(bool, se.nstages + 1);
	memset(t.dirty, 0, sizeof(bool) * se.nstages);
	t.dirty[t.stage] = true;
	/* The spatial axis each choice of the vector knob names ("none":
	 * -1). */
	vec = ts_new_atomic(int, kv->nchoices);
	for (int i = 0; i < kv->nchoices; i++) {
		vec[i] = -1;
		for (int a = 0; a < st->ndim; a++)
			if (!strcmp(st->axes[a]->name, kv->choices[i]))
				vec[i] = a;
	}
	bases = tile_bases(&se, p->cfg[0], t.stage, pl->knob_vec, &nbases);
	for (int r = 0; r < nbases; r++) {
		t.base = rate_full(&se, bases[r]);
		for (t.choice = 0; t.choice < kv->nchoices; t.choice++) {
			ts_config *c;
			if (vec[t.choice] < 0)
				continue;
			c = ts_config_copy(bases[r]);
			c->v[kv->offset] = t.choice;
			tiles_from(&t, c, 0, vec[t.choice], 1);
		}
	}
	for (int i = 0; i < kv->nchoices; i++)
		for (int j = 0; j < t.best[i].n; j++) {
			climb(&se, rate_full(&se, t.best[i].cfg[j]),
				(int)((600 + 80 * se.nstages) * budget));
			any = true;
		}
	return any;
}

ts_static_result *ts_static_fill(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k)
{
	double t0 = now_ms();
	ts_static_result *r;
	ts_dag_info *info;
	struct pool p = { 0 };
	ts_model m;
	int first_free;

	info = ts_analyze_dag(ctx, dag);
	if (!info)
		return NULL;
	r = ts_new(ts_static_result);
	r->tp = ts_template_new(ctx, dag, info, target);
	if (!r->tp || (!on_gpu(r->tp) && ts_model_init(&m, r->tp) < 0))
		return NULL;
	p.k = k > 16 ? k : 16;
	p.cfg = ts_new_array(ts_config *, p.k);
	p.cost = ts_new_atomic(double, p.k);
	search_run(ctx, r->tp, &m, &p, 0.5);
	/* The second search from register tiles where the dominant stage
	 * has them, free otherwise; the last one free. */
	first_free = !on_gpu(r->tp) && climb_tiles(ctx, r->tp, &m, &p,
		TILE_CLIMBS, 1.0) ? SEARCH_RUNS - 1 : 1;
	for (int run = first_free; run < SEARCH_RUNS; run++) {
		struct pool q = p;
		int rated = p.rated;
		q.n = q.rated = 0;
		q.cfg = ts_new_array(ts_config *, q.k);
		q.cost = ts_new_atomic(double, q.k);
		search_run(ctx, r->tp, &m, &q, 0.5);
		for (int i = 0; i < q.n; i++)
			pool_offer(&p, q.cfg[i], q.cost[i]);
		p.rated = rated + q.rated;
	}
	if (!on_gpu(r->tp))
		prefer_naive(r->tp, &m, &p);
	distinct_schedules(ctx, r->tp, &p);
	if (p.n == 0) {
		ts_ctx_set_error(ctx, "static filling of '%s': no configuration "
			"of %d rated has a finite cost", dag->name ? dag->name :
			"the program", p.rated);
		return NULL;
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

const ts_target *ts_target_for_threads(const ts_target *target,
	int threads)
{
	ts_target *t;

	if (!target || threads <= 0 || target->kind != TS_TARGET_CPU)
		return target;
	t = ts_new(ts_target);
	*t = *target;
	t->cpu.cores = threads;
	if (t->cpu.peak_gflops_f32_core > 0)
		t->cpu.peak_gflops_f32 = t->cpu.peak_gflops_f32_core * threads;
	return t;
}

/* The static baseline's random stream starts from a seed of its own,
 * made of the context's seed and the DAG's hash, and the context's stream
 * restarts from its seed afterwards: the same task gets the same static
 * schedule wherever it is asked for (tessel run, the tuner, a network
 * pass, the layout pass), whatever was drawn before.
 *
 * The pool the baseline's search keeps at least: its best does not
 * depend on how many candidates a caller asks for (the pool's first ten
 * start the climbs whatever its size, but one size for every caller
 * leaves nothing to argue). */
enum { BASELINE_POOL = 32 };

/* The baselines a context has filled, by memo_key: the same task
 * asked for again (a network's layout pass rates each subgraph's
 * candidate layouts, then its schedules fill the chosen ones; the tasks
 * of a network that differ only in names) is not searched again. */
struct baseline_memo {
	const char *key;
	ts_static_result *r;	/* all the pool */
};

/* What a baseline depends on: the DAG up to renaming, the target with
 * its cores, the pool and the context's seed. */
static const char *memo_key(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, int pool)
{
	return ts_asprintf("%s|%s|%d|%llu", ts_dag_canonical_string(dag),
		ts_target_key(tg), pool,
		(unsigned long long)ts_ctx_get_seed(ctx));
}

/* A copy of "r" that its caller may truncate, for "dag" (the DAG "r"
 * was filled for, or one equal to it up to renaming: its template is
 * built anew, and the configurations, whose knobs come in the same
 * order, are copied value by value).  NULL when the spaces differ. */
static ts_static_result *memo_copy(ts_ctx *ctx, const ts_static_result *r,
	const ts_dag *dag, const ts_target *tg)
{
	ts_static_result *c = ts_new(ts_static_result);
	const ts_space *sp;
	ts_dag_info *info;

	*c = *r;
	if (ts_template_dag(r->tp) != dag) {
		if (!(info = ts_analyze_dag(ctx, dag)) ||
		    !(c->tp = ts_template_new(ctx, dag, info, tg)))
			return NULL;
	}
	sp = ts_template_space(c->tp);
	if (sp->nvalues != ts_template_space(r->tp)->nvalues)
		return NULL;
	c->topk = ts_new_array(ts_config *, r->k);
	c->topk_cost = ts_new_atomic(double, r->k);
	for (int i = 0; i < r->k; i++) {
		c->topk[i] = ts_config_new(sp);
		memcpy(c->topk[i]->v, r->topk[i]->v,
			sizeof(int64_t) * (size_t)sp->nvalues);
		c->topk_cost[i] = r->topk_cost[i];
	}
	c->best = c->topk[0];
	return c;
}

ts_static_result *ts_static_baseline_fill(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int threads, int k)
{
	uint64_t seed = ts_ctx_get_seed(ctx), x = seed;
	ts_vec **memo = (ts_vec **)ts_ctx_slot(ctx, TS_SLOT_STATIC);
	const ts_target *tg;
	ts_static_result *r = NULL;
	const char *key;
	int pool = TS_MAX(k, BASELINE_POOL);

	if (!dag || !target)
		return NULL;
	tg = ts_target_for_threads(target, threads);
	key = tg->kind == TS_TARGET_CPU ? memo_key(ctx, dag, tg, pool) : NULL;
	for (int i = 0; key && *memo && i < (*memo)->n && !r; i++) {
		struct baseline_memo *e = (*memo)->v[i];
		if (!strcmp(e->key, key))
			r = memo_copy(ctx, e->r, dag, tg);
	}
	if (!r) {
		for (const char *h = ts_dag_hash(dag); *h; h++) {
			x ^= (unsigned char)*h;
			x = ts_splitmix64(&x);
		}
		ts_ctx_set_seed(ctx, x);
		r = ts_static_fill(ctx, dag, tg, pool);
		ts_ctx_set_seed(ctx, seed);
		if (r && key) {
			struct baseline_memo *e = ts_new(struct baseline_memo);
			e->key = key;
			e->r = r;
			if (!*memo)
				*memo = ts_new(ts_vec);
			ts_vec_push(*memo, e);
			r = memo_copy(ctx, r, dag, tg);
		}
	}
	if (r && r->k > k)
		r->k = TS_MAX(k, 1);
	return r;
}

ts_schedule *ts_static_baseline(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int threads)
{
	ts_static_result *r = ts_static_baseline_fill(ctx, dag, target,
		threads, 1);

	return r ? ts_template_apply(r->tp, r->best) : NULL;
}
