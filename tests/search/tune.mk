# tests/search: measurement isolation and tuning records.
check_PROGRAMS += tests/search/test_measure
TESTS += tests/search/test_measure
tests_search_test_measure_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_measure_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/search/test_records
TESTS += tests/search/test_records
tests_search_test_records_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_records_LDADD = $(TEST_LIBS)
