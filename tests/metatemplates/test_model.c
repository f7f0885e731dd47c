/* The analytical model and the template agree on what a configuration
 * runs: packs that are made, loops LLVM vectorizes itself, accumulators
 * held in registers, operands that move a page a step.  Each case rates
 * two configurations of a catalogue operator at its real size on a
 * shipped AVX-512 description and checks their order. */
#include "tests/common.h"

#include <tessel/tessel.h>

#include "examples/catalogue.h"

/* The template of catalogue entry "name" at its real size for the
 * shipped description "target", in "ctx". */
static ts_template *template_real(ts_ctx *ctx, const char *name,
	const char *target)
{
	const struct ts_catalogue_entry *e = ts_catalogue_find(name);
	ts_target *tg = ts_target_lookup(ctx, target);
	ts_dag *dag;
	ts_dag_info *info;

	assert_non_null(e);
	assert_non_null(tg);
	dag = e->build(ctx, TS_SIZE_REAL);
	assert_non_null(dag);
	info = ts_analyze_dag(ctx, dag);
	assert_non_null(info);
	return ts_template_new(ctx, dag, info, tg);
}

/* The template of the declaration "text" for the target "tg", in
 * "ctx". */
static ts_template *template_on(ts_ctx *ctx, const char *text,
	const ts_target *tg)
{
	ts_dag *dag = ts_parse_string(ctx, "text.tsl", text);
	ts_dag_info *info;

	assert_non_null(tg);
	assert_non_null(dag);
	info = ts_analyze_dag(ctx, dag);
	assert_non_null(info);
	return ts_template_new(ctx, dag, info, tg);
}

/* The shipped description "name" for "threads" cores. */
static const ts_target *named(ts_ctx *ctx, const char *name, int threads)
{
	return ts_target_for_threads(ts_target_lookup(ctx, name), threads);
}

/* The template of "text" for the shipped description "target". */
static ts_template *template_text(ts_ctx *ctx, const char *text,
	const char *target)
{
	return template_on(ctx, text, ts_target_lookup(ctx, target));
}

/* The estimate of "json" in "tp"'s space, which must parse and apply. */
static double rate(ts_template *tp, const char *json)
{
	ts_config *c = ts_config_from_json(tp->ctx, tp->space, json);

	if (!c)
		fail_msg("%s: %s", json, ts_ctx_error(tp->ctx));
	assert_non_null(ts_template_apply(tp, c));
	return ts_model_estimate(tp, c, NULL);
}

/* "fmt" with its conversions filled (a buffer of "out"). */
static const char *fill(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, n, fmt, ap);
	va_end(ap);
	return out;
}

/* Number of steps of kind "k" in the schedule of "json" in "tp". */
static int count_steps(ts_template *tp, const char *json, ts_step_kind k)
{
	ts_config *c = ts_config_from_json(tp->ctx, tp->space, json);
	ts_schedule *sch;
	int n = 0;

	assert_non_null(c);
	sch = ts_template_apply(tp, c);
	assert_non_null(sch);
	for (int i = 0; i < sch->nsteps; i++)
		n += sch->steps[i].kind == k;
	return n;
}

static void test_model_direct__plain_rows_beat_masked_vectors(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "relu", "skylake-sp");
	/* rows of 56: a loop LLVM vectorizes, against four masked vectors
	 * of 14 under 32 unrolled channels */
	double plain = rate(tp, "{\"Y.n\":[1,1],\"Y.c\":[64,1],"
		"\"Y.h\":[56,1],\"Y.w\":[1,56],\"Y.vec\":\"none\","
		"\"Y.par\":0,\"Y.unroll\":false}");
	double masked = rate(tp, "{\"Y.n\":[1,1],\"Y.c\":[2,32],"
		"\"Y.h\":[56,1],\"Y.w\":[4,14],\"Y.vec\":\"w\","
		"\"Y.par\":0,\"Y.unroll\":true}");
	/* the same rows cut into 28 (LLVM unrolls them whole, then
	 * vectorizes the loop around them, with gathers) */
	double short_rows = rate(tp, "{\"Y.n\":[1,1],\"Y.c\":[64,1],"
		"\"Y.h\":[56,1],\"Y.w\":[2,28],\"Y.vec\":\"none\","
		"\"Y.par\":0,\"Y.unroll\":false}");

	assert_true(plain < masked);
	assert_true(plain < short_rows);
}

static void test_model_pack__fused_anchor_has_no_outer_pack(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "dense_bias_relu", "skylake-sp");
	const char *outer = "{\"D.i\":[1,1,2,64],\"D.o\":[1,32,8,4],"
		"\"D.k\":[1,1024],\"D.vec\":\"i\",\"D.par\":0,"
		"\"D.unroll\":true,\"D.cache_write\":true,"
		"\"D.pack.X\":\"outer\",\"D.pack.W\":\"none\",\"D.fuse\":true,"
		"\"Y.i\":[1,128],\"Y.o\":[1,1024],\"Y.vec\":\"none\","
		"\"Y.par\":0,\"Y.unroll\":false}";
	const char *none = "{\"D.i\":[1,1,2,64],\"D.o\":[1,32,8,4],"
		"\"D.k\":[1,1024],\"D.vec\":\"i\",\"D.par\":0,"
		"\"D.unroll\":true,\"D.cache_write\":true,"
		"\"D.pack.X\":\"none\",\"D.pack.W\":\"none\",\"D.fuse\":true,"
		"\"Y.i\":[1,128],\"Y.o\":[1,1024],\"Y.vec\":\"none\","
		"\"Y.par\":0,\"Y.unroll\":false}";
	const ts_stage_plan *p = NULL;
	ts_config *c = ts_config_from_json(ctx, tp->space, outer);

	for (int s = 0; s < tp->dag->nstages; s++)
		if (tp->plans[s].knob_fuse >= 0)
			p = &tp->plans[s];
	assert_non_null(p);
	assert_non_null(c);
	for (int k = 0; k < p->npack; k++)
		assert_int_equal(ts_template_pack_where(tp, p, c, k), 0);
	assert_int_equal(count_steps(tp, outer, TS_STEP_CACHE_READ), 0);
	assert_float_equal(rate(tp, outer), rate(tp, none), 0);
}

