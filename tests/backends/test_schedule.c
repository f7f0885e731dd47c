/* Schedules: loops after each step, validation errors with their
 * messages, printing, and JSON round trips. */
#include <config.h>

#include "tests/common.h"
#include "tests/backends/small_program.h"
#include "support/support.h"


/* The names of the live loops of stage "name", comma separated. */
static const char *loops(const ts_schedule *sch, const char *name)
{
	const ts_sched_stage *ss = ts_schedule_find_stage(sch, name);
	static char buf[512];
	size_t n = 0;

	buf[0] = '\0';
	for (int p = 0; p < ss->norder; p++) {
		const ts_sched_loop *l = &ss->loops[ss->order[p]];
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s:%lld", p ? " " : "",
			l->name, (long long)l->extent);
	}
	return buf;
}

static void test_schedule_naive__root_in_declaration_order(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = ts_schedule_naive(ctx, dag);

	assert_non_null(sch);
	assert_int_equal(sch->nsteps, 0);
	for (int i = 0; i < dag->nstages; i++)
		assert_int_equal(sch->stages[i].attach, TS_ATTACH_ROOT);
	assert_string_equal(loops(sch, "C"), "i:10 j:12 k:6");
	assert_string_equal(loops(sch, "P"), "i:10 k:6");
	/* The reduction of M was nested in a division: the canonical form
	 * made it a stage of its own. */
	assert_string_equal(loops(sch, "M"), "i:10");
	assert_string_equal(loops(sch, "M.sum0"), "i:10 k:6");
	assert_false(ts_schedule_find_stage(sch, "M")->nested_reduce);
	assert_int_equal(ts_schedule_check(sch), TS_OK);
}

