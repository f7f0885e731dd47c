/* Meta-templates on every catalogue operator: every configuration of the
 * space applies to a valid schedule, and compiled kernels of sampled
 * configurations match the reference interpreter. */
#include "tests/common.h"

#include <tessel/tessel.h>

#include "examples/catalogue.h"
#include "tests/corpus/gen.h"
#include "metatemplates/rules.h"
#include "support/support.h"

/* The template of catalogue entry "e" at the tiny size, in "ctx". */
static ts_template *template_of(ts_ctx *ctx,
	const struct ts_catalogue_entry *e, ts_dag **dag)
{
	ts_dag_info *info;
	ts_target *tg = ts_target_lookup(ctx, "zen3");

	*dag = e->build(ctx, TS_SIZE_TINY);
	assert_non_null(*dag);
	info = ts_analyze_dag(ctx, *dag);
	assert_non_null(info);
	assert_non_null(tg);
	return ts_template_new(ctx, *dag, info, tg);
}

/* Run "sch" on "dag" and compare with the interpreter's "want". */
static void check_schedule(ts_ctx *ctx, const char *name, const ts_dag *dag,
	const ts_schedule *sch, ts_array **in, ts_array **want,
	const ts_config *cfg)
{
	ts_func *f = ts_lower(ctx, dag, sch);
	ts_module *m;
	const char *bad;
	double err = 0;

	if (!f)
		fail_msg("%s: lowering %s: %s", name, ts_config_to_json(cfg),
			ts_ctx_error(ctx));
	m = ts_module_compile(ctx, f, NULL);
	if (!m)
		fail_msg("%s: compiling: %s", name, ts_ctx_error(ctx));
	bad = ts_test_run_compare(ctx, m, dag, in, want, &err);
	if (bad)
		fail_msg("%s: output %s differs by %g under %s", name, bad, err,
			ts_config_to_json(cfg));
	ts_module_free(m);
}

static void test_template_apply__every_sample_is_valid(void **state)
{
	ts_ctx *ctx = *state;

	for (int e = 0; e < ts_catalogue_count; e++) {
		ts_dag *dag;
		ts_template *tp = template_of(ctx, &ts_catalogue[e], &dag);
		assert_non_null(tp);
		for (int i = 0; i < 100; i++) {
			ts_config *c = i ? ts_space_sample(tp->space, ctx)
				: ts_template_default(tp);
			ts_schedule *sch = ts_template_apply(tp, c);
			if (!sch)
				fail_msg("%s: %s: %s", ts_catalogue[e].name,
					ts_config_to_json(c), ts_ctx_error(ctx));
			assert_int_equal(ts_schedule_check(sch), TS_OK);
		}
	}
}

/* The default and the naive configurations are points of the space (every
 * split's factors cover its extent), also where stages are inlined and
 * own no knobs. */
static void test_template_default_and_naive__valid(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "inlined.tsl",
		"input A: i8[64, 64]\ninput F: f32[64, 64]\n"
		"T[i: 64, j: 64] = f64(F[i, j]) * 2.0 + 1.0\n"
		"M[i: 64, j: 64] = j + 1 < 64 && A[i, j + 1] > -2\n"
		"output Y[i: 64, j: 64] = select(M[i, j], T[i, j], "
		"f64(A[i, j]))\n");
	ts_target *tg = ts_target_lookup(ctx, "zen3");
	ts_template *tp;

	assert_non_null(dag);
	tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag), tg);
	assert_non_null(tp);
	assert_true(ts_config_is_valid(ts_template_default(tp)));
	assert_true(ts_config_is_valid(ts_template_naive(tp)));
	for (int e = 0; e < ts_catalogue_count; e++) {
		tp = template_of(ctx, &ts_catalogue[e], &dag);
		if (!ts_config_is_valid(ts_template_default(tp)) ||
		    !ts_config_is_valid(ts_template_naive(tp)))
			fail_msg("%s: default %s, naive %s", ts_catalogue[e].name,
				ts_config_to_json(ts_template_default(tp)),
				ts_config_to_json(ts_template_naive(tp)));
	}
}

static void test_template_kernels__match_interpreter(void **state)
{
	ts_ctx *ctx = *state;

	for (int e = 0; e < ts_catalogue_count; e++) {
		ts_dag *dag;
		ts_template *tp = template_of(ctx, &ts_catalogue[e], &dag);
		ts_array **in = ts_dag_random_inputs(ctx, dag, 5);
		ts_array *want[16];

		assert_true(dag->noutputs <= 16);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		for (int i = 0; i < 6; i++) {
			ts_config *c = i ? ts_space_sample(tp->space, ctx)
				: ts_template_default(tp);
			ts_schedule *sch = ts_template_apply(tp, c);
			assert_non_null(sch);
			check_schedule(ctx, ts_catalogue[e].name, dag, sch, in,
				want, c);
		}
	}
}

/* The template for "target" of the declaration the generator writes
 * for "seed" (in one form for odd seeds, the other for even ones, as
 * "odd_form" says), its name in "name". */
static ts_template *generated(ts_ctx *ctx, uint64_t seed,
	ts_corpus_form odd_form, const char *target, char **name)
{
	ts_corpus_opts o = ts_corpus_opts_default();
	ts_corpus_case cc;
	ts_template *tp;
	ts_dag *dag;
	char *text;

	o.form = seed & 1 ? odd_form : odd_form == TS_CORPUS_STAGED ?
		TS_CORPUS_ONE_STATEMENT : TS_CORPUS_STAGED;
	assert_int_equal(ts_corpus_generate(seed, &o, &cc), 0);
	*name = ts_asprintf("seed %llu (%s)", (unsigned long long)seed,
		ts_corpus_style_name(cc.style));
	text = ts_asprintf("%s", cc.text);	/* the collector's, as the DAG */
	ts_corpus_case_clear(&cc);
	dag = ts_parse_string(ctx, *name, text);
	if (!dag)
		fail_msg("%s: %s", *name, ts_ctx_error(ctx));
	tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
		ts_target_lookup(ctx, target));
	assert_non_null(tp);
	return tp;
}

/* Kernels of sampled configurations match the interpreter for
 * declarations written in every style of the generator, in both forms:
 * what the tuner samples computes what the interpreter does.
 * TS_TEMPLATE_SEEDS sets how many (default 24). */
static void test_template_kernels__match_for_any_declaration(void **state)
{
	ts_ctx *ctx = *state;
	const char *env = getenv("TS_TEMPLATE_SEEDS");
	uint64_t nseeds = env ? strtoull(env, NULL, 10) : 24;

	for (uint64_t seed = 1; seed <= nseeds; seed++) {
		char *name;
		ts_template *tp = generated(ctx, seed, TS_CORPUS_STAGED, "zen3",
			&name);
		const ts_dag *dag = tp->dag;
		ts_array **in, *want[16];
		assert_true(dag->noutputs <= 16);
		in = ts_dag_random_inputs(ctx, dag, seed);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		for (int i = 0; i < 3; i++) {
			ts_config *c = i ? ts_space_sample(tp->space, ctx)
				: ts_template_default(tp);
			ts_schedule *sch = ts_template_apply(tp, c);
			if (!sch)
				fail_msg("%s: no schedule under %s: %s", name,
					ts_config_to_json(c), ts_ctx_error(ctx));
			check_schedule(ctx, name, dag, sch, in, want, c);
		}
	}
}

