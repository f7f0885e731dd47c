# examples/: operators and networks written with compute only.  The
# catalogue is a convenience library that tests and benchmarks link.
noinst_LTLIBRARIES =
noinst_LTLIBRARIES += examples/libcatalogue.la
examples_libcatalogue_la_SOURCES = examples/catalogue.c examples/catalogue.h
