/* Tuning records: one JSON object per line of an append-only log (see
 * include/tessel/records.h and doc/records.md). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <tessel/backend.h>
#include <tessel/lower.h>
#include <tessel/records.h>
#include <tessel/search.h>
#include <tessel/tune.h>

#include "dsl/ir.h"
#include "support/support.h"


/* Return the key of "target": its name and a hash of its JSON. */
const char *ts_target_key(const ts_target *target)
{
	if (!target)
		return NULL;
	return ts_asprintf("%s-%016llx", target->name ? target->name : "target",
		(unsigned long long)ts_fnv1a(ts_target_to_json(target)));
}

/* Return the current time as ISO 8601 in UTC. */
static const char *timestamp_now(void)
{
	return ts_utc_now("%Y-%m-%dT%H:%M:%SZ");
}

/* A record of "dag" on "target", stamped now, its other fields empty. */
static ts_record *record_of(const ts_dag *dag, const ts_target *target)
{
	ts_record *r = ts_new(ts_record);

	r->version = TS_RECORD_VERSION;
	r->workload = ts_dag_hash(dag);
	r->dag = dag->name ? dag->name : "";
	r->target = ts_target_key(target);
	r->timestamp = timestamp_now();
	return r;
}

/* Return a record of "sch" (from "cfg") of "dag" measured on "target"
 * with result "res" and "seed", stamped now; NULL with a message in "ctx"
 * when a part is missing. */
ts_record *ts_record_new(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const ts_config *cfg,
	const ts_schedule *sch, const ts_measure_result *res, uint64_t seed)
{
	ts_record *r;

	if (!dag || !target || !sch || !res) {
		ts_ctx_set_error(ctx, "record: needs a DAG, a target, a "
			"schedule and a result");
		return NULL;
	}
	r = record_of(dag, target);
	r->config = cfg ? ts_config_to_json(cfg) : NULL;
	r->schedule = ts_schedule_to_json(sch);
	r->ntimes = res->nsamples;
	r->times = ts_new_atomic(double, res->nsamples + 1);
	if (res->nsamples)
		memcpy(r->times, res->samples, sizeof(double) *
			(size_t)res->nsamples);
	r->error = res->error;
	r->median_s = res->error == TS_ERR_NONE ? res->median_s : INFINITY;
	r->max_abs_err = res->max_abs_err;
	r->message = res->message;
	r->build_s = res->build_s;
	r->seed = seed;
	return r;
}

ts_record *ts_record_new_layout(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const char *layout, double total_s)
{
	ts_record *r;

	if (!dag || !target || !layout) {
		ts_ctx_set_error(ctx, "layout record: needs a network, a "
			"target and its layouts");
		return NULL;
	}
	r = record_of(dag, target);
	r->layout = layout;
	r->times = ts_new_atomic(double, 1);
	r->error = TS_ERR_NONE;
	r->median_s = total_s;
	r->max_abs_err = NAN;
	return r;
}

