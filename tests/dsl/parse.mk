# tests/dsl: the .tsl front end, with its sample programs.
check_PROGRAMS += tests/dsl/test_parse
TESTS += tests/dsl/test_parse
tests_dsl_test_parse_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_parse_LDADD = $(TEST_LIBS)
EXTRA_DIST += \
	tests/dsl/parse/conv2d.tsl \
	tests/dsl/parse/exprs.tsl \
	tests/dsl/parse/lets.tsl \
	tests/dsl/parse/matmul.tsl \
	tests/dsl/parse/out_of_order.tsl \
	tests/dsl/parse/quantize.tsl \
	tests/dsl/parse/softmax.tsl \
	tests/dsl/parse/variance.tsl

# The canonical form of DAGs.
check_PROGRAMS += tests/dsl/test_canon
TESTS += tests/dsl/test_canon
tests_dsl_test_canon_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_canon_LDADD = $(TEST_LIBS)
