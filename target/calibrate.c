/* Calibration: measure, once, the numbers of the running CPU that the
 * analytical model uses, so that static scheduling of an unseen machine
 * needs no measurement afterwards.
 *
 * Each quantity is the best of a few short runs (a shared machine only
 * ever makes a run slower):
 * - the core clock, from a chain of dependent integer additions, one a
 *   cycle on every core this runs on;
 * - the f32 FMA peak of one core, from twelve independent chains of
 *   vector FMAs at the target's vector width (enough to cover latency
 *   times units on every x86 and Arm core seen);
 * - the bytes per cycle one core reads from each cache level and from
 *   DRAM, summing a buffer of half the level's size (DRAM: larger than
 *   every cache) with vector loads; DRAM also with every core at once;
 * - load latencies, chasing pointers through a random cycle of lines.
 *
 * The kernels are written with the vector intrinsics of the host's ISA
 * under target attributes, chosen at run time from the CPU's features, so
 * that the library itself is compiled for the baseline ISA. */
#include <config.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <tessel/target.h>

#include "support/support.h"

/* Runs of each measurement; the best counts. */
enum { RUNS = 3 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A sink the compiler cannot see through. */
static volatile double sink;

/* ---- clock ---- */

/* Seconds for "n" x 64 dependent integer additions (a cycle each), or 0
 * where there is no way to write them.  The addend is a register: some
 * cores fold additions of an immediate at renaming, several a cycle. */
static double add_chain(long n)
{
	uint64_t x = 0, y = (uint64_t)n | 1;
	double t0 = now_s();

	for (long i = 0; i < n; i++) {
#if defined(__x86_64__)
		__asm__ volatile(".rept 64\n\taddq %1, %0\n\t.endr"
			: "+r"(x) : "r"(y));
#elif defined(__aarch64__)
		__asm__ volatile(".rept 64\n\tadd %0, %0, %1\n\t.endr"
			: "+r"(x) : "r"(y));
#else
		(void)y;
		return 0;
#endif
	}
	sink = (double)x;
	return now_s() - t0;
}

/* ---- FMA peak ---- */

/* Twelve chains of "n" FMAs each on vectors of type V with the
 * operations SET (broadcast), FMA and ADD; leaves the sum in "sink". */
#define FMA_CHAINS(V, SET, FMA, ADD, REDUCE, n)				\
	do {								\
		V a0 = SET(0.1f), a1 = SET(0.2f), a2 = SET(0.3f);	\
		V a3 = SET(0.4f), a4 = SET(0.5f), a5 = SET(0.6f);	\
		V a6 = SET(0.7f), a7 = SET(0.8f), a8 = SET(0.9f);	\
		V a9 = SET(1.0f), a10 = SET(1.1f), a11 = SET(1.2f);	\
		V b = SET(0.99999f), c = SET(1e-6f);			\
		for (long i = 0; i < (n); i++) {			\
			a0 = FMA(a0, b, c); a1 = FMA(a1, b, c);		\
			a2 = FMA(a2, b, c); a3 = FMA(a3, b, c);		\
			a4 = FMA(a4, b, c); a5 = FMA(a5, b, c);		\
			a6 = FMA(a6, b, c); a7 = FMA(a7, b, c);		\
			a8 = FMA(a8, b, c); a9 = FMA(a9, b, c);		\
			a10 = FMA(a10, b, c); a11 = FMA(a11, b, c);	\
		}							\
		a0 = ADD(ADD(ADD(a0, a1), ADD(a2, a3)),			\
			ADD(ADD(a4, a5), ADD(a6, a7)));			\
		a0 = ADD(a0, ADD(ADD(a8, a9), ADD(a10, a11)));		\
		sink = REDUCE(a0);					\
	} while (0)

/* Sum "n" floats at "p" with eight vector accumulators: enough to keep
 * two loads a cycle going behind additions of four cycles' latency. */
#define READ_SUM(V, LOAD, ADD, ZERO, REDUCE, W, p, n)			\
	do {								\
		V s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO();	\
		V s4 = ZERO(), s5 = ZERO(), s6 = ZERO(), s7 = ZERO();	\
		for (size_t i = 0; i + 8 * (W) <= (n); i += 8 * (W)) {	\
			s0 = ADD(s0, LOAD((p) + i));			\
			s1 = ADD(s1, LOAD((p) + i + (W)));		\
			s2 = ADD(s2, LOAD((p) + i + 2 * (W)));		\
			s3 = ADD(s3, LOAD((p) + i + 3 * (W)));		\
			s4 = ADD(s4, LOAD((p) + i + 4 * (W)));		\
			s5 = ADD(s5, LOAD((p) + i + 5 * (W)));		\
			s6 = ADD(s6, LOAD((p) + i + 6 * (W)));		\
			s7 = ADD(s7, LOAD((p) + i + 7 * (W)));		\
		}							\
		s0 = ADD(ADD(s0, s1), ADD(s2, s3));			\
		sink = REDUCE(ADD(s0, ADD(ADD(s4, s5), ADD(s6, s7))));	\
	} while (0)

#if defined(__x86_64__)

__attribute__((target("avx512f")))
static double first512(__m512 v)
{
	return _mm512_reduce_add_ps(v);
}

__attribute__((target("avx512f")))
static void fma512(long n)
{
	FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps,
		first512, n);
}

