# tests/dsl: the reference interpreter, arrays and .npy files.
check_PROGRAMS += tests/dsl/test_eval
TESTS += tests/dsl/test_eval
tests_dsl_test_eval_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_eval_LDADD = $(TEST_LIBS)
