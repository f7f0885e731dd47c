#!/usr/bin/env python3
"""Memory-bound operators against PyTorch and against a copy, in one run.

Each operator is declared below as a user would write it (compute only),
compiled with Tessel's static schedule for one thread, and timed three
ways, rounds alternating so that load on a shared machine hits them all:

- Tessel through Python: kernel(*arrays), the mean of a loop of calls
  (what a Python user sees; the C call path adds a few microseconds);
- PyTorch through Python: the same operator in eager mode, one thread,
  the mean of a loop of calls;
- a copy through Python: numpy's copyto of as many bytes as the
  operator's inputs and outputs hold (half read, half written), the
  bandwidth a memory-bound operator could reach for its bytes, less the
  time of a copy of 64 bytes (the call's own cost).

It also prints Tessel's time from C (Kernel.time, no Python in the loop)
and the copy's time as a share of it.  The printed times are medians over
rounds.  Outputs are checked against PyTorch's.

    TESSEL_LIBRARY=.libs/libtessel.so.0 \\
    TESSEL_CALL_MODULE=python/.libs/_call.so PYTHONPATH=python \\
    /usr/bin/python3 bench/bench_memory.py [--rounds R] [--only NAME]...
"""

import argparse
import os
import statistics
import sys
import time

# One thread each: PyTorch's BLAS pool (OpenBLAS runs a GEMV on every
# core otherwise, whatever torch.set_num_threads says) must be sized
# before it loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import tessel  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError:                      # the Tessel columns still run
    torch = F = None


# name: (declaration, PyTorch function of torch tensors, tolerance); the
# functions are only called where PyTorch is installed.
def _ops():
    t = torch
    return {
        "softmax": ("""
input X: f32[128, 1000]
M[i: 128] = max(k: 1000) X[i, k]
E[i: 128] = sum(k: 1000) exp(X[i, k] - M[i])
output Y[i: 128, j: 1000] = exp(X[i, j] - M[i]) / E[i]
""", lambda x: t.softmax(x, 1), 1e-5),
        "layer_norm": ("""
input X: f32[128, 768]
input G: f32[768]
input B: f32[768]
Mu[i: 128] = (sum(k: 768) X[i, k]) / 768.0
Var[i: 128] = (sum(k: 768) (X[i, k] - Mu[i]) * (X[i, k] - Mu[i])) / 768.0
output Y[i: 128, j: 768] = (X[i, j] - Mu[i]) * rsqrt(Var[i] + 1e-5) * G[j] + B[j]
""", lambda x, g, b: F.layer_norm(x, (768,), g, b, 1e-5), 1e-4),
        "rms_norm": ("""
input X: f32[128, 4096]
input G: f32[4096]
Ms[i: 128] = (sum(k: 4096) X[i, k] * X[i, k]) / 4096.0
output Y[i: 128, j: 4096] = X[i, j] * rsqrt(Ms[i] + 1e-6) * G[j]
""", lambda x, g: x * t.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g,
            1e-4),
        "l2_norm": ("""
input X: f32[1024, 1024]
output N[i: 1024] = sqrt(sum(k: 1024) X[i, k] * X[i, k])
""", lambda x: t.linalg.vector_norm(x, dim=1), 1e-4),
        "max_pool": ("""
input X: f32[1, 64, 112, 112]
output Y[n: 1, c: 64, h: 56, w: 56] = max(r: 2, s: 2) X[n, c, h * 2 + r, w * 2 + s]
""", lambda x: F.max_pool2d(x, 2, 2), 0),
        "avg_pool": ("""
input X: f32[1, 64, 56, 56]
output Y[n: 1, c: 64, h: 56, w: 56] = (sum(r: 3, s: 3) select(h + r - 1 >= 0 && h + r - 1 < 56 && w + s - 1 >= 0 && w + s - 1 < 56, X[n, c, h + r - 1, w + s - 1], 0.0)) / 9.0
""", lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=True), 1e-5),
        "gemv": ("""
input W: f32[4096, 4096]
input V: f32[4096]
output Y[i: 4096] = sum(k: 4096) W[i, k] * V[k]
""", lambda w, v: t.mv(w, v), 1e-3),
        "bias_relu_add": ("""
input X: f32[1, 256, 56, 56]
input B: f32[256]
input R: f32[1, 256, 56, 56]
output Y[n: 1, c: 256, h: 56, w: 56] = max(X[n, c, h, w] + B[c], 0.0) + R[n, c, h, w]
""", lambda x, b, r: t.relu(x + b.view(1, -1, 1, 1)) + r, 1e-6),
        "gelu": ("""
input X: f32[128, 3072]
output Y[i: 128, j: 3072] = 0.5 * X[i, j] * (1.0 + erf(X[i, j] * 0.7071067811865476))
""", lambda x: F.gelu(x), 1e-5),
    }


def loop_time(call, args, seconds):
    """Seconds per call of call(*args): the mean of a loop of calls that
    lasts about "seconds"."""
    call(*args)
    n, t0 = 0, time.perf_counter()
    while True:
        call(*args)
        n += 1
        el = time.perf_counter() - t0
        if el >= seconds:
            return el / n


def measure(name, src, ref, tol, rounds, seconds):
    """Time operator "name" and print its row; return whether Tessel's
    Python call was at least as fast as PyTorch's."""
    kernel = tessel.parse(src, name=name).compile(threads=1)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s.shape).astype(s.dtype)
            for s in kernel.inputs]
    nbytes = sum(a.nbytes for a in args) + sum(
        int(np.prod(s.shape)) * np.dtype(s.dtype).itemsize
        for s in kernel.outputs)
    src_buf = np.ones(nbytes // 8, dtype=np.float32)
    dst_buf = np.zeros_like(src_buf)
    tiny_src, tiny_dst = src_buf[:16].copy(), dst_buf[:16].copy()
    got = kernel(*args)
    targs = [torch.from_numpy(a) for a in args] if torch else None
    if torch:
        want = ref(*targs).numpy()
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(got - want))) / scale
        if err > max(tol, 1e-6):
            print("%s: differs from PyTorch by %g" % (name, err))
            return False
    c, py, th, cp = [], [], [], []
    for _ in range(rounds):
        c.append(kernel.time(*args, min_time=seconds))
        py.append(loop_time(kernel, args, seconds))
        if torch:
            with torch.no_grad():
                th.append(loop_time(ref, targs, seconds))
        cp.append(loop_time(np.copyto, (dst_buf, src_buf), seconds) -
                  loop_time(np.copyto, (tiny_dst, tiny_src), seconds / 4))
    c, py, cp = (statistics.median(x) for x in (c, py, cp))
    th = statistics.median(th) if th else float("nan")
    print("| %s | %.1f | %.4f | %.4f | %s | %.2fx | %.1f GB/s, %.0f%% |" % (
        name, nbytes / 1e6, c * 1e3, py * 1e3,
        "%.4f" % (th * 1e3) if torch else "(no PyTorch)", th / py,
        nbytes / c * 1e-9, 100 * cp / c))
    return not torch or th >= py


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.1)
    ap.add_argument("--only", action="append")
    a = ap.parse_args()
    if torch:
        torch.set_num_threads(1)
    ops = _ops()
    print("| operator | MB in+out | Tessel C ms | Tessel Python ms | "
          "PyTorch ms | PyTorch / Tessel | Tessel bytes/s, of a copy |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for name, (src, ref, tol) in ops.items():
        if a.only and name not in a.only:
            continue
        ok &= measure(name, src, ref, tol, a.rounds, a.seconds)
    print("at least PyTorch's speed on every operator: %s"
          % ("yes" if ok else "NO"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
