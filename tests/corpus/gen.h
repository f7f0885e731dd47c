/* A generator of random valid .tsl declarations for differential testing.
 *
 * From a 64-bit seed it writes one declaration in one of several writing
 * styles (a dense layer, a convolution, a softmax, integer requantisation,
 * ...).  Every style can write the same computation in two forms: as one
 * statement, with the reductions nested inside the expression, and as
 * separate stages.  The parameters drawn from the seed (extents, dtypes,
 * variants) do not depend on the form, so the two forms of one seed
 * compute the same values.
 *
 * The text is plain C: the generator does not use the library, so that a
 * declaration can be reproduced without it (tests/corpus/corpus_gen). */
#ifndef TESSEL_TESTS_CORPUS_GEN_H
#define TESSEL_TESTS_CORPUS_GEN_H

#include <stdbool.h>
#include <stdint.h>

/* The extents of a case: small ones that run in milliseconds, or the
 * real sizes of a benchmark. */
typedef enum ts_corpus_size {
	TS_CORPUS_TEST,
	TS_CORPUS_BENCH,
} ts_corpus_size;

/* How the computation is written. */
typedef enum ts_corpus_form {
	TS_CORPUS_EITHER,	/* chosen by the seed */
	TS_CORPUS_ONE_STATEMENT,	/* reductions nested in expressions */
	TS_CORPUS_STAGED,	/* one stage per reduction */
} ts_corpus_form;

/* Options of the generator. */
typedef struct ts_corpus_opts {
	ts_corpus_size size;
	ts_corpus_form form;
	int style;		/* an index below ts_corpus_style_count, or -1:
				 * chosen by the seed */
	bool zero_extents;	/* let some extents be 0 */
} ts_corpus_opts;

/* One generated declaration. */
typedef struct ts_corpus_case {
	uint64_t seed;
	int style;
	ts_corpus_form form;	/* the form written, never EITHER */
	bool twin;		/* the other form is a different text */
	char *text;		/* the declaration (malloc) */
} ts_corpus_case;

/* The default options: test sizes, form and style chosen by the seed. */
ts_corpus_opts ts_corpus_opts_default(void);

/* The number of writing styles, and the name of style "i". */
int ts_corpus_style_count(void);
const char *ts_corpus_style_name(int i);
/* The index of the style called "name", or -1. */
int ts_corpus_style_find(const char *name);
/* The name of form "f". */
const char *ts_corpus_form_name(ts_corpus_form f);

/* Generate the declaration of "seed" under "opts" into "c" (its text is
 * malloc'd: free it with ts_corpus_case_clear).  Return 0, or -1 when
 * memory runs out or the style does not exist. */
int ts_corpus_generate(uint64_t seed, const ts_corpus_opts *opts,
	ts_corpus_case *c);
void ts_corpus_case_clear(ts_corpus_case *c);

#endif
