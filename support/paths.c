/* Where the runtime files of Tessel are.  No path of the build tree is
 * compiled into the library: files are found from the folder of the
 * loaded libtessel (dladdr), in the layout of an installation or of a
 * build tree, after the environment's overrides.
 *
 *	installed	LIB/libtessel.so: LIB/libtessel_rt.a,
 *			PREFIX/share/tessel/targets, PREFIX/bin/tessel,
 *			where PREFIX is LIB/.. (or LIB/../.. for a
 *			multiarch LIB such as lib/x86_64-linux-gnu)
 *	build tree	BUILD/.libs/libtessel.so: BUILD/libtessel_rt.a,
 *			BUILD/tools/tessel, and the targets of the
 *			source tree, BUILD/targets or $TS_SRCDIR/targets
 *
 * Overrides: TS_TARGETS_DIR, TS_MEASURE_WORKER, TS_RUNTIME_LIB. */
#define _GNU_SOURCE
#include <config.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "support/support.h"

/* The folder of the loaded library, or NULL. */
static const char *library_dir(void)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)ts_runtime_path, &info) || !info.dli_fname)
		return NULL;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return ".";
	return ts_strndup(info.dli_fname, (size_t)(slash - info.dli_fname));
}

/* Whether "path" is there as "which" needs it. */
static bool usable(ts_runtime_file which, const char *path)
{
	static const int mode[TS_FILE_COUNT] = {
		[TS_FILE_TARGETS] = R_OK | X_OK, [TS_FILE_TOOL] = X_OK,
		[TS_FILE_RUNTIME_LIB] = R_OK,
	};

	return access(path, mode[which]) == 0;
}

/* The candidates for "which" when the library lies in "lib", in order,
 * NULL-ended. */
static void candidates(ts_runtime_file which, const char *lib,
	const char *out[8])
{
	static const char *const rel[TS_FILE_COUNT][3] = {
		[TS_FILE_TARGETS] = { "../share/tessel/targets",
			"../../share/tessel/targets", "../targets" },
		[TS_FILE_TOOL] = { "../bin/tessel", "../../bin/tessel",
			"../tools/tessel" },
		[TS_FILE_RUNTIME_LIB] = { "libtessel_rt.a",
			"../libtessel_rt.a", NULL },
	};
	static const char *const env[TS_FILE_COUNT] = {
		"TS_TARGETS_DIR", "TS_MEASURE_WORKER", "TS_RUNTIME_LIB",
	};
	const char *e = getenv(env[which]);
	const char *src = getenv("TS_SRCDIR");
	int n = 0;

	if (e && *e)
		out[n++] = e;
	for (int i = 0; lib && i < 3; i++)
		if (rel[which][i])
			out[n++] = ts_asprintf("%s/%s", lib, rel[which][i]);
	if (which == TS_FILE_TARGETS && src && *src)
		out[n++] = ts_asprintf("%s/targets", src);
	out[n] = NULL;
}

const char *ts_runtime_path(ts_runtime_file which, const char **tried)
{
	const char *c[8];
	ts_buf b;

	if ((unsigned)which >= TS_FILE_COUNT)
		return NULL;
	candidates(which, library_dir(), c);
	ts_buf_init(&b);
	for (int i = 0; c[i]; i++) {
		if (usable(which, c[i]))
			return c[i];
		ts_buf_printf(&b, "%s%s", i ? ", " : "", c[i]);
	}
	if (tried)
		*tried = b.len ? b.s : "nowhere";
	return NULL;
}
