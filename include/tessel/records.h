/* Tessel: tuning records.
 *
 * Every measurement is one line of JSON appended to a log (doc/records.md
 * describes the format).  A line is written with a single write(2) on a
 * file opened with O_APPEND, so processes appending to the same log never
 * interleave, and a tuner killed mid-way leaves at most one partial last
 * line, which readers skip.  Nothing is ever rewritten in place.
 *
 * A record names its workload by ts_dag_hash and its machine by
 * ts_target_key, so that a later build picks the best schedule measured
 * for the same computation on the same target.
 */
#ifndef TESSEL_RECORDS_H
#define TESSEL_RECORDS_H

#include <stdint.h>

#include <tessel/dsl.h>
#include <tessel/loop.h>
#include <tessel/measure.h>
#include <tessel/schedule.h>
#include <tessel/space.h>
#include <tessel/target.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_RECORD_VERSION 1

/* One measurement. */
typedef struct ts_record {
	int version;		/* TS_RECORD_VERSION */
	const char *workload;	/* ts_dag_hash of the DAG */
	const char *dag;	/* the DAG's name, for people */
	const char *target;	/* ts_target_key of the machine */
	const char *config;	/* configuration as JSON text, or NULL */
	const char *schedule;	/* ts_schedule_to_json text; NULL in a
				 * layout record */
	const char *layout;	/* a network's layouts as JSON text
				 * (ts_network_lay_out), or NULL: a layout
				 * record, whose workload is the network */
	int ntimes;
	double *times;		/* seconds per run */
	double median_s;	/* INFINITY when the candidate failed */
	ts_error_code error;
	double max_abs_err;	/* NAN when not compared */
	const char *message;	/* what went wrong, or NULL */
	double build_s;		/* 0 when unknown */
	const char *timestamp;	/* ISO 8601, UTC */
	uint64_t seed;		/* of the inputs and of the search */
	bool verified;		/* a tuner's final comparison: measured in
				 * rounds interleaved with the static choice
				 * (its median is the median of its rounds) */
	int line;		/* line in the log it was read from, or 0 */
} ts_record;

/* "<name>-<16 hex digits of a hash of ts_target_to_json>", e.g.
 * "host-3f2a...": two targets share a key when all their fields agree. */
__ts_gc const char *ts_target_key(__ts_keep const ts_target *target);

/* A record of measuring "sch" (from "cfg", which may be NULL) of "dag"
 * on "target" with result "res", stamped with the current time. */
__ts_gc ts_record *ts_record_new(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	__ts_keep __ts_null const ts_config *cfg,
	__ts_keep const ts_schedule *sch,
	__ts_keep const ts_measure_result *res, uint64_t seed);
/* A layout record of the network "dag" on "target": "layout" (JSON text
 * of an object, see ts_network_lay_out) with the network time it
 * promises, "total_s", as its median. */
__ts_gc ts_record *ts_record_new_layout(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	__ts_keep const char *layout, double total_s);
/* The record as one line of JSON, without the newline. */
__ts_gc char *ts_record_to_json(__ts_keep const ts_record *rec);
/* Read one line of JSON; NULL with a message in "ctx" when it is not a
 * record of this version. */
__ts_gc ts_record *ts_record_from_json(__ts_keep ts_ctx *ctx,
	__ts_keep const char *text);

/* Append "rec" to the log "path" (created when missing) with a single
 * write of the whole line.  When the log ends in a partial line, the new
 * line starts on a line of its own. */
ts_status ts_record_append(__ts_keep ts_ctx *ctx, __ts_keep const char *path,
	__ts_keep const ts_record *rec);
/* Read every record of the log "path" into an array, "*n" of them ("n"
 * may be NULL: the array also ends with a NULL entry).  A
 * line that is not JSON, a partial last line, a line of another version
 * or without the required fields is skipped with a warning in "ctx"
 * naming the file and line.  NULL with a message when the file cannot be
 * read (a missing file too). */
__ts_gc ts_record **ts_records_load(__ts_keep ts_ctx *ctx,
	__ts_keep const char *path, __ts_keep __ts_null int *n);
/* The valid record (error "none") with the lowest median among the "n"
 * records "recs" for "workload" and "target" (NULL: any), or NULL;
 * layout records are not schedules and never compete.  When
 * some of those records are verified, only they compete: a first
 * measurement that was lucky does not beat the final comparison that
 * found it slower than the static choice. */
__ts_gc __ts_null const ts_record *ts_records_best(
	__ts_keep ts_record *const *recs, int n,
	__ts_keep __ts_null const char *workload,
	__ts_keep __ts_null const char *target);
/* "t" as records key it (ts_target_key): a CPU's cores set to "threads"
 * when it is positive, every other field unchanged, so that tuning with
 * N threads and applying records with N threads meet.  "t" itself when
 * nothing changes. */
__ts_gc const ts_target *ts_records_target(__ts_keep const ts_target *t,
	int threads);
/* Replay the schedule stored in "rec" on "dag".  NULL with a message
 * when it was recorded for another workload or does not apply. */
__ts_gc ts_schedule *ts_record_schedule(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_record *rec);
/* The schedule of the best valid record of the log "path" for "dag" on
 * "target" into "*out", or NULL in "*out" when there is none.  TS_ERROR
 * when the log cannot be read or the record does not replay. */
ts_status ts_records_best_schedule(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_target *target,
	__ts_keep const char *path, __ts_keep ts_schedule **out);
/* Whether the kernel "rec" of "dag" (a record's schedule, lowered) runs
 * at least TS_TUNE_MARGIN faster than "st" (the static schedule,
 * lowered), both compiled for "target" (NULL: this machine) with
 * "threads" threads and timed here in interleaved rounds on seeded
 * inputs: a record is never taken on its word, since it was timed in
 * another process, perhaps on another day.  "why" receives the verdict
 * with the times, as a phrase for messages; a kernel that does not
 * compile or run here loses, with the reason there. */
bool ts_record_beats_static(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const ts_func *rec,
	__ts_keep const ts_func *st, __ts_keep __ts_null const ts_target *target,
	int threads, __ts_keep __ts_null const char **why);
/* The schedule that "tessel run --records LOG" compiles for "dag" on this
 * machine with "threads" threads (0: all): the best valid record of the
 * log "log" for the host when it beats the static baseline
 * (ts_record_beats_static), else the static baseline.  "*why" (may be
 * NULL) receives a sentence saying which and why.  NULL with a message
 * when the log cannot be read or its best record does not replay. */
__ts_gc ts_schedule *ts_records_choose(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_dag *dag, __ts_keep const char *log, int threads,
	__ts_keep __ts_null const char **why);

#ifdef __cplusplus
}
#endif

#endif
