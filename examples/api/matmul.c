/* The C API from declaration to machine code, on a matmul followed by a
 * ReLU: declare what is computed with the builder functions, schedule it
 * statically for this machine and for a CPU named on the command line,
 * compile it, and run it on arrays this program allocates and fills
 * itself, checked against a loop written by hand.
 *
 *   build:  cc matmul.c $(pkg-config --cflags --libs tessel) -o matmul
 *   usage:  ./matmul [N [TARGET]]    (N = 256; TARGET = zen3: a name of
 *                                     share/tessel/targets or FILE.json)
 *
 * Exit status: 0 when every result matches, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessel/tessel.h>

/* Declare D = max(A B, 0) for "n" x "n" matrices in "ctx"; NULL with a
 * message in "ctx" on failure.  Every constructor passes on a NULL
 * argument, so the chain is checked once, at its end. */
static ts_dag *declare(ts_ctx *ctx, int64_t n)
{
	const int64_t shape[2] = { n, n };
	ts_tensor *a = ts_placeholder(ctx, "A", TS_F32, 2, shape);
	ts_tensor *b = ts_placeholder(ctx, "B", TS_F32, 2, shape);
	ts_axis *i = ts_axis_new(ctx, "i", n), *j = ts_axis_new(ctx, "j", n);
	ts_axis *k = ts_reduce_axis(ctx, "k", n);
	ts_expr *prod, *body;
	ts_tensor *d;

	prod = ts_mul(ctx, ts_at(ctx, a, 2, ts_var(ctx, i), ts_var(ctx, k)),
		ts_at(ctx, b, 2, ts_var(ctx, k), ts_var(ctx, j)));
	body = ts_max(ctx, ts_sum(ctx, 1, &k, prod), ts_float(ctx, 0.0));
	d = ts_compute(ctx, "D", 2, (ts_axis *[]){ i, j }, body);
	if (!d)
		return NULL;
	return ts_dag_new(ctx, 2, (ts_tensor *[]){ a, b }, 1, &d);
}

/* The program's own matrices: plain floats, aligned to 64 bytes as the
 * compiled kernels require. */
struct mats {
	int64_t n;
	float *a, *b, *d;
};

/* Allocate "n" floats aligned to 64 bytes, or NULL. */
static float *alloc_floats(int64_t n)
{
	size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;

	return aligned_alloc(64, bytes);
}

/* Allocate and fill the matrices of "m" for "n"; false when out of
 * memory. */
static bool mats_init(struct mats *m, int64_t n)
{
	m->n = n;
	m->a = alloc_floats(n * n);
	m->b = alloc_floats(n * n);
	m->d = alloc_floats(n * n);
	if (!m->a || !m->b || !m->d)
		return false;
	for (int64_t e = 0; e < n * n; e++) {
		m->a[e] = (float)((e * 7 % 13) - 6) / 8;
		m->b[e] = (float)((e * 5 % 11) - 5) / 8;
	}
	return true;
}

static void mats_free(struct mats *m)
{
	free(m->a);
	free(m->b);
	free(m->d);
}

/* A ts_array describing the "n" x "n" floats at "data" without copying
 * them: the struct is public, and the library never frees its data. */
static ts_array view(float *data, int64_t n)
{
	ts_array a = { .dtype = TS_F32, .ndim = 2, .shape = { n, n },
		.size = n * n, .data = data };

	return a;
}

/* The larger of "a" and "b" (no libm: the program links only what
 * pkg-config names). */
static double max_d(double a, double b)
{
	return a > b ? a : b;
}

/* Compare the kernel's "m->d" with max(A B, 0) computed by hand; print
 * and return whether every element is within a float tolerance. */
static bool check(const struct mats *m, const char *what)
{
	int64_t n = m->n;
	double worst = 0;

	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t k = 0; k < n; k++)
				s += (double)m->a[i * n + k] * m->b[k * n + j];
			s = s > 0 ? s : 0;
			worst = max_d(worst, (m->d[i * n + j] - s) /
				(1 + s));
			worst = max_d(worst, (s - m->d[i * n + j]) /
				(1 + s));
		}
	printf("%s: largest relative error %.2g\n", what, worst);
	return worst < 1e-4;
}

/* Compile "sch" of "dag" with "opt", run it once on "m" and check it;
 * time it when "timing" is not NULL.  False with a message in "ctx" when
 * something fails. */
