# metatemplates/: files are listed here as they are added.
include $(srcdir)/metatemplates/space.mk
# Schedules as data: steps, validation, printing and JSON.
libtessel_la_SOURCES += \
	metatemplates/ir.h \
	metatemplates/schedule_ops.h \
	metatemplates/schedule.c \
	metatemplates/schedule_json.c
tesselinclude_HEADERS += include/tessel/schedule.h
# GPU meta-templates (built with or without CUDA: they only make spaces).
libtessel_la_SOURCES += metatemplates/gpu.c
tesselinclude_HEADERS += include/tessel/gpu.h
