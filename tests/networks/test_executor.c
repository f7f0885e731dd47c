/* The network executor: memory plans and whole networks against the
 * reference interpreter. */
#include <config.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/common.h"
#include "examples/networks.h"

/* The host target, failing the test when it cannot be detected. */
static ts_target *host(ts_ctx *ctx)
{
	ts_target *t = ts_target_host(ctx);

	if (!t)
		fail_msg("host: %s", ts_ctx_error(ctx));
	return t;
}

/* Check that no two buffers of "mp" that live at the same time overlap,
 * by walking every subgraph and every byte range. */
static void check_plan(const ts_partition *p, const ts_memory_plan *mp)
{
	int a, b;

	assert_false(ts_memory_plan_has_conflict(mp, &a, &b));
	for (int g = 0; g < p->nsubgraphs; g++)
		for (a = 0; a < mp->nbuffers; a++)
			for (b = a + 1; b < mp->nbuffers; b++) {
				bool live = mp->first[a] <= g && g <= mp->last[a]
					&& mp->first[b] <= g && g <= mp->last[b];
				if (live && mp->offset[a] < mp->offset[b] +
				    mp->bytes[b] && mp->offset[b] <
				    mp->offset[a] + mp->bytes[a])
					fail_msg("subgraph %d: %s and %s overlap",
						g, mp->tensors[a]->name,
						mp->tensors[b]->name);
			}
	for (a = 0; a < mp->nbuffers; a++) {
		assert_int_equal(mp->offset[a] % 64, 0);
		assert_true(mp->offset[a] + mp->bytes[a] <= mp->arena_bytes);
		assert_true(mp->first[a] <= mp->last[a]);
		for (b = a + 1; b < mp->nbuffers; b++)
			if (mp->tensors[a] == mp->tensors[b])
				fail_msg("%s has two buffers", mp->tensors[a]->name);
		/* Alive wherever a subgraph writes or reads it. */
		for (int g = 0; g < p->nsubgraphs; g++) {
			const ts_subgraph *sg = &p->subgraphs[g];
			bool uses = false;
			for (int i = 0; i < sg->ninputs; i++)
				uses |= sg->inputs[i] == mp->tensors[a];
			for (int o = 0; o < sg->noutputs; o++)
				uses |= sg->outputs[o] == mp->tensors[a];
			if (uses && (g < mp->first[a] || g > mp->last[a]))
				fail_msg("%s is used by subgraph %d outside its "
					"lifetime [%d, %d]", mp->tensors[a]->name,
					g, mp->first[a], mp->last[a]);
		}
	}
	assert_true(mp->arena_bytes <= mp->total_bytes);
}

static void test_memory_plan_chain__two_buffers_suffice(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "chain",
		"input X: f32[64]\n"
		"A[i: 64] = sum(k: 64) X[k] * X[i]\n"
		"B[i: 64] = sum(k: 64) A[k] * A[i]\n"
		"C[i: 64] = sum(k: 64) B[k] * B[i]\n"
		"D[i: 64] = sum(k: 64) C[k] * C[i]\n"
		"output E[i: 64] = sum(k: 64) D[k] * D[i]\n");
	ts_partition *p = ts_partition_dag(ctx, dag, host(ctx));
	ts_memory_plan *mp = ts_memory_plan_new(ctx, p);

	assert_non_null(mp);
	assert_int_equal(p->nsubgraphs, 5);
	assert_int_equal(mp->nbuffers, 4);
	check_plan(p, mp);
	assert_int_equal(mp->total_bytes, 4 * 256);
	/* A and B meet in B's subgraph, then A is dead: two slots. */
	assert_int_equal(mp->arena_bytes, 2 * 256);
}

static void test_memory_plan_residual__skip_stays_live(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "skip",
		"input X: f32[64]\n"
		"A[i: 64] = sum(k: 64) X[k] * X[i]\n"
		"B[i: 64] = sum(k: 64) A[k] * A[i]\n"
		"C[i: 64] = sum(k: 64) B[k] * B[i]\n"
		"output E[i: 64] = sum(k: 64) C[k] * A[i]\n");
	ts_partition *p = ts_partition_dag(ctx, dag, host(ctx));
	ts_memory_plan *mp = ts_memory_plan_new(ctx, p);

	check_plan(p, mp);
	assert_int_equal(mp->nbuffers, 3);
	/* A lives to the end and B meets C in C's subgraph: three slots. */
	assert_int_equal(mp->arena_bytes, 3 * 256);
	assert_string_equal(mp->tensors[0]->name, "A");
	assert_int_equal(mp->last[0], 3);
}

static void test_memory_plan_null_partition__error(void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_memory_plan_new(ctx, NULL));
	assert_error_contains(ctx, "no partition");
}

/* Seeded inputs for "dag" with every weight (an input of two or more
 * dimensions after the first input) scaled by sqrt(3 / fan-in), so that
 * activations stay of order one through deep networks and a different
 * summation order changes results by rounding only. */
static ts_array **scaled_inputs(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, seed);

	for (int i = 1; in && i < dag->ninputs; i++) {
		ts_array *a = in[i];
		double s = a->ndim >= 2 ?
			sqrt(3.0 / (double)(a->size / a->shape[0])) : 0.1;
		for (int64_t k = 0; k < a->size; k++)
			ts_array_set(a, k, ts_array_get(a, k) * s);
	}
	return in;
}

/* Compile "dag" (static schedules unless "naive"), run it on seeded
 * inputs and compare every output with ts_eval. */
