/* GPU meta-templates: from the analysis of a DAG to a knob space, and
 * from a configuration to a schedule with loops bound to blocks and
 * threads (see <tessel/gpu.h> for the structures).
 *
 * Each stage is decided by the rule table of metatemplates/rules.c, in
 * the order written there; the GPU's actions say what each decision
 * becomes here:
 *
 *	nested		DIRECT, one thread per output, reductions inside
 *	inline		INLINE (a guarded copy too: one guard per thread)
 *	location	LOCATION (inline or root)
 *	complex		TILE; an elementwise consumer gets a fusion knob,
 *			and shapes the tensor cores take a tensor_core knob
 *	simple		REDUCE
 *	direct		DIRECT
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <tessel/gpu.h>
#include <tessel/metatemplate.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "analysis/facts.h"
#include "metatemplates/rules.h"

static const char *const thread_choices[] = {
	"32", "64", "128", "256", "512", "1024",
};
static const char *const vec_choices[] = { "1", "2", "4" };
static const char *const rthread_choices[] = {
	"32", "64", "128", "256", "512",
};
static const char *const at_choices[] = { "root", "inline" };

/* The number a choice knob "knob" of "tp" holds under "cfg". */
static int64_t choice_num(const ts_gpu_template *tp, const ts_config *cfg,
	int knob)
{
	const ts_knob *k = tp->space->knobs[knob];

	return strtoll(k->choices[ts_config_get(cfg, knob, 0)], NULL, 10);
}

/* Whether stage "s" of the GPU template "arg" becomes inlined. */
static bool gpu_inlined(const void *arg, int s)
{
	const ts_gpu_template *tp = arg;

	return tp->plans[s].rule == TS_RULE_INLINE;
}

/* The GPU's actions for the decisions of the rule table. */
static ts_stage_plan *gplan_of(void *arg, int s)
{
	return &((ts_gpu_template *)arg)->plans[s];
}

/* One thread per output: nested reductions run inside it. */
static void act_direct(void *tp, int s)
{
	gplan_of(tp, s)->rule = TS_RULE_PLAIN;
	gplan_of(tp, s)->nreduce = 0;
}

static void act_inline(void *tp, int s)
{
	gplan_of(tp, s)->rule = TS_RULE_INLINE;
}

static void act_location(void *tp, int s)
{
	gplan_of(tp, s)->rule = TS_RULE_LOCATION;
}

static void act_complex(void *tp, int s)
{
	gplan_of(tp, s)->rule = TS_RULE_TILE;
}

static void act_simple(void *tp, int s)
{
	gplan_of(tp, s)->rule = TS_RULE_REDUCE;
}

static const ts_rule_ops gpu_ops = {
	"gpu", TS_RULES_GPU, {
		[TS_DECIDE_NESTED] = act_direct,
		[TS_DECIDE_INLINE] = act_inline,
		[TS_DECIDE_LOCATION] = act_location,
		[TS_DECIDE_COMPLEX] = act_complex,
		[TS_DECIDE_SIMPLE] = act_simple,
		[TS_DECIDE_DIRECT] = act_direct,
	},
};

/* Decide stage "s" by the rule table. */
static void choose_rule(ts_gpu_template *tp, int s)
{
	ts_stage_plan *p = &tp->plans[s];

	ts_stage_plan_init(p, tp, s);
	p->decided_by = ts_rule_decide(&gpu_ops, tp, tp->dag, tp->info,
		s)->name;
}

/* Add the knobs of one thread per output element to "p". */
static void add_direct_knobs(ts_gpu_template *tp, ts_stage_plan *p)
{
	const char *n = tp->dag->stages[p->stage]->name;

	p->knob_threads = ts_space_add_choice(tp->space, ts_asprintf(
		"%s.threads", n), 6, thread_choices);
	p->knob_vec = ts_space_add_choice(tp->space, ts_asprintf("%s.vec", n),
		3, vec_choices);
}

/* Add the knobs of a complex reduction "p": tiles, staging, unroll. */
static ts_status add_tile_knobs(ts_gpu_template *tp, ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage_info *si = tp->info->stages[p->stage];

	for (int a = 0; a < s->ndim + s->nraxes; a++) {
		const ts_axis *ax = ts_stage_axis(s, a);
		/* Extent 0 splits like 1, as in template.c. */
		p->split[a] = ts_space_add_split(tp->space, ts_asprintf("%s.%s",
			s->name, ax->name), TS_MAX(ax->extent, 1),
			a < s->ndim ? 4 : 2, true);
		if (p->split[a] < 0)
			return TS_ERROR;
	}
	p->knob_unroll = ts_space_add_bool(tp->space,
		ts_asprintf("%s.unroll", s->name));
	for (int i = 0; i < s->ninputs && i < TS_MAX_DIMS; i++) {
		p->fp[i] = ts_stage_footprint(tp->ctx, s, s->inputs[i]);
		ts_ctx_clear_error(tp->ctx);
	}
	for (int i = 0; i < s->ninputs && p->nshared < TS_MAX_DIMS; i++) {
		bool reuse = false, affine = true;
		for (int k = 0; k < si->naccesses; k++) {
			const ts_access_info *ac = &si->accesses[k];
			if (ac->write || ac->tensor != s->inputs[i])
				continue;
			affine &= ac->affine && !ac->guarded;
			for (int a = 0; a < s->ndim; a++)
				reuse |= ac->reuse[a];
		}
		if (!reuse || !affine)
			continue;
		p->shared_input[p->nshared] = i;
		p->knob_shared[p->nshared++] = ts_space_add_bool(tp->space,
			ts_asprintf("%s.shared.%s", s->name,
			s->inputs[i]->name));
	}
	return TS_OK;
}

/* The f16 load that "e" is, or whose f32 cast it is; NULL otherwise. */
static const ts_expr *tc_operand(const ts_expr *e)
{
	if (e->kind == TS_EXPR_CAST && e->dtype == TS_F32)
		e = e->a;
	return e->kind == TS_EXPR_LOAD && e->tensor->dtype == TS_F16 ? e : NULL;
}