__attribute__((target("avx512f")))
static void read512(const float *p, size_t n)
{
	READ_SUM(__m512, _mm512_loadu_ps, _mm512_add_ps, _mm512_setzero_ps,
		first512, 16, p, n);
}

__attribute__((target("avx")))
static double first256(__m256 v)
{
	float f[8];

	_mm256_storeu_ps(f, v);
	return f[0];
}

__attribute__((target("avx2,fma")))
static void fma256(long n)
{
	FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps,
		first256, n);
}

__attribute__((target("avx")))
static void read256(const float *p, size_t n)
{
	READ_SUM(__m256, _mm256_loadu_ps, _mm256_add_ps, _mm256_setzero_ps,
		first256, 8, p, n);
}

static double first128(__m128 v)
{
	return _mm_cvtss_f32(v);
}

/* Without FMA: a multiply and an add, two flops as well. */
static __m128 muladd128(__m128 a, __m128 b, __m128 c)
{
	return _mm_add_ps(_mm_mul_ps(a, b), c);
}

static void fma128(long n)
{
	FMA_CHAINS(__m128, _mm_set1_ps, muladd128, _mm_add_ps, first128, n);
}

static void read128(const float *p, size_t n)
{
	READ_SUM(__m128, _mm_loadu_ps, _mm_add_ps, _mm_setzero_ps, first128,
		4, p, n);
}

/* The widest of the kernels that both "simd_bytes" and the CPU allow:
 * its vector bytes. */
