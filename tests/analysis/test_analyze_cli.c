/* tessel analyze: the JSON form documented in doc/analyze-json.md, the
 * text form, and the error on an access out of bounds. */
#include <config.h>

#include <stdio.h>
#include <sys/wait.h>

#include <jansson.h>

#include "tests/common.h"

/* Run "tessel analyze" with "args", capture stdout into "out" (up to
 * "cap" bytes) and return the exit code. */
static int run_analyze(const char *args, char *out, size_t cap)
{
	char cmd[4096];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "%s/tools/tessel analyze %s 2>&1",
		TS_BUILDDIR, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Return the string member "key" of "o", failing when absent. */
static const char *str_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		fail_msg("no string \"%s\"", key);
	return json_string_value(v);
}

static void test_analyze_cli_json__has_the_documented_keys(void **state)
{
	static char out[1 << 20];
	static const char *stage_keys[] = { "name", "class", "domain",
		"accesses", "reuse_axes", "flops", "bytes_read",
		"bytes_written", "intensity", "reasons", NULL };
	char args[1024];
	json_error_t err;
	json_t *root, *stages, *y, *acc;

	snprintf(args, sizeof(args), "--json %s/examples/conv2d_s2.tsl",
		ts_test_srcdir());
	assert_int_equal(run_analyze(args, out, sizeof(out)), 0);
	root = json_loads(out, 0, &err);
	if (!root)
		fail_msg("not JSON: %s", err.text);
	stages = json_object_get(root, "stages");
	assert_int_equal(json_array_size(stages), 2);
	assert_string_equal(str_of(json_array_get(stages, 0), "class"),
		"location_tunable");
	y = json_array_get(stages, 1);
	assert_string_equal(str_of(y, "name"), "Y");
	assert_string_equal(str_of(y, "class"), "complex_reduction");
	for (int i = 0; stage_keys[i]; i++)
		if (!json_object_get(y, stage_keys[i]))
			fail_msg("stage has no \"%s\"", stage_keys[i]);
	/* 2 * K * 28 * 28 * C * 9 flops. */
	assert_int_equal(json_integer_value(json_object_get(y, "flops")),
		2LL * 128 * 28 * 28 * 64 * 9);
	acc = json_array_get(json_object_get(y, "accesses"), 1);
	assert_string_equal(str_of(acc, "text"), "W[k, rc, r, s]");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(acc, "reuse_axes"), 0)), "h");
	assert_true(json_array_size(json_object_get(y, "reasons")) >= 3);
	json_decref(root);
}

static void test_analyze_cli_text__names_class_and_reasons(void **state)
{
	static char out[1 << 16];
	char args[1024];

	snprintf(args, sizeof(args), "%s/examples/matmul.tsl",
		ts_test_srcdir());
	assert_int_equal(run_analyze(args, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "stage C: complex_reduction"));
	assert_non_null(strstr(out, "- A[i, k] carries reuse along j"));
}

static void test_analyze_cli_out_of_bounds__exits_2(void **state)
{
	static char out[1 << 16];
	char path[] = "/tmp/tessel-analyze-XXXXXX.tsl";
	int fd = mkstemps(path, 4);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("input X: f32[4]\n"
		"output P[h: 6] = select(h >= 1 && h < 6, X[h - 1], 0.0)\n", f);
	fclose(f);
	assert_int_equal(run_analyze(path, out, sizeof(out)), 2);
	remove(path);
	assert_non_null(strstr(out, "stage 'P': access X[h - 1] is out of "
		"bounds of tensor 'X' (shape 4) at instance h = 5"));
}

static void test_analyze_cli_usage__exits_2(void **state)
{
	static char out[4096];

	assert_int_equal(run_analyze("", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "usage: tessel analyze"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_analyze_cli_json__has_the_documented_keys),
		TS_TEST(test_analyze_cli_text__names_class_and_reasons),
		TS_TEST(test_analyze_cli_out_of_bounds__exits_2),
		TS_TEST(test_analyze_cli_usage__exits_2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
