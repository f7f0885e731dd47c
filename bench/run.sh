#!/bin/sh
# Run every benchmark program of bench/ and write bench/results.md: the
# date, the machine (tessel hw), its load, and the tables.
#
#   usage: bench/run.sh [BUILD_DIR]     (default: build)
#
# BUILD_DIR is a configured and built tree (make -j2).  The programs
# comparing with libraries exist only when configure found OpenBLAS
# (bench_matmul) and oneDNN (bench_conv).  With BENCH_TUNE set, the tuned
# kernels are measured too (bench_tune, bench_conv --tune: about half an
# hour more).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=$(cd "${1:-$src/build}" && pwd)
out="$here/results.md"
tmp="$out.tmp"

# OpenBLAS 0.3.21 does not know recent Xeons and falls back to SSE3
# kernels; its AVX-512 kernels are what a user of this machine would get
# by setting the core type.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx512f /proc/cpuinfo; then
	OPENBLAS_CORETYPE=SkylakeX
	export OPENBLAS_CORETYPE
fi
TS_SRCDIR=$src
export TS_SRCDIR
# The machine is shared: time by the CPU time of the benchmark process,
# which keeps other processes' time slices out of the figures.
BENCH_CPU_TIME=1
export BENCH_CPU_TIME
# With CPU time, OpenMP workers spinning between runs would count as work
# (oneDNN's and Tessel's alike, and on whichever kernel runs next):
# workers that sleep while they wait keep the two-thread figures fair.
OMP_WAIT_POLICY=PASSIVE
export OMP_WAIT_POLICY

# section TITLE PROGRAM ARGS...: run PROGRAM if it was built.
section() {
	title=$1
	prog=$2
	shift 2
	printf '\n## %s\n\n' "$title" >> "$tmp"
	if [ ! -x "$build/bench/$prog" ]; then
		printf 'not built (library not found by configure)\n' >> "$tmp"
		return 0
	fi
	printf 'load average before: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp"
	"$build/bench/$prog" "$@" >> "$tmp" || \
		printf '\n**%s exited with status %s**\n' "$prog" "$?" >> "$tmp"
}

{
	printf '# Tessel benchmark results\n\n'
	printf 'Measured %s by bench/run.sh (static schedules%s).\n\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" \
		"${BENCH_TUNE:+, and tuned ones (BENCH_TUNE set)}"
	printf 'Commit %s.  OPENBLAS_CORETYPE=%s.\n\n' \
		"$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
		"${OPENBLAS_CORETYPE:-unset}"
	printf '```\n'
	"$build/tools/tessel" hw
	printf '```\n'
} > "$tmp"
section "Matmul: Tessel static vs OpenBLAS" bench_matmul --threads 1 \
	--threads 2 --min-time 1 --verbose
section "Conv2d (ResNet-18, batch 1): Tessel static vs oneDNN, OIHW weights" \
	bench_conv --threads 1 --threads 2 --min-time 0.5 --verbose
section "Conv2d (ResNet-18, batch 1): Tessel static vs oneDNN, HWIO weights" \
	bench_conv --threads 1 --threads 2 --min-time 0.5 --weights hwio \
	--verbose
if [ -n "${BENCH_TUNE:-}" ]; then
	section "Matmul: tuned and top-10 vs OpenBLAS and static" bench_tune \
		--trials 300 --topk 10
	section "Conv2d (ResNet-18, batch 1): tuned (100 trials) vs oneDNN" \
		bench_conv --threads 1 --tune 100 --min-time 0.5
fi
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
section "Every example operator: naive vs static" bench_ops --timeout 90
mv "$tmp" "$out"
echo "wrote $out"
