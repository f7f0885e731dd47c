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
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_cuda_module ts_cuda_module;
typedef struct ts_cuda_kernel ts_cuda_kernel;
/* A device address. */
typedef uint64_t ts_cuda_ptr;

/* Compile the CUDA C source "src" (named "name" in messages) for "arch"
 * ("sm_90") to PTX, or to a cubin when "cubin" is set.  On success "*out"
 * holds the GC-allocated image (PTX is NUL-terminated) and "*out_size" its
 * size in bytes; on failure the context's error holds NVRTC's log, whose
 * lines keep the source line numbers. */
ts_status ts_nvrtc_compile(ts_ctx *ctx, const char *src, const char *name,
	const char *arch, bool cubin, char **out, size_t *out_size);
/* Whether this NVRTC can compile for "arch" ("sm_70"); if not, the
 * context's error says which architectures it supports. */
bool ts_nvrtc_supports(ts_ctx *ctx, const char *arch);
/* The NVRTC version. */
ts_status ts_nvrtc_version(ts_ctx *ctx, int *major, int *minor);

/* Whether a CUDA driver and at least one device are usable; if not, the
 * context's error says why. */
bool ts_cuda_available(ts_ctx *ctx);
/* The number of devices, or -1 with an error. */
int ts_cuda_device_count(ts_ctx *ctx);
/* Describe "device" from its attributes (peaks derived from the clock and
 * the units per SM of its compute capability, 0 when unknown). */
ts_target *ts_cuda_device_target(ts_ctx *ctx, int device);

/* Make "device" the one this context works on, retaining its primary
 * context; release it with ts_cuda_context_destroy. */
ts_status ts_cuda_context_create(ts_ctx *ctx, int device);
void ts_cuda_context_destroy(ts_ctx *ctx);

/* Load the PTX or cubin "image" of "size" bytes; unload it with
 * ts_cuda_module_unload. */
ts_cuda_module *ts_cuda_module_load(ts_ctx *ctx, const void *image,
	size_t size);
void ts_cuda_module_unload(ts_ctx *ctx, ts_cuda_module *m);
/* The kernel "name" (extern "C") of "m". */
ts_cuda_kernel *ts_cuda_module_kernel(ts_ctx *ctx, ts_cuda_module *m,
	const char *name);

/* Device buffers. */
ts_status ts_cuda_alloc(ts_ctx *ctx, size_t bytes, ts_cuda_ptr *out);
ts_status ts_cuda_free(ts_ctx *ctx, ts_cuda_ptr p);
ts_status ts_cuda_copy_in(ts_ctx *ctx, ts_cuda_ptr dst, const void *src,
	size_t bytes);
ts_status ts_cuda_copy_out(ts_ctx *ctx, void *dst, ts_cuda_ptr src,
	size_t bytes);

/* Launch "k" on "grid" x "block" threads with "shared_bytes" of dynamic
 * shared memory (above 48 KiB the kernel is opted in first) and the
 * kernel arguments "args" (pointers to each argument, as cuLaunchKernel
 * takes them).  The launch is asynchronous. */
ts_status ts_cuda_launch(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args);
ts_status ts_cuda_synchronize(ts_ctx *ctx);
/* Launch "k" "runs" times between two CUDA events and store the mean
 * time of one run in milliseconds in "*ms". */
ts_status ts_cuda_time(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args, int runs, double *ms);

#ifdef __cplusplus
}
#endif

#endif
