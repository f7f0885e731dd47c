/* The small program the schedule and lowering tests share. */
#ifndef TESSEL_TESTS_SMALL_PROGRAM_H
#define TESSEL_TESTS_SMALL_PROGRAM_H

#include <tessel/tessel.h>

/* P = 2 * A (elementwise), C = P x B (a reduction, 10 x 6 x 12),
 * M[i] = (sum_k A[i, k]) / 6 (a nested reduction); outputs C and M. */
ts_dag *ts_test_small_program(ts_ctx *ctx);

#endif
