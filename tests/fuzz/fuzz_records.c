/* Fuzz the records log: any file gives records (bad lines skipped with a
 * warning) or a message; each record read must write as a line that
 * reads back to the same line. */
#include "fuzz_common.h"

/* Check that "rec" writes and reads back to the same JSON line. */
static void round_trip(ts_ctx *ctx, const ts_record *rec)
{
	char *line = ts_record_to_json(rec);
	ts_record *again = ts_record_from_json(ctx, line);

	if (!again || strcmp(line, ts_record_to_json(again)) != 0) {
		fprintf(stderr, "record round trip failed:\n%s\n%s\n", line,
			again ? ts_record_to_json(again) : ts_ctx_error(ctx));
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	const char *path = fuzz_file("records.jsonl", data, size);
	char *text = fuzz_string(data, size);
	ts_record *one = ts_record_from_json(ctx, text);
	ts_record **recs;
	int n = 0;

	if (one)
		round_trip(ctx, one);
	else
		fuzz_check_error(ctx);
	recs = ts_records_load(ctx, path, &n);
	if (!recs && n)
		abort();
	for (int i = 0; recs && i < n; i++)
		round_trip(ctx, recs[i]);
	if (recs)
		ts_records_best(recs, n, NULL, NULL);
	unlink(path);
	free(text);
	ts_ctx_free(ctx);
	return 0;
}
