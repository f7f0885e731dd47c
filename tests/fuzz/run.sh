#!/bin/sh
# Run every libFuzzer target for a bounded time from its seed corpus in
# tests/fuzz/corpus/<target>/.  New inputs go to a scratch folder, so the
# corpus in the source tree never changes.  SKIP (77) when configure
# found no clang with libFuzzer.  TS_FUZZ_SECONDS sets the time of each
# target (default 25), TS_FUZZ_TARGETS the targets to run.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
seconds=${TS_FUZZ_SECONDS:-25}
targets=${TS_FUZZ_TARGETS:-"parse npy target_json schedule_json records"}
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

for t in $targets; do
	mkdir -p "$tmp/$t"
	echo "fuzz_$t: $seconds s from $srcdir/tests/fuzz/corpus/$t"
	(cd "$tmp" && TMPDIR="$tmp" "$builddir/tests/fuzz/fuzz_$t" \
		-max_total_time="$seconds" -seed=1 -timeout=20 -rss_limit_mb=3072 \
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
