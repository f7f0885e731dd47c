/* Strings, buffers and vectors allocated with the collector. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "support/support.h"

void *ts_alloc_atomic(size_t size)
{
	void *p = GC_MALLOC_ATOMIC(size ? size : 1);

	if (p)
		memset(p, 0, size);
	return p;
}

void *ts_grow(void *p, size_t size, size_t n, size_t m)
{
	void *q = GC_MALLOC(size * (m ? m : 1));

	if (p && n)
		memcpy(q, p, size * n);
	return q;
}

char *ts_strdup(const char *s)
{
	return s ? ts_strndup(s, strlen(s)) : NULL;
}

char *ts_strndup(const char *s, size_t n)
{
	char *d = ts_new_atomic(char, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *ts_vasprintf(const char *fmt, va_list ap)
{
	va_list aq;
	int n;
	char *s;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	s = ts_new_atomic(char, (size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

double ts_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Return the current time in UTC formatted by strftime's "fmt" (a GC
 * string of at most 63 characters). */
char *ts_utc_now(const char *fmt)
{
	time_t t = time(NULL);
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	if (!strftime(buf, sizeof(buf), fmt, &tm))
		buf[0] = '\0';
	return ts_strdup(buf);
}

char *ts_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = ts_vasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void ts_buf_init(ts_buf *b)
{
	b->cap = 64;
	b->len = 0;
	b->s = ts_new_atomic(char, b->cap);
}

/* Make room for "n" more bytes and the terminator in "b". */
static void buf_reserve(ts_buf *b, size_t n)
{
	char *s;

	if (!b->s)
		ts_buf_init(b);
	if (b->len + n + 1 <= b->cap)
		return;
	while (b->len + n + 1 > b->cap)
		b->cap *= 2;
	s = ts_new_atomic(char, b->cap);
	memcpy(s, b->s, b->len + 1);
	b->s = s;
}

void ts_buf_puts(ts_buf *b, const char *s)
{
	size_t n = strlen(s);

	buf_reserve(b, n);
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

/* Append the "n" bytes at "s" to "b". */
static void buf_put(ts_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

char *ts_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ts_buf b;
	char chunk[65536];
	ssize_t k;

	if (fd < 0)
		return NULL;
	ts_buf_init(&b);
	while ((k = read(fd, chunk, sizeof(chunk))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int saved = errno;
			close(fd);
			errno = saved;
			return NULL;
		}
		buf_put(&b, chunk, (size_t)k);
	}
	close(fd);
	if (len)
		*len = b.len;
	return b.s;
}

void ts_buf_putc(ts_buf *b, char c)
{
	buf_reserve(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void ts_buf_printf(ts_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ts_buf_puts(b, ts_vasprintf(fmt, ap));
	va_end(ap);
}

void ts_vec_push(ts_vec *v, void *p)
{
	if (v->n == v->cap) {
		int cap = v->cap ? 2 * v->cap : 8;
		v->v = ts_grow(v->v, sizeof(void *), v->n, cap);
		v->cap = cap;
	}
	v->v[v->n++] = p;
}
