# tests/onnx: ONNX's backend node tests (Debian's libonnx-testdata)
# through the importer, the interpreter and the compiled kernels.
check_PROGRAMS += tests/onnx/conformance
TESTS += tests/onnx/conformance
tests_onnx_conformance_SOURCES = tests/onnx/conformance.c
tests_onnx_conformance_CPPFLAGS = $(TEST_CPPFLAGS) \
	-DONNX_TESTDATA='"$(ONNX_TESTDATA)"'
tests_onnx_conformance_LDADD = $(TEST_LIBS)
# Conv, ConvTranspose and pool cases that ONNX's node tests miss.
TESTS += tests/onnx/nn_cases.sh
EXTRA_DIST += tests/onnx/nn_cases.sh tests/onnx/nn_cases.py
if HAVE_ONNX
# Models built in C with the protobuf-c structs (BatchNormalization
# folded into a Conv).
check_PROGRAMS += tests/onnx/test_import
TESTS += tests/onnx/test_import
tests_onnx_test_import_SOURCES = tests/onnx/test_import.c
tests_onnx_test_import_CPPFLAGS = $(TEST_CPPFLAGS)
tests_onnx_test_import_LDADD = $(TEST_LIBS) $(PROTOBUF_C_LIBS)
endif
