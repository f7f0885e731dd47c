/* The ONNX importer: a model's graph becomes a .tsl program.
 *
 * The graph is walked once in its (topological) order.  Each node is
 * lowered by its operator's function into statements of text; a node whose
 * inputs are all known at import is folded instead: its statements, with
 * its inputs declared as the inputs of a small program, run in the
 * reference interpreter, and its outputs become known arrays.  What is left
 * is printed as one program, pruned to what the graph's outputs need, and
 * parsed by the .tsl front end. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "dsl/ir.h"
#include "onnx/internal.h"

/* Nodes whose outputs are at most FOLD_LIMIT elements, and whose known
 * inputs hold at most FOLD_INPUTS, are folded when their inputs are all
 * known; larger ones are computed at run time (the interpreter is slow,
 * and what exporters fold is shapes and scalars). */
#define FOLD_LIMIT (1 << 16)
#define FOLD_INPUTS (1 << 22)

/* Ifs within the branches of Ifs, at most (each level is a C call). */
#define IF_DEPTH 32

/* A string-keyed table (open addressing). */
struct table {
	const char **keys;
	void **vals;
	size_t cap, n;
};

static void **table_slot(struct table *t, const char *key, bool add)
{
	size_t i;

	if (add && 2 * (t->n + 1) > t->cap) {
		struct table old = *t;

		t->cap = old.cap ? 2 * old.cap : 64;
		t->keys = ts_new_array(const char *, t->cap);
		t->vals = ts_new_array(void *, t->cap);
		t->n = 0;
		for (i = 0; i < old.cap; i++)
			if (old.keys[i])
				*table_slot(t, old.keys[i], true) = old.vals[i];
	}
	if (!t->cap)
		return NULL;
	for (i = ts_fnv1a(key) & (t->cap - 1); t->keys[i];
	     i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->keys[i], key))
			return &t->vals[i];
	if (!add)
		return NULL;
	t->keys[i] = key;
	t->n++;
	return &t->vals[i];
}

static void *table_get(struct table *t, const char *key)
{
	void **slot = table_slot(t, key, false);

	return slot ? *slot : NULL;
}

struct ox_importer {
	ts_ctx *ctx;
	const char *file;
	Onnx__ModelProto *model;
	int opset;
	struct table values;	/* ONNX name -> struct ox_value */
	struct table names;	/* program names in use */
	struct table ops;	/* op name -> struct ox_op */
	ts_vec stmts;		/* struct ox_stmt, in order */
	ts_vec weights;		/* struct ox_value, declared as weights */
	ts_vec inputs;		/* struct ox_value, the graph's inputs */
	ts_vec outputs;		/* struct ox_value, the graph's outputs */
	ts_vec out_names;	/* their program names */
	ts_onnx_options opt;
	ts_buf header;
	int depth;		/* of the If whose branch is being lowered */
};

struct ts_onnx_model {
	const char *source;
	ts_dag *dag;
	ts_vec weights;		/* struct ox_value */
	ts_vec inputs;		/* struct ox_value */
	ts_vec outputs;		/* struct ox_value */
	ts_vec out_names;	/* const char * */
};

bool ts_onnx_available(void)
{
	return true;
}

ts_ctx *ox_ctx(const struct ox_importer *im)
{
	return im->ctx;
}

int ox_opset(const struct ox_importer *im)
{
	return im->opset;
}

/* "node 3 'conv1' (Conv)" */
static char *node_where(const struct ox_importer *im, const struct ox_node *n)
{
	if (!n)
		return ts_strdup(im->file);
	if (n->p->name && *n->p->name)
		return ts_asprintf("%s: node %d '%s' (%s)", im->file, n->index,
			n->p->name, n->op);
	return ts_asprintf("%s: node %d (%s)", im->file, n->index, n->op);
}

ts_status ox_fail(struct ox_importer *im, const struct ox_node *n,
	const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = ts_vasprintf(fmt, ap);
	va_end(ap);
	return ts_ctx_set_error(im->ctx, "%s: %s", node_where(im, n), msg);
}

/* Names. */

static bool reserved(const char *s)
{
	static const char *const words[] = {
		"let", "input", "output", "weight", "sum", "max", "min",
		"prod", "true", "false", "inf", "nan", "bool", "i8", "u8",
		"i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16",
		"f32", "f64", "exp", "log", "sqrt", "rsqrt", "tanh",
		"sigmoid", "erf", "abs", "floor", "round", "pow", "select",
		"clamp", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
		"cosh", "asinh", "acosh", "atanh", "ceil", "sign", "isnan",
		"isinf",
	};
	const char *p = s + 1;

	if ((s[0] == 'i' || s[0] == 'r') && *p) {
		while (isdigit((unsigned char)*p))
			p++;
		if (!*p)
			return true;	/* axis names */
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(words[i], s))
			return true;
	return false;
}

/* A fresh program name made from "onnx": letters, digits and '_', not
 * starting with a digit, not reserved, not in use. */
static const char *fresh_name(struct ox_importer *im, const char *onnx)
{
	ts_buf b;
	const char *base;
	char *name;

	ts_buf_init(&b);
	for (const char *p = onnx; *p; p++) {
		char c = isalnum((unsigned char)*p) ? *p : '_';

		if (c == '_' && (b.len == 0 || b.s[b.len - 1] == '_'))
			continue;
		ts_buf_putc(&b, c);
	}
	while (b.len && b.s[b.len - 1] == '_')
		b.s[--b.len] = 0;
	if (!b.len)
		ts_buf_puts(&b, "t");
	base = isdigit((unsigned char)b.s[0]) ? ts_asprintf("t%s", b.s) : b.s;
	name = ts_strdup(base);
	for (int k = 1; reserved(name) || table_get(&im->names, name); k++)
		name = ts_asprintf("%s_%d", base, k);
	*table_slot(&im->names, name, true) = name;
	return name;
}

/* Values. */

static struct ox_value *value_new(struct ox_importer *im, const char *onnx)
{
	struct ox_value *v = ts_new(struct ox_value);

	v->onnx = ts_strdup(onnx);	/* the model is freed after import */
	*table_slot(&im->values, v->onnx, true) = v;
	return v;
}