/* A JSON number for "v", or null when it is not finite. */
static json_t *json_finite(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Parse the JSON text "text" of a nested object, or JSON null. */
static json_t *json_nested(const char *text)
{
	json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	return v ? v : json_null();
}

/* Build the JSON object of "rec", keys in the documented order. */
static json_t *record_object(const ts_record *rec)
{
	json_t *o = json_object(), *times = json_array();

	for (int i = 0; i < rec->ntimes; i++)
		json_array_append_new(times, json_real(rec->times[i]));
	json_object_set_new(o, "version", json_integer(rec->version));
	json_object_set_new(o, "workload", json_string(rec->workload));
	json_object_set_new(o, "dag", json_string(rec->dag ? rec->dag : ""));
	json_object_set_new(o, "target", json_string(rec->target));
	json_object_set_new(o, "config", json_nested(rec->config));
	json_object_set_new(o, "schedule", json_nested(rec->schedule));
	if (rec->layout)
		json_object_set_new(o, "layout", json_nested(rec->layout));
	json_object_set_new(o, "times", times);
	json_object_set_new(o, "median_s", json_finite(rec->median_s));
	json_object_set_new(o, "error",
		json_string(ts_error_code_name(rec->error)));
	json_object_set_new(o, "max_abs_err", json_finite(rec->max_abs_err));
	if (rec->message)
		json_object_set_new(o, "message", json_string(rec->message));
	json_object_set_new(o, "build_s", json_real(rec->build_s));
	json_object_set_new(o, "timestamp",
		json_string(rec->timestamp ? rec->timestamp : ""));
	json_object_set_new(o, "seed", json_integer((json_int_t)rec->seed));
	if (rec->verified)
		json_object_set_new(o, "verified", json_true());
	return o;
}

/* Return "rec" as one line of compact JSON, or NULL when incomplete. */
char *ts_record_to_json(const ts_record *rec)
{
	json_t *o;
	char *s, *copy;

	if (!rec || !rec->workload || !rec->target ||
	    !(rec->schedule || rec->layout))
		return NULL;
	o = record_object(rec);
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!s)
		return NULL;
	copy = ts_strdup(s);
	free(s);
	return copy;
}

/* The string field "key" of "o", or NULL. */
static const char *get_string(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? ts_strdup(json_string_value(v)) : NULL;
}

/* The number field "key" of "o", "null_value" when null or missing. */
static double get_number(json_t *o, const char *key, double null_value)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : null_value;
}

/* The nested field "key" of "o" as compact JSON text, or NULL. */
static const char *get_nested(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	char *s, *copy;

	if (!json_is_object(v))
		return NULL;
	s = json_dumps(v, JSON_COMPACT);
	copy = s ? ts_strdup(s) : NULL;
	free(s);
	return copy;
}

/* Fill the times of "r" from the array field "times" of "o". */
static void get_times(json_t *o, ts_record *r)
{
	json_t *t = json_object_get(o, "times");
	size_t n = json_is_array(t) ? json_array_size(t) : 0;

	r->times = ts_new_atomic(double, n + 1);
	for (size_t i = 0; i < n; i++)
		if (json_is_number(json_array_get(t, i)))
			r->times[r->ntimes++] =
				json_number_value(json_array_get(t, i));
}

/* Fill "r" from the object "o"; TS_ERROR with a message in "ctx" naming
 * what is missing. */
static ts_status record_fields(ts_ctx *ctx, json_t *o, ts_record *r)
{
	json_t *v = json_object_get(o, "version");
	const char *err;

	if (!json_is_integer(v))
		return ts_ctx_set_error(ctx, "no integer 'version'");
	r->version = (int)json_integer_value(v);
	if (r->version != TS_RECORD_VERSION)
		return ts_ctx_set_error(ctx, "format version %d (this build "
			"reads version %d)", r->version, TS_RECORD_VERSION);
	r->layout = get_nested(o, "layout");
	r->schedule = get_nested(o, "schedule");
	if (!(r->workload = get_string(o, "workload")) ||
	    !(r->target = get_string(o, "target")) ||
	    !(r->schedule || r->layout) ||
	    !(err = get_string(o, "error")))
		return ts_ctx_set_error(ctx, "needs 'workload', 'target', "
			"'schedule' (or 'layout') and 'error'");
	if (ts_error_code_from_name(err, &r->error) < 0)
		return ts_ctx_set_error(ctx, "unknown error '%s'", err);
	r->dag = get_string(o, "dag");
	r->config = get_nested(o, "config");
	get_times(o, r);
	r->median_s = get_number(o, "median_s", INFINITY);
	r->max_abs_err = get_number(o, "max_abs_err", NAN);
	r->message = get_string(o, "message");
	r->build_s = get_number(o, "build_s", 0);
	r->timestamp = get_string(o, "timestamp");
	v = json_object_get(o, "seed");
	r->seed = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	r->verified = json_is_true(json_object_get(o, "verified"));
	return TS_OK;
}

/* Read the record in the JSON line "text"; NULL with a message in "ctx"
 * saying what is wrong. */
