/* The option parser shared by tessel run, build and tune: a table of
 * options per verb, "--name V" and "--name=V", and the messages of bad
 * usage, written once. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include "tools/commands.h"
#include "tools/options.h"

bool ts_tool_parse_int(const char *s, long long lo, long long hi,
	long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	return *s && !*end && !errno && *v >= lo && *v <= hi;
}

bool ts_tool_set_int(int *dst, const char *s, long long lo, long long hi)
{
	long long n;

	if (!ts_tool_parse_int(s, lo, hi, &n))
		return false;
	*dst = (int)n;
	return true;
}

bool ts_tool_set_string(const char **dst, const char *s)
{
	*dst = s;
	return *s != '\0';
}

void ts_tool_usage(FILE *out, const struct ts_tool_options *t)
{
	fputs(t->synopsis, out);
	for (int i = 0; i < t->noptions; i++) {
		const struct ts_tool_option *op = &t->options[i];
		char name[64];
		snprintf(name, sizeof(name), "%s%s", op->name, op->implied ?
			" [V]" : op->has_value ? " V" : "");
		fprintf(out, "  %-18s %s\n", name, op->help);
	}
	fprintf(out, "  %-18s %s\n", "--shape NAME=DIMS", "for an .onnx model: "
		"fix the graph input NAME's shape\n"
		"                     (1x3x224x224) or the symbolic "
		"dimension NAME (batch=1)");
	fprintf(out, "  %-18s %s\n\nexit codes: %s\n", "--help", "this text",
		t->exit_codes);
}

/* Whether "arg" is the option "name", alone or as "name=V". */
static bool option_matches(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (!arg[n] || arg[n] == '=');
}

/* The value of option "op" at "argv"["*i"] (advancing "*i" past a value
 * in the next argument), or NULL when it needs one and has none. */
static const char *option_value(const struct ts_tool_option *op, int argc,
	char **argv, int *i)
{
	const char *arg = argv[*i], *eq = arg + strlen(op->name);

	if (!op->has_value)
		return NULL;
	if (*eq == '=')
		return eq + 1;
	/* An option with an implied value takes the next argument only
	 * when it is a number. */
	if (op->implied && (*i + 1 >= argc || !argv[*i + 1][0] ||
	    !strchr("0123456789", argv[*i + 1][0])))
		return op->implied;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Apply the option at "argv"["*i"] of "t" to "settings".  Return -1 when
 * it was applied, else the exit code. */
static int apply_option(const struct ts_tool_options *t, int argc,
	char **argv, int *i, void *settings)
{
	for (int k = 0; k < t->noptions; k++) {
		const struct ts_tool_option *op = &t->options[k];
		const char *v;
		if (!option_matches(argv[*i], op->name))
			continue;
		v = option_value(op, argc, argv, i);
		if (op->has_value && !v) {
			fprintf(stderr, "tessel %s: %s needs a value\n",
				t->verb, op->name);
			return TS_EXIT_USAGE;
		}
		if (!op->set(settings, v)) {
			fprintf(stderr, "tessel %s: bad value '%s' for %s\n",
				t->verb, v ? v : "", op->name);
			return TS_EXIT_USAGE;
		}
		return -1;
	}
	fprintf(stderr, "tessel %s: unknown option '%s' (see tessel %s "
		"--help)\n", t->verb, argv[*i], t->verb);
	return TS_EXIT_USAGE;
}

int ts_tool_parse_args(const struct ts_tool_options *t, int argc,
	char **argv, void *settings, const char **file)
{
	int code;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			ts_tool_usage(stdout, t);
			return TS_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			code = apply_option(t, argc, argv, &i, settings);
			if (code >= 0)
				return code;
		} else if (*file) {
			fprintf(stderr, "tessel %s: one program at a time "
				"('%s' and '%s')\n", t->verb, *file, argv[i]);
			return TS_EXIT_USAGE;
		} else {
			*file = argv[i];
		}
	}
	if (!*file) {
		ts_tool_usage(stderr, t);
		return TS_EXIT_USAGE;
	}
	return -1;
}

char *ts_tool_replace_ext(const char *path, const char *ext)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - path)
		: strlen(path);
	char *s = GC_MALLOC_ATOMIC(n + strlen(ext) + 1);

	memcpy(s, path, n);
	strcpy(s + n, ext);
	return s;
}
