/* Fuzz the schedule reader: any text gives a schedule of a fixed small
 * program or a message; a schedule read must print, write as JSON that
 * reads back to the same JSON, and lower to loops or fail with a
 * message. */
#include "fuzz_common.h"

/* A program with a reduction, an elementwise consumer and padding, so
 * that splits, fusions, compute locations and caches all apply. */
static const char program[] =
	"input A: f32[8, 12]\n"
	"input B: f32[12, 6]\n"
	"P[i: 10, k: 12] = select(i >= 1 && i <= 8, A[clamp(i - 1, 0, 7), k], "
	"0.0)\n"
	"C[i: 8, j: 6] = sum(k: 12) P[i + 1, k] * B[k, j]\n"
	"output D[i: 8, j: 6] = max(C[i, j], 0.0)\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag = ts_parse_string(ctx, "fuzz.tsl", program);
	char *json = fuzz_string(data, size);
	ts_schedule *sch;

	if (!dag)
		abort();
	sch = ts_schedule_from_json(ctx, dag, json);
	if (!sch) {
		fuzz_check_error(ctx);
	} else {
		char *text = ts_schedule_to_json(sch);
		ts_schedule *again = ts_schedule_from_json(ctx, dag, text);
		if (!again || strcmp(text, ts_schedule_to_json(again)) != 0) {
			fprintf(stderr, "schedule round trip failed:\n%s\n%s\n",
				text, again ? "(different)" :
				ts_ctx_error(ctx));
			abort();
		}
		ts_schedule_to_string(sch);
		if (!ts_lower(ctx, dag, sch))
			fuzz_check_error(ctx);
	}
	free(json);
	ts_ctx_free(ctx);
	return 0;
}
