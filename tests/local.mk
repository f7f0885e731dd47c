# tests/: cmocka programs per module, and end-to-end scripts.
EXTRA_DIST += tests/common.h tests/cmocka-tap.sh tests/layers.sh \
	tests/ownership.sh
# The layering of the tree, over its #include lines.
TESTS += tests/layers.sh
# An ownership annotation on every pointer of the public API.
TESTS += tests/ownership.sh
include $(srcdir)/tests/dsl/core.mk
include $(srcdir)/tests/dsl/parse.mk
include $(srcdir)/tests/dsl/eval.mk
include $(srcdir)/tests/analysis/local.mk
include $(srcdir)/tests/metatemplates/local.mk
include $(srcdir)/tests/search/local.mk
include $(srcdir)/tests/backends/lower.mk
include $(srcdir)/tests/backends/llvm.mk
include $(srcdir)/tests/e2e/local.mk
include $(srcdir)/tests/backends/cuda.mk
include $(srcdir)/tests/search/static.mk
include $(srcdir)/tests/search/tuner.mk
include $(srcdir)/tests/search/tune.mk
include $(srcdir)/tests/networks/local.mk
include $(srcdir)/tests/corpus/local.mk
include $(srcdir)/tests/fuzz/local.mk
include $(srcdir)/tests/onnx/local.mk
include $(srcdir)/tests/mpi/local.mk
