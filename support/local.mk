# support/: what every folder uses and none owns (memory, strings,
# buffers, hashing, contexts, where the runtime files are).
libtessel_la_SOURCES += \
	support/support.h \
	support/ctx.c \
	support/util.c \
	support/paths.c
tesselinclude_HEADERS += include/tessel/tessel.h include/tessel/ownership.h
