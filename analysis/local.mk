# analysis/: isl models of stages (instances, accesses, guards), footprints,
# bounds checks, counts, classification.
libtessel_la_SOURCES += \
	analysis/internal.h \
	analysis/isl.c \
	analysis/affine.c \
	analysis/model.c \
	analysis/footprint.c \
	analysis/quasi.c
tesselinclude_HEADERS += include/tessel/analysis.h
libtessel_la_SOURCES += \
	analysis/access.c \
	analysis/count.c \
	analysis/bounds.c \
	analysis/classify.c \
	analysis/info.c \
	analysis/traffic.c \
	analysis/facts.c \
	analysis/facts.h
