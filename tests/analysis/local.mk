# tests/analysis: footprints, bounds, classification, counts, traffic.
check_PROGRAMS += tests/analysis/test_footprint
TESTS += tests/analysis/test_footprint
tests_analysis_test_footprint_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_footprint_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/analysis/test_classify
TESTS += tests/analysis/test_classify
tests_analysis_test_classify_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_classify_LDADD = examples/libcatalogue.la $(TEST_LIBS)

check_PROGRAMS += tests/analysis/test_bounds
TESTS += tests/analysis/test_bounds
tests_analysis_test_bounds_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_bounds_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/analysis/test_facts
TESTS += tests/analysis/test_facts
tests_analysis_test_facts_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_facts_LDADD = $(TEST_LIBS)

# Runs the tessel command line, which make check builds first.
check_PROGRAMS += tests/analysis/test_analyze_cli
TESTS += tests/analysis/test_analyze_cli
tests_analysis_test_analyze_cli_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_analyze_cli_LDADD = $(TEST_LIBS)

# Quasi-affine indices: declarations in tests/analysis/quasi/.
check_PROGRAMS += tests/analysis/test_quasi
TESTS += tests/analysis/test_quasi
tests_analysis_test_quasi_CPPFLAGS = $(TEST_CPPFLAGS)
tests_analysis_test_quasi_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/analysis/quasi/grouped_conv.tsl \
	tests/analysis/quasi/upsample.tsl \
	tests/analysis/quasi/pixel_shuffle.tsl \
	tests/analysis/quasi/deconv_s2.tsl
