/* Tessel: CUDA C compilation with NVRTC and the CUDA driver API.
 *
 * NVRTC is linked when the library is built with CUDA; the driver
 * (libcuda.so.1) is loaded at run time, so a machine without a GPU driver
 * runs everything else and ts_cuda_available tells it apart.  In a build
 * without CUDA every function fails with a "built without CUDA" error.
 *
 * The CUDA context of a ts_ctx is the primary context of one device,
 * retained on first use (device 0) or by ts_cuda_context_create, and
 * released with the ts_ctx or by ts_cuda_context_destroy.  Modules and
 * device buffers belong to that context: unload and free them before
 * destroying it.  Every failing driver or NVRTC call leaves a message in
 * the ts_ctx with the call, the CUDA error name and its description.
 */
#ifndef TESSEL_CUDA_H
#define TESSEL_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tessel/dsl.h>
#include <tessel/loop.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_cuda_module ts_cuda_module;
typedef struct ts_cuda_kernel ts_cuda_kernel;
/* A device address. */
typedef uint64_t ts_cuda_ptr;

/* Compile the CUDA C source "src" (named "name" in messages; NULL:
 * "kernel.cu") for "arch" ("sm_90") to PTX, or to a cubin when "cubin" is
 * set.  On success "*out" holds the GC-allocated image (PTX is
 * NUL-terminated) and "*out_size" its size in bytes; on failure the
 * context's error holds NVRTC's log, whose lines keep the source line
 * numbers. */
ts_status ts_nvrtc_compile(__ts_keep ts_ctx *ctx, __ts_keep const char *src,
	__ts_keep __ts_null const char *name, __ts_keep const char *arch,
	bool cubin, __ts_keep char **out, __ts_keep size_t *out_size);
/* Whether this NVRTC can compile for "arch" ("sm_70"); if not, the
 * context's error says which architectures it supports. */
bool ts_nvrtc_supports(__ts_keep ts_ctx *ctx, __ts_keep const char *arch);
/* The NVRTC version. */
ts_status ts_nvrtc_version(__ts_keep ts_ctx *ctx, __ts_keep int *major,
	__ts_keep int *minor);

/* Whether a CUDA driver and at least one device are usable; if not, the
 * context's error says why. */
bool ts_cuda_available(__ts_keep ts_ctx *ctx);

/* The CUDA C type that holds an element of dtype "t" in memory
 * ("__half" for f16, "unsigned char" for bool), a static string. */
__ts_keep const char *ts_cuda_mem_type(ts_dtype t);
/* The number of devices, or -1 with an error. */
int ts_cuda_device_count(__ts_keep ts_ctx *ctx);
/* Describe "device" from its attributes (peaks derived from the clock and
 * the units per SM of its compute capability, 0 when unknown). */
__ts_gc ts_target *ts_cuda_device_target(__ts_keep ts_ctx *ctx, int device);

/* Make "device" the one this context works on, retaining its primary
 * context; release it with ts_cuda_context_destroy. */
ts_status ts_cuda_context_create(__ts_keep ts_ctx *ctx, int device);
void ts_cuda_context_destroy(__ts_keep ts_ctx *ctx);

/* Load the PTX or cubin "image" of "size" bytes; unload it with
 * ts_cuda_module_unload. */
__ts_give ts_cuda_module *ts_cuda_module_load(__ts_keep ts_ctx *ctx,
	__ts_keep const void *image, size_t size);
void ts_cuda_module_unload(__ts_keep ts_ctx *ctx,
	__ts_take __ts_null ts_cuda_module *m);
/* The kernel "name" (extern "C") of "m", usable while "m" stays
 * loaded. */
__ts_gc ts_cuda_kernel *ts_cuda_module_kernel(__ts_keep ts_ctx *ctx,
	__ts_keep ts_cuda_module *m, __ts_keep const char *name);

/* Device buffers.  ts_cuda_alloc stores in "*out" device memory that the
 * caller frees with ts_cuda_free. */
ts_status ts_cuda_alloc(__ts_keep ts_ctx *ctx, size_t bytes,
	__ts_keep ts_cuda_ptr *out);
ts_status ts_cuda_free(__ts_keep ts_ctx *ctx, ts_cuda_ptr p);
ts_status ts_cuda_copy_in(__ts_keep ts_ctx *ctx, ts_cuda_ptr dst,
	__ts_keep const void *src, size_t bytes);
ts_status ts_cuda_copy_out(__ts_keep ts_ctx *ctx, __ts_keep void *dst,
	ts_cuda_ptr src, size_t bytes);

/* Launch "k" on "grid" x "block" threads with "shared_bytes" of dynamic
 * shared memory (above 48 KiB the kernel is opted in first) and the
 * kernel arguments "args" (pointers to each argument, as cuLaunchKernel
 * takes them).  The launch is asynchronous. */
ts_status ts_cuda_launch(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_cuda_kernel *k, __ts_keep const unsigned grid[3],
	__ts_keep const unsigned block[3], unsigned shared_bytes,
	__ts_keep void **args);
