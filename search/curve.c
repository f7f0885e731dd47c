/* Tuning curves: the best time against the trials, as CSV and as a
 * hand-written SVG picture.  The picture is meant to be read at a glance,
 * so it does not flatter: the best so far is a step (nothing happens
 * between two improvements), the time axis starts at 0 (a 3% gain looks
 * like 3%), and the static and naive times are drawn beside it, with the
 * gain written out. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessel/tune.h>

#include "support/support.h"

#define W 760
#define H 420
#define LEFT 70
#define RIGHT 190		/* room for the labels of the lines */
#define TOP 56
#define BOTTOM 50
#define PW (W - LEFT - RIGHT)
#define PH (H - TOP - BOTTOM)
#define LABEL_GAP 13		/* pixels between two labels on the right */
/* A reference line more than this many times the curve's top is named at
 * the top edge rather than drawn: a naive time 50x slower would squash
 * the curve into the bottom pixels. */
#define OFF_SCALE 3.0

/* Open "path" for writing in "ctx"; NULL with a message on failure. */
static FILE *open_out(ts_ctx *ctx, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		ts_ctx_set_error(ctx, "tuning curve: cannot write '%s': %s",
			path, strerror(errno));
	return f;
}

/* Close "f" (written to "path") and report a write error in "ctx". */
static ts_status close_out(ts_ctx *ctx, FILE *f, const char *path)
{
	bool bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return ts_ctx_set_error(ctx, "tuning curve: error writing "
			"'%s'", path);
	return TS_OK;
}

ts_status ts_tune_curve_write_csv(ts_ctx *ctx, const char *path, int n,
	const double *best)
{
	FILE *f = open_out(ctx, path);

	if (!f)
		return TS_ERROR;
	fprintf(f, "trial,best_s\n");
	for (int i = 0; i < n; i++) {
		if (isfinite(best[i]))
			fprintf(f, "%d,%.9g\n", i + 1, best[i]);
		else
			fprintf(f, "%d,\n", i + 1);
	}
	return close_out(ctx, f, path);
}

ts_tune_curve ts_tune_curve_default(void)
{
	ts_tune_curve c = { 0 };

	return c;
}

/* Write "text" to "f" with the characters XML reserves escaped. */
static void put_escaped(FILE *f, const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '&')
			fputs("&amp;", f);
		else
			fputc(*p, f);
	}
}

/* Whether "v" is a time to draw. */
static bool is_time(double v)
{
	return isfinite(v) && v > 0;
}

/* The largest finite value of "c"'s curve, or 0 when there is none. */
static double curve_max(const ts_tune_curve *c)
{
	double hi = 0;

	for (int i = 0; i < c->n; i++)
		if (isfinite(c->best[i]))
			hi = fmax(hi, c->best[i]);
	return hi;
}

/* The last finite value of "c"'s curve (the best), or INFINITY. */
static double curve_last(const ts_tune_curve *c)
{
	for (int i = c->n - 1; i >= 0; i--)
		if (isfinite(c->best[i]))
			return c->best[i];
	return INFINITY;
}

/* The first finite value of "c"'s curve, or INFINITY. */
static double curve_first(const ts_tune_curve *c)
{
	for (int i = 0; i < c->n; i++)
		if (isfinite(c->best[i]))
			return c->best[i];
	return INFINITY;
}

/* Whether the reference "v" is drawn as a line under the curve's top
 * "hi" rather than named off the scale. */
static bool on_scale(double v, double hi)
{
	return is_time(v) && (hi <= 0 || v <= OFF_SCALE * hi);
}

/* The top of the time axis for "c" and a tick step into "*step": a round
 * number above the curve and the references on the scale. */
static double axis_top(const ts_tune_curve *c, double *step)
{
	double hi = curve_max(c), top = hi;
	const double refs[4] = { c->naive_s, c->static_s, c->library_s,
		c->tuned_s };
	double mag;

	for (int r = 0; r < 4; r++)
		if (on_scale(refs[r], hi))
			top = fmax(top, refs[r]);
	if (top <= 0)
		top = 1e-3;
	top *= 1.08;
	mag = pow(10, floor(log10(top / 5)));
	*step = mag;
	for (int k = 0; k < 3 && top / *step > 6; k++)
		*step = mag * (const double[]){ 2, 5, 10 }[k];
	return ceil(top / *step - 1e-9) * *step;
}

/* The x of point "i" of "n", and the y of "v" seconds under "top". */
static double px(int i, int n)
{
	return LEFT + (n > 1 ? PW * (double)i / (n - 1) : 0);
}

/* The abscissa of point "i" of "c": by its number, or by its value of
 * c->x on an axis from 0 to the last. */
static double cx(const ts_tune_curve *c, int i)
{
	double last = c->x && c->n > 0 ? c->x[c->n - 1] : 0;

	if (!(last > 0))
		return px(i, c->n);
	return LEFT + PW * fmax(0.0, c->x[i]) / last;
}

