/* Tessel: whole networks.
 *
 * A network is a DAG written with the same DSL.  It is run as a sequence
 * of subgraphs, each anchored on a reduction together with the direct
 * stages the meta-templates put into it (inlined producers, a fused
 * elementwise epilogue, a padding computed at the anchor).  A subgraph
 * becomes a DAG of its own whose inputs are placeholders for the tensors
 * it reads from outside; subgraphs equal up to renaming (same canonical
 * string) are one task, weighted by how many times it occurs.
 *
 * The executor compiles one module per task (occurrences share it) and
 * runs the subgraphs in order over one arena of intermediate buffers,
 * placed by liveness (first fit), so that buffers whose lifetimes do not
 * overlap share memory.
 *
 * The layout pass chooses a data layout per node of a graph by dynamic
 * programming over kernel and transformation costs, with a greedy solver
 * with local improvement when the state of the DP grows too large.
 */
#ifndef TESSEL_NETWORK_H
#define TESSEL_NETWORK_H

#include <tessel/dsl.h>
#include <tessel/analysis.h>
#include <tessel/backend.h>
#include <tessel/metatemplate.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One distinct subgraph: what is scheduled, compiled and tuned once. */
typedef struct ts_task {
	int id;			/* index in the partition's task list */
	ts_dag *dag;		/* the subgraph as a DAG of its own */
	const char *hash;	/* ts_dag_hash of "dag" */
	const char *name;	/* the anchor's name in its first occurrence */
	int weight;		/* occurrences in the network */
	ts_class klass;		/* class of the anchor */
	int64_t flops;		/* of one occurrence */
} ts_task;

/* One occurrence of a task in the network, in execution order. */
typedef struct ts_subgraph {
	int task;		/* index into the partition's tasks */
	int anchor;		/* network stage index of the anchor */
	int nstages;		/* network stage indices, topological order */
	int *stages;
	int ninputs;		/* network tensors bound to task->dag->inputs */
	ts_tensor **inputs;
	int noutputs;		/* network tensors bound to task->dag->outputs */
	ts_tensor **outputs;
	/* It reads weights only (the conversion of a weight into the layout
	 * the layout pass chose): it runs at the first run of the network
	 * and again only when a weight array changes, and its outputs stay
	 * allocated from one run to the next. */
	bool once;
} ts_subgraph;

typedef struct ts_partition {
	const ts_dag *dag;	/* the network */
	int nsubgraphs;
	ts_subgraph *subgraphs;	/* execution order */
	int ntasks;
	ts_task **tasks;	/* in order of first occurrence */
} ts_partition;

/* Partition "dag" into subgraphs with the rules of the meta-templates of
 * "target": a stage that gets its own loop nest anchors a subgraph; an
 * epilogue fused into an anchor joins it; an inlined or location-tunable
 * stage joins the subgraphs of its consumers (an inlined stage read by
 * two subgraphs is recomputed in both).
 * Requires: a DAG and a target.  Produces: subgraphs and tasks. */
__ts_gc ts_partition *ts_partition_dag(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target);
/* Print the tasks of "p": stages, classes, weights and flops. */
void ts_partition_print(__ts_keep FILE *out, __ts_keep const ts_partition *p);
/* Sum of weight x flops over the tasks of "p". */
int64_t ts_partition_flops(__ts_keep const ts_partition *p);

/* The memory plan of the intermediate tensors of a partition: the
 * outputs of subgraphs that are not network outputs.  Buffer b lives
 * from subgraph first[b] (its producer) to last[b] (its last reader),
 * both inclusive, at "offset"[b] in one arena. */
typedef struct ts_memory_plan {
	int nbuffers;
	const ts_tensor **tensors;
	int *first, *last;
	int64_t *offset;	/* bytes, aligned to 64 */
	int64_t *bytes;		/* size rounded up to 64 */
	int64_t arena_bytes;	/* peak: the arena size */
	int64_t total_bytes;	/* without reuse: sum of "bytes" */
} ts_memory_plan;

/* Plan the buffers of "p" (largest first, each at the lowest offset that
 * no buffer live at the same time overlaps). */
