#!/bin/sh
# End-to-end checks of the tessel command line: help and version, exit
# codes, `tessel eval` on the small examples, reproducibility through
# --inputs, and the diagnostics of bad programs and bad inputs.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
tessel=$builddir/tools/tessel
examples=$srcdir/examples
failures=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# expect CODE NAME COMMAND...: run COMMAND, keep its output in
# $tmp/NAME.out and $tmp/NAME.err, and check its exit status.
expect() {
	want=$1 name=$2
	shift 2
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		fail "$name: exit $got, expected $want ($*)"
		sed 's/^/  | /' "$tmp/$name.err"
	fi
}

# contains NAME STREAM TEXT: check that $tmp/NAME.STREAM holds TEXT.
contains() {
	if ! grep -qF -- "$3" "$tmp/$1.$2"; then
		fail "$1: std$2 lacks '$3'"
		sed 's/^/  | /' "$tmp/$1.$2"
	fi
}

[ -x "$tessel" ] || { echo "no $tessel"; exit 99; }

# Help, version, usage errors.
expect 0 help "$tessel" --help
contains help out "eval"
expect 0 version "$tessel" --version
# The one version number: configure's, through the generated header.
version=$(sed -n 's/^#define TESSEL_VERSION "\(.*\)"$/\1/p' \
	"$builddir/include/tessel/version.h")
[ -n "$version" ] || fail "version: none in include/tessel/version.h"
contains version out "tessel $version"
expect 2 no_args "$tessel"
expect 2 unknown_verb "$tessel" frobnicate
contains unknown_verb err "unknown command 'frobnicate'"
expect 0 eval_help "$tessel" eval --help
contains eval_help out "--inputs DIR"
expect 2 eval_no_file "$tessel" eval
contains eval_no_file err "usage: tessel eval"
expect 2 eval_bad_option "$tessel" eval --fast "$examples/softmax.tsl"
contains eval_bad_option err "unknown option '--fast'"
expect 2 eval_bad_seed "$tessel" eval "$examples/softmax.tsl" --seed x
contains eval_bad_seed err "--seed takes a non-negative integer"
expect 2 eval_missing_program "$tessel" eval "$tmp/absent.tsl"
contains eval_missing_program err "absent.tsl"

# ones_npy FILE SHAPE COUNT: write a .npy file of COUNT f32 ones of the
# shape SHAPE (a Python tuple), header padded to 128 bytes.
ones_npy() {
	{
		printf '\223NUMPY\001\000\166\000'
		printf '%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
		i=0
		while [ "$i" -lt "$3" ]; do
			printf '\000\000\200\077'
			i=$((i + 1))
		done
	} >"$1"
}

# A tiny matmul written here: evaluated on generated inputs, and on inputs
# of ones, where every element of C is K = 5.
cat >"$tmp/mm.tsl" <<'EOF'
let M = 3
let K = 5
input A: f32[M, K]
input B: f32[K, 4]
output C[i: M, j: 4] = sum(k: K) A[i, k] * B[k, j]
EOF
expect 0 mm "$tessel" eval "$tmp/mm.tsl" --seed 3 --out "$tmp/mm"
for f in A B C; do
	[ -s "$tmp/mm/$f.npy" ] || fail "mm: $f.npy was not written"
done
contains mm out "C f32[3, 4] sum="
mkdir "$tmp/ones"
ones_npy "$tmp/ones/A.npy" "(3, 5)" 15
ones_npy "$tmp/ones/B.npy" "(5, 4)" 20
expect 0 mm_ones "$tessel" eval "$tmp/mm.tsl" --inputs "$tmp/ones" \
	--out "$tmp/ones.out"
contains mm_ones out "C f32[3, 4] sum=60 max_abs=5"

# The small examples at their real sizes; each run's outputs come back
# bit for bit when its written inputs are read again, and the same seed
# gives the same outputs.
for ex in softmax layer_norm max_pool lenet mlp; do
	expect 0 "$ex" "$tessel" eval "$examples/$ex.tsl" --seed 5 \
		--out "$tmp/$ex.a"
	out=$(sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\) .* sum=.*/\1/p' \
		"$tmp/$ex.out")
	[ -n "$out" ] || fail "$ex: no summary line"
	for o in $out; do
		[ -s "$tmp/$ex.a/$o.npy" ] || fail "$ex: $o.npy was not written"
	done
	expect 0 "$ex.again" "$tessel" eval "$examples/$ex.tsl" \
		--inputs "$tmp/$ex.a" --out "$tmp/$ex.b"
	expect 0 "$ex.seed" "$tessel" eval "$examples/$ex.tsl" --seed 5 \
		--out "$tmp/$ex.c"
	for o in $out; do
		cmp -s "$tmp/$ex.a/$o.npy" "$tmp/$ex.b/$o.npy" ||
			fail "$ex: $o differs when its inputs are read back"
		cmp -s "$tmp/$ex.a/$o.npy" "$tmp/$ex.c/$o.npy" ||
			fail "$ex: $o differs between two runs with seed 5"
	done
	cmp -s "$tmp/$ex.out" "$tmp/$ex.again.out" ||
		fail "$ex: the summaries differ when inputs are read back"
