/* The task scheduler: shares a tuning budget across the tasks of a
 * network.
 *
 * First every task gets one round (warm-up, round robin).  Then each
 * round goes to the task with the largest expected gain in network
 * latency, weight x expected drop of its time in the next round:
 *
 *	backward  the drop per round over the last rounds of that task
 *	forward   the drop still possible if the task ran as fast (in
 *		  flops per second) as the fastest task of its class,
 *		  spread over the rounds it has had (optimistic, so that a
 *		  task that looks slow for its flops gets tried)
 *
 * and the expectation is the larger of the two.  A task with no valid
 * schedule after its warm-up round is marked and never chosen again.
 * The estimated network latency is the weighted sum of the tasks' best
 * times; the progress callback sees it fall round by round.  Within
 * limits, the rounds stop when the time is spent, and a task whose
 * expected gain falls below a fraction of the latency is retired.
 */
#include <config.h>

#include <math.h>

#include <tessel/network.h>
#include <tessel/tune.h>

#include "support/support.h"

/* The state of one task. */
struct task_state {
	double best;		/* best time so far (INFINITY: none) */
	double *history;	/* best after each of its rounds */
	int rounds;
	bool dead;		/* no valid schedule */
};

/* The estimated latency of the network: weighted best times of "st";
 * tasks without a time are left out. */
static double latency(const ts_partition *p, const struct task_state *st)
{
	double l = 0;

	for (int t = 0; t < p->ntasks; t++)
		if (isfinite(st[t].best))
			l += p->tasks[t]->weight * st[t].best;
	return l;
}

/* Flops per second of the fastest task of the class of "t". */
static double best_rate(const ts_partition *p, const struct task_state *st,
	int t)
{
	double r = 0;

	for (int u = 0; u < p->ntasks; u++)
		if (p->tasks[u]->klass == p->tasks[t]->klass &&
		    isfinite(st[u].best) && st[u].best > 0)
			r = TS_MAX(r, p->tasks[u]->flops / st[u].best);
	return r;
}

/* The expected gain of one more round of task "t". */
static double expected_gain(const ts_partition *p,
	const struct task_state *st, int t, int window)
{
	const struct task_state *s = &st[t];
	double back = 0, fwd = 0, rate;
	int w = TS_MIN(window, s->rounds - 1);

	if (s->dead || !isfinite(s->best))
		return -1;
	if (w > 0 && isfinite(s->history[s->rounds - 1 - w]))
		back = (s->history[s->rounds - 1 - w] - s->best) / w;
	rate = best_rate(p, st, t);
	if (rate > 0)
		fwd = TS_MAX(0.0, s->best - p->tasks[t]->flops / rate) /
			s->rounds;
	/* A little optimism for every task, so that ties break towards
	 * the task with the most time left and nothing starves. */
	fwd = TS_MAX(fwd, 0.01 * s->best / s->rounds);
	return p->tasks[t]->weight * TS_MAX(back, fwd);
}

/* Give one round to task "t" and record it. */
static ts_status run_round(ts_task_tune_fn fn, void *data,
	struct task_state *s, int t, int trials)
{
	double best = INFINITY;

	if (fn(data, t, trials, &best) < 0)
		return TS_ERROR;
	if (best < s->best)
		s->best = best;
	s->history = ts_grow(s->history, sizeof(double), s->rounds,
		s->rounds + 1);
	s->history[s->rounds++] = s->best;
	return TS_OK;
}

bool ts_partition_task_runs_once(const ts_partition *p, int t)
{
	bool any = false;

	for (int g = 0; g < p->nsubgraphs; g++) {
		if (p->subgraphs[g].task != t)
			continue;
		if (!p->subgraphs[g].once)
			return false;
		any = true;
	}
	return any;
}

/* The task to tune next, or -1 when every task is dead or retired: a
 * task whose expected gain is below "min_gain" times the latency is
 * marked in "retired". */
static int pick(const ts_partition *p, const struct task_state *st,
	int window, double min_gain, bool *retired)
{
	double best = -1, floor = min_gain * latency(p, st);
	int arg = -1;

	for (int t = 0; t < p->ntasks; t++) {
		double g = retired[t] ? -1 : expected_gain(p, st, t, window);
		if (g >= 0 && g < floor) {
			retired[t] = true;
			continue;
		}
		if (g > best) {
			best = g;
			arg = t;
		}
	}
	return arg;
}

ts_task_schedule *ts_task_schedule_run(ts_ctx *ctx, const ts_partition *p,
	int rounds, int trials_per_round, ts_task_tune_fn fn, void *data,
	ts_task_progress_fn progress, void *pdata)
{
	return ts_task_schedule_run_limited(ctx, p, rounds, trials_per_round,
		NULL, fn, data, progress, pdata);
}

