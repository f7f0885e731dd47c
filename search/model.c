/* The analytical model of static filling: an estimate of the time of a
 * configuration on a CPU target, from the template's loop nests, the
 * analysis' footprints and the target's parameters.  No isl, no
 * measurement: it rates thousands of configurations per second.
 *
 * The nest it rates (ts_template_nest) is the tiling that
 * ts_template_apply turns into schedule steps, every decision taken once
 * in metatemplates/template.c, and test_template checks it loop by loop
 * against the loop IR that lowering produces, on the catalogue and on
 * generated declarations.  It does not lower each candidate itself:
 * lowering takes 0.3 to 1.7 ms a configuration of one operator where
 * the nest takes about 1 us (measured on a Zen 3 for the catalogue's
 * operators), and a static search rates some 17,000 configurations of a
 * convolution. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include <tessel/search.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "analysis/facts.h"
#include "search/model.h"

/* Fractions of each cache a working set may fill before it is
 * considered not to fit (associativity, other data). */
static const double fill_fraction[3] = { 0.5, 0.6, 0.6 };

/* Starting and joining a team of threads, in seconds: about 0.6 us back
 * to back on two cores of an AMD Zen 4, 1 to 2 us after serial work
 * (libgomp), with a margin for waking a sleeping worker. */
static const double team_start_s = 3e-6;

/* Fill "m" for template "tp": the traffic model of every tiled stage. */
/* Integer divisions and modulos of 64-bit values in "e" by anything but
 * a power of two.  x86 has no vector 64-bit multiply-high, so LLVM
 * computes them one lane at a time, vectorised or not, at about 2.5
 * cycles each (measured on an AVX2 target: an elementwise stage with
 * three of them, 3.0 ms for a million elements where the model, counting
 * each as an add, said 0.6 ms). */
static int wide_divmods(const ts_expr *e)
{
	int n = 0;

	if (!e || e->kind == TS_EXPR_LOAD)
		return 0;
	if (e->kind == TS_EXPR_BINARY && (e->op == TS_OP_FLOORDIV ||
	    e->op == TS_OP_MOD) && e->a->dtype == TS_I64 &&
	    !(e->b->kind == TS_EXPR_INT && e->b->ival > 0 &&
	      !(e->b->ival & (e->b->ival - 1))))
		n = 1;
	return n + wide_divmods(e->a) + wide_divmods(e->b) +
		wide_divmods(e->c);
}

static void row_groups_init(ts_model *m);

ts_status ts_model_init(ts_model *m, const ts_template *tp)
{
	const ts_dag *dag = tp->dag;

	m->tp = tp;
	m->traffic = ts_new_array(ts_traffic *, dag->nstages + 1);
	m->divmods = ts_new_atomic(int, dag->nstages + 1);
	for (int s = 0; s < dag->nstages; s++) {
		ts_rule r = tp->plans[s].rule;
		m->divmods[s] = wide_divmods(dag->stages[s]->body);
		if (r != TS_RULE_TILE && r != TS_RULE_PLAIN)
			continue;
		m->traffic[s] = ts_traffic_new(tp->ctx, dag->stages[s]);
		if (!m->traffic[s])
			return TS_ERROR;
	}
	row_groups_init(m);
	return TS_OK;
}

/* Lanes of a vector of the dtype the stage computes in on the target:
 * its output's, except f16 and bf16, which are computed in f32
 * (doc/grammar.md), so
 * its vectors hold as many lanes as f32 ones (measured: an f16 max over a
 * 3x3 window rated for 32 lanes on AVX-512 ran 4x slower than the naive nest
 * the model had rated 7x slower than it). */
static int lanes_of(const ts_template *tp, const ts_stage *s)
{
	int l = ts_target_lanes(tp->target, s->out->dtype == TS_F16 ||
		s->out->dtype == TS_BF16 ? TS_F32 : s->out->dtype);

	return l > 0 ? l : 1;
}

/* How the innermost work of a nest runs: the vectorized loop, the loop
 * LLVM's loop vectorizer takes itself, or scalar code. */
struct run_vec {
	int axis;		/* stage axis of the vectors, or -1 */
	int64_t width;		/* elements per vector iteration */
	bool implicit;		/* vectorized by LLVM, not by the schedule */
	bool masked;		/* a guarded tail on the vector axis: every
				 * vector access is masked */
	bool guard_masked;	/* the loads test an inlined producer's
				 * guard (padding) lane by lane */
	int64_t trip;		/* implicit: iterations of that loop */
	int loop;		/* implicit: the position of that loop */
	bool reduce_inside;	/* implicit: every reduction loop runs
				 * inside it (LLVM keeps independent
				 * accumulators per vector iteration) */
};

/* Reduction iterations nested in the body of "si" (reductions inside
 * the expression, not loops of the nest): LLVM unrolls small ones. */
static int64_t nested_reduce_trip(const ts_stage_info *si)
{
	int64_t m = 1;

	for (int k = 0; k < si->naccesses; k++)
		if (si->spatial_extent > 0 &&
		    si->accesses[k].instances / si->spatial_extent > m)
			m = si->accesses[k].instances / si->spatial_extent;
	return m;
}

/* Whether LLVM may vectorise a loop over a reduction axis of "s": an
 * integer reduction, whose order does not change its result (a float
 * sum keeps its order without fast-math; measured: the naive nest of an
 * i32 row minimum over 1024 columns, rated 16x slower than a vectorised
 * rfactor, ran 1.2x faster than it). */
static bool reassociable(const ts_stage *s)
{
	return s->body->kind == TS_EXPR_REDUCE &&
		ts_dtype_is_int(s->body->dtype);
}

/* Whether the vector loop of "n" runs past the end of its (spatial) axis,
 * so that it tests a guard in every iteration (a tail that runs as a
 * loop of its own leaves the whole tiles unguarded). */
static bool vector_overshoots(const ts_nest *n, const ts_stage *s)
{
	int64_t prod = 1;

	if (n->vec_axis < 0 || n->vec_axis >= s->ndim || n->vec_width <= 1 ||
	    n->vec_axis == n->tail_loop)
		return false;
	for (int k = 0; k < n->nloops; k++)
		if (n->loops[k].axis == n->vec_axis)
			prod *= n->loops[k].trip;
	return prod > s->axes[n->vec_axis]->extent;
}

/* Fill "rv" with how nest "n" of stage "s" runs its innermost work on
 * "lanes" lanes.  Without a vectorized loop, LLVM first unrolls whole
 * the innermost loops of a small body (up to 32 iterations together,
 * nested reductions of the body included), then vectorizes the loop
 * around them when it is a serial spatial loop of at least a vector,
 * every access moves by 0 or 1 element along it (loads by a small
 * constant stride are interleaved) and the schedule unrolls nothing
 * beneath it (measured: 8 to 32 unrolled copies of a row under it ran
 * 1.4x to 2x slower, and a 28-wide row unrolled whole left the loop
 * around it to gathers, 4x slower).  A load under a guard inlined from a
 * producer ("guarded": padding) keeps LLVM from vectorizing at all
 * (measured on a guarded copy read through a 3x3 window: 6x slower
 * inlined than computed at root). */
static void run_vector(const ts_stage_info *si, const ts_nest *n,
	const ts_stage *s, int lanes, bool guarded, struct run_vec *rv)
{
	const ts_nest_loop *lp;
	int64_t inner = 1, step = 1;
	int q, half;
	bool reduce_loops = false;

	/* Reductions in the body, not loops of the nest, unroll too (a
	 * nest with loops of its reduction axes has none). */
	for (int k = 0; k < n->nloops; k++)
		reduce_loops |= n->loops[k].axis >= s->ndim;
	if (!reduce_loops)
		inner = nested_reduce_trip(si);

	rv->axis = -1;
	rv->width = 1;
	rv->implicit = false;
	rv->masked = false;
	rv->guard_masked = false;
	rv->reduce_inside = false;
	rv->trip = 1;
	rv->loop = -1;
	if (n->vec_axis >= 0 && n->vec_width > 1) {
		rv->axis = n->vec_axis;
		rv->width = n->vec_width;
		rv->masked = vector_overshoots(n, s);
		rv->guard_masked = guarded;
		return;
	}
	if (guarded)
		return;
	for (q = n->nloops - 1; q >= 0; q--) {
		int64_t t = n->loops[q].trip;
		if (t <= 1)
			continue;
		if (n->loops[q].kind == TS_LOOP_UNROLLED)
			return;
		if (inner * t > 32)
			break;
		inner *= t;
	}
	/* A guarded load of the stage's own LLVM vectorizes with masked
	 * loads in an innermost loop (a padding copy), but not in a loop
	 * around others, even short ones (measured: a 3x3 average pooling
	 * with its padding written inline, rated as LLVM's vector loop over
	 * the rows around its window, ran scalar: 0.51 ms against 0.09 ms
	 * vectorised by the schedule). */
	if (q < 0 || (inner > 1 && ts_body_has_guarded_load(s->body)))
		return;
	lp = &n->loops[q];
	if (lp->kind != TS_LOOP_SERIAL || (lp->axis >= s->ndim &&
	    !reassociable(s)) || lp->trip < lanes || inner > 16)
		return;
	/* A loop whose split overshoots its axis carries the tail's guard
	 * in its body, and LLVM leaves it scalar (measured: an elementwise
	 * stage over rows of 1000 split 16 x 64 ran 2.1x slower than the
	 * same loop unsplit, which LLVM vectorized). */
	if (lp->axis < s->ndim && lp->axis != n->tail_loop) {
		int64_t prod = 1;
		for (int k = 0; k < n->nloops; k++)
			if (n->loops[k].axis == lp->axis)
				prod *= n->loops[k].trip;
		if (prod > s->axes[lp->axis]->extent)
			return;
	}
	for (int k = q + 1; k < n->nloops; k++)
		if (n->loops[k].axis == lp->axis)
			step *= n->loops[k].trip;
	for (int k = 0; k < si->naccesses; k++) {
		int64_t st = si->accesses[k].stride[lp->axis] * step;
		int64_t b = si->accesses[k].block[lp->axis];
		/* A blocked layout read by tiles that do not start on its
		 * blocks: the quotient and remainder of each index stay in
		 * the loop and LLVM leaves it scalar (measured: a dense
		 * layer over weights blocked by 8, its 500 outputs in tiles
		 * of 125, 0.236 ms against 0.024 ms in tiles of 64). */
		if (b > 0 && (step * lp->trip) % b != 0)
			return;
		/* Tiles that start on the blocks but span several: LLVM
		 * computes each lane's quotient and remainder, and where it
		 * takes gathers for cheap (every AVX-512 target, in its
		 * X86 cost model) it gathers them (measured on a Zen 4: the
		 * same dense layer over weights blocked by 16, tiles of 64,
		 * 0.165 ms with gathers; compiled for a Zen 3, whose
		 * gathers LLVM avoids, the loop ran 0.018 ms). */
		if (b > 0 && step * lp->trip > b && lanes >= 16)
			return;
		if (st == 0 || st == 1)
			continue;
		if (si->accesses[k].write || st < 0 || st > 4)
			return;
	}
	rv->axis = lp->axis;
	rv->implicit = true;
	rv->trip = lp->trip;
	rv->loop = q;
	rv->reduce_inside = true;
	for (int k = 0; k < q; k++)
		if (n->loops[k].axis >= s->ndim && n->loops[k].trip > 1)
			rv->reduce_inside = false;
	/* Vectors of "lanes", the rest by a vector of half as many, then
	 * lane by lane: elements per vector instruction. */
	half = lanes > 1 ? lanes / 2 : 1;
	rv->width = lp->trip / lanes + lp->trip % lanes / half +
		lp->trip % lanes % half;
	rv->width = rv->width > 0 ? lp->trip / rv->width : 1;
	if (rv->width < 1)
		rv->width = 1;
}

