/* conv2d: Tessel's static schedule against oneDNN in the same run, on
 * ResNet-18's 3x3 layers at batch 1 and its 7x7 stride-2 stem, for 1 and
 * 2 threads.
 *
 * Tessel computes NCHW with the padding as its own stage, declared with
 * compute only and scheduled by the static baseline for the host with as many
 * cores as threads; its timed kernel includes the padding.  oneDNN gets
 * format tag "any" for source, weights and destination, so it picks its
 * preferred blocked layouts; inputs are reordered into them before timing
 * and only the convolution primitive is timed, as a user holding tensors
 * in that layout would run it.  Its result is reordered back to NCHW and
 * compared with Tessel's; Tessel is also checked against the reference
 * interpreter on small layers.  Repetitions alternate between the two.
 * With --weights hwio, Tessel's weights are declared in the HWIO layout
 * (R, S, C, K, as TensorFlow stores filters) instead of OIHW: an input in
 * the layout a user holds, as oneDNN's weights are held in its own.
 *
 * The weights are declared "weight" (their contents stay the same from
 * one run to the next), and a second Tessel column runs the layer as a
 * network: the static rule blocks the weights along the output channel
 * (ts_partition_block_weights), converted once before timing as oneDNN's
 * are reordered once, and the kernel is scheduled statically on that
 * layout.  With --tune, that kernel is tuned.
 *
 * With --target, Tessel's kernels are scheduled and compiled for that
 * CPU target (one this host can run); oneDNN picks its own.
 *
 *   usage: bench_conv [--threads N]... [--min-time S]
 *                     [--weights oihw|hwio] [--tune TRIALS] [--verbose]
 *                     [--target NAME|FILE.json]
 */
#include <config.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#include <tessel/network.h>

#include "bench/bench.h"
#include "bench/tuned.h"

/* A convolution layer: "c" input channels of "h" x "h", "k" outputs of a
 * "r" x "r" window. */
struct conv_layer {
	const char *name;
	int64_t c, h, k, r, stride, pad;
};

/* The layers measured: ResNet-18 at batch 1. */
static const struct conv_layer conv_layers[] = {
	{ "conv1 7x7/2 3->64 224", 3, 224, 64, 7, 2, 3 },
	{ "conv2 3x3 64 56", 64, 56, 64, 3, 1, 1 },
	{ "conv3 3x3 128 28", 128, 28, 128, 3, 1, 1 },
	{ "conv4 3x3 256 14", 256, 14, 256, 3, 1, 1 },
	{ "conv5 3x3 512 7", 512, 7, 512, 3, 1, 1 },
};

/* Small layers checked against the interpreter. */
static const struct conv_layer conv_small[] = {
	{ "small 3x3 8 10", 8, 10, 8, 3, 1, 1 },
	{ "small 7x7/2 3->8 20", 3, 20, 8, 7, 2, 3 },
};

/* Output extent of layer "l". */
static int64_t conv_out(const struct conv_layer *l)
{
	return (l->h + 2 * l->pad - l->r) / l->stride + 1;
}

/* Return "a" * "stride" + "b" as an index expression in "ctx". */
static ts_expr *conv_window(ts_ctx *ctx, ts_axis *a, int64_t stride,
	ts_axis *b)
{
	return ts_add(ctx, ts_mul(ctx, ts_var(ctx, a), ts_int(ctx, stride)),
		ts_var(ctx, b));
}

/* Declare the zero padding P of "x" by "pad" in "ctx". */
static ts_tensor *conv_pad(ts_ctx *ctx, ts_tensor *x, int64_t pad)
{
	int64_t h = ts_tensor_dim(x, 2);
	ts_axis *n = ts_axis_new(ctx, "n", 1);
	ts_axis *c = ts_axis_new(ctx, "c", ts_tensor_dim(x, 1));
	ts_axis *y = ts_axis_new(ctx, "h", h + 2 * pad);
	ts_axis *v = ts_axis_new(ctx, "w", h + 2 * pad);
	ts_expr *iy = ts_sub(ctx, ts_var(ctx, y), ts_int(ctx, pad));
	ts_expr *iv = ts_sub(ctx, ts_var(ctx, v), ts_int(ctx, pad));
	ts_expr *in;

	in = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, iy, ts_int(ctx, 0)),
			ts_binary(ctx, TS_OP_LT, iy, ts_int(ctx, h))),
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, iv, ts_int(ctx, 0)),
			ts_binary(ctx, TS_OP_LT, iv, ts_int(ctx, h))));
	return ts_compute(ctx, "P", 4, (ts_axis *[]){ n, c, y, v },
		ts_select(ctx, in, ts_at(ctx, x, 4, ts_var(ctx, n),
			ts_var(ctx, c), iy, iv), ts_float(ctx, 0.0)));
}

