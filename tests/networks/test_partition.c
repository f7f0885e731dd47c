/* Partition of networks into subgraphs and deduplicated tasks. */
#include <config.h>

#include "tests/common.h"
#include "networks/network_internal.h"
#include "examples/networks.h"

/* The host target, failing the test when it cannot be detected. */
static ts_target *host(ts_ctx *ctx)
{
	ts_target *t = ts_target_host(ctx);

	if (!t)
		fail_msg("host: %s", ts_ctx_error(ctx));
	return t;
}

/* Partition "dag", failing the test on error. */
static ts_partition *partition(ts_ctx *ctx, const ts_dag *dag)
{
	ts_partition *p;

	if (!dag)
		fail_msg("build: %s", ts_ctx_error(ctx));
	p = ts_partition_dag(ctx, dag, host(ctx));
	if (!p)
		fail_msg("partition: %s", ts_ctx_error(ctx));
	return p;
}

/* Check the structural facts every partition of "dag" must have. */
static void check_partition(const ts_dag *dag, const ts_partition *p)
{
	int weights = 0;
	int *covered = calloc((size_t)dag->nstages, sizeof(int));

	for (int t = 0; t < p->ntasks; t++) {
		weights += p->tasks[t]->weight;
		assert_true(p->tasks[t]->flops >= 0);
	}
	assert_int_equal(weights, p->nsubgraphs);
	for (int g = 0; g < p->nsubgraphs; g++) {
		const ts_subgraph *sg = &p->subgraphs[g];
		const ts_dag *sub = p->tasks[sg->task]->dag;
		assert_int_equal(sub->ninputs, sg->ninputs);
		assert_int_equal(sub->noutputs, sg->noutputs);
		for (int i = 0; i < sg->ninputs; i++) {
			assert_int_equal(sub->inputs[i]->ndim,
				sg->inputs[i]->ndim);
			assert_int_equal(ts_tensor_size(sub->inputs[i]),
				ts_tensor_size(sg->inputs[i]));
		}
		for (int i = 0; i < sg->nstages; i++)
			covered[sg->stages[i]]++;
		/* Everything a subgraph reads is computed before it. */
		for (int i = 0; i < sg->ninputs; i++) {
			bool earlier = !sg->inputs[i]->stage;
			for (int h = 0; h < g && !earlier; h++)
				for (int o = 0; o < p->subgraphs[h].noutputs; o++)
					earlier |= p->subgraphs[h].outputs[o] ==
						sg->inputs[i];
			assert_true(earlier);
		}
	}
	for (int s = 0; s < dag->nstages; s++)
		if (!covered[s])
			fail_msg("stage '%s' is in no subgraph",
				dag->stages[s]->name);
	free(covered);
}

static void test_partition_lenet__anchors_are_reductions(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_lenet(ctx, 1);
	ts_partition *p = partition(ctx, dag);

	check_partition(dag, p);
	/* Convolutions, pools, dense layers and the softmax reductions. */
	assert_true(p->nsubgraphs >= 8);
	for (int t = 0; t < p->ntasks; t++)
		assert_true(p->tasks[t]->klass != TS_CLASS_LOCATION_TUNABLE);
	assert_int_equal(p->subgraphs[0].anchor,
		ts_dag_stage_index(dag, ts_dag_find_stage(dag, "C1")));
}

static void test_partition_equal_layers__one_task_weight_two(void **state)
{
	ts_ctx *ctx = *state;
	/* Each relu is computed at the next layer's reduction (a location
	 * knob), so layers B and C are the same subgraph: the relu of the
	 * layer before, a 32x32 dense layer. */
	ts_dag *dag = ts_parse_string(ctx, "four",
		"input X: f32[4, 32]\ninput W1: f32[32, 32]\n"
		"input W2: f32[32, 32]\ninput W3: f32[32, 32]\n"
		"input W4: f32[32, 32]\n"
		"A[i: 4, o: 32] = sum(k: 32) X[i, k] * W1[o, k]\n"
		"RA[i: 4, o: 32] = max(A[i, o], 0.0)\n"
		"B[i: 4, o: 32] = sum(k: 32) RA[i, k] * W2[o, k]\n"
		"RB[i: 4, o: 32] = max(B[i, o], 0.0)\n"
		"C[i: 4, o: 32] = sum(k: 32) RB[i, k] * W3[o, k]\n"
		"RC[i: 4, o: 32] = max(C[i, o], 0.0)\n"
		"D[i: 4, o: 32] = sum(k: 32) RC[i, k] * W4[o, k]\n"
		"output RD[i: 4, o: 32] = max(D[i, o], 0.0)\n");
	ts_partition *p = partition(ctx, dag);
	const ts_task *t;

	check_partition(dag, p);
	assert_int_equal(p->nsubgraphs, 4);
	assert_int_equal(p->ntasks, 3);
	assert_int_equal(p->subgraphs[1].task, p->subgraphs[2].task);
	t = p->tasks[p->subgraphs[1].task];
	assert_int_equal(t->weight, 2);
	assert_int_equal(t->dag->nstages, 2);
	assert_string_equal(t->name, "B");
	/* 4 x 32 x 32 multiply-adds and 4 x 32 maxima. */
	assert_int_equal(t->flops, 2 * 4 * 32 * 32 + 4 * 32);
	assert_int_equal(ts_partition_flops(p), p->tasks[0]->flops +
		2 * t->flops + p->tasks[2]->flops);
}

