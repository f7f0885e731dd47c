/* Whole networks on the command line (tools/cmd_tasks.c): what tessel
 * tasks, run, build and tune share to partition a network, pick each
 * task's schedule (best record, else static) and compile it. */
#ifndef TESSEL_TOOLS_NETWORK_TOOL_H
#define TESSEL_TOOLS_NETWORK_TOOL_H

#include <stdio.h>

#include <tessel/network.h>

/* How a verb compiles a network. */
struct ts_tool_network_opts {
	const char *verb;	/* names the verb in messages: "run" */
	const char *records;	/* a records log, or NULL: static */
	int threads;		/* cores the schedules are for; 0: all */
	int topk;		/* > 1: the fastest of the model's top-k */
	bool naive;		/* naive schedules */
	bool layout;		/* choose layouts by timing where the
				 * records hold none (ts_network_lay_out) */
	bool layout_model;	/* choose them with the model (the
				 * default) */
	bool declared;		/* keep the layouts as declared, weights
				 * blocked */
};

/* The partition of "dag" for "tg" when "dag" is a network (at least two
 * subgraphs that read weights of their own, or any partition of several
 * subgraphs with "force"), else NULL with no error.  Its layouts: those
 * of o->records' layout record for the network, else chosen by timing
 * with o->layout (and appended to o->records), else as declared with
 * weights blocked with o->declared or o->naive, else chosen by the
 * model; said on stderr as "tessel VERB: layouts ..." unless declared
 * ("o" NULL: as declared, weights blocked).  NULL with the error reported
 * and "*code" (may be NULL) set when the layouts fail. */
ts_partition *ts_tool_network_partition(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *tg, bool force, const struct ts_tool_network_opts *o,
	int *code);
/* "tg" with "threads" cores when positive (a copy that lives with the
 * process); the static schedules then parallelise for that many. */
ts_target *ts_tool_target_threads(const ts_target *tg, int threads);
/* The schedule of each task of "p": the best record of o->records for
 * the host "tg" with o->threads cores where the log has one, else the
 * static schedule for "tg", each choice said on stderr as "tessel VERB:
 * task T (anchor A): ...".  NULL with an error in "ctx". */
ts_schedule **ts_tool_network_schedules(ts_ctx *ctx, const ts_partition *p,
	const ts_target *tg, const struct ts_tool_network_opts *o);
/* Compile the network "p" as "o" asks; NULL with the error reported on
 * stderr and the exit code in "*code" (2: the records cannot be read or
 * replayed, 1: a task does not compile). */
ts_network *ts_tool_network_compile(ts_ctx *ctx, const ts_partition *p,
	const ts_target *tg, const struct ts_tool_network_opts *o,
	int *code);
/* Print "schedules:" and the schedule hash of each task of "net", the
 * line by which tessel run, tasks and build can be compared. */
void ts_tool_print_schedules(FILE *out, const ts_network *net);
/* The C name of the library of the network file "file": its base name
 * without extension, other characters as '_' (GC-allocated). */
char *ts_tool_network_name(const char *file);
/* Compare the outputs "got" of "dag" on "in" with the interpreter,
 * printing "check NAME: ok|MISMATCH (max abs error E)" per output;
 * "*max_err" (may be NULL) receives the largest error.  Return the exit
 * code. */
int ts_tool_network_check(ts_ctx *ctx, const ts_dag *dag, ts_array **in,
	ts_array **got, double *max_err, bool quiet);

#endif
