/* Internal: the analytical model with its per-stage traffic models kept,
 * for rating many configurations of one template. */
#ifndef TESSEL_SEARCH_MODEL_H
#define TESSEL_SEARCH_MODEL_H

#include <tessel/search.h>

typedef struct ts_model {
	const ts_template *tp;
	ts_traffic **traffic;	/* per stage; NULL where no nest */
	int *divmods;		/* per stage: 64-bit // and % by other than
				 * a power of two in its body */
	double *row_fresh;	/* per stage of a row group: the share of
				 * its bytes from beyond L1 in its tiles */
	double *row_bytes;	/* per row group's host: the bytes the
				 * group holds over "row_rows" rows */
	double *row_rows;
} ts_model;

ts_status ts_model_init(ts_model *m, const ts_template *tp);
double ts_model_estimate_with(const ts_model *m, const ts_config *cfg,
	ts_estimate *per_stage);
/* The estimate of stage "s" alone under "cfg" (0 for a stage with no
 * cost of its own: inlined, or scheduled with its anchor), its parts in
 * "e" (may be NULL).  The estimate of a configuration is the sum over
 * its stages. */
double ts_model_stage_estimate(const ts_model *m, const ts_config *cfg,
	int s, ts_estimate *e);

/* GPUs (search/gpu_model.c).  The estimate of stage "s" of the GPU
 * template "tp" under "cfg" in seconds: 0 for a stage without a kernel,
 * INFINITY where its kernel does not fit the target. */
double ts_gpu_model_stage_estimate(const ts_template *tp,
	const ts_config *cfg, int s);
/* Give the knobs that tiles on tensor cores ignore (the splits, staging
 * and unrolling of the plain tiles) their defaults in "c", so that
 * configurations that differ only there compare equal. */
void ts_gpu_config_canonical(const ts_template *tp, ts_config *c);
/* The GPU's seeds into "out" (room for TS_GPU_SEEDS): per tiled stage
 * square-ish tiles of 8x8 to 16x16 threads with 4x4 or 8x8 outputs per
 * thread (as two virtual threads of 2x2 or 4x4 registers) where they
 * divide, and tiles on tensor cores; returns how many. */
enum { TS_GPU_SEEDS = 10 };
int ts_gpu_static_seeds(const ts_template *tp, ts_config **out);

#endif