ts_record *ts_record_from_json(ts_ctx *ctx, const char *text)
{
	json_error_t jerr;
	json_t *o = text ? json_loads(text, 0, &jerr) : NULL;
	ts_record *r = ts_new(ts_record);
	ts_status st;

	if (!o) {
		ts_ctx_set_error(ctx, "not JSON (%s)", text ? jerr.text
			: "no text");
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		ts_ctx_set_error(ctx, "not a JSON object");
		return NULL;
	}
	st = record_fields(ctx, o, r);
	json_decref(o);
	return st < 0 ? NULL : r;
}

/* Whether the file open on "fd" is empty or ends with a newline. */
static bool ends_with_newline(int fd)
{
	struct stat st;
	char c = '\n';

	if (fstat(fd, &st) < 0 || st.st_size == 0)
		return true;
	return pread(fd, &c, 1, st.st_size - 1) != 1 || c == '\n';
}

/* Append "rec" as one line to the log "path" with a single write. */
ts_status ts_record_append(ts_ctx *ctx, const char *path,
	const ts_record *rec)
{
	char *json = ts_record_to_json(rec), *line;
	int fd;
	ssize_t k;

	if (!json)
		return ts_ctx_set_error(ctx, "record: incomplete record for "
			"'%s'", path);
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return ts_ctx_set_error(ctx, "cannot append to '%s': %s", path,
			strerror(errno));
	/* A partial last line (a writer killed mid-way) must not swallow
	 * this record: start a line of our own.  Two writers doing this at
	 * once leave an empty line, which readers skip. */
	line = ts_asprintf("%s%s\n", ends_with_newline(fd) ? "" : "\n", json);
	do
		k = write(fd, line, strlen(line));
	while (k < 0 && errno == EINTR);
	close(fd);
	if (k != (ssize_t)strlen(line))
		return ts_ctx_set_error(ctx, "cannot append to '%s': %s", path,
			k < 0 ? strerror(errno) : "short write");
	return TS_OK;
}

/* Return the contents of "path" (GC-allocated) and its length. */
static char *read_file(ts_ctx *ctx, const char *path, size_t *len)
{
	char *s = ts_read_file(path, len);

	if (!s)
		ts_ctx_set_error(ctx, "cannot read records '%s': %s", path,
			strerror(errno));
	return s;
}

/* Whether "s" holds only white space. */
static bool is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\r')
			return false;
	return true;
}

/* Parse line "lineno" "text" of "path" into "recs"; warn when skipped.
 * "partial": the line has no newline and is the last one. */
static void load_line(ts_ctx *ctx, const char *path, int lineno,
	const char *text, bool partial, ts_vec *recs)
{
	const char *saved = ts_ctx_error(ctx);
	ts_record *r;

	if (is_blank(text))
		return;
	r = ts_record_from_json(ctx, text);
	if (r) {
		r->line = lineno;
		ts_vec_push(recs, r);
		return;
	}
	if (partial)
		ts_ctx_warn(ctx, "%s:%d: skipped a partial last line", path,
			lineno);
	else
		ts_ctx_warn(ctx, "%s:%d: skipped: %s", path, lineno,
			ts_ctx_error(ctx));
	/* A bad line is the log's problem, not an error of the caller. */
	ts_ctx_clear_error(ctx);
	if (saved)
		ts_ctx_set_error(ctx, "%s", saved);
}

/* Read the records of the log "path" into "*n" records; warn in "ctx"
 * about each line skipped. */
ts_record **ts_records_load(ts_ctx *ctx, const char *path, int *n)
{
	size_t len = 0;
	char *text = read_file(ctx, path, &len);
	ts_vec recs = { NULL, 0, 0 };
	int lineno = 1;

	if (n)
		*n = 0;
	if (!text)
		return NULL;
	for (char *p = text; p < text + len; lineno++) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *line = ts_strndup(p, nl ? (size_t)(nl - p)
			: (size_t)(text + len - p));
		load_line(ctx, path, lineno, line, !nl, &recs);
		p = nl ? nl + 1 : text + len;
	}
	if (n)
		*n = recs.n;
	ts_vec_push(&recs, NULL);
	return (ts_record **)recs.v;
}

