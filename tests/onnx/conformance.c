/* ONNX's backend node tests, run through the importer.
 *
 * For each test folder (model.onnx and test_data_set_*), import the model,
 * run the reference interpreter and the statically scheduled compiled
 * kernel on the test's inputs, and compare both with the test's outputs:
 * floats within rtol 1e-4 and atol 1e-5 (NaN matching NaN), integers and
 * booleans exactly.  Each folder is one TAP line: passed; SKIP when the
 * importer does not support the model (the reason is its message); not ok
 * when an output is wrong or a supported model fails later.  Each test runs
 * in a child process, so that a crash is a failure of that test only.
 *
 *   conformance [--table FILE.md] [--quiet] [DIR] [PATTERN...]
 *
 * DIR defaults to ONNX's test data ($ONNX_TESTDATA): the node tests, and
 * the sets pytorch-converted, pytorch-operator and simple; PATTERNs keep
 * the folders whose name contains one of them. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tessel/tessel.h>

#include "dsl/ir.h"

enum verdict { PASS, UNSUPPORTED, WRONG, ERROR };
static const char *const verdict_names[] = {
	"passed", "unsupported", "wrong", "error",
};

/* "a" read as bf16 when it is the u16 array that stands for a bf16 one
 * in ONNX's test data ("t": the dtype wanted), which stores bfloat16 as
 * its bits in UINT16 tensors (NumPy has no bfloat16); else "a". */
static const ts_array *bf16_view(const ts_array *a, ts_dtype t)
{
	ts_array *v;

	if (a->dtype != TS_U16 || t != TS_BF16)
		return a;
	v = malloc(sizeof(*v));
	*v = *a;
	v->dtype = TS_BF16;
	return v;
}

/* Whether "got" matches "want"; else a description in "why". */
static bool arrays_match(const ts_array *got, const ts_array *want,
	char *why, size_t len)
{
	want = bf16_view(want, got->dtype);
	if (got->dtype != want->dtype) {
		snprintf(why, len, "dtype %s, expected %s",
			ts_dtype_name(got->dtype), ts_dtype_name(want->dtype));
		return false;
	}
	if (got->ndim != want->ndim || got->size != want->size ||
	    memcmp(got->shape, want->shape, sizeof(int64_t) *
	    (size_t)got->ndim)) {
		snprintf(why, len, "shape of rank %d and %lld elements, "
			"expected rank %d and %lld", got->ndim,
			(long long)got->size, want->ndim,
			(long long)want->size);
		return false;
	}
	for (int64_t i = 0; i < got->size; i++) {
		double g = ts_array_get(got, i), w = ts_array_get(want, i);
		bool ok;

		if (ts_dtype_is_float(got->dtype))
			ok = (isnan(g) && isnan(w)) || g == w ||
				fabs(g - w) <= 1e-5 + 1e-4 * fabs(w);
		else	/* exactly, u64 and i64 past 2^53 too */
			ok = ts_array_get_int(got, i) ==
				ts_array_get_int(want, i);
		if (!ok) {
			snprintf(why, len, "element %lld is %.9g, expected "
				"%.9g", (long long)i, g, w);
			return false;
		}
	}
	return true;
}

/* The arrays of test_data_set folder "set" named PREFIX_k.pb, k = 0 .. */
static int read_set(ts_ctx *ctx, const char *set, const char *prefix,
	ts_array **arrays, const char **names, int max)
{
	int n = 0;

	for (; n < max; n++) {
		char *path;

		if (asprintf(&path, "%s/%s_%d.pb", set, prefix, n) < 0 ||
		    access(path, R_OK))
			break;
		if (!(arrays[n] = ts_onnx_read_tensor(ctx, path, &names[n])))
			return -1;
	}
	return n;
}

/* Compare every output of "m" in "outs" (in the dag's order) with
 * "want" (in the model's order). */
static enum verdict compare(const ts_onnx_model *m, const ts_dag *dag,
	ts_array **outs, ts_array **want, int nwant, const char *what,
	char *why, size_t len)
{
	char detail[512];

	if (nwant != ts_onnx_noutputs(m)) {
		snprintf(why, len, "%d expected outputs for %d of the model",
			nwant, ts_onnx_noutputs(m));
		return ERROR;
	}
	for (int k = 0; k < nwant; k++) {
		const char *name = ts_onnx_output_name(m, k, false);
		int at = -1;

		for (int i = 0; i < dag->noutputs; i++)
			if (!strcmp(dag->outputs[i]->name, name))
				at = i;
		if (at < 0) {
			snprintf(why, len, "output '%s' is not an output of "
				"the program", name);
			return ERROR;
		}
		if (!arrays_match(outs[at], want[k], detail, sizeof(detail))) {
			snprintf(why, len, "%s: output %d '%s': %s", what, k,
				ts_onnx_output_name(m, k, true), detail);
			return WRONG;
		}
	}
	return PASS;
}