ts_task_schedule *ts_task_schedule_run_limited(ts_ctx *ctx,
	const ts_partition *p, int rounds, int trials_per_round,
	const ts_task_schedule_limits *limits, ts_task_tune_fn fn, void *data,
	ts_task_progress_fn progress, void *pdata)
{
	struct task_state *st = ts_new_array(struct task_state, p->ntasks + 1);
	ts_task_schedule *r = ts_new(ts_task_schedule);
	ts_task_schedule_limits none = { 0, 0 };
	int warm = 0;		/* the next task of the round robin */
	double t0 = ts_now_s();

	if (!limits)
		limits = &none;
	r->rounds_of = ts_new_atomic(int, p->ntasks + 1);
	r->order = ts_new_atomic(int, rounds + 1);
	r->latency = ts_new_atomic(double, rounds + 1);
	r->elapsed = ts_new_atomic(double, rounds + 1);
	r->once = ts_new_atomic(bool, p->ntasks + 1);
	r->retired = ts_new_atomic(bool, p->ntasks + 1);
	for (int t = 0; t < p->ntasks; t++) {
		st[t].best = INFINITY;
		r->once[t] = ts_partition_task_runs_once(p, t);
		st[t].dead = r->once[t];
		r->retired[t] = false;
	}
	for (int k = 0; k < rounds; k++) {
		int t;
		if (limits->budget_s > 0 && ts_now_s() - t0 >= limits->budget_s)
			break;
		while (warm < p->ntasks && r->once[warm])
			warm++;
		t = warm < p->ntasks ? warm++ : pick(p, st, 3,
			limits->min_gain, r->retired);
		if (t < 0)
			break;
		if (run_round(fn, data, &st[t], t, trials_per_round) < 0) {
			ts_ctx_set_error(ctx, "tuning task %d (anchor '%s'): %s",
				t, p->tasks[t]->name, ts_ctx_error(ctx));
			return NULL;
		}
		st[t].dead = !isfinite(st[t].best);
		r->order[r->nrounds] = t;
		r->rounds_of[t]++;
		r->elapsed[r->nrounds] = ts_now_s() - t0;
		r->latency[r->nrounds++] = latency(p, st);
		if (progress)
			progress(pdata, r->nrounds, t,
				r->latency[r->nrounds - 1]);
	}
	r->static_latency = NAN;
	for (int t = 0; t < p->ntasks; t++)
		r->warmup += !r->once[t];
	r->warmup = TS_MIN(r->warmup, r->nrounds);
	r->best = ts_new_atomic(double, p->ntasks + 1);
	r->dead = ts_new_atomic(bool, p->ntasks + 1);
	for (int t = 0; t < p->ntasks; t++) {
		r->best[t] = st[t].best;
		r->dead[t] = st[t].dead;
	}
	return r;
}

/* Tuning the tasks of a partition with the tuner of <tessel/tune.h>: one
 * measurer and one tuner per task kept across rounds (the tuner resumes
 * from the records log, when one is given, at its first round), the best
 * schedule kept. */
struct tuner_env {
	ts_ctx *ctx;
	const ts_partition *p;
	const ts_target *target;
	const ts_tune_options *opt;
	ts_measurer **measurers;
	ts_tuner **tuners;
	double *best;
	ts_schedule **best_sch;
	double *static_s;	/* per task: its static time, first round */
	double setup_s;		/* making measurers and tuners */
};

/* Give the new tuner of task "task" of "env" the samples of the tuners
 * of the other tasks of its class, so that its model is trained from its
 * first round, and the two best configurations of those whose anchor has
 * its anchor's shape and reads tensors of the same shapes as its first
 * candidates (ts_tuner_adopt): the static search settles
 * on configurations the model rates alike that run up to 25% apart, and
 * a same-shape neighbour may have drawn the fast one (ResNet-18 on a Zen
 * 4: two 256-channel 14x14 convolutions ran 2.03 and 2.70 ms). */
static void learn_from_class(struct tuner_env *env, int task)
{
	const ts_partition *p = env->p;
	const ts_task *k = p->tasks[task];

	for (int u = 0; u < p->ntasks; u++) {
		const ts_task *v = p->tasks[u];
		if (u == task || !env->tuners[u] || v->klass != k->klass)
			continue;
		ts_tuner_learn(env->tuners[task], env->tuners[u]);
		ts_tuner_adopt(env->tuners[task], env->tuners[u], v->name,
			k->name, 2);
	}
}

/* One round of "trials" measurements of task "task" (a ts_task_tune_fn
 * over a struct tuner_env). */
