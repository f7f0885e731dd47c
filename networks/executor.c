/* The network executor: one compiled module per task, run subgraph by
 * subgraph over one arena of intermediate buffers.
 *
 * Memory plan.  An intermediate tensor (a subgraph output that is not a
 * network output) lives from the subgraph that writes it to the last one
 * that reads it.  Buffers are placed largest first, each at the lowest
 * 64-byte aligned offset where it overlaps no buffer already placed whose
 * lifetime meets its own; the arena is the highest end.  Network inputs
 * and outputs are the caller's arrays and take no arena space.  The
 * outputs of a subgraph that runs once (a weight in the layout the
 * layout pass chose) live for the whole network, so that later runs
 * find them intact.
 */
#include <config.h>

#include <stdlib.h>
#include <time.h>

#include <tessel/lower.h>
#include <tessel/network.h>

#include "dsl/ir.h"
#include "support/support.h"

/* Where an argument of a subgraph comes from. */
enum bind_kind { BIND_INPUT, BIND_OUTPUT, BIND_BUFFER };

struct binding {
	enum bind_kind kind;
	int index;		/* network input, network output or buffer */
};

struct ts_network {
	ts_ctx *ctx;
	const ts_partition *p;
	ts_network_options opt;
	ts_module **modules;	/* one per task */
	const ts_schedule **schedules;	/* what each task compiled */
	const ts_func **funcs;	/* what each module compiled */
	ts_memory_plan *mem;
	char *block;		/* the arena's allocation (GC atomic) */
	char *arena;		/* inside "block", 64-byte aligned */
	struct binding **bind;	/* per subgraph: inputs, then outputs */
	ts_array ***args;	/* per subgraph: the arrays passed */
	/* Per subgraph that runs once: the data of the inputs it last ran
	 * on; NULL before its first run. */
	const void ***once_seen;
};

ts_network_options ts_network_options_default(void)
{
	ts_network_options o = { 0 };

	o.opt_level = 3;
	return o;
}

/* Index of "t" in the list "v" of "n" tensors, or -1. */
static int tensor_index(ts_tensor *const *v, int n, const ts_tensor *t)
{
	for (int i = 0; i < n; i++)
		if (v[i] == t)
			return i;
	return -1;
}

/* Bytes of "t" rounded up to 64. */
static int64_t padded_bytes(const ts_tensor *t)
{
	int64_t b = ts_tensor_size(t) * (int64_t)ts_dtype_size(t->dtype);

	return (b + 63) / 64 * 64;
}

/* Collect the intermediate buffers of "p" into "mp" with their
 * lifetimes: one buffer per tensor, even when several subgraphs write
 * it (an intermediate that two tasks each recompute, as the gates of an
 * unrolled LSTM cell split between them), alive from its first writer
 * to its last writer or reader. */
