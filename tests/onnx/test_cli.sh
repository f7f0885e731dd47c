#!/bin/sh
# The ONNX front door of the command line: tessel import, every verb on an
# .onnx file, --shape, weights fed from the model, and bad files (exit 2
# with the message).  The models are the small ones of the importer's fuzz
# corpus.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
tessel="$builddir/tools/tessel"
models="$srcdir/tests/fuzz/corpus/onnx"
failures=0

"$tessel" import --help | grep -q 'usage: tessel import' ||
	{ echo "SKIP: no tessel import"; exit 77; }
if ! "$tessel" import "$models/gemm.onnx" >/dev/null 2>&1; then
	"$tessel" import "$models/gemm.onnx" 2>&1 | grep -q 'cannot read ONNX' &&
		{ echo "SKIP: this build cannot read ONNX files"; exit 77; }
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-onnx.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# expect CODE PATTERN COMMAND...: the exit code, and PATTERN in its
# output (stdout and stderr together).
expect() {
	code=$1 pattern=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" -eq "$code" ] || fail "$* exited $rc, expected $code: $out"
	printf '%s\n' "$out" | grep -q -- "$pattern" ||
		fail "$*: no '$pattern' in: $out"
}

# A symbolic batch needs --shape, which either form gives.
expect 2 "symbolic dimension 'batch'.*--shape x=DIMS or --shape batch=N" \
	"$tessel" import "$models/relu.onnx"
expect 0 'input x: f32\[3, 4\]' "$tessel" import "$models/relu.onnx" \
	--shape batch=3
expect 0 'input x: f32\[2, 4\]' "$tessel" import --shape=x=2x4 \
	"$models/relu.onnx"
expect 2 '--shape needs NAME=DIMS' "$tessel" run "$models/relu.onnx" \
	--shape 3
expect 2 'expected dimensions like 1x3x224x224' "$tessel" eval \
	"$models/relu.onnx" --shape x=2xq

# import -o: the program and the weights, which eval and run read back.
expect 0 'g/gemm.tsl: 2 stages, 1 inputs, 2 weights' \
	"$tessel" import "$models/gemm.onnx" -o "$tmp/g"
[ -f "$tmp/g/W.npy" ] && [ -f "$tmp/g/b.npy" ] || fail "no weights in $tmp/g"
grep -q '^weight W: f32\[4, 3\]$' "$tmp/g/gemm.tsl" || fail "no weight W"
grep -q "^# node 0: Gemm(alpha=0.5, transB=0)$" "$tmp/g/gemm.tsl" ||
	fail "no comment naming the node"

# x = ones(2, 4): y = 0.5 * x @ W + 1 with W = arange(12).reshape(4, 3)
# is 10, 12, 14 on each row.  --inputs holds x only: the weights come
# from the model; from the imported folder, the same.
mkdir -p "$tmp/in"
{
	printf '\223NUMPY\001\000\166\000'
	printf "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
	printf '%*s\n' 58 ''
	for i in 1 2 3 4 5 6 7 8; do printf '\000\000\200\077'; done
} >"$tmp/in/x.npy"
for prog in "$models/gemm.onnx" "$tmp/g/gemm.tsl"; do
	[ "$prog" = "$tmp/g/gemm.tsl" ] && cp "$tmp/in/x.npy" "$tmp/g/"
	dir=$tmp/in
	[ "$prog" = "$tmp/g/gemm.tsl" ] && dir=$tmp/g
	rm -rf "$tmp/out"
	expect 0 'check: pass' "$tessel" run "$prog" --check --inputs "$dir" \
		--out "$tmp/out"
	got=$(od -An -f -j 128 "$tmp/out/y.npy" | tr -s ' \n' ' ')
	[ "$got" = " 10 12 14 10 12 14 " ] || fail "$prog: y is '$got'"
done

# An input called "input" in the model, as PyTorch calls it, is
# "input_1" in the program; --inputs reads input.npy when only that file
# is there (and input_1.npy before it when both are).
rm -rf "$tmp/named" && mkdir -p "$tmp/named"
{
	printf '\223NUMPY\001\000\166\000'
	printf "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	printf '%*s\n' 58 ''
	for i in 1 2 3; do printf '\000\000\200\077\000\000\200\277'; done
} >"$tmp/named/input.npy"
expect 0 'check: pass' "$tessel" run "$models/input_named_input.onnx" \
	--check --inputs "$tmp/named" --out "$tmp/named_out"
got=$(od -An -f -j 128 "$tmp/named_out/output_1.npy" | tr -s ' \n' ' ')
[ "$got" = " 1 0 1 0 1 0 " ] || fail "input named input: output is '$got'"
rm -f "$tmp/named/input.npy"
expect 2 "input 'input_1'" "$tessel" run "$models/input_named_input.onnx" \
	--inputs "$tmp/named"

# Every verb takes the model.
expect 0 'y f32\[2, 3\]' "$tessel" eval "$models/gemm.onnx" --out "$tmp/e"
expect 0 'complex_reduction' "$tessel" analyze "$models/gemm.onnx"
expect 0 'y' "$tessel" schedule "$models/gemm.onnx"
expect 0 'tasks' "$tessel" tasks "$models/reshape.onnx"
expect 0 'W.npy\|weights of the model' "$tessel" build "$models/gemm.onnx" \
	-o "$tmp/b"
[ -f "$tmp/b/W.npy" ] || fail "build wrote no weights"
expect 0 'static' "$tessel" tune "$models/gemm.onnx" --trials 2 \
	--log "$tmp/t.json"

# Bad files: one message, exit 2.
head -c 40 "$models/gemm.onnx" >"$tmp/cut.onnx"
expect 2 'cut.onnx: not an ONNX model (the file is truncated' \
	"$tessel" run "$tmp/cut.onnx"
printf 'not a model' >"$tmp/text.onnx"
expect 2 'text.onnx: not an ONNX model' "$tessel" import "$tmp/text.onnx"
expect 2 'missing.onnx: No such file' "$tessel" schedule "$tmp/missing.onnx"
expect 2 'expected an .onnx file' "$tessel" import "$srcdir/examples/matmul.tsl"

[ "$failures" -eq 0 ] || exit 1
echo "ok: tessel import and every verb on .onnx files"
