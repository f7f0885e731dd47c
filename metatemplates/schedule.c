/* Schedules: steps, their validation, and the loops they leave per stage.
 *
 * Each step kind has one entry in a table of operations (apply, print,
 * to_json, from_json); printing and JSON live in schedule_json.c. */
#include <config.h>

#include <inttypes.h>

#include <tessel/analysis.h>
#include <tessel/schedule.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "analysis/facts.h"
#include "metatemplates/schedule_ops.h"

/* The names of loop annotations. */

static const char *loop_kind_names[TS_LOOP_KIND_COUNT] = {
	[TS_LOOP_SERIAL] = "serial", [TS_LOOP_PARALLEL] = "parallel",
	[TS_LOOP_VECTORIZED] = "vectorized", [TS_LOOP_UNROLLED] = "unrolled",
	[TS_LOOP_BOUND] = "bound",
};

static const char *bind_names[TS_BIND_COUNT] = {
	[TS_BIND_NONE] = "none",
	[TS_BIND_BLOCK_X] = "blockIdx.x", [TS_BIND_BLOCK_Y] = "blockIdx.y",
	[TS_BIND_BLOCK_Z] = "blockIdx.z", [TS_BIND_THREAD_X] = "threadIdx.x",
	[TS_BIND_THREAD_Y] = "threadIdx.y", [TS_BIND_THREAD_Z] = "threadIdx.z",
	[TS_BIND_VTHREAD] = "vthread",
};

static const char *scope_names[TS_SCOPE_COUNT] = {
	[TS_SCOPE_ARG] = "arg", [TS_SCOPE_GLOBAL] = "global",
	[TS_SCOPE_LOCAL] = "local", [TS_SCOPE_SHARED] = "shared",
};

const char *ts_loop_kind_name(ts_loop_kind k)
{
	return (unsigned)k < TS_LOOP_KIND_COUNT ? loop_kind_names[k] : "?";
}

const char *ts_bind_name(ts_bind b)
{
	return (unsigned)b < TS_BIND_COUNT ? bind_names[b] : "?";
}

const char *ts_scope_name(ts_scope s)
{
	return (unsigned)s < TS_SCOPE_COUNT ? scope_names[s] : "?";
}

/* Whether the body of "s" is one reduction with no other inside it. */
bool ts_stage_is_top_reduce(const ts_stage *s)
{
	return s->body->kind == TS_EXPR_REDUCE && !ts_expr_has_reduce(s->body->a);
}

/* Append a loop "name" of "extent" to "ss" and return its index. */
static int loop_add(ts_sched_stage *ss, const char *name, int64_t extent,
	bool reduce, int axis)
{
	ts_sched_loop *l;

	ss->loops = ts_grow(ss->loops, sizeof(*ss->loops), ss->nloops,
		ss->nloops + 1);
	l = &ss->loops[ss->nloops];
	l->name = name;
	l->extent = extent;
	l->reduce = reduce;
	l->axis = axis;
	l->kind = TS_LOOP_SERIAL;
	l->bind = TS_BIND_NONE;
	return ss->nloops++;
}

/* Set up "ss" for stage "s": one loop per axis, in declaration order. */
static void stage_init(ts_sched_stage *ss, const ts_stage *s)
{
	int nr = 0;

	memset(ss, 0, sizeof(*ss));
	ss->stage = s;
	if (s->nraxes && ts_stage_is_top_reduce(s))
		nr = s->body->nraxes;
	else
		ss->nested_reduce = s->nraxes > 0;
	ss->order = ts_new_atomic(int, s->ndim + nr + 1);
	for (int i = 0; i < s->ndim; i++)
		ss->order[ss->norder++] = loop_add(ss, s->axes[i]->name,
			s->axes[i]->extent, false, i);
	for (int i = 0; i < nr; i++) {
		ts_axis *a = s->body->raxes[i];
		int k = 0;

		while (s->raxes[k] != a)
			k++;
		ss->order[ss->norder++] = loop_add(ss, a->name, a->extent,
			true, s->ndim + k);
	}
	ss->attach = TS_ATTACH_ROOT;
	ss->attach_stage = -1;
}

ts_schedule *ts_schedule_new(ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch;

	if (!dag)
		return NULL;
	sch = ts_new(ts_schedule);
	sch->ctx = ctx;
	sch->dag = dag;
	sch->stages = ts_new_array(ts_sched_stage, dag->nstages + 1);
	for (int i = 0; i < dag->nstages; i++)
		stage_init(&sch->stages[i], dag->stages[i]);
	return sch;
}

ts_schedule *ts_schedule_naive(ts_ctx *ctx, const ts_dag *dag)
{
	return ts_schedule_new(ctx, dag);
}

