#!/bin/sh
# The cases of tests/onnx/reduce_cases.py (reductions, normalisations and
# Einsum beyond ONNX's own node tests) through the conformance runner:
# every one must pass, none be refused.  Skipped without NumPy and onnx.
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
[ -n "$py" ] || { echo "no python3 with numpy and onnx"; exit 77; }
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
"$py" "$srcdir/tests/onnx/reduce_cases.py" "$dir" || exit 99
"$builddir/tests/onnx/conformance" "$dir/" > "$dir/log" 2>&1
rc=$?
cat "$dir/log"
[ $rc -eq 0 ] || exit 1
if grep -q '# SKIP' "$dir/log"; then
	echo "refused cases above"
	exit 1
fi
exit 0
