/* Arrays fenced by inaccessible pages, so that a kernel reading or
 * writing outside a buffer faults at once instead of touching whatever
 * lies next to it in the heap. */
#ifndef TESSEL_TESTS_FENCE_H
#define TESSEL_TESTS_FENCE_H

#include <stdbool.h>
#include <stddef.h>

#include <tessel/tessel.h>

/* A fenced copy of an array and its mapping. */
typedef struct ts_fence {
	ts_array *a;
	void *map;
	size_t len;
} ts_fence;

/* A copy of "a" in a mapping of its own with an inaccessible page on each
 * side: its data ends against the upper page when "at_end" (less at most
 * 63 bytes of alignment), else it starts right after the lower one. */
ts_fence ts_test_fence(ts_ctx *ctx, const ts_array *a, bool at_end);

/* Copy the data of "f" back into "back" (same shape and dtype; may be
 * NULL) and unmap "f". */
void ts_test_unfence(ts_fence *f, ts_array *back);

#endif
