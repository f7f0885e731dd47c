/* The GPU's part of static filling: an analytical model of one GPU
 * (occupancy from threads, registers and shared memory per block, waves
 * of blocks over the SMs, coalescing of the thread axis, global traffic
 * after shared-memory staging, the tensor-core peak for tiles on tensor
 * cores) that rates a configuration stage by stage with no measurement,
 * and the seeds the search starts from.  The search is the CPU's
 * (search/static.c). */
#include <config.h>

#include <math.h>
#include <time.h>

#include <tessel/search.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "search/model.h"

/* Seconds a kernel launch costs at least. */
#define LAUNCH_S 3e-6
/* Cycles one staging step of a tile waits with nothing else to do: a
 * global load's latency and the two barriers around the shared copy
 * (there is no double buffering). */
#define STEP_CYCLES 800.0

/* Blocks of "l" that fit on one SM of "g" at once (0: none). */
static int64_t blocks_per_sm(const ts_target_gpu *g, const ts_gpu_launch *l)
{
	int64_t maxb = g->max_blocks_per_sm ? g->max_blocks_per_sm : 32;
	int64_t n = TS_MIN(maxb, g->max_threads_per_sm / TS_MAX(l->threads, 1));
	int64_t regs = TS_MAX(l->registers, 32) * l->threads;

	if (g->registers_per_sm && regs > 0)
		n = TS_MIN(n, g->registers_per_sm / regs);
	if (l->shared_bytes > 0 && g->shared_per_sm)
		n = TS_MIN(n, g->shared_per_sm / l->shared_bytes);
	return n;
}

/* Global bytes stage "s" moves under "cfg": what it reads and writes
 * once, or for a tiled stage its blocks' footprints per reduction step. */
static double stage_bytes(const ts_gpu_template *tp, const ts_config *cfg,
	int s)
{
	const ts_stage_info *si = tp->info->stages[s];

	if (tp->plans[s].rule == TS_RULE_TILE)
		return ts_gpu_template_tile_traffic(tp, cfg, s) +
			(double)si->counts.bytes_written;
	return (double)si->counts.bytes_read + (double)si->counts.bytes_written;
}

/* The arithmetic and shared-memory time of tile "s" on tensor cores
 * under "cfg" whose launch is "l", at occupancy "occ" and wave
 * efficiency "wave_eff": the tensor-core peak (eight times the f32 peak
 * when the target does not say) scaled by the warps an SM holds (one per
 * sub-partition at least) and the fragments each warp has in flight; a
 * warp with fm x fn accumulator fragments loads fm + fn operand
 * fragments (512 bytes each) per fm * fn 16 x 16 x 16 steps, at 128
 * bytes per cycle per SM. */
static double tc_time(const ts_gpu_template *tp, const ts_config *cfg,
	int s, double flops, double occ, double wave_eff)
{
	const ts_target_gpu *g = &tp->target->gpu;
	const ts_stage_plan *p = &tp->plans[s];
	double fm = (double)ts_config_get(cfg, p->tc_split[0], 2);
	double fn = (double)ts_config_get(cfg, p->tc_split[1], 2);
	double peak = (g->peak_tflops_tensor_f16 > 0 ? g->peak_tflops_tensor_f16
		: 8.0 * (g->peak_tflops_f32 > 0 ? g->peak_tflops_f32 : 10.0)) *
		1e12;
	double ilp = TS_MIN(1.0, 0.2 + 0.1 * fm * fn);
	double eff = TS_MIN(1.0, occ * 8.0) * TS_MAX(wave_eff, 0.05);
	double steps = flops / 8192.0;
	double bytes = steps * (fm + fn) * 512.0 / (fm * fn);
	double smem = bytes / ((double)g->sm_count * 128.0 * (g->clock_ghz > 0 ?
		g->clock_ghz : 1.5) * 1e9 * eff);

	return TS_MAX(flops / (peak * ilp * eff), smem);
}

/* The model's time of stage "s" in seconds (0 when it has no kernel,
 * INFINITY when it cannot run). */