/* Return the valid record of lowest median among the "n" "recs" for
 * "workload" and "target" (NULL: any), or NULL. */
const ts_record *ts_records_best(ts_record *const *recs, int n,
	const char *workload, const char *target)
{
	const ts_record *best = NULL;

	for (int i = 0; i < n; i++) {
		const ts_record *r = recs[i];
		if (!r || r->layout || r->error != TS_ERR_NONE ||
		    !isfinite(r->median_s) ||
		    (workload && strcmp(r->workload, workload)) ||
		    (target && strcmp(r->target, target)))
			continue;
		/* a verified record beats any unverified one */
		if (!best || (r->verified && !best->verified) ||
		    (r->verified == best->verified &&
		     r->median_s < best->median_s))
			best = r;
	}
	return best;
}

/* Replay the schedule of "rec" on "dag", which must be its workload. */
ts_schedule *ts_record_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_record *rec)
{
	const char *hash;

	if (!dag || !rec)
		return NULL;
	hash = ts_dag_hash(dag);
	if (strcmp(rec->workload, hash)) {
		ts_ctx_set_error(ctx, "record (line %d) is for workload %s, "
			"not '%s' (%s)", rec->line, rec->workload,
			dag->name ? dag->name : "?", hash);
		return NULL;
	}
	return ts_schedule_from_json(ctx, dag, rec->schedule);
}

/* Set "*out" to the schedule of the best record of "path" for "dag" on
 * "target", or NULL when there is none. */
ts_status ts_records_best_schedule(ts_ctx *ctx, const ts_dag *dag,
	const ts_target *target, const char *path, ts_schedule **out)
{
	int n = 0;
	ts_record **recs = ts_records_load(ctx, path, &n);
	const ts_record *best;

	*out = NULL;
	if (!recs)
		return TS_ERROR;
	best = ts_records_best(recs, n, ts_dag_hash(dag),
		ts_target_key(target));
	if (!best)
		return TS_OK;
	*out = ts_record_schedule(ctx, dag, best);
	if (!*out)
		return ts_ctx_set_error(ctx, "%s:%d: the best record does not "
			"replay: %s", path, best->line, ts_ctx_error(ctx));
	return TS_OK;
}

/* Rounds of the comparison of a record with the static schedule, and
 * the seconds of each module's share of a round. */
enum { DUEL_ROUNDS = 5 };
#define DUEL_ROUND_S 0.02

/* Time "a" and "b" of "dag" compiled with "opt" against each other on
 * seeded inputs, interleaved, into "t"[0] and "t"[1]. */
static ts_status duel(ts_ctx *ctx, const ts_dag *dag, const ts_func *a,
	const ts_func *b, const ts_compile_options *opt, double t[2])
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	int n = dag->ninputs + dag->noutputs;
	ts_array **args = ts_new_array(ts_array *, n + 1);
	ts_module *m[2] = { NULL, NULL };
	ts_status st = TS_ERROR;

	if (!in)
		return TS_ERROR;
	for (int i = 0; i < n; i++)
		if (!(args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(
		    ctx, dag->outputs[i - dag->ninputs])))
			return TS_ERROR;
	if ((m[0] = ts_module_compile(ctx, a, opt)) &&
	    (m[1] = ts_module_compile(ctx, b, opt)) &&
	    ts_module_time_interleaved(m, 2, args, DUEL_ROUNDS, DUEL_ROUND_S,
	    t) == TS_OK)
		st = TS_OK;
	ts_module_free(m[0]);
	ts_module_free(m[1]);
	return st;
}