/* Set in "*mask" the axes of stage "s" (spatial, then reduction) along
 * which the access facts "si" say the load "ld" moves; return why it
 * cannot feed a fragment (not affine, guarded, an index that is not a
 * plain axis or a constant, an axis read twice), or NULL. */
static const char *tc_axes(const ts_stage *s, const ts_stage_info *si,
	const ts_expr *ld, unsigned *mask)
{
	const ts_access_info *ac = NULL;
	unsigned seen = 0;

	for (int k = 0; k < si->naccesses; k++)
		if (si->accesses[k].load == ld)
			ac = &si->accesses[k];
	if (!ac || !ac->affine || ac->guarded)
		return ts_asprintf("stage '%s': operand '%s' is not an affine "
			"access without a guard", s->name, ld->tensor->name);
	*mask = 0;
	for (int a = 0; a < s->ndim + s->nraxes && a < 32; a++)
		if (ac->stride[a] != 0)
			*mask |= 1u << a;
	for (int d = 0; d < ld->nargs; d++) {
		const ts_expr *x = ld->args[d];
		int a = -1;
		for (int b = 0; x->kind == TS_EXPR_VAR && b < s->ndim +
		     s->nraxes; b++)
			if (x->axis == ts_stage_axis(s, b))
				a = b;
		if (x->kind == TS_EXPR_INT)
			continue;
		if (a < 0 || (seen >> a & 1))
			return ts_asprintf("stage '%s': index %d of operand "
				"'%s' is not a plain axis read once", s->name,
				d, ld->tensor->name);
		seen |= 1u << a;
	}
	return NULL;
}

/* Why tile "p" of "tp" cannot run on tensor cores, from the target and
 * the analysis of its body and accesses; NULL when it can, with the
 * fragment axes filled in.  Each operand must read the reduction axis
 * and a spatial axis the other does not: the last such axis of each is
 * its fragment axis (a 2-D tile each), every other spatial axis goes to
 * the blocks (axes both operands read, and the further axes one operand
 * reads beside its fragment axis). */
static const char *tc_facts(const ts_gpu_template *tp, ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage_info *si = tp->info->stages[p->stage];
	const ts_target_gpu *g = &tp->target->gpu;
	const ts_expr *b = s->body, *x, *y;
	unsigned mx, my, kbit, ox, oy;
	const char *r;
	int ax[3];

	if (g->cc_major < 7)
		return ts_asprintf("target '%s' (%s) has no tensor cores",
			tp->target->name, g->arch ? g->arch : "no arch");
	if (b->kind != TS_EXPR_REDUCE || b->reducer != TS_RED_SUM ||
	    s->nraxes != 1 || s->ndim + 1 > 32)
		return ts_asprintf("stage '%s': tensor cores need a sum over "
			"one reduction axis", s->name);
	if (s->out->dtype != TS_F32 && s->out->dtype != TS_F16)
		return ts_asprintf("stage '%s': the accumulator is %s, not f32 "
			"or f16", s->name, ts_dtype_name(s->out->dtype));
	b = b->a;
	if (b->kind != TS_EXPR_BINARY || b->op != TS_OP_MUL ||
	    !(x = tc_operand(b->a)) || !(y = tc_operand(b->b)))
		return ts_asprintf("stage '%s': the summand is not a product "
			"of two f16 loads", s->name);
	if (x->tensor == y->tensor)
		return ts_asprintf("stage '%s': both operands read '%s'",
			s->name, x->tensor->name);
	if ((r = tc_axes(s, si, x, &mx)) || (r = tc_axes(s, si, y, &my)))
		return r;
	kbit = 1u << s->ndim;
	if (!(mx & kbit) || !(my & kbit))
		return ts_asprintf("stage '%s': operand '%s' does not read the "
			"reduction axis '%s'", s->name, (mx & kbit ? y : x)->
			tensor->name, s->raxes[0]->name);
	ox = mx & ~my & ~kbit;
	oy = my & ~mx & ~kbit;
	if (!ox || !oy)
		return ts_asprintf("stage '%s': operands '%s' and '%s' do not "
			"each read a spatial axis the other does not",
			s->name, x->tensor->name, y->tensor->name);
	for (int a = 0; a < s->ndim; a++)
		if (!((mx | my) >> a & 1))
			return ts_asprintf("stage '%s': axis '%s' is read by no "
				"operand", s->name, s->axes[a]->name);
	ax[0] = TS_MIN(31 - __builtin_clz(ox), 31 - __builtin_clz(oy));
	ax[1] = TS_MAX(31 - __builtin_clz(ox), 31 - __builtin_clz(oy));
	ax[2] = s->ndim;
	for (int t = 0; t < 3; t++)
		if (ts_stage_axis(s, ax[t])->extent % 16)
			return ts_asprintf("stage '%s': the extent %" PRId64 " of "
				"axis '%s' is not a multiple of 16", s->name,
				ts_stage_axis(s, ax[t])->extent, ts_stage_axis(s, ax[t])->name);
	p->tc_m = ax[0];
	p->tc_n = ax[1];
	p->tc_k = 0;
	return NULL;
}

/* Add the tensor-core knobs of tile "p" when the facts allow them:
 * the switch, and the splits of the fragment axes in units of 16. */
