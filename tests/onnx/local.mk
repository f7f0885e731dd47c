# tests/onnx: ONNX's backend node tests (Debian's libonnx-testdata)
# through the importer, the interpreter and the compiled kernels.
check_PROGRAMS += tests/onnx/conformance
TESTS += tests/onnx/conformance
tests_onnx_conformance_SOURCES = tests/onnx/conformance.c
tests_onnx_conformance_CPPFLAGS = $(TEST_CPPFLAGS) \
	-DONNX_TESTDATA='"$(ONNX_TESTDATA)"'
tests_onnx_conformance_LDADD = $(TEST_LIBS)
if HAVE_ONNX
check_PROGRAMS += tests/onnx/test_onnx_import
TESTS += tests/onnx/test_onnx_import
tests_onnx_test_onnx_import_SOURCES = tests/onnx/test_onnx_import.c \
	tests/onnx/builder.h
tests_onnx_test_onnx_import_CPPFLAGS = $(TEST_CPPFLAGS)
tests_onnx_test_onnx_import_LDADD = $(TEST_LIBS) onnx/libonnxpb.la \
	$(PROTOBUF_C_LIBS)
endif
if HAVE_ONNX
# Models built in C with the protobuf-c structs (BatchNormalization
# folded into a Conv).
check_PROGRAMS += tests/onnx/test_import
TESTS += tests/onnx/test_import
tests_onnx_test_import_SOURCES = tests/onnx/test_import.c
tests_onnx_test_import_CPPFLAGS = $(TEST_CPPFLAGS)
tests_onnx_test_import_LDADD = $(TEST_LIBS) onnx/libonnxpb.la \
	$(PROTOBUF_C_LIBS)
endif
# The cases ONNX's tests leave out (tests/onnx/*.py writes them).
TESTS += tests/onnx/cases.sh
EXTRA_DIST += tests/onnx/cases.sh tests/onnx/forms.py \
	tests/onnx/reduce_cases.py tests/onnx/nn_cases.py tests/onnx/misc_cases.py
# tessel import and every verb on .onnx files, bad files included.
TESTS += tests/onnx/test_cli.sh
EXTRA_DIST += tests/onnx/test_cli.sh
# Modules and a network exported from PyTorch, run and compared with it
# (SKIP without python3-torch).
TESTS += tests/onnx/torch_models.sh
EXTRA_DIST += tests/onnx/torch_models.sh tests/onnx/torch_models.py
