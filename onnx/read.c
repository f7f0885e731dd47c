/* Reading ONNX's TensorProto into arrays: dtypes, the typed fields and
 * raw_data, checked against the declared shape. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "onnx/internal.h"

const char *ox_onnx_type_name(int elem)
{
	static const char *const names[] = {
		"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16",
		"INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
		"UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
	};

	if (elem >= 0 && elem < (int)(sizeof(names) / sizeof(names[0])))
		return names[elem];
	return "an unknown type";
}

/* The dtypes Tessel has, for messages. */
#define DTYPES "bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, " \
	"f32, f64"

/* The ts_dtype of "elem", or -1. */
static int dtype_of(int elem)
{
	switch (elem) {
	case ONNX_FLOAT: return TS_F32;
	case ONNX_UINT8: return TS_U8;
	case ONNX_INT8: return TS_I8;
	case ONNX_UINT16: return TS_U16;
	case ONNX_INT16: return TS_I16;
	case ONNX_INT32: return TS_I32;
	case ONNX_UINT32: return TS_U32;
	case ONNX_INT64: return TS_I64;
	case ONNX_UINT64: return TS_U64;
	case ONNX_BOOL: return TS_BOOL;
	case ONNX_FLOAT16: return TS_F16;
	case ONNX_BFLOAT16: return TS_BF16;
	case ONNX_DOUBLE: return TS_F64;
	default: return -1;
	}
}

ts_status ox_dtype(struct ox_importer *im, const struct ox_node *n, int elem,
	ts_dtype *t)
{
	int d = dtype_of(elem);

	if (d < 0)
		return ox_fail(im, n, "the element type %s is not supported "
			"(Tessel has %s)", ox_onnx_type_name(elem), DTYPES);
	*t = (ts_dtype)d;
	return TS_OK;
}

/* Copy the values of the typed field int32_data "src" into "a": the
 * integers narrower than 32 bits, bools, and the bits of f16 and bf16
 * values, each in one int32. */
static void copy_i32(ts_array *a, const int32_t *src)
{
	for (int64_t i = 0; i < a->size; i++) {
		switch (ts_dtype_size(a->dtype)) {
		case 1: ((uint8_t *)a->data)[i] = (uint8_t)src[i]; break;
		case 2: ((uint16_t *)a->data)[i] = (uint16_t)src[i]; break;
		default: ((int32_t *)a->data)[i] = src[i]; break;
		}
	}
}

/* Copy the values of the typed field uint64_data "src" (UINT32 and
 * UINT64) into "a". */
static void copy_u64(ts_array *a, const uint64_t *src)
{
	for (int64_t i = 0; i < a->size; i++) {
		if (a->dtype == TS_U32)
			((uint32_t *)a->data)[i] = (uint32_t)src[i];
		else
			((uint64_t *)a->data)[i] = src[i];
	}
}

/* The number of values the typed field of "t" holds for "dtype". */
static size_t typed_count(const Onnx__TensorProto *t, ts_dtype d)
{
	switch (d) {
	case TS_F32: return t->n_float_data;
	case TS_F64: return t->n_double_data;
	case TS_I64: return t->n_int64_data;
	case TS_U32: case TS_U64: return t->n_uint64_data;
	default: return t->n_int32_data;
	}
}

ts_array *ox_read_tensor(ts_ctx *ctx, const Onnx__TensorProto *t,
	const char *where)
{
	int64_t shape[TS_MAX_DIMS];
	int d = dtype_of(t->has_data_type ? t->data_type : 0);
	int64_t count = 1;
	ts_array *a;
	size_t bytes;

	if (d < 0)
		return ts_ctx_set_error(ctx, "%s: the element type %s is not "
			"supported (Tessel has %s)", where,
			ox_onnx_type_name(t->data_type), DTYPES), NULL;
	if (t->n_dims > TS_MAX_DIMS)
		return ts_ctx_set_error(ctx, "%s: %zu dimensions, more than "
			"the %d Tessel supports", where, t->n_dims, TS_MAX_DIMS),
			NULL;
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0)
			return ts_ctx_set_error(ctx, "%s: negative dimension "
				"%lld", where, (long long)t->dims[i]), NULL;
		shape[i] = t->dims[i];
	}
	if (t->has_data_location &&
	    t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return ts_ctx_set_error(ctx, "%s: data stored in an external "
			"file is not supported (save the model with its weights "
			"inside)", where), NULL;
	if (t->segment)
		return ts_ctx_set_error(ctx, "%s: segmented tensors are not "
			"supported", where), NULL;
	/* The data must be there before memory is given to it. */
	for (size_t i = 0; i < t->n_dims; i++) {
		if (shape[i] && count > INT64_MAX / shape[i])
			return ts_ctx_set_error(ctx, "%s: too many elements",
				where), NULL;
		count *= shape[i];
	}
	if (t->has_raw_data ? (uint64_t)t->raw_data.len !=
	    (uint64_t)count * ts_dtype_size((ts_dtype)d) :
	    typed_count(t, (ts_dtype)d) != (uint64_t)count)
		return ts_ctx_set_error(ctx, "%s: %zu %s for %lld elements of "
			"%s", where, t->has_raw_data ? t->raw_data.len :
			typed_count(t, (ts_dtype)d), t->has_raw_data ?
			"bytes of raw data" : "values", (long long)count,
			ts_dtype_name((ts_dtype)d)), NULL;
	if (!(a = ts_array_alloc(ctx, (ts_dtype)d, (int)t->n_dims, shape)))
		return NULL;
	bytes = (size_t)a->size * ts_dtype_size(a->dtype);
	if (t->has_raw_data) {
		if (bytes)
			memcpy(a->data, t->raw_data.data, bytes);
		return a;
	}
	if (!bytes)
		return a;	/* no elements: the fields may be NULL */
	if (a->dtype == TS_F32)
		memcpy(a->data, t->float_data, bytes);
	else if (a->dtype == TS_F64)
		memcpy(a->data, t->double_data, bytes);
	else if (a->dtype == TS_I64)
		memcpy(a->data, t->int64_data, bytes);
	else if (a->dtype == TS_U32 || a->dtype == TS_U64)
		copy_u64(a, t->uint64_data);
	else
		copy_i32(a, t->int32_data);
	return a;
}

ts_array *ts_onnx_read_tensor(ts_ctx *ctx, const char *path,
	const char **name)
{
	size_t len;
	char *data = ts_read_file(path, &len);
	Onnx__TensorProto *t;
	ts_array *a;

	if (!data)
		return ts_ctx_set_error(ctx, "%s: %s", path, strerror(errno)),
			NULL;
	t = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)data);
	if (!t)
		return ts_ctx_set_error(ctx, "%s: not a serialized ONNX "
			"TensorProto", path), NULL;
	a = ox_read_tensor(ctx, t, path);
	if (name)
		*name = t->name && *t->name ? ts_strdup(t->name) : NULL;
	onnx__tensor_proto__free_unpacked(t, NULL);
	return a;
}