static ts_status add_tc_knobs(ts_gpu_template *tp, ts_stage_plan *p)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int ax[3];

	if ((p->tc_reason = tc_facts(tp, p)))
		return TS_OK;
	ax[0] = p->tc_m;
	ax[1] = p->tc_n;
	ax[2] = s->ndim + p->tc_k;
	p->knob_tc = ts_space_add_bool(tp->space, ts_asprintf(
		"%s.tensor_core", s->name));
	for (int t = 0; t < 3; t++) {
		p->tc_split[t] = ts_space_add_split(tp->space, ts_asprintf(
			"%s.tc.%s", s->name, ts_stage_axis(s, ax[t])->name),
			ts_stage_axis(s, ax[t])->extent / 16, t < 2 ? 3 : 2, true);
		if (p->tc_split[t] < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

ts_gpu_template *ts_gpu_template_new(ts_ctx *ctx, const ts_dag *dag,
	const ts_dag_info *info, const ts_target *target)
{
	ts_gpu_template *tp = ts_new(ts_gpu_template);
	int n;

	if (!target || target->kind != TS_TARGET_GPU)
		return ts_ctx_set_error(ctx, "GPU templates: target '%s' is "
			"not a GPU", target ? target->name : "(none)"), NULL;
	if (!dag || !info)
		return NULL;
	n = dag->nstages;
	tp->ctx = ctx;
	tp->dag = dag;
	tp->info = info;
	tp->target = target;
	tp->space = ts_space_new(ctx, dag->name);
	tp->plans = ts_new_array(ts_stage_plan, n + 1);
	/* Producers last: inlining decisions feed effective consumers. */
	for (int s = n - 1; s >= 0; s--)
		choose_rule(tp, s);
	for (int s = 0; s < n; s++) {
		ts_stage_plan *p = &tp->plans[s];
		const char *name = dag->stages[s]->name;
		int c;
		switch (p->rule) {
		case TS_RULE_LOCATION:
			p->knob_at = ts_space_add_choice(tp->space,
				ts_asprintf("%s.at", name), 2, at_choices);
			add_direct_knobs(tp, p);
			break;
		case TS_RULE_PLAIN:
			add_direct_knobs(tp, p);
			break;
		case TS_RULE_REDUCE:
			add_direct_knobs(tp, p);
			p->knob_cross = ts_space_add_bool(tp->space,
				ts_asprintf("%s.cross", name));
			p->knob_rthreads = ts_space_add_choice(tp->space,
				ts_asprintf("%s.rthreads", name), 5,
				rthread_choices);
			break;
		case TS_RULE_TILE:
			if (add_tile_knobs(tp, p) < 0 || add_tc_knobs(tp, p) < 0)
				return NULL;
			c = ts_dag_effective_consumer(tp->dag, s, gpu_inlined, tp);
			if (c >= 0 && tp->plans[c].rule == TS_RULE_PLAIN &&
			    tp->plans[c].nreduce == 0 &&
			    tp->plans[c].fused_into < 0 &&
			    dag->stages[c]->nraxes == 0) {
				p->fuse_consumer = c;
				tp->plans[c].fused_into = s;
				p->knob_fuse = ts_space_add_bool(tp->space,
					ts_asprintf("%s.fuse", name));
			}
			break;
		default:
			break;
		}
	}
	return tp;
}

ts_config *ts_gpu_template_default(const ts_gpu_template *tp)
{
	ts_config *c = ts_config_new(tp->space);

	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		const ts_stage_info *si = tp->info->stages[s];
		if (p->knob_threads >= 0)
			ts_config_set(c, p->knob_threads, 0, 3);	/* 256 */
		if (p->knob_cross >= 0)
			ts_config_set(c, p->knob_cross, 0,
				si->reduce_extent >= 128);
		if (p->knob_rthreads >= 0)
			ts_config_set(c, p->knob_rthreads, 0, 2);	/* 128 */
		if (p->knob_unroll >= 0)
			ts_config_set(c, p->knob_unroll, 0, 1);
		for (int k = 0; k < p->nshared; k++)
			ts_config_set(c, p->knob_shared[k], 0, 1);
		if (p->knob_fuse >= 0)
			ts_config_set(c, p->knob_fuse, 0, 1);
		if (p->knob_tc >= 0)
			ts_config_set(c, p->knob_tc, 0, 1);
		if (p->knob_at >= 0)
			ts_config_set(c, p->knob_at, 0, 1);	/* inline */
	}
	return c;
}

/* Whether anchor "p" is fused with its epilogue under "cfg". */
static bool fused(const ts_stage_plan *p, const ts_config *cfg)
{
	return p->knob_fuse >= 0 && ts_config_get(cfg, p->knob_fuse, 0);
}

/* Fuse the "n" adjacent loops "names" of "stage" into one; its name goes
 * to "*out". */
static ts_status fuse_all(ts_schedule *sch, const char *stage, int n,
	const char *const *names, const char **out)
{
	const char *name = names[0];

	for (int k = 1; k < n; k++) {
		if (ts_schedule_fuse(sch, stage, name, names[k]) < 0)
			return TS_ERROR;
		name = ts_asprintf("%s@%s", name, names[k]);
	}
	*out = name;
	return TS_OK;
}

/* The spatial loop names of stage "s" as declared. */
static void axis_names(const ts_stage *s, const char **names)
{
	for (int a = 0; a < s->ndim; a++)
		names[a] = s->axes[a]->name;
}

/* One thread per output element of stage "s": spatial loops fused, split
 * into blocks, "vec" elements per thread (unrolled) and "threads"
 * threads, innermost. */
static ts_status apply_direct(ts_schedule *sch, const ts_stage *s,
	int64_t threads, int64_t vec)
{
	const char *names[TS_MAX_DIMS] = { 0 }, *f;
	int64_t e = 1;

	if (s->ndim == 0)
		return TS_OK;
	axis_names(s, names);
	for (int a = 0; a < s->ndim; a++)
		e *= s->axes[a]->extent;
	if (fuse_all(sch, s->name, s->ndim, names, &f) < 0)
		return TS_ERROR;
	threads = TS_MIN(threads, e);
	if (ts_schedule_split(sch, s->name, f, threads, TS_TAIL_GUARD) < 0 ||
	    ts_schedule_bind(sch, s->name, ts_asprintf("%s.i", f),
	    TS_BIND_THREAD_X) < 0)
		return TS_ERROR;
	f = ts_asprintf("%s.o", f);
	if (vec > 1 && (e + threads - 1) / threads > vec) {
		if (ts_schedule_split(sch, s->name, f, vec, TS_TAIL_GUARD) < 0 ||
		    ts_schedule_unroll(sch, s->name, ts_asprintf("%s.i", f)) < 0)
			return TS_ERROR;
		f = ts_asprintf("%s.o", f);
	}
	return ts_schedule_bind(sch, s->name, f, TS_BIND_BLOCK_X);
}

/* A cross-thread reduction of stage "s": spatial loops fused into the
 * block index, reduction loops fused and split over "threads" threads. */
static ts_status apply_cross(ts_schedule *sch, const ts_stage *s,
	int64_t threads)
{
	const char *names[TS_MAX_AXES] = { 0 }, *f, *r;
	int64_t k = 1;

	axis_names(s, names);
	if (s->ndim && (fuse_all(sch, s->name, s->ndim, names, &f) < 0 ||
	    ts_schedule_bind(sch, s->name, f, TS_BIND_BLOCK_X) < 0))
		return TS_ERROR;
	for (int a = 0; a < s->nraxes; a++) {
		names[a] = s->raxes[a]->name;
		k *= s->raxes[a]->extent;
	}
	if (fuse_all(sch, s->name, s->nraxes, names, &r) < 0)
		return TS_ERROR;
	threads = TS_MIN(threads, k);
	if (ts_schedule_split(sch, s->name, r, threads, TS_TAIL_GUARD) < 0)
		return TS_ERROR;
	names[0] = ts_asprintf("%s.i", r);
	names[1] = ts_asprintf("%s.o", r);
	if (ts_schedule_reorder(sch, s->name, 2, names) < 0)
		return TS_ERROR;
	return ts_schedule_bind(sch, s->name, names[0], TS_BIND_THREAD_X);
}

/* Factors of axis "a" of "p" under "cfg", outermost level first; "a"
 * below zero: the tensor-core split -1 - "a" (rows, columns,
 * reduction). */
static void factors(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int a, int64_t *f)
{
	int knob = a < 0 ? p->tc_split[-1 - a] : p->split[a];
	const ts_knob *k = tp->space->knobs[knob];

	for (int l = 0; l < k->nparts; l++)
		f[l] = ts_config_get(cfg, knob, l);
}

/* Split "name" of "stage" into "n" levels of trips "f" (outermost
 * first); the level names go to "out". */
static ts_status split_levels(ts_schedule *sch, const char *stage,
	const char *name, int n, const int64_t *f, const char **out)
{
	for (int l = 0; l < n - 1; l++) {
		int64_t inner = 1;
		for (int m = l + 1; m < n; m++)
			inner *= f[m];
		if (ts_schedule_split(sch, stage, name, inner, TS_TAIL_GUARD) < 0)
			return TS_ERROR;
		out[l] = ts_asprintf("%s.o", name);
		name = ts_asprintf("%s.i", name);
	}
	out[n - 1] = name;
	return TS_OK;
}

/* The loops of a tiled stage, by level. */
struct tiled {
	const char *s[4][TS_MAX_AXES];	/* spatial: block, virtual thread,
					 * thread, register */
	const char *r[2][TS_MAX_AXES];	/* reduction: outer, inner */
};

/* Tile stage "s" of plan "p": spatial axes over the levels "first".."3"
 * of their split (4 levels at root, the last 3 in a block), reduction
 * axes over 2.  Loops run block, thread, outer and inner reduction, then
 * virtual thread and register levels (unrolled): a thread's outputs are
 * its register tile repeated at the stride of the threads' tile, so
 * neighbouring threads touch neighbouring elements.  Block and thread
 * levels are fused and bound, the accumulator tile lives in registers,
 * inputs are staged in shared memory and the inner reduction unrolled as
 * "cfg" says. */
static ts_status apply_tile(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch, int first)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const char *order[TS_MAX_AXES * 6], *blk = NULL, *thr;
	static const int sorder[] = { 0, 2 }, tail[] = { 1, 3 };
	int64_t f[TS_MAX_LEVELS];
	struct tiled t;
	int n = 0;

	memset(&t, 0, sizeof(t));
	for (int a = 0; a < s->ndim; a++) {
		const char *lv[4];
		factors(tp, p, cfg, a, f);
		if (split_levels(sch, s->name, s->axes[a]->name, 4 - first,
		    f + first, lv) < 0)
			return TS_ERROR;
		for (int l = first; l < 4; l++)
			t.s[l][a] = lv[l - first];
	}
	for (int a = 0; a < s->nraxes; a++) {
		const char *lv[2];
		factors(tp, p, cfg, s->ndim + a, f);
		if (split_levels(sch, s->name, s->raxes[a]->name, 2, f, lv) < 0)
			return TS_ERROR;
		t.r[0][a] = lv[0];
		t.r[1][a] = lv[1];
	}
	for (int k = 0; k < 2; k++)
		for (int a = 0; sorder[k] >= first && a < s->ndim; a++)
			order[n++] = t.s[sorder[k]][a];
	for (int l = 0; l < 2; l++)
		for (int a = 0; a < s->nraxes; a++)
			order[n++] = t.r[l][a];
	for (int k = 0; k < 2; k++)
		for (int a = 0; a < s->ndim; a++)
			order[n++] = t.s[tail[k]][a];
	if (ts_schedule_reorder(sch, s->name, n, order) < 0)
		return TS_ERROR;
	if (first == 0 && (fuse_all(sch, s->name, s->ndim, t.s[0], &blk) < 0
	    || ts_schedule_bind(sch, s->name, blk, TS_BIND_BLOCK_X) < 0))
		return TS_ERROR;
	if (fuse_all(sch, s->name, s->ndim, t.s[2], &thr) < 0 ||
	    ts_schedule_bind(sch, s->name, thr, TS_BIND_THREAD_X) < 0 ||
	    ts_schedule_cache_write(sch, s->name, thr) < 0)
		return TS_ERROR;
	for (int k = 0; k < p->nshared; k++)
		if (ts_config_get(cfg, p->knob_shared[k], 0) &&
		    ts_schedule_cache_read(sch, s->name,
		    s->inputs[p->shared_input[k]]->name,
		    t.r[0][s->nraxes - 1], 0, NULL) < 0)
			return TS_ERROR;
	for (int k = 0; k < 2; k++)
		for (int a = 0; a < s->ndim; a++)
			if (ts_schedule_unroll(sch, s->name, t.s[tail[k]][a]) < 0)
				return TS_ERROR;
	for (int a = 0; ts_config_get(cfg, p->knob_unroll, 0) &&
	     a < s->nraxes; a++)
		if (ts_schedule_unroll(sch, s->name, t.r[1][a]) < 0)
			return TS_ERROR;
	return TS_OK;
}

