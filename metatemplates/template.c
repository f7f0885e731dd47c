/* Meta-templates for CPUs: from the analysis of a DAG to a knob space,
 * and from a configuration to a schedule.
 *
 * Each stage is decided by the rule table of metatemplates/rules.c (in
 * the order written there); the CPU's actions below say what each
 * decision becomes here:
 *
 *	nested		PLAIN: spatial tiling only ("SS")
 *	inline		INLINE
 *	location	LOCATION: root, inline, or at a loop of its consumer
 *	complex		TILE "SSRSRS" (+ packing knobs; a fusion knob when
 *			its only effective consumer is elementwise)
 *	simple		TILE "SSRRS" (+ rfactor vectorisation)
 *	direct		TILE "SS"
 */
#include <config.h>

#include <inttypes.h>

#include <tessel/gpu.h>
#include <tessel/metatemplate.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "analysis/facts.h"
#include "metatemplates/rules.h"

static const char *rule_names[TS_RULE_COUNT] = {
	[TS_RULE_INLINE] = "inline", [TS_RULE_TILE] = "tile",
	[TS_RULE_LOCATION] = "location",
	[TS_RULE_PLAIN] = "plain", [TS_RULE_REDUCE] = "reduce",
};

const char *ts_rule_name(ts_rule r)
{
	return (unsigned)r < TS_RULE_COUNT ? rule_names[r] : "?";
}

/* Where a location-tunable stage goes. */
enum { AT_ROOT, AT_INLINE, AT_OUTER, AT_INNER, AT_COUNT };
static const char *const at_names[AT_COUNT] = {
	"root", "inline", "outer", "inner",
};

/* Where an input is packed. */
enum { PACK_NONE, PACK_OUTER, PACK_INNER, PACK_COUNT };
static const char *const pack_names[PACK_COUNT] = {
	"none", "outer", "inner",
};

/* Whether stage "s" of the template "arg" becomes inlined. */
static bool is_inlined(const void *arg, int s)
{
	const ts_template *tp = arg;

	return tp->plans[s].rule == TS_RULE_INLINE;
}

/* Whether every load of "si" walks reduction axis "r" with stride 0 or 1
 * (then a vector can run along it). */
static bool reduce_is_contiguous(const ts_stage_info *si, int r)
{
	bool some = false;

	for (int k = 0; k < si->naccesses; k++) {
		int64_t st = si->accesses[k].stride[r];
		if (si->accesses[k].write)
			continue;
		if (st != 0 && st != 1)
			return false;
		some |= st == 1;
	}
	return some;
}

/* Whether the innermost reduction axis of simple reduction "p" can be
 * vectorized through rfactor: every load walks it with stride 0 or 1,
 * and, when other reduction axes surround it, it fills two vectors of
 * the target at least (a sum over a whole matrix vectorizes its rows; a
 * 3x3 window does not). */
static bool rfvec_fits(const ts_template *tp, const ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int last = s->ndim + p->nreduce - 1;

	if (p->nreduce < 1 || !reduce_is_contiguous(tp->info->stages[p->stage],
	    last))
		return false;
	return p->nreduce == 1 || ts_stage_axis(s, last)->extent >=
		2 * ts_target_lanes(tp->target, s->body->dtype);
}

/* Add the knobs of a tiled stage "p" to "tp"'s space. */
static ts_status add_tile_knobs(ts_template *tp, ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage_info *si = tp->info->stages[p->stage];
	ts_space *sp = tp->space;
	const char *vec[TS_MAX_AXES + 1];
	int nvec = 0, wr = si->naccesses - 1;

	p->nlevels = (int)strlen(p->structure);
	for (int l = 0; l < p->nlevels; l++) {
		if (p->structure[l] == 'S')
			p->nslevels++;
		else
			p->nrlevels++;
	}
	p->nspatial = s->ndim;
	p->nreduce = p->rule == TS_RULE_PLAIN ? 0 : s->nraxes;
	for (int a = 0; a < p->nspatial + p->nreduce; a++) {
		const ts_axis *ax = ts_stage_axis(s, a);
		int levels = a < s->ndim ? p->nslevels : p->nrlevels;
		/* An axis of extent 0 (an empty stage, or a reduction
		 * giving its identity) splits like one of extent 1: every
		 * factor is 1 and its loops run zero times. */
		p->split[a] = ts_space_add_split(sp, ts_asprintf("%s.%s",
			s->name, ax->name), TS_MAX(ax->extent, 1), levels,
			false);
		if (p->split[a] < 0)
			return TS_ERROR;
	}
	/* The vector axis: the contiguous axis of the write first. */
	p->vec_default = -1;
	if (wr >= 0 && si->accesses[wr].write &&
	    si->accesses[wr].contiguous_axis >= 0 &&
	    si->accesses[wr].contiguous_axis < s->ndim)
		p->vec_default = si->accesses[wr].contiguous_axis;
	/* A stage whose reductions run inside its spatial loops has no
	 * loop a vector can cover. */
	if (p->rule == TS_RULE_PLAIN)
		p->vec_default = -1;
	if (p->vec_default >= 0)
		vec[nvec++] = s->axes[p->vec_default]->name;
	for (int a = 0; a < s->ndim && p->rule != TS_RULE_PLAIN; a++)
		if (a != p->vec_default)
			vec[nvec++] = s->axes[a]->name;
	vec[nvec++] = "none";
	p->knob_vec = ts_space_add_choice(sp, ts_asprintf("%s.vec", s->name),
		nvec, vec);
	/* 0: serial (small stages lose more to waking threads than they
	 * gain). */
	p->knob_par = ts_space_add_int(sp, ts_asprintf("%s.par", s->name),
		0, s->ndim);
	p->knob_unroll = ts_space_add_bool(sp,
		ts_asprintf("%s.unroll", s->name));
	p->knob_cache_write = -1;
	if (p->nrlevels > 0)
		p->knob_cache_write = ts_space_add_bool(sp,
			ts_asprintf("%s.cache_write", s->name));
	p->knob_rfvec = -1;
	if (p->klass == TS_CLASS_SIMPLE_REDUCTION && rfvec_fits(tp, p))
		p->knob_rfvec = ts_space_add_bool(sp,
			ts_asprintf("%s.rfvec", s->name));
	return p->knob_vec < 0 || p->knob_par < 0 ? TS_ERROR : TS_OK;
}

/* Add packing knobs for the inputs of complex reduction "p" that carry
 * reuse and are read under the reduction: a packed copy of the region a
 * tile reads is contiguous where the tensor is strided. */
static void add_pack_knobs(ts_template *tp, ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage_info *si = tp->info->stages[p->stage];

	for (int i = 0; i < s->ninputs && p->npack < TS_MAX_DIMS; i++) {
		bool reuse = false, affine = true;
		for (int k = 0; k < si->naccesses; k++) {
			const ts_access_info *ac = &si->accesses[k];
			if (ac->write || ac->tensor != s->inputs[i])
				continue;
			affine &= ac->affine && !ac->guarded;
			for (int a = 0; a < s->ndim; a++)
				reuse |= ac->reuse[a];
		}
		if (!reuse || !affine || s->inputs[i]->ndim < 2)
			continue;
		p->pack_input[p->npack] = i;
		p->knob_pack[p->npack++] = ts_space_add_choice(tp->space,
			ts_asprintf("%s.pack.%s", s->name, s->inputs[i]->name),
			PACK_COUNT, pack_names);
	}
}

/* The CPU's actions for the decisions of the rule table. */
static ts_stage_plan *plan_of(void *arg, int s)
{
	return &((ts_template *)arg)->plans[s];
}

static void tile(void *arg, int s, ts_rule rule, const char *structure)
{
	ts_stage_plan *p = plan_of(arg, s);

	p->rule = rule;
	p->structure = structure;
}

static void act_nested(void *tp, int s)
{
	tile(tp, s, TS_RULE_PLAIN, "SS");
}

static void act_inline(void *tp, int s)
{
	plan_of(tp, s)->rule = TS_RULE_INLINE;
}

static void act_location(void *arg, int s)
{
	ts_template *tp = arg;

	tp->plans[s].rule = TS_RULE_LOCATION;
	tp->plans[s].at_consumer = tp->dag->consumers[s][0];
}