static void test_model_matmul__page_strided_operand_is_packed(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "matmul_128_768_3072",
		"skylake-sp");
	/* B's rows are 12 KiB apart: unpacked, every step of k is a new
	 * page; packed into panels of 128 columns it is contiguous */
	const char *fmt = "{\"C.i\":[1,1,16,8],\"C.j\":[1,24,4,32],"
		"\"C.k\":[1,768],\"C.vec\":\"j\",\"C.par\":0,"
		"\"C.unroll\":true,\"C.cache_write\":true,"
		"\"C.pack.A\":\"none\",\"C.pack.B\":\"%s\"}";
	char a[512], b[512];
	double unpacked = rate(tp, fill(a, sizeof(a), fmt, "none"));
	double packed = rate(tp, fill(b, sizeof(b), fmt, "inner"));

	assert_true(packed < unpacked);
}

static void test_model_matmul__strided_accumulator_costs(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "matmul_128_768_3072",
		"skylake-sp");
	/* the same register tile, vectors along j (C's rows) or along i
	 * (through a transposed copy of A; C's accumulators are then
	 * gathered and scattered around every reduction tile) */
	double along_j = rate(tp, "{\"C.i\":[1,1,16,8],\"C.j\":[1,24,4,32],"
		"\"C.k\":[3,256],\"C.vec\":\"j\",\"C.par\":0,"
		"\"C.unroll\":true,\"C.cache_write\":true,"
		"\"C.pack.A\":\"none\",\"C.pack.B\":\"inner\"}");
	double along_i = rate(tp, "{\"C.i\":[1,1,4,32],\"C.j\":[1,128,2,12],"
		"\"C.k\":[16,48],\"C.vec\":\"i\",\"C.par\":0,"
		"\"C.unroll\":true,\"C.cache_write\":true,"
		"\"C.pack.A\":\"outer\",\"C.pack.B\":\"none\"}");

	assert_true(along_j < along_i);
}

static void test_model_int8__reduction_vectorised_along_itself(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_text(ctx,
		"input A: i8[256, 256]\n"
		"input B: i8[256, 256]\n"
		"Acc[i: 256, j: 256] = sum(k: 256) i32(A[i, k]) * i32(B[j, k])\n"
		"output Q[i: 256, j: 256] = i8(clamp(round(f64(Acc[i, j]) * "
		"0.3157), -128.0, 127.0))\n", "skylake-sp");
	/* Without a vector axis LLVM vectorises the loop over k and folds
	 * its accumulator for every element; along j the accumulators stay
	 * in registers (measured on an AVX-512 host: 1.02 against 0.69 ms) */
	const char *q = "\"Q.i\":[8,32],\"Q.j\":[256,1],\"Q.vec\":\"none\","
		"\"Q.par\":0,\"Q.unroll\":true}";
	char along_k[512], along_j[512];

	snprintf(along_k, sizeof(along_k), "{\"Acc.i\":[4,1,64,1],"
		"\"Acc.j\":[1,16,16,1],\"Acc.k\":[1,256],\"Acc.vec\":\"none\","
		"\"Acc.par\":0,\"Acc.unroll\":false,\"Acc.cache_write\":false,"
		"\"Acc.pack.A\":\"none\",\"Acc.pack.B\":\"outer\","
		"\"Acc.fuse\":true,%s", q);
	snprintf(along_j, sizeof(along_j), "{\"Acc.i\":[1,1,32,8],"
		"\"Acc.j\":[4,1,2,32],\"Acc.k\":[1,256],\"Acc.vec\":\"j\","
		"\"Acc.par\":0,\"Acc.unroll\":true,\"Acc.cache_write\":true,"
		"\"Acc.pack.A\":\"outer\",\"Acc.pack.B\":\"inner\","
		"\"Acc.fuse\":true,%s", q);
	assert_true(rate(tp, along_j) * 1.5 < rate(tp, along_k));
}

/* A 3x3 convolution over 64 channels at 56x56 whose operands are "dt". */
static ts_template *conv_of(ts_ctx *ctx, const char *dt)
{
	char text[512];

	snprintf(text, sizeof(text), "input X: %s[64, 58, 58]\n"
		"input Wt: %s[64, 64, 3, 3]\n"
		"Cv[k: 64, y: 56, x: 56] = sum(c: 64, r: 3, q: 3)\n"
		"  f32(X[c, y + r, x + q]) * f32(Wt[k, c, r, q])\n"
		"output Y[k: 64, y: 56, x: 56] = clamp(Cv[k, y, x], -2.0, 2.0)\n",
		dt, dt);
	return template_text(ctx, text, "zen3");
}

