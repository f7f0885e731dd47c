/* The examples in two forms: each catalogue builder at the real size
 * prints exactly like its examples/<name>.tsl file, and every .tsl file in
 * examples/ has a builder. */
#include <config.h>

#include <dirent.h>
#include <stdio.h>

#include "tests/common.h"
#include "examples/catalogue.h"
#include "examples/networks.h"

/* Whole networks have builders of their own (examples/networks.h). */
static ts_dag *build_resnet18(ts_ctx *ctx)
{
	return ts_network_resnet18(ctx, 1, 224, 64, 1000);
}

static ts_dag *build_transformer(ts_ctx *ctx)
{
	return ts_network_transformer(ctx, 128, 768, 12, 3072);
}

static const struct {
	const char *example;
	ts_dag *(*build)(ts_ctx *ctx);
} networks[] = {
	{ "resnet18", build_resnet18 },
	{ "transformer", build_transformer },
};

/* The network builder whose .tsl twin is "name", or NULL. */
static ts_dag *(*network_for_example(const char *name))(ts_ctx *)
{
	for (size_t i = 0; i < sizeof(networks) / sizeof(networks[0]); i++)
		if (!strcmp(networks[i].example, name))
			return networks[i].build;
	return NULL;
}

/* The .tsl files that must exist, each with a catalogue twin. */
static const char *const required[] = {
	"matmul", "batch_matmul", "conv2d_s1", "conv2d_s2", "depthwise_conv",
	"conv1x1", "dense_bias_relu", "softmax", "layer_norm", "max_pool",
	"lenet", "mlp",
};

/* Return the path of examples/"name".tsl in the source tree. */
static const char *example_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/examples/%s.tsl", ts_test_srcdir(),
		name);
	return path;
}

/* Return the entry whose .tsl twin is "name", or NULL. */
static const struct ts_catalogue_entry *entry_for_example(const char *name)
{
	for (int i = 0; i < ts_catalogue_count; i++)
		if (ts_catalogue[i].example &&
		    !strcmp(ts_catalogue[i].example, name))
			return &ts_catalogue[i];
	return NULL;
}

static void test_examples__required_files__have_catalogue_twins(
	void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		FILE *f = fopen(example_path(required[i]), "r");
		if (!f)
			fail_msg("missing %s", example_path(required[i]));
		fclose(f);
		if (!entry_for_example(required[i]))
			fail_msg("no catalogue entry has the example '%s'",
				required[i]);
	}
}

static void test_examples__every_tsl_file__has_catalogue_twin(void **state)
{
	char dir[4096];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/examples", ts_test_srcdir());
	dp = opendir(dir);
	assert_non_null(dp);
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name);
		char name[256];
		if (len < 5 || len >= sizeof(name) ||
		    strcmp(d->d_name + len - 4, ".tsl"))
			continue;
		memcpy(name, d->d_name, len - 4);
		name[len - 4] = '\0';
		if (!entry_for_example(name) && !network_for_example(name))
			fail_msg("examples/%s has no catalogue entry or network "
				"builder", d->d_name);
		n++;
	}
	closedir(dp);
	assert_true(n >= (int)(sizeof(required) / sizeof(required[0])));
}

static void test_examples__c_and_tsl__print_the_same(void **state)
{
	(void)state;
	for (int i = 0; i < ts_catalogue_count; i++) {
		const struct ts_catalogue_entry *e = &ts_catalogue[i];
		ts_ctx *cc, *tc;
		ts_dag *from_c, *from_tsl;
		if (!e->example)
			continue;
		cc = ts_ctx_alloc();
		tc = ts_ctx_alloc();
		from_c = e->build(cc, TS_SIZE_REAL);
		if (!from_c)
			fail_msg("%s: %s", e->name, ts_ctx_error(cc));
		from_tsl = ts_parse_file(tc, example_path(e->example));
		if (!from_tsl)
			fail_msg("%s: %s", e->example, ts_ctx_error(tc));
		assert_string_equal(ts_dag_canonical_string(from_c),
			ts_dag_canonical_string(from_tsl));
		assert_string_equal(ts_dag_hash(from_c), ts_dag_hash(from_tsl));
		ts_ctx_free(cc);
		ts_ctx_free(tc);
	}
}

static void test_examples__c_and_tsl__differ_when_sizes_differ(void **state)
{
	ts_ctx *tc = *state, *cc = ts_ctx_alloc();
	ts_dag *tiny = ts_catalogue_find("matmul")->build(cc, TS_SIZE_TINY);
	ts_dag *real = ts_parse_file(tc, example_path("matmul"));

	assert_non_null(tiny);
	assert_non_null(real);
	assert_string_not_equal(ts_dag_canonical_string(tiny),
		ts_dag_canonical_string(real));
	ts_ctx_free(cc);
}

static void test_examples_networks__print_like_their_builders(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t i = 0; i < sizeof(networks) / sizeof(networks[0]); i++) {
		ts_dag *file = ts_parse_file(ctx, example_path(
			networks[i].example));
		ts_dag *built = networks[i].build(ctx);
		if (!file || !built)
			fail_msg("%s: %s", networks[i].example,
				ts_ctx_error(ctx));
		assert_string_equal(ts_dag_canonical_string(file),
			ts_dag_canonical_string(built));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_examples__required_files__have_catalogue_twins),
		TS_TEST(test_examples__every_tsl_file__has_catalogue_twin),
		TS_TEST(test_examples__c_and_tsl__print_the_same),
		TS_TEST(test_examples__c_and_tsl__differ_when_sizes_differ),
		TS_TEST(test_examples_networks__print_like_their_builders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