/* The time of the horizontal reductions of nest "n" of "s" when "rv" is
 * a loop over a reduction axis that LLVM vectorises itself: each run of
 * the loop ends by folding its vector accumulators into one lane, about
 * two cycles a halving of "lanes" and a few more to leave the loop
 * (measured: an i8 matrix product so vectorised along its reduction ran
 * 1.5x slower than the same tiles vectorised along a column). */
static double fold_time(const struct run_vec *rv, const ts_nest *n,
	const ts_stage *s, int lanes, double f, int threads)
{
	double runs;

	if (!rv->implicit || rv->axis < s->ndim || rv->trip <= 1)
		return 0;
	runs = (double)n->padded / (double)rv->trip;
	return runs * (2.0 * log2(lanes > 1 ? lanes : 2) + 6.0) /
		(f * threads);
}

/* The time of combining the partial results of nest "n" of "s" when its
 * vector runs along a reduction axis by rfactor: a buffer of "w" partial
 * results per output point, "v" vectors, set, loaded and stored around
 * the reduction, then halved vector by vector before the lanes of the
 * last are folded; about ten cycles for each vector past the first and
 * each halving (measured on a Zen 4: a max over 1024 rows of 1024,
 * 0.052 ms with 16 partial results a row, 0.063 ms with 32, 0.086 ms
 * with 64; the model, which priced no combining, rated 64 the fastest).
 * One vector costs about what folding any accumulator does: charged for
 * every lane, the combining made a softmax's row sums of 128 columns for
 * an AVX2 target leave the rfactor for vectors across rows, 0.018 ->
 * 0.104 ms. */
static double combine_time(const ts_nest *n, const ts_stage *s,
	int lanes, double f, int threads)
{
	double points = 1, w = (double)n->vec_width, v;

	if (n->vec_axis < s->ndim || w <= 1)
		return 0;
	for (int a = 0; a < s->ndim; a++)
		points *= (double)s->axes[a]->extent;
	v = ceil(w / (lanes > 1 ? lanes : 1));
	return points * (3.0 * (v - 1) + log2(v)) * 10.0 / (f * threads);
}

/* Fraction of the vector lanes doing useful, contiguous work in "n". */
static double vector_efficiency(const ts_stage_info *si, const ts_nest *n,
	int lanes, const ts_stage *s, bool tiled_loads, bool guarded)
{
	double eff;

	if (n->vec_axis < 0 || n->vec_width <= 1) {
		struct run_vec rv;
		run_vector(si, n, s, lanes, guarded, &rv);
		if (!rv.implicit)
			return 1.0 / lanes;
		eff = (double)rv.width / lanes;
		for (int k = 0; k < si->naccesses; k++) {
			int64_t st = si->accesses[k].stride[rv.axis];
			if (st != 0 && st != 1)
				eff *= 0.5;	/* interleaved: shuffles */
		}
		return eff;
	}
	/* A vector of a power-of-two number of native registers is split
	 * by LLVM; any other width wider than one register is rebuilt lane
	 * by lane (measured: 48 f32 lanes on 16-lane AVX-512 run 40x slower
	 * than 32 or 64). */
	if (n->vec_width > lanes && (n->vec_width % lanes ||
	    ((n->vec_width / lanes) & (n->vec_width / lanes - 1))))
		return 1.0 / lanes;
	if (n->vec_width > 4 * lanes)
		return 0.5 / lanes;
	eff = (double)n->vec_width / (lanes * ((n->vec_width + lanes - 1) /
		lanes));
	for (int k = 0; k < si->naccesses; k++) {
		int64_t st = si->accesses[k].stride[n->vec_axis];
		/* A gather or scatter costs about a scalar access per
		 * lane (register tiles count their loads themselves, and
		 * write their accumulators once per tile). */
		if (tiled_loads)
			continue;
		if (st != 0 && st != 1)
			eff *= 1.5 / lanes;
	}
	return eff;
}

/* Whether the tensor of access "ac" of plan "p" is packed under "cfg"
 * into a layout whose last dimension is the one the vector axis "v"
 * walks, one element a lane: a copy that moves the dimension last but
 * is indexed by 2 * h + r along it still gathers every other element
 * (measured: a stride-2 3x3 convolution vectorised along its output rows
 * over such a copy, built lane by lane, 2x slower than along channels). */
static bool packed_contiguous(const ts_template *tp, const ts_config *cfg,
	const ts_stage_plan *p, const ts_access_info *ac, int v)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	const ts_tensor *t = ac->tensor;
	int perm[TS_MAX_DIMS], n;
	int64_t inner = 1, st;

	for (int k = 0; k < p->npack; k++) {
		if (s->inputs[p->pack_input[k]] != t ||
		    ts_template_pack_where(tp, p, cfg, k) == 0)
			continue;
		n = ts_template_pack_layout(tp, p, cfg, t, perm);
		if (n <= 0 || v < 0)
			return false;
		for (int d = perm[n - 1] + 1; d < t->ndim; d++)
			inner *= t->shape[d];
		st = ac->stride[v];
		return st != TS_STRIDE_UNKNOWN && (st == inner || st == -inner);
	}
	return false;
}

/* Whether index "e" moves by exactly one when "axis" does: the axis
 * itself, or a sum with it on one side only. */
static bool unit_index(const ts_expr *e, const ts_axis *axis)
{
	if (e->kind == TS_EXPR_VAR)
		return e->axis == axis;
	if (e->kind != TS_EXPR_BINARY ||
	    (e->op != TS_OP_ADD && e->op != TS_OP_SUB))
		return false;
	if (unit_index(e->a, axis))
		return !ts_expr_uses_axis(e->b, axis);
	return e->op == TS_OP_ADD && unit_index(e->b, axis) &&
		!ts_expr_uses_axis(e->a, axis);
}

/* The stride of access "ac" of stage "s" along axis "a": the analysis'
 * one, or, where it could not tell (a floor division elsewhere in the
 * access), 0 or 1 read from the indices as the code generator reads
 * them. */
static int64_t access_stride(const ts_access_info *ac, const ts_stage *s,
	int a)
{
	const ts_axis *axis = ts_stage_axis(s, a);
	const ts_expr *ld = ac->load;
	bool used = false;

	if (ac->stride[a] != TS_STRIDE_UNKNOWN || !ld || ld->nargs == 0)
		return ac->stride[a];
	for (int i = 0; i < ld->nargs - 1; i++)
		used |= ts_expr_uses_axis(ld->args[i], axis);
	if (!used && !ts_expr_uses_axis(ld->args[ld->nargs - 1], axis))
		return 0;
	if (!used && unit_index(ld->args[ld->nargs - 1], axis))
		return 1;
	return TS_STRIDE_UNKNOWN;
}

static bool page_step(const ts_stage_info *si, const ts_nest *n,
	const ts_tensor *t, size_t elem);

/* Whether input "t" of plan "p" is copied by some pack under "cfg". */
static bool packed_any(const ts_template *tp, const ts_config *cfg,
	const ts_stage_plan *p, const ts_tensor *t)
{
	const ts_stage *s = tp->dag->stages[p->stage];

	for (int k = 0; k < p->npack; k++)
		if (s->inputs[p->pack_input[k]] == t &&
		    ts_template_pack_where(tp, p, cfg, k) != 0)
			return true;
	return false;
}

/* The load-port cost of one register of access "ac" along vector axis
 * "vec_axis" ("width" elements a vector), read in place: 1, or more when its vectors do not start
 * on a cache line (the index along the axis is offset by another axis,
 * as x + rx under a window, or the vector is not a whole number of
 * lines): a register of B bytes then straddles two lines (B - 4) / 64 of
 * the time, and a straddling load takes both halves' cycles (measured: a
 * 28 x 14-lane tile of a sum over a 3x3 window and 64 channels,
 * loads per FMA near one, ran
 * at half the rate the model gave it). */
static double split_cost(const ts_access_info *ac, const ts_stage *s,
	int vec_axis, int64_t width, int lanes, bool blocks)
{
	const ts_expr *ld = ac->load;
	const ts_axis *axis;
	int64_t elem, reg;

	if (!ld || ld->nargs == 0 || vec_axis < 0)
		return 1;
	axis = ts_stage_axis(s, vec_axis);
	elem = (int64_t)ts_dtype_size(ac->tensor->dtype);
	reg = (width < lanes ? width : lanes) * elem;
	/* The axis itself, or (where "blocks" says so) its remainder in a
	 * blocked layout whose blocks are whole lines: o % 16 over blocks
	 * of 16 floats (measured on a Zen 4: a 400 x 120 product over
	 * weights so blocked, counted straddling, went to two threads at
	 * 0.063 ms against 0.026 ms on one).  Register tiles do not say
	 * so: their calibration on reductions with reuse over blocked
	 * weights includes the count (counted aligned, a network's layout
	 * choice went 1.6x slower, 8.5 -> 13.7 ms). */
	if ((width * elem) % 64 == 0 &&
	    ((ld->args[ld->nargs - 1]->kind == TS_EXPR_VAR &&
	    ld->args[ld->nargs - 1]->axis == axis) ||
	    (blocks && ac->block[vec_axis] > 0 &&
	    (ac->block[vec_axis] * elem) % 64 == 0)))
		return 1;
	return 1.0 + (double)((reg < 64 ? reg : 64) - elem) / 64.0;
}

