# backends/: the network executor (modules per task, memory plan).
libtessel_la_SOURCES += backends/executor.c backends/network_aot.c
