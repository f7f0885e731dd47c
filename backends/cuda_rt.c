/* NVRTC compilation and the CUDA driver API, loaded with dlopen.
 *
 * The driver's entry points are looked up once per ts_ctx and kept, with
 * the retained primary context, in ts_ctx_slot(ctx, TS_SLOT_CUDA).  The
 * function pointer types are written out here from cuda.h's prototypes
 * so that nothing links against libcuda. */
#include <config.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>
#include <nvrtc.h>

#include <tessel/cuda.h>

#include "support/support.h"

/* The driver entry points Tessel uses. */
struct cuda_api {
	CUresult (*init)(unsigned);
	CUresult (*get_error_name)(CUresult, const char **);
	CUresult (*get_error_string)(CUresult, const char **);
	CUresult (*device_get_count)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_get_name)(char *, int, CUdevice);
	CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*device_total_mem)(size_t *, CUdevice);
	CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
	CUresult (*primary_ctx_release)(CUdevice);
	CUresult (*ctx_set_current)(CUcontext);
	CUresult (*ctx_synchronize)(void);
	CUresult (*module_load_data_ex)(CUmodule *, const void *, unsigned,
		CUjit_option *, void **);
	CUresult (*module_unload)(CUmodule);
	CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
	CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned,
		unsigned, unsigned, unsigned, unsigned, CUstream, void **,
		void **);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
	CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*event_create)(CUevent *, unsigned);
	CUresult (*event_destroy)(CUevent);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_synchronize)(CUevent);
	CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
};

/* Symbol names of each entry point, newest first. */
static const struct {
	const char *names[2];
	size_t offset;
} cuda_symbols[] = {
#define SYM(a, b, field) { { a, b }, offsetof(struct cuda_api, field) }
	SYM("cuInit", NULL, init),
	SYM("cuGetErrorName", NULL, get_error_name),
	SYM("cuGetErrorString", NULL, get_error_string),
	SYM("cuDeviceGetCount", NULL, device_get_count),
	SYM("cuDeviceGet", NULL, device_get),
	SYM("cuDeviceGetName", NULL, device_get_name),
	SYM("cuDeviceGetAttribute", NULL, device_get_attribute),
	SYM("cuDeviceTotalMem_v2", NULL, device_total_mem),
	SYM("cuDevicePrimaryCtxRetain", NULL, primary_ctx_retain),
	SYM("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
	    primary_ctx_release),
	SYM("cuCtxSetCurrent", NULL, ctx_set_current),
	SYM("cuCtxSynchronize", NULL, ctx_synchronize),
	SYM("cuModuleLoadDataEx", NULL, module_load_data_ex),
	SYM("cuModuleUnload", NULL, module_unload),
	SYM("cuModuleGetFunction", NULL, module_get_function),
	SYM("cuFuncSetAttribute", NULL, func_set_attribute),
	SYM("cuLaunchKernel", NULL, launch_kernel),
	SYM("cuMemAlloc_v2", NULL, mem_alloc),
	SYM("cuMemFree_v2", NULL, mem_free),
	SYM("cuMemcpyHtoD_v2", NULL, memcpy_htod),
	SYM("cuMemcpyDtoH_v2", NULL, memcpy_dtoh),
	SYM("cuEventCreate", NULL, event_create),
	SYM("cuEventDestroy_v2", "cuEventDestroy", event_destroy),
	SYM("cuEventRecord", NULL, event_record),
	SYM("cuEventSynchronize", NULL, event_synchronize),
	SYM("cuEventElapsedTime_v2", "cuEventElapsedTime",
	    event_elapsed_time),
#undef SYM
};

/* The CUDA state of one ts_ctx. */
struct cuda_state {
	bool tried;		/* loading was attempted */
	const char *load_error;	/* why the driver is unusable, or NULL */
	void *lib;		/* dlopen handle of libcuda.so.1 */
	struct cuda_api api;
	bool have_context;	/* a primary context is retained */
	CUdevice device;
	CUcontext context;
};

struct ts_cuda_module {
	CUmodule module;
};

struct ts_cuda_kernel {
	CUfunction function;
	const char *name;
	int max_dynamic_shared;	/* opt-in already granted, bytes */
};