static double py(double v, double top)
{
	return TOP + PH * (1 - v / top);
}

/* Write the title, the axes, their ticks from 0 to "top" by "step" and
 * their labels for "c" to "f". */
static void axes(FILE *f, const ts_tune_curve *c, double top, double step)
{
	int n = c->n > 0 ? c->n : 1;

	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" "
		"font-size=\"16\">", LEFT + PW / 2);
	put_escaped(f, c->title ? c->title : "tuning curve");
	fprintf(f, "</text>\n<path class=\"axes\" d=\"M%d %d V%d H%d\" "
		"stroke=\"black\" fill=\"none\"/>\n", LEFT, TOP, TOP + PH,
		LEFT + PW);
	for (double v = 0; v <= top * (1 + 1e-9); v += step) {
		double y = py(v, top);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"#e0e0e0\"/>\n", LEFT + 1, y, LEFT + PW, y);
		fprintf(f, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\" font-size=\"11\">%.4g</text>\n",
			LEFT - 6, y + 4, v * 1e3);
	}
	for (int k = 0; k <= 4; k++) {
		int i = (int)lround((n - 1) * k / 4.0);
		if (c->x && c->n > 0 && c->x[c->n - 1] > 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor="
				"\"middle\" font-size=\"11\">%.4g</text>\n",
				LEFT + PW * k / 4.0, TOP + PH + 16,
				c->x[c->n - 1] * k / 4.0);
			continue;
		}
		if (k && i == (int)lround((n - 1) * (k - 1) / 4.0))
			continue;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
			"font-size=\"11\">%d</text>\n", px(i, n), TOP + PH + 16,
			i + 1);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
		"font-size=\"13\">", LEFT + PW / 2, H - 12);
	put_escaped(f, c->x_label ? c->x_label : "trials");
	fprintf(f, "</text>\n<text x=\"16\" y=\"%d\" text-anchor=\"middle\" "
		"font-size=\"13\" transform=\"rotate(-90 16 %d)\">",
		TOP + PH / 2, TOP + PH / 2);
	put_escaped(f, c->y_label ? c->y_label : "best time (ms)");
	fprintf(f, "</text>\n");
}

/* Write the best so far of "c" under "top" to "f" as a step: each value
 * holds until the next point that improves on it, marked by a dot. */
static void step(FILE *f, const ts_tune_curve *c, double top)
{
	double prev = INFINITY;

	fprintf(f, "<path class=\"best\" fill=\"none\" stroke=\"#1f77b4\" "
		"stroke-width=\"2\" d=\"");
	for (int i = 0; i < c->n; i++) {
		double v = c->best[i];
		if (!isfinite(v) || v == prev)
			continue;
		if (isfinite(prev))
			fprintf(f, "H%.1f V%.1f ", cx(c, i), py(v, top));
		else
			fprintf(f, "M%.1f %.1f ", cx(c, i), py(v, top));
		prev = v;
	}
	fprintf(f, "H%.1f\"/>\n", cx(c, c->n - 1));
	prev = INFINITY;
	for (int i = 0; i < c->n; i++) {
		double v = c->best[i];
		if (!isfinite(v) || v == prev)
			continue;
		fprintf(f, "<circle class=\"improvement\" cx=\"%.1f\" "
			"cy=\"%.1f\" r=\"2.5\" fill=\"#1f77b4\"/>\n",
			cx(c, i), py(v, top));
		prev = v;
	}
}

/* A label in the right margin: its wanted height, class, colour, text. */
struct label {
	double y;
	const char *klass;
	const char *color;
	char text[96];
};

/* Order labels by height, for qsort. */
static int label_cmp(const void *a, const void *b)
{
	double ya = ((const struct label *)a)->y;
	double yb = ((const struct label *)b)->y;

	return (ya > yb) - (ya < yb);
}

/* Draw the reference "v" seconds called "name" in class "klass" and
 * "color" under "top" (the curve's highest point "hi"), and add its
 * label to "lab" ("*n" of them). */
static void reference(FILE *f, const char *klass, const char *color,
	const char *name, double v, double top, double hi, struct label *lab,
	int *n)
{
	struct label *l = &lab[(*n)++];

	l->klass = klass;
	l->color = color;
	if (!on_scale(v, hi)) {
		l->y = TOP;
		snprintf(l->text, sizeof(l->text), "%s %.4g ms (off the scale)",
			name, v * 1e3);
		return;
	}
	l->y = py(v, top);
	snprintf(l->text, sizeof(l->text), "%s %.4g ms", name, v * 1e3);
	fprintf(f, "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
		"y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
		"stroke-dasharray=\"6 4\"/>\n", klass, LEFT, l->y, LEFT + PW,
		l->y, color);
}

/* Write the "n" labels "lab" in the right margin, moved apart so that
 * none covers another. */