static void run_and_compare(ts_ctx *ctx, const ts_dag *dag, bool naive,
	int threads)
{
	ts_network_options o = ts_network_options_default();
	ts_array **in, *want[4] = { 0 }, *got[4] = { 0 };
	ts_network *net;

	if (!dag)
		fail_msg("build: %s", ts_ctx_error(ctx));
	o.naive = naive;
	o.threads = threads;
	net = ts_network_compile(ctx, dag, host(ctx), &o);
	if (!net)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	check_plan(ts_network_partition(net), ts_network_memory(net));
	in = scaled_inputs(ctx, dag, 3);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	if (ts_network_run(net, in, got) != TS_OK)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	for (int o2 = 0; o2 < dag->noutputs; o2++) {
		double err;
		if (!ts_array_close(got[o2], want[o2], &err))
			fail_msg("%s: output %s differs by %g", dag->name,
				dag->outputs[o2]->name, err);
	}
	/* A second run over the same arena gives the same result. */
	assert_int_equal(ts_network_run(net, in, got), TS_OK);
	for (int o2 = 0; o2 < dag->noutputs; o2++)
		assert_true(ts_array_close(got[o2], want[o2], NULL));
	ts_network_free(net);
}

static void test_executor_lenet__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	run_and_compare(ctx, ts_network_lenet(ctx, 2), false, 2);
}

static void test_executor_lenet_naive__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	run_and_compare(ctx, ts_network_lenet(ctx, 1), true, 1);
}

static void test_executor_mlp__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	run_and_compare(ctx, ts_network_mlp(ctx, 3), false, 2);
}

static void test_executor_resnet18_reduced__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	run_and_compare(ctx, ts_network_resnet18(ctx, 1, 32, 4, 10), false, 2);
}

static void test_executor_transformer_reduced__matches_eval(void **state)
{
	ts_ctx *ctx = *state;

	run_and_compare(ctx, ts_network_transformer(ctx, 8, 16, 2, 32), false,
		2);
}

static void test_executor_bad_input__names_it(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_mlp(ctx, 1);
	ts_network *net = ts_network_compile(ctx, dag, host(ctx), NULL);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	ts_array *out[1] = { 0 };

	assert_non_null(net);
	in[1] = ts_array_alloc(ctx, TS_F32, 1, (int64_t[]){ 3 });
	assert_int_equal(ts_network_run(net, in, out), TS_ERROR);
	assert_error_contains(ctx, "input 'W1'");
	assert_int_equal(ts_network_set_schedule(net, 99, NULL), TS_ERROR);
	assert_error_contains(ctx, "no task 99");
	ts_network_free(net);
}

static void test_executor_set_schedule__naive_task_still_matches(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_mlp(ctx, 2);
	ts_network *net = ts_network_compile(ctx, dag, host(ctx), NULL);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 5);
	ts_array *want[1] = { 0 }, *got[1] = { 0 };
	ts_timing t;

	assert_non_null(net);
	assert_int_equal(ts_network_set_schedule(net, 0, NULL), TS_OK);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	assert_int_equal(ts_network_run(net, in, got), TS_OK);
	assert_true(ts_array_close(got[0], want[0], NULL));
	assert_int_equal(ts_network_time_task(net, 0, 0.0, &t), TS_OK);
	assert_true(t.nsamples >= 3 && t.median_s > 0);
	assert_int_equal(ts_network_time(net, in, 0.0, &t), TS_OK);
	assert_true(t.nsamples >= 3 && t.median_s > 0);
	ts_network_free(net);
}

/* Run "net" on seeded inputs and compare with ts_eval of "dag". */
static void compare_built(ts_ctx *ctx, const ts_dag *dag, ts_network *net)
{
	ts_array **in = scaled_inputs(ctx, dag, 9);
	ts_array *want[4] = { 0 }, *got[4] = { 0 };

	if (!net)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	check_plan(ts_network_partition(net), ts_network_memory(net));
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	if (ts_network_run(net, in, got) != TS_OK)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	for (int o = 0; o < dag->noutputs; o++) {
		double err;
		if (!ts_array_close(got[o], want[o], &err))
			fail_msg("%s: output %s differs by %g", dag->name,
				dag->outputs[o]->name, err);
	}
}

/* Apply layout "pattern" (cycled over the subgraphs, clipped to what each
 * may take) to "dag", with every weight that can be blocked blocked when
 * "weights", run it (naive schedules, or static ones when "stat") and
 * compare with ts_eval; return the number of transformations inserted. */
static int run_with_layouts(ts_ctx *ctx, const ts_dag *dag,
	const int *pattern, int npattern, bool weights, bool stat)
{
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q;
	int *choice, ntr = 0;
	bool *wb;
	ts_network *net;

	assert_non_null(p);
	choice = calloc((size_t)p->nsubgraphs, sizeof(int));
	wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
	for (int g = 0; g < p->nsubgraphs; g++) {
		int n = ts_network_layout_count(p, tg, g);
		choice[g] = pattern[g % npattern] < n ? pattern[g % npattern] : 0;
		wb[g] = weights;
	}
	q = ts_network_apply_layouts(ctx, p, tg, choice, wb, &ntr);
	free(choice);
	free(wb);
	if (!q)
		fail_msg("%s: %s", dag->name, ts_ctx_error(ctx));
	assert_int_equal(q->nsubgraphs, p->nsubgraphs + ntr);
	net = ts_network_build(ctx, q, stat ? ts_partition_static_schedules(
		ctx, q, tg, 1, 1) : NULL, NULL);
	compare_built(ctx, dag, net);
	ts_network_free(net);
	return ntr;
}

/* The subgraphs of "q" that run once. */
static int count_once(const ts_partition *q)
{
	int n = 0;

	for (int g = 0; g < q->nsubgraphs; g++)
		n += q->subgraphs[g].once;
	return n;
}

static void test_layouts_weights_blocked__match_eval_static_and_naive(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 16, 10);
	static const int nchw[] = { 0 }, blocked[] = { 2 };

	assert_non_null(dag);
	/* Each of the 20 convolutions owns a weight whose output channels
	 * (16 to 128) a block of 8 or 16 divides: one conversion each, and
	 * nothing else where the layouts agree.  The dense layer's 10
	 * classes divide by no block. */
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, false), 20);
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, true), 20);
	assert_int_equal(run_with_layouts(ctx, dag, blocked, 1, true, true),
		20);
}

/* Two steps of an LSTM cell as PyTorch exports it: the gates of each
 * step's product are split, and the two tasks that read a step's gates
 * each recompute them, so two subgraphs write the same intermediate. */