/* Load-port cycles of one innermost iteration of the register tile of
 * "n": each load brings, per point of the unrolled loops it depends on,
 * a broadcast, one vector per register of the vector loop, or, along
 * the vector axis with a stride other than 0 or 1, a load per lane (a
 * gather).  Adds to "converts" the arithmetic slots taken beside the
 * loads: the vectors loaded from a tensor of another type than the
 * reduction's, the addresses of a tile straddling blocks. */
static double tile_load_cycles(const ts_template *tp, const ts_config *cfg,
	const ts_stage_info *si, const ts_nest *n, int lanes, double *converts)
{
	const ts_stage_plan *p = &tp->plans[n->stage];
	const ts_stage *s = si->stage;
	double cycles = 0;
	bool masked = vector_overshoots(n, s);

	for (int k = 0; k < si->naccesses; k++) {
		const ts_access_info *ac = &si->accesses[k];
		double vecs = 1;
		bool straddle = false;
		if (ac->write)
			continue;
		for (int l = 0; l < n->nloops; l++) {
			const ts_nest_loop *lp = &n->loops[l];
			int64_t b = lp->axis < TS_MAX_AXES ?
				ac->block[lp->axis] : 0;
			if (lp->kind != TS_LOOP_UNROLLED ||
			    !access_stride(ac, s, lp->axis))
				continue;
			vecs *= (double)lp->trip;
			straddle |= b > 0 && b % lp->trip != 0 &&
				lp->trip % b != 0;
		}
		/* Per vector of the tile: a broadcast, a load per
		 * register, or a load per lane (a gather); under the guard
		 * of a vector loop that overshoots its axis, a gather is a
		 * test, a branch and a load per lane, about four
		 * (measured: a stride-2 3x3 convolution whose 111-wide rows
		 * run as 7 vectors of 16, 5x slower than the same kernel on
		 * 112-wide rows). */
		if (n->vec_axis >= 0 && access_stride(ac, s, n->vec_axis)) {
			bool contiguous =
				access_stride(ac, s, n->vec_axis) == 1 ||
				packed_contiguous(tp, cfg, p, ac, n->vec_axis);
			vecs *= contiguous ? (double)((n->vec_width + lanes -
				1) / lanes) : (double)n->vec_width *
				(masked ? 4 : 1);
			if (contiguous && !packed_contiguous(tp, cfg, p, ac,
			    n->vec_axis))
				vecs *= split_cost(ac, s, n->vec_axis,
					n->vec_width, lanes, false);
		}
		/* A tile that straddles the blocks of a blocked layout (12
		 * columns over blocks of 32) computes the block and the
		 * offset of each point at run time, in vector instructions
		 * beside each load that take arithmetic slots (measured: a
		 * 32 x 12 tile of a 128 x 768 x 3072 product over weights
		 * blocked by 32, 9.3 ms against 5.7 ms for a 16 x 8 x 32
		 * tile the model rated alike). */
		if (straddle)
			*converts += 1.5 * vecs;
		/* An operand read in place that moves half a page at every
		 * step waits for a page walk and an L2 line: about 16 cycles
		 * a step that the tile's arithmetic does not hide (measured:
		 * B read from rows 3 KiB apart under a 64 x 6 tile, 2x
		 * slower than the same tile with B packed). */
		if (!packed_any(tp, cfg, p, ac->tensor) && page_step(si, n,
		    ac->tensor, ts_dtype_size(ac->tensor->dtype)))
			vecs += 32;
		cycles += vecs;
		if (s->body->kind == TS_EXPR_REDUCE &&
		    ac->tensor->dtype != s->body->dtype)
			*converts += vecs;
	}
	return cycles / 2.0;
}

/* The position in "n" of the first loop of the reduction loops that run
 * directly around the register tile of a stage with "nspatial" spatial
 * axes, when that tile is unrolled and vectorized whole (the
 * accumulator promotion keeps it in registers across them); n->nloops
 * otherwise. */
static int acc_scope(const ts_nest *n, int nspatial)
{
	int q = n->nloops;

	while (q > 0 && n->loops[q - 1].axis < nspatial) {
		const ts_nest_loop *lp = &n->loops[q - 1];
		if (lp->trip > 1 && lp->kind != TS_LOOP_UNROLLED &&
		    lp->kind != TS_LOOP_VECTORIZED)
			return n->nloops;
		q--;
	}
	if (q == n->nloops || q == 0)
		return n->nloops;
	while (q > 0 && n->loops[q - 1].axis >= nspatial)
		q--;
	return q;
}

/* The share of the time of register tile "n" ("acc" registers, "fma"
 * cycles per reduction step) spent on arithmetic rather than on loading
 * the accumulators before its reduction loops and storing them after: a
 * vector each way per register, or a lane at a time (a gather, then a
 * scatter at about two cycles a lane) when the vector axis is strided in
 * the output the tile accumulates into. */
static double acc_round_trip(const ts_stage_info *si, const ts_nest *n,
	double acc, int lanes, double fma)
{
	const ts_stage *s = si->stage;
	int from = acc_scope(n, s->ndim);
	double steps = 1, cycles = 2 * acc;
	int64_t st = 1;

	if (from == n->nloops)
		return 1;
	for (int q = from; q < n->nloops && n->loops[q].axis >= s->ndim; q++)
		steps *= (double)n->loops[q].trip;
	/* A cache_write tile puts the vector axis last (lowering's
	 * open_cache_write): its round trip is contiguous whatever the
	 * output's layout. */
	for (int k = 0; k < si->naccesses && !n->cache_write; k++)
		if (si->accesses[k].write && n->vec_axis >= 0)
			st = si->accesses[k].stride[n->vec_axis];
	if (n->vec_axis >= 0 && st != 0 && st != 1)
		cycles = 3.0 * acc * (double)(n->vec_width < lanes ?
			n->vec_width : lanes);
	return fma * steps / (fma * steps + cycles);
}

/* Whether the vector axis of nest "n" (of stage "si") is guarded: its
 * tiles overshoot its extent and its tail is not a loop of its own. */
static bool vec_guarded(const ts_stage_info *si, const ts_nest *n)
{
	int a = n->vec_axis;
	int64_t covered = 1;

	if (!n->guarded || a < 0 || a >= si->stage->ndim || n->tail_loop == a)
		return false;
	for (int k = 0; k < n->nloops; k++)
		if (n->loops[k].axis == a)
			covered *= n->loops[k].trip;
	return covered > si->stage->axes[a]->extent;
}

/* The time a product fused into its consumer's tiles (nest "n" of
 * "si", "threads" threads at "f" Hz) spends passing its tile buffer
 * through L2 when the buffer outgrows the core's share of L1: the
 * buffer is cleared, its accumulators loaded and stored around the
 * reduction, and read by the epilogue, four passes over the output, in
 * loops of their own that the arithmetic does not overlap (measured on
 * a Zen 4: a product of 27 terms a point into 64 x 111 x 111 outputs in
 * tiles of 111 x 3 x 32, a 42 KiB buffer, 0.50 ms against 0.39 in tiles
 * of 3 x 3 x 32; rated alike without this).  The buffer holds what the
 * spatial loops inside the product's first reduction loop cover. */
static double fused_buffer_time(const ts_template *tp,
	const ts_stage_info *si, const ts_nest *n, double f, int threads)
{
	const ts_stage *s = si->stage;
	double buf = 1, elem = (double)ts_dtype_size(s->out->dtype);
	bool inside = false;

	if (!n->fused)
		return 0;
	for (int k = 0; k < n->nloops; k++) {
		inside |= n->loops[k].axis >= s->ndim;
		if (inside && n->loops[k].axis < s->ndim)
			buf *= (double)n->loops[k].trip;
	}
	if (!inside || buf * elem <= (double)ts_target_cache_per_core(
	    &tp->target->cpu.l1d) * fill_fraction[0])
		return 0;
	return 4.0 * (double)si->spatial_extent * elem /
		(ts_target_read_bytes_per_cycle(tp->target, 1) * f * threads);
}

/* The arithmetic efficiency of the register tile of reduction nest "n":
 * independent accumulators to hide FMA latency, registers, loads per
 * FMA, and the accumulator kept out of memory. */
static double tile_efficiency(const ts_template *tp, const ts_config *cfg,
	const ts_stage_info *si, const ts_nest *n, int lanes, bool complex)
{
	double v = n->vec_axis >= 0 ? (double)((n->vec_width + lanes - 1) /
		lanes) : 1;
	double u = (double)n->unrolled, acc = u * v, eff = 1;
	const ts_target_cpu *cpu = &tp->target->cpu;
	const ts_expr *body = si->stage->body;
	/* A vector along the reduction (rfactor) accumulates in a buffer
	 * of its own, in registers, whatever the cache_write knob says. */
	bool rfvec = n->vec_axis >= si->stage->ndim;
	/* Independent accumulators to cover the chain: the units times the
	 * latency of one step, 4 cycles for an FMA or an add, 2 for a max
	 * or a min (measured on a Zen 4: a max over rows of 1024, one
	 * vector of 16 a row, 0.052 ms, memory-bound, where counting eight
	 * accumulators needed rated it 2.8x slower than it ran). */
	bool minmax = body->kind == TS_EXPR_REDUCE &&
		(ts_expr_reducer(body) == TS_RED_MAX ||
		ts_expr_reducer(body) == TS_RED_MIN);
	double need = cpu->fma_units * (minmax ? 2.0 : 4.0);
	int regs = cpu->vector_registers > 0 ? cpu->vector_registers : 16;

	eff *= acc >= need ? 1.0 : acc / need;
	if (acc + v + 2 > regs)
		eff *= acc > 2 * regs ? 0.15 : 0.4;
	if (complex) {
		double converts = 0;
		double load_cycles = tile_load_cycles(tp, cfg, si, n, lanes,
			&converts);
		double fma_cycles = acc / cpu->fma_units;
		if (load_cycles > fma_cycles)
			eff *= fma_cycles / load_cycles;
		/* Each operand vector converted to the type of the
		 * arithmetic (f16 to f32, i8 to i32) takes an arithmetic
		 * slot (measured: an f16 reduction with reuse, for an AVX2
		 * target, whose 8x8 tile converts 8 weights per 8 FMAs ran 2x slower
		 * than a 4x2x8 tile converting 4). */
		eff *= acc / (acc + converts);
		eff *= acc_round_trip(si, n, acc, lanes, fma_cycles);
	}
	/* The accumulator stays in registers only when its tile is a
	 * perfect nest: a guarded tail keeps it in memory. */
	if ((!n->cache_write && !rfvec) || n->guarded)
		eff *= 0.5;
	/* A simple reduction whose vectors are guarded (a tile past the end
	 * of its axis, in a loop that cannot run its tail on its own: a
	 * parallel one) adds into its accumulator through a masked load
	 * and a masked store at every step, which the store-to-load
	 * forwarding does not serve: about 30 cycles a step where a
	 * register takes 4 (measured on a Zen 4: a product of a 1280-vector
	 * by 1280 x 1000 weights in blocks of 16, 0.33 ms on two threads against 0.10
	 * ms on one, its last block a loop of its own there). */
	if (n->guarded && !complex && n->vec_axis >= 0 && !rfvec) {
		double chain = cpu->fma_units * 30.0;
		if (acc < chain && acc / chain < eff)
			eff = acc / chain;
	}
	/* A product whose vector axis is guarded (its tail not a loop of
	 * its own) does the same, and its accumulators' chains do not
	 * overlap: about 20 cycles a vector step (measured on a Zen 4: a
	 * product of 512 terms a point into 13 x 13 x 1000 outputs, vectors
	 * of 16 along the 1000: 28 ms serial and 14 ms on two threads guarded, 1.0
	 * ms on two with its last block a loop of its own). */
	if (complex && !rfvec && vec_guarded(si, n)) {
		double per_cycle = ts_target_peak_gflops_core(tp->target) /
			(ts_target_frequency_ghz(tp->target) * 2.0 * lanes);
		if (1.0 / (20.0 * per_cycle) < eff)
			eff = 1.0 / (20.0 * per_cycle);
	}
	/* A register tile with serial loops of its own is indexed by
	 * variables: its accumulators are loaded and stored at every
	 * reduction step, one store a cycle against the FMA units
	 * (measured: a reduction over 512 channels and a 3x3
	 * window at 7x7, its 7x7 tile left serial, 25x slower
	 * than unrolled). */
	if (complex && acc_scope(n, si->stage->ndim) == n->nloops &&
	    n->loops[n->nloops - 1].axis < si->stage->ndim && u * v > 1)
		eff *= 0.5 / (cpu->fma_units > 1 ? cpu->fma_units : 1);
	return eff;
}