/* Release the primary context and the library held by "data", a
 * cuda_state, when its ts_ctx is freed. */
static void cuda_state_free(void *data)
{
	struct cuda_state *s = data;

	if (s->have_context)
		s->api.primary_ctx_release(s->device);
	s->have_context = false;
	if (s->lib)
		dlclose(s->lib);
	s->lib = NULL;
}

/* Look up every entry point of "s" in its library; return the name of
 * the first one missing, or NULL. */
static const char *resolve_symbols(struct cuda_state *s)
{
	for (size_t i = 0; i < sizeof(cuda_symbols) / sizeof(cuda_symbols[0]);
	     i++) {
		void *p = NULL;
		for (int j = 0; j < 2 && !p && cuda_symbols[i].names[j]; j++)
			p = dlsym(s->lib, cuda_symbols[i].names[j]);
		if (!p)
			return cuda_symbols[i].names[0];
		memcpy((char *)&s->api + cuda_symbols[i].offset, &p, sizeof(p));
	}
	return NULL;
}

/* Load the driver into "s" and initialise it; leave the reason in
 * "s->load_error" when it is unusable. */
static void cuda_load(struct cuda_state *s)
{
	const char *missing;
	const char *name = NULL;
	CUresult r;

	s->tried = true;
	s->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!s->lib) {
		s->load_error = ts_asprintf("no CUDA driver: %s", dlerror());
		return;
	}
	missing = resolve_symbols(s);
	if (missing) {
		s->load_error = ts_asprintf("the CUDA driver lacks %s", missing);
		return;
	}
	r = s->api.init(0);
	if (r != CUDA_SUCCESS) {
		s->api.get_error_name(r, &name);
		s->load_error = ts_asprintf("cuInit failed: %s",
			name ? name : "unknown error");
	}
}

/* Return the CUDA state of "ctx", creating it on first use. */
static struct cuda_state *cuda_state(ts_ctx *ctx)
{
	void **slot = ts_ctx_slot(ctx, TS_SLOT_CUDA);
	struct cuda_state *s = *slot;

	if (!s) {
		s = ts_new(struct cuda_state);
		*slot = s;
		cuda_load(s);
		ts_ctx_on_free(ctx, cuda_state_free, s);
	}
	return s;
}

/* Return the loaded driver API of "ctx", or NULL with an error. */
static struct cuda_api *cuda_api(ts_ctx *ctx)
{
	struct cuda_state *s = cuda_state(ctx);

	if (s->load_error) {
		ts_ctx_set_error(ctx, "%s", s->load_error);
		return NULL;
	}
	return &s->api;
}

/* Turn the result "r" of the driver call "call" into a status, with the
 * error's name and description in "ctx". */
static ts_status check(ts_ctx *ctx, CUresult r, const char *call)
{
	struct cuda_state *s = cuda_state(ctx);
	const char *name = NULL, *text = NULL;

	if (r == CUDA_SUCCESS)
		return TS_OK;
	s->api.get_error_name(r, &name);
	s->api.get_error_string(r, &text);
	return ts_ctx_set_error(ctx, "%s failed: %s (%s)", call,
		name ? name : "unknown error", text ? text : "no description");
}

/* Whether the driver loads and reports a device; if not, say why. */
bool ts_cuda_available(ts_ctx *ctx)
{
	int n = ts_cuda_device_count(ctx);

	if (n == 0)
		ts_ctx_set_error(ctx, "the CUDA driver reports no device");
	return n > 0;
}

/* Return the number of devices of "ctx"'s driver, or -1. */
int ts_cuda_device_count(ts_ctx *ctx)
{
	struct cuda_api *api = cuda_api(ctx);
	int n = 0;

	if (!api)
		return -1;
	if (check(ctx, api->device_get_count(&n), "cuDeviceGetCount") < 0)
		return -1;
	return n;
}

