#!/bin/sh
# Modules and a small network exported from PyTorch to ONNX, run by
# tessel run and compared with PyTorch: the quick set of
# tests/onnx/torch_models.py (under a minute).  Skipped without a
# python3 that has torch, or a tessel that cannot read ONNX files.
set -u

srcdir=${TS_SRCDIR:-.}
builddir=${TS_BUILDDIR:-.}
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import numpy, torch' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with torch and numpy"; exit 77; }
if ! "$builddir/tools/tessel" import \
	"$srcdir/tests/fuzz/corpus/onnx/gemm.onnx" >/dev/null 2>&1; then
	echo "SKIP: this tessel cannot read ONNX files"
	exit 77
fi
exec "$py" "$srcdir/tests/onnx/torch_models.py" --build "$builddir" \
	--cases quick