static int kernel_width(int simd_bytes)
{
	__builtin_cpu_init();
	if (simd_bytes >= 64 && __builtin_cpu_supports("avx512f"))
		return 64;
	if (simd_bytes >= 32 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma"))
		return 32;
	return 16;
}

static void fma_run(int width, long n)
{
	if (width == 64)
		fma512(n);
	else if (width == 32)
		fma256(n);
	else
		fma128(n);
}

static void read_run(int width, const float *p, size_t n)
{
	if (width == 64)
		read512(p, n);
	else if (width == 32)
		read256(p, n);
	else
		read128(p, n);
}

#elif defined(__aarch64__)

static double first128(float32x4_t v)
{
	return vaddvq_f32(v);
}

static float32x4_t fma128(float32x4_t a, float32x4_t b, float32x4_t c)
{
	return vfmaq_f32(c, a, b);
}

static float32x4_t zero128(void)
{
	return vdupq_n_f32(0);
}

static int kernel_width(int simd_bytes)
{
	(void)simd_bytes;
	return 16;
}

static void fma_run(int width, long n)
{
	(void)width;
	FMA_CHAINS(float32x4_t, vdupq_n_f32, fma128, vaddq_f32, first128, n);
}

static void read_run(int width, const float *p, size_t n)
{
	(void)width;
	READ_SUM(float32x4_t, vld1q_f32, vaddq_f32, zero128, first128, 4, p,
		n);
}

#else

static int kernel_width(int simd_bytes)
{
	(void)simd_bytes;
	return 0;
}

static void fma_run(int width, long n)
{
	(void)width;
	(void)n;
}

static void read_run(int width, const float *p, size_t n)
{
	(void)width;
	(void)p;
	(void)n;
}

#endif

/* ---- measurements ---- */

/* A block of "bytes" on a page boundary (vector loads that straddle
 * lines would halve what a cache delivers), or NULL. */
static void *aligned_block(size_t bytes)
{
	void *p = NULL;

	return posix_memalign(&p, 4096, bytes ? bytes : 1) == 0 ? p : NULL;
}

/* The core clock in GHz, or 0 where it cannot be measured. */
static double measure_clock(void)
{
	double best = 0;

	add_chain(200000);	/* wake the core up */
	for (int r = 0; r < RUNS; r++) {
		double t = add_chain(400000);
		if (t > 0 && 64 * 400000 / t > best)
			best = 64 * 400000 / t;
	}
	return best / 1e9;
}

/* The f32 FMA peak of one core in GFLOP/s with vectors of "width"
 * bytes. */
static double measure_fma(int width)
{
	long n = 10000000;
	double best = 0;

	fma_run(width, n / 4);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s(), t;
		fma_run(width, n);
		t = now_s() - t0;
		if (t > 0)
			best = fmax(best, 12.0 * n * (width / 4) * 2 / t);
	}
	return best / 1e9;
}

/* The bytes per second one core reads from a buffer of "bytes" (touched
 * once first), reading at least "volume" bytes a run. */
static double measure_read(int width, float *buf, size_t bytes,
	double volume)
{
	size_t n = bytes / sizeof(float);
	int passes = (int)fmax(1, ceil(volume / (double)bytes));
	double best = 0;

	read_run(width, buf, n);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s(), t;
		for (int p = 0; p < passes; p++)
			read_run(width, buf, n);
		t = now_s() - t0;
		if (t > 0)
			best = fmax(best, (double)passes * (double)bytes / t);
	}
	return best;
}

/* One reader among all cores: its part of the buffer. */
struct reader {
	int width;
	const float *p;
	size_t n;
	int passes;
};

static void *reader_run(void *arg)
{
	struct reader *r = arg;

	for (int p = 0; p < r->passes; p++)
		read_run(r->width, r->p, r->n);
	return NULL;
}

/* The bytes per second "cores" threads read together, each from its
 * share of "buf" ("bytes" in all); 0 when threads cannot start. */
static double measure_read_all(int width, float *buf, size_t bytes,
	int cores)
{
	pthread_t *th = ts_new_atomic(pthread_t, cores);
	struct reader *rd = ts_new_atomic(struct reader, cores);
	size_t share = bytes / sizeof(float) / (size_t)cores;
	double best = 0;

	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s(), t;
		int started = 0;
		for (int c = 0; c < cores; c++) {
			rd[c] = (struct reader){ width, buf + share * c, share,
				2 };
			if (pthread_create(&th[c], NULL, reader_run, &rd[c]))
				break;
			started++;
		}
		for (int c = 0; c < started; c++)
			pthread_join(th[c], NULL);
		if (started < cores)
			return 0;
		t = now_s() - t0;
		if (t > 0)
			best = fmax(best, 2.0 * (double)bytes / t);
	}
	return best;
}

/* Nanoseconds of one dependent load in a random cycle through the lines
 * of a buffer of "bytes" ("line" bytes a line). */