static struct ox_value *value_const(struct ox_importer *im, const char *onnx,
	ts_array *a)
{
	struct ox_value *v = value_new(im, onnx);

	v->dtype = a->dtype;
	v->ndim = a->ndim;
	memcpy(v->shape, a->shape, sizeof(v->shape));
	v->konst = a;
	return v;
}

int64_t ox_numel(int ndim, const int64_t *shape)
{
	int64_t n = 1;

	for (int i = 0; i < ndim; i++)
		n *= shape[i];
	return n;
}

/* Attributes. */

const Onnx__AttributeProto *ox_attr(const struct ox_node *n, const char *name)
{
	for (size_t i = 0; i < n->p->n_attribute; i++)
		if (n->p->attribute[i]->name &&
		    !strcmp(n->p->attribute[i]->name, name))
			return n->p->attribute[i];
	return NULL;
}

static const char *attr_type_name(const Onnx__AttributeProto *a)
{
	static const char *const names[] = {
		"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
		"FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS",
		"SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS",
	};

	if (!a->has_type)
		return "of no type";
	if (a->type >= 0 && a->type < (int)(sizeof(names) / sizeof(names[0])))
		return names[a->type];
	return "of an unknown type";
}

/* Check that attribute "a" has type "want" (named "wname"). */
static ts_status attr_check(struct ox_importer *im, const struct ox_node *n,
	const Onnx__AttributeProto *a, int want, const char *wname)
{
	if (a->has_type && (int)a->type == want)
		return TS_OK;
	return ox_fail(im, n, "attribute '%s' must be %s, not %s", a->name,
		wname, attr_type_name(a));
}

ts_status ox_attr_int(struct ox_importer *im, const struct ox_node *n,
	const char *name, int64_t dflt, int64_t *v)
{
	const Onnx__AttributeProto *a = ox_attr(n, name);

	*v = dflt;
	if (!a)
		return TS_OK;
	if (attr_check(im, n, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT,
	    "an INT") < 0)
		return TS_ERROR;
	*v = a->i;
	return TS_OK;
}

ts_status ox_attr_float(struct ox_importer *im, const struct ox_node *n,
	const char *name, double dflt, double *v)
{
	const Onnx__AttributeProto *a = ox_attr(n, name);

	*v = dflt;
	if (!a)
		return TS_OK;
	if (attr_check(im, n, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT,
	    "a FLOAT") < 0)
		return TS_ERROR;
	*v = a->f;
	return TS_OK;
}

ts_status ox_attr_string(struct ox_importer *im, const struct ox_node *n,
	const char *name, const char *dflt, const char **v)
{
	const Onnx__AttributeProto *a = ox_attr(n, name);

	*v = dflt;
	if (!a)
		return TS_OK;
	if (attr_check(im, n, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING,
	    "a STRING") < 0)
		return TS_ERROR;
	*v = ts_strndup((const char *)a->s.data, a->s.len);
	return TS_OK;
}

ts_status ox_attr_ints(struct ox_importer *im, const struct ox_node *n,
	const char *name, int64_t *v, int max, int *count)
{
	const Onnx__AttributeProto *a = ox_attr(n, name);

	*count = -1;
	if (!a)
		return TS_OK;
	if (attr_check(im, n, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS,
	    "INTS") < 0)
		return TS_ERROR;
	if (a->n_ints > (size_t)max)
		return ox_fail(im, n, "attribute '%s' has %zu values, more "
			"than %d", name, a->n_ints, max);
	for (size_t i = 0; i < a->n_ints; i++)
		v[i] = a->ints[i];
	*count = (int)a->n_ints;
	return TS_OK;
}

ts_status ox_attr_floats(struct ox_importer *im, const struct ox_node *n,
	const char *name, double *v, int max, int *count)
{
	const Onnx__AttributeProto *a = ox_attr(n, name);

	*count = -1;
	if (!a)
		return TS_OK;
	if (attr_check(im, n, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS,
	    "FLOATS") < 0)
		return TS_ERROR;
	if (a->n_floats > (size_t)max)
		return ox_fail(im, n, "attribute '%s' has %zu values, more "
			"than %d", name, a->n_floats, max);
	for (size_t i = 0; i < a->n_floats; i++)
		v[i] = a->floats[i];
	*count = (int)a->n_floats;
	return TS_OK;
}

ts_array *ox_tensor_array(struct ox_importer *im, const struct ox_node *n,
	const Onnx__TensorProto *t)
{
	return ox_read_tensor(im->ctx, t, node_where(im, n));
}

/* Inputs. */

bool ox_has(const struct ox_node *n, int k)
{
	return k < n->nin && n->in[k];
}

ts_status ox_need(struct ox_importer *im, const struct ox_node *n, int k,
	int min_nin)
{
	if (n->nin < min_nin)
		return ox_fail(im, n, "%d inputs, expected at least %d",
			n->nin, min_nin);
	if (!ox_has(n, k))
		return ox_fail(im, n, "input %d is missing", k);
	return TS_OK;
}

/* Integer element "i" of "a", exactly. */
static int64_t get_int(const ts_array *a, int64_t i)
{
	return ts_array_get_int(a, i);
}

ts_status ox_const_ints(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what, int64_t *v, int max, int *count)
{
	const struct ox_value *in;

	if (ox_need(im, n, k, k + 1) < 0)
		return TS_ERROR;
	in = n->in[k];
	if (!in->konst)
		return ox_fail(im, n, "%s (input %d, '%s') must be known at "
			"import, not computed at run time", what, k, in->onnx);
	if (ts_dtype_is_float(in->dtype) || in->dtype == TS_BOOL)
		return ox_fail(im, n, "%s (input %d) must be integers, not %s",
			what, k, ts_dtype_name(in->dtype));
	if (in->konst->size > max)
		return ox_fail(im, n, "%s (input %d) has %lld values, more "
			"than %d", what, k, (long long)in->konst->size, max);
	for (int64_t i = 0; i < in->konst->size; i++)
		v[i] = get_int(in->konst, i);
	*count = (int)in->konst->size;
	return TS_OK;
}

