/* tessel eval: run a .tsl program through the reference interpreter on
 * inputs read from .npy files or generated from a seed, write its outputs
 * as .npy files and print one summary line per output. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gc.h>

#include "tools/commands.h"

/* The command line of one run. */
struct eval_opts {
	const char *file;	/* the .tsl program */
	const char *inputs;	/* folder of <input>.npy files, or NULL */
	const char *out;	/* folder receiving the .npy files */
	uint64_t seed;		/* for generated inputs */
};

/* Print the usage of the verb to "out". */
static void eval_usage(FILE *out)
{
	fprintf(out, "usage: tessel eval FILE.tsl [--inputs DIR] [--seed N] "
		"[--out DIR]\n\n"
		"Run FILE.tsl through the reference interpreter and write each "
		"output as\nOUT/<name>.npy (OUT defaults to the current "
		"folder).\n\n"
		"  --inputs DIR  read every input from DIR/<name>.npy (dtype "
		"and shape must\n"
		"                match the declaration)\n"
		"  --seed N      without --inputs, generate inputs from seed N "
		"(default 1)\n"
		"                and write them to OUT/<name>.npy too\n"
		"  --out DIR     where to write .npy files (created if missing)\n"
		"  --help        this text\n\n"
		"One line per output: name, dtype and shape, sum and largest "
		"absolute value.\n"
		"exit codes: 0 success, 1 the interpreter failed, 2 bad usage "
		"or input\n");
}

/* Parse the unsigned integer "s" into "*v"; return whether it is one. */
static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* Return the value of option "name" at "argv"["*i"], as "--name=V" or
 * "--name V" (advancing "*i"), or NULL when "argv"["*i"] is not "name". */
static const char *option_value(int argc, char **argv, int *i,
	const char *name, bool *missing)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

/* Fill "o" from "argc" and "argv"; return -1 to go on, or the exit
 * code. */
static int parse_args(int argc, char **argv, struct eval_opts *o)
{
	const char *v;
	bool missing = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			eval_usage(stdout);
			return TS_EXIT_OK;
		}
		if ((v = option_value(argc, argv, &i, "--inputs", &missing))) {
			o->inputs = v;
		} else if ((v = option_value(argc, argv, &i, "--out",
		    &missing))) {
			o->out = v;
		} else if ((v = option_value(argc, argv, &i, "--seed",
		    &missing))) {
			if (!parse_u64(v, &o->seed)) {
				fprintf(stderr, "tessel eval: --seed takes a "
					"non-negative integer, not '%s'\n", v);
				return TS_EXIT_USAGE;
			}
		} else if (missing) {
			fprintf(stderr, "tessel eval: %s needs a value\n",
				argv[i]);
			return TS_EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "tessel eval: unknown option '%s' "
				"(see tessel eval --help)\n", argv[i]);
			return TS_EXIT_USAGE;
		} else if (o->file) {
			fprintf(stderr, "tessel eval: one program at a time "
				"('%s' and '%s')\n", o->file, argv[i]);
			return TS_EXIT_USAGE;
		} else {
			o->file = argv[i];
		}
	}
	if (!o->file) {
		eval_usage(stderr);
		return TS_EXIT_USAGE;
	}
	return -1;
}

/* Return "dir"/"name".npy, malloc'ed. */
static char *npy_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 6;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s.npy", dir, name);
	return p;
}

/* Print "dtype[shape]" of "ndim" extents "shape" to "out". */
static void print_type(FILE *out, ts_dtype t, int ndim, const int64_t *shape)
{
	fprintf(out, "%s[", ts_dtype_name(t));
	for (int d = 0; d < ndim; d++)
		fprintf(out, "%s%" PRId64, d ? ", " : "", shape[d]);
	fputc(']', out);
}

/* Whether the array "a" has the dtype and shape of tensor "t". */
static bool array_fits(const ts_array *a, const ts_tensor *t)
{
	if (a->dtype != t->dtype || a->ndim != t->ndim)
		return false;
	for (int d = 0; d < t->ndim; d++)
		if (a->shape[d] != t->shape[d])
			return false;
	return true;
}

/* Read input "t" from "dir"/<name>.npy in "ctx"; on failure print why and
 * return NULL. */
static ts_array *read_input(ts_ctx *ctx, const char *dir, const ts_tensor *t)
{
	char *path = npy_path(dir, t->name);
	ts_array *a = path ? ts_npy_read(ctx, path) : NULL;

	if (!a) {
		fprintf(stderr, "tessel eval: input '%s': %s\n", t->name,
			path && ts_ctx_error(ctx) ? ts_ctx_error(ctx)
			: "out of memory");
	} else if (!array_fits(a, t)) {
		fprintf(stderr, "tessel eval: input '%s': %s holds ", t->name,
			path);
		print_type(stderr, a->dtype, a->ndim, a->shape);
		fprintf(stderr, " but the program declares ");
		print_type(stderr, t->dtype, t->ndim, t->shape);
		fputc('\n', stderr);
		a = NULL;
	}
	free(path);
	return a;
}

