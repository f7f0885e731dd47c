/* Internal helpers shared by every stage of the library: allocation through
 * the garbage collector, strings, growable buffers, and context slots.
 * Not installed. */
#ifndef TESSEL_INTERNAL_H
#define TESSEL_INTERNAL_H

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
char *ts_vasprintf(const char *fmt, va_list ap);

/* A new tensor "name" of dtype "t" and shape "shape" ("ndim" dimensions)
 * with a fresh id of "ctx", unchecked and without a stage. */
ts_tensor *ts_tensor_make(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape);

/* Set the body of the stage "s" to "body", checking that its variables
 * are in scope, and collect its reduction axes and inputs anew. */
ts_status ts_stage_set_body(ts_ctx *ctx, ts_stage *s, ts_expr *body);
/* Bring the "nstages" stages "stages" (in topological order) to canonical
 * form (dsl/canon.c); "placeholders" name the inputs, whose names new
 * stages avoid.  Set "changed" when a stage was made or rewritten. */
ts_status ts_canonicalize(ts_ctx *ctx, int nstages, ts_stage *const *stages,
	int nplaceholders, ts_tensor *const *placeholders, bool *changed);
/* How deeply the printed form of "e" nests, in the levels the parser
 * counts: parentheses, brackets, unary operators, calls and reducers. */
int ts_expr_nesting(const ts_expr *e);
/* The first dimension of "shape" ("ndim" extents, none negative) at which
 * the size in bytes of an array of "elem"-byte elements would pass
 * INT64_MAX, zero extents counting as one; -1 when it fits. */
int ts_shape_overflow_dim(int ndim, const int64_t *shape, size_t elem);
/* The physical memory of this machine in bytes (INT64_MAX if unknown). */
int64_t ts_memory_bytes(void);
/* "bytes" written with a binary unit for messages: "4.00 TiB". */
const char *ts_bytes_string(double bytes);

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

/* splitmix64: the step every seeded stream in Tessel uses. */
static inline uint64_t ts_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Half precision conversions (IEEE binary16, round to nearest even). */
uint16_t ts_f32_to_f16(float f);
float ts_f16_to_f32(uint16_t h);
/* Round "v" to what a store of dtype "t" keeps. */
double ts_round_to_dtype(ts_dtype t, double v);
/* The float "v" cast to the integer dtype "t": truncated toward zero and
 * saturated to the range of "t", NaN giving 0 (bool: v != 0). */
int64_t ts_float_to_int(ts_dtype t, double v);

#define TS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