static double measure_latency(size_t bytes, int line, ts_ctx *ctx)
{
	size_t stride = (size_t)line / sizeof(size_t);
	size_t nodes = bytes / (size_t)line, at = 0;
	size_t *next = aligned_block(bytes);
	size_t *order;
	long steps = 2000000;
	double best = INFINITY;

	if (!next || nodes < 2 || !(order = malloc(nodes * sizeof(size_t)))) {
		free(next);
		return 0;
	}
	/* Sattolo's shuffle: one cycle through every node. */
	for (size_t i = 0; i < nodes; i++)
		order[i] = i;
	for (size_t i = nodes - 1; i > 0; i--) {
		size_t j = (size_t)ts_ctx_random_below(ctx, (uint64_t)i);
		size_t x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (size_t i = 0; i < nodes; i++)
		next[order[i] * stride] = order[(i + 1) % nodes] * stride;
	free(order);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s();
		for (long s = 0; s < steps; s++)
			at = next[at];
		best = fmin(best, (now_s() - t0) / (double)steps);
	}
	sink = (double)at;
	free(next);
	return best * 1e9;
}

/* Bytes of memory installed, or 0 when unknown. */
static double memory_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* The buffer size for DRAM: four times every cache (an L3 that a
 * virtual machine reports larger than it is must not hide DRAM), at
 * least 256 MiB, at most 2 GiB and a quarter of the memory. */
static size_t dram_bytes(const ts_target_cpu *c)
{
	double caches = (double)c->l3.size + (double)c->l2.size * c->cores;
	double b = fmax(4 * caches, 256.0 * (1 << 20));
	double mem = memory_bytes();

	b = fmin(b, 2048.0 * (1 << 20));
	if (mem > 0)
		b = fmin(b, mem / 4);
	return (size_t)b & ~(size_t)4095;
}

/* Log "what" with value "v" and "unit" to "log". */
static void note(FILE *log, const char *what, double v, const char *unit)
{
	if (log)
		fprintf(log, "  %-28s %.4g %s\n", what, v, unit);
}

/* Measure the caches of "t" into it, with vectors of "width" bytes at
 * "ghz"; the buffer "buf" holds at least the largest level. */
static void measure_caches(ts_target *t, int width, double ghz, float *buf,
	ts_ctx *ctx, FILE *log)
{
	ts_target_cache *level[] = { &t->cpu.l1d, &t->cpu.l2, &t->cpu.l3 };
	static const char *const name[] = { "L1", "L2", "L3" };

	for (int i = 0; i < 3; i++) {
		size_t bytes = (size_t)ts_target_cache_per_core(level[i]) / 2;
		/* Just past the level before: an L3 that a virtual machine
		 * reports larger than it is would otherwise show DRAM. */
		if (i == 2)
			bytes = TS_MIN(bytes, 4 * (size_t)
				ts_target_cache_per_core(level[i - 1]));
		double bw, lat;
		/* A level no larger than the one before has nothing of its
		 * own to measure. */
		if (bytes < 4096 || (i > 0 && bytes <= (size_t)
		    ts_target_cache_per_core(level[i - 1])))
			continue;
		bw = measure_read(width, buf, bytes, 512.0 * (1 << 20));
		lat = measure_latency(bytes, t->cpu.line_bytes, ctx);
		level[i]->bytes_per_cycle = bw / (ghz * 1e9);
		level[i]->latency_cycles = lat * ghz;
		if (log) {
			char what[64];
			snprintf(what, sizeof(what), "%s read (%zu KiB)",
				name[i], bytes >> 10);
			note(log, what, bw / 1e9, "GB/s");
			snprintf(what, sizeof(what), "%s latency", name[i]);
			note(log, what, lat, "ns");
		}
	}
}