static void test_model_f16__converted_operands_cost(void **state)
{
	ts_ctx *ctx = *state;
	/* The same tile (4 k by 2 y by 8 x) over f16 operands converts 4
	 * weights and 2 input vectors per 8 FMAs; over f32 none (measured
	 * for this target on an AVX-512 host: an f16 tile of 8 k by 8 x,
	 * converting 9 per 8, ran 2x slower than this one) */
	const char *cfg = "{\"Cv.k\":[1,2,8,4],\"Cv.y\":[2,7,2,2],"
		"\"Cv.x\":[7,1,1,8],\"Cv.c\":[1,64],\"Cv.r\":[1,3],"
		"\"Cv.q\":[1,3],\"Cv.vec\":\"x\",\"Cv.par\":0,"
		"\"Cv.unroll\":true,\"Cv.cache_write\":true,"
		"\"Cv.pack.X\":\"none\",\"Cv.pack.Wt\":\"none\","
		"\"Cv.fuse\":true,\"Y.k\":[8,8],\"Y.y\":[28,2],\"Y.x\":[8,7],"
		"\"Y.vec\":\"none\",\"Y.par\":0,\"Y.unroll\":true}";

	assert_true(rate(conv_of(ctx, "f16"), cfg) >
		1.3 * rate(conv_of(ctx, "f32"), cfg));
}

static void test_model_padding__short_rows_in_tiles_cost(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_text(ctx,
		"input X: f16[64, 112, 112]\n"
		"P[c: 64, y: 114, x: 114] = select(y >= 1 && y < 113 && x >= 1 "
		"&& x < 113, X[c, y - 1, x - 1], 0.0)\n"
		"output Y[c: 64, y: 56, x: 56] = (sum(r: 3, q: 3) "
		"P[c, y * 2 + r, x * 2 + q]) / 9.0\n", "zen3");
	/* The padding computed for every output's 3x3 window, nine
	 * elements in rows of three, against once at root (measured for
	 * this target on an AVX-512 host: 2.8 against 0.9 ms) */
	const char *fmt = "{\"Y.sum0.c\":[64,1,1],\"Y.sum0.y\":[56,1,1],"
		"\"Y.sum0.x\":[56,1,1],\"Y.sum0.r\":[3,1],\"Y.sum0.q\":[3,1],"
		"\"Y.sum0.vec\":\"none\",\"Y.sum0.par\":0,"
		"\"Y.sum0.unroll\":false,\"Y.sum0.cache_write\":false,"
		"\"Y.c\":[64,1],\"Y.y\":[56,1],\"Y.x\":[56,1],"
		"\"Y.vec\":\"none\",\"Y.par\":0,\"Y.unroll\":false,"
		"\"P.at\":\"%s\"}";
	char tiles[768], root[768];

	fill(tiles, sizeof(tiles), fmt, "outer");
	fill(root, sizeof(root), fmt, "root");
	assert_true(rate(tp, root) < rate(tp, tiles));
}

/* A 3x3 average pooling vectorised along its rows: a tile of eight
 * output rows unrolled under the window loads each input row once for
 * the rows that share it (10 rows, not 24), and LLVM unrolls the
 * window's short loops around the tile whole; one row a tile loads
 * nine vectors for each (measured on a Zen 4: 0.049 against 0.084 ms
 * one row a tile; the model rated the two alike).  The padded copy of
 * 16 channels a tile (67 KiB) leaves L1 where one channel (4 KiB)
 * stays (0.061 against 0.049 ms). */
static void test_model_window__rows_shared_in_unrolled_tile(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_on(ctx, "input X: f32[1, 64, 56, 56]\n"
		"output Y[n: 1, c: 64, h: 56, w: 56] = sum(r: 3, s: 3) "
		"select(h + r - 1 >= 0 && h + r - 1 < 56 && w + s - 1 >= 0 && "
		"w + s - 1 < 56, X[n, c, h + r - 1, w + s - 1], 0.0) / 9.0\n",
		named(ctx, "zen4", 1));
	const char *fmt = "{\"Y.n\":[1,1,1],\"Y.c\":%s,\"Y.h\":%s,"
		"\"Y.w\":[4,1,16],\"Y.r\":[1,3],\"Y.s\":[3,1],"
		"\"Y.vec\":\"w\",\"Y.par\":0,\"Y.unroll\":true,"
		"\"Y.cache_write\":true,\"Y.pad0.at\":\"outer\"}";
	char eight[512], one[512], wide[512];

	fill(eight, sizeof(eight), fmt, "[64,1,1]", "[1,7,8]");
	fill(one, sizeof(one), fmt, "[64,1,1]", "[1,56,1]");
	fill(wide, sizeof(wide), fmt, "[4,16,1]", "[1,7,8]");
	assert_true(rate(tp, eight) * 1.2 < rate(tp, one));
	assert_true(rate(tp, eight) * 1.1 < rate(tp, wide));
}

/* The padding of a 3x3 average pooling inlined into its vectors of 16
 * (8 for an AVX2 target) is a masked load after a compare, rated about
 * as its copy in the tiles (measured: inlined 0.063 ms on a Zen 4 and
 * 0.082 ms for an AVX2 target, in tiles 0.072 and 0.116 ms; it was rated
 * 3x slower, as a tail's partial vectors). */
static void test_model_padding__inlined_into_vectors(void **state)
{
	static const char *const targets[][2] = {
		{ "zen4", "[4,1,16]" }, { "zen3", "[7,1,8]" } };
	ts_ctx *ctx = *state;
	const char *fmt = "{\"Y.sum0.n\":[1,1,1],\"Y.sum0.c\":[32,1,2],"
		"\"Y.sum0.h\":[1,14,4],\"Y.sum0.w\":%s,\"Y.sum0.r\":[3,1],"
		"\"Y.sum0.s\":[1,3],\"Y.sum0.vec\":\"w\",\"Y.sum0.par\":0,"
		"\"Y.sum0.unroll\":true,\"Y.sum0.cache_write\":true,"
		"\"Y.n\":[1,1],\"Y.c\":[64,1],\"Y.h\":[56,1],\"Y.w\":[56,1],"
		"\"Y.vec\":\"h\",\"Y.par\":0,\"Y.unroll\":true,"
		"\"Y.sum0.pad0.at\":\"%s\"}";

	for (int t = 0; t < 2; t++) {
		ts_template *tp = template_real(ctx, "avg_pool",
			targets[t][0]);
		char in[768], tiles[768];
		fill(in, sizeof(in), fmt, targets[t][1], "inline");
		fill(tiles, sizeof(tiles), fmt, targets[t][1], "outer");
		assert_true(rate(tp, in) < 1.2 * rate(tp, tiles));
	}
}

