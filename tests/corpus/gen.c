/* Random valid .tsl declarations in several writing styles, each in two
 * forms (one statement, or stages) that compute the same values.
 *
 * Every random draw of a style happens before its text is written, so
 * that the form changes the text and never the parameters.  Values stay
 * bounded: inputs are drawn in [-1, 1) (floats) or [-8, 8) (integers) by
 * ts_dag_random_inputs, float reductions divide by sums of exponentials
 * that are at least 1 or by square roots plus an epsilon, products run
 * over a few elements, integer arithmetic stays far from overflow, and a
 * function that is not continuous (floor, round, a cast to an integer)
 * only sees values that are exact in every float dtype (integers, or
 * inputs scaled by a power of two), except the requantisation scale,
 * which is any float, as in a real quantised network. */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/corpus/gen.h"

#define TEST_BUDGET 150000.0	/* multiply-adds of one test case */
#define MAX_POOL 512		/* strings of one generation */

/* A growing text. */
struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

/* The state of one generation. */
struct gen {
	uint64_t state;		/* random stream */
	bool bench;		/* real sizes */
	bool fused;		/* write the one-statement form */
	bool zero;		/* some spatial extents may be 0 */
	bool lets;		/* extents named by let constants */
	bool weights;		/* weights declared with "weight" */
	bool reverse;		/* stages written consumers first */
	bool breaks;		/* long bodies continue on a second line */
	struct buf lets_text, inputs, stages;
	const char *lines[64];	/* the stages, in dependency order */
	int nlines;
	char *pool[MAX_POOL];	/* strings to free at the end */
	int npool;
	bool oom;
};

/* Float dtypes of a case: inputs, computation, output. */
struct fty {
	const char *in, *cp, *out;
};

/* Append the formatted text to "b". */
static void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || b->oom)
		goto error;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = 2 * (b->len + (size_t)n + 1) + 64;
		char *s = realloc(b->s, cap);
		if (!s)
			goto error;
		b->s = s;
		b->cap = cap;
	}
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return;
error:
	b->oom = true;
}

/* Append the formatted text to "b". */
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* A formatted string that lives until the end of generation "g". */
static const char *S(struct gen *g, const char *fmt, ...)
{
	struct buf b = { 0 };
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (b.oom || g->npool == MAX_POOL) {
		free(b.s);
		g->oom = true;
		return "";
	}
	g->pool[g->npool++] = b.s;
	return b.s;
}

/* The next value of the random stream of "g" (splitmix64). */
static uint64_t next(struct gen *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform integer in [0, "n"). */
static int64_t below(struct gen *g, int64_t n)
{
	return n <= 1 ? 0 : (int64_t)(next(g) % (uint64_t)n);
}

/* Whether an event of probability "pct" percent happens. */
static bool chance(struct gen *g, int pct)
{
	return below(g, 100) < pct;
}

/* One of the "n" values "v". */
static int64_t pick(struct gen *g, const int64_t *v, int n)
{
	return v[below(g, n)];
}

#define PICK(g, ...) pick((g), (const int64_t[]){ __VA_ARGS__ }, \
	(int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))

/* A test extent of at most "cap": 1, small, a prime (7, 13, 31), a
 * power of two or a larger one (64 to 200). */
static int64_t tdim(struct gen *g, int64_t cap)
{
	int64_t v;

	switch (below(g, 10)) {
	case 0: v = 1; break;
	case 1: case 2: case 3: v = PICK(g, 2, 3, 4, 5, 6, 8); break;
	case 4: case 5: case 6: v = PICK(g, 7, 13, 31); break;
	case 7: case 8: v = PICK(g, 10, 12, 16, 32); break;
	default: v = 64 + below(g, 137); break;
	}
	return v <= cap ? v : 1 + below(g, cap);
}

/* A spatial test extent of at most "cap" (0 sometimes, when allowed). */
static int64_t sdim(struct gen *g, int64_t cap)
{
	int64_t v = tdim(g, cap);

	return g->zero && chance(g, 5) ? 0 : v;
}

/* Halve the largest of the "n" extents "d" (powers "pw" in the work,
 * times "c") until the work is at most the test budget; nothing at
 * bench sizes. */
static void fit(struct gen *g, int64_t **d, const int *pw, int n, double c)
{
	for (;;) {
		double work = c;
		int big = -1;
		for (int i = 0; i < n; i++) {
			for (int p = 0; p < pw[i]; p++)
				work *= (double)*d[i];
			if (*d[i] > 1 && (big < 0 || *d[i] > *d[big]))
				big = i;
		}
		if (g->bench || work <= TEST_BUDGET || big < 0)
			return;
		*d[big] = (*d[big] + 1) / 2;
	}
}

/* The text of extent "v", named "name" by a let when "g" uses lets. */
static const char *ext(struct gen *g, const char *name, int64_t v)
{
	if (!g->lets)
		return S(g, "%lld", (long long)v);
	buf_printf(&g->lets_text, "let %s = %lld\n", name, (long long)v);
	return name;
}

/* The float literal "v" (always with a point or an exponent). */
static const char *flit(struct gen *g, double v)
{
	char t[64];

	snprintf(t, sizeof(t), "%.6g", v);
	if (!strpbrk(t, ".en"))
		strcat(t, ".0");
	return S(g, "%s", t);
}

/* Float dtypes for a case; all-f16 only when "f16_ok". */
static struct fty ftype(struct gen *g, bool f16_ok)
{
	static const struct fty t[] = {
		{ "f32", "f32", "f32" }, { "f32", "f32", "f32" },
		{ "f32", "f32", "f32" }, { "f64", "f64", "f64" },
		{ "f16", "f32", "f16" }, { "f32", "f64", "f32" },
		{ "f16", "f16", "f16" },
	};
	int64_t i = below(g, 7);

	return t[i == 6 && !f16_ok ? 0 : i];
}

/* "load" in the computation dtype of "ft". */
static const char *ld(struct gen *g, const struct fty *ft, const char *load)
{
	return strcmp(ft->in, ft->cp) ? S(g, "%s(%s)", ft->cp, load) : load;
}

/* The output annotation of "ft": empty when no cast is needed. */
static const char *ann(struct gen *g, const struct fty *ft)
{
	return strcmp(ft->out, ft->cp) ? S(g, ": %s", ft->out) : "";
}

/* Declare input "name" of dtype "dt" and shape "shape"; a weight when
 * "weight" and "g" writes weights so. */
static void input(struct gen *g, bool weight, const char *name,
	const char *dt, const char *shape)
{
	buf_printf(&g->inputs, "%s %s: %s[%s]\n",
		weight && g->weights ? "weight" : "input", name, dt, shape);
}

/* Write the stage "decl = body"; an output when "out".  Statements are
 * declarative: "g" may write them in reverse order, and break a body
 * after its first "+" (a statement continues after an operator). */
static void stage(struct gen *g, bool out, const char *decl,
	const char *body)
{
	const char *plus = strstr(body, " + ");

	if (g->breaks && plus && strlen(body) > 60)
		body = S(g, "%.*s +\n\t%s", (int)(plus - body), body,
			plus + 3);
	if (g->nlines == 64) {
		g->oom = true;
		return;
	}
	g->lines[g->nlines++] = S(g, "%s%s = %s\n", out ? "output " : "",
		decl, body);
}

/* Join the stages of "g" into g->stages. */
static void join_stages(struct gen *g)
{
	for (int i = 0; i < g->nlines; i++)
		buf_printf(&g->stages, "%s",
			g->lines[g->reverse ? g->nlines - 1 - i : i]);
}

/* Activations. */
enum act { ACT_NONE, ACT_RELU, ACT_CLAMP, ACT_TANH, ACT_SIGMOID };

