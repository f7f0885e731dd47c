#!/bin/sh
# tessel tasks end to end: the task list of LeNet, the network run and
# checked through the executor, the library built ahead of time, the
# layout choice, and the messages of bad usage.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
tessel=$builddir/tools/tessel
examples=$srcdir/examples
failures=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-tasks.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# expect CODE NAME COMMAND...: run COMMAND with its output in
# $tmp/NAME.out and $tmp/NAME.err, and check its exit status.
expect() {
	want=$1 name=$2
	shift 2
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	got=$?
	[ "$got" -eq "$want" ] || fail "$name: exit $got, expected $want ($*)"
}

# has NAME FILE TEXT: FILE ($tmp/NAME.out or .err) contains TEXT.
has() {
	grep -q -- "$3" "$tmp/$1.$2" || fail "$1: no '$3' in its $2"
}

# On a named target: how many weights are blocked (a subgraph each)
# depends on the width of the vectors.  Nine subgraphs, and with AVX2 the
# conversions of the second convolution's 50 and the first dense layer's
# 500 output rows, padded to blocks of 8.  The layouts as declared: by
# default the model chooses them (below).
expect 0 list "$tessel" tasks --target zen3 --declared-layouts \
	"$examples/lenet.tsl"
has list out "11 subgraphs, 11 tasks"
has list out "task 0  anchor C1  class complex_reduction  weight 1  flops 576000"
has list out "stages: R1 (direct), P1 (simple_reduction)"

# On a named target, so that the blocking (32 lanes of f32 on AVX-512)
# does not depend on the machine running the test.
expect 0 resnet "$tessel" tasks --target skylake-sp --declared-layouts \
	"$examples/resnet18.tsl"
# 24 subgraphs and 22 tasks, and the conversions of the 20 convolutions'
# weights, blocked along their output channels (11 distinct shapes), and
# of the dense layer's, its 1000 rows padded to 1008 in blocks of 16.
has resnet out "45 subgraphs, 34 tasks, 3.636 GFLOP"
has resnet out "anchor L1a_A_C  class complex_reduction  weight 2"

# --dump writes each task's subgraph as a program of its own, which runs
# and checks alone; a --dump that is a file is refused.
expect 0 dump "$tessel" tasks --target zen3 --declared-layouts --dump \
	"$tmp/dump" "$examples/lenet.tsl"
has dump out "11 tasks written to $tmp/dump/"
[ "$(ls "$tmp/dump" | grep -c '^task[0-9]*\.tsl$')" = 11 ] ||
	fail "dump: not 11 task files in $tmp/dump"
grep -q "^# task 0 of the network: C1, weight 1" "$tmp/dump/task0.tsl" ||
	fail "dump: task0.tsl does not name its task"
expect 0 dumprun "$tessel" run "$tmp/dump/task0.tsl" --target zen3 \
	--check --min-time 0
has dumprun out "check: pass"
: >"$tmp/afile"
expect 2 dumpfile "$tessel" tasks --target zen3 --dump "$tmp/afile" \
	"$examples/lenet.tsl"
has dumpfile err "tessel tasks: --dump $tmp/afile is not a folder"

expect 0 run "$tessel" tasks --target zen3 --check --threads 1 --time 0.01 \
	"$examples/lenet.tsl"
has run out "check Y: ok"
has run out "memory: 10 intermediate buffers"
has run out "time: median"

expect 0 build "$tessel" tasks --build "$tmp" --threads 1 "$examples/mlp.tsl"
has build out "built $tmp/libmlp.so and $tmp/mlp.h"
[ -f "$tmp/libmlp.so" ] || fail "build: no libmlp.so"
grep -q "int mlp(const void \*const \*inputs, void \*const \*outputs);" \
	"$tmp/mlp.h" || fail "build: no entry point in mlp.h"

expect 0 layout "$tessel" tasks --layout --check --threads 1 \
	--records "$tmp/layout.jsonl" "$examples/lenet.tsl"
has layout out "layout: chosen"
has layout out "all NCHW"
has layout out "check Y: ok"
has layout err "layouts chosen by timing"
grep -q '"layout":{"choice":\[' "$tmp/layout.jsonl" ||
	fail "layout: no layout record in the log"

# The recorded layouts are replayed, not timed again, by every verb, and
# every verb compiles the same schedules.
expect 0 relayout "$tessel" tasks --layout --run --threads 1 \
	--records "$tmp/layout.jsonl" "$examples/lenet.tsl"
has relayout err "layouts of the record at $tmp/layout.jsonl:1"
[ "$(grep -c . "$tmp/layout.jsonl")" -eq 1 ] ||
	fail "relayout: the layouts were chosen again"
