/* Fuzz the reader of hardware descriptions: any text gives a target or a
 * message; a target read must write as JSON that reads back to the same
 * text. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	char *json = fuzz_string(data, size);
	ts_target *t = ts_target_from_json(ctx, json, "fuzz.json");

	if (!t) {
		fuzz_check_error(ctx);
	} else {
		char *text = ts_target_to_json(t);
		ts_target *again = ts_target_from_json(ctx, text, "again");
		if (!again || strcmp(text, ts_target_to_json(again)) != 0) {
			fprintf(stderr, "target round trip failed:\n%s\n%s\n",
				text, again ? "(different)" :
				ts_ctx_error(ctx));
			abort();
		}
		ts_target_key(t);
	}
	free(json);
	ts_ctx_free(ctx);
	return 0;
}
