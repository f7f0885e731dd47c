/* NumPy .npy files: format 1.0 written exactly as NumPy writes it; 1.0,
 * 2.0 and 3.0 read.  Data are little endian in C order; the host is
 * assumed little endian, as every target of the CPU backend is. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "dsl/internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* NumPy leaves room to grow the first axis in place: the header gets
 * spaces for this many digits minus those of the first extent. */
#define NPY_GROWTH_DIGITS 21

/* The NumPy type string of each dtype, in the form NumPy writes.  bf16
 * has none: NumPy knows no bfloat16, and writing its bits as '<u2' would
 * read back as integers, so bf16 arrays are refused (cast to f32). */
static const char *const npy_descr[TS_DTYPE_COUNT] = {
	[TS_BOOL] = "|b1", [TS_I8] = "|i1", [TS_U8] = "|u1",
	[TS_I16] = "<i2", [TS_U16] = "<u2", [TS_I32] = "<i4",
	[TS_U32] = "<u4", [TS_I64] = "<i8", [TS_U64] = "<u8",
	[TS_F16] = "<f2", [TS_F32] = "<f4", [TS_F64] = "<f8",
};

/* Append the Python dict literal NumPy writes for "a" to "b". */
static void header_dict(ts_buf *b, const ts_array *a)
{
	ts_buf_printf(b, "{'descr': '%s', 'fortran_order': False, 'shape': (",
		npy_descr[a->dtype]);
	for (int i = 0; i < a->ndim; i++)
		ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
	ts_buf_puts(b, a->ndim == 1 ? ",), }" : "), }");
	if (a->ndim > 0) {
		int digits = snprintf(NULL, 0, "%lld", (long long)a->shape[0]);
		for (int i = digits; i < NPY_GROWTH_DIGITS; i++)
			ts_buf_putc(b, ' ');
	}
}

/* Return the full header of "a": magic, version 1.0, length, dict, padding
 * and newline, its length a multiple of 64 bytes. */
static ts_buf npy_header(const ts_array *a)
{
	ts_buf dict, out;
	size_t hlen, pad;

	ts_buf_init(&dict);
	header_dict(&dict, a);
	hlen = dict.len + 1;
	pad = NPY_ALIGN - (NPY_MAGIC_LEN + 4 + hlen) % NPY_ALIGN;
	ts_buf_init(&out);
	ts_buf_puts(&out, NPY_MAGIC);
	ts_buf_putc(&out, 1);
	ts_buf_putc(&out, 0);
	ts_buf_putc(&out, (char)((hlen + pad) & 0xff));
	ts_buf_putc(&out, (char)((hlen + pad) >> 8));
	ts_buf_puts(&out, dict.s);
	for (size_t i = 0; i < pad; i++)
		ts_buf_putc(&out, ' ');
	ts_buf_putc(&out, '\n');
	return out;
}

ts_status ts_npy_write(ts_ctx *ctx, const char *path, const ts_array *a)
{
	size_t nbytes;
	ts_buf h;
	FILE *f;
	bool ok;

	if (!a || (unsigned)a->dtype >= TS_DTYPE_COUNT)
		return ts_ctx_set_error(ctx, "%s: no array to write", path);
	if (!npy_descr[a->dtype])
		return ts_ctx_set_error(ctx, "%s: %s arrays have no NumPy "
			"dtype; cast to f32 to save one", path,
			ts_dtype_name(a->dtype));
	h = npy_header(a);
	if (h.len - NPY_MAGIC_LEN - 4 > 65535)
		return ts_ctx_set_error(ctx, "%s: header too long", path);
	f = fopen(path, "wb");
	if (!f)
		return ts_ctx_set_error(ctx, "%s: cannot open for writing: %s",
			path, strerror(errno));
	nbytes = (size_t)a->size * ts_dtype_size(a->dtype);
	ok = fwrite(h.s, 1, h.len, f) == h.len &&
		fwrite(a->data, 1, nbytes, f) == nbytes;
	ok &= fclose(f) == 0;
	if (!ok)
		return ts_ctx_set_error(ctx, "%s: write failed: %s", path,
			strerror(errno));
	return TS_OK;
}

/* What the header dict of a file says. */
struct npy_info {
	const char *descr;
	bool fortran;
	int ndim;
	int64_t shape[TS_MAX_DIMS];
	bool has_descr, has_order, has_shape;
};

/* A cursor over the header text, with the file name for messages. */
struct cursor {
	ts_ctx *ctx;
	const char *path;
	const char *p;
};

/* Move "c" past white space. */
static void skip_space(struct cursor *c)
{
	while (isspace((unsigned char)*c->p))
		c->p++;
}