static void test_schedule_split_reorder_fuse__loops(void **state)
{
	ts_ctx *ctx = *state;
	ts_schedule *sch = ts_schedule_new(ctx, ts_test_small_program(ctx));
	const char *order[] = { "j.o", "i.o" };

	assert_int_equal(ts_schedule_split(sch, "C", "i", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_string_equal(loops(sch, "C"), "i.o:3 i.i:4 j:12 k:6");
	assert_int_equal(ts_schedule_split(sch, "C", "j", 5,
		TS_TAIL_PARTITION), TS_OK);
	assert_string_equal(loops(sch, "C"),
		"i.o:3 i.i:4 j.o:3 j.i:5 k:6");
	/* Listed loops take the places they held, in the listed order. */
	assert_int_equal(ts_schedule_reorder(sch, "C", 2, order), TS_OK);
	assert_string_equal(loops(sch, "C"),
		"j.o:3 i.i:4 i.o:3 j.i:5 k:6");
	assert_int_equal(ts_schedule_fuse(sch, "C", "i.i", "i.o"), TS_OK);
	assert_string_equal(loops(sch, "C"), "j.o:3 i.i@i.o:12 j.i:5 k:6");
	/* A factor beyond the extent gives one outer iteration. */
	assert_int_equal(ts_schedule_split(sch, "P", "k", 100, TS_TAIL_GUARD),
		TS_OK);
	assert_string_equal(loops(sch, "P"), "i:10 k.o:1 k.i:6");
	assert_int_equal(sch->nsteps, 5);
}

/* Apply "st" to "sch" and expect an error containing "msg"; the
 * schedule keeps its steps and loops. */
static void expect_step_error(ts_ctx *ctx, ts_schedule *sch,
	const ts_step *st, const char *msg)
{
	int n = sch->nsteps;
	char before[512];

	snprintf(before, sizeof(before), "%s", loops(sch, "C"));
	assert_int_equal(ts_schedule_apply(sch, st), TS_ERROR);
	assert_error_contains(ctx, msg);
	assert_int_equal(sch->nsteps, n);
	assert_string_equal(loops(sch, "C"), before);
	ts_ctx_clear_error(ctx);
}

static void test_schedule_apply__errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_schedule *sch = ts_schedule_new(ctx, ts_test_small_program(ctx));
	const struct {
		ts_step st;
		const char *msg;
	} cases[] = {
		{ { .kind = TS_STEP_SPLIT, .stage = "Z", .loop = "i",
		    .factor = 2 }, "no stage 'Z'" },
		{ { .kind = TS_STEP_SPLIT, .stage = "C", .loop = "z",
		    .factor = 2 }, "stage 'C': no loop 'z' (loops: i, j, k)" },
		{ { .kind = TS_STEP_SPLIT, .stage = "C", .loop = "i",
		    .factor = 0 }, "split of 'i' by 0: the factor must be at "
		    "least 1" },
		{ { .kind = TS_STEP_VECTORIZE, .stage = "C", .loop = "k" },
		  "cannot vectorize reduction loop 'k'" },
		{ { .kind = TS_STEP_VECTORIZE, .stage = "C", .loop = "i" },
		  "cannot vectorize 'i': it is not the innermost loop ('k' "
		  "is)" },
		{ { .kind = TS_STEP_PARALLEL, .stage = "C", .loop = "k" },
		  "cannot parallelise reduction loop 'k'" },
		{ { .kind = TS_STEP_COMPUTE_AT, .stage = "P", .target = "C",
		    .loop = "q" }, "stage 'C': no loop 'q'" },
		{ { .kind = TS_STEP_COMPUTE_AT, .stage = "P", .target = "M",
		    .loop = "i" }, "compute_at target 'M' is not a consumer "
		    "of 'P'" },
		{ { .kind = TS_STEP_COMPUTE_AT, .stage = "C", .target = "M",
		    .loop = "i" }, "stage 'C': an output cannot be computed "
		    "at another stage" },
		{ { .kind = TS_STEP_FUSE, .stage = "C", .loop = "i",
		    .loop2 = "k" }, "cannot fuse 'i' and 'k': they are not "
		    "adjacent" },
		{ { .kind = TS_STEP_FUSE, .stage = "C", .loop = "j",
		    .loop2 = "k" }, "cannot fuse spatial and reduction loops "
		    "'j' and 'k'" },
		{ { .kind = TS_STEP_COMPUTE_INLINE, .stage = "C" },
		  "stage 'C': cannot inline an output" },
		{ { .kind = TS_STEP_REORDER, .stage = "C", .nloops = 2,
		    .loops = (const char *[]){ "i", "i" } },
		  "reorder lists loop 'i' twice" },
		{ { .kind = TS_STEP_CACHE_READ, .stage = "C", .target = "M",
		    .loop = "i" }, "cache_read of 'M': the stage does not "
		    "read it" },
		{ { .kind = TS_STEP_CACHE_READ, .stage = "C", .target = "B",
		    .loop = "i", .nperm = 2, .perm = { 0, 0 } },
		  "cache_read of 'B': the layout is not a permutation" },
		{ { .kind = TS_STEP_RFACTOR, .stage = "C", .loop = "j" },
		  "rfactor of 'j': not a reduction loop" },
		{ { .kind = TS_STEP_BIND, .stage = "C", .loop = "i",
		    .bind = TS_BIND_NONE }, "bind of 'i': unknown binding" },
		{ { .kind = TS_STEP_KIND_COUNT, .stage = "C" },
		  "unknown step kind" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		expect_step_error(ctx, sch, &cases[c].st, cases[c].msg);
}

static void test_schedule_inline__reduction_rejected(void **state)
{
	ts_ctx *ctx = *state;
	int64_t s[1] = { 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, s);
	ts_axis *r = ts_reduce_axis(ctx, "r", 8), *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *S = ts_compute(ctx, "S", 0, NULL, ts_sum(ctx, 1, &r,
		ts_at(ctx, X, 1, ts_var(ctx, r))));
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i, ts_sub(ctx, ts_at(ctx, X,
		1, ts_var(ctx, i)), ts_at(ctx, S, 0)));
	ts_schedule *sch = ts_schedule_new(ctx, ts_dag_new(ctx, 1, &X, 1, &Y));

	assert_int_equal(ts_schedule_compute_inline(sch, "S"), TS_ERROR);
	assert_error_contains(ctx, "stage 'S': cannot inline a reduction");
}

/* Errors that only the whole schedule shows. */
static void test_schedule_check__errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch;
	const char *ko[] = { "k", "j" };

	/* The attach loop is split afterwards. */
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_compute_at(sch, "P", "C", "j"), TS_OK);
	assert_int_equal(ts_schedule_split(sch, "C", "j", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "stage 'P': compute_at loop 'j' of 'C' no "
		"longer exists (loops: i, j.o, j.i, k)");

	/* A vectorized loop moved outwards. */
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_vectorize(sch, "P", "k"), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "P", 2,
		(const char *[]){ "k", "i" }), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "stage 'P': vectorized loop 'k' is not "
		"innermost");

	/* A cache_write with a reduction loop outside it. */
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_cache_write(sch, "C", "j"), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 2, ko), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "cache_write at 'j' needs every reduction "
		"loop inside it ('k' is not)");

	/* A partitioned inner loop moved outside its outer loop. */
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_split(sch, "C", "i", 4,
		TS_TAIL_PARTITION), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 2,
		(const char *[]){ "i.i", "i.o" }), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "loop 'i.i' must stay inside 'i.o'");

	/* A cache_read of a tensor computed at a loop. */
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_compute_at(sch, "P", "C", "j"), TS_OK);
	assert_int_equal(ts_schedule_cache_read(sch, "C", "P", "i", 0, NULL),
		TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "cache_read of 'P', which is computed at "
		"a loop of 'C'");
}

