/* tessel run and tessel build, run as programs: outputs, files written,
 * exit codes and messages of bad usage. */
#include <config.h>

#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common.h"

/* The folder that the tests share, made by the group setup. */
struct cli {
	char dir[64];
	char tsl[128];
	char tool[512];
};

static int cli_setup(void **state)
{
	struct cli *c = calloc(1, sizeof(*c));
	const char *b = getenv("TS_BUILDDIR");
	FILE *fp;

	strcpy(c->dir, "/tmp/tessel-cli-XXXXXX");
	if (!mkdtemp(c->dir))
		return -1;
	snprintf(c->tsl, sizeof(c->tsl), "%s/axpy.tsl", c->dir);
	snprintf(c->tool, sizeof(c->tool), "%s/tools/tessel",
		b ? b : TS_BUILDDIR);
	fp = fopen(c->tsl, "w");
	if (!fp)
		return -1;
	fputs("input X: f32[1000]\ninput Y: f32[1000]\n"
		"output Z[i: 1000] = 2.5 * X[i] + Y[i]\n", fp);
	fclose(fp);
	*state = c;
	return 0;
}

static int cli_teardown(void **state)
{
	struct cli *c = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
	free(c);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run the tool with "args"; return its exit code, with its stdout and
 * stderr in "out" and "err" (each at most "n" bytes). */
static int run_tool(struct cli *c, const char *args, char *out, char *err,
	size_t n)
{
	char cmd[2048], po[128], pe[128];
	FILE *fp;
	size_t k;
	int st;

	snprintf(po, sizeof(po), "%s/stdout", c->dir);
	snprintf(pe, sizeof(pe), "%s/stderr", c->dir);
	snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", c->tool, args, po,
		pe);
	st = system(cmd);
	fp = fopen(po, "r");
	k = fp ? fread(out, 1, n - 1, fp) : 0;
	out[k] = '\0';
	if (fp)
		fclose(fp);
	fp = fopen(pe, "r");
	k = fp ? fread(err, 1, n - 1, fp) : 0;
	err[k] = '\0';
	if (fp)
		fclose(fp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Assert that "text" contains "part". */
#define assert_has(text, part) do { \
	if (!strstr((text), (part))) \
		fail_msg("expected \"%s\" in \"%s\"", (part), (text)); \
} while (0)

static void test_cli_run__checks_and_times_as_json(void **state)
{
	struct cli *c = *state;
	char args[512], out[4096], err[4096];

	snprintf(args, sizeof(args), "run '%s' --check --json --threads 2 "
		"--min-time 0.01 --seed 5", c->tsl);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 0);
	assert_has(out, "\"checked\": true");
	assert_has(out, "\"passed\": true");
	assert_has(out, "\"median_ms\": ");
	assert_has(out, "\"gflops\": ");
	assert_has(out, "\"flops\": 2000,");
	assert_has(out, "\"threads\": 2");
	snprintf(args, sizeof(args), "run '%s' --check --min-time=0.01",
		c->tsl);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 0);
	assert_has(out, "GFLOP/s");
	assert_has(out, "check: pass");
}

static void test_cli_run__bad_usage_exits_2_with_a_message(void **state)
{
	struct cli *c = *state;
	char args[512], out[4096], err[4096];

	snprintf(args, sizeof(args), "run '%s' --threads 0", c->tsl);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 2);
	assert_has(err, "bad value '0' for --threads");
	snprintf(args, sizeof(args), "run '%s' --schedule %s/none.json",
		c->tsl, c->dir);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 2);
	assert_has(err, "cannot read");
	assert_has(err, "none.json");
	snprintf(args, sizeof(args), "run '%s' --frobnicate", c->tsl);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 2);
	assert_has(err, "unknown option '--frobnicate'");
	assert_int_equal(run_tool(c, "run --help", out, err, sizeof(out)), 0);
	assert_has(out, "--schedule");
}

/* Whether "dir"/"name" exists. */
static bool exists_in(const char *dir, const char *name)
{
	char path[256];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

static void test_cli_build__host_and_cross(void **state)
{
	struct cli *c = *state;
	char args[512], out[4096], err[4096], dir[128];

	snprintf(dir, sizeof(dir), "%s/host", c->dir);
	snprintf(args, sizeof(args), "build '%s' -o '%s'", c->tsl, dir);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 0);
	assert_true(exists_in(dir, "axpy.o"));
	assert_true(exists_in(dir, "axpy.h"));
	assert_true(exists_in(dir, "libaxpy.so"));
	assert_has(out, "libaxpy.so");
	snprintf(args, sizeof(args), "build '%s' -o '%s' --emit-text --cpu "
		"haswell", c->tsl, dir);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 0);
	assert_true(exists_in(dir, "axpy.ll"));
	assert_true(exists_in(dir, "axpy.s"));
	assert_has(out, "axpy.s");
	snprintf(dir, sizeof(dir), "%s/arm", c->dir);
	snprintf(args, sizeof(args), "build '%s' -o '%s' --target-triple "
		"aarch64-linux-gnu --cpu neoverse-n1", c->tsl, dir);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 0);
	assert_true(exists_in(dir, "axpy.o"));
	assert_false(exists_in(dir, "libaxpy.so"));
	assert_has(err, "needs a cross linker");
	snprintf(args, sizeof(args), "build '%s'", c->tsl);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 2);
	assert_has(err, "-o DIR is required");
	snprintf(args, sizeof(args), "build '%s' -o '%s' --target-triple "
		"bogus-none-none", c->tsl, dir);
	assert_int_equal(run_tool(c, args, out, err, sizeof(out)), 1);
	assert_has(err, "target triple 'bogus-none-none'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_run__checks_and_times_as_json),
		cmocka_unit_test(test_cli_run__bad_usage_exits_2_with_a_message),
		cmocka_unit_test(test_cli_build__host_and_cross),
	};

	return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