bool ts_record_beats_static(ts_ctx *ctx, const ts_dag *dag,
	const ts_func *rec, const ts_func *st, const ts_target *target,
	int threads, const char **why)
{
	ts_compile_options opt = ts_compile_options_for(target);
	double t[2];
	const char *w;
	bool wins = false;

	opt.threads = threads;
	if (!rec || !st || duel(ctx, dag, rec, st, &opt, t) < 0) {
		w = ts_asprintf("does not run here (%s): kept the static "
			"schedule", ts_ctx_error(ctx) ? ts_ctx_error(ctx) :
			"out of memory");
		ts_ctx_clear_error(ctx);
	} else if ((wins = t[0] * (1 + TS_TUNE_MARGIN) < t[1])) {
		w = ts_asprintf("against the static schedule, %d interleaved "
			"rounds: %.4g ms against %.4g ms: kept the record "
			"(%.2fx)", DUEL_ROUNDS, t[0] * 1e3, t[1] * 1e3,
			t[1] / t[0]);
	} else if (t[0] < t[1]) {
		w = ts_asprintf("against the static schedule, %d interleaved "
			"rounds: %.4g ms against %.4g ms: kept the static "
			"schedule (the record is %.2fx faster, within the %.0f%% "
			"that rounds cannot tell apart)", DUEL_ROUNDS,
			t[0] * 1e3, t[1] * 1e3, t[1] / t[0],
			TS_TUNE_MARGIN * 100);
	} else {
		w = ts_asprintf("against the static schedule, %d interleaved "
			"rounds: %.4g ms against %.4g ms: kept the static "
			"schedule (the record is %.2fx slower)", DUEL_ROUNDS,
			t[0] * 1e3, t[1] * 1e3, t[0] / t[1]);
	}
	if (why)
		*why = w;
	return wins;
}

/* The schedule of "best", a record of "log" for "dag", when it beats
 * the static baseline "st" with "threads" threads, else "st"; "*why"
 * says which. */
static ts_schedule *record_or_static(ts_ctx *ctx, const ts_dag *dag,
	const char *log, const ts_record *best, ts_schedule *st, int threads,
	const char **why)
{
	ts_schedule *sch = ts_record_schedule(ctx, dag, best);
	ts_func *frec = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_func *fst = frec ? ts_lower(ctx, dag, st) : NULL;
	const char *verdict = NULL;
	bool wins;

	if (!frec || !fst) {
		ts_ctx_set_error(ctx, "%s:%d: the best record does not replay: "
			"%s", log, best->line, ts_ctx_error(ctx));
		return NULL;
	}
	wins = ts_record_beats_static(ctx, dag, frec, fst, NULL, threads,
		&verdict);
	*why = ts_asprintf("schedule of the record at %s:%d (median %.4g ms) "
		"%s", log, best->line, best->median_s * 1e3, verdict);
	return wins ? sch : st;
}

ts_schedule *ts_records_choose(ts_ctx *ctx, const ts_dag *dag,
	const char *log, int threads, const char **why)
{
	const ts_target *host = ts_target_host(ctx);
	const ts_target *tg = ts_records_target(host, threads);
	const ts_record *best;
	ts_record **recs;
	ts_schedule *st;
	const char *w = NULL;
	int n = 0;

	if (!tg || !(recs = ts_records_load(ctx, log, &n)))
		return NULL;
	best = ts_records_best(recs, n, ts_dag_hash(dag), ts_target_key(tg));
	if (!(st = ts_static_baseline(ctx, dag, host, threads)))
		return NULL;
	if (!best)
		w = ts_asprintf("no valid record in %s for workload %s on "
			"target %s: using the static schedule", log,
			ts_dag_hash(dag), ts_target_key(tg));
	else if (!(st = record_or_static(ctx, dag, log, best, st, threads,
	    &w)))
		return NULL;
	if (why)
		*why = w;
	return st;
}

const ts_target *ts_records_target(const ts_target *t, int threads)
{
	ts_target *k;

	if (!t || threads <= 0 || t->kind != TS_TARGET_CPU)
		return t;
	k = ts_new(ts_target);
	*k = *t;
	k->cpu.cores = threads;
	return k;
}
