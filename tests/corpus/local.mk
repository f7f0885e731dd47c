# tests/corpus: random declarations in several writing styles, each run
# in the reference interpreter and compiled under the naive, the static
# and random schedules.
CORPUS_GEN = tests/corpus/gen.c tests/corpus/gen.h

noinst_PROGRAMS += tests/corpus/corpus_gen
tests_corpus_corpus_gen_SOURCES = tests/corpus/corpus_gen.c $(CORPUS_GEN)
tests_corpus_corpus_gen_LDADD = -lm
