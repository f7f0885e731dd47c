#!/bin/sh
# tessel tune: a short run writes the summary, the log and the curve;
# a second run resumes from the log; bad usage is an error; the best
# record applies through tessel run --records when that option exists.
set -e
tessel="${TS_BUILDDIR:-.}/tools/tessel"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/mm.tsl" <<'TSL'
input A: f32[32, 24]
input B: f32[24, 40]
output C[i: 32, j: 40] = sum(k: 24) A[i, k] * B[k, j]
TSL

"$tessel" tune "$tmp/mm.tsl" --trials 8 --batch 4 --log "$tmp/mm.jsonl" \
	--verify 0 > "$tmp/out" 2> "$tmp/err"
grep -q "^task  *naive ms  *static ms  *tuned ms  *speedup" "$tmp/out"
grep -q "^mm  *[0-9.]*  *[0-9.-]*  *[0-9.]*  *[0-9.-]*x* .* 8  *[0-9.]* " "$tmp/out"
grep -q "8/8  best [0-9.]* ms" "$tmp/err"
# where the time went: every measurement a trial, none compared again
grep -q "^time [0-9.]* s: search [0-9.]* s, measuring [0-9.]* s ([0-9]* of 8 candidates built while another ran), final comparison 0.0 s (0 runs)$" "$tmp/out"
test "$(wc -l < "$tmp/mm.jsonl")" = 8
test "$(head -1 "$tmp/mm.csv")" = "trial,best_s"
test "$(wc -l < "$tmp/mm.csv")" = 9
# the curve: the best so far as a step ("M", then "H" and "V" only), on
# a time axis from 0, the naive and static times as labelled reference
# lines (naive may be off the scale), the tuned time and the gain
svg=$tmp/mm.svg
grep -q '<path class="best" fill="none" stroke="#1f77b4" stroke-width="2" d="M[0-9.]* [0-9.]* \(H[0-9.]* V[0-9.]* \)*H[0-9.]*"/>' "$svg"
if grep -q "<polyline" "$svg"; then echo "the curve is a polyline"; exit 1; fi
grep -q 'class="ytick" [^>]*>0</text>' "$svg"
grep -q '<line class="ref-static" ' "$svg"
grep -q '<text class="ref-static" [^>]*>static [0-9.e-]* ms</text>' "$svg"
grep -q '<text class="ref-naive" [^>]*>naive [0-9.e-]* ms\( (off the scale)\)*</text>' "$svg"
grep -q '<text class="gain" [^>]*>tuned [0-9.e-]* ms: [0-9.]*% \(faster\|slower\) than static, [0-9.]*x faster than naive</text>' "$svg"

# resume: the 8 records are reused, 4 new measurements are appended,
# then the 2 best (and the static choice, unless one of them) are
# measured again and appended too, unless no candidate came within the
# margin of the static choice (on a loaded machine it may not): then
# nothing is compared again and the output says so
"$tessel" tune "$tmp/mm.tsl" --trials 4 --batch 4 --log "$tmp/mm.jsonl" \
	--verify 2 --quiet > "$tmp/out" 2> "$tmp/err"
grep -q "(8 records resumed from the log)" "$tmp/out"
lines=$(wc -l < "$tmp/mm.jsonl")
if grep -q "^kept: the static schedule; no candidate was faster" "$tmp/out"
then
	test "$lines" = 12
else
	test "$lines" = 14 || test "$lines" = 15
fi
# each schedule compared again is measured three times
grep -q "final comparison [0-9.]* s ($((3 * (lines - 12))) runs)$" "$tmp/out"
test ! -s "$tmp/err" || ! grep -q "\[#" "$tmp/err"

# hardware-guided top-k
"$tessel" tune "$tmp/mm.tsl" --topk 3 --quiet > "$tmp/out"
grep -q "^mm .* 3  " "$tmp/out"
"$tessel" tune "$tmp/mm.tsl" --quiet --topk > "$tmp/out"
grep -q "^mm .* 10  " "$tmp/out"

rc=0
"$tessel" tune "$tmp/mm.tsl" --trials 0 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "bad value '0' for --trials" "$tmp/err"
rc=0
"$tessel" tune "$tmp/nope.tsl" 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "nope.tsl" "$tmp/err"
rc=0
"$tessel" tune "$tmp/mm.tsl" --target h100 2> "$tmp/err" || rc=$?
test "$rc" = 2
grep -q "target 'h100' is a gpu; tuning measures on this CPU" "$tmp/err"

# the static baseline of the tuner is the schedule of run --schedule
# static for the same threads and seed
for th in 1 2; do
	"$tessel" tune "$tmp/mm.tsl" --trials 2 --batch 2 --verify 0 \
		--threads $th --quiet > "$tmp/out"
	grep -q "^kept: the " "$tmp/out"
	h=$(sed -n 's/^static baseline: schedule \([0-9a-f]*\), .*/\1/p' \
		"$tmp/out")
	test -n "$h"
	"$tessel" run "$tmp/mm.tsl" --schedule static --threads $th --json \
		--min-time 0 > "$tmp/out"
	grep -q "\"schedule_hash\": \"$h\"" "$tmp/out"
done

if "$tessel" run --help | grep -q -- "--records"; then
	# the tuner measured with 1 thread: its records are for the host
	# with 1 core
	"$tessel" run "$tmp/mm.tsl" --records "$tmp/mm.jsonl" --threads 1 \
		--check > "$tmp/out" 2> "$tmp/err"
	grep -q "check: pass" "$tmp/out"
	grep -q "schedule of the record at $tmp/mm.jsonl:[0-9]*" "$tmp/err"
	echo "tessel tune: run, resume, top-k, 3 errors and run --records checked"
else
	echo "tessel tune: run, resume, top-k and 3 errors checked" \
		"(tessel run has no --records: not checked)"
fi
