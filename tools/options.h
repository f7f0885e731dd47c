/* The option parser shared by the verbs of the command line: each verb
 * lists its options in a table (name, whether a value follows, a setter,
 * a line of help) and hands it to ts_tool_parse_args with its own struct
 * of settings. */
#ifndef TESSEL_TOOLS_OPTIONS_H
#define TESSEL_TOOLS_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* The number macro "x" as a string literal, for help texts. */
#define TS_TOOL_STRINGIFY(x) #x
#define TS_TOOL_STRING(x) TS_TOOL_STRINGIFY(x)

/* One option: "name", whether it takes a value ("--name V" or
 * "--name=V"), the value it takes when no number follows ("implied",
 * NULL: a value is required), and the setter that stores the value in
 * the verb's settings (false when the value is bad). */
struct ts_tool_option {
	const char *name;
	bool has_value;
	bool (*set)(void *settings, const char *v);
	const char *help;
	const char *implied;
};

/* A verb's command line: its name, its options, and its usage text (the
 * lines printed before the table of options). */
struct ts_tool_options {
	const char *verb;
	const struct ts_tool_option *options;
	int noptions;
	const char *synopsis;	/* printed first, before the options */
	const char *exit_codes;	/* after "exit codes: " */
};

/* Print the usage of "t" to "out": synopsis, options, exit codes. */
void ts_tool_usage(FILE *out, const struct ts_tool_options *t);
/* Parse "argc" and "argv" (argv[0] is the verb) against "t" into
 * "settings", and the one positional argument into "*file".  Return -1
 * to go on, or the exit code (0 after --help, 2 on bad usage, with the
 * message on stderr).  A missing file prints the usage on stderr. */
int ts_tool_parse_args(const struct ts_tool_options *t, int argc,
	char **argv, void *settings, const char **file);
/* Parse the integer "s" in ["lo", "hi"] into "*v". */
bool ts_tool_parse_int(const char *s, long long lo, long long hi,
	long long *v);
/* Store the integer "s" in ["lo", "hi"] into "*dst"; false when bad. */
bool ts_tool_set_int(int *dst, const char *s, long long lo, long long hi);
/* Store the non-empty string "s" in "*dst"; false when it is empty. */
bool ts_tool_set_string(const char **dst, const char *s);

#endif
