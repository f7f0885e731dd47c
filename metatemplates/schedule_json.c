/* Schedules as text and as JSON: the print, to_json and from_json
 * operations of each step kind, and the whole-schedule entry points. */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "metatemplates/schedule_ops.h"

static const char *tail_names[TS_TAIL_COUNT] = {
	[TS_TAIL_GUARD] = "guard", [TS_TAIL_PARTITION] = "partition",
};

/* Return the string member "key" of "obj" (GC copy), or NULL with an
 * error naming "what" when it is missing. */
static const char *get_string(ts_ctx *ctx, const json_t *obj,
	const char *key, const char *what)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_string(v)) {
		ts_ctx_set_error(ctx, "schedule JSON: %s step needs a string "
			"'%s'", what, key);
		return NULL;
	}
	return ts_strdup(json_string_value(v));
}

void ts_step_split_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s by %" PRId64 "%s -> %s.o, %s.i", st->loop,
		st->factor, st->tail == TS_TAIL_PARTITION ? " partition" : "",
		st->loop, st->loop);
}

void ts_step_split_to_json(json_t *obj, const ts_step *st)
{
	json_object_set_new(obj, "loop", json_string(st->loop));
	json_object_set_new(obj, "factor", json_integer(st->factor));
	json_object_set_new(obj, "tail", json_string(
		(unsigned)st->tail < TS_TAIL_COUNT ? tail_names[st->tail] : "?"));
}

ts_status ts_step_split_from_json(ts_ctx *ctx, const json_t *obj, ts_step *st)
{
	json_t *f = json_object_get(obj, "factor");
	json_t *t = json_object_get(obj, "tail");

	if (!(st->loop = get_string(ctx, obj, "loop", "split")))
		return TS_ERROR;
	if (!json_is_integer(f))
		return ts_ctx_set_error(ctx, "schedule JSON: split step needs "
			"an integer 'factor'");
	st->factor = json_integer_value(f);
	st->tail = TS_TAIL_GUARD;
	if (t && json_is_string(t) &&
	    strcmp(json_string_value(t), "partition") == 0)
		st->tail = TS_TAIL_PARTITION;
	else if (t && (!json_is_string(t) ||
		 strcmp(json_string_value(t), "guard") != 0))
		return ts_ctx_set_error(ctx, "schedule JSON: split step: "
			"'tail' is 'guard' or 'partition'");
	return TS_OK;
}

void ts_step_reorder_print(ts_buf *b, const ts_step *st)
{
	for (int i = 0; i < st->nloops; i++)
		ts_buf_printf(b, "%s%s", i ? ", " : " ", st->loops[i]);
}

void ts_step_reorder_to_json(json_t *obj, const ts_step *st)
{
	json_t *a = json_array();

	for (int i = 0; i < st->nloops; i++)
		json_array_append_new(a, json_string(st->loops[i]));
	json_object_set_new(obj, "loops", a);
}

ts_status ts_step_reorder_from_json(ts_ctx *ctx, const json_t *obj,
	ts_step *st)
{
	json_t *a = json_object_get(obj, "loops");

	if (!json_is_array(a))
		return ts_ctx_set_error(ctx, "schedule JSON: reorder step "
			"needs an array 'loops'");
	st->nloops = (int)json_array_size(a);
	st->loops = ts_new_array(const char *, st->nloops + 1);
	for (int i = 0; i < st->nloops; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_string(v))
			return ts_ctx_set_error(ctx, "schedule JSON: reorder "
				"step: 'loops' holds names");
		st->loops[i] = ts_strdup(json_string_value(v));
	}
	return TS_OK;
}

void ts_step_fuse_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s, %s -> %s@%s", st->loop, st->loop2, st->loop,
		st->loop2);
}

void ts_step_fuse_to_json(json_t *obj, const ts_step *st)
{
	json_object_set_new(obj, "loop", json_string(st->loop));
	json_object_set_new(obj, "loop2", json_string(st->loop2));
}

ts_status ts_step_fuse_from_json(ts_ctx *ctx, const json_t *obj, ts_step *st)
{
	if (!(st->loop = get_string(ctx, obj, "loop", "fuse")) ||
	    !(st->loop2 = get_string(ctx, obj, "loop2", "fuse")))
		return TS_ERROR;
	return TS_OK;
}

void ts_step_target_loop_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s %s", st->target, st->loop);
}

