#!/bin/sh
# tessel tune under mpirun: a 3-rank run measures on ranks 1 and 2 and
# logs every trial; a run where rank 2 dies after 5 measurements, and
# one where it stops answering, still log every trial, each a valid
# record; a log resumes with another number of ranks; a rank whose
# target differs from rank 0's is refused with a message.  Skipped
# without MPI.
set -e
tessel="${TS_BUILDDIR:-.}/tools/tessel"
mpirun="${MPIRUN:-mpirun}"
grep -q '^#define TS_HAVE_MPI 1' "${TS_BUILDDIR:-.}/config.h" || exit 77
command -v "$mpirun" > /dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --enable-recovery: without it Open MPI's launcher ends the whole job
# when one rank dies; --stdin none: with a rank dead, a launcher that
# forwards its standard input to rank 0 does not end.
mpi="--oversubscribe --allow-run-as-root --enable-recovery --stdin none"
run() {
	np=$1
	shift
	timeout 300 "$mpirun" $mpi -np "$np" "$@" < /dev/null
}

cat > "$tmp/mm.tsl" <<'TSL'
input A: f32[32, 24]
input B: f32[24, 40]
output C[i: 32, j: 40] = sum(k: 24) A[i, k] * B[k, j]
TSL

# "log N": every line of the log a valid record without error; N lines.
log() {
	python3 - "$tmp/mm.jsonl" "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == int(sys.argv[2]), (len(lines), sys.argv[2])
seen = set()
for l in lines:
    r = json.loads(l)
    for k in ("version", "workload", "target", "config", "schedule",
              "times", "median_s", "error", "build_s", "seed"):
        assert k in r, k
    assert r["error"] == "none" and r["median_s"] > 0, r
    seen.add(json.dumps(r["config"], sort_keys=True))
assert len(seen) == len(lines), "a configuration measured twice"
PY
}

run 3 "$tessel" tune "$tmp/mm.tsl" --trials 24 --batch 8 --verify 0 \
	--log "$tmp/mm.jsonl" > "$tmp/out" 2> "$tmp/err"
grep -q "measuring on 2 of 3 ranks" "$tmp/err"
grep -q "^mm .* 24  " "$tmp/out"
! grep -q "lost" "$tmp/err"
log 24

# resumed with 2 ranks: the 24 records are reused, 8 more appended
run 2 "$tessel" tune "$tmp/mm.tsl" --trials 8 --batch 8 --verify 0 \
	--log "$tmp/mm.jsonl" --quiet > "$tmp/out" 2> "$tmp/err"
grep -q "(24 records resumed from the log)" "$tmp/out"
log 32

# rank 2 dies when given its 6th candidate: that one goes to rank 1
rm -f "$tmp/mm.jsonl"
TS_MPI_FAULT=2:exit:5 run 3 "$tessel" tune "$tmp/mm.tsl" --trials 24 \
	--batch 8 --verify 0 --log "$tmp/mm.jsonl" --quiet > "$tmp/out" \
	2> "$tmp/err"
grep -q "rank 2 (.*) has died: it is left out, and its candidate is measured again elsewhere" "$tmp/err"
grep -q "1 rank lost; 1 still measuring" "$tmp/err"
grep -q "^mm .* 24  " "$tmp/out"
log 24

# rank 2 stops answering at its 4th candidate: past the deadline (3 s
# here) it is left out; it leaves at its idle timeout
rm -f "$tmp/mm.jsonl"
TS_MPI_FAULT=2:hang:3 TS_MPI_TIMEOUT=3 TS_MPI_IDLE_TIMEOUT=6 run 3 \
	"$tessel" tune "$tmp/mm.tsl" --trials 16 --batch 8 --verify 0 \
	--log "$tmp/mm.jsonl" --quiet > "$tmp/out" 2> "$tmp/err"
grep -q "rank 2 (.*) did not answer in time: it is left out" "$tmp/err"
grep -q "^mm .* 16  " "$tmp/out"
log 16

# rank 2 tunes for another target: refused, ranks 0 and 1 go on
rm -f "$tmp/mm.jsonl"
timeout 300 "$mpirun" $mpi -np 2 "$tessel" tune "$tmp/mm.tsl" --trials 8 --batch 4 --verify 0 \
	--log "$tmp/mm.jsonl" : \
	-np 1 "$tessel" tune "$tmp/mm.tsl" --trials 8 --batch 4 --verify 0 \
	--target zen3 --quiet < /dev/null > "$tmp/out" 2> "$tmp/err"
grep -q "rank 2 (.*) refused: its target is 'zen3-[0-9a-f]*', rank 0's is 'host-[0-9a-f]*': it measures nothing" "$tmp/err"
grep -q "measuring on 1 of 3 ranks" "$tmp/err"
grep -q "mpi: rank 2 refused: its target is 'zen3" "$tmp/err"
grep -q "^mm .* 8  " "$tmp/out"
log 8