static double stage_time(const ts_gpu_template *tp, const ts_config *cfg,
	int s)
{
	const ts_target_gpu *g = &tp->target->gpu;
	const ts_stage_info *si = tp->info->stages[s];
	const ts_stage_plan *p = &tp->plans[s];
	ts_gpu_launch l;
	int64_t bps, waves, per_sm, resident;
	int64_t warps_max = g->max_threads_per_sm / 32;
	double occ, wave_eff, ilp, compute, memory, flops, peak, bw;
	double latency = 0, sm_eff;

	ts_gpu_template_launch(tp, cfg, s, &l);
	if (!l.kernel)
		return 0;
	if ((bps = blocks_per_sm(g, &l)) <= 0)
		return INFINITY;
	occ = TS_MIN(1.0, (double)(bps * l.threads) / 32.0 /
		(double)TS_MAX(1, warps_max));
	waves = (l.blocks + bps * g->sm_count - 1) / (bps * g->sm_count);
	wave_eff = (double)l.blocks / (double)(waves * bps * g->sm_count);
	flops = (double)si->counts.flops;
	if (p->fuse_consumer >= 0 && ts_gpu_template_fused(tp, cfg, s))
		flops += (double)tp->info->stages[p->fuse_consumer]->counts.flops;
	peak = (g->peak_tflops_f32 > 0 ? g->peak_tflops_f32 : 10.0) * 1e12;
	/* The busiest SM runs its share of the blocks, "resident" at a
	 * time; its FMA pipes (4-cycle latency, four schedulers) are full
	 * when 16 independent multiply-adds are in flight: warps times
	 * the independent accumulators of a thread (its register tile). */
	per_sm = (l.blocks + g->sm_count - 1) / g->sm_count;
	resident = TS_MIN(bps, per_sm);
	ilp = TS_MIN(8.0, (double)l.per_thread);
	sm_eff = TS_MIN(1.0, (double)resident * (double)((l.threads + 31) /
		32) * ilp / 16.0);
	compute = (double)per_sm * flops / (double)l.blocks /
		(peak / (double)g->sm_count * sm_eff);
	if (l.cross)
		compute += (double)l.blocks * log2((double)l.threads) * 40e-9 /
			(double)(g->sm_count * bps);
	bw = (g->bandwidth_gbs > 0 ? g->bandwidth_gbs : 1000.0) * 1e9;
	memory = stage_bytes(tp, cfg, s) / (bw * (l.coalesced ? 1.0 :
		0.25) * TS_MIN(1.0, occ * 2.0 + 0.25) * TS_MIN(1.0,
		wave_eff * 2.0));
	/* A tile's operands come from shared memory (or L1): an a x b
	 * register tile loads a + b values per a * b multiply-adds, at 32
	 * four-byte words per cycle per SM. */
	if (l.tensor_core) {
		compute = tc_time(tp, cfg, s, flops, occ, wave_eff);
	} else if (p->rule == TS_RULE_TILE) {
		double lpf = l.operand_loads / (double)l.per_thread;
		double words = (double)g->sm_count * 32.0 * (g->clock_ghz > 0 ?
			g->clock_ghz : 1.5) * 1e9;
		double smem = flops / 2.0 * lpf / (words * TS_MIN(1.0, occ *
			4.0) * TS_MAX(wave_eff, 0.05));
		compute = TS_MAX(compute, smem);
		/* Rolled, the inner reduction loop issues its index
		 * arithmetic and loads one iteration at a time: on an H200
		 * three tiles out of four of one shape ran 1.2x to 1.9x
		 * slower so. */
		if (p->knob_unroll >= 0 &&
		    !ts_config_get(cfg, p->knob_unroll, 0))
			compute *= 1.2;
	}
	/* Each staging step exposes its latency, hidden only by the other
	 * blocks resident on the SM: a tile of many short steps pays for
	 * its barriers. */
	if (p->rule == TS_RULE_TILE && l.steps > 0 && l.shared_bytes > 0)
		latency = (double)waves * (double)l.steps * STEP_CYCLES /
			((g->clock_ghz > 0 ? g->clock_ghz : 1.5) * 1e9 *
			(double)bps);
	return TS_MAX(compute, memory) + latency + LAUNCH_S;
}

double ts_gpu_model_stage_estimate(const ts_template *tp,
	const ts_config *cfg, int s)
{
	if (!ts_gpu_template_stage_fits(tp, cfg, s))
		return INFINITY;
	return stage_time(tp, cfg, s);
}

double ts_gpu_model_estimate(const ts_gpu_template *tp, const ts_config *cfg)
{
	double total = 0;

	for (int s = 0; s < tp->dag->nstages; s++)
		total += ts_gpu_model_stage_estimate(tp, cfg, s);
	return total;
}

