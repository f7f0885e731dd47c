/* Hardware descriptions: shipped files, JSON round trip, error messages,
 * host detection. */
#include <config.h>

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <math.h>

#include "tests/common.h"

#include "target/target_internal.h"

static const char *const shipped[] = {
	"zen3", "zen4", "zen5", "skylake-sp", "sapphire-rapids",
	"neoverse-n1", "apple-m1", "v100", "a100", "h100",
};

#define NSHIPPED (sizeof(shipped) / sizeof(shipped[0]))

/* A small valid CPU description, edited by the error cases. */
static const char cpu_json[] =
	"{\n"
	"  \"name\": \"tiny\",\n"
	"  \"kind\": \"cpu\",\n"
	"  \"arch\": \"x86_64\",\n"
	"  \"triple\": \"x86_64-unknown-linux-gnu\",\n"
	"  \"llvm_cpu\": \"haswell\",\n"
	"  \"cores\": 4,\n"
	"  \"threads_per_core\": 2,\n"
	"  \"simd_bytes\": 32,\n"
	"  \"fma_units\": 2,\n"
	"  \"vector_registers\": 16,\n"
	"  \"l1d\": { \"kib\": 32, \"shared_by\": 1 },\n"
	"  \"l2\": { \"kib\": 256, \"shared_by\": 1 },\n"
	"  \"l3\": { \"kib\": 8192, \"shared_by\": 4 },\n"
	"  \"line_bytes\": 64\n"
	"}\n";

/* A small valid GPU description. */
static const char gpu_json[] =
	"{\n"
	"  \"name\": \"tinygpu\",\n"
	"  \"kind\": \"gpu\",\n"
	"  \"compute_capability\": \"sm_86\",\n"
	"  \"sm_count\": 10,\n"
	"  \"warp_size\": 32,\n"
	"  \"max_threads_per_block\": 1024,\n"
	"  \"max_threads_per_sm\": 1536,\n"
	"  \"shared_per_block_kib\": 48,\n"
	"  \"shared_per_sm_kib\": 100,\n"
	"  \"registers_per_block\": 65536,\n"
	"  \"registers_per_sm\": 65536,\n"
	"  \"l2_kib\": 4096\n"
	"}\n";

/* Return "json" with the first occurrence of "from" replaced by "to". */
static char *edit(const char *json, const char *from, const char *to)
{
	const char *p = strstr(json, from);
	size_t n;
	char *s;

	assert_non_null(p);
	n = strlen(json) - strlen(from) + strlen(to) + 1;
	s = malloc(n);
	snprintf(s, n, "%.*s%s%s", (int)(p - json), json, to, p + strlen(from));
	return s;
}

/* Every shipped description loads, names its kind and passes the check. */
static void test_target_lookup__shipped_files_load(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t i = 0; i < NSHIPPED; i++) {
		ts_target *t = ts_target_lookup(ctx, shipped[i]);
		if (!t)
			fail_msg("%s: %s", shipped[i], ts_ctx_error(ctx));
		assert_string_equal(t->name, shipped[i]);
		assert_int_equal(ts_target_check(ctx, t, shipped[i]), TS_OK);
		assert_true(t->description[0] != '\0');
	}
}