static void plan_lifetimes(const ts_partition *p, ts_memory_plan *mp)
{
	ts_vec bufs = { 0 };

	for (int g = 0; g < p->nsubgraphs; g++) {
		const ts_subgraph *sg = &p->subgraphs[g];
		for (int o = 0; o < sg->noutputs; o++)
			if (!ts_dag_is_output(p->dag, sg->outputs[o]) &&
			    tensor_index((ts_tensor *const *)bufs.v, bufs.n,
			    sg->outputs[o]) < 0)
				ts_vec_push(&bufs, sg->outputs[o]);
	}
	mp->nbuffers = bufs.n;
	mp->tensors = (const ts_tensor **)bufs.v;
	mp->first = ts_new_atomic(int, bufs.n + 1);
	mp->last = ts_new_atomic(int, bufs.n + 1);
	mp->offset = ts_new_atomic(int64_t, bufs.n + 1);
	mp->bytes = ts_new_atomic(int64_t, bufs.n + 1);
	for (int b = 0; b < bufs.n; b++) {
		mp->bytes[b] = padded_bytes(mp->tensors[b]);
		mp->first[b] = mp->last[b] = -1;
	}
	for (int g = 0; g < p->nsubgraphs; g++) {
		const ts_subgraph *sg = &p->subgraphs[g];
		const ts_dag *task = p->tasks[sg->task]->dag;
		for (int b = 0; b < bufs.n; b++) {
			int in = tensor_index(sg->inputs, sg->ninputs,
				mp->tensors[b]);
			int out = tensor_index(sg->outputs, sg->noutputs,
				mp->tensors[b]);
			bool writes = out >= 0;
			/* A layout whose blocks pad the channels (1000 in
			 * blocks of 16) holds more than the network tensor:
			 * the buffer is as large as the largest task
			 * argument bound to it. */
			if (in >= 0)
				mp->bytes[b] = TS_MAX(mp->bytes[b],
					padded_bytes(task->inputs[in]));
			if (out >= 0)
				mp->bytes[b] = TS_MAX(mp->bytes[b],
					padded_bytes(task->outputs[out]));
			if (writes && sg->once) {
				mp->first[b] = 0;
				mp->last[b] = p->nsubgraphs - 1;
			} else if (writes && mp->first[b] < 0)
				mp->first[b] = g;
			if (writes || tensor_index(sg->inputs, sg->ninputs,
			    mp->tensors[b]) >= 0)
				mp->last[b] = TS_MAX(mp->last[b], g);
		}
	}
}

/* Whether the lifetimes of buffers "a" and "b" of "mp" meet. */
static bool lifetimes_meet(const ts_memory_plan *mp, int a, int b)
{
	return mp->first[a] <= mp->last[b] && mp->first[b] <= mp->last[a];
}

/* The lowest offset for buffer "b" of "mp" that overlaps none of the
 * "nplaced" buffers in "placed" whose lifetimes meet its own. */
static int64_t first_fit(const ts_memory_plan *mp, const int *placed,
	int nplaced, int b)
{
	int64_t off = 0;
	bool moved = true;

	/* Move past every conflicting buffer until none is left. */
	while (moved) {
		moved = false;
		for (int i = 0; i < nplaced; i++) {
			int q = placed[i];
			if (!lifetimes_meet(mp, q, b) ||
			    off >= mp->offset[q] + mp->bytes[q] ||
			    off + mp->bytes[b] <= mp->offset[q])
				continue;
			off = mp->offset[q] + mp->bytes[q];
			moved = true;
		}
	}
	return off;
}

/* The order of placement: largest first, earlier first on ties. */
static void placement_order(const ts_memory_plan *mp, int *order)
{
	for (int i = 0; i < mp->nbuffers; i++)
		order[i] = i;
	for (int i = 1; i < mp->nbuffers; i++)
		for (int j = i; j > 0; j--) {
			int a = order[j - 1], b = order[j];
			if (mp->bytes[a] > mp->bytes[b] ||
			    (mp->bytes[a] == mp->bytes[b] &&
			     mp->first[a] <= mp->first[b]))
				break;
			order[j - 1] = b;
			order[j] = a;
		}
}

ts_memory_plan *ts_memory_plan_new(ts_ctx *ctx, const ts_partition *p)
{
	ts_memory_plan *mp;
	int *order;

	if (!p) {
		ts_ctx_set_error(ctx, "no partition to plan memory for");
		return NULL;
	}
	mp = ts_new(ts_memory_plan);
	plan_lifetimes(p, mp);
	order = ts_new_atomic(int, mp->nbuffers + 1);
	placement_order(mp, order);
	for (int i = 0; i < mp->nbuffers; i++) {
		int b = order[i];
		mp->offset[b] = first_fit(mp, order, i, b);
		mp->arena_bytes = TS_MAX(mp->arena_bytes,
			mp->offset[b] + mp->bytes[b]);
		mp->total_bytes += mp->bytes[b];
	}
	return mp;
}