/* The tile size of every axis inside position "pos" of nest "n" (the
 * loops after it): what one iteration of loop "pos" covers. */
static void tile_inside(const ts_nest *n, int naxes, int pos, int64_t *size)
{
	for (int a = 0; a < naxes; a++)
		size[a] = 1;
	for (int k = pos + 1; k < n->nloops; k++)
		size[n->loops[k].axis] *= n->loops[k].trip;
}

/* Elements of "fp" (its box "ext") that a tile of sizes "size" (over
 * "naxes" axes) touches.  A dimension indexed by data (a gather of rows) holds at most
 * one index per point of the tile, not the whole dimension the analysis
 * bounds it by. */
static double footprint_volume(const ts_footprint *fp, const int64_t *ext,
	const int64_t *size, int naxes)
{
	double v = 1, points = 1, whole = 1;

	for (int a = 0; a < naxes; a++)
		points *= (double)size[a];
	for (int d = 0; d < fp->ndim; d++) {
		if (fp->dim[d].whole)
			whole *= (double)ext[d];
		else
			v *= (double)ext[d];
	}
	if (whole > 1 && points / v < whole)
		whole = points / v > 1 ? points / v : 1;
	return v * whole;
}

/* Whether a load of "t" in "si" moves by half a page or more (elements of
 * "elem" bytes) at every step of the innermost loop of "n" that is
 * neither unrolled nor vectorized. */
static bool page_step(const ts_stage_info *si, const ts_nest *n,
	const ts_tensor *t, size_t elem)
{
	int q = n->nloops - 1;

	while (q >= 0 && (n->loops[q].trip <= 1 ||
	    n->loops[q].kind == TS_LOOP_UNROLLED ||
	    n->loops[q].kind == TS_LOOP_VECTORIZED))
		q--;
	if (q < 0)
		return false;
	for (int k = 0; k < si->naccesses; k++) {
		int64_t st = si->accesses[k].stride[n->loops[q].axis];
		if (si->accesses[k].write || si->accesses[k].tensor != t ||
		    st == TS_STRIDE_UNKNOWN)
			continue;
		if ((st < 0 ? -st : st) * (int64_t)elem >= 2048)
			return true;
	}
	return false;
}

/* The factor by which the cache lines a tile of "fp" (its box "ext",
 * rows of "row" elements of "elem" bytes) occupies exceed its bytes: a
 * tile whose rows are a quarter of a line or shorter holds a whole line
 * for each (a column of a transpose: one element of each of 1024 lines,
 * 64 KiB of cache for 4 KiB of data; measured: a transpose walking the
 * columns of its output, rated as fitting L1, 7 to 10 ms where a tiled
 * one takes 1.7 ms).  Longer rows are left as they are: the model's
 * other constants were measured with their slack (counting the lines of
 * a convolution's rows of 9 to 16 elements made packed copies, which
 * have none, look better than they run: 20 to 50% slower layers of
 * ResNet-18).  Not for whole rows, contiguous, or a packed copy ("packed"),
 * whose rows are its own.  Into "*brought", the factor on the bytes an
 * iteration of a loop over "axis" (of "step" elements of it) brings
 * when the tile fits: 1 where the loop moves the tile along its rows by
 * less than a line, or not at all, since consecutive iterations share
 * the lines. */
static double line_waste(const ts_footprint *fp, const int64_t *ext,
	int64_t row, size_t elem, bool packed, int line, int axis,
	int64_t step, double *brought)
{
	const ts_box_dim *last;
	int64_t bytes, move;
	bool rows_move = false;
	double w;

	*brought = 1;
	if (packed || fp->ndim < 1 || line <= 0 || axis < 0)
		return 1;
	last = &fp->dim[fp->ndim - 1];
	if (last->whole || last->block > 0 || last->nterms > 0)
		return 1;
	bytes = ext[fp->ndim - 1] * (int64_t)elem;
	if (bytes <= 0 || 4 * bytes > line ||
	    (ext[fp->ndim - 1] >= row && fp->ndim > 1))
		return 1;
	w = (double)line / (double)bytes;	/* one line a row */
	for (int d = 0; d < fp->ndim - 1; d++)
		rows_move |= fp->dim[d].whole || fp->dim[d].block > 0 ||
			fp->dim[d].nterms > 0 ||
			fp->dim[d].origin_coef[axis] != 0;
	move = last->origin_coef[axis] * step * (int64_t)elem;
	if (rows_move || (move < 0 ? -move : move) >= line)
		*brought = w;
	return w;
}

/* The factor by which "rows" rows of "lines" cache lines each, "stride"
 * bytes apart, crowd cache "c" (of "line"-byte lines): rows whose stride
 * is a multiple of the cache's way size over a power of two fall on few
 * of its sets, "positions" of them, and once more rows share a set than
 * it has ways, they evict each other while the other sets stay empty.
 * The factor is then the cache over the sets they use, so that the tile
 * no longer fits (measured: a transpose whose 1024 rows of output 4 KiB
 * apart map to 32 of the 2048 sets of an 8-way 1 MiB L2, 7 to 10 ms;
 * tiled by 8 rows, 1.1 ms).  "c" NULL: no cache, factor 1. */
static double set_crowding(const ts_target_cache *c, int line,
	int64_t stride, int64_t rows, int64_t lines)
{
	int64_t ways, sets, way, g, positions;

	if (!c || c->size <= 0 || line <= 0 || stride <= 0 ||
	    stride % line != 0)
		return 1;
	ways = c->ways > 0 ? c->ways : 8;
	sets = c->size / (ways * line);
	way = sets * line;
	if (sets <= 1)
		return 1;
	g = ts_gcd64(way, stride);
	positions = way / g;
	/* Rows at the same position share their sets; while they are no
	 * more than the ways, the sets hold them all. */
	if ((rows + positions - 1) / positions <= ways || lines * line > g)
		return 1;
	return (double)sets / (double)(positions * lines);
}

/* Whether footprint "fp" moves along axis "a": a dimension indexed by it,
 * or one whose box is whole, blocked or a sum of terms (counted as
 * moving). */
static bool footprint_moves(const ts_footprint *fp, int a)
{
	for (int d = 0; d < fp->ndim; d++) {
		const ts_box_dim *bd = &fp->dim[d];
		if (bd->whole || bd->block > 0 || bd->nterms > 0 ||
		    (a >= 0 && a < bd->naxes && bd->origin_coef[a]))
			return true;
	}
	return false;
}

/* Bytes of cache one iteration of loop "pos" (a tile of "size") holds,
 * counting whole lines (line_waste), a strided tile whose rows crowd a
 * few sets of cache "cache" (set_crowding, at least "conflict" times for
 * rows a multiple of 2 KiB apart) as larger, and "page" times when its
 * rows are a page or more
 * apart; a packed copy ("prow" elements a row, 0: not packed) has rows
 * of its own.  Into "*brought", the bytes one iteration brings into the
 * cache when the tile fits (line_waste); with "keep", a footprint the
 * loop (along "axis", of "trip" iterations) does not move stays in the
 * cache over its iterations and comes once, a "trip"-th of it an
 * iteration (measured on a Zen 4: a row of 4096 gains, 16 KiB,
 * under rows of 4096 one at a time, rated as brought again for every row, 1.5x
 * the traffic of the 16-row tile it lost to, then ran 1.3x slower). */
