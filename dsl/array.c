/* Dense host arrays: allocation, element access, random filling and
 * comparison within the tolerance of a dtype. */
#include <config.h>

#include <math.h>
#include <unistd.h>

#include "dsl/internal.h"

#define ARRAY_ALIGN 64

/* An array and the start of its data block, kept so that the block stays
 * reachable however "data" is aligned inside it. */
struct array_box {
	ts_array a;
	void *base;
};

/* Return the number of elements of "shape" ("ndim" extents) in "*size", or
 * an error naming the offending dimension. */
static ts_status shape_size(ts_ctx *ctx, int ndim, const int64_t *shape,
	size_t elem, int64_t *size)
{
	int64_t n = 1;

	if (ndim < 0 || ndim > TS_MAX_DIMS)
		return ts_ctx_set_error(ctx, "array: %d dimensions; at most %d "
			"are supported", ndim, TS_MAX_DIMS);
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return ts_ctx_set_error(ctx, "array: dimension %d has "
				"negative extent %lld", i, (long long)shape[i]);
	for (int i = 0; i < ndim; i++)
		n *= shape[i] ? 1 : 0;
	/* An empty array may have large extents besides its zero one. */
	if (n && ts_shape_overflow_dim(ndim, shape, elem) >= 0)
		return ts_ctx_set_error(ctx, "array: %d-dimensional shape is "
			"too large: its size in bytes overflows 64 bits", ndim);
	for (int i = 0; n && i < ndim; i++)
		n *= shape[i];
	*size = n;
	return TS_OK;
}

int64_t ts_memory_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0 || pages > INT64_MAX / page)
		return INT64_MAX;
	return (int64_t)pages * page;
}

const char *ts_bytes_string(double bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
		"TiB", "PiB", "EiB" };
	int u = 0;

	if (bytes < 1024)
		return ts_asprintf("%.0f bytes", bytes);
	while (bytes >= 1024 && u < 6) {
		bytes /= 1024;
		u++;
	}
	return ts_asprintf("%.2f %s", bytes, units[u]);
}

/* Check that "bytes" of array data for a "what" fit in the memory of this
 * machine. */
static ts_status check_memory(ts_ctx *ctx, const char *what, int64_t bytes)
{
	int64_t mem = ts_memory_bytes();

	if (bytes <= mem)
		return TS_OK;
	return ts_ctx_set_error(ctx, "%s takes %s, more than the %s of memory "
		"of this machine", what, ts_bytes_string((double)bytes),
		ts_bytes_string((double)mem));
}

/* Return "t" and "shape" ("ndim" extents) written as f32[2x3]. */
static const char *type_string(ts_dtype t, int ndim, const int64_t *shape)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", ts_dtype_name(t));
	for (int i = 0; i < ndim; i++)
		ts_buf_printf(&b, "%s%lld", i ? "x" : "", (long long)shape[i]);
	ts_buf_putc(&b, ']');
	return b.s;
}

ts_status ts_dag_check_memory(ts_ctx *ctx, const ts_dag *dag)
{
	const ts_tensor *big = NULL;
	double total = 0;

	if (!dag)
		return ts_ctx_set_error(ctx, "memory: no DAG");
	for (int i = 0; i < dag->ninputs + dag->nstages; i++) {
		const ts_tensor *t = i < dag->ninputs ? dag->inputs[i] :
			dag->stages[i - dag->ninputs]->out;
		double bytes = (double)ts_tensor_size(t) *
			ts_dtype_size(t->dtype);
		total += bytes;
		if (!big || bytes > (double)ts_tensor_size(big) *
		    ts_dtype_size(big->dtype))
			big = t;
	}
	if (!big || total <= (double)ts_memory_bytes())
		return TS_OK;
	return ts_ctx_set_error(ctx, "%s: its tensors take %s in all, more "
		"than the %s of memory of this machine (the largest, '%s', is "
		"%s: %s)", dag->name ? dag->name : "program",
		ts_bytes_string(total), ts_bytes_string((double)ts_memory_bytes()),
		big->name, type_string(big->dtype, big->ndim, big->shape),
		ts_bytes_string((double)ts_tensor_size(big) *
		ts_dtype_size(big->dtype)));
}

ts_array *ts_array_alloc(ts_ctx *ctx, ts_dtype t, int ndim,
	const int64_t *shape)
{
	struct array_box *box;
	int64_t size = 0;
	uintptr_t p;

	if ((unsigned)t >= TS_DTYPE_COUNT) {
		ts_ctx_set_error(ctx, "array: unknown dtype %d", (int)t);
		return NULL;
	}
	if (shape_size(ctx, ndim, shape, ts_dtype_size(t), &size) < 0 ||
	    check_memory(ctx, ts_asprintf("array %s", type_string(t, ndim,
	    shape)), size * (int64_t)ts_dtype_size(t)) < 0)
		return NULL;
	box = ts_new(struct array_box);
	box->base = ts_alloc_atomic((size_t)size * ts_dtype_size(t) +
		ARRAY_ALIGN);
	if (!box->base) {
		ts_ctx_set_error(ctx, "array: out of memory for %lld elements",
			(long long)size);
		return NULL;
	}
	p = ((uintptr_t)box->base + ARRAY_ALIGN - 1) &
		~(uintptr_t)(ARRAY_ALIGN - 1);
	box->a.dtype = t;
	box->a.ndim = ndim;
	for (int i = 0; i < ndim; i++)
		box->a.shape[i] = shape[i];
	box->a.size = size;
	box->a.data = (void *)p;
	return &box->a;
}