static void test_template_rules__follow_the_classes(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag;
	ts_template *tp;

	/* A complex reduction gets the SSRSRS structure and, when padding
	 * feeds it, the padding stage becomes a location knob. */
	tp = template_of(ctx, ts_catalogue_find("conv2d_nchw_s1"), &dag);
	for (int s = 0; s < dag->nstages; s++) {
		const ts_stage_plan *p = &tp->plans[s];
		if (p->klass == TS_CLASS_COMPLEX_REDUCTION) {
			assert_int_equal(p->rule, TS_RULE_TILE);
			assert_string_equal(p->structure, "SSRSRS");
		}
		if (p->klass == TS_CLASS_LOCATION_TUNABLE)
			assert_int_equal(p->rule, TS_RULE_LOCATION);
	}
	/* An elementwise epilogue after a complex reduction is a fusion
	 * knob of the reduction. */
	tp = template_of(ctx, ts_catalogue_find("dense_bias_relu"), &dag);
	{
		bool fusable = false;
		for (int s = 0; s < dag->nstages; s++)
			fusable |= tp->plans[s].knob_fuse >= 0;
		assert_true(fusable);
	}
	/* A direct stage that is cheap, unguarded and not an output is
	 * inlined into its consumer and owns no knob; the reductions of
	 * softmax each get a loop nest of their own. */
	dag = ts_parse_string(ctx, "inline.tsl",
		"input X: f32[32, 64]\n"
		"T[i: 32, j: 64] = X[i, j] * 2.0 + 1.0\n"
		"output S[i: 32] = sum(k: 64) T[i, k]\n");
	assert_non_null(dag);
	tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
		ts_target_lookup(ctx, "zen3"));
	assert_non_null(tp);
	assert_int_equal(tp->plans[0].rule, TS_RULE_INLINE);
	assert_int_equal(tp->plans[0].knob_vec, -1);
	assert_int_equal(tp->plans[0].split[0], -1);
	assert_int_equal(tp->plans[1].rule, TS_RULE_TILE);
	tp = template_of(ctx, ts_catalogue_find("softmax"), &dag);
	for (int s = 0; s < dag->nstages; s++)
		if (tp->plans[s].klass == TS_CLASS_SIMPLE_REDUCTION)
			assert_int_equal(tp->plans[s].rule, TS_RULE_TILE);
}

/* Check that the nest the model rates for stage "y" under "c" is the
 * loop nest the schedule gives it: as many loops (the parallel ones
 * fused into one), the same annotations in the same order, the same
 * trips (but for the outermost part of a split, whose trip the schedule
 * rounds to the extent). */
/* The axis whose split the schedule "ss" partitions, or -1. */
static int partitioned_axis(const ts_sched_stage *ss)
{
	for (int r = 0; r < ss->nrels; r++)
		if (!ss->rels[r].fuse && ss->rels[r].tail == TS_TAIL_PARTITION)
			return ss->loops[ss->rels[r].parent].axis;
	return -1;
}

static void check_nest_is_scheduled(const char *name, const ts_template *tp,
	const ts_config *c, const ts_schedule *sch, int y)
{
	const ts_sched_stage *ss = &sch->stages[y];
	ts_nest n;
	int q = 0;

	/* A member of a row group runs its nest in the tiles of its host:
	 * its outer level counts the tiles, as a split of the region's. */
	if (!ts_template_nest(tp, c, y, &n) || n.fused ||
	    (ss->attach != TS_ATTACH_ROOT && n.row_host < 0))
		return;
	for (int k = 0; k < ss->norder; k++) {
		const ts_sched_loop *lp = &ss->loops[ss->order[k]];
		int width = lp->kind == TS_LOOP_PARALLEL && n.npar > 1 ?
			n.npar : 1;
		for (int w = 0; w < width; w++, q++) {
			if (q >= n.nloops)
				fail_msg("%s: stage %d: schedule has more loops "
					"than the nest under %s", name, y,
					ts_config_to_json(c));
			if (n.loops[q].kind != lp->kind &&
			    !(n.loops[q].trip == 1 && lp->kind ==
			      TS_LOOP_SERIAL))
				fail_msg("%s: stage %d loop %s: nest %s, "
					"schedule %s under %s", name, y,
					lp->name,
					ts_loop_kind_name(n.loops[q].kind),
					ts_loop_kind_name(lp->kind),
					ts_config_to_json(c));
			if (width == 1 && strchr(lp->name, '.') &&
			    strcmp(lp->name + strlen(lp->name) - 2, ".o") &&
			    n.loops[q].trip != lp->extent)
				fail_msg("%s: stage %d loop %s: trip %lld in the "
					"nest, %lld scheduled", name, y,
					lp->name, (long long)n.loops[q].trip,
					(long long)lp->extent);
		}
	}
	if (q != n.nloops)
		fail_msg("%s: stage %d: nest has %d loops, schedule %d", name,
			y, n.nloops, q);
	if (partitioned_axis(ss) != n.tail_loop)
		fail_msg("%s: stage %d: the nest's tail loop is axis %d, the "
			"schedule's %d under %s", name, y, n.tail_loop,
			partitioned_axis(ss), ts_config_to_json(c));
}

/* Which part of its axis' splits loop "k" of "n" runs (0: the
 * outermost), of how many ("nparts"). */
static int loop_part(const ts_nest *n, int k, int *nparts)
{
	int part = 0;

	*nparts = 0;
	for (int j = 0; j < n->nloops; j++)
		if (n->loops[j].axis == n->loops[k].axis) {
			part += j < k;
			(*nparts)++;
		}
	return part;
}

/* The name lowering gives loop "k" of nest "n" of stage "st": the
 * splits of an axis name the outer part ".o" and the inner ".i", the
 * inner one split again; the last part has no ".o". */
static char *nest_loop_name(const ts_nest *n, const ts_stage *st, int k)
{
	int nparts, part = loop_part(n, k, &nparts);
	char *s = ts_asprintf("%s", ts_stage_axis(st, n->loops[k].axis)->name);

	for (int i = 0; i < part; i++)
		s = ts_asprintf("%s.i", s);
	return part < nparts - 1 ? ts_asprintf("%s.o", s) : s;
}

/* The name of the loop lowering makes of the first "npar" loops of "n"
 * fused, and their trips' product in "trip". */
static char *parallel_name(const ts_nest *n, const ts_stage *st,
	int64_t *trip)
{
	char *s = NULL;

	*trip = 1;
	for (int k = 0; k < n->npar && k < n->nloops; k++) {
		char *part = nest_loop_name(n, st, k);
		s = s ? ts_asprintf("%s@%s", s, part) : part;
		*trip *= n->loops[k].trip;
	}
	return s;
}

/* Whether buffer name "b" is stage "name" or one of its buffers
 * ("name.local", "name.rf", ...). */
static bool of_stage(const char *b, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(b, name, n) && (!b[n] || b[n] == '.');
}

/* Whether "st" computes stage "y" of "dag": it writes a buffer of the
 * stage and not of a stage named after it ("N.sum0" of "N"), and is its
 * update when the stage reduces. */
static bool computes(const ts_stmt *st, const ts_dag *dag, int y)
{
	const char *b = ts_tensor_name(ts_stmt_buffer(st));
	const char *name = dag->stages[y]->name;

	if (!of_stage(b, name))
		return false;
	for (int s = 0; s < dag->nstages; s++)
		if (s != y && strlen(dag->stages[s]->name) > strlen(name) &&
		    of_stage(b, dag->stages[s]->name))
			return false;
	return dag->stages[y]->nraxes == 0 || ts_stmt_is_update(st);
}