/* The shipped CPUs carry the figures the static model reads. */
static void test_target_lookup__cpu_figures(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *zen3 = ts_target_lookup(ctx, "zen3");
	ts_target *skx = ts_target_lookup(ctx, "skylake-sp");
	ts_target *n1 = ts_target_lookup(ctx, "neoverse-n1");
	ts_target *m1 = ts_target_lookup(ctx, "apple-m1");

	assert_non_null(zen3);
	assert_int_equal(zen3->kind, TS_TARGET_CPU);
	assert_string_equal(zen3->cpu.llvm_cpu, "znver3");
	assert_int_equal(zen3->cpu.simd_bytes, 32);
	assert_int_equal(ts_target_lanes(zen3, TS_F32), 8);
	assert_int_equal(ts_target_lanes(zen3, TS_I8), 32);
	assert_int_equal(zen3->cpu.fma_units, 2);
	assert_int_equal(zen3->cpu.vector_registers, 16);
	assert_int_equal(zen3->cpu.l1d.size, 32 << 10);
	assert_int_equal(zen3->cpu.l2.size, 512 << 10);
	assert_int_equal(zen3->cpu.l3.size, 32 << 20);
	assert_int_equal(zen3->cpu.l1d.ways, 8);
	assert_int_equal(zen3->cpu.l2.ways, 8);
	assert_int_equal(zen3->cpu.l3.ways, 16);
	assert_int_equal(ts_target_cache_per_core(&zen3->cpu.l3), 4 << 20);
	assert_non_null(skx);
	assert_string_equal(skx->cpu.llvm_cpu, "skylake-avx512");
	assert_int_equal(skx->cpu.lanes[TS_F32], 16);
	assert_int_equal(skx->cpu.vector_registers, 32);
	assert_int_equal(ts_target_cache_per_core(&skx->cpu.l3),
		1408 << 10);
	assert_non_null(n1);
	assert_string_equal(n1->cpu.triple, "aarch64-unknown-linux-gnu");
	assert_int_equal(n1->cpu.l1d.size, 64 << 10);
	assert_int_equal(n1->cpu.l1d.ways, 0);	/* unknown */
	assert_non_null(m1);
	assert_int_equal(m1->cpu.line_bytes, 128);
	assert_int_equal(m1->cpu.fma_units, 4);
	assert_int_equal(m1->cpu.l3.size, 0);
	assert_int_equal(m1->cpu.l2.shared_by, 4);
}

/* Every shipped CPU says where its numbers come from, and its peak is
 * its clock times its lanes, two flops and its FMA units. */
static void test_target_lookup__cpu_sources_and_peaks(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t i = 0; i < NSHIPPED; i++) {
		ts_target *t = ts_target_lookup(ctx, shipped[i]);
		double peak;
		assert_non_null(t);
		if (t->kind != TS_TARGET_CPU)
			continue;
		if (!t->cpu.source || !*t->cpu.source)
			fail_msg("%s: no source", shipped[i]);
		peak = t->cpu.frequency_ghz * ts_target_lanes(t, TS_F32) * 2 *
			t->cpu.fma_units;
		if (fabs(peak - t->cpu.peak_gflops_f32_core) > 0.05)
			fail_msg("%s: peak %g, from its clock %g", shipped[i],
				t->cpu.peak_gflops_f32_core, peak);
	}
}

/* The shipped GPUs carry the figures of their data sheets. */
static void test_target_lookup__gpu_figures(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *h100 = ts_target_lookup(ctx, "h100");
	ts_target *a100 = ts_target_lookup(ctx, "a100");
	ts_target *v100 = ts_target_lookup(ctx, "v100");

	assert_non_null(h100);
	assert_int_equal(h100->kind, TS_TARGET_GPU);
	assert_int_equal(h100->gpu.cc_major, 9);
	assert_int_equal(h100->gpu.cc_minor, 0);
	assert_int_equal(h100->gpu.sm_count, 132);
	assert_int_equal(h100->gpu.shared_per_sm, 228 << 10);
	assert_int_equal(h100->gpu.shared_per_block_optin, 227 << 10);
	assert_int_equal(h100->gpu.registers_per_sm, 65536);
	assert_int_equal(h100->gpu.l2_size, 50 << 20);
	assert_true(h100->gpu.bandwidth_gbs > 3000);
	assert_int_equal(ts_target_lanes(h100, TS_F32), 1);
	assert_non_null(a100);
	assert_string_equal(a100->gpu.arch, "sm_80");
	assert_int_equal(a100->gpu.sm_count, 108);
	assert_non_null(v100);
	assert_int_equal(v100->gpu.cc_major, 7);
	assert_int_equal(v100->gpu.sm_count, 80);
}

/* Writing a target and reading it back gives the same target and the
 * same text. */
