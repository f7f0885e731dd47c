#!/bin/sh
# Run every libFuzzer target for a bounded number of inputs from its seed
# corpus in tests/fuzz/corpus/<target>/.  New inputs go to a scratch
# folder, so the corpus in the source tree never changes.  SKIP (77) when
# configure found no clang with libFuzzer.
#
# A count of inputs and a fixed seed, not a time, bound each run, so the
# same build explores the same inputs on a fast machine and a slow one and
# make check's verdict does not depend on the machine's speed (each count
# takes 15 to 25 s on the machines it was tried on).  TS_FUZZ_SECONDS=N runs each target for N
# seconds instead (for long runs: TS_FUZZ_SECONDS=600), TS_FUZZ_SEED sets
# the seed (default 1), TS_FUZZ_TARGETS the targets to run.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
seconds=${TS_FUZZ_SECONDS:-}
seed=${TS_FUZZ_SEED:-1}
targets=${TS_FUZZ_TARGETS:-"parse npy target_json schedule_json records"}
# The ONNX importer's target exists in builds that read ONNX.
if [ -z "${TS_FUZZ_TARGETS:-}" ] && [ -x "$builddir/tests/fuzz/fuzz_onnx" ]; then
	targets="$targets onnx"
fi
failures=0

for t in $targets; do
	if [ ! -x "$builddir/tests/fuzz/fuzz_$t" ]; then
		echo "SKIP: tests/fuzz/fuzz_$t not built (no clang with libFuzzer)"
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-fuzz.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# Objects of the DSL live in the collector's heap, which LeakSanitizer
# does not scan: leak reports would be about memory it cannot see.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

# The inputs each target runs in make check.
runs_of() {
	case "$1" in
	parse) echo 300000 ;;
	npy) echo 300000 ;;
	target_json) echo 1000000 ;;
	schedule_json) echo 100000 ;;
	onnx) echo 60000 ;;
	*) echo 150000 ;;
	esac
}

for t in $targets; do
	mkdir -p "$tmp/$t"
	if [ -n "$seconds" ]; then
		bound="-max_total_time=$seconds"
		echo "fuzz_$t: $seconds s from $srcdir/tests/fuzz/corpus/$t"
	else
		bound="-runs=$(runs_of "$t")"
		echo "fuzz_$t: $(runs_of "$t") inputs from" \
			"$srcdir/tests/fuzz/corpus/$t"
	fi
	(cd "$tmp" && TMPDIR="$tmp" "$builddir/tests/fuzz/fuzz_$t" \
		"$bound" -seed="$seed" -timeout=20 -rss_limit_mb=3072 \
		-max_len=8192 -print_final_stats=1 \
		-artifact_prefix="$tmp/crash-$t-" \
		"$tmp/$t" "$srcdir/tests/fuzz/corpus/$t") >"$tmp/$t.log" 2>&1
	rc=$?
	grep -E "^(stat::number_of_executed_units|Done)" "$tmp/$t.log"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: fuzz_$t exited with $rc"
		tail -n 60 "$tmp/$t.log"
		for f in "$tmp"/crash-"$t"-*; do
			[ -f "$f" ] || continue
			echo "input $f:"
			od -c "$f" | head -n 20
		done
		failures=$((failures + 1))
	fi
done
[ "$failures" -eq 0 ] || exit 1
exit 0
