/* The task scheduler on synthetic tasks whose times fall along known
 * curves. */
#include <config.h>

#include <math.h>
#include <time.h>

#include "tests/common.h"

/* A synthetic tuning: task t's time after n trials is floor[t] +
 * span[t] / (1 + n); a dead task never gets a valid time. */
struct fake {
	double floor_s[4], span_s[4];
	bool dead[4];
	int trials[4];
	int calls;
};

/* Tune task "task" of "data" (a struct fake) for "trials" trials. */
static ts_status fake_tune(void *data, int task, int trials, double *best)
{
	struct fake *f = data;

	f->calls++;
	f->trials[task] += trials;
	*best = f->dead[task] ? INFINITY : f->floor_s[task] +
		f->span_s[task] / (1.0 + f->trials[task]);
	return TS_OK;
}

/* A partition of "n" tasks with the given weights and flops, no DAG. */
static ts_partition *fake_partition(int n, const int *weight,
	const int64_t *flops)
{
	ts_partition *p = calloc(1, sizeof(*p));

	p->ntasks = n;
	p->tasks = calloc((size_t)n, sizeof(ts_task *));
	for (int t = 0; t < n; t++) {
		p->tasks[t] = calloc(1, sizeof(ts_task));
		p->tasks[t]->weight = weight[t];
		p->tasks[t]->flops = flops[t];
		p->tasks[t]->klass = TS_CLASS_COMPLEX_REDUCTION;
		p->tasks[t]->name = "fake";
	}
	return p;
}

static void free_partition(ts_partition *p)
{
	for (int t = 0; t < p->ntasks; t++)
		free(p->tasks[t]);
	free(p->tasks);
	free(p);
}

struct seen {
	int rounds;
	double last;
	bool rose;
};

/* Record the latency after each round and whether it ever rose. */
static void on_progress(void *data, int round, int task, double lat)
{
	struct seen *s = data;

	(void)task;
	s->rose |= round > 1 && lat > s->last + 1e-15 && s->rounds >= 3;
	s->last = lat;
	s->rounds = round;
}

static void test_taskscheduler__warmup_then_gain_dead_skipped(void **state)
{
	ts_ctx *ctx = *state;
	/* Task 0: heavy and far from its floor; task 1: converged; task 2:
	 * never valid. */
	struct fake f = { { 1e-3, 1e-3, 1e-3 }, { 8e-3, 1e-6, 1e-3 },
		{ false, false, true } };
	ts_partition *p = fake_partition(3, (int[]){ 4, 1, 1 },
		(int64_t[]){ 1000000, 1000000, 1000000 });
	struct seen seen = { 0 };
	ts_task_schedule *r = ts_task_schedule_run(ctx, p, 20, 8, fake_tune,
		&f, on_progress, &seen);

	assert_non_null(r);
	assert_int_equal(r->nrounds, 20);
	assert_int_equal(seen.rounds, 20);
	for (int t = 0; t < 3; t++)
		assert_int_equal(r->order[t], t);
	assert_true(r->dead[2]);
	assert_false(r->dead[0] || r->dead[1]);
	assert_int_equal(r->rounds_of[2], 1);
	assert_true(r->rounds_of[0] > 2 * r->rounds_of[1]);
	assert_true(isinf(r->best[2]));
	assert_int_equal(f.trials[0], 8 * r->rounds_of[0]);
	/* The estimate falls round by round once every task has a time. */
	for (int k = 3; k < r->nrounds; k++)
		assert_true(r->latency[k] <= r->latency[k - 1] + 1e-15);
	assert_true(fabs(r->latency[r->nrounds - 1] - (4 * r->best[0] +
		r->best[1])) < 1e-12);
	free_partition(p);
}

static void test_taskscheduler__runs_once__never_tuned(void **state)
{
	ts_ctx *ctx = *state;
	struct fake f = { { 1e-3, 1e-3, 1e-3 }, { 4e-3, 4e-3, 4e-3 } };
	ts_partition *p = fake_partition(3, (int[]){ 1, 1, 1 },
		(int64_t[]){ 1000000, 1000000, 1000000 });
	ts_task_schedule *r;

	/* Task 1 converts a weight: its one subgraph runs once. */
	p->nsubgraphs = 3;
	p->subgraphs = calloc(3, sizeof(ts_subgraph));
	for (int g = 0; g < 3; g++)
		p->subgraphs[g].task = g;
	p->subgraphs[1].once = true;
	r = ts_task_schedule_run(ctx, p, 10, 8, fake_tune, &f, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nrounds, 10);
	assert_true(r->once[1]);
	assert_false(r->once[0] || r->once[2]);
	assert_int_equal(r->rounds_of[1], 0);
	assert_int_equal(f.trials[1], 0);
	assert_int_equal(r->order[0], 0);
	assert_int_equal(r->order[1], 2);
	/* Its time is no part of a run's latency. */
	assert_true(fabs(r->latency[r->nrounds - 1] - (r->best[0] +
		r->best[2])) < 1e-12);
	free(p->subgraphs);
	free_partition(p);
}