static const char *const cell_steps =
	"weight Wi: f32[256, 32]\n"
	"weight bi: f32[256]\n"
	"weight Wh: f32[256, 64]\n"
	"input x0: f32[1, 32]\n"
	"input s0: f32[1, 64]\n"
	"input x1: f32[1, 32]\n"
	"A[i0: 1, i1: 256] = (sum(r0: 32) x0[i0, r0] * Wi[i1, r0]) + "
	"bi[i1]\n"
	"S[i0: 1, i1: 64] = s0[i0, i1] + A[i0, i1 + 128]\n"
	"M[i0: 1, i1: 64] = A[i0, i1 + 192] * S[i0, i1]\n"
	"G[i0: 1, i1: 256] = sum(r0: 64) M[i0, r0] * Wh[i1, r0]\n"
	"B[i0: 1, i1: 256] = (sum(r0: 32) x1[i0, r0] * Wi[i1, r0]) + "
	"bi[i1]\n"
	"C[i0: 1, i1: 256] = G[i0, i1] + B[i0, i1]\n"
	"output y0[i0: 1, i1: 64] = S[i0, i1] + C[i0, i1 + 128]\n"
	"output y1[i0: 1, i1: 64] = C[i0, i1 + 192]\n";

static void test_memory_plan_written_twice__one_buffer_alive_throughout(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, cell_steps);
	ts_network_options o = ts_network_options_default();
	ts_network *net;

	assert_non_null(dag);
	/* C was planned twice, each buffer alive at the second writer
	 * only: the first writer's C overwrote S, which it reads. */
	o.threads = 1;
	for (int naive = 0; naive < 2; naive++) {
		o.naive = naive;
		net = ts_network_compile(ctx, dag, host(ctx), &o);
		compare_built(ctx, dag, net);
		ts_network_free(net);
	}
}

/* A weight two subgraphs read (the input weights of both steps of the
 * cell) is blocked once, and both read the one blocked copy; every
 * layout still matches ts_eval. */
static void test_layouts_weights_shared__blocked_once(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, cell_steps);
	ts_target *tg = host(ctx);
	ts_partition *q;
	const ts_tensor *wi = NULL;
	int n = 0, readers = 0;
	static const int nchw[] = { 0 }, any[] = { 0, 1, 2 };

	assert_non_null(dag);
	q = ts_partition_block_weights(ctx, ts_partition_dag(ctx, dag, tg),
		tg, &n);
	assert_non_null(q);
	assert_int_equal(count_once(q), n);
	for (int g = 0; g < q->nsubgraphs; g++) {
		const ts_subgraph *sg = &q->subgraphs[g];
		if (sg->once) {
			/* No weight blocked twice. */
			for (int h = 0; h < g; h++)
				if (q->subgraphs[h].once)
					assert_ptr_not_equal(q->subgraphs[h].inputs[0],
						sg->inputs[0]);
			if (!strcmp(sg->inputs[0]->name, "Wi"))
				wi = sg->outputs[0];
		}
	}
	if (ts_target_lanes(tg, TS_F32) > 1) {
		/* 256 rows: blocked, and read by the two steps. */
		assert_non_null(wi);
		for (int g = 0; g < q->nsubgraphs; g++)
			for (int i = 0; i < q->subgraphs[g].ninputs; i++)
				readers += q->subgraphs[g].inputs[i] == wi;
		assert_int_equal(readers, 2);
	}
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, false), n);
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, true), n);
	run_with_layouts(ctx, dag, any, 3, true, false);
}

/* A convolution, a dense layer of 60 outputs reading its 6x4x4 map as
 * it is, and one of 10 classes. */
static const char *const padded_dense =
	"input X: f32[1, 3, 6, 6]\n"
	"weight W1: f32[6, 3, 3, 3]\n"
	"weight W2: f32[60, 6, 4, 4]\n"
	"weight W3: f32[10, 60]\n"
	"C[n: 1, k: 6, h: 4, w: 4] = max(sum(c: 3, r: 3, s: 3) "
	"X[n, c, h + r, w + s] * W1[k, c, r, s], 0.0)\n"
	"D[n: 1, o: 60] = sum(c: 6, h: 4, w: 4) C[n, c, h, w] * "
	"W2[o, c, h, w]\n"
	"output Y[n: 1, j: 10] = sum(o: 60) D[n, o] * W3[j, o]\n";

static void test_layouts_weights_padded__last_block_zero_and_match(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, padded_dense);
	ts_target *tg = host(ctx);
	ts_partition *q;
	int n = 0, blocked = 0;
	static const int nchw[] = { 0 }, any[] = { 0, 1, 2 };

	assert_non_null(dag);
	/* No block divides 60: W2 is blocked with its last block padded
	 * (64 rows, 4 of zeros); 6 channels and 10 classes would be
	 * mostly padding and stay as declared. */
	q = ts_partition_block_weights(ctx, ts_partition_dag(ctx, dag, tg),
		tg, &n);
	assert_non_null(q);
	for (int g = 0; g < q->nsubgraphs; g++) {
		const ts_tensor *w = q->subgraphs[g].outputs[0];
		if (!q->subgraphs[g].once)
			continue;
		blocked++;
		if (ts_target_lanes(tg, TS_F32) > 1) {
			assert_int_equal(w->ndim, 5);
			assert_int_equal(w->shape[0] * w->shape[4], 64);
			assert_int_equal(w->shape[1], 6);
		}
	}
	assert_int_equal(blocked, ts_target_lanes(tg, TS_F32) > 1 ? 1 : 0);
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, false),
		blocked);
	assert_int_equal(run_with_layouts(ctx, dag, nchw, 1, true, true),
		blocked);
	run_with_layouts(ctx, dag, any, 3, true, true);
}

/* An inverted residual block as an importer writes it: a 1x1
 * expansion with bias and clip, depthwise 3x3 convolutions at strides 1
 * and 2 over padding stages, a 1x1 projection. */
