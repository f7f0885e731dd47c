/* Running a CUDA program made by ts_cuda_emit: NVRTC compilation for the
 * device's architecture, device buffers, launches in order and timing
 * with CUDA events.  Without a GPU (or a build without CUDA) every call
 * fails with the message of the layer below. */
#include <config.h>

#include <inttypes.h>

#include <tessel/cuda.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "support/support.h"

ts_status ts_cuda_program_compile(ts_ctx *ctx, ts_cuda_program *p,
	const char *arch, bool cubin)
{
	char *image;
	size_t size;

	if (!p || !arch)
		return ts_ctx_set_error(ctx, "cuda: no program or no "
			"architecture to compile for");
	if (ts_nvrtc_compile(ctx, p->source, ts_asprintf("%s.cu", p->name),
	    arch, cubin, &image, &size) < 0)
		return TS_ERROR;
	p->arch = ts_strdup(arch);
	p->cubin = cubin;
	p->image = image;
	p->image_size = size;
	return TS_OK;
}

/* Device state of one run of "p": buffers, module and kernels. */
struct run {
	ts_cuda_ptr *ptr;
	void **argv;
	ts_cuda_module *m;
	ts_cuda_kernel **k;
};

/* Release what "r" holds. */
static void run_free(ts_ctx *ctx, const ts_cuda_program *p, struct run *r)
{
	for (int i = 0; r->ptr && i < p->nbuffers; i++)
		if (r->ptr[i])
			ts_cuda_free(ctx, r->ptr[i]);
	if (r->m)
		ts_cuda_module_unload(ctx, r->m);
}

/* Check "args" against the arguments of "p". */
static ts_status check_args(ts_ctx *ctx, const ts_cuda_program *p,
	ts_array *const *args)
{
	for (int i = 0; i < p->func->nargs; i++) {
		const ts_tensor *t = p->func->args[i];
		if (!args || !args[i])
			return ts_ctx_set_error(ctx, "cuda: no array for "
				"argument '%s'", t->name);
		if (args[i]->dtype != t->dtype ||
		    args[i]->size != ts_tensor_size(t))
			return ts_ctx_set_error(ctx, "cuda: the array for "
				"argument '%s' is not %s with %" PRId64
				" elements", t->name, ts_dtype_name(t->dtype),
				ts_tensor_size(t));
	}
	return TS_OK;
}

/* Compile "p" for the device when needed, load it, allocate and fill its
 * buffers from "args". */
static ts_status run_setup(ts_ctx *ctx, ts_cuda_program *p,
	ts_array *const *args, struct run *r)
{
	ts_target *dev;

	if (check_args(ctx, p, args) < 0 || !ts_cuda_available(ctx))
		return TS_ERROR;
	if (!(dev = ts_cuda_device_target(ctx, 0)))
		return TS_ERROR;
	if ((!p->image || !p->cubin || strcmp(p->arch, dev->gpu.arch)) &&
	    ts_cuda_program_compile(ctx, p, dev->gpu.arch, true) < 0)
		return TS_ERROR;
	if (!(r->m = ts_cuda_module_load(ctx, p->image, p->image_size)))
		return TS_ERROR;
	r->k = ts_new_array(ts_cuda_kernel *, p->nkernels + 1);
	for (int i = 0; i < p->nkernels; i++)
		if (!(r->k[i] = ts_cuda_module_kernel(ctx, r->m,
		    p->kernels[i].name)))
			return TS_ERROR;
	r->ptr = ts_new_atomic(ts_cuda_ptr, p->nbuffers + 1);
	r->argv = ts_new_array(void *, p->nbuffers + 1);
	for (int i = 0; i < p->nbuffers; i++) {
		const ts_cuda_buffer *b = &p->buffers[i];
		if (ts_cuda_alloc(ctx, b->bytes ? b->bytes : 1, &r->ptr[i]) < 0)
			return TS_ERROR;
		r->argv[i] = &r->ptr[i];
		if (b->arg >= 0 && b->arg < p->func->ninputs &&
		    ts_cuda_copy_in(ctx, r->ptr[i], args[b->arg]->data,
		    b->bytes) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

/* Launch every kernel of "p" once, in order. */
static ts_status run_once(ts_ctx *ctx, const ts_cuda_program *p,
	const struct run *r)
{
	for (int i = 0; i < p->nkernels; i++) {
		const ts_cuda_launch_desc *l = &p->kernels[i];
		if (ts_cuda_launch(ctx, r->k[i], l->grid, l->block, 0,
		    r->argv) < 0)
			return TS_ERROR;
	}
	return ts_cuda_synchronize(ctx);
}

ts_status ts_cuda_program_run(ts_ctx *ctx, ts_cuda_program *p,
	ts_array *const *args)
{
	struct run r = { 0 };
	ts_status st = run_setup(ctx, p, args, &r);

	if (st == TS_OK)
		st = run_once(ctx, p, &r);
	for (int i = 0; st == TS_OK && i < p->nbuffers; i++) {
		const ts_cuda_buffer *b = &p->buffers[i];
		if (b->arg >= p->func->ninputs)
			st = ts_cuda_copy_out(ctx, args[b->arg]->data,
				r.ptr[i], b->bytes);
	}
	run_free(ctx, p, &r);
	return st;
}

ts_status ts_cuda_program_time(ts_ctx *ctx, ts_cuda_program *p,
	ts_array *const *args, int runs, double *ms)
{
	struct run r = { 0 };
	ts_status st = run_setup(ctx, p, args, &r);
	double total = 0, one;

	if (st == TS_OK)
		st = run_once(ctx, p, &r);
	for (int i = 0; st == TS_OK && i < p->nkernels; i++) {
		const ts_cuda_launch_desc *l = &p->kernels[i];
		st = ts_cuda_time(ctx, r.k[i], l->grid, l->block, 0, r.argv,
			runs > 0 ? runs : 1, &one);
		total += one;
	}
	run_free(ctx, p, &r);
	if (st == TS_OK && ms)
		*ms = total;
	return st;
}
