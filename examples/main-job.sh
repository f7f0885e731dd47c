#!/bin/sh
# The main job of ./build.sh main: statically schedule the bundled
# LeNet-like network and a 1024x1024x1024 matmul for this machine (no
# measurement involved in the choice), check both against the reference
# interpreter, and print their time and speedup over the naive schedule.
set -eu
cd "$(dirname "$0")/.."
tessel=${TESSEL:-./tools/tessel}

median() {
	sed -n 's/.*"median_ms": \([0-9.e+-]*\).*/\1/p'
}

$tessel hw | head -n 3
for f in examples/lenet.tsl examples/matmul.tsl; do
	echo
	echo "== $f"
	$tessel schedule "$f" | sed -n '/^knobs:/p'
	s=$($tessel run "$f" --schedule static --check --json)
	echo "static: $s"
	n=$($tessel run "$f" --schedule naive --min-time 0 --json)
	echo "naive:  $n"
	echo "$s" | grep -q '"passed": true' || { echo "check failed"; exit 1; }
	awk -v s="$(echo "$s" | median)" -v n="$(echo "$n" | median)" \
		'BEGIN { printf "static %.3f ms, naive %.3f ms: %.1fx faster\n", s, n, n / s }'
done
