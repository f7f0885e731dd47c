#!/bin/sh
# tessel hw: the JSON printed for the host and for every shipped target
# reads back (--target FILE) to the same JSON; bad names are errors; a
# calibration of this machine writes a description that reads back, with
# every measured number in a plausible range.
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
rc=0
"$tessel" hw --calibrate --target zen3 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "calibrate measures the CPU this runs on" "$tmp/err"

# Calibration: x86-64 and AArch64 have measuring kernels.
case "$(uname -m)" in
x86_64|aarch64)
	"$tessel" hw --calibrate -o "$tmp/cal.json" 2> "$tmp/log"
	grep -q "DRAM read, all cores" "$tmp/log"
	"$tessel" hw --json --target "$tmp/cal.json" > "$tmp/b.json"
	cmp -s "$tmp/cal.json" "$tmp/b.json"
	grep -q '"source": "clock, FMA peak, cache and memory bandwidths' \
		"$tmp/cal.json"
	# clock 0.5 to 8 GHz; a core reads L1 faster than DRAM
	awk -F'[:,]' '
		/"frequency_ghz"/ { f = $2 }
		/"l1d"/ { for (i = 1; i <= NF; i++)
			if ($i ~ /bytes_per_cycle/) l1 = $(i + 1) }
		/"dram_gbs_core"/ { d = $2 }
		/"peak_gflops_f32_core"/ { p = $2 }
		END { exit !(f > 0.5 && f < 8 && p > 1 && d > 0.1 &&
			l1 * f > 2 * d) }' "$tmp/cal.json"
	calibrated=", a calibration"
	;;
*)
	calibrated=""
	;;
esac
echo "tessel hw: round trip of 8 descriptions$calibrated and 3 errors checked"