/* A dense layer over weights blocked by 16 (LeNet's first, 800 to 500)
 * reads them along o % 16 in vectors of 16 that start on lines: not
 * counted as straddling, its serial tile is rated faster than two
 * threads over unaligned-rated vectors (measured on a Zen 4: 0.026
 * against 0.063 ms; counted straddling, the model took the second). */
static void test_model_blocked__aligned_rows_do_not_straddle(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_on(ctx, "input P2: f32[1, 50, 4, 4]\n"
		"input W3: f32[32, 50, 4, 4, 16]\n"
		"output D1[n: 1, o: 500] = sum(c: 50, h: 4, w: 4) "
		"P2[n, c, h, w] * W3[o // 16, c, h, w, o % 16]\n",
		named(ctx, "zen4", 2));
	const char *serial = "{\"D1.n\":[1,1,1],\"D1.o\":[32,1,16],"
		"\"D1.c\":[50,1],\"D1.h\":[4,1],\"D1.w\":[2,2],"
		"\"D1.vec\":\"o\",\"D1.par\":0,\"D1.unroll\":true,"
		"\"D1.cache_write\":true}";
	const char *two = "{\"D1.n\":[1,1,1],\"D1.o\":[4,8,16],"
		"\"D1.c\":[50,1],\"D1.h\":[4,1],\"D1.w\":[4,1],"
		"\"D1.vec\":\"o\",\"D1.par\":2,\"D1.unroll\":false,"
		"\"D1.cache_write\":false}";

	assert_true(rate(tp, serial) < rate(tp, two));
}

static void test_model_tile__serial_register_tile_is_slow(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "matmul", "skylake-sp");
	const char *fmt = "{\"C.i\":[1,8,16,8],\"C.j\":[8,4,1,32],"
		"\"C.k\":[1,1024],\"C.vec\":\"j\",\"C.par\":0,"
		"\"C.unroll\":%s,\"C.cache_write\":true,"
		"\"C.pack.A\":\"none\",\"C.pack.B\":\"outer\"}";
	char a[512], b[512];

	assert_true(rate(tp, fill(a, sizeof(a), fmt, "true")) * 2 <
		rate(tp, fill(b, sizeof(b), fmt, "false")));
}

/* A loop whose split overshoots its axis keeps the tail's guard in its
 * body when its outer loop is fused into the parallel loop, and LLVM
 * does not vectorize it: a softmax's output stage over rows of 1000,
 * split 16 x 64 with no vector axis and both loops parallel, is rated
 * slower than the row unsplit (measured on a Zen 4 host: 0.189 ms
 * against 0.089 ms for the whole softmax).  With its outer loop serial
 * the tail runs as a loop of its own, the 15 whole tiles are unguarded,
 * and the split is rated as the whole row (measured 0.088 ms). */
static void test_model_implicit__guarded_split_stays_scalar(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = named(ctx, "sapphire-rapids", 1);
	ts_template *tp = template_on(ctx, "input X: f32[128, 1000]\n"
		"M[i: 128] = max(k: 1000) X[i, k]\n"
		"E[i: 128] = sum(k: 1000) exp(X[i, k] - M[i])\n"
		"output Y[i: 128, j: 1000] = exp(X[i, j] - M[i]) / E[i]\n",
		tg);
	const char *fmt = "{\"M.i\":[32,1,4],\"M.k\":[16,64],\"M.vec\":"
		"\"i\",\"M.par\":0,\"M.unroll\":false,\"M.cache_write\":"
		"true,\"M.rfvec\":true,\"E.i\":[1,64,2],\"E.k\":[16,64],"
		"\"E.vec\":\"i\",\"E.par\":0,\"E.unroll\":false,"
		"\"E.cache_write\":true,\"E.rfvec\":true,\"Y.i\":[128,1],"
		"\"Y.j\":%s,\"Y.vec\":\"none\",\"Y.par\":%d,"
		"\"Y.unroll\":false}";
	char a[1024], b[1024], c[1024], d[1024];
	double guarded = rate(tp, fill(a, sizeof(a), fmt, "[16,64]", 2));
	double whole = rate(tp, fill(b, sizeof(b), fmt, "[1,1000]", 2));
	double tail = rate(tp, fill(c, sizeof(c), fmt, "[16,64]", 0));
	double row = rate(tp, fill(d, sizeof(d), fmt, "[1,1000]", 0));

	if (!(guarded > 1.3 * whole))
		fail_msg("split 16 x 64 rated %g s, whole rows %g s", guarded,
			whole);
	if (!(tail < 1.1 * row))
		fail_msg("split 16 x 64 with a tail loop rated %g s, whole "
			"rows %g s", tail, row);
}

/* A dense layer over weights blocked by 8 (LeNet's first, 800 inputs to
 * 500 outputs), on an AVX2 target with two cores.  Measured on a Zen 3:
 * vectors of 32 outputs across four blocks under a guarded fused
 * parallel loop, 0.26 ms; LLVM's loop over whole tiles of 64 outputs,
 * 0.021 ms; the same loop over tiles of 125, which do not start on the
 * blocks, 0.24 ms.  The model rated the first two the other way round
 * and the third as fast as the second. */