bool ts_memory_plan_has_conflict(const ts_memory_plan *mp, int *b1, int *b2)
{
	for (int a = 0; a < mp->nbuffers; a++)
		for (int b = a + 1; b < mp->nbuffers; b++) {
			if (!lifetimes_meet(mp, a, b) ||
			    mp->offset[a] >= mp->offset[b] + mp->bytes[b] ||
			    mp->offset[b] >= mp->offset[a] + mp->bytes[a])
				continue;
			if (b1)
				*b1 = a;
			if (b2)
				*b2 = b;
			return true;
		}
	return false;
}

/* Where network tensor "t" lives in "net". */
static struct binding bind_tensor(const ts_network *net, const ts_tensor *t)
{
	const ts_dag *dag = net->p->dag;
	struct binding b = { BIND_INPUT, -1 };

	b.index = tensor_index(dag->inputs, dag->ninputs, t);
	if (b.index >= 0)
		return b;
	b.kind = BIND_OUTPUT;
	b.index = tensor_index(dag->outputs, dag->noutputs, t);
	if (b.index >= 0)
		return b;
	b.kind = BIND_BUFFER;
	for (int i = 0; i < net->mem->nbuffers; i++)
		if (net->mem->tensors[i] == t)
			b.index = i;
	return b;
}

/* An array header over "data" with the shape of "t". */
static ts_array *array_over(const ts_tensor *t, void *data)
{
	ts_array *a = ts_new(ts_array);

	a->dtype = t->dtype;
	a->ndim = t->ndim;
	a->size = ts_tensor_size(t);
	for (int d = 0; d < t->ndim; d++)
		a->shape[d] = t->shape[d];
	a->data = data;
	return a;
}

/* Bind the arguments of every subgraph of "net"; buffers point into the
 * arena once and for all. */
static void bind_all(ts_network *net)
{
	const ts_partition *p = net->p;

	net->bind = ts_new_array(struct binding *, p->nsubgraphs + 1);
	net->args = ts_new_array(ts_array **, p->nsubgraphs + 1);
	for (int g = 0; g < p->nsubgraphs; g++) {
		const ts_subgraph *sg = &p->subgraphs[g];
		int n = sg->ninputs + sg->noutputs;
		net->bind[g] = ts_new_atomic(struct binding, n + 1);
		net->args[g] = ts_new_array(ts_array *, n + 1);
		/* The task's own argument gives the shape: a tensor in
		 * another layout has the network tensor's size, not its
		 * shape. */
		const ts_dag *task = p->tasks[sg->task]->dag;
		for (int i = 0; i < n; i++) {
			const ts_tensor *t = i < sg->ninputs ? sg->inputs[i]
				: sg->outputs[i - sg->ninputs];
			const ts_tensor *arg = i < sg->ninputs ?
				task->inputs[i] : task->outputs[i - sg->ninputs];
			struct binding b = bind_tensor(net, t);
			net->bind[g][i] = b;
			if (b.kind == BIND_BUFFER)
				net->args[g][i] = array_over(arg, net->arena +
					net->mem->offset[b.index]);
		}
	}
}

/* Compile task "task" of "net" under "sch" into its module slot. */
static ts_status compile_task(ts_network *net, int task,
	const ts_schedule *sch)
{
	const ts_task *t = net->p->tasks[task];
	ts_compile_options co = ts_compile_options_for(net->opt.target);
	ts_func *f;
	ts_module *m;

	co.threads = net->opt.threads;
	co.opt_level = net->opt.opt_level;
	f = ts_lower(net->ctx, t->dag, sch);
	m = f ? ts_module_compile(net->ctx, f, &co) : NULL;
	if (!m)
		return ts_ctx_set_error(net->ctx, "task %d (anchor '%s'): %s",
			task, t->name, ts_ctx_error(net->ctx));
	if (net->modules[task])
		ts_module_free(net->modules[task]);
	net->modules[task] = m;
	net->funcs[task] = f;
	net->schedules[task] = sch ? sch : ts_schedule_naive(net->ctx,
		t->dag);
	return TS_OK;
}