ts_status ox_const_float(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what, double dflt, double *v)
{
	const struct ox_value *in;

	*v = dflt;
	if (!ox_has(n, k))
		return TS_OK;
	in = n->in[k];
	if (!in->konst || in->konst->size != 1)
		return ox_fail(im, n, "%s (input %d, '%s') must be a single "
			"value known at import", what, k, in->onnx);
	*v = ts_array_get(in->konst, 0);
	return TS_OK;
}

/* Outputs. */

bool ox_wants(const struct ox_node *n, int k)
{
	return k < n->nout && n->p->output[k] && *n->p->output[k];
}

const char *ox_output(struct ox_importer *im, struct ox_node *n, int k,
	ts_dtype t, int ndim, const int64_t *shape)
{
	struct ox_value *v;

	if (!ox_wants(n, k))
		return NULL;
	v = value_new(im, n->p->output[k]);
	v->dtype = t;
	v->ndim = ndim;
	memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
	v->name = fresh_name(im, v->onnx);
	n->out[k] = v;
	return v->name;
}

/* Writing. */

const char *ox_axis(int k)
{
	static const char *const names[TS_MAX_DIMS] = {
		"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7",
	};

	return names[k];
}

const char *ox_raxis(struct ox_node *n)
{
	return ts_asprintf("r%d", n->fresh++);
}

const char *ox_temp(struct ox_importer *im, struct ox_node *n,
	const char *suffix)
{
	const char *base = n->nout && n->p->output[0] ? n->p->output[0] :
		n->op;

	return fresh_name(im, ts_asprintf("%s_%s", base, suffix));
}

static void note_read(struct ox_node *n, struct ox_value *v)
{
	for (int i = 0; i < n->reads.n; i++)
		if (n->reads.v[i] == v)
			return;
	ts_vec_push(&n->reads, v);
}

const char *ox_ref(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v)
{
	if (!v->name)
		v->name = fresh_name(im, v->onnx);
	note_read(n, v);
	return v->name;
}

char *ox_lit(ts_dtype t, double v)
{
	char buf[64];

	if (t == TS_BOOL)
		return ts_strdup(v != 0 ? "true" : "false");
	if (!ts_dtype_is_float(t)) {
		if (v <= -9223372036854775807.0)
			return ts_strdup("(-9223372036854775807 - 1)");
		return ts_asprintf(v < 0 ? "(%lld)" : "%lld", (long long)v);
	}
	if (v != v)
		return ts_strdup("nan");
	if (v == 1.0 / 0.0)
		return ts_strdup("inf");
	if (v == -1.0 / 0.0)
		return ts_strdup("(-inf)");
	snprintf(buf, sizeof(buf), t == TS_F64 ? "%.17g" : "%.9g", v);
	if (!strpbrk(buf, ".eE"))
		strcat(buf, ".0");
	return ts_asprintf(v < 0 || (v == 0 && 1 / v < 0) ? "(%s)" : "%s", buf);
}

char *ox_tlit(ts_dtype t, double v)
{
	if (t == TS_BOOL)
		return ox_lit(t, v);
	return ts_asprintf("%s(%s)", ts_dtype_name(t), ox_lit(t, v));
}

/* A literal for element "i" of "a", exact for 64-bit integers (a u64
 * above INT64_MAX written as the cast of its negative bit pattern). */
static char *array_lit(const ts_array *a, int64_t i)
{
	if (a->dtype == TS_I64 || a->dtype == TS_U64) {
		int64_t x = get_int(a, i);
		const char *d = ts_dtype_name(a->dtype);

		if (x == INT64_MIN)
			return ts_asprintf("%s(-9223372036854775807 - 1)", d);
		return ts_asprintf("%s(%lld)", d, (long long)x);
	}
	return ox_tlit(a->dtype, ts_array_get(a, i));
}

char *ox_load_name(const char *name, int ndim, const char *const *idx)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", name);
	for (int i = 0; i < ndim; i++)
		ts_buf_printf(&b, "%s%s", i ? ", " : "", idx[i]);
	ts_buf_putc(&b, ']');
	return b.s;
}

char *ox_load_name_same(const char *name, int ndim)
{
	const char *idx[TS_MAX_DIMS];

	for (int i = 0; i < ndim; i++)
		idx[i] = ox_axis(i);
	return ox_load_name(name, ndim, idx);
}

char *ox_load(struct ox_importer *im, struct ox_node *n, struct ox_value *v,
	const char *const *idx)
{
	if (v->konst && v->konst->size == 1)
		return array_lit(v->konst, 0);
	return ox_load_name(ox_ref(im, n, v), v->ndim, idx);
}

struct ox_value *ox_new_const(struct ox_importer *im, struct ox_node *n,
	const char *what, ts_dtype t, int ndim, const int64_t *shape)
{
	struct ox_value *v = ts_new(struct ox_value);

	v->onnx = ts_asprintf("%s_%s", n->p->output[0], what);
	v->dtype = t;
	v->ndim = ndim;
	memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
	v->konst = ts_array_alloc(im->ctx, t, ndim, shape);
	return v;
}

char *ox_load_bcast(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v, int ndim, const int64_t *shape)
{
	const char *idx[TS_MAX_DIMS];
	int off = ndim - v->ndim;

	for (int i = 0; i < v->ndim; i++)
		idx[i] = v->shape[i] == 1 && shape[off + i] != 1 ? "0" :
			ox_axis(off + i);
	return ox_load(im, n, v, idx);
}

char *ox_load_same(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v)
{
	const char *idx[TS_MAX_DIMS];

	for (int i = 0; i < v->ndim; i++)
		idx[i] = ox_axis(i);
	return ox_load(im, n, v, idx);
}


void ox_stage(struct ox_importer *im, struct ox_node *n, const char *name,
	int ndim, const int64_t *shape, const ts_dtype *cast,
	const char *body)
{
	struct ox_stmt *s;
	ts_buf b;

	if (!name)
		return;	/* an output nobody wants */
	s = ts_new(struct ox_stmt);
	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", name);
	for (int i = 0; i < ndim; i++)
		ts_buf_printf(&b, "%s%s: %lld", i ? ", " : "", ox_axis(i),
			(long long)shape[i]);
	ts_buf_putc(&b, ']');
	if (cast)
		ts_buf_printf(&b, ": %s", ts_dtype_name(*cast));
	ts_buf_printf(&b, " = %s", body);
	s->name = name;
	s->text = b.s;
	ts_vec_push(&n->stmts, s);
	(void)im;
}

