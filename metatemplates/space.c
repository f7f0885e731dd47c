/* Knob spaces and configurations: sampling, mutation, JSON. */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include <tessel/space.h>

#include "metatemplates/ir.h"
#include "support/support.h"

ts_space *ts_space_new(ts_ctx *ctx, const char *name)
{
	ts_space *sp = ts_new(ts_space);

	sp->ctx = ctx;
	sp->name = ts_strdup(name ? name : "space");
	return sp;
}

/* Append "k" to "sp", giving it "nvalues" slots; return its index. */
static int add_knob(ts_space *sp, ts_knob *k, int nvalues)
{
	if (ts_space_find(sp, k->name) >= 0) {
		ts_ctx_set_error(sp->ctx, "space '%s': knob '%s' is defined "
			"twice", sp->name, k->name);
		return -1;
	}
	k->offset = sp->nvalues;
	sp->nvalues += nvalues;
	sp->knobs = ts_grow(sp->knobs, sizeof(ts_knob *), sp->nknobs,
		sp->nknobs + 1);
	sp->knobs[sp->nknobs] = k;
	return sp->nknobs++;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Fill the candidate inner factors of split knob "k". */
static void split_candidates(ts_knob *k)
{
	int64_t n = k->extent;
	int cap = 64, m = 0;
	int64_t *c = ts_new_atomic(int64_t, cap);

	for (int64_t d = 1; d * d <= n; d++) {
		if (n % d)
			continue;
		if (m + 2 >= cap) {
			int64_t *g = ts_new_atomic(int64_t, 2 * cap);
			memcpy(g, c, sizeof(int64_t) * m);
			c = g;
			cap *= 2;
		}
		c[m++] = d;
		if (d != n / d)
			c[m++] = n / d;
	}
	if (!k->divisors_only) {
		for (int64_t p = 2; p < n; p *= 2) {
			bool seen = false;
			for (int i = 0; i < m; i++)
				seen |= c[i] == p;
			if (seen)
				continue;
			if (m + 1 >= cap) {
				int64_t *g = ts_new_atomic(int64_t, 2 * cap);
				memcpy(g, c, sizeof(int64_t) * m);
				c = g;
				cap *= 2;
			}
			c[m++] = p;
		}
	}
	qsort(c, m, sizeof(int64_t), cmp_i64);
	k->cands = c;
	k->ncands = m;
}

int ts_space_add_split(ts_space *sp, const char *name, int64_t extent,
	int nparts, bool divisors_only)
{
	ts_knob *k;

	if (extent < 1 || nparts < 1 || nparts > TS_MAX_SPLIT_PARTS) {
		ts_ctx_set_error(sp->ctx, "space '%s': split knob '%s' needs an "
			"extent >= 1 and 1..%d parts (got %" PRId64 ", %d)",
			sp->name, name, TS_MAX_SPLIT_PARTS, extent, nparts);
		return -1;
	}
	k = ts_new(ts_knob);
	k->name = ts_strdup(name);
	k->kind = TS_KNOB_SPLIT;
	k->extent = extent;
	k->nparts = nparts;
	k->divisors_only = divisors_only;
	split_candidates(k);
	return add_knob(sp, k, nparts);
}

int ts_space_add_choice(ts_space *sp, const char *name, int n,
	const char *const *choices)
{
	ts_knob *k;

	if (n < 1) {
		ts_ctx_set_error(sp->ctx, "space '%s': choice knob '%s' has no "
			"option", sp->name, name);
		return -1;
	}
	k = ts_new(ts_knob);
	k->name = ts_strdup(name);
	k->kind = TS_KNOB_CHOICE;
	k->nchoices = n;
	k->choices = ts_new_array(const char *, n);
	for (int i = 0; i < n; i++)
		k->choices[i] = ts_strdup(choices[i]);
	k->lo = 0;
	k->hi = n - 1;
	return add_knob(sp, k, 1);
}

int ts_space_add_bool(ts_space *sp, const char *name)
{
	ts_knob *k = ts_new(ts_knob);

	k->name = ts_strdup(name);
	k->kind = TS_KNOB_BOOL;
	k->lo = 0;
	k->hi = 1;
	return add_knob(sp, k, 1);
}

int ts_space_add_int(ts_space *sp, const char *name, int64_t lo, int64_t hi)
{
	ts_knob *k;

	if (lo > hi) {
		ts_ctx_set_error(sp->ctx, "space '%s': int knob '%s' has an "
			"empty range [%" PRId64 ", %" PRId64 "]", sp->name,
			name, lo, hi);
		return -1;
	}
	k = ts_new(ts_knob);
	k->name = ts_strdup(name);
	k->kind = TS_KNOB_INT;
	k->lo = lo;
	k->hi = hi;
	return add_knob(sp, k, 1);
}

int ts_space_find(const ts_space *sp, const char *name)
{
	for (int i = 0; i < sp->nknobs; i++)
		if (strcmp(sp->knobs[i]->name, name) == 0)
			return i;
	return -1;
}

/* Number of tuples of "levels" candidate factors of "k" whose product is
 * at most "room". */
static double count_tuples(const ts_knob *k, int levels, int64_t room)
{
	double n = 0;

	if (levels == 0)
		return 1;
	for (int i = 0; i < k->ncands && k->cands[i] <= room; i++)
		n += count_tuples(k, levels - 1, room / k->cands[i]);
	return n;
}

double ts_knob_count(const ts_knob *k)
{
	switch (k->kind) {
	case TS_KNOB_SPLIT:
		return count_tuples(k, k->nparts - 1, k->extent);
	default:
		return (double)(k->hi - k->lo + 1);
	}
}

double ts_space_size(const ts_space *sp)
{
	double n = 1;

	for (int i = 0; i < sp->nknobs; i++)
		n *= ts_knob_count(sp->knobs[i]);
	return n;
}

static const char *kind_names[TS_KNOB_KIND_COUNT] = {
	"split", "choice", "bool", "int",
};

void ts_space_print(FILE *out, const ts_space *sp)
{
	fprintf(out, "space %s: %d knobs, %.4g configurations\n", sp->name,
		sp->nknobs, ts_space_size(sp));
	for (int i = 0; i < sp->nknobs; i++) {
		const ts_knob *k = sp->knobs[i];
		fprintf(out, "  %-24s %-6s ", k->name, kind_names[k->kind]);
		if (k->kind == TS_KNOB_SPLIT)
			fprintf(out, "extent %" PRId64 " into %d levels",
				k->extent, k->nparts);
		else if (k->kind == TS_KNOB_CHOICE)
			for (int c = 0; c < k->nchoices; c++)
				fprintf(out, "%s%s", c ? "|" : "", k->choices[c]);
		else
			fprintf(out, "[%" PRId64 ", %" PRId64 "]", k->lo, k->hi);
		fprintf(out, "  (%.4g values)\n", ts_knob_count(k));
	}
}

/* Configurations. */

ts_config *ts_config_new(const ts_space *sp)
{
	ts_config *c = ts_new(ts_config);

	c->space = sp;
	c->v = ts_new_atomic(int64_t, sp->nvalues + 1);
	for (int i = 0; i < sp->nknobs; i++) {
		const ts_knob *k = sp->knobs[i];
		if (k->kind == TS_KNOB_SPLIT) {
			c->v[k->offset] = k->extent;
			for (int p = 1; p < k->nparts; p++)
				c->v[k->offset + p] = 1;
		} else {
			c->v[k->offset] = k->lo;
		}
	}
	return c;
}

ts_config *ts_config_copy(const ts_config *c)
{
	ts_config *d = ts_config_new(c->space);

	memcpy(d->v, c->v, sizeof(int64_t) * c->space->nvalues);
	return d;
}

int64_t ts_config_get(const ts_config *c, int knob, int part)
{
	return c->v[c->space->knobs[knob]->offset + part];
}

void ts_config_set(ts_config *c, int knob, int part, int64_t v)
{
	c->v[c->space->knobs[knob]->offset + part] = v;
}

int64_t ts_config_value(const ts_config *c, const char *name, int part)
{
	int k = ts_space_find(c->space, name);

	return k < 0 ? 0 : ts_config_get(c, k, part);
}

void ts_config_set_split(ts_config *c, int knob, const int64_t *inner)
{
	const ts_knob *k = c->space->knobs[knob];
	int64_t prod = 1;

	for (int p = 1; p < k->nparts; p++) {
		c->v[k->offset + p] = inner[p - 1];
		prod *= inner[p - 1];
	}
	c->v[k->offset] = (k->extent + prod - 1) / prod;
}

static bool is_cand(const ts_knob *k, int64_t f)
{
	for (int i = 0; i < k->ncands; i++)
		if (k->cands[i] == f)
			return true;
	return false;
}

/* Whether the split values "f" are valid for "k". */
static bool split_valid(const ts_knob *k, const int64_t *f)
{
	int64_t prod = 1;

	for (int p = 1; p < k->nparts; p++) {
		if (f[p] < 1 || !is_cand(k, f[p]))
			return false;
		prod *= f[p];
		if (prod > k->extent)
			return false;
	}
	return f[0] == (k->extent + prod - 1) / prod;
}

bool ts_config_is_valid(const ts_config *c)
{
	for (int i = 0; i < c->space->nknobs; i++) {
		const ts_knob *k = c->space->knobs[i];
		const int64_t *v = c->v + k->offset;
		if (k->kind == TS_KNOB_SPLIT ? !split_valid(k, v)
		    : (v[0] < k->lo || v[0] > k->hi))
			return false;
	}
	return true;
}

/* Draw knob "k" of "c" at random from "ctx". */
static void sample_knob(ts_config *c, const ts_knob *k, ts_ctx *ctx)
{
	int64_t *v = c->v + k->offset;

	if (k->kind != TS_KNOB_SPLIT) {
		v[0] = k->lo + (int64_t)ts_ctx_random_below(ctx,
			(uint64_t)(k->hi - k->lo + 1));
		return;
	}
	/* Draw levels in a random order so that no level is favoured by
	 * the room the others leave. */
	for (int tries = 0; tries < 64; tries++) {
		int64_t room = k->extent, prod = 1;
		int order[TS_MAX_SPLIT_PARTS];
		for (int p = 1; p < k->nparts; p++)
			order[p] = p;
		for (int p = k->nparts - 1; p > 1; p--) {
			int q = 1 + (int)ts_ctx_random_below(ctx, p);
			int t = order[p];
			order[p] = order[q];
			order[q] = t;
		}
		for (int p = 1; p < k->nparts; p++) {
			int n = 0;
			while (n < k->ncands && k->cands[n] <= room)
				n++;
			v[order[p]] = k->cands[ts_ctx_random_below(ctx, n)];
			room /= v[order[p]];
			prod *= v[order[p]];
		}
		v[0] = (k->extent + prod - 1) / prod;
		if (split_valid(k, v))
			return;
	}
	for (int p = 1; p < k->nparts; p++)
		v[p] = 1;
	v[0] = k->extent;
}

ts_config *ts_space_sample(const ts_space *sp, ts_ctx *ctx)
{
	ts_config *c = ts_config_new(sp);

	for (int i = 0; i < sp->nknobs; i++)
		sample_knob(c, sp->knobs[i], ctx);
	return c;
}

/* The smallest prime factor of "n" > 1. */
static int64_t smallest_prime(int64_t n)
{
	for (int64_t p = 2; p * p <= n; p++)
		if (n % p == 0)
			return p;
	return n;
}

/* Move a prime factor of split knob "k" in "v" from one level to
 * another (the outermost level absorbs or gives what the inner ones
 * do not hold). */
static void move_factor(const ts_knob *k, int64_t *v, ts_ctx *ctx)
{
	int from = (int)ts_ctx_random_below(ctx, k->nparts);
	int to = (int)ts_ctx_random_below(ctx, k->nparts);
	int64_t p, prod = 1;

	if (from == to)
		return;
	if (from == 0) {
		/* Take from the outer level: grow an inner level. */
		p = smallest_prime(v[0] > 1 ? v[0] : 2);
		v[to] *= p;
	} else {
		if (v[from] == 1)
			return;
		p = smallest_prime(v[from]);
		v[from] /= p;
		if (to)
			v[to] *= p;
	}
	for (int q = 1; q < k->nparts; q++)
		prod *= v[q];
	v[0] = (k->extent + prod - 1) / prod;
}

ts_config *ts_config_mutate(const ts_config *c, ts_ctx *ctx)
{
	const ts_space *sp = c->space;
	ts_config *d = ts_config_copy(c);

	if (sp->nknobs == 0)
		return d;
	for (int tries = 0; tries < 32; tries++) {
		const ts_knob *k = sp->knobs[ts_ctx_random_below(ctx,
			sp->nknobs)];
		int64_t *v = d->v + k->offset;
		if (k->kind == TS_KNOB_SPLIT && k->nparts > 1 &&
		    ts_ctx_random_below(ctx, 2))
			move_factor(k, v, ctx);
		else
			sample_knob(d, k, ctx);
		if (ts_config_is_valid(d) && !ts_config_equal(c, d))
			return d;
		memcpy(d->v, c->v, sizeof(int64_t) * sp->nvalues);
	}
	return d;
}

bool ts_config_equal(const ts_config *a, const ts_config *b)
{
	return a->space->nvalues == b->space->nvalues &&
		memcmp(a->v, b->v, sizeof(int64_t) * a->space->nvalues) == 0;
}

uint64_t ts_config_hash(const ts_config *c)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < c->space->nvalues; i++) {
		h ^= (uint64_t)c->v[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The JSON value of knob "k" in "c". */
static json_t *knob_to_json(const ts_config *c, const ts_knob *k)
{
	const int64_t *v = c->v + k->offset;
	json_t *a;

	switch (k->kind) {
	case TS_KNOB_SPLIT:
		a = json_array();
		for (int p = 0; p < k->nparts; p++)
			json_array_append_new(a, json_integer(v[p]));
		return a;
	case TS_KNOB_CHOICE:
		return json_string(k->choices[v[0]]);
	case TS_KNOB_BOOL:
		return json_boolean(v[0]);
	default:
		return json_integer(v[0]);
	}
}

char *ts_config_to_json(const ts_config *c)
{
	json_t *o = json_object();
	char *s, *r;

	for (int i = 0; i < c->space->nknobs; i++) {
		const ts_knob *k = c->space->knobs[i];
		json_object_set_new(o, k->name, knob_to_json(c, k));
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	r = ts_strdup(s);
	free(s);
	return r;
}

/* Read knob "k" of "c" from "j"; error messages name the knob. */
static ts_status knob_from_json(ts_ctx *ctx, ts_config *c, const ts_knob *k,
	json_t *j)
{
	int64_t *v = c->v + k->offset;

	switch (k->kind) {
	case TS_KNOB_SPLIT:
		if (!json_is_array(j) || (int)json_array_size(j) != k->nparts)
			return ts_ctx_set_error(ctx, "config: knob '%s' needs "
				"an array of %d factors", k->name, k->nparts);
		for (int p = 0; p < k->nparts; p++)
			v[p] = json_integer_value(json_array_get(j, p));
		if (!split_valid(k, v))
			return ts_ctx_set_error(ctx, "config: knob '%s': "
				"factors are not a valid split of %" PRId64,
				k->name, k->extent);
		return TS_OK;
	case TS_KNOB_CHOICE:
		for (int i = 0; json_is_string(j) && i < k->nchoices; i++)
			if (!strcmp(json_string_value(j), k->choices[i])) {
				v[0] = i;
				return TS_OK;
			}
		return ts_ctx_set_error(ctx, "config: knob '%s' has no option "
			"'%s'", k->name, json_is_string(j) ?
			json_string_value(j) : "(not a string)");
	case TS_KNOB_BOOL:
		if (!json_is_boolean(j))
			return ts_ctx_set_error(ctx, "config: knob '%s' needs "
				"true or false", k->name);
		v[0] = json_is_true(j);
		return TS_OK;
	default:
		if (!json_is_integer(j) || json_integer_value(j) < k->lo ||
		    json_integer_value(j) > k->hi)
			return ts_ctx_set_error(ctx, "config: knob '%s' needs an "
				"integer in [%" PRId64 ", %" PRId64 "]",
				k->name, k->lo, k->hi);
		v[0] = json_integer_value(j);
		return TS_OK;
	}
}

ts_config *ts_config_from_json(ts_ctx *ctx, const ts_space *sp,
	const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	ts_config *c = ts_config_new(sp);
	const char *key;
	json_t *val;

	if (!o || !json_is_object(o)) {
		ts_ctx_set_error(ctx, "config: not a JSON object (%s)",
			o ? "wrong type" : err.text);
		json_decref(o);
		return NULL;
	}
	json_object_foreach(o, key, val) {
		int k = ts_space_find(sp, key);
		if (k < 0) {
			ts_ctx_set_error(ctx, "config: unknown knob '%s' for "
				"space '%s'", key, sp->name);
			goto error;
		}
		if (knob_from_json(ctx, c, sp->knobs[k], val) < 0)
			goto error;
	}
	json_decref(o);
	return c;
error:
	json_decref(o);
	return NULL;
}

void ts_config_print(FILE *out, const ts_config *c)
{
	fprintf(out, "%s\n", ts_config_to_json(c));
}
