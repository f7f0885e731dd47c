/* What every folder of the library uses and none owns: memory through
 * the garbage collector, strings, growable buffers and vectors, files,
 * hashing, per-context slots, and where the installed runtime files are.
 * Not installed.  It knows no stage of the pipeline: of the public API it
 * uses only the context and status of <tessel/dsl.h>. */
#ifndef TESSEL_SUPPORT_H
#define TESSEL_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <gc.h>

#include <tessel/dsl.h>

/* Memory, kind 1 of STYLE.md: GC objects that may hold pointers, and
 * pointer-free ("atomic") payloads that the collector does not scan.  Both
 * come back cleared. */
#define ts_new(T) ((T *)GC_MALLOC(sizeof(T)))
#define ts_new_array(T, n) ((T *)GC_MALLOC(sizeof(T) * (size_t)(n)))
#define ts_new_atomic(T, n) ((T *)ts_alloc_atomic(sizeof(T) * (size_t)(n)))

void *ts_alloc_atomic(size_t size);
/* Grow the GC array "p" of "n" elements of "size" bytes to "m" elements. */
void *ts_grow(void *p, size_t size, size_t n, size_t m);

char *ts_strdup(const char *s);
char *ts_strndup(const char *s, size_t n);
char *ts_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ts_utc_now(const char *fmt);
/* Seconds of the monotonic clock. */
double ts_now_s(void);
char *ts_vasprintf(const char *fmt, va_list ap);

/* A growable string. */
typedef struct ts_buf {
	char *s;
	size_t len, cap;
} ts_buf;

void ts_buf_init(ts_buf *b);
void ts_buf_printf(ts_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ts_buf_puts(ts_buf *b, const char *s);
void ts_buf_putc(ts_buf *b, char c);
/* The contents of the file "path" (collected, NUL-terminated) and, when
 * "len" is not NULL, its length; NULL with errno set when it cannot be
 * read. */
char *ts_read_file(const char *path, size_t *len);

/* A growable array of pointers. */
typedef struct ts_vec {
	void **v;
	int n, cap;
} ts_vec;

void ts_vec_push(ts_vec *v, void *p);

/* Per-context storage for later stages (the isl context of the analysis,
 * the JIT of the backend, ...), so that the DSL need not know them. */
enum ts_slot {
	TS_SLOT_ISL,
	TS_SLOT_LLVM,
	TS_SLOT_CUDA,
	TS_SLOT_RUNTIME,
	TS_SLOT_TEST_HOOK,
	TS_SLOT_STATIC,
	TS_SLOT_COUNT
};

void **ts_ctx_slot(ts_ctx *ctx, enum ts_slot slot);
/* Call "fn"("data") when "ctx" is freed, in reverse order of registration. */
void ts_ctx_on_free(ts_ctx *ctx, void (*fn)(void *), void *data);
/* A fresh id, unique in "ctx". */
int ts_ctx_next_id(ts_ctx *ctx);

/* The 64-bit FNV-1a hash of the string "s". */
static inline uint64_t ts_fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The greatest common divisor of "a" and "b" (0 when both are). */
static inline int64_t ts_gcd64(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* splitmix64: the step every seeded stream in Tessel uses. */
static inline uint64_t ts_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Runtime files of an installed or built Tessel, found from where the
 * loaded library lies (support/paths.c): never a path of the build tree
 * compiled in. */
typedef enum ts_runtime_file {
	TS_FILE_TARGETS,	/* the folder of shipped target descriptions */
	TS_FILE_TOOL,		/* the tessel program (measurement workers) */
	TS_FILE_RUNTIME_LIB,	/* libtessel_rt.a, which AOT libraries link */
	TS_FILE_COUNT
} ts_runtime_file;

/* The path of "which", or NULL when none exists; "tried" (when not
 * NULL) is set to the places looked at, for messages. */
const char *ts_runtime_path(ts_runtime_file which, const char **tried);

#define TS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