/* Broadcasting and axes. */

ts_status ox_broadcast(struct ox_importer *im, const struct ox_node *n,
	int nda, const int64_t *a, int ndb, const int64_t *b, int *nd,
	int64_t *out)
{
	int r = TS_MAX(nda, ndb);
	int64_t res[TS_MAX_DIMS];

	/* Into "res" first: "out" may be "a" (Where, Sum and the like fold
	 * their inputs' shapes one by one), whose first dimensions are still
	 * to be read when the rank grows. */
	for (int i = 0; i < r; i++) {
		int64_t x = i - (r - nda) >= 0 ? a[i - (r - nda)] : 1;
		int64_t y = i - (r - ndb) >= 0 ? b[i - (r - ndb)] : 1;

		if (x != y && x != 1 && y != 1)
			return ox_fail(im, n, "shapes do not broadcast: "
				"dimension %d is %lld and %lld", i,
				(long long)x, (long long)y);
		res[i] = x == 1 ? y : x;
	}
	memcpy(out, res, sizeof(int64_t) * (size_t)r);
	*nd = r;
	return TS_OK;
}

ts_status ox_axis_norm(struct ox_importer *im, const struct ox_node *n,
	int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= TS_MAX(rank, 1))
		return ox_fail(im, n, "axis %lld is out of range for rank %d",
			(long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return TS_OK;
}

/* Declarations of the program: "input NAME: dtype[shape]". */
static char *declaration(const char *kw, const struct ox_value *v)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s %s: %s[", kw, v->name, ts_dtype_name(v->dtype));
	for (int i = 0; i < v->ndim; i++)
		ts_buf_printf(&b, "%s%lld", i ? ", " : "",
			(long long)v->shape[i]);
	ts_buf_puts(&b, "]\n");
	return b.s;
}

/* Folding: run node "n"'s statements on its known inputs. */
static ts_status fold(struct ox_importer *im, struct ox_node *n)
{
	ts_array *args[256], *outs[TS_MAX_DIMS * 8];
	ts_buf b;
	ts_dag *dag;

	ts_buf_init(&b);
	for (int i = 0; i < n->reads.n; i++)
		ts_buf_puts(&b, declaration("input", n->reads.v[i]));
	for (int i = 0; i < n->stmts.n; i++) {
		const struct ox_stmt *s = n->stmts.v[i];
		bool out = false;

		for (int k = 0; k < n->nout; k++)
			out |= n->out[k] && !strcmp(n->out[k]->name, s->name);
		ts_buf_printf(&b, "%s%s\n", out ? "output " : "", s->text);
	}
	if (n->reads.n > 256 || !(dag = ts_parse_string(im->ctx,
	    ts_asprintf("%s (folding)", node_where(im, n)), b.s)))
		return ox_fail(im, n, "folding at import failed: %s",
			ts_ctx_error(im->ctx));
	ts_ctx_clear_warnings(im->ctx);
	for (int i = 0; i < dag->ninputs; i++) {
		args[i] = NULL;
		for (int k = 0; k < n->reads.n; k++) {
			struct ox_value *v = n->reads.v[k];

			if (!strcmp(v->name, dag->inputs[i]->name))
				args[i] = v->konst;
		}
	}
	if (dag->noutputs > (int)(sizeof(outs) / sizeof(outs[0])) ||
	    ts_eval(im->ctx, dag, args, outs) < 0)
		return ox_fail(im, n, "folding at import failed: %s",
			ts_ctx_error(im->ctx));
	for (int k = 0; k < n->nout; k++) {
		if (!n->out[k] || n->out[k]->konst)
			continue;
		for (int i = 0; i < dag->noutputs; i++)
			if (!strcmp(dag->outputs[i]->name, n->out[k]->name))
				n->out[k]->konst = outs[i];
	}
	return TS_OK;
}

/* Whether node "n" can be folded: it read only known values and its
 * outputs are small. */
static bool foldable(const struct ox_node *n, bool nonconst)
{
	int64_t total = 0, inputs = 0;

	if (nonconst || !n->stmts.n)
		return false;
	for (int k = 0; k < n->nout; k++)
		if (n->out[k])
			total += ox_numel(n->out[k]->ndim, n->out[k]->shape);
	for (int i = 0; i < n->reads.n; i++)
		inputs += ((struct ox_value *)n->reads.v[i])->konst->size;
	return total <= FOLD_LIMIT && inputs <= FOLD_INPUTS;
}

/* "Conv(kernel_shape=[3, 3], pads=[1, 1, 1, 1])" */
static char *node_summary(const struct ox_node *n)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s(", n->op);
	for (size_t i = 0; i < n->p->n_attribute; i++) {
		const Onnx__AttributeProto *a = n->p->attribute[i];

		ts_buf_printf(&b, "%s%s=", i ? ", " : "", a->name);
		if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
			ts_buf_printf(&b, "%lld", (long long)a->i);
		else if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
			ts_buf_printf(&b, "%g", a->f);
		else if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
			ts_buf_printf(&b, "'%.*s'", (int)TS_MIN(a->s.len, 40),
				(const char *)a->s.data);
		else if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
			ts_buf_putc(&b, '[');
			for (size_t j = 0; j < a->n_ints && j < 16; j++)
				ts_buf_printf(&b, "%s%lld", j ? ", " : "",
					(long long)a->ints[j]);
			ts_buf_puts(&b, a->n_ints > 16 ? ", ...]" : "]");
		} else if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
			ts_buf_putc(&b, '[');
			for (size_t j = 0; j < a->n_floats && j < 16; j++)
				ts_buf_printf(&b, "%s%g", j ? ", " : "",
					a->floats[j]);
			ts_buf_puts(&b, a->n_floats > 16 ? ", ...]" : "]");
		} else
			ts_buf_puts(&b, "...");
	}
	ts_buf_putc(&b, ')');
	for (char *p = b.s; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return b.s;
}

/* Keep node "n"'s statements in the program, declaring the known values
 * it reads by name as weights. */