void ts_gpu_config_canonical(const ts_template *tp, ts_config *c)
{
	ts_config *d = NULL;

	for (int s = 0; s < tp->dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		const ts_stage *st = tp->dag->stages[s];
		int knobs[TS_MAX_AXES + TS_MAX_DIMS + 1], n = 0;
		if (!ts_gpu_template_tensor_core(tp, c, s))
			continue;
		if (!d)
			d = ts_gpu_template_default(tp);
		for (int a = 0; a < st->ndim + st->nraxes; a++)
			knobs[n++] = p->split[a];
		for (int k = 0; k < p->nshared; k++)
			knobs[n++] = p->knob_shared[k];
		knobs[n++] = p->knob_unroll;
		for (int k = 0; k < n; k++)
			for (int l = 0; l < tp->space->knobs[knobs[k]]->nparts ||
			     l == 0; l++)
				ts_config_set(c, knobs[k], l,
					ts_config_get(d, knobs[k], l));
	}
}

/* Tensor-core seeds of tile "p" into "c": "warps" x "warps" warps of
 * "frags" x "frags" fragments (fewer where they do not divide), inner
 * reduction steps of "kin" fragments.  Returns false when "p" has no
 * tensor-core knob. */
static bool tc_seed(const ts_gpu_template *tp, const ts_stage_plan *p,
	ts_config *c, int64_t warps, int64_t frags, int64_t kin)
{
	const ts_knob *k;
	int64_t in[2];

	if (p->knob_tc < 0)
		return false;
	ts_config_set(c, p->knob_tc, 0, 1);
	for (int t = 0; t < 3; t++) {
		k = tp->space->knobs[p->tc_split[t]];
		in[0] = t < 2 ? warps : kin;
		in[1] = frags;
		for (int l = t < 2 ? 1 : 0; l >= 0; l--)
			while (in[l] > 1 && k->extent % (t < 2 ? in[0] * in[1] :
			       in[0]))
				in[l] /= 2;
		ts_config_set_split(c, p->tc_split[t], in);
	}
	return true;
}

int ts_gpu_static_seeds(const ts_template *tp, ts_config **out)
{
	static const int64_t thr[] = { 8, 16, 16, 8 }, reg[] = { 2, 2, 4, 4 };
	int n = 0;

	for (int v = 0; v < 4; v++) {
		ts_config *c = ts_gpu_template_default(tp);
		for (int s = 0; s < tp->dag->nstages; s++) {
			const ts_stage_plan *p = &tp->plans[s];
			const ts_stage *st = tp->dag->stages[s];
			if (p->rule != TS_RULE_TILE)
				continue;
			for (int a = 0; a < st->ndim + st->nraxes; a++) {
				int64_t e = ts_stage_axis(st, a)->extent;
				int64_t in[3];
				bool last2 = a >= st->ndim - 2 && a < st->ndim;
				if (a < st->ndim) {
					in[0] = last2 ? 2 : 1;
					in[1] = last2 ? thr[v] : 1;
					in[2] = last2 ? reg[v] : 1;
					for (int k = 2; k >= 0; k--)
						while (in[k] > 1 && e % (in[0] *
						       in[1] * in[2]))
							in[k] /= 2;
				} else {
					in[0] = 8;
					while (in[0] > 1 && e % in[0])
						in[0] /= 2;
				}
				ts_config_set_split(c, p->split[a], in);
			}
		}
		if (ts_config_is_valid(c))
			out[n++] = c;
	}
	for (int v = 0; v < 6; v++) {
		static const int64_t w[] = { 2, 2, 2, 4, 1, 4 };
		static const int64_t fr[] = { 2, 4, 1, 2, 2, 4 };
		ts_config *c = ts_gpu_template_default(tp);
		bool any = false;
		for (int s = 0; s < tp->dag->nstages; s++)
			any |= tc_seed(tp, &tp->plans[s], c, w[v], fr[v], 2);
		if (any && ts_config_is_valid(c))
			out[n++] = c;
	}
	return n;
}

ts_gpu_static_result *ts_gpu_static_fill(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, int k)
{
	if (!target || target->kind != TS_TARGET_GPU)
		return ts_ctx_set_error(ctx, "GPU static filling: target '%s' "
			"is not a GPU", target ? target->name : "(none)"), NULL;
	return ts_static_fill(ctx, dag, target, k);
}

ts_schedule *ts_gpu_static_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target)
{
	ts_gpu_static_result *r = ts_gpu_static_fill(ctx, dag, target, 1);

	return r ? ts_gpu_template_apply(r->tp, r->best) : NULL;
}