/* Activation "a" of "e"; integer literals when "integer". */
static const char *act(struct gen *g, int a, const char *e, bool integer)
{
	switch (a) {
	case ACT_RELU: return S(g, "max(%s, %s)", e, integer ? "0" : "0.0");
	case ACT_CLAMP: return integer ? S(g, "clamp(%s, -40, 40)", e) :
		S(g, "clamp(%s, -2.0, 2.0)", e);
	case ACT_TANH: return S(g, "tanh(%s)", e);
	case ACT_SIGMOID: return S(g, "sigmoid(%s)", e);
	default: return e;
	}
}

/* A dense layer: a matrix product with a bias (inside or outside the
 * reduction) and an activation. */
static void style_dense(struct gen *g)
{
	int64_t m = tdim(g, 200), n = tdim(g, 200), k = tdim(g, 200);
	int64_t *d[] = { &m, &n, &k };
	int pw[] = { 1, 1, 1 };
	bool wt = chance(g, 50), bias = chance(g, 85);
	bool bias_in = bias && chance(g, 40);
	int a = (int)below(g, 5);
	struct fty ft;
	const char *M, *N, *K, *x, *w, *b, *prod, *core;

	if (g->bench) {
		m = PICK(g, 256, 512);
		n = PICK(g, 256, 512, 1024);
		k = PICK(g, 256, 512);
	}
	fit(g, d, pw, 3, 1);
	ft = ftype(g, k <= 8);
	M = ext(g, "M", m);
	N = ext(g, "N", n);
	K = ext(g, "K", k);
	input(g, false, "X", ft.in, S(g, "%s, %s", M, K));
	input(g, true, "Wt", ft.in, wt ? S(g, "%s, %s", N, K) :
		S(g, "%s, %s", K, N));
	if (bias)
		input(g, true, "Bias", ft.in, N);
	x = ld(g, &ft, "X[i, k]");
	w = ld(g, &ft, wt ? "Wt[j, k]" : "Wt[k, j]");
	b = ld(g, &ft, "Bias[j]");
	prod = S(g, "%s * %s", x, w);
	if (g->fused) {
		if (bias_in)
			core = S(g, "sum(k: %s) %s + %s", K, prod, b);
		else if (bias)
			core = S(g, "(sum(k: %s) %s) + %s", K, prod, b);
		else
			core = S(g, "sum(k: %s) %s", K, prod);
		if (a == ACT_NONE && bias_in)
			core = S(g, "(%s) * 0.5", core);
		stage(g, true, S(g, "Y[i: %s, j: %s]%s", M, N, ann(g, &ft)),
			act(g, a, core, false));
		return;
	}
	stage(g, false, S(g, "D[i: %s, j: %s]", M, N), bias_in ?
		S(g, "sum(k: %s) %s + %s", K, prod, b) :
		S(g, "sum(k: %s) %s", K, prod));
	core = bias && !bias_in ? S(g, "D[i, j] + %s", b) : "D[i, j]";
	if (a == ACT_NONE && bias_in)
		core = "D[i, j] * 0.5";
	stage(g, true, S(g, "Y[i: %s, j: %s]%s", M, N, ann(g, &ft)),
		act(g, a, core, false));
}

/* Two dense layers: the hidden layer is a reduction nested in the
 * reduction of the second. */
static void style_mlp(struct gen *g)
{
	int64_t m = tdim(g, 64), k = tdim(g, 64), h = tdim(g, 64);
	int64_t o = tdim(g, 64);
	int64_t *d[] = { &m, &k, &h, &o };
	int pw[] = { 1, 1, 1, 1 };
	int a = 1 + (int)below(g, 4);
	bool b2 = chance(g, 50);
	struct fty ft;
	const char *M, *K, *H, *O, *hid, *inner;

	if (g->bench) {
		m = 64;
		k = h = o = 128;
	}
	fit(g, d, pw, 4, 1);
	ft = ftype(g, false);
	M = ext(g, "M", m);
	K = ext(g, "K", k);
	H = ext(g, "H", h);
	O = ext(g, "O", o);
	input(g, false, "X", ft.in, S(g, "%s, %s", M, K));
	input(g, true, "W1", ft.in, S(g, "%s, %s", K, H));
	input(g, true, "B1", ft.in, H);
	input(g, true, "W2", ft.in, S(g, "%s, %s", H, O));
	if (b2)
		input(g, true, "B2", ft.in, O);
	hid = S(g, "sum(k: %s) %s * %s", K, ld(g, &ft, "X[i, k]"),
		ld(g, &ft, "W1[k, j]"));
	if (g->fused) {
		inner = S(g, "sum(j: %s) %s * %s", H, act(g, a,
			S(g, "(%s) + %s", hid, ld(g, &ft, "B1[j]")), false),
			ld(g, &ft, "W2[j, o]"));
	} else {
		stage(g, false, S(g, "Hd[i: %s, j: %s]", M, H), hid);
		stage(g, false, S(g, "A[i: %s, j: %s]", M, H), act(g, a,
			S(g, "Hd[i, j] + %s", ld(g, &ft, "B1[j]")), false));
		inner = S(g, "sum(j: %s) A[i, j] * %s", H,
			ld(g, &ft, "W2[j, o]"));
	}
	stage(g, true, S(g, "Y[i: %s, o: %s]%s", M, O, ann(g, &ft)),
		b2 ? S(g, "(%s) + %s", inner, ld(g, &ft, "B2[o]")) : inner);
}

/* Row norms: the norm itself, L2 normalisation, a scaling by rsqrt, RMS
 * normalisation with a gain; the epsilon inside or outside the sum. */
static void style_rownorm(struct gen *g)
{
	int64_t r = sdim(g, 200), m = tdim(g, 200);
	int64_t *d[] = { &r, &m };
	int pw[] = { 1, 2 };
	int v = (int)below(g, 4);
	bool in = chance(g, 40) && (v == 1 || v == 2);
	struct fty ft;
	const char *R, *M, *sq, *e, *s, *x, *y;

	if (g->bench) {
		r = 256;
		m = 1024;
	}
	fit(g, d, pw, 2, 1);
	ft = ftype(g, false);
	R = ext(g, "R", r);
	M = ext(g, "M", m);
	input(g, false, "X", ft.in, S(g, "%s, %s", R, M));
	if (v == 3)
		input(g, true, "Gain", ft.in, M);
	x = ld(g, &ft, "X[i, j]");
	e = v == 3 ? "1e-05" : "0.001";
	sq = S(g, "%s * %s", ld(g, &ft, "X[i, j2]"), ld(g, &ft, "X[i, j2]"));
	s = in ? S(g, "sum(j2: %s) %s + %s", M, sq, e) :
		S(g, "sum(j2: %s) %s", M, sq);
	if (g->fused) {
		s = S(g, "(%s)", s);
	} else {
		stage(g, false, S(g, "Sq[i: %s]", R), s);
		s = "Sq[i]";
	}
	y = S(g, "Y[i: %s, j: %s]%s", R, M, ann(g, &ft));
	switch (v) {
	case 0:
		stage(g, true, S(g, "Nrm[i: %s]%s", R, ann(g, &ft)),
			S(g, "sqrt(%s)", s));
		break;
	case 1:
		stage(g, true, y, S(g, "%s / sqrt(%s)", x, in ? s :
			S(g, "%s + %s", s, e)));
		break;
	case 2:
		stage(g, true, y, S(g, "%s * rsqrt(%s)", x, in ? s :
			S(g, "%s + %s", s, e)));
		break;
	default:
		stage(g, true, y, S(g, "%s * rsqrt(%s / %s + %s) * %s", x, s,
			flit(g, (double)m), e, ld(g, &ft, "Gain[j]")));
		break;
	}
}

/* The index list "ax" (n names) with position "at" replaced by "with". */
static const char *index_list(struct gen *g, const char *const *ax, int n,
	int at, const char *with)
{
	struct buf b = { 0 };
	const char *s;

	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", i == at ? with : ax[i]);
	s = S(g, "%s", b.oom ? "" : b.s);
	free(b.s);
	return s;
}

/* Softmax or log-softmax over one axis of a rank-2 or rank-3 input,
 * optionally with a temperature. */
static void style_softmax(struct gen *g)
{
	static const char *const ax[] = { "b", "i", "j" };
	static const char *const cn[] = { "B", "R", "M" };
	int64_t e[3] = { 1, sdim(g, 64), tdim(g, 200) };
	int rank = chance(g, 30) ? 3 : 2, red, v = (int)below(g, 3);
	int64_t *d[] = { &e[0], &e[1], &e[2] };
	int pw[] = { 1, 1, 2 };
	const char *E[3], *x, *shape, *full, *rest, *X, *mx, *sm;
	const char *const *axes;
	struct fty ft;
	int nax;

	if (rank == 3)
		e[0] = tdim(g, 8);
	red = rank == 3 && chance(g, 50) ? 1 : 2;
	if (g->bench) {
		e[0] = rank == 3 ? 8 : 1;
		e[1] = rank == 3 ? 64 : 256;
		e[2] = 512;
	}
	/* Put the reduced extent last for the budget. */
	if (red == 1) {
		int64_t t = e[1];
		e[1] = e[2];
		e[2] = t;
	}
	fit(g, d, pw, 3, 1);
	if (red == 1) {
		int64_t t = e[1];
		e[1] = e[2];
		e[2] = t;
	}
	ft = ftype(g, false);
	axes = rank == 3 ? ax : ax + 1;
	nax = rank;
	for (int i = 3 - rank; i < 3; i++)
		E[i] = ext(g, cn[i], e[i]);
	shape = rank == 3 ? S(g, "%s, %s, %s", E[0], E[1], E[2]) :
		S(g, "%s, %s", E[1], E[2]);
	full = rank == 3 ? S(g, "b: %s, i: %s, j: %s", E[0], E[1], E[2]) :
		S(g, "i: %s, j: %s", E[1], E[2]);
	red = rank == 3 ? red : red - 1;	/* position in axes */
	rest = rank == 3 ? (red == 1 ? S(g, "b: %s, j: %s", E[0], E[2]) :
		S(g, "b: %s, i: %s", E[0], E[1])) : S(g, "i: %s", E[1]);
	input(g, false, "X", ft.in, shape);
	/* X at the reduced position "r" (NULL: the stage's own axis). */
#define XAT(r) (v == 2 ? S(g, "%s * 0.5", ld(g, &ft, S(g, "X[%s]", \
	index_list(g, axes, nax, red, (r) ? (r) : axes[red])))) : \
	ld(g, &ft, S(g, "X[%s]", index_list(g, axes, nax, red, \
	(r) ? (r) : axes[red]))))
	X = S(g, "%s", E[rank == 3 ? red : red + 1]);
	x = XAT(NULL);
	if (g->fused) {
		mx = S(g, "max(r2: %s) %s", X, XAT("r2"));
		sm = S(g, "sum(r3: %s) exp(%s - max(r4: %s) %s)", X,
			XAT("r3"), X, XAT("r4"));
		stage(g, true, S(g, "Y[%s]%s", full, ann(g, &ft)), v == 1 ?
			S(g, "%s - (%s) - log(%s)", x, mx, sm) :
			S(g, "exp(%s - %s) / %s", x, mx, sm));
	} else {
		const char *keep = rank == 3 ? (red == 1 ? "b, j" : "b, i")
			: "i";
		stage(g, false, S(g, "Mx[%s]", rest),
			S(g, "max(r2: %s) %s", X, XAT("r2")));
		stage(g, false, S(g, "Es[%s]", rest),
			S(g, "sum(r3: %s) exp(%s - Mx[%s])", X, XAT("r3"),
			keep));
		stage(g, true, S(g, "Y[%s]%s", full, ann(g, &ft)), v == 1 ?
			S(g, "%s - Mx[%s] - log(Es[%s])", x, keep, keep) :
			S(g, "exp(%s - Mx[%s]) / Es[%s]", x, keep, keep));
	}
#undef XAT
}

/* "a * f", "a" alone when "f" is 1. */
static const char *times(struct gen *g, const char *a, int64_t f)
{
	return f == 1 ? a : S(g, "%s * %lld", a, (long long)f);
}

/* "o * s + r * d - p" simplified. */
static const char *window(struct gen *g, const char *o, int64_t s,
	const char *r, int64_t d, int64_t p)
{
	const char *t = S(g, "%s + %s", times(g, o, s), times(g, r, d));

	return p ? S(g, "%s - %lld", t, (long long)p) : t;
}

/* A 2-D convolution (NCHW, a batch of 1 or 2 or no batch axis) with
 * stride, dilation, padding through select guards or a padding stage,
 * groups (grouped or depthwise), a bias inside or outside the reduction
 * and an activation; floats, or i8 data with i32 accumulation. */