static const char *const inverted_residual =
	"input X: f32[1, 16, 10, 10]\n"
	"weight E: f32[32, 16, 1, 1]\n"
	"weight D: f32[32, 1, 3, 3]\n"
	"weight D2: f32[32, 1, 3, 3]\n"
	"weight B: f32[32]\n"
	"weight F: f32[24, 32, 1, 1]\n"
	"A[n: 1, c: 32, h: 10, w: 10] = min(max((sum(k: 16) "
	"X[n, k, h, w] * E[c, k, 0, 0]) + B[c], 0.0), 6.0)\n"
	"P[n: 1, c: 32, h: 12, w: 12] = select(h >= 1 && h < 11 && "
	"w >= 1 && w < 11, A[n, c, h - 1, w - 1], 0.0)\n"
	"G[n: 1, c: 32, h: 10, w: 10] = min(max((sum(r: 3, s: 3) "
	"P[n, c, h + r, w + s] * D[c, 0, r, s]) + B[c], 0.0), 6.0)\n"
	"Q[n: 1, c: 32, h: 11, w: 11] = select(h >= 1 && w >= 1, "
	"G[n, c, h - 1, w - 1], 0.0)\n"
	"H[n: 1, c: 32, h: 5, w: 5] = sum(r: 3, s: 3) "
	"Q[n, c, h * 2 + r, w * 2 + s] * D2[c, 0, r, s]\n"
	"output Y[n: 1, o: 24, h: 5, w: 5] = sum(k: 32) "
	"H[n, k, h, w] * F[o, k, 0, 0]\n";

/* The task of "q" anchored on stage "name" of the network, or NULL. */
static const ts_dag *task_named(const ts_partition *q, const char *name)
{
	for (int g = 0; g < q->nsubgraphs; g++)
		if (!strcmp(q->dag->stages[q->subgraphs[g].anchor]->name, name))
			return q->tasks[q->subgraphs[g].task]->dag;
	return NULL;
}

/* "dag" partitioned for "tg" with every subgraph that may take it in
 * NCHW[x]c and every weight that can be blocked blocked. */
static ts_partition *blocked_everywhere(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg)
{
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q;
	int *choice, ntr;
	bool *wb;

	assert_non_null(p);
	choice = calloc((size_t)p->nsubgraphs, sizeof(int));
	wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
	for (int g = 0; g < p->nsubgraphs; g++) {
		choice[g] = ts_network_layout_count(p, tg, g) > 2 ? 2 : 0;
		wb[g] = true;
	}
	q = ts_network_apply_layouts(ctx, p, tg, choice, wb, &ntr);
	free(choice);
	free(wb);
	assert_non_null(q);
	return q;
}

static void test_layouts_depthwise__computed_in_place_and_match(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, inverted_residual);
	ts_target *tg = host(ctx);
	ts_partition *q;
	static const int nhwc[] = { 1 }, blocked[] = { 2 };
	const ts_dag *t;
	const ts_stage *last;

	assert_non_null(dag);
	for (int l = 0; l < 3; l++) {
		const int *pat = l == 0 ? (int[]){ 0 } : l == 1 ? nhwc : blocked;
		run_with_layouts(ctx, dag, pat, 1, true, true);
		run_with_layouts(ctx, dag, pat, 1, true, false);
	}
	/* In NCHW[x]c the depthwise sums accumulate in blocks of channels
	 * (5-D, the block last), their padding stages too, and nothing
	 * transposes them after; their weights are blocked along the
	 * channels they share with the activations. */
	q = blocked_everywhere(ctx, dag, tg);
	if (ts_target_lanes(tg, TS_F32) > 1 && 32 % ts_target_lanes(tg,
	    TS_F32) == 0) {
		/* E, D and D2 blocked; F's 24 output channels too where the
		 * blocks divide them (blocks of 16 would be a third
		 * padding, and F stays as declared). */
		assert_int_equal(count_once(q),
			24 % ts_target_lanes(tg, TS_F32) == 0 ? 4 : 3);
		t = task_named(q, "H");
		assert_non_null(t);
		last = t->stages[t->nstages - 1];
		assert_int_equal(last->ndim, 5);
		assert_int_equal(t->outputs[0]->ndim, 5);
		assert_int_equal(last->out, t->outputs[0]);
		for (int s = 0; s < t->nstages; s++)
			assert_int_equal(t->stages[s]->ndim, 5);
	}
}

/* Channels that the layout's block does not divide (100): NCHW[x]c pads
 * the last block.  A 1x1 convolution to 100 channels, its bias and relu,
 * a depthwise 3x3 over them and a global average: in NCHW[x]c the
 * convolution accumulates its padded blocks in place (5-D, its weights
 * blocked and padded with zeros), the bias and relu select zeros past
 * the channels, the buffers hold the padded blocks, and every schedule
 * matches ts_eval. */
static const char *const padded_channels =
	"input X: f32[1, 64, 9, 9]\n"
	"weight F: f32[100, 64, 1, 1]\n"
	"weight B: f32[100]\n"
	"weight D: f32[100, 1, 3, 3]\n"
	"weight F2: f32[10, 100]\n"
	"C[n: 1, c: 100, h: 9, w: 9] = sum(k: 64) X[n, k, h, w] * F[c, k, 0, 0]\n"
	"R[n: 1, c: 100, h: 9, w: 9] = max(C[n, c, h, w] + B[c], 0.0)\n"
	"P[n: 1, c: 100, h: 11, w: 11] = select(h >= 1 && h < 10 && "
	"w >= 1 && w < 10, R[n, c, h - 1, w - 1], 0.0)\n"
	"H[n: 1, c: 100, h: 9, w: 9] = sum(r: 3, s: 3) "
	"P[n, c, h + r, w + s] * D[c, 0, r, s]\n"
	"G[n: 1, c: 100] = sum(h: 9, w: 9) H[n, c, h, w]\n"
	"output Y[n: 1, o: 10] = sum(c: 100) G[n, c] * F2[o, c]\n";