static void check_round_trip(ts_ctx *ctx, const ts_target *t)
{
	char *json = ts_target_to_json(t);
	ts_target *back = ts_target_from_json(ctx, json, "round trip");

	if (!back)
		fail_msg("%s\n%s", ts_ctx_error(ctx), json);
	assert_true(ts_target_equal(t, back));
	assert_string_equal(ts_target_to_json(back), json);
	assert_int_equal(back->kind, t->kind);
	assert_string_equal(back->name, t->name);
	assert_string_equal(back->description, t->description);
	assert_int_equal(back->cpu.cores, t->cpu.cores);
	assert_int_equal(back->cpu.l2.size, t->cpu.l2.size);
	assert_int_equal(back->cpu.l3.shared_by, t->cpu.l3.shared_by);
	assert_true(back->cpu.frequency_ghz == t->cpu.frequency_ghz);
	assert_true(back->cpu.peak_gflops_f32 == t->cpu.peak_gflops_f32);
	assert_int_equal(back->gpu.shared_per_block_optin,
		t->gpu.shared_per_block_optin);
	assert_true(back->gpu.peak_tflops_tensor_f16 ==
		t->gpu.peak_tflops_tensor_f16);
}

static void test_target_json__round_trip(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *host = ts_target_host(ctx);

	for (size_t i = 0; i < NSHIPPED; i++) {
		ts_target *t = ts_target_lookup(ctx, shipped[i]);
		assert_non_null(t);
		check_round_trip(ctx, t);
	}
	assert_non_null(host);
	check_round_trip(ctx, host);
}

/* The measured numbers travel through JSON, and the model reads them in
 * place of what it assumes. */
static void test_target_json__measured_fields(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *t = ts_target_lookup(ctx, "zen3");
	ts_target *back;

	assert_non_null(t);
	assert_true(ts_target_read_bytes_per_cycle(t, 0) == 64);
	assert_true(ts_target_read_bytes_per_cycle(t, 1) == 64);
	assert_true(ts_target_read_bytes_per_cycle(t, 2) == 24);
	assert_true(ts_target_dram_gbs(t, 1) == 204.8);
	t->cpu.l1d.bytes_per_cycle = 61.5;
	t->cpu.l2.bytes_per_cycle = 30.25;
	t->cpu.l2.latency_cycles = 14;
	t->cpu.l3.bytes_per_cycle = 12.5;
	t->cpu.l2.ways = 12;
	t->cpu.dram_gbs_core = 18.5;
	t->cpu.dram_latency_ns = 95;
	t->cpu.source = "measured";
	check_round_trip(ctx, t);
	back = ts_target_from_json(ctx, ts_target_to_json(t), "measured");
	assert_non_null(back);
	assert_true(back->cpu.l2.latency_cycles == 14);
	assert_int_equal(back->cpu.l2.ways, 12);
	assert_string_equal(back->cpu.source, "measured");
	assert_true(ts_target_read_bytes_per_cycle(back, 1) == 30.25);
	assert_true(ts_target_read_bytes_per_cycle(back, 2) == 12.5);
	assert_true(ts_target_dram_gbs(back, 1) == 18.5);
	assert_true(ts_target_dram_gbs(back, 4) == 74);
	assert_true(ts_target_dram_gbs(back, 64) == 204.8);
	back->cpu.frequency_ghz = 0;
	assert_true(ts_target_frequency_ghz(back) == 2.5);
}

/* Two different targets are not equal. */
static void test_target_equal__differs(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *a = ts_target_lookup(ctx, "zen3");
	ts_target *b = ts_target_lookup(ctx, "zen3");

	assert_non_null(a);
	assert_non_null(b);
	assert_true(ts_target_equal(a, b));
	b->cpu.l2.shared_by = 2;
	assert_false(ts_target_equal(a, b));
}

/* A bad description and the message it must give. */
struct bad_case {
	const char *from, *to;	/* edit of cpu_json or gpu_json */
	bool gpu;
	const char *message;
};

