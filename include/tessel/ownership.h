/* Tessel: ownership annotations.
 *
 * Every pointer parameter and every pointer result of a function of the
 * public API carries one of these annotations, in the manner of isl's
 * __isl_give, __isl_take and __isl_keep, so that who owns what reads off
 * each declaration.  They expand to nothing; tests/ownership.sh checks
 * that none is missing.
 *
 * Memory.  Most objects of the API (expressions, tensors, stages, DAGs,
 * analyses, schedules, loop IR, spaces, configurations, templates,
 * targets, arrays, records, partitions, strings) are memory of the
 * garbage collector: nothing frees them.  A few hold what the collector
 * cannot reclaim (a context, a JIT module, a CUDA module, a measurer's
 * worker process, the modules of a network, the XGBoost handles of a cost
 * model or a tuner): those are given to the caller.
 *
 * __ts_give	(on a result) The caller owns the result and releases it
 *		with the function the declaration names: ts_ctx_alloc with
 *		ts_ctx_free, ts_module_compile with ts_module_free,
 *		ts_cuda_module_load with ts_cuda_module_unload,
 *		ts_measurer_new with ts_measurer_free, ts_network_build and
 *		ts_network_compile with ts_network_free, ts_cost_model_new
 *		with ts_cost_model_free, ts_tuner_new with ts_tuner_free.
 *		What the caller has not released by the time its context
 *		is freed (a CUDA module excepted: unload it before) is
 *		released with the context.  ts_tuner_free releases the
 *		tuner's handles but leaves its results readable: its
 *		parameter is __ts_keep.
 *
 * __ts_take	(on a parameter) The function takes the argument over: it
 *		frees it or keeps it, and the caller must not use or free
 *		it afterwards.
 *
 * __ts_keep	(on a parameter) Borrowed for the duration of the call: the
 *		caller keeps ownership.  What the function needs after the
 *		call it copies (strings, arrays), or, when it is memory of
 *		the collector, points to (the collector then keeps it
 *		alive); where it keeps a pointer to other memory of the
 *		caller, its comment says so (ts_tuner_new, for what its
 *		options point to).
 *		(on a result) Memory that the caller does not free and that
 *		is not the collector's: a static string, valid for ever, or
 *		memory of another object, valid while that object lives,
 *		as the function's comment says.
 *
 * __ts_gc	(on a result) Memory of the garbage collector, never freed
 *		by the caller.  It lives while a pointer to it is held in
 *		memory that the collector scans: stacks, registers, static
 *		data, memory of the collector.  A pointer kept only in
 *		memory from malloc or new does not keep it alive.
 *
 * __ts_null	May be NULL, written with one of the others
 *		(__ts_keep __ts_null).  On a parameter: NULL has a meaning
 *		of its own there, which the function's comment gives (the
 *		defaults, none, no answer wanted), or, for a function that
 *		releases its argument, nothing to release.  On a result:
 *		NULL is a regular answer (not found, none), not only a
 *		failure.
 *
 * What holds everywhere and is not marked:
 *   - a function that returns a pointer returns NULL when it fails,
 *     with a message in its context where it has one;
 *   - a DSL constructor given NULL for an object returns NULL without a
 *     new message, to pass an earlier failure on (<tessel/dsl.h>);
 *   - an array parameter whose count is 0 is not read, and may be NULL.
 *
 * Out-parameters.  A pointer through which a function writes its answers
 * (int64_t *lo, ts_timing *out, char **out, ts_array **outputs) is
 * __ts_keep: the pointer itself is borrowed.  What the function stores
 * there is memory of the collector, as a __ts_gc result is, unless the
 * function's comment says otherwise (ts_cuda_alloc stores device memory
 * that the caller frees with ts_cuda_free).
 *
 * Callbacks.  Function pointers and the user data passed back to them
 * ("void *data") are __ts_keep.  The library never dereferences user
 * data, so it may always be NULL.
 *
 * Each macro is defined only when not defined before, so that a program
 * may define them otherwise (as attributes of a static checker, say)
 * before including a Tessel header.
 */
#ifndef TESSEL_OWNERSHIP_H
#define TESSEL_OWNERSHIP_H

#ifndef __ts_give
#define __ts_give
#endif
#ifndef __ts_take
#define __ts_take
#endif
#ifndef __ts_keep
#define __ts_keep
#endif
#ifndef __ts_gc
#define __ts_gc
#endif
#ifndef __ts_null
#define __ts_null
#endif

#endif