/* The loops around the first statement of "s" that computes stage
 * "y" of "dag", outermost first, into "loops"; false when there is none. */
static bool compute_path(const ts_stmt *s, const ts_dag *dag, int y,
	const ts_stmt **loops, int *n)
{
	int mark = *n;

	switch (ts_stmt_get_kind(s)) {
	case TS_STMT_FOR:
		loops[(*n)++] = s;
		if (compute_path(ts_stmt_body(s), dag, y, loops, n))
			return true;
		*n = mark;
		return false;
	case TS_STMT_BLOCK:
		for (int i = 0; i < ts_stmt_nstmts(s); i++)
			if (compute_path(ts_stmt_child(s, i), dag, y,
			    loops, n))
				return true;
		return false;
	case TS_STMT_IF:
		return compute_path(ts_stmt_body(s), dag, y, loops, n) ||
			(ts_stmt_orelse(s) && compute_path(ts_stmt_orelse(s),
			dag, y, loops, n));
	case TS_STMT_ALLOC:
		return compute_path(ts_stmt_body(s), dag, y, loops, n);
	case TS_STMT_STORE:
		return computes(s, dag, y);
	default:
		return false;
	}
}

/* Whether loop "q" of the "nl" loops "loops" exists and runs the
 * variable "name". */
static bool lowered_as(const ts_stmt *const *loops, int nl, int q,
	const char *name)
{
	return q < nl && !strcmp(ts_axis_name(ts_stmt_var(loops[q])), name);
}

/* Check that the nest the model rates for root stage "y" under "c" is
 * the loop nest lowering produces in "f": outermost first, the loops
 * that run more than once with the same variables (the parallel ones
 * fused into one), trips and annotations.  A partitioned axis runs its
 * whole tiles first: its outer loop may run one trip fewer, and not at
 * all when that leaves one.  Return the loops compared (0: the stage
 * has no nest of its own at root). */
static int check_nest_is_lowered(const char *name, const ts_template *tp,
	const ts_config *c, const ts_func *f, int y)
{
	const ts_stage *st = tp->dag->stages[y];
	const ts_stmt *loops[4 * TS_MAX_NEST];
	int nl = 0, q = 0, k0 = 0;
	ts_nest n;

	if (!ts_template_nest(tp, c, y, &n) || n.fused || n.row_host >= 0)
		return 0;
	if (!compute_path(ts_func_body(f), tp->dag, y, loops, &nl))
		fail_msg("%s: stage %s: no store computes it under %s", name,
			st->name, ts_config_to_json(c));
	if (n.npar > 0) {
		int64_t trip;
		char *pn = parallel_name(&n, st, &trip);
		k0 = TS_MIN(n.npar, n.nloops);
		if (trip > 1 && (!lowered_as(loops, nl, q, pn) ||
		    ts_stmt_loop_kind(loops[q]) != TS_LOOP_PARALLEL))
			fail_msg("%s: stage %s: the nest's parallel loop %s is "
				"not lowered under %s", name, st->name, pn,
				ts_config_to_json(c));
		q += trip > 1;
	}
	for (int k = k0; k < n.nloops; k++) {
		const ts_nest_loop *lp = &n.loops[k];
		const char *vn = nest_loop_name(&n, st, k);
		int64_t trip;
		int nparts;
		bool tail = lp->axis == n.tail_loop &&
			loop_part(&n, k, &nparts) == 0;
		if (lp->trip == 1 || (tail && lp->trip == 2 &&
		    !lowered_as(loops, nl, q, vn)))
			continue;
		if (!lowered_as(loops, nl, q, vn))
			fail_msg("%s: stage %s: the nest's loop %s is not "
				"lowered (%s there) under %s", name, st->name,
				vn, q < nl ? ts_axis_name(ts_stmt_var(loops[q])) :
				"nothing", ts_config_to_json(c));
		trip = ts_axis_extent(ts_stmt_var(loops[q]));
		if (trip != lp->trip && !(tail && trip == lp->trip - 1))
			fail_msg("%s: stage %s loop %s: trip %lld in the nest, "
				"%lld lowered under %s", name, st->name, vn,
				(long long)lp->trip, (long long)trip,
				ts_config_to_json(c));
		if (ts_stmt_loop_kind(loops[q]) != lp->kind)
			fail_msg("%s: stage %s loop %s: %s in the nest, %s "
				"lowered under %s", name, st->name, vn,
				ts_loop_kind_name(lp->kind),
				ts_loop_kind_name(ts_stmt_loop_kind(loops[q])),
				ts_config_to_json(c));
		q++;
	}
	if (q != nl)
		fail_msg("%s: stage %s: %d loops lowered around its computation, "
			"%d in the nest under %s", name, st->name, nl, q,
			ts_config_to_json(c));
	return q;
}

/* Check the nests of every stage of "tp" at root under "c" against the
 * schedule and the loop IR; return the loops compared with the IR. */
static int check_nests(ts_ctx *ctx, const char *name, const ts_template *tp,
	const ts_config *c)
{
	ts_schedule *sch = ts_template_apply(tp, c);
	ts_func *f;
	int loops = 0;

	if (!sch)
		fail_msg("%s: no schedule under %s: %s", name,
			ts_config_to_json(c), ts_ctx_error(ctx));
	f = ts_lower(ctx, tp->dag, sch);
	if (!f)
		fail_msg("%s: lowering under %s: %s", name,
			ts_config_to_json(c), ts_ctx_error(ctx));
	for (int y = 0; y < tp->dag->nstages; y++) {
		check_nest_is_scheduled(name, tp, c, sch, y);
		if (sch->stages[y].attach == TS_ATTACH_ROOT)
			loops += check_nest_is_lowered(name, tp, c, f, y);
	}
	return loops;
}

/* The model rates what the template schedules and lowering produces,
 * for every catalogue operator and sampled configurations. */
static void test_template_nest__is_the_scheduled_nest(void **state)
{
	ts_ctx *ctx = *state;

	int loops = 0;

	for (int e = 0; e < ts_catalogue_count; e++) {
		ts_dag *dag;
		ts_template *tp = template_of(ctx, &ts_catalogue[e], &dag);
		for (int i = 0; i < 40; i++) {
			ts_config *c = i ? ts_space_sample(tp->space, ctx)
				: ts_template_default(tp);
			loops += check_nests(ctx, ts_catalogue[e].name, tp, c);
		}
	}
	/* Every entry, 40 configurations: the check compares loops. */
	assert_true(loops > 40 * ts_catalogue_count);
}

/* The same on declarations written in every style of the generator,
 * in both forms, for the shipped x86 targets (their vector widths and
 * registers tile differently). */
static void test_template_nest__is_lowered_for_any_declaration(void **state)
{
	ts_ctx *ctx = *state;
	static const char *const targets[] = { "zen3", "sapphire-rapids" };
	int loops = 0, cases = 0;

	for (uint64_t seed = 1; seed <= 300; seed++) {
		char *name;
		ts_template *tp = generated(ctx, seed, TS_CORPUS_ONE_STATEMENT,
			targets[seed / 2 % 2], &name);
		for (int i = 0; i < 6; i++) {
			ts_config *c = i ? ts_space_sample(tp->space, ctx)
				: ts_template_default(tp);
			loops += check_nests(ctx, name, tp, c);
		}
		cases++;
	}
	assert_true(loops > 6 * cases);
}

