#!/bin/sh
# The losses, scatters, sorting, windows and recurrent layers in the
# cases that ONNX's node tests miss: tests/onnx/misc_cases.py writes them
# with their expected outputs, and the conformance program runs them.
# Skipped without a python3 that has onnx and numpy.
set -u

srcdir=${TS_SRCDIR:-.}
builddir=${TS_BUILDDIR:-.}
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import numpy, onnx' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with onnx and numpy"; exit 77; }
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
"$py" "$srcdir/tests/onnx/misc_cases.py" "$dir" || exit 99
out=$("$builddir/tests/onnx/conformance" "$dir/") || { echo "$out"; exit 1; }
echo "$out"
# Every case is supported: a refusal is a failure here.
! echo "$out" | grep -q '# SKIP'
