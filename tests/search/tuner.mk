# tests/search: features, cost model, search and the tuner.

check_PROGRAMS += tests/search/test_features
TESTS += tests/search/test_features
tests_search_test_features_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_features_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/search/test_tuner
TESTS += tests/search/test_tuner
tests_search_test_tuner_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_tuner_LDADD = $(TEST_LIBS)

TESTS += tests/search/test_tune_cli.sh
EXTRA_DIST += tests/search/test_tune_cli.sh
# The entry points of bindings (the Python package).
check_PROGRAMS += tests/search/test_bindings
TESTS += tests/search/test_bindings
tests_search_test_bindings_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_bindings_LDADD = $(TEST_LIBS)
