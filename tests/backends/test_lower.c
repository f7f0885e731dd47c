/* Lowering: the structure of the loop IR for naive and hand-written
 * schedules (loops, kinds, extents, guards, buffers), index
 * simplification, errors; every lowered program is also compiled and
 * compared with the reference interpreter. */
#include <config.h>

#include "tests/common.h"
#include "tests/backends/small_program.h"


/* What a walk of the IR found. */
struct census {
	int loops[TS_LOOP_KIND_COUNT];
	int ifs, stores;
	int allocs[TS_SCOPE_COUNT];
	int64_t extents[64];	/* of loops named "name", in order */
	int nextents;
	const char *name;
	const ts_stmt *alloc;	/* the allocation of buffer "buffer" */
	const char *buffer;
	int vec_not_innermost;	/* vectorized loops holding a loop */
};

/* Whether "s" holds a loop that is not unrolled. */
static bool has_loop(const ts_stmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case TS_STMT_FOR:
		return s->loop != TS_LOOP_UNROLLED || has_loop(s->body);
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			if (has_loop(s->stmts[i]))
				return true;
		return false;
	case TS_STMT_IF:
	case TS_STMT_ALLOC:
		return has_loop(s->body) || has_loop(s->orelse);
	default:
		return false;
	}
}

static void walk(struct census *c, const ts_stmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case TS_STMT_FOR:
		c->loops[s->loop]++;
		if (c->name && strcmp(s->var->name, c->name) == 0 &&
		    c->nextents < 64)
			c->extents[c->nextents++] = s->var->extent;
		if (s->loop == TS_LOOP_VECTORIZED && has_loop(s->body))
			c->vec_not_innermost++;
		walk(c, s->body);
		return;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts; i++)
			walk(c, s->stmts[i]);
		return;
	case TS_STMT_IF:
		c->ifs++;
		walk(c, s->body);
		walk(c, s->orelse);
		return;
	case TS_STMT_STORE:
		c->stores++;
		return;
	case TS_STMT_ALLOC:
		c->allocs[s->scope]++;
		if (c->buffer && strcmp(s->buffer->name, c->buffer) == 0)
			c->alloc = s;
		walk(c, s->body);
		return;
	default:
		return;
	}
}

/* Count what "f" holds; extents of loops "name", allocation "buffer". */
static struct census census(const ts_func *f, const char *name,
	const char *buffer)
{
	struct census c = { .name = name, .buffer = buffer };

	walk(&c, f->body);
	return c;
}

static int nloops(const struct census *c)
{
	int n = 0;

	for (int k = 0; k < TS_LOOP_KIND_COUNT; k++)
		n += c->loops[k];
	return n;
}

/* Assert that "text" accumulates "term" into "target", directly
 * ("C[i, j] = C[i, j] + term") or through a scalar accumulator that a
 * later pass promoted it to ("C.acc = C.acc[] + term"). */
static void assert_update(const char *text, const char *target,
	const char *term)
{
	char direct[256], promoted[256];
	size_t n = strcspn(target, "[");

	snprintf(direct, sizeof(direct), "%s = %s + %s", target, target, term);
	snprintf(promoted, sizeof(promoted), "%.*s.acc = %.*s.acc[] + %s",
		(int)n, target, (int)n, target, term);
	if (!strstr(text, direct) && !strstr(text, promoted))
		fail_msg("no update \"%s\" or \"%s\" in\n%s", direct,
			promoted, text);
}

/* Compile "f", run it on random inputs and compare with ts_eval. */
static void check_numeric(ts_ctx *ctx, const ts_func *f)
{
	const ts_dag *dag = f->dag;
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3), *want[4], *args[8];
	ts_module *m = ts_module_compile(ctx, f, NULL);

	if (!m)
		fail_msg("compiling failed: %s\n%s", ts_ctx_error(ctx),
			ts_func_to_string(f));
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	for (int i = 0; i < dag->ninputs; i++)
		args[i] = in[i];
	for (int i = 0; i < dag->noutputs; i++)
		args[dag->ninputs + i] = ts_array_for_tensor(ctx,
			dag->outputs[i]);
	assert_int_equal(ts_module_run(m, args), TS_OK);
	for (int i = 0; i < dag->noutputs; i++) {
		double err;
		if (!ts_array_close(args[dag->ninputs + i], want[i], &err))
			fail_msg("output '%s' differs by %g\n%s",
				dag->outputs[i]->name, err,
				ts_func_to_string(f));
	}
	ts_module_free(m);
}