/* Whether tile "p" computes on tensor cores under "cfg". */
static bool tc_on(const ts_stage_plan *p, const ts_config *cfg)
{
	return p->knob_tc >= 0 && ts_config_get(cfg, p->knob_tc, 0);
}

/* The tensor-core factors of tile "p" under "cfg": "f"[t] for the rows,
 * columns and reduction (t = 0, 1, 2), in units of 16, outermost level
 * first. */
static void tc_factors(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int64_t f[3][3])
{
	for (int t = 0; t < 3; t++)
		factors(tp, p, cfg, -1 - t, f[t]);
}

/* Tile the stage of plan "p" in "sch" for tensor cores as "cfg" of "tp"
 * says: rows and columns split into block, warp, fragments per warp and
 * 16, the reduction into outer and inner steps of 16; loops run block,
 * warp, outer and inner reduction, fragments, then the 16 x 16 x 16
 * fragment itself (all unrolled), tensorized: the emitter runs it as one
 * wmma step.  The warp loop is bound to threadIdx.y (the emitter gives
 * each of its iterations a warp), the accumulator tile is cached there
 * and both operands are staged in shared memory at the outer reduction
 * loop.  "in_block": computed at a consumer's block loop, so without a
 * block level; other spatial axes are left to the block loop. */
static ts_status apply_tc(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch, bool in_block)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const char *lv[3][3], *in16[3], *order[TS_MAX_AXES + 12], *blk, *warp;
	const char *blocks[TS_MAX_AXES];
	int ax[3] = { p->tc_m, p->tc_n, s->ndim + p->tc_k }, n = 0, nb = 0;
	int first = in_block ? 1 : 0;
	int64_t f[3][3];

	tc_factors(tp, p, cfg, f);
	for (int t = 0; t < 3; t++) {
		const char *name = ts_stage_axis(s, ax[t])->name;
		int levels = t < 2 ? 3 - first : 2;
		if (ts_schedule_split(sch, s->name, name, 16, TS_TAIL_GUARD) < 0 ||
		    split_levels(sch, s->name, ts_asprintf("%s.o", name),
		    levels, f[t] + (t < 2 ? first : 0), lv[t] + (t < 2 ?
		    first : 0)) < 0)
			return TS_ERROR;
		in16[t] = ts_asprintf("%s.i", name);
	}
	for (int a = 0; a < s->ndim; a++)
		if (a != p->tc_m && a != p->tc_n)
			order[n++] = blocks[nb++] = s->axes[a]->name;
	for (int t = first; t < 3; t++) {
		for (int u = 0; u < 2; u++)
			order[n++] = lv[u][t];
		if (!in_block && t == 0) {
			blocks[nb++] = lv[0][0];
			blocks[nb++] = lv[1][0];
		}
		if (t == 1) {
			order[n++] = lv[2][0];
			order[n++] = lv[2][1];
		}
	}
	for (int t = 0; t < 3; t++)
		order[n++] = in16[t];
	if (ts_schedule_reorder(sch, s->name, n, order) < 0)
		return TS_ERROR;
	if (!in_block && (fuse_all(sch, s->name, nb, blocks, &blk) < 0 ||
	    ts_schedule_bind(sch, s->name, blk, TS_BIND_BLOCK_X) < 0))
		return TS_ERROR;
	if (fuse_all(sch, s->name, 2, (const char *[]){ lv[0][1], lv[1][1] },
	    &warp) < 0 ||
	    ts_schedule_bind(sch, s->name, warp, TS_BIND_THREAD_Y) < 0 ||
	    ts_schedule_cache_write(sch, s->name, warp) < 0)
		return TS_ERROR;
	for (int i = 0; i < s->ninputs; i++)
		if (ts_schedule_cache_read(sch, s->name, s->inputs[i]->name,
		    lv[2][0], 0, NULL) < 0)
			return TS_ERROR;
	for (int k = 0; k < 6; k++)
		if (ts_schedule_unroll(sch, s->name, k < 3 ? in16[k] :
		    k < 5 ? lv[k - 3][2] : lv[2][1]) < 0)
			return TS_ERROR;
	return ts_schedule_tensorize(sch, s->name, in16[0]);
}

