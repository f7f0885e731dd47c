/* Arrays fenced by inaccessible pages (see fence.h). */
#include <config.h>

#include <sys/mman.h>
#include <unistd.h>

#include "tests/common.h"
#include "tests/backends/fence.h"

/* The bytes of the data of "a". */
static size_t data_bytes(const ts_array *a)
{
	return (size_t)a->size * ts_dtype_size(a->dtype);
}

/* A copy of "a" fenced by inaccessible pages, at the upper end of its
 * mapping when "at_end". */
ts_fence ts_test_fence(ts_ctx *ctx, const ts_array *a, bool at_end)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (data_bytes(a) + 63) & ~(size_t)63;
	ts_fence f;
	char *m;

	f.len = (bytes + page - 1) / page * page + 2 * page;
	f.a = ts_array_alloc(ctx, a->dtype, a->ndim, a->shape);
	m = mmap(NULL, f.len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m, page, PROT_NONE), 0);
	assert_int_equal(mprotect(m + f.len - page, page, PROT_NONE), 0);
	f.map = m;
	f.a->data = at_end ? m + f.len - page - bytes : m + page;
	memcpy(f.a->data, a->data, data_bytes(a));
	return f;
}

/* Copy "f" back into "back" (may be NULL) and unmap it. */
void ts_test_unfence(ts_fence *f, ts_array *back)
{
	if (back)
		memcpy(back->data, f->a->data, data_bytes(f->a));
	assert_int_equal(munmap(f->map, f->len), 0);
	f->map = NULL;
}
