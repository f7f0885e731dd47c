# bench/: benchmark programs, Tessel side by side with libraries in one
# run.  Built with the project (never run by make check); bench/run.sh
# runs them and writes bench/results.md.
BENCH_COMMON = bench/bench.c bench/bench.h
BENCH_LIBS = libtessel.la $(GC_LIBS) -lm

# Every example operator: naive against static schedule.
noinst_PROGRAMS += bench/bench_ops
bench_bench_ops_SOURCES = bench/bench_ops.c $(BENCH_COMMON)
bench_bench_ops_LDADD = examples/libcatalogue.la $(BENCH_LIBS)
bench_bench_ops_CPPFLAGS = $(AM_CPPFLAGS) $(TREE_CPPFLAGS)

if HAVE_OPENBLAS
noinst_PROGRAMS += bench/bench_matmul
bench_bench_matmul_SOURCES = bench/bench_matmul.c $(BENCH_COMMON)
bench_bench_matmul_LDADD = $(BENCH_LIBS) $(BLAS_LIBS)
endif

if HAVE_DNNL
noinst_PROGRAMS += bench/bench_conv
bench_bench_conv_SOURCES = bench/bench_conv.c bench/tuned.c bench/tuned.h \
	$(BENCH_COMMON)
bench_bench_conv_LDADD = $(BENCH_LIBS) $(DNNL_LIBS)
endif

EXTRA_DIST += bench/run.sh bench/results.md

# A look inside one static schedule: estimate, nest, IR, assembly, time.
noinst_PROGRAMS += bench/bench_probe
bench_bench_probe_SOURCES = bench/bench_probe.c $(BENCH_COMMON)
bench_bench_probe_LDADD = examples/libcatalogue.la $(BENCH_LIBS)
include $(srcdir)/bench/network.mk

# Tuned matmul against OpenBLAS and the static schedule, with the time
# tuning took.
if HAVE_OPENBLAS
noinst_PROGRAMS += bench/bench_tune
bench_bench_tune_SOURCES = bench/bench_tune.c bench/tuned.c bench/tuned.h \
	$(BENCH_COMMON)
bench_bench_tune_LDADD = $(BENCH_LIBS) $(BLAS_LIBS)
endif

# The corpus' writing styles at real sizes: one statement against stages,
# naive against static (and tuned).
noinst_PROGRAMS += bench/bench_styles
bench_bench_styles_SOURCES = bench/bench_styles.c tests/corpus/gen.c \
	tests/corpus/gen.h bench/tuned.c bench/tuned.h $(BENCH_COMMON)
bench_bench_styles_LDADD = $(BENCH_LIBS)
EXTRA_DIST += bench/bench_styles_torch.py bench/inner_loop.py \
	bench/bench_memory.py

# How well the model ranks: Kendall tau of estimates against measured
# times over a fixed sample of configurations per catalogue case.
noinst_PROGRAMS += bench/bench_model
bench_bench_model_SOURCES = bench/bench_model.c $(BENCH_COMMON)
bench_bench_model_LDADD = examples/libcatalogue.la $(BENCH_LIBS)

# CUDA kernels on the device against cuBLAS, cuDNN and the copy bandwidth
# (the libraries are loaded at run time; exit 2 without a device).
if HAVE_CUDA
noinst_PROGRAMS += bench/bench_gpu
bench_bench_gpu_SOURCES = bench/bench_gpu.c $(BENCH_COMMON)
bench_bench_gpu_LDADD = $(BENCH_LIBS) -ldl
endif
