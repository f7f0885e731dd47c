#!/bin/sh
# The Python package with NumPy: tests/python/test_numpy.py.
exec sh "${TS_SRCDIR:-.}/tests/python/run.sh" test_numpy