static void style_conv(struct gen *g)
{
	int64_t c = PICK(g, 1, 2, 3, 4, 6, 8), k = PICK(g, 1, 2, 3, 4, 6, 8);
	int64_t h = sdim(g, 32), w = sdim(g, 32), r = PICK(g, 1, 2, 3, 5);
	int64_t q = chance(g, 80) ? r : PICK(g, 1, 3), s = PICK(g, 1, 1, 2, 3);
	int64_t dl = chance(g, 75) ? 1 : 2, p = below(g, r), grp = 1, nb;
	int bias = (int)below(g, 3), a = (int)below(g, 3);
	bool integer = chance(g, 25), batch = chance(g, 50);
	bool flip = chance(g, 50);
	int gv = (int)below(g, 3);
	int64_t *d[] = { &h, &w, &k, &c };
	int pw[] = { 1, 1, 1, 1 };
	int64_t oh, ow, cg, kg, hp, wp;
	struct fty ft = { "i8", "i32", "i32" };
	const char *C, *K, *Hs, *Ws, *n0, *nx, *ci, *yy, *xx, *guard, *zero;
	const char *body, *red, *wl, *bl, *out, *shape;

	nb = batch ? PICK(g, 1, 2) : 1;
	if (g->bench) {
		c = k = 64;
		h = w = 56;
		r = q = 3;
		p = 1;
		dl = 1;
		s = chance(g, 30) ? 2 : 1;
		nb = 1;
	}
	fit(g, d, pw, 4, (double)(nb * r * q));
	if (gv == 1 && c % 2 == 0 && k % 2 == 0)
		grp = 2;
	else if (gv == 2) {
		grp = c;
		k = c;	/* depthwise */
	}
	if (g->bench && gv == 1)
		grp = 4;
	cg = c / grp;
	kg = k / grp;
	/* At least one output row and column. */
	if (h + 2 * p < dl * (r - 1) + 1)
		h = dl * (r - 1) + 1 - 2 * p;
	if (w + 2 * p < dl * (q - 1) + 1)
		w = dl * (q - 1) + 1 - 2 * p;
	oh = (h + 2 * p - dl * (r - 1) - 1) / s + 1;
	ow = (w + 2 * p - dl * (q - 1) - 1) / s + 1;
	hp = h + 2 * p;
	wp = w + 2 * p;
	if (!integer)
		ft = ftype(g, false);
	zero = integer ? "0" : "0.0";
	C = ext(g, "C", c);
	K = ext(g, "K", k);
	Hs = ext(g, "H", h);
	Ws = ext(g, "W", w);
	n0 = batch ? S(g, "n: %lld, ", (long long)nb) : "";
	nx = batch ? "n, " : "";
	input(g, false, "X", ft.in, S(g, "%s%s, %s, %s", batch ?
		S(g, "%lld, ", (long long)nb) : "", C, Hs, Ws));
	input(g, true, "Wt", ft.in, S(g, "%s, %lld, %lld, %lld", K,
		(long long)cg, (long long)r, (long long)q));
	if (bias)
		input(g, true, "Bias", ft.in, K);
	ci = grp == 1 ? "c" : grp == c && kg == 1 ? "k + c" :
		S(g, "(k // %lld) * %lld + c", (long long)kg, (long long)cg);
	wl = ld(g, &ft, "Wt[k, c, r, q]");
	bl = ld(g, &ft, "Bias[k]");
	out = S(g, "Y[%sk: %s, y: %lld, x: %lld]%s", n0, K, (long long)oh,
		(long long)ow, ann(g, &ft));
	if (g->fused || !p) {
		yy = window(g, "y", s, "r", dl, p);
		xx = window(g, "x", s, "q", dl, p);
		body = ld(g, &ft, S(g, "X[%s%s, %s, %s]", nx, ci, yy, xx));
		if (p) {
			guard = flip ? S(g, "0 <= %s && %s < %s && 0 <= %s && "
				"%s < %s", yy, yy, Hs, xx, xx, Ws) :
				S(g, "%s >= 0 && %s >= 0 && %s < %s && %s < %s",
				yy, xx, yy, Hs, xx, Ws);
			body = S(g, "select(%s, %s, %s)", guard, body, zero);
		}
	} else {
		shape = S(g, "%sc: %s, y: %lld, x: %lld", n0, C,
			(long long)hp, (long long)wp);
		guard = S(g, "y >= %lld && y < %lld && x >= %lld && x < %lld",
			(long long)p, (long long)(h + p), (long long)p,
			(long long)(w + p));
		stage(g, false, S(g, "P[%s]", shape), S(g, "select(%s, "
			"X[%sc, y - %lld, x - %lld], %s)", guard, nx,
			(long long)p, (long long)p, integer ? "i8(0)" : S(g,
			"%s(0.0)", ft.in)));
		yy = window(g, "y", s, "r", dl, 0);
		xx = window(g, "x", s, "q", dl, 0);
		body = ld(g, &ft, S(g, "P[%s%s, %s, %s]", nx, ci, yy, xx));
	}
	red = S(g, "sum(c: %lld, r: %lld, q: %lld) %s * %s%s", (long long)cg,
		(long long)r, (long long)q, body, wl, bias == 2 ?
		S(g, " + %s", bl) : "");
	if (g->fused) {
		if (bias == 1)
			red = S(g, "(%s) + %s", red, bl);
		stage(g, true, out, act(g, a, red, integer));
		return;
	}
	stage(g, false, S(g, "Cv[%sk: %s, y: %lld, x: %lld]", n0, K,
		(long long)oh, (long long)ow), red);
	stage(g, true, out, act(g, a, bias == 1 ?
		S(g, "Cv[%sk, y, x] + %s", nx, bl) :
		S(g, "Cv[%sk, y, x]", nx), integer));
}

/* Variance, standard deviation and layer normalisation written with the
 * mean nested inside the variance. */
static void style_layernorm(struct gen *g)
{
	int64_t r = sdim(g, 64), n = tdim(g, 64);
	int v = (int)below(g, 3);
	int64_t *d[] = { &r, &n };
	int pw[] = { 1, v == 2 ? 3 : 2 };
	struct fty ft;
	const char *R, *N, *nf, *var, *mean;

	if (g->bench) {
		r = 32;
		n = 128;
	}
	fit(g, d, pw, 2, 2);
	ft = ftype(g, false);
	R = ext(g, "R", r);
	N = ext(g, "N", n);
	nf = flit(g, (double)n);
	input(g, false, "X", ft.in, S(g, "%s, %s", R, N));
	if (v == 2) {
		input(g, true, "Gamma", ft.in, N);
		input(g, true, "Beta", ft.in, N);
	}
	/* X[i, "k"] less the mean ("m" or a nested sum over "k2"). */
#define DEV(k, k2) S(g, "(%s - %s)", ld(g, &ft, S(g, "X[i, %s]", k)), \
	g->fused ? S(g, "(sum(%s: %s) %s) / %s", k2, N, \
	ld(g, &ft, S(g, "X[i, %s]", k2)), nf) : "Mean[i]")
	if (!g->fused)
		stage(g, false, S(g, "Mean[i: %s]", R), S(g,
			"(sum(k: %s) %s) / %s", N, ld(g, &ft, "X[i, k]"), nf));
	var = S(g, "(sum(k: %s) %s * %s) / %s", N, DEV("k", "k2"),
		DEV("k", "k3"), nf);
	if (!g->fused) {
		stage(g, false, S(g, "Var[i: %s]", R), var);
		var = "Var[i]";
	}
	switch (v) {
	case 0:
		stage(g, true, S(g, "V[i: %s]%s", R, ann(g, &ft)), var);
		break;
	case 1:
		stage(g, true, S(g, "Sd[i: %s]%s", R, ann(g, &ft)),
			S(g, "sqrt(%s + 1e-06)", var));
		break;
	default:
		mean = DEV("j", "k4");
		stage(g, true, S(g, "Y[i: %s, j: %s]%s", R, N, ann(g, &ft)),
			S(g, "%s * rsqrt(%s + 1e-05) * %s + %s", mean, var,
			ld(g, &ft, "Gamma[j]"), ld(g, &ft, "Beta[j]")));
		break;
	}
#undef DEV
}

/* Several reductions with different reducers in one statement, over the
 * rows of a matrix, broadcast or not. */