/* Return a deep copy of the stage state "ss". */
static void stage_copy(ts_sched_stage *d, const ts_sched_stage *ss)
{
	*d = *ss;
	d->loops = ts_new_array(ts_sched_loop, ss->nloops + 1);
	if (ss->nloops)
		memcpy(d->loops, ss->loops, sizeof(*ss->loops) * ss->nloops);
	d->order = ts_new_atomic(int, ss->norder + 1);
	memcpy(d->order, ss->order, sizeof(int) * ss->norder);
	d->rels = ts_new_array(ts_sched_rel, ss->nrels + 1);
	if (ss->nrels)
		memcpy(d->rels, ss->rels, sizeof(*ss->rels) * ss->nrels);
	d->reads = ts_new_array(ts_sched_read, ss->nreads + 1);
	if (ss->nreads)
		memcpy(d->reads, ss->reads, sizeof(*ss->reads) * ss->nreads);
}

ts_schedule *ts_schedule_copy(const ts_schedule *sch)
{
	ts_schedule *c = ts_new(ts_schedule);

	*c = *sch;
	c->steps = ts_new_array(ts_step, sch->nsteps + 1);
	if (sch->nsteps)
		memcpy(c->steps, sch->steps, sizeof(ts_step) * sch->nsteps);
	c->stages = ts_new_array(ts_sched_stage, sch->dag->nstages + 1);
	for (int i = 0; i < sch->dag->nstages; i++)
		stage_copy(&c->stages[i], &sch->stages[i]);
	return c;
}

const ts_sched_stage *ts_schedule_find_stage(const ts_schedule *sch,
	const char *name)
{
	for (int i = 0; name && i < sch->dag->nstages; i++)
		if (strcmp(sch->dag->stages[i]->name, name) == 0)
			return &sch->stages[i];
	return NULL;
}

int ts_sched_stage_loop_pos(const ts_sched_stage *ss, const char *name)
{
	for (int i = 0; name && i < ss->norder; i++)
		if (strcmp(ss->loops[ss->order[i]].name, name) == 0)
			return i;
	return -1;
}

int ts_sched_stage_find_loop(const ts_sched_stage *ss, const char *name)
{
	int p = ts_sched_stage_loop_pos(ss, name);

	return p < 0 ? -1 : ss->order[p];
}

/* The names of the live loops of "ss", for messages. */
static char *loop_list(const ts_sched_stage *ss)
{
	ts_buf b;

	ts_buf_init(&b);
	for (int i = 0; i < ss->norder; i++)
		ts_buf_printf(&b, "%s%s", i ? ", " : "",
			ss->loops[ss->order[i]].name);
	return ss->norder ? b.s : "none";
}

/* Position of the live loop "name" of "ss", or -1 with an error. */
static int need_loop(ts_ctx *ctx, const ts_sched_stage *ss, const char *name)
{
	int p = ts_sched_stage_loop_pos(ss, name);

	if (p < 0)
		ts_ctx_set_error(ctx, "stage '%s': no loop '%s' (loops: %s)",
			ss->stage->name, name ? name : "(null)", loop_list(ss));
	return p;
}

/* Replace the loop at position "pos" of "ss" by "n" loops "idx". */
static void order_replace(ts_sched_stage *ss, int pos, int del, int n,
	const int *idx)
{
	int m = ss->norder - del + n;
	int *o = ts_new_atomic(int, m + 1);

	memcpy(o, ss->order, sizeof(int) * pos);
	memcpy(o + pos, idx, sizeof(int) * n);
	memcpy(o + pos + n, ss->order + pos + del,
		sizeof(int) * (ss->norder - pos - del));
	ss->order = o;
	ss->norder = m;
}

/* Append the relation "r" to "ss". */
static void rel_add(ts_sched_stage *ss, ts_sched_rel r)
{
	ss->rels = ts_grow(ss->rels, sizeof(r), ss->nrels, ss->nrels + 1);
	ss->rels[ss->nrels++] = r;
}

/* Step "st" of kind split on "ss". */
static ts_status split_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	int p = need_loop(sch->ctx, ss, st->loop), idx[2];
	ts_sched_loop *l;
	int64_t f;

	if (p < 0)
		return TS_ERROR;
	if (st->factor < 1)
		return ts_ctx_set_error(sch->ctx, "stage '%s': split of '%s' "
			"by %" PRId64 ": the factor must be at least 1",
			ss->stage->name, st->loop, st->factor);
	if ((unsigned)st->tail >= TS_TAIL_COUNT)
		return ts_ctx_set_error(sch->ctx, "stage '%s': split of '%s': "
			"unknown tail mode %d", ss->stage->name, st->loop,
			(int)st->tail);
	l = &ss->loops[ss->order[p]];
	/* A loop of extent 0 splits into an outer loop of extent 0 and an
	 * inner one of extent 1. */
	f = TS_MIN(st->factor, TS_MAX(l->extent, 1));
	idx[0] = loop_add(ss, ts_asprintf("%s.o", st->loop),
		(l->extent + f - 1) / f, l->reduce, -1);
	l = &ss->loops[ss->order[p]];
	idx[1] = loop_add(ss, ts_asprintf("%s.i", st->loop), f, l->reduce, -1);
	rel_add(ss, (ts_sched_rel){ false, ss->order[p], idx[0], idx[1], f,
		st->tail });
	order_replace(ss, p, 1, 2, idx);
	return TS_OK;
}

