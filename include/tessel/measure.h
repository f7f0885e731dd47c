/* Tessel: measuring candidate schedules, isolated from the caller.
 *
 * A measurer holds one DAG, its inputs (from a seed) and its reference
 * outputs, computed once by the interpreter.  Each candidate schedule is
 * lowered, compiled, run, compared with the reference and timed in a
 * separate process: a candidate that crashes, hangs, is too slow to build
 * or computes wrong values comes back with an error code, and the caller
 * goes on with the next one.
 *
 * Processes.  The caller may hold OpenMP threads (a cost model trains in
 * parallel) and collector threads, and a forked copy of such a process
 * cannot safely start OpenMP again.  So the measurer starts a fresh
 * worker program (the hidden verb "tessel measure-worker"), which reads
 * the DAG, the inputs and the reference from a private temporary folder
 * and never runs generated code itself: for every candidate it forks a
 * child that does the work, so a candidate sees the same pristine inputs
 * and can corrupt nothing but itself.  The caller enforces the build and
 * run timeouts and kills the child when one passes; a worker that dies is
 * started again.  A caller that exits or is killed without
 * ts_measurer_free leaves nothing behind: its worker sees the socket
 * close, kills its child and removes the folder.  The worker program is found in $TS_MEASURE_WORKER, or
 * is the running program when that is the tessel tool, or tools/tessel of
 * the build tree, or "tessel" on the PATH.
 */
#ifndef TESSEL_MEASURE_H
#define TESSEL_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include <tessel/dsl.h>
#include <tessel/schedule.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What went wrong with a candidate. */
typedef enum ts_error_code {
	TS_ERR_NONE,
	TS_ERR_INVALID_SCHEDULE,	/* the schedule does not check or lower */
	TS_ERR_COMPILE,		/* the backend failed or crashed building */
	TS_ERR_RUNTIME,		/* the kernel failed or crashed running */
	TS_ERR_WRONG_ANSWER,	/* outputs differ from the reference */
	TS_ERR_BUILD_TIMEOUT,	/* lowering and compiling took too long */
	TS_ERR_RUN_TIMEOUT,	/* checking and timing took too long */
	TS_ERR_COUNT
} ts_error_code;

/* The name of "code", a static string: "none", "invalid_schedule",
 * "compile_error", "runtime_error", "wrong_answer", "build_timeout",
 * "run_timeout". */
__ts_keep const char *ts_error_code_name(ts_error_code code);
/* Parse one of those names; return TS_ERROR (no message) when unknown. */
ts_status ts_error_code_from_name(__ts_keep const char *name,
	__ts_keep ts_error_code *out);

/* How to measure.  Start from ts_measure_options_default(). */
typedef struct ts_measure_options {
	double build_timeout_s;	/* lowering and compiling (20) */
	double run_timeout_s;	/* one run: the check run, or one timed
				 * sample (10) */
	double min_repeat_s;	/* timed runs add up to this at least (0.1) */
	bool flush_cache;	/* read a buffer larger than the last-level
				 * cache before every timed run, which then
				 * is a single run (false) */
	int threads;		/* threads of parallel loops, the same for
				 * every candidate (1) */
	bool pipeline;		/* in a batch, build the next candidate
				 * while one is timed, where the machine
				 * has more cores than "threads" (true) */
	double eval_limit;	/* innermost iterations the interpreter may
				 * compute for the reference; above it the
				 * naive schedule compiled computes it
				 * (0: 2e9) */
	const char *cpu;	/* LLVM cpu and features candidates are */
	const char *features;	/* compiled for (NULL: this machine's) */
	/* Measure on the other ranks of this MPI job (ts_cluster_join);
	 * NULL: on this machine. */
	struct ts_cluster *cluster;
} ts_measure_options;

ts_measure_options ts_measure_options_default(void);
/* Compile the candidates for the CPU target "t" (its LLVM cpu and
 * features: an AVX-512 machine measures an AVX2 target's code); NULL or
 * a GPU: this machine. */
void ts_measure_options_target(__ts_keep ts_measure_options *o,
	__ts_keep __ts_null const ts_target *t);

/* The outcome of one candidate. */
typedef struct ts_measure_result {
	ts_error_code error;
	double median_s;	/* median of samples; 0 unless error NONE */
	int nsamples;
	double *samples;	/* seconds per run, in order (GC-allocated) */
	double max_abs_err;	/* vs the reference; NAN when not compared */
	const char *message;	/* what went wrong, or NULL */
	double build_s;		/* lowering and compiling, 0 if unknown */
} ts_measure_result;

typedef struct ts_measurer ts_measurer;

/* Prepare measuring candidates of "dag" with "opt" (NULL: defaults):
 * inputs from "seed", reference outputs computed once by ts_eval (for a
 * DAG too large for the interpreter, see eval_limit, by the naive
 * schedule compiled, with a warning), and a worker process.  Return NULL
 * with a message in "ctx" on failure. */
__ts_give ts_measurer *ts_measurer_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag,
	__ts_keep __ts_null const ts_measure_options *opt, uint64_t seed);
/* Stop the worker and remove the temporary files of "m".  Done by
 * ts_ctx_free too; calling it twice is harmless. */
void ts_measurer_free(__ts_take __ts_null ts_measurer *m);

