/* Shared by the files of the lowering: affine index forms.  Not
 * installed. */
#ifndef TESSEL_LOWER_INTERNAL_H
#define TESSEL_LOWER_INTERNAL_H

#include <tessel/lower.h>

#include "support/support.h"

#define TS_AFF_MAX 32

/* An affine form cst + sum coef[i] * atom[i]; an atom is a loop variable
 * or an expression the form does not look into (a floor division, a
 * load).  "ok" is false when the form overflowed TS_AFF_MAX terms. */
typedef struct ts_aff {
	bool ok;
	int n;
	int64_t cst;
	ts_expr *atom[TS_AFF_MAX];
	int64_t coef[TS_AFF_MAX];
} ts_aff;

ts_aff ts_aff_const(int64_t c);
/* "a" + "k" * "b". */
ts_aff ts_aff_add(ts_aff a, const ts_aff *b, int64_t k);
ts_aff ts_aff_of_expr(ts_ctx *ctx, ts_expr *e);
ts_expr *ts_aff_to_expr(ts_ctx *ctx, const ts_aff *a);
/* Bounds of "a" when every variable atom ranges over its loop extent;
 * false when an atom is not a loop variable. */
bool ts_aff_bounds(const ts_aff *a, int64_t *lo, int64_t *hi);
/* An i64 constant. */
ts_expr *ts_lower_int(ts_ctx *ctx, int64_t v);
/* A load of "buf" at "n" indices, without the checks of ts_load (the
 * indices of a lowered program are in bounds under their guards). */
ts_expr *ts_lower_load(ts_tensor *buf, int n, ts_expr *const *idx);

#endif