/* Step "st" of kind reorder on "ss": the listed loops take the positions
 * they occupy, in the listed order. */
static ts_status reorder_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	int pos[TS_MAX_AXES * 4], n = st->nloops, k = 0;
	int *o;

	if (n < 1 || n > TS_MAX_AXES * 4)
		return ts_ctx_set_error(sch->ctx, "stage '%s': reorder needs "
			"between 1 and %d loops, got %d", ss->stage->name,
			TS_MAX_AXES * 4, n);
	for (int i = 0; i < n; i++) {
		if ((pos[i] = need_loop(sch->ctx, ss, st->loops[i])) < 0)
			return TS_ERROR;
		for (int j = 0; j < i; j++)
			if (pos[j] == pos[i])
				return ts_ctx_set_error(sch->ctx, "stage '%s': "
					"reorder lists loop '%s' twice",
					ss->stage->name, st->loops[i]);
	}
	o = ts_new_atomic(int, ss->norder + 1);
	memcpy(o, ss->order, sizeof(int) * ss->norder);
	for (int p = 0; p < ss->norder; p++)
		for (int i = 0; i < n; i++)
			if (pos[i] == p)
				o[p] = ss->order[pos[k++]];
	ss->order = o;
	return TS_OK;
}

/* Step "st" of kind fuse on "ss": "loop" and the next loop "loop2". */
static ts_status fuse_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	int p = need_loop(sch->ctx, ss, st->loop), q, f;
	ts_sched_loop *a, *b;

	if (p < 0 || (q = need_loop(sch->ctx, ss, st->loop2)) < 0)
		return TS_ERROR;
	if (q != p + 1)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot fuse '%s' "
			"and '%s': they are not adjacent, '%s' first",
			ss->stage->name, st->loop, st->loop2, st->loop);
	a = &ss->loops[ss->order[p]];
	b = &ss->loops[ss->order[q]];
	if (a->reduce != b->reduce)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot fuse "
			"spatial and reduction loops '%s' and '%s'",
			ss->stage->name, st->loop, st->loop2);
	f = loop_add(ss, ts_asprintf("%s@%s", st->loop, st->loop2),
		a->extent * b->extent, a->reduce, -1);
	rel_add(ss, (ts_sched_rel){ true, f, ss->order[p], ss->order[q], 0,
		TS_TAIL_GUARD });
	order_replace(ss, p, 2, 1, &f);
	return TS_OK;
}

/* Index of the stage named "name" in "sch", or -1 with an error. */
static int need_stage(const ts_schedule *sch, const char *name)
{
	for (int i = 0; name && i < sch->dag->nstages; i++)
		if (strcmp(sch->dag->stages[i]->name, name) == 0)
			return i;
	ts_ctx_set_error(sch->ctx, "schedule: no stage '%s'",
		name ? name : "(null)");
	return -1;
}

/* Whether stage "c" reads the output of stage "p" directly. */
static bool stage_reads(const ts_stage *c, const ts_stage *p)
{
	for (int i = 0; i < c->ninputs; i++)
		if (c->inputs[i] == p->out)
			return true;
	return false;
}

/* Whether stage "c" reads stage "p" directly, or through a chain of
 * inlined elementwise stages, each the only consumer of the one before
 * and loading it at its own indices (a bias, then an activation): their
 * bodies, substituted into "c", read "p" where "c" reads the last of
 * them, so "c"'s footprint on that stage is its footprint on "p". */
static bool reads_through_inlined(const ts_schedule *sch, int c, int p)
{
	const ts_dag *dag = sch->dag;
	int m;

	if (stage_reads(dag->stages[c], dag->stages[p]))
		return true;
	if (dag->nconsumers[p] != 1)
		return false;
	m = dag->consumers[p][0];
	return m != c && sch->stages[m].attach == TS_ATTACH_INLINE &&
		dag->stages[m]->ndim == dag->stages[p]->ndim &&
		dag->stages[m]->nraxes == 0 &&
		ts_body_loads_identity(dag->stages[m]->body,
		dag->stages[p]->out, dag->stages[m]) &&
		reads_through_inlined(sch, c, m);
}

/* Whether a consumer of stage "p" is computed at a loop of stage "t". */
static bool consumer_at(const ts_schedule *sch, int p, int t)
{
	const ts_dag *dag = sch->dag;

	for (int i = 0; i < dag->nconsumers[p]; i++) {
		const ts_sched_stage *c = &sch->stages[dag->consumers[p][i]];
		if (c->attach == TS_ATTACH_AT && c->attach_stage == t)
			return true;
	}
	return false;
}

/* Whether every consumer of stage "p", computed at loop "loop" of stage
 * "t", has it there: "t" itself (also through the chain of inlined
 * stages reads_through_inlined follows, when "p" has one consumer), or a
 * stage computed at the same loop, which then reads it directly (a
 * row's maximum read by the row's sum, both computed in the tile of
 * rows of the output that reads them). */