__ts_gc ts_memory_plan *ts_memory_plan_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p);
/* Whether two buffers live at the same time overlap in "mp" (false for a
 * correct plan); the first such pair goes to "*b1" and "*b2" (either may
 * be NULL). */
bool ts_memory_plan_has_conflict(__ts_keep const ts_memory_plan *mp,
	__ts_keep __ts_null int *b1, __ts_keep __ts_null int *b2);

/* A compiled network. */
typedef struct ts_network ts_network;

/* How to compile a network. */
typedef struct ts_network_options {
	int threads;		/* threads of parallel loops; 0: default */
	int opt_level;		/* LLVM optimisation level (3) */
	bool naive;		/* naive schedules instead of static ones */
	bool layout;		/* choose layouts by timing
				 * (ts_network_choose_layouts) rather than
				 * with the model (the default) */
	bool declared_layouts;	/* without "layout": the layouts as
				 * declared, no choice */
	bool keep_weights;	/* without "layout": the layouts and
				 * weights as declared rather than blocked
				 * (ts_partition_block_weights) */
	int topk;		/* > 1: compile and time the "topk" best
				 * static configurations of each task and
				 * keep the fastest (hardware-guided) */
	const ts_target *target;	/* the CPU the code is compiled for
				 * (ts_compile_options_for); NULL: this
				 * machine */
	const char *records;	/* a records log, or NULL: in
				 * ts_network_compile, its layout record of
				 * the network and each task's best record
				 * where it beats the static schedule
				 * (ts_partition_schedules), as tessel run
				 * --records */
} ts_network_options;

ts_network_options ts_network_options_default(void);

/* Compile one module per task of "p" under "schedules" (one per task;
 * NULL, or a NULL entry: the naive schedule) with "opt" (NULL: defaults)
 * and plan the memory; release the network with ts_network_free.  NULL
 * with an error naming the task on failure.
 * Requires: a partition and schedules.  Produces: a runnable network. */
__ts_give ts_network *ts_network_build(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p,
	__ts_keep __ts_null ts_schedule *const *schedules,
	__ts_keep __ts_null const ts_network_options *opt);
/* Partition "dag", lay it out (ts_network_lay_out: opt->records'
 * layout record, else a timed choice with opt->layout, else weights
 * blocked), schedule each task (opt->records' best record where it beats
 * the static schedule, else statically) for "target" (with
 * target->cpu.cores set to opt->threads when that is set; "opt" NULL: the
 * defaults) and build the network (networks/partition.c: the driver above
 * the executor).  NULL with an error when the records cannot be read or
 * replayed. */
__ts_give ts_network *ts_network_compile(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	__ts_keep __ts_null const ts_network_options *opt);
/* The static schedule of each task of "p" for "target" (NULL entries
 * where static filling failed, with a warning naming the task).  With
 * "topk" > 1, the "topk" best configurations of the model are compiled
 * with "threads" threads and timed on seeded inputs, and the fastest one
 * is kept. */
__ts_gc ts_schedule **ts_partition_static_schedules(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	int topk, int threads);
/* Whether "p" is a network rather than one operator: at least two of
 * its subgraphs are layers, each reading a network input of two or more
 * dimensions that no other subgraph reads (its own weights), or it has
 * TS_NETWORK_MIN_SUBGRAPHS subgraphs or more (a recurrent layer unrolled
 * over time reads the same weights at every step).  A softmax or a
 * layer norm, whose few subgraphs all read the same input, is one
 * operator. */
#define TS_NETWORK_MIN_SUBGRAPHS 32
bool ts_partition_is_network(__ts_keep const ts_partition *p);
struct ts_record;
/* The schedule of each task of "p" replayed from the best valid record
 * of the log "log" for its workload on "target" (NULL entries where the
 * log has none); "used"[t] (when "used" is not NULL) receives that
 * record or NULL.  NULL with an error naming the log when it cannot be
 * read, or the task whose record does not replay. */
__ts_gc ts_schedule **ts_partition_record_schedules(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	__ts_keep const char *log,
	__ts_keep __ts_null const struct ts_record **used);
