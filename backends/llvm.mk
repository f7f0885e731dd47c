# backends/: the LLVM CPU backend (emission, JIT, AOT) and the runtime.
libtessel_la_SOURCES += \
	backends/llvm_internal.h \
	backends/llvm.c \
	backends/llvm_emit.c \
	backends/llvm_math.c \
	backends/llvm_jit.c \
	backends/llvm_aot.c \
	backends/runtime.c
tesselinclude_HEADERS += include/tessel/backend.h

# The runtime again, as a position-independent static library that AOT
# shared libraries link, so that they need only OpenMP at run time.
lib_LIBRARIES = libtessel_rt.a
libtessel_rt_a_SOURCES = backends/runtime.c
libtessel_rt_a_CFLAGS = $(AM_CFLAGS) -fPIC