static bool consumers_see(const ts_schedule *sch, int p, int t,
	const char *loop)
{
	const ts_dag *dag = sch->dag;

	if (dag->nconsumers[p] == 1 && reads_through_inlined(sch, t, p))
		return true;
	for (int i = 0; i < dag->nconsumers[p]; i++) {
		int c = dag->consumers[p][i];
		const ts_sched_stage *cs = &sch->stages[c];
		if (c == t || (cs->attach == TS_ATTACH_AT &&
		    cs->attach_stage == t && !strcmp(cs->attach_loop, loop)))
			continue;
		return false;
	}
	return true;
}

/* Step "st" of kind compute_at on "ss". */
static ts_status compute_at_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	const ts_dag *dag = sch->dag;
	int s = ts_dag_stage_index(dag, ss->stage), t;
	const char *n = ss->stage->name;

	if ((t = need_stage(sch, st->target)) < 0)
		return TS_ERROR;
	if (ts_dag_is_output(dag, ss->stage->out))
		return ts_ctx_set_error(sch->ctx, "stage '%s': an output "
			"cannot be computed at another stage", n);
	if (!reads_through_inlined(sch, t, s) && !consumer_at(sch, s, t))
		return ts_ctx_set_error(sch->ctx, "stage '%s': compute_at "
			"target '%s' is not a consumer of '%s'", n, st->target,
			n);
	if (sch->stages[t].attach == TS_ATTACH_INLINE)
		return ts_ctx_set_error(sch->ctx, "stage '%s': compute_at "
			"target '%s' is inlined", n, st->target);
	if (need_loop(sch->ctx, &sch->stages[t], st->loop) < 0)
		return TS_ERROR;
	ss->attach = TS_ATTACH_AT;
	ss->attach_stage = t;
	ss->attach_loop = st->loop;
	return TS_OK;
}

/* Step "st" of kind compute_inline on "ss". */
static ts_status inline_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	const char *n = ss->stage->name;

	if (ts_dag_is_output(sch->dag, ss->stage->out))
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot inline "
			"an output", n);
	if (ss->stage->nraxes)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot inline "
			"a reduction", n);
	if (ss->cache_write || ss->nreads)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot inline "
			"a stage with cache steps", n);
	ss->attach = TS_ATTACH_INLINE;
	ss->attach_stage = -1;
	ss->attach_loop = NULL;
	return TS_OK;
}

/* Step "st" of kind compute_root on "ss". */
static ts_status root_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	ss->attach = TS_ATTACH_ROOT;
	ss->attach_stage = -1;
	ss->attach_loop = NULL;
	return TS_OK;
}

/* Step "st" of kind cache_write on "ss". */
static ts_status cache_write_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	const char *n = ss->stage->name;

	if (need_loop(sch->ctx, ss, st->loop) < 0)
		return TS_ERROR;
	if (ss->attach == TS_ATTACH_INLINE)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot cache "
			"the writes of an inlined stage", n);
	if (ss->rfactor)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_write and "
			"rfactor do not combine", n);
	if (ss->cache_write)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_write "
			"already at '%s'", n, ss->cache_write);
	ss->cache_write = st->loop;
	return TS_OK;
}

/* Check the layout permutation of "st" for "t". */
static ts_status check_perm(ts_ctx *ctx, const ts_sched_stage *ss,
	const ts_step *st, const ts_tensor *t)
{
	bool seen[TS_MAX_DIMS] = { false };

	if (st->nperm == 0)
		return TS_OK;
	if (st->nperm != t->ndim)
		return ts_ctx_set_error(ctx, "stage '%s': cache_read of '%s': "
			"the layout has %d dimensions, the tensor %d",
			ss->stage->name, t->name, st->nperm, t->ndim);
	for (int j = 0; j < st->nperm; j++) {
		if (st->perm[j] < 0 || st->perm[j] >= t->ndim ||
		    seen[st->perm[j]])
			return ts_ctx_set_error(ctx, "stage '%s': cache_read "
				"of '%s': the layout is not a permutation",
				ss->stage->name, t->name);
		seen[st->perm[j]] = true;
	}
	return TS_OK;
}

/* Step "st" of kind cache_read on "ss". */
static ts_status cache_read_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	const ts_tensor *t = NULL;
	ts_sched_read *r;

	for (int i = 0; st->target && i < ss->stage->ninputs; i++)
		if (strcmp(ss->stage->inputs[i]->name, st->target) == 0)
			t = ss->stage->inputs[i];
	if (!t)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_read of "
			"'%s': the stage does not read it", ss->stage->name,
			st->target ? st->target : "(null)");
	if (need_loop(sch->ctx, ss, st->loop) < 0 ||
	    check_perm(sch->ctx, ss, st, t) < 0)
		return TS_ERROR;
	for (int i = 0; i < ss->nreads; i++)
		if (ss->reads[i].tensor == t)
			return ts_ctx_set_error(sch->ctx, "stage '%s': '%s' is "
				"already cached", ss->stage->name, t->name);
	if (ss->attach == TS_ATTACH_INLINE)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cannot cache "
			"the reads of an inlined stage", ss->stage->name);
	ss->reads = ts_grow(ss->reads, sizeof(*r), ss->nreads, ss->nreads + 1);
	r = &ss->reads[ss->nreads++];
	r->tensor = t;
	r->loop = st->loop;
	r->nperm = st->nperm;
	memcpy(r->perm, st->perm, sizeof(r->perm));
	return TS_OK;
}

