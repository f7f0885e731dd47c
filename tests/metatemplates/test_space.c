/* Knob spaces: sampling, mutation, validity, JSON, counting. */
#include "tests/common.h"

#include <tessel/space.h>

/* A space with one knob of each kind. */
static ts_space *small_space(ts_ctx *ctx)
{
	static const char *const order[] = { "ijk", "ikj", "kij" };
	ts_space *sp = ts_space_new(ctx, "test");

	assert_int_equal(ts_space_add_split(sp, "i", 1000, 4, false), 0);
	assert_int_equal(ts_space_add_choice(sp, "order", 3, order), 1);
	assert_int_equal(ts_space_add_bool(sp, "cache"), 2);
	assert_int_equal(ts_space_add_int(sp, "unroll", 0, 3), 3);
	return sp;
}

static void test_space_sample__is_valid_and_reproducible(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = small_space(ctx);
	ts_config *a[50];

	ts_ctx_set_seed(ctx, 7);
	for (int i = 0; i < 50; i++) {
		a[i] = ts_space_sample(sp, ctx);
		assert_true(ts_config_is_valid(a[i]));
	}
	ts_ctx_set_seed(ctx, 7);
	for (int i = 0; i < 50; i++)
		assert_true(ts_config_equal(a[i], ts_space_sample(sp, ctx)));
}

static void test_space_split__outer_covers_extent(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = small_space(ctx);

	for (int i = 0; i < 200; i++) {
		ts_config *c = ts_space_sample(sp, ctx);
		int64_t prod = 1;
		for (int p = 1; p < 4; p++)
			prod *= ts_config_get(c, 0, p);
		assert_true(prod <= 1000);
		assert_true(ts_config_get(c, 0, 0) * prod >= 1000);
		assert_true((ts_config_get(c, 0, 0) - 1) * prod < 1000);
	}
}

static void test_space_mutate__changes_one_knob_and_stays_valid(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = small_space(ctx);
	ts_config *c = ts_space_sample(sp, ctx);

	for (int i = 0; i < 300; i++) {
		ts_config *d = ts_config_mutate(c, ctx);
		int changed = 0;
		assert_true(ts_config_is_valid(d));
		for (int k = 0; k < sp->nknobs; k++) {
			int n = sp->knobs[k]->kind == TS_KNOB_SPLIT ?
				sp->knobs[k]->nparts : 1;
			bool diff = false;
			for (int p = 0; p < n; p++)
				diff |= ts_config_get(c, k, p) !=
					ts_config_get(d, k, p);
			changed += diff;
		}
		assert_true(changed <= 1);
		c = d;
	}
}

static void test_space_json__round_trip(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = small_space(ctx);

	for (int i = 0; i < 20; i++) {
		ts_config *c = ts_space_sample(sp, ctx);
		ts_config *d = ts_config_from_json(ctx, sp,
			ts_config_to_json(c));
		assert_non_null(d);
		assert_true(ts_config_equal(c, d));
		assert_int_equal(ts_config_hash(c), ts_config_hash(d));
	}
}

static void test_space_json__bad_input_is_named(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = small_space(ctx);
	static const struct {
		const char *json;
		const char *msg;
	} cases[] = {
		{ "[1]", "not a JSON object" },
		{ "{\"nope\": 1}", "unknown knob 'nope'" },
		{ "{\"i\": [1, 2]}", "knob 'i' needs an array of 4 factors" },
		{ "{\"i\": [1, 1000, 2, 1]}", "not a valid split of 1000" },
		{ "{\"order\": \"jik\"}", "knob 'order' has no option 'jik'" },
		{ "{\"cache\": 3}", "knob 'cache' needs true or false" },
		{ "{\"unroll\": 9}", "knob 'unroll' needs an integer in [0, 3]" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_null(ts_config_from_json(ctx, sp, cases[i].json));
		assert_error_contains(ctx, cases[i].msg);
	}
}

static void test_space_size__counts_split_tuples(void **state)
{
	ts_ctx *ctx = *state;
	ts_space *sp = ts_space_new(ctx, "count");
	int k = ts_space_add_split(sp, "x", 16, 3, true);

	/* Pairs (a, b) of divisors of 16 with a * b <= 16: exponents
	 * (i, j) with i + j <= 4, i.e. 15 pairs. */
	assert_int_equal(k, 0);
	assert_true(ts_knob_count(sp->knobs[0]) == 15);
	assert_int_equal(ts_space_add_split(sp, "x", 8, 2, true), -1);
	assert_error_contains(ctx, "knob 'x' is defined twice");
	assert_int_equal(ts_space_add_split(sp, "y", 0, 2, true), -1);
	assert_error_contains(ctx, "needs an extent >= 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_space_sample__is_valid_and_reproducible),
		TS_TEST(test_space_split__outer_covers_extent),
		TS_TEST(test_space_mutate__changes_one_knob_and_stays_valid),
		TS_TEST(test_space_json__round_trip),
		TS_TEST(test_space_json__bad_input_is_named),
		TS_TEST(test_space_size__counts_split_tuples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