/* Lower "sch" of "dag" and check it numerically. */
static ts_func *lower_ok(ts_ctx *ctx, ts_dag *dag, ts_schedule *sch)
{
	ts_func *f = ts_lower(ctx, dag, sch);

	if (!f)
		fail_msg("lowering failed: %s", ts_ctx_error(ctx));
	check_numeric(ctx, f);
	return f;
}

static void test_lower_naive__loops_and_buffers(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_func *f = lower_ok(ctx, dag, NULL);
	struct census c = census(f, NULL, "P");
	char *text = ts_func_to_string(f);

	/* P: i, k; C: i, j, k; M.sum0: i, k; M: i. */
	assert_int_equal(nloops(&c), 8);
	assert_int_equal(c.loops[TS_LOOP_SERIAL], 8);
	assert_int_equal(c.ifs, 0);
	/* P and M.sum0 are intermediates at root: global buffers. */
	assert_int_equal(c.allocs[TS_SCOPE_GLOBAL], 2);
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->buffer->shape[0], 10);
	assert_int_equal(f->nargs, 4);
	assert_int_equal(f->ninputs, 2);
	assert_non_null(strstr(text, "C[i, j] = 0.0\n"));
	assert_update(text, "C[i, j]", "P[i, k] * B[k, j]");
	assert_non_null(strstr(text, "M[i] = M.sum0[i] / 6.0"));
}

/* The matmul tiling used below: split i by 4, j by 8, reorder. */
static ts_schedule *tiled(ts_ctx *ctx, ts_dag *dag, ts_tail tail)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "i.o", "j.o", "k", "i.i", "j.i" };

	assert_int_equal(ts_schedule_split(sch, "C", "i", 4, tail), TS_OK);
	assert_int_equal(ts_schedule_split(sch, "C", "j", 8, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 5, order), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "C", "j.i"), TS_OK);
	assert_int_equal(ts_schedule_parallel(sch, "C", "i.o"), TS_OK);
	return sch;
}

static void test_lower_split_guard__extents_and_guards(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_func *f = lower_ok(ctx, dag, tiled(ctx, dag, TS_TAIL_GUARD));
	struct census c = census(f, "i.o", NULL);
	char *text = ts_func_to_string(f);

	assert_int_equal(c.nextents, 1);
	assert_int_equal(c.extents[0], 3);	/* ceil(10 / 4) */
	assert_int_equal(c.loops[TS_LOOP_PARALLEL], 1);
	/* Init and update nests each vectorize j.i. */
	assert_int_equal(c.loops[TS_LOOP_VECTORIZED], 2);
	assert_int_equal(c.vec_not_innermost, 0);
	/* Guards for i (10 % 4) and j (12 % 8), in the init and the update
	 * nests. */
	assert_int_equal(c.ifs, 4);
	assert_non_null(strstr(text, "parallel for i.o in 0..3:"));
	assert_non_null(strstr(text, "vectorized for j.i in 0..8:"));
	assert_non_null(strstr(text, "if (i.o * 4 + i.i < 10):"));
	assert_non_null(strstr(text, "if (j.o * 8 + j.i < 12):"));
	assert_non_null(strstr(text, "C[i.o * 4 + i.i, j.o * 8 + j.i] = "
		"C[i.o * 4 + i.i, j.o * 8 + j.i] + P[i.o * 4 + i.i, k] * "
		"B[k, j.o * 8 + j.i]"));
}

static void test_lower_split_partition__main_and_tail(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_func *f = lower_ok(ctx, dag, tiled(ctx, dag, TS_TAIL_PARTITION));
	struct census o = census(f, "i.o", NULL), in = census(f, "i.i", NULL);
	char *text = ts_func_to_string(f);

	/* Two whole tiles of 4, then a tail of 2 with i.o fixed. */
	assert_int_equal(o.nextents, 1);
	assert_int_equal(o.extents[0], 2);
	assert_int_equal(in.nextents, 4);
	assert_int_equal(in.extents[0], 4);
	assert_int_equal(in.extents[2], 2);
	/* Only j keeps guards. */
	assert_int_equal(o.ifs, 4);
	assert_null(strstr(text, "< 10"));
	assert_non_null(strstr(text, "C[i.i + 8, j.o * 8 + j.i]"));
}