static void test_layouts_padded_channels__blocks_padded_and_match(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, padded_channels);
	ts_target *tg = host(ctx);
	int x = ts_target_lanes(tg, TS_F32);
	ts_partition *q;
	const ts_dag *t;

	assert_non_null(dag);
	run_with_layouts(ctx, dag, (int[]){ 2 }, 1, true, true);
	run_with_layouts(ctx, dag, (int[]){ 2 }, 1, true, false);
	run_with_layouts(ctx, dag, (int[]){ 2, 0 }, 2, true, true);
	if (x <= 1 || 100 % x == 0)
		return;
	q = blocked_everywhere(ctx, dag, tg);
	t = NULL;
	for (int g = 0; g < q->nsubgraphs; g++)
		if (!q->subgraphs[g].once && !strcmp(q->dag->stages[
		    q->subgraphs[g].anchor]->name, "C"))
			t = q->tasks[q->subgraphs[g].task]->dag;
	assert_non_null(t);
	assert_int_equal(t->outputs[0]->ndim, 5);
	assert_int_equal(t->outputs[0]->shape[1], (100 + x - 1) / x);
	assert_int_equal(t->outputs[0]->shape[4], x);
}

/* A depthwise convolution whose bias and clip an importer writes as
 * stages of their own, then a 1x1 projection summing over their
 * channels: the partition puts the bias and clip in the projection's
 * task (and a last projection, so that the first one's output is an
 * activation that may change layout). */
static const char *const clipped_projection =
	"input X: f32[1, 32, 10, 10]\n"
	"weight D: f32[32, 1, 3, 3]\n"
	"weight B: f32[32]\n"
	"weight F: f32[32, 32, 1, 1]\n"
	"weight F2: f32[8, 32, 1, 1]\n"
	"P[n: 1, c: 32, h: 12, w: 12] = select(h >= 1 && h < 11 && "
	"w >= 1 && w < 11, X[n, c, h - 1, w - 1], 0.0)\n"
	"H[n: 1, c: 32, h: 10, w: 10] = sum(r: 3, s: 3) "
	"P[n, c, h + r, w + s] * D[c, 0, r, s]\n"
	"A[n: 1, c: 32, h: 10, w: 10] = H[n, c, h, w] + B[c]\n"
	"C[n: 1, c: 32, h: 10, w: 10] = min(max(A[n, c, h, w], 0.0), 6.0)\n"
	"Y[n: 1, o: 32, h: 10, w: 10] = sum(k: 32) "
	"C[n, k, h, w] * F[o, k, 0, 0]\n"
	"output Z[n: 1, o: 8, h: 10, w: 10] = sum(k: 32) "
	"Y[n, k, h, w] * F2[o, k, 0, 0]\n";

/* Y's task in "q", not the conversion of its output. */
static const ts_dag *projection_task(const ts_partition *q)
{
	const ts_dag *t = NULL;

	for (int g = 0; g < q->nsubgraphs; g++) {
		const ts_dag *d = q->tasks[q->subgraphs[g].task]->dag;
		if (!strcmp(q->dag->stages[q->subgraphs[g].anchor]->name,
		    "Y") && d->nstages >= 3)
			t = d;
	}
	return t;
}

/* In NHWC and NCHW[x]c, the stages between a convolution and the one
 * that sums over their channels are computed in that layout too, not
 * transposed to the declared NCHW and back (measured: MobileNetV2, whose
 * projections' bias and clip were transposed in their tiles, 10.3-10.9
 * -> 8.3-8.4 ms); in NCHW[x]c the sum walks the blocks and the channels
 * of a block as two reduction axes, with no quotient or remainder. */
static void test_layouts_summed_channels__not_transposed(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, clipped_projection);
	ts_target *tg = host(ctx);
	int lanes = ts_target_lanes(tg, TS_F32);

	assert_non_null(dag);
	for (int l = 1; l <= 2; l++) {
		const int pat[] = { l };
		ts_partition *p, *q;
		int *choice;
		bool *wb;
		const ts_dag *t;
		const char *text;

		run_with_layouts(ctx, dag, pat, 1, true, true);
		run_with_layouts(ctx, dag, pat, 1, false, false);
		p = ts_partition_dag(ctx, dag, tg);
		assert_non_null(p);
		choice = calloc((size_t)p->nsubgraphs, sizeof(int));
		wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
		for (int g = 0; g < p->nsubgraphs; g++)
			choice[g] = ts_network_layout_count(p, tg, g) > l ? l :
				0;
		q = ts_network_apply_layouts(ctx, p, tg, choice, wb, NULL);
		free(choice);
		free(wb);
		assert_non_null(q);
		if (l == 2 && (lanes <= 1 || 32 % lanes != 0))
			continue;
		t = projection_task(q);
		assert_non_null(t);
		text = ts_dag_canonical_string(t);
		for (int s = 0; s < t->nstages; s++) {
			const ts_stage *st = t->stages[s];
			bool ok = l == 1 ? st->ndim == 4 &&
				st->out->shape[1] == 10 : st->ndim == 5;
			if (!ok)
				fail_msg("layout %d: stage %s of Y's task is "
					"not in it:\n%s", l, st->name, text);
		}
		if (l == 2 && (strstr(text, "//") || strstr(text, "%")))
			fail_msg("blocked channels read through a quotient:"
				"\n%s", text);
	}
}

/* Run "net" on "in" and compare its first output with ts_eval of "dag". */
static void run_matches(ts_ctx *ctx, const ts_dag *dag, ts_network *net,
	ts_array **in)
{
	ts_array *want[2] = { 0 }, *got[2] = { 0 };
	double err;

	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	if (ts_network_run(net, in, got) != TS_OK)
		fail_msg("%s", ts_ctx_error(ctx));
	if (!ts_array_close(got[0], want[0], &err))
		fail_msg("output differs by %g", err);
}

