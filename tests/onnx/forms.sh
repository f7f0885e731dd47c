#!/bin/sh
# The operator forms that ONNX's backend tests leave out (tests/onnx/
# forms.py writes them as test folders), through the importer, the
# interpreter and the compiled kernels: every folder must pass.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
python=/usr/bin/python3

[ -x "$python" ] && "$python" -c 'import onnx, numpy' 2>/dev/null ||
	{ echo "SKIP: no python3 with onnx and numpy"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/tessel-forms.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
"$python" "$srcdir/tests/onnx/forms.py" "$dir" || exit 99
out=$("$builddir/tests/onnx/conformance" "$dir")
rc=$?
echo "$out"
[ $rc -eq 0 ] || exit 1
echo "$out" | grep -q '^1\.\.0' && exit 1
echo "$out" | grep -Eq '^not ok|# SKIP' && exit 1
exit 0