static void commit(struct ox_importer *im, struct ox_node *n)
{
	for (int i = 0; i < n->reads.n; i++) {
		struct ox_value *v = n->reads.v[i];

		if (!v->declared) {
			v->declared = true;
			ts_vec_push(&im->weights, v);
		}
	}
	for (int i = 0; i < n->stmts.n; i++) {
		struct ox_stmt *s = n->stmts.v[i];

		for (int k = 0; k < n->reads.n; k++)
			ts_vec_push(&s->reads,
				(void *)((struct ox_value *)n->reads.v[k])->name);
		for (int k = 0; k < i; k++)
			ts_vec_push(&s->reads, (void *)((struct ox_stmt *)
				n->stmts.v[k])->name);
		if (!i) {
			const char *nm = n->p->name && *n->p->name ?
				ts_asprintf(" '%s'", n->p->name) : "";

			s->comment = ts_asprintf("# node %d%s: %s", n->index, nm,
				node_summary(n));
		}
		ts_vec_push(&im->stmts, s);
	}
	for (int k = 0; k < n->nout; k++)
		if (n->out[k])
			n->out[k]->declared = true;
}

/* Control flow, lowered here with the nodes of its branches. */
static ts_status lower_if(struct ox_importer *im, struct ox_node *n);

static const struct ox_op ops_control[] = {
	{ "If", lower_if },
	{ NULL, NULL },
};

static const struct ox_op *find_op(struct ox_importer *im, const char *name)
{
	static const struct ox_op *const tables[] = {
		ox_ops_elementwise, ox_ops_linalg, ox_ops_shape,
		ox_ops_reduce, ox_ops_nn, ox_ops_quant, ox_ops_misc,
		ops_control,
	};

	if (!im->ops.cap)
		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
			for (const struct ox_op *op = tables[t]; op->name; op++)
				*table_slot(&im->ops, op->name, true) =
					(void *)op;
	return table_get(&im->ops, name);
}

/* Whether the lowering of "op" (written for opsets 6 and later) is also
 * right before opset 6: the operators whose meaning has not changed
 * since opset 1 but for the legacy consumed_inputs attribute, which
 * changes nothing. */
static bool old_op(const char *op)
{
	static const char *const ops[] = {
		"Abs", "Ceil", "Exp", "Floor", "Log", "Neg", "Not",
		"Reciprocal", "Relu", "Sigmoid", "Softplus", "Softsign",
		"Sqrt", "Tanh", "GlobalAveragePool", "GlobalMaxPool",
		"GlobalLpPool", "Identity", "MatMul", "Transpose", "Flatten",
		"Squeeze", "Concat", "Gather", "Shape", "Size", "Constant",
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i], op))
			return true;
	return false;
}

/* Why the operators that exported models bring and the tables lack are
 * refused (those whose name starts with "name" when it ends with '*'),
 * or NULL. */
static const char *refusal_reason(const char *op)
{
	static const char *const reasons[][2] = {
		{ "Loop", "loops over a subgraph are not unrolled at import" },
		{ "Scan", "loops over a subgraph are not unrolled at import" },
		{ "NonMaxSuppression", "the number of boxes it keeps, its "
			"output's shape, depends on values computed at run "
			"time" },
		{ "Unique", "its output's shape depends on the values of its "
			"input" },
		{ "Random*", "random numbers are not a function of the "
			"program's inputs" },
		{ "Bernoulli", "random numbers are not a function of the "
			"program's inputs" },
		{ "Multinomial", "random numbers are not a function of the "
			"program's inputs" },
		{ "Sequence*", "sequences of tensors are not values of a "
			"program" },
		{ "SplitToSequence", "sequences of tensors are not values of a "
			"program" },
		{ "ConcatFromSequence", "sequences of tensors are not values of "
			"a program" },
		{ "Optional*", "optional values are not values of a program" },
	};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		size_t len = strlen(reasons[i][0]);

		if (reasons[i][0][len - 1] == '*' ?
		    !strncmp(op, reasons[i][0], len - 1) :
		    !strcmp(op, reasons[i][0]))
			return reasons[i][1];
	}
	return NULL;
}

static ts_status lower_node(struct ox_importer *im, const Onnx__NodeProto *p,
	int index)
{
	struct ox_node *n = ts_new(struct ox_node);
	const struct ox_op *op;
	bool nonconst = false;

	n->p = p;
	n->index = index;
	n->op = p->op_type ? p->op_type : "";
	if (p->domain && *p->domain && strcmp(p->domain, "ai.onnx"))
		return ox_fail(im, n, "the domain '%s' is not supported (only "
			"ONNX's default domain is)", p->domain);
	if (!(op = find_op(im, n->op))) {
		const char *why = refusal_reason(n->op);

		return ox_fail(im, n, "the operator %s is not supported%s%s",
			*n->op ? n->op : "(no op_type)", why ? ": " : "",
			why ? why : "");
	}
	if (im->opset < 6 && !old_op(n->op))
		return ox_fail(im, n, "%s is supported from opset 6 (the model "
			"imports opset %d)", n->op, im->opset);
	n->nin = (int)p->n_input;
	n->in = ts_new_array(struct ox_value *, n->nin + 1);
	for (int i = 0; i < n->nin; i++) {
		if (!p->input[i] || !*p->input[i])
			continue;	/* an absent optional input */
		if (!(n->in[i] = table_get(&im->values, p->input[i])))
			return ox_fail(im, n, "input %d '%s' is neither a graph "
				"input, an initializer nor an earlier node's "
				"output", i, p->input[i]);
		nonconst |= !n->in[i]->konst;
	}
	n->nout = (int)p->n_output;
	n->out = ts_new_array(struct ox_value *, n->nout + 1);
	for (int k = 0; k < n->nout; k++)
		if (ox_wants(n, k) && table_get(&im->values, p->output[k]))
			return ox_fail(im, n, "output '%s' is defined twice",
				p->output[k]);
	if (op->lower(im, n) < 0)
		return TS_ERROR;
	for (int k = 0; k < n->nout; k++)
		if (ox_wants(n, k) && !n->out[k])
			return ox_fail(im, n, "output %d is not supported", k);
	/* If reads values of its branch besides its inputs. */
	for (int i = 0; i < n->reads.n; i++)
		nonconst |= !((struct ox_value *)n->reads.v[i])->konst;
	if (foldable(n, nonconst))
		return fold(im, n);
	if (n->stmts.n)
		commit(im, n);
	return TS_OK;
}