done

# Another seed gives other inputs and other outputs.
expect 0 mm_seed4 "$tessel" eval "$tmp/mm.tsl" --seed 4 --out "$tmp/mm4"
cmp -s "$tmp/mm/C.npy" "$tmp/mm4/C.npy" &&
	fail "mm: seeds 3 and 4 gave the same output"

# A syntax error: exit 2, file:line:col and a caret under the token.
printf 'input A: f32[4]\noutput B[i: 4] = A[i] +* 2.0\n' >"$tmp/bad.tsl"
expect 2 syntax "$tessel" eval "$tmp/bad.tsl" --out "$tmp/bad"
contains syntax err "bad.tsl:2:"
grep -q '^ *\^' "$tmp/syntax.err" || fail "syntax: no caret line"
[ -e "$tmp/bad/B.npy" ] && fail "syntax: an output was written"

# Inputs read from a folder: a missing file and a wrong shape exit 2.
mkdir "$tmp/partial"
cp "$tmp/mm/A.npy" "$tmp/partial/"
expect 2 missing_input "$tessel" eval "$tmp/mm.tsl" --inputs "$tmp/partial" \
	--out "$tmp/partial.out"
contains missing_input err "input 'B'"
contains missing_input err "B.npy"
cp "$tmp/mm/C.npy" "$tmp/partial/B.npy"
expect 2 wrong_shape "$tessel" eval "$tmp/mm.tsl" --inputs "$tmp/partial" \
	--out "$tmp/partial.out"
contains wrong_shape err "holds f32[3, 4] but the program declares f32[5, 4]"

# tessel run on data from files: compiled, its outputs on the inputs of
# ones are those of the interpreter; --check compares on those inputs;
# a missing file, a wrong shape and a wrong dtype exit 2 and say which.
expect 0 run_help "$tessel" run --help
contains run_help out "--inputs"
contains run_help out "--out"
for sch in naive static; do
	expect 0 "run_ones_$sch" "$tessel" run "$tmp/mm.tsl" --schedule $sch \
		--inputs "$tmp/ones" --out "$tmp/run_ones_$sch" --check \
		--min-time 0
	contains "run_ones_$sch" out "check: pass"
	cmp -s "$tmp/ones.out/C.npy" "$tmp/run_ones_$sch/C.npy" ||
		fail "run_ones_$sch: C.npy differs from tessel eval's"
done
# tessel schedule --config rates a configuration given as JSON text or
# in a file: the static choice rates as schedule --json said, its
# schedule runs and checks; an unknown knob exits 2 and names it.
if command -v python3 >/dev/null 2>&1; then
	expect 0 sched_json "$tessel" schedule "$tmp/mm.tsl" --json
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); '\
'open(sys.argv[2], "w").write(json.dumps(d["config"])); '\
'print("%.6e" % d["estimate_s"])' "$tmp/sched_json.out" "$tmp/cfg.json" \
		>"$tmp/sched_est" 2>/dev/null ||
		fail "sched_json: no config in its output"
	expect 0 sched_cfg "$tessel" schedule "$tmp/mm.tsl" --config "$tmp/cfg.json" \
		--json
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); '\
'print("%.6e" % d["estimate_s"])' "$tmp/sched_cfg.out" >"$tmp/cfg_est" \
		2>/dev/null || fail "sched_cfg: no estimate"
	cmp -s "$tmp/sched_est" "$tmp/cfg_est" ||
		fail "sched_cfg: rated $(cat "$tmp/cfg_est"), not $(cat "$tmp/sched_est")"
	expect 0 sched_cfg_run "$tessel" run "$tmp/mm.tsl" --schedule \
		"$tmp/sched_cfg.out" --check --min-time 0
	contains sched_cfg_run out "check: pass"
fi
expect 2 sched_bad_knob "$tessel" schedule "$tmp/mm.tsl" --config \
	'{"C.nosuch": 1}'
contains sched_bad_knob err "unknown knob 'C.nosuch'"
expect 2 sched_no_file "$tessel" schedule "$tmp/mm.tsl" --config \
	"$tmp/missing.json"
contains sched_no_file err "cannot read '$tmp/missing.json'"

# on random data the compiled kernel may contract a*b+c into one FMA:
# --check compares it with the interpreter on the same inputs
expect 0 run_seeded "$tessel" run "$tmp/mm.tsl" --inputs "$tmp/mm" \
	--out "$tmp/run_seeded" --check --min-time 0 --json
contains run_seeded out '"passed": true'
[ -s "$tmp/run_seeded/C.npy" ] || fail "run_seeded: C.npy was not written"
rm -f "$tmp/partial/B.npy"
expect 2 run_missing_input "$tessel" run "$tmp/mm.tsl" --inputs \
	"$tmp/partial" --min-time 0
contains run_missing_input err "tessel run: input 'B': $tmp/partial/B.npy"
cp "$tmp/mm/C.npy" "$tmp/partial/B.npy"
expect 2 run_wrong_shape "$tessel" run "$tmp/mm.tsl" --inputs "$tmp/partial" \
	--min-time 0