__ts_gc const ts_partition *ts_network_partition(
	__ts_keep const ts_network *net);
__ts_gc const ts_memory_plan *ts_network_memory(
	__ts_keep const ts_network *net);
/* The schedule task "task" of "net" runs (naive where it was given none;
 * ts_schedule_hash names it), or NULL for no such task. */
__ts_gc __ts_null const ts_schedule *ts_network_task_schedule(
	__ts_keep const ts_network *net, int task);
/* Where ts_partition_schedules says, a line at a time, which schedule
 * each task takes and why ("data" is passed back). */
typedef void (*ts_network_say_fn)(__ts_keep __ts_null void *data,
	__ts_keep const char *line);
/* The schedule of each task of "p" for "target" run with "threads"
 * threads (0: its cores): the best valid record of the log "log" for its
 * workload on "target" with "threads" cores, where that runs at least
 * TS_TUNE_MARGIN faster than its static schedule timed alongside it
 * (ts_record_beats_static), else the static schedule ("topk" as in
 * ts_partition_static_schedules; NULL entries run naively).  With "log"
 * NULL, the static schedules.  "say" receives a line per task of a log,
 * and a summary.  The one choice that tessel run, tasks, build and the
 * benchmark programs make.  NULL with an error naming the log when it
 * cannot be read, or the task whose record does not replay. */
__ts_gc ts_schedule **ts_partition_schedules(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	__ts_keep __ts_null const char *log, int topk, int threads,
	__ts_keep __ts_null ts_network_say_fn say,
	__ts_keep __ts_null void *data);
/* Replace the schedule of task "task" by "sch" and recompile it. */
ts_status ts_network_set_schedule(__ts_keep ts_network *net, int task,
	__ts_keep const ts_schedule *sch);
/* Run the network: "inputs" follow dag->inputs; "outputs" receives one
 * new array per dag->outputs (or reuses the arrays already there when
 * they are non-NULL).  Weights the layout pass keeps in a layout of its
 * own are converted at the first run and again when another array is
 * passed for them; after changing a weight's contents in place, call
 * ts_network_weights_changed. */
ts_status ts_network_run(__ts_keep ts_network *net,
	__ts_keep ts_array *const *inputs, __ts_keep ts_array **outputs);
/* Convert the weights again at the next run. */
void ts_network_weights_changed(__ts_keep ts_network *net);
/* Time whole runs of the network (as ts_module_time). */
ts_status ts_network_time(__ts_keep ts_network *net,
	__ts_keep ts_array *const *inputs, double min_total_s,
	__ts_keep ts_timing *out);
/* Time one occurrence of task "task" alone on arrays of its shapes. */
ts_status ts_network_time_task(__ts_keep ts_network *net, int task,
	double min_total_s, __ts_keep ts_timing *out);
/* Release the modules of "net" (done with its context otherwise). */
void ts_network_free(__ts_take __ts_null ts_network *net);
/* The lowered function of task "task" (NULL when out of range). */
__ts_gc __ts_null const ts_func *ts_network_task_func(
	__ts_keep const ts_network *net, int task);
/* C source of the whole network as one function
 *
 *	int "name"(const void *const *inputs, void *const *outputs)
 *
 * calling "symbols"[t]_packed (the AOT entry of task t) subgraph by
 * subgraph over an arena of the calling thread, allocated at its first
 * call (returns -1 when that fails, else 0) and kept: weights converted
 * into Tessel's layout stay converted between calls and are converted
 * again when a weight comes at another address.  "name"_release() frees
 * the calling thread's arena (the next call converts again).  Inputs
 * and outputs follow the network's DAG. */
__ts_gc char *ts_network_driver_source(__ts_keep const ts_network *net,
	__ts_keep const char *name, __ts_keep const char *const *symbols);
/* Ahead of time: build every task with ts_build_aot into "dir" and link
 * them with the driver into "dir"/lib"name".so, with a header
 * "dir"/"name".h; the host's architecture only. */
ts_status ts_network_build_aot(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_network *net, __ts_keep const char *dir,
	__ts_keep const char *name);

