/* The verbs of the tessel command line, one file each (tools/cmd_*.c).
 * Each returns the process exit code: 0 success, 1 the job failed, 2 bad
 * usage or bad input. */
#ifndef TESSEL_TOOLS_COMMANDS_H
#define TESSEL_TOOLS_COMMANDS_H

#include <stdio.h>

#include <tessel/tessel.h>
#include <tessel/target.h>

enum { TS_EXIT_OK = 0, TS_EXIT_FAIL = 1, TS_EXIT_USAGE = 2 };

struct ts_command {
	const char *name;
	const char *summary;	/* one line for tessel --help */
	int (*run)(int argc, char **argv);	/* argv[0] is the verb */
};

/* Print the context's error (and warnings) to stderr as "tessel: ...". */
void ts_tool_report(ts_ctx *ctx);
/* Print the warnings of "ctx", if any, and clear them. */
void ts_tool_warnings(ts_ctx *ctx);
int ts_cmd_hw(int argc, char **argv);
int ts_cmd_eval(int argc, char **argv);
int ts_cmd_run(int argc, char **argv);
int ts_cmd_build(int argc, char **argv);
/* Lower "dag" under "schedule" ("naive", NULL, "static": the static
 * baseline for "target" (NULL: the host) run with "threads" threads (0:
 * all), or a JSON file); "*used" (when not NULL) receives the schedule. */
ts_func *ts_tool_lower(ts_ctx *ctx, const ts_dag *dag, const char *schedule,
	const ts_target *target, int threads, const ts_schedule **used);
/* The contents of the file "path" (GC-allocated), or NULL with an error
 * in "ctx". */
char *ts_tool_read_text(ts_ctx *ctx, const char *path);
int ts_cmd_analyze(int argc, char **argv);
int ts_cmd_tune(int argc, char **argv);
int ts_cmd_measure_worker(int argc, char **argv);
/* Lower "dag" under the schedule ts_records_choose takes from "log" for
 * the host with "threads" cores (said on stderr, with why); "*used"
 * (when not NULL) receives the schedule. */
ts_func *ts_tool_lower_records(ts_ctx *ctx, const ts_dag *dag,
	const char *log, int threads, const char *verb,
	const ts_schedule **used);
int ts_cmd_tasks(int argc, char **argv);
/* Arrays in .npy files (tools/tool_npy.c); messages go to stderr as
 * "tessel VERB: ...".  The inputs of "dag" read from DIR/<name>.npy, each
 * checked against the declared dtype and shape, or NULL after saying
 * which file is missing or does not fit. */
ts_array **ts_tool_read_inputs(ts_ctx *ctx, const ts_dag *dag,
	const char *dir, const char *verb);
/* Write "a" as DIR/<name>.npy. */
ts_status ts_tool_write_array(ts_ctx *ctx, const char *dir, const char *name,
	const ts_array *a, const char *verb);
/* Create the folder "dir", given as option "opt" of command "verb",
 * unless it exists. */
ts_status ts_tool_make_dir(const char *dir, const char *verb,
	const char *opt);
/* Print "dtype[shape]" of "a" to "out". */
void ts_tool_print_type(FILE *out, const ts_array *a);
/* Programs (tools/tool_source.c): a .tsl file, or an .onnx model imported
 * with the --shape settings of the command line (ts_tool_add_shape, called
 * by the option parser for every verb).  ts_tool_model is the model "dag"
 * was imported from, or NULL; inputs of such a dag that are the model's
 * weights take the model's arrays, in random inputs and in --inputs
 * folders that lack them. */
bool ts_tool_add_shape(const char *v);
bool ts_tool_is_onnx(const char *file);
ts_dag *ts_tool_load(ts_ctx *ctx, const char *file);
const ts_onnx_model *ts_tool_model(const ts_dag *dag);
ts_array **ts_tool_random_inputs(ts_ctx *ctx, const ts_dag *dag,
	uint64_t seed);
const ts_array *ts_tool_weight(const ts_dag *dag, const char *name);
/* The name in the ONNX model of "dag" of its graph input called "name"
 * in the program ("input" for "input_1", which the program renames),
 * or NULL when "dag" is no model's or "name" no graph input of it. */
const char *ts_tool_onnx_input_name(const ts_dag *dag, const char *name);
int ts_cmd_import(int argc, char **argv);
struct ts_tune_options;
/* Tune "dag" as a network when it has several subgraphs (tools/cmd_tasks.c):
 * its layouts first, with "layout", from opt->log's layout record or
 * chosen by timing and appended there; then the task scheduler shares
 * opt->trials in rounds of opt->batch.  Return the exit code, or -1 when
 * "dag" is a single subgraph. */
int ts_tool_tune_network(ts_ctx *ctx, const ts_dag *dag, ts_target *target,
	const struct ts_tune_options *opt, bool quiet, bool layout);
/* "path" without its extension, followed by "ext" (GC-allocated): where
 * tessel tune writes the curves of the log "path". */
char *ts_tool_replace_ext(const char *path, const char *ext);
int ts_cmd_schedule(int argc, char **argv);
/* The target named "name": "host", a shipped name, or a JSON file. */
ts_target *ts_tool_target(ts_ctx *ctx, const char *name);
/* CUDA (tools/cuda_tool.c): "cuda" (the device, else h100), "cuda:NAME"
 * or "cuda:FILE.json"; schedule, build and run for such a GPU target. */
bool ts_tool_is_cuda_target(const char *name);
ts_target *ts_tool_cuda_target(ts_ctx *ctx, const char *name);
int ts_tool_cuda_schedule(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	bool show_code);
int ts_tool_cuda_build(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	const char *dir, bool fast_math);
int ts_tool_cuda_run(ts_ctx *ctx, const ts_dag *dag, const ts_target *tg,
	int runs, uint64_t seed);

#endif
