# search/: measuring candidates in a worker process, and tuning records.
libtessel_la_SOURCES += search/measure.c search/measure_worker.c search/measure_mpi.c \
	search/measure_internal.h search/records.c
tesselinclude_HEADERS += include/tessel/measure.h include/tessel/records.h
EXTRA_DIST += doc/records.md
