#!/bin/sh
# tessel hw: the JSON printed for the host and for every shipped target
# reads back (--target FILE) to the same JSON; bad names are errors.
set -e
tessel="${TS_BUILDDIR:-.}/tools/tessel"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in host zen3 skylake-sp neoverse-n1 apple-m1 v100 a100 h100; do
	if [ "$t" = host ]; then
		"$tessel" hw --json > "$tmp/a.json"
	else
		"$tessel" hw --json --target "$t" > "$tmp/a.json"
	fi
	"$tessel" hw --json --target "$tmp/a.json" > "$tmp/b.json"
	if ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
		echo "FAIL: $t does not read back identically" >&2
		diff "$tmp/a.json" "$tmp/b.json" >&2 || true
		exit 1
	fi
	"$tessel" hw --target "$tmp/a.json" > "$tmp/text"
	grep -q "^[a-z0-9-]*: [cg]pu target" "$tmp/text"
done

rc=0
"$tessel" hw --target nope 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "no target description named 'nope'" "$tmp/err"
rc=0
"$tessel" hw --frobnicate 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "bad argument '--frobnicate'" "$tmp/err"
echo "tessel hw: round trip of 8 descriptions and 2 errors checked"