/* Measure the schedule "sch" of the measurer's DAG into "out": lower,
 * compile, run, compare, time, isolated from the caller.  The
 * candidate's failure is out->error, not a failure of this call: it
 * returns TS_ERROR only when the measurer itself cannot work (no worker
 * program), with a message in the context. */
ts_status ts_measure(__ts_keep ts_measurer *m, __ts_keep const ts_schedule *sch,
	__ts_keep ts_measure_result *out);
/* Measure the "n" schedules "sch" into "out"[0..n) with one worker. */
ts_status ts_measure_batch(__ts_keep ts_measurer *m, int n,
	__ts_keep const ts_schedule *const *sch,
	__ts_keep ts_measure_result *out);

/* Candidates measured and workers started so far (a new worker after
 * each one that died). */
int ts_measurer_count(__ts_keep const ts_measurer *m);
int ts_measurer_workers_started(__ts_keep const ts_measurer *m);
/* Candidates that were built while the one before them was timed
 * (ts_measure_options.pipeline). */
int ts_measurer_built_ahead(__ts_keep const ts_measurer *m);

/* For tests only: make the child of every later candidate misbehave.
 * "fault" is "crash" (SIGSEGV while running), "abort" (abort() while
 * building), "hang" (never returns from running), "slow-build" (sleeps
 * while building), "corrupt" (changes one output value), "kill-worker"
 * (kills the worker process while running), or NULL for none.  The
 * environment variable TS_MEASURE_FAULT sets the same at ts_measurer_new.
 * Returns TS_ERROR with a message for an unknown fault. */
ts_status ts_measurer_set_fault(__ts_keep ts_measurer *m,
	__ts_keep __ts_null const char *fault);

/* Measuring on the ranks of an MPI job (Tessel configured with MPI).
 *
 * Under mpirun, rank 0 searches and keeps the records; every other rank
 * is a measuring machine: it rebuilds each DAG rank 0 sends it (from its
 * .tsl text, inputs from the same seed, its own reference outputs) and
 * measures the schedules it is given with a measurer of its own, which
 * isolates and times out candidates as on one machine.  A measurer made
 * with ts_measure_options.cluster set sends its candidates to the ranks,
 * one candidate a rank at a time, a batch spread over all of them.
 *
 * Every wait has a deadline, and MPI errors return instead of aborting:
 * a rank that dies, stops answering within the candidate's deadline or
 * fails to rebuild a DAG is left out, its candidate goes to another rank,
 * and when no rank is left rank 0 measures the rest itself.  Open MPI's
 * launcher ends the whole job when a rank dies unless it runs with
 * --enable-recovery.  A rank whose target key (ts_target_key of the
 * target it would tune for) differs from rank 0's is refused: its times
 * would be another machine's.
 *
 * TS_MPI_TIMEOUT (seconds) replaces the deadline of one candidate
 * (default: build and run timeouts and a margin); TS_MPI_IDLE_TIMEOUT
 * (default 1800) is how long a measuring rank waits for rank 0 before it
 * leaves.  For tests, TS_MPI_FAULT="RANK:KIND:K" makes rank RANK, after
 * K measurements, exit without a word (KIND "exit") or stop answering
 * until its idle timeout passes (KIND "hang"). */
typedef struct ts_cluster ts_cluster;

/* Join the MPI job this process was started in; "*rank" receives this
 * process's rank.  Return the cluster of a job of two ranks or more,
 * NULL without an error when there is no job (not started by mpirun, or
 * one rank: measure here), or NULL with a message in "ctx" (a job, but
 * Tessel was built without MPI).  A rank leaves the core binding of the
 * launcher (mpirun binds a rank to a core by default): its kernels get
 * the threads they get without mpirun, and it describes its machine as
 * a plain run does, so that its records serve later runs. */
__ts_give __ts_null ts_cluster *ts_cluster_join(__ts_keep ts_ctx *ctx,
	__ts_keep int *rank);
/* Introduce the ranks of "cl" with the target key "key" (ts_target_key
 * of the target each would tune for): rank 0 waits for every other rank
 * and refuses, with a warning in the context, those of another key. */
void ts_cluster_meet(__ts_keep ts_cluster *cl, __ts_keep const char *key);
/* On a rank other than 0: measure what rank 0 sends until it says stop,
 * then leave the job.  Returns the exit code: 0 (also when rank 0
 * refused this rank: a warning in the context says why), or 1 when rank
 * 0 was lost (message in the context). */
int ts_cluster_serve(__ts_keep ts_cluster *cl);
/* Ranks of the job, ranks measuring (not refused nor lost), and ranks
 * lost during the run. */
int ts_cluster_size(__ts_keep const ts_cluster *cl);
int ts_cluster_workers(__ts_keep const ts_cluster *cl);
int ts_cluster_lost(__ts_keep const ts_cluster *cl);
/* On rank 0: tell every rank to stop and leave the job.  Done by
 * ts_ctx_free too; calling it twice is harmless. */
void ts_cluster_free(__ts_take __ts_null ts_cluster *cl);

/* The worker program's entry point, for "tessel measure-worker": serve
 * requests on standard input and output for the files in "dir", or,
 * with "reference" true, write the reference outputs computed by the
 * naive schedule and exit.  Returns the exit code. */
int ts_measure_worker_main(__ts_keep const char *dir, bool reference);

#ifdef __cplusplus
}
#endif

#endif