/* Measure DRAM into "t" with vectors of "width" bytes. */
static ts_status measure_dram(ts_ctx *ctx, ts_target *t, int width,
	FILE *log)
{
	size_t bytes = dram_bytes(&t->cpu);
	float *buf = aligned_block(bytes);
	double all;

	if (!buf)
		return ts_ctx_set_error(ctx, "calibration: cannot allocate %zu "
			"MiB to measure memory", bytes >> 20);
	/* Touch every page, with something other than zeros. */
	for (size_t i = 0; i < bytes / sizeof(float); i++)
		buf[i] = (float)(i & 1023);
	t->cpu.dram_gbs_core = measure_read(width, buf, bytes,
		(double)bytes) / 1e9;
	note(log, "DRAM read, one core", t->cpu.dram_gbs_core, "GB/s");
	all = t->cpu.cores > 1 ? measure_read_all(width, buf, bytes,
		t->cpu.cores) / 1e9 : t->cpu.dram_gbs_core;
	t->cpu.bandwidth_gbs = fmax(all, t->cpu.dram_gbs_core);
	note(log, "DRAM read, all cores", t->cpu.bandwidth_gbs, "GB/s");
	free(buf);
	t->cpu.dram_latency_ns = measure_latency(TS_MIN(bytes,
		(size_t)1 << 30), t->cpu.line_bytes, ctx);
	note(log, "DRAM latency", t->cpu.dram_latency_ns, "ns");
	return TS_OK;
}

/* Set the clock and peaks of "t" from the measured "ghz" and "peak"
 * (GFLOP/s of one core); FMA units are what the peak needs at that
 * clock, never fewer than described. */
static void set_peaks(ts_target *t, double ghz, double peak)
{
	ts_target_cpu *c = &t->cpu;
	double per_unit = ghz * (c->simd_bytes / 4) * 2.0;
	int units = (int)ceil(peak / per_unit - 0.1);

	c->frequency_ghz = ghz;
	c->fma_units = TS_MAX(c->fma_units, units);
	c->peak_gflops_f32_core = fmin(peak, c->fma_units * per_unit);
	c->peak_gflops_f32 = c->peak_gflops_f32_core * c->cores;
}

ts_target *ts_target_calibrate(ts_ctx *ctx, const ts_target *base,
	FILE *log)
{
	ts_target *t;
	int width;
	double ghz, peak, t0 = now_s();
	size_t cache_buf;
	float *buf;

	if (!base || base->kind != TS_TARGET_CPU) {
		ts_ctx_set_error(ctx, "calibration measures the CPU this runs "
			"on; '%s' is not a CPU target", base && base->name ?
			base->name : "(none)");
		return NULL;
	}
	width = kernel_width(base->cpu.simd_bytes);
	ghz = measure_clock();
	if (width == 0 || ghz <= 0) {
		ts_ctx_set_error(ctx, "calibration: no measuring kernels for "
			"this architecture (x86-64 and AArch64 only)");
		return NULL;
	}
	t = ts_new(ts_target);
	*t = *base;
	note(log, "core clock", ghz, "GHz");
	peak = measure_fma(width);
	note(log, "f32 FMA peak, one core", peak, "GFLOP/s");
	/* Vectors narrower than the description's: the peak scales. */
	peak *= (double)base->cpu.simd_bytes / width;
	set_peaks(t, ghz, peak);
	cache_buf = TS_MAX((size_t)ts_target_cache_per_core(&t->cpu.l2),
		(size_t)ts_target_cache_per_core(&t->cpu.l3) / 2);
	cache_buf = TS_MIN(cache_buf, 4 * (size_t)
		ts_target_cache_per_core(&t->cpu.l2));
	if (!(buf = aligned_block(cache_buf))) {
		ts_ctx_set_error(ctx, "calibration: cannot allocate %zu KiB",
			cache_buf >> 10);
		return NULL;
	}
	for (size_t i = 0; i < cache_buf / sizeof(float); i++)
		buf[i] = (float)(i & 1023);
	measure_caches(t, width, ghz, buf, ctx, log);
	free(buf);
	if (measure_dram(ctx, t, width, log) < 0)
		return NULL;
	t->cpu.source = ts_asprintf("clock, FMA peak, cache and memory "
		"bandwidths and latencies measured by tessel hw --calibrate "
		"on %s in %.1f s; the rest %s", ts_utc_now("%Y-%m-%d"), now_s() - t0,
		*base->cpu.source ? base->cpu.source : "as described");
	ts_target_finish(t);
	if (ts_target_check(ctx, t, "calibrated target") < 0)
		return NULL;
	return t;
}
