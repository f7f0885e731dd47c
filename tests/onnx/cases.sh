#!/bin/sh
# The operator cases that ONNX's node tests leave out, written as test
# folders in ONNX's layout with NumPy's expected outputs by the
# generators beside this script, and run by the conformance program:
#   forms.py         attribute forms of older opsets, negative steps, ...
#   reduce_cases.py  reductions, normalisations, softmax, Einsum
#   nn_cases.py      convolutions, pools, quantized operators
#   misc_cases.py    losses, scatters, TopK, recurrent layers, GridSample
# Every case is supported: a refusal fails too.  Skipped without a
# python3 that has onnx and numpy.
set -u

srcdir=${TS_SRCDIR:-.}
builddir=${TS_BUILDDIR:-.}
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import numpy, onnx' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with onnx and numpy"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/tessel-cases.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
failures=0
for gen in forms reduce_cases nn_cases misc_cases; do
	mkdir -p "$dir/$gen"
	"$py" "$srcdir/tests/onnx/$gen.py" "$dir/$gen" || exit 99
	out=$("$builddir/tests/onnx/conformance" "$dir/$gen/")
	rc=$?
	echo "$gen: $(echo "$out" | tail -n 1)"
	if [ $rc -ne 0 ] || echo "$out" | grep -Eq '^1\.\.0|^not ok|# SKIP'; then
		echo "$out" | grep -E '^1\.\.0|^not ok|# SKIP'
		failures=$((failures + 1))
	fi
done
[ "$failures" -eq 0 ]