static void test_model_blocked__vectors_across_blocks_cost(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = named(ctx, "zen3", 2);
	ts_template *tp = template_on(ctx, "input P2: f32[1, 50, 4, 4]\n"
		"input W3: f32[63, 50, 4, 4, 8]\n"
		"output D1[n: 1, o: 500] = sum(c: 50, h: 4, w: 4) "
		"P2[n, c, h, w] * W3[o // 8, c, h, w, o % 8]\n", tg);
	const char *fmt = "{\"D1.n\":[1,1,1],\"D1.o\":%s,\"D1.c\":%s,"
		"\"D1.h\":%s,\"D1.w\":[1,4],\"D1.vec\":\"%s\","
		"\"D1.par\":%d,\"D1.unroll\":false,\"D1.cache_write\":true}";
	char a[1024], b[1024], c[1024];
	double gather = rate(tp, fill(a, sizeof(a), fmt, "[8,2,32]",
		"[50,1]", "[4,1]", "o", 2));
	double aligned = rate(tp, fill(b, sizeof(b), fmt, "[8,1,64]",
		"[25,2]", "[1,4]", "none", 0));
	double misaligned = rate(tp, fill(c, sizeof(c), fmt, "[2,2,125]",
		"[2,25]", "[1,4]", "none", 2));

	if (!(gather > 1.5 * aligned))
		fail_msg("vectors across blocks rated %g s, aligned tiles %g s",
			gather, aligned);
	if (!(misaligned > 1.5 * aligned))
		fail_msg("tiles of 125 rated %g s, tiles of 64 %g s",
			misaligned, aligned);
}

/* The same dense layer for an AVX-512 target, its weights blocked by 16:
 * LLVM gathers a loop over tiles of 64 outputs that span four blocks
 * (measured on a Zen 4: 0.165 ms), and a vector of one block whose
 * tail of 4 outputs runs as a loop of its own keeps its accumulator in
 * registers (0.026 ms): the vector is rated the faster.  For the AVX2
 * target above, whose gathers LLVM avoids, the loop over tiles of 64
 * stays the faster (0.018 against 0.051 ms, measured on the same host
 * compiled for a Zen 3). */
static void test_model_blocked__gathered_loop_on_avx512(void **state)
{
	ts_ctx *ctx = *state;
	const char *fmt = "{\"D1.n\":[1,1,1],\"D1.o\":%s,\"D1.c\":[25,2],"
		"\"D1.h\":[1,4],\"D1.w\":[1,4],\"D1.vec\":\"%s\","
		"\"D1.par\":0,\"D1.unroll\":false,\"D1.cache_write\":true}";
	const char *src[2] = {
		"input P2: f32[1, 50, 4, 4]\n"
		"input W3: f32[32, 50, 4, 4, 16]\n"
		"output D1[n: 1, o: 500] = sum(c: 50, h: 4, w: 4) "
		"P2[n, c, h, w] * W3[o // 16, c, h, w, o % 16]\n",
		"input P2: f32[1, 50, 4, 4]\n"
		"input W3: f32[63, 50, 4, 4, 8]\n"
		"output D1[n: 1, o: 500] = sum(c: 50, h: 4, w: 4) "
		"P2[n, c, h, w] * W3[o // 8, c, h, w, o % 8]\n" };
	const char *tgt[2] = { "zen4", "zen3" }, *block[2] = { "[32,1,16]",
		"[63,1,8]" };

	for (int i = 0; i < 2; i++) {
		const ts_target *tg = named(ctx, tgt[i], 1);
		ts_template *tp = template_on(ctx, src[i], tg);
		char a[1024], b[1024];
		double loop = rate(tp, fill(a, sizeof(a), fmt, "[8,1,64]",
			"none"));
		double vec = rate(tp, fill(b, sizeof(b), fmt, block[i], "o"));

		if (i == 0 && !(loop > 1.5 * vec))
			fail_msg("%s: LLVM's loop across blocks rated %g s, a "
				"vector of a block %g s", tgt[i], loop, vec);
		if (i == 1 && !(vec > loop))
			fail_msg("%s: LLVM's loop across blocks rated %g s, a "
				"vector of a block %g s", tgt[i], loop, vec);
	}
}

/* A max over 1024 rows of 1024 vectorised along its reduction
 * (rfactor) on an AVX-512 target: 16 partial results a row, one vector,
 * ran 0.052 ms on a Zen 4, 32 ran 0.063 ms, 64 ran 0.086 ms (each row's
 * partial results combined in a tree afterwards).  The model ranks them
 * so; it rated 64 the fastest when it priced no combining and counted
 * the chain of a max as an FMA's. */
static void test_model_rfactor__partial_results_combined(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = named(ctx, "zen4", 1);
	ts_template *tp = template_on(ctx, "input X: f32[1024, 1024]\n"
		"output M[i: 1024] = max(k: 1024) X[i, k]\n", tg);
	const char *fmt = "{\"M.i\":[1,1024,1],\"M.k\":%s,\"M.vec\":\"i\","
		"\"M.par\":0,\"M.unroll\":true,\"M.cache_write\":false,"
		"\"M.rfvec\":true}";
	char a[512], b[512], c[512];
	double w16 = rate(tp, fill(a, sizeof(a), fmt, "[64,16]"));
	double w32 = rate(tp, fill(b, sizeof(b), fmt, "[32,32]"));
	double w64 = rate(tp, fill(c, sizeof(c), fmt, "[16,64]"));

	if (!(w16 < w32 && w32 < w64))
		fail_msg("16, 32 and 64 partial results a row rated %g, %g "
			"and %g s", w16, w32, w64);
}

