# search/: tuning: features, the learned cost model, evolutionary search,
# the tuner and its curves.
libtessel_la_SOURCES += search/features.c search/costmodel.c \
	search/evolve.c search/tuner.c search/curve.c
tesselinclude_HEADERS += include/tessel/tune.h
