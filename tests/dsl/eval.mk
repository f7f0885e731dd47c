# tests/dsl: the reference interpreter, arrays and .npy files.
check_PROGRAMS += tests/dsl/test_eval tests/dsl/test_npy
TESTS += tests/dsl/test_eval tests/dsl/test_npy
tests_dsl_test_eval_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_eval_LDADD = $(TEST_LIBS)
tests_dsl_test_npy_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_npy_LDADD = $(TEST_LIBS)
