/* Random valid schedules for the backend tests.  Steps are drawn for the
 * stages from the outputs back to the inputs, so that a producer sees the
 * final loops of its consumer when it picks a compute_at location; an
 * attempt whose schedule fails ts_schedule_check is drawn again from the
 * continuing stream. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "tests/backends/random_schedule.h"

#define NAME_MAX_LEN 256
#define MAX_LOOPS 64

/* The random stream of one attempt. */
struct rng {
	uint64_t state;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform integer in [0, "n"). */
static int64_t below(struct rng *r, int64_t n)
{
	return n <= 1 ? 0 : (int64_t)(rng_next(r) % (uint64_t)n);
}

/* Whether an event of probability "pct" percent happens. */
static bool chance(struct rng *r, int pct)
{
	return below(r, 100) < pct;
}

/* The live loops of stage "name": copies of their names in "names". */
static int live_loops(const ts_schedule *sch, const char *name,
	char names[][NAME_MAX_LEN])
{
	const ts_sched_stage *ss = ts_schedule_find_stage(sch, name);
	int n = ss->norder < MAX_LOOPS ? ss->norder : MAX_LOOPS;

	for (int p = 0; p < n; p++)
		snprintf(names[p], NAME_MAX_LEN, "%s",
			ss->loops[ss->order[p]].name);
	return n;
}

/* The loop "loop" of stage "name". */
static const ts_sched_loop *loop_of(const ts_schedule *sch, const char *name,
	const char *loop)
{
	const ts_sched_stage *ss = ts_schedule_find_stage(sch, name);
	int l = ts_sched_stage_find_loop(ss, loop);

	return l < 0 ? NULL : &ss->loops[l];
}

/* Split some loops of stage "name", and some of their inner loops
 * again, by random factors (dividing or not). */
static void random_splits(struct rng *r, ts_schedule *sch, const char *name)
{
	char names[MAX_LOOPS][NAME_MAX_LEN], in[NAME_MAX_LEN + 2];
	int n = live_loops(sch, name, names);
	const ts_sched_loop *l;

	for (int p = 0; p < n; p++) {
		l = loop_of(sch, name, names[p]);
		if (l->extent < 2 || !chance(r, 55))
			continue;
		ts_schedule_split(sch, name, names[p], 1 + below(r, l->extent),
			chance(r, 25) ? TS_TAIL_PARTITION : TS_TAIL_GUARD);
		snprintf(in, sizeof(in), "%.*s.i", NAME_MAX_LEN - 1, names[p]);
		l = loop_of(sch, name, in);
		if (l && l->extent > 1 && chance(r, 30))
			ts_schedule_split(sch, name, in, 1 + below(r, l->extent),
				TS_TAIL_GUARD);
	}
}

/* Reorder the loops of stage "name" at random (Fisher-Yates). */
static void random_reorder(struct rng *r, ts_schedule *sch, const char *name)
{
	char names[MAX_LOOPS][NAME_MAX_LEN];
	const char *order[MAX_LOOPS];
	int n = live_loops(sch, name, names);

	for (int i = 0; i < n; i++)
		order[i] = names[i];
	for (int i = n - 1; i > 0; i--) {
		int j = (int)below(r, i + 1);
		const char *t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	if (n > 1)
		ts_schedule_reorder(sch, name, n, order);
}

/* Fuse one random pair of adjacent loops of stage "name". */
static void random_fuse(struct rng *r, ts_schedule *sch, const char *name)
{
	char names[MAX_LOOPS][NAME_MAX_LEN];
	int n = live_loops(sch, name, names), p;

	if (n < 2)
		return;
	p = (int)below(r, n - 1);
	if (ts_schedule_fuse(sch, name, names[p], names[p + 1]) < 0)
		ts_ctx_clear_error(sch->ctx);
}

/* Position of the outermost reduction loop of "ss", or its loop count. */
static int first_reduce(const ts_sched_stage *ss)
{
	for (int p = 0; p < ss->norder; p++)
		if (ss->loops[ss->order[p]].reduce)
			return p;
	return ss->norder;
}

/* Cache steps of stage "name": cache_write, cache_read, rfactor. */
static void random_caches(struct rng *r, ts_schedule *sch, const char *name)
{
	char names[MAX_LOOPS][NAME_MAX_LEN];
	const ts_sched_stage *ss = ts_schedule_find_stage(sch, name);
	int n = live_loops(sch, name, names), fr = first_reduce(ss);
	const ts_stage *st = ss->stage;

	if (!ss->nested_reduce && st->nraxes && fr < n &&
	    ss->attach == TS_ATTACH_ROOT && chance(r, 20)) {
		int p = fr + (int)below(r, n - fr);
		if (ss->loops[ss->order[p]].reduce)
			ts_schedule_rfactor(sch, name, names[p]);
	} else if (fr > 0 && chance(r, 30)) {
		ts_schedule_cache_write(sch, name, names[below(r,
			fr < n ? fr : n - 1 > 0 ? n - 1 : 1)]);
	}
	if (st->ninputs && n && chance(r, 25)) {
		const ts_tensor *t = st->inputs[below(r, st->ninputs)];
		int perm[TS_MAX_DIMS];
		for (int d = 0; d < t->ndim; d++)
			perm[d] = t->ndim - 1 - d;
		ts_schedule_cache_read(sch, name, t->name, names[below(r, n)],
			chance(r, 50) ? t->ndim : 0, perm);
	}
	ts_ctx_clear_error(sch->ctx);
}

/* Annotations of stage "name": parallel outermost, vectorize innermost,
 * unroll one short loop that holds few iterations (so that compiling
 * stays quick). */
static void random_annotations(struct rng *r, ts_schedule *sch,
	const char *name)
{
	char names[MAX_LOOPS][NAME_MAX_LEN];
	const ts_sched_stage *ss = ts_schedule_find_stage(sch, name);
	int n = live_loops(sch, name, names), p;
	const ts_sched_loop *l;
	int64_t inside = 1;

	if (!n)
		return;
	if (ss->attach == TS_ATTACH_ROOT && chance(r, 40))
		ts_schedule_parallel(sch, name, names[0]);
	l = loop_of(sch, name, names[n - 1]);
	if (l->extent <= 64 && chance(r, 50))
		ts_schedule_vectorize(sch, name, names[n - 1]);
	p = (int)below(r, n);
	for (int q = p; q < n; q++)
		inside *= loop_of(sch, name, names[q])->extent;
	l = loop_of(sch, name, names[p]);
	if (l->kind == TS_LOOP_SERIAL && inside <= 64 && chance(r, 25))
		ts_schedule_unroll(sch, name, names[p]);
	ts_ctx_clear_error(sch->ctx);
}

/* Where stage "i" is computed: inline, at a loop of its consumer, or at
 * root. */
static void random_attach(struct rng *r, ts_schedule *sch, int i)
{
	const ts_dag *dag = sch->dag;
	const ts_stage *st = dag->stages[i];
	char names[MAX_LOOPS][NAME_MAX_LEN];
	const ts_sched_stage *cs;
	int c, n, p;

	if (ts_dag_is_output(dag, st->out))
		return;
	if (!st->nraxes && chance(r, 35)) {
		ts_schedule_compute_inline(sch, st->name);
		return;
	}
	if (dag->nconsumers[i] != 1 || !chance(r, 50))
		return;
	c = dag->consumers[i][0];
	cs = &sch->stages[c];
	n = live_loops(sch, dag->stages[c]->name, names);
	if (cs->attach == TS_ATTACH_INLINE || cs->rfactor || !n)
		return;
	p = (int)below(r, n);
	if (cs->loops[cs->order[p]].kind == TS_LOOP_VECTORIZED)
		return;
	ts_schedule_compute_at(sch, st->name, dag->stages[c]->name, names[p]);
	ts_ctx_clear_error(sch->ctx);
}

/* One attempt from the stream "r". */
static ts_schedule *attempt(struct rng *r, ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	for (int i = dag->nstages - 1; i >= 0; i--) {
		const char *name = dag->stages[i]->name;
		random_attach(r, sch, i);
		if (sch->stages[i].attach == TS_ATTACH_INLINE)
			continue;
		random_splits(r, sch, name);
		if (chance(r, 50))
			random_reorder(r, sch, name);
		if (chance(r, 20))
			random_fuse(r, sch, name);
		random_caches(r, sch, name);
		random_annotations(r, sch, name);
		ts_ctx_clear_error(ctx);
	}
	return sch;
}

ts_schedule *ts_random_schedule(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed, int *tries)
{
	struct rng r = { seed * 0x2545f4914f6cdd1dULL + 1 };

	for (int t = 1; t <= 50; t++) {
		ts_schedule *sch = attempt(&r, ctx, dag);
		if (tries)
			*tries = t;
		if (ts_schedule_check(sch) == TS_OK) {
			ts_ctx_clear_error(ctx);
			return sch;
		}
		ts_ctx_clear_error(ctx);
	}
	return ts_schedule_naive(ctx, dag);
}
