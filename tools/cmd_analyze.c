/* tessel analyze: print what the analysis knows about every stage of a .tsl
 * program: class, instance set, accesses, reuse axes, counts and the
 * reasons for the class; as text, or as JSON (doc/analyze-json.md). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tools/commands.h"

/* Print the usage of the verb to "out". */
static void analyze_usage(FILE *out)
{
	fprintf(out, "usage: tessel analyze FILE.tsl [--json]\n\n"
		"Analyse every stage of FILE.tsl: class (direct, "
		"simple_reduction,\ncomplex_reduction, location_tunable), "
		"instance set, accesses with their\nreuse axes and strides, "
		"operation counts and bytes, consumers, and the\nreasons for "
		"the class, one line each.\n\n"
		"  --json   print one JSON object (see doc/analyze-json.md)\n"
		"  --help   this text\n\n"
		"exit codes: 0 success, 2 bad usage, a file that does not "
		"parse, or an\naccess out of bounds\n");
}

/* Print the strides of "ai" on the axes of "s" to "out" (with the block
 * they hold within, if any). */
static void print_strides(FILE *out, const ts_stage *s,
	const ts_access_info *ai)
{
	fprintf(out, "strides");
	for (int a = 0; a < ts_stage_ndim(s) + ts_stage_nraxes(s); a++) {
		if (ai->stride[a] == TS_STRIDE_UNKNOWN)
			fprintf(out, " %s=?",
				ts_axis_name(ts_stage_axis(s, a)));
		else
			fprintf(out, " %s=%lld",
				ts_axis_name(ts_stage_axis(s, a)),
				(long long)ai->stride[a]);
		if (ai->stride[a] != TS_STRIDE_UNKNOWN && ai->block[a] > 0)
			fprintf(out, " (within %lld)", (long long)ai->block[a]);
	}
}

/* Print the access "ai" of "s" as one line to "out". */
static void print_access(FILE *out, const ts_stage *s,
	const ts_access_info *ai)
{
	bool any = false;

	fprintf(out, "  %s %s:", ai->write ? "write" : "read ", ai->text);
	for (int a = 0; a < ts_stage_ndim(s); a++)
		if (ai->reuse[a]) {
			fprintf(out, "%s%s", any ? ", " : " reuse along ",
				ts_axis_name(ts_stage_axis(s, a)));
			any = true;
		}
	fprintf(out, "%s%s%s ", any ? ";" : "", ai->affine ? "" :
		" data-dependent;", ai->guarded ? " guarded;" : "");
	print_strides(out, s, ai);
	if (ai->contiguous_axis >= 0)
		fprintf(out, "; contiguous %s",
			ts_axis_name(ts_stage_axis(s, ai->contiguous_axis)));
	fprintf(out, "; %s%lld distinct\n", ai->distinct_exact ? "" : "<= ",
		(long long)ai->distinct);
}

/* Print the counts of "si" to "out". */
static void print_counts(FILE *out, const ts_stage_info *si)
{
	const ts_counts *c = &si->counts;

	fprintf(out, "  flops %lld (add %lld, mul %lld, fma %lld, div %lld, "
		"special %lld, compare %lld)\n", (long long)c->flops,
		(long long)c->add, (long long)c->mul, (long long)c->fma,
		(long long)c->div, (long long)c->special,
		(long long)c->compare);
	fprintf(out, "  bytes read %lld, written %lld, intensity %.3f "
		"flops/byte\n", (long long)c->bytes_read,
		(long long)c->bytes_written, c->intensity);
}

/* Print stage "si" of "di" as text to "out". */
static void print_stage(FILE *out, const ts_dag_info *di,
	const ts_stage_info *si)
{
	const ts_stage *s = si->stage;

	fprintf(out, "stage %s: %s\n", ts_stage_name(s),
		ts_class_name(si->klass));
	fprintf(out, "  domain %s\n", si->domain);
	for (int i = 0; i < si->naccesses; i++)
		print_access(out, s, &si->accesses[i]);
	print_counts(out, si);
	for (int k = 0; k < si->nconsumers; k++)
		fprintf(out, "  consumer %s%s\n",
			ts_stage_name(ts_dag_stage(di->dag, si->consumers[k])),
			si->fusable[k] ? " (fusable)" : "");
	for (int r = 0; r < si->nreasons; r++)
		fprintf(out, "  - %s\n", si->reasons[r]);
}

/* Return the names of the axes of "s" flagged in "flags" as a JSON
 * array. */
static json_t *axes_json(const ts_stage *s, const bool *flags)
{
	json_t *arr = json_array();

	for (int a = 0; a < ts_stage_ndim(s); a++)
		if (flags[a])
			json_array_append_new(arr,
				json_string(ts_axis_name(ts_stage_axis(s, a))));
	return arr;
}

/* Return the strides of "ai" as an object axis -> stride (null when
 * unknown). */
static json_t *strides_json(const ts_stage *s, const ts_access_info *ai)
{
	json_t *obj = json_object();

	for (int a = 0; a < ts_stage_ndim(s) + ts_stage_nraxes(s); a++)
		json_object_set_new(obj, ts_axis_name(ts_stage_axis(s, a)),
			ai->stride[a] == TS_STRIDE_UNKNOWN
				? json_null()
				: json_integer(ai->stride[a]));
	return obj;
}