/* Declare layer "l" in "ctx" with compute only: X (NCHW), W (KCRS, or
 * RSCK when "hwio": the output channel last), the padding P and Y (NCHW,
 * or NHWC when "nhwc": the output layout a network's layout pass picks,
 * as oneDNN picks its own).  Return the DAG. */
static ts_dag *conv_declare_as(ts_ctx *ctx, const struct conv_layer *l,
	bool hwio, bool nhwc)
{
	const int64_t sx[4] = { 1, l->c, l->h, l->h };
	const int64_t sw[4] = { l->k, l->c, l->r, l->r };
	const int64_t sh[4] = { l->r, l->r, l->c, l->k };
	ts_tensor *x = ts_placeholder(ctx, "X", TS_F32, 4, sx);
	ts_tensor *w = ts_placeholder(ctx, "W", TS_F32, 4, hwio ? sh : sw);
	ts_tensor *p;
	ts_axis *n = ts_axis_new(ctx, "n", 1);
	ts_axis *k = ts_axis_new(ctx, "k", l->k);
	ts_axis *y = ts_axis_new(ctx, "y", conv_out(l));
	ts_axis *v = ts_axis_new(ctx, "x", conv_out(l));
	ts_axis *rc = ts_reduce_axis(ctx, "rc", l->c);
	ts_axis *ry = ts_reduce_axis(ctx, "ry", l->r);
	ts_axis *rx = ts_reduce_axis(ctx, "rx", l->r);
	ts_expr *body;
	ts_tensor *out;

	if (!x || !w)
		return NULL;
	if (ts_tensor_set_weight(ctx, w, true) < 0)
		return NULL;
	if (!(p = conv_pad(ctx, x, l->pad)))
		return NULL;
	body = ts_mul(ctx, ts_at(ctx, p, 4, ts_var(ctx, n), ts_var(ctx, rc),
			conv_window(ctx, y, l->stride, ry),
			conv_window(ctx, v, l->stride, rx)),
		hwio ? ts_at(ctx, w, 4, ts_var(ctx, ry), ts_var(ctx, rx),
			ts_var(ctx, rc), ts_var(ctx, k))
		: ts_at(ctx, w, 4, ts_var(ctx, k), ts_var(ctx, rc),
			ts_var(ctx, ry), ts_var(ctx, rx)));
	out = ts_compute(ctx, "Y", 4, nhwc ? (ts_axis *[]){ n, y, v, k } :
		(ts_axis *[]){ n, k, y, v },
		ts_sum(ctx, 3, (ts_axis *[]){ rc, ry, rx }, body));
	return out ? ts_dag_new(ctx, 2, (ts_tensor *[]){ x, w }, 1, &out)
		: NULL;
}

static ts_dag *conv_declare(ts_ctx *ctx, const struct conv_layer *l,
	bool hwio)
{
	return conv_declare_as(ctx, l, hwio, false);
}

/* The largest difference between "nhwc" and the NCHW "ref" of the same
 * values. */
static double conv_nhwc_error(const ts_array *nhwc, const ts_array *ref)
{
	int64_t k = ref->shape[1], h = ref->shape[2], w = ref->shape[3];
	double err = 0;

	for (int64_t c = 0; c < k; c++)
		for (int64_t y = 0; y < h; y++)
			for (int64_t x = 0; x < w; x++)
				err = fmax(err, fabs(ts_array_get(nhwc,
					(y * w + x) * k + c) - ts_array_get(
					ref, (c * h + y) * w + x)));
	return err;
}

/* oneDNN objects of one layer. */
struct conv_dnnl {
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t conv;
	dnnl_memory_t src, wei, dst;	/* in the primitive's layouts */
	dnnl_memory_t user_dst;		/* NCHW, for the comparison */
	const char *impl;
	int threads;
};

