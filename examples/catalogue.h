/* The operator catalogue: operators and small networks declared with
 * compute only, through the public API of <tessel/dsl.h>.  Tests and
 * benchmarks walk this table; examples/<example>.tsl holds the text form
 * of the entries that have one.  Not installed. */
#ifndef TESSEL_EXAMPLES_CATALOGUE_H
#define TESSEL_EXAMPLES_CATALOGUE_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size classes a builder understands. */
enum ts_size_class {
	TS_SIZE_TINY = 0,	/* small enough for ts_eval in a unit test */
	TS_SIZE_REAL = 1,	/* the size used in practice (ResNet-18, BERT) */
};

/* One operator.  "build" declares its tensors under fixed names (X, W,
 * ...), so each call needs a context that holds no tensor of those names,
 * usually a fresh one.  It returns NULL with a message in "ctx" for an
 * unknown size class. */
struct ts_catalogue_entry {
	const char *name;	/* stable lowercase identifier */
	const char *description;	/* one line */
	const char *example;	/* basename of examples/<example>.tsl that
				 * prints like build(ctx, TS_SIZE_REAL), or
				 * NULL */
	ts_dag *(*build)(ts_ctx *ctx, int size_class);
};

extern const struct ts_catalogue_entry ts_catalogue[];
extern const int ts_catalogue_count;

/* Return the entry called "name", or NULL. */
const struct ts_catalogue_entry *ts_catalogue_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif
