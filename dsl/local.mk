# dsl/: expressions, tensors, the DAG, printing, the .tsl front end, arrays
# and .npy files, the reference interpreter.
libtessel_la_SOURCES += \
	dsl/internal.h \
	dsl/ir.h \
	dsl/access.c \
	dsl/dtype.c \
	dsl/expr.c \
	dsl/tensor.c \
	dsl/dag.c \
	dsl/canon.c \
	dsl/range.c \
	dsl/print.c
tesselinclude_HEADERS += include/tessel/dsl.h
include $(srcdir)/dsl/parse.mk
include $(srcdir)/dsl/eval.mk