static void style_multireduce(struct gen *g)
{
	static const char *const red[] = { "sum", "max", "min", "prod",
		"mean" };
	int64_t r = sdim(g, 200), k = tdim(g, 200), pk = PICK(g, 1, 2, 3, 5, 6);
	int nt = 2 + (int)below(g, 3), rd[4], body[4], sign[4];
	bool wide = chance(g, 40), useprod = false;
	int64_t *d[] = { &r, &k };
	int pw[] = { 1, wide ? 2 : 1 };
	struct fty ft;
	const char *R, *K, *P, *terms[4], *bodies[4], *bind[4], *acc;

	for (int t = 0; t < nt; t++) {
		rd[t] = (int)below(g, 5);
		body[t] = (int)below(g, 8);
		sign[t] = (int)below(g, 3);
		useprod |= rd[t] == 3;
	}
	if (g->bench) {
		r = 512;
		k = 1024;
		wide = false;
		pw[1] = 1;
	}
	fit(g, d, pw, 2, nt);
	ft = ftype(g, k <= 8);
	R = ext(g, "R", r);
	K = ext(g, "K", k);
	P = S(g, "%lld", (long long)pk);
	input(g, false, "X", ft.in, S(g, "%s, %s", R, K));
	input(g, true, "V", ft.in, K);
	if (useprod)
		input(g, false, "Z", ft.in, S(g, "%s, %s", R, P));
	for (int t = 0; t < nt; t++) {
		const char *kv = S(g, "k%d", t), *x;
		bool p = rd[t] == 3;
		x = ld(g, &ft, p ? S(g, "Z[i, %s]", kv) : S(g, "X[i, %s]", kv));
		bind[t] = S(g, "%s: %s", kv, p ? P : K);
		if (p) {
			bodies[t] = S(g, "(1.0 + %s * 0.5)", x);
			continue;
		}
		switch (body[t]) {
		case 0: bodies[t] = x; break;
		case 1: bodies[t] = S(g, "%s * %s", x, x); break;
		case 2: bodies[t] = S(g, "abs(%s)", x); break;
		case 3: bodies[t] = S(g, "exp(%s)", x); break;
		case 5: bodies[t] = S(g, "pow(abs(%s) + 1.0, 1.5)", x); break;
		case 6: bodies[t] = S(g, "sigmoid(%s)", x); break;
		case 7: bodies[t] = S(g, "erf(%s)", x); break;
		default: bodies[t] = S(g, "%s * %s", x,
			ld(g, &ft, S(g, "V[%s]", kv))); break;
		}
	}
	acc = wide ? ld(g, &ft, "X[i, j]") : "";
	for (int t = 0; t < nt; t++) {
		const char *op = t == 0 ? (wide ? " * " : "") :
			sign[t] == 2 ? " - " : " + ";
		const char *name = S(g, "T%d[i]", t), *sfx = "";
		int rr = rd[t] == 4 ? 0 : rd[t];
		if (rd[t] == 4)
			sfx = S(g, " / %s", flit(g, (double)k));
		if (g->fused) {
			terms[t] = S(g, "(%s(%s) %s)%s", red[rr], bind[t],
				bodies[t], sfx);
		} else {
			stage(g, false, S(g, "T%d[i: %s]", t, R),
				S(g, "%s(%s) %s", red[rr], bind[t], bodies[t]));
			terms[t] = S(g, "%s%s", name, sfx);
		}
		acc = S(g, "%s%s%s", acc, op, terms[t]);
	}
	stage(g, true, wide ? S(g, "Y[i: %s, j: %s]%s", R, K, ann(g, &ft)) :
		S(g, "Y[i: %s]%s", R, ann(g, &ft)), acc);
}

/* Integer reductions (sum, max, min, prod) in i32 or i64, combined with
 * floor division and modulo, which differ from C's on negative values. */
static void style_intreduce(struct gen *g)
{
	int64_t r = sdim(g, 200), k = tdim(g, 200);
	bool i64 = chance(g, 40), narrow = chance(g, 40), down = chance(g, 40);
	int nt = 2 + (int)below(g, 3), kind[4], comb[4];
	int64_t pk = i64 ? PICK(g, 1, 3, 5, 8) : PICK(g, 1, 2, 3, 4);
	int64_t dv[4], md[4];
	int64_t *d[] = { &r, &k };
	int pw[] = { 1, 1 };
	const char *it = i64 ? "i64" : "i32", *in = narrow ? "i8" : it;
	const char *R, *K, *P, *acc = "", *terms[4];
	bool useprod = false;

	for (int t = 0; t < nt; t++) {
		kind[t] = (int)below(g, 6);
		comb[t] = (int)below(g, 4);
		dv[t] = PICK(g, 2, 3, 4, 7);
		md[t] = PICK(g, 2, 3, 5, 16);
		useprod |= kind[t] == 3;
	}
	if (g->bench) {
		r = 1024;
		k = 1024;
	}
	fit(g, d, pw, 2, nt);
	R = ext(g, "R", r);
	K = ext(g, "K", k);
	P = S(g, "%lld", (long long)pk);
	input(g, false, "A", in, S(g, "%s, %s", R, K));
	input(g, true, "Bv", in, K);
	if (useprod)
		input(g, false, "Z", in, S(g, "%s, %s", R, P));
	/* An integer load in the accumulation dtype. */
#define IL(x) (narrow ? S(g, "%s(%s)", it, (x)) : (x))
	for (int t = 0; t < nt; t++) {
		const char *kv = S(g, "k%d", t);
		const char *a = IL(S(g, "A[i, %s]", kv));
		const char *b = IL(S(g, "Bv[%s]", kv)), *e;
		switch (kind[t]) {
		case 0: e = S(g, "sum(%s: %s) %s * %s", kv, K, a, b); break;
		case 1: e = S(g, "max(%s: %s) %s", kv, K, a); break;
		case 2: e = S(g, "min(%s: %s) %s - %s", kv, K, a, b); break;
		case 3: e = S(g, "prod(%s: %s) %s", kv, P,
			IL(S(g, "Z[i, %s]", kv))); break;
		case 4: e = S(g, "sum(%s: %s) %s %% %lld", kv, K, a,
			(long long)md[t]); break;
		default: e = S(g, "sum(%s: %s) (%s * 5) // %lld", kv, K, a,
			(long long)dv[t]); break;
		}
		if (!g->fused) {
			stage(g, false, S(g, "T%d[i: %s]", t, R), e);
			e = S(g, "T%d[i]", t);
		} else {
			e = S(g, "(%s)", e);
		}
		switch (comb[t]) {
		case 0: terms[t] = e; break;
		case 1: terms[t] = S(g, "%s // %lld", e, (long long)dv[t]);
			break;
		case 2: terms[t] = S(g, "%s %% %lld", e, (long long)md[t]);
			break;
		default: terms[t] = S(g, "%s * 3", e); break;
		}
		acc = t ? S(g, "%s %s %s", acc, t % 2 ? "-" : "+", terms[t]) :
			terms[t];
	}
#undef IL
	stage(g, true, S(g, "Y[i: %s]%s", R, i64 && down ? ": i32" : ""), acc);
}

/* Gathers with floor division and modulo in the indices (nearest
 * upsampling, pixel shuffle, space to depth, even/odd interleave, channel
 * shuffle with groups) feeding a 1x1 convolution or a bias. */