/* Exit with a message when "st" (from "what") is not success. */
static void dnnl_check(dnnl_status_t st, const char *what)
{
	if (st != dnnl_success) {
		fprintf(stderr, "bench_conv: oneDNN %s failed (status %d)\n",
			what, (int)st);
		exit(1);
	}
}

/* Copy the memory "from" into "to" with a reorder primitive on "d". */
static void dnnl_copy(struct conv_dnnl *d, dnnl_memory_t from,
	dnnl_memory_t to)
{
	const dnnl_memory_desc_t *fmd, *tmd;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	dnnl_exec_arg_t args[2];

	dnnl_check(dnnl_memory_get_memory_desc(from, &fmd), "memory desc");
	dnnl_check(dnnl_memory_get_memory_desc(to, &tmd), "memory desc");
	dnnl_check(dnnl_reorder_primitive_desc_create(&rpd, fmd, d->engine,
		tmd, d->engine, NULL), "reorder desc");
	dnnl_check(dnnl_primitive_create(&r, rpd), "reorder");
	args[0] = (dnnl_exec_arg_t){ DNNL_ARG_FROM, from };
	args[1] = (dnnl_exec_arg_t){ DNNL_ARG_TO, to };
	dnnl_check(dnnl_primitive_execute(r, d->stream, 2, args), "reorder");
	dnnl_check(dnnl_stream_wait(d->stream), "stream wait");
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
}

/* Return a oneDNN memory on "d" that describes the f32 array "a" in the
 * plain layout "tag". */
static dnnl_memory_t dnnl_user_memory(struct conv_dnnl *d, ts_array *a,
	dnnl_format_tag_t tag)
{
	dnnl_memory_desc_t md;
	dnnl_dims_t dims;
	dnnl_memory_t m;

	for (int i = 0; i < a->ndim; i++)
		dims[i] = a->shape[i];
	/* oneDNN's dimensions are logical (O, I, H, W) whatever the tag. */
	if (tag == dnnl_hwio) {
		dims[0] = a->shape[3];
		dims[1] = a->shape[2];
		dims[2] = a->shape[0];
		dims[3] = a->shape[1];
	}
	dnnl_check(dnnl_memory_desc_init_by_tag(&md, a->ndim, dims, dnnl_f32,
		tag), "memory desc");
	dnnl_check(dnnl_memory_create(&m, &md, d->engine, a->data),
		"memory");
	return m;
}

/* Create the convolution primitive of layer "l" in "d" with "threads"
 * OpenMP threads, its memories in its own layouts filled from "x" and
 * "w" (OIHW, or HWIO when "hwio"), and an NCHW destination over "y". */
static void dnnl_setup(struct conv_dnnl *d, const struct conv_layer *l,
	int threads, ts_array *x, ts_array *w, ts_array *y, bool hwio)
{
	int64_t o = conv_out(l);
	dnnl_dims_t sd = { 1, l->c, l->h, l->h }, wd = { l->k, l->c, l->r,
		l->r }, dd = { 1, l->k, o, o };
	dnnl_dims_t st = { l->stride, l->stride }, pad = { l->pad, l->pad };
	dnnl_memory_desc_t smd, wmd, dmd;
	dnnl_convolution_desc_t cd;
	dnnl_memory_t ux, uw;

	d->threads = threads;
	omp_set_num_threads(threads);
	dnnl_check(dnnl_engine_create(&d->engine, dnnl_cpu, 0), "engine");
	dnnl_check(dnnl_stream_create(&d->stream, d->engine,
		dnnl_stream_default_flags), "stream");
	dnnl_check(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32,
		dnnl_format_tag_any), "src desc");
	dnnl_check(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32,
		dnnl_format_tag_any), "weights desc");
	dnnl_check(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32,
		dnnl_format_tag_any), "dst desc");
	dnnl_check(dnnl_convolution_forward_desc_init(&cd,
		dnnl_forward_inference, dnnl_convolution_direct, &smd, &wmd,
		NULL, &dmd, st, pad, pad), "convolution desc");
	dnnl_check(dnnl_primitive_desc_create(&d->pd, &cd, NULL, d->engine,
		NULL), "convolution primitive desc");
	dnnl_check(dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str,
		0, &d->impl), "implementation name");
	dnnl_check(dnnl_primitive_create(&d->conv, d->pd), "convolution");
	dnnl_check(dnnl_memory_create(&d->src, dnnl_primitive_desc_query_md(
		d->pd, dnnl_query_src_md, 0), d->engine, DNNL_MEMORY_ALLOCATE),
		"src memory");
	dnnl_check(dnnl_memory_create(&d->wei, dnnl_primitive_desc_query_md(
		d->pd, dnnl_query_weights_md, 0), d->engine,
		DNNL_MEMORY_ALLOCATE), "weights memory");
	dnnl_check(dnnl_memory_create(&d->dst, dnnl_primitive_desc_query_md(
		d->pd, dnnl_query_dst_md, 0), d->engine, DNNL_MEMORY_ALLOCATE),
		"dst memory");
	ux = dnnl_user_memory(d, x, dnnl_nchw);
	uw = dnnl_user_memory(d, w, hwio ? dnnl_hwio : dnnl_oihw);
	d->user_dst = dnnl_user_memory(d, y, dnnl_nchw);
	dnnl_copy(d, ux, d->src);
	dnnl_copy(d, uw, d->wei);
	dnnl_memory_destroy(ux);
	dnnl_memory_destroy(uw);
}

