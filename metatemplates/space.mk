# metatemplates/: knob spaces, configurations and the meta-templates.
libtessel_la_SOURCES += metatemplates/space.c metatemplates/rules.c \
	metatemplates/rules.h metatemplates/template.c
tesselinclude_HEADERS += include/tessel/space.h
