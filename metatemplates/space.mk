# metatemplates/: knob spaces and configurations.
libtessel_la_SOURCES += metatemplates/space.c
tesselinclude_HEADERS += include/tessel/space.h
