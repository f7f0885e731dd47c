#!/bin/sh
# Build Tessel on a fresh Debian 12 machine (as root) and run its main job
# or its whole test suite.
#
#   ./build.sh main     install what is missing, build, run the main job
#   ./build.sh test     install what is missing, build, run every test
#   ./build.sh deps     only install the Debian packages
set -eu

PACKAGES="build-essential autoconf automake libtool pkg-config \
  libisl-dev llvm-16-dev libgc-dev libcmocka-dev libjansson-dev \
  libxgboost-dev libopenblas-dev libdnnl-dev python3 \
  clang libclang-rt-14-dev \
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata \
  python3-onnx python3-numpy python3-dev python3-torch \
  libopenmpi-dev openmpi-bin"

cd "$(dirname "$0")"

deps() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing
	fi
}

build() {
	[ -x configure ] || autoreconf -fi
	[ -f Makefile ] || ./configure ${CONFIGURE_FLAGS:-}
	make -j"$(nproc)"
}

case "${1:-main}" in
deps)
	deps
	;;
main)
	deps
	build
	sh examples/main-job.sh
	;;
test)
	deps
	build
	make -j"$(nproc)" check || { cat test-suite.log 2>/dev/null; exit 1; }
	;;
*)
	echo "usage: $0 main|test|deps" >&2
	exit 2
	;;
esac
