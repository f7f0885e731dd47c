#!/usr/bin/env python3
"""The cost of calling a compiled kernel from Python, against the same
kernel called from C in the same run.

A small kernel (a 16x16 matmul and an elementwise add of 64 floats): the
C time is the median of ts_module_time's calls (Kernel.time: the library
calls the kernel in a loop, no Python in it); the Python time the median,
over rounds, of the mean of a loop of kernel(a, b) calls (checks of both
arrays, a new output array, the call).  Rounds alternate between the two,
so that load on a shared machine hits both.  The target: at most 5
microseconds more than C.  The ctypes-only path (no C call path) is shown
for comparison.

    TESSEL_LIBRARY=.libs/libtessel.so.0 \\
    TESSEL_CALL_MODULE=python/.libs/_call.so PYTHONPATH=python \\
    /usr/bin/python3 bench/bench_python_call.py
"""

import statistics
import sys
import time

import numpy as np

import tessel

KERNELS = {
    "matmul 16x16": """
input A: f32[16, 16]
input B: f32[16, 16]
output C[i: 16, j: 16] = sum(k: 16) A[i, k] * B[k, j]
""",
    "add 64": """
input A: f32[64]
input B: f32[64]
output C[i: 64] = A[i] + B[i]
""",
}
ROUNDS = 7
CALLS = 20000
TARGET_US = 5.0


def python_time(call, args):
    """Seconds per call of "call"("args"), the mean of a loop."""
    t0 = time.perf_counter()
    for _ in range(CALLS):
        call(*args)
    return (time.perf_counter() - t0) / CALLS


def ctypes_call(kernel):
    """The kernel called through ctypes alone (the package's path when
    the C call path is not built)."""
    def call(*args):
        ptrs, outs = kernel._pointers(args)
        tessel.lib.ts_module_call(kernel._module, ptrs)
        return outs[0]
    return call


def bench(name, src):
    kernel = tessel.parse(src, name=name).compile(threads=1)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s.shape).astype(s.dtype)
            for s in kernel.inputs]
    c, py, ct = [], [], []
    slow = ctypes_call(kernel)
    for _ in range(ROUNDS):
        c.append(kernel.time(*args, min_time=0.05))
        py.append(python_time(kernel, args))
        ct.append(python_time(slow, args))
    c, py, ct = (statistics.median(x) * 1e6 for x in (c, py, ct))
    print("%-14s %8.3f %9.3f %9.3f %+10.3f %8.2fx %+10.3f  %s" % (
        name, c, py, ct, py - c, py / c, ct - c,
        "ok" if py - c <= TARGET_US else "OVER"))
    return py - c <= TARGET_US


def main():
    print("C call path: %s" % ("built" if tessel._call else
                               "missing (ctypes only)"))
    print("%-14s %8s %9s %9s %10s %9s %10s" % (
        "kernel", "C us", "Python us", "ctypes us", "overhead", "ratio",
        "ctypes +"))
    ok = all([bench(name, src) for name, src in KERNELS.items()])
    print("target: at most %.0f us more than C per call: %s"
          % (TARGET_US, "met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