static void act_complex(void *tp, int s)
{
	tile(tp, s, TS_RULE_TILE, "SSRSRS");
}

static void act_simple(void *tp, int s)
{
	tile(tp, s, TS_RULE_TILE, "SSRRS");
}

static void act_direct(void *tp, int s)
{
	tile(tp, s, TS_RULE_TILE, "SS");
}

static const ts_rule_ops cpu_ops = {
	"cpu", TS_RULES_CPU, {
		[TS_DECIDE_NESTED] = act_nested,
		[TS_DECIDE_INLINE] = act_inline,
		[TS_DECIDE_LOCATION] = act_location,
		[TS_DECIDE_COMPLEX] = act_complex,
		[TS_DECIDE_SIMPLE] = act_simple,
		[TS_DECIDE_DIRECT] = act_direct,
	},
};

void ts_stage_plan_init(ts_stage_plan *p, const ts_template *tp, int s)
{
	p->stage = s;
	p->klass = tp->info->stages[s]->klass;
	p->nspatial = tp->dag->stages[s]->ndim;
	p->nreduce = tp->dag->stages[s]->nraxes;
	/* Every knob absent until an action adds it: an inlined stage has
	 * none, and a knob index left at 0 would name the first knob of
	 * the space (ts_template_default once set a split of another
	 * stage to 1 through it, and the model rated a nest of one row). */
	p->knob_vec = p->knob_par = p->knob_unroll = -1;
	p->knob_cache_write = p->knob_fuse = p->knob_at = -1;
	p->knob_rfvec = p->knob_rows = -1;
	for (int a = 0; a < TS_MAX_AXES; a++)
		p->split[a] = -1;
	p->knob_threads = p->knob_cross = p->knob_rthreads = -1;
	p->knob_tc = -1;
	for (int k = 0; k < 3; k++)
		p->tc_split[k] = -1;
	p->fuse_consumer = p->fused_into = p->at_consumer = -1;
	p->row_host = -1;
}

/* Decide stage "s" by the rule table. */
static void choose_rule(ts_template *tp, int s)
{
	ts_stage_plan *p = &tp->plans[s];

	ts_stage_plan_init(p, tp, s);
	p->decided_by = ts_rule_decide(&cpu_ops, tp, tp->dag, tp->info,
		s)->name;
}

/* Whether every load of tensor "t" in the body "e" of stage "c"
 * indexes its first "m" dimensions by the first "m" axes of "c", in
 * order, and its others by none of them. */
static bool loads_row_aligned(const ts_expr *e, const ts_tensor *t,
	const ts_stage *c, int m)
{
	if (!e)
		return true;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t)
		for (int d = 0; d < e->nargs; d++)
			for (int a = 0; a < m; a++) {
				bool same = e->args[d]->kind == TS_EXPR_VAR &&
					e->args[d]->axis == c->axes[a];
				if (d == a ? !same : ts_expr_uses_axis(
				    e->args[d], c->axes[a]))
					return false;
			}
	for (int i = 0; i < e->nargs; i++)
		if (!loads_row_aligned(e->args[i], t, c, m))
			return false;
	return loads_row_aligned(e->a, t, c, m) &&
		loads_row_aligned(e->b, t, c, m) &&
		loads_row_aligned(e->c, t, c, m);
}

/* Whether stage "s" may join a row group of "m" leading axes of extents
 * those of stage "h": a tiled direct stage or simple reduction of its
 * own, not an output, with those axes first, that reads every tensor
 * row by row (a stage that reads a whole matrix for each row of its
 * output does not do a row's work). */
static bool row_candidate(const ts_template *tp, int s, const ts_stage *h,
	int m)
{
	const ts_stage_plan *p = &tp->plans[s];
	const ts_stage *st = tp->dag->stages[s];

	if (p->rule != TS_RULE_TILE || p->fused_into >= 0 ||
	    p->knob_fuse >= 0 || p->row_host >= 0 || p->knob_rows >= 0 ||
	    (p->klass != TS_CLASS_DIRECT &&
	    p->klass != TS_CLASS_SIMPLE_REDUCTION) ||
	    ts_dag_is_output(tp->dag, st->out) || st->ndim < m)
		return false;
	for (int a = 0; a < m; a++)
		if (st->axes[a]->extent != h->axes[a]->extent)
			return false;
	for (int i = 0; i < st->ninputs; i++)
		if (!loads_row_aligned(st->body, st->inputs[i], st, m))
			return false;
	return true;
}

/* Give host "h" its row group: the stages before it whose every
 * consumer is "h" or another of them, each reading them row by row (a
 * row's maximum, an elementwise function of the row and that row's sum;
 * a row's mean and the sum of squares about it), so that one tile of
 * rows of "h" computes
 * them all while the rows are in the core's first cache.  The group
 * needs a reduction in it; the knob "h.rows" decides. */
static void add_row_group(ts_template *tp, int h)
{
	const ts_dag *dag = tp->dag;
	const ts_stage *hs = dag->stages[h];
	ts_stage_plan *hp = &tp->plans[h];
	int m = hs->ndim - 1, nred = 0;
	bool *in = ts_new_atomic(bool, dag->nstages + 1), changed = true;

	if (hp->rule != TS_RULE_TILE || (hp->klass != TS_CLASS_DIRECT &&
	    hp->klass != TS_CLASS_LOCATION_TUNABLE) ||
	    hp->fused_into >= 0 || hp->row_host >= 0 || m < 1 ||
	    strcmp(hp->structure, "SS") != 0)
		return;
	for (int s = 0; s < h; s++)
		in[s] = row_candidate(tp, s, hs, m);
	/* Out goes every stage with a consumer outside, until none. */
	while (changed) {
		changed = false;
		for (int s = 0; s < h; s++)
			for (int k = 0; in[s] && k < dag->nconsumers[s]; k++) {
				int c = dag->consumers[s][k];
				if ((c == h || in[c]) && loads_row_aligned(
				    dag->stages[c]->body, dag->stages[s]->out,
				    dag->stages[c], m))
					continue;
				in[s] = false;
				changed = true;
			}
	}
	for (int s = 0; s < h; s++)
		nred += in[s] && tp->plans[s].klass ==
			TS_CLASS_SIMPLE_REDUCTION;
	if (nred == 0)
		return;
	for (int s = 0; s < h; s++)
		if (in[s])
			tp->plans[s].row_host = h;
	hp->nrow_axes = m;
	hp->knob_rows = ts_space_add_bool(tp->space, ts_asprintf("%s.rows",
		hs->name));
}

/* Whether "tp" was made for a GPU (metatemplates/gpu.c fills it). */
static bool on_gpu(const ts_template *tp)
{
	return tp->target && tp->target->kind == TS_TARGET_GPU;
}

ts_template *ts_template_new(ts_ctx *ctx, const ts_dag *dag,
	const ts_dag_info *info, const ts_target *target)
{
	ts_template *tp;
	int n = dag->nstages;

	if (target && target->kind == TS_TARGET_GPU)
		return ts_gpu_template_new(ctx, dag, info, target);
	tp = ts_new(ts_template);
	tp->ctx = ctx;
	tp->dag = dag;
	tp->info = info;
	tp->target = target;
	tp->space = ts_space_new(ctx, dag->name);
	tp->plans = ts_new_array(ts_stage_plan, n + 1);
	/* Producers first: inlining decisions feed effective consumers. */
	for (int s = n - 1; s >= 0; s--)
		choose_rule(tp, s);
	for (int s = 0; s < n; s++) {
		ts_stage_plan *p = &tp->plans[s];
		int c;
		if (p->rule != TS_RULE_TILE && p->rule != TS_RULE_PLAIN)
			continue;
		if (add_tile_knobs(tp, p) < 0)
			return NULL;
		if (p->klass != TS_CLASS_COMPLEX_REDUCTION)
			continue;
		add_pack_knobs(tp, p);
		c = ts_dag_effective_consumer(tp->dag, s, is_inlined, tp);
		/* The tile of the anchor is computed at its consumer's; a
		 * consumer reached through inlined elementwise stages (a bias,
		 * then an activation) reads it at the same indices through
		 * them, which compute_at and lowering follow. */
		if (c >= 0 && tp->plans[c].rule == TS_RULE_TILE &&
		    tp->plans[c].klass != TS_CLASS_COMPLEX_REDUCTION &&
		    tp->plans[c].klass != TS_CLASS_SIMPLE_REDUCTION &&
		    tp->plans[c].fused_into < 0) {
			p->fuse_consumer = c;
			tp->plans[c].fused_into = s;
			p->knob_fuse = ts_space_add_bool(tp->space,
				ts_asprintf("%s.fuse", dag->stages[s]->name));
		}
	}
	for (int s = n - 1; s >= 0; s--)
		add_row_group(tp, s);
	for (int s = 0; s < n; s++) {
		ts_stage_plan *p = &tp->plans[s];
		if (p->rule != TS_RULE_LOCATION)
			continue;
		p->knob_at = ts_space_add_choice(tp->space,
			ts_asprintf("%s.at", dag->stages[s]->name),
			AT_COUNT, at_names);
	}
	return tp;
}

