/* Hardware descriptions: consistency checks, derived fields, comparison,
 * printing and lookup of the shipped descriptions.  Reading and writing
 * JSON is in target_json.c, host detection in target_detect.c. */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <tessel/target.h>

#include "support/support.h"

static const char *const kind_names[TS_TARGET_KIND_COUNT] = {
	[TS_TARGET_CPU] = "cpu",
	[TS_TARGET_GPU] = "gpu",
};

/* Return the name of "kind" as written in JSON. */
const char *ts_target_kind_name(ts_target_kind kind)
{
	return (unsigned)kind < TS_TARGET_KIND_COUNT ? kind_names[kind] : "?";
}

/* Whether "v" is a positive power of two. */
static bool is_pow2(int64_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* Parse the compute capability "arch" ("sm_90", "sm_90a") into "major"
 * and "minor"; return false when it is malformed. */
static bool parse_sm(const char *arch, int *major, int *minor)
{
	const char *p;
	int n = 0;

	if (!arch || strncmp(arch, "sm_", 3) != 0 ||
	    !isdigit((unsigned char)arch[3]))
		return false;
	for (p = arch + 3; isdigit((unsigned char)*p); p++)
		if (n <= 999)	/* past that it is refused below */
			n = n * 10 + (*p - '0');
	if (*p && (p[1] || (*p != 'a' && *p != 'f')))
		return false;
	if (n < 10 || n > 999)
		return false;
	*major = n / 10;
	*minor = n % 10;
	return true;
}

/* Replace NULL strings of "t" by "" so that printing and comparing need
 * not care. */
static void fill_strings(ts_target *t)
{
	const char **s[] = { &t->name, &t->description, &t->cpu.arch,
		&t->cpu.triple, &t->cpu.llvm_cpu, &t->cpu.llvm_features,
		&t->cpu.source, &t->gpu.arch };

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (!*s[i])
			*s[i] = "";
}

/* Fill the derived fields of "t": lanes per dtype on a CPU, compute
 * capability numbers and the default opt-in shared memory on a GPU. */
void ts_target_finish(ts_target *t)
{
	fill_strings(t);
	for (int d = 0; d < TS_DTYPE_COUNT; d++)
		t->cpu.lanes[d] = t->cpu.simd_bytes > 0 ?
			t->cpu.simd_bytes / (int)ts_dtype_size(d) : 0;
	if (!parse_sm(t->gpu.arch, &t->gpu.cc_major, &t->gpu.cc_minor))
		t->gpu.cc_major = t->gpu.cc_minor = 0;
	if (t->kind == TS_TARGET_GPU && !t->gpu.shared_per_block_optin)
		t->gpu.shared_per_block_optin = t->gpu.shared_per_block;
}

/* Return the vector lanes of "dtype" on "t". */
int ts_target_lanes(const ts_target *t, ts_dtype dtype)
{
	if (t->kind != TS_TARGET_CPU || (unsigned)dtype >= TS_DTYPE_COUNT)
		return 1;
	return TS_MAX(1, t->cpu.simd_bytes / (int)ts_dtype_size(dtype));
}

double ts_target_frequency_ghz(const ts_target *t)
{
	return t->cpu.frequency_ghz > 0 ? t->cpu.frequency_ghz : 2.5;
}

double ts_target_peak_gflops_core(const ts_target *t)
{
	const ts_target_cpu *c = &t->cpu;

	if (c->peak_gflops_f32_core > 0)
		return c->peak_gflops_f32_core;
	return ts_target_frequency_ghz(t) * TS_MAX(1, c->fma_units) * 2.0 *
		TS_MAX(1, c->simd_bytes / 4);
}

double ts_target_read_bytes_per_cycle(const ts_target *t, int level)
{
	const ts_target_cache *c[] = { &t->cpu.l1d, &t->cpu.l2, &t->cpu.l3 };
	double assumed[] = { 2.0 * TS_MAX(4, t->cpu.simd_bytes), 64, 24 };

	if (level < 0 || level > 2)
		return 0;
	return c[level]->bytes_per_cycle > 0 ? c[level]->bytes_per_cycle :
		assumed[level];
}

double ts_target_dram_gbs(const ts_target *t, int threads)
{
	double all = t->cpu.bandwidth_gbs > 0 ? t->cpu.bandwidth_gbs : 20.0;
	double some = t->cpu.dram_gbs_core * TS_MAX(1, threads);

	return some > 0 && some < all ? some : all;
}

/* Return the bytes of cache level "c" that one core may count on. */
int64_t ts_target_cache_per_core(const ts_target_cache *c)
{
	return c->size / TS_MAX(1, c->shared_by);
}

/* Whether "a" and "b" differ by more than "rel" relative to "b". */
static bool differ(double a, double b, double rel)
{
	return fabs(a - b) > rel * fabs(b);
}

/* Check that the string field "key" of "where" is set. */
static ts_status need_string(ts_ctx *ctx, const char *where, const char *key,
	const char *s)
{
	if (!s || !*s)
		return ts_ctx_set_error(ctx, "%s: field '%s' must not be empty",
			where, key);
	return TS_OK;
}

/* Check that the integer field "key" of "where" is at least "min". */
static ts_status need_min(ts_ctx *ctx, const char *where, const char *key,
	int64_t v, int64_t min)
{
	if (v < min)
		return ts_ctx_set_error(ctx, "%s: '%s' must be at least %lld, "
			"got %lld", where, key, (long long)min, (long long)v);
	return TS_OK;
}

/* Check that the byte size "key" of "where" is a whole number of KiB. */
static ts_status need_kib(ts_ctx *ctx, const char *where, const char *key,
	int64_t v)
{
	if (v % 1024)
		return ts_ctx_set_error(ctx, "%s: '%s' is %lld bytes, not a "
			"whole number of KiB", where, key, (long long)v);
	return TS_OK;
}

/* Check the cache level "key" of "where": present unless "optional". */
static ts_status check_cache(ts_ctx *ctx, const char *where, const char *key,
	const ts_target_cache *c, bool optional)
{
	if (optional && c->size == 0)
		return TS_OK;
	if (need_min(ctx, where, key, c->size, 1024) < 0 ||
	    need_kib(ctx, where, key, c->size) < 0)
		return TS_ERROR;
	if (c->shared_by < 1)
		return ts_ctx_set_error(ctx, "%s: '%s.shared_by' must be at "
			"least 1 (1: private to a core), got %d", where, key,
			c->shared_by);
	return TS_OK;
}

/* Check that cache "inner" is smaller than "outer" in "where". */
static ts_status check_order(ts_ctx *ctx, const char *where,
	const char *inner_key, const ts_target_cache *inner,
	const char *outer_key, const ts_target_cache *outer)
{
	if (inner->size >= outer->size)
		return ts_ctx_set_error(ctx, "%s: %s (%lld KiB) must be smaller "
			"than %s (%lld KiB)", where, inner_key,
			(long long)(inner->size / 1024), outer_key,
			(long long)(outer->size / 1024));
	return TS_OK;
}

/* Check the vector unit of the CPU target "c" of "where". */
static ts_status check_cpu_simd(ts_ctx *ctx, const char *where,
	const ts_target_cpu *c)
{
	if (!is_pow2(c->simd_bytes) || c->simd_bytes < 4 ||
	    c->simd_bytes > 256)
		return ts_ctx_set_error(ctx, "%s: 'simd_bytes' must be a power "
			"of two between 4 and 256, got %d", where,
			c->simd_bytes);
	if (need_min(ctx, where, "fma_units", c->fma_units, 1) < 0 ||
	    need_min(ctx, where, "vector_registers", c->vector_registers,
		     1) < 0)
		return TS_ERROR;
	return TS_OK;
}

/* Check the caches of the CPU target "c" of "where". */
static ts_status check_cpu_caches(ts_ctx *ctx, const char *where,
	const ts_target_cpu *c)
{
	if (check_cache(ctx, where, "l1d", &c->l1d, false) < 0 ||
	    check_cache(ctx, where, "l2", &c->l2, false) < 0 ||
	    check_cache(ctx, where, "l3", &c->l3, true) < 0 ||
	    check_order(ctx, where, "l1d", &c->l1d, "l2", &c->l2) < 0)
		return TS_ERROR;
	if (c->l3.size && check_order(ctx, where, "l2", &c->l2, "l3",
				      &c->l3) < 0)
		return TS_ERROR;
	if (!is_pow2(c->line_bytes) || c->line_bytes < 16 ||
	    c->line_bytes > c->l1d.size)
		return ts_ctx_set_error(ctx, "%s: 'line_bytes' must be a power "
			"of two of at least 16 and at most the l1d size, got %d",
			where, c->line_bytes);
	return TS_OK;
}

/* Check the optional speeds of the CPU target "c" of "where" against each
 * other: the peak of a core is at most FMA units x f32 lanes x 2 x clock
 * (a measured peak may be lower: clocks drop under wide vectors), the
 * total is the peak of a core times the cores. */
static ts_status check_cpu_peaks(ts_ctx *ctx, const char *where,
	const ts_target_cpu *c)
{
	double fma = (double)c->fma_units * (c->simd_bytes / 4) * 2.0;
	const ts_target_cache *cache[] = { &c->l1d, &c->l2, &c->l3 };

	if (c->frequency_ghz < 0 || c->peak_gflops_f32_core < 0 ||
	    c->peak_gflops_f32 < 0 || c->bandwidth_gbs < 0 ||
	    c->dram_gbs_core < 0 || c->dram_latency_ns < 0)
		return ts_ctx_set_error(ctx, "%s: clock, peaks, bandwidths and "
			"latencies must not be negative", where);
	for (int i = 0; i < 3; i++)
		if (cache[i]->bytes_per_cycle < 0 ||
		    cache[i]->latency_cycles < 0)
			return ts_ctx_set_error(ctx, "%s: cache bandwidths and "
				"latencies must not be negative", where);
	if (c->frequency_ghz > 0 && c->peak_gflops_f32_core > 0 &&
	    c->peak_gflops_f32_core > 1.01 * fma * c->frequency_ghz)
		return ts_ctx_set_error(ctx, "%s: 'peak_gflops_f32_core' is %g "
			"but fma_units x f32 lanes x 2 x frequency_ghz gives only "
			"%g", where, c->peak_gflops_f32_core,
			fma * c->frequency_ghz);
	if (c->peak_gflops_f32_core > 0 && c->peak_gflops_f32 > 0 &&
	    differ(c->peak_gflops_f32, c->peak_gflops_f32_core * c->cores,
		   0.01))
		return ts_ctx_set_error(ctx, "%s: 'peak_gflops_f32' is %g but "
			"cores x peak_gflops_f32_core gives %g", where,
			c->peak_gflops_f32,
			c->peak_gflops_f32_core * c->cores);
	return TS_OK;
}

/* Check the CPU target "c" of "where". */
static ts_status check_cpu(ts_ctx *ctx, const char *where,
	const ts_target_cpu *c)
{
	if (need_string(ctx, where, "arch", c->arch) < 0 ||
	    need_string(ctx, where, "triple", c->triple) < 0 ||
	    need_string(ctx, where, "llvm_cpu", c->llvm_cpu) < 0 ||
	    need_min(ctx, where, "cores", c->cores, 1) < 0 ||
	    need_min(ctx, where, "threads_per_core", c->threads_per_core,
		     1) < 0)
		return TS_ERROR;
	if (check_cpu_simd(ctx, where, c) < 0 ||
	    check_cpu_caches(ctx, where, c) < 0)
		return TS_ERROR;
	return check_cpu_peaks(ctx, where, c);
}

/* Check the thread limits of the GPU target "g" of "where". */
static ts_status check_gpu_threads(ts_ctx *ctx, const char *where,
	const ts_target_gpu *g)
{
	if (need_min(ctx, where, "sm_count", g->sm_count, 1) < 0)
		return TS_ERROR;
	if (!is_pow2(g->warp_size))
		return ts_ctx_set_error(ctx, "%s: 'warp_size' must be a power "
			"of two, got %d", where, g->warp_size);
	if (g->max_threads_per_block < g->warp_size ||
	    g->max_threads_per_block % g->warp_size)
		return ts_ctx_set_error(ctx, "%s: 'max_threads_per_block' (%d) "
			"must be a positive multiple of the warp size (%d)",
			where, g->max_threads_per_block, g->warp_size);
	if (g->max_threads_per_sm < g->max_threads_per_block)
		return ts_ctx_set_error(ctx, "%s: 'max_threads_per_sm' (%d) is "
			"smaller than 'max_threads_per_block' (%d)", where,
			g->max_threads_per_sm, g->max_threads_per_block);
	return need_min(ctx, where, "max_blocks_per_sm",
		g->max_blocks_per_sm, 0);
}

/* Check the memories of the GPU target "g" of "where". */
static ts_status check_gpu_memory(ts_ctx *ctx, const char *where,
	const ts_target_gpu *g)
{
	if (need_min(ctx, where, "shared_per_block_kib", g->shared_per_block,
		     1024) < 0 ||
	    need_min(ctx, where, "registers_per_block",
		     g->registers_per_block, 1) < 0 ||
	    need_min(ctx, where, "l2_kib", g->l2_size, 1024) < 0)
		return TS_ERROR;
	if (need_kib(ctx, where, "shared_per_block", g->shared_per_block) < 0 ||
	    need_kib(ctx, where, "shared_per_block_optin",
		     g->shared_per_block_optin) < 0 ||
	    need_kib(ctx, where, "shared_per_sm", g->shared_per_sm) < 0 ||
	    need_kib(ctx, where, "l2", g->l2_size) < 0)
		return TS_ERROR;
	if (g->shared_per_block > g->shared_per_block_optin ||
	    g->shared_per_block_optin > g->shared_per_sm)
		return ts_ctx_set_error(ctx, "%s: shared memory must satisfy "
			"per block (%lld KiB) <= per block opt-in (%lld KiB) "
			"<= per SM (%lld KiB)", where,
			(long long)(g->shared_per_block / 1024),
			(long long)(g->shared_per_block_optin / 1024),
			(long long)(g->shared_per_sm / 1024));
	if (g->registers_per_block > g->registers_per_sm)
		return ts_ctx_set_error(ctx, "%s: 'registers_per_block' (%d) is "
			"larger than 'registers_per_sm' (%d)", where,
			g->registers_per_block, g->registers_per_sm);
	return TS_OK;
}

/* Check the GPU target "g" of "where". */
static ts_status check_gpu(ts_ctx *ctx, const char *where,
	const ts_target_gpu *g)
{
	int major, minor;

	if (!parse_sm(g->arch, &major, &minor))
		return ts_ctx_set_error(ctx, "%s: 'compute_capability' must look "
			"like \"sm_90\", got \"%s\"", where,
			g->arch ? g->arch : "");
	if (check_gpu_threads(ctx, where, g) < 0 ||
	    check_gpu_memory(ctx, where, g) < 0)
		return TS_ERROR;
	if (g->memory_size % (1 << 20))
		return ts_ctx_set_error(ctx, "%s: 'memory_size' is %lld bytes, "
			"not a whole number of MiB", where,
			(long long)g->memory_size);
	if (g->clock_ghz < 0 || g->peak_tflops_f32 < 0 ||
	    g->peak_tflops_f16 < 0 || g->peak_tflops_tensor_f16 < 0 ||
	    g->bandwidth_gbs < 0 || g->memory_size < 0)
		return ts_ctx_set_error(ctx, "%s: clock, peaks, memory and "
			"bandwidth must not be negative", where);
	if (major < 7 && g->peak_tflops_tensor_f16 > 0)
		return ts_ctx_set_error(ctx, "%s: 'peak_tflops_tensor_f16' is "
			"given but %s has no tensor cores (sm_70 and later)",
			where, g->arch);
	return TS_OK;
}

/* Check that "t" (named "where" in messages) is complete and consistent. */
ts_status ts_target_check(ts_ctx *ctx, const ts_target *t, const char *where)
{
	if (!t)
		return ts_ctx_set_error(ctx, "%s: no target", where);
	if (need_string(ctx, where, "name", t->name) < 0)
		return TS_ERROR;
	switch (t->kind) {
	case TS_TARGET_CPU:
		return check_cpu(ctx, where, &t->cpu);
	case TS_TARGET_GPU:
		return check_gpu(ctx, where, &t->gpu);
	default:
		return ts_ctx_set_error(ctx, "%s: unknown target kind %d",
			where, (int)t->kind);
	}
}

/* Whether "a" and "b" describe the same machine.  The JSON text holds
 * every field that is not derived, with numbers written exactly, and
 * leaves out the part of the other kind, which is unused. */
bool ts_target_equal(const ts_target *a, const ts_target *b)
{
	return a->kind == b->kind &&
		strcmp(ts_target_to_json(a), ts_target_to_json(b)) == 0;
}

/* Return "bytes" as a short readable string: "32 KiB", "1.375 MiB". */
static const char *size_string(int64_t bytes)
{
	if (bytes >= ((int64_t)1 << 30) && bytes % ((int64_t)1 << 30) == 0)
		return ts_asprintf("%g GiB", bytes / 1073741824.0);
	if (bytes >= (1 << 20))
		return ts_asprintf("%g MiB", bytes / 1048576.0);
	if (bytes >= 1024)
		return ts_asprintf("%g KiB", bytes / 1024.0);
	return ts_asprintf("%lld B", (long long)bytes);
}

/* Print the cache level "key" of "c" to "out". */
static void print_cache(FILE *out, const char *key, const ts_target_cache *c)
{
	if (!c->size) {
		fprintf(out, "  %-22s none\n", key);
		return;
	}
	if (c->shared_by == 1)
		fprintf(out, "  %-22s %s per core", key, size_string(c->size));
	else
		fprintf(out, "  %-22s %s shared by %d cores (%s per core)",
			key, size_string(c->size), c->shared_by,
			size_string(ts_target_cache_per_core(c)));
	if (c->ways > 0)
		fprintf(out, ", %d-way", c->ways);
	if (c->bytes_per_cycle > 0)
		fprintf(out, ", reads %.3g B/cycle", c->bytes_per_cycle);
	if (c->latency_cycles > 0)
		fprintf(out, ", latency %.3g cycles", c->latency_cycles);
	fputc('\n', out);
}

/* Print "v" with "unit" under "key" to "out", or "unknown" when 0. */
static void print_number(FILE *out, const char *key, double v,
	const char *unit)
{
	if (v > 0)
		fprintf(out, "  %-22s %g %s\n", key, v, unit);
	else
		fprintf(out, "  %-22s unknown\n", key);
}

/* Print the CPU target "c" to "out". */
static void print_cpu(FILE *out, const ts_target_cpu *c)
{
	fprintf(out, "  %-22s %s (%s)\n", "arch", c->arch, c->triple);
	fprintf(out, "  %-22s %s\n", "llvm cpu", c->llvm_cpu);
	fprintf(out, "  %-22s %s\n", "llvm features",
		*c->llvm_features ? c->llvm_features : "(none)");
	fprintf(out, "  %-22s %d x %d threads\n", "cores", c->cores,
		c->threads_per_core);
	fprintf(out, "  %-22s %d bytes: %d x f32, %d x f16, %d x i8, "
		"%d x f64\n", "simd", c->simd_bytes, c->lanes[TS_F32],
		c->lanes[TS_F16], c->lanes[TS_I8], c->lanes[TS_F64]);
	fprintf(out, "  %-22s %d per core\n", "fma units", c->fma_units);
	fprintf(out, "  %-22s %d\n", "vector registers", c->vector_registers);
	print_cache(out, "l1d", &c->l1d);
	print_cache(out, "l2", &c->l2);
	print_cache(out, "l3", &c->l3);
	fprintf(out, "  %-22s %d bytes\n", "cache line", c->line_bytes);
	if (c->frequency_ghz > 0)
		print_number(out, "frequency", c->frequency_ghz, "GHz");
	else
		fprintf(out, "  %-22s unknown (the model assumes 2.5 GHz)\n",
			"frequency");
	print_number(out, "peak f32 per core", c->peak_gflops_f32_core,
		"GFLOP/s");
	print_number(out, "peak f32 total", c->peak_gflops_f32, "GFLOP/s");
	print_number(out, "memory bandwidth", c->bandwidth_gbs, "GB/s");
	if (c->dram_gbs_core > 0)
		print_number(out, "memory bw one core", c->dram_gbs_core,
			"GB/s");
	if (c->dram_latency_ns > 0)
		print_number(out, "memory latency", c->dram_latency_ns, "ns");
	if (*c->source)
		fprintf(out, "  %-22s %s\n", "source", c->source);
}

/* Print the GPU target "g" to "out". */
static void print_gpu(FILE *out, const ts_target_gpu *g)
{
	fprintf(out, "  %-22s %s (%d.%d)\n", "compute capability", g->arch,
		g->cc_major, g->cc_minor);
	fprintf(out, "  %-22s %d\n", "SMs", g->sm_count);
	fprintf(out, "  %-22s %d\n", "warp size", g->warp_size);
	fprintf(out, "  %-22s %d per block, %d per SM\n", "threads",
		g->max_threads_per_block, g->max_threads_per_sm);
	if (g->max_blocks_per_sm)
		fprintf(out, "  %-22s %d per SM\n", "blocks",
			g->max_blocks_per_sm);
	fprintf(out, "  %-22s %s per block (%s opt-in), %s per SM\n",
		"shared memory", size_string(g->shared_per_block),
		size_string(g->shared_per_block_optin),
		size_string(g->shared_per_sm));
	fprintf(out, "  %-22s %d per block, %d per SM\n", "registers",
		g->registers_per_block, g->registers_per_sm);
	fprintf(out, "  %-22s %s\n", "l2", size_string(g->l2_size));
	if (g->memory_size)
		fprintf(out, "  %-22s %s\n", "memory",
			size_string(g->memory_size));
	print_number(out, "clock", g->clock_ghz, "GHz");
	print_number(out, "peak f32", g->peak_tflops_f32, "TFLOP/s");
	print_number(out, "peak f16", g->peak_tflops_f16, "TFLOP/s");
	print_number(out, "peak tensor f16", g->peak_tflops_tensor_f16,
		"TFLOP/s");
	print_number(out, "memory bandwidth", g->bandwidth_gbs, "GB/s");
}

/* Print "t" to "out", one field a line. */
void ts_target_print(FILE *out, const ts_target *t)
{
	fprintf(out, "%s: %s target", t->name, ts_target_kind_name(t->kind));
	if (t->description && *t->description)
		fprintf(out, ", %s", t->description);
	fputc('\n', out);
	if (t->kind == TS_TARGET_CPU)
		print_cpu(out, &t->cpu);
	else
		print_gpu(out, &t->gpu);
}

/* Whether "name" is a plain target name: letters, digits, '-', '_', '.'
 * and no leading dot. */
static bool is_target_name(const char *name)
{
	if (!*name || *name == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return false;
	return true;
}

/* Whether "name" should be read as a file rather than looked up. */
static bool is_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 5 && !strcmp(name + n - 5, ".json"));
}