static void test_lower_compute_at__region_buffer(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = tiled(ctx, dag, TS_TAIL_GUARD);
	ts_func *f;
	struct census c;

	assert_int_equal(ts_schedule_compute_at(sch, "P", "C", "j.o"), TS_OK);
	f = lower_ok(ctx, dag, sch);
	c = census(f, NULL, "P.local");
	/* The tile of C under j.o reads P[i.o*4 .. +4, 0 .. 6]. */
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->scope, TS_SCOPE_LOCAL);
	assert_int_equal(c.alloc->buffer->ndim, 2);
	assert_int_equal(c.alloc->buffer->shape[0], 4);
	assert_int_equal(c.alloc->buffer->shape[1], 6);
	/* M.sum0, the stage of M's reduction, is the one global buffer. */
	assert_int_equal(c.allocs[TS_SCOPE_GLOBAL], 1);
	assert_non_null(strstr(ts_func_to_string(f),
		"P.local[i, k] = A[i.o * 4 + i, k] * 2.0"));
	assert_non_null(strstr(ts_func_to_string(f), "P.local[i.i, k]"));
}

static void test_lower_compute_inline__substituted(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	ts_func *f;
	struct census c;

	assert_int_equal(ts_schedule_compute_inline(sch, "P"), TS_OK);
	f = lower_ok(ctx, dag, sch);
	c = census(f, NULL, NULL);
	assert_int_equal(c.allocs[TS_SCOPE_GLOBAL], 1);
	assert_update(ts_func_to_string(f), "C[i, j]",
		"A[i, k] * 2.0 * B[k, j]");
}

static void test_lower_cache_write_read__local_tiles(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = tiled(ctx, dag, TS_TAIL_GUARD);
	const int perm[2] = { 1, 0 };
	ts_func *f;
	struct census c, r;
	char *text;

	assert_int_equal(ts_schedule_cache_write(sch, "C", "j.o"), TS_OK);
	assert_int_equal(ts_schedule_cache_read(sch, "C", "B", "j.o", 2, perm),
		TS_OK);
	f = lower_ok(ctx, dag, sch);
	text = ts_func_to_string(f);
	c = census(f, NULL, "C.local");
	r = census(f, NULL, "B.C.local");
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->buffer->shape[0], 4);
	assert_int_equal(c.alloc->buffer->shape[1], 8);
	/* The panel of B is stored transposed: [j tile, k]. */
	assert_non_null(r.alloc);
	assert_int_equal(r.alloc->buffer->shape[0], 8);
	assert_int_equal(r.alloc->buffer->shape[1], 6);
	assert_non_null(strstr(text, "C.local[i.i, j.i] = C.local[i.i, j.i] + "
		"P[i.o * 4 + i.i, k] * B.C.local[j.i, k]"));
	assert_non_null(strstr(text, "C[i.o * 4 + i.i, j.o * 8 + j.i] = "
		"C.local[i.i, j.i]"));
	assert_non_null(strstr(text, "alloc C.local: f32[4, 8] (local)"));
}

static void test_lower_rfactor__partial_buffer(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "k.i", "i", "j", "k.o" };
	const char *text;
	ts_func *f;
	struct census c;

	assert_int_equal(ts_schedule_split(sch, "C", "k", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_rfactor(sch, "C", "k.i"), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 4, order), TS_OK);
	/* The partial results are independent over k.i. */
	assert_int_equal(ts_schedule_parallel(sch, "C", "k.i"), TS_OK);
	f = lower_ok(ctx, dag, sch);
	c = census(f, NULL, "C.rf");
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->scope, TS_SCOPE_GLOBAL);
	assert_int_equal(c.alloc->buffer->ndim, 3);
	assert_int_equal(c.alloc->buffer->shape[2], 4);
	assert_int_equal(c.loops[TS_LOOP_PARALLEL], 1);
	/* The four partials are combined as a tree (halvings), the last
	 * into the output. */
	text = ts_func_to_string(f);
	assert_non_null(strstr(text, "vectorized for rf in 0..2:"));
	assert_non_null(strstr(text,
		"C.rf[i, j, rf] = C.rf[i, j, rf] + C.rf[i, j, rf + 2]"));
	assert_non_null(strstr(text,
		"C.rf[i, j, rf] = C.rf[i, j, rf] + C.rf[i, j, rf + 1]"));
	assert_non_null(strstr(text, "C[i, j] = 0.0 + C.rf[i, j, 0]"));
	check_numeric(ctx, f);
}

