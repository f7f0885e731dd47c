# examples/: whole networks at any size (LeNet, MLP, ResNet-18, a
# transformer encoder layer), for tests and benchmarks.
noinst_LTLIBRARIES += examples/libnetworks.la
examples_libnetworks_la_SOURCES = examples/networks.c examples/networks.h
examples_libnetworks_la_LIBADD = -lm
EXTRA_DIST += examples/resnet18.tsl examples/transformer.tsl