/* An array shaped like "t", or NULL when "t" is NULL. */
ts_array *ts_array_for_tensor(ts_ctx *ctx, const ts_tensor *t)
{
	if (!t)
		return NULL;
	return ts_array_alloc(ctx, t->dtype, t->ndim, t->shape);
}

/* Convert "v" to an i64 the way a truncating cast does; NaN and values
 * outside the range of i64 give 0, as ts_round_to_dtype does. */
static int64_t double_to_i64(double v)
{
	if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
		return 0;
	return (int64_t)v;
}

double ts_array_get(const ts_array *a, int64_t i)
{
	switch (a->dtype) {
	case TS_F16: return ts_f16_to_f32(((const uint16_t *)a->data)[i]);
	case TS_BF16: return ts_bf16_to_f32(((const uint16_t *)a->data)[i]);
	case TS_F32: return ((const float *)a->data)[i];
	case TS_F64: return ((const double *)a->data)[i];
	default: return ts_int_to_double(a->dtype, ts_array_get_int(a, i));
	}
}

int64_t ts_array_get_int(const ts_array *a, int64_t i)
{
	const void *d = a->data;

	switch (a->dtype) {
	case TS_BOOL: return ((const uint8_t *)d)[i] != 0;
	case TS_I8: return ((const int8_t *)d)[i];
	case TS_U8: return ((const uint8_t *)d)[i];
	case TS_I16: return ((const int16_t *)d)[i];
	case TS_U16: return ((const uint16_t *)d)[i];
	case TS_I32: return ((const int32_t *)d)[i];
	case TS_U32: return ((const uint32_t *)d)[i];
	case TS_I64: case TS_U64: return ((const int64_t *)d)[i];
	default: return ts_float_to_int(TS_I64, trunc(ts_array_get(a, i)));
	}
}

void ts_array_set(ts_array *a, int64_t i, double v)
{
	switch (a->dtype) {
	case TS_F16: ((uint16_t *)a->data)[i] = ts_f32_to_f16((float)v); break;
	case TS_BF16: ((uint16_t *)a->data)[i] = ts_f32_to_bf16((float)v);
		break;
	case TS_F32: ((float *)a->data)[i] = (float)v; break;
	case TS_F64: ((double *)a->data)[i] = v; break;
	case TS_BOOL: ((uint8_t *)a->data)[i] = v != 0; break;
	/* Through a double, as a store of a float computation: wrapped
	 * (i64 and u64 saturate, as ts_round_to_dtype says). */
	case TS_I64: ((int64_t *)a->data)[i] = double_to_i64(v); break;
	case TS_U64: ((int64_t *)a->data)[i] =
		ts_float_to_int(TS_U64, trunc(v));
		break;
	default:
		ts_array_set_int(a, i, (int64_t)ts_round_to_dtype(a->dtype, v));
		break;
	}
}

void ts_array_set_int(ts_array *a, int64_t i, int64_t v)
{
	void *d = a->data;

	if (ts_dtype_is_float(a->dtype)) {
		ts_array_set(a, i, ts_int_to_double(TS_I64, v));
		return;
	}
	v = ts_int_wrap(a->dtype, v);
	switch (ts_dtype_size(a->dtype)) {
	case 1: ((uint8_t *)d)[i] = (uint8_t)v; break;
	case 2: ((uint16_t *)d)[i] = (uint16_t)v; break;
	case 4: ((uint32_t *)d)[i] = (uint32_t)v; break;
	default: ((int64_t *)d)[i] = v; break;
	}
}

void ts_array_fill_random(ts_array *a, uint64_t seed)
{
	uint64_t st = seed;

	if (!a)
		return;
	for (int64_t i = 0; i < a->size; i++) {
		uint64_t r = ts_splitmix64(&st);
		/* Floats on a grid the dtype holds exactly, so that no
		 * value rounds up to 1. */
		if (a->dtype == TS_F16)
			ts_array_set(a, i, (double)(r >> 53) * 0x1p-10 - 1.0);
		else if (a->dtype == TS_BF16)
			ts_array_set(a, i, (double)(r >> 56) * 0x1p-7 - 1.0);
		else if (a->dtype == TS_F32)
			ts_array_set(a, i, (double)(r >> 40) * 0x1p-23 - 1.0);
		else if (a->dtype == TS_F64)
			ts_array_set(a, i, (double)(r >> 11) * 0x1p-52 - 1.0);
		else if (a->dtype == TS_BOOL)
			ts_array_set(a, i, (double)(r >> 63));
		else if (ts_dtype_is_signed(a->dtype))
			ts_array_set(a, i, (double)(r >> 60) - 8.0);
		else
			ts_array_set(a, i, (double)(r >> 60));
	}
}