static void labels(FILE *f, struct label *lab, int n)
{
	qsort(lab, (size_t)n, sizeof(*lab), label_cmp);
	for (int i = 1; i < n; i++)
		lab[i].y = fmax(lab[i].y, lab[i - 1].y + LABEL_GAP);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<text class=\"%s\" x=\"%d\" y=\"%.1f\" "
			"font-size=\"11\" fill=\"%s\">", lab[i].klass,
			LEFT + PW + 6, lab[i].y + 4, lab[i].color);
		put_escaped(f, lab[i].text);
		fprintf(f, "</text>\n");
	}
}

/* The result of "c": the verified time, else the last point. */
static double curve_result(const ts_tune_curve *c)
{
	return is_time(c->tuned_s) ? c->tuned_s : curve_last(c);
}

/* The gain of "c" as a phrase into "buf" ("size" bytes). */
static void gain_text(const ts_tune_curve *c, char *buf, size_t size)
{
	double best = curve_result(c), first = curve_first(c);
	size_t k;

	if (!isfinite(best)) {
		snprintf(buf, size, "no valid measurement");
		return;
	}
	k = (size_t)snprintf(buf, size, "%s %.4g ms: ", is_time(c->tuned_s) ?
		"tuned" : "best", best * 1e3);
	if (k < size && is_time(c->static_s)) {
		double pct = 100 * (c->static_s - best) / c->static_s;
		k += (size_t)snprintf(buf + k, size - k, "%.1f%% %s than static",
			fabs(pct), pct >= 0 ? "faster" : "slower");
	} else if (k < size) {
		k += (size_t)snprintf(buf + k, size - k, "%.1f%% below the "
			"first point", 100 * (first - best) / first);
	}
	if (k < size && is_time(c->naive_s))
		k += (size_t)snprintf(buf + k, size - k, ", %.1fx faster than "
			"naive", c->naive_s / best);
	if (k < size && is_time(c->library_s))
		snprintf(buf + k, size - k, ", %.2fx the speed of %s",
			c->library_s / best, c->library ? c->library :
			"the library");
}

/* Mark the verified result of "c" under "top" at the right end of the
 * plot and add its label to "lab" ("*n" of them). */
static void verified(FILE *f, const ts_tune_curve *c, double top,
	struct label *lab, int *n)
{
	struct label *l = &lab[(*n)++];

	l->klass = "tuned";
	l->color = "#ff7f0e";
	l->y = py(c->tuned_s, top);
	snprintf(l->text, sizeof(l->text), "tuned %.4g ms (timed again)",
		c->tuned_s * 1e3);
	fprintf(f, "<path class=\"tuned\" d=\"M%d %.1f l5 -5 l5 5 l-5 5 "
		"z\" fill=\"#ff7f0e\"/>\n", LEFT + PW - 5, l->y);
}

ts_status ts_tune_curve_draw(ts_ctx *ctx, const char *path,
	const ts_tune_curve *c)
{
	double tick, top = axis_top(c, &tick), hi = curve_max(c);
	struct label lab[5];
	char gain[256];
	int nlab = 0;
	FILE *f = open_out(ctx, path);

	if (!f)
		return TS_ERROR;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		W, H, W, H);
	axes(f, c, top, tick);
	if (is_time(c->naive_s))
		reference(f, "ref-naive", "#d62728", "naive", c->naive_s, top,
			hi, lab, &nlab);
	if (is_time(c->static_s))
		reference(f, "ref-static", "#2ca02c", "static", c->static_s,
			top, hi, lab, &nlab);
	if (is_time(c->library_s))
		reference(f, "ref-library", "#9467bd", c->library ?
			c->library : "library", c->library_s, top, hi, lab,
			&nlab);
	if (isfinite(curve_last(c))) {
		step(f, c, top);
		lab[nlab].klass = "best-label";
		lab[nlab].color = "#1f77b4";
		lab[nlab].y = py(curve_last(c), top);
		snprintf(lab[nlab++].text, sizeof(lab[0].text), "%s %.4g ms",
			is_time(c->tuned_s) ? "search best" : "best",
			curve_last(c) * 1e3);
	}
	if (is_time(c->tuned_s))
		verified(f, c, top, lab, &nlab);
	labels(f, lab, nlab);
	gain_text(c, gain, sizeof(gain));
	fprintf(f, "<text class=\"gain\" x=\"%d\" y=\"42\" "
		"text-anchor=\"middle\" font-size=\"13\">", LEFT + PW / 2);
	put_escaped(f, gain);
	fprintf(f, "</text>\n</svg>\n");
	return close_out(ctx, f, path);
}

ts_status ts_tune_curve_write_svg(ts_ctx *ctx, const char *path,
	const char *title, int n, const double *best)
{
	ts_tune_curve c = ts_tune_curve_default();

	c.title = title;
	c.n = n;
	c.best = best;
	return ts_tune_curve_draw(ctx, path, &c);
}