/* The arguments of "dag" for one data set: the weights of "m" and the
 * test's inputs, matched by name (by position when unnamed). */
static ts_array **arguments(const ts_onnx_model *m, const ts_dag *dag,
	ts_array **inputs, const char **names, int ninputs, char *why,
	size_t len)
{
	ts_array **args = calloc((size_t)dag->ninputs + 1, sizeof(*args));

	for (int i = 0; i < dag->ninputs; i++) {
		const char *name = dag->inputs[i]->name;

		args[i] = (ts_array *)ts_onnx_find_weight(m, name);
		for (int k = 0; !args[i] && k < ts_onnx_ninputs(m); k++) {
			const char *onnx = ts_onnx_input_name(m, k, true);

			if (strcmp(ts_onnx_input_name(m, k, false), name))
				continue;
			for (int j = 0; !args[i] && j < ninputs; j++)
				if (names[j] && !strcmp(names[j], onnx))
					args[i] = inputs[j];
			if (!args[i] && k < ninputs &&
			    ninputs == ts_onnx_ninputs(m))
				args[i] = inputs[k];
		}
		if (!args[i]) {
			snprintf(why, len, "no array for input '%s'", name);
			return NULL;
		}
		args[i] = (ts_array *)bf16_view(args[i],
			dag->inputs[i]->dtype);
	}
	return args;
}

/* Run the compiled kernel of "dag" under the static schedule. */
static ts_status run_compiled(ts_ctx *ctx, const ts_dag *dag,
	ts_array **args, ts_array **outs)
{
	const ts_target *tg = ts_target_host(ctx);
	ts_schedule *s = tg ? ts_static_baseline(ctx, dag, tg, 1) : NULL;
	ts_func *f = s ? ts_lower(ctx, dag, s) : NULL;
	ts_module *mod = f ? ts_module_compile(ctx, f, NULL) : NULL;
	ts_array *all[512];
	ts_status st;

	if (!mod || dag->ninputs + dag->noutputs > 512)
		return TS_ERROR;
	for (int i = 0; i < dag->ninputs; i++)
		all[i] = args[i];
	for (int i = 0; i < dag->noutputs; i++) {
		outs[i] = ts_array_for_tensor(ctx, dag->outputs[i]);
		all[dag->ninputs + i] = outs[i];
	}
	st = ts_module_run(mod, all);
	ts_module_free(mod);
	return st;
}

/* Import the model "path" of test folder "dir".  Where the importer asks
 * for an input's values at import (a shape fed as an input), the values
 * of the first data set are given, input by input, as a user would. */
static ts_onnx_model *import(ts_ctx *ctx, const char *dir, const char *path)
{
	ts_onnx_options opt = { 0 };
	const char *names[64], *known[64], *shapes[64];
	const ts_array *values[64];
	ts_array *in[64];
	char *set;
	int nin;

	if (asprintf(&set, "%s/test_data_set_0", dir) < 0 ||
	    (nin = read_set(ctx, set, "input", in, names, 64)) < 0)
		nin = 0;
	free(set);
	/* The shapes of the test's inputs, as a user gives a model's with
	 * --shape (a few of ONNX's tests declare another). */
	for (int i = 0; i < nin && i < 64; i++) {
		char *spec;
		size_t len = 0;

		if (!names[i] || !(spec = malloc(strlen(names[i]) + 2 +
		    24 * (size_t)TS_MAX_DIMS)))
			continue;
		len = (size_t)sprintf(spec, "%s=", names[i]);
		for (int d = 0; d < in[i]->ndim; d++)
			len += (size_t)sprintf(spec + len, d ? "x%lld" : "%lld",
				(long long)in[i]->shape[d]);
		shapes[opt.nshapes++] = spec;
	}
	opt.shapes = shapes;
	opt.known_names = known;
	opt.known_values = values;
	for (;;) {
		ts_onnx_model *m = ts_onnx_import(ctx, path, &opt);
		const char *e = m ? NULL : ts_ctx_error(ctx);
		int before = opt.nknown;

		if (m || !strstr(e, "known at import"))
			return m;
		for (int i = 0; i < nin; i++) {
			char *q;

			if (!names[i] || asprintf(&q, "'%s')", names[i]) < 0)
				continue;
			if (strstr(e, q) && opt.nknown < 64) {
				known[opt.nknown] = names[i];
				values[opt.nknown++] = in[i];
			}
			free(q);
		}
		if (opt.nknown == before)
			return NULL;
	}
}

