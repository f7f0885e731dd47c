/* Tuning curves: the best time against the trials, as CSV and as a
 * hand-written SVG picture (axes, ticks, labels, one polyline). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <tessel/tune.h>

#include "support/support.h"

#define W 640
#define H 400
#define LEFT 80
#define RIGHT 20
#define TOP 40
#define BOTTOM 50

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

/* The smallest and largest finite values of "best" ("n") in "lo", "hi";
 * false when there is none. */
static bool range(int n, const double *best, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (int i = 0; i < n; i++)
		if (isfinite(best[i])) {
			*lo = fmin(*lo, best[i]);
			*hi = fmax(*hi, best[i]);
		}
	if (!isfinite(*lo))
		return false;
	if (*hi - *lo < 1e-12 * *hi + 1e-15) {
		*lo *= 0.9;
		*hi *= 1.1;
	}
	return true;
}

/* Write the axes, ticks and labels of a plot of "n" trials and
 * milliseconds in ["lo", "hi"] to "f". */
static void axes(FILE *f, const char *title, int n, double lo, double hi)
{
	int pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;

	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" "
		"font-size=\"16\">", W / 2);
	for (const char *p = title; *p; p++) {
		if (*p == '<' || *p == '>' || *p == '&')
			fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : "&amp;", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "</text>\n<path d=\"M%d %d V%d H%d\" stroke=\"black\" "
		"fill=\"none\"/>\n", LEFT, TOP, TOP + ph, LEFT + pw);
	for (int k = 0; k <= 4; k++) {
		double v = hi - (hi - lo) * k / 4;
		int y = TOP + ph * k / 4;
		int x = LEFT + pw * k / 4;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
			"font-size=\"11\">%.4g</text>\n", LEFT - 6, y + 4,
			v * 1e3);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
			"font-size=\"11\">%d</text>\n", x, TOP + ph + 16,
			(int)lround(1 + (n > 1 ? (n - 1) * k / 4.0 : 0)));
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
		"font-size=\"13\">trials</text>\n", LEFT + pw / 2, H - 10);
	fprintf(f, "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" "
		"font-size=\"13\" transform=\"rotate(-90 16 %d)\">best time "
		"(ms)</text>\n", TOP + ph / 2, TOP + ph / 2);
}

/* Write the polyline of "best" ("n") in ["lo", "hi"] to "f". */
static void polyline(FILE *f, int n, const double *best, double lo,
	double hi)
{
	int pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;

	fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" "
		"stroke-width=\"2\" points=\"");
	for (int i = 0; i < n; i++) {
		double x, y;
		if (!isfinite(best[i]))
			continue;
		x = LEFT + (n > 1 ? pw * (double)i / (n - 1) : 0);
		y = TOP + ph * (hi - best[i]) / (hi - lo);
		fprintf(f, "%.1f,%.1f ", x, y);
	}
	fprintf(f, "\"/>\n");
}

ts_status ts_tune_curve_write_svg(ts_ctx *ctx, const char *path,
	const char *title, int n, const double *best)
{
	double lo = 0, hi = 1;
	bool any = range(n, best, &lo, &hi);
	FILE *f = open_out(ctx, path);

	if (!f)
		return TS_ERROR;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		W, H, W, H);
	axes(f, title ? title : "tuning curve", n, lo, hi);
	if (any)
		polyline(f, n, best, lo, hi);
	fprintf(f, "</svg>\n");
	return close_out(ctx, f, path);
}
