# search/: networks: partition into tasks, graph-level layout choice.
libtessel_la_SOURCES += search/partition.c search/network_internal.h search/layout.c \
	search/taskscheduler.c
tesselinclude_HEADERS += include/tessel/network.h