static const struct bad_case bad_cases[] = {
	{ "\"cores\": 4", "\"cores\": 4, \"coers\": 4", false,
	  "tiny.json: unknown field 'coers'" },
	{ "\"shared_by\": 1 },\n  \"l2\"", "\"shared_by\": 1, \"assoc\": 8 },\n"
	  "  \"l2\"", false, "tiny.json: unknown field 'l1d.assoc'" },
	{ "\"shared_by\": 1 },\n  \"l2\"", "\"shared_by\": 1, \"ways\": 5000 },"
	  "\n  \"l2\"", false, "tiny.json: field 'l1d.ways' is out of range: "
	  "5000" },
	{ "\"shared_by\": 1 },\n  \"l2\"", "\"shared_by\": 1, \"ways\": -2 },"
	  "\n  \"l2\"", false, "tiny.json: field 'l1d.ways' is out of range: "
	  "-2" },
	{ "\"cores\": 4", "\"cores\": 0", false,
	  "tiny.json: 'cores' must be at least 1, got 0" },
	{ "\"simd_bytes\": 32", "\"simd_bytes\": 24", false,
	  "'simd_bytes' must be a power of two between 4 and 256, got 24" },
	{ "\"kib\": 32,", "\"kib\": 512,", false,
	  "tiny.json: l1d (512 KiB) must be smaller than l2 (256 KiB)" },
	{ "\"kib\": 8192,", "\"kib\": 128,", false,
	  "l2 (256 KiB) must be smaller than l3 (128 KiB)" },
	{ "\"line_bytes\": 64", "\"line_bytes\": 48", false,
	  "'line_bytes' must be a power of two" },
	{ "\"cores\": 4", "\"cores\": 4.5", false,
	  "field 'cores' must be an integer" },
	{ "\"llvm_cpu\": \"haswell\",\n", "", false,
	  "tiny.json: missing required field 'llvm_cpu' for a cpu target" },
	{ "\"line_bytes\": 64", "\"line_bytes\": 64, \"frequency_ghz\": 3.0, "
	  "\"peak_gflops_f32_core\": 100.0", false,
	  "'peak_gflops_f32_core' is 100 but fma_units x f32 lanes x 2 x "
	  "frequency_ghz gives only 96" },
	{ "\"kib\": 32,", "\"kib\": 32, \"bytes_per_cycle\": -1,", false,
	  "tiny.json: field 'l1d.bytes_per_cycle' must be a number >= 0" },
	{ "\"kib\": 32,", "\"kib\": 32, \"ways\": 8.5,", false,
	  "tiny.json: field 'l1d.ways' must be an integer" },
	{ "\"line_bytes\": 64", "\"line_bytes\": 64, \"dram_gbs_core\": -3.0",
	  false, "tiny.json: clock, peaks, bandwidths and latencies must not "
	  "be negative" },
	{ "\"line_bytes\": 64", "\"line_bytes\": 64, \"sm_count\": 8", false,
	  "tiny.json: field 'sm_count' belongs to gpu targets, but kind is "
	  "\"cpu\"" },
	{ "\"kind\": \"cpu\"", "\"kind\": \"tpu\"", false,
	  "field 'kind' must be \"cpu\" or \"gpu\"" },
	{ "\"cores\": 4,", "\"cores\": 4", false, "tiny.json:8:20: invalid JSON: '}' expected" },
	{ "\"sm_count\": 10,\n", "", true,
	  "tiny.json: missing required field 'sm_count' for a gpu target" },
	{ "\"l2_kib\": 4096", "\"l2_kib\": 4096, \"cores\": 8", true,
	  "tiny.json: field 'cores' belongs to cpu targets, but kind is "
	  "\"gpu\"" },
	{ "\"sm_86\"", "\"ampere\"", true,
	  "'compute_capability' must look like \"sm_90\", got \"ampere\"" },
	{ "\"sm_86\"", "\"sm_7222222222222\"", true,
	  "'compute_capability' must look like \"sm_90\", got "
	  "\"sm_7222222222222\"" },
	{ "\"shared_per_sm_kib\": 100", "\"shared_per_sm_kib\": 32", true,
	  "per block (48 KiB) <= per block opt-in (48 KiB) <= per SM (32 KiB)" },
	{ "\"registers_per_sm\": 65536", "\"registers_per_sm\": 32768", true,
	  "'registers_per_block' (65536) is larger than 'registers_per_sm' "
	  "(32768)" },
	{ "\"max_threads_per_block\": 1024", "\"max_threads_per_block\": 1000",
	  true, "'max_threads_per_block' (1000) must be a positive multiple "
	  "of the warp size (32)" },
	{ "\"warp_size\": 32", "\"warp_size\": 24", true,
	  "'warp_size' must be a power of two, got 24" },
};

