/* Contexts: errors, warnings, the seeded random stream, slots. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessel/version.h>

#include "support/support.h"

const char *ts_version(void)
{
	return TESSEL_VERSION;
}

struct cleanup {
	void (*fn)(void *);
	void *data;
	struct cleanup *next;
};

struct ts_ctx {
	char *error;		/* last error message, or NULL */
	ts_buf warnings;	/* accumulated warnings */
	uint64_t seed;		/* as set by the user */
	uint64_t rng;		/* state of the random stream */
	int next_id;
	void *slots[TS_SLOT_COUNT];
	struct cleanup *cleanups;
	void **kept;		/* ts_ctx_keep: memory of the collector */
	int nkept, kept_cap;
};

/* Return a new context; its seed is 0 until set. */
ts_ctx *ts_ctx_alloc(void)
{
	ts_ctx *ctx;

	GC_INIT();
	/* Nothing prints inside the library: a failed allocation comes back
	 * as NULL and becomes a message of the context, so the collector's
	 * warnings (a large block, a heap that cannot grow) are dropped. */
	GC_set_warn_proc(GC_ignore_warn_proc);
	/* The context is reachable only from the caller, who may keep it in
	 * memory the collector does not scan: make it uncollectable. */
	ctx = GC_MALLOC_UNCOLLECTABLE(sizeof(*ctx));
	if (!ctx)
		return NULL;
	memset(ctx, 0, sizeof(*ctx));
	ts_buf_init(&ctx->warnings);
	return ctx;
}

/* Free "ctx" after running its cleanups (isl, LLVM, CUDA handles). */
void ts_ctx_free(ts_ctx *ctx)
{
	struct cleanup *c;

	if (!ctx)
		return;
	for (c = ctx->cleanups; c; c = c->next)
		c->fn(c->data);
	GC_FREE(ctx);
}

/* Add "p" to the objects "ctx" keeps alive.  The context itself is
 * uncollectable, so the collector scans the array it points to. */
ts_status ts_ctx_keep(ts_ctx *ctx, const void *p)
{
	void **grown;

	if (!ctx || !p)
		return TS_ERROR;
	if (ctx->nkept == ctx->kept_cap) {
		ctx->kept_cap = ctx->kept_cap ? 2 * ctx->kept_cap : 16;
		grown = GC_MALLOC(sizeof(*grown) * (size_t)ctx->kept_cap);
		if (!grown)
			return ts_ctx_set_error(ctx, "out of memory");
		if (ctx->nkept)
			memcpy(grown, ctx->kept, sizeof(*grown) *
				(size_t)ctx->nkept);
		ctx->kept = grown;
	}
	ctx->kept[ctx->nkept++] = (void *)p;
	return TS_OK;
}

const char *ts_ctx_error(ts_ctx *ctx)
{
	return ctx ? ctx->error : NULL;
}

void ts_ctx_clear_error(ts_ctx *ctx)
{
	ctx->error = NULL;
}

/* Record the message "fmt" in "ctx". */
ts_status ts_ctx_set_error(ts_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctx->error = ts_vasprintf(fmt, ap);
	va_end(ap);
	return TS_ERROR;
}

/* Append the warning "fmt" to "ctx", one per line. */
void ts_ctx_warn(ts_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ts_buf_puts(&ctx->warnings, ts_vasprintf(fmt, ap));
	ts_buf_putc(&ctx->warnings, '\n');
	va_end(ap);
}

const char *ts_ctx_warnings(ts_ctx *ctx)
{
	return ctx->warnings.len ? ctx->warnings.s : NULL;
}

void ts_ctx_clear_warnings(ts_ctx *ctx)
{
	ts_buf_init(&ctx->warnings);
}

void ts_ctx_set_seed(ts_ctx *ctx, uint64_t seed)
{
	ctx->seed = seed;
	ctx->rng = seed;
}

uint64_t ts_ctx_get_seed(ts_ctx *ctx)
{
	return ctx->seed;
}

uint64_t ts_ctx_random(ts_ctx *ctx)
{
	return ts_splitmix64(&ctx->rng);
}

/* A uniform value in [0, "n") without modulo bias worth speaking of. */
uint64_t ts_ctx_random_below(ts_ctx *ctx, uint64_t n)
{
	if (n <= 1)
		return 0;
	return (uint64_t)(((unsigned __int128)ts_ctx_random(ctx) * n) >> 64);
}

void **ts_ctx_slot(ts_ctx *ctx, enum ts_slot slot)
{
	return &ctx->slots[slot];
}

void ts_ctx_on_free(ts_ctx *ctx, void (*fn)(void *), void *data)
{
	struct cleanup *c = ts_new(struct cleanup);

	c->fn = fn;
	c->data = data;
	c->next = ctx->cleanups;
	ctx->cleanups = c;
}

int ts_ctx_next_id(ts_ctx *ctx)
{
	return ctx->next_id++;
}
