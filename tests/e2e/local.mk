# tests/e2e: the catalogue, the examples in C and in .tsl, and the command
# line, end to end.
check_PROGRAMS += tests/e2e/test_catalogue tests/e2e/test_examples
TESTS += tests/e2e/test_catalogue tests/e2e/test_examples
tests_e2e_test_catalogue_CPPFLAGS = $(TEST_CPPFLAGS)
tests_e2e_test_catalogue_LDADD = examples/libcatalogue.la $(TEST_LIBS)
tests_e2e_test_examples_CPPFLAGS = $(TEST_CPPFLAGS)
tests_e2e_test_examples_LDADD = examples/libcatalogue.la examples/libnetworks.la $(TEST_LIBS)
TESTS += tests/e2e/test_cli.sh
EXTRA_DIST += tests/e2e/test_cli.sh
TESTS += tests/e2e/test_paths.sh
EXTRA_DIST += tests/e2e/test_paths.sh
