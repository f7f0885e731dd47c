# search/: files are listed here as they are added.

# The static filling of GPU spaces.
libtessel_la_SOURCES += search/gpu_model.c
include $(srcdir)/search/static.mk
include $(srcdir)/search/tuner.mk
include $(srcdir)/search/tune.mk
