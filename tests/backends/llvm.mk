# tests/backends: the LLVM backend (JIT, AOT, runtime).
check_PROGRAMS += tests/backends/test_llvm
TESTS += tests/backends/test_llvm
tests_backends_test_llvm_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_llvm_LDADD = $(TEST_LIBS)