/* A concatenation of two NHWC maps read by a 1x1 convolution to 1000
 * channels: located in the convolution's tiles inside their loop over
 * the 63 blocks of output channels, it is computed again for each
 * (measured on a Zen 4: 7.4 ms against 1.6 ms computed at root), and is
 * rated slower than at root. */
static void test_model_location__recomputed_tile_costs(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = named(ctx, "zen4", 1);
	ts_template *tp = template_on(ctx, "input A: f32[1, 13, 13, 256]\n"
		"input B: f32[1, 13, 13, 256]\n"
		"input W: f32[63, 512, 1, 1, 16]\n"
		"K[i0: 1, i1: 512, i2: 13, i3: 13] = select(i1 < 256, "
		"A[i0, i2, i3, i1], B[i0, i2, i3, i1 - 256])\n"
		"output C[i0: 1, i2: 13, i3: 13, i1: 1000] = sum(r0: 512) "
		"K[i0, r0, i2, i3] * W[i1 // 16, r0, 0, 0, i1 % 16]\n", tg);
	const char *fmt = "{\"C.i0\":[1,1,1,1],\"C.i2\":[1,13,1,1],"
		"\"C.i3\":[1,1,1,13],\"C.i1\":[63,1,1,16],\"C.r0\":[1,512],"
		"\"C.vec\":\"i1\",\"C.par\":0,\"C.unroll\":true,"
		"\"C.cache_write\":true,\"C.pack.K\":\"none\","
		"\"C.pack.W\":\"none\",\"K.at\":\"%s\"}";
	char a[1024], b[1024];
	double inner = rate(tp, fill(a, sizeof(a), fmt, "outer"));
	double root = rate(tp, fill(b, sizeof(b), fmt, "root"));

	if (!(inner > root))
		fail_msg("recomputed 63 times rated %g s, at root %g s", inner,
			root);
}

/* A layer norm whose rows fit in L1 by fours, on two cores: with its
 * row group in the output's tiles (measured on a Zen 4: 0.0136 against
 * 0.0191 ms on one core, 0.0093 against 0.0157 ms on two) it is rated
 * faster, its statistics' nests run on the threads of the output's
 * parallel loop, and a tile of 64 rows, past L1, loses the gain. */
static void test_model_rows__layer_norm_in_row_tiles(void **state)
{
	ts_ctx *ctx = *state;
	const ts_target *tg = named(ctx, "zen4", 2);
	ts_template *tp = template_on(ctx, "input X: f32[128, 768]\n"
		"Mu[i: 128] = (sum(k: 768) X[i, k]) / 768.0\n"
		"V[i: 128] = (sum(k: 768) (X[i, k] - Mu[i]) * (X[i, k] - "
		"Mu[i])) / 768.0\n"
		"output Y[i: 128, j: 768] = (X[i, j] - Mu[i]) * rsqrt(V[i] + "
		"1e-5)\n", tg);
	const char *fmt = "{\"Mu.sum0.i\":[1,1,128],\"Mu.sum0.k\":[12,64],"
		"\"Mu.sum0.vec\":\"none\",\"Mu.sum0.rfvec\":true,"
		"\"V.sum0.i\":[1,1,128],\"V.sum0.k\":[12,64],"
		"\"V.sum0.vec\":\"none\",\"V.sum0.rfvec\":true,"
		"\"Y.i\":%s,\"Y.j\":[1,768],\"Y.vec\":\"none\","
		"\"Y.par\":1,\"Y.rows\":%s}";
	char a[1024], b[1024], c[1024];
	ts_estimate e[8];
	ts_config *cfg;
	double off = rate(tp, fill(a, sizeof(a), fmt, "[32,4]", "false"));
	double on = rate(tp, fill(b, sizeof(b), fmt, "[32,4]", "true"));
	double big = rate(tp, fill(c, sizeof(c), fmt, "[2,64]", "true"));

	if (!(on < off))
		fail_msg("rows in tiles of 4 rated %g s, three passes %g s",
			on, off);
	if (!(big > on))
		fail_msg("tiles of 64 rows rated %g s, of 4 %g s", big, on);
	cfg = ts_config_from_json(ctx, tp->space, b);
	ts_model_estimate(tp, cfg, e);
	for (int s = 0; s < tp->dag->nstages; s++)
		if (tp->plans[s].row_host >= 0)
			assert_int_equal(e[s].threads, 2);
}

/* An RMS norm over rows of 4096 (16 KiB) after another stage, on one
 * core: its row group a row at a time keeps the row in L1 until the
 * output reads it again, and the gain, which no row moves, stays in the
 * cache for every row (measured on a Zen 4 after a copy of its bytes:
 * 0.075 ms a row at a time, 0.085 ms in two passes, 0.093 to 0.10 ms 2
 * or 16 rows at a time, the row re-read from L2). */
static void test_model_rows__rms_norm_a_row_at_a_time(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_real(ctx, "rms_norm", "zen4");
	const char *fmt = "{\"Ms.sum0.i\":[1,1,128],\"Ms.sum0.k\":[64,64],"
		"\"Ms.sum0.vec\":\"none\",\"Ms.sum0.rfvec\":true,"
		"\"Ms.sum0.cache_write\":true,"
		"\"Y.i\":%s,\"Y.j\":[1,4096],\"Y.vec\":\"j\","
		"\"Y.rows\":%s}";
	char a[1024], b[1024], c[1024];
	double one = rate(tp, fill(a, sizeof(a), fmt, "[128,1]", "true"));
	double many = rate(tp, fill(b, sizeof(b), fmt, "[8,16]", "true"));
	double off = rate(tp, fill(c, sizeof(c), fmt, "[128,1]", "false"));

	if (!(one < many && one < off))
		fail_msg("a row at a time rated %g s, 16 rows %g s, two "
			"passes %g s", one, many, off);
}