/* Schedule tensor-core anchor "p" of "tp" with its epilogue in "sch" as
 * "cfg" says: the epilogue's block tile (the anchor's block tile of rows
 * and columns) is fused and spread over the warps (threadIdx.y) and
 * their 32 lanes (threadIdx.x),
 * neighbouring lanes on neighbouring elements; the anchor is computed at
 * its block loop into a block tile in shared memory. */
static ts_status apply_tc_fused(const ts_gpu_template *tp,
	const ts_stage_plan *p, const ts_config *cfg, ts_schedule *sch)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage *c = tp->dag->stages[p->fuse_consumer];
	const char *order[TS_MAX_DIMS + 2], *blocks[TS_MAX_DIMS], *blk, *e;
	int64_t f[3][3], bt[2], warps;
	int n = 0, nb = 0;

	tc_factors(tp, p, cfg, f);
	for (int t = 0; t < 2; t++)
		bt[t] = f[t][1] * f[t][2] * 16;
	warps = f[0][1] * f[1][1];
	for (int t = 0; t < 2; t++)
		if (ts_schedule_split(sch, c->name, c->axes[t ? p->tc_n :
		    p->tc_m]->name, bt[t], TS_TAIL_GUARD) < 0)
			return TS_ERROR;
	for (int a = 0; a < c->ndim; a++)
		if (a != p->tc_m && a != p->tc_n)
			order[n++] = blocks[nb++] = c->axes[a]->name;
	for (int k = 0; k < 4; k++)
		order[n++] = ts_asprintf("%s.%s", c->axes[k & 1 ? p->tc_n :
			p->tc_m]->name, k < 2 ? "o" : "i");
	blocks[nb++] = order[n - 4];
	blocks[nb++] = order[n - 3];
	if (ts_schedule_reorder(sch, c->name, n, order) < 0 ||
	    fuse_all(sch, c->name, nb, blocks, &blk) < 0 ||
	    ts_schedule_bind(sch, c->name, blk, TS_BIND_BLOCK_X) < 0 ||
	    fuse_all(sch, c->name, 2, order + n - 2, &e) < 0 ||
	    ts_schedule_split(sch, c->name, e, 32, TS_TAIL_GUARD) < 0 ||
	    ts_schedule_split(sch, c->name, ts_asprintf("%s.o", e),
	    bt[0] * bt[1] / 32 / warps, TS_TAIL_GUARD) < 0 ||
	    ts_schedule_reorder(sch, c->name, 3, (const char *[]){
	    ts_asprintf("%s.o.o", e), ts_asprintf("%s.i", e),
	    ts_asprintf("%s.o.i", e) }) < 0 ||
	    ts_schedule_bind(sch, c->name, ts_asprintf("%s.o.o", e),
	    TS_BIND_THREAD_Y) < 0 ||
	    ts_schedule_bind(sch, c->name, ts_asprintf("%s.i", e),
	    TS_BIND_THREAD_X) < 0 ||
	    ts_schedule_unroll(sch, c->name, ts_asprintf("%s.o.i", e)) < 0 ||
	    ts_schedule_compute_at(sch, s->name, c->name, blk) < 0)
		return TS_ERROR;
	return apply_tc(tp, p, cfg, sch, true);
}