/* Control flow. */

/* Message "msg" less the file name it starts with. */
static const char *without_file(const struct ox_importer *im,
	const char *msg)
{
	size_t len = strlen(im->file);

	if (!strncmp(msg, im->file, len) && !strncmp(msg + len, ": ", 2))
		return msg + len + 2;
	return msg;
}

/* If (opsets 1, 11, 13, 16) whose condition is known at import: the
 * nodes of the branch it takes are lowered as if they stood in the
 * graph (they read the values around the If by name), and the If's
 * outputs are copies of the branch's.  PyTorch writes such an If for
 * squeeze() of a dimension whose size it does not know at export (a
 * symbolic batch, LocalResponseNorm), where the shapes, fixed here, make
 * the condition a constant.  A choice made at run time is refused. */
static ts_status lower_if(struct ox_importer *im, struct ox_node *n)
{
	const Onnx__AttributeProto *a;
	const Onnx__GraphProto *g;
	const struct ox_value *c;
	const char *branch;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	c = n->in[0];
	if (!c->konst || c->konst->size != 1)
		return ox_fail(im, n, "the condition (input 0, '%s') must be a "
			"single value known at import: only a branch chosen at "
			"import is supported, not a choice at run time", c->onnx);
	branch = ts_array_get(c->konst, 0) != 0 ? "then_branch" :
		"else_branch";
	a = ox_attr(n, branch);
	if (!a || attr_check(im, n, a,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH, "a GRAPH") < 0 ||
	    !a->g)
		return a ? TS_ERROR : ox_fail(im, n, "no %s", branch);
	g = a->g;
	if ((int)g->n_output != n->nout)
		return ox_fail(im, n, "its %s has %zu outputs for %d", branch,
			g->n_output, n->nout);
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *t = g->initializer[i];
		ts_array *arr;

		if (!t->name || !*t->name || table_get(&im->values, t->name))
			return ox_fail(im, n, "its %s has an initializer "
				"without a name or with one already in use",
				branch);
		if (!(arr = ox_tensor_array(im, n, t)))
			return TS_ERROR;
		value_const(im, t->name, arr);
	}
	if (im->depth == IF_DEPTH)
		return ox_fail(im, n, "Ifs nested more than %d deep", IF_DEPTH);
	im->depth++;
	for (size_t i = 0; i < g->n_node; i++)
		if (lower_node(im, g->node[i], (int)i) < 0)
			return ox_fail(im, n, "in its %s: %s", branch,
				without_file(im, ts_ctx_error(im->ctx)));
	im->depth--;
	for (int k = 0; k < n->nout; k++) {
		const char *onnx = g->output[k]->name ? g->output[k]->name : "";
		struct ox_value *v = table_get(&im->values, onnx);
		const char *name;

		if (!v)
			return ox_fail(im, n, "its %s's output '%s' is computed "
				"by no node", branch, onnx);
		name = ox_output(im, n, k, v->dtype, v->ndim, v->shape);
		ox_stage(im, n, name, v->ndim, v->shape, NULL,
			ox_load_same(im, n, v));
	}
	return TS_OK;
}

/* Shapes of the graph's inputs. */

/* The setting "NAME=..." for "name" among --shape's, or NULL. */
static const char *shape_setting(const struct ox_importer *im,
	const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < im->opt.nshapes; i++)
		if (!strncmp(im->opt.shapes[i], name, len) &&
		    im->opt.shapes[i][len] == '=')
			return im->opt.shapes[i] + len + 1;
	return NULL;
}

/* Parse "1x3x224x224" into "shape"; the number of dimensions or -1. */
static int parse_dims(const char *s, int64_t *shape)
{
	int nd = 0;

	if (!*s)
		return 0;
	for (;;) {
		char *end;
		long long d;

		errno = 0;
		d = strtoll(s, &end, 10);
		if (end == s || errno || d < 0 || nd == TS_MAX_DIMS)
			return -1;
		shape[nd++] = d;
		if (!*end)
			return nd;
		if (*end != 'x' && *end != ',')
			return -1;
		s = end + 1;
	}
}

static ts_status input_shape(struct ox_importer *im,
	const Onnx__ValueInfoProto *vi, struct ox_value *v)
{
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TensorShapeProto *sh;
	const char *set = shape_setting(im, vi->name);

	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !tp->tensor_type)
		return ox_fail(im, NULL, "graph input '%s' is not a tensor",
			vi->name);
	if (ox_dtype(im, NULL, tp->tensor_type->elem_type, &v->dtype) < 0)
		return ox_fail(im, NULL, "graph input '%s': %s", vi->name,
			ts_ctx_error(im->ctx));
	if (set) {
		if ((v->ndim = parse_dims(set, v->shape)) < 0)
			return ox_fail(im, NULL, "--shape %s=%s: expected "
				"dimensions like 1x3x224x224", vi->name, set);
		return TS_OK;
	}
	sh = tp->tensor_type->shape;
	if (!sh)
		return ox_fail(im, NULL, "graph input '%s' has no shape: give "
			"it with --shape %s=DIMS", vi->name, vi->name);
	if (sh->n_dim > TS_MAX_DIMS)
		return ox_fail(im, NULL, "graph input '%s' has %zu dimensions, "
			"more than %d", vi->name, sh->n_dim, TS_MAX_DIMS);
	v->ndim = (int)sh->n_dim;
	for (size_t i = 0; i < sh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
		const char *p = NULL;
		int64_t one[TS_MAX_DIMS];

		if (d->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0) {
			v->shape[i] = d->dim_value;
			continue;
		}
		if (d->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
			p = d->dim_param;
		set = p ? shape_setting(im, p) : NULL;
		if (set && parse_dims(set, one) == 1) {
			v->shape[i] = one[0];
			continue;
		}
		return ox_fail(im, NULL, "graph input '%s' has the symbolic "
			"dimension %s%s%s (dimension %zu): fix it with --shape "
			"%s=DIMS%s%s%s", vi->name, p ? "'" : "", p ? p : "?",
			p ? "'" : "", i, vi->name, p ? " or --shape " : "",
			p ? p : "", p ? "=N" : "");
	}
	return TS_OK;
}

