/* Tessel: hardware descriptions for static scheduling.
 *
 * A target describes one machine, CPU or GPU, by the few numbers the
 * analytical model needs: parallelism, vector width, FMA throughput, the
 * cache hierarchy and, when known, peak arithmetic and memory bandwidth.
 * A target is detected from the running CPU (ts_target_host), read from a
 * JSON file (ts_target_from_json_file, ts_target_lookup for the files
 * shipped in targets/), or filled from a GPU by the driver API
 * (ts_cuda_device_target in tessel/cuda.h).
 *
 * Sizes are in bytes in the structures and in KiB in the JSON files.
 * Zero means "unknown" for every optional number.
 */
#ifndef TESSEL_TARGET_H
#define TESSEL_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_target_kind {
	TS_TARGET_CPU,
	TS_TARGET_GPU,
	TS_TARGET_KIND_COUNT
} ts_target_kind;

/* One level of a CPU's data cache hierarchy. */
typedef struct ts_target_cache {
	int64_t size;		/* bytes of one instance; 0: no such level */
	int shared_by;		/* cores sharing one instance; 1: private */
	double bytes_per_cycle;	/* what one core reads from this level, per
				 * core cycle (0: unknown) */
	double latency_cycles;	/* of a dependent load hitting it (0:
				 * unknown) */
	int ways;		/* associativity (0: unknown, taken as 8) */
} ts_target_cache;

/* The fields of a CPU target. */
typedef struct ts_target_cpu {
	const char *arch;	/* "x86_64", "aarch64" */
	const char *triple;	/* LLVM target triple */
	const char *llvm_cpu;	/* LLVM cpu name: "znver3", "neoverse-n1" */
	const char *llvm_features;	/* "+avx2,+fma", may be "" */
	int cores;		/* physical cores used for parallel loops */
	int threads_per_core;	/* hardware threads (SMT) per core */
	int simd_bytes;		/* width of one vector register */
	int lanes[TS_DTYPE_COUNT];	/* simd_bytes / element size; derived */
	int fma_units;		/* vector FMA issued per cycle per core */
	int vector_registers;	/* architectural vector registers */
	ts_target_cache l1d;	/* level 1 data cache */
	ts_target_cache l2;
	ts_target_cache l3;	/* size 0 when the machine has none */
	int line_bytes;		/* cache line size */
	double frequency_ghz;	/* sustained core clock */
	double peak_gflops_f32_core;	/* f32 FMA peak of one core */
	double peak_gflops_f32;	/* of all "cores" */
	double bandwidth_gbs;	/* DRAM bandwidth of the whole machine */
	double dram_gbs_core;	/* DRAM bandwidth one core reaches */
	double dram_latency_ns;	/* of a dependent load from DRAM */
	const char *source;	/* where the numbers come from, may be "" */
} ts_target_cpu;

/* The fields of a GPU target. */
typedef struct ts_target_gpu {
	const char *arch;	/* compute capability as "sm_90" */
	int cc_major, cc_minor;	/* the same, as numbers; derived */
	int sm_count;
	int warp_size;
	int max_threads_per_block;
	int max_threads_per_sm;
	int max_blocks_per_sm;	/* 0 when unknown */
	int64_t shared_per_block;	/* default limit per block, bytes */
	int64_t shared_per_block_optin;	/* opt-in limit per block, bytes */
	int64_t shared_per_sm;	/* bytes */
	int registers_per_block;	/* 32-bit registers */
	int registers_per_sm;
	int64_t l2_size;	/* bytes */
	int64_t memory_size;	/* global memory, bytes */
	double clock_ghz;	/* boost clock of the SMs */
	double peak_tflops_f32;
	double peak_tflops_f16;	/* without tensor cores */
	double peak_tflops_tensor_f16;	/* dense, f16 in, f32 accumulate */
	double bandwidth_gbs;	/* device memory bandwidth */
} ts_target_gpu;

/* A hardware description.  Only the part that matches "kind" is used; the
 * other one stays zero. */