ts_config *ts_template_default(const ts_template *tp)
{
	ts_config *c;

	if (on_gpu(tp))
		return ts_gpu_template_default(tp);
	c = ts_config_new(tp->space);

	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		if (p->knob_par >= 0 && p->nspatial > 0)
			ts_config_set(c, p->knob_par, 0, 1);
		if (p->knob_unroll >= 0)
			ts_config_set(c, p->knob_unroll, 0, 1);
		if (p->knob_cache_write >= 0)
			ts_config_set(c, p->knob_cache_write, 0, 1);
		if (p->knob_fuse >= 0)
			ts_config_set(c, p->knob_fuse, 0, 1);
		if (p->knob_at >= 0)
			ts_config_set(c, p->knob_at, 0, AT_ROOT);
	}
	return c;
}

ts_config *ts_template_naive(const ts_template *tp)
{
	ts_config *c;

	if (on_gpu(tp))
		return ts_gpu_template_default(tp);
	c = ts_config_new(tp->space);

	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		if ((p->rule == TS_RULE_TILE || p->rule == TS_RULE_PLAIN) &&
		    p->knob_vec >= 0)
			ts_config_set(c, p->knob_vec, 0,
				tp->space->knobs[p->knob_vec]->nchoices - 1);
		if (p->knob_at >= 0)
			ts_config_set(c, p->knob_at, 0, AT_ROOT);
	}
	return c;
}

/* Whether anchor "p" is fused into its consumer under "cfg". */
static bool fused(const ts_stage_plan *p, const ts_config *cfg)
{
	return p->knob_fuse >= 0 && ts_config_get(cfg, p->knob_fuse, 0);
}

/* Whether host "p" computes its row group in its tiles under "cfg". */
static bool rows_on(const ts_stage_plan *p, const ts_config *cfg)
{
	return p->knob_rows >= 0 && ts_config_get(cfg, p->knob_rows, 0);
}

/* The row host "p" is computed at under "cfg", or NULL. */
static const ts_stage_plan *row_host_of(const ts_template *tp,
	const ts_stage_plan *p, const ts_config *cfg)
{
	if (p->row_host < 0 || !rows_on(&tp->plans[p->row_host], cfg))
		return NULL;
	return &tp->plans[p->row_host];
}

/* Whether "p" vectorizes its reduction through rfactor under "cfg". */
static bool rfvec_on(const ts_stage_plan *p, const ts_config *cfg)
{
	return p->knob_rfvec >= 0 && ts_config_get(cfg, p->knob_rfvec, 0);
}

/* The vector axis of "p" under "cfg", or -1. */
static int vec_axis(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg)
{
	const ts_knob *k = tp->space->knobs[p->knob_vec];
	const char *name = k->choices[ts_config_get(cfg, p->knob_vec, 0)];
	const ts_stage *s = tp->dag->stages[p->stage];

	for (int a = 0; a < s->ndim; a++)
		if (!strcmp(s->axes[a]->name, name))
			return a;
	return -1;
}

/* Factors of axis "a" of "p" under "cfg", outermost level first. */
static void factors(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int a, int64_t *f)
{
	const ts_knob *k = tp->space->knobs[p->split[a]];

	for (int l = 0; l < k->nparts; l++)
		f[l] = ts_config_get(cfg, p->split[a], l);
}

/* One axis tiled over levels: the loop name at each of its levels. */
struct tiled_axis {
	int nlevels;
	const char *names[TS_MAX_LEVELS];
	int64_t trip[TS_MAX_LEVELS];
};

/* Split axis "name" of stage "stage" in "sch" into the levels of "ta"
 * (its trips outermost first) and name them in "ta" as the splits do
 * ("i.o", "i.i.o", ...).  Only the outermost split may leave a tail,
 * guarded or, with "partition", run as a loop of its own. */
static ts_status split_axis(ts_schedule *sch, const char *stage,
	const char *name, struct tiled_axis *ta, bool partition)
{
	int n = ta->nlevels;

	for (int l = 0; l < n - 1; l++) {
		int64_t inner = 1;
		ts_tail tail = l == 0 && partition ? TS_TAIL_PARTITION :
			TS_TAIL_GUARD;
		for (int m = l + 1; m < n; m++)
			inner *= ta->trip[m];
		if (ts_schedule_split(sch, stage, name, inner, tail) < 0)
			return TS_ERROR;
		ta->names[l] = ts_asprintf("%s.o", name);
		name = ts_asprintf("%s.i", name);
	}
	ta->names[n - 1] = name;
	return TS_OK;
}

/* Operands of a stage whose registers the register tile's order counts. */
enum { TS_MAX_OPERANDS = 16 };

/* A tiling to apply: which levels of which axes, in which order. */
struct tiling {
	const char *stage;
	const char *structure;	/* letters, outermost first */
	int nspatial, nreduce;
	int64_t f[TS_MAX_AXES][TS_MAX_LEVELS];
	const char *axis_names[TS_MAX_AXES];
	int vec;		/* spatial axis or -1 */
	int npar;		/* outer S loops fused and parallel */
	bool unroll;
	int64_t unroll_max;	/* most iterations unrolled */
	bool cache_write;
	bool rfvec;		/* vectorize the last reduction tile (rfactor) */
	bool at_root;		/* the stage's own nest, not at a consumer */
	int64_t extent[TS_MAX_AXES];
	struct tiled_axis ta[TS_MAX_AXES];
	/* results */
	const char *order[TS_MAX_NEST];
	int order_axis[TS_MAX_NEST];	/* the axis of each loop */
	int order_level[TS_MAX_NEST];	/* its level in "structure" */
	int order_part[TS_MAX_NEST];	/* its level among its axis' */
	int64_t order_trip[TS_MAX_NEST];
	ts_loop_kind kind[TS_MAX_NEST];	/* its annotation */
	int norder;
	int level_last[TS_MAX_LEVELS];	/* position of a level's last loop */
	const char *par_loop;	/* the fused parallel loop, or NULL */
	int partition;		/* the axis whose tail is a loop, or -1 */
	int lanes;		/* of the stage's type on the target */
	int nops;		/* operands (loads) of the stage */
	uint32_t op_dep[TS_MAX_OPERANDS];	/* the spatial axes of each */
};

/* The name of the loop at position "pos" of the order of "t", after the
 * parallel fusion. */
static const char *loop_at(const struct tiling *t, int pos)
{
	if (t->par_loop && pos < t->npar)
		return t->par_loop;
	return t->order[pos];
}

/* The annotations of the loops of "t", in order: the first "npar"
 * fused and parallel, the innermost vectorized (the vector axis at the
 * last spatial level, or the last reduction tile through rfactor) when it
 * has more than one lane, the rest of the register tile unrolled. */