/* A softmax over rows of 10 and a layer norm, every stage computed in
 * the output's tiles of 3 of 7 rows (the last tile guarded): the row
 * maximum, the exponentials the sum and the output share, and the sum,
 * each over the rows the stages after it in the tile read, the
 * reductions through rfactor partials of their own per tile. */
static void test_lower_compute_at_rows__stages_share_a_tile(void **state)
{
	static const char *src[] = {
		"input X: f32[7, 10]\n"
		"M[i: 7] = max(k: 10) X[i, k]\n"
		"E[i: 7] = sum(k: 10) exp(X[i, k] - M[i])\n"
		"output Y[i: 7, j: 10] = exp(X[i, j] - M[i]) / E[i]\n",
		"input X: f32[7, 10]\n"
		"Mu[i: 7] = (sum(k: 10) X[i, k]) / 10.0\n"
		"V[i: 7] = (sum(k: 10) (X[i, k] - Mu[i]) * (X[i, k] - Mu[i]))"
		" / 10.0\n"
		"output Y[i: 7, j: 10] = (X[i, j] - Mu[i]) * rsqrt(V[i] + "
		"1e-5)\n",
	};
	ts_ctx *ctx = *state;
	const char *order[] = { "i.o", "i.i", "j" };
	const char *rorder[] = { "i", "k.o", "k.i" };

	for (size_t c = 0; c < sizeof(src) / sizeof(src[0]); c++) {
		ts_dag *dag = ts_parse_string(ctx, NULL, src[c]);
		ts_schedule *sch;
		ts_func *f;
		const char *text;
		int attached = 0;
		assert_non_null(dag);
		sch = ts_schedule_new(ctx, dag);
		assert_int_equal(ts_schedule_split(sch, "Y", "i", 3,
			TS_TAIL_GUARD), TS_OK);
		assert_int_equal(ts_schedule_reorder(sch, "Y", 3, order),
			TS_OK);
		for (int i = dag->nstages - 2; i >= 0; i--) {
			const ts_stage *st = dag->stages[i];
			if (st->nraxes == 1) {
				assert_int_equal(ts_schedule_split(sch,
					st->name, "k", 4, TS_TAIL_PARTITION),
					TS_OK);
				assert_int_equal(ts_schedule_reorder(sch,
					st->name, 3, rorder), TS_OK);
				assert_int_equal(ts_schedule_rfactor(sch,
					st->name, "k.i"), TS_OK);
				assert_int_equal(ts_schedule_vectorize(sch,
					st->name, "k.i"), TS_OK);
			}
			assert_int_equal(ts_schedule_compute_at(sch, st->name,
				"Y", "i.o"), TS_OK);
			attached++;
		}
		assert_true(attached >= 2);
		f = lower_ok(ctx, dag, sch);
		text = ts_func_to_string(f);
		/* Nothing at root but the output; every stage's rows and
		 * partials live in the tile. */
		assert_int_equal(census(f, NULL, NULL).allocs[TS_SCOPE_GLOBAL],
			0);
		assert_non_null(strstr(text, c == 0 ? "alloc M.local: f32[3] "
			"(local)" : "alloc Mu.local: f32[3] (local)"));
		assert_non_null(strstr(text, c == 0 ? "alloc M.rf: f32[3, 4] "
			"(local)" : "alloc V.sum0.rf: f32[3, 4] (local)"));
	}
}

/* A stage computed in its consumer's tile and vectorized along a
 * dimension other than its last keeps that dimension last in its
 * region's buffer, so that its vectors store contiguously. */
