/* .npy files: round trips of every dtype and rank, the exact bytes NumPy
 * writes, version 2.0/3.0 headers, and the errors of bad files. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/common.h"

/* A fresh temporary file name; the file exists and is empty. */
static char *temp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/tessel-npy-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

/* Read the whole file "path" into a malloc'd buffer; its size in "*n". */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	buf[len] = 0;
	*n = (size_t)len;
	return buf;
}

/* Write a .npy file of format "major".0 with header dict "dict" (padded
 * to 64 bytes) followed by "ndata" bytes of "data". */
static void write_npy(const char *path, int major, const char *dict,
	const void *data, size_t ndata)
{
	size_t pre = major == 1 ? 10 : 12, hlen = strlen(dict) + 1;
	FILE *f = fopen(path, "wb");

	hlen += (64 - (pre + hlen) % 64) % 64;
	assert_non_null(f);
	fwrite("\x93NUMPY", 1, 6, f);
	fputc(major, f);
	fputc(0, f);
	fputc((int)(hlen & 0xff), f);
	fputc((int)((hlen >> 8) & 0xff), f);
	if (major > 1) {
		fputc(0, f);
		fputc(0, f);
	}
	fputs(dict, f);
	for (size_t i = strlen(dict) + 1; i < hlen; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(data, 1, ndata, f);
	fclose(f);
}

static void test_npy_roundtrip__every_dtype_and_rank(void **state)
{
	static const int64_t shapes[5][4] = {
		{ 0 }, { 5 }, { 2, 3 }, { 2, 1, 3 }, { 1, 2, 3, 2 },
	};
	ts_ctx *ctx = *state;
	char *path = temp_path();

	for (int t = 0; t < TS_DTYPE_COUNT; t++)
		for (int rank = 0; rank <= 4; rank++) {
			ts_array *a = ts_array_alloc(ctx, t, rank, shapes[rank]);
			ts_array *b;
			unsigned char *bytes;
			size_t n, hlen;

			assert_non_null(a);
			ts_array_fill_random(a, (uint64_t)(t * 10 + rank));
			if (t == TS_BF16) {
				/* NumPy has no bfloat16. */
				assert_int_equal(ts_npy_write(ctx, path, a),
					TS_ERROR);
				assert_error_contains(ctx, "bf16 arrays have no "
					"NumPy dtype; cast to f32 to save one");
				ts_ctx_clear_error(ctx);
				continue;
			}
			assert_int_equal(ts_npy_write(ctx, path, a), TS_OK);
			b = ts_npy_read(ctx, path);
			if (!b)
				fail_msg("%s rank %d: %s", ts_dtype_name(t), rank,
					ts_ctx_error(ctx));
			assert_int_equal(b->dtype, t);
			assert_int_equal(b->ndim, rank);
			for (int d = 0; d < rank; d++)
				assert_int_equal(b->shape[d], shapes[rank][d]);
			assert_int_equal(b->size, a->size);
			assert_memory_equal(b->data, a->data,
				a->size * ts_dtype_size(t));
			assert_int_equal((uintptr_t)b->data % 64, 0);
			/* The header fills whole 64-byte blocks, ends in a
			 * newline, and the data follow it. */
			bytes = slurp(path, &n);
			hlen = 10 + (bytes[8] | (size_t)bytes[9] << 8);
			assert_int_equal(hlen % 64, 0);
			assert_int_equal(bytes[hlen - 1], '\n');
			assert_int_equal(n, hlen + a->size * ts_dtype_size(t));
			free(bytes);
		}
	unlink(path);
}

/* The bytes NumPy 1.x and 2.x write for np.arange(6, dtype='<f4')
 * .reshape(2, 3). */
static void test_npy_write_f32_2x3__matches_numpy_bytes(void **state)
{
	static const char dict[] = "{'descr': '<f4', 'fortran_order': False, "
		"'shape': (2, 3), }";
	ts_ctx *ctx = *state;
	int64_t shape[2] = { 2, 3 };
	ts_array *a = ts_array_alloc(ctx, TS_F32, 2, shape);
	char *path = temp_path();
	unsigned char want[128 + 24];
	unsigned char *got;
	size_t n;

	for (int i = 0; i < 6; i++)
		((float *)a->data)[i] = (float)i;
	memcpy(want, "\x93NUMPY\x01\x00\x76\x00", 10);
	memset(want + 10, ' ', 118);
	memcpy(want + 10, dict, strlen(dict));
	want[127] = '\n';
	memcpy(want + 128, a->data, 24);
	assert_int_equal(ts_npy_write(ctx, path, a), TS_OK);
	got = slurp(path, &n);
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(got, want, sizeof(want));
	free(got);
	unlink(path);
}

/* NumPy leaves spaces for the first extent to grow to 21 digits before
 * padding to 64 bytes: this empty 8-D array takes a 192-byte header where
 * the bare dict would fit in 128. */
static void test_npy_header__leaves_growth_room_like_numpy(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[8] = { 1, 0, 10000, 10000, 10000, 10000, 10000, 10000 };
	ts_array *a = ts_array_alloc(ctx, TS_F32, 8, shape), *b;
	char *path = temp_path();
	unsigned char *got;
	size_t n;

	assert_non_null(a);
	assert_int_equal(a->size, 0);
	assert_int_equal(ts_npy_write(ctx, path, a), TS_OK);
	got = slurp(path, &n);
	assert_int_equal(n, 192);
	assert_int_equal(got[8] | got[9] << 8, 182);
	assert_int_equal(got[191], '\n');
	free(got);
	b = ts_npy_read(ctx, path);
	assert_non_null(b);
	assert_int_equal(b->ndim, 8);
	assert_int_equal(b->shape[7], 10000);
	unlink(path);
}

/* The shape and descr as NumPy prints them for other ranks and types. */
static void test_npy_header__shape_and_descr_spelling(void **state)
{
	static const struct {
		ts_dtype t;
		int ndim;
		int64_t shape[3];
		const char *want;
	} cases[] = {
		{ TS_F64, 0, { 0 }, "{'descr': '<f8', 'fortran_order': False, "
			"'shape': (), }" },
		{ TS_BOOL, 1, { 3 }, "{'descr': '|b1', 'fortran_order': False, "
			"'shape': (3,), }" },
		{ TS_I8, 3, { 10, 1, 2 }, "{'descr': '|i1', 'fortran_order': "
			"False, 'shape': (10, 1, 2), }" },
		{ TS_U8, 1, { 7 }, "'descr': '|u1'" },
		{ TS_I32, 1, { 7 }, "'descr': '<i4'" },
		{ TS_I64, 1, { 7 }, "'descr': '<i8'" },
		{ TS_F16, 1, { 7 }, "'descr': '<f2'" },
		{ TS_I16, 1, { 7 }, "'descr': '<i2'" },
		{ TS_U16, 1, { 7 }, "'descr': '<u2'" },
		{ TS_U32, 1, { 7 }, "'descr': '<u4'" },
		{ TS_U64, 1, { 7 }, "'descr': '<u8'" },
	};
	ts_ctx *ctx = *state;
	char *path = temp_path();

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ts_array *a = ts_array_alloc(ctx, cases[i].t, cases[i].ndim,
			cases[i].shape);
		unsigned char *got;
		size_t n;

		assert_int_equal(ts_npy_write(ctx, path, a), TS_OK);
		got = slurp(path, &n);
		if (!strstr((char *)got + 10, cases[i].want))
			fail_msg("header \"%.100s\" lacks \"%s\"",
				(char *)got + 10, cases[i].want);
		free(got);
	}
	unlink(path);
}