/* Run the convolution of "arg" (a struct conv_dnnl) once and wait. */
static void dnnl_run(void *arg)
{
	struct conv_dnnl *d = arg;
	dnnl_exec_arg_t args[3] = {
		{ DNNL_ARG_SRC, d->src },
		{ DNNL_ARG_WEIGHTS, d->wei },
		{ DNNL_ARG_DST, d->dst },
	};

	omp_set_num_threads(d->threads);
	dnnl_check(dnnl_primitive_execute(d->conv, d->stream, 3, args),
		"convolution");
	dnnl_check(dnnl_stream_wait(d->stream), "stream wait");
}

/* Release the objects of "d". */
static void dnnl_teardown(struct conv_dnnl *d)
{
	dnnl_memory_destroy(d->src);
	dnnl_memory_destroy(d->wei);
	dnnl_memory_destroy(d->dst);
	dnnl_memory_destroy(d->user_dst);
	dnnl_primitive_destroy(d->conv);
	dnnl_primitive_desc_destroy(d->pd);
	dnnl_stream_destroy(d->stream);
	dnnl_engine_destroy(d->engine);
}

/* The options of the program. */
struct conv_opts {
	int nthreads;
	int threads[8];
	double min_time;
	bool verbose;		/* print the chosen configurations */
	bool hwio;		/* Tessel's weights declared RSCK */
	int tune;		/* > 0: also tune each layer with this many
				 * trials and time the tuned kernel */
	int nnotes;
	char *notes[32];	/* one line per case, printed after the table */
};

/* The tolerance of a sum of "terms" products of values in [-1, 1). */
static double conv_tolerance(int64_t terms)
{
	return 1e-3 * sqrt((double)terms);
}

/* Check Tessel's static schedule of the small layer "l" with "threads"
 * threads (weights RSCK when "hwio") against the interpreter; print one
 * line.  Return success. */
static bool conv_check_small(const struct conv_layer *l, int threads,
	bool hwio)
{
	ts_ctx *ctx = bench_ctx();
	ts_dag *dag = conv_declare(ctx, l, hwio);
	ts_module *m = dag ? bench_compile_static(ctx, dag, threads, NULL)
		: NULL;
	ts_array **args = m ? bench_args(ctx, dag, 3) : NULL, *want[1];
	double err = 0, rel = 0;
	bool ok;

	if (!args || ts_module_run(m, args) < 0 ||
	    ts_eval(ctx, dag, args, want) < 0 ||
	    ts_array_compare(ctx, args[2], want[0], &err, &rel) < 0)
		bench_die(ctx, l->name);
	ok = err <= conv_tolerance(l->c * l->r * l->r);
	printf("check against the interpreter: %s, %d threads: %s (max abs "
		"err %.2g)\n", l->name, threads, ok ? "pass" : "FAIL", err);
	ts_module_free(m);
	ts_ctx_free(ctx);
	return ok;
}

/* The layer run as a network: its weights in the layout Tessel keeps. */
struct conv_net {
	ts_network *net;
	ts_array *in[2];	/* X, W as declared */
	ts_array *out[1];
	int task;		/* the convolution's task */
};

