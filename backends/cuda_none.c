/* The CUDA API of a build without the CUDA toolkit: every call fails with
 * a message that says so. */
#include <config.h>

#include <tessel/cuda.h>

#include "support/support.h"

/* Record in "ctx" that "what" needs CUDA; return TS_ERROR. */
static ts_status no_cuda(ts_ctx *ctx, const char *what)
{
	return ts_ctx_set_error(ctx, "%s: Tessel was built without CUDA "
		"(configure found no CUDA toolkit; see --with-cuda)", what);
}

/* Fail in "ctx": ts_nvrtc_compile needs CUDA. */
ts_status ts_nvrtc_compile(ts_ctx *ctx, const char *src, const char *name,
	const char *arch, bool cubin, char **out, size_t *out_size)
{
	return no_cuda(ctx, "ts_nvrtc_compile");
}

/* Fail in "ctx": ts_nvrtc_supports needs CUDA. */
bool ts_nvrtc_supports(ts_ctx *ctx, const char *arch)
{
	no_cuda(ctx, "ts_nvrtc_supports");
	return false;
}

/* Fail in "ctx": ts_nvrtc_version needs CUDA. */
ts_status ts_nvrtc_version(ts_ctx *ctx, int *major, int *minor)
{
	return no_cuda(ctx, "ts_nvrtc_version");
}

/* Fail in "ctx": ts_cuda_available needs CUDA. */
bool ts_cuda_available(ts_ctx *ctx)
{
	no_cuda(ctx, "ts_cuda_available");
	return false;
}

/* Fail in "ctx": ts_cuda_device_count needs CUDA. */
int ts_cuda_device_count(ts_ctx *ctx)
{
	no_cuda(ctx, "ts_cuda_device_count");
	return -1;
}

/* Fail in "ctx": ts_cuda_device_target needs CUDA. */
ts_target *ts_cuda_device_target(ts_ctx *ctx, int device)
{
	no_cuda(ctx, "ts_cuda_device_target");
	return NULL;
}

/* Fail in "ctx": ts_cuda_context_create needs CUDA. */
ts_status ts_cuda_context_create(ts_ctx *ctx, int device)
{
	return no_cuda(ctx, "ts_cuda_context_create");
}

/* Nothing to release in "ctx" without CUDA. */
void ts_cuda_context_destroy(ts_ctx *ctx)
{
}

/* Fail in "ctx": ts_cuda_module_load needs CUDA. */
ts_cuda_module *ts_cuda_module_load(ts_ctx *ctx, const void *image,
	size_t size)
{
	no_cuda(ctx, "ts_cuda_module_load");
	return NULL;
}

/* Nothing to release in "ctx" without CUDA. */
void ts_cuda_module_unload(ts_ctx *ctx, ts_cuda_module *m)
{
}

/* Fail in "ctx": ts_cuda_module_kernel needs CUDA. */
ts_cuda_kernel *ts_cuda_module_kernel(ts_ctx *ctx, ts_cuda_module *m,
	const char *name)
{
	no_cuda(ctx, "ts_cuda_module_kernel");
	return NULL;
}

/* Fail in "ctx": ts_cuda_alloc needs CUDA. */
ts_status ts_cuda_alloc(ts_ctx *ctx, size_t bytes, ts_cuda_ptr *out)
{
	return no_cuda(ctx, "ts_cuda_alloc");
}

/* Fail in "ctx": ts_cuda_free needs CUDA. */
ts_status ts_cuda_free(ts_ctx *ctx, ts_cuda_ptr p)
{
	return no_cuda(ctx, "ts_cuda_free");
}

/* Fail in "ctx": ts_cuda_copy_in needs CUDA. */
ts_status ts_cuda_copy_in(ts_ctx *ctx, ts_cuda_ptr dst, const void *src,
	size_t bytes)
{
	return no_cuda(ctx, "ts_cuda_copy_in");
}

/* Fail in "ctx": ts_cuda_copy_out needs CUDA. */
ts_status ts_cuda_copy_out(ts_ctx *ctx, void *dst, ts_cuda_ptr src,
	size_t bytes)
{
	return no_cuda(ctx, "ts_cuda_copy_out");
}

/* Fail in "ctx": ts_cuda_launch needs CUDA. */
ts_status ts_cuda_launch(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args)
{
	return no_cuda(ctx, "ts_cuda_launch");
}

/* Fail in "ctx": ts_cuda_synchronize needs CUDA. */
ts_status ts_cuda_synchronize(ts_ctx *ctx)
{
	return no_cuda(ctx, "ts_cuda_synchronize");
}

/* Fail in "ctx": ts_cuda_time needs CUDA. */
ts_status ts_cuda_time(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args, int runs, double *ms)
{
	return no_cuda(ctx, "ts_cuda_time");
}