/* Retain the primary context of "device" and make it current. */
ts_status ts_cuda_context_create(ts_ctx *ctx, int device)
{
	struct cuda_api *api = cuda_api(ctx);
	struct cuda_state *s = cuda_state(ctx);
	CUdevice dev;

	if (!api)
		return TS_ERROR;
	ts_cuda_context_destroy(ctx);
	if (check(ctx, api->device_get(&dev, device), "cuDeviceGet") < 0 ||
	    check(ctx, api->primary_ctx_retain(&s->context, dev),
		  "cuDevicePrimaryCtxRetain") < 0)
		return TS_ERROR;
	s->device = dev;
	s->have_context = true;
	return check(ctx, api->ctx_set_current(s->context), "cuCtxSetCurrent");
}

/* Release the primary context retained by "ctx", if any. */
void ts_cuda_context_destroy(ts_ctx *ctx)
{
	struct cuda_state *s = *ts_ctx_slot(ctx, TS_SLOT_CUDA);

	if (!s || !s->have_context)
		return;
	s->api.ctx_set_current(NULL);
	s->api.primary_ctx_release(s->device);
	s->have_context = false;
}

/* Return the driver API of "ctx" with a current context (device 0 unless
 * one was created), or NULL with an error. */
static struct cuda_api *cuda_current(ts_ctx *ctx)
{
	struct cuda_api *api = cuda_api(ctx);
	struct cuda_state *s;

	if (!api)
		return NULL;
	s = cuda_state(ctx);
	if (!s->have_context && ts_cuda_context_create(ctx, 0) < 0)
		return NULL;
	if (check(ctx, api->ctx_set_current(s->context), "cuCtxSetCurrent") < 0)
		return NULL;
	return api;
}

/* Read the attribute "a" of "dev" into "*v". */
static ts_status attribute(ts_ctx *ctx, CUdevice dev, CUdevice_attribute a,
	int *v)
{
	struct cuda_api *api = &cuda_state(ctx)->api;

	*v = 0;
	return check(ctx, api->device_get_attribute(v, a, dev),
		ts_asprintf("cuDeviceGetAttribute(%d)", (int)a));
}

/* Throughput per SM and clock of one compute capability. */
static const struct {
	int major, minor;
	int f32_lanes;		/* f32 FMA lanes per SM */
	int f16_ratio;		/* f16 (no tensor cores) over f32 */
	int tensor_f16;		/* dense f16 tensor FLOP per clock per SM */
} sm_units[] = {
	{ 7, 0, 64, 2, 1024 },
	{ 7, 5, 64, 2, 0 },
	{ 8, 0, 64, 4, 2048 },
	{ 8, 6, 128, 1, 0 },
	{ 8, 9, 128, 1, 0 },
	{ 9, 0, 128, 2, 4096 },
};

/* Fill the peaks of "g" from its clock and compute capability; unknown
 * capabilities keep 0. */
static void derive_peaks(ts_target_gpu *g)
{
	for (size_t i = 0; i < sizeof(sm_units) / sizeof(sm_units[0]); i++) {
		double per_clock;
		if (sm_units[i].major != g->cc_major ||
		    sm_units[i].minor != g->cc_minor)
			continue;
		per_clock = g->sm_count * g->clock_ghz / 1e3;
		g->peak_tflops_f32 = per_clock * sm_units[i].f32_lanes * 2;
		g->peak_tflops_f16 = g->peak_tflops_f32 *
			sm_units[i].f16_ratio;
		g->peak_tflops_tensor_f16 = per_clock * sm_units[i].tensor_f16;
	}
}

