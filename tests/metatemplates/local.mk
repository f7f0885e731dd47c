# tests/metatemplates/
check_PROGRAMS += tests/metatemplates/test_space
TESTS += tests/metatemplates/test_space
tests_metatemplates_test_space_CPPFLAGS = $(TEST_CPPFLAGS)
tests_metatemplates_test_space_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/metatemplates/test_template
TESTS += tests/metatemplates/test_template
tests_metatemplates_test_template_SOURCES = \
	tests/metatemplates/test_template.c $(CORPUS_GEN)
tests_metatemplates_test_template_CPPFLAGS = $(TEST_CPPFLAGS)
tests_metatemplates_test_template_LDADD = examples/libcatalogue.la $(TEST_LIBS)

check_PROGRAMS += tests/metatemplates/test_model
TESTS += tests/metatemplates/test_model
tests_metatemplates_test_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_metatemplates_test_model_LDADD = examples/libcatalogue.la $(TEST_LIBS)
