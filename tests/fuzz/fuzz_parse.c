/* Fuzz the .tsl front end: any text gives a DAG or a located message.  A
 * DAG must print and parse back to the same canonical form, and when it
 * is small the reference interpreter runs it on random inputs. */
#include "fuzz_common.h"

/* The most points a stage of a fuzzed program may iterate over for the
 * interpreter to run it (keeps each input fast). */
#define FUZZ_MAX_POINTS 20000

/* Whether every stage of "dag" iterates over at most FUZZ_MAX_POINTS. */
static int small_enough(const ts_dag *dag)
{
	for (int s = 0; s < dag->nstages; s++) {
		const ts_stage *st = dag->stages[s];
		double n = 1;
		for (int i = 0; i < st->ndim; i++)
			n *= (double)st->axes[i]->extent;
		for (int i = 0; i < st->nraxes; i++)
			n *= (double)st->raxes[i]->extent;
		if (n > FUZZ_MAX_POINTS)
			return 0;
	}
	for (int i = 0; i < dag->ninputs; i++)
		if (ts_tensor_size(dag->inputs[i]) > FUZZ_MAX_POINTS)
			return 0;
	return 1;
}

/* Print "dag", parse the text in a fresh context and compare. */
static void round_trip(const ts_dag *dag)
{
	ts_ctx *ctx2 = ts_ctx_alloc();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ts_dag *again;

	ts_dag_print(f, dag);
	fclose(f);
	again = ts_parse_string(ctx2, "printed.tsl", text);
	if (!again || strcmp(ts_dag_canonical_string(dag),
	    ts_dag_canonical_string(again)) != 0) {
		fprintf(stderr, "round trip failed:\n%s\n%s\n", text,
			again ? "(different DAG)" : ts_ctx_error(ctx2));
		abort();
	}
	free(text);
	ts_ctx_free(ctx2);
}

/* Run "dag" in the interpreter on random inputs. */
static void evaluate(ts_ctx *ctx, const ts_dag *dag)
{
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	ts_array **out = calloc(dag->noutputs + 1, sizeof(*out));

	if (!in)
		fuzz_check_error(ctx);
	else if (ts_eval(ctx, dag, in, out) < 0)
		fuzz_check_error(ctx);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ts_ctx *ctx = ts_ctx_alloc();
	char *src = fuzz_string(data, size);
	ts_dag *dag = ts_parse_string(ctx, "fuzz.tsl", src);

	if (!dag) {
		fuzz_check_error(ctx);
	} else {
		ts_dag_hash(dag);
		round_trip(dag);
		if (small_enough(dag))
			evaluate(ctx, dag);
	}
	free(src);
	ts_ctx_free(ctx);
	return 0;
}
