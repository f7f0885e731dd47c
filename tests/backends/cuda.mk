# tests/backends: NVRTC compilation (no GPU needed) and, when a device is
# present, the driver API.
check_PROGRAMS += tests/backends/test_nvrtc
TESTS += tests/backends/test_nvrtc
tests_backends_test_nvrtc_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_nvrtc_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_cuda_emit
TESTS += tests/backends/test_cuda_emit
tests_backends_test_cuda_emit_SOURCES = tests/backends/test_cuda_emit.c \
	tests/backends/tc_decls.h
tests_backends_test_cuda_emit_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_cuda_emit_LDADD = examples/libcatalogue.la $(TEST_LIBS)
check_PROGRAMS += tests/backends/test_cuda_emulate
TESTS += tests/backends/test_cuda_emulate
tests_backends_test_cuda_emulate_SOURCES = \
	tests/backends/test_cuda_emulate.c tests/backends/tc_decls.h \
	tests/backends/semantics_decls.h
tests_backends_test_cuda_emulate_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_cuda_emulate_LDADD = examples/libcatalogue.la $(TEST_LIBS) -ldl
