/* The analytical model of static filling: an estimate of the time of a
 * configuration on a CPU target, from the template's loop nests, the
 * analysis' footprints and the target's parameters.  No isl, no
 * measurement: it rates thousands of configurations per second. */
#include <config.h>

#include <math.h>

#include <tessel/search.h>

#include "dsl/internal.h"
#include "search/model.h"

/* Fractions of each cache a working set may fill before it is
 * considered not to fit (associativity, other data). */
static const double fill_fraction[3] = { 0.5, 0.6, 0.6 };

/* Fill "m" for template "tp": the traffic model of every tiled stage. */
ts_status ts_model_init(ts_model *m, const ts_template *tp)
{
	const ts_dag *dag = tp->dag;

	m->tp = tp;
	m->traffic = ts_new_array(ts_traffic *, dag->nstages + 1);
	for (int s = 0; s < dag->nstages; s++) {
		ts_rule r = tp->plans[s].rule;
		if (r != TS_RULE_TILE && r != TS_RULE_PLAIN)
			continue;
		m->traffic[s] = ts_traffic_new(tp->ctx, dag->stages[s]);
		if (!m->traffic[s])
			return TS_ERROR;
	}
	return TS_OK;
}

/* Lanes of a vector of the stage's output dtype on the target. */
static int lanes_of(const ts_template *tp, const ts_stage *s)
{
	int l = ts_target_lanes(tp->target, s->out->dtype);

	return l > 0 ? l : 1;
}