/* Step "st" of kind rfactor on "ss". */
static ts_status rfactor_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	int p = need_loop(sch->ctx, ss, st->loop);
	const char *n = ss->stage->name;

	if (p < 0)
		return TS_ERROR;
	if (!ss->loops[ss->order[p]].reduce)
		return ts_ctx_set_error(sch->ctx, "stage '%s': rfactor of '%s': "
			"not a reduction loop", n, st->loop);
	if (ss->rfactor)
		return ts_ctx_set_error(sch->ctx, "stage '%s': rfactor already "
			"applied to '%s'", n, ss->rfactor);
	if (ss->stage->ndim >= TS_MAX_DIMS)
		return ts_ctx_set_error(sch->ctx, "stage '%s': rfactor needs a "
			"dimension for '%s'; the stage already has %d", n,
			st->loop, TS_MAX_DIMS);
	if (ss->cache_write)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_write and "
			"rfactor do not combine", n);
	ss->rfactor = st->loop;
	return TS_OK;
}

/* Whether loop "l" of "ss" counts as a reduction loop (rfactor makes its
 * loop a dimension of the partial results). */
static bool loop_is_reduce(const ts_sched_stage *ss, const ts_sched_loop *l)
{
	return l->reduce && !(ss->rfactor && strcmp(ss->rfactor, l->name) == 0);
}

/* Why the loop "name" of "ss" cannot head a tensorized nest (see
 * TS_STEP_TENSORIZE), or NULL: it and the two loops after it are the
 * innermost, two spatial loops of 16 and a reduction loop of 16. */
static const char *tensorize_misfit(const ts_sched_stage *ss,
	const char *name)
{
	int p = ts_sched_stage_loop_pos(ss, name);

	if (p < 0)
		return ts_asprintf("no loop '%s' (loops: %s)", name,
			loop_list(ss));
	if (p + 3 != ss->norder)
		return ts_asprintf("'%s' is not the third innermost loop "
			"(loops: %s)", name, loop_list(ss));
	for (int q = p; q < p + 3; q++) {
		const ts_sched_loop *l = &ss->loops[ss->order[q]];
		if (l->extent != 16)
			return ts_asprintf("loop '%s' has %" PRId64 " iterations, "
				"not 16", l->name, l->extent);
		if (loop_is_reduce(ss, l) != (q == p + 2))
			return ts_asprintf("loop '%s' %s a reduction loop",
				l->name, q == p + 2 ? "is not" : "is");
	}
	return NULL;
}

/* Step "st" of kind tensorize on "ss". */
static ts_status tensorize_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	const char *why = tensorize_misfit(ss, st->loop);

	if (why)
		return ts_ctx_set_error(sch->ctx, "stage '%s': tensorize at "
			"'%s': %s", ss->stage->name, st->loop, why);
	if (ss->tensorize)
		return ts_ctx_set_error(sch->ctx, "stage '%s': tensorize "
			"already applied at '%s'", ss->stage->name,
			ss->tensorize);
	ss->tensorize = st->loop;
	return TS_OK;
}

/* Steps "st" that annotate one loop of "ss": parallel, vectorize,
 * unroll, bind. */
static ts_status annotate_apply(ts_schedule *sch, ts_sched_stage *ss,
	const ts_step *st)
{
	int p = need_loop(sch->ctx, ss, st->loop);
	const char *n = ss->stage->name;
	ts_sched_loop *l;

	if (p < 0)
		return TS_ERROR;
	l = &ss->loops[ss->order[p]];
	switch (st->kind) {
	case TS_STEP_PARALLEL:
		if (loop_is_reduce(ss, l))
			return ts_ctx_set_error(sch->ctx, "stage '%s': cannot "
				"parallelise reduction loop '%s'", n, l->name);
		l->kind = TS_LOOP_PARALLEL;
		return TS_OK;
	case TS_STEP_VECTORIZE:
		if (loop_is_reduce(ss, l))
			return ts_ctx_set_error(sch->ctx, "stage '%s': cannot "
				"vectorize reduction loop '%s'", n, l->name);
		if (p != ss->norder - 1)
			return ts_ctx_set_error(sch->ctx, "stage '%s': cannot "
				"vectorize '%s': it is not the innermost loop "
				"('%s' is)", n, l->name,
				ss->loops[ss->order[ss->norder - 1]].name);
		if (ss->nested_reduce)
			return ts_ctx_set_error(sch->ctx, "stage '%s': cannot "
				"vectorize '%s': the reductions of the body "
				"run inside it", n, l->name);
		l->kind = TS_LOOP_VECTORIZED;
		return TS_OK;
	case TS_STEP_UNROLL:
		l->kind = TS_LOOP_UNROLLED;
		return TS_OK;
	default:
		if (st->bind <= TS_BIND_NONE || st->bind >= TS_BIND_COUNT)
			return ts_ctx_set_error(sch->ctx, "stage '%s': bind of "
				"'%s': unknown binding %d", n, l->name,
				(int)st->bind);
		l->kind = TS_LOOP_BOUND;
		l->bind = st->bind;
		return TS_OK;
	}
}

