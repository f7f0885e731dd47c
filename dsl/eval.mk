# dsl: dense arrays, .npy files and the reference interpreter.
libtessel_la_SOURCES += \
	dsl/array.c \
	dsl/npy.c \
	dsl/eval.c