/* A classifier over blocked weights whose last block of 16 outputs is
 * short (1000 = 62 x 16 + 8), on two cores: split between the threads,
 * its blocks are guarded and add through masked loads and stores at
 * every step; serial, the last block is a loop of its own (measured on
 * a Zen 4: 0.33 ms parallel, 0.10 ms serial). */
static void test_model_guarded__masked_accumulator_is_slow(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_on(ctx, "input V: f32[1, 1280]\n"
		"input W: f32[63, 1280, 16]\n"
		"output Y[i0: 1, i1: 1000] = sum(r0: 1280) V[i0, r0] * "
		"W[i1 // 16, r0, i1 % 16]\n", named(ctx, "zen4", 2));
	const char *fmt = "{\"Y.i0\":[1,1,1],\"Y.i1\":[63,1,16],"
		"\"Y.r0\":[40,32],\"Y.vec\":\"i1\",\"Y.par\":%s,"
		"\"Y.cache_write\":true}";
	char a[512], b[512];
	double par = rate(tp, fill(a, sizeof(a), fmt, "2"));
	double serial = rate(tp, fill(b, sizeof(b), fmt, "0"));

	if (!(par > serial))
		fail_msg("guarded on two threads rated %g s, serial %g s", par,
			serial);
}

/* A product vectorised along a guarded axis, its tail not a loop of its
 * own (the axis's outer loop in the parallel loop), is rated at least
 * five times slower than the same tiles with the tail run on its own
 * (the outer loop serial): measured on a Zen 4, a 1x1 convolution to
 * 1000 channels at 13 x 13, NHWC, 14 ms against 1.0 ms on two threads,
 * which the model rated alike. */
static void test_model_guarded__product_with_masked_vectors(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_on(ctx, "input X: f32[1, 13, 13, 512]\n"
		"input W: f32[63, 512, 16]\n"
		"output Y[n: 1, h: 13, w: 13, k: 1000] = sum(c: 512) "
		"X[n, h, w, c] * W[k // 16, c, k % 16]\n", named(ctx, "zen4", 2));
	const char *fmt = "{\"Y.n\":[1,1,1,1],\"Y.h\":[13,1,1,1],"
		"\"Y.w\":[1,1,1,13],\"Y.k\":[63,1,1,16],\"Y.c\":[1,512],"
		"\"Y.vec\":\"k\",\"Y.par\":%s,\"Y.unroll\":true,"
		"\"Y.cache_write\":true,\"Y.pack.X\":\"none\","
		"\"Y.pack.W\":\"none\"}";
	char a[512], b[512];
	double guarded = rate(tp, fill(a, sizeof(a), fmt, "3"));
	double tail = rate(tp, fill(b, sizeof(b), fmt, "1"));

	if (!(guarded > 5 * tail))
		fail_msg("guarded vectors rated %g s, a tail loop %g s",
			guarded, tail);
}

/* A convolution fused into its bias and relu whose tile buffer outgrows
 * L1 (tiles of 111 x 3 x 32 outputs, 42 KiB) is rated slower than the
 * same register tiles in a buffer of 3 x 3 x 32: measured on a Zen 4,
 * this 3x3 stride-2 convolution to 64 channels at 111 x 111, 0.50 ms
 * against 0.39 on one thread, 0.33 against 0.20 on two, which the model
 * rated alike. */
static void test_model_fused__tile_buffer_past_l1(void **state)
{
	ts_ctx *ctx = *state;
	const char *src = "input X: f32[1, 3, 224, 224]\n"
		"input W: f32[2, 3, 3, 3, 32]\n"
		"input B: f32[64]\n"
		"C[n: 1, h: 111, w: 111, k: 64] = sum(c: 3, r: 3, s: 3) "
		"X[n, c, h * 2 + r, w * 2 + s] * W[k // 32, c, r, s, k % 32]\n"
		"output Y[n: 1, h: 111, w: 111, k: 64] = "
		"max(C[n, h, w, k] + B[k], 0.0)\n";
	const char *fmt = "{\"C.n\":[1,1,1,1],\"C.h\":%s,\"C.w\":%s,"
		"\"C.k\":%s,\"C.c\":[1,3],\"C.r\":[1,3],\"C.s\":[1,3],"
		"\"C.vec\":\"k\",\"C.par\":%s,\"C.unroll\":true,"
		"\"C.cache_write\":false,\"C.pack.X\":\"none\","
		"\"C.pack.W\":\"none\",\"C.fuse\":true,\"Y.n\":[1,1],"
		"\"Y.h\":[111,1],\"Y.w\":[111,1],\"Y.k\":[4,16],"
		"\"Y.vec\":\"k\",\"Y.par\":0,\"Y.unroll\":false}";

	for (int threads = 1; threads <= 2; threads++) {
		ts_template *tp = template_on(ctx, src, named(ctx, "zen4",
			threads));
		char a[768], b[768];
		double big = rate(tp, fill(a, sizeof(a), fmt, "[1,1,37,3]",
			"[1,37,1,3]", "[2,1,1,32]", "1"));
		double small = rate(tp, fill(b, sizeof(b), fmt, "[37,1,1,3]",
			"[37,1,1,3]", "[2,1,1,32]", "1"));

		if (!(big > 1.1 * small))
			fail_msg("%d threads: a 42 KiB tile buffer rated %g s, "
				"one of 1 KiB %g s", threads, big, small);
	}
}