static ts_status tune_round(void *data, int task, int trials, double *best)
{
	struct tuner_env *env = data;
	const ts_dag *dag = env->p->tasks[task]->dag;
	ts_tune_options to = *env->opt;
	ts_tuner *t;
	ts_status st;
	double t0 = ts_now_s();

	if (!to.measure.cpu)
		ts_measure_options_target(&to.measure, env->target);
	if (!env->measurers[task])
		env->measurers[task] = ts_measurer_new(env->ctx, dag,
			&to.measure, to.seed);
	if (!env->measurers[task])
		return TS_ERROR;
	if ((t = env->tuners[task])) {
		ts_tuner_extend(t, trials);
	} else {
		to.trials = trials;
		to.measurer = env->measurers[task];
		/* The budget is the network's, checked between rounds. */
		to.budget_s = 0;
		t = env->tuners[task] = ts_tuner_new(env->ctx, dag,
			env->target, &to);
		if (!t)
			return TS_ERROR;
		learn_from_class(env, task);
	}
	env->setup_s += ts_now_s() - t0;
	st = ts_tuner_run(t, NULL, NULL);
	if (st == TS_OK && !isfinite(env->static_s[task]))
		env->static_s[task] = ts_tuner_static_time(t);
	/* A run that found nothing faster than the log's best keeps that
	 * best unverified: the time already kept, verified, stands. */
	if (st == TS_OK && (ts_tuner_verified(t) || !isfinite(env->best[task])
	    || ts_tuner_kept_static(t, NULL)) &&
	    ts_tuner_best_time(t) < env->best[task]) {
		env->best[task] = ts_tuner_best_time(t);
		env->best_sch[task] = (ts_schedule *)ts_tuner_best_schedule(t);
	}
	*best = env->best[task];
	return st;
}

/* A network's task gets no more rounds once one is expected to gain less
 * than this share of the network's latency. */
#define NETWORK_MIN_GAIN 1e-3

/* Point env->opt at "net": its options with the search of the default
 * evolution options halved in population and generations, and the
 * final comparison of a round between the two best and the static
 * choice rather than the default four.  A round of a network's task is
 * one batch: rating the default search's 512 candidates (each lowered
 * for its features) took 20 to 50 s against a few seconds for the
 * batch's measurements (ResNet-18's convolutions on a Zen 4), and
 * comparing five schedules three times each took a fifth of a tuning
 * run's time; options set otherwise are kept. */
static void network_search(struct tuner_env *env, ts_tune_options *net)
{
	ts_tune_options def = ts_tune_options_default();

	*net = *env->opt;
	if (net->evolve.population == def.evolve.population &&
	    net->evolve.generations == def.evolve.generations) {
		net->evolve.population = def.evolve.population / 2;
		net->evolve.generations = TS_MAX(1,
			def.evolve.generations / 2);
	}
	if (net->verify == def.verify)
		net->verify = TS_MIN(def.verify, 2);
	env->opt = net;
}

/* The latency of "p" with every task of "r" that is tuned at its static
 * time "static_s" (NAN when one has none). */
static double static_latency(const ts_partition *p, const ts_task_schedule *r,
	const double *static_s)
{
	double l = 0;

	for (int t = 0; t < p->ntasks; t++) {
		if (r->once[t])
			continue;
		if (!isfinite(static_s[t]))
			return NAN;
		l += p->tasks[t]->weight * static_s[t];
	}
	return l;
}

ts_schedule **ts_partition_tune(ts_ctx *ctx, const ts_partition *p,
	const ts_target *target, int rounds, const ts_tune_options *opt,
	ts_task_progress_fn progress, void *pdata, ts_task_schedule **out)
{
	ts_tune_options def = ts_tune_options_default();
	struct tuner_env env = { ctx, p, target, opt ? opt : &def };
	ts_task_schedule_limits lim = { env.opt->budget_s, NETWORK_MIN_GAIN };
	ts_tune_options net;
	ts_task_schedule *r;

	env.measurers = ts_new_array(ts_measurer *, p->ntasks + 1);
	env.tuners = ts_new_array(ts_tuner *, p->ntasks + 1);
	network_search(&env, &net);
	env.best = ts_new_atomic(double, p->ntasks + 1);
	env.best_sch = ts_new_array(ts_schedule *, p->ntasks + 1);
	env.static_s = ts_new_atomic(double, p->ntasks + 1);
	for (int t = 0; t < p->ntasks; t++)
		env.best[t] = env.static_s[t] = INFINITY;
	r = ts_task_schedule_run_limited(ctx, p, rounds, env.opt->trials,
		&lim, tune_round, &env, progress, pdata);
	if (r) {
		r->static_latency = static_latency(p, r, env.static_s);
		r->setup_s = env.setup_s;
	}
	for (int t = 0; t < p->ntasks; t++) {
		if (r && env.tuners[t]) {
			ts_tune_phases ph = ts_tuner_phases(env.tuners[t]);
			r->search_s += ph.search_s;
			r->measure_s += ph.measure_s;
			r->verify_s += ph.verify_s;
			r->verify_runs += ph.verify_runs;
		}
		ts_tuner_free(env.tuners[t]);
		if (env.measurers[t])
			ts_measurer_free(env.measurers[t]);
	}
	if (out)
		*out = r;
	return r ? env.best_sch : NULL;
}