/* tensorize: the step's nest is the three innermost loops, rows and
 * columns of 16 then a reduction loop of 16; it is refused otherwise,
 * checked again when later steps move loops, printed, kept in JSON,
 * and marks the head of the nest in the loop IR. */
static void test_schedule_tensorize__nest_checked(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm",
		"input A: f16[32, 48]\ninput B: f16[48, 64]\n"
		"output C[i: 32, j: 64] = sum(k: 48) f32(A[i, k]) * "
		"f32(B[k, j])\n");
	const char *order[] = { "i.o", "j.o", "k.o", "i.i", "j.i", "k.i" };
	const char *axes[] = { "i", "j", "k" };
	ts_schedule *sch, *back;
	ts_func *f;
	char *ir;

	assert_non_null(dag);
	sch = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_tensorize(sch, "C", "j"), TS_ERROR);
	assert_error_contains(ctx, "stage 'C': tensorize at 'j': 'j' is not "
		"the third innermost loop (loops: i, j, k)");
	assert_int_equal(ts_schedule_tensorize(sch, "C", "i"), TS_ERROR);
	assert_error_contains(ctx, "loop 'i' has 32 iterations, not 16");
	assert_int_equal(ts_schedule_tensorize(sch, "C", "x"), TS_ERROR);
	assert_error_contains(ctx, "no loop 'x' (loops: i, j, k)");
	for (int a = 0; a < 3; a++)
		assert_int_equal(ts_schedule_split(sch, "C", axes[a], 16,
			TS_TAIL_GUARD), TS_OK);
	assert_int_equal(ts_schedule_tensorize(sch, "C", "k.o"), TS_ERROR);
	assert_error_contains(ctx, "'k.o' is not the third innermost loop");
	assert_int_equal(ts_schedule_tensorize(sch, "C", "j.i"), TS_ERROR);
	assert_error_contains(ctx, "loop 'k.o' has 3 iterations, not 16");
	assert_int_equal(ts_schedule_reorder(sch, "C", 6, order), TS_OK);
	assert_int_equal(ts_schedule_tensorize(sch, "C", "i.i"), TS_OK);
	assert_int_equal(ts_schedule_tensorize(sch, "C", "i.i"), TS_ERROR);
	assert_error_contains(ctx, "tensorize already applied at 'i.i'");
	assert_int_equal(ts_schedule_check(sch), TS_OK);
	assert_string_equal(ts_step_to_string(&sch->steps[sch->nsteps - 1]),
		"C: tensorize i.i");
	back = ts_schedule_from_json(ctx, dag, ts_schedule_to_json(sch));
	assert_non_null(back);
	assert_non_null(strstr(ts_schedule_to_json(sch), "\"kind\":\"TZ\""));
	assert_string_equal(ts_schedule_find_stage(back, "C")->tensorize, "i.i");
	/* Lowered: the loop i.i says so, and only it. */
	assert_non_null(f = ts_lower(ctx, dag, back));
	ir = ts_func_to_string(f);
	assert_non_null(strstr(ir, "for i.i in 0..16:  # tensorized"));
	assert_null(strstr(strstr(ir, "# tensorized") + 1, "# tensorized"));
	/* A later step that moves the nest: caught by the check. */
	assert_int_equal(ts_schedule_reorder(sch, "C", 2,
		(const char *[]){ "k.i", "j.i" }), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "stage 'C': tensorize at 'i.i': loop 'k.i' "
		"is a reduction loop");
}

