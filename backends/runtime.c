/* The runtime that emitted code calls: a parallel-for over OpenMP.
 *
 * It is compiled twice: into libtessel (the JIT calls it there) and into
 * the static libtessel_rt.a that AOT shared libraries link, so that they
 * need only OpenMP at run time.  Its only state is a small cache of
 * freed scratch blocks per thread; the thread count is OpenMP's
 * per-thread setting. */
#include <config.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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

/* Scratch blocks.  Each starts with a header of one cache line holding
 * its capacity; the caller gets the bytes after it.  glibc returns large
 * freed blocks to the system (unmapped or trimmed), and the next call
 * faults every page in again: an 800 KiB temporary of an average pool
 * cost more in page faults than the pool itself. */
enum { HEADER = 64, KEPT = 8 };
/* Blocks kept: from KEEP_MIN (smaller ones glibc keeps and hands out
 * again itself) to KEEP_MAX bytes. */
#define KEEP_MIN ((int64_t)1 << 16)
#define KEEP_MAX ((int64_t)1 << 30)

struct scratch {
	void *block[KEPT];
	int64_t cap[KEPT];
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_release(void *data)
{
	struct scratch *c = data;

	for (int i = 0; i < KEPT; i++)
		free(c->block[i]);
	free(c);
}

static void scratch_init(void)
{
	pthread_key_create(&scratch_key, scratch_release);
}

/* The calling thread's cache, or NULL when it cannot have one. */
static struct scratch *scratch(void)
{
	struct scratch *c;

	pthread_once(&scratch_once, scratch_init);
	if ((c = pthread_getspecific(scratch_key)))
		return c;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	if (pthread_setspecific(scratch_key, c) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void *ts_runtime_alloc(int64_t bytes)
{
	struct scratch *c = scratch();
	int best = -1;
	char *b;

	if (bytes < 1)
		bytes = 1;
	/* The smallest kept block that holds "bytes". */
	for (int i = 0; c && bytes >= KEEP_MIN && i < KEPT; i++)
		if (c->block[i] && c->cap[i] >= bytes &&
		    (best < 0 || c->cap[i] < c->cap[best]))
			best = i;
	if (best >= 0) {
		b = c->block[best];
		c->block[best] = NULL;
		return b + HEADER;
	}
	bytes = (bytes + HEADER - 1) / HEADER * HEADER;
	if (!(b = aligned_alloc(HEADER, (size_t)(bytes + HEADER))))
		return NULL;
	*(int64_t *)b = bytes;
	return b + HEADER;
}

void ts_runtime_free(void *p)
{
	struct scratch *c;
	char *b;
	int slot = -1;

	if (!p)
		return;
	b = (char *)p - HEADER;
	c = *(int64_t *)b >= KEEP_MIN && *(int64_t *)b <= KEEP_MAX ?
		scratch() : NULL;
	/* An empty slot, else the smallest kept block if this one is
	 * larger. */
	for (int i = 0; c && i < KEPT && slot < 0; i++)
		if (!c->block[i])
			slot = i;
	for (int i = 0; c && slot < 0 && i < KEPT; i++)
		if (c->cap[i] < *(int64_t *)b && (slot < 0 || c->cap[i] <
		    c->cap[slot]))
			slot = i;
	if (slot < 0) {
		free(b);
		return;
	}
	free(c->block[slot]);
	c->block[slot] = b;
	c->cap[slot] = *(int64_t *)b;
}