/* Schedule anchor "p" with its epilogue: the epilogue takes the block,
 * thread, virtual thread and register levels; the anchor is computed at
 * its block loop into a block tile, with its own thread loop. */
static ts_status apply_fused(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_schedule *sch)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_stage *c = tp->dag->stages[p->fuse_consumer];
	const char *lv[TS_MAX_DIMS][4], *order[TS_MAX_DIMS * 4], *blk, *thr;
	const char *lvl[TS_MAX_DIMS] = { 0 };
	static const int horder[] = { 0, 2, 1, 3 };
	int64_t f[TS_MAX_LEVELS];
	int n = 0;

	for (int a = 0; a < c->ndim; a++) {
		factors(tp, p, cfg, a, f);
		if (split_levels(sch, c->name, c->axes[a]->name, 4, f,
		    lv[a]) < 0)
			return TS_ERROR;
	}
	for (int k = 0; k < 4; k++)
		for (int a = 0; a < c->ndim; a++)
			order[n++] = lv[a][horder[k]];
	if (ts_schedule_reorder(sch, c->name, n, order) < 0)
		return TS_ERROR;
	for (int k = 0; k < 2; k++) {
		for (int a = 0; a < c->ndim; a++)
			lvl[a] = lv[a][horder[k]];
		if (fuse_all(sch, c->name, c->ndim, lvl, k ? &thr : &blk) < 0 ||
		    ts_schedule_bind(sch, c->name, k ? thr : blk,
		    k ? TS_BIND_THREAD_X : TS_BIND_BLOCK_X) < 0)
			return TS_ERROR;
	}
	for (int a = 0; a < c->ndim; a++)
		if (ts_schedule_unroll(sch, c->name, lv[a][1]) < 0 ||
		    ts_schedule_unroll(sch, c->name, lv[a][3]) < 0)
			return TS_ERROR;
	if (ts_schedule_compute_at(sch, s->name, c->name, blk) < 0)
		return TS_ERROR;
	return apply_tile(tp, p, cfg, sch, 1);
}

ts_schedule *ts_gpu_template_apply(const ts_gpu_template *tp,
	const ts_config *cfg)
{
	const ts_dag *dag = tp->dag;
	ts_schedule *sch = ts_schedule_new(tp->ctx, dag);

	/* Consumers before producers: compute_at needs the consumer's
	 * loops. */
	for (int i = dag->nstages - 1; i >= 0; i--) {
		const ts_stage_plan *p = &tp->plans[i];
		const ts_stage *s = dag->stages[i];
		ts_status st = TS_OK;
		int64_t thr = p->knob_threads >= 0 ?
			choice_num(tp, cfg, p->knob_threads) : 0;
		int64_t vec = p->knob_vec >= 0 ?
			choice_num(tp, cfg, p->knob_vec) : 1;
		switch (p->rule) {
		case TS_RULE_INLINE:
			st = ts_schedule_compute_inline(sch, s->name);
			break;
		case TS_RULE_LOCATION:
			if (ts_config_get(cfg, p->knob_at, 0) == 1)
				st = ts_schedule_compute_inline(sch, s->name);
			else
				st = apply_direct(sch, s, thr, vec);
			break;
		case TS_RULE_PLAIN:
			if (p->fused_into >= 0 &&
			    fused(&tp->plans[p->fused_into], cfg))
				break;	/* scheduled with its anchor */
			st = apply_direct(sch, s, thr, vec);
			break;
		case TS_RULE_REDUCE:
			if (ts_config_get(cfg, p->knob_cross, 0))
				st = apply_cross(sch, s, choice_num(tp, cfg,
					p->knob_rthreads));
			else
				st = apply_direct(sch, s, thr, vec);
			break;
		case TS_RULE_TILE:
			if (tc_on(p, cfg))
				st = fused(p, cfg) ? apply_tc_fused(tp, p, cfg,
					sch) : apply_tc(tp, p, cfg, sch, false);
			else
				st = fused(p, cfg) ? apply_fused(tp, p, cfg,
					sch) : apply_tile(tp, p, cfg, sch, 0);
			break;
		default:
			break;
		}
		if (st < 0)
			return NULL;
	}
	if (ts_schedule_check(sch) < 0)
		return NULL;
	return sch;
}

