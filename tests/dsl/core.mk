# tests/dsl: the DSL constructors, their errors and the DAG.
check_PROGRAMS += tests/dsl/test_expr
TESTS += tests/dsl/test_expr
tests_dsl_test_expr_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_expr_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/dsl/test_access
TESTS += tests/dsl/test_access
tests_dsl_test_access_CPPFLAGS = $(TEST_CPPFLAGS)
tests_dsl_test_access_LDADD = $(TEST_LIBS)
