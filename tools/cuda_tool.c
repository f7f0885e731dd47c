/* The CUDA paths of the command line: GPU targets ("cuda", "cuda:NAME",
 * "cuda:FILE.json"), and the schedule, run and build of a .tsl program
 * for one (static GPU schedule, CUDA C, NVRTC, driver API). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <tessel/tessel.h>

#include "tools/commands.h"

bool ts_tool_is_cuda_target(const char *name)
{
	return name && (!strcmp(name, "cuda") || !strncmp(name, "cuda:", 5));
}

ts_target *ts_tool_cuda_target(ts_ctx *ctx, const char *name)
{
	ts_target *t;

	if (!strcmp(name, "cuda")) {
		/* The device when there is one, else the newest shipped GPU. */
		if (ts_cuda_available(ctx))
			return ts_cuda_device_target(ctx, 0);
		ts_ctx_clear_error(ctx);
		return ts_target_lookup(ctx, "h100");
	}
	t = ts_target_lookup(ctx, name + 5);
	if (t && t->kind != TS_TARGET_GPU) {
		ts_ctx_set_error(ctx, "target '%s' is not a GPU", name + 5);
		return NULL;
	}
	return t;
}

/* The CUDA program of the static GPU schedule of "dag" for "tg";
 * "*res" receives the static result. */
static ts_cuda_program *cuda_program(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, bool fast_math, ts_gpu_static_result **res,
	ts_schedule **sch)
{
	ts_gpu_static_result *r = ts_gpu_static_fill(ctx, dag, tg, 1);
	ts_func *f;

	*res = r;
	if (!r || !(*sch = ts_gpu_template_apply(r->tp, r->best)))
		return NULL;
	if (!(f = ts_lower(ctx, dag, *sch)))
		return NULL;
	return ts_cuda_emit(ctx, f, &(ts_cuda_options){ .fast_math =
		fast_math, .target = tg });
}

int ts_tool_cuda_schedule(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	bool show_code)
{
	ts_gpu_static_result *r;
	ts_schedule *sch = NULL;
	ts_cuda_program *p = cuda_program(ctx, dag, tg, false, &r, &sch);

	if (!p) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	printf("%s on %s (%s): %d configurations rated in %.1f ms, "
	       "estimated %.4g ms\n",
		ts_dag_name(dag) ? ts_dag_name(dag) : "dag", tg->name,
		tg->gpu.arch, r->rated, r->elapsed_ms, r->best_cost * 1e3);
	ts_gpu_template_print(stdout, r->tp);
	printf("configuration: %s\n", ts_config_to_json(r->best));
	ts_schedule_print(stdout, sch);
	ts_cuda_program_print(stdout, p);
	if (show_code)
		printf("\n%s", p->source);
	return TS_EXIT_OK;
}

/* Write "len" bytes of "data" to "path"; a message in "ctx" on failure. */
static ts_status write_file(ts_ctx *ctx, const char *path, const void *data,
	size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len) {
		if (f)
			fclose(f);
		return ts_ctx_set_error(ctx, "cannot write '%s'", path);
	}
	if (fclose(f) != 0)
		return ts_ctx_set_error(ctx, "cannot write '%s'", path);
	return TS_OK;
}

int ts_tool_cuda_build(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	const char *dir, bool fast_math)
{
	ts_gpu_static_result *r;
	ts_schedule *sch = NULL;
	ts_cuda_program *p = cuda_program(ctx, dag, tg, fast_math, &r, &sch);
	char cu[4096], img[4096], h[4096], *hdr;
	bool cubin;

	if (!p) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	/* A cubin when NVRTC can make one for the target, else PTX. */
	cubin = ts_cuda_program_compile(ctx, p, tg->gpu.arch, true) == TS_OK;
	if (!cubin && ts_cuda_program_compile(ctx, p, tg->gpu.arch,
	    false) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	snprintf(cu, sizeof(cu), "%s/%s.cu", dir, p->name);
	snprintf(img, sizeof(img), "%s/%s.%s", dir, p->name, cubin ? "cubin" :
		"ptx");
	snprintf(h, sizeof(h), "%s/%s_cuda.h", dir, p->name);
	hdr = ts_cuda_program_header(p);
	if (write_file(ctx, cu, p->source, strlen(p->source)) < 0 ||
	    write_file(ctx, img, p->image, p->image_size) < 0 ||
	    write_file(ctx, h, hdr, strlen(hdr)) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	printf("%s\n%s (%s)\n%s\n", cu, img, tg->gpu.arch, h);
	return TS_EXIT_OK;
}

int ts_tool_cuda_run(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	int runs, uint64_t seed)
{
	ts_gpu_static_result *r;
	ts_schedule *sch = NULL;
	ts_cuda_program *p;
	ts_array **in;
	double ms = 0;
	bool ok = true;

	if (!ts_cuda_available(ctx)) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	if (!(p = cuda_program(ctx, dag, tg, false, &r, &sch)) ||
	    !(in = ts_tool_random_inputs(ctx, dag, seed))) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	/* On the stack, where the collector sees them. */
	ts_array *want[ts_dag_noutputs(dag) + 1],
		*args[ts_func_nargs(p->func) + 1];

	for (int a = 0; a < ts_func_nargs(p->func); a++)
		args[a] = a < ts_dag_ninputs(dag)
			? in[a]
			: ts_array_for_tensor(ctx, ts_func_arg(p->func, a));
	if (ts_eval(ctx, dag, in, want) < 0 ||
	    ts_cuda_program_run(ctx, p, args) < 0 ||
	    ts_cuda_program_time(ctx, p, args, runs, &ms) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_FAIL;
	}
	for (int o = 0; o < ts_dag_noutputs(dag); o++) {
		double err = 0;
		bool close = ts_array_close(args[ts_dag_ninputs(dag) + o],
			want[o], &err);
		printf("check %s: %s (max error %g)\n",
			ts_tensor_name(ts_dag_output(dag, o)),
			close ? "ok" : "WRONG", err);
		ok &= close;
	}
	printf("time: %.4f ms (%d kernels, mean of %d runs)\n", ms,
		p->nkernels, runs);
	return ok ? TS_EXIT_OK : TS_EXIT_FAIL;
}
