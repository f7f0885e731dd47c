#!/bin/sh
# The main job of ./build.sh main: evaluate the bundled LeNet-like network
# with the reference interpreter on seeded random inputs.
set -eu
cd "$(dirname "$0")/.."
out=${TESSEL_OUT:-/tmp/tessel-main}
mkdir -p "$out"
./tools/tessel eval examples/lenet.tsl --seed 1 --out "$out"
