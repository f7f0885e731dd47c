/* Hardware descriptions as JSON: one flat object per target, caches as
 * small objects, sizes in KiB.  One table of fields drives both reading
 * and writing, so the two cannot drift apart. */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include <tessel/target.h>

#include "support/support.h"

enum field_type {
	F_STR,		/* const char * */
	F_INT,		/* int */
	F_KIB,		/* int64_t bytes, written in KiB */
	F_MIB,		/* int64_t bytes, written in MiB */
	F_REAL,		/* double */
	F_CACHE,	/* ts_target_cache: {"kib": n, "shared_by": m,
			 * "ways": w (optional), ...} */
};

/* One JSON field: its key, the kind of target it belongs to, its type,
 * where it lives in ts_target, and whether it must be present. */
struct field {
	const char *key;
	ts_target_kind kind;
	enum field_type type;
	size_t offset;
	bool required;
};

#define CPU(key, type, member, req) \
	{ key, TS_TARGET_CPU, type, offsetof(ts_target, cpu.member), req }
#define GPU(key, type, member, req) \
	{ key, TS_TARGET_GPU, type, offsetof(ts_target, gpu.member), req }

/* The fields after "name", "kind" and "description", in the order they
 * are written. */
static const struct field fields[] = {
	CPU("arch", F_STR, arch, true),
	CPU("triple", F_STR, triple, true),
	CPU("llvm_cpu", F_STR, llvm_cpu, true),
	CPU("llvm_features", F_STR, llvm_features, false),
	CPU("cores", F_INT, cores, true),
	CPU("threads_per_core", F_INT, threads_per_core, true),
	CPU("simd_bytes", F_INT, simd_bytes, true),
	CPU("fma_units", F_INT, fma_units, true),
	CPU("vector_registers", F_INT, vector_registers, true),
	CPU("l1d", F_CACHE, l1d, true),
	CPU("l2", F_CACHE, l2, true),
	CPU("l3", F_CACHE, l3, false),
	CPU("line_bytes", F_INT, line_bytes, true),
	CPU("frequency_ghz", F_REAL, frequency_ghz, false),
	CPU("peak_gflops_f32_core", F_REAL, peak_gflops_f32_core, false),
	CPU("peak_gflops_f32", F_REAL, peak_gflops_f32, false),
	CPU("bandwidth_gbs", F_REAL, bandwidth_gbs, false),
	CPU("dram_gbs_core", F_REAL, dram_gbs_core, false),
	CPU("dram_latency_ns", F_REAL, dram_latency_ns, false),
	CPU("source", F_STR, source, false),
	GPU("compute_capability", F_STR, arch, true),
	GPU("sm_count", F_INT, sm_count, true),
	GPU("warp_size", F_INT, warp_size, true),
	GPU("max_threads_per_block", F_INT, max_threads_per_block, true),
	GPU("max_threads_per_sm", F_INT, max_threads_per_sm, true),
	GPU("max_blocks_per_sm", F_INT, max_blocks_per_sm, false),
	GPU("shared_per_block_kib", F_KIB, shared_per_block, true),
	GPU("shared_per_block_optin_kib", F_KIB, shared_per_block_optin,
	    false),
	GPU("shared_per_sm_kib", F_KIB, shared_per_sm, true),
	GPU("registers_per_block", F_INT, registers_per_block, true),
	GPU("registers_per_sm", F_INT, registers_per_sm, true),
	GPU("l2_kib", F_KIB, l2_size, true),
	GPU("memory_mib", F_MIB, memory_size, false),
	GPU("clock_ghz", F_REAL, clock_ghz, false),
	GPU("peak_tflops_f32", F_REAL, peak_tflops_f32, false),
	GPU("peak_tflops_f16", F_REAL, peak_tflops_f16, false),
	GPU("peak_tflops_tensor_f16", F_REAL, peak_tflops_tensor_f16, false),
	GPU("bandwidth_gbs", F_REAL, bandwidth_gbs, false),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* Return the field "key" for targets of "kind", else any field "key",
 * else NULL. */
static const struct field *find_field(const char *key, ts_target_kind kind)
{
	const struct field *any = NULL;

	for (size_t i = 0; i < NFIELDS; i++) {
		if (strcmp(fields[i].key, key) != 0)
			continue;
		if (fields[i].kind == kind)
			return &fields[i];
		any = &fields[i];
	}
	return any;
}

/* Read the integer "v" of field "key" in "where" into "out". */
static ts_status read_int(ts_ctx *ctx, const char *where, const char *key,
	json_t *v, int64_t *out)
{
	if (!json_is_integer(v))
		return ts_ctx_set_error(ctx, "%s: field '%s' must be an integer",
			where, key);
	*out = json_integer_value(v);
	if (*out < 0 || *out > ((int64_t)1 << 40))
		return ts_ctx_set_error(ctx, "%s: field '%s' is out of range: "
			"%lld", where, key, (long long)*out);
	return TS_OK;
}

/* Read the cache object "v" of field "key" in "where" into "c". */
static ts_status read_cache(ts_ctx *ctx, const char *where, const char *key,
	json_t *v, ts_target_cache *c)
{
	const char *k;
	json_t *x;
	int64_t n;

	if (!json_is_object(v))
		return ts_ctx_set_error(ctx, "%s: field '%s' must be an object "
			"{\"kib\": size, \"shared_by\": cores}", where, key);
	c->shared_by = 1;
	json_object_foreach(v, k, x) {
		char *sub = ts_asprintf("%s.%s", key, k);
		double *real = !strcmp(k, "bytes_per_cycle") ?
			&c->bytes_per_cycle : !strcmp(k, "latency_cycles") ?
			&c->latency_cycles : NULL;
		bool kib = !strcmp(k, "kib");
		if (real) {
			if (!json_is_number(x) || json_number_value(x) < 0)
				return ts_ctx_set_error(ctx, "%s: field '%s' "
					"must be a number >= 0", where, sub);
			*real = json_number_value(x);
			continue;
		}
		if (!kib && strcmp(k, "shared_by") != 0 &&
		    strcmp(k, "ways") != 0)
			return ts_ctx_set_error(ctx, "%s: unknown field '%s'",
				where, sub);
		if (read_int(ctx, where, sub, x, &n) < 0)
			return TS_ERROR;
		if (n > 4096 && !kib)
			return ts_ctx_set_error(ctx, "%s: field '%s' is out "
				"of range: %lld", where, sub, (long long)n);
		if (kib)
			c->size = n * 1024;
		else if (!strcmp(k, "ways"))
			c->ways = (int)n;
		else
			c->shared_by = (int)n;
	}
	if (!json_object_get(v, "kib"))
		return ts_ctx_set_error(ctx, "%s: missing required field '%s.kib'",
			where, key);
	return TS_OK;
}

/* Read the value "v" of field "f" in "where" into "t". */
static ts_status read_field(ts_ctx *ctx, const char *where,
	const struct field *f, json_t *v, ts_target *t)
{
	char *p = (char *)t + f->offset;
	int64_t n;

	switch (f->type) {
	case F_STR:
		if (!json_is_string(v))
			return ts_ctx_set_error(ctx, "%s: field '%s' must be a "
				"string", where, f->key);
		*(const char **)p = ts_strdup(json_string_value(v));
		return TS_OK;
	case F_REAL:
		if (!json_is_number(v))
			return ts_ctx_set_error(ctx, "%s: field '%s' must be a "
				"number", where, f->key);
		*(double *)p = json_number_value(v);
		return TS_OK;
	case F_CACHE:
		return read_cache(ctx, where, f->key, v, (ts_target_cache *)p);
	default:
		break;
	}
	if (read_int(ctx, where, f->key, v, &n) < 0)
		return TS_ERROR;
	if (f->type == F_INT)
		*(int *)p = (int)n;
	else
		*(int64_t *)p = n << (f->type == F_KIB ? 10 : 20);
	return TS_OK;
}

/* Read "name", "kind" and "description" of the object "root" of "where"
 * into "t". */
static ts_status read_header(ts_ctx *ctx, const char *where, json_t *root,
	ts_target *t)
{
	json_t *name = json_object_get(root, "name");
	json_t *kind = json_object_get(root, "kind");
	json_t *desc = json_object_get(root, "description");

	if (!kind)
		return ts_ctx_set_error(ctx, "%s: missing required field 'kind' "
			"(\"cpu\" or \"gpu\")", where);
	if (!json_is_string(kind) ||
	    (strcmp(json_string_value(kind), "cpu") != 0 &&
	     strcmp(json_string_value(kind), "gpu") != 0))
		return ts_ctx_set_error(ctx, "%s: field 'kind' must be \"cpu\" "
			"or \"gpu\"", where);
	t->kind = strcmp(json_string_value(kind), "cpu") == 0 ?
		TS_TARGET_CPU : TS_TARGET_GPU;
	if (!name)
		return ts_ctx_set_error(ctx, "%s: missing required field 'name'",
			where);
	if (!json_is_string(name) || (desc && !json_is_string(desc)))
		return ts_ctx_set_error(ctx, "%s: fields 'name' and "
			"'description' must be strings", where);
	t->name = ts_strdup(json_string_value(name));
	t->description = desc ? ts_strdup(json_string_value(desc)) : "";
	return TS_OK;
}

/* Read every field of the object "root" of "where" into "t". */
static ts_status read_fields(ts_ctx *ctx, const char *where, json_t *root,
	ts_target *t)
{
	const char *key;
	json_t *v;

	json_object_foreach(root, key, v) {
		const struct field *f;
		if (!strcmp(key, "name") || !strcmp(key, "kind") ||
		    !strcmp(key, "description"))
			continue;
		f = find_field(key, t->kind);
		if (!f)
			return ts_ctx_set_error(ctx, "%s: unknown field '%s'",
				where, key);
		if (f->kind != t->kind)
			return ts_ctx_set_error(ctx, "%s: field '%s' belongs to "
				"%s targets, but kind is \"%s\"", where, key,
				ts_target_kind_name(f->kind),
				ts_target_kind_name(t->kind));
		if (read_field(ctx, where, f, v, t) < 0)
			return TS_ERROR;
	}
	for (size_t i = 0; i < NFIELDS; i++)
		if (fields[i].kind == t->kind && fields[i].required &&
		    !json_object_get(root, fields[i].key))
			return ts_ctx_set_error(ctx, "%s: missing required field "
				"'%s' for a %s target", where, fields[i].key,
				ts_target_kind_name(t->kind));
	return TS_OK;
}

/* Read a target from the JSON text "json", named "where" in messages. */
ts_target *ts_target_from_json(ts_ctx *ctx, const char *json,
	const char *where)
{
	json_error_t err;
	json_t *root;
	ts_target *t = ts_new(ts_target);
	ts_status st = TS_ERROR;

	where = where ? where : "(target)";
	root = json_loads(json ? json : "", JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		ts_ctx_set_error(ctx, "%s:%d:%d: invalid JSON: %s", where,
			err.line, err.column, err.text);
		return NULL;
	}
	if (!json_is_object(root))
		ts_ctx_set_error(ctx, "%s: a target must be a JSON object", where);
	else if (read_header(ctx, where, root, t) == TS_OK &&
		 read_fields(ctx, where, root, t) == TS_OK) {
		ts_target_finish(t);
		st = ts_target_check(ctx, t, where);
	}
	json_decref(root);
	return st == TS_OK ? t : NULL;
}

/* Read the target in the file "path". */
ts_target *ts_target_from_json_file(ts_ctx *ctx, const char *path)
{
	FILE *f;
	ts_buf b;
	char chunk[4096];
	size_t n;

	if (!path)
		return NULL;
	f = fopen(path, "r");
	if (!f) {
		ts_ctx_set_error(ctx, "cannot read target file '%s': %s", path,
			strerror(errno));
		return NULL;
	}
	ts_buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ts_buf_puts(&b, ts_strndup(chunk, n));
	fclose(f);
	return ts_target_from_json(ctx, b.s ? b.s : "", path);
}

/* Append "s" to "b" as a JSON string. */
static void put_string(ts_buf *b, const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	ts_buf_puts(b, text ? text : "\"\"");
	free(text);
	json_decref(j);
}

/* Append "v" to "b" with the fewest digits that read back exactly. */
static void put_real(ts_buf *b, double v)
{
	char s[40];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	/* JSON tells reals from integers by the point or exponent. */
	if (!strpbrk(s, ".eEn"))
		strcat(s, ".0");
	ts_buf_puts(b, s);
}

/* Whether field "f" of "t" holds its default and may be left out. */
static bool is_default(const struct field *f, const ts_target *t)
{
	const char *p = (const char *)t + f->offset;

	if (f->required)
		return false;
	switch (f->type) {
	case F_STR: return !**(const char *const *)p;
	case F_INT: return *(const int *)p == 0;
	case F_REAL: return *(const double *)p == 0;
	case F_CACHE: return ((const ts_target_cache *)p)->size == 0;
	default: return *(const int64_t *)p == 0;
	}
}

/* Append the value of field "f" of "t" to "b". */
static void put_value(ts_buf *b, const struct field *f, const ts_target *t)
{
	const char *p = (const char *)t + f->offset;
	const ts_target_cache *c = (const ts_target_cache *)p;

	switch (f->type) {
	case F_STR: put_string(b, *(const char *const *)p); break;
	case F_INT: ts_buf_printf(b, "%d", *(const int *)p); break;
	case F_REAL: put_real(b, *(const double *)p); break;
	case F_KIB:
		ts_buf_printf(b, "%lld", (long long)(*(const int64_t *)p >> 10));
		break;
	case F_MIB:
		ts_buf_printf(b, "%lld", (long long)(*(const int64_t *)p >> 20));
		break;
	case F_CACHE:
		ts_buf_printf(b, "{ \"kib\": %lld, \"shared_by\": %d",
			(long long)(c->size >> 10), c->shared_by);
		if (c->ways > 0)
			ts_buf_printf(b, ", \"ways\": %d", c->ways);
		if (c->bytes_per_cycle > 0) {
			ts_buf_puts(b, ", \"bytes_per_cycle\": ");
			put_real(b, c->bytes_per_cycle);
		}
		if (c->latency_cycles > 0) {
			ts_buf_puts(b, ", \"latency_cycles\": ");
			put_real(b, c->latency_cycles);
		}
		ts_buf_puts(b, " }");
		break;
	}
}

/* Return "t" as JSON text, one field a line, defaults left out. */
char *ts_target_to_json(const ts_target *t)
{
	ts_target n = *t;
	ts_buf b;

	ts_target_finish(&n);
	ts_buf_init(&b);
	ts_buf_puts(&b, "{\n  \"name\": ");
	put_string(&b, n.name);
	ts_buf_printf(&b, ",\n  \"kind\": \"%s\"", ts_target_kind_name(n.kind));
	if (*n.description) {
		ts_buf_puts(&b, ",\n  \"description\": ");
		put_string(&b, n.description);
	}
	for (size_t i = 0; i < NFIELDS; i++) {
		if (fields[i].kind != n.kind || is_default(&fields[i], &n))
			continue;
		ts_buf_printf(&b, ",\n  \"%s\": ", fields[i].key);
		put_value(&b, &fields[i], &n);
	}
	ts_buf_puts(&b, "\n}\n");
	return b.s;
}
