/* Internal to analysis/: the isl model of one stage (its instance set and
 * one access relation per load and for the write).  Nothing here leaves
 * analysis/: public answers are plain data (include/tessel/analysis.h).
 *
 * A model is built for one question and freed right after, so no isl
 * object outlives the call that needed it.  The model itself is allocated
 * with malloc, not the collector: it holds isl pointers only, and isl
 * objects are freed explicitly in ts_stage_model_free.
 */
#ifndef TESSEL_ANALYSIS_INTERNAL_H
#define TESSEL_ANALYSIS_INTERNAL_H

#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/ctx.h>
#include <isl/fixed_box.h>
#include <isl/ilp.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <tessel/analysis.h>

#include "support/support.h"

/* One access of a stage: a load of an input, or the write of its output. */
struct ts_acc {
	const ts_tensor *tensor;
	const ts_expr *load;	/* the LOAD node; NULL for the write */
	bool write;
	int ndim;		/* dimensions of the tensor */
	bool dim_affine[TS_MAX_DIMS];	/* index d is affine in the axes */
	bool affine;		/* every index is affine */
	bool guarded;		/* under at least one affine select condition */
	bool guard_unknown;	/* under a select whose condition is not affine */
	uint32_t red_mask;	/* axis positions of the reducers around it */
	/* Instance -> element on the whole integer space (no domain, no
	 * guard); a non-affine index spans [0, extent) of its dimension. */
	isl_map *raw;
	isl_set *guard;		/* affine guard on instances (universe if none) */
	isl_pw_aff *index[TS_MAX_DIMS];	/* NULL where not affine */
};

/* The isl view of one stage. */
struct ts_stage_model {
	ts_ctx *ctx;
	isl_ctx *ictx;
	const ts_stage *stage;
	int naxes;		/* spatial then reduction axes */
	isl_space *space;	/* the instance space S[axes...] */
	isl_set *domain;	/* 0 <= axis < extent on every axis */
	int nacc;		/* loads in body order, then the write */
	int cap;
	struct ts_acc *acc;
};

/* isl.c */
isl_ctx *ts_isl_ctx(ts_ctx *ctx);
/* The axis of the index "e" when it is a block index of a blocked
 * layout, axis // B or axis % B ("*mod") with a constant B > 1 (into
 * "*b"); NULL otherwise. */
const ts_axis *ts_block_index(const ts_expr *e, int64_t *b, bool *mod);
char *ts_isl_set_str(__isl_keep isl_set *set);
char *ts_isl_map_str(__isl_keep isl_map *map);
int64_t ts_isl_val_i64(__isl_take isl_val *v);

/* affine.c */
__isl_give isl_pw_aff *ts_affine_of(struct ts_stage_model *m, const ts_expr *e);
__isl_give isl_set *ts_affine_cond(struct ts_stage_model *m, const ts_expr *e);

/* quasi.c */
/* Fill "bd" with the quasi-affine terms of the index "e" of stage "s";
 * false when "e" has no such form (ts_box_dim). */
bool ts_quasi_of(const ts_stage *s, const ts_expr *e, ts_box_dim *bd);
/* The exact range of the quasi-affine "bd" over a tile. */
void ts_quasi_eval(const ts_box_dim *bd, const int64_t *origin,
	const int64_t *size, int64_t *lo, int64_t *extent);
/* Whether "a" and "b" have the same terms. */
bool ts_quasi_equal(const ts_box_dim *a, const ts_box_dim *b);

/* model.c */
struct ts_stage_model *ts_stage_model_build(ts_ctx *ctx, const ts_stage *s);
void ts_stage_model_free(struct ts_stage_model *m);
__isl_give isl_map *ts_acc_relation(struct ts_stage_model *m,
	const struct ts_acc *a);
__isl_give isl_set *ts_tensor_box(struct ts_stage_model *m, const ts_tensor *t);

/* count.c */
int64_t ts_set_count(__isl_keep isl_set *set, bool *exact);
void ts_counts_fill(ts_stage_info *si, struct ts_stage_model *m);

/* access.c */
void ts_access_fill(struct ts_stage_model *m, int i, ts_access_info *ai);

/* classify.c */
void ts_reason(ts_stage_info *si, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ts_classify_stage(ts_stage_info *si);
void ts_classify_dag(ts_dag_info *di);

/* bounds.c */
ts_status ts_model_check_bounds(struct ts_stage_model *m);

#endif
