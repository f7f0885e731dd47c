/* tessel hw: print the hardware description of this machine, of a
 * shipped target or of a JSON file, readably or as JSON; or measure this
 * machine (--calibrate) and write what --target reads back. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/commands.h"

/* The command line of one run. */
struct hw_opts {
	bool json;		/* print JSON rather than text */
	const char *target;	/* a shipped name or a file, or NULL */
	int gpu;		/* a CUDA device to describe, or -1 */
	bool calibrate;		/* measure this machine */
	const char *out;	/* write the JSON there, or NULL */
};

/* Print the usage of the verb to "out". */
static void hw_usage(FILE *out)
{
	fprintf(out, "usage: tessel hw [--json] [--target NAME|FILE.json] "
		"[--gpu N]\n"
		"       tessel hw --calibrate [-o FILE.json]\n\n"
		"Print the hardware description that static scheduling uses: "
		"the CPU this\nruns on (cpuid, sysfs, LLVM), a shipped target "
		"(zen3, zen4, zen5,\nskylake-sp, sapphire-rapids, neoverse-n1, "
		"apple-m1, v100, a100, h100, h200), "
		"a JSON file, or a CUDA device.\n"
		"With --calibrate, measure this CPU once (clock, FMA peak, "
		"cache and memory\nbandwidths and latencies; a few seconds) "
		"and write a description that\n--target FILE.json reads: "
		"static scheduling then needs no measurement.\n\n"
		"  --json           print JSON that --target reads back\n"
		"  --target NAME    a shipped description, or a .json file\n"
		"  --gpu N          CUDA device N (needs a GPU driver)\n"
		"  --calibrate      measure this CPU (progress on stderr)\n"
		"  -o FILE.json     write the JSON description there\n"
		"  --help           this text\n\n"
		"exit codes: 0 success, 1 detection failed, 2 bad usage or "
		"input\n");
}

/* Fill "o" from "argc" and "argv"; return -1 to go on, or the exit
 * code. */
static int hw_parse(int argc, char **argv, struct hw_opts *o)
{
	o->gpu = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			hw_usage(stdout);
			return TS_EXIT_OK;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--calibrate")) {
			o->calibrate = true;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			o->out = argv[++i];
		} else if (!strcmp(a, "--target") && i + 1 < argc) {
			o->target = argv[++i];
		} else if (!strncmp(a, "--target=", 9)) {
			o->target = a + 9;
		} else if (!strcmp(a, "--gpu") && i + 1 < argc) {
			char *end;
			o->gpu = (int)strtol(argv[++i], &end, 10);
			if (*end || o->gpu < 0)
				goto bad;
		} else {
			goto bad;
		}
		continue;
bad:
		fprintf(stderr, "tessel hw: bad argument '%s'\n", a);
		hw_usage(stderr);
		return TS_EXIT_USAGE;
	}
	if (o->target && o->gpu >= 0) {
		fprintf(stderr, "tessel hw: --target and --gpu exclude each "
			"other\n");
		return TS_EXIT_USAGE;
	}
	if (o->calibrate && (o->target || o->gpu >= 0)) {
		fprintf(stderr, "tessel hw: --calibrate measures the CPU this "
			"runs on; it takes no --target or --gpu\n");
		return TS_EXIT_USAGE;
	}
	return -1;
}

/* Write "t" as JSON to "path"; return the exit code. */
static int write_json(const char *path, const ts_target *t)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(ts_target_to_json(t), f) >= 0;

	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		fprintf(stderr, "tessel hw: cannot write '%s': %s\n", path,
			strerror(errno));
		return TS_EXIT_FAIL;
	}
	fprintf(stderr, "wrote %s\n", path);
	return TS_EXIT_OK;
}

/* Print the description that "o" asks for; return the exit code. */
static int hw_run(ts_ctx *ctx, const struct hw_opts *o)
{
	ts_target *t;

	if (o->target)
		t = ts_target_lookup(ctx, o->target);
	else if (o->gpu >= 0)
		t = ts_cuda_device_target(ctx, o->gpu);
	else
		t = ts_target_host(ctx);
	if (t && o->calibrate) {
		fprintf(stderr, "calibrating %s:\n", t->name);
		t = ts_target_calibrate(ctx, t, stderr);
	}
	if (!t) {
		ts_tool_report(ctx);
		return o->target ? TS_EXIT_USAGE : TS_EXIT_FAIL;
	}
	if (o->out)
		return write_json(o->out, t);
	if (o->json)
		fputs(ts_target_to_json(t), stdout);
	else
		ts_target_print(stdout, t);
	return TS_EXIT_OK;
}

/* tessel hw [--json] [--target NAME|FILE] [--gpu N] [--calibrate] [-o F] */
int ts_cmd_hw(int argc, char **argv)
{
	struct hw_opts o = { 0 };
	ts_ctx *ctx;
	int rc = hw_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	ctx = ts_ctx_alloc();
	if (!ctx)
		return TS_EXIT_FAIL;
	rc = hw_run(ctx, &o);
	ts_ctx_free(ctx);
	return rc;
}
