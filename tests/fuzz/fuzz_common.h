/* Shared helpers of the libFuzzer targets: each target feeds one reader
 * of untrusted input and checks that it returns a result or a message,
 * never crashes, and that what it accepts survives a round trip. */
#ifndef TESSEL_FUZZ_COMMON_H
#define TESSEL_FUZZ_COMMON_H

#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tessel/tessel.h>

#include "dsl/ir.h"

/* Return "data" ("size" bytes) as a NUL-terminated copy (malloc'd). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Return the path of this process's scratch file "tag"; write "data"
 * ("size" bytes) into it. */
static inline const char *fuzz_file(const char *tag, const uint8_t *data,
	size_t size)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tessel-fuzz-%ld-%s",
		getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(),
		tag);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	return path;
}

/* Abort when "ctx" holds no message although a reader failed. */
static inline void fuzz_check_error(ts_ctx *ctx)
{
	const char *e = ts_ctx_error(ctx);

	if (!e || !*e) {
		fprintf(stderr, "failure without a message\n");
		abort();
	}
}

#endif