static void tiling_kinds(struct tiling *t)
{
	int nl = (int)strlen(t->structure);
	int last_s = (int)(strrchr(t->structure, 'S') - t->structure);
	const struct tiled_axis *va = t->rfvec ?
		&t->ta[t->nspatial + t->nreduce - 1] :
		t->vec >= 0 ? &t->ta[t->vec] : NULL;

	for (int k = 0; k < t->norder; k++)
		t->kind[k] = TS_LOOP_SERIAL;
	if (t->npar > 0 && t->structure[0] == 'S')
		for (int k = 0; k < t->npar && k < t->norder; k++)
			t->kind[k] = TS_LOOP_PARALLEL;
	/* A vector loop of more lanes than the code generator makes one
	 * vector of stays a loop, for LLVM to vectorize (measured: an
	 * int8 product's accumulators in rows of 128 i32, the fastest of
	 * 24 configurations, which the model rated 240x slower as one
	 * vector of 16 registers). */
	if (va && va->trip[va->nlevels - 1] > 1 &&
	    va->trip[va->nlevels - 1] <= TS_MAX_VECTOR_LANES &&
	    (t->rfvec || (last_s == nl - 1 && last_s > 0)))
		t->kind[t->norder - 1] = TS_LOOP_VECTORIZED;
	if (t->unroll && last_s == nl - 1 && last_s > 0) {
		int lo = t->level_last[last_s - 1] + 1;
		int hi = t->norder - (t->vec >= 0 ? 1 : 0);
		int64_t body = 1;
		for (int k = hi - 1; k >= lo; k--) {
			body *= t->order_trip[k];
			if (body > t->unroll_max)
				break;
			t->kind[k] = TS_LOOP_UNROLLED;
		}
	}
}

/* The most iterations of a register tile that "tp" unrolls: four times
 * the vector registers of its target; the loops of a larger tile are
 * unrolled from the innermost while they fit.  Such a tile spills
 * whatever it holds (the model rates it so) and LLVM's scheduler takes
 * seconds to minutes on it whole (measured: two configurations of a
 * ResNet-18 convolution the tuner drew, 32 x 32 scalars unrolled and a
 * bias stage of as many, did not compile in 100 s; bounded, each
 * compiles and runs in about a second). */
static int64_t unroll_limit(const ts_template *tp)
{
	const ts_target *t = tp->target;
	int regs = t && t->kind == TS_TARGET_CPU &&
		t->cpu.vector_registers > 0 ? t->cpu.vector_registers : 16;

	return 4 * (int64_t)regs;
}

/* What one iteration of the outermost loop of axis "a" of "t" covers:
 * the product of its inner levels. */
static int64_t tile_inner(const struct tiling *t, int a)
{
	int64_t inner = 1;

	for (int l = 1; l < t->ta[a].nlevels; l++)
		inner *= t->ta[a].trip[l];
	return inner;
}

/* Whether axis "a" of "t" can run its tail as a loop of its own: one
 * level below the outermost splits it, its tiles overshoot its extent
 * with at least one whole tile, and its outer loop is not fused into
 * the parallel loop.  The parallel loop itself may be that outer loop
 * when it is the only one and runs two whole tiles or more: they run in
 * parallel, the tail after them (measured on a Zen 4: a product of a 1280-vector by 1280 x
 * 1000 weights in blocks of 16, serial for want of a tail loop on two
 * threads, 0.110 ms; its 62 whole blocks in parallel, 0.06 ms). */
static bool partitionable(const struct tiling *t, int a)
{
	int64_t inner = tile_inner(t, a);
	int k, split = 0, npar = 0;

	for (int l = 1; l < t->ta[a].nlevels; l++)
		split += t->ta[a].trip[l] > 1;
	if (split != 1 || t->extent[a] < inner || t->extent[a] % inner == 0)
		return false;
	for (int q = 0; q < t->norder; q++)
		npar += t->kind[q] == TS_LOOP_PARALLEL;
	for (k = 0; k < t->norder; k++)
		if (t->order_axis[k] == a && t->order_part[k] == 0)
			break;
	return k < t->norder && (t->kind[k] != TS_LOOP_PARALLEL ||
		(npar == 1 && t->extent[a] / inner >= 2));
}

/* The axis of "t" whose tail runs as a loop of its own
 * (TS_TAIL_PARTITION), else -1: the axis of the innermost loop when its
 * tiles overshoot its extent and its tail can so run.  With a guard, the innermost loop tests it at every
 * iteration and LLVM keeps it scalar or masks every vector (measured: a
 * row sum of exp over 1000 columns in vectors of 64 ran 1.8x slower
 * guarded than in vectors of 8 that divide the row).  Only a stage's own
 * nest at root is partitioned, when at least one whole tile runs, the
 * outer loop is not fused into the parallel loop, and one level splits
 * the tile, so that the tail is one loop with no guard of its own (a
 * tail split again keeps guards in its loops: a 1x1 convolution over
 * rows of 56 in tiles of 2 x 16 ran 4x slower with its tail of 24 so
 * split than with every tile guarded).  The tail is a vector of its own
 * width, which LLVM builds lane by lane unless it is a power of two: a
 * tail of another width is taken only when it is at most an eighth of
 * the axis (measured: that 1x1 convolution over rows of 56 in tiles of
 * 32 ran 8.7 ms with its tail of 24, tiles of 16 with a tail of 8 ran
 * 1.06 ms, and 19 ms with every tile guarded).  Where the innermost
 * axis has no tail to partition, a spatial axis of the register tile
 * other than the vector axis may: its tail is a narrower tile of the
 * same vectors, unrolled like the whole ones (a 7 x 7 image in tiles of
 * 4 columns: 4, then 3, where a guard tests every column of the last
 * tile). */
static int partition_axis(const struct tiling *t)
{
	int a;
	int64_t tail;

	if (!t->at_root || t->norder == 0)
		return -1;
	a = t->order_axis[t->norder - 1];
	if (partitionable(t, a)) {
		tail = t->extent[a] % tile_inner(t, a);
		return (tail & (tail - 1)) == 0 || 8 * tail <= t->extent[a] ?
			a : -1;
	}
	for (a = 0; a < t->nspatial; a++)
		if (a != t->vec && t->ta[a].nlevels > 1 &&
		    t->ta[a].trip[t->ta[a].nlevels - 1] > 1 &&
		    partitionable(t, a))
			return a;
	return -1;
}

/* The bit mask of the axes below "naxes" that access "a" depends on. */
static uint32_t access_axes(const ts_access_info *a, int naxes)
{
	uint32_t m = 0;

	for (int x = 0; x < naxes && x < 32; x++)
		if (a->stride[x] != 0)
			m |= 1u << x;
	return m;
}

int64_t ts_tile_operand_registers(int n, const int *axis,
	const int64_t *regs, int nops, const uint32_t *dep)
{
	int64_t total = 0;

	for (int o = 0; o < nops; o++) {
		int64_t live = 1;
		for (int j = 0; j < n; j++) {
			int64_t inside = 1;
			if (regs[j] <= 1 || (dep[o] >> axis[j] & 1))
				continue;
			for (int k = j + 1; k < n; k++)
				if (dep[o] >> axis[k] & 1)
					inside *= regs[k];
			live = inside;
			break;
		}
		total += live;
	}
	return total;
}

/* The operand registers of the loops [lo, norder) of "t" in the order
 * "perm" of the positions [lo, hi) (the rest after, in place). */
static int64_t tile_operand_registers(const struct tiling *t, int lo,
	int hi, const int *perm)
{
	int axis[TS_MAX_NEST];
	int64_t regs[TS_MAX_NEST];
	int n = 0;

	for (int k = lo; k < t->norder; k++) {
		int q = k < hi ? perm[k - lo] : k;
		axis[n] = t->order_axis[q];
		regs[n] = t->order_trip[q];
		if (q == t->norder - 1 && t->order_axis[q] == t->vec)
			regs[n] = (regs[n] + t->lanes - 1) / t->lanes;
		n++;
	}
	return ts_tile_operand_registers(n, axis, regs, t->nops, t->op_dep);
}

static void swap_ints(int *a, int *b)
{
	int x = *a;

	*a = *b;
	*b = x;
}

/* Whether "p" (of "n") is followed by another permutation, made so. */
static bool next_permutation(int *p, int n)
{
	int i = n - 2, j = n - 1;

	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return false;
	while (p[j] <= p[i])
		j--;
	swap_ints(&p[i], &p[j]);
	for (int a = i + 1, b = n - 1; a < b; a++, b--)
		swap_ints(&p[a], &p[b]);
	return true;
}