/* Format 2.0 and 3.0 headers (4-byte length), keys in another order and
 * double quotes are read. */
static void test_npy_read_v2_v3__accepted(void **state)
{
	static const int32_t data[3] = { 1, -2, 300 };
	static const char *dicts[3] = {
		"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
		"{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}",
		"{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3, )}",
	};
	ts_ctx *ctx = *state;
	char *path = temp_path();

	for (int major = 1; major <= 3; major++) {
		ts_array *a;

		write_npy(path, major, dicts[major - 1], data, sizeof(data));
		a = ts_npy_read(ctx, path);
		if (!a)
			fail_msg("version %d: %s", major, ts_ctx_error(ctx));
		assert_int_equal(a->dtype, TS_I32);
		assert_int_equal(a->ndim, 1);
		assert_int_equal(a->shape[0], 3);
		assert_memory_equal(a->data, data, sizeof(data));
	}
	unlink(path);
}

/* Bad files and the messages they give. */
static void test_npy_read_bad_files__name_file_and_problem(void **state)
{
	static const unsigned char ten[10] = { 0 };
	static const struct {
		int major;
		const char *dict;
		size_t ndata;
		const char *want;
	} cases[] = {
		{ 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
			8, "unsupported .npy format version 4.0" },
		{ 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
			24, "Fortran-order arrays are not supported" },
		{ 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
			8, "big-endian data ('>f4') is not supported" },
		{ 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
			16, "unsupported dtype descr '<c8'" },
		{ 1, "{'descr': '<f4', 'fortran_order': False}", 8,
			"'descr', 'fortran_order' and 'shape' are required" },
		{ 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
			8, "malformed .npy header" },
		{ 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
			8, "expected True or False" },
		{ 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
			10, "truncated: expected 24 bytes of data, found 10" },
		{ 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }",
			0, "truncated: expected 32 bytes of data, found 0" },
		/* Sizes are checked against the file before allocating. */
		{ 1, "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (1099511627776,), }", 8,
			"truncated: expected 4398046511104 bytes of data, "
			"found 8" },
		{ 1, "{'descr': '<f8', 'fortran_order': False, "
			"'shape': (4611686018427387904, 4), }", 8,
			"the shape in the header is too large: its size in "
			"bytes overflows 64 bits" },
		{ 1, "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (99999999999999999999,), }", 8,
			"expected a non-negative extent" },
	};
	ts_ctx *ctx = *state;
	char *path = temp_path();
	unsigned char zeros[32] = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		write_npy(path, cases[i].major, cases[i].dict, zeros,
			cases[i].ndata);
		ts_ctx_clear_error(ctx);
		assert_null(ts_npy_read(ctx, path));
		assert_error_contains(ctx, path);
		assert_error_contains(ctx, cases[i].want);
	}
	/* Not a .npy file at all, and a file cut inside its header. */
	{
		FILE *f = fopen(path, "wb");
		fwrite(ten, 1, sizeof(ten), f);
		fclose(f);
		assert_null(ts_npy_read(ctx, path));
		assert_error_contains(ctx, path);
		assert_error_contains(ctx, "not a .npy file (bad magic)");
		f = fopen(path, "wb");
		fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 18, f);
		fclose(f);
		assert_null(ts_npy_read(ctx, path));
		assert_error_contains(ctx, "truncated .npy header");
		/* A v2 header claiming 2.3 GiB: refused, not allocated. */
		f = fopen(path, "wb");
		fwrite("\x93NUMPY\x02\x00\x74\x00\x00\x93{'descr'", 1, 20, f);
		fclose(f);
		assert_null(ts_npy_read(ctx, path));
		assert_error_contains(ctx, "truncated .npy header: expected "
			"2466250868 bytes, found 8");
	}
	unlink(path);
	assert_null(ts_npy_read(ctx, path));
	assert_error_contains(ctx, path);
	assert_error_contains(ctx, "cannot open");
}