static void test_lower_compute_at_vector__axis_last_in_buffer(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, "input X: f32[8, 6]\n"
		"T[i: 8, j: 6] = X[i, j] * 2.0\n"
		"output Y[i: 8, j: 6] = T[i, j] + T[i, 5 - j]\n");
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "j", "i" };
	struct census c;
	ts_func *f;

	assert_non_null(dag);
	assert_int_equal(ts_schedule_split(sch, "Y", "i", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "T", 2, order), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "T", "i"), TS_OK);
	assert_int_equal(ts_schedule_compute_at(sch, "T", "Y", "i.o"), TS_OK);
	f = lower_ok(ctx, dag, sch);
	c = census(f, NULL, "T.local");
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->buffer->shape[0], 6);
	assert_int_equal(c.alloc->buffer->shape[1], 4);
	assert_non_null(strstr(ts_func_to_string(f), "T.local[j, i] = "));
}

/* A stage computed at a loop of a stage that is not its consumer, when
 * no consumer of it is there either, or with a consumer elsewhere. */
static void test_lower_compute_at_rows__consumer_elsewhere(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, "input X: f32[7, 10]\n"
		"M[i: 7] = max(k: 10) X[i, k]\n"
		"E[i: 7] = sum(k: 10) exp(X[i, k] - M[i])\n"
		"output Y[i: 7, j: 10] = X[i, j] - M[i] + E[i]\n");
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	assert_non_null(dag);
	assert_int_equal(ts_schedule_split(sch, "Y", "i", 3, TS_TAIL_GUARD),
		TS_OK);
	/* M's consumers are E and Y; E stays at root. */
	assert_int_equal(ts_schedule_compute_at(sch, "M", "Y", "i.o"), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "stage 'M': computed at loop 'i.o' of 'Y', "
		"but a consumer of it is neither that stage nor computed at "
		"that loop");
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_split(sch, "E", "i", 3, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_compute_at(sch, "M", "E", "i.o"), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "a consumer of it is neither");
}

static void test_lower_fuse__div_mod(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	ts_func *f;
	struct census c;

	assert_int_equal(ts_schedule_fuse(sch, "C", "i", "j"), TS_OK);
	assert_int_equal(ts_schedule_parallel(sch, "C", "i@j"), TS_OK);
	assert_int_equal(ts_schedule_compute_at(sch, "P", "C", "i@j"), TS_OK);
	f = lower_ok(ctx, dag, sch);
	c = census(f, "i@j", "P.local");
	assert_int_equal(c.nextents, 1);
	assert_int_equal(c.extents[0], 120);
	/* One row of P per point of the fused loop. */
	assert_non_null(c.alloc);
	assert_int_equal(c.alloc->buffer->shape[0], 1);
	assert_int_equal(c.alloc->buffer->shape[1], 6);
	assert_non_null(strstr(ts_func_to_string(f), "i@j // 12"));
}

static void test_lower_errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_ctx *ctx2 = ts_ctx_alloc();
	ts_dag *dag = ts_test_small_program(ctx), *other = ts_test_small_program(ctx2);
	ts_schedule *sch = ts_schedule_new(ctx, dag);

	assert_null(ts_lower(ctx, other, sch));
	assert_error_contains(ctx, "the schedule is for another DAG");
	assert_int_equal(ts_schedule_compute_at(sch, "P", "C", "j"), TS_OK);
	assert_int_equal(ts_schedule_split(sch, "C", "j", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_null(ts_lower(ctx, dag, sch));
	assert_error_contains(ctx, "compute_at loop 'j' of 'C' no longer "
		"exists");
	ts_ctx_free(ctx2);
}

static void test_index_simplify(void **state)
{
	ts_ctx *ctx = *state;
	ts_expr *a = ts_var(ctx, ts_loop_var(ctx, "a", 4));
	ts_expr *b = ts_var(ctx, ts_loop_var(ctx, "b", 8));
	ts_expr *e8 = ts_const(ctx, TS_I64, 8);
	ts_expr *e;

	e = ts_sub(ctx, ts_add(ctx, ts_mul(ctx, a, e8), b), ts_mul(ctx, a, e8));
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx, e)), "b");
	e = ts_add(ctx, ts_mul(ctx, b, ts_const(ctx, TS_I64, 1)),
		ts_const(ctx, TS_I64, 0));
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx, e)), "b");
	e = ts_add(ctx, ts_mul(ctx, ts_add(ctx, a, ts_const(ctx, TS_I64, 2)),
		e8), ts_sub(ctx, b, ts_const(ctx, TS_I64, 16)));
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx, e)),
		"a * 8 + b");
	e = ts_floordiv(ctx, ts_const(ctx, TS_I64, 17), e8);
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx, e)), "2");
	/* Division by the loop ranges: b < 8, so (8 a + b + 16) // 8 is
	 * a + 2 and its remainder b; with b + 1 the remainder may reach 8
	 * and nothing changes. */
	e = ts_add(ctx, ts_add(ctx, ts_mul(ctx, a, e8), b),
		ts_const(ctx, TS_I64, 16));
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx,
		ts_floordiv(ctx, e, e8))), "a + 2");
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx,
		ts_mod(ctx, e, e8))), "b");
	e = ts_add(ctx, ts_add(ctx, ts_mul(ctx, a, e8), b),
		ts_const(ctx, TS_I64, 1));
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx,
		ts_floordiv(ctx, e, e8))), "(a * 8 + b + 1) // 8");
	/* By a multiple of the block: channels in blocks of 8 read from
	 * weights blocked by 16, (8 a + b) // 16 and (8 a + b) % 16. */
	e = ts_add(ctx, ts_mul(ctx, a, e8), b);
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx,
		ts_floordiv(ctx, e, ts_const(ctx, TS_I64, 16)))), "a // 2");
	assert_string_equal(ts_expr_to_string(ts_index_simplify(ctx,
		ts_mod(ctx, e, ts_const(ctx, TS_I64, 16)))), "a % 2 * 8 + b");
}

