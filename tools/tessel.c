/* The tessel command line: a table of verbs, one file each. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "tools/commands.h"

/* The verbs, in the order of the pipeline. */
static const struct ts_command commands[] = {
	{ "import", "import an ONNX model as a .tsl program and .npy weights", ts_cmd_import },
	{ "eval", "run a .tsl file in the reference interpreter", ts_cmd_eval },
	{ "analyze", "print the class, accesses, reuse and counts of each stage", ts_cmd_analyze },
	{ "schedule", "choose a schedule statically from the hardware description", ts_cmd_schedule },
	{ "hw", "print the hardware description used for static scheduling", ts_cmd_hw },
	{ "run", "compile a .tsl file for this CPU, check and time it", ts_cmd_run },
	{ "build", "compile a .tsl file ahead of time (object, .so, header)", ts_cmd_build },
	{ "tune", "tune a .tsl file by measurement (cost model, evolution, top-k)", ts_cmd_tune },
	{ "tasks", "partition a network into tasks; --run compiles and runs it", ts_cmd_tasks },
	{ "measure-worker", NULL, ts_cmd_measure_worker },
	{ NULL, NULL, NULL },
};

void ts_tool_warnings(ts_ctx *ctx)
{
	const char *w = ts_ctx_warnings(ctx);

	if (w)
		fprintf(stderr, "%s", w);
	ts_ctx_clear_warnings(ctx);
}

void ts_tool_report(ts_ctx *ctx)
{
	const char *e = ts_ctx_error(ctx);

	ts_tool_warnings(ctx);
	fprintf(stderr, "tessel: %s\n", e ? e : "failed");
}

static void usage(FILE *out)
{
	fprintf(out, "usage: tessel <command> [options] [FILE.tsl|MODEL.onnx]\n\n"
		"Tessel schedules tensor programs declared with compute only.\n\n"
		"commands:\n");
	for (const struct ts_command *c = commands; c->name; c++)
		if (c->summary)	/* hidden verbs have none */
			fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n  tessel <command> --help   options of a command\n"
		"  tessel --version          the version\n"
		"\nEvery command also takes an ONNX model (imported on the way "
		"in);\n--shape NAME=DIMS fixes its symbolic dimensions.\n"
		"\nexit codes: 0 success, 1 the job failed, 2 bad usage or input\n");
}

/* Take every "--shape NAME=DIMS" out of "argv" (every verb reads ONNX
 * models, so every verb has the option); the new argc, or -1. */
static int take_shapes(int argc, char **argv)
{
	int out = 2;

	for (int i = 2; i < argc; i++) {
		const char *v;

		if (strcmp(argv[i], "--shape") && strncmp(argv[i], "--shape=", 8)) {
			argv[out++] = argv[i];
			continue;
		}
		v = argv[i][7] == '=' ? argv[i] + 8 : i + 1 < argc ?
			argv[++i] : "";
		if (!ts_tool_add_shape(v)) {
			fprintf(stderr, "tessel %s: --shape needs NAME=DIMS "
				"(x=1x3x224x224 or batch=1), not '%s'\n",
				argv[1], v);
			return -1;
		}
	}
	argv[out] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return TS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return TS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tessel %s\n", ts_version());
		return TS_EXIT_OK;
	}
	if ((argc = take_shapes(argc, argv)) < 0)
		return TS_EXIT_USAGE;
	for (const struct ts_command *c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "tessel: unknown command '%s' (see tessel --help)\n",
		argv[1]);
	return TS_EXIT_USAGE;
}