/* Run the network of "arg" (a struct conv_net) once. */
static void conv_net_run(void *arg)
{
	struct conv_net *c = arg;

	if (ts_network_run(c->net, c->in, c->out) < 0)
		abort();
}

/* Compile "dag" as a network with "threads" threads on the inputs of
 * "args": the static rule blocks its weights.  Check it against "ref";
 * "*err" grows to its error. */
static struct conv_net conv_network(ts_ctx *ctx, const ts_dag *dag,
	int threads, ts_array **args, ts_array *ref, double *err)
{
	ts_network_options no = ts_network_options_default();
	struct conv_net c = { 0 };
	const ts_partition *p;
	double e = 0, rel = 0;

	no.threads = threads;
	c.net = ts_network_compile(ctx, dag, bench_host_target(ctx, threads),
		&no);
	if (!c.net)
		bench_die(ctx, "compiling the layer as a network");
	p = ts_network_partition(c.net);
	for (int g = 0; g < p->nsubgraphs; g++)
		if (!p->subgraphs[g].once)
			c.task = p->subgraphs[g].task;
	c.in[0] = args[0];
	c.in[1] = args[1];
	c.out[0] = ts_array_for_tensor(ctx, ts_dag_output(dag, 0));
	conv_net_run(&c);
	if (ts_array_compare(ctx, c.out[0], ref, &e, &rel) < 0)
		bench_die(ctx, "comparing the network with oneDNN");
	*err = fmax(*err, e);
	return c;
}

/* Compile the layer "l" with its output NHWC in "ctx" as a network with
 * "threads" threads (weights blocked, layouts chosen) on the inputs
 * "args"; check it against the NCHW "ref"; "*err" grows to its error. */
static struct conv_net conv_network_nhwc(ts_ctx *ctx,
	const struct conv_layer *l, bool hwio, int threads, ts_array **args,
	const ts_array *ref, double *err)
{
	ts_dag *dag = conv_declare_as(ctx, l, hwio, true);
	ts_network_options no = ts_network_options_default();
	struct conv_net c = { 0 };

	no.threads = threads;
	if (!dag || !(c.net = ts_network_compile(ctx, dag,
	    bench_host_target(ctx, threads), &no)))
		bench_die(ctx, "compiling the layer with an NHWC output");
	c.in[0] = args[0];
	c.in[1] = args[1];
	c.out[0] = ts_array_for_tensor(ctx, ts_dag_output(dag, 0));
	conv_net_run(&c);
	*err = fmax(*err, conv_nhwc_error(c.out[0], ref));
	return c;
}

/* Compile "dag" (layer "l") as a network on blocked weights, tune its
 * convolution's task with "threads" threads for "o"->tune trials and
 * return the network with the tuned kernel, after checking it against
 * "ref"; "*err" grows to its error. */
static struct conv_net conv_tuned(ts_ctx *ctx, const ts_dag *dag,
	const struct conv_layer *l, int threads,
	const struct conv_opts *o, ts_array **args, ts_array *ref,
	double *err)
{
	struct bench_tuning t = { .trials = o->tune, .seed = BENCH_TUNE_SEED };
	struct conv_net tn = conv_network(ctx, dag, threads, args, ref, err);
	const ts_partition *p = ts_network_partition(tn.net);
	const ts_schedule *best;
	char what[64];

	snprintf(what, sizeof(what), "%s, %d threads", l->name, threads);
	best = bench_tune(ctx, p->tasks[tn.task]->dag, threads, &t, what);
	if (!best || ts_network_set_schedule(tn.net, tn.task, best) < 0)
		bench_die(ctx, what);
	conv_net_run(&tn);
	{
		double e = 0, rel = 0;
		if (ts_array_compare(ctx, tn.out[0], ref, &e, &rel) < 0)
			bench_die(ctx, "comparing the tuned kernel with "
				"oneDNN");
		*err = fmax(*err, e);
	}
	return tn;
}

/* Measure layer "l" with "threads" threads; print a table row and store
 * the ratios oneDNN / Tessel in "ratio" (static as declared, static on
 * blocked weights, then tuned when "o" tunes).  Return whether the
 * outputs agree. */