static double level_bytes(const ts_traffic *tr, int pos,
	const int64_t *size, const ts_target_cache *cache, double conflict,
	double page, const int64_t *prow, const bool *paged, int scope,
	int line, int axis, int64_t trip, bool keep, double *brought)
{
	const ts_stage *st = tr->stage;
	int64_t lo[TS_MAX_DIMS], ext[TS_MAX_DIMS];
	int64_t origin[TS_MAX_AXES];
	double bytes = 0;

	*brought = 0;
	memset(origin, 0, sizeof(origin));
	for (int f = 0; f < tr->nfootprints; f++) {
		const ts_footprint *fp = tr->footprints[f];
		const ts_tensor *t = fp->tensor;
		int64_t row = t->ndim ? t->shape[t->ndim - 1] : 1;
		double b, w, in, crowd = 1;
		/* The accumulator tile stays in registers inside its
		 * reduction loops. */
		if (pos >= scope && t == st->out && st->nraxes > 0)
			continue;
		ts_footprint_eval(fp, origin, size, lo, ext);
		b = footprint_volume(fp, ext, size, tr->naxes) *
			tr->elem_size[f];
		w = line_waste(fp, ext, row, tr->elem_size[f], prow[f] > 0,
			line, axis, axis >= 0 ? size[axis] : 0, &in);
		/* An operand that moves half a page or more at every step
		 * of the innermost loop is out of the prefetchers' reach
		 * (the stride prefetcher follows up to 2 KiB, the streamer
		 * stays in a page): its lines come at the latency of L2,
		 * not its bandwidth (measured: 768 rows of 12 KiB under one
		 * register tile, 2x to 5x slower than the tile packed; a
		 * packed panel of 2 KiB rows, 1.8x slower than one of 512
		 * bytes).  Rows of a power-of-two stride map to few cache
		 * sets. */
		if (prow[f] > 0)
			row = prow[f];	/* the rows of the packed copy */
		if (paged[f] && row * (int64_t)tr->elem_size[f] >= 2048)
			b *= page;
		else if (t->ndim >= 2 && (prow[f] > 0 ||
		    ext[t->ndim - 1] < row) && ext[t->ndim - 2] > 1) {
			int64_t stride = row * (int64_t)tr->elem_size[f];
			crowd = set_crowding(cache, line, stride,
				ext[t->ndim - 2], (ext[t->ndim - 1] *
				(int64_t)tr->elem_size[f] + line - 1) / line);
			/* Rows 2 KiB apart or a multiple of it also meet
			 * in the L1 of the prefetchers' and the TLB's
			 * reach before the sets fill (measured: a packed
			 * panel of 2 KiB rows, 1.8x slower than one of 512
			 * bytes). */
			if (stride % 2048 == 0 && crowd < conflict)
				crowd = conflict;
		}
		bytes += b * w * crowd;
		*brought += b * in / (keep && trip > 1 &&
			!footprint_moves(fp, axis) ? (double)trip : 1.0);
	}
	return bytes;
}

/* The row length, in elements, of the copy of footprint "fp" that pack
 * "k" of plan "p" makes under "cfg" in nest "n" when it changes the
 * layout (a panel of the tile, or dimensions permuted); 0 for a copy of
 * whole rows in the same layout, which keeps their stride. */
static int64_t pack_row(const ts_template *tp, const ts_config *cfg,
	const ts_stage_plan *p, int k, const ts_nest *n,
	const ts_footprint *fp)
{
	int where = ts_template_pack_where(tp, p, cfg, k);
	int level = where == 1 ? 0 : 1, pos = -1, perm[TS_MAX_DIMS], np;
	int64_t size[TS_MAX_AXES], lo[TS_MAX_DIMS], ext[TS_MAX_DIMS];
	int64_t origin[TS_MAX_AXES];
	const ts_tensor *t = fp->tensor;

	for (int q = 0; q < n->nloops; q++)
		if (n->loops[q].level <= level)
			pos = q;
	tile_inside(n, p->nspatial + p->nreduce, pos, size);
	memset(origin, 0, sizeof(origin));
	ts_footprint_eval(fp, origin, size, lo, ext);
	np = ts_template_pack_layout(tp, p, cfg, t, perm);
	if (np > 0)
		return ext[perm[np - 1]];
	return t->ndim >= 1 && ext[t->ndim - 1] < t->shape[t->ndim - 1] ?
		ext[t->ndim - 1] : 0;
}

/* Per-footprint packing of nest "n" under "cfg": the row length of the
 * copy each footprint is read from, 0 where it is read in place. */
static void packed_flags(const ts_template *tp, const ts_config *cfg,
	const ts_traffic *tr, const ts_nest *n, int64_t *prow)
{
	const ts_stage_plan *p = &tp->plans[n->stage];
	const ts_stage *st = tp->dag->stages[n->stage];

	for (int f = 0; f < tr->nfootprints; f++) {
		prow[f] = 0;
		for (int k = 0; k < p->npack; k++)
			if (st->inputs[p->pack_input[k]] == tr->footprints[f]->tensor
			    && ts_template_pack_where(tp, p, cfg, k) != 0)
				prow[f] = pack_row(tp, cfg, p, k, n,
					tr->footprints[f]);
	}
}

/* Load and store instructions of one vector iteration of "rv" for an
 * access of stride "st" along its axis, on "lanes" lanes: a vector per
 * register, where a partial register that is not a half or a quarter
 * one is masked (measured: rows of 56 f32 as four masked 14-lane
 * vectors ran 2x slower than as 16-lane ones, so a masked access counts
 * as four); a gather or scatter is one access per lane when its lanes
 * are a constant stride apart, four when each lane's address needs its
 * own floor division or remainder (measured: 28-lane gathers whose
 * indices take a remainder per lane, 2x slower than the scalar loop), an interleaved
 * load of LLVM one vector per element of stride.  LLVM's own vector
 * loops move the same rows about 25% faster than a vectorized loop of
 * the schedule (measured on 56-wide f32 rows: 0.023 against 0.030 ms),
 * so a vector of the schedule counts 1.25.  A load under the guard of
 * a producer inlined into a vector of the schedule (padding) is a masked
 * load after a compare, half as much again (measured: a 3x3 average
 * pooling with its padding inlined, 0.063 ms on a Zen 4 and 0.082 ms
 * for an AVX2 target, against 0.072 and 0.116 ms computed in tiles; it
 * counted four, as a tail's partial vectors do, and was rated 3x slower
 * than the tiles). */
static double access_ops(const struct run_vec *rv, int64_t st, int lanes,
	bool write)
{
	int64_t rest;

	if (rv->axis < 0 || st == 0)
		return 1;
	if (st == TS_STRIDE_UNKNOWN && !rv->implicit)
		return 4.0 * (double)rv->width;
	if (st != 1)
		return rv->implicit ? (double)st : (double)rv->width;
	if (rv->implicit)
		return 1;
	rest = rv->width % lanes;
	if (rv->masked)
		return 1.25 * 4 * (double)((rv->width + lanes - 1) / lanes);
	return 1.25 * (write || !rv->guard_masked ? 1.0 : 1.5) *
		((double)(rv->width / lanes) +
		(rest == 0 ? 0 : (rest & (rest - 1)) ? 4 : 1));
}

/* Mark in "u" the loops of "n" whose iterations LLVM's code runs as
 * copies of the body ("rv": how it runs its vectors): the register tile
 * the schedule unrolls and vectorizes, the loops LLVM unrolls whole
 * beneath its own vector loop, and the short serial loops around the
 * tile that it then unrolls whole while the copies stay under about
 * 100 (LLVM's threshold of 300 instructions, a few a copy; measured on
 * a Zen 4: a 3x3 window around a tile of 8 rows and 16 columns
 * unrolled whole, its 72 copies). */
