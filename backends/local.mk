# backends/: the loop IR (constructors, printing) and lowering of a DAG
# plus schedule to it.
libtessel_la_SOURCES += \
	backends/loop.c \
	backends/loop_access.c \
	backends/ir.h \
	backends/lower_internal.h \
	backends/lower_expr.c \
	backends/lower.c \
	backends/promote.c \
	backends/split_select.c
tesselinclude_HEADERS += include/tessel/loop.h include/tessel/lower.h
include $(srcdir)/backends/llvm.mk
include $(srcdir)/backends/cuda.mk