static void test_target_json__errors_name_field_and_file(void **state)
{
	ts_ctx *ctx = *state;

	assert_non_null(ts_target_from_json(ctx, cpu_json, "tiny.json"));
	assert_non_null(ts_target_from_json(ctx, gpu_json, "tiny.json"));
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char *json = edit(c->gpu ? gpu_json : cpu_json, c->from, c->to);
		ts_ctx_clear_error(ctx);
		if (ts_target_from_json(ctx, json, "tiny.json"))
			fail_msg("case %zu was accepted:\n%s", i, json);
		assert_error_contains(ctx, c->message);
		free(json);
	}
}

/* A GPU description without the opt-in limit takes the default one. */
static void test_target_json__optin_defaults_to_block_limit(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *t = ts_target_from_json(ctx, gpu_json, "tiny.json");

	assert_non_null(t);
	assert_int_equal(t->gpu.shared_per_block_optin, 48 << 10);
	assert_int_equal(t->gpu.cc_major, 8);
	assert_int_equal(t->gpu.cc_minor, 6);
}

/* Unknown names and unreadable files are errors that name them. */
static void test_target_lookup__unknown(void **state)
{
	ts_ctx *ctx = *state;

	assert_null(ts_target_lookup(ctx, "pentium-pro"));
	assert_error_contains(ctx, "no target description named 'pentium-pro'");
	assert_null(ts_target_lookup(ctx, "../etc"));
	assert_error_contains(ctx, "cannot read target file '../etc'");
	assert_null(ts_target_lookup(ctx, "a b"));
	assert_error_contains(ctx, "'a b' is not a valid target name");
	assert_null(ts_target_from_json_file(ctx, "/nonexistent/x.json"));
	assert_error_contains(ctx, "cannot read target file "
		"'/nonexistent/x.json'");
}

/* A path is read as a file. */
static void test_target_lookup__path(void **state)
{
	ts_ctx *ctx = *state;
	char *path = malloc(strlen(ts_test_srcdir()) + 32);
	ts_target *t;

	sprintf(path, "%s/targets/a100.json", ts_test_srcdir());
	t = ts_target_lookup(ctx, path);
	if (!t)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_string_equal(t->name, "a100");
	free(path);
}

/* The running machine gives plausible numbers. */
static void test_target_host__plausible(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *t = ts_target_host(ctx);

	if (!t)
		fail_msg("%s", ts_ctx_error(ctx));
	assert_int_equal(t->kind, TS_TARGET_CPU);
	assert_true(t->cpu.cores >= 1);
	assert_true(t->cpu.threads_per_core >= 1);
	assert_true(t->cpu.l1d.size > 0);
	assert_true(t->cpu.l1d.size < t->cpu.l2.size);
	assert_true(t->cpu.line_bytes >= 32);
	assert_true(t->cpu.llvm_cpu[0] != '\0');
	assert_true(t->cpu.triple[0] != '\0');
#if defined(__x86_64__)
	assert_string_equal(t->cpu.arch, "x86_64");
	assert_true(t->cpu.simd_bytes >= 16);
	assert_true(t->cpu.vector_registers >= 16);
#endif
	assert_int_equal(ts_target_check(ctx, t, "host"), TS_OK);
}

/* One cache entry of a fake sysfs tree. */
struct fake_cache {
	const char *type, *level, *size, *shared, *line, *ways;
};