/* The rfactor vectorization of a reduction's innermost axis is offered
 * where it can fill vectors: a sum over a whole matrix (two reduction
 * axes, rows of 64) gets the knob, a 3x3 window does not, a row sum
 * does; every configuration with it on matches the interpreter. */
static void test_template_rfvec__where_vectors_fill(void **state)
{
	ts_ctx *ctx = *state;
	static const struct { const char *src; bool knob; } cases[] = {
		{ "input X: f32[16, 64]\n"
		  "output S[] = sum(i: 16, j: 64) X[i, j]\n", true },
		{ "input X: f32[8, 10, 10]\n"
		  "output M[c: 8, y: 8, x: 8] = max(r: 3, s: 3) "
		  "X[c, y + r, x + s]\n", false },
		{ "input X: f32[8, 100]\n"
		  "output S[i: 8] = sum(k: 100) X[i, k]\n", true },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ts_dag *dag = ts_parse_string(ctx, "rf.tsl", cases[c].src);
		ts_template *tp;
		ts_array **in, *want[1];
		const ts_stage_plan *p;
		assert_non_null(dag);
		tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
			ts_target_lookup(ctx, "zen3"));
		assert_non_null(tp);
		p = &tp->plans[dag->nstages - 1];
		assert_int_equal(p->knob_rfvec >= 0, cases[c].knob);
		if (!cases[c].knob)
			continue;
		in = ts_dag_random_inputs(ctx, dag, 5);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		for (int i = 0, on = 0; on < 4 && i < 200; i++) {
			ts_config *cfg = ts_space_sample(tp->space, ctx);
			if (!ts_config_get(cfg, p->knob_rfvec, 0))
				continue;
			on++;
			check_schedule(ctx, "rfvec", dag,
				ts_template_apply(tp, cfg), in, want, cfg);
			check_nest_is_scheduled("rfvec", tp, cfg,
				ts_template_apply(tp, cfg), dag->nstages - 1);
		}
	}
}

/* The templates of "src" for a CPU and a GPU target. */
static void both_templates(ts_ctx *ctx, const char *src, ts_dag **dag,
	ts_template **cpu, ts_gpu_template **gpu)
{
	ts_dag_info *info;

	*dag = ts_parse_string(ctx, "rules.tsl", src);
	assert_non_null(*dag);
	info = ts_analyze_dag(ctx, *dag);
	assert_non_null(info);
	*cpu = ts_template_new(ctx, *dag, info, ts_target_lookup(ctx, "zen3"));
	*gpu = ts_template_new(ctx, *dag, info, ts_target_lookup(ctx, "a100"));
	assert_non_null(*cpu);
	assert_non_null(*gpu);
}

/* "gpu", made by ts_template_new for a GPU target, is the template
 * ts_gpu_template_new makes, and the template functions run the GPU's
 * actions on it: the same defaults and schedules; it has no CPU nest. */
static void check_one_template(ts_ctx *ctx, const ts_dag *dag,
	const ts_gpu_template *gpu)
{
	ts_gpu_template *g = ts_gpu_template_new(ctx, dag,
		ts_analyze_dag(ctx, dag), ts_target_lookup(ctx, "a100"));
	ts_config *d = ts_template_default(gpu);
	ts_nest n;

	assert_non_null(g);
	assert_true(ts_config_equal(d, ts_gpu_template_default(g)));
	for (int i = 0; i < 20; i++) {
		ts_config *c = i ? ts_space_sample(gpu->space, ctx) : d;
		assert_string_equal(
			ts_schedule_to_string(ts_template_apply(gpu, c)),
			ts_schedule_to_string(ts_gpu_template_apply(g, c)));
	}
	for (int s = 0; s < dag->nstages; s++)
		assert_false(ts_template_nest(gpu, d, s, &n));
}

/* One rule table decides on CPUs and GPUs, in its order: a guarded copy
 * read by a pooling window is a location knob on a CPU (that exception
 * comes before "inline") and inlined on a GPU; a padding read with reuse
 * by a convolution is location-tunable on both; every stage names the
 * rule that decided it; one template type, one entry point. */
static void test_template_rules__one_table_for_cpu_and_gpu(void **state)
{
	ts_ctx *ctx = *state;
	const char *pad = "input X: f32[1, 8, 16, 16]\n"
		"P[n: 1, c: 8, y: 18, x: 18] = select(y >= 1 && y <= 16 && "
		"x >= 1 && x <= 16, X[n, c, y - 1, x - 1], 0.0)\n";
	ts_dag *dag;
	ts_template *cpu;
	ts_gpu_template *gpu;
	int n;
	const ts_rule_def *table;

	both_templates(ctx, ts_asprintf("%soutput Y[n: 1, c: 8, y: 16, "
		"x: 16] = max(r: 3, s: 3) P[n, c, y + r, x + s]\n", pad),
		&dag, &cpu, &gpu);
	assert_string_equal(cpu->plans[0].decided_by, "guarded-copy");
	assert_int_equal(cpu->plans[0].rule, TS_RULE_LOCATION);
	assert_string_equal(gpu->plans[0].decided_by, "inline");
	assert_int_equal(gpu->plans[0].rule, TS_RULE_INLINE);
	assert_string_equal(cpu->plans[1].decided_by, "simple");
	assert_string_equal(cpu->plans[1].structure, "SSRRS");
	assert_int_equal(gpu->plans[1].rule, TS_RULE_REDUCE);
	both_templates(ctx, ts_asprintf("%sinput W: f32[8, 8, 3, 3]\n"
		"output Y[n: 1, k: 8, y: 16, x: 16] = sum(c: 8, r: 3, s: 3) "
		"P[n, c, y + r, x + s] * W[k, c, r, s]\n", pad),
		&dag, &cpu, &gpu);
	assert_string_equal(cpu->plans[0].decided_by, "location");
	assert_string_equal(gpu->plans[0].decided_by, "location");
	assert_int_equal(gpu->plans[0].rule, TS_RULE_LOCATION);
	assert_string_equal(cpu->plans[1].decided_by, "complex");
	assert_string_equal(cpu->plans[1].structure, "SSRSRS");
	assert_int_equal(gpu->plans[1].rule, TS_RULE_TILE);
	check_one_template(ctx, dag, gpu);
	/* The last rule holds for every stage, on every kind of target. */
	table = ts_rule_table(&n);
	assert_true(n >= 2);
	assert_int_equal(table[n - 1].targets, TS_RULES_ALL);
	for (int i = 0; i < n; i++)
		assert_non_null(table[i].why);
	for (int s = 0; s < dag->nstages; s++)
		assert_true(table[n - 1].holds(dag, cpu->info, s));
}

/* A convolution whose bias and activation are separate stages (as an
 * importer writes them): the bias is inlined into the activation, and the
 * reduction still fuses into the activation through it, in every sampled
 * configuration, checked against the interpreter. */