/* The value given for graph input "name", or NULL. */
static const ts_array *known_value(const struct ox_importer *im,
	const char *name)
{
	for (int i = 0; i < im->opt.nknown; i++)
		if (!strcmp(im->opt.known_names[i], name))
			return im->opt.known_values[i];
	return NULL;
}

static ts_status read_graph_inputs(struct ox_importer *im,
	const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *t = g->initializer[i];
		const char *where = ts_asprintf("%s: initializer '%s'",
			im->file, t->name ? t->name : "");
		ts_array *a;

		if (!t->name || !*t->name)
			return ox_fail(im, NULL, "initializer %zu has no name", i);
		if (!(a = ox_read_tensor(im->ctx, t, where)))
			return TS_ERROR;
		value_const(im, t->name, a);
	}
	for (size_t i = 0; i < g->n_input; i++) {
		const Onnx__ValueInfoProto *vi = g->input[i];
		const ts_array *known;
		struct ox_value *v;

		if (!vi->name || !*vi->name)
			return ox_fail(im, NULL, "graph input %zu has no name", i);
		if (table_get(&im->values, vi->name))
			continue;	/* an initializer listed as an input */
		if ((known = known_value(im, vi->name))) {
			value_const(im, vi->name, (ts_array *)known);
			continue;
		}
		v = value_new(im, vi->name);
		if (input_shape(im, vi, v) < 0)
			return TS_ERROR;
		v->name = fresh_name(im, vi->name);
		v->declared = true;
		ts_vec_push(&im->inputs, v);
	}
	return TS_OK;
}

/* The graph's outputs: a value computed by a statement keeps its name; an
 * input, a constant, or a value listed twice is copied into a stage. */
static ts_status read_graph_outputs(struct ox_importer *im,
	const Onnx__GraphProto *g)
{
	struct table seen = { 0 };

	if (!g->n_output)
		return ox_fail(im, NULL, "the graph has no outputs");
	for (size_t i = 0; i < g->n_output; i++) {
		const char *onnx = g->output[i]->name ? g->output[i]->name : "";
		struct ox_value *v = table_get(&im->values, onnx);
		bool copy;

		if (!v)
			return ox_fail(im, NULL, "graph output '%s' is computed "
				"by no node", onnx);
		copy = table_get(&seen, onnx) || v->konst || !v->declared;
		for (int k = 0; !copy && k < im->inputs.n; k++)
			copy = im->inputs.v[k] == v;
		*table_slot(&seen, onnx, true) = v;
		ts_vec_push(&im->outputs, v);
		if (copy) {
			struct ox_node *n = ts_new(struct ox_node);
			Onnx__NodeProto p = ONNX__NODE_PROTO__INIT;
			const char *name = fresh_name(im, ts_asprintf("%s_out",
				onnx));

			p.op_type = "Identity";
			n->p = &p;
			n->op = "Identity";
			n->index = -1;
			ox_stage(im, n, name, v->ndim, v->shape, NULL,
				ox_load_same(im, n, v));
			commit(im, n);
			((struct ox_stmt *)n->stmts.v[0])->comment =
				ts_asprintf("# graph output '%s'", onnx);
			ts_vec_push(&im->out_names, (void *)name);
		} else {
			ts_vec_push(&im->out_names, (void *)v->name);
		}
	}
	return TS_OK;
}

/* The statements the outputs need, marked in "need" by index. */
static bool *needed(struct ox_importer *im)
{
	struct table at = { 0 };
	bool *need = ts_new_array(bool, im->stmts.n + 1);
	ts_vec work = { 0 };

	for (int i = 0; i < im->stmts.n; i++) {
		struct ox_stmt *s = im->stmts.v[i];

		*table_slot(&at, s->name, true) = (void *)(intptr_t)(i + 1);
	}
	for (int i = 0; i < im->out_names.n; i++)
		ts_vec_push(&work, im->out_names.v[i]);
	while (work.n) {
		const char *name = work.v[--work.n];
		intptr_t k = (intptr_t)table_get(&at, name);
		struct ox_stmt *s;

		if (!k || need[k - 1])
			continue;
		need[k - 1] = true;
		s = im->stmts.v[k - 1];
		for (int j = 0; j < s->reads.n; j++)
			ts_vec_push(&work, s->reads.v[j]);
	}
	return need;
}

static bool is_output_name(const struct ox_importer *im, const char *name)
{
	for (int i = 0; i < im->out_names.n; i++)
		if (!strcmp(im->out_names.v[i], name))
			return true;
	return false;
}

/* Print the program: header, inputs, the weights the kept statements
 * read, the statements. */
static char *print_program(struct ox_importer *im, ts_vec *weights)
{
	bool *need = needed(im);
	struct table used = { 0 };
	ts_buf b;

	for (int i = 0; i < im->stmts.n; i++) {
		struct ox_stmt *s = im->stmts.v[i];

		if (need[i])
			for (int j = 0; j < s->reads.n; j++)
				*table_slot(&used, s->reads.v[j], true) =
					(void *)1;
	}
	ts_buf_init(&b);
	ts_buf_puts(&b, im->header.s);
	for (int i = 0; i < im->inputs.n; i++)
		ts_buf_puts(&b, declaration("input", im->inputs.v[i]));
	for (int i = 0; i < im->weights.n; i++) {
		struct ox_value *v = im->weights.v[i];

		if (table_get(&used, v->name)) {
			ts_buf_puts(&b, declaration("weight", v));
			ts_vec_push(weights, v);
		}
	}
	for (int i = 0; i < im->stmts.n; i++) {
		struct ox_stmt *s = im->stmts.v[i];

		if (!need[i])
			continue;
		if (s->comment)
			ts_buf_printf(&b, "%s\n", s->comment);
		ts_buf_printf(&b, "%s%s\n", is_output_name(im, s->name) ?
			"output " : "", s->text);
	}
	return b.s;
}