/* The task scheduler (networks/taskscheduler.c): shares "rounds" tuning
 * rounds of "trials" measurements among the tasks of a partition.  A
 * round robin first gives every task one round; then each round goes to
 * the task with the largest expected gain: weight x the larger of its
 * recent drop per round and the drop it would see if it reached the
 * flops rate of the fastest task of its class.  Tasks still without a
 * valid schedule after their first round are marked dead and skipped.
 *
 * "fn"("data", task, trials, &best) tunes "task" for "trials" more
 * measurements and writes its best time so far in seconds (INFINITY when
 * no candidate was valid); with the tuner of <tessel/tune.h> it runs one
 * ts_tuner per task.  "progress" (may be NULL) sees, after each round,
 * the round number, the task and the estimated network latency (the
 * weighted sum of the tasks' best times). */
typedef ts_status (*ts_task_tune_fn)(void *data, int task, int trials,
	double *best_s);
typedef void (*ts_task_progress_fn)(void *data, int round, int task,
	double latency_s);

typedef struct ts_task_schedule {
	int nrounds;		/* rounds run */
	int *order;		/* task of each round */
	double *latency;	/* estimated network latency after each */
	int *rounds_of;		/* rounds per task */
	double *best;		/* best time per task (INFINITY: none) */
	bool *dead;		/* per task: no valid schedule */
	bool *once;		/* per task: runs once (a weight's
				 * conversion), so it is not tuned */
	/* The estimated latency with every task at its static schedule,
	 * as measured in its first round (ts_partition_tune; NAN when a
	 * task has no such time, and from ts_task_schedule_run alone). */
	double static_latency;
	/* Rounds before every task that is tuned has had one: the
	 * latencies of those rounds leave the others out. */
	int warmup;
	double *elapsed;	/* wall-clock seconds at the end of each
				 * round, from the start */
	bool *retired;		/* per task: its expected gain fell below
				 * the limit (ts_task_schedule_limits) */
	/* Where the wall clock went (ts_partition_tune; 0 otherwise):
	 * preparing each task's tuner (reference outputs, static choice,
	 * records) and the phases of its runs, summed over the tasks
	 * (ts_tune_phases of <tessel/tune.h>). */
	double setup_s, search_s, measure_s, verify_s;
	int verify_runs;
} ts_task_schedule;

/* When the task scheduler stops before its rounds are spent: after
 * "budget_s" seconds of wall clock (0: no limit; a round started runs to
 * its end), and when every task is retired: a task whose expected gain
 * of a round is below "min_gain" times the estimated network latency
 * gets no more rounds (0: none is retired). */
typedef struct ts_task_schedule_limits {
	double budget_s;
	double min_gain;
} ts_task_schedule_limits;

/* Whether every occurrence of task "t" of "p" runs once (the conversion
 * of a weight): its time is not part of a run's latency. */
bool ts_partition_task_runs_once(__ts_keep const ts_partition *p, int t);

__ts_gc ts_task_schedule *ts_task_schedule_run(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, int rounds, int trials,
	__ts_keep ts_task_tune_fn fn, __ts_keep __ts_null void *data,
	__ts_keep __ts_null ts_task_progress_fn progress,
	__ts_keep __ts_null void *pdata);
/* ts_task_schedule_run within "limits" (NULL: none). */
__ts_gc ts_task_schedule *ts_task_schedule_run_limited(
	__ts_keep ts_ctx *ctx, __ts_keep const ts_partition *p, int rounds,
	int trials, __ts_keep __ts_null const ts_task_schedule_limits *limits,
	__ts_keep ts_task_tune_fn fn, __ts_keep __ts_null void *data,
	__ts_keep __ts_null ts_task_progress_fn progress,
	__ts_keep __ts_null void *pdata);

