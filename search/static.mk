# search/: the analytical model and static filling.
libtessel_la_SOURCES += search/model.c search/model.h search/static.c
tesselinclude_HEADERS += include/tessel/search.h include/tessel/metatemplate.h