static void test_template_fuse__through_inlined_stages(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "cbr.tsl",
		"input X: f32[1, 8, 10, 10]\n"
		"weight W: f32[16, 8, 3, 3]\n"
		"weight B: f32[16]\n"
		"C[n: 1, k: 16, h: 8, w: 8] = (sum(c: 8, r: 3, s: 3) "
		"X[n, c, h + r, w + s] * W[k, c, r, s]) + B[k]\n"
		"output O[n: 1, k: 16, h: 8, w: 8] = max(C[n, k, h, w], 0.0)\n");
	ts_template *tp;
	ts_array **in, *want[1];
	int fused = 0;

	assert_non_null(dag);
	tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
		ts_target_host(ctx));
	assert_non_null(tp);
	assert_string_equal(dag->stages[0]->name, "C.sum0");
	assert_int_equal(tp->plans[1].rule, TS_RULE_INLINE);
	assert_int_equal(tp->plans[0].fuse_consumer, 2);
	in = ts_dag_random_inputs(ctx, dag, 3);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	for (int i = 0; i < 24; i++) {
		ts_config *c = ts_space_sample(tp->space, ctx);
		ts_schedule *sch = ts_template_apply(tp, c);

		assert_non_null(sch);
		fused += ts_config_get(c, tp->plans[0].knob_fuse, 0) == 1;
		check_schedule(ctx, "cbr", dag, sch, in, want, c);
	}
	assert_true(fused > 0);
}

/* Row groups: the stages a softmax, a layer norm and a softmax over the
 * last axis of a 3-d tensor compute before their output join its tiles
 * of rows under the knob "Y.rows"; sampled configurations with it on and
 * off match the interpreter.  A stage read elsewhere (an output reading
 * the row maximum at another row) keeps the group from forming. */
static void test_template_rows__groups_and_results(void **state)
{
	ts_ctx *ctx = *state;
	static const struct { const char *src; int members; } cases[] = {
		{ "input X: f32[6, 40]\n"
		  "M[i: 6] = max(k: 40) X[i, k]\n"
		  "E[i: 6] = sum(k: 40) exp(X[i, k] - M[i])\n"
		  "output Y[i: 6, j: 40] = exp(X[i, j] - M[i]) / E[i]\n", 2 },
		{ "input X: f32[5, 48]\n"
		  "input G: f32[48]\n"
		  "Mu[i: 5] = (sum(k: 48) X[i, k]) / 48.0\n"
		  "V[i: 5] = (sum(k: 48) (X[i, k] - Mu[i]) * (X[i, k] - Mu[i]))"
		  " / 48.0\n"
		  "output Y[i: 5, j: 48] = (X[i, j] - Mu[i]) * rsqrt(V[i] + "
		  "1e-5) * G[j]\n", 4 },
		{ "input X: f32[2, 3, 24]\n"
		  "M[b: 2, h: 3] = max(k: 24) X[b, h, k]\n"
		  "output Y[b: 2, h: 3, j: 24] = exp(X[b, h, j] - M[b, h])\n",
		  1 },
		{ "input X: f32[6, 40]\n"
		  "M[i: 6] = max(k: 40) X[i, k]\n"
		  "output Y[i: 6, j: 40] = X[i, j] - M[i]\n"
		  "output Z[i: 6] = M[5 - i]\n", 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ts_dag *dag = ts_parse_string(ctx, "rows.tsl", cases[c].src);
		const ts_stage *y;
		const ts_stage_plan *h;
		ts_template *tp;
		ts_array **in, *want[2];
		int members = 0, on = 0, off = 0;
		assert_non_null(dag);
		y = ts_dag_find_stage(dag, "Y");
		tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag),
			ts_target_lookup(ctx, "zen4"));
		assert_non_null(tp);
		h = &tp->plans[ts_dag_stage_index(dag, y)];
		for (int s = 0; s < dag->nstages; s++)
			members += tp->plans[s].row_host == h->stage;
		assert_int_equal(members, cases[c].members);
		assert_int_equal(h->knob_rows >= 0, cases[c].members > 0);
		if (!cases[c].members)
			continue;
		in = ts_dag_random_inputs(ctx, dag, 7);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		for (int i = 0; i < 40 && (on < 6 || off < 2); i++) {
			ts_config *cfg = ts_space_sample(tp->space, ctx);
			bool rows = ts_config_get(cfg, h->knob_rows, 0);
			if (rows ? on >= 6 : off >= 2)
				continue;
			*(rows ? &on : &off) += 1;
			check_schedule(ctx, "rows", dag,
				ts_template_apply(tp, cfg), in, want, cfg);
		}
		assert_true(on > 0);
	}
}

/* The number of if statements in "s". */
static int count_ifs(const ts_stmt *s)
{
	int n;

	if (!s)
		return 0;
	n = s->kind == TS_STMT_IF;
	for (int i = 0; s->kind == TS_STMT_BLOCK && i < s->nstmts; i++)
		n += count_ifs(s->stmts[i]);
	return n + count_ifs(s->body) + (s->kind == TS_STMT_IF ?
		count_ifs(s->orelse) : 0);
}

/* The template of the declaration "src" for 1-thread "target". */
static ts_template *template_src(ts_ctx *ctx, const char *src,
	const char *target, ts_dag **dag)
{
	const ts_target *tg = ts_target_for_threads(ts_target_lookup(ctx,
		target), 1);

	*dag = ts_parse_string(ctx, "tail.tsl", src);
	assert_non_null(*dag);
	assert_non_null(tg);
	return ts_template_new(ctx, *dag, ts_analyze_dag(ctx, *dag), tg);
}

/* Whether stage 0 of "tp" under "json" runs its tail as a loop of its
 * own; the kernel must match the interpreter either way, and with a
 * tail loop the lowered code tests no guard at all. */
static bool tail_loop(ts_ctx *ctx, ts_template *tp, const ts_dag *dag,
	const char *json)
{
	ts_config *c = ts_config_from_json(ctx, tp->space, json);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array **want = ts_new_array(ts_array *, dag->noutputs);
	ts_schedule *sch;
	ts_nest n;

	if (!c)
		fail_msg("%s: %s", json, ts_ctx_error(ctx));
	sch = ts_template_apply(tp, c);
	assert_non_null(sch);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	check_schedule(ctx, "tail", dag, sch, in, want, c);
	check_nest_is_scheduled("tail", tp, c, sch, 0);
	assert_true(ts_template_nest(tp, c, 0, &n));
	if (n.tail_loop >= 0)
		assert_int_equal(count_ifs(ts_lower(ctx, dag, sch)->body), 0);
	return n.tail_loop >= 0;
}

/* The loops of a register tile unrolled, from the innermost, only while
 * the tile has at most four times the vector registers of the target in
 * iterations: with no vector axis, a tile of 32 x 32 accumulators on
 * AVX-512 (32 registers) unrolls its inner 32 and keeps the outer loop
 * a loop, a tile of 4 x 32 unrolls both there and only the 32 on AVX2
 * (16 registers), a tile of 8 x 8 unrolls both on AVX2.  The kernel
 * matches the interpreter and the nest rated is the nest scheduled. */
/* The configuration "json" of "tp", or a failure that names it. */
static ts_config *config_of(ts_ctx *ctx, const ts_template *tp,
	const char *json)
{
	ts_config *c = ts_config_from_json(ctx, tp->space, json);

	if (!c)
		fail_msg("%s: %s", json, ts_ctx_error(ctx));
	return c;
}

/* "c" applied to "tp" (on "dag"), its kernel checked against the
 * interpreter on seeded inputs. */
static ts_schedule *apply_checked(ts_ctx *ctx, const ts_template *tp,
	const ts_dag *dag, const ts_config *c, const char *name)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, 5);
	ts_array **want = ts_new_array(ts_array *, dag->noutputs);
	ts_schedule *sch = ts_template_apply(tp, c);

	assert_non_null(sch);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	check_schedule(ctx, name, dag, sch, in, want, c);
	return sch;
}