/* Return the access "ai" of "s" as JSON. */
static json_t *access_json(const ts_stage *s, const ts_access_info *ai)
{
	json_t *o = json_object();

	json_object_set_new(o, "tensor",
		json_string(ts_tensor_name(ai->tensor)));
	json_object_set_new(o, "kind", json_string(ai->write ? "write"
		: "read"));
	json_object_set_new(o, "text", json_string(ai->text));
	json_object_set_new(o, "relation", json_string(ai->relation));
	json_object_set_new(o, "affine", json_boolean(ai->affine));
	json_object_set_new(o, "guarded", json_boolean(ai->guarded));
	json_object_set_new(o, "in_reduction",
		json_boolean(ai->in_reduction));
	json_object_set_new(o, "reuse_axes", axes_json(s, ai->reuse));
	json_object_set_new(o, "strides", strides_json(s, ai));
	json_object_set_new(o, "contiguous_axis",
		ai->contiguous_axis < 0
			? json_null()
			: json_string(ts_axis_name(
				  ts_stage_axis(s, ai->contiguous_axis))));
	json_object_set_new(o, "distinct", json_integer(ai->distinct));
	json_object_set_new(o, "distinct_exact",
		json_boolean(ai->distinct_exact));
	return o;
}

/* Return the operation counts of "c" as JSON. */
static json_t *counts_json(const ts_counts *c)
{
	return json_pack("{sI sI sI sI sI sI sI}", "add", (json_int_t)c->add,
		"mul", (json_int_t)c->mul, "fma", (json_int_t)c->fma,
		"div", (json_int_t)c->div, "special", (json_int_t)c->special,
		"compare", (json_int_t)c->compare,
		"other", (json_int_t)c->other);
}

/* Return the consumers of "si" as JSON. */
static json_t *consumers_json(const ts_dag_info *di, const ts_stage_info *si)
{
	json_t *arr = json_array();

	for (int k = 0; k < si->nconsumers; k++)
		json_array_append_new(arr,
			json_pack("{ss sb}", "name",
				ts_stage_name(ts_dag_stage(di->dag,
					si->consumers[k])),
				"fusable", si->fusable[k]));
	return arr;
}

/* Return stage "si" of "di" as JSON. */
static json_t *stage_json(const ts_dag_info *di, const ts_stage_info *si)
{
	json_t *o = json_object(), *acc = json_array(), *rs = json_array();

	for (int i = 0; i < si->naccesses; i++)
		json_array_append_new(acc, access_json(si->stage,
			&si->accesses[i]));
	for (int r = 0; r < si->nreasons; r++)
		json_array_append_new(rs, json_string(si->reasons[r]));
	json_object_set_new(o, "name", json_string(ts_stage_name(si->stage)));
	json_object_set_new(o, "class", json_string(ts_class_name(si->klass)));
	json_object_set_new(o, "domain", json_string(si->domain));
	json_object_set_new(o, "accesses", acc);
	json_object_set_new(o, "reuse_axes", axes_json(si->stage,
		si->reuse_axes));
	json_object_set_new(o, "flops", json_integer(si->counts.flops));
	json_object_set_new(o, "counts", counts_json(&si->counts));
	json_object_set_new(o, "bytes_read",
		json_integer(si->counts.bytes_read));
	json_object_set_new(o, "bytes_written",
		json_integer(si->counts.bytes_written));
	json_object_set_new(o, "intensity", json_real(si->counts.intensity));
	json_object_set_new(o, "data_dependent",
		json_boolean(si->data_dependent));
	json_object_set_new(o, "inlinable", json_boolean(si->inlinable));
	json_object_set_new(o, "consumers", consumers_json(di, si));
	json_object_set_new(o, "reasons", rs);
	return o;
}

/* Print "di" as one JSON object to "out". */
static void print_json(FILE *out, const char *file, const ts_dag_info *di)
{
	json_t *root = json_object(), *stages = json_array();

	for (int i = 0; i < di->nstages; i++)
		json_array_append_new(stages, stage_json(di, di->stages[i]));
	json_object_set_new(root, "file", json_string(file));
	json_object_set_new(root, "stages", stages);
	json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
}

/* Parse the options of "argv" into "file" and "json"; return whether the
 * command line is valid, printing help when asked ("*help"). */
static bool analyze_args(int argc, char **argv, const char **file,
	bool *json, bool *help)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			*json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			*help = true;
		else if (argv[i][0] == '-' || *file)
			return false;
		else
			*file = argv[i];
	}
	return *help || *file;
}

/* Run "tessel analyze" with the "argc" arguments "argv" (argv[0] is the
 * verb). */
int ts_cmd_analyze(int argc, char **argv)
{
	const char *file = NULL;
	bool json = false, help = false;
	ts_ctx *ctx;
	ts_dag *dag;
	ts_dag_info *di;

	if (!analyze_args(argc, argv, &file, &json, &help) || help) {
		analyze_usage(help ? stdout : stderr);
		return help ? TS_EXIT_OK : TS_EXIT_USAGE;
	}
	ctx = ts_ctx_alloc();
	dag = ts_tool_load(ctx, file);
	di = dag ? ts_analyze_dag(ctx, dag) : NULL;
	if (!di) {
		ts_tool_report(ctx);
		ts_ctx_free(ctx);
		return TS_EXIT_USAGE;
	}
	ts_tool_warnings(ctx);
	if (json)
		print_json(stdout, file, di);
	else
		for (int i = 0; i < di->nstages; i++)
			print_stage(stdout, di, di->stages[i]);
	ts_ctx_free(ctx);
	return TS_EXIT_OK;
}