/* One test folder; its verdict, and the reason in "why". */
static enum verdict run_test(const char *dir, char *why, size_t len)
{
	ts_ctx *ctx = ts_ctx_alloc();
	char *path;
	ts_onnx_model *m;
	ts_dag *dag;
	enum verdict v = PASS;

	if (asprintf(&path, "%s/model.onnx", dir) < 0)
		return ERROR;
	ts_ctx_set_seed(ctx, 1);
	if (!(m = import(ctx, dir, path))) {
		const char *e = ts_ctx_error(ctx), *p = strstr(e, "model.onnx: ");

		snprintf(why, len, "%s", p ? p + 12 : e);
		return UNSUPPORTED;
	}
	dag = ts_onnx_dag(m);
	for (int set = 0; v == PASS; set++) {
		ts_array *in[64], *want[64], *outs[64], **args;
		const char *names[64], *onames[64];
		int nin, nwant;

		if (asprintf(&path, "%s/test_data_set_%d", dir, set) < 0 ||
		    access(path, R_OK))
			break;
		if ((nin = read_set(ctx, path, "input", in, names, 64)) < 0 ||
		    (nwant = read_set(ctx, path, "output", want, onames,
		    64)) < 0) {
			snprintf(why, len, "%s", ts_ctx_error(ctx));
			return UNSUPPORTED;
		}
		if (!(args = arguments(m, dag, in, names, nin, why, len)))
			return ERROR;
		if (dag->noutputs > 64 || ts_eval(ctx, dag, args, outs) < 0) {
			snprintf(why, len, "interpreter: %s", ts_ctx_error(ctx));
			return ERROR;
		}
		if ((v = compare(m, dag, outs, want, nwant, "interpreter", why,
		    len)) != PASS)
			break;
		if (run_compiled(ctx, dag, args, outs) < 0) {
			snprintf(why, len, "compiled: %s", ts_ctx_error(ctx));
			return ERROR;
		}
		v = compare(m, dag, outs, want, nwant, "compiled", why, len);
		free(args);
	}
	ts_ctx_free(ctx);
	return v;
}

/* Run "dir" in a child: crashes and hangs are errors of this test. */
static enum verdict run_isolated(const char *dir, char *why, size_t len)
{
	int fd[2], status;
	pid_t pid;
	ssize_t got = 0, r;

	if (pipe(fd))
		return snprintf(why, len, "pipe: %s", strerror(errno)), ERROR;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		char buf[2048];
		enum verdict v;