static void test_template_unroll__bounded_by_the_registers(void **state)
{
	static const struct {
		const char *target, *i, *j;
		int64_t unrolled;
	} cases[] = {
		{ "zen4", "[1,2,1,32]", "[1,2,1,32]", 32 },
		{ "zen4", "[1,16,1,4]", "[1,2,1,32]", 128 },
		{ "zen3", "[1,16,1,4]", "[1,2,1,32]", 32 },
		{ "zen3", "[1,8,1,8]", "[1,8,1,8]", 64 },
	};
	ts_ctx *ctx = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ts_dag *dag;
		ts_template *tp = template_src(ctx, "input A: f32[64, 16]\n"
			"input B: f32[16, 64]\n"
			"output C[i: 64, j: 64] = sum(k: 16) A[i, k] * "
			"B[k, j]\n", cases[i].target, &dag);
		char json[512];
		ts_config *c;
		ts_schedule *sch;
		ts_nest n;

		snprintf(json, sizeof(json), "{\"C.i\":%s,\"C.j\":%s,"
			"\"C.k\":[4,4],\"C.vec\":\"none\",\"C.par\":0,"
			"\"C.unroll\":true,\"C.cache_write\":true,"
			"\"C.pack.A\":\"none\",\"C.pack.B\":\"none\"}",
			cases[i].i, cases[i].j);
		c = config_of(ctx, tp, json);
		assert_true(ts_template_nest(tp, c, 0, &n));
		if (n.unrolled != cases[i].unrolled)
			fail_msg("%s on %s: %lld unrolled, expected %lld", json,
				cases[i].target, (long long)n.unrolled,
				(long long)cases[i].unrolled);
		sch = apply_checked(ctx, tp, dag, c, "unroll");
		check_nest_is_scheduled("unroll", tp, c, sch, 0);
	}
}

/* The loops of a register tile are ordered so that its operands hold
 * the fewest vector registers at once: a 2 x 8 tile over (k, h) with
 * vectors along w holds the 8 input rows across k when k is outside,
 * 2 weights when h is; a tile whose written order is as good keeps it.
 * Both kernels match the interpreter. */
static void test_template_register_tile__ordered_for_its_operands(
	void **state)
{
	static const struct {
		const char *k, *h, *w, *vec;
		const char *order;	/* axes of the last three loops */
	} cases[] = {
		{ "[1,1,2,2]", "[1,1,2,8]", "[1,1,1,16]", "w", "hkw" },
		{ "[1,1,1,4]", "[1,1,8,2]", "[1,1,2,8]", "k", "hwk" },
	};
	ts_ctx *ctx = *state;
	/* Weights that depend on k only, inputs on h and w only. */
	static const int axis[3] = { 1, 2, 3 };
	static const uint32_t dep[2] = { 1u << 2 | 1u << 3, 1u << 1 };
	int64_t regs[3] = { 2, 14, 1 };
	int h_first[3] = { 2, 1, 3 };
	int64_t h_regs[3] = { 14, 2, 1 };

	assert_int_equal(ts_tile_operand_registers(3, axis, regs, 2, dep),
		15);
	assert_int_equal(ts_tile_operand_registers(3, h_first, h_regs, 2,
		dep), 3);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ts_dag *dag;
		ts_template *tp = template_src(ctx, "input X: f32[1, 8, 18, 18]\n"
			"input W: f32[4, 8, 3, 3]\n"
			"output C[n: 1, k: 4, h: 16, w: 16] = sum(c: 8, r: 3, "
			"s: 3) X[n, c, h + r, w + s] * W[k, c, r, s]\n",
			"zen4", &dag);
		char json[512], got[4] = { 0 };
		ts_config *c;
		ts_schedule *sch;
		ts_nest n;

		snprintf(json, sizeof(json), "{\"C.n\":[1,1,1,1],"
			"\"C.k\":%s,\"C.h\":%s,\"C.w\":%s,\"C.c\":[1,8],"
			"\"C.r\":[1,3],\"C.s\":[1,3],\"C.vec\":\"%s\","
			"\"C.par\":0,\"C.unroll\":true,"
			"\"C.cache_write\":true,\"C.pack.X\":\"none\","
			"\"C.pack.W\":\"none\"}", cases[i].k, cases[i].h,
			cases[i].w, cases[i].vec);
		c = config_of(ctx, tp, json);
		assert_true(ts_template_nest(tp, c, 0, &n));
		for (int q = 0; q < 3; q++)
			got[q] = "nkhwcrs"[n.loops[n.nloops - 3 + q].axis];
		if (strcmp(got, cases[i].order))
			fail_msg("%s: register tile ordered %s, expected %s",
				json, got, cases[i].order);
		sch = apply_checked(ctx, tp, dag, c, "register tile");
		check_nest_is_scheduled("register tile", tp, c, sch, 0);
	}
}

/* An epilogue fused into a 1x1 convolution whose tile is 9 x 16 output
 * channels (vectors of 16) is vectorised as the tile is, 16 lanes at a
 * time, not over the tile's 144 channels at once (which LLVM builds lane
 * by lane); so is a tile of 3 x 16; a tile of 16 keeps its one loop.
 * Every kernel matches the interpreter. */
static void test_template_fused_epilogue__vectors_a_register_splits(
	void **state)
{
	static const struct {
		const char *k;
		const char *want, *not;	/* in the lowered code */
	} cases[] = {
		{ "[1,1,9,16]", "vectorized for k.i.i.i in 0..16:",
		  "in 0..144:" },
		{ "[3,1,3,16]", "vectorized for k.i.i.i in 0..16:",
		  "in 0..48:" },
		{ "[9,1,1,16]", "vectorized for k.i.i in 0..16:", NULL },
	};
	ts_ctx *ctx = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ts_dag *dag;
		ts_template *tp = template_src(ctx, "input X: f32[1, 24, 8, 8]\n"
			"input W: f32[144, 24]\n"
			"C[n: 1, k: 144, h: 8, w: 8] = sum(c: 24) "
			"X[n, c, h, w] * W[k, c]\n"
			"output Y[n: 1, k: 144, h: 8, w: 8] = "
			"min(max(C[n, k, h, w], 0.0), 6.0)\n", "zen4", &dag);
		char json[768];
		const char *code;
		ts_schedule *sch;

		snprintf(json, sizeof(json), "{\"C.n\":[1,1,1,1],"
			"\"C.k\":%s,\"C.h\":[1,4,1,2],\"C.w\":[1,1,1,8],"
			"\"C.c\":[1,24],\"C.vec\":\"k\",\"C.par\":0,"
			"\"C.unroll\":true,\"C.cache_write\":false,"
			"\"C.pack.X\":\"none\",\"C.pack.W\":\"none\","
			"\"C.fuse\":true,\"Y.n\":[1,1],\"Y.k\":[144,1],"
			"\"Y.h\":[8,1],\"Y.w\":[8,1],\"Y.vec\":\"w\","
			"\"Y.par\":0,\"Y.unroll\":false}", cases[i].k);
		sch = apply_checked(ctx, tp, dag, config_of(ctx, tp, json),
			"fused epilogue");
		code = ts_func_to_string(ts_lower(ctx, dag, sch));
		if (!strstr(code, cases[i].want) ||
		    (cases[i].not && strstr(code, cases[i].not)))
			fail_msg("%s: the epilogue's vector loop is not '%s':\n%s",
				cases[i].k, cases[i].want, code);
	}
}