static ts_status read_opset(struct ox_importer *im)
{
	const Onnx__ModelProto *m = im->model;

	im->opset = -1;
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = m->opset_import[i]->domain;

		if ((!d || !*d || !strcmp(d, "ai.onnx")) &&
		    m->opset_import[i]->has_version)
			im->opset = (int)m->opset_import[i]->version;
	}
	if (im->opset < 0)
		return ox_fail(im, NULL, "the model imports no opset of ONNX's "
			"default domain");
	/* Opset 6 differs from 7 in broadcasting only, which the arithmetic
	 * operators read from their attributes; older opsets changed more,
	 * and only the operators of old_op() are taken from them. */
	if (im->opset < 1 || im->opset > 17)
		return ox_fail(im, NULL, "opset %d is not supported (6 to 17 "
			"are, and some operators of 1 to 5)", im->opset);
	return TS_OK;
}

static ts_onnx_model *import(struct ox_importer *im)
{
	const Onnx__GraphProto *g = im->model->graph;
	ts_onnx_model *m;

	if (!g)
		return ox_fail(im, NULL, "the model has no graph"), NULL;
	/* Graph rewrites come first: they may add initializers. */
	if (read_opset(im) < 0 || ox_fold_batchnorm(im, im->model->graph) < 0 ||
	    read_graph_inputs(im, g) < 0)
		return NULL;
	ts_buf_init(&im->header);
	ts_buf_printf(&im->header, "# Imported from %s (opset %d%s%s%s%s).\n",
		im->file, im->opset, im->model->producer_name &&
		*im->model->producer_name ? ", made by " : "",
		im->model->producer_name ? im->model->producer_name : "",
		im->model->producer_version && *im->model->producer_version ?
		" " : "", im->model->producer_version ?
		im->model->producer_version : "");
	for (size_t i = 0; i < g->n_node; i++)
		if (lower_node(im, g->node[i], (int)i) < 0)
			return NULL;
	if (read_graph_outputs(im, g) < 0)
		return NULL;
	m = ts_new(ts_onnx_model);
	m->source = print_program(im, &m->weights);
	m->inputs = im->inputs;
	m->outputs = im->outputs;
	m->out_names = im->out_names;
	if (!(m->dag = ts_parse_string(im->ctx, ts_asprintf("%s.tsl",
	    im->file), m->source))) {
		ox_fail(im, NULL, "the imported program does not parse: %s",
			ts_ctx_error(im->ctx));
		return NULL;
	}
	return m;
}

ts_onnx_model *ts_onnx_import_bytes(ts_ctx *ctx, const char *name,
	const void *data, size_t len, const ts_onnx_options *opt)
{
	struct ox_importer im = { 0 };
	ts_onnx_model *m;

	im.ctx = ctx;
	im.file = name;
	if (opt)
		im.opt = *opt;
	for (int i = 0; i < im.opt.nshapes; i++)
		if (!strchr(im.opt.shapes[i], '='))
			return ts_ctx_set_error(ctx, "%s: --shape %s: expected "
				"NAME=DIMS", name, im.opt.shapes[i]), NULL;
	im.model = onnx__model_proto__unpack(NULL, len, data);
	if (!im.model)
		return ts_ctx_set_error(ctx, "%s: not an ONNX model (the file "
			"is truncated or is not a serialized ModelProto)", name),
			NULL;
	m = import(&im);
	onnx__model_proto__free_unpacked(im.model, NULL);
	return m;
}

ts_onnx_model *ts_onnx_import(ts_ctx *ctx, const char *path,
	const ts_onnx_options *opt)
{
	size_t len;
	char *data = ts_read_file(path, &len);

	if (!data)
		return ts_ctx_set_error(ctx, "%s: %s", path, strerror(errno)),
			NULL;
	return ts_onnx_import_bytes(ctx, path, data, len, opt);
}

/* Accessors. */

const char *ts_onnx_source(const ts_onnx_model *m)
{
	return m->source;
}

ts_dag *ts_onnx_dag(const ts_onnx_model *m)
{
	return m->dag;
}

int ts_onnx_nweights(const ts_onnx_model *m)
{
	return m->weights.n;
}

const char *ts_onnx_weight_name(const ts_onnx_model *m, int i)
{
	return ((struct ox_value *)m->weights.v[i])->name;
}

const ts_array *ts_onnx_weight(const ts_onnx_model *m, int i)
{
	return ((struct ox_value *)m->weights.v[i])->konst;
}

const ts_array *ts_onnx_find_weight(const ts_onnx_model *m, const char *name)
{
	for (int i = 0; i < m->weights.n; i++)
		if (!strcmp(ts_onnx_weight_name(m, i), name))
			return ts_onnx_weight(m, i);
	return NULL;
}

int ts_onnx_ninputs(const ts_onnx_model *m)
{
	return m->inputs.n;
}

int ts_onnx_noutputs(const ts_onnx_model *m)
{
	return m->outputs.n;
}

const char *ts_onnx_input_name(const ts_onnx_model *m, int i, bool onnx)
{
	const struct ox_value *v = m->inputs.v[i];

	return onnx ? v->onnx : v->name;
}

const char *ts_onnx_output_name(const ts_onnx_model *m, int i, bool onnx)
{
	if (onnx)
		return ((struct ox_value *)m->outputs.v[i])->onnx;
	return m->out_names.v[i];
}

ts_array **ts_onnx_inputs(ts_ctx *ctx, const ts_onnx_model *m, uint64_t seed)
{
	ts_array **args = ts_dag_random_inputs(ctx, m->dag, seed);

	if (!args)
		return NULL;
	for (int i = 0; i < m->dag->ninputs; i++) {
		const ts_array *w = ts_onnx_find_weight(m,
			m->dag->inputs[i]->name);

		if (w)
			args[i] = (ts_array *)w;
	}
	return args;
}

ts_status ts_onnx_write(ts_ctx *ctx, const ts_onnx_model *m, const char *dir,
	const char *name)
{
	const char *path = ts_asprintf("%s/%s.tsl", dir, name);
	FILE *f = fopen(path, "w");

	if (!f)
		return ts_ctx_set_error(ctx, "%s: %s", path, strerror(errno));
	fputs(m->source, f);
	if (fclose(f) != 0)
		return ts_ctx_set_error(ctx, "%s: %s", path, strerror(errno));
	for (int i = 0; i < m->weights.n; i++)
		if (ts_npy_write(ctx, ts_asprintf("%s/%s.npy", dir,
		    ts_onnx_weight_name(m, i)), ts_onnx_weight(m, i)) < 0)
			return TS_ERROR;
	return TS_OK;
}