static void style_gather(struct gen *g)
{
	int v = (int)below(g, 7);
	int64_t c = tdim(g, 16), k = tdim(g, 16), h = sdim(g, 16);
	int64_t w = sdim(g, 16), f = PICK(g, 2, 2, 3), grp = PICK(g, 2, 3);
	int64_t sh = 1 + below(g, 3);
	bool integer = chance(g, 30), bias = chance(g, 50);
	int64_t *d[] = { &c, &k, &h, &w };
	int pw[] = { 1, 1, 1, 1 };
	struct fty ft = { "i32", "i32", "i32" };
	const char *C, *K, *gat, *gshape, *gdecl, *red, *idx;
	int64_t cg, kg;

	if (g->bench) {
		c = k = 64;
		h = w = 56;
		f = 2;
		grp = 4;
	}
	fit(g, d, pw, 4, (double)(f * f));
	if (v == 4) {
		c = c * grp;	/* groups divide the channels */
		k = k * grp;
	}
	if (v >= 5 && h == 0)
		h = 1;	/* a modulo by the extent */
	if (v == 5 && w == 0)
		w = 1;
	if (!integer)
		ft = ftype(g, c <= 8);
	C = ext(g, "C", c);
	K = ext(g, "K", k);
	cg = c / grp;
	kg = k / grp;
	switch (v) {
	case 0:	/* nearest upsampling by f */
		input(g, false, "X", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)(h * f),
			(long long)(w * f));
		gat = S(g, "X[c, y // %lld, x // %lld]", (long long)f,
			(long long)f);
		break;
	case 1:	/* pixel shuffle (depth to space) by f */
		input(g, false, "X", ft.in, S(g, "%lld, %lld, %lld",
			(long long)(c * f * f), (long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)(h * f),
			(long long)(w * f));
		gat = S(g, "X[c * %lld + (y %% %lld) * %lld + x %% %lld, "
			"y // %lld, x // %lld]", (long long)(f * f),
			(long long)f,
			(long long)f, (long long)f, (long long)f, (long long)f);
		break;
	case 2:	/* space to depth by 2 */
		input(g, false, "X", ft.in, S(g, "%lld, %lld, %lld",
			(long long)((c + 3) / 4), (long long)(2 * h),
			(long long)(2 * w)));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)h,
			(long long)w);
		gat = S(g, "X[c // 4, y * 2 + (c %% 4) // 2, x * 2 + c %% 2]");
		break;
	case 3:	/* even rows from A, odd rows from Bo */
		input(g, false, "A", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		input(g, false, "Bo", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)(2 * h),
			(long long)w);
		gat = "select(y % 2 == 0, A[c, y // 2, x], Bo[c, y // 2, x])";
		break;
	case 5:	/* a roll: floor modulo of negative indices */
		input(g, false, "X", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)h,
			(long long)w);
		gat = S(g, "X[c, (y - %lld) %% %lld, (x + %lld) %% %lld]",
			(long long)sh, (long long)h, (long long)sh,
			(long long)w);
		break;
	case 6:	/* a shifted upsampling: floor division of -1 */
		input(g, false, "X", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C,
			(long long)(2 * h - 1), (long long)w);
		gat = "X[c, (y - 1) // 2 + 1, x]";
		break;
	default:	/* channel shuffle of grp groups */
		input(g, false, "X", ft.in, S(g, "%s, %lld, %lld", C,
			(long long)h, (long long)w));
		gshape = S(g, "c: %s, y: %lld, x: %lld", C, (long long)h,
			(long long)w);
		gat = S(g, "X[(c %% %lld) * %lld + c // %lld, y, x]",
			(long long)grp, (long long)(c / grp), (long long)grp);
		break;
	}
	gdecl = S(g, "G[%s]", gshape);
	idx = strchr(gshape, ',') + 2;	/* "y: .., x: .." */
	if (v == 4) {
		/* A grouped 1x1 convolution reads the shuffled channels. */
		input(g, true, "Wt", ft.in, S(g, "%s, %lld", K, (long long)cg));
		const char *ch = S(g, "(k // %lld) * %lld + c", (long long)kg,
			(long long)cg);
		const char *src = g->fused ? S(g, "X[(%s) %% %lld * %lld + "
			"(%s) // %lld, y, x]", ch, (long long)grp,
			(long long)(c / grp), ch, (long long)grp) :
			S(g, "G[%s, y, x]", ch);
		if (!g->fused)
			stage(g, false, gdecl, gat);
		red = S(g, "sum(c: %lld) %s * %s", (long long)cg,
			ld(g, &ft, src), ld(g, &ft, "Wt[k, c]"));
	} else if (v != 1 || !bias) {
		input(g, true, "Wt", ft.in, S(g, "%s, %s", K, C));
		if (!g->fused)
			stage(g, false, gdecl, gat);
		red = S(g, "sum(c: %s) %s * %s", C, ld(g, &ft, "Wt[k, c]"),
			ld(g, &ft, g->fused ? S(g, "%s", gat) : "G[c, y, x]"));
	} else {
		/* Pixel shuffle with a bias: no reduction. */
		input(g, true, "Bias", ft.in, C);
		if (!g->fused)
			stage(g, false, gdecl, gat);
		stage(g, true, S(g, "Y[%s]%s", gshape, ann(g, &ft)),
			act(g, ACT_RELU, S(g, "%s + %s", ld(g, &ft,
			g->fused ? gat : "G[c, y, x]"), ld(g, &ft,
			"Bias[c]")), integer));
		return;
	}
	stage(g, true, S(g, "Y[k: %s, %s]%s", K, idx, ann(g, &ft)), red);
}

/* Pooling: max, min or average over windows with stride and padding
 * through select guards (-inf, inf or 0 outside), or a padding stage;
 * a global average pool feeding a dense layer (a reduction nested in a
 * reduction). */
static void style_pool(struct gen *g)
{
	int v = (int)below(g, 4);
	int64_t c = tdim(g, 16), h = sdim(g, 64), w = sdim(g, 64);
	int64_t r = PICK(g, 1, 2, 3, 5), s = PICK(g, 1, 2, 3), p;
	int64_t k = tdim(g, 16);
	bool integer = chance(g, 25) && v < 2;
	int64_t *d[] = { &c, &h, &w, &k };
	int pw[] = { 1, 1, 1, v == 3 ? 1 : 0 };
	struct fty ft = { "i32", "i32", "i32" };
	const char *C, *H, *W, *yy, *xx, *guard, *fill, *body, *red;
	int64_t oh, ow;

	p = below(g, r);
	if (g->bench) {
		c = 64;
		h = w = 112;
		r = 3;
		s = 2;
		p = 1;
		k = 256;
	}
	fit(g, d, pw, 4, (double)(r * r));
	if (h + 2 * p < r)
		h = r - 2 * p;
	if (w + 2 * p < r)
		w = r - 2 * p;
	if (!integer)
		ft = ftype(g, v < 2 || (v == 2 && r <= 3));
	oh = (h + 2 * p - r) / s + 1;
	ow = (w + 2 * p - r) / s + 1;
	C = ext(g, "C", c);
	H = ext(g, "H", h);
	W = ext(g, "W", w);
	input(g, false, "X", ft.in, S(g, "%s, %s, %s", C, H, W));
	if (v == 3) {
		const char *hw = flit(g, (double)(h * w));
		const char *K = ext(g, "K", k);
		input(g, true, "Wt", ft.in, S(g, "%s, %s", K, C));
		if (g->fused) {
			red = S(g, "sum(c: %s) %s * ((sum(y: %s, x: %s) %s) / "
				"%s)", C, ld(g, &ft, "Wt[k, c]"), H, W,
				ld(g, &ft, "X[c, y, x]"), hw);
		} else {
			stage(g, false, S(g, "Gp[c: %s]", C), S(g, "(sum(y: "
				"%s, x: %s) %s) / %s", H, W, ld(g, &ft,
				"X[c, y, x]"), hw));
			red = S(g, "sum(c: %s) %s * Gp[c]", C,
				ld(g, &ft, "Wt[k, c]"));
		}
		stage(g, true, S(g, "Y[k: %s]%s", K, ann(g, &ft)), red);
		return;
	}
	fill = v == 0 ? (integer ? "-1000" : "-inf") : v == 1 ?
		(integer ? "1000" : "inf") : "0.0";
	if (g->fused || !p) {
		yy = window(g, "y", s, "r", 1, p);
		xx = window(g, "x", s, "q", 1, p);
		body = S(g, "X[c, %s, %s]", yy, xx);
		if (p) {
			guard = S(g, "%s >= 0 && %s < %s && %s >= 0 && %s < %s",
				yy, yy, H, xx, xx, W);
			body = S(g, "select(%s, %s, %s)", guard, body, fill);
		}
	} else {
		stage(g, false, S(g, "P[c: %s, y: %lld, x: %lld]", C,
			(long long)(h + 2 * p), (long long)(w + 2 * p)),
			S(g, "select(y >= %lld && y < %lld && x >= %lld && "
			"x < %lld, X[c, y - %lld, x - %lld], %s)",
			(long long)p, (long long)(h + p), (long long)p,
			(long long)(w + p), (long long)p, (long long)p, fill));
		yy = window(g, "y", s, "r", 1, 0);
		xx = window(g, "x", s, "q", 1, 0);
		body = S(g, "P[c, %s, %s]", yy, xx);
	}
	body = ld(g, &ft, body);
	red = v == 2 ? S(g, "(sum(r: %lld, q: %lld) %s) / %s", (long long)r,
		(long long)r, body, flit(g, (double)(r * r))) :
		S(g, "%s(r: %lld, q: %lld) %s", v ? "min" : "max", (long long)r,
		(long long)r, body);
	stage(g, true, S(g, "Y[c: %s, y: %lld, x: %lld]%s", C, (long long)oh,
		(long long)ow, ann(g, &ft)), red);
}