static void test_taskscheduler__slow_for_its_flops_gets_rounds(void **state)
{
	ts_ctx *ctx = *state;
	/* Both tasks improve alike per trial, but task 1 has ten times the
	 * flops of task 0 in the same time: task 0 is the one far from the
	 * rate its class reaches, so it gets the rounds. */
	struct fake f = { { 1e-4, 1e-3 }, { 4e-3, 4e-3 } };
	ts_partition *p = fake_partition(2, (int[]){ 1, 1 },
		(int64_t[]){ 1000000, 10000000 });
	ts_task_schedule *r = ts_task_schedule_run(ctx, p, 12, 4, fake_tune,
		&f, NULL, NULL);

	assert_non_null(r);
	assert_true(r->rounds_of[0] > r->rounds_of[1]);
	free_partition(p);
}

/* fake_tune, taking 10 ms. */
static ts_status slow_tune(void *data, int task, int trials, double *best)
{
	struct timespec ts = { 0, 10000000 };

	nanosleep(&ts, NULL);
	return fake_tune(data, task, trials, best);
}

/* Within limits: a spent budget stops the rounds after the one under
 * way, and a task whose expected gain is below the floor is retired;
 * when every task is, the rounds stop. */
static void test_taskscheduler__limits_stop_and_retire(void **state)
{
	ts_ctx *ctx = *state;
	/* Task 0 far from its floor, task 1 converged. */
	struct fake f = { { 1e-3, 1e-3 }, { 8e-3, 1e-9 } };
	struct fake g = f;
	ts_partition *p = fake_partition(2, (int[]){ 1, 1 },
		(int64_t[]){ 1000000, 1000000 });
	ts_task_schedule_limits budget = { 0.03, 0 }, gain = { 0, 1e-3 };
	ts_task_schedule *r;

	/* Rounds of 10 ms in a budget of 30 ms: at most three start. */
	r = ts_task_schedule_run_limited(ctx, p, 50, 8, &budget, slow_tune,
		&f, NULL, NULL);
	assert_non_null(r);
	assert_true(r->nrounds >= 1 && r->nrounds <= 3);
	assert_true(r->nrounds < 2 || r->elapsed[r->nrounds - 2] < 0.03);
	r = ts_task_schedule_run_limited(ctx, p, 200, 8, &gain, fake_tune, &g,
		NULL, NULL);
	assert_non_null(r);
	/* Task 1 retires once the optimism a task keeps (1% of its time,
	 * over its rounds) is below 0.1% of the latency; task 0 when its
	 * rounds stop gaining that much, long before 200 rounds. */
	assert_true(r->retired[1]);
	assert_true(r->rounds_of[1] <= 5);
	assert_true(r->rounds_of[0] > r->rounds_of[1]);
	assert_true(r->retired[0]);
	assert_true(r->nrounds > 3 && r->nrounds < 200);
	for (int k = 1; k < r->nrounds; k++)
		assert_true(r->elapsed[k] >= r->elapsed[k - 1]);
	free_partition(p);
}

/* A tuning that fails. */
static ts_status failing_tune(void *data, int task, int trials, double *best)
{
	(void)task;
	(void)trials;
	(void)best;
	return ts_ctx_set_error(data, "measurer is gone");
}

static void test_taskscheduler__tuner_error__names_task(void **state)
{
	ts_ctx *ctx = *state;
	ts_partition *p = fake_partition(1, (int[]){ 1 }, (int64_t[]){ 1 });

	assert_null(ts_task_schedule_run(ctx, p, 3, 1, failing_tune, ctx,
		NULL, NULL));
	assert_error_contains(ctx, "tuning task 0 (anchor 'fake'): measurer "
		"is gone");
	free_partition(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_taskscheduler__warmup_then_gain_dead_skipped),
		TS_TEST(test_taskscheduler__runs_once__never_tuned),
		TS_TEST(test_taskscheduler__slow_for_its_flops_gets_rounds),
		TS_TEST(test_taskscheduler__limits_stop_and_retire),
		TS_TEST(test_taskscheduler__tuner_error__names_task),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