static void test_executor_blocked_weights__converted_again_when_changed(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_mlp(ctx, 2);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q;
	int *choice = calloc((size_t)p->nsubgraphs, sizeof(int));
	bool *wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
	ts_array **in = scaled_inputs(ctx, dag, 3);
	ts_network *net;
	int w = -1;

	for (int g = 0; g < p->nsubgraphs; g++)
		wb[g] = true;
	q = ts_network_apply_layouts(ctx, p, tg, choice, wb, NULL);
	free(choice);
	free(wb);
	assert_non_null(q);
	/* The two 512-wide layers; the last one's 10 outputs divide by no
	 * block. */
	assert_int_equal(count_once(q), 2);
	net = ts_network_build(ctx, q, NULL, NULL);
	assert_non_null(net);
	run_matches(ctx, dag, net, in);
	run_matches(ctx, dag, net, in);
	/* Another array for a weight: converted again. */
	for (int i = 0; i < dag->ninputs && w < 0; i++)
		if (dag->inputs[i]->weight && dag->inputs[i]->ndim == 2)
			w = i;
	assert_true(w >= 0);
	in[w] = ts_array_for_tensor(ctx, dag->inputs[w]);
	ts_array_fill_random(in[w], 77);
	run_matches(ctx, dag, net, in);
	/* The same array changed in place: converted again once told. */
	ts_array_fill_random(in[w], 78);
	ts_network_weights_changed(net);
	run_matches(ctx, dag, net, in);
	ts_network_free(net);
}

static void test_layouts_resnet_reduced__every_pattern_matches_eval(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 16, 10);
	static const int nhwc[] = { 1 }, blocked[] = { 2 }, mixed[] = { 0, 1, 2 };

	assert_non_null(dag);
	/* One layout everywhere: the stem reads the NCHW image as it is and
	 * writes the new layout, the pooling reads it; no conversion. */
	assert_int_equal(run_with_layouts(ctx, dag, nhwc, 1, false, false),
		0);
	assert_int_equal(run_with_layouts(ctx, dag, blocked, 1, false,
		false), 0);
	/* Neighbours in different layouts: conversions between them. */
	assert_true(run_with_layouts(ctx, dag, mixed, 3, false, false) > 3);
}

static void test_layouts_lenet_bad_choice__names_subgraph(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_lenet(ctx, 1);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg);
	int *choice = calloc((size_t)p->nsubgraphs, sizeof(int));

	/* The softmax's last stage writes the 2-D output: NCHW only. */
	choice[p->nsubgraphs - 1] = 1;
	assert_null(ts_network_apply_layouts(ctx, p, tg, choice, NULL, NULL));
	assert_error_contains(ctx, "cannot take layout 1");
	free(choice);
}

static void test_layouts_choose_lenet__never_worse_than_nchw(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_lenet(ctx, 1);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg);
	ts_layout_plan *lp = ts_network_choose_layouts(ctx, p, tg, 1, 1 << 16);
	ts_network *net;

	if (!lp)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_true(lp->solution->exact);
	assert_true(lp->solution->total <= lp->solution->default_total);
	assert_true(lp->solution->total > 0);
	assert_int_equal(lp->partition->nsubgraphs,
		p->nsubgraphs + lp->ntransforms);
	net = ts_network_build(ctx, lp->partition,
		ts_partition_static_schedules(ctx, lp->partition, tg, 0, 1), NULL);
	compare_built(ctx, dag, net);
	ts_network_free(net);
}

/* The layouts rated by the model: no timing, so the same choice twice;
 * the weights blocked wherever the static rule blocks them (a reduced
 * ResNet-18: one weight in each subgraph it blocks); and a network that
 * matches the interpreter. */
static void test_layouts_estimate__static_and_repeatable(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 16, 10);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg);
	ts_layout_plan *a = ts_network_estimate_layouts(ctx, p, tg, 1,
		1 << 16);
	ts_layout_plan *b = ts_network_estimate_layouts(ctx, p, tg, 1,
		1 << 16);
	int nblocked = 0, nweights = 0;
	ts_network *net;

	if (!a || !b)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_true(isfinite(a->solution->total) && a->solution->total > 0);
	for (int g = 0; g < p->nsubgraphs; g++) {
		assert_int_equal(a->solution->choice[g], b->solution->choice[g]);
		assert_int_equal(a->weights[g], b->weights[g]);
		nweights += a->weights[g];
	}
	assert_non_null(ts_partition_block_weights(ctx, p, tg, &nblocked));
	assert_true(nblocked > 0);
	assert_int_equal(nweights, nblocked);
	net = ts_network_build(ctx, a->partition,
		ts_partition_static_schedules(ctx, a->partition, tg, 0, 1), NULL);
	compare_built(ctx, dag, net);
	ts_network_free(net);
}

/* The "layout" object of a layout record for "p": "choice" and
 * "weights" per subgraph, anchors from "p" but the one of subgraph
 * "rename" (-1: none) changed, and only "n" subgraphs. */
static char *layout_text(const ts_partition *p, const int *choice,
	const bool *weights, int n, int rename)
{
	char *s = malloc(16384);
	size_t k = 0;

	k += (size_t)snprintf(s + k, 16384 - k, "{\"choice\":[");
	for (int g = 0; g < n; g++)
		k += (size_t)snprintf(s + k, 16384 - k, "%s%d", g ? "," : "",
			choice[g]);
	k += (size_t)snprintf(s + k, 16384 - k, "],\"weights\":[");
	for (int g = 0; g < n; g++)
		k += (size_t)snprintf(s + k, 16384 - k, "%s%s", g ? "," : "",
			weights[g] ? "true" : "false");
	k += (size_t)snprintf(s + k, 16384 - k, "],\"anchors\":[");
	for (int g = 0; g < n; g++)
		k += (size_t)snprintf(s + k, 16384 - k, "%s\"%s%s\"",
			g ? "," : "", p->dag->stages[p->subgraphs[g].anchor]->name,
			g == rename ? "_other" : "");
	snprintf(s + k, 16384 - k, "]}");
	return s;
}

/* Append a layout record of "dag" on "tg" holding "text" to "log". */
static void append_layout(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, const char *text, const char *log)
{
	ts_record *r = ts_record_new_layout(ctx, dag, tg, text, 1e-3);

	assert_non_null(r);
	assert_int_equal(ts_record_append(ctx, log, r), TS_OK);
}

