/* The learned cost model: XGBoost gradient boosted trees through its C
 * API, trained from scratch on every sample each time it is asked to.
 *
 * Requires: feature vectors and targets (higher is faster).  Produces:
 * predicted scores for ranking candidates.
 *
 * The booster and matrices are XGBoost handles: created and freed
 * explicitly here, and released with the context if the owner forgets.
 */
#include <config.h>

#include <math.h>

#include <xgboost/c_api.h>

#include <tessel/tune.h>

#include "support/support.h"

#define DEFAULT_ROUNDS 60

struct ts_cost_model {
	ts_ctx *ctx;
	int nfeat;
	uint64_t seed;
	int n, cap;		/* samples */
	float *x;		/* n * nfeat, atomic */
	float *y;		/* n, atomic */
	BoosterHandle booster;	/* NULL until trained */
};

/* Turn the failed XGBoost call "what" (return code "rc") of "m" into an
 * error of its context; TS_OK when "rc" is 0. */
static ts_status xgb_check(ts_cost_model *m, int rc, const char *what)
{
	if (rc == 0)
		return TS_OK;
	return ts_ctx_set_error(m->ctx, "cost model: %s failed: %s", what,
		XGBGetLastError());
}

/* Free the booster of "data" (a ts_cost_model), if any. */
static void release(void *data)
{
	ts_cost_model *m = data;

	if (m->booster)
		XGBoosterFree(m->booster);
	m->booster = NULL;
}

ts_cost_model *ts_cost_model_new(ts_ctx *ctx, int nfeatures, uint64_t seed)
{
	ts_cost_model *m;

	if (nfeatures <= 0) {
		ts_ctx_set_error(ctx, "cost model: %d features", nfeatures);
		return NULL;
	}
	m = ts_new(ts_cost_model);
	m->ctx = ctx;
	m->nfeat = nfeatures;
	m->seed = seed;
	ts_ctx_on_free(ctx, release, m);
	return m;
}

ts_status ts_cost_model_add(ts_cost_model *m, const float *x, double y)
{
	if (!isfinite(y))
		return ts_ctx_set_error(m->ctx, "cost model: sample %d has a "
			"target that is not finite", m->n);
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 64;
		float *nx = ts_new_atomic(float, (size_t)cap * m->nfeat);
		float *ny = ts_new_atomic(float, cap);
		if (m->n) {
			memcpy(nx, m->x, sizeof(float) * m->n * m->nfeat);
			memcpy(ny, m->y, sizeof(float) * m->n);
		}
		m->x = nx;
		m->y = ny;
		m->cap = cap;
	}
	memcpy(m->x + (size_t)m->n * m->nfeat, x, sizeof(float) * m->nfeat);
	m->y[m->n++] = (float)y;
	return TS_OK;
}

void ts_cost_model_clear(ts_cost_model *m)
{
	m->n = 0;
}

int ts_cost_model_size(const ts_cost_model *m)
{
	return m->n;
}

bool ts_cost_model_trained(const ts_cost_model *m)
{
	return m->booster != NULL;
}

/* Set the training parameters of booster "b" of "m". */
static ts_status set_params(ts_cost_model *m, BoosterHandle b)
{
	char seed[32];
	const char *p[][2] = {
		{ "objective", "reg:squarederror" },
		{ "max_depth", "6" },
		{ "eta", "0.2" },
		{ "min_child_weight", "1" },
		{ "subsample", "1" },
		{ "nthread", "1" },
		{ "verbosity", "0" },
		{ "seed", seed },
	};

	snprintf(seed, sizeof(seed), "%d", (int)(m->seed & 0x7fffffff));
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (xgb_check(m, XGBoosterSetParam(b, p[i][0], p[i][1]),
		    "XGBoosterSetParam") < 0)
			return TS_ERROR;
	return TS_OK;
}

/* Boost "rounds" rounds of a new booster on the matrix "dm" of "m";
 * replace the old booster on success. */
static ts_status boost(ts_cost_model *m, DMatrixHandle dm, int rounds)
{
	BoosterHandle b = NULL;

	if (xgb_check(m, XGBoosterCreate(&dm, 1, &b), "XGBoosterCreate") < 0)
		return TS_ERROR;
	if (set_params(m, b) < 0)
		goto error;
	for (int i = 0; i < rounds; i++)
		if (xgb_check(m, XGBoosterUpdateOneIter(b, i, dm),
		    "XGBoosterUpdateOneIter") < 0)
			goto error;
	release(m);
	m->booster = b;
	return TS_OK;
error:
	XGBoosterFree(b);
	return TS_ERROR;
}

ts_status ts_cost_model_train(ts_cost_model *m, int rounds)
{
	DMatrixHandle dm = NULL;
	ts_status st;

	if (m->n < 2)
		return ts_ctx_set_error(m->ctx, "cost model: %d samples are "
			"too few to train on", m->n);
	if (xgb_check(m, XGDMatrixCreateFromMat(m->x, m->n, m->nfeat, NAN,
	    &dm), "XGDMatrixCreateFromMat") < 0)
		return TS_ERROR;
	st = xgb_check(m, XGDMatrixSetFloatInfo(dm, "label", m->y, m->n),
		"XGDMatrixSetFloatInfo");
	if (st == TS_OK)
		st = boost(m, dm, rounds > 0 ? rounds : DEFAULT_ROUNDS);
	XGDMatrixFree(dm);
	return st;
}

ts_status ts_cost_model_predict(ts_cost_model *m, int n, const float *x,
	double *out)
{
	DMatrixHandle dm = NULL;
	const float *res = NULL;
	bst_ulong len = 0;
	ts_status st;

	if (!m->booster)
		return ts_ctx_set_error(m->ctx, "cost model: predict before "
			"training");
	if (n <= 0)
		return TS_OK;
	if (xgb_check(m, XGDMatrixCreateFromMat(x, n, m->nfeat, NAN, &dm),
	    "XGDMatrixCreateFromMat") < 0)
		return TS_ERROR;
	st = xgb_check(m, XGBoosterPredict(m->booster, dm, 0, 0, 0, &len,
		&res), "XGBoosterPredict");
	if (st == TS_OK && len != (bst_ulong)n)
		st = ts_ctx_set_error(m->ctx, "cost model: %llu predictions "
			"for %d samples", (unsigned long long)len, n);
	for (int i = 0; st == TS_OK && i < n; i++)
		out[i] = res[i];
	XGDMatrixFree(dm);
	return st;
}

void ts_cost_model_free(ts_cost_model *m)
{
	if (m)
		release(m);
}