expect 0 runlayout "$tessel" run --json --threads 1 --min-time 0.01 \
	--records "$tmp/layout.jsonl" "$examples/lenet.tsl"
has runlayout err "layouts of the record at $tmp/layout.jsonl:1"
expect 0 buildlayout "$tessel" build -o "$tmp/lenet" --threads 1 \
	--records "$tmp/layout.jsonl" "$examples/lenet.tsl"
has buildlayout err "layouts of the record at $tmp/layout.jsonl:1"
want=$(sed -n 's/^schedules: //p' "$tmp/relayout.out")
[ -n "$want" ] || fail "relayout: no schedules line"
got=$(sed -n 's/.*"task_schedules": \[\([^]]*\)\].*/\1/p' \
	"$tmp/runlayout.out" | tr -d '",')
[ "$got" = "$want" ] || fail "run: schedules '$got', tasks '$want'"
got=$(sed -n 's/^schedules: //p' "$tmp/buildlayout.out")
[ "$got" = "$want" ] || fail "build: schedules '$got', tasks '$want'"
printf '{"version":1,"workload":"%s","target":"%s","layout":{"choice":[1]},"error":"none"}\n' \
	"$(sed -n 's/.*"workload":"\([0-9a-f]*\)".*/\1/p' "$tmp/layout.jsonl")" \
	"$(sed -n 's/.*"target":"\([^"]*\)".*/\1/p' "$tmp/layout.jsonl")" \
	>>"$tmp/layout.jsonl"
expect 1 badlayout "$tessel" run --threads 1 --records "$tmp/layout.jsonl" \
	"$examples/lenet.tsl"
has badlayout err "layout.jsonl:2: the layout record does not apply"

# The layouts chosen by the model: nothing timed, nothing recorded, and
# run compiles the schedules that tasks lists (the choice is the same).
: >"$tmp/model.jsonl"
expect 0 modellayout "$tessel" tasks --layout-model --check --threads 1 \
	--records "$tmp/model.jsonl" "$examples/lenet.tsl"
has modellayout out "layout: chosen"
has modellayout out "check Y: ok"
has modellayout err "layouts chosen by the model"
[ ! -s "$tmp/model.jsonl" ] || fail "modellayout: a layout was recorded"
expect 0 runmodel "$tessel" run --json --check --threads 1 --min-time 0.01 \
	--layout-model "$examples/lenet.tsl"
has runmodel err "layouts chosen by the model"
has runmodel out '"passed": true'
want=$(sed -n 's/^schedules: //p' "$tmp/modellayout.out")
got=$(sed -n 's/.*"task_schedules": \[\([^]]*\)\].*/\1/p' \
	"$tmp/runmodel.out" | tr -d '",')
[ -n "$want" ] && [ "$got" = "$want" ] ||
	fail "runmodel: schedules '$got', tasks '$want'"
# ... which is what run and build do by default, and --declared-layouts
# turns off.
model=$want
expect 0 rundefault "$tessel" run --json --threads 1 --min-time 0.01 \
	"$examples/lenet.tsl"
has rundefault err "layouts chosen by the model"
got=$(sed -n 's/.*"task_schedules": \[\([^]]*\)\].*/\1/p' \
	"$tmp/rundefault.out" | tr -d '",')
[ "$got" = "$model" ] || fail "rundefault: schedules '$got', tasks '$model'"
expect 0 builddefault "$tessel" build -o "$tmp/lenetd" --threads 1 \
	"$examples/lenet.tsl"
has builddefault err "layouts chosen by the model"
got=$(sed -n 's/^schedules: //p' "$tmp/builddefault.out")
[ "$got" = "$model" ] || fail "builddefault: schedules '$got', tasks '$model'"
expect 0 rundeclared "$tessel" run --json --threads 1 --min-time 0.01 \
	--declared-layouts "$examples/lenet.tsl"
if grep -q "layouts chosen" "$tmp/rundeclared.err"; then
	fail "rundeclared: the layouts were chosen"
fi

expect 2 nofile "$tessel" tasks
has nofile err "usage: tessel tasks"
expect 2 badopt "$tessel" tasks --threads zero "$examples/lenet.tsl"
has badopt err "bad or missing value for --threads"
expect 2 unknown "$tessel" tasks --frobnicate "$examples/lenet.tsl"
has unknown err "unexpected argument '--frobnicate'"
expect 2 missing "$tessel" tasks "$tmp/none.tsl"
has missing err "none.tsl"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
exit 0