/* A compute_at target that is inlined afterwards. */
static void test_schedule_check__target_inlined(void **state)
{
	ts_ctx *ctx = *state;
	int64_t s[1] = { 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, s);
	ts_axis *a = ts_axis_new(ctx, "a", 8), *b = ts_axis_new(ctx, "b", 8);
	ts_axis *c = ts_axis_new(ctx, "c", 8);
	ts_tensor *P = ts_compute(ctx, "P", 1, &a, ts_add(ctx, ts_at(ctx, X,
		1, ts_var(ctx, a)), ts_float(ctx, 1.0)));
	ts_tensor *Q = ts_compute(ctx, "Q", 1, &b, ts_mul(ctx, ts_at(ctx, P,
		1, ts_var(ctx, b)), ts_float(ctx, 3.0)));
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &c, ts_at(ctx, Q, 1,
		ts_var(ctx, c)));
	ts_schedule *sch = ts_schedule_new(ctx, ts_dag_new(ctx, 1, &X, 1, &Y));

	assert_int_equal(ts_schedule_compute_at(sch, "P", "Q", "b"), TS_OK);
	assert_int_equal(ts_schedule_compute_inline(sch, "Q"), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_ERROR);
	assert_error_contains(ctx, "stage 'P': compute_at target 'Q' is "
		"inlined");
	/* And directly, when the target is already inlined. */
	sch = ts_schedule_new(ctx, sch->dag);
	assert_int_equal(ts_schedule_compute_inline(sch, "Q"), TS_OK);
	assert_int_equal(ts_schedule_compute_at(sch, "P", "Q", "b"), TS_ERROR);
	assert_error_contains(ctx, "compute_at target 'Q' is inlined");
}

/* A schedule with one step of every kind, valid as a whole. */
static ts_schedule *every_kind(ts_ctx *ctx, ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "i.o", "j.o", "k", "i.i", "j.i" };
	const int perm[2] = { 1, 0 };

	if (ts_schedule_split(sch, "C", "i", 4, TS_TAIL_PARTITION) < 0 ||
	    ts_schedule_split(sch, "C", "j", 8, TS_TAIL_GUARD) < 0 ||
	    ts_schedule_reorder(sch, "C", 5, order) < 0 ||
	    ts_schedule_cache_write(sch, "C", "j.o") < 0 ||
	    ts_schedule_cache_read(sch, "C", "B", "j.o", 2, perm) < 0 ||
	    ts_schedule_compute_at(sch, "P", "C", "j.o") < 0 ||
	    ts_schedule_compute_root(sch, "P") < 0 ||
	    ts_schedule_compute_inline(sch, "P") < 0 ||
	    ts_schedule_vectorize(sch, "C", "j.i") < 0 ||
	    ts_schedule_parallel(sch, "C", "i.o") < 0 ||
	    ts_schedule_unroll(sch, "C", "i.i") < 0 ||
	    ts_schedule_fuse(sch, "M", "i", "i") == TS_OK ||
	    ts_schedule_split(sch, "M", "i", 3, TS_TAIL_GUARD) < 0 ||
	    ts_schedule_fuse(sch, "M", "i.o", "i.i") < 0 ||
	    ts_schedule_bind(sch, "M", "i.o@i.i", TS_BIND_THREAD_X) < 0)
		return NULL;
	ts_ctx_clear_error(ctx);
	return sch;
}

static void test_schedule_print__every_kind(void **state)
{
	ts_ctx *ctx = *state;
	ts_schedule *sch = every_kind(ctx, ts_test_small_program(ctx));
	ts_step rf = { .kind = TS_STEP_RFACTOR, .stage = "C", .loop = "k.i" };

	assert_non_null(sch);
	assert_string_equal(ts_schedule_to_string(sch),
		"C: split i by 4 partition -> i.o, i.i\n"
		"C: split j by 8 -> j.o, j.i\n"
		"C: reorder i.o, j.o, k, i.i, j.i\n"
		"C: cache_write j.o\n"
		"C: cache_read B at j.o layout [1, 0]\n"
		"P: compute_at C j.o\n"
		"P: compute_root\n"
		"P: compute_inline\n"
		"C: vectorize j.i\n"
		"C: parallel i.o\n"
		"C: unroll i.i\n"
		"M: split i by 3 -> i.o, i.i\n"
		"M: fuse i.o, i.i -> i.o@i.i\n"
		"M: bind i.o@i.i threadIdx.x\n");
	assert_string_equal(ts_step_to_string(&rf), "C: rfactor k.i");
	assert_int_equal(ts_schedule_check(sch), TS_OK);
}

/* Whether "a" and "b" have the same loops, kinds and attachments. */
static void assert_same_state(const ts_schedule *a, const ts_schedule *b)
{
	for (int i = 0; i < a->dag->nstages; i++) {
		const ts_sched_stage *x = &a->stages[i], *y = &b->stages[i];
		assert_int_equal(x->norder, y->norder);
		assert_int_equal(x->attach, y->attach);
		for (int p = 0; p < x->norder; p++) {
			const ts_sched_loop *l = &x->loops[x->order[p]];
			const ts_sched_loop *m = &y->loops[y->order[p]];
			assert_string_equal(l->name, m->name);
			assert_int_equal(l->extent, m->extent);
			assert_int_equal(l->kind, m->kind);
			assert_int_equal(l->bind, m->bind);
		}
	}
}

