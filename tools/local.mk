# tools/: the tessel command line.  Each verb is one file cmd_<verb>.c,
# listed here and in the table of tools/tessel.c.
bin_PROGRAMS += tools/tessel
tools_tessel_SOURCES = tools/tessel.c tools/commands.h
tools_tessel_LDADD = libtessel.la $(GC_LIBS)
tools_tessel_SOURCES += tools/cmd_hw.c
tools_tessel_SOURCES += tools/cmd_eval.c
tools_tessel_SOURCES += tools/cuda_tool.c
tools_tessel_SOURCES += tools/cmd_analyze.c
tools_tessel_LDADD += $(JANSSON_LIBS)
tools_tessel_SOURCES += tools/cmd_run.c tools/network_tool.h
tools_tessel_SOURCES += tools/cmd_build.c
tools_tessel_SOURCES += tools/cmd_schedule.c
tools_tessel_SOURCES += tools/cmd_tasks.c
tools_tessel_SOURCES += tools/cmd_measure_worker.c
tools_tessel_SOURCES += tools/cmd_tune.c
tools_tessel_SOURCES += tools/options.c tools/options.h
tools_tessel_SOURCES += tools/tool_records.c
tools_tessel_SOURCES += tools/tool_npy.c
tools_tessel_SOURCES += tools/tool_source.c tools/cmd_import.c
