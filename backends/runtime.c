/* The runtime that emitted code calls: a parallel-for over OpenMP.
 *
 * It is compiled twice: into libtessel (the JIT calls it there) and into
 * the static libtessel_rt.a that AOT shared libraries link, so that they
 * need only OpenMP at run time.  It keeps no state of its own: the thread
 * count is OpenMP's per-thread setting. */
#include <config.h>

#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <tessel/backend.h>

/* Run "fn"(i, "closure") for i in [0, "n") on the threads of an OpenMP
 * team, in contiguous chunks; serially inside a team already running. */
void ts_runtime_parallel_for(int64_t n, ts_parallel_body fn, void *closure)
{
#ifdef _OPENMP
	if (n > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
		for (int64_t i = 0; i < n; i++)
			fn(i, closure);
		return;
	}
#endif
	for (int64_t i = 0; i < n; i++)
		fn(i, closure);
}

/* Set the number of threads ("threads" > 0) of later parallel loops
 * started from the calling thread. */
void ts_runtime_set_threads(int threads)
{
#ifdef _OPENMP
	if (threads > 0)
		omp_set_num_threads(threads);
#else
	(void)threads;
#endif
}

/* The number of threads a parallel loop started now would use. */
int ts_runtime_get_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}