static void test_loop_print__constructs(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[2] = { 4, 16 };
	ts_tensor *buf = ts_buffer_new(ctx, "T", TS_F32, 2, shape);
	ts_axis *i = ts_loop_var(ctx, "i", 4);
	ts_expr *idx[2] = { ts_var(ctx, i), ts_const(ctx, TS_I64, 0) };
	ts_stmt *st = ts_stmt_store(buf, 2, idx, ts_float(ctx, 1.0));
	ts_stmt *s = ts_stmt_alloc(buf, TS_SCOPE_LOCAL, ts_stmt_for(i,
		TS_LOOP_UNROLLED, ts_stmt_if(ts_binary(ctx, TS_OP_LT, idx[0],
		ts_const(ctx, TS_I64, 3)), st, ts_stmt_sync())));
	ts_func f = { .name = "k", .body = s };
	char *text = ts_func_to_string(&f);

	assert_string_equal(text, "func k():\n"
		"  alloc T: f32[4, 16] (local)\n"
		"    unrolled for i in 0..4:\n"
		"      if (i < 3):\n"
		"        T[i, 0] = 1.0\n"
		"      else:\n"
		"        sync\n");
	/* Empty buffers exist (an empty stage's partial results); negative
	 * extents do not. */
	assert_non_null(ts_buffer_new(ctx, "empty", TS_F32, 2,
		(int64_t[]){ 4, 0 }));
	assert_null(ts_buffer_new(ctx, "bad", TS_F32, 2,
		(int64_t[]){ 4, -1 }));
	assert_error_contains(ctx, "buffer 'bad': dimension 1 has extent -1");
	assert_string_equal(ts_scope_name(TS_SCOPE_SHARED), "shared");
	assert_string_equal(ts_loop_kind_name(TS_LOOP_VECTORIZED),
		"vectorized");
	assert_string_equal(ts_bind_name(TS_BIND_BLOCK_X), "blockIdx.x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_lower_naive__loops_and_buffers),
		TS_TEST(test_lower_split_guard__extents_and_guards),
		TS_TEST(test_lower_split_partition__main_and_tail),
		TS_TEST(test_lower_compute_at__region_buffer),
		TS_TEST(test_lower_compute_inline__substituted),
		TS_TEST(test_lower_cache_write_read__local_tiles),
		TS_TEST(test_lower_rfactor__partial_buffer),
		TS_TEST(test_lower_compute_at_rows__stages_share_a_tile),
		TS_TEST(test_lower_compute_at_rows__consumer_elsewhere),
		TS_TEST(test_lower_compute_at_vector__axis_last_in_buffer),
		TS_TEST(test_lower_fuse__div_mod),
		TS_TEST(test_lower_errors),
		TS_TEST(test_index_simplify),
		TS_TEST(test_loop_print__constructs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
