/* The CUDA API of a build without the CUDA toolkit: every call fails with
 * a message that says so. */
#include <config.h>

#include <tessel/cuda.h>

#include "dsl/internal.h"

/* Record in "ctx" that "what" needs CUDA; return TS_ERROR. */
static ts_status no_cuda(ts_ctx *ctx, const char *what)
{
	return ts_ctx_set_error(ctx, "%s: Tessel was built without CUDA "
		"(configure found no CUDA toolkit; see --with-cuda)", what);
}

ts_status ts_nvrtc_compile(ts_ctx *ctx, const char *src, const char *name,
	const char *arch, bool cubin, char **out, size_t *out_size)
{
	return no_cuda(ctx, "ts_nvrtc_compile");
}

bool ts_nvrtc_supports(ts_ctx *ctx, const char *arch)
{
	no_cuda(ctx, "ts_nvrtc_supports");
	return false;
}

ts_status ts_nvrtc_version(ts_ctx *ctx, int *major, int *minor)
{
	return no_cuda(ctx, "ts_nvrtc_version");
}

bool ts_cuda_available(ts_ctx *ctx)
{
	no_cuda(ctx, "ts_cuda_available");
	return false;
}

int ts_cuda_device_count(ts_ctx *ctx)
{
	no_cuda(ctx, "ts_cuda_device_count");
	return -1;
}

ts_target *ts_cuda_device_target(ts_ctx *ctx, int device)
{
	no_cuda(ctx, "ts_cuda_device_target");
	return NULL;
}

ts_status ts_cuda_context_create(ts_ctx *ctx, int device)
{
	return no_cuda(ctx, "ts_cuda_context_create");
}

void ts_cuda_context_destroy(ts_ctx *ctx)
{
}

ts_cuda_module *ts_cuda_module_load(ts_ctx *ctx, const void *image,
	size_t size)
{
	no_cuda(ctx, "ts_cuda_module_load");
	return NULL;
}

void ts_cuda_module_unload(ts_ctx *ctx, ts_cuda_module *m)
{
}

ts_cuda_kernel *ts_cuda_module_kernel(ts_ctx *ctx, ts_cuda_module *m,
	const char *name)
{
	no_cuda(ctx, "ts_cuda_module_kernel");
	return NULL;
}

ts_status ts_cuda_alloc(ts_ctx *ctx, size_t bytes, ts_cuda_ptr *out)
{
	return no_cuda(ctx, "ts_cuda_alloc");
}

ts_status ts_cuda_free(ts_ctx *ctx, ts_cuda_ptr p)
{
	return no_cuda(ctx, "ts_cuda_free");
}

ts_status ts_cuda_copy_in(ts_ctx *ctx, ts_cuda_ptr dst, const void *src,
	size_t bytes)
{
	return no_cuda(ctx, "ts_cuda_copy_in");
}

ts_status ts_cuda_copy_out(ts_ctx *ctx, void *dst, ts_cuda_ptr src,
	size_t bytes)
{
	return no_cuda(ctx, "ts_cuda_copy_out");
}

ts_status ts_cuda_launch(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args)
{
	return no_cuda(ctx, "ts_cuda_launch");
}

ts_status ts_cuda_synchronize(ts_ctx *ctx)
{
	return no_cuda(ctx, "ts_cuda_synchronize");
}

ts_status ts_cuda_time(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args, int runs, double *ms)
{
	return no_cuda(ctx, "ts_cuda_time");
}
