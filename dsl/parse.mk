# dsl: the .tsl text front end (lexer, parser and builder in one file).
libtessel_la_SOURCES += dsl/parse.c
