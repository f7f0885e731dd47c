# backends/: files are listed here as they are added.
include $(srcdir)/backends/llvm.mk
