/* The ONNX importer on models built here: what a good model becomes, the
 * folding of shape arithmetic, symbolic dimensions, and one located
 * message for each kind of bad input. */
#include <config.h>

#include "tests/common.h"
#include "tests/onnx/builder.h"

#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE ((const char *const[]){ NULL })

static ts_onnx_model *import(ts_ctx *ctx, struct mb *b,
	const ts_onnx_options *opt)
{
	size_t len;
	uint8_t *bytes = mb_pack(b, &len);

	return ts_onnx_import_bytes(ctx, "m.onnx", bytes, len, opt);
}

/* Import "b" expecting failure, with every piece of "want" in the
 * message. */
static void expect_error(ts_ctx *ctx, struct mb *b, const char *const *want)
{
	const char *e;

	assert_null(import(ctx, b, NULL));
	e = ts_ctx_error(ctx);
	assert_non_null(e);
	for (; *want; want++)
		if (!strstr(e, *want))
			fail_msg("'%s' not in the message: %s", *want, e);
}

/* y = relu(x @ W + bias): weights from initializers, checked in the
 * interpreter against the same sum written here. */
static void test_onnx__gemm_relu__matches_reference(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[2] = { 2, 3 }, wd[2] = { 3, 4 }, bd[1] = { 4 };
	static const float w[12] = { 1, -2, 3, 0.5f, -1, 2, 0, 1, 0.25f, 1,
		-3, 2 };
	static const float bias[4] = { 0.5f, -0.5f, 1, 0 };
	ts_onnx_model *m;
	ts_array **in, *out[1];
	ts_dag *dag;

	mb_input(b, "x", 2, xd, NULL);
	mb_weight(b, "W", 2, wd, w);
	mb_weight(b, "bias", 1, bd, bias);
	mb_node(b, "Gemm", "fc", L("x", "W", "bias"), L("h"));
	mb_node(b, "Relu", "act", L("h"), L("y"));
	mb_output(b, "y");
	assert_non_null(m = import(ctx, b, NULL));
	dag = ts_onnx_dag(m);
	assert_int_equal(ts_onnx_nweights(m), 2);
	assert_non_null(strstr(ts_onnx_source(m), "# node 0 'fc': Gemm()"));
	assert_non_null(in = ts_onnx_inputs(ctx, m, 7));
	assert_int_equal(ts_eval(ctx, dag, in, out), TS_OK);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			const ts_array *x = NULL;
			float s = 0;

			for (int k = 0; k < dag->ninputs; k++)
				if (!strcmp(dag->inputs[k]->name, "x"))
					x = in[k];
			for (int k = 0; k < 3; k++)
				s += (float)ts_array_get(x, i * 3 + k) *
					w[k * 4 + j];
			s += bias[j];
			assert_float_equal(ts_array_get(out[0], i * 4 + j),
				s > 0 ? s : 0, 1e-5);
		}
}

/* Reshape to the shape of another tensor, as exporters write it: the
 * Shape is folded at import, and the reshape is one stage. */
static void test_onnx__shape_arithmetic__is_folded(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[4] = { 2, 3, 4, 5 }, zd[2] = { 6, 20 };
	ts_onnx_model *m;

	mb_input(b, "x", 4, xd, NULL);
	mb_input(b, "z", 2, zd, NULL);
	mb_node(b, "Shape", "s", L("z"), L("zshape"));
	mb_node(b, "Reshape", "flat", L("x", "zshape"), L("y"));
	mb_output(b, "y");
	assert_non_null(m = import(ctx, b, NULL));
	assert_null(strstr(ts_onnx_source(m), "Shape("));
	assert_null(strstr(ts_onnx_source(m), "weight"));
	assert_non_null(strstr(ts_onnx_source(m), "output y[i0: 6, i1: 20]"));
	assert_int_equal(ts_onnx_dag(m)->nstages, 1);
}

/* A symbolic batch: refused with the names to fix, then fixed either
 * way --shape allows. */
static void test_onnx__symbolic_dims__need_shape(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[2] = { -1, 8 };
	const char *by_dim[1] = { "batch=3" }, *by_input[1] = { "x=5x8" };
	ts_onnx_options opt = { 0 };
	ts_onnx_model *m;

	mb_input(b, "x", 2, xd, "batch");
	mb_node(b, "Relu", "r", L("x"), L("y"));
	mb_output(b, "y");
	expect_error(ctx, b, L("m.onnx", "graph input 'x'", "'batch'",
		"--shape x=DIMS", "--shape batch=N"));
	opt.nshapes = 1;
	opt.shapes = by_dim;
	assert_non_null(m = import(ctx, b, &opt));
	assert_int_equal(ts_onnx_dag(m)->inputs[0]->shape[0], 3);
	opt.shapes = by_input;
	assert_non_null(m = import(ctx, b, &opt));
	assert_int_equal(ts_onnx_dag(m)->inputs[0]->shape[0], 5);
}

