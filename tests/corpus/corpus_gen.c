/* Print the corpus declaration of a seed, to reproduce a failure of
 * test_corpus or to look at what the generator writes.
 *
 *   usage: corpus_gen SEED [test|bench] [one|staged] [--style NAME]
 *                     [--zero]
 *
 * Without a form, the seed chooses it, as in test_corpus. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/corpus/gen.h"

/* Print the usage and the styles to stderr and exit with 2. */
static void usage(void)
{
	fprintf(stderr, "usage: corpus_gen SEED [test|bench] [one|staged] "
		"[--style NAME] [--zero]\nstyles:");
	for (int i = 0; i < ts_corpus_style_count(); i++)
		fprintf(stderr, " %s", ts_corpus_style_name(i));
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	ts_corpus_opts o = ts_corpus_opts_default();
	ts_corpus_case c;
	uint64_t seed;
	char *end;

	if (argc < 2)
		usage();
	seed = strtoull(argv[1], &end, 0);
	if (*end)
		usage();
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "test"))
			o.size = TS_CORPUS_TEST;
		else if (!strcmp(argv[i], "bench"))
			o.size = TS_CORPUS_BENCH;
		else if (!strcmp(argv[i], "one"))
			o.form = TS_CORPUS_ONE_STATEMENT;
		else if (!strcmp(argv[i], "staged"))
			o.form = TS_CORPUS_STAGED;
		else if (!strcmp(argv[i], "--zero"))
			o.zero_extents = true;
		else if (!strcmp(argv[i], "--style") && i + 1 < argc &&
		    (o.style = ts_corpus_style_find(argv[i + 1])) >= 0)
			i++;
		else
			usage();
	}
	if (ts_corpus_generate(seed, &o, &c) < 0) {
		fprintf(stderr, "corpus_gen: out of memory\n");
		return 1;
	}
	fputs(c.text, stdout);
	ts_corpus_case_clear(&c);
	return 0;
}