typedef struct ts_target {
	ts_target_kind kind;
	const char *name;	/* short name: "zen3", "h100", "host" */
	const char *description;	/* free text, may be "" */
	ts_target_cpu cpu;
	ts_target_gpu gpu;
} ts_target;

/* The name of "kind", a static string. */
__ts_keep const char *ts_target_kind_name(ts_target_kind kind);

/* Describe the CPU this process runs on: cpuid and sysfs on x86-64, sysfs
 * elsewhere; LLVM names the cpu and its features. */
__ts_gc ts_target *ts_target_host(__ts_keep ts_ctx *ctx);

/* Read a target from the JSON text "json"; "where" names it in messages
 * (usually the file name; NULL: "(target)").  Unknown fields, missing
 * required fields and inconsistent values are errors. */
__ts_gc ts_target *ts_target_from_json(__ts_keep ts_ctx *ctx,
	__ts_keep const char *json, __ts_keep __ts_null const char *where);
__ts_gc ts_target *ts_target_from_json_file(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path);
/* Return "t" as JSON text that ts_target_from_json reads back to an
 * equal target. */
__ts_gc char *ts_target_to_json(__ts_keep const ts_target *t);
/* Find the shipped description "name" ("zen3", "h100", ...) in the
 * installed data directory, then in the source tree.  A name ending in
 * ".json" or containing '/' is read as a file. */
__ts_gc ts_target *ts_target_lookup(__ts_keep ts_ctx *ctx,
	__ts_keep const char *name);

/* Check that the fields of "t" are complete and consistent; "where" names
 * it in messages. */
ts_status ts_target_check(__ts_keep ts_ctx *ctx, __ts_keep const ts_target *t,
	__ts_keep const char *where);
/* Fill the derived fields of "t" (lanes per dtype, compute capability
 * numbers) from the others. */
void ts_target_finish(__ts_keep ts_target *t);
bool ts_target_equal(__ts_keep const ts_target *a,
	__ts_keep const ts_target *b);
/* Print "t" readably, one field a line. */
void ts_target_print(__ts_keep FILE *out, __ts_keep const ts_target *t);
/* Whether code compiled for the CPU target "t" runs on the CPU "host":
 * the same architecture, and every feature "t" enables ("+name" in its
 * LLVM features) enabled on "host".  An AVX-512 machine runs the code of
 * an AVX2 target, so its schedules and code can be checked and timed
 * there.  When it does not, "why" receives the reason. */
bool ts_target_runs_on(__ts_keep const ts_target *t,
	__ts_keep const ts_target *host, __ts_keep __ts_null const char **why);

/* The numbers the analytical model uses from the CPU target "t", with
 * what it assumes where "t" does not say (printed by ts_target_print):
 * the core clock (2.5 GHz); the f32 FMA peak of one core (from clock,
 * FMA units and vector width); the bytes per cycle one core reads from
 * cache level "level" (0 L1 into registers: two vectors; 1 L2: 64; 2 L3:
 * 24); DRAM bandwidth for "threads" cores (20 GB/s for the machine, no
 * limit per core). */
double ts_target_frequency_ghz(__ts_keep const ts_target *t);
double ts_target_peak_gflops_core(__ts_keep const ts_target *t);
double ts_target_read_bytes_per_cycle(__ts_keep const ts_target *t, int level);
double ts_target_dram_gbs(__ts_keep const ts_target *t, int threads);

/* Measure the machine this process runs on and return "base" (its
 * description, usually ts_target_host's) with what was measured: core
 * clock, f32 FMA peak, the bytes per cycle and latency of each cache
 * level, DRAM bandwidth of one core and of all, DRAM latency.  Takes a
 * few seconds; "log", when not NULL, gets one line per measurement. */
__ts_gc ts_target *ts_target_calibrate(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_target *base, __ts_keep __ts_null FILE *log);

/* Vector lanes of "dtype" on the CPU target "t" (1 on a GPU). */
int ts_target_lanes(__ts_keep const ts_target *t, ts_dtype dtype);
/* The share of cache level "c" that one core can count on. */
int64_t ts_target_cache_per_core(__ts_keep const ts_target_cache *c);

#ifdef __cplusplus
}
#endif

#endif