/* Fraction of the vector lanes doing useful, contiguous work in "n". */
static double vector_efficiency(const ts_stage_info *si, const ts_nest *n,
	int lanes, const ts_stage *s, bool tiled_loads)
{
	double eff;

	if (n->vec_axis < 0 || n->vec_width <= 1) {
		/* LLVM may vectorise a unit-stride innermost loop itself. */
		const ts_nest_loop *in = &n->loops[n->nloops - 1];
		bool unit = n->nloops > 0 && in->axis < s->ndim;
		for (int k = 0; unit && k < si->naccesses; k++) {
			int64_t st = si->accesses[k].stride[in->axis];
			unit = st == 0 || st == 1;
		}
		return unit && in->trip >= lanes ? 0.5 : 1.0 / lanes;
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

/* Whether input "t" of plan "p" is packed under "cfg" into a layout
 * whose last dimension is the one the vector axis walks. */
static bool packed_contiguous(const ts_template *tp, const ts_config *cfg,
	const ts_stage_plan *p, const ts_tensor *t)
{
	const ts_stage *s = tp->dag->stages[p->stage];
	int perm[TS_MAX_DIMS];

	for (int k = 0; k < p->npack; k++)
		if (s->inputs[p->pack_input[k]] == t &&
		    ts_config_get(cfg, p->knob_pack[k], 0) != 0)
			return ts_template_pack_layout(tp, p, cfg, t, perm) > 0;
	return false;
}

/* Load-port cycles of one innermost iteration of the register tile of
 * "n": each load brings one vector per point of the unrolled loops it
 * depends on; a load along the vector axis with a stride other than 0 or
 * 1 is a gather: a load per lane or more. */
static double tile_load_cycles(const ts_template *tp, const ts_config *cfg,
	const ts_stage_info *si, const ts_nest *n, int lanes)
{
	const ts_stage_plan *p = &tp->plans[n->stage];
	double cycles = 0;

	for (int k = 0; k < si->naccesses; k++) {
		const ts_access_info *ac = &si->accesses[k];
		double vecs = 1;
		if (ac->write)
			continue;
		if (packed_contiguous(tp, cfg, p, ac->tensor))
			vecs = 1;
		for (int l = 0; l < n->nloops; l++) {
			const ts_nest_loop *lp = &n->loops[l];
			if (lp->kind == TS_LOOP_UNROLLED && ac->stride[lp->axis])
				vecs *= (double)lp->trip;
		}
		if (n->vec_axis >= 0 && ac->stride[n->vec_axis] != 0 &&
		    ac->stride[n->vec_axis] != 1 &&
		    !packed_contiguous(tp, cfg, p, ac->tensor))
			vecs *= lanes;
		cycles += vecs;
	}
	return cycles / 2.0;
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
	double need = cpu->fma_units * 4.0;
	int regs = cpu->vector_registers > 0 ? cpu->vector_registers : 16;

	eff *= acc >= need ? 1.0 : acc / need;
	if (acc + v + 2 > regs)
		eff *= acc > 2 * regs ? 0.15 : 0.4;
	if (complex) {
		double fma_cycles = acc / cpu->fma_units;
		double load_cycles = tile_load_cycles(tp, cfg, si, n, lanes);
		if (load_cycles > fma_cycles)
			eff *= fma_cycles / load_cycles;
	}
	/* The accumulator stays in registers only when its tile is a
	 * perfect nest: a guarded tail keeps it in memory. */
	if (!n->cache_write || n->padded != n->useful)
		eff *= 0.5;
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

/* Bytes one iteration of loop "pos" touches, counting a strided tile
 * of an unpacked operand whose rows fall on the same cache sets as
 * taking "conflict" times its size. */
static double level_bytes(const ts_traffic *tr, const ts_nest *n, int pos,
	double conflict, bool *packed)
{
	int64_t size[TS_MAX_AXES];
	double bytes = 0;

	tile_inside(n, tr->naxes, pos, size);
	for (int f = 0; f < tr->nfootprints; f++) {
		const ts_footprint *fp = tr->footprints[f];
		const ts_tensor *t = fp->tensor;
		double b = (double)ts_footprint_volume(fp, size) *
			tr->elem_size[f];
		int64_t row = t->ndim ? t->shape[t->ndim - 1] : 1;
		int64_t lo[TS_MAX_DIMS], ext[TS_MAX_DIMS], origin[TS_MAX_AXES];
		memset(origin, 0, sizeof(origin));
		ts_footprint_eval(fp, origin, size, lo, ext);
		/* Rows of a power-of-two stride map to few cache sets. */
		if (t->ndim >= 2 && !packed[f] && ext[t->ndim - 1] < row &&
		    ext[t->ndim - 2] > 1 &&
		    (row * (int64_t)tr->elem_size[f]) % 2048 == 0)
			b *= conflict;
		bytes += b;
	}
	return bytes;
}

/* Per-footprint packing flags of nest "n" of stage "s" under "cfg". */
static void packed_flags(const ts_template *tp, const ts_config *cfg,
	const ts_traffic *tr, int s, bool *packed)
{
	const ts_stage_plan *p = &tp->plans[s];
	const ts_stage *st = tp->dag->stages[s];

	for (int f = 0; f < tr->nfootprints; f++) {
		packed[f] = false;
		for (int k = 0; k < p->npack; k++)
			if (st->inputs[p->pack_input[k]] == tr->footprints[f]->tensor
			    && ts_config_get(cfg, p->knob_pack[k], 0) != 0)
				packed[f] = true;
	}
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
	double f = (cpu->frequency_ghz > 0 ? cpu->frequency_ghz : 2.5) * 1e9;
	double cap[3], bw[4], whole;
	bool packed[64];
	double iters = 1;

	cap[0] = (double)ts_target_cache_per_core(&cpu->l1d) * fill_fraction[0];
	cap[1] = (double)ts_target_cache_per_core(&cpu->l2) * fill_fraction[1];
	cap[2] = (double)ts_target_cache_per_core(&cpu->l3) * fill_fraction[2];
	if (cap[2] <= 0)
		cap[2] = cap[1];
	bw[0] = 2.0 * cpu->simd_bytes * f * threads;	/* L1 -> registers */
	bw[1] = 64.0 * f * threads;			/* L2 -> L1 */
	bw[2] = 24.0 * f * threads;			/* L3 -> L2 */
	bw[3] = (cpu->bandwidth_gbs > 0 ? cpu->bandwidth_gbs : 20.0) * 1e9;
	whole = (double)(si->counts.bytes_read + si->counts.bytes_written);
	packed_flags(tp, cfg, tr, n->stage, packed);
	for (int c = 0; c < 4; c++)
		t[c] = 0;
	/* Traffic into cache level c: the footprint of the outermost loop
	 * whose iteration fits, once per iteration of that loop. */
	for (int c = 0; c < 3; c++) {
		double traffic = -1;
		iters = 1;
		if (whole <= cap[c]) {
			traffic = whole;
		} else {
			for (int k = 0; k < n->nloops; k++) {
				double b;
				iters *= (double)n->loops[k].trip;
				b = level_bytes(tr, n, k, c == 0 ? 4.0 : 1.5,
					packed);
				if (b <= cap[c]) {
					traffic = b * iters;
					break;
				}
			}
			if (traffic < 0)
				traffic = level_bytes(tr, n, n->nloops - 1, 1,
					packed) * iters;
		}
		t[c + 1] += traffic / bw[c + 1];
	}
	t[0] = whole / bw[0];
}

/* The cost of packing the inputs of nest "n": the copies of the regions
 * at their loops. */
static double pack_time(const ts_model *m, const ts_config *cfg,
	const ts_nest *n, int threads)
{
	const ts_template *tp = m->tp;
	const ts_stage_plan *p = &tp->plans[n->stage];
	const ts_traffic *tr = m->traffic[n->stage];
	double f = (tp->target->cpu.frequency_ghz > 0 ?
		tp->target->cpu.frequency_ghz : 2.5) * 1e9;
	double t = 0;

	for (int k = 0; k < p->npack; k++) {
		int where = (int)ts_config_get(cfg, p->knob_pack[k], 0);
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
	double chunks = 1, f, peak, flops, eff, balance;
	int threads = 1;

	for (int k = 0; k < n->npar && k < n->nloops; k++)
		chunks *= (double)n->loops[k].trip;
	if (n->npar > 0)
		threads = chunks < cores ? (int)chunks : cores;
	balance = chunks / (threads * ceil(chunks / threads));
	f = (cpu->frequency_ghz > 0 ? cpu->frequency_ghz : 2.5) * 1e9;
	peak = f * (cpu->fma_units > 0 ? cpu->fma_units : 1) * lanes * 2.0;
	flops = (double)si->counts.flops + 10.0 * si->counts.special;
	flops *= (double)n->padded / (double)n->useful;
	eff = vector_efficiency(si, n, lanes, s,
		p->klass == TS_CLASS_COMPLEX_REDUCTION);
	if (p->nreduce > 0)
		eff *= tile_efficiency(tp, cfg, si, n, lanes,
			p->klass == TS_CLASS_COMPLEX_REDUCTION);
	memset(e, 0, sizeof(*e));
	e->threads = threads;
	e->efficiency = eff * balance;
	e->compute = flops / (peak * eff * threads * balance);
	memory_times(m, cfg, n, threads, e->memory);
	for (int c = 1; c < 4; c++)
		e->memory[c] /= balance;
	e->overhead = pack_time(m, cfg, n, threads);
	e->overhead += (double)n->padded / (double)(n->vec_width > 1 ?
		n->vec_width : 1) / (double)n->unrolled / (f * threads) * 0.5;
	if (n->npar > 0)
		e->overhead += 8e-6;

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
	e->total *= codegen_penalty(n, lanes);
	return e->total;
}

/* The cost of a location-tunable stage "s" placed as "cfg" says. */
static double location_time(const ts_model *m, const ts_config *cfg, int s)
{
	const ts_template *tp = m->tp;
	const ts_stage_info *si = tp->info->stages[s];
	const ts_stage_plan *p = &tp->plans[s];
	double bw = (tp->target->cpu.bandwidth_gbs > 0 ?
		tp->target->cpu.bandwidth_gbs : 20.0) * 1e9;
	double bytes = (double)(si->counts.bytes_read + si->counts.bytes_written);
	const ts_stage_info *ci = tp->info->stages[p->at_consumer];

	switch (ts_config_get(cfg, p->knob_at, 0)) {
	case 0: return 2.0 * bytes / bw;		/* root: a pass */
	case 1: return (double)ci->counts.flops * 1e-10;	/* inline */
	case 2: return 1.3 * bytes / (bw * 4);		/* outer tile */
	default: return 2.0 * bytes / (bw * 4);		/* inner tile */
	}
}

double ts_model_estimate_with(const ts_model *m, const ts_config *cfg,
	ts_estimate *per_stage)
{
	const ts_template *tp = m->tp;
	double total = 0;

	for (int s = 0; s < tp->dag->nstages; s++) {
		ts_estimate e = { 0 };
		ts_nest n;
		if (ts_template_nest(tp, cfg, s, &n))
			total += nest_time(m, cfg, &n, &e);
		else if (tp->plans[s].rule == TS_RULE_LOCATION)
			total += e.total = location_time(m, cfg, s);
		if (per_stage)
			per_stage[s] = e;
	}
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