/* Allocate the arena of "net" (64-byte aligned, collected memory). */
static void alloc_arena(ts_network *net)
{
	char *raw = ts_new_atomic(char, net->mem->arena_bytes + 64);
	uintptr_t a = ((uintptr_t)raw + 63) & ~(uintptr_t)63;

	net->block = raw;
	net->arena = (char *)a;
}

ts_network *ts_network_build(ts_ctx *ctx, const ts_partition *p,
	ts_schedule *const *schedules, const ts_network_options *opt)
{
	ts_network *net;

	if (!p) {
		ts_ctx_set_error(ctx, "no partition to build a network from");
		return NULL;
	}
	net = ts_new(ts_network);
	net->ctx = ctx;
	net->p = p;
	net->opt = opt ? *opt : ts_network_options_default();
	net->mem = ts_memory_plan_new(ctx, p);
	net->modules = ts_new_array(ts_module *, p->ntasks + 1);
	net->funcs = ts_new_array(const ts_func *, p->ntasks + 1);
	net->schedules = ts_new_array(const ts_schedule *, p->ntasks + 1);
	alloc_arena(net);
	bind_all(net);
	net->once_seen = ts_new_array(const void **, p->nsubgraphs + 1);
	for (int t = 0; t < p->ntasks; t++)
		if (compile_task(net, t, schedules && !net->opt.naive ?
		    schedules[t] : NULL) < 0) {
			ts_network_free(net);
			return NULL;
		}
	return net;
}

const ts_partition *ts_network_partition(const ts_network *net)
{
	return net->p;
}

const ts_memory_plan *ts_network_memory(const ts_network *net)
{
	return net->mem;
}

const ts_schedule *ts_network_task_schedule(const ts_network *net,
	int task)
{
	if (task < 0 || task >= net->p->ntasks)
		return NULL;
	return net->schedules[task];
}

ts_status ts_network_set_schedule(ts_network *net, int task,
	const ts_schedule *sch)
{
	if (task < 0 || task >= net->p->ntasks)
		return ts_ctx_set_error(net->ctx, "network '%s' has no task %d",
			net->p->dag->name ? net->p->dag->name : "dag", task);
	ts_network_weights_changed(net);
	return compile_task(net, task, sch);
}

void ts_network_weights_changed(ts_network *net)
{
	if (net)
		for (int g = 0; g < net->p->nsubgraphs; g++)
			net->once_seen[g] = NULL;
}

/* Check "inputs" against the inputs of the network of "net". */
static ts_status check_inputs(ts_network *net, ts_array *const *inputs)
{
	const ts_dag *dag = net->p->dag;

	if (!inputs && dag->ninputs > 0)
		return ts_ctx_set_error(net->ctx, "network '%s': no inputs "
			"given", dag->name ? dag->name : "dag");
	for (int i = 0; i < dag->ninputs; i++)
		if (!inputs[i] || inputs[i]->size !=
		    ts_tensor_size(dag->inputs[i]) ||
		    inputs[i]->dtype != dag->inputs[i]->dtype)
			return ts_ctx_set_error(net->ctx, "network '%s': input "
				"'%s' is missing or has the wrong dtype or size",
				dag->name ? dag->name : "dag",
				dag->inputs[i]->name);
	return TS_OK;
}

/* Point the caller's arrays into the arguments of subgraph "g". */
static void bind_caller(ts_network *net, int g, ts_array *const *inputs,
	ts_array *const *outputs)
{
	const ts_subgraph *sg = &net->p->subgraphs[g];

	for (int i = 0; i < sg->ninputs + sg->noutputs; i++) {
		struct binding b = net->bind[g][i];
		if (b.kind == BIND_INPUT)
			net->args[g][i] = inputs[b.index];
		else if (b.kind == BIND_OUTPUT)
			net->args[g][i] = outputs[b.index];
	}
}

