/* Tessel: the analysis of compute stages (isl underneath; no isl object
 * escapes: every answer here is plain data).
 *
 * Axis numbering.  Everywhere in this header an "axis index" of a stage
 * counts its spatial axes first (stage->axes[0..ndim)) and then its
 * reduction axes (stage->raxes[0..nraxes)), so a stage has
 * ndim + nraxes axes in all.
 */
#ifndef TESSEL_ANALYSIS_H
#define TESSEL_ANALYSIS_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_MAX_AXES 16

/* One dimension of a box footprint, in closed form in the tile.
 *
 * For a tile of the stage's iteration space that covers, on each axis a,
 * [origin[a], origin[a] + size[a]) (size[a] >= 1), the elements touched
 * along this tensor dimension are [lo, lo + extent) where
 *
 *	lo     = cst + sum_a origin_coef[a] * origin[a]
 *	             + sum_a size_shift[a] * (size[a] - 1)
 *	extent = 1 + sum_a size_coef[a] * (size[a] - 1)
 *
 * When "whole" is set the access could not be described affinely (a
 * data-dependent or non-affine index): the footprint is the whole
 * dimension [0, tensor extent). */
typedef struct ts_box_dim {
	bool whole;
	int64_t cst;
	int64_t origin_coef[TS_MAX_AXES];
	int64_t size_shift[TS_MAX_AXES];
	int64_t size_coef[TS_MAX_AXES];
} ts_box_dim;

/* The box of elements of "tensor" that a stage touches (the hull of all
 * its accesses to that tensor), as a function of a tile. */
typedef struct ts_footprint {
	const ts_tensor *tensor;
	int ndim;
	ts_box_dim dim[TS_MAX_DIMS];
} ts_footprint;

/* Evaluate "fp" on the tile "origin", "size" (one entry per stage axis):
 * write the box origin and extent of each tensor dimension. */
void ts_footprint_eval(const ts_footprint *fp, const int64_t *origin,
	const int64_t *size, int64_t *lo, int64_t *extent);

/* Return the footprint of stage "s" on tensor "t": the hull of every
 * access of "s" to "t" (a tensor it reads, or its own output for the
 * write), as written: an access under an affine guard (padding) is not
 * clamped, the bounds check proves it in bounds under its guard.  The
 * coefficients come from isl (box hulls of parametric tiles).  Returns
 * NULL with an error when "s" does not access "t".
 *
 * This is also the answer of bounds inference for fusion: for a tile of a
 * consumer, the region of a producer P that must be computed is the
 * footprint of the consumer on P's output, evaluated on that tile
 * (ts_region_for_consumer). */
ts_footprint *ts_stage_footprint(ts_ctx *ctx, const ts_stage *s,
	const ts_tensor *t);

/* Number of elements of the box of "fp" for tiles of sizes "size" (one
 * per stage axis); whole dimensions count their full extent.  Plain
 * arithmetic, no isl: cheap enough for a search loop. */
int64_t ts_footprint_volume(const ts_footprint *fp, const int64_t *size);

#ifdef __cplusplus
}
#endif

#endif