void ts_array_fill_range(ts_array *a, uint64_t seed, int64_t lo, int64_t hi)
{
	uint64_t st = seed;
	uint64_t n;

	if (!a)
		return;
	n = hi > lo ? (uint64_t)hi - (uint64_t)lo : 1;
	for (int64_t i = 0; i < a->size; i++) {
		uint64_t r = ts_splitmix64(&st);
		uint64_t k = (uint64_t)(((unsigned __int128)r * n) >> 64);
		ts_array_set_int(a, i, (int64_t)((uint64_t)lo + k));
	}
}

/* Whether "a" and "b" have the same rank and extents. */
static bool same_shape(const ts_array *a, const ts_array *b)
{
	if (a->ndim != b->ndim)
		return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i])
			return false;
	return true;
}

/* Print the dtype and shape of "a" into "b", as f32[2x3]. */
static void describe(ts_buf *b, const ts_array *a)
{
	ts_buf_printf(b, "%s[", ts_dtype_name(a->dtype));
	for (int i = 0; i < a->ndim; i++)
		ts_buf_printf(b, "%s%lld", i ? "x" : "", (long long)a->shape[i]);
	ts_buf_putc(b, ']');
}

/* The absolute difference of "x" and "y", with two NaNs (or two equal
 * infinities) counting as equal and one NaN as an infinite difference. */
static double difference(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y) ? 0 : INFINITY;
	if (x == y)
		return 0;
	return fabs(x - y);
}

/* The absolute difference of element "i" of "a" and "b": exact for two
 * integer arrays of one dtype, whose values a double may round (i64,
 * u64), so that values one apart never compare equal. */
static double element_difference(const ts_array *a, const ts_array *b,
	int64_t i)
{
	uint64_t x, y;

	if (ts_dtype_is_float(a->dtype) || a->dtype != b->dtype)
		return difference(ts_array_get(a, i), ts_array_get(b, i));
	x = (uint64_t)ts_array_get_int(a, i);
	y = (uint64_t)ts_array_get_int(b, i);
	if (ts_dtype_is_signed(a->dtype)) {	/* order as signed */
		x ^= 1ULL << 63;
		y ^= 1ULL << 63;
	}
	return (double)(x > y ? x - y : y - x);
}

ts_status ts_array_compare(ts_ctx *ctx, const ts_array *a, const ts_array *b,
	double *max_abs, double *max_rel)
{
	double worst_abs = 0, worst_rel = 0;

	if (!a || !b)
		return ts_ctx_set_error(ctx, "compare: missing array");
	if (!same_shape(a, b)) {
		ts_buf m;
		ts_buf_init(&m);
		ts_buf_puts(&m, "compare: shapes differ: ");
		describe(&m, a);
		ts_buf_puts(&m, " vs ");
		describe(&m, b);
		return ts_ctx_set_error(ctx, "%s", m.s);
	}
	for (int64_t i = 0; i < a->size; i++) {
		double y = ts_array_get(b, i);
		double d = element_difference(a, b, i);
		double r = d == 0 ? 0 : d / fmax(fabs(y), 1e-30);
		worst_abs = fmax(worst_abs, d);
		worst_rel = fmax(worst_rel, r);
	}
	if (max_abs)
		*max_abs = worst_abs;
	if (max_rel)
		*max_rel = worst_rel;
	return TS_OK;
}

/* The tolerance of dtype "t": absolute and relative parts.  Floats allow
 * for a different order of accumulation (the interpreter sums in f64, a
 * kernel in its own dtype); integers and bools must match exactly. */
static void tolerance(ts_dtype t, double *atol, double *rtol)
{
	switch (t) {
	case TS_F16: *atol = 2e-2; *rtol = 2e-2; break;
	case TS_BF16: *atol = 2e-2; *rtol = 2e-2; break;
	case TS_F32: *atol = 1e-3; *rtol = 1e-3; break;
	case TS_F64: *atol = 1e-9; *rtol = 1e-9; break;
	default: *atol = 0; *rtol = 0; break;
	}
}

bool ts_array_close(const ts_array *got, const ts_array *want,
	double *max_abs_err)
{
	double atol, rtol, worst = 0;
	bool ok = true;

	if (max_abs_err)
		*max_abs_err = INFINITY;
	if (!got || !want || !same_shape(got, want))
		return false;
	tolerance(want->dtype, &atol, &rtol);
	for (int64_t i = 0; i < want->size; i++) {
		double y = ts_array_get(want, i);
		double d = element_difference(got, want, i);
		if (d != 0 && !(d <= atol + rtol * fabs(y)))
			ok = false;
		worst = fmax(worst, d);
	}
	if (max_abs_err)
		*max_abs_err = worst;
	return ok;
}
