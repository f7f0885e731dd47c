# examples/: operators and networks written with compute only.  The
# catalogue is a convenience library that tests and benchmarks link.
noinst_LTLIBRARIES += examples/libcatalogue.la
examples_libcatalogue_la_SOURCES = examples/catalogue.c examples/catalogue.h

# The C API as a user meets it: programs that include <tessel/tessel.h>
# only and link what `pkg-config --libs tessel` names.  They are built
# here against the tree (so the suite runs them), and `make installcheck`
# builds them again out of the tree against the installed headers,
# library and tessel.pc (examples/api/installcheck.sh).
API_EXAMPLES = examples/api/matmul examples/api/dense \
	examples/api/records examples/api/onnx_model
noinst_PROGRAMS += $(API_EXAMPLES)
examples_api_matmul_LDADD = libtessel.la
examples_api_dense_LDADD = libtessel.la
examples_api_records_LDADD = libtessel.la
examples_api_onnx_model_LDADD = libtessel.la
EXTRA_DIST += examples/api/installcheck.sh

installcheck-local:
	$(SHELL) $(srcdir)/examples/api/installcheck.sh \
		'$(DESTDIR)' '$(prefix)' '$(DESTDIR)$(libdir)' \
		'$(DESTDIR)$(includedir)' '$(DESTDIR)$(bindir)' '$(srcdir)'

EXTRA_DIST += \
	examples/batch_matmul.tsl \
	examples/conv1x1.tsl \
	examples/conv2d_s1.tsl \
	examples/conv2d_s2.tsl \
	examples/dense_bias_relu.tsl \
	examples/depthwise_conv.tsl \
	examples/layer_norm.tsl \
	examples/lenet.tsl \
	examples/matmul.tsl \
	examples/max_pool.tsl \
	examples/mlp.tsl \
	examples/softmax.tsl
include $(srcdir)/examples/networks.mk
