# metatemplates/: knob spaces, configurations and the meta-templates.
libtessel_la_SOURCES += metatemplates/space.c metatemplates/template.c \
	metatemplates/facts.c metatemplates/facts.h
tesselinclude_HEADERS += include/tessel/space.h