/* Order the loops of the register tile of "t" (its last spatial level,
 * unrolled whole, the vector loop kept innermost) so that its operands
 * hold the fewest registers at once; the written order where none holds
 * fewer.  An operand that does not depend on an outer loop of the tile
 * keeps every vector it loads in the loops inside that one: a 2 x 14
 * tile of accumulators over (k, h) with vectors along w holds the 14
 * input rows across k, 43 registers of 32, and spills (measured: a 3x3
 * convolution over 64 channels at 56x56, 3.5 ms in that order, 2.2 to
 * 2.4 ms with h outside k). */
static void order_register_tile(struct tiling *t, int lo)
{
	int hi = t->norder - (t->vec >= 0 &&
		t->order_axis[t->norder - 1] == t->vec ? 1 : 0);
	int perm[TS_MAX_NEST], best[TS_MAX_NEST], n = hi - lo;
	int64_t body = 1, best_regs;
	int axis[TS_MAX_NEST], part[TS_MAX_NEST];
	int64_t trip[TS_MAX_NEST];

	for (int k = lo; k < hi; k++)
		body *= t->order_trip[k];
	if (!t->unroll || t->nops == 0 || n < 2 || n > 6 ||
	    body > t->unroll_max)
		return;
	for (int i = 0; i < n; i++)
		perm[i] = best[i] = lo + i;
	best_regs = tile_operand_registers(t, lo, hi, perm);
	while (next_permutation(perm, n)) {
		int64_t r = tile_operand_registers(t, lo, hi, perm);
		if (r < best_regs) {
			best_regs = r;
			memcpy(best, perm, sizeof(int) * n);
		}
	}
	for (int i = 0; i < n; i++) {
		axis[i] = t->order_axis[best[i]];
		part[i] = t->order_part[best[i]];
		trip[i] = t->order_trip[best[i]];
	}
	for (int i = 0; i < n; i++) {
		t->order_axis[lo + i] = axis[i];
		t->order_part[lo + i] = part[i];
		t->order_trip[lo + i] = trip[i];
	}
}

/* Put the loops of the outermost level of "t" that run more than once
 * first, the others after them in the same order: a loop of one
 * iteration does nothing wherever it stands, but the parallel loop is
 * the first (a fused stage's only one), and the batch of an image, one,
 * would otherwise take it (measured: a fused product of 24 terms a
 * point into 56 x 56 x 144 outputs, 0.37 ms on one thread and on two
 * alike). */
static void order_outer_level(struct tiling *t)
{
	int axis[TS_MAX_NEST], part[TS_MAX_NEST], n = 0;
	int64_t trip[TS_MAX_NEST];

	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < t->norder; k++) {
			if ((t->order_trip[k] > 1) != (pass == 0))
				continue;
			axis[n] = t->order_axis[k];
			part[n] = t->order_part[k];
			trip[n++] = t->order_trip[k];
		}
	memcpy(t->order_axis, axis, sizeof(int) * n);
	memcpy(t->order_part, part, sizeof(int) * n);
	memcpy(t->order_trip, trip, sizeof(int64_t) * n);
}

/* Order the loops of "t": per letter of the structure, the axes of that
 * kind in order, the vector axis last at the last spatial level; then
 * annotate them.  Nothing is named and the schedule is not touched (the
 * model asks for this at every rating): apply_tiling makes these loops,
 * and ts_template_nest gives the same loops to the model, so that what
 * is rated is what is scheduled. */
static void order_tiling(struct tiling *t)
{
	int naxes = t->nspatial + t->nreduce, nl = (int)strlen(t->structure);
	int slev = 0, rlev = 0;

	for (int l = 0; l < nl; l++) {
		if (t->structure[l] == 'S')
			slev++;
		else
			rlev++;
	}
	for (int a = 0; a < naxes; a++) {
		struct tiled_axis *ta = &t->ta[a];
		ta->nlevels = a < t->nspatial ? slev : rlev;
		for (int l = 0; l < ta->nlevels; l++)
			ta->trip[l] = t->f[a][l];
	}
	t->norder = 0;
	slev = rlev = 0;
	for (int l = 0; l < nl; l++) {
		bool s = t->structure[l] == 'S';
		int lev = s ? slev++ : rlev++;
		int lo = s ? 0 : t->nspatial, hi = s ? t->nspatial : naxes;
		bool last_s = s && !strchr(t->structure + l + 1, 'S');
		for (int pass = 0; pass < 2; pass++)
			for (int a = lo; a < hi; a++) {
				bool vec = last_s && a == t->vec;
				int k = t->norder;
				if (vec != (pass == 1))
					continue;
				t->order_axis[k] = a;
				t->order_part[k] = lev;
				t->order_level[k] = l;
				t->order_trip[k] = t->ta[a].trip[lev];
				t->norder++;
			}
		if (last_s && l == nl - 1 && l > 0)
			order_register_tile(t, t->level_last[l - 1] + 1);
		else if (l == 0 && s)
			order_outer_level(t);
		t->level_last[l] = t->norder - 1;
	}
	tiling_kinds(t);
	t->partition = partition_axis(t);
}

/* Apply the tiling "t" to its stage in "sch". */
static ts_status apply_tiling(ts_schedule *sch, struct tiling *t)
{
	order_tiling(t);
	for (int a = 0; a < t->nspatial + t->nreduce; a++)
		if (split_axis(sch, t->stage, t->axis_names[a], &t->ta[a],
		    a == t->partition) < 0)
			return TS_ERROR;
	for (int k = 0; k < t->norder; k++)
		t->order[k] = t->ta[t->order_axis[k]].names[t->order_part[k]];
	if (t->norder > 1 && ts_schedule_reorder(sch, t->stage, t->norder,
	    t->order) < 0)
		return TS_ERROR;
	return TS_OK;
}

/* Annotate the tiled loops of "t" as tiling_kinds says, and cache the
 * accumulator at the first reduction level. */
static ts_status annotate_tiling(ts_schedule *sch, struct tiling *t)
{
	int nl = (int)strlen(t->structure);
	int first_r = (int)strcspn(t->structure, "R");
	const char *last = t->order[t->norder - 1];

	t->par_loop = NULL;
	if (t->norder > 0 && t->kind[0] == TS_LOOP_PARALLEL) {
		const char *name = t->order[0];
		for (int k = 1; k < t->norder &&
		     t->kind[k] == TS_LOOP_PARALLEL; k++) {
			if (ts_schedule_fuse(sch, t->stage, name,
			    t->order[k]) < 0)
				return TS_ERROR;
			name = ts_asprintf("%s@%s", name, t->order[k]);
		}
		if (ts_schedule_parallel(sch, t->stage, name) < 0)
			return TS_ERROR;
		t->par_loop = name;
	}
	if (t->cache_write && first_r < nl && first_r > 0 &&
	    t->level_last[first_r - 1] >= 0 &&
	    ts_schedule_cache_write(sch, t->stage,
	    loop_at(t, t->level_last[first_r - 1])) < 0)
		return TS_ERROR;
	if (t->rfvec && ts_schedule_rfactor(sch, t->stage, last) < 0)
		return TS_ERROR;
	if (t->kind[t->norder - 1] == TS_LOOP_VECTORIZED &&
	    ts_schedule_vectorize(sch, t->stage, last) < 0)
		return TS_ERROR;
	for (int k = 0; k < t->norder; k++)
		if (t->kind[k] == TS_LOOP_UNROLLED &&
		    ts_schedule_unroll(sch, t->stage, t->order[k]) < 0)
			return TS_ERROR;
	return TS_OK;
}

static void factors(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int a, int64_t *f);

/* The tiling "t" of "p" as its row group under "cfg" makes it.  The host
 * keeps its last axis whole inside its tiles of rows (a tile is whole
 * rows), nothing unrolled, and at most one parallel loop, the rows'
 * tile (the lowering cannot place the group's regions in the quotient
 * and remainder of a fused parallel loop).  A member runs its rows of one tile, its other
 * loops as its knobs say, once per tile: its row axes' outer level
 * counts the tiles (the model's trips; the split is by the tile), and no
 * vector runs along them. */