static void test_onnx__bad_bytes__say_not_a_model(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[2] = { 2, 8 };
	size_t len;
	uint8_t *bytes;

	assert_null(ts_onnx_import_bytes(ctx, "junk.onnx", "\xff\xff\xff\x01",
		4, NULL));
	assert_non_null(strstr(ts_ctx_error(ctx), "junk.onnx: not an ONNX "
		"model"));
	mb_input(b, "x", 2, xd, NULL);
	mb_node(b, "Relu", "r", L("x"), L("y"));
	mb_output(b, "y");
	bytes = mb_pack(b, &len);
	/* Cut inside the first field's payload. */
	assert_null(ts_onnx_import_bytes(ctx, "cut.onnx", bytes, 5, NULL));
	assert_non_null(strstr(ts_ctx_error(ctx), "cut.onnx: not an ONNX "
		"model (the file is truncated"));
	assert_null(ts_onnx_import(ctx, "/nonexistent/m.onnx", NULL));
	assert_non_null(strstr(ts_ctx_error(ctx), "/nonexistent/m.onnx: No "
		"such file"));
}

static void test_onnx__wrong_attribute_type__names_node(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[1] = { 4 };
	Onnx__NodeProto *n;

	mb_input(b, "x", 1, xd, NULL);
	n = mb_node(b, "LeakyRelu", "leaky", L("x"), L("y"));
	mb_attr_int(n, "alpha", 2);
	mb_output(b, "y");
	expect_error(ctx, b, L("m.onnx: node 0 'leaky' (LeakyRelu): "
		"attribute 'alpha' must be a FLOAT, not INT"));
}

static void test_onnx__missing_initializer__names_input(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[1] = { 4 };

	mb_input(b, "x", 1, xd, NULL);
	mb_node(b, "Add", "add", L("x", "w"), L("y"));
	mb_output(b, "y");
	expect_error(ctx, b, L("node 0 'add' (Add): input 1 'w' is neither a "
		"graph input, an initializer nor an earlier node's output"));
}

static void test_onnx__unsupported_op_and_opset(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13), *old = mb_new(3), *new = mb_new(18);
	static const int64_t xd[1] = { 4 };

	mb_input(b, "x", 1, xd, NULL);
	mb_node(b, "Frobnicate", "f", L("x"), L("y"));
	mb_output(b, "y");
	expect_error(ctx, b, L("node 0 'f' (Frobnicate): the operator "
		"Frobnicate is not supported"));
	/* Those exported models bring say why. */
	b->graph.node[0]->op_type = "Loop";
	expect_error(ctx, b, L("node 0 'f' (Loop): the operator Loop is not "
		"supported: loops over a subgraph are not unrolled at import"));
	b->graph.node[0]->op_type = "SequenceConstruct";
	expect_error(ctx, b, L("(SequenceConstruct): the operator "
		"SequenceConstruct is not supported: sequences of tensors are "
		"not values of a program"));
	/* Before opset 6, only operators whose meaning has not changed. */
	mb_input(old, "x", 1, xd, NULL);
	mb_node(old, "Relu", "r", L("x"), L("h"));
	mb_node(old, "Add", "a", L("h", "x"), L("y"));
	mb_output(old, "y");
	expect_error(ctx, old, L("node 1 'a' (Add): Add is supported from "
		"opset 6 (the model imports opset 3)"));
	old->graph.n_node = 1;
	old->graph.output[0]->name = "h";
	assert_non_null(import(ctx, old, NULL));
	mb_input(new, "x", 1, xd, NULL);
	mb_node(new, "Relu", "r", L("x"), L("y"));
	mb_output(new, "y");
	expect_error(ctx, new, L("m.onnx: opset 18 is not supported (6 to 17 "
		"are, and some operators of 1 to 5)"));
}

static void test_onnx__bad_shapes__are_located(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13), *c = mb_new(13);
	static const int64_t ad[2] = { 2, 3 }, bd[2] = { 4, 5 }, xd[1] = { 3 },
		yd[1] = { 4 };

	mb_input(b, "a", 2, ad, NULL);
	mb_input(b, "b", 2, bd, NULL);
	mb_node(b, "MatMul", "mm", L("a", "b"), L("y"));
	mb_output(b, "y");
	expect_error(ctx, b, L("node 0 'mm' (MatMul): inner dimensions "
		"differ: 3 and 4"));
	mb_input(c, "x", 1, xd, NULL);
	mb_input(c, "z", 1, yd, NULL);
	mb_node(c, "Add", NULL, L("x", "z"), L("y"));
	mb_output(c, "y");
	expect_error(ctx, c, L("node 0 (Add): shapes do not broadcast: "
		"dimension 0 is 3 and 4"));
}

static void test_onnx__outputs__checked(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13), *c = mb_new(13);
	static const int64_t xd[1] = { 3 };
	ts_onnx_model *m;

	mb_input(b, "x", 1, xd, NULL);
	mb_node(b, "Relu", "r", L("x"), L("y"));
	mb_output(b, "nothing");
	expect_error(ctx, b, L("graph output 'nothing' is computed by no "
		"node"));
	/* An input that is also an output, and a value listed twice. */
	mb_input(c, "x", 1, xd, NULL);
	mb_node(c, "Relu", "r", L("x"), L("y"));
	mb_output(c, "x");
	mb_output(c, "y");
	mb_output(c, "y");
	assert_non_null(m = import(ctx, c, NULL));
	assert_int_equal(ts_onnx_noutputs(m), 3);
	assert_int_equal(ts_onnx_dag(m)->noutputs, 3);
}

