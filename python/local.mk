# python/: the tessel package for Python, over the installed libtessel.
EXTRA_DIST += python/tessel/__init__.py python/tessel/_capi.py python/call.c
if HAVE_PYTHON
tesselpydir = $(pythondir)/tessel
tesselpy_PYTHON = python/tessel/__init__.py python/tessel/_capi.py
if HAVE_PYTHON_EXT
# The call path (python/call.c): a module that links only Python.
tesselpyexecdir = $(pyexecdir)/tessel
tesselpyexec_LTLIBRARIES = python/_call.la
python__call_la_SOURCES = python/call.c
python__call_la_CPPFLAGS = $(PYTHON_EXT_CPPFLAGS)
python__call_la_CFLAGS = -std=c11 $(TS_WARN_CFLAGS)
python__call_la_LDFLAGS = -module -avoid-version -shared
endif
endif
