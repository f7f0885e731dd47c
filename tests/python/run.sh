#!/bin/sh
# Run one Python test file (tests/python/NAME.py) against the build tree:
# libtessel from .libs (TESSEL_LIBRARY), the C call path from
# python/.libs (TESSEL_CALL_MODULE), the package from the source tree.
# Exit 77 (SKIP) when what the file needs is missing: python3, NumPy,
# and for the PyTorch tests python3-torch and ONNX import.
name=$1
py=${PYTHON:-/usr/bin/python3}
src=$(cd "${TS_SRCDIR:-.}" && pwd)
build=$(cd "${TS_BUILDDIR:-.}" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$py" != : ] && command -v "$py" >/dev/null 2>&1 || skip "no python3"
"$py" -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
if [ "$name" = test_torch ]; then
	"$py" -c 'import torch' 2>/dev/null || skip "python3-torch is not installed"
fi
lib=$build/.libs/libtessel.so.0
[ -f "$lib" ] || skip "no shared libtessel in $build/.libs"
# A library built with the sanitizers cannot be loaded into python3.
if command -v ldd >/dev/null && ldd "$lib" | grep -q libasan; then
	skip "libtessel is built with the sanitizers"
fi
TESSEL_LIBRARY=$lib
TESSEL_CALL_MODULE=$build/python/.libs/_call.so
[ -f "$TESSEL_CALL_MODULE" ] || TESSEL_CALL_MODULE=
PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export TESSEL_LIBRARY TESSEL_CALL_MODULE PYTHONPATH
if [ "$name" = test_torch ]; then
	"$py" -c 'import sys, tessel; sys.exit(not tessel._capi.lib.ts_onnx_available())' ||
		skip "libtessel is built without ONNX import"
fi
cd "$src/tests/python" || exit 99
exec "$py" -m unittest -v "$name"
