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

/* Return the inputs of "dag" under "o", read or generated (and then
 * written to the output folder), or NULL after printing why. */
static ts_array **get_inputs(ts_ctx *ctx, const ts_dag *dag,
	const struct eval_opts *o)
{
	ts_array **in;

	if (o->inputs)
		return ts_tool_read_inputs(ctx, dag, o->inputs, "eval");
	in = ts_tool_random_inputs(ctx, dag, o->seed);
	if (!in) {
		ts_tool_report(ctx);
		return NULL;
	}
	for (int i = 0; i < ts_dag_ninputs(dag); i++)
		if (ts_tool_write_array(ctx, o->out,
			    ts_tensor_name(ts_dag_input(dag, i)), in[i],
			    "eval") < 0)
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
	printf("%s ", ts_tensor_name(t));
	ts_tool_print_type(stdout, a);
	printf(" sum=%.9g max_abs=%.9g\n", sum, max_abs);
}

/* Evaluate the program of "o" in "ctx"; return the exit code. */
static int eval_run(ts_ctx *ctx, const struct eval_opts *o)
{
	ts_array **in, **out;
	ts_dag *dag;
	int code = TS_EXIT_OK;

	dag = ts_tool_load(ctx, o->file);
	if (!dag || ts_dag_check_memory(ctx, dag) < 0) {
		ts_tool_report(ctx);
		return TS_EXIT_USAGE;
	}
	ts_tool_warnings(ctx);
	if (ts_tool_make_dir(o->out, "eval", "--out") < 0)
		return TS_EXIT_USAGE;
	in = get_inputs(ctx, dag, o);
	if (!in)
		return o->inputs ? TS_EXIT_USAGE : TS_EXIT_FAIL;
	out = GC_MALLOC(sizeof(*out) * (ts_dag_noutputs(dag) + 1));
	if (!out || ts_eval(ctx, dag, in, out) < 0) {
		ts_tool_report(ctx);
		code = TS_EXIT_FAIL;
	}
	for (int i = 0; code == TS_EXIT_OK && i < ts_dag_noutputs(dag); i++) {
		if (ts_tool_write_array(ctx, o->out,
			    ts_tensor_name(ts_dag_output(dag, i)), out[i],
			    "eval") < 0)
			code = TS_EXIT_FAIL;
		else
			print_summary(ts_dag_output(dag, i), out[i]);
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