/* Write "value" to the file "name" of folder "dir". */
static void write_file(const char *dir, const char *name, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

/* Build a fake .../cpu0/cache folder under "root" from "n" entries. */
static void make_fake_sysfs(const char *root, const struct fake_cache *c,
	int n)
{
	char dir[512];

	for (int i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/index%d", root, i);
		assert_int_equal(mkdir(dir, 0700), 0);
		write_file(dir, "type", c[i].type);
		write_file(dir, "level", c[i].level);
		write_file(dir, "size", c[i].size);
		write_file(dir, "shared_cpu_list", c[i].shared);
		write_file(dir, "coherency_line_size", c[i].line);
		if (c[i].ways)
			write_file(dir, "ways_of_associativity", c[i].ways);
	}
}

/* Remove what make_fake_sysfs wrote under "root". */
static void remove_fake_sysfs(const char *root, int n)
{
	const char *files[] = { "type", "level", "size", "shared_cpu_list",
		"coherency_line_size", "ways_of_associativity" };
	char path[512];

	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 6; j++) {
			snprintf(path, sizeof(path), "%s/index%d/%s", root, i,
				files[j]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/index%d", root, i);
		rmdir(path);
	}
	rmdir(root);
}

/* sysfs alone (the path of non-x86 hosts) gives the caches of an 80-core
 * aarch64 machine, instruction caches left out, sharing counted in cores. */
static void test_target_sysfs__caches_of_a_fake_tree(void **state)
{
	static const struct fake_cache caches[] = {
		{ "Data", "1", "64K", "0", "64", "4" },
		{ "Instruction", "1", "64K", "0", "64", "4" },
		{ "Unified", "2", "1024K", "0", "64", "8" },
		{ "Unified", "3", "32M", "0-79", "64", NULL },
	};
	char root[] = "/tmp/ts_sysfs_XXXXXX";
	ts_target_cpu c;

	assert_non_null(mkdtemp(root));
	make_fake_sysfs(root, caches, 4);
	memset(&c, 0, sizeof(c));
	c.threads_per_core = 1;
	assert_int_equal(ts_target_sysfs_caches(&c, root), 3);
	assert_int_equal(c.l1d.size, 64 << 10);
	assert_int_equal(c.l1d.shared_by, 1);
	assert_int_equal(c.l2.size, 1 << 20);
	assert_int_equal(c.l3.size, 32 << 20);
	assert_int_equal(c.l3.shared_by, 80);
	assert_int_equal(c.line_bytes, 64);
	assert_int_equal(c.l1d.ways, 4);
	assert_int_equal(c.l2.ways, 8);
	assert_int_equal(c.l3.ways, 0);	/* not given: unknown */
	/* With two threads per core, "0,64" is one core. */
	memset(&c, 0, sizeof(c));
	c.threads_per_core = 2;
	remove_fake_sysfs(root, 4);
	assert_non_null(mkdtemp(strcpy(root, "/tmp/ts_sysfs_XXXXXX")));
	{
		const struct fake_cache smt[] = {
			{ "Data", "1", "32K", "0,64", "64", NULL },
			{ "Unified", "3", "256M", "0-127", "64", NULL },
		};
		make_fake_sysfs(root, smt, 2);
		assert_int_equal(ts_target_sysfs_caches(&c, root), 2);
		assert_int_equal(c.l1d.shared_by, 1);
		assert_int_equal(c.l3.shared_by, 64);
		remove_fake_sysfs(root, 2);
	}
}

/* On this machine, cpuid and sysfs agree on the private caches. */
static void test_target_host__cpuid_agrees_with_sysfs(void **state)
{
	ts_ctx *ctx = *state;
	ts_target *t = ts_target_host(ctx);
	ts_target_cpu c;

	assert_non_null(t);
	memset(&c, 0, sizeof(c));
	c.threads_per_core = t->cpu.threads_per_core;
	if (ts_target_sysfs_caches(&c, "/sys/devices/system/cpu/cpu0/cache")
	    < 2) {
		print_message("skipping: no cache information in sysfs\n");
		skip();
	}
	assert_int_equal(c.l1d.size, t->cpu.l1d.size);
	assert_int_equal(c.l2.size, t->cpu.l2.size);
	assert_int_equal(c.line_bytes, t->cpu.line_bytes);
	if (c.l1d.ways > 0)
		assert_int_equal(c.l1d.ways, t->cpu.l1d.ways);
	if (c.l2.ways > 0)
		assert_int_equal(c.l2.ways, t->cpu.l2.ways);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_target_lookup__shipped_files_load),
		TS_TEST(test_target_lookup__cpu_figures),
		TS_TEST(test_target_lookup__cpu_sources_and_peaks),
		TS_TEST(test_target_lookup__gpu_figures),
		TS_TEST(test_target_json__round_trip),
		TS_TEST(test_target_json__measured_fields),
		TS_TEST(test_target_equal__differs),
		TS_TEST(test_target_json__errors_name_field_and_file),
		TS_TEST(test_target_json__optin_defaults_to_block_limit),
		TS_TEST(test_target_lookup__unknown),
		TS_TEST(test_target_lookup__path),
		TS_TEST(test_target_host__plausible),
		TS_TEST(test_target_sysfs__caches_of_a_fake_tree),
		TS_TEST(test_target_host__cpuid_agrees_with_sysfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