static void row_tiling(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, struct tiling *t)
{
	const ts_stage_plan *h = row_host_of(tp, p, cfg);
	int last = p->nspatial - 1;

	if (rows_on(p, cfg)) {
		for (int l = 0; l < TS_MAX_LEVELS; l++)
			t->f[last][l] = 1;
		t->f[last][p->nslevels - 1] = t->extent[last];
		t->npar = TS_MIN(t->npar, 1);
		/* Its inner tile is whole rows: not a register tile to
		 * unroll (the model rated 1000 unrolled columns 5000x
		 * slower than they ran). */
		t->unroll = false;
		return;
	}
	if (!h)
		return;
	for (int a = 0; a < h->nrow_axes; a++) {
		int64_t hf[TS_MAX_LEVELS], rows = 1;
		factors(tp, h, cfg, a, hf);
		for (int l = 1; l < h->nslevels; l++)
			rows *= hf[l];
		for (int l = 0; l < TS_MAX_LEVELS; l++)
			t->f[a][l] = 1;
		t->f[a][0] = (t->extent[a] + rows - 1) / rows;
		t->f[a][1] = rows;
		if (t->vec == a)
			t->vec = -1;
	}
	t->npar = 0;
	/* Its own nest, in a tile: a tail of its own may still run. */
	t->at_root = true;
}

/* Fill "t" for plan "p" of "tp" under "cfg" with structure "structure"
 * made of levels [from, from + n) of the plan's own S levels. */
static void fill_tiling(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, struct tiling *t)
{
	const ts_stage *s = tp->dag->stages[p->stage];

	memset(t, 0, sizeof(*t));
	t->stage = s->name;
	t->structure = p->structure;
	t->nspatial = p->nspatial;
	t->nreduce = p->nreduce;
	for (int a = 0; a < p->nspatial + p->nreduce; a++) {
		factors(tp, p, cfg, a, t->f[a]);
		t->axis_names[a] = ts_stage_axis(s, a)->name;
		t->extent[a] = ts_stage_axis(s, a)->extent;
	}
	t->vec = vec_axis(tp, p, cfg);
	t->npar = (int)ts_config_get(cfg, p->knob_par, 0);
	t->unroll = ts_config_get(cfg, p->knob_unroll, 0);
	t->unroll_max = unroll_limit(tp);
	t->cache_write = p->knob_cache_write >= 0 &&
		ts_config_get(cfg, p->knob_cache_write, 0);
	t->lanes = TS_MAX(1, ts_target_lanes(tp->target, s->body->dtype));
	for (int k = 0; tp->info && k < tp->info->stages[p->stage]->naccesses;
	     k++) {
		const ts_access_info *a = &tp->info->stages[p->stage]->accesses[k];
		if (!a->write && t->nops < TS_MAX_OPERANDS)
			t->op_dep[t->nops++] = access_axes(a, p->nspatial);
	}
	t->rfvec = rfvec_on(p, cfg);
	if (t->rfvec) {
		t->structure = "SSSRR";
		t->vec = -1;
		t->cache_write = false;
		t->unroll = false;
	}
	row_tiling(tp, p, cfg, t);
	/* A fused stage's tile runs in its consumer's, whose parallel loop
	 * is one (apply_fused). */
	if (fused(p, cfg))
		t->npar = TS_MIN(t->npar, 1);
}

static int pack_layout(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, const ts_tensor *in, int *perm);

/* Whether "t" is an input or a stage with a buffer of its own at root
 * under "cfg" (only those can be packed). */
static bool at_root(const ts_template *tp, const ts_config *cfg,
	const ts_tensor *t)
{
	int s;
	const ts_stage_plan *p;

	if (!t->stage)
		return true;
	s = ts_dag_stage_index(tp->dag, t->stage);
	p = &tp->plans[s];
	if (p->rule == TS_RULE_INLINE)
		return false;
	if (p->rule == TS_RULE_LOCATION)
		return ts_config_get(cfg, p->knob_at, 0) == AT_ROOT;
	return !(p->fused_into >= 0 && fused(&tp->plans[p->fused_into], cfg)) &&
		!row_host_of(tp, p, cfg);
}

/* The dimension of "t" that the variable of "axis" indexes in the loads
 * of "e", or -1. */
static int dim_of_axis(const ts_expr *e, const ts_tensor *t,
	const ts_axis *axis)
{
	int d;

	if (!e)
		return -1;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t)
		for (int i = 0; i < e->nargs; i++)
			if (ts_expr_uses_axis(e->args[i], axis))
				return i;
	for (int i = 0; i < e->nargs; i++)
		if ((d = dim_of_axis(e->args[i], t, axis)) >= 0)
			return d;
	if ((d = dim_of_axis(e->a, t, axis)) >= 0)
		return d;
	if ((d = dim_of_axis(e->b, t, axis)) >= 0)
		return d;
	return dim_of_axis(e->c, t, axis);
}

/* Whether some load of "t" in "e" indexes its dimension "dim" with the
 * variable of "axis". */
static bool axis_in_dim(const ts_expr *e, const ts_tensor *t,
	const ts_axis *axis, int dim)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t && dim < e->nargs &&
	    ts_expr_uses_axis(e->args[dim], axis))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (axis_in_dim(e->args[i], t, axis, dim))
			return true;
	return axis_in_dim(e->a, t, axis, dim) ||
		axis_in_dim(e->b, t, axis, dim) ||
		axis_in_dim(e->c, t, axis, dim);
}

int ts_template_pack_layout(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, const ts_tensor *in, int *perm)
{
	return pack_layout(tp, p, cfg, in, perm);
}

/* The layout of a packed copy of input "in" of "p" under "cfg": when the
 * vector axis walks a dimension of "in" that is not its last, that
 * dimension goes last so the vector loads are contiguous.  Where the
 * axis also indexes the last dimension (weights blocked along it,
 * W[k // 16, ..., k % 16]), the vectors are contiguous already: moving
 * the block index last made them gathers (a 512@7 convolution ran 20x
 * slower).  Return the permutation's length (0: the tensor's own
 * layout). */
static int pack_layout(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, const ts_tensor *in, int *perm)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int v = vec_axis(tp, p, cfg), d, n = 0;

	if (v < 0 || in->ndim < 2 ||
	    axis_in_dim(s->body, in, s->axes[v], in->ndim - 1))
		return 0;
	d = dim_of_axis(s->body, in, s->axes[v]);
	if (d < 0 || d == in->ndim - 1)
		return 0;
	for (int i = 0; i < in->ndim; i++)
		if (i != d)
			perm[n++] = i;
	perm[n++] = d;
	return n;
}

int ts_template_pack_where(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int k)
{
	const ts_tensor *in = tp->dag->stages[p->stage]->inputs[
		p->pack_input[k]];
	int where = (int)ts_config_get(cfg, p->knob_pack[k], 0);

	if (!at_root(tp, cfg, in) || (fused(p, cfg) && where == PACK_OUTER) ||
	    (p->nslevels < 2 && !fused(p, cfg)))
		return PACK_NONE;
	return where;
}

