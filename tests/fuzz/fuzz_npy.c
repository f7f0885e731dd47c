/* Fuzz the .npy reader: any file gives an array or a message naming the
 * file; an array read must write and read back unchanged. */
#include "fuzz_common.h"

/* Check that "a" and "b" hold the same dtype, shape and bytes. */
static void assert_same(const ts_array *a, const ts_array *b)
{
	size_t n = (size_t)a->size * ts_dtype_size(a->dtype);

	if (!b || a->dtype != b->dtype || a->ndim != b->ndim ||
	    a->size != b->size ||
	    memcmp(a->shape, b->shape, sizeof(int64_t) * a->ndim) != 0 ||
	    (n && memcmp(a->data, b->data, n) != 0)) {
		fprintf(stderr, "npy round trip changed the array\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	const char *path = fuzz_file("in.npy", data, size);
	ts_array *a = ts_npy_read(ctx, path);

	if (!a) {
		fuzz_check_error(ctx);
	} else {
		char out[256];
		snprintf(out, sizeof(out), "%s.out", path);
		if (ts_npy_write(ctx, out, a) < 0)
			fuzz_check_error(ctx);
		else
			assert_same(a, ts_npy_read(ctx, out));
		unlink(out);
	}
	unlink(path);
	ts_ctx_free(ctx);
	return 0;
}