static bool conv_case(const struct conv_layer *l, int threads,
	struct conv_opts *o, double ratio[4])
{
	ts_ctx *ctx = bench_ctx();
	ts_dag *dag = conv_declare(ctx, l, o->hwio);
	ts_static_result *res = NULL;
	ts_module *m = dag ? bench_compile_static(ctx, dag, threads, &res)
		: NULL;
	ts_array **args = m ? bench_args(ctx, dag, 5) : NULL, *ref;
	struct bench_kernel tp = { m, args };
	struct conv_net cn, cx, tt = { 0 };
	struct conv_dnnl d = { 0 };
	struct bench_runner r[5];
	int64_t oh = conv_out(l);
	double err = 0, rel = 0, flops = 2.0 * l->k * l->c * l->r * l->r *
		oh * oh;

	if (!args || !(ref = ts_array_for_tensor(ctx, ts_dag_output(dag, 0))))
		bench_die(ctx, l->name);
	dnnl_setup(&d, l, threads, args[0], args[1], ref, o->hwio);
	bench_kernel_run(&tp);
	dnnl_run(&d);
	dnnl_copy(&d, d.dst, d.user_dst);
	if (ts_array_compare(ctx, args[2], ref, &err, &rel) < 0)
		bench_die(ctx, "comparing with oneDNN");
	cn = conv_network(ctx, dag, threads, args, ref, &err);
	cx = conv_network_nhwc(ctx, l, o->hwio, threads, args, ref, &err);
	if (o->tune)
		tt = conv_tuned(ctx, dag, l, threads, o, args, ref, &err);
	if (o->verbose && o->nnotes < 32 && asprintf(&o->notes[o->nnotes],
	    "- %s, %d threads: `%s`", l->name, threads,
	    ts_config_to_json(res->best)) >= 0)
		o->nnotes++;
	r[0] = (struct bench_runner){ .name = "tessel",
		.run = bench_kernel_run, .arg = &tp };
	r[1] = (struct bench_runner){ .name = "onednn", .run = dnnl_run,
		.arg = &d };
	r[2] = (struct bench_runner){ .name = "blocked",
		.run = conv_net_run, .arg = &cn };
	r[3] = (struct bench_runner){ .name = "nhwc",
		.run = conv_net_run, .arg = &cx };
	r[4] = (struct bench_runner){ .name = "tuned",
		.run = conv_net_run, .arg = &tt };
	if (threads > 1)
		bench_alternate(r, o->tune ? 5 : 4, 4, o->min_time / 4, 0.2);
	else
		bench_interleave(r, o->tune ? 5 : 4, 10, 2000, o->min_time);
	ratio[0] = r[1].median / r[0].median;
	ratio[1] = r[1].median / r[2].median;
	ratio[3] = r[1].median / r[3].median;
	printf("| %s | %d | %.3f | %.1f | %.3f | %.1f | %.3f | %.1f | %.3f | "
		"%.1f | %.2f | %.2f | %.2f | %.3f | %.2g | %s |", l->name,
		threads, r[0].median * 1e3, flops / r[0].median * 1e-9,
		r[2].median * 1e3, flops / r[2].median * 1e-9,
		r[3].median * 1e3, flops / r[3].median * 1e-9,
		r[1].median * 1e3, flops / r[1].median * 1e-9, ratio[0],
		ratio[1], ratio[3], res->best_cost * 1e3, err, d.impl);
	if (o->tune) {
		ratio[2] = r[1].median / r[4].median;
		printf(" %.3f | %.2f |", r[4].median * 1e3, ratio[2]);
		ts_network_free(tt.net);
	}
	printf("\n");
	fflush(stdout);
	dnnl_teardown(&d);
	ts_network_free(cn.net);
	ts_network_free(cx.net);
	ts_module_free(m);
	ts_ctx_free(ctx);
	return err <= conv_tolerance(l->c * l->r * l->r);
}