/* NonZero on a value computed at run time: refused with the reason,
 * as PyTorch exports x[mask] and torch.nonzero (detection models). */
static void test_onnx__nonzero_at_run_time__says_why(void **state)
{
	ts_ctx *ctx = *state;
	struct mb *b = mb_new(13);
	static const int64_t xd[1] = { 4 };

	mb_input(b, "x", 1, xd, NULL);
	mb_node(b, "NonZero", "nz", L("x"), L("y"));
	mb_output(b, "y");
	expect_error(ctx, b, L("m.onnx: node 0 'nz' (NonZero): the input "
		"(input 0, 'x') must be known at import, not computed at run "
		"time: the output's shape depends on its values"));
}

/* y = If(c): Relu(x) then, an unsupported op else; the condition "c" is
 * "cmp" of x and x (run time) or of Size(x) and Size(x) (known). */
static struct mb *if_model(const char *cmp, bool known)
{
	struct mb *b = mb_new(13), *then = mb_new(13), *other = mb_new(13);
	static const int64_t xd[2] = { 2, 3 };
	Onnx__NodeProto *n;

	mb_input(b, "x", 2, xd, NULL);
	mb_node(b, "Size", "size", L("x"), L("s"));
	mb_node(b, cmp, "cmp", known ? L("s", "s") : L("x", "x"), L("c"));
	n = mb_node(b, "If", "choose", L("c"), L("y"));
	mb_node(then, "Relu", "r", L("x"), L("t"));
	mb_output(then, "t");
	mb_node(other, "Frobnicate", "f", L("x"), L("e"));
	mb_output(other, "e");
	mb_attr_graph(n, "then_branch", then);
	mb_attr_graph(n, "else_branch", other);
	mb_output(b, "y");
	return b;
}

/* If: a condition computed at run time is refused; a known one lowers
 * the branch it takes (only that one), whose errors name the If and the
 * node inside. */
static void test_onnx__if__needs_a_known_condition(void **state)
{
	ts_ctx *ctx = *state;
	ts_onnx_model *m;

	expect_error(ctx, if_model("Greater", false), L("m.onnx: node 2 "
		"'choose' (If): the condition (input 0, 'c') must be a single "
		"value known at import"));
	assert_non_null(m = import(ctx, if_model("Equal", true), NULL));
	assert_non_null(strstr(ts_onnx_source(m), "output y[i0: 2, i1: 3]"));
	expect_error(ctx, if_model("Less", true), L("m.onnx: node 2 'choose' "
		"(If): in its else_branch: node 0 'f' (Frobnicate): the "
		"operator Frobnicate is not supported"));
}

/* An If in the then branch of an If, "depth" times, on the same known
 * condition; the innermost branch is Relu(x), every else branch Neg(x)
 * (not the then branch again: the packed size would double with each
 * level). */
static struct mb *nested_ifs(int depth)
{
	struct mb *b = mb_new(13), *g = b, *other = mb_new(13);
	static const int64_t xd[1] = { 3 };

	mb_node(other, "Neg", "neg", L("x"), L("e"));
	mb_output(other, "e");
	mb_input(b, "x", 1, xd, NULL);
	mb_node(b, "Size", "size", L("x"), L("s"));
	mb_node(b, "Equal", "eq", L("s", "s"), L("c"));
	for (int k = 0; k < depth; k++) {
		struct mb *then = mb_new(13);
		char *out = calloc(16, 1);
		Onnx__NodeProto *n;

		snprintf(out, 16, "y%d", k);
		n = mb_node(g, "If", out, L("c"), ((const char *[]){ out,
			NULL }));
		mb_attr_graph(n, "then_branch", then);
		mb_attr_graph(n, "else_branch", other);
		mb_output(g, out);
		g = then;
	}
	mb_node(g, "Relu", "r", L("x"), L("t"));
	mb_output(g, "t");
	return b;
}

/* Nested Ifs lower to the innermost branch, up to a depth that keeps a
 * crafted model from exhausting the stack. */
static void test_onnx__nested_ifs__are_bounded(void **state)
{
	ts_ctx *ctx = *state;

	assert_non_null(import(ctx, nested_ifs(8), NULL));
	expect_error(ctx, nested_ifs(40), L("(If): in its then_branch: ",
		"Ifs nested more than 32 deep"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_onnx__gemm_relu__matches_reference,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__shape_arithmetic__is_folded,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__symbolic_dims__need_shape,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__bad_bytes__say_not_a_model,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__wrong_attribute_type__names_node,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__missing_initializer__names_input,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__unsupported_op_and_opset,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__bad_shapes__are_located,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__outputs__checked,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__nonzero_at_run_time__says_why,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__if__needs_a_known_condition,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_onnx__nested_ifs__are_bounded,
			ts_test_setup, ts_test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