static void test_partition_residual__branch_runs_first(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 4, 10);
	ts_partition *p = partition(ctx, dag);
	int down = -1, join = -1;

	check_partition(dag, p);
	/* The downsampling conv of stage 2 runs before the subgraph whose
	 * epilogue adds it to the main branch. */
	for (int g = 0; g < p->nsubgraphs; g++) {
		const char *a = dag->stages[p->subgraphs[g].anchor]->name;
		if (!strcmp(a, "L2a_D_C"))
			down = g;
		if (!strcmp(a, "L2a_B_C"))
			join = g;
	}
	assert_true(down >= 0 && join >= 0);
	assert_true(down < join);
}

static void test_partition_int8_conv_requantise__one_task_int8_out(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "q",
		"input X: i8[1, 8, 10, 10]\ninput W: i8[16, 8, 3, 3]\n"
		"C[n: 1, k: 16, h: 8, w: 8]: i32 = sum(rc: 8, r: 3, s: 3) "
		"i32(X[n, rc, h + r, w + s]) * i32(W[k, rc, r, s])\n"
		"output Q[n: 1, k: 16, h: 8, w: 8]: i8 = "
		"clamp(round(f32(C[n, k, h, w]) * 0.05), -128.0, 127.0)\n");
	ts_partition *p = partition(ctx, dag);
	const ts_subgraph *sg;

	check_partition(dag, p);
	assert_int_equal(p->nsubgraphs, 1);
	sg = &p->subgraphs[0];
	assert_int_equal(sg->nstages, 2);
	assert_int_equal(sg->noutputs, 1);
	assert_string_equal(sg->outputs[0]->name, "Q");
	assert_int_equal(sg->outputs[0]->dtype, TS_I8);
	assert_int_equal(p->tasks[0]->klass, TS_CLASS_COMPLEX_REDUCTION);
}

static void test_partition_resnet18_reduced__blocks_deduplicated(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 4, 10);
	ts_partition *p = partition(ctx, dag);
	int heavy = 0;

	check_partition(dag, p);
	assert_true(p->ntasks < p->nsubgraphs);
	for (int t = 0; t < p->ntasks; t++)
		heavy += p->tasks[t]->weight > 1;
	assert_true(heavy >= 1);
	/* Each task is a DAG of its own that prints canonically apart from
	 * every other task. */
	for (int a = 0; a < p->ntasks; a++)
		for (int b = a + 1; b < p->ntasks; b++)
			assert_string_not_equal(
				ts_dag_canonical_string(p->tasks[a]->dag),
				ts_dag_canonical_string(p->tasks[b]->dag));
}

static void test_partition_transformer_reduced__covers_all(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_transformer(ctx, 8, 16, 2, 32);
	ts_partition *p = partition(ctx, dag);

	check_partition(dag, p);
	assert_true(p->nsubgraphs >= 10);
}

/* The subgraph of network stage "name" in "p", or -1. */
static int subgraph_of(const ts_dag *dag, const ts_partition *p,
	const char *name)
{
	int s = ts_dag_stage_index(dag, ts_dag_find_stage(dag, name));

	for (int g = 0; g < p->nsubgraphs; g++)
		for (int i = 0; i < p->subgraphs[g].nstages; i++)
			if (p->subgraphs[g].stages[i] == s)
				return g;
	return -1;
}

/* A layer norm's mean and variance go with the normalised rows, one
 * subgraph, so that its tiles of rows can compute them (the knob of its
 * row group): the partition follows the network's template. */
static void test_partition_layer_norm__statistics_with_the_rows(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_transformer(ctx, 8, 16, 2, 32);
	ts_partition *p = partition(ctx, dag);
	int g = subgraph_of(dag, p, "Y");

	check_partition(dag, p);
	assert_true(g >= 0);
	assert_int_equal(subgraph_of(dag, p, "Y_Mu.sum0"), g);
	assert_int_equal(subgraph_of(dag, p, "Y_Var.sum0"), g);
	assert_int_equal(subgraph_of(dag, p, "Y_Var"), g);
	assert_int_equal(p->subgraphs[g].noutputs, 1);
	g = subgraph_of(dag, p, "N1");
	assert_int_equal(subgraph_of(dag, p, "N1_Mu.sum0"), g);
	assert_int_equal(subgraph_of(dag, p, "N1_Var"), g);
}

static void test_partition_out_of_bounds__names_stage(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *x = ts_placeholder(ctx, "X", TS_F32, 1, (int64_t[]){ 8 });
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *y = ts_compute(ctx, "Bad", 1, &i, ts_at(ctx, x, 1,
		ts_add(ctx, ts_var(ctx, i), ts_int(ctx, 1))));
	ts_dag *dag = ts_dag_new(ctx, 1, &x, 1, &y);

	assert_non_null(dag);
	assert_null(ts_partition_dag(ctx, dag, host(ctx)));
	assert_error_contains(ctx, "Bad");
}