/* Parse "argv" into "o"; exit with 2 on bad usage. */
static void conv_parse(int argc, char **argv, struct conv_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc &&
		    o->nthreads < 8 && atoi(argv[i + 1]) > 0) {
			o->threads[o->nthreads++] = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			o->min_time = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--verbose")) {
			o->verbose = true;
		} else if (!strcmp(argv[i], "--weights") && i + 1 < argc &&
		    (!strcmp(argv[i + 1], "oihw") ||
		    !strcmp(argv[i + 1], "hwio"))) {
			o->hwio = !strcmp(argv[++i], "hwio");
		} else if (!strcmp(argv[i], "--tune") && i + 1 < argc &&
		    atoi(argv[i + 1]) > 0) {
			o->tune = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			bench_use_target(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_conv [--threads N]... "
				"[--min-time S] [--weights oihw|hwio] "
				"[--tune TRIALS] [--verbose] "
				"[--target NAME|FILE.json]\n");
			exit(2);
		}
	}
	if (!o->nthreads) {
		o->threads[0] = 1;
		o->threads[1] = 2;
		o->nthreads = 2;
	}
}

/* Measure every layer with "threads" threads and print the geometric
 * mean of the ratios; return whether every output agreed. */
static bool conv_all(int threads, struct conv_opts *o)
{
	enum { N = sizeof(conv_layers) / sizeof(conv_layers[0]) };
	double ratio[N][4], v[4][N];
	bool ok = true;

	for (int i = 0; i < N; i++) {
		ok &= conv_case(&conv_layers[i], threads, o, ratio[i]);
		for (int c = 0; c < 4; c++)
			v[c][i] = ratio[i][c];
	}
	/* All layers, then the 3x3 ones (all but the stem). */
	printf("| geometric mean | %d | | | | | | | | | %.2f | %.2f | %.2f | "
		"| | |", threads, bench_geomean(v[0], N),
		bench_geomean(v[1], N), bench_geomean(v[3], N));
	if (o->tune)
		printf(" | %.2f |", bench_geomean(v[2], N));
	printf("\n| geometric mean, 3x3 layers | %d | | | | | | | | | %.2f | "
		"%.2f | %.2f | | | |", threads,
		bench_geomean(v[0] + 1, N - 1), bench_geomean(v[1] + 1, N - 1),
		bench_geomean(v[3] + 1, N - 1));
	if (o->tune)
		printf(" | %.2f |", bench_geomean(v[2] + 1, N - 1));
	printf("\n");
	return ok;
}

int main(int argc, char **argv)
{
	struct conv_opts o = { .min_time = 1.0 };
	bool ok = true;

	conv_parse(argc, argv, &o);
	for (int t = 0; t < o.nthreads; t++)
		for (size_t i = 0; i < sizeof(conv_small) /
		     sizeof(conv_small[0]); i++)
			ok &= conv_check_small(&conv_small[i], o.threads[t],
				o.hwio);
	printf("\nTessel: X NCHW, W %s as declared inputs, Y NCHW; its timed "
		"kernel includes the padding stage and any copy its schedule "
		"makes.  Tessel, blocked W: the same layer with the weights "
		"kept blocked along the output channel (the static rule of "
		"ts_partition_block_weights), converted once before timing.  "
		"oneDNN: source, weights and destination in the blocked "
		"layouts it chose, reordered from NCHW and %s before timing; "
		"only the convolution primitive is timed.  Tessel, NHWC out: "
		"the layer declared with its output NHWC (the layout a "
		"network's layout pass picks for it), weights blocked, "
		"compiled as a network.%s\n",
		o.hwio ? "HWIO (R, S, C, K: output channel last)" :
		"OIHW (K, C, R, S)", o.hwio ? "HWIO" : "OIHW", o.tune ?
		"  Tuned: the blocked-weight kernel, tuned." : "");
	printf("\n| layer | threads | Tessel ms | Tessel GFLOP/s | Tessel "
		"blocked W ms | blocked W GFLOP/s | Tessel NHWC out ms | NHWC "
		"out GFLOP/s | oneDNN ms | oneDNN GFLOP/s | oneDNN/Tessel | "
		"oneDNN/Tessel blocked W | oneDNN/Tessel NHWC out | model ms | "
		"max abs err | oneDNN implementation |%s\n", o.tune ? " tuned "
		"ms | oneDNN/tuned |" : "");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		"---|%s\n",
		o.tune ? "---|---|" : "");
	for (int t = 0; t < o.nthreads; t++)
		ok &= conv_all(o.threads[t], &o);
	if (o.nnotes)
		printf("\nStatic configurations:\n\n");
	for (int i = 0; i < o.nnotes; i++)
		printf("%s\n", o.notes[i]);
	if (!ok)
		fprintf(stderr, "bench_conv: a check failed\n");
	return ok ? 0 : 1;
}