/* Whether "a" and "b" have the same tasks (by workload hash). */
static bool same_tasks(const ts_partition *a, const ts_partition *b)
{
	if (a->ntasks != b->ntasks || a->nsubgraphs != b->nsubgraphs)
		return false;
	for (int t = 0; t < a->ntasks; t++)
		if (strcmp(a->tasks[t]->hash, b->tasks[t]->hash))
			return false;
	return true;
}

static void test_layout_record_lenet__chosen_once_then_replayed(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_lenet(ctx, 1);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q1, *q2;
	char *log = ts_test_temp_path("layout", "log.jsonl");
	ts_layout_options lo = { 1, true, false, log };
	ts_layout_plan *plan = NULL;
	const char *how = NULL;
	ts_record **recs, *back;
	int n = 0;

	q1 = ts_network_lay_out(ctx, dag, p, tg, &lo, &how, &plan);
	if (!q1)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_non_null(plan);
	assert_non_null(strstr(how, "chosen by timing"));
	recs = ts_records_load(ctx, log, &n);
	assert_int_equal(n, 1);
	assert_non_null(recs[0]->layout);
	assert_null(recs[0]->schedule);
	assert_string_equal(recs[0]->workload, ts_dag_hash(dag));
	/* A layout record is no schedule: it never competes. */
	assert_null(ts_records_best(recs, n, NULL, NULL));
	back = ts_record_from_json(ctx, ts_record_to_json(recs[0]));
	assert_non_null(back);
	assert_string_equal(back->layout, recs[0]->layout);

	/* The second time the log's record is replayed, not timed again. */
	q2 = ts_network_lay_out(ctx, dag, p, tg, &lo, &how, &plan);
	assert_non_null(q2);
	assert_null(plan);
	assert_non_null(strstr(how, "layouts of the record at"));
	assert_non_null(strstr(how, ":1"));
	ts_records_load(ctx, log, &n);
	assert_int_equal(n, 1);
	assert_true(same_tasks(q1, q2));
	unlink(log);
}

static void test_layout_record_resnet_reduced__replays_blocked(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_resnet18(ctx, 1, 32, 16, 10);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg), *q, *want;
	char *log = ts_test_temp_path("layout", "blocked.jsonl");
	ts_layout_options lo = { 0, false, false, log };
	int *choice = calloc((size_t)p->nsubgraphs, sizeof(int)), nblocked = 0;
	bool *wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
	const char *how = NULL;

	for (int g = 0; g < p->nsubgraphs; g++) {
		choice[g] = ts_network_layout_count(p, tg, g) > 2 ? 2 : 0;
		nblocked += choice[g] == 2;
		wb[g] = g % 2 == 0;
	}
	assert_true(nblocked > 10);
	append_layout(ctx, dag, tg, layout_text(p, choice, wb, p->nsubgraphs,
		-1), log);
	q = ts_network_lay_out(ctx, dag, p, tg, &lo, &how, NULL);
	if (!q)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_non_null(strstr(how, "layouts of the record at"));
	want = ts_network_apply_layouts(ctx, p, tg, choice, wb, NULL);
	assert_non_null(want);
	assert_true(same_tasks(q, want));
	/* Not what the static rule (weights blocked, NCHW) gives. */
	assert_false(same_tasks(q, ts_partition_block_weights(ctx, p, tg,
		NULL)));
	compare_built(ctx, dag, ts_network_build(ctx, q, NULL, NULL));
	/* The C API's one call replays it too, with static schedules
	 * where the log has no record of a task. */
	{
		ts_network_options o = ts_network_options_default();
		ts_network *net;
		o.records = log;
		net = ts_network_compile(ctx, dag, tg, &o);
		if (!net)
			fail_msg("%s", ts_ctx_error(ctx));
		assert_true(same_tasks(ts_network_partition(net), want));
		compare_built(ctx, dag, net);
		ts_network_free(net);
		o.records = "/nonexistent/records.jsonl";
		assert_null(ts_network_compile(ctx, dag, tg, &o));
		assert_error_contains(ctx, "/nonexistent/records.jsonl");
	}
	free(choice);
	free(wb);
	unlink(log);
}

/* Append the layout record "text" of "dag" to "log" as its line "line";
 * check that it is the one replayed, and refused for "why". */
static void refused(ts_ctx *ctx, const ts_dag *dag, const ts_partition *p,
	const ts_target *tg, const char *text, const char *log, int line,
	const char *why)
{
	ts_layout_options lo = { 0, false, false, log };
	char where[64];

	append_layout(ctx, dag, tg, text, log);
	assert_null(ts_network_lay_out(ctx, dag, p, tg, &lo, NULL, NULL));
	snprintf(where, sizeof(where), ":%d: the layout record does not "
		"apply", line);
	assert_error_contains(ctx, where);
	assert_error_contains(ctx, why);
}

static void test_layout_record_bad__names_the_line(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_network_lenet(ctx, 1);
	ts_target *tg = host(ctx);
	ts_partition *p = ts_partition_dag(ctx, dag, tg);
	char *log = ts_test_temp_path("layout", "bad.jsonl");
	ts_layout_options lo = { 1, false, false, log };
	int *choice = calloc((size_t)p->nsubgraphs, sizeof(int));
	bool *wb = calloc((size_t)p->nsubgraphs, sizeof(bool));
	const char *how = NULL;

	/* The newest layout record of the network is the one replayed. */
	refused(ctx, dag, p, tg, layout_text(p, choice, wb, p->nsubgraphs, 2),
		log, 1, "is anchored on");
	refused(ctx, dag, p, tg, layout_text(p, choice, wb, p->nsubgraphs - 1,
		-1), log, 2, "subgraphs each");
	/* The softmax's last stage writes the 2-D output: NCHW only. */
	choice[p->nsubgraphs - 1] = 1;
	refused(ctx, dag, p, tg, layout_text(p, choice, wb, p->nsubgraphs,
		-1), log, 3, "cannot take layout 1");
	/* The records of the host with all its cores are not those of the
	 * host with one: the model chooses, as by default, or the layouts
	 * stay as declared when asked. */
	assert_non_null(ts_network_lay_out(ctx, dag, p, tg, &lo, &how, NULL));
	assert_non_null(strstr(how, "layouts chosen by the model ("));
	lo.declared = true;
	assert_non_null(ts_network_lay_out(ctx, dag, p, tg, &lo, &how, NULL));
	assert_string_equal(how, "layouts as declared, weights blocked");
	lo.keep_weights = true;
	assert_ptr_equal(ts_network_lay_out(ctx, dag, p, tg, &lo, &how,
		NULL), p);
	assert_string_equal(how, "layouts as declared");
	free(choice);
	free(wb);
	unlink(log);
}