struct ts_tune_options;
/* Tune the tasks of "p" on this CPU for "rounds" rounds of opt->trials
 * measurements each ("opt" NULL: the defaults of <tessel/tune.h>),
 * shared by ts_task_schedule_run_limited within opt->budget_s seconds,
 * a task retired when a round is expected to gain less than 0.1% of the
 * network's latency: one ts_tuner (<tessel/tune.h>) per task, made at its
 * first round (resumed from opt->log when one is given) and extended by
 * each later round, so that what it learned carries over.  Return
 * the best schedule per task (NULL entries: none valid) and the rounds in
 * "*out" (may be NULL); NULL with an error naming the task. */
__ts_gc ts_schedule **ts_partition_tune(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	int rounds, __ts_keep __ts_null const struct ts_tune_options *opt,
	__ts_keep __ts_null ts_task_progress_fn progress,
	__ts_keep __ts_null void *pdata,
	__ts_keep __ts_null ts_task_schedule **out);

/* Graph-level layout choice, as an abstract problem: node n has
 * "ncands"[n] candidate layouts, candidate c costing cost[n][c] (its
 * best kernel time); an edge (u, v) costs trans[e][cu * ncands[v] + cv]
 * when u takes layout cu and v takes cv (the transformation between
 * them, 0 when the layouts agree).  Nodes are in topological order
 * (every edge has u < v).  Candidate 0 of each node is its default. */
typedef struct ts_layout_problem {
	int nnodes;
	int *ncands;
	double **cost;
	const char ***names;	/* names[n][c], may be NULL */
	int nedges;
	int *eu, *ev;
	double **trans;
} ts_layout_problem;

typedef struct ts_layout_solution {
	int *choice;		/* candidate per node */
	double total;		/* its cost */
	double default_total;	/* every node at candidate 0 */
	bool exact;		/* from the DP, not the approximate solver */
	int64_t states;		/* largest DP frontier visited */
} ts_layout_solution;

__ts_gc ts_layout_problem *ts_layout_problem_new(__ts_keep ts_ctx *ctx,
	int nnodes, __ts_keep const int *ncands);
/* Add the edge "u" -> "v"; return its index (-1 with an error). */
int ts_layout_problem_add_edge(__ts_keep ts_layout_problem *lp,
	__ts_keep ts_ctx *ctx, int u, int v);
/* The cost of "choice" in "lp". */
double ts_layout_cost(__ts_keep const ts_layout_problem *lp,
	__ts_keep const int *choice);
/* Exact DP over the topological order, the state being the layouts of
 * the nodes whose consumers are not all decided yet; falls back to the
 * approximate solver when a frontier exceeds "max_states". */
__ts_gc ts_layout_solution *ts_layout_solve(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_layout_problem *lp, int64_t max_states);
/* Greedy in topological order, then local improvement (one node at a
 * time) until no change helps; never worse than the defaults. */
__ts_gc ts_layout_solution *ts_layout_solve_approx(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_layout_problem *lp);
/* Exhaustive search (for testing small problems). */
__ts_gc ts_layout_solution *ts_layout_solve_exhaustive(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_layout_problem *lp);

/* The layout pass on a partition: each subgraph is a node whose
 * candidates are the layouts of the 4-D activations it reads and writes
 * (NCHW, NHWC, and NCHW[x]c with x the target's f32 lanes when the
 * channels divide), each expressed as a rewritten declaration (a view
 * stage reads a relaid input, a layout stage stores the output) and timed
 * under its static schedule with the JIT, and again with its weights
 * (inputs declared "weight") blocked along a dimension they own, keeping
 * the faster; an edge costs the time of the transformation stage between
 * two different layouts (a weight's conversion runs once and costs
 * nothing per run).  The DP picks the
 * combination (the approximate solver beyond "max_states"), and the
 * result is a new partition with relaid tasks and the transformations
 * inserted as subgraphs of their own. */
typedef struct ts_layout_plan {
	ts_layout_problem *problem;	/* nodes: the subgraphs, in order */
	ts_layout_solution *solution;	/* total and all-default total */
	ts_partition *partition;	/* the network with layouts applied */
	int ntransforms;	/* transformation subgraphs inserted */
	bool *weights;		/* [g]: the chosen layout of node g blocks
				 * its weights */
} ts_layout_plan;

