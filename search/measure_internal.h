/* The protocol between a measurer (search/measure.c) and its worker
 * process (search/measure_worker.c).  Not installed.
 *
 * The measurer writes the DAG as .tsl text, the inputs and the reference
 * outputs as .npy files, and the options into a private folder, then
 * talks to the worker over one socket, one line per message:
 *
 *	measurer -> worker	"measure <fault> <n>\n" and n bytes of
 *				schedule JSON
 *	worker -> measurer	"ready <protocol> <dag hash>"	once
 *				"start <pid> <ahead>"	a child has the
				candidate's turn; ahead 1 when it was built
				while the one before it ran
 *				"built <seconds>"	lowered and compiled
 *				"tick"	alive between runs
 *				"message <text>"	'\n' as "\n", '\\' as "\\"
 *				"result <code> <max abs err> <build s> <n>
 *				 <s1> ... <sn>"
 *				"exit <wait status>"	the child is gone
 *
 * "start" and "exit" come from the worker, the rest from the child.
 * The measurer may send the requests of a batch ahead; the worker answers
 * them one candidate after the other, in order, and a child built ahead
 * says nothing before its turn.
 */
#ifndef TESSEL_SEARCH_MEASURE_INTERNAL_H
#define TESSEL_SEARCH_MEASURE_INTERNAL_H

#include <tessel/measure.h>

#define TS_MEASURE_PROTOCOL 2

/* Misbehaviours a test can ask of a candidate's child. */
enum ts_fault {
	TS_FAULT_NONE,
	TS_FAULT_CRASH,
	TS_FAULT_ABORT,
	TS_FAULT_HANG,
	TS_FAULT_SLOW_BUILD,
	TS_FAULT_CORRUPT,
	TS_FAULT_KILL_WORKER,
	TS_FAULT_COUNT
};

/* The fault called "name", or -1. */
int ts_fault_from_name(const char *name);
const char *ts_fault_name(int fault);

/* The files of the folder "dir": the DAG, the options, input and
 * reference "i", and the child's standard error (GC-allocated paths). */
char *ts_measure_file(const char *dir, const char *what, int i);

/* Read the whole file "path" (GC-allocated, NUL-terminated), or NULL. */
char *ts_measure_read_text(const char *path);
/* Write all "n" bytes of "s" to "fd"; return false on failure. */
bool ts_measure_write_all(int fd, const char *s, size_t n);
/* Remove the folder "dir" and the files in it. */
void ts_measure_dir_remove(const char *dir);
/* The monotonic clock in seconds. */
double ts_measure_now(void);

/* What a measuring rank needs to rebuild a measurer (search/measure_mpi.c):
 * an id unique in the cluster, the DAG's hash and .tsl text, the
 * options as ts_measure_options_encode writes them, and the seed. */
struct ts_cluster_dag {
	int id;
	const char *hash;
	const char *text;
	const char *options;
	uint64_t seed;
};

/* "o" as one line of text, and back (ts_measure_options_decode fails on
 * a malformed line). */
char *ts_measure_options_encode(const ts_measure_options *o);
ts_status ts_measure_options_decode(const char *s, ts_measure_options *o);
/* A fresh id for a DAG of "cl". */
int ts_cluster_dag_id(ts_cluster *cl);
/* Measure the "n" schedules "json" of "d" on the ranks of "cl" with
 * the test fault "fault" into "out"; "done"[i] stays false for those no
 * rank could measure (all lost), which the caller measures itself. */
void ts_cluster_measure(ts_cluster *cl, ts_ctx *ctx,
	const struct ts_cluster_dag *d, int n, char **json, const char *fault,
	ts_measure_result *out, bool *done);
/* Fill "out" from the text "s" of a "result" line after its tag:
 * "<code> <max abs err> <build s> <n> <s1> ... <sn>". */
void ts_measure_parse_result(const char *s, ts_measure_result *out);

#endif