ts_status ts_cuda_synchronize(__ts_keep ts_ctx *ctx);
/* Launch "k" "runs" times between two CUDA events and store the mean
 * time of one run in milliseconds in "*ms". */
ts_status ts_cuda_time(__ts_keep ts_ctx *ctx, __ts_keep const ts_cuda_kernel *k,
	__ts_keep const unsigned grid[3], __ts_keep const unsigned block[3],
	unsigned shared_bytes, __ts_keep void **args, int runs,
	__ts_keep double *ms);


/* CUDA C from the loop IR.
 *
 * ts_cuda_emit turns a lowered function into CUDA C and a host-side
 * description.  Each statement at the top of the function (below the
 * allocations of global temporaries) becomes one kernel, launched in
 * order: loops bound to TS_BIND_BLOCK_* and TS_BIND_THREAD_* become
 * blockIdx and threadIdx (the launch takes the largest extent bound to
 * each; smaller extents are guarded), buffers allocated with
 * TS_SCOPE_SHARED, or TS_SCOPE_LOCAL outside the thread loops, become
 * __shared__ arrays, the others per-thread arrays.  A copy into shared
 * memory is spread over the whole block between two barriers; a loop bound
 * to threads whose body combines into one element that does not depend
 * on it becomes a cross-thread reduction (warp shuffles, then shared
 * memory); stores outside the thread loops are done by thread 0.  f16
 * values are __half in memory and float in arithmetic.  Every kernel
 * takes every buffer of the program, in the order of "buffers".
 *
 * Tensor cores: where a loop bound to threadIdx.y has no threadIdx.x loop
 * above it, a per-thread accumulator used only by 16 x 16 fills,
 * multiply-adds of f16 tiles over a loop of 16, and stores is held in
 * nvcuda::wmma fragments; each thread of the IR becomes a warp of 32
 * lanes (threadIdx.x), the stores go through a 16 x 16 staging tile per
 * warp in shared memory (see doc/cuda.md). */

/* One buffer of a CUDA program: an argument of the function or a
 * temporary in device memory. */
typedef struct ts_cuda_buffer {
	const ts_tensor *tensor;
	const char *cname;	/* its name in the source */
	int arg;		/* index in the function's arguments, or -1 */
	size_t bytes;
} ts_cuda_buffer;

/* One kernel and how to launch it. */
typedef struct ts_cuda_launch_desc {
	const char *name;	/* extern "C" */
	unsigned grid[3];
	unsigned block[3];
	unsigned shared_bytes;	/* static __shared__ memory */
} ts_cuda_launch_desc;

/* Options of ts_cuda_emit. */
typedef struct ts_cuda_options {
	bool fast_math;		/* __expf, __logf, ... instead of expf */
	const ts_target *target;	/* GPU limits; NULL: the CUDA maxima */
} ts_cuda_options;

/* A CUDA program: the source, its kernels in launch order, its buffers
 * and, once compiled, the image for one architecture. */
typedef struct ts_cuda_program {
	const ts_func *func;
	const char *name;	/* C identifier prefix of the kernels */
	const char *source;
	int nbuffers;		/* the function's arguments, then temporaries */
	ts_cuda_buffer *buffers;
	int nkernels;
	ts_cuda_launch_desc *kernels;
	/* ts_cuda_program_compile */
	const char *arch;
	bool cubin;
	char *image;
	size_t image_size;
} ts_cuda_program;

/* Emit "f" as CUDA C ("opts" may be NULL).  NULL with an error naming the
 * kernel and loop or buffer when "f" cannot run on a GPU as scheduled
 * (a store outside a loop bound to a block index that the kernel uses, a
 * barrier under a condition on the thread index, too much shared
 * memory, ...). */
__ts_gc ts_cuda_program *ts_cuda_emit(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_func *f,
	__ts_keep __ts_null const ts_cuda_options *opts);
/* Compile "p" with NVRTC for "arch" to PTX or a cubin. */
ts_status ts_cuda_program_compile(__ts_keep ts_ctx *ctx,
	__ts_keep ts_cuda_program *p, __ts_keep const char *arch, bool cubin);
/* Run "p" on the device: "args" follow the function's arguments (inputs
 * then outputs, host arrays); outputs are copied back.  Compiles for the
 * device's architecture when "p" holds no cubin for it. */
ts_status ts_cuda_program_run(__ts_keep ts_ctx *ctx,
	__ts_keep ts_cuda_program *p, __ts_keep ts_array *const *args);
/* Run "p" "runs" times after one warm-up run and store the mean time of
 * one run (every kernel) in milliseconds, from CUDA events. */
ts_status ts_cuda_program_time(__ts_keep ts_ctx *ctx,
	__ts_keep ts_cuda_program *p, __ts_keep ts_array *const *args, int runs,
	__ts_keep double *ms);
/* A C header describing "p" for a host program: kernel names, launch
 * dimensions, shared memory and the buffer order. */
__ts_gc char *ts_cuda_program_header(__ts_keep const ts_cuda_program *p);
/* Print the launch description of "p", one kernel a line. */
void ts_cuda_program_print(__ts_keep FILE *out,
	__ts_keep const ts_cuda_program *p);

#ifdef __cplusplus
}
#endif

#endif