static void test_npy_write_bad_path__names_file(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 2 };
	ts_array *a = ts_array_alloc(ctx, TS_F32, 1, shape);

	assert_int_equal(ts_npy_write(ctx, "/nonexistent-dir/x.npy", a),
		TS_ERROR);
	assert_error_contains(ctx, "/nonexistent-dir/x.npy: cannot open for "
		"writing");
}

/* Arrays: bad shapes, get/set rounding, comparison and closeness. */
static void test_array_alloc_and_compare(void **state)
{
	ts_ctx *ctx = *state;
	int64_t bad[2] = { 2, -1 }, s23[2] = { 2, 3 }, s32[2] = { 3, 2 };
	int64_t huge[2] = { INT64_MAX / 4, 2 }, tera[1] = { 1LL << 40 };
	ts_array *a, *b, *c;
	double abs_err, rel_err;

	assert_null(ts_array_alloc(ctx, TS_F32, 2, bad));
	assert_error_contains(ctx, "dimension 1 has negative extent -1");
	assert_null(ts_array_alloc(ctx, TS_F32, TS_MAX_DIMS + 1, s23));
	assert_error_contains(ctx, "at most 8");
	assert_null(ts_array_alloc(ctx, TS_F64, 2, huge));
	assert_error_contains(ctx, "array: 2-dimensional shape is too large: "
		"its size in bytes overflows 64 bits");
	assert_null(ts_array_alloc(ctx, TS_F32, 1, tera));
	assert_error_contains(ctx, "array f32[1099511627776] takes 4.00 TiB, "
		"more than the ");
	assert_error_contains(ctx, "of memory of this machine");
	a = ts_array_alloc(ctx, TS_F32, 2, s23);
	b = ts_array_alloc(ctx, TS_F32, 2, s23);
	c = ts_array_alloc(ctx, TS_F32, 2, s32);
	assert_int_equal((uintptr_t)a->data % 64, 0);
	ts_array_set(a, 0, 0.1);
	assert_true(ts_array_get(a, 0) == (double)0.1f);
	ts_array_set(a, 1, 2.0);
	ts_array_set(b, 1, 2.001);
	assert_int_equal(ts_array_compare(ctx, a, b, &abs_err, &rel_err),
		TS_OK);
	assert_true(abs_err >= 0.1 - 1e-6 && abs_err <= 0.1 + 1e-6);
	assert_int_equal(ts_array_compare(ctx, a, c, &abs_err, &rel_err),
		TS_ERROR);
	assert_error_contains(ctx, "shapes differ: f32[2x3] vs f32[3x2]");
	/* Within f32 tolerance, then outside it, then a NaN. */
	ts_array_set(b, 0, 0.1);
	ts_array_set(b, 1, 2.0005);
	assert_true(ts_array_close(a, b, &abs_err));
	ts_array_set(b, 1, 2.01);
	assert_false(ts_array_close(a, b, &abs_err));
	ts_array_set(b, 1, NAN);
	assert_false(ts_array_close(a, b, &abs_err));
	ts_array_set(a, 1, NAN);
	assert_true(ts_array_close(a, b, &abs_err));
	assert_false(ts_array_close(a, c, &abs_err));
}