static void test_schedule_json__round_trip(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);
	ts_schedule *sch = every_kind(ctx, dag), *back, *rf;
	char *json;

	assert_non_null(sch);
	json = ts_schedule_to_json(sch);
	assert_non_null(strstr(json, "\"kind\":\"SP\""));
	assert_non_null(strstr(json, "\"tail\":\"partition\""));
	back = ts_schedule_from_json(ctx, dag, json);
	assert_non_null(back);
	assert_string_equal(ts_schedule_to_string(back),
		ts_schedule_to_string(sch));
	assert_string_equal(ts_schedule_to_json(back), json);
	assert_same_state(sch, back);

	/* rfactor, which does not combine with cache_write above. */
	rf = ts_schedule_new(ctx, dag);
	assert_int_equal(ts_schedule_split(rf, "C", "k", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_rfactor(rf, "C", "k.i"), TS_OK);
	back = ts_schedule_from_json(ctx, dag, ts_schedule_to_json(rf));
	assert_non_null(back);
	assert_string_equal(ts_schedule_to_string(back),
		"C: split k by 4 -> k.o, k.i\nC: rfactor k.i\n");
	assert_string_equal(ts_schedule_find_stage(back, "C")->rfactor, "k.i");

	/* What tessel schedule --json prints holds the steps in "schedule";
	 * its own "dag" names the program, not the hash. */
	{
		char *wrapped = ts_asprintf("{\"dag\": \"small\", "
			"\"config\": {}, \"schedule\": %s}",
			ts_schedule_to_json(rf));
		back = ts_schedule_from_json(ctx, dag, wrapped);
		assert_non_null(back);
		assert_string_equal(ts_schedule_to_string(back),
			ts_schedule_to_string(rf));
	}
}

static void test_schedule_json__errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_test_small_program(ctx);

	assert_null(ts_schedule_from_json(ctx, dag, "{\"steps\": ["));
	assert_error_contains(ctx, "schedule JSON: line 1");
	assert_null(ts_schedule_from_json(ctx, dag, "{}"));
	assert_error_contains(ctx, "needs an array 'steps'");
	assert_null(ts_schedule_from_json(ctx, dag,
		"{\"steps\": [{\"kind\": \"XX\", \"stage\": \"C\"}]}"));
	assert_error_contains(ctx, "unknown step kind 'XX'");
	assert_null(ts_schedule_from_json(ctx, dag,
		"{\"steps\": [{\"kind\": \"SP\", \"stage\": \"C\", "
		"\"loop\": \"i\"}]}"));
	assert_error_contains(ctx, "split step needs an integer 'factor'");
	assert_null(ts_schedule_from_json(ctx, dag,
		"{\"dag\": \"0123456789abcdef\", \"steps\": []}"));
	assert_error_contains(ctx, "written for the DAG 0123456789abcdef");
	/* A replayed step is validated like any other. */
	assert_null(ts_schedule_from_json(ctx, dag,
		"{\"steps\": [{\"kind\": \"VE\", \"stage\": \"C\", "
		"\"loop\": \"k\"}]}"));
	assert_error_contains(ctx, "cannot vectorize reduction loop 'k'");
}

static void test_schedule_copy__independent(void **state)
{
	ts_ctx *ctx = *state;
	ts_schedule *sch = ts_schedule_new(ctx, ts_test_small_program(ctx)), *c;

	assert_int_equal(ts_schedule_split(sch, "C", "i", 4, TS_TAIL_GUARD),
		TS_OK);
	c = ts_schedule_copy(sch);
	assert_int_equal(ts_schedule_split(c, "C", "j", 4, TS_TAIL_GUARD),
		TS_OK);
	assert_string_equal(loops(sch, "C"), "i.o:3 i.i:4 j:12 k:6");
	assert_string_equal(loops(c, "C"), "i.o:3 i.i:4 j.o:3 j.i:4 k:6");
	assert_int_equal(sch->nsteps, 1);
	assert_int_equal(c->nsteps, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_schedule_naive__root_in_declaration_order),
		TS_TEST(test_schedule_split_reorder_fuse__loops),
		TS_TEST(test_schedule_apply__errors),
		TS_TEST(test_schedule_inline__reduction_rejected),
		TS_TEST(test_schedule_check__errors),
		TS_TEST(test_schedule_check__target_inlined),
		TS_TEST(test_schedule_tensorize__nest_checked),
		TS_TEST(test_schedule_print__every_kind),
		TS_TEST(test_schedule_json__round_trip),
		TS_TEST(test_schedule_json__errors),
		TS_TEST(test_schedule_copy__independent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
