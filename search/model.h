/* Internal: the analytical model with its per-stage traffic models kept,
 * for rating many configurations of one template. */
#ifndef TESSEL_SEARCH_MODEL_H
#define TESSEL_SEARCH_MODEL_H

#include <tessel/search.h>

typedef struct ts_model {
	const ts_template *tp;
	ts_traffic **traffic;	/* per stage; NULL where no nest */
} ts_model;

ts_status ts_model_init(ts_model *m, const ts_template *tp);
double ts_model_estimate_with(const ts_model *m, const ts_config *cfg,
	ts_estimate *per_stage);

#endif