static bool compile_run(ts_ctx *ctx, const ts_dag *dag,
	const ts_schedule *sch, const ts_compile_options *opt,
	struct mats *m, const char *what, ts_timing *timing)
{
	ts_array a = view(m->a, m->n), b = view(m->b, m->n);
	ts_array d = view(m->d, m->n);
	ts_array *args[3] = { &a, &b, &d };	/* inputs, then outputs */
	ts_func *f = ts_lower(ctx, dag, sch);	/* sch NULL: naive */
	ts_module *mod = f ? ts_module_compile(ctx, f, opt) : NULL;
	bool ok;

	if (!mod)
		return false;
	memset(m->d, 0xff, (size_t)(m->n * m->n) * sizeof(float));
	ok = ts_module_run(mod, args) == TS_OK && check(m, what);
	if (ok && timing)
		ok = ts_module_time(mod, args, 0.2, timing) == TS_OK;
	ts_module_free(mod);
	return ok;
}

/* Schedule "dag" for this machine, run it on "m" against the naive
 * schedule; false on failure. */
static bool on_host(ts_ctx *ctx, const ts_dag *dag, struct mats *m)
{
	const ts_target *host = ts_target_host(ctx);
	ts_schedule *sch;
	ts_timing st, naive;

	/* The schedule "tessel run --schedule static" compiles: all the
	 * cores (0), the context's seed. */
	sch = host ? ts_static_baseline(ctx, dag, host, 0) : NULL;
	if (!sch)
		return false;
	printf("static schedule for this machine (%s): %s\n", host->name,
		ts_schedule_hash(sch));
	ts_schedule_print(stdout, sch);
	if (!compile_run(ctx, dag, sch, NULL, m, "static, this machine",
		    &st) ||
	    !compile_run(ctx, dag, NULL, NULL, m, "naive", &naive))
		return false;
	printf("static %.4g ms, naive %.4g ms: %.1fx\n", st.median_s * 1e3,
		naive.median_s * 1e3, naive.median_s / st.median_s);
	return true;
}

/* Schedule "dag" for the CPU "name" and run its code on "m" when this
 * machine can; false on failure. */
static bool on_target(ts_ctx *ctx, const ts_dag *dag, const char *name,
	struct mats *m)
{
	const ts_target *t = ts_target_lookup(ctx, name);
	const ts_target *host = ts_target_host(ctx);
	const char *why = NULL;
	ts_compile_options opt;
	ts_schedule *sch;

	if (!t || !host)
		return false;
	if (t->kind != TS_TARGET_CPU) {
		ts_ctx_set_error(ctx, "target '%s' is not a CPU", name);
		return false;
	}
	sch = ts_static_baseline(ctx, dag, t, 0);
	if (!sch)
		return false;
	printf("static schedule for %s: %s\n", t->name, ts_schedule_hash(sch));
	if (!ts_target_runs_on(t, host, &why)) {
		printf("its code does not run here (%s)\n", why);
		return true;
	}
	/* The target's LLVM cpu and features: its own instructions. */
	opt = ts_compile_options_for(t);
	return compile_run(ctx, dag, sch, &opt, m, name, NULL);
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 256;
	const char *target = argc > 2 ? argv[2] : "zen3";
	struct mats m = { 0 };
	ts_ctx *ctx;
	ts_dag *dag;
	bool ok;

	if (n < 1 || n > 4096 || argc > 3) {
		fprintf(stderr, "usage: %s [N [TARGET]]   (1 <= N <= 4096)\n",
			argv[0]);
		return 2;
	}
	ctx = ts_ctx_alloc();
	if (!ctx || !mats_init(&m, n)) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	printf("Tessel %s\n", ts_version());
	ts_ctx_set_seed(ctx, 1);
	dag = declare(ctx, n);
	if (dag)
		ts_dag_print(stdout, dag);
	ok = dag && on_host(ctx, dag, &m) && on_target(ctx, dag, target, &m);
	if (!ok)
		fprintf(stderr, "%s: %s\n", argv[0], ts_ctx_error(ctx) ?
			ts_ctx_error(ctx) : "wrong result");
	mats_free(&m);
	ts_ctx_free(ctx);
	return ok ? 0 : 1;
}