/* An integer matrix product (i8 data, i32 accumulation, a zero point, an
 * i32 bias) requantised to i8 with a float scale, rounding half to even
 * and clamping; the scale applied in f32 or f64. */
static void style_quant(struct gen *g)
{
	int64_t m = tdim(g, 200), n = tdim(g, 200), k = tdim(g, 200);
	int64_t zp = PICK(g, 0, 0, 3, -5);
	bool bt = chance(g, 50), bias = chance(g, 60), relu = chance(g, 30);
	bool cast = chance(g, 50), f64 = chance(g, 20);
	bool scalar = chance(g, 25);
	int stages = 2 + (int)below(g, 2);
	double scale;
	int64_t *d[] = { &m, &n, &k };
	int pw[] = { 1, 1, 1 };
	const char *M, *N, *K, *a, *acc, *fs, *sc, *q, *fd;

	if (g->bench) {
		m = n = k = PICK(g, 256, 512);
	}
	fit(g, d, pw, 3, 1);
	/* About 3 / sqrt(k) puts the scaled values around +-64. */
	scale = (3.0 / sqrt((double)k)) * (0.3 + (double)below(g, 2700) /
		1000.0);
	fs = S(g, "%.4g", scale);
	if (!strpbrk(fs, ".e"))
		fs = S(g, "%s.0", fs);
	fd = f64 ? "f64" : "f32";
	M = ext(g, "M", m);
	N = ext(g, "N", n);
	K = ext(g, "K", k);
	input(g, false, "A", "i8", S(g, "%s, %s", M, K));
	input(g, true, "Bq", "i8", bt ? S(g, "%s, %s", N, K) :
		S(g, "%s, %s", K, N));
	if (bias)
		input(g, true, "Bias", "i32", N);
	if (scalar)
		input(g, false, "Scale", "f32", "");
	a = zp > 0 ? S(g, "(i32(A[i, k]) - %lld)", (long long)zp) :
		zp < 0 ? S(g, "(i32(A[i, k]) + %lld)", (long long)-zp) :
		"i32(A[i, k])";
	acc = S(g, "sum(k: %s) %s * i32(%s)", K, a, bt ? "Bq[j, k]" :
		"Bq[k, j]");
	if (!g->fused) {
		stage(g, false, S(g, "Acc[i: %s, j: %s]", M, N), acc);
		acc = "Acc[i, j]";
	} else {
		acc = S(g, "(%s)", acc);
	}
	if (bias)
		acc = S(g, "%s + Bias[j]", acc);
	sc = S(g, "%s(%s) * %s", fd, acc, fs);
	if (scalar)	/* a scale in [-1, 1) read from a scalar */
		sc = S(g, "%s * %s", sc, f64 ? "f64(Scale[])" : "Scale[]");
	if (!g->fused && stages == 3) {
		stage(g, false, S(g, "Sc[i: %s, j: %s]", M, N), sc);
		sc = "Sc[i, j]";
	}
	q = S(g, "clamp(round(%s), %s, 127.0)", sc, relu ? "0.0" : "-128.0");
	stage(g, true, S(g, "Q[i: %s, j: %s]%s", M, N, cast ? "" : ": i8"),
		cast ? S(g, "i8(%s)", q) : q);
}

/* One attention head, softmax(Q K^T * scale) V, optionally causal: in one
 * statement the scores are reductions nested three deep. */
static void style_attention(struct gen *g)
{
	int64_t n = PICK(g, 1, 2, 3, 5, 7, 8, 13), dd = PICK(g, 1, 2, 4, 8);
	int64_t dv = PICK(g, 1, 3, 4, 8);
	bool causal = chance(g, 40);
	int64_t *d[] = { &n, &dd, &dv };
	int pw[] = { 4, 1, 1 };
	struct fty ft;
	const char *N, *D, *DV, *sc, *num;

	if (g->bench) {
		n = 32;
		dd = dv = 16;
	}
	fit(g, d, pw, 3, 1);
	ft = ftype(g, false);
	sc = flit(g, 1.0 / sqrt((double)dd));
	N = ext(g, "N", n);
	D = ext(g, "D", dd);
	DV = ext(g, "DV", dv);
	input(g, false, "Q", ft.in, S(g, "%s, %s", N, D));
	input(g, false, "Kt", ft.in, S(g, "%s, %s", N, D));
	input(g, false, "V", ft.in, S(g, "%s, %s", N, DV));
	/* The score of row i against row "j" (summing over "e"). */
#define SCORE(j, e) (g->fused ? S(g, "(sum(%s: %s) %s * %s) * %s", e, D, \
	ld(g, &ft, S(g, "Q[i, %s]", e)), ld(g, &ft, S(g, "Kt[%s, %s]", j, e)), \
	sc) : S(g, "Sc[i, %s]", j))
#define MASKED(j, e) (causal ? S(g, "select(%s <= i, %s, -inf)", j, \
	SCORE(j, e)) : SCORE(j, e))
	if (!g->fused) {
		stage(g, false, S(g, "Sc[i: %s, j: %s]", N, N), S(g, "(sum(e: "
			"%s) %s * %s) * %s", D, ld(g, &ft, "Q[i, e]"),
			ld(g, &ft, "Kt[j, e]"), sc));
		stage(g, false, S(g, "Mx[i: %s]", N), S(g, "max(j: %s) %s", N,
			MASKED("j", "e")));
		stage(g, false, S(g, "Den[i: %s]", N), S(g, "sum(j: %s) "
			"exp(%s - Mx[i])", N, MASKED("j", "e")));
		num = S(g, "sum(j: %s) exp(%s - Mx[i]) / Den[i] * %s", N,
			MASKED("j", "e"), ld(g, &ft, "V[j, v]"));
	} else {
		const char *mx = S(g, "max(j2: %s) %s", N, MASKED("j2", "e2"));
		const char *den = S(g, "sum(j3: %s) exp(%s - max(j4: %s) %s)",
			N, MASKED("j3", "e3"), N, MASKED("j4", "e4"));
		num = S(g, "sum(j: %s) exp(%s - %s) / (%s) * %s", N,
			MASKED("j", "e"), mx, den, ld(g, &ft, "V[j, v]"));
	}
#undef SCORE
#undef MASKED
	stage(g, true, S(g, "O[i: %s, v: %s]%s", N, DV, ann(g, &ft)), num);
}

/* Elementwise casts between every dtype: floor, round and truncation of
 * exact values, floor division and modulo of negative integers, masks
 * (stored as a bool stage in the staged form). */
