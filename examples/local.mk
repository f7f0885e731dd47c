# examples/: operators and networks written with compute only.  The
# catalogue is a convenience library that tests and benchmarks link.
noinst_LTLIBRARIES += examples/libcatalogue.la
examples_libcatalogue_la_SOURCES = examples/catalogue.c examples/catalogue.h

# A standalone program showing the C API end to end.
noinst_PROGRAMS += examples/matmul_api
examples_matmul_api_SOURCES = examples/matmul_api.c
examples_matmul_api_LDADD = libtessel.la $(GC_LIBS)

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
