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

#endif