/* Attributes read into a GPU target, with their destination. */
static const struct {
	CUdevice_attribute attr;
	size_t offset;		/* of an int in ts_target_gpu */
} int_attributes[] = {
#define ATTR(a, f) { CU_DEVICE_ATTRIBUTE_##a, offsetof(ts_target_gpu, f) }
	ATTR(COMPUTE_CAPABILITY_MAJOR, cc_major),
	ATTR(COMPUTE_CAPABILITY_MINOR, cc_minor),
	ATTR(MULTIPROCESSOR_COUNT, sm_count),
	ATTR(WARP_SIZE, warp_size),
	ATTR(MAX_THREADS_PER_BLOCK, max_threads_per_block),
	ATTR(MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
	ATTR(MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
	ATTR(MAX_REGISTERS_PER_BLOCK, registers_per_block),
	ATTR(MAX_REGISTERS_PER_MULTIPROCESSOR, registers_per_sm),
#undef ATTR
};

/* Read the sizes, clocks and bandwidth of "dev" into "g". */
static ts_status device_sizes(ts_ctx *ctx, CUdevice dev, ts_target_gpu *g)
{
	int shb, sho, shs, l2, clock, mclock, bus;

	if (attribute(ctx, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		      &shb) < 0 ||
	    attribute(ctx, dev,
		      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		      &sho) < 0 ||
	    attribute(ctx, dev,
		      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		      &shs) < 0 ||
	    attribute(ctx, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2) < 0 ||
	    attribute(ctx, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &clock) < 0 ||
	    attribute(ctx, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
		      &mclock) < 0 ||
	    attribute(ctx, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
		      &bus) < 0)
		return TS_ERROR;
	/* Descriptions count whole KiB; round down what the driver gives. */
	g->shared_per_block = shb & ~1023;
	g->shared_per_block_optin = sho & ~1023;
	g->shared_per_sm = shs & ~1023;
	g->l2_size = l2 & ~1023;
	g->clock_ghz = clock / 1e6;
	/* Double data rate: two transfers per memory clock. */
	g->bandwidth_gbs = 2.0 * mclock * 1e3 * (bus / 8) / 1e9;
	return TS_OK;
}

/* Describe "device" from its attributes. */
ts_target *ts_cuda_device_target(ts_ctx *ctx, int device)
{
	struct cuda_api *api = cuda_api(ctx);
	ts_target *t = ts_new(ts_target);
	char name[256];
	CUdevice dev;
	size_t mem = 0;

	if (!api || check(ctx, api->device_get(&dev, device), "cuDeviceGet") < 0 ||
	    check(ctx, api->device_get_name(name, sizeof(name), dev),
		  "cuDeviceGetName") < 0 ||
	    check(ctx, api->device_total_mem(&mem, dev), "cuDeviceTotalMem") < 0)
		return NULL;
	t->kind = TS_TARGET_GPU;
	t->name = ts_asprintf("cuda%d", device);
	t->description = ts_strdup(name);
	for (size_t i = 0; i < sizeof(int_attributes) /
	     sizeof(int_attributes[0]); i++)
		if (attribute(ctx, dev, int_attributes[i].attr,
			      (int *)((char *)&t->gpu +
				      int_attributes[i].offset)) < 0)
			return NULL;
	if (device_sizes(ctx, dev, &t->gpu) < 0)
		return NULL;
	t->gpu.memory_size = (int64_t)mem & ~(((int64_t)1 << 20) - 1);
	t->gpu.arch = ts_asprintf("sm_%d%d", t->gpu.cc_major, t->gpu.cc_minor);
	derive_peaks(&t->gpu);
	ts_target_finish(t);
	if (ts_target_check(ctx, t, t->name) < 0)
		return NULL;
	return t;
}

/* Load the PTX or cubin "image" of "size" bytes into the current context. */
ts_cuda_module *ts_cuda_module_load(ts_ctx *ctx, const void *image,
	size_t size)
{
	struct cuda_api *api = cuda_current(ctx);
	ts_cuda_module *m;
	char log[8192] = "";
	CUjit_option opts[2] = { CU_JIT_ERROR_LOG_BUFFER,
		CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[2] = { log, (void *)(uintptr_t)sizeof(log) };
	CUresult r;

	if (!api)
		return NULL;
	if (!image || !size) {
		ts_ctx_set_error(ctx, "cannot load an empty CUDA module");
		return NULL;
	}
	m = ts_new(ts_cuda_module);
	r = api->module_load_data_ex(&m->module, image, 2, opts, vals);
	if (check(ctx, r, "cuModuleLoadDataEx") < 0) {
		if (*log)
			ts_ctx_set_error(ctx, "%s\n%s", ts_ctx_error(ctx), log);
		return NULL;
	}
	return m;
}

/* Unload "m"; its kernels become invalid. */
void ts_cuda_module_unload(ts_ctx *ctx, ts_cuda_module *m)
{
	struct cuda_state *s = *ts_ctx_slot(ctx, TS_SLOT_CUDA);

	if (!m || !m->module || !s || !s->have_context)
		return;
	s->api.module_unload(m->module);
	m->module = NULL;
}

/* Return the kernel "name" of "m". */
ts_cuda_kernel *ts_cuda_module_kernel(ts_ctx *ctx, ts_cuda_module *m,
	const char *name)
{
	struct cuda_api *api = cuda_current(ctx);
	ts_cuda_kernel *k;

	if (!api || !m || !name)
		return NULL;
	if (!m->module) {
		ts_ctx_set_error(ctx, "kernel '%s' asked of an unloaded module",
			name);
		return NULL;
	}
	k = ts_new(ts_cuda_kernel);
	k->name = ts_strdup(name);
	if (check(ctx, api->module_get_function(&k->function, m->module, name),
		  ts_asprintf("cuModuleGetFunction(\"%s\")", name)) < 0)
		return NULL;
	return k;
}

/* Allocate "bytes" of device memory into "*out". */
ts_status ts_cuda_alloc(ts_ctx *ctx, size_t bytes, ts_cuda_ptr *out)
{
	struct cuda_api *api = cuda_current(ctx);
	CUdeviceptr p = 0;

	if (!api)
		return TS_ERROR;
	if (check(ctx, api->mem_alloc(&p, bytes ? bytes : 1),
		  ts_asprintf("cuMemAlloc(%zu bytes)", bytes)) < 0)
		return TS_ERROR;
	*out = (ts_cuda_ptr)p;
	return TS_OK;
}

/* Free the device memory "p" (0 is ignored). */
ts_status ts_cuda_free(ts_ctx *ctx, ts_cuda_ptr p)
{
	struct cuda_api *api = cuda_current(ctx);

	if (!api)
		return TS_ERROR;
	return p ? check(ctx, api->mem_free((CUdeviceptr)p), "cuMemFree") : TS_OK;
}

/* Copy "bytes" from the host "src" to the device "dst". */
ts_status ts_cuda_copy_in(ts_ctx *ctx, ts_cuda_ptr dst, const void *src,
	size_t bytes)
{
	struct cuda_api *api = cuda_current(ctx);

	if (!api)
		return TS_ERROR;
	return check(ctx, api->memcpy_htod((CUdeviceptr)dst, src, bytes),
		"cuMemcpyHtoD");
}

/* Copy "bytes" from the device "src" to the host "dst". */
ts_status ts_cuda_copy_out(ts_ctx *ctx, void *dst, ts_cuda_ptr src,
	size_t bytes)
{
	struct cuda_api *api = cuda_current(ctx);

	if (!api)
		return TS_ERROR;
	return check(ctx, api->memcpy_dtoh(dst, (CUdeviceptr)src, bytes),
		"cuMemcpyDtoH");
}

/* Launch "k" asynchronously on the default stream. */
ts_status ts_cuda_launch(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args)
{
	struct cuda_api *api = cuda_current(ctx);
	/* The kernel is const to callers; the opt-in it was granted is a
	 * cache of driver state. */
	ts_cuda_kernel *mk = (ts_cuda_kernel *)k;

	if (!api || !k)
		return TS_ERROR;
	if (shared_bytes > 48 * 1024 &&
	    (int)shared_bytes > mk->max_dynamic_shared) {
		if (check(ctx, api->func_set_attribute(k->function,
			  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
			  (int)shared_bytes), "cuFuncSetAttribute") < 0)
			return TS_ERROR;
		mk->max_dynamic_shared = (int)shared_bytes;
	}
	return check(ctx, api->launch_kernel(k->function, grid[0], grid[1],
		grid[2], block[0], block[1], block[2], shared_bytes, NULL, args,
		NULL), ts_asprintf("cuLaunchKernel(%s)", k->name));
}

/* Wait until the work launched in "ctx" is done. */
ts_status ts_cuda_synchronize(ts_ctx *ctx)
{
	struct cuda_api *api = cuda_current(ctx);

	if (!api)
		return TS_ERROR;
	return check(ctx, api->ctx_synchronize(), "cuCtxSynchronize");
}

/* Record "runs" launches of "k" between the events "ev"; store the mean
 * in "*ms". */
static ts_status time_between(ts_ctx *ctx, struct cuda_api *api,
	CUevent ev[2], const ts_cuda_kernel *k, const unsigned grid[3],
	const unsigned block[3], unsigned shared_bytes, void **args, int runs,
	double *ms)
{
	float total = 0;

	if (check(ctx, api->event_record(ev[0], NULL), "cuEventRecord") < 0)
		return TS_ERROR;
	for (int i = 0; i < runs; i++)
		if (ts_cuda_launch(ctx, k, grid, block, shared_bytes, args) < 0)
			return TS_ERROR;
	if (check(ctx, api->event_record(ev[1], NULL), "cuEventRecord") < 0 ||
	    check(ctx, api->event_synchronize(ev[1]), "cuEventSynchronize") < 0 ||
	    check(ctx, api->event_elapsed_time(&total, ev[0], ev[1]),
		  "cuEventElapsedTime") < 0)
		return TS_ERROR;
	*ms = total / runs;
	return TS_OK;
}

/* Time "runs" launches of "k" with CUDA events. */
ts_status ts_cuda_time(ts_ctx *ctx, const ts_cuda_kernel *k,
	const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
	void **args, int runs, double *ms)
{
	struct cuda_api *api = cuda_current(ctx);
	CUevent ev[2] = { NULL, NULL };
	ts_status st = TS_ERROR;

	if (!api)
		return TS_ERROR;
	if (runs < 1)
		return ts_ctx_set_error(ctx, "ts_cuda_time: runs must be at "
			"least 1, got %d", runs);
	if (check(ctx, api->event_create(&ev[0], CU_EVENT_DEFAULT),
		  "cuEventCreate") == TS_OK &&
	    check(ctx, api->event_create(&ev[1], CU_EVENT_DEFAULT),
		  "cuEventCreate") == TS_OK)
		st = time_between(ctx, api, ev, k, grid, block, shared_bytes,
			args, runs, ms);
	for (int i = 0; i < 2; i++)
		if (ev[i])
			api->event_destroy(ev[i]);
	return st;
}

/* NVRTC. */

/* Turn the result "r" of the NVRTC call "call" into a status. */
static ts_status nvrtc_check(ts_ctx *ctx, nvrtcResult r, const char *call)
{
	if (r == NVRTC_SUCCESS)
		return TS_OK;
	return ts_ctx_set_error(ctx, "%s failed: %s", call,
		nvrtcGetErrorString(r));
}

/* Store the NVRTC version in "major" and "minor". */
ts_status ts_nvrtc_version(ts_ctx *ctx, int *major, int *minor)
{
	return nvrtc_check(ctx, nvrtcVersion(major, minor), "nvrtcVersion");
}

/* Parse "arch" ("sm_90", "sm_90a") into its number (90); 0 if malformed. */
static int arch_number(const char *arch)
{
	int n = 0, len = 0;

	if (!arch || sscanf(arch, "sm_%d%n", &n, &len) != 1 || n < 10)
		return 0;
	if (arch[len] && (arch[len + 1] || (arch[len] != 'a' &&
					    arch[len] != 'f')))
		return 0;
	return n;
}

/* Whether this NVRTC compiles for "arch"; otherwise say what it does. */
bool ts_nvrtc_supports(ts_ctx *ctx, const char *arch)
{
	int n = arch_number(arch), count = 0, *archs;
	ts_buf b;

	if (!n) {
		ts_ctx_set_error(ctx, "'%s' is not a CUDA architecture like "
			"\"sm_90\"", arch ? arch : "(null)");
		return false;
	}
	if (nvrtc_check(ctx, nvrtcGetNumSupportedArchs(&count),
			"nvrtcGetNumSupportedArchs") < 0)
		return false;
	archs = ts_new_atomic(int, count + 1);
	if (nvrtc_check(ctx, nvrtcGetSupportedArchs(archs),
			"nvrtcGetSupportedArchs") < 0)
		return false;
	ts_buf_init(&b);
	for (int i = 0; i < count; i++) {
		if (archs[i] == n)
			return true;
		ts_buf_printf(&b, "%ssm_%d", i ? " " : "", archs[i]);
	}
	ts_ctx_set_error(ctx, "this NVRTC cannot compile for %s; it supports %s",
		arch, b.s);
	return false;
}

/* Return the directory of CUDA headers next to the NVRTC library in use
 * (the toolkit's include directory), or NULL. */
static char *cuda_include_dir(void)
{
	Dl_info info;
	char *dir, *slash;

	if (!dladdr((void *)nvrtcCreateProgram, &info) || !info.dli_fname)
		return NULL;
	dir = ts_strdup(info.dli_fname);
	for (int up = 0; up < 2; up++) {
		slash = strrchr(dir, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
	}
	return ts_asprintf("%s/include", dir);
}

/* Copy the result of compiling "prog" (PTX, or the cubin) into "*out". */
static ts_status nvrtc_result(ts_ctx *ctx, nvrtcProgram prog, bool cubin,
	char **out, size_t *out_size)
{
	size_t n = 0;
	char *buf;

	if (nvrtc_check(ctx, cubin ? nvrtcGetCUBINSize(prog, &n) :
			nvrtcGetPTXSize(prog, &n), "nvrtcGetPTXSize") < 0)
		return TS_ERROR;
	buf = ts_new_atomic(char, n + 1);
	if (nvrtc_check(ctx, cubin ? nvrtcGetCUBIN(prog, buf) :
			nvrtcGetPTX(prog, buf), "nvrtcGetPTX") < 0)
		return TS_ERROR;
	buf[n] = '\0';
	*out = buf;
	/* NVRTC counts the PTX terminator; the size is of the text. */
	*out_size = cubin ? n : strlen(buf);
	return TS_OK;
}

/* Return the compilation log of "prog". */
static const char *nvrtc_log(nvrtcProgram prog)
{
	size_t n = 0;
	char *log;

	if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1)
		return "(no log)";
	log = ts_new_atomic(char, n + 1);
	if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
		return "(no log)";
	return log;
}

/* Compile "prog", named "name", for "arch"; the log goes to "ctx" on
 * failure. */
static ts_status nvrtc_run(ts_ctx *ctx, nvrtcProgram prog, const char *name,
	const char *arch, bool cubin)
{
	const char *opts[4];
	int nopts = 0;
	char *inc = cuda_include_dir();
	nvrtcResult r;

	/* compute_XX yields PTX, sm_XX a cubin. */
	opts[nopts++] = ts_asprintf("--gpu-architecture=%s%s",
		cubin ? "sm_" : "compute_", arch + 3);
	opts[nopts++] = "--std=c++17";
	/* a * b + c rounds twice, as in the interpreter; the emitter fuses
	 * only the updates of float sums (fmaf). */
	opts[nopts++] = "--fmad=false";
	if (inc)
		opts[nopts++] = ts_asprintf("--include-path=%s", inc);
	r = nvrtcCompileProgram(prog, nopts, opts);
	if (r != NVRTC_SUCCESS)
		return ts_ctx_set_error(ctx, "NVRTC could not compile '%s' for "
			"%s (%s):\n%s", name, arch, nvrtcGetErrorString(r),
			nvrtc_log(prog));
	return TS_OK;
}

/* Compile "src" for "arch" to PTX or a cubin. */
ts_status ts_nvrtc_compile(ts_ctx *ctx, const char *src, const char *name,
	const char *arch, bool cubin, char **out, size_t *out_size)
{
	nvrtcProgram prog = NULL;
	ts_status st;

	name = name ? name : "kernel.cu";
	if (!src || !out || !out_size)
		return ts_ctx_set_error(ctx, "ts_nvrtc_compile: '%s' has no "
			"source or no output", name);
	if (!ts_nvrtc_supports(ctx, arch))
		return TS_ERROR;
	if (nvrtc_check(ctx, nvrtcCreateProgram(&prog, src, name, 0, NULL,
			NULL), "nvrtcCreateProgram") < 0)
		return TS_ERROR;
	st = nvrtc_run(ctx, prog, name, arch, cubin);
	if (st == TS_OK)
		st = nvrtc_result(ctx, prog, cubin, out, out_size);
	nvrtcDestroyProgram(&prog);
	return st;
}