/* A tiling that overshoots its innermost axis runs the whole tiles
 * unguarded and the tail as a loop of its own where that tail is one
 * loop: a row sum of exp over 1000 columns in vectors of 64 (tail 40,
 * at most an eighth of the row), a 1x1 convolution over rows of 56 in
 * vectors of 16 (tail 8, a power of two).  The tail stays guarded where
 * it would be split again (tiles of 2 x 16), where it would be a vector
 * of 24 (lanes built one by one), and where the outer loop is fused
 * into the parallel loop.  An axis of the register tile other than the
 * vector axis runs its tail as a narrower tile (no vector of its own to
 * build) and the model counts no padding there: that convolution
 * vectorised along its output channels in tiles of 16 columns. */
static void test_template_tail__a_loop_where_it_is_one(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *sum, *conv;
	ts_template *ts = template_src(ctx, "input X: f32[4, 1000]\n"
		"input M: f32[4]\n"
		"output E[i: 4] = sum(k: 1000) exp(X[i, k] - M[i])\n",
		"zen4", &sum);
	ts_template *tc = template_src(ctx, "input X: f32[1, 64, 4, 56]\n"
		"input W: f32[32, 64]\n"
		"output Y[n: 1, k: 32, h: 4, w: 56] = sum(rc: 64) "
		"X[n, rc, h, w] * W[k, rc]\n", "zen4", &conv);
	const char *fs = "{\"E.i\":[4,1,1],\"E.k\":%s,\"E.vec\":\"i\","
		"\"E.par\":0,\"E.unroll\":false,\"E.cache_write\":false,"
		"\"E.rfvec\":true}";
	const char *fc = "{\"Y.n\":[1,1,1,1],\"Y.k\":[1,4,1,8],"
		"\"Y.h\":[2,2,1,1],\"Y.w\":%s,\"Y.rc\":[1,64],"
		"\"Y.vec\":\"w\",\"Y.par\":%d,\"Y.unroll\":true,"
		"\"Y.cache_write\":true,\"Y.pack.X\":\"none\","
		"\"Y.pack.W\":\"none\"}";
	const char *fk = "{\"Y.n\":[1,1,1,1],\"Y.k\":[1,2,1,16],"
		"\"Y.h\":[2,2,1,1],\"Y.w\":%s,\"Y.rc\":[1,64],"
		"\"Y.vec\":\"k\",\"Y.par\":0,\"Y.unroll\":true,"
		"\"Y.cache_write\":true,\"Y.pack.X\":\"none\","
		"\"Y.pack.W\":\"none\"}";
	ts_nest n;
	char b[512];

	snprintf(b, sizeof(b), fs, "[16,64]");
	assert_true(tail_loop(ctx, ts, sum, b));
	snprintf(b, sizeof(b), fs, "[125,8]");
	assert_false(tail_loop(ctx, ts, sum, b));	/* no tail */
	snprintf(b, sizeof(b), fc, "[4,1,1,16]", 0);
	assert_true(tail_loop(ctx, tc, conv, b));
	snprintf(b, sizeof(b), fc, "[2,2,1,16]", 0);
	assert_false(tail_loop(ctx, tc, conv, b));
	snprintf(b, sizeof(b), fc, "[2,1,1,32]", 0);
	assert_false(tail_loop(ctx, tc, conv, b));
	snprintf(b, sizeof(b), fc, "[4,1,1,16]", 4);
	assert_false(tail_loop(ctx, tc, conv, b));
	snprintf(b, sizeof(b), fk, "[4,1,1,16]");
	assert_true(tail_loop(ctx, tc, conv, b));
	assert_true(ts_template_nest(tc, ts_config_from_json(ctx, tc->space,
		b), 0, &n));
	assert_int_equal(n.padded, n.useful);
	snprintf(b, sizeof(b), fk, "[2,2,1,16]");
	assert_false(tail_loop(ctx, tc, conv, b));
}

/* A packed copy of weights blocked along the vector axis (W[k // 8, c,
 * r, s, k % 8], the layout the network pass gives them) keeps their
 * layout: the vector dimension is already last.  Moving the block index
 * last made every weight vector a gather (a 512@7 convolution ran 73 ms
 * against 4 ms unpacked).  Weights declared OIHW are still permuted so
 * that the vectors along k are contiguous; both kernels match the
 * interpreter. */
static void test_template_pack__blocked_weights_keep_their_layout(
	void **state)
{
	ts_ctx *ctx = *state;
	static const struct { const char *w, *load; int nperm; } cases[] = {
		{ "f32[4, 8, 3, 3, 8]", "W[k // 8, c, r, s, k % 8]", 0 },
		{ "f32[32, 8, 3, 3]", "W[k, c, r, s]", 4 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char src[512], json[768];
		const ts_stage_plan *p;
		ts_template *tp;
		ts_dag *dag;
		ts_config *c;
		ts_array **in, *want[1];
		int perm[8], kw = -1;

		snprintf(src, sizeof(src), "input X: f32[1, 8, 8, 8]\n"
			"input W: %s\n"
			"output Y[n: 1, k: 32, h: 6, w: 6] = sum(c: 8, r: 3, "
			"s: 3) X[n, c, h + r, w + s] * %s\n", cases[i].w,
			cases[i].load);
		tp = template_src(ctx, src, "zen3", &dag);
		assert_non_null(tp);
		p = &tp->plans[0];
		for (int k = 0; k < p->npack; k++)
			if (!strcmp(ts_tensor_name(dag->stages[0]->inputs[
			    p->pack_input[k]]), "W"))
				kw = k;
		assert_true(kw >= 0);
		snprintf(json, sizeof(json), "{\"Y.n\":[1,1,1,1],"
			"\"Y.k\":[1,2,1,16],\"Y.h\":[3,1,1,2],"
			"\"Y.w\":[3,1,1,2],\"Y.c\":[1,8],\"Y.r\":[1,3],"
			"\"Y.s\":[1,3],\"Y.vec\":\"k\",\"Y.par\":0,"
			"\"Y.unroll\":true,\"Y.cache_write\":true,"
			"\"Y.pack.X\":\"none\",\"Y.pack.W\":\"outer\"}");
		c = ts_config_from_json(ctx, tp->space, json);
		if (!c)
			fail_msg("%s: %s", json, ts_ctx_error(ctx));
		assert_int_equal(ts_template_pack_layout(tp, p, c,
			dag->stages[0]->inputs[p->pack_input[kw]], perm),
			cases[i].nperm);
		in = ts_dag_random_inputs(ctx, dag, 7);
		assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
		check_schedule(ctx, "pack", dag, ts_template_apply(tp, c), in,
			want, c);
	}
}

/* The parallel loop of a product fused into its epilogue is the first
 * of the outer tile level that runs more than once: an image's batch of
 * one, first in the declaration, took it, and the layer ran as fast on
 * two threads as on one.  A residual sum placed at root with no tiling
 * of its own runs in vectors along its channels, of the widest power of
 * two that divides them (24: 8), not as LLVM unrolls and gathers it.
 * Both kernels match the interpreter; the nest rated is the nest
 * scheduled. */
static void test_template_parallel__batch_of_one_and_root_residual(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag;
	ts_template *tp = template_src(ctx, "input A: f32[1, 8, 8, 24]\n"
		"input B: f32[1, 8, 8, 24]\n"
		"input W: f32[48, 24]\n"
		"S[n: 1, h: 8, w: 8, c: 24] = A[n, h, w, c] + B[n, h, w, c]\n"
		"C[n: 1, h: 8, w: 8, k: 48] = sum(c: 24) "
		"S[n, h, w, c] * W[k, c]\n"
		"output Y[n: 1, h: 8, w: 8, k: 48] = "
		"min(max(C[n, h, w, k], 0.0), 6.0)\n", "zen4", &dag);
	const char *json = "{\"C.n\":[1,1,1,1],\"C.h\":[2,1,1,4],"
		"\"C.w\":[2,1,1,4],\"C.k\":[1,3,1,16],\"C.c\":[1,24],"
		"\"C.vec\":\"k\",\"C.par\":1,\"C.unroll\":true,"
		"\"C.cache_write\":false,\"C.pack.S\":\"none\","
		"\"C.pack.W\":\"none\",\"C.fuse\":true,\"Y.n\":[1,1],"
		"\"Y.h\":[8,1],\"Y.w\":[8,1],\"Y.k\":[48,1],"
		"\"Y.vec\":\"k\",\"Y.par\":0,\"Y.unroll\":false,"
		"\"S.at\":\"root\"}";
	ts_config *c = config_of(ctx, tp, json);
	ts_schedule *sch = apply_checked(ctx, tp, dag, c, "parallel");
	const char *code = ts_func_to_string(ts_lower(ctx, dag, sch));
	int cs = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "C"));
	ts_nest n;

	assert_true(ts_template_nest(tp, c, cs, &n));
	assert_int_equal(n.loops[0].kind, TS_LOOP_PARALLEL);
	assert_int_equal(n.loops[0].trip, 2);
	if (!strstr(code, "vectorized for c.i in 0..8:"))
		fail_msg("the residual sum is not in vectors of 8:\n%s", code);
	if (strstr(code, "parallel for h in"))
		fail_msg("a small residual sum runs in parallel:\n%s", code);
}

