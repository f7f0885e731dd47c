# tests/corpus: random declarations in several writing styles, each run
# in the reference interpreter and compiled under the naive, the static
# and random schedules.
CORPUS_GEN = tests/corpus/gen.c tests/corpus/gen.h

noinst_PROGRAMS += tests/corpus/corpus_gen
tests_corpus_corpus_gen_SOURCES = tests/corpus/corpus_gen.c $(CORPUS_GEN)
tests_corpus_corpus_gen_LDADD = -lm

check_PROGRAMS += tests/corpus/test_corpus
TESTS += tests/corpus/test_corpus
tests_corpus_test_corpus_SOURCES = tests/corpus/test_corpus.c $(CORPUS_GEN) \
	tests/backends/random_schedule.c tests/backends/random_schedule.h \
	tests/backends/fence.c tests/backends/fence.h
tests_corpus_test_corpus_CPPFLAGS = $(TEST_CPPFLAGS)
tests_corpus_test_corpus_LDADD = $(TEST_LIBS)