/* Run "entry" on "in" into "got" and compare with ts_eval. */
static void entry_matches_eval(ts_ctx *ctx, const ts_dag *dag,
	int (*entry)(const void *const *, void *const *), ts_array **in,
	ts_array **got)
{
	const void *ins[16];
	void *outs[4];
	ts_array *want[4] = { 0 };

	for (int i = 0; i < dag->ninputs; i++)
		ins[i] = in[i]->data;
	for (int o = 0; o < dag->noutputs; o++)
		outs[o] = got[o]->data;
	assert_int_equal(entry(ins, outs), 0);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	for (int o = 0; o < dag->noutputs; o++)
		assert_true(ts_array_close(got[o], want[o], NULL));
}

/* The library "tessel build" makes of "dag" (named "name"), loaded and
 * run on random inputs against ts_eval: twice (the converted weights
 * kept), on other arrays (converted again), on an array changed in
 * place after name_release(), and on the first inputs again. */
static void aot_matches_eval(ts_ctx *ctx, const ts_dag *dag,
	const char *name)
{
	ts_network *net = ts_network_compile(ctx, dag, host(ctx), NULL);
	char dir[] = "/tmp/ts_net_aotXXXXXX", so[256], sig[128], *src;
	ts_array **in = ts_dag_random_inputs(ctx, dag, 4);
	ts_array **other = ts_dag_random_inputs(ctx, dag, 5);
	ts_array *got[4];
	void *lib;
	int (*entry)(const void *const *, void *const *);
	void (*release)(void);

	assert_non_null(net);
	assert_true(dag->ninputs <= 16 && dag->noutputs <= 4);
	assert_non_null(mkdtemp(dir));
	if (ts_network_build_aot(ctx, net, dir, name) != TS_OK)
		fail_msg("%s", ts_ctx_error(ctx));
	src = ts_network_driver_source(net, name,
		(const char *[]){ "a", "b", "c", "d", "e", "f", "g", "h", "i",
		"j", "k", "l", "m", "n", "o", "p", "q", "r" });
	snprintf(sig, sizeof(sig), "int %s(const void *const *inputs", name);
	assert_non_null(strstr(src, sig));
	snprintf(so, sizeof(so), "%s/lib%s.so", dir, name);
	lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s", dlerror());
	entry = (int (*)(const void *const *, void *const *))dlsym(lib, name);
	snprintf(sig, sizeof(sig), "%s_release", name);
	release = (void (*)(void))dlsym(lib, sig);
	assert_non_null(entry);
	assert_non_null(release);
	for (int o = 0; o < dag->noutputs; o++)
		got[o] = ts_array_for_tensor(ctx, dag->outputs[o]);
	entry_matches_eval(ctx, dag, entry, in, got);
	entry_matches_eval(ctx, dag, entry, in, got);
	entry_matches_eval(ctx, dag, entry, other, got);
	for (int i = 0; i < dag->ninputs; i++)
		memcpy(other[i]->data, in[i]->data, (size_t)in[i]->size *
			ts_dtype_size(in[i]->dtype));
	release();
	entry_matches_eval(ctx, dag, entry, other, got);
	entry_matches_eval(ctx, dag, entry, in, got);
	release();
	dlclose(lib);
	ts_network_free(net);
	ts_test_remove_tree(dir);
}

/* LeNet, and the LSTM cell whose blocked input weights two steps share. */
static void test_network_aot__library_matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *cell = ts_parse_string(ctx, NULL, cell_steps);

	aot_matches_eval(ctx, ts_network_lenet(ctx, 2), "lenet2");
	assert_non_null(cell);
	aot_matches_eval(ctx, cell, "cell");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_memory_plan_chain__two_buffers_suffice),
		TS_TEST(test_memory_plan_residual__skip_stays_live),
		TS_TEST(test_memory_plan_null_partition__error),
		TS_TEST(test_executor_lenet__matches_eval),
		TS_TEST(test_executor_lenet_naive__matches_eval),
		TS_TEST(test_executor_mlp__matches_eval),
		TS_TEST(test_executor_resnet18_reduced__matches_eval),
		TS_TEST(test_executor_transformer_reduced__matches_eval),
		TS_TEST(test_executor_bad_input__names_it),
		TS_TEST(test_layout_record_lenet__chosen_once_then_replayed),
		TS_TEST(test_layout_record_resnet_reduced__replays_blocked),
		TS_TEST(test_layout_record_bad__names_the_line),
		TS_TEST(test_executor_set_schedule__naive_task_still_matches),
		TS_TEST(test_layouts_resnet_reduced__every_pattern_matches_eval),
		TS_TEST(test_layouts_lenet_bad_choice__names_subgraph),
		TS_TEST(test_layouts_weights_blocked__match_eval_static_and_naive),
		TS_TEST(test_layouts_depthwise__computed_in_place_and_match),
		TS_TEST(test_layouts_padded_channels__blocks_padded_and_match),
		TS_TEST(test_layouts_summed_channels__not_transposed),
		TS_TEST(test_layouts_weights_padded__last_block_zero_and_match),
		TS_TEST(test_layouts_weights_shared__blocked_once),
		TS_TEST(test_memory_plan_written_twice__one_buffer_alive_throughout),
		TS_TEST(test_executor_blocked_weights__converted_again_when_changed),
		TS_TEST(test_layouts_choose_lenet__never_worse_than_nchw),
		TS_TEST(test_layouts_estimate__static_and_repeatable),
		TS_TEST(test_network_aot__library_matches_eval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
