# backends: NVRTC and the CUDA driver API (loaded at run time).  Without
# the toolkit the same API fails with a "built without CUDA" message.
tesselinclude_HEADERS += include/tessel/cuda.h
if HAVE_CUDA
libtessel_la_SOURCES += backends/cuda_rt.c
EXTRA_DIST += backends/cuda_none.c
else
libtessel_la_SOURCES += backends/cuda_none.c
EXTRA_DIST += backends/cuda_rt.c
endif
# CUDA C emission from the loop IR and running the emitted programs
# (built either way: without CUDA, compiling and running fail cleanly).
libtessel_la_SOURCES += backends/cuda_emit.c backends/cuda_program.c