static void test_network_sources__tsl_files_are_real_size(void **state)
{
	static const char *names[] = { "resnet18", "transformer" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		char path[4096];
		ts_dag *file, *built;
		snprintf(path, sizeof(path), "%s/examples/%s.tsl",
			ts_test_srcdir(), names[i]);
		file = ts_parse_file(ctx, path);
		built = i == 0 ? ts_network_resnet18(ctx, 1, 224, 64, 1000)
			: ts_network_transformer(ctx, 128, 768, 12, 3072);
		if (!file || !built)
			fail_msg("%s: %s", names[i], ts_ctx_error(ctx));
		assert_string_equal(ts_dag_canonical_string(file),
			ts_dag_canonical_string(built));
		ts_ctx_free(ctx);
	}
}

static void test_network_builders__bad_sizes__error(void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_network_resnet18(ctx, 1, 33, 4, 10));
	assert_error_contains(ctx, "resnet18: bad sizes");
	assert_null(ts_network_transformer(ctx, 8, 16, 3, 32));
	assert_error_contains(ctx, "transformer: bad sizes");
}

/* B = A * 2 over [8, 64]. */
static ts_dag *double_dag(ts_ctx *ctx)
{
	ts_dag *dag = ts_parse_string(ctx, "double.tsl", "input A: f32[8, 64]\n"
		"output B[i: 8, j: 64] = A[i, j] * 2.0\n");

	assert_non_null(dag);
	return dag;
}

static void test_emitted_stmts_unroll_and_vector__counted(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = double_dag(ctx);
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	ts_func *f = ts_lower(ctx, dag, sch);

	/* One loop nest, one store. */
	assert_non_null(f);
	assert_true(ts_func_emitted_stmts(f, 16) == 1);
	/* i unrolled: 8 copies; j a vector of 64 lanes: 4 registers of 16
	 * each. */
	assert_int_equal(ts_schedule_unroll(sch, "B", "i"), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "B", "j"), TS_OK);
	f = ts_lower(ctx, dag, sch);
	assert_non_null(f);
	assert_true(ts_func_emitted_stmts(f, 16) == 8 * 4);
	assert_true(ts_func_emitted_stmts(f, 64) == 8);
}

static void test_network_static_schedule_bound__naive_with_warning(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = double_dag(ctx);
	ts_target *host = ts_target_host(ctx);
	ts_func *f = NULL, *big = NULL;
	ts_array **in, *got[2] = { 0 }, *want[2] = { 0 };
	ts_module *m;
	ts_schedule *sch;

	assert_non_null(host);
	/* Within a generous bound: the model's best, no warning. */
	sch = ts_network_static_schedule(ctx, dag, host, 4,
		TS_NETWORK_MAX_STMTS, &big);
	assert_non_null(sch);
	assert_non_null(big);
	assert_true(ts_func_emitted_stmts(big, 16) <= TS_NETWORK_MAX_STMTS);
	assert_null(ts_ctx_warnings(ctx));
	/* Below one statement nothing fits: the naive schedule, said. */
	sch = ts_network_static_schedule(ctx, dag, host, 4, 0.5, &f);
	assert_non_null(sch);
	assert_non_null(f);
	assert_non_null(ts_ctx_warnings(ctx));
	assert_non_null(strstr(ts_ctx_warnings(ctx), "using the naive "
		"schedule"));
	assert_non_null(strstr(ts_ctx_warnings(ctx), "more than 0 "
		"statements"));
	/* What it lowered computes the DAG. */
	in = ts_dag_random_inputs(ctx, dag, 2);
	got[0] = ts_array_for_tensor(ctx, dag->outputs[0]);
	m = ts_module_compile(ctx, f, NULL);
	assert_non_null(m);
	assert_int_equal(ts_module_run(m, (ts_array *[]){ in[0], got[0] }),
		TS_OK);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	assert_true(ts_array_close(got[0], want[0], NULL));
	ts_module_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_partition_lenet__anchors_are_reductions),
		TS_TEST(test_partition_equal_layers__one_task_weight_two),
		TS_TEST(test_partition_residual__branch_runs_first),
		TS_TEST(test_partition_int8_conv_requantise__one_task_int8_out),
		TS_TEST(test_partition_resnet18_reduced__blocks_deduplicated),
		TS_TEST(test_partition_transformer_reduced__covers_all),
		TS_TEST(test_partition_layer_norm__statistics_with_the_rows),
		TS_TEST(test_partition_out_of_bounds__names_stage),
		TS_TEST(test_network_sources__tsl_files_are_real_size),
		TS_TEST(test_network_builders__bad_sizes__error),
		TS_TEST(test_emitted_stmts_unroll_and_vector__counted),
		TS_TEST(test_network_static_schedule_bound__naive_with_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