/* Report a malformed header at the cursor "c", saying what was "wanted". */
static ts_status malformed(struct cursor *c, const char *wanted)
{
	return ts_ctx_set_error(c->ctx, "%s: malformed .npy header: expected "
		"%s at \"%.20s\"", c->path, wanted, c->p);
}

/* Accept the character "ch" at the cursor "c" after spaces. */
static bool accept(struct cursor *c, char ch)
{
	skip_space(c);
	if (*c->p != ch)
		return false;
	c->p++;
	return true;
}

/* string = "'" chars "'" | '"' chars '"' */
static ts_status parse_string(struct cursor *c, const char **out)
{
	char q;
	const char *start;

	skip_space(c);
	q = *c->p;
	if (q != '\'' && q != '"')
		return malformed(c, "a quoted string");
	start = ++c->p;
	while (*c->p && *c->p != q)
		c->p++;
	if (!*c->p)
		return malformed(c, "a closing quote");
	*out = ts_strndup(start, (size_t)(c->p - start));
	c->p++;
	return TS_OK;
}

/* shape = "(" [int ("," int)* [","]] ")" */
static ts_status parse_shape(struct cursor *c, struct npy_info *info)
{
	if (!accept(c, '('))
		return malformed(c, "'(' opening the shape");
	info->ndim = 0;
	while (!accept(c, ')')) {
		char *end;
		long long v;
		skip_space(c);
		errno = 0;
		v = strtoll(c->p, &end, 10);
		if (end == c->p || errno || v < 0)
			return malformed(c, "a non-negative extent");
		if (info->ndim == TS_MAX_DIMS)
			return ts_ctx_set_error(c->ctx, "%s: more than %d "
				"dimensions are not supported", c->path,
				TS_MAX_DIMS);
		info->shape[info->ndim++] = v;
		c->p = end;
		if (!accept(c, ',') && (skip_space(c), *c->p != ')'))
			return malformed(c, "',' or ')' in the shape");
	}
	return TS_OK;
}

/* value = string | "True" | "False" | shape, stored under "key". */
static ts_status parse_entry(struct cursor *c, const char *key,
	struct npy_info *info)
{
	skip_space(c);
	if (strcmp(key, "descr") == 0) {
		info->has_descr = true;
		return parse_string(c, &info->descr);
	}
	if (strcmp(key, "shape") == 0) {
		info->has_shape = true;
		return parse_shape(c, info);
	}
	if (strcmp(key, "fortran_order") == 0) {
		info->has_order = true;
		if (strncmp(c->p, "True", 4) == 0) {
			info->fortran = true;
			c->p += 4;
			return TS_OK;
		}
		if (strncmp(c->p, "False", 5) == 0) {
			c->p += 5;
			return TS_OK;
		}
		return malformed(c, "True or False");
	}
	return ts_ctx_set_error(c->ctx, "%s: malformed .npy header: unknown "
		"key '%s'", c->path, key);
}

/* dict = "{" (string ":" value ",")* [string ":" value] "}" */
static ts_status parse_dict(struct cursor *c, struct npy_info *info)
{
	if (!accept(c, '{'))
		return malformed(c, "'{'");
	while (!accept(c, '}')) {
		const char *key;
		if (parse_string(c, &key) < 0)
			return TS_ERROR;
		if (!accept(c, ':'))
			return malformed(c, "':'");
		if (parse_entry(c, key, info) < 0)
			return TS_ERROR;
		if (!accept(c, ',') && (skip_space(c), *c->p != '}'))
			return malformed(c, "',' or '}'");
	}
	if (!info->has_descr || !info->has_order || !info->has_shape)
		return ts_ctx_set_error(c->ctx, "%s: malformed .npy header: "
			"'descr', 'fortran_order' and 'shape' are required",
			c->path);
	return TS_OK;
}

/* Map the NumPy type string "descr" of file "path" to "*t". */
static ts_status descr_dtype(ts_ctx *ctx, const char *path,
	const char *descr, ts_dtype *t)
{
	for (int i = 0; i < TS_DTYPE_COUNT; i++) {
		const char *d = npy_descr[i];
		if (!d)
			continue;
		if (strcmp(descr + (descr[0] ? 1 : 0), d + 1) != 0)
			continue;
		if (descr[0] == '<' || descr[0] == '|' ||
		    (ts_dtype_size(i) == 1 && (descr[0] == '=' ||
		    descr[0] == '>'))) {
			*t = i;
			return TS_OK;
		}
		if (descr[0] == '>')
			return ts_ctx_set_error(ctx, "%s: big-endian data "
				"('%s') is not supported; save it little "
				"endian", path, descr);
	}
	return ts_ctx_set_error(ctx, "%s: unsupported dtype descr '%s' (known: "
		"|b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8)", path, descr);
}

