/* Tessel: knob spaces and configurations.
 *
 * A meta-template describes the schedules it can produce as a ts_space: a
 * list of named knobs.  A ts_config is one point of the space: one value
 * per knob (a split knob has one factor per level).  Configurations are
 * plain data: they are sampled, mutated, compared, hashed and serialised
 * to JSON without knowing what the knobs mean.
 */
#ifndef TESSEL_SPACE_H
#define TESSEL_SPACE_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_MAX_SPLIT_PARTS 6

typedef enum ts_knob_kind {
	TS_KNOB_SPLIT,		/* factors of an axis over several levels */
	TS_KNOB_CHOICE,		/* one of several named options */
	TS_KNOB_BOOL,
	TS_KNOB_INT,		/* an integer in [lo, hi] */
	TS_KNOB_KIND_COUNT
} ts_knob_kind;

/* A knob.  A split knob of an axis of extent "extent" over "nparts"
 * levels takes factors f[0..nparts), outermost first, with
 * f[1] * ... * f[nparts-1] <= extent and f[0] = ceil(extent / that
 * product): the outermost level covers the rest, with a tail when the
 * inner product does not divide the extent. */
typedef struct ts_knob ts_knob;

typedef struct ts_space ts_space;

typedef struct ts_config ts_config;

/* An empty space called "name" (NULL: "space"). */
__ts_gc ts_space *ts_space_new(__ts_keep ts_ctx *ctx,
	__ts_keep __ts_null const char *name);
/* Add a split knob "name" of an axis of extent "extent" into "nparts"
 * levels; return its index or -1.  Candidate inner factors are the
 * divisors of the extent and, unless "divisors_only", the powers of two
 * below it. */
int ts_space_add_split(__ts_keep ts_space *sp, __ts_keep const char *name,
	int64_t extent, int nparts, bool divisors_only);
int ts_space_add_choice(__ts_keep ts_space *sp, __ts_keep const char *name,
	int n, __ts_keep const char *const *choices);
int ts_space_add_bool(__ts_keep ts_space *sp, __ts_keep const char *name);
int ts_space_add_int(__ts_keep ts_space *sp, __ts_keep const char *name,
	int64_t lo, int64_t hi);
/* Index of the knob "name" in "sp", or -1. */
int ts_space_find(__ts_keep const ts_space *sp, __ts_keep const char *name);
/* Number of values of knob "k" (split: number of valid factor tuples). */
double ts_knob_count(__ts_keep const ts_knob *k);
/* Number of points of "sp" (a double: spaces are large). */
double ts_space_size(__ts_keep const ts_space *sp);
void ts_space_print(__ts_keep FILE *out, __ts_keep const ts_space *sp);

/* Configurations.  ts_config_new sets every knob at its default. */
__ts_gc ts_config *ts_config_new(__ts_keep const ts_space *sp);
__ts_gc ts_config *ts_config_copy(__ts_keep const ts_config *c);
/* A configuration drawn uniformly per knob from the context's stream. */
__ts_gc ts_config *ts_space_sample(__ts_keep const ts_space *sp,
	__ts_keep ts_ctx *ctx);
/* A neighbour of "c": one knob changed (a split moves a prime factor
 * between two levels, a choice or int steps to another value). */
__ts_gc ts_config *ts_config_mutate(__ts_keep const ts_config *c,
	__ts_keep ts_ctx *ctx);
/* Value of knob "knob" (part "part" for split knobs, 0 otherwise). */
int64_t ts_config_get(__ts_keep const ts_config *c, int knob, int part);
void ts_config_set(__ts_keep ts_config *c, int knob, int part, int64_t v);
/* Look a knob up by name: ts_config_get(c, ts_space_find(...), part). */
int64_t ts_config_value(__ts_keep const ts_config *c,
	__ts_keep const char *name, int part);
/* Set the inner factors of split knob "knob" from "inner" (nparts - 1
 * values, outermost first) and derive the outermost one. */
void ts_config_set_split(__ts_keep ts_config *c, int knob,
	__ts_keep const int64_t *inner);
/* Whether every value of "c" is inside its knob's domain. */
bool ts_config_is_valid(__ts_keep const ts_config *c);
bool ts_config_equal(__ts_keep const ts_config *a,
	__ts_keep const ts_config *b);
uint64_t ts_config_hash(__ts_keep const ts_config *c);
/* JSON object {"knob": value or [factors], ...}. */
__ts_gc char *ts_config_to_json(__ts_keep const ts_config *c);
__ts_gc ts_config *ts_config_from_json(__ts_keep ts_ctx *ctx,
	__ts_keep const ts_space *sp, __ts_keep const char *json);
void ts_config_print(__ts_keep FILE *out, __ts_keep const ts_config *c);

#ifdef __cplusplus
}
#endif

#endif
