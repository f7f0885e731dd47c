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
# The package against the build tree (tests/python/run.sh): SKIP without
# python3, NumPy, or for the PyTorch tests python3-torch.
EXTRA_DIST += tests/python/run.sh tests/python/test_numpy.py \
	tests/python/test_torch.py tests/python/test_numpy.sh \
	tests/python/test_torch.sh bench/bench_python_call.py
TESTS += tests/python/test_numpy.sh tests/python/test_torch.sh
AM_TESTS_ENVIRONMENT += PYTHON='$(PYTHON)'; export PYTHON;