void ts_step_target_loop_to_json(json_t *obj, const ts_step *st)
{
	json_object_set_new(obj, "target", json_string(st->target));
	json_object_set_new(obj, "loop", json_string(st->loop));
}

ts_status ts_step_target_loop_from_json(ts_ctx *ctx, const json_t *obj,
	ts_step *st)
{
	if (!(st->target = get_string(ctx, obj, "target", "compute_at")) ||
	    !(st->loop = get_string(ctx, obj, "loop", "compute_at")))
		return TS_ERROR;
	return TS_OK;
}

void ts_step_plain_print(ts_buf *b, const ts_step *st)
{
}

void ts_step_plain_to_json(json_t *obj, const ts_step *st)
{
}

ts_status ts_step_plain_from_json(ts_ctx *ctx, const json_t *obj,
	ts_step *st)
{
	return TS_OK;
}

void ts_step_loop_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s", st->loop);
}

void ts_step_loop_to_json(json_t *obj, const ts_step *st)
{
	json_object_set_new(obj, "loop", json_string(st->loop));
}

ts_status ts_step_loop_from_json(ts_ctx *ctx, const json_t *obj, ts_step *st)
{
	st->loop = get_string(ctx, obj, "loop", ts_step_kind_name(st->kind));
	return st->loop ? TS_OK : TS_ERROR;
}

void ts_step_cache_read_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s at %s", st->target, st->loop);
	if (!st->nperm)
		return;
	ts_buf_puts(b, " layout [");
	for (int i = 0; i < st->nperm; i++)
		ts_buf_printf(b, "%s%d", i ? ", " : "", st->perm[i]);
	ts_buf_putc(b, ']');
}

void ts_step_cache_read_to_json(json_t *obj, const ts_step *st)
{
	json_t *a = json_array();

	json_object_set_new(obj, "target", json_string(st->target));
	json_object_set_new(obj, "loop", json_string(st->loop));
	for (int i = 0; i < st->nperm; i++)
		json_array_append_new(a, json_integer(st->perm[i]));
	json_object_set_new(obj, "perm", a);
}

ts_status ts_step_cache_read_from_json(ts_ctx *ctx, const json_t *obj,
	ts_step *st)
{
	json_t *a = json_object_get(obj, "perm");

	if (!(st->target = get_string(ctx, obj, "target", "cache_read")) ||
	    !(st->loop = get_string(ctx, obj, "loop", "cache_read")))
		return TS_ERROR;
	if (a && (!json_is_array(a) || json_array_size(a) > TS_MAX_DIMS))
		return ts_ctx_set_error(ctx, "schedule JSON: cache_read step: "
			"'perm' is an array of at most %d integers",
			TS_MAX_DIMS);
	st->nperm = a ? (int)json_array_size(a) : 0;
	for (int i = 0; i < st->nperm; i++)
		st->perm[i] = (int)json_integer_value(json_array_get(a, i));
	return TS_OK;
}

void ts_step_bind_print(ts_buf *b, const ts_step *st)
{
	ts_buf_printf(b, " %s %s", st->loop, ts_bind_name(st->bind));
}

void ts_step_bind_to_json(json_t *obj, const ts_step *st)
{
	json_object_set_new(obj, "loop", json_string(st->loop));
	json_object_set_new(obj, "bind", json_string(ts_bind_name(st->bind)));
}

ts_status ts_step_bind_from_json(ts_ctx *ctx, const json_t *obj, ts_step *st)
{
	const char *b;

	if (!(st->loop = get_string(ctx, obj, "loop", "bind")) ||
	    !(b = get_string(ctx, obj, "bind", "bind")))
		return TS_ERROR;
	for (int k = TS_BIND_NONE + 1; k < TS_BIND_COUNT; k++)
		if (strcmp(ts_bind_name(k), b) == 0) {
			st->bind = k;
			return TS_OK;
		}
	return ts_ctx_set_error(ctx, "schedule JSON: bind step: unknown "
		"binding '%s'", b);
}

char *ts_step_to_string(const ts_step *st)
{
	const struct ts_step_ops *ops = ts_step_ops_of(st->kind);
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s: %s", st->stage ? st->stage : "?",
		ops ? ops->name : "?");
	if (ops)
		ops->print(&b, st);
	return b.s;
}

char *ts_schedule_to_string(const ts_schedule *sch)
{
	ts_buf b;

	ts_buf_init(&b);
	for (int i = 0; i < sch->nsteps; i++)
		ts_buf_printf(&b, "%s\n", ts_step_to_string(&sch->steps[i]));
	return b.s;
}