static void unrolled_loops(const ts_nest *n, const struct run_vec *rv,
	int lanes, bool *u)
{
	int64_t copies = 1;
	int q;

	for (q = 0; q < n->nloops; q++)
		u[q] = rv->implicit ? q > rv->loop :
			n->loops[q].kind == TS_LOOP_UNROLLED;
	if (rv->implicit)
		return;
	for (q = n->nloops - 1; q >= 0; q--) {
		const ts_nest_loop *lp = &n->loops[q];
		if (lp->kind == TS_LOOP_VECTORIZED)
			copies *= (lp->trip + lanes - 1) / lanes;
		else if (lp->kind == TS_LOOP_UNROLLED)
			copies *= lp->trip;
		else if (lp->trip > 1)
			break;
	}
	for (; q >= n->npar; q--) {
		const ts_nest_loop *lp = &n->loops[q];
		if (lp->trip <= 1)
			continue;
		if (lp->kind != TS_LOOP_SERIAL || copies * lp->trip > 100)
			break;
		copies *= lp->trip;
		u[q] = true;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The share of the copies of read "ac" over the unrolled loops "u" of
 * "n" (but the vector axis "vec") that load an address no other copy
 * loads: LLVM loads each address once (measured on a Zen 4: a 3x3
 * window over 8 unrolled rows loads 10 rows, not 24, and a 3x3 average
 * pooling so unrolled ran 1.4x faster than one row at a time). */
static double reuse_share(const ts_access_info *ac, const ts_nest *n,
	const bool *u, int vec)
{
	enum { MAX_COPIES = 4096 };
	int64_t off[MAX_COPIES];
	int m = 1, d = 1, moving = 0;

	/* One loop alone never comes back to an address: most nests stop
	 * here, in the search's inner loop. */
	for (int q = 0; q < n->nloops; q++)
		moving += u[q] && n->loops[q].trip > 1 &&
			n->loops[q].axis != vec && ac->stride[n->loops[q].axis];
	if (moving < 2)
		return 1;
	off[0] = 0;
	for (int q = 0; q < n->nloops; q++) {
		const ts_nest_loop *lp = &n->loops[q];
		int64_t st = ac->stride[lp->axis], step = 1;
		if (!u[q] || lp->trip <= 1 || lp->axis == vec || st == 0)
			continue;
		if (st == TS_STRIDE_UNKNOWN || m * lp->trip > MAX_COPIES)
			return 1;
		for (int k = q + 1; k < n->nloops; k++)
			if (n->loops[k].axis == lp->axis)
				step *= n->loops[k].trip;
		for (int64_t i = 1; i < lp->trip; i++)
			for (int j = 0; j < m; j++)
				off[i * m + j] = off[j] + i * st * step;
		m *= (int)lp->trip;
	}
	if (m == 1)
		return 1;
	qsort(off, (size_t)m, sizeof(off[0]), cmp_i64);
	for (int j = 1; j < m; j++)
		d += off[j] != off[j - 1];
	return (double)d / (double)m;
}

/* Seconds the load and store ports need for the accesses of nest "n"
 * of stage "s" (direct and simple stages, whose registers hold no tile):
 * two loads and one store a cycle; the write happens once per output
 * element. */
static double port_time(const ts_template *tp, const ts_stage_info *si,
	const ts_nest *n, const ts_stage *s, int threads, bool guarded)
{
	double f = ts_target_frequency_ghz(tp->target) * 1e9;
	int lanes = lanes_of(tp, s);
	double loads = 0, stores = 0, iters;
	double out_share = si->spatial_extent > 0 && n->useful > 0 ?
		(double)si->spatial_extent / (double)n->useful : 1;
	struct run_vec rv;
	bool u[TS_MAX_NEST];

	run_vector(si, n, s, lanes, guarded, &rv);
	unrolled_loops(n, &rv, lanes, u);
	iters = (double)n->padded / (double)rv.width;
	for (int k = 0; k < si->naccesses; k++) {
		const ts_access_info *ac = &si->accesses[k];
		int64_t st = rv.axis >= 0 ? ac->stride[rv.axis] : 0;
		double ops = iters * access_ops(&rv, st, lanes,
			ac->write);
		if (n->useful > 0 && ac->instances > n->useful)
			ops *= (double)ac->instances / (double)n->useful;
		if (ac->write) {
			stores += ops * (out_share < 1 ? out_share : 1);
			continue;
		}
		ops *= reuse_share(ac, n, u, rv.axis);
		if (st == 1 && !rv.masked)
			ops *= split_cost(ac, s, rv.axis, rv.width, lanes,
				true);
		loads += ops;
	}
	/* Each unrolled copy of an access is a stream of its own for the
	 * prefetchers, which follow a few dozen: beyond 16 the accesses
	 * wait (measured: 16 rows unrolled under a vector loop of an
	 * elementwise max ran
	 * 1.4x to 1.8x slower than one). */
	if (n->unrolled * si->naccesses > 16)
		loads *= (double)(n->unrolled * si->naccesses) / 16,
		stores *= (double)(n->unrolled * si->naccesses) / 16;
	return (loads / 2 > stores ? loads / 2 : stores) / (f * threads);
}

/* Bytes of the longest run of (nearly) consecutive addresses that
 * access "ac" walks through the innermost loops of "n": a loop extends
 * the run while its step, in elements, is at most a quarter more than
 * the run so far (rows of a padded copy count as consecutive). */
static double access_run(const ts_access_info *ac, const ts_nest *n)
{
	double run = 1;

	for (int q = n->nloops - 1; q >= 0; q--) {
		const ts_nest_loop *lp = &n->loops[q];
		int64_t st = ac->stride[lp->axis], step = 1;
		if (lp->trip <= 1 || st == 0)
			continue;
		if (st == TS_STRIDE_UNKNOWN)
			break;
		for (int k = q + 1; k < n->nloops; k++)
			if (n->loops[k].axis == lp->axis)
				step *= n->loops[k].trip;
		st = (st < 0 ? -st : st) * step;
		if ((double)st > 1.25 * run)
			break;
		run = (double)st * (double)(lp->trip - 1) + run;
	}
	return run * (double)ts_dtype_size(ac->tensor->dtype);
}

/* A factor on the cache and memory traffic of direct and simple nest "n"
 * for the hardware prefetchers: they follow streams within a page, so a
 * traversal that jumps between short runs pays for a new stream each
 * time (measured: a guarded copy and an elementwise max
 * blocked over channels, runs of 0.5 to
 * 1.5 KiB, 10% to 20% slower than one sequential pass). */
static double stream_factor(const ts_stage_info *si, const ts_nest *n)
{
	double sum = 0;
	int count = 0;

	for (int k = 0; k < si->naccesses; k++) {
		const ts_access_info *ac = &si->accesses[k];
		double run = access_run(ac, n);
		bool moves = false;
		for (int l = 0; l < n->nloops; l++)
			moves |= n->loops[l].trip > 1 &&
				ac->stride[n->loops[l].axis] != 0;
		if (!moves)
			continue;
		sum += run >= 4096 ? 1 : 1 + 0.3 * (1 - run / 4096);
		count++;
	}
	return count ? sum / count : 1;
}

/* The bytes of weights stage "st" reads.  They are the same from run to
 * run and, all layers together, larger than the caches: they come from
 * DRAM at each run.  The other inputs were written by the stage before
 * or read by the run before. */
static double weight_bytes(const ts_stage *st)
{
	double b = 0;

	for (int i = 0; i < st->ninputs; i++)
		if (ts_tensor_is_weight(st->inputs[i]))
			b += (double)ts_tensor_size(st->inputs[i]) *
				(double)ts_dtype_size(st->inputs[i]->dtype);
	return b;
}

/* Traffic time of nest "n" into each cache level (L1, L2, L3) and from
 * memory, into "t"[0..3]. */
static void memory_times(const ts_model *m, const ts_config *cfg,
	const ts_nest *n, int threads, double *t)
{
	const ts_template *tp = m->tp;
	const ts_target_cpu *cpu = &tp->target->cpu;
	const ts_traffic *tr = m->traffic[n->stage];
	const ts_stage_info *si = tp->info->stages[n->stage];
	double f = ts_target_frequency_ghz(tp->target) * 1e9;
	double cap[3], bw[4], whole;
	int line = cpu->line_bytes;
	const ts_target_cache *level[3] = { &cpu->l1d, &cpu->l2, &cpu->l3 };
	bool paged[64];
	int64_t prow[64], full[TS_MAX_AXES], size[TS_MAX_AXES];
	double iters = 1, memo[TS_MAX_NEST], brought[TS_MAX_NEST];
	int scope;
	/* Complex reductions keep the old count: their tiles' calibration
	 * includes it. */
	bool keep = tp->plans[n->stage].klass != TS_CLASS_COMPLEX_REDUCTION;

	cap[0] = (double)ts_target_cache_per_core(&cpu->l1d) * fill_fraction[0];
	cap[1] = (double)ts_target_cache_per_core(&cpu->l2) * fill_fraction[1];
	cap[2] = (double)ts_target_cache_per_core(&cpu->l3) * fill_fraction[2];
	if (cap[2] <= 0)
		cap[2] = cap[1];
	/* L1 -> registers, L2 -> L1, L3 -> L2, DRAM -> L3 */
	for (int c = 0; c < 3; c++)
		bw[c] = ts_target_read_bytes_per_cycle(tp->target, c) * f *
			threads;
	bw[3] = ts_target_dram_gbs(tp->target, threads) * 1e9;
	whole = (double)(si->counts.bytes_read + si->counts.bytes_written);
	packed_flags(tp, cfg, tr, n, prow);
	for (int k = 0; k < tr->nfootprints; k++)
		paged[k] = page_step(si, n, tr->footprints[k]->tensor,
			tr->elem_size[k]);
	scope = acc_scope(n, tr->stage->ndim);
	for (int c = 0; c < 4; c++)
		t[c] = 0;
	/* Traffic into cache level c: the footprint of the outermost loop
	 * whose iteration fits, once per iteration of that loop. */
	for (int k = 0; k < n->nloops; k++)
		memo[k] = -1;
	for (int a = 0; a < tr->naxes; a++)
		full[a] = 1;
	for (int k = 0; k < n->nloops; k++)
		full[n->loops[k].axis] *= n->loops[k].trip;
	for (int c = 0; c < 3; c++) {
		double traffic = -1;
		iters = 1;
		/* The tile inside loop k: what the loops after it cover. */
		memcpy(size, full, sizeof(int64_t) * (size_t)tr->naxes);
		if (whole <= cap[c]) {
			/* What fits in the core's share of L3 is there
			 * already, but for weights (measured: a max pool
			 * over 1.6 MB, rated as DRAM traffic, which a second
			 * thread does not speed up, ran 1.8x faster on
			 * two). */
			traffic = c == 2 ? TS_MIN(whole, weight_bytes(
				tr->stage)) : whole;
		} else {
			for (int k = 0; k < n->nloops; k++) {
				double b, in;
				iters *= (double)n->loops[k].trip;
				size[n->loops[k].axis] /= n->loops[k].trip;
				/* A loop of one iteration leaves the tile as
				 * it was: it did not fit before. */
				if (k > 0 && n->loops[k].trip == 1)
					continue;
				if (c > 0 && memo[k] >= 0) {
					b = memo[k];
					in = brought[k];
				} else {
					b = level_bytes(tr, k, size, level[c],
						c == 0 ? 4.0 : 1.5,
						c == 0 ? 16.0 : 1.5,
						prow, paged, scope, line,
						n->loops[k].axis,
						n->loops[k].trip, keep, &in);
					if (c > 0) {
						memo[k] = b;
						brought[k] = in;
					}
				}
				if (b <= cap[c]) {
					traffic = in * iters;
					break;
				}
			}
			if (traffic < 0) {
				double in;
				level_bytes(tr, n->nloops - 1, size, NULL, 1, 1,
					prow, paged, scope, line,
					n->loops[n->nloops - 1].axis, 1, false,
					&in);
				traffic = in * iters;
			}
		}
		t[c + 1] += traffic / bw[c + 1];
	}
	t[0] = whole / bw[0];
}

/* The bytes of tensor "t". */
static double tensor_bytes(const ts_tensor *t)
{
	return (double)ts_tensor_size(t) * (double)ts_dtype_size(t->dtype);
}

/* Whether the tile of row group "h" already holds tensor "t" when its
 * stage "s" runs: the output of a member, or read by a member before
 * "s". */
static bool row_held(const ts_template *tp, int h, int s, const ts_tensor *t)
{
	const ts_dag *dag = tp->dag;

	if (t->stage && tp->plans[ts_dag_stage_index(dag, t->stage)].row_host
	    == h)
		return true;
	for (int r = 0; r < s; r++)
		if (tp->plans[r].row_host == h)
			for (int k = 0; k < dag->stages[r]->ninputs; k++)
				if (dag->stages[r]->inputs[k] == t)
					return true;
	return false;
}

/* Fill the row groups' constants of "m": per stage of a group, the share
 * of its bytes that comes from beyond the first cache when the group
 * runs in its host's tiles (a member's output lives in the tile, and an
 * input a member read before it is still in L1); per host, the bytes one
 * row of its group holds (the members' outputs and the inputs they
 * read). */
static void row_groups_init(ts_model *m)
{
	const ts_template *tp = m->tp;
	const ts_dag *dag = tp->dag;

	m->row_fresh = ts_new_atomic(double, dag->nstages + 1);
	m->row_bytes = ts_new_atomic(double, dag->nstages + 1);
	m->row_rows = ts_new_atomic(double, dag->nstages + 1);
	for (int s = 0; s < dag->nstages; s++)
		m->row_rows[s] = 1;
	for (int s = 0; s < dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		const ts_stage *st = dag->stages[s];
		int h = p->knob_rows >= 0 ? s : p->row_host;
		double all, fresh, rows = 1;
		if (h < 0)
			continue;
		all = fresh = h == s ? tensor_bytes(st->out) : 0;
		for (int i = 0; i < st->ninputs; i++) {
			double b = tensor_bytes(st->inputs[i]);
			bool held = row_held(tp, h, s, st->inputs[i]);
			all += b;
			fresh += held ? 0 : b;
			if (h != s && !held)
				m->row_bytes[h] += b;
		}
		m->row_fresh[s] = all > 0 ? fresh / all : 1;
		if (h == s)
			continue;
		for (int a = 0; a < tp->plans[h].nrow_axes; a++)
			rows *= (double)dag->stages[h]->axes[a]->extent;
		m->row_bytes[h] += tensor_bytes(st->out);
		m->row_rows[h] = rows;
	}
}

/* The share of the traffic of nest "n" under "cfg" that comes to cache
 * "level" (0: L1, 1: L2) from beyond it: row_fresh when it runs in the
 * row tiles of its group and a tile stays in that cache until read again,
 * else 1.  A tile (its row axes' loops below the outermost level) stays
 * while the lines touched since its first read fit: the rest of the
 * tile, the host's output written so far and the group's own bytes
 * (measured on a Zen 4: rows of 768 that two reductions and their
 * consumer each read, 0.0192 ms in three passes, 0.0136 ms a tile at a
 * time; rows of 1000 with their exponentials kept, 0.069 and 0.052 ms;
 * a sum of squares over rows of 4096 and its consumer after a copy, 16
 * KiB a row in and out of a 32 KiB L1, 0.085 ms in two passes, 0.075 ms a row at a time, 0.093
 * two rows at a time, L1 missed). */
static double row_share(const ts_model *m, const ts_config *cfg,
	const ts_nest *n, int level)
{
	const ts_template *tp = m->tp;
	const ts_stage_plan *p = &tp->plans[n->stage];
	const ts_target_cache *c = level == 0 ? &tp->target->cpu.l1d :
		&tp->target->cpu.l2;
	int h = n->row_host;
	double rows = 1, tile;

	if (h < 0 && p->knob_rows >= 0 && ts_config_get(cfg, p->knob_rows, 0))
		h = n->stage;
	if (h < 0)
		return 1;
	for (int k = 0; k < n->nloops; k++)
		if (n->loops[k].axis < tp->plans[h].nrow_axes &&
		    n->loops[k].level > 0)
			rows *= (double)n->loops[k].trip;
	tile = (m->row_bytes[h] + tensor_bytes(tp->dag->stages[h]->out)) *
		rows / m->row_rows[h];
	if (tile > (double)ts_target_cache_per_core(c) *
	    (level == 0 ? 1.0 : fill_fraction[level]))
		return 1;
	return m->row_fresh[n->stage];
}

/* The cost of packing the inputs of nest "n": the copies of the regions
 * at their loops. */
static double pack_time(const ts_model *m, const ts_config *cfg,
	const ts_nest *n, int threads)
{
	const ts_template *tp = m->tp;
	const ts_stage_plan *p = &tp->plans[n->stage];
	const ts_traffic *tr = m->traffic[n->stage];
	double f = ts_target_frequency_ghz(tp->target) * 1e9;
	double t = 0;

	for (int k = 0; k < p->npack; k++) {
		int where = ts_template_pack_where(tp, p, cfg, k);
		const ts_tensor *in = tp->dag->stages[n->stage]->inputs[
			p->pack_input[k]];
		int level = where == 1 ? 0 : 1, pos = -1, perm[TS_MAX_DIMS];
		double iters = 1;
		int64_t size[TS_MAX_AXES];
		if (!where)
			continue;
		/* The last loop of S level "level" in the nest. */
		for (int q = 0; q < n->nloops; q++)
			if (n->loops[q].level <= level)
				pos = q;
		for (int q = 0; q <= pos; q++)
			iters *= (double)n->loops[q].trip;
		tile_inside(n, tr->naxes, pos, size);
		/* A copy that transposes moves about 2 bytes a cycle, one
		 * in the tensor's own layout about 8. */
		double rate = ts_template_pack_layout(tp, p, cfg, in,
			perm) ? 2.0 : 8.0;
		for (int fi = 0; fi < tr->nfootprints; fi++)
			if (tr->footprints[fi]->tensor == in)
				t += (double)ts_footprint_volume(
					tr->footprints[fi], size) *
					tr->elem_size[fi] * iters /
					(rate * f * threads);
	}
	return t;
}

/* A factor for code LLVM handles badly whatever the stage's bound: an
 * unrolled body of many vector statements overflows the instruction
 * cache and takes long to compile, and a vector of many native
 * registers is slow to legalise (measured: direct stages with 1024-lane
 * vectors or 1024 unrolled copies compile for minutes). */
static double codegen_penalty(const ts_nest *n, int lanes)
{
	double regs = n->vec_width > 1 ?
		(double)((n->vec_width + lanes - 1) / lanes) : 1.0;
	double body = (double)n->unrolled * regs, f = 1;

	if (body > 32)
		f *= body / 32;
	if (regs > 4)
		f *= regs / 4;
	return f;
}

/* A factor for a vector that spans blocks of a blocked layout: the
 * lowering reads it with one load per lane (a gather), so count every
 * such access a lane at a time, half a vector load a lane, against the
 * vector loads it replaces (measured: a dense layer over weights
 * blocked by 8, vectors of 32 outputs, 0.26 ms against 0.021 ms for
 * LLVM's loop over tiles of 64 on an AVX2 core; counted as one more
 * access, the model rated it the faster). */
static double block_penalty(const ts_stage_info *si, const ts_nest *n,
	int lanes)
{
	double f = 1;

	if (n->vec_axis < 0 || n->vec_width <= 1)
		return 1;
	for (int k = 0; k < si->naccesses; k++) {
		int64_t b = si->accesses[k].block[n->vec_axis];
		if (b > 0 && (n->vec_width > b || b % n->vec_width))
			f += 0.5 * (lanes > 2 ? lanes : 2);
	}
	return f;
}

/* Whether a producer of "s" with a guarded load (padding) is inlined
 * into it under "cfg". */
static bool inlined_guard(const ts_template *tp, const ts_config *cfg,
	const ts_stage *s)
{
	for (int i = 0; i < s->ninputs; i++) {
		const ts_stage *ps = s->inputs[i]->stage;
		const ts_stage_plan *pp;
		if (!ps || !ts_body_has_guarded_load(ps->body))
			continue;
		pp = &tp->plans[ts_dag_stage_index(tp->dag, ps)];
		if (pp->rule == TS_RULE_INLINE ||
		    (pp->rule == TS_RULE_LOCATION &&
		     ts_config_get(cfg, pp->knob_at, 0) == 1))
			return true;
	}
	return false;
}

/* Estimate nest "n" into "e"; return the seconds. */
static double nest_time(const ts_model *m, const ts_config *cfg,
	const ts_nest *n, ts_estimate *e)
{
	const ts_template *tp = m->tp;
	const ts_target_cpu *cpu = &tp->target->cpu;
	const ts_stage *s = tp->dag->stages[n->stage];
	const ts_stage_info *si = tp->info->stages[n->stage];
	const ts_stage_plan *p = &tp->plans[n->stage];
	int lanes = lanes_of(tp, s), cores = cpu->cores > 0 ? cpu->cores : 1;
	double chunks = 1, f, peak, flops, eff, balance, loopctl;
	bool complex = p->klass == TS_CLASS_COMPLEX_REDUCTION;
	bool guarded = inlined_guard(tp, cfg, s);
	int threads = 1;
	struct run_vec rv;

	for (int k = 0; k < n->npar && k < n->nloops; k++)
		chunks *= (double)n->loops[k].trip;
	if (n->npar > 0)
		threads = chunks < cores ? (int)chunks : cores;
	/* A member of a row group runs in its host's tiles, on the threads
	 * of the host's parallel loop. */
	if (n->row_host >= 0) {
		ts_nest h;
		if (ts_template_nest(tp, cfg, n->row_host, &h) && h.npar > 0) {
			chunks = 1;
			for (int k = 0; k < h.npar && k < h.nloops; k++)
				chunks *= (double)h.loops[k].trip;
			threads = chunks < cores ? (int)chunks : cores;
		}
	}
	balance = chunks / (threads * ceil(chunks / threads));
	f = ts_target_frequency_ghz(tp->target) * 1e9;
	peak = ts_target_peak_gflops_core(tp->target) * 1e9 * lanes /
		TS_MAX(1, cpu->simd_bytes / 4);
	/* A special function costs what its expansion (or the library
	 * call) does, measured (ts_special_cost), less in the schedule's
	 * own vectors (ts_special_vec_cost). */
	run_vector(si, n, s, lanes, guarded, &rv);
	flops = (double)(si->counts.flops - si->counts.special +
		(rv.axis >= 0 && !rv.implicit ? si->counts.special_vec_cost :
		 si->counts.special_cost));
	flops *= (double)n->padded / (double)n->useful;
	eff = vector_efficiency(si, n, lanes, s, complex, guarded);
	if (p->nreduce > 0 && !(rv.implicit && rv.reduce_inside))
		eff *= tile_efficiency(tp, cfg, si, n, lanes, complex);
	memset(e, 0, sizeof(*e));
	e->threads = threads;
	e->efficiency = eff * balance;
	e->compute = flops / (peak * eff * threads * balance) +
		2.5 * m->divmods[n->stage] * (double)n->useful /
		(f * threads * balance);
	/* Loop control: half a cycle an iteration of the innermost loop
	 * (LLVM runs its own vector loops two vectors an iteration). */
	loopctl = (double)n->padded / (double)(rv.implicit ? 2 * rv.width :
		rv.width) / (double)n->unrolled / (f * threads) * 0.5;
	memory_times(m, cfg, n, threads, e->memory);
	for (int c = 1; c < 4; c++)
		e->memory[c] *= (complex ? 1 : stream_factor(si, n)) / balance *
			row_share(m, cfg, n, c == 1 ? 0 : 1);
	e->overhead = pack_time(m, cfg, n, threads) +
		combine_time(n, s, lanes, f, threads) / balance;
	/* Direct and simple stages: their loads, stores and loop control
	 * issue alongside the traffic, like arithmetic does. */
	if (complex) {
		e->overhead += loopctl;
		/* A reduction vectorised along itself loads every operand
		 * each iteration: nothing stays in a register. */
		if (rv.implicit && rv.axis >= s->ndim) {
			double ports = port_time(tp, si, n, s, threads,
				guarded);
			if (ports > e->compute)
				e->compute = ports;
			e->compute += fold_time(&rv, n, s, lanes, f,
				threads);
		}
	} else
		e->compute += loopctl + port_time(tp, si, n, s, threads,
			guarded) /
			balance;
	if (complex)
		e->overhead += fused_buffer_time(tp, si, n, f, threads) /
			balance;
	/* Each iteration of a parallel loop is a call of its body, which
	 * loads its arguments, splits the index of fused loops and hoists
	 * nothing out of the iterations: about 12 cycles each (measured
	 * for an AVX2 target: a sum over a 3x3 window into 120 x 7 x 7
	 * blocks of 8 lanes, 0.011 ms on one thread with its 120 outer
	 * iterations in parallel, 0.038 ms with the three outer loops
	 * fused into 5,880, rated alike). */
	if (n->npar > 0)
		e->overhead += team_start_s + chunks * 12.0 / (f * threads);

	e->total = e->compute;
	for (int c = 0; c < 4; c++)
		if (e->memory[c] > e->total)
			e->total = e->memory[c];
	{
		double rest = e->compute;
		for (int c = 0; c < 4; c++)
			rest += e->memory[c];
		e->total += 0.15 * (rest - e->total) + e->overhead;
	}
	e->total *= codegen_penalty(n, lanes) * block_penalty(si, n, lanes);
	return e->total;
}

/* The times the tile of "out" located at position "pos" of nest "n" is
 * computed over: the trips of the loops up to "pos" along axes that no
 * footprint of "out" in "tr" moves with (an axis a dimension is blocked
 * by, indexes through quotients or reads whole counts as moving it). */
static double recomputed(const ts_nest *n, int pos, const ts_traffic *tr,
	const ts_tensor *out)
{
	double times = 1;

	for (int q = 0; q <= pos; q++) {
		int a = n->loops[q].axis;
		bool moves = false;
		if (n->loops[q].trip <= 1)
			continue;
		for (int fi = 0; fi < tr->nfootprints && !moves; fi++)
			moves = tr->footprints[fi]->tensor == out &&
				footprint_moves(tr->footprints[fi], a);
		if (!moves)
			times *= (double)n->loops[q].trip;
	}
	return times;
}

/* Whether location stage "st" reads a source across its last axis, by
 * a stride other than 0 or 1: a copy that changes the layout. */
static bool transposes(const ts_stage_info *si, const ts_stage *st)
{
	int last = st->ndim - 1;

	if (last < 0)
		return false;
	for (int k = 0; k < si->naccesses; k++) {
		int64_t sd = access_stride(&si->accesses[k], st, last);
		if (!si->accesses[k].write && sd != 0 && sd != 1)
			return true;
	}
	return false;
}

/* The time of stage "s" computed at level "level" (0 outer, 1 inner) of
 * its consumer's tiles under "cfg", given "pass", the time of the tiles'
 * work, and "root", its time at root, where it runs when the consumer's
 * nest has no loop for it (ts_nest's at_loop): a producer with a guarded
 * load whose tile holds less than a vector, or a few vectors in rows
 * shorter than one, also runs lane by
 * lane, a loop started for each tile (measured: a guarded mask at the
 * outer level of a consumer tiled one element a tile, 4.5 ms on an AVX2
 * target against 1.0 ms at root, where the pass alone rated it 4x
 * cheaper than root; the guarded copy feeding an f16 max over a 3x3
 * window, in its tiles: nine elements in rows of three, 2.8 ms against
 * 0.9 ms at root).  The overlap of neighbouring tiles' footprints and
 * the loop of a larger tile are left out: counted, they moved the
 * guarded copies feeding a network's window reductions out of their
 * tiles, 1.36x slower (as did pricing every tile whose rows are shorter
 * than a vector: 7x7 maps in rows of nine, 1.08x slower). */
static double tile_location_time(const ts_model *m, const ts_config *cfg,
	int s, int level, double pass, double root)
{
	const ts_template *tp = m->tp;
	const ts_stage_plan *p = &tp->plans[s];
	const ts_stage_plan *cp = &tp->plans[p->at_consumer];
	const ts_traffic *tr = m->traffic[p->at_consumer];
	const ts_stage *st = tp->dag->stages[s];
	double f = ts_target_frequency_ghz(tp->target) * 1e9;
	double iters = 1, elems = 0, row = 0, t, bytes;
	int64_t size[TS_MAX_AXES];
	int pos, lanes = lanes_of(tp, st);
	ts_nest n;

	if (!tr || !cp->structure || !ts_template_nest(tp, cfg,
	    p->at_consumer, &n))
		return pass;
	if ((pos = n.at_loop[level]) < 0)
		return root;
	for (int q = 0; q <= pos; q++)
		iters *= (double)n.loops[q].trip;
	tile_inside(&n, tr->naxes, pos, size);
	for (int fi = 0; fi < tr->nfootprints; fi++) {
		const ts_footprint *fp = tr->footprints[fi];
		if (fp->tensor != st->out || fp->ndim == 0)
			continue;
		elems += (double)ts_footprint_volume(fp, size);
		row = fmax(row, (double)ts_footprint_extent(fp, fp->ndim - 1,
			size));
	}
	/* A tile computed inside loops it does not depend on is computed
	 * again at each of their iterations, each a tenth of a pass at
	 * root (the tile is in cache; counted as whole passes, ResNet-18's
	 * padding stages left their tiles and its tasks ran 3% slower).
	 * Measured on a Zen 4: a select of two tensors into 512 channels
	 * located in the tiles of a product of 512 terms into 1000
	 * channels (NHWC inputs), inside the loop over 63 blocks of output
	 * channels it does not read, ran the layer in 7.4 ms, 1.6 ms at root; uncounted, the
	 * model rated both 1.4 ms and laid the network out around it
	 * (13.1 ms, 7.9 ms once counted). */
	t = pass * (1.0 + 0.1 * (recomputed(&n, pos, tr, st->out) - 1.0));
	/* A copy that transposes (its source read across the stage's last
	 * axis, a layout change) runs lane by lane at about 2 bytes a
	 * cycle each time its tile is computed, cached or not, as packs
	 * do (measured on a Zen 4: NCHW16c channels gathered into a
	 * product's NCHW tile inside its loop over 63 blocks of outputs,
	 * 7.1 ms against 1.6 at 1008 outputs without it, rated 1.44). */
	if (transposes(tp->info->stages[s], st)) {
		double copies = 0;
		for (int fi = 0; fi < tr->nfootprints; fi++)
			if (tr->footprints[fi]->tensor == st->out &&
			    tr->footprints[fi]->ndim > 0)
				copies += (double)ts_footprint_volume(
					tr->footprints[fi], size);
		copies *= iters * (double)ts_dtype_size(st->out->dtype);
		if (copies / (2.0 * f) > t)
			t = copies / (2.0 * f);
	}
	/* A tile larger than the core's share of L1 is written to L2 and
	 * read back from there (measured on a Zen 4: a 3x3 average pooling
	 * with its padded copy at the outer tile, 16 channels a tile, 67
	 * KiB: 0.061 ms, against 0.049 ms for one channel a tile, 4 KiB;
	 * the model rated both alike).  A product's packs and tiles have
	 * costs of their own, calibrated on convolutions. */
	bytes = elems * (double)ts_dtype_size(st->out->dtype);
	if (cp->klass != TS_CLASS_COMPLEX_REDUCTION && bytes > (double)ts_target_cache_per_core(&tp->target->cpu.l1d) *
	    fill_fraction[0])
		t += 2.0 * bytes * iters / (ts_target_read_bytes_per_cycle(
			tp->target, 1) * f);
	if (ts_body_has_guarded_load(st->body) && (elems < lanes ||
	    (row < lanes && elems < 4 * lanes)))
		t += iters * (20.0 + elems * 2.0) / f;
	return t;
}

/* The cost of a location-tunable stage "s" placed as "cfg" says. */
static double location_time(const ts_model *m, const ts_config *cfg, int s)
{
	const ts_template *tp = m->tp;
	const ts_stage_info *si = tp->info->stages[s];
	const ts_stage_plan *p = &tp->plans[s];
	double bytes = (double)(si->counts.bytes_read + si->counts.bytes_written);
	const ts_stage_info *ci = tp->info->stages[p->at_consumer];
	const ts_target_cpu *cpu = &tp->target->cpu;
	double f = ts_target_frequency_ghz(tp->target) * 1e9, bw;
	/* A large pass at root runs its outer axis on every core
	 * (ts_template_root_parallel_axis), each at the rate below, and
	 * starts a team. */
	bool par = ts_template_root_parallel_axis(tp, s) >= 0;
	int threads = par ? cpu->cores : 1;
	double start = par ? team_start_s : 0;

	/* At root: a pass, at the rate of the cache level its data fits
	 * in, a copy moving half what a read moves in L2 and two thirds in
	 * L3 (measured: a 3 MiB padding pass, 0.07 ms in L3, not 0.3 ms at
	 * the memory's rate). */
	if (bytes <= (double)ts_target_cache_per_core(&cpu->l2) *
	    fill_fraction[1])
		bw = ts_target_read_bytes_per_cycle(tp->target, 1) / 2 * f *
			threads;
	else if (bytes <= (double)ts_target_cache_per_core(&cpu->l3) *
	    fill_fraction[2])
		bw = ts_target_read_bytes_per_cycle(tp->target, 2) * 2 / 3 * f *
			threads;
	else
		bw = ts_target_dram_gbs(tp->target, threads) * 1e9;
	/* In a tile, where the consumer's nest has the loop
	 * (ts_template_apply computes it at root otherwise). */
	switch (ts_config_get(cfg, p->knob_at, 0)) {
	case 0: return bytes / bw + start;		/* root: a pass */
	/* Inlined: the guard is tested at every read.  A direct or simple
	 * consumer's nest prices it itself (masked vector loads, LLVM's
	 * loops left scalar); a product's tiles do not, and pay a crude
	 * 10 per ns of its arithmetic, which keeps padding out of them. */
	case 1: return (double)ci->counts.flops *
		(tp->plans[p->at_consumer].klass ==
		 TS_CLASS_COMPLEX_REDUCTION ? 1e-10 : 1e-12);
	case 2: return tile_location_time(m, cfg, s, 0,	/* outer tile */
		1.3 * bytes / (bw * 4), bytes / bw + start);
	default: return tile_location_time(m, cfg, s, 1,	/* inner tile */
		2.0 * bytes / (bw * 4), bytes / bw + start);
	}
}

double ts_model_stage_estimate(const ts_model *m, const ts_config *cfg,
	int s, ts_estimate *e)
{
	ts_estimate local = { 0 };
	ts_nest n;

	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	/* An empty domain (a zero extent) costs nothing worth modelling,
	 * and the model's ratios per iteration would divide by zero. */
	if (m->tp->info->stages[s]->spatial_extent == 0 ||
	    m->tp->info->stages[s]->reduce_extent == 0)
		return 0;
	if (ts_template_nest(m->tp, cfg, s, &n))
		return nest_time(m, cfg, &n, e);
	if (m->tp->plans[s].rule == TS_RULE_LOCATION)
		return e->total = location_time(m, cfg, s);
	return 0;
}

double ts_model_estimate_with(const ts_model *m, const ts_config *cfg,
	ts_estimate *per_stage)
{
	double total = 0;

	for (int s = 0; s < m->tp->dag->nstages; s++)
		total += ts_model_stage_estimate(m, cfg, s,
			per_stage ? &per_stage[s] : NULL);
	return total;
}

double ts_model_estimate(const ts_template *tp, const ts_config *cfg,
	ts_estimate *per_stage)
{
	ts_model m;

	if (ts_model_init(&m, tp) < 0)
		return INFINITY;
	return ts_model_estimate_with(&m, cfg, per_stage);
}