/* Apply the packing knobs of "p" on the tiling "t". */
static ts_status apply_packs(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch, const struct tiling *t,
	int outer_pos, int inner_pos)
{
	const ts_stage *s = tp->dag->stages[p->stage];

	for (int k = 0; k < p->npack; k++) {
		int where = (int)ts_config_get(cfg, p->knob_pack[k], 0);
		int pos = where == PACK_OUTER ? outer_pos : inner_pos;
		const ts_tensor *in = s->inputs[p->pack_input[k]];
		int perm[TS_MAX_DIMS], nperm;
		if (where == PACK_NONE || pos < 0 || !at_root(tp, cfg, in))
			continue;
		nperm = pack_layout(tp, p, cfg, in, perm);
		if (ts_schedule_cache_read(sch, s->name, in->name,
		    loop_at(t, pos), nperm, nperm ? perm : NULL) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

/* Whether the consumer "cs" of an anchor tiled as "a", run in the
 * anchor's tiles, would vectorise one loop over both inner levels of the
 * anchor's vector axis with a width the target's registers do not split
 * well (not a power of two of them, or more than four): then its tile
 * keeps the anchor's two inner levels, and its vectors are the
 * register tile's.  LLVM legalises a vector of 144 lanes lane by lane
 * (measured: the bias and clip after a 1x1 convolution to 144 channels,
 * vectorised over the tile's 144 channels, took 0.4 ms of the 0.62 ms of
 * the task, whose product the model rates at 0.19 ms). */
static bool wide_epilogue(const ts_template *tp, const ts_stage *cs,
	const struct tiling *a)
{
	int64_t lanes = ts_target_lanes(tp->target, cs->body->dtype), w, r;

	if (a->vec < 0 || lanes <= 1)
		return false;
	w = a->f[a->vec][2] * a->f[a->vec][3];
	r = w / lanes;
	return a->f[a->vec][2] > 1 && w > lanes &&
		(w % lanes || (r & (r - 1)) || r > 4);
}

/* Schedule anchor "p" inside the tile of its consumer "cp": the consumer
 * takes the anchor's outer S levels, the anchor keeps "RSRS". */
static ts_status apply_fused(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch, struct tiling *hosts)
{
	const ts_stage_plan *cp = &tp->plans[p->fuse_consumer];
	struct tiling a, *h = &hosts[p->fuse_consumer];
	const ts_stage *cs = tp->dag->stages[cp->stage];

	fill_tiling(tp, p, cfg, &a);
	memset(h, 0, sizeof(*h));
	h->stage = cs->name;
	h->structure = wide_epilogue(tp, cs, &a) ? "SSSS" : "SSS";
	h->nspatial = cs->ndim;
	for (int d = 0; d < cs->ndim; d++) {
		h->axis_names[d] = cs->axes[d]->name;
		h->f[d][0] = a.f[d][0];
		h->f[d][1] = a.f[d][1];
		h->f[d][2] = a.f[d][2] * a.f[d][3];
		if (h->structure[3]) {
			h->f[d][2] = a.f[d][2];
			h->f[d][3] = a.f[d][3];
		}
	}
	h->vec = a.vec;
	/* One parallel loop: the lowering cannot yet prove a tile of the
	 * anchor inside its buffers from the quotient and remainder of a
	 * fused parallel loop, and the guards it then keeps hold the
	 * accumulators in memory (measured: dense+bias+relu with two
	 * fused loops, 800 ms against 5 ms). */
	h->npar = a.npar;
	h->unroll = false;
	if (apply_tiling(sch, h) < 0 || annotate_tiling(sch, h) < 0)
		return TS_ERROR;
	/* The anchor: spatial [s2, s3], reduction [r0, r1], under the host's
	 * cache tile. */
	a.structure = "RSRS";
	for (int d = 0; d < a.nspatial; d++) {
		a.f[d][0] = a.f[d][2];
		a.f[d][1] = a.f[d][3];
	}
	a.npar = 0;
	a.cache_write = false;
	if (ts_schedule_compute_at(sch, a.stage, h->stage,
	    loop_at(h, h->level_last[1])) < 0)
		return TS_ERROR;
	if (apply_tiling(sch, &a) < 0 || annotate_tiling(sch, &a) < 0)
		return TS_ERROR;
	return apply_packs(tp, p, cfg, sch, &a, -1, a.level_last[0]);
}

/* The position in the loops of the consumer's tiling "ct" where a stage
 * located there at "at" (AT_OUTER, AT_INNER) is computed: the last loop
 * of the outer tile level, or of the inner one where the consumer has
 * one, but never the vector loop, which compute_at cannot split (the
 * loop just outside it then: a mask computed in the tiles of a cast
 * vectorized along its rows failed to schedule).  -1: at root, where a
 * consumer is not tiled here or has no spatial tile (a full sum: an
 * imported loss whose weights' sum is computed there failed to schedule
 * for AVX2 targets). */
static int location_pos(const struct tiling *ct, int at)
{
	int nl = ct && ct->stage ? (int)strlen(ct->structure) : 0, pos;

	if (nl < 2 || ct->structure[0] != 'S')
		return -1;
	pos = ct->level_last[at == AT_OUTER ? 0 :
		(ct->structure[1] == 'S' ? 1 : 0)];
	if (pos >= 0 && ct->kind[pos] == TS_LOOP_VECTORIZED)
		pos--;
	return pos;
}

int ts_template_root_parallel_axis(const ts_template *tp, int stage)
{
	const ts_stage *s = tp->dag->stages[stage];
	int64_t elems = 1;

	if (!tp->target || tp->target->kind != TS_TARGET_CPU ||
	    tp->target->cpu.cores < 2 || s->nraxes > 0)
		return -1;
	for (int a = 0; a < s->ndim; a++)
		elems *= s->axes[a]->extent;
	/* A pass that writes less than 256 KiB takes a few microseconds,
	 * about what starting a team costs. */
	if (elems * (int64_t)ts_dtype_size(s->out->dtype) < 256 * 1024)
		return -1;
	for (int a = 0; a + 1 < s->ndim; a++)
		if (s->axes[a]->extent >= tp->target->cpu.cores)
			return a;
	return -1;
}

/* Schedule "s", computed at root with no tiling of its own: its
 * innermost axis in vectors of the widest power of two of at most the
 * target's lanes that divides its extent, its outer axis in parallel
 * where ts_template_root_parallel_axis says so.  The model rates such a
 * pass at the rate of a copy; left to LLVM, a sum of two tensors over
 * rows of 24 was unrolled whole and vectorised across rows with gathers
 * (measured on a Zen 4: 0.08 ms of its consumer's 0.37 ms, for 75 K
 * elements), and a select of two tensors into 55 x 55 x 128 feeding a
 * product on two threads ran on one (0.14 ms on one thread, 0.16 on
 * two). */
static ts_status schedule_root(const ts_template *tp, ts_schedule *sch,
	int stage)
{
	const ts_stage *s = tp->dag->stages[stage];
	int64_t lanes, extent, w = 1;
	const char *axis;
	int par = ts_template_root_parallel_axis(tp, stage);

	if (s->ndim == 0 || s->nraxes > 0 || !tp->target ||
	    tp->target->kind != TS_TARGET_CPU)
		return TS_OK;
	if (par >= 0 && ts_schedule_parallel(sch, s->name,
	    s->axes[par]->name) < 0)
		return TS_ERROR;
	lanes = ts_target_lanes(tp->target, s->body->dtype);
	axis = s->axes[s->ndim - 1]->name;
	extent = s->axes[s->ndim - 1]->extent;
	while (2 * w <= lanes && extent % (2 * w) == 0)
		w *= 2;
	if (w < 2)
		return TS_OK;
	if (w < extent) {
		if (ts_schedule_split(sch, s->name, axis, w, TS_TAIL_GUARD) < 0)
			return TS_ERROR;
		axis = ts_asprintf("%s.i", axis);
	}
	return ts_schedule_vectorize(sch, s->name, axis);
}

/* Apply the location knob of "p": its consumer is already scheduled
 * with tiling "ct" (or not tiled: then root). */
static ts_status apply_location(const ts_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch, const struct tiling *ct)
{
	const char *name = tp->dag->stages[p->stage]->name;
	int at = (int)ts_config_get(cfg, p->knob_at, 0), pos;

	if (at == AT_INLINE)
		return ts_schedule_compute_inline(sch, name);
	if (at == AT_ROOT || (pos = location_pos(ct, at)) < 0)
		return schedule_root(tp, sch, p->stage);
	return ts_schedule_compute_at(sch, name, ct->stage, loop_at(ct, pos));
}

ts_schedule *ts_template_apply(const ts_template *tp, const ts_config *cfg)
{
	const ts_dag *dag = tp->dag;
	ts_schedule *sch;
	struct tiling *t;

	if (on_gpu(tp))
		return ts_gpu_template_apply(tp, cfg);
	sch = ts_schedule_new(tp->ctx, dag);
	t = ts_new_array(struct tiling, dag->nstages + 1);

	/* Consumers before producers: compute_at needs the consumer's
	 * loops. */
	for (int s = dag->nstages - 1; s >= 0; s--) {
		const ts_stage_plan *p = &tp->plans[s];
		ts_status st = TS_OK;
		switch (p->rule) {
		case TS_RULE_INLINE:
			st = ts_schedule_compute_inline(sch, dag->stages[s]->name);
			break;
		case TS_RULE_LOCATION:
			st = apply_location(tp, p, cfg, sch,
				&t[p->at_consumer]);
			break;
		default:
			if (p->fused_into >= 0 &&
			    fused(&tp->plans[p->fused_into], cfg))
				break;	/* scheduled with its anchor */
			if (fused(p, cfg)) {
				st = apply_fused(tp, p, cfg, sch, t);
				break;
			}
			fill_tiling(tp, p, cfg, &t[s]);
			t[s].at_root = true;
			st = apply_tiling(sch, &t[s]);
			if (st == TS_OK)
				st = annotate_tiling(sch, &t[s]);
			if (st == TS_OK && row_host_of(tp, p, cfg)) {
				const struct tiling *h = &t[p->row_host];
				st = ts_schedule_compute_at(sch, t[s].stage,
					h->stage, loop_at(h, h->level_last[0]));
			}
			if (st == TS_OK && p->nslevels >= 2)
				st = apply_packs(tp, p, cfg, sch, &t[s],
					t[s].level_last[0], t[s].level_last[1]);
		}
		if (st < 0)
			return NULL;
	}
	if (ts_schedule_check(sch) < 0)
		return NULL;
	return sch;
}

/* The iterations axis "a" of "t" costs when its tail runs as a loop of
 * its own: the whole tiles, then the tail in vectors as wide as the
 * tile's (at most the target's lanes), the last one partly idle; an axis
 * other than the vector axis runs its tail exactly. */
static int64_t tail_padded(const ts_template *tp, const ts_stage_plan *p,
	const struct tiling *t, int a)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int64_t inner = tile_inner(t, a), tail, w;

	if (a != t->vec)
		return t->extent[a];
	tail = t->extent[a] % inner;
	w = TS_MIN(inner, ts_target_lanes(tp->target, s->body->dtype));
	w = TS_MAX(w, 1);
	return t->extent[a] - tail + (tail + w - 1) / w * w;
}

bool ts_template_nest(const ts_template *tp, const ts_config *cfg,
	int stage, ts_nest *nest)
{
	const ts_stage_plan *p = &tp->plans[stage];
	struct tiling t;

	memset(nest, 0, sizeof(*nest));
	nest->stage = stage;
	nest->tail_loop = nest->row_host = -1;
	if (on_gpu(tp))
		return false;	/* threads and blocks, not a CPU nest */
	if (p->rule != TS_RULE_TILE && p->rule != TS_RULE_PLAIN)
		return false;
	if (p->fused_into >= 0 && fused(&tp->plans[p->fused_into], cfg))
		return false;
	/* The loops apply_tiling makes, with their annotations.  A fused
	 * anchor is rated as its whole tile, run once per tile of its
	 * consumer (apply_fused splits the same loops between the two). */
	fill_tiling(tp, p, cfg, &t);
	t.at_root = !fused(p, cfg);
	order_tiling(&t);
	nest->fused = fused(p, cfg);
	nest->row_host = row_host_of(tp, p, cfg) ? p->row_host : -1;
	nest->cache_write = nest->fused || t.cache_write;
	nest->vec_axis = t.rfvec ? p->nspatial + p->nreduce - 1 : t.vec;
	nest->useful = nest->padded = nest->unrolled = 1;
	for (int a = 0; a < p->nspatial + p->nreduce; a++) {
		int64_t tiles = 1;
		for (int l = 0; l < t.ta[a].nlevels; l++)
			tiles *= t.f[a][l];
		nest->useful *= t.extent[a];
		nest->padded *= a == t.partition ? tail_padded(tp, p, &t, a) :
			tiles;
		nest->guarded |= a != t.partition && tiles > t.extent[a];
	}
	nest->tail_loop = t.partition;
	for (int k = 0; k < t.norder; k++) {
		ts_nest_loop *lp = &nest->loops[nest->nloops++];
		lp->axis = t.order_axis[k];
		lp->level = t.order_level[k];
		lp->trip = t.order_trip[k];
		lp->kind = t.kind[k];
		if (lp->kind == TS_LOOP_UNROLLED)
			nest->unrolled *= lp->trip;
	}
	/* The vector loop is the innermost whenever there is a vector
	 * axis; its width is one lane where nothing is vectorized (one
	 * iteration, or more than the code generator makes a vector of). */
	if (nest->vec_axis >= 0 && t.norder > 0)
		nest->vec_width = t.kind[t.norder - 1] == TS_LOOP_VECTORIZED ?
			t.order_trip[t.norder - 1] : 1;
	nest->npar = t.npar;
	/* Where a stage located in this one is computed.  For a fused
	 * anchor this is its whole tile, as it is rated, although
	 * ts_template_apply then computes the located stage at root:
	 * rating it at root instead (as it runs) chose slower code for
	 * ResNet-18 on a Zen 3 (tessel tasks --run --profile: 54.7
	 * against 48.7 ms, its 3x3 convolutions 1.2x to 1.6x slower), so
	 * the place is the tile until apply computes it there too. */
	for (int at = AT_OUTER; at <= AT_INNER; at++)
		nest->at_loop[at - AT_OUTER] = location_pos(&t, at);
	for (int k = 0; k < p->npack; k++)
		nest->npacked += ts_template_pack_where(tp, p, cfg, k) !=
			PACK_NONE;
	return true;
}

void ts_template_print(FILE *out, const ts_template *tp)
{
	if (on_gpu(tp)) {
		ts_gpu_template_print(out, tp);
		return;
	}
	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		fprintf(out, "stage %s: %s, rule %s", tp->dag->stages[s]->name,
			ts_class_name(p->klass), ts_rule_name(p->rule));
		if (p->structure && (p->rule == TS_RULE_TILE ||
		    p->rule == TS_RULE_PLAIN))
			fprintf(out, " %s", p->structure);
		if (p->fuse_consumer >= 0)
			fprintf(out, ", may fuse into %s",
				tp->dag->stages[p->fuse_consumer]->name);
		if (p->at_consumer >= 0)
			fprintf(out, ", located in %s",
				tp->dag->stages[p->at_consumer]->name);
		fprintf(out, "\n");
	}
	ts_space_print(out, tp->space);
}

bool ts_template_print_nest(FILE *out, const ts_template *tp,
	const ts_config *cfg, int stage)
{
	const ts_stage *s;
	ts_nest n;

	if (stage < 0 || stage >= tp->dag->nstages ||
	    !ts_template_nest(tp, cfg, stage, &n))
		return false;
	s = tp->dag->stages[stage];
	fprintf(out, "  nest %s:", s->name);
	for (int l = 0; l < n.nloops; l++)
		fprintf(out, " %s%d:%lld(%s)",
			n.loops[l].axis < s->ndim ? "s" : "r", n.loops[l].axis,
			(long long)n.loops[l].trip,
			ts_loop_kind_name(n.loops[l].kind));
	fprintf(out, "\n    vector width %lld, unrolled %lld, padded/useful "
		"%.3f\n", (long long)n.vec_width, (long long)n.unrolled,
		n.useful > 0 ? (double)n.padded / (double)n.useful : 1.0);
	return true;
}

const ts_dag *ts_template_dag(const ts_template *tp)
{
	return tp->dag;
}

const ts_target *ts_template_target(const ts_template *tp)
{
	return tp->target;
}

ts_space *ts_template_space(const ts_template *tp)
{
	return tp->space;
}

const ts_stage_plan *ts_template_plan(const ts_template *tp, int stage)
{
	if (stage < 0 || stage >= tp->dag->nstages)
		return NULL;
	return &tp->plans[stage];
}

ts_rule ts_stage_plan_rule(const ts_stage_plan *p)
{
	return p->rule;
}

const char *ts_stage_plan_decided_by(const ts_stage_plan *p)
{
	return p->decided_by;
}

ts_class ts_stage_plan_class(const ts_stage_plan *p)
{
	return p->klass;
}