/* Random fills stay in the documented ranges and repeat from a seed. */
static void test_array_fill__ranges_and_reproducible(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 4096 };

	for (int t = 0; t < TS_DTYPE_COUNT; t++) {
		ts_array *a = ts_array_alloc(ctx, t, 1, shape);
		ts_array *b = ts_array_alloc(ctx, t, 1, shape);
		double lo = ts_dtype_is_float(t) ? -1 :
			!ts_dtype_is_signed(t) ? 0 : -8;
		double hi = ts_dtype_is_float(t) ? 1 : t == TS_BOOL ? 2
			: !ts_dtype_is_signed(t) ? 16 : 8;
		double mn = INFINITY, mx = -INFINITY;

		ts_array_fill_random(a, 3);
		ts_array_fill_random(b, 3);
		assert_memory_equal(a->data, b->data, 4096 * ts_dtype_size(t));
		for (int64_t i = 0; i < a->size; i++) {
			double v = ts_array_get(a, i);
			if (!(v >= lo && v < hi))
				fail_msg("%s: %g outside [%g, %g)",
					ts_dtype_name(t), v, lo, hi);
			mn = fmin(mn, v);
			mx = fmax(mx, v);
		}
		/* Both ends of the range are reached (or nearly, for floats). */
		assert_true(mn < lo + 0.01 && mx > hi - (ts_dtype_is_float(t)
			? 0.01 : 1.01));
		ts_array_fill_random(b, 4);
		assert_true(memcmp(a->data, b->data,
			4096 * ts_dtype_size(t)) != 0);
	}
	{
		ts_array *a = ts_array_alloc(ctx, TS_I64, 1, shape);
		ts_array_fill_range(a, 9, 1000000000000LL, 1000000000005LL);
		for (int64_t i = 0; i < a->size; i++) {
			int64_t v = ((int64_t *)a->data)[i];
			assert_true(v >= 1000000000000LL && v < 1000000000005LL);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_npy_roundtrip__every_dtype_and_rank),
		TS_TEST(test_npy_write_f32_2x3__matches_numpy_bytes),
		TS_TEST(test_npy_header__shape_and_descr_spelling),
		TS_TEST(test_npy_header__leaves_growth_room_like_numpy),
		TS_TEST(test_npy_read_v2_v3__accepted),
		TS_TEST(test_npy_read_bad_files__name_file_and_problem),
		TS_TEST(test_npy_write_bad_path__names_file),
		TS_TEST(test_array_alloc_and_compare),
		TS_TEST(test_array_fill__ranges_and_reproducible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
