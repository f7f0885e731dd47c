# dsl/: expressions, tensors, the DAG, printing, the .tsl front end, arrays
# and .npy files, the reference interpreter.
libtessel_la_SOURCES += \
	dsl/internal.h \
	dsl/ctx.c \
	dsl/util.c \
	dsl/expr.c \
	dsl/tensor.c \
	dsl/dag.c \
	dsl/canon.c \
	dsl/range.c \
	dsl/print.c
tesselinclude_HEADERS += include/tessel/dsl.h include/tessel/tessel.h
include $(srcdir)/dsl/parse.mk
include $(srcdir)/dsl/eval.mk