static void style_cast(struct gen *g)
{
	static const char *const outs[] = { "i8", "i32", "i64", "f16", "f32",
		"f64" };
	int64_t m = sdim(g, 200), n = tdim(g, 200);
	int od = (int)below(g, 6), nt = 2 + (int)below(g, 3), term[4];
	const char *fdt = (const char *[]){ "f16", "f32", "f64" }[below(g, 3)];
	bool mask = chance(g, 50);
	int mv = (int)below(g, 4);
	int64_t *d[] = { &m, &n };
	int pw[] = { 1, 1 };
	const char *M, *N, *o = outs[od], *acc = "", *cond, *t;
	bool fl = od >= 3, i8 = od == 0;
	const char *cp = i8 ? "i32" : o;

	for (int i = 0; i < nt; i++)
		term[i] = (int)below(g, 8);
	if (g->bench) {
		m = 1024;
		n = 1024;
	}
	fit(g, d, pw, 2, nt);
	M = ext(g, "M", m);
	N = ext(g, "N", n);
	input(g, false, "A", "i8", S(g, "%s, %s", M, N));
	input(g, false, "F", fdt, S(g, "%s, %s", M, N));
	input(g, false, "I", "i32", N);
	input(g, false, "L", "i64", M);
	for (int i = 0; i < nt; i++) {
		if (fl) {
			switch (term[i]) {
			case 0: t = S(g, "%s(A[i, j]) * 0.25", cp); break;
			case 1: t = S(g, "floor(%s(F[i, j]) * 4.0)", cp); break;
			case 2: t = S(g, "round(%s(F[i, j]) * 8.0)", cp); break;
			case 3: t = S(g, "%s(I[j] // 3) + %s(L[i] %% 5)", cp,
				cp);
				break;
			case 4: t = S(g, "%s((i + j) %% 3)", cp); break;
			case 5: t = S(g, "round(%s(F[i, j]) * 8.0) // 3.0", cp);
				break;
			case 6: t = S(g, "round(%s(F[i, j]) * 8.0) %% 3.0", cp);
				break;
			default: t = S(g, "%s(F[i, j]) * %s(F[i, j])", cp, cp);
				break;
			}
		} else {
			switch (term[i]) {
			case 0: t = S(g, "%s(A[i, j]) * 3 // 4", cp); break;
			case 1: t = S(g, "%s(floor(F[i, j] * 4.0))", cp); break;
			case 2: t = S(g, "%s(round(F[i, j] * 8.0))", cp); break;
			case 3: t = S(g, "%s(I[j]) %% 5 - %s(L[i] // 3)", cp,
				cp);
				break;
			case 4: t = S(g, "%s((i + j) %% 3)", cp); break;
			case 5: t = S(g, "%s(A[i, j]) // -3", cp); break;
			case 6: t = S(g, "%s(A[i, j]) %% -4", cp); break;
			default: t = S(g, "%s(F[i, j] * 8.0)", cp); break;
			}
		}
		acc = i ? S(g, "%s + %s", acc, t) : t;
	}
	/* Masks; && and || short-circuit, so the loads they guard may
	 * lie outside their tensor where they are not evaluated. */
	switch (mv) {
	case 0: cond = "F[i, j] > 0.0 && A[i, j] != 0"; break;
	case 1: cond = "i > 0 && F[i - 1, j] > 0.0"; break;
	case 2: cond = "i == 0 || !(F[i - 1, j] < 0.25)"; break;
	default: cond = S(g, "j + 1 < %s && A[i, j + 1] > -2", N); break;
	}
	if (!g->fused) {
		stage(g, false, S(g, "T[i: %s, j: %s]", M, N), acc);
		acc = "T[i, j]";
		if (mask) {
			stage(g, false, S(g, "Mk[i: %s, j: %s]", M, N), cond);
			cond = "Mk[i, j]";
		}
	}
	if (mask)
		acc = S(g, "select(%s, %s, %s(A[i, j]))", cond, acc, cp);
	if (i8)
		acc = S(g, "i8(clamp(%s, -100, 100))", acc);
	stage(g, true, S(g, "Y[i: %s, j: %s]", M, N), acc);
}

/* The styles, in the order of their indices. */
static const struct {
	const char *name;
	void (*write)(struct gen *g);
} styles[] = {
	{ "dense", style_dense },
	{ "mlp", style_mlp },
	{ "rownorm", style_rownorm },
	{ "softmax", style_softmax },
	{ "conv", style_conv },
	{ "layernorm", style_layernorm },
	{ "multireduce", style_multireduce },
	{ "intreduce", style_intreduce },
	{ "gather", style_gather },
	{ "pool", style_pool },
	{ "quant", style_quant },
	{ "attention", style_attention },
	{ "cast", style_cast },
};

#define NSTYLES ((int)(sizeof(styles) / sizeof(styles[0])))

ts_corpus_opts ts_corpus_opts_default(void)
{
	return (ts_corpus_opts){ .size = TS_CORPUS_TEST,
		.form = TS_CORPUS_EITHER, .style = -1 };
}

int ts_corpus_style_count(void)
{
	return NSTYLES;
}

const char *ts_corpus_style_name(int i)
{
	return i >= 0 && i < NSTYLES ? styles[i].name : NULL;
}

int ts_corpus_style_find(const char *name)
{
	for (int i = 0; name && i < NSTYLES; i++)
		if (!strcmp(styles[i].name, name))
			return i;
	return -1;
}

const char *ts_corpus_form_name(ts_corpus_form f)
{
	return f == TS_CORPUS_ONE_STATEMENT ? "one statement" :
		f == TS_CORPUS_STAGED ? "stages" : "either";
}

/* Write the text of style "style" into "g". */
static void run_style(struct gen *g, int style)
{
	styles[style].write(g);
	join_stages(g);
}

/* Free the strings and buffers of "g". */
static void gen_clear(struct gen *g)
{
	for (int i = 0; i < g->npool; i++)
		free(g->pool[i]);
	free(g->lets_text.s);
	free(g->inputs.s);
	free(g->stages.s);
}

/* Draw the style-independent choices of "g" from "seed". */
static void gen_init(struct gen *g, uint64_t seed, const ts_corpus_opts *o,
	bool fused)
{
	memset(g, 0, sizeof(*g));
	g->state = seed;
	g->bench = o->size == TS_CORPUS_BENCH;
	g->zero = o->zero_extents;
	g->fused = fused;
	next(g);
	g->lets = chance(g, 40);
	g->weights = chance(g, 30);
	g->reverse = chance(g, 15);
	g->breaks = chance(g, 20);
}

int ts_corpus_generate(uint64_t seed, const ts_corpus_opts *opts,
	ts_corpus_case *c)
{
	ts_corpus_opts o = opts ? *opts : ts_corpus_opts_default();
	struct gen g, other;
	uint64_t side = seed ^ 0x5851f42d4c957f2dULL;
	int style = o.style;
	ts_corpus_form form = o.form;
	struct buf out = { 0 };

	memset(c, 0, sizeof(*c));
	if (style >= NSTYLES)
		return -1;
	/* The style and the form come from a stream of their own, so
	 * that neither changes the parameters. */
	side = (side ^ (side >> 31)) * 0xbf58476d1ce4e5b9ULL;
	side ^= side >> 29;
	if (style < 0)
		style = (int)(side % (uint64_t)NSTYLES);
	if (form == TS_CORPUS_EITHER)
		form = (side >> 32) & 1 ? TS_CORPUS_ONE_STATEMENT :
			TS_CORPUS_STAGED;
	gen_init(&g, seed, &o, form == TS_CORPUS_ONE_STATEMENT);
	run_style(&g, style);
	gen_init(&other, seed, &o, form != TS_CORPUS_ONE_STATEMENT);
	run_style(&other, style);
	buf_printf(&out, "# corpus seed %llu: %s, %s\n",
		(unsigned long long)seed, styles[style].name,
		ts_corpus_form_name(form));
	buf_printf(&out, "%s%s%s", g.lets_text.s ? g.lets_text.s : "",
		g.inputs.s ? g.inputs.s : "", g.stages.s ? g.stages.s : "");
	c->seed = seed;
	c->style = style;
	c->form = form;
	c->twin = !g.stages.s || !other.stages.s ||
		strcmp(g.stages.s, other.stages.s) != 0;
	c->text = out.s;
	if (g.oom || other.oom || g.lets_text.oom || g.inputs.oom ||
	    g.stages.oom || out.oom) {
		free(out.s);
		c->text = NULL;
	}
	gen_clear(&g);
	gen_clear(&other);
	return c->text ? 0 : -1;
}

void ts_corpus_case_clear(ts_corpus_case *c)
{
	free(c->text);
	c->text = NULL;
}
