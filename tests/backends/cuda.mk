# tests/backends: NVRTC compilation (no GPU needed) and, when a device is
# present, the driver API.
check_PROGRAMS += tests/backends/test_nvrtc
TESTS += tests/backends/test_nvrtc
tests_backends_test_nvrtc_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_nvrtc_LDADD = $(TEST_LIBS)
