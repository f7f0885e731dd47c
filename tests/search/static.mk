# tests/search: static filling.
check_PROGRAMS += tests/search/test_static
TESTS += tests/search/test_static
tests_search_test_static_CPPFLAGS = $(TEST_CPPFLAGS)
tests_search_test_static_LDADD = examples/libcatalogue.la $(TEST_LIBS)
EXTRA_DIST += tests/search/cases/pool_s2_pad.tsl \
	tests/search/cases/depthwise_pad.tsl \
	tests/search/cases/transpose_cols.tsl \
	tests/search/cases/conv_s2_7.tsl \
	tests/search/cases/ring_mean.tsl