/* A location stage at root that writes 256 KiB or more runs its outer
 * axis in parallel on a two-thread target (a concatenation feeding a
 * product whose tiles run on both cores stayed serial), and the model
 * rates it faster than on one; the kernel matches the interpreter. */
static void test_template_parallel__large_root_pass(void **state)
{
	ts_ctx *ctx = *state;
	const char *src = "input A: f32[1, 64, 64, 16]\n"
		"input B: f32[1, 64, 64, 16]\n"
		"input W: f32[32, 32]\n"
		"S[n: 1, h: 64, w: 64, c: 32] = select(c < 16, A[n, h, w, c], "
		"B[n, h, w, c - 16])\n"
		"output C[n: 1, h: 64, w: 64, k: 32] = sum(c: 32) "
		"S[n, h, w, c] * W[k, c]\n";
	const char *json = "{\"C.n\":[1,1,1,1],\"C.h\":[8,2,1,4],"
		"\"C.w\":[8,1,1,8],\"C.k\":[1,1,2,16],\"C.c\":[1,32],"
		"\"C.vec\":\"k\",\"C.par\":1,\"C.unroll\":true,"
		"\"C.cache_write\":true,\"C.pack.S\":\"none\","
		"\"C.pack.W\":\"none\",\"S.at\":\"root\"}";
	double t[2];

	for (int threads = 1; threads <= 2; threads++) {
		const ts_target *tg = ts_target_for_threads(ts_target_lookup(ctx,
			"zen4"), threads);
		ts_dag *dag = ts_parse_string(ctx, "root.tsl", src);
		ts_template *tp;
		ts_config *c;
		ts_schedule *sch;
		const char *code;
		int st;

		assert_non_null(dag);
		tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag), tg);
		assert_non_null(tp);
		c = config_of(ctx, tp, json);
		sch = apply_checked(ctx, tp, dag, c, "root pass");
		code = ts_func_to_string(ts_lower(ctx, dag, sch));
		st = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "S"));
		assert_int_equal(ts_template_root_parallel_axis(tp, st) >= 0,
			threads == 2);
		if ((strstr(code, "parallel for h in 0..64:") != NULL) !=
		    (threads == 2))
			fail_msg("%d threads: the pass's rows:\n%s", threads,
				code);
		t[threads - 1] = ts_model_estimate(tp, c, NULL);
	}
	assert_true(t[1] < t[0]);
}

/* A product of a vector by weights in blocks of 16 into 100 outputs,
 * its blocks the parallel loop: the 6 whole blocks run in parallel and
 * the tail of 4 as a loop of its own after them, unguarded, rather
 * than every block guarded (the model rated that so slow that such a
 * product stayed serial on two threads); it matches the interpreter. */
static void test_template_parallel__tail_after_whole_blocks(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = ts_target_for_threads(ts_target_lookup(ctx,
		"zen4"), 2);
	ts_dag *dag = ts_parse_string(ctx, "gemv.tsl",
		"input X: f32[1, 256]\n"
		"input W: f32[7, 256, 16]\n"
		"output Y[n: 1, o: 100] = sum(k: 256) "
		"X[n, k] * W[o // 16, k, o % 16]\n");
	ts_template *tp;
	ts_config *c;
	ts_schedule *sch;
	ts_nest n;
	const char *code;

	assert_non_null(dag);
	tp = ts_template_new(ctx, dag, ts_analyze_dag(ctx, dag), tg);
	assert_non_null(tp);
	c = config_of(ctx, tp, "{\"Y.n\":[1,1,1],\"Y.o\":[7,1,16],"
		"\"Y.k\":[16,16],\"Y.vec\":\"o\",\"Y.par\":1,"
		"\"Y.unroll\":true,\"Y.cache_write\":true}");
	sch = apply_checked(ctx, tp, dag, c, "parallel blocks, tail after");
	assert_true(ts_template_nest(tp, c, 0, &n));
	assert_int_equal(n.tail_loop, 1);
	assert_false(n.guarded);
	code = ts_func_to_string(ts_lower(ctx, dag, sch));
	if (!strstr(code, "parallel for o.o in 0..6:"))
		fail_msg("the whole blocks not in parallel:\n%s", code);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_template_apply__every_sample_is_valid),
		TS_TEST(test_template_default_and_naive__valid),
		TS_TEST(test_template_kernels__match_interpreter),
		TS_TEST(test_template_kernels__match_for_any_declaration),
		TS_TEST(test_template_rules__follow_the_classes),
		TS_TEST(test_template_rules__one_table_for_cpu_and_gpu),
		TS_TEST(test_template_nest__is_the_scheduled_nest),
		TS_TEST(test_template_nest__is_lowered_for_any_declaration),
		TS_TEST(test_template_rfvec__where_vectors_fill),
		TS_TEST(test_template_fuse__through_inlined_stages),
		TS_TEST(test_template_rows__groups_and_results),
		TS_TEST(test_template_tail__a_loop_where_it_is_one),
		TS_TEST(test_template_unroll__bounded_by_the_registers),
		TS_TEST(test_template_register_tile__ordered_for_its_operands),
		TS_TEST(test_template_fused_epilogue__vectors_a_register_splits),
		TS_TEST(test_template_parallel__batch_of_one_and_root_residual),
		TS_TEST(test_template_parallel__large_root_pass),
		TS_TEST(test_template_parallel__tail_after_whole_blocks),
		TS_TEST(test_template_pack__blocked_weights_keep_their_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