/* The number of bytes of "f" after its current position, or -1 when it
 * is not a plain file. */
static int64_t bytes_left(FILE *f)
{
	struct stat st;
	long pos = ftell(f);

	if (pos < 0 || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return st.st_size - pos;
}

/* Read the magic, version and header dict of "f" into "info". */
static ts_status read_header(ts_ctx *ctx, const char *path, FILE *f,
	struct npy_info *info)
{
	unsigned char pre[NPY_MAGIC_LEN + 2], len[4];
	size_t nlen, hlen;
	struct cursor c = { ctx, path };
	char *text;

	if (fread(pre, 1, sizeof(pre), f) != sizeof(pre) ||
	    memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return ts_ctx_set_error(ctx, "%s: not a .npy file (bad magic)",
			path);
	if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0)
		return ts_ctx_set_error(ctx, "%s: unsupported .npy format "
			"version %d.%d", path, pre[6], pre[7]);
	nlen = pre[6] == 1 ? 2 : 4;
	if (fread(len, 1, nlen, f) != nlen)
		return ts_ctx_set_error(ctx, "%s: truncated .npy header", path);
	hlen = len[0] | (size_t)len[1] << 8;
	if (nlen == 4)
		hlen |= (size_t)len[2] << 16 | (size_t)len[3] << 24;
	/* The length comes from the file: check it before allocating. */
	if (bytes_left(f) >= 0 && (int64_t)hlen > bytes_left(f))
		return ts_ctx_set_error(ctx, "%s: truncated .npy header: "
			"expected %zu bytes, found %lld", path, hlen,
			(long long)bytes_left(f));
	text = ts_new_atomic(char, hlen + 1);
	if (!text || fread(text, 1, hlen, f) != hlen)
		return ts_ctx_set_error(ctx, "%s: truncated .npy header: "
			"expected %zu bytes", path, hlen);
	c.p = text;
	return parse_dict(&c, info);
}

/* Check that the data of "info" ("t" elements) fit in 64-bit sizes and
 * that the rest of "f", file "path", holds them, before anything is
 * allocated for them. */
static ts_status check_data_size(ts_ctx *ctx, const char *path, FILE *f,
	const struct npy_info *info, ts_dtype t)
{
	size_t elem = ts_dtype_size(t);
	int64_t n = 1, nbytes, left = bytes_left(f);

	for (int i = 0; i < info->ndim; i++)
		n *= info->shape[i] ? 1 : 0;
	if (n && ts_shape_overflow_dim(info->ndim, info->shape, elem) >= 0)
		return ts_ctx_set_error(ctx, "%s: the shape in the header is "
			"too large: its size in bytes overflows 64 bits", path);
	for (int i = 0; n && i < info->ndim; i++)
		n *= info->shape[i];
	nbytes = n * (int64_t)elem;
	if (left >= 0 && left < nbytes)	/* not a plain file: fread tells */
		return ts_ctx_set_error(ctx, "%s: truncated: expected %lld "
			"bytes of data, found %lld", path, (long long)nbytes,
			(long long)left);
	return TS_OK;
}

ts_array *ts_npy_read(ts_ctx *ctx, const char *path)
{
	struct npy_info info = { NULL };
	size_t nbytes, got;
	ts_array *a = NULL;
	ts_dtype t = TS_F32;
	FILE *f;

	f = fopen(path, "rb");
	if (!f) {
		ts_ctx_set_error(ctx, "%s: cannot open: %s", path,
			strerror(errno));
		return NULL;
	}
	if (read_header(ctx, path, f, &info) < 0 ||
	    descr_dtype(ctx, path, info.descr, &t) < 0)
		goto out;
	if (info.fortran) {
		ts_ctx_set_error(ctx, "%s: Fortran-order arrays are not "
			"supported; save it in C order", path);
		goto out;
	}
	if (check_data_size(ctx, path, f, &info, t) < 0)
		goto out;
	a = ts_array_alloc(ctx, t, info.ndim, info.shape);
	if (!a) {
		ts_ctx_set_error(ctx, "%s: %s", path, ts_ctx_error(ctx));
		goto out;
	}
	nbytes = (size_t)a->size * ts_dtype_size(t);
	got = fread(a->data, 1, nbytes, f);
	if (got != nbytes) {
		ts_ctx_set_error(ctx, "%s: truncated: expected %zu bytes of "
			"data, found %zu", path, nbytes, got);
		a = NULL;
	}
out:
	fclose(f);
	return a;
}
