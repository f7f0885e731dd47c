# tests/backends: the LLVM backend (JIT, AOT, runtime).
check_PROGRAMS += tests/backends/test_llvm
TESTS += tests/backends/test_llvm
tests_backends_test_llvm_SOURCES = tests/backends/test_llvm.c \
	tests/backends/fence.c tests/backends/fence.h
tests_backends_test_llvm_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_llvm_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_llvm_sched
TESTS += tests/backends/test_llvm_sched
tests_backends_test_llvm_sched_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_llvm_sched_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_llvm_cli
TESTS += tests/backends/test_llvm_cli
tests_backends_test_llvm_cli_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_llvm_cli_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_llvm_math
TESTS += tests/backends/test_llvm_math
tests_backends_test_llvm_math_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_llvm_math_LDADD = examples/libcatalogue.la $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_semantics
TESTS += tests/backends/test_semantics
tests_backends_test_semantics_SOURCES = tests/backends/test_semantics.c \
	tests/backends/semantics_decls.h
tests_backends_test_semantics_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_semantics_LDADD = $(TEST_LIBS)