/* Write "a" as "dir"/"name".npy in "ctx"; on failure print why. */
static ts_status write_array(ts_ctx *ctx, const char *dir, const char *name,
	const ts_array *a)
{
	char *path = npy_path(dir, name);
	ts_status st = path ? ts_npy_write(ctx, path, a) : TS_ERROR;

	if (st != TS_OK)
		fprintf(stderr, "tessel eval: %s\n", path && ts_ctx_error(ctx)
			? ts_ctx_error(ctx) : "out of memory");
	free(path);
	return st;
}

/* Create the folder "dir" unless it exists; on failure print why. */
static ts_status make_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return TS_OK;
		fprintf(stderr, "tessel eval: --out %s is not a folder\n", dir);
		return TS_ERROR;
	}
	if (mkdir(dir, 0777) == 0)
		return TS_OK;
	fprintf(stderr, "tessel eval: cannot create %s: %s\n", dir,
		strerror(errno));
	return TS_ERROR;
}

/* Return the inputs of "dag" under "o", read or generated (and then
 * written to the output folder), or NULL after printing why. */
static ts_array **get_inputs(ts_ctx *ctx, const ts_dag *dag,
	const struct eval_opts *o)
{
	ts_array **in;

	if (o->inputs) {
		/* Scanned by the collector: it holds GC arrays. */
		in = GC_MALLOC(sizeof(*in) * (dag->ninputs + 1));
		if (!in)
			return NULL;
		for (int i = 0; i < dag->ninputs; i++)
			if (!(in[i] = read_input(ctx, o->inputs,
			    dag->inputs[i])))
				return NULL;
		return in;
	}
	in = ts_dag_random_inputs(ctx, dag, o->seed);
	if (!in) {
		ts_tool_report(ctx);
		return NULL;
	}
	for (int i = 0; i < dag->ninputs; i++)
		if (write_array(ctx, o->out, dag->inputs[i]->name, in[i]) < 0)
			return NULL;
	return in;
}

/* Print the summary line of output "t" with values "a". */
static void print_summary(const ts_tensor *t, const ts_array *a)
{
	double sum = 0, max_abs = 0;

	for (int64_t i = 0; i < a->size; i++) {
		double v = ts_array_get(a, i);
		sum += v;
		if (fabs(v) > max_abs || isnan(v))
			max_abs = fabs(v);
	}
	printf("%s ", t->name);
	print_type(stdout, a->dtype, a->ndim, a->shape);
	printf(" sum=%.9g max_abs=%.9g\n", sum, max_abs);
}

/* Evaluate the program of "o" in "ctx"; return the exit code. */
static int eval_run(ts_ctx *ctx, const struct eval_opts *o)
{
	ts_array **in, **out;
	ts_dag *dag;
	int code = TS_EXIT_OK;

	dag = ts_parse_file(ctx, o->file);
	if (!dag || ts_dag_check_memory(ctx, dag) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	ts_tool_warnings(ctx);
	if (make_dir(o->out) < 0)
		return TS_EXIT_USAGE;
	in = get_inputs(ctx, dag, o);
	if (!in)
		return o->inputs ? TS_EXIT_USAGE : TS_EXIT_FAIL;
	out = GC_MALLOC(sizeof(*out) * (dag->noutputs + 1));
	if (!out || ts_eval(ctx, dag, in, out) < 0) {
		ts_tool_report(ctx);
		code = TS_EXIT_FAIL;
	}
	for (int i = 0; code == TS_EXIT_OK && i < dag->noutputs; i++) {
		if (write_array(ctx, o->out, dag->outputs[i]->name, out[i]) < 0)
			code = TS_EXIT_FAIL;
		else
			print_summary(dag->outputs[i], out[i]);
	}
	return code;
}

/* Run "tessel eval" with the "argc" arguments "argv" (argv[0] is "eval"). */
int ts_cmd_eval(int argc, char **argv)
{
	struct eval_opts o = { .out = ".", .seed = 1 };
	ts_ctx *ctx;
	int code = parse_args(argc, argv, &o);

	if (code >= 0)
		return code;
	ctx = ts_ctx_alloc();
	if (!ctx) {
		fprintf(stderr, "tessel eval: out of memory\n");
		return TS_EXIT_FAIL;
	}
	ts_ctx_set_seed(ctx, o.seed);
	code = eval_run(ctx, &o);
	ts_ctx_free(ctx);
	return code;
}