void ts_schedule_print(FILE *out, const ts_schedule *sch)
{
	fputs(ts_schedule_to_string(sch), out);
}

/* Return the JSON object of step "st" (a new reference). */
static json_t *step_to_json(const ts_step *st)
{
	json_t *obj = json_object();

	json_object_set_new(obj, "kind", json_string(ts_step_tag(st->kind)));
	json_object_set_new(obj, "stage", json_string(st->stage));
	ts_step_ops_of(st->kind)->to_json(obj, st);
	return obj;
}

char *ts_schedule_to_json(const ts_schedule *sch)
{
	json_t *root = json_object(), *steps = json_array();
	char *s, *r;

	json_object_set_new(root, "dag", json_string(ts_dag_hash(sch->dag)));
	for (int i = 0; i < sch->nsteps; i++)
		json_array_append_new(steps, step_to_json(&sch->steps[i]));
	json_object_set_new(root, "steps", steps);
	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!s)
		return NULL;
	r = ts_strdup(s);
	free(s);
	return r;
}

const char *ts_schedule_hash(const ts_schedule *sch)
{
	char *json = sch ? ts_schedule_to_json(sch) : NULL;

	return json ? ts_asprintf("%016" PRIx64, ts_fnv1a(json)) : NULL;
}

/* Read one step from "obj" into "st". */
static ts_status step_from_json(ts_ctx *ctx, const json_t *obj, ts_step *st)
{
	json_t *k = json_object_get(obj, "kind");
	int kind;

	memset(st, 0, sizeof(*st));
	if (!json_is_object(obj) || !json_is_string(k))
		return ts_ctx_set_error(ctx, "schedule JSON: a step is an "
			"object with a string 'kind'");
	for (kind = 0; kind < TS_STEP_KIND_COUNT; kind++)
		if (strcmp(ts_step_tag(kind), json_string_value(k)) == 0)
			break;
	if (kind == TS_STEP_KIND_COUNT)
		return ts_ctx_set_error(ctx, "schedule JSON: unknown step "
			"kind '%s'", json_string_value(k));
	st->kind = kind;
	if (!(st->stage = get_string(ctx, obj, "stage",
	    ts_step_kind_name(kind))))
		return TS_ERROR;
	return ts_step_ops_of(kind)->from_json(ctx, obj, st);
}

/* Replay the steps of the JSON array "steps" on "sch". */
static ts_status replay(ts_schedule *sch, const json_t *steps)
{
	for (size_t i = 0; i < json_array_size(steps); i++) {
		ts_step st;
		if (step_from_json(sch->ctx, json_array_get(steps, i), &st) < 0)
			return TS_ERROR;
		if (ts_schedule_apply(sch, &st) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

ts_schedule *ts_schedule_from_json(ts_ctx *ctx, const ts_dag *dag,
	const char *text)
{
	json_error_t jerr;
	json_t *root, *steps, *h;
	ts_schedule *sch = NULL;

	if (!dag || !text)
		return NULL;
	root = json_loads(text, 0, &jerr);
	if (!root) {
		ts_ctx_set_error(ctx, "schedule JSON: line %d: %s", jerr.line,
			jerr.text);
		return NULL;
	}
	/* What tessel schedule --json prints: the steps are its "schedule". */
	if (!json_object_get(root, "steps") &&
	    json_is_object(json_object_get(root, "schedule"))) {
		json_t *inner = json_incref(json_object_get(root, "schedule"));
		json_decref(root);
		root = inner;
	}
	h = json_object_get(root, "dag");
	if (h && (!json_is_string(h) ||
	    strcmp(json_string_value(h), ts_dag_hash(dag)) != 0)) {
		ts_ctx_set_error(ctx, "schedule JSON: written for the DAG %s, "
			"not for '%s' (%s)", json_is_string(h) ?
			json_string_value(h) : "?", dag->name ? dag->name : "",
			ts_dag_hash(dag));
		goto error;
	}
	steps = json_object_get(root, "steps");
	if (!json_is_array(steps)) {
		ts_ctx_set_error(ctx, "schedule JSON: needs an array 'steps'");
		goto error;
	}
	sch = ts_schedule_new(ctx, dag);
	if (replay(sch, steps) < 0)
		sch = NULL;
error:
	json_decref(root);
	return sch;
}