/* Whether every access of "si" moves by 0 or 1 element along axis "a"
 * (neighbouring threads on "a" touch neighbouring elements). */
static bool coalesced_on(const ts_stage_info *si, int a)
{
	if (a < 0)
		return true;
	for (int k = 0; k < si->naccesses; k++) {
		int64_t st = si->accesses[k].stride[a];
		if (st != 0 && st != 1)
			return false;
	}
	return true;
}

/* The block tile of "p" under "cfg": per axis, the block's spatial
 * extent and the inner reduction extent ("size"); the outer reduction
 * steps go to "*steps". */
static void block_tile(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, int64_t *size, int64_t *steps)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int64_t f[TS_MAX_LEVELS], tc[3][3];

	*steps = 1;
	if (tc_on(p, cfg)) {
		tc_factors(tp, p, cfg, tc);
		for (int a = 0; a < s->ndim + s->nraxes; a++)
			size[a] = 1;
		size[p->tc_m] = tc[0][1] * tc[0][2] * 16;
		size[p->tc_n] = tc[1][1] * tc[1][2] * 16;
		size[s->ndim + p->tc_k] = tc[2][1] * 16;
		*steps = tc[2][0];
		return;
	}
	for (int a = 0; a < s->ndim + s->nraxes; a++) {
		factors(tp, p, cfg, a, f);
		size[a] = a < s->ndim ? f[1] * f[2] * f[3] : f[1];
		if (a >= s->ndim)
			*steps *= f[0];
	}
}

/* The number of blocks of tile "p" under "cfg". */
static int64_t tile_blocks(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int64_t size[TS_MAX_AXES], steps, blocks = 1;

	block_tile(tp, p, cfg, size, &steps);
	for (int a = 0; a < s->ndim; a++)
		blocks *= s->axes[a]->extent / size[a];
	return blocks;
}

/* Bytes of shared memory the staged inputs of tile "p" take under "cfg"
 * (a block tile times the inner reduction tile). */
static int64_t tile_shared(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int64_t size[TS_MAX_AXES], steps, bytes = 0;

	block_tile(tp, p, cfg, size, &steps);
	if (tc_on(p, cfg)) {
		for (int i = 0; i < s->ninputs && i < TS_MAX_DIMS; i++)
			bytes += (p->fp[i] ? ts_footprint_volume(p->fp[i], size)
				: ts_tensor_size(s->inputs[i])) *
				(int64_t)ts_dtype_size(s->inputs[i]->dtype);
		return bytes;
	}
	for (int k = 0; k < p->nshared; k++) {
		int i = p->shared_input[k];
		if (!ts_config_get(cfg, p->knob_shared[k], 0) ||
		    i >= TS_MAX_DIMS || !p->fp[i])
			continue;
		bytes += ts_footprint_volume(p->fp[i], size) *
			(int64_t)ts_dtype_size(s->inputs[i]->dtype);
	}
	return bytes;
}

double ts_gpu_template_tile_traffic(const ts_gpu_template *tp,
	const ts_config *cfg, int stage)
{
	const ts_stage_plan *p = &tp->plans[stage];
	const ts_stage *s = tp->dag->stages[stage];
	int64_t size[TS_MAX_AXES], steps, blocks;
	double bytes = 0;

	if (p->rule != TS_RULE_TILE)
		return 0;
	block_tile(tp, p, cfg, size, &steps);
	blocks = tile_blocks(tp, p, cfg);
	for (int i = 0; i < s->ninputs; i++) {
		double vol = i < TS_MAX_DIMS && p->fp[i] ?
			(double)ts_footprint_volume(p->fp[i], size) :
			(double)ts_tensor_size(s->inputs[i]) / (double)steps;
		bytes += vol * (double)ts_dtype_size(s->inputs[i]->dtype);
	}
	return bytes * (double)steps * (double)blocks;
}

bool ts_gpu_template_tensor_core(const ts_gpu_template *tp,
	const ts_config *cfg, int stage)
{
	return tc_on(&tp->plans[stage], cfg);
}

const char *ts_gpu_template_tc_reason(const ts_gpu_template *tp, int stage)
{
	const ts_stage_plan *p = &tp->plans[stage];

	if (p->knob_tc >= 0)
		return NULL;
	if (p->rule != TS_RULE_TILE)
		return ts_asprintf("stage '%s' is not a complex reduction",
			tp->dag->stages[stage]->name);
	return p->tc_reason;
}

bool ts_gpu_template_fused(const ts_gpu_template *tp, const ts_config *cfg,
	int stage)
{
	return fused(&tp->plans[stage], cfg);
}

/* How tile "p" runs on tensor cores under "cfg": 32 lanes per warp, a
 * lane's share of the warp's fragments, both operands staged, a 16 x 16
 * staging tile per warp for the accumulator's write-back and the block
 * tile of a fused epilogue. */