static const struct ts_step_ops step_ops[TS_STEP_KIND_COUNT] = {
	[TS_STEP_SPLIT] = { "SP", "split", split_apply,
		ts_step_split_print, ts_step_split_to_json,
		ts_step_split_from_json },
	[TS_STEP_REORDER] = { "RE", "reorder", reorder_apply,
		ts_step_reorder_print, ts_step_reorder_to_json,
		ts_step_reorder_from_json },
	[TS_STEP_FUSE] = { "FU", "fuse", fuse_apply,
		ts_step_fuse_print, ts_step_fuse_to_json,
		ts_step_fuse_from_json },
	[TS_STEP_COMPUTE_AT] = { "CA", "compute_at", compute_at_apply,
		ts_step_target_loop_print, ts_step_target_loop_to_json,
		ts_step_target_loop_from_json },
	[TS_STEP_COMPUTE_INLINE] = { "CI", "compute_inline", inline_apply,
		ts_step_plain_print, ts_step_plain_to_json,
		ts_step_plain_from_json },
	[TS_STEP_COMPUTE_ROOT] = { "CR", "compute_root", root_apply,
		ts_step_plain_print, ts_step_plain_to_json,
		ts_step_plain_from_json },
	[TS_STEP_CACHE_WRITE] = { "CW", "cache_write", cache_write_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
	[TS_STEP_CACHE_READ] = { "CRD", "cache_read", cache_read_apply,
		ts_step_cache_read_print, ts_step_cache_read_to_json,
		ts_step_cache_read_from_json },
	[TS_STEP_RFACTOR] = { "RF", "rfactor", rfactor_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
	[TS_STEP_PARALLEL] = { "PA", "parallel", annotate_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
	[TS_STEP_VECTORIZE] = { "VE", "vectorize", annotate_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
	[TS_STEP_UNROLL] = { "UR", "unroll", annotate_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
	[TS_STEP_BIND] = { "BI", "bind", annotate_apply,
		ts_step_bind_print, ts_step_bind_to_json,
		ts_step_bind_from_json },
	[TS_STEP_TENSORIZE] = { "TZ", "tensorize", tensorize_apply,
		ts_step_loop_print, ts_step_loop_to_json,
		ts_step_loop_from_json },
};

const struct ts_step_ops *ts_step_ops_of(ts_step_kind k)
{
	return (unsigned)k < TS_STEP_KIND_COUNT ? &step_ops[k] : NULL;
}

const char *ts_step_kind_name(ts_step_kind k)
{
	return (unsigned)k < TS_STEP_KIND_COUNT ? step_ops[k].name : "?";
}

const char *ts_step_tag(ts_step_kind k)
{
	return (unsigned)k < TS_STEP_KIND_COUNT ? step_ops[k].tag : "?";
}

/* Return a copy of "st" that owns its strings and lists. */
static ts_step step_copy(const ts_step *st)
{
	ts_step c = *st;

	c.stage = ts_strdup(st->stage);
	c.loop = ts_strdup(st->loop);
	c.loop2 = ts_strdup(st->loop2);
	c.target = ts_strdup(st->target);
	c.loops = ts_new_array(const char *, st->nloops + 1);
	for (int i = 0; i < st->nloops; i++)
		c.loops[i] = ts_strdup(st->loops[i]);
	return c;
}

ts_status ts_schedule_apply(ts_schedule *sch, const ts_step *step)
{
	ts_sched_stage tmp;
	ts_step st;
	int s;

	if (!sch || !step)
		return TS_ERROR;
	if ((unsigned)step->kind >= TS_STEP_KIND_COUNT)
		return ts_ctx_set_error(sch->ctx, "schedule: unknown step kind "
			"%d", (int)step->kind);
	if ((s = need_stage(sch, step->stage)) < 0)
		return TS_ERROR;
	st = step_copy(step);
	stage_copy(&tmp, &sch->stages[s]);
	if (step_ops[st.kind].apply(sch, &tmp, &st) < 0)
		return TS_ERROR;
	sch->stages[s] = tmp;
	sch->steps = ts_grow(sch->steps, sizeof(ts_step), sch->nsteps,
		sch->nsteps + 1);
	sch->steps[sch->nsteps++] = st;
	return TS_OK;
}

/* Apply a step of "kind" on "stage" with the given fields. */
static ts_status apply_simple(ts_schedule *sch, ts_step_kind kind,
	const char *stage, const char *loop, const char *target)
{
	ts_step st = { .kind = kind, .stage = stage, .loop = loop,
		.target = target };

	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_split(ts_schedule *sch, const char *stage,
	const char *loop, int64_t factor, ts_tail tail)
{
	ts_step st = { .kind = TS_STEP_SPLIT, .stage = stage, .loop = loop,
		.factor = factor, .tail = tail };

	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_reorder(ts_schedule *sch, const char *stage, int n,
	const char *const *loops)
{
	ts_step st = { .kind = TS_STEP_REORDER, .stage = stage, .nloops = n,
		.loops = (const char **)loops };

	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_fuse(ts_schedule *sch, const char *stage,
	const char *outer, const char *inner)
{
	ts_step st = { .kind = TS_STEP_FUSE, .stage = stage, .loop = outer,
		.loop2 = inner };

	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_compute_at(ts_schedule *sch, const char *stage,
	const char *consumer, const char *loop)
{
	return apply_simple(sch, TS_STEP_COMPUTE_AT, stage, loop, consumer);
}

ts_status ts_schedule_compute_inline(ts_schedule *sch, const char *stage)
{
	return apply_simple(sch, TS_STEP_COMPUTE_INLINE, stage, NULL, NULL);
}

ts_status ts_schedule_compute_root(ts_schedule *sch, const char *stage)
{
	return apply_simple(sch, TS_STEP_COMPUTE_ROOT, stage, NULL, NULL);
}

ts_status ts_schedule_cache_write(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_CACHE_WRITE, stage, loop, NULL);
}

ts_status ts_schedule_cache_read(ts_schedule *sch, const char *stage,
	const char *tensor, const char *loop, int nperm, const int *perm)
{
	ts_step st = { .kind = TS_STEP_CACHE_READ, .stage = stage,
		.loop = loop, .target = tensor, .nperm = nperm };

	if (nperm < 0 || nperm > TS_MAX_DIMS)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_read of "
			"'%s': bad layout rank %d", stage, tensor, nperm);
	for (int i = 0; i < nperm; i++)
		st.perm[i] = perm[i];
	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_rfactor(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_RFACTOR, stage, loop, NULL);
}

ts_status ts_schedule_parallel(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_PARALLEL, stage, loop, NULL);
}

ts_status ts_schedule_vectorize(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_VECTORIZE, stage, loop, NULL);
}

ts_status ts_schedule_unroll(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_UNROLL, stage, loop, NULL);
}

ts_status ts_schedule_bind(ts_schedule *sch, const char *stage,
	const char *loop, ts_bind bind)
{
	ts_step st = { .kind = TS_STEP_BIND, .stage = stage, .loop = loop,
		.bind = bind };

	return ts_schedule_apply(sch, &st);
}

ts_status ts_schedule_tensorize(ts_schedule *sch, const char *stage,
	const char *loop)
{
	return apply_simple(sch, TS_STEP_TENSORIZE, stage, loop, NULL);
}

/* Whether loop "l" of "ss" derives from loop "anc" (or is it). */
static bool loop_descends(const ts_sched_stage *ss, int l, int anc)
{
	if (l == anc)
		return true;
	for (int r = 0; r < ss->nrels; r++) {
		const ts_sched_rel *rel = &ss->rels[r];
		if (rel->fuse && rel->parent == l &&
		    (loop_descends(ss, rel->outer, anc) ||
		     loop_descends(ss, rel->inner, anc)))
			return true;
		if (!rel->fuse && (rel->outer == l || rel->inner == l) &&
		    loop_descends(ss, rel->parent, anc))
			return true;
	}
	return false;
}

/* Check that the attach loop "loop" of "ss" (a loop of "t") exists and
 * is not vectorized; "what" names the step. */
static ts_status check_attach_loop(const ts_schedule *sch,
	const ts_sched_stage *ss, const ts_sched_stage *t, const char *loop,
	const char *what)
{
	int l = ts_sched_stage_find_loop(t, loop);

	if (l < 0)
		return ts_ctx_set_error(sch->ctx, "stage '%s': %s loop '%s' of "
			"'%s' no longer exists (loops: %s)", ss->stage->name,
			what, loop, t->stage->name, loop_list(t));
	if (t->loops[l].kind == TS_LOOP_VECTORIZED)
		return ts_ctx_set_error(sch->ctx, "stage '%s': %s loop '%s' of "
			"'%s' is vectorized", ss->stage->name, what, loop,
			t->stage->name);
	return TS_OK;
}

/* Check the cache_read "rd" of "ss": its loop exists, and the tensor is
 * not computed at a loop (its region would not exist yet there). */
static ts_status check_read(const ts_schedule *sch, const ts_sched_stage *ss,
	const ts_sched_read *rd)
{
	const ts_tensor *t = rd->tensor;
	int j = t->stage ? ts_dag_stage_index(sch->dag, t->stage) : -1;

	if (check_attach_loop(sch, ss, ss, rd->loop, "cache_read") < 0)
		return TS_ERROR;
	if (j >= 0 && sch->stages[j].attach == TS_ATTACH_AT)
		return ts_ctx_set_error(sch->ctx, "stage '%s': cache_read of "
			"'%s', which is computed at a loop of '%s'",
			ss->stage->name, t->name, sch->dag->stages[
			sch->stages[j].attach_stage]->name);
	return TS_OK;
}

/* Check the partitioned splits of "ss": the outer loop stays a loop and
 * every loop made from the inner one stays inside it. */
static ts_status check_partitions(const ts_schedule *sch,
	const ts_sched_stage *ss)
{
	for (int r = 0; r < ss->nrels; r++) {
		const ts_sched_rel *rel = &ss->rels[r];
		int po;

		if (rel->fuse || rel->tail != TS_TAIL_PARTITION)
			continue;
		po = ts_sched_stage_loop_pos(ss, ss->loops[rel->outer].name);
		if (po < 0)
			return ts_ctx_set_error(sch->ctx, "stage '%s': '%s' "
				"splits a partitioned tail: it must stay one "
				"loop", ss->stage->name,
				ss->loops[rel->outer].name);
		for (int p = 0; p < po; p++)
			if (loop_descends(ss, ss->order[p], rel->inner))
				return ts_ctx_set_error(sch->ctx, "stage '%s': "
					"loop '%s' must stay inside '%s' (a "
					"partitioned split)", ss->stage->name,
					ss->loops[ss->order[p]].name,
					ss->loops[rel->outer].name);
	}
	return TS_OK;
}

/* Check the loops of "ss": vectorized loops innermost, cache_write
 * outside every reduction loop, a tensorized nest still innermost and
 * 16 x 16 x 16. */
static ts_status check_loops(const ts_schedule *sch, const ts_sched_stage *ss)
{
	const char *n = ss->stage->name, *why;

	for (int p = 0; p < ss->norder; p++) {
		const ts_sched_loop *l = &ss->loops[ss->order[p]];
		if (l->kind == TS_LOOP_VECTORIZED && p != ss->norder - 1)
			return ts_ctx_set_error(sch->ctx, "stage '%s': "
				"vectorized loop '%s' is not innermost", n,
				l->name);
		if (l->kind == TS_LOOP_PARALLEL && loop_is_reduce(ss, l))
			return ts_ctx_set_error(sch->ctx, "stage '%s': cannot "
				"parallelise reduction loop '%s'", n, l->name);
	}
	if (ss->cache_write) {
		int w = ts_sched_stage_loop_pos(ss, ss->cache_write);
		if (check_attach_loop(sch, ss, ss, ss->cache_write,
		    "cache_write") < 0)
			return TS_ERROR;
		for (int p = 0; p <= w; p++)
			if (ss->loops[ss->order[p]].reduce)
				return ts_ctx_set_error(sch->ctx, "stage '%s': "
					"cache_write at '%s' needs every "
					"reduction loop inside it ('%s' is not)",
					n, ss->cache_write,
					ss->loops[ss->order[p]].name);
	}
	if (ss->rfactor && ts_sched_stage_find_loop(ss, ss->rfactor) < 0)
		return ts_ctx_set_error(sch->ctx, "stage '%s': rfactor loop "
			"'%s' no longer exists (loops: %s)", n, ss->rfactor,
			loop_list(ss));
	if (ss->tensorize && (why = tensorize_misfit(ss, ss->tensorize)))
		return ts_ctx_set_error(sch->ctx, "stage '%s': tensorize at "
			"'%s': %s", n, ss->tensorize, why);
	for (int i = 0; i < ss->nreads; i++)
		if (check_read(sch, ss, &ss->reads[i]) < 0)
			return TS_ERROR;
	return check_partitions(sch, ss);
}

/* Check where "ss" is computed. */
static ts_status check_attach(const ts_schedule *sch, const ts_sched_stage *ss)
{
	const ts_sched_stage *t;

	if (ss->attach != TS_ATTACH_AT)
		return TS_OK;
	t = &sch->stages[ss->attach_stage];
	if (t->attach == TS_ATTACH_INLINE)
		return ts_ctx_set_error(sch->ctx, "stage '%s': compute_at "
			"target '%s' is inlined", ss->stage->name,
			t->stage->name);
	if (t->rfactor)
		return ts_ctx_set_error(sch->ctx, "stage '%s': compute_at "
			"target '%s' has an rfactor", ss->stage->name,
			t->stage->name);
	if (!consumers_see(sch, ts_dag_stage_index(sch->dag, ss->stage),
	    ss->attach_stage, ss->attach_loop))
		return ts_ctx_set_error(sch->ctx, "stage '%s': computed at "
			"loop '%s' of '%s', but a consumer of it is neither "
			"that stage nor computed at that loop",
			ss->stage->name, ss->attach_loop, t->stage->name);
	return check_attach_loop(sch, ss, t, ss->attach_loop, "compute_at");
}

ts_status ts_schedule_check(const ts_schedule *sch)
{
	if (!sch)
		return TS_ERROR;
	for (int i = 0; i < sch->dag->nstages; i++) {
		const ts_sched_stage *ss = &sch->stages[i];
		if (ss->attach == TS_ATTACH_INLINE)
			continue;
		if (check_attach(sch, ss) < 0 || check_loops(sch, ss) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}