contains run_wrong_shape err "tessel run: input 'B': $tmp/partial/B.npy holds f32[3, 4] but the program declares f32[5, 4]"
printf 'input B: i32[5, 4]\noutput D[i: 5, j: 4] = B[i, j]\n' \
	>"$tmp/int.tsl"
expect 0 int_inputs "$tessel" eval "$tmp/int.tsl" --out "$tmp/int"
cp "$tmp/int/B.npy" "$tmp/partial/B.npy"
expect 2 run_wrong_dtype "$tessel" run "$tmp/mm.tsl" --inputs "$tmp/partial" \
	--min-time 0
contains run_wrong_dtype err "holds i32[5, 4] but the program declares f32[5, 4]"
touch "$tmp/not_a_folder"
expect 2 run_out_file "$tessel" run "$tmp/mm.tsl" --out "$tmp/not_a_folder" \
	--min-time 0
contains run_out_file err "tessel run: --out $tmp/not_a_folder is not a folder"
expect 2 run_inputs_cuda "$tessel" run "$tmp/mm.tsl" --inputs "$tmp/ones" \
	--target cuda:h100
contains run_inputs_cuda err "--inputs and --out run on this CPU"
# A CPU target the machine can stand in for: its schedule and its code
# (a copy of this machine's description under another name always runs
# here); one it cannot run is refused with the reason.
"$tessel" hw --json | sed 's/"name": "[^"]*"/"name": "twin"/' >"$tmp/twin.json"
expect 0 run_cpu_target "$tessel" run "$tmp/mm.tsl" --target "$tmp/twin.json" \
	--check --min-time 0.01
contains run_cpu_target out "check: pass"
expect 0 run_cpu_target_net "$tessel" run "$examples/lenet.tsl" \
	--target "$tmp/twin.json" --check --min-time 0.01
contains run_cpu_target_net out "check: pass"
if [ "$(uname -m)" = x86_64 ]; then
	expect 2 run_foreign_target "$tessel" run "$tmp/mm.tsl" \
		--target neoverse-n1
	contains run_foreign_target err "tessel run: this machine cannot run the code of target 'neoverse-n1': it is aarch64 code and this CPU is x86_64"
	expect 2 tasks_foreign_target "$tessel" tasks "$examples/lenet.tsl" \
		--run --target apple-m1
	contains tasks_foreign_target err "it is aarch64 code and this CPU is x86_64"
fi
expect 2 run_records_target "$tessel" run "$tmp/mm.tsl" --target \
	"$tmp/twin.json" --records "$tmp/none.jsonl"
contains run_records_target err "--records picks this machine's records: not with --target"

# Integer division by zero is defined (0), in eval as in run.
printf 'input A: i32[4]\noutput C[i: 4] = A[i] // (A[i] - A[i])\n' \
	>"$tmp/div.tsl"
expect 0 div "$tessel" eval "$tmp/div.tsl" --out "$tmp/div"
expect 0 div_run "$tessel" run "$tmp/div.tsl" --inputs "$tmp/div" --check \
	--min-time 0

# A program too large for memory: one line, exit 2, no collector
# warnings, for every command that would allocate its tensors.
printf 'input A: f32[1099511627776]\noutput B[i: 1099511627776] = A[i]\n' \
	>"$tmp/big.tsl"
for verb in eval run tune; do
	expect 2 "big_$verb" "$tessel" $verb "$tmp/big.tsl"
	contains "big_$verb" err "its tensors take 8.00 TiB in all, more than"
	contains "big_$verb" err "(the largest, 'A', is f32[1099511627776]: 4.00 TiB)"
	[ "$(wc -l <"$tmp/big_$verb.err")" -eq 1 ] ||
		fail "big_$verb: more than one line on stderr"
done
# An extent of 2^63-1: a located error.
printf 'output Y[i: 9223372036854775807] = 1.0\n' >"$tmp/huge.tsl"
expect 2 huge "$tessel" eval "$tmp/huge.tsl"
contains huge err "huge.tsl:1:10: error: tensor 'Y' is too large: with dimension 0 (extent 9223372036854775807) its size in bytes overflows 64 bits"

# The C API examples (make installcheck builds them again against the
# installed tree): a matmul checked by hand, for this machine and a
# shipped target; a .tsl string against the interpreter, with the
# message of a wrong argument.
expect 0 api_matmul "$builddir/examples/api/matmul" 24 zen3
contains api_matmul out "output D[i: 24, j: 24] = max(D.sum0[i, j], 0.0)"
contains api_matmul out "static, this machine: largest relative error"
contains api_matmul out "static schedule for zen3: "
expect 2 api_matmul_usage "$builddir/examples/api/matmul" 0
expect 1 api_matmul_target "$builddir/examples/api/matmul" 8 nosuchcpu
contains api_matmul_target err "nosuchcpu"
expect 0 api_dense "$builddir/examples/api/dense" 1
contains api_dense out "match"
contains api_dense out "x and W swapped: argument 0 ('x') of 'layer': expected f32[32, 512], got f32[512, 256]"

if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all command-line checks passed"
exit 0