/* Whether subgraph "g" of "net", which runs once, must run again: it
 * never ran, or one of its inputs is another array than last time. */
static bool once_stale(ts_network *net, int g)
{
	const ts_subgraph *sg = &net->p->subgraphs[g];
	const void **seen = net->once_seen[g];
	bool stale = !seen;

	if (!seen)
		seen = net->once_seen[g] = (const void **)ts_new_array(void *,
			sg->ninputs + 1);
	for (int i = 0; i < sg->ninputs; i++) {
		const void *d = net->args[g][i] ? net->args[g][i]->data : NULL;
		stale |= seen[i] != d;
		seen[i] = d;
	}
	return stale;
}

/* Run every subgraph of "net" in order; one that runs once only when
 * its weights changed. */
static ts_status run_all(ts_network *net, ts_array *const *inputs,
	ts_array *const *outputs)
{
	for (int g = 0; g < net->p->nsubgraphs; g++) {
		bind_caller(net, g, inputs, outputs);
		if (net->p->subgraphs[g].once && !once_stale(net, g))
			continue;
		if (ts_module_run(net->modules[net->p->subgraphs[g].task],
		    net->args[g]) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

ts_status ts_network_run(ts_network *net, ts_array *const *inputs,
	ts_array **outputs)
{
	const ts_dag *dag;

	if (!net || !outputs)
		return TS_ERROR;
	dag = net->p->dag;
	if (check_inputs(net, inputs) < 0)
		return TS_ERROR;
	for (int o = 0; o < dag->noutputs; o++)
		if (!outputs[o])
			outputs[o] = ts_array_for_tensor(net->ctx,
				dag->outputs[o]);
	return run_all(net, inputs, outputs);
}

/* A network and its inputs and outputs, for ts_time_calls. */
struct timed_run {
	ts_network *net;
	ts_array *const *inputs;
	ts_array **outs;
};

/* Run the network of "data" (a struct timed_run) once. */
static ts_status run_timed(void *data)
{
	struct timed_run *t = data;

	return run_all(t->net, t->inputs, t->outs);
}

ts_status ts_network_time(ts_network *net, ts_array *const *inputs,
	double min_total_s, ts_timing *out)
{
	struct timed_run t = { net, inputs, NULL };

	if (!net || !out)
		return TS_ERROR;
	t.outs = ts_new_array(ts_array *, net->p->dag->noutputs + 1);
	if (ts_network_run(net, inputs, t.outs) < 0)
		return TS_ERROR;
	return ts_time_calls(run_timed, &t, min_total_s, out);
}

ts_status ts_network_time_task(ts_network *net, int task,
	double min_total_s, ts_timing *out)
{
	const ts_dag *dag;
	ts_array **args;

	if (task < 0 || task >= net->p->ntasks)
		return ts_ctx_set_error(net->ctx, "network '%s' has no task %d",
			net->p->dag->name ? net->p->dag->name : "dag", task);
	dag = net->p->tasks[task]->dag;
	args = ts_new_array(ts_array *, dag->ninputs + dag->noutputs + 1);
	for (int i = 0; i < dag->ninputs; i++) {
		args[i] = ts_array_for_tensor(net->ctx, dag->inputs[i]);
		ts_array_fill_random(args[i], (uint64_t)i + 1);
	}
	for (int o = 0; o < dag->noutputs; o++)
		args[dag->ninputs + o] = ts_array_for_tensor(net->ctx,
			dag->outputs[o]);
	return ts_module_time(net->modules[task], args, min_total_s, out);
}

void ts_network_free(ts_network *net)
{
	if (!net)
		return;
	for (int t = 0; t < net->p->ntasks; t++)
		if (net->modules[t]) {
			ts_module_free(net->modules[t]);
			net->modules[t] = NULL;
		}
}

const ts_func *ts_network_task_func(const ts_network *net, int task)
{
	return task >= 0 && task < net->p->ntasks ? net->funcs[task] : NULL;
}

/* The C expression of argument "i" of subgraph "g" in the driver. */
static const char *driver_arg(const ts_network *net, int g, int i)
{
	struct binding b = net->bind[g][i];

	if (b.kind == BIND_INPUT)
		return ts_asprintf("(void *)inputs[%d]", b.index);
	if (b.kind == BIND_OUTPUT)
		return ts_asprintf("outputs[%d]", b.index);
	return ts_asprintf("(void *)(arena + %lld)",
		(long long)net->mem->offset[b.index]);
}

char *ts_network_driver_source(const ts_network *net, const char *name,
	const char *const *symbols)
{
	const ts_partition *p = net->p;
	int nseen = 0;
	ts_buf b;

	for (int g = 0; g < p->nsubgraphs; g++)
		nseen += p->subgraphs[g].once ? p->subgraphs[g].ninputs : 0;
	ts_buf_init(&b);
	ts_buf_printf(&b, "/* %s: the network '%s' compiled by Tessel: %d "
		"subgraphs over an arena\n * of %lld bytes. */\n#include "
		"<stdlib.h>\n\n", name, p->dag->name ? p->dag->name : name,
		p->nsubgraphs, (long long)net->mem->arena_bytes);
	for (int t = 0; t < p->ntasks; t++)
		ts_buf_printf(&b, "void %s_packed(void **args);\n", symbols[t]);
	/* The arena lives as long as its thread (or until released): the
	 * weights converted into it stay converted between calls, as in
	 * the executor, and are converted again when one is passed at
	 * another address. */
	ts_buf_printf(&b, "\n/* The calling thread's arena and the weights "
		"converted into it. */\nstatic _Thread_local char *ts_arena;\n"
		"static _Thread_local const void *ts_seen[%d];\n\n"
		"void %s_release(void)\n{\n\tfree(ts_arena);\n"
		"\tts_arena = NULL;\n}\n", nseen + 1, name);
	ts_buf_printf(&b, "\nint %s(const void *const *inputs, void *const "
		"*outputs)\n{\n\tchar *arena = ts_arena;\n\tint fresh = !arena;"
		"\n\n\tif (!arena && !(arena = ts_arena = aligned_alloc(64, "
		"%lld)))\n\t\treturn -1;\n", name,
		(long long)(net->mem->arena_bytes + 64));
	nseen = 0;
	for (int g = 0; g < p->nsubgraphs; g++) {
		const ts_subgraph *sg = &p->subgraphs[g];
		ts_buf_puts(&b, "\t{\n\t\tvoid *a[] = { ");
		for (int i = 0; i < sg->ninputs + sg->noutputs; i++)
			ts_buf_printf(&b, "%s%s", i ? ", " : "",
				driver_arg(net, g, i));
		ts_buf_puts(&b, " };\n");
		if (!sg->once) {
			ts_buf_printf(&b, "\t\t%s_packed(a);\n\t}\n",
				symbols[sg->task]);
			continue;
		}
		ts_buf_puts(&b, "\t\tif (fresh");
		for (int i = 0; i < sg->ninputs; i++)
			ts_buf_printf(&b, " || ts_seen[%d] != a[%d]", nseen + i, i);
		ts_buf_puts(&b, ") {\n");
		for (int i = 0; i < sg->ninputs; i++)
			ts_buf_printf(&b, "\t\t\tts_seen[%d] = a[%d];\n",
				nseen + i, i);
		ts_buf_printf(&b, "\t\t\t%s_packed(a);\n\t\t}\n\t}\n",
			symbols[sg->task]);
		nseen += sg->ninputs;
	}
	ts_buf_puts(&b, "\treturn 0;\n}\n");
	return b.s;
}
