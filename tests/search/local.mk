# tests/search: files are listed here as they are added.

check_PROGRAMS += tests/search/test_target
TESTS += tests/search/test_target
tests_search_test_target_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_target_LDADD = $(TEST_LIBS)

TESTS += tests/search/test_hw.sh
EXTRA_DIST += tests/search/test_hw.sh
