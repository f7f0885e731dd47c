/* Dtypes: names, sizes, half precision, and the conversions every
 * evaluator shares (rounding to a store's dtype, float to integer). */
#include <config.h>

#include <math.h>
#include <string.h>

#include "dsl/internal.h"

/* Each dtype's name, size in bytes, and class: the numbers of the enum
 * are only indices here (the language, the records and the workload hash
 * name dtypes by their names). */
static const struct {
	const char *name;
	size_t size;
	bool is_float, is_unsigned;
} dtype_info[TS_DTYPE_COUNT] = {
	[TS_BOOL] = { "bool", 1, false, true },
	[TS_I8] = { "i8", 1, false, false },
	[TS_U8] = { "u8", 1, false, true },
	[TS_I16] = { "i16", 2, false, false },
	[TS_U16] = { "u16", 2, false, true },
	[TS_I32] = { "i32", 4, false, false },
	[TS_U32] = { "u32", 4, false, true },
	[TS_I64] = { "i64", 8, false, false },
	[TS_U64] = { "u64", 8, false, true },
	[TS_F16] = { "f16", 2, true, false },
	[TS_BF16] = { "bf16", 2, true, false },
	[TS_F32] = { "f32", 4, true, false },
	[TS_F64] = { "f64", 8, true, false },
};

const char *ts_dtype_name(ts_dtype t)
{
	return (unsigned)t < TS_DTYPE_COUNT ? dtype_info[t].name : "?";
}

ts_status ts_dtype_from_name(const char *name, ts_dtype *out)
{
	for (int t = 0; t < TS_DTYPE_COUNT; t++)
		if (strcmp(name, dtype_info[t].name) == 0) {
			*out = t;
			return TS_OK;
		}
	return TS_ERROR;
}

size_t ts_dtype_size(ts_dtype t)
{
	return dtype_info[t].size;
}

bool ts_dtype_is_float(ts_dtype t)
{
	return (unsigned)t < TS_DTYPE_COUNT && dtype_info[t].is_float;
}

bool ts_dtype_is_int(ts_dtype t)
{
	return (unsigned)t < TS_DTYPE_COUNT && t != TS_BOOL &&
		!dtype_info[t].is_float;
}

bool ts_dtype_is_signed(ts_dtype t)
{
	return (unsigned)t < TS_DTYPE_COUNT && !dtype_info[t].is_unsigned;
}

/* The width in bits of the integer dtype "t". */
static int int_bits(ts_dtype t)
{
	return (int)ts_dtype_size(t) * 8;
}

int64_t ts_int_wrap(ts_dtype t, int64_t v)
{
	int bits;
	uint64_t u = (uint64_t)v;

	if (t == TS_BOOL)
		return v != 0;
	bits = int_bits(t);
	if (bits >= 64)
		return v;
	u &= (1ULL << bits) - 1;
	if (ts_dtype_is_signed(t) && (u >> (bits - 1)) & 1)
		u |= ~0ULL << bits;
	return (int64_t)u;
}

double ts_int_to_double(ts_dtype t, int64_t v)
{
	return t == TS_U64 ? (double)(uint64_t)v : (double)v;
}

/* Half precision. */

uint16_t ts_f32_to_f16(float f)
{
	uint32_t x, sign, mant;
	int32_t exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)		/* inf or nan */
		return sign | 0x7c00 | (mant ? 0x200 : 0);
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) {
		uint32_t shift, half, rest;
		if (exp < -10)
			return sign;
		mant |= 0x800000;
		shift = 14 - exp;
		half = mant >> shift;
		rest = mant & ((1u << shift) - 1);
		if (rest > (1u << (shift - 1)) ||
		    (rest == (1u << (shift - 1)) && (half & 1)))
			half++;
		return sign | half;
	}
	{
		uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
		uint32_t rest = mant & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;		/* may carry into the exponent: fine */
		return (uint16_t)h;
	}
}

float ts_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff;
	uint32_t x;
	float f;

	if (exp == 0) {
		if (mant == 0) {
			x = sign;
		} else {
			exp = 127 - 15 + 1;
			while (!(mant & 0x400)) {
				mant <<= 1;
				exp--;
			}
			x = sign | (exp << 23) | ((mant & 0x3ff) << 13);
		}
	} else if (exp == 31) {
		x = sign | 0x7f800000 | (mant << 13);
	} else {
		x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	}
	memcpy(&f, &x, 4);
	return f;
}

/* bfloat16: the upper half of an f32. */

uint16_t ts_f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)	/* NaN: keep it a quiet NaN */
		return (uint16_t)((x >> 16) | 0x40);
	/* Round to nearest even; a carry may reach the exponent, which
	 * rounds the largest finite values up to infinity as it should. */
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

float ts_bf16_to_f32(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/* Wrap the integer "v" to "bits" bits, signed or not. */
static double wrap_int(double v, int bits, bool is_signed)
{
	uint64_t u;

	if (isnan(v))
		return 0;
	if (v >= 9.2e18 || v <= -9.2e18)
		return 0;
	u = (uint64_t)(int64_t)v;
	if (bits < 64)
		u &= (1ULL << bits) - 1;
	if (is_signed && bits < 64 && (u >> (bits - 1)) & 1)
		return (double)((int64_t)u - (int64_t)(1ULL << bits));
	return (double)(int64_t)u;
}

int64_t ts_float_to_int(ts_dtype t, double v)
{
	static const int64_t lo[TS_DTYPE_COUNT] = {
		[TS_I8] = INT8_MIN, [TS_I16] = INT16_MIN, [TS_I32] = INT32_MIN,
		[TS_I64] = INT64_MIN,
	};
	static const int64_t hi[TS_DTYPE_COUNT] = {
		[TS_I8] = INT8_MAX, [TS_U8] = UINT8_MAX, [TS_I16] = INT16_MAX,
		[TS_U16] = UINT16_MAX, [TS_I32] = INT32_MAX,
		[TS_U32] = UINT32_MAX, [TS_I64] = INT64_MAX,
	};

	if (t == TS_BOOL)
		return v != 0;
	if (isnan(v))
		return 0;
	/* u64 is held as its bit pattern; 2^64 is the first double above
	 * its largest value. */
	if (t == TS_U64)
		return v <= 0 ? 0 : v >= 18446744073709551616.0 ? -1 :
			(int64_t)(uint64_t)v;
	/* 2^63 is the first double above INT64_MAX; -2^63 is INT64_MIN. */
	if (v <= (double)lo[t])
		return lo[t];
	if (t == TS_I64 ? v >= 9223372036854775808.0 : v >= (double)hi[t])
		return hi[t];
	return (int64_t)v;
}

double ts_round_to_dtype(ts_dtype t, double v)
{
	switch (t) {
	case TS_BOOL: return v != 0;
	case TS_I8: return wrap_int(trunc(v), 8, true);
	case TS_U8: return wrap_int(trunc(v), 8, false);
	case TS_I16: return wrap_int(trunc(v), 16, true);
	case TS_U16: return wrap_int(trunc(v), 16, false);
	case TS_I32: return wrap_int(trunc(v), 32, true);
	case TS_U32: return wrap_int(trunc(v), 32, false);
	case TS_I64: return (double)ts_float_to_int(TS_I64, trunc(v));
	case TS_U64: return ts_int_to_double(TS_U64,
		ts_float_to_int(TS_U64, trunc(v)));
	case TS_F16: return ts_f16_to_f32(ts_f32_to_f16((float)v));
	case TS_BF16: return ts_bf16_to_f32(ts_f32_to_bf16((float)v));
	case TS_F32: return (float)v;
	default: return v;
	}
}