__ts_gc ts_layout_plan *ts_network_choose_layouts(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	int threads, int64_t max_states);
/* The same plan with no measurement: each cost is the static model's
 * estimate of the DAG's best configuration for "threads" threads, and
 * each layout takes its weights blocked wherever they can be (the model
 * rated BERT's products on declared weights as fast, and they were
 * slower).  Each candidate DAG is statically filled: for ResNet-18, 24 s
 * against 10 s for its static compile, on an AMD Zen 3, where its
 * layouts ran 1.00x to 1.07x faster than the declared ones. */
__ts_gc ts_layout_plan *ts_network_estimate_layouts(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	int threads, int64_t max_states);
/* The partition "p" with every weight that can be blocked blocked, its
 * activations as declared: the static rule, with no measurement (a
 * conversion that runs once costs nothing per run, and gives the
 * kernel vectors along a dimension the weight owns).  "*nblocked" (may
 * be NULL) receives the number of conversions. */
__ts_gc ts_partition *ts_partition_block_weights(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	__ts_keep __ts_null int *nblocked);
/* The number of layouts subgraph "g" of "p" may take on "target":
 * 1 (NCHW), 2 (and NHWC) or 3 (and NCHW[x]c). */
int ts_network_layout_count(__ts_keep const ts_partition *p,
	__ts_keep const ts_target *target, int g);
/* The partition "p" with layout "choice"[g] (0 NCHW, 1 NHWC, 2 NCHW[x]c)
 * for each subgraph, and its weights blocked where "weights"[g] (may be
 * NULL: none) and a weight has a dimension to block: relaid tasks,
 * transformations inserted where neighbours differ and for each blocked
 * weight (a subgraph that runs once), counted in "*ntransforms" (may be
 * NULL).  NULL with an error naming the subgraph for a layout it cannot
 * take. */
__ts_gc ts_partition *ts_network_apply_layouts(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_partition *p, __ts_keep const ts_target *target,
	__ts_keep const int *choice, __ts_keep __ts_null const bool *weights,
	__ts_keep __ts_null int *ntransforms);

/* How ts_network_lay_out decides the layouts of a network.  Zeroed, it
 * asks for the model's choice (the default of every entry point). */
typedef struct ts_layout_options {
	int threads;		/* of the choice; 0: the target's */
	bool choose;		/* time the choice (ts_network_choose_layouts)
				 * when "records" holds no layout of this
				 * network for this target */
	bool keep_weights;	/* neither replayed nor chosen: the layouts
				 * and weights as declared */
	const char *records;	/* a records log, or NULL: its layout
				 * record of the network on the target is
				 * replayed, and a timed choice appended */
	bool estimate;		/* with "choose": rate the choice with the
				 * model instead of timing it (as without
				 * "choose") */
	bool declared;		/* neither replayed nor chosen: the layouts
				 * as declared, weights blocked (the static
				 * rule) unless "keep_weights" */
} ts_layout_options;

/* The partition "p" of the network "dag" on "target" laid out as "o"
 * says: the layouts of the newest layout record of o->records whose
 * workload is ts_dag_hash("dag") and whose target is ts_target_key
 * ("target"), replayed without timing; else, with o->choose, the timed
 * choice, appended to o->records as a layout record (doc/records.md);
 * else, with o->declared or o->keep_weights, the layouts as declared
 * and the weights blocked (ts_partition_block_weights) unless
 * o->keep_weights; else the model's choice
 * (ts_network_estimate_layouts: nothing timed, nothing recorded, the
 * same for the same program, target and threads).  "*how" (may be NULL)
 * receives a phrase saying where the layouts come from, and "*plan" (may
 * be NULL) the plan of a choice made now (NULL otherwise).  NULL with an
 * error naming the log and line when a layout record does not fit this
 * partition, or when the log cannot be read or written. */
__ts_gc ts_partition *ts_network_lay_out(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_partition *p,
	__ts_keep const ts_target *target,
	__ts_keep const ts_layout_options *o,
	__ts_keep __ts_null const char **how,
	__ts_keep __ts_null ts_layout_plan **plan);

#ifdef __cplusplus
}
#endif

#endif