/* Find the shipped description "name" in the folder of targets of this
 * installation or build tree; a path is read as a file. */
ts_target *ts_target_lookup(ts_ctx *ctx, const char *name)
{
	const char *tried = NULL, *dir;
	char *path;

	if (!name)
		return NULL;
	if (is_path(name))
		return ts_target_from_json_file(ctx, name);
	if (!is_target_name(name)) {
		ts_ctx_set_error(ctx, "'%s' is not a valid target name", name);
		return NULL;
	}
	dir = ts_runtime_path(TS_FILE_TARGETS, &tried);
	if (!dir) {
		ts_ctx_set_error(ctx, "no target description named '%s': no "
			"folder of targets (looked in %s)", name, tried);
		return NULL;
	}
	path = ts_asprintf("%s/%s.json", dir, name);
	if (access(path, R_OK) == 0)
		return ts_target_from_json_file(ctx, path);
	ts_ctx_set_error(ctx, "no target description named '%s' (looked in "
		"%s)", name, dir);
	return NULL;
}

/* Whether the comma-separated list "list" holds the "n" characters of
 * "item" as one of its items. */
static bool list_has(const char *list, const char *item, size_t n)
{
	while (list && *list) {
		size_t m = strcspn(list, ",");
		if (m == n && !strncmp(list, item, n))
			return true;
		list += m + (list[m] == ',');
	}
	return false;
}

bool ts_target_runs_on(const ts_target *t, const ts_target *host,
	const char **why)
{
	const char *f;

	if (t->kind != TS_TARGET_CPU || host->kind != TS_TARGET_CPU) {
		if (why)
			*why = "only CPU targets run on a CPU";
		return false;
	}
	if (strcmp(t->cpu.arch, host->cpu.arch)) {
		if (why)
			*why = ts_asprintf("it is %s code and this CPU is %s",
				t->cpu.arch, host->cpu.arch);
		return false;
	}
	for (f = t->cpu.llvm_features; f && *f;) {
		size_t n = strcspn(f, ",");
		if (*f == '+' && !list_has(host->cpu.llvm_features, f, n)) {
			if (why)
				*why = ts_asprintf("it needs %.*s, which this "
					"CPU lacks", (int)n - 1, f + 1);
			return false;
		}
		f += n + (f[n] == ',');
	}
	return true;
}