/* A depthwise 3x3 layer over 120 channel blocks of 8 at 7x7 with its
 * blocks, rows and columns fused into one parallel loop of 5,880
 * iterations is rated slower than with its 120 channel blocks in
 * parallel, on one thread and two: each iteration is a call of the
 * loop's body (measured for an AVX2 target on a Zen 4, 0.038 ms against
 * 0.011 ms on one thread, 0.020 against 0.006 on two, which the model
 * rated alike). */
static void test_model_parallel__iterations_are_calls(void **state)
{
	ts_ctx *ctx = *state;
	const char *src = "input X: f32[1, 120, 7, 7, 8]\n"
		"input W: f32[120, 1, 3, 3, 8]\n"
		"P[n: 1, c: 120, h: 9, w: 9, b: 8] = select(h >= 1 && h < 8 && "
		"w >= 1 && w < 8, X[n, c, h - 1, w - 1, b], 0.0)\n"
		"output Y[n: 1, c: 120, h: 7, w: 7, b: 8] = sum(r: 3, s: 3) "
		"P[n, c, h + r, w + s, b] * W[c, 0, r, s, b]\n";
	const char *fmt = "{\"Y.n\":[1,1,1],\"Y.c\":[120,1,1],"
		"\"Y.h\":[7,1,1],\"Y.w\":[7,1,1],\"Y.b\":[1,8,1],"
		"\"Y.r\":[3,1],\"Y.s\":[3,1],\"Y.vec\":\"b\",\"Y.par\":%s,"
		"\"Y.unroll\":true,\"Y.cache_write\":true,\"P.at\":\"outer\"}";

	for (int threads = 1; threads <= 2; threads++) {
		ts_template *tp = template_on(ctx, src, named(ctx, "zen3",
			threads));
		char a[512], b[512];
		double fused = rate(tp, fill(a, sizeof(a), fmt, "5"));
		double blocks = rate(tp, fill(b, sizeof(b), fmt, "1"));

		if (!(fused > 1.3 * blocks))
			fail_msg("%d threads: 5,880 parallel iterations rated "
				"%g s, 120 %g s", threads, fused, blocks);
	}
}

/* A product of 512 terms into 1000 channels whose input arrives in
 * NCHW16c, gathered into NCHW by a copy located in the product's tiles
 * inside its loop over 63 blocks of outputs, is rated slower than the
 * same tiles with the copy at root: each block transposes the whole
 * input again (measured on a Zen 4: 7.1 ms against 2.1). */
static void test_model_location__transposing_copy_recomputed(void **state)
{
	ts_ctx *ctx = *state;
	ts_template *tp = template_on(ctx, "input X: f32[1, 32, 13, 13, 16]\n"
		"input W: f32[63, 512, 16]\n"
		"output Y[n: 1, c: 1000, h: 13, w: 13] = sum(r: 512) "
		"X[n, r // 16, h, w, r % 16] * W[c // 16, r, c % 16]\n",
		named(ctx, "zen4", 1));
	const char *fmt = "{\"Y.n\":[1,1,1,1],\"Y.c\":[63,1,1,16],"
		"\"Y.h\":[1,1,13,1],\"Y.w\":[1,1,1,13],\"Y.r\":[1,512],"
		"\"Y.vec\":\"c\",\"Y.par\":0,\"Y.unroll\":true,"
		"\"Y.cache_write\":true,\"Y.pack.Y.gather0\":\"%s\","
		"\"Y.pack.W\":\"none\",\"Y.gather0.at\":\"%s\"}";
	char a[512], b[512];
	double tiles = rate(tp, fill(a, sizeof(a), fmt, "outer", "outer"));
	double root = rate(tp, fill(b, sizeof(b), fmt, "none", "root"));

	if (!(tiles > 2 * root))
		fail_msg("the copy in the tiles rated %g s, at root %g s", tiles,
			root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_model_direct__plain_rows_beat_masked_vectors),
		TS_TEST(test_model_rows__layer_norm_in_row_tiles),
		TS_TEST(test_model_rows__rms_norm_a_row_at_a_time),
		TS_TEST(test_model_guarded__masked_accumulator_is_slow),
		TS_TEST(test_model_guarded__product_with_masked_vectors),
		TS_TEST(test_model_fused__tile_buffer_past_l1),
		TS_TEST(test_model_parallel__iterations_are_calls),
		TS_TEST(test_model_location__transposing_copy_recomputed),
		TS_TEST(test_model_pack__fused_anchor_has_no_outer_pack),
		TS_TEST(test_model_matmul__page_strided_operand_is_packed),
		TS_TEST(test_model_matmul__strided_accumulator_costs),
		TS_TEST(test_model_tile__serial_register_tile_is_slow),
		TS_TEST(test_model_int8__reduction_vectorised_along_itself),
		TS_TEST(test_model_f16__converted_operands_cost),
		TS_TEST(test_model_padding__short_rows_in_tiles_cost),
		TS_TEST(test_model_implicit__guarded_split_stays_scalar),
		TS_TEST(test_model_blocked__vectors_across_blocks_cost),
		TS_TEST(test_model_blocked__gathered_loop_on_avx512),
		TS_TEST(test_model_rfactor__partial_results_combined),
		TS_TEST(test_model_location__recomputed_tile_costs),
		TS_TEST(test_model_window__rows_shared_in_unrolled_tile),
		TS_TEST(test_model_padding__inlined_into_vectors),
		TS_TEST(test_model_blocked__aligned_rows_do_not_straddle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