static void tc_launch(const ts_gpu_template *tp, const ts_stage_plan *p,
	const ts_config *cfg, ts_gpu_launch *out)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int64_t f[3][3], warps, frags, acc = ts_dtype_size(s->out->dtype);

	tc_factors(tp, p, cfg, f);
	out->steps = f[2][0];
	warps = f[0][1] * f[1][1];
	frags = f[0][2] * f[1][2];
	out->tensor_core = true;
	out->blocks = tile_blocks(tp, p, cfg);
	out->threads = 32 * warps;
	out->per_thread = frags * 8;
	out->shared_bytes = tile_shared(tp, p, cfg) + warps * 256 * acc;
	if (fused(p, cfg))
		out->shared_bytes += warps * frags * 256 * acc;
	/* Accumulators (8 a fragment), operand fragments, addresses. */
	out->registers = 40 + frags * 8 + (f[0][2] + f[1][2]) * 8;
	out->coalesced = true;
}

void ts_gpu_template_launch(const ts_gpu_template *tp, const ts_config *cfg,
	int stage, ts_gpu_launch *out)
{
	const ts_stage_plan *p = &tp->plans[stage];
	const ts_stage *s = tp->dag->stages[stage];
	const ts_stage_info *si = tp->info->stages[stage];
	int64_t e = si->spatial_extent, f[TS_MAX_LEVELS], size[TS_MAX_AXES];

	memset(out, 0, sizeof(*out));
	out->stage = stage;
	out->blocks = out->threads = out->per_thread = 1;
	out->coalesced = true;
	out->registers = 32;
	if (p->rule == TS_RULE_INLINE || (p->rule == TS_RULE_LOCATION &&
	    ts_config_get(cfg, p->knob_at, 0) == 1) || (p->fused_into >= 0 &&
	    fused(&tp->plans[p->fused_into], cfg)))
		return;
	out->kernel = true;
	if (p->rule == TS_RULE_REDUCE && ts_config_get(cfg, p->knob_cross, 0)) {
		out->cross = true;
		out->blocks = e;
		out->threads = TS_MIN(choice_num(tp, cfg, p->knob_rthreads),
			si->reduce_extent);
		out->shared_bytes = out->threads * 8;
		out->coalesced = coalesced_on(si, s->ndim + s->nraxes - 1);
		return;
	}
	if (p->rule != TS_RULE_TILE) {
		int64_t v = choice_num(tp, cfg, p->knob_vec);
		out->threads = s->ndim ? TS_MIN(choice_num(tp, cfg,
			p->knob_threads), e) : 1;
		out->per_thread = (e + out->threads - 1) / out->threads > v ?
			v : 1;
		out->blocks = (e + out->threads * out->per_thread - 1) /
			(out->threads * out->per_thread);
		out->registers = 24 + 4 * out->per_thread;
		out->coalesced = coalesced_on(si, s->ndim - 1);
		return;
	}
	if (tc_on(p, cfg)) {
		tc_launch(tp, p, cfg, out);
		return;
	}
	/* The register tile's extents in "size": one iteration of each
	 * reduction axis, whose outer level counts the steps. */
	out->steps = 1;
	for (int a = 0; a < s->ndim + s->nraxes; a++) {
		factors(tp, p, cfg, a, f);
		size[a] = a < s->ndim ? f[1] * f[3] : 1;
		if (a >= s->ndim) {
			out->steps *= f[0];
			continue;
		}
		out->blocks *= f[0];
		out->threads *= f[2];
		out->per_thread *= f[1] * f[3];
	}
	/* Per reduction iteration a thread loads what its register tile
	 * reads of each operand (its footprint at the tile's extents): an
	 * a x b tile whose operands each read one of its axes loads
	 * a + b values. */
	for (int i = 0; i < s->ninputs; i++)
		out->operand_loads += i < TS_MAX_DIMS && p->fp[i] ?
			(double)ts_footprint_volume(p->fp[i], size) :
			(double)out->per_thread;
	out->shared_bytes = tile_shared(tp, p, cfg);
	if (fused(p, cfg)) {
		int64_t tile = out->threads * out->per_thread;
		out->shared_bytes += tile * (int64_t)ts_dtype_size(s->out->dtype);
	}
	out->registers = 32 + out->per_thread + 2 * (int64_t)sqrt((double)
		out->per_thread) + 4;
	/* Unstaged inputs are read by each thread along its register tile:
	 * neighbouring threads are a register tile apart. */
	out->coalesced = true;
	for (int k = 0; k < p->nshared; k++)
		if (!ts_config_get(cfg, p->knob_shared[k], 0))
			out->coalesced = false;
}

bool ts_gpu_template_stage_fits(const ts_gpu_template *tp,
	const ts_config *cfg, int stage)
{
	const ts_target_gpu *g = &tp->target->gpu;
	int64_t maxt = g->max_threads_per_block ? g->max_threads_per_block
		: 1024;
	int64_t shm = g->shared_per_block ? g->shared_per_block : 48 * 1024;
	ts_gpu_launch l;

	/* The emitter declares static shared memory: at most 48 KiB. */
	shm = TS_MIN(shm, 48 * 1024);
	ts_gpu_template_launch(tp, cfg, stage, &l);
	return !l.kernel || !(l.threads > maxt ||
		l.shared_bytes + 8 * l.threads > shm || l.registers > 255 ||
		(g->registers_per_block &&
		 l.registers * l.threads > g->registers_per_block) ||
		l.blocks > INT32_MAX);
}

bool ts_gpu_template_fits(const ts_gpu_template *tp, const ts_config *cfg)
{
	for (int s = 0; s < tp->dag->nstages; s++)
		if (!ts_gpu_template_stage_fits(tp, cfg, s))
			return false;
	return true;
}

void ts_gpu_template_print(FILE *out, const ts_gpu_template *tp)
{
	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		fprintf(out, "stage %s: %s, rule %s",
			tp->dag->stages[s]->name, ts_class_name(p->klass),
			ts_rule_name(p->rule));
		if (p->fuse_consumer >= 0)
			fprintf(out, ", may fuse %s",
				tp->dag->stages[p->fuse_consumer]->name);
		if (p->knob_tc >= 0)
			fprintf(out, ", tensor cores possible");
		fprintf(out, "\n");
	}
	ts_space_print(out, tp->space);
}
