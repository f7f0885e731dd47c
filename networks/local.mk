# networks/: a network as a whole: partition into subgraphs and tasks,
# the graph-level layout choice, the task scheduler that shares a tuning
# budget, the executor over planned buffers, and network AOT libraries.
libtessel_la_SOURCES += networks/network_internal.h networks/partition.c \
	networks/layout.c networks/layout_record.c networks/taskscheduler.c networks/executor.c \
	networks/network_aot.c
tesselinclude_HEADERS += include/tessel/network.h