		close(fd[0]);
		alarm(120);
		buf[1] = 0;
		v = run_test(dir, buf + 1, sizeof(buf) - 1);
		buf[0] = (char)('0' + v);
		if (write(fd[1], buf, strlen(buf) + 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	while (got < (ssize_t)len - 1 &&
	       (r = read(fd[0], why + got, len - 1 - (size_t)got)) > 0)
		got += r;
	why[got] = 0;
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (got > 1 && why[0] >= '0' && why[0] <= '3') {
		enum verdict v = (enum verdict)(why[0] - '0');

		memmove(why, why + 1, strlen(why));
		return v;
	}
	if (WIFSIGNALED(status))
		snprintf(why, len, "crashed with signal %d (%s)",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, len, "the test process ended without a verdict");
	return ERROR;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The op of a single-node model, from the folder name: what the table
 * groups by.  ONNX's test folders are test_<op in snake case>[_detail]; the
 * table keeps the whole name and the markdown groups nothing. */
static void write_table(FILE *f, char **names, enum verdict *v, char **why,
	int n)
{
	int count[4] = { 0 };

	for (int i = 0; i < n; i++)
		count[v[i]]++;
	fprintf(f, "| test | result | why |\n|---|---|---|\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "| %s | %s | ", names[i], verdict_names[v[i]]);
		for (const char *p = why[i]; *p; p++)
			fputs(*p == '|' ? "\\|" : *p == '\n' ? " " :
				(char[]){ *p, 0 }, f);
		fprintf(f, " |\n");
	}
	fprintf(f, "\n%d tests: %d passed, %d unsupported, %d wrong, %d "
		"errors.\n", n, count[PASS], count[UNSUPPORTED], count[WRONG],
		count[ERROR]);
}

/* Add the test folders of "dir" that match a pattern to "*names", named
 * "prefix/test_x" when "prefix" is not NULL; -1 when "dir" cannot be
 * read. */
static int collect(const char *dir, const char *prefix, char **pats,
	int npats, char ***names, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		bool keep = !npats;
		char *name;

		if (strncmp(e->d_name, "test_", 5))
			continue;
		for (int i = 0; i < npats; i++)
			keep |= strstr(e->d_name, pats[i]) != NULL;
		if (!keep)
			continue;
		if (prefix ? asprintf(&name, "%s/%s", prefix, e->d_name) < 0 :
		    !(name = strdup(e->d_name)))
			return -1;
		*names = realloc(*names, sizeof(**names) * (size_t)(*n + 1));
		(*names)[(*n)++] = name;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	const char *table = NULL, *dir = NULL, *env = getenv("ONNX_TESTDATA");
	char **pats = NULL, **names = NULL, **whys, *data = NULL;
	int npats = 0, n = 0, count[4] = { 0 };
	bool quiet = false;
	enum verdict *verdicts;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--table") && i + 1 < argc)
			table = argv[++i];
		else if (!strcmp(argv[i], "--quiet"))
			quiet = true;
		else if (!dir && strchr(argv[i], '/'))
			dir = argv[i];
		else
			pats = realloc(pats, sizeof(*pats) * (size_t)++npats),
			pats[npats - 1] = argv[i];
	}
	if (!ts_onnx_available()) {
		printf("1..0 # SKIP this build cannot read ONNX files\n");
		return 0;
	}
	if (!dir) {
		/* ONNX's node tests, and the models of its other sets that
		 * come with data (converted from PyTorch, and small graphs). */
		static const char *const sets[] = {
			"node", "pytorch-converted", "pytorch-operator", "simple",
		};
		const char *root = env && *env ? env : ONNX_TESTDATA;

		for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
			if (asprintf(&data, "%s/%s", root, sets[k]) < 0)
				return 2;
			if (k && access(data, R_OK))
				continue;
			if (collect(data, k ? sets[k] : NULL, pats, npats,
			    &names, &n) < 0) {
				printf("1..0 # SKIP no ONNX test data in %s "
					"(Debian package libonnx-testdata)\n",
					data);
				return 0;
			}
		}
		dir = root;
	} else if (collect(dir, NULL, pats, npats, &names, &n) < 0) {
		printf("1..0 # SKIP no ONNX test data in %s\n", dir);
		return 0;
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	verdicts = calloc((size_t)n + 1, sizeof(*verdicts));
	whys = calloc((size_t)n + 1, sizeof(*whys));
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		char *path, why[2048];

		if (asprintf(&path, "%s/%s%s", dir, strchr(names[i], '/') ? "" :
		    data && !strcmp(dir, env && *env ? env : ONNX_TESTDATA) ?
		    "node/" : "", names[i]) < 0)
			return 2;
		verdicts[i] = run_isolated(path, why, sizeof(why));
		whys[i] = strdup(why);
		count[verdicts[i]]++;
		if (verdicts[i] == PASS)
			printf("ok %d - %s\n", i + 1, names[i]);
		else if (verdicts[i] == UNSUPPORTED)
			printf("ok %d - %s # SKIP %s\n", i + 1, names[i],
				quiet ? "unsupported" : why);
		else
			printf("not ok %d - %s # %s: %s\n", i + 1, names[i],
				verdict_names[verdicts[i]], why);
	}
	printf("# %d tests: %d passed, %d unsupported, %d wrong, %d errors\n",
		n, count[PASS], count[UNSUPPORTED], count[WRONG], count[ERROR]);
	if (table) {
		FILE *f = fopen(table, "w");

		if (!f) {
			fprintf(stderr, "%s: %s\n", table, strerror(errno));
			return 2;
		}
		write_table(f, names, verdicts, whys, n);
		fclose(f);
	}
	return count[WRONG] || count[ERROR] ? 1 : 0;
}
