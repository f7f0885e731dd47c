#!/usr/bin/python3
"""Writing styles: one computation written in one statement and as separate
stages, Tessel static and naive, against PyTorch in the same run.

Each case is a computation written two ways (the one-statement form nests
its reductions inside expressions; the multi-stage form gives each
reduction a stage of its own), and the same operator in PyTorch.  For each
form the script runs `tessel run FILE --json` with the static and the naive
schedule, and times PyTorch between them, so that all share the machine's
load.  Every Tessel run is checked against the reference interpreter
(--check).  It prints one row per case:

  static/naive    naive time / static time of the one-statement form
  one/multi       static time of the multi-stage form / the one-statement
                  form's (1.0: no price for writing it in one statement)
  pytorch/tessel  PyTorch's time / Tessel's static one-statement time

usage: bench_styles_torch.py BUILD [--threads N] [--rounds R] [--cases a,b]
       [--min-time S]

Ratios above 1 favour the first-named side of the ratio's denominator
(static/naive > 1: static is faster).  With --rounds R each measurement is
repeated R times, interleaved, and the medians are kept.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def threads_of_argv(argv):
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


# PyTorch's BLAS pool must be sized before it loads (see bench_network.py).
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(var, threads_of_argv(sys.argv))

try:
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError:  # PyTorch is optional: its column is left empty.
    torch = None


def pt_dense(t):
    x, w, b = t.randn(64, 1024), t.randn(1024, 1024), t.randn(1024)
    return lambda: x @ w + b


def pt_l2(t):
    x = t.randn(1024, 1024)
    return lambda: t.sqrt((x * x).sum(dim=1))


def pt_softmax(t):
    x = t.randn(128, 1000)
    return lambda: t.softmax(x, dim=1)


def pt_layer_norm(t):
    x, g, b = t.randn(128, 768), t.randn(768), t.randn(768)
    return lambda: F.layer_norm(x, (768,), g, b, 1e-5)


def pt_conv(t):
    x, w, b = t.randn(1, 64, 58, 58), t.randn(64, 64, 3, 3), t.randn(64)
    return lambda: F.relu(F.conv2d(x, w, b))


def pt_grouped(t):
    x, w = t.randn(1, 64, 30, 30), t.randn(64, 16, 3, 3)
    return lambda: F.conv2d(x, w, groups=4)


def pt_pool(t):
    x = t.randn(1, 64, 56, 56)
    return lambda: F.max_pool2d(x, 3, 2, 1)


def pt_requant(t):
    a = t.randint(-8, 8, (256, 256), dtype=t.int8)
    b = t.randint(-8, 8, (256, 256), dtype=t.int8)
    return lambda: t.clamp(t.round((a.int() @ b.int()).float() * 0.0125),
                           -128, 127).to(t.int8)


CASES = {
    "dense_bias": ("""
input X: f32[64, 1024]
input W: f32[1024, 1024]
input b: f32[1024]
output Y[i: 64, j: 1024] = (sum(k: 1024) X[i, k] * W[k, j]) + b[j]
""", """
input X: f32[64, 1024]
input W: f32[1024, 1024]
input b: f32[1024]
S[i: 64, j: 1024] = sum(k: 1024) X[i, k] * W[k, j]
output Y[i: 64, j: 1024] = S[i, j] + b[j]
""", pt_dense),
    "l2_norm": ("""
input X: f32[1024, 1024]
output N[i: 1024] = sqrt(sum(j: 1024) X[i, j] * X[i, j])
""", """
input X: f32[1024, 1024]
Q[i: 1024] = sum(j: 1024) X[i, j] * X[i, j]
output N[i: 1024] = sqrt(Q[i])
""", pt_l2),
    "softmax": ("""
input X: f32[128, 1000]
output Y[i: 128, j: 1000] = exp(X[i, j] - max(a: 1000) X[i, a])
  / sum(b: 1000) exp(X[i, b] - max(c: 1000) X[i, c])
""", """
input X: f32[128, 1000]
M[i: 128] = max(k: 1000) X[i, k]
E[i: 128] = sum(k: 1000) exp(X[i, k] - M[i])
output Y[i: 128, j: 1000] = exp(X[i, j] - M[i]) / E[i]
""", pt_softmax),
    "layer_norm": ("""
input X: f32[128, 768]
input G: f32[768]
input B: f32[768]
output Y[i: 128, j: 768] = (X[i, j] - (sum(a: 768) X[i, a]) / 768.0)
  * rsqrt((sum(b: 768) (X[i, b] - (sum(c: 768) X[i, c]) / 768.0)
  * (X[i, b] - (sum(d: 768) X[i, d]) / 768.0)) / 768.0 + 1e-5) * G[j] + B[j]
""", """
input X: f32[128, 768]
input G: f32[768]
input B: f32[768]
S[i: 128] = sum(k: 768) X[i, k]
Mu[i: 128] = S[i] / 768.0
V[i: 128] = sum(k: 768) (X[i, k] - Mu[i]) * (X[i, k] - Mu[i])
output Y[i: 128, j: 768] = (X[i, j] - Mu[i]) * rsqrt(V[i] / 768.0 + 1e-5)
  * G[j] + B[j]
""", pt_layer_norm),
    "conv_bias_relu": ("""
input X: f32[1, 64, 58, 58]
input W: f32[64, 64, 3, 3]
input B: f32[64]
output Y[n: 1, k: 64, h: 56, w: 56] = max((sum(c: 64, r: 3, s: 3)
  X[n, c, h + r, w + s] * W[k, c, r, s]) + B[k], 0.0)
""", """
input X: f32[1, 64, 58, 58]
input W: f32[64, 64, 3, 3]
input B: f32[64]
C[n: 1, k: 64, h: 56, w: 56] = sum(c: 64, r: 3, s: 3)
  X[n, c, h + r, w + s] * W[k, c, r, s]
output Y[n: 1, k: 64, h: 56, w: 56] = max(C[n, k, h, w] + B[k], 0.0)
""", pt_conv),
    "grouped_conv": ("""
input X: f32[1, 64, 30, 30]
input W: f32[64, 16, 3, 3]
output Y[n: 1, k: 64, h: 28, w: 28] = sum(c: 16, r: 3, s: 3)
  X[n, (k // 16) * 16 + c, h + r, w + s] * W[k, c, r, s]
""", """
input X: f32[1, 64, 30, 30]
input W: f32[64, 16, 3, 3]
XG[n: 1, g: 4, c: 16, h: 30, w: 30] = X[n, g * 16 + c, h, w]
output Y[n: 1, k: 64, h: 28, w: 28] = sum(c: 16, r: 3, s: 3)
  XG[n, k // 16, c, h + r, w + s] * W[k, c, r, s]
""", pt_grouped),
    "max_pool_padded": ("""
input X: f32[1, 64, 56, 56]
output Y[n: 1, c: 64, h: 28, w: 28] = max(r: 3, s: 3)
  select(2 * h + r >= 1 && 2 * h + r < 57 && 2 * w + s >= 1
    && 2 * w + s < 57, X[n, c, 2 * h + r - 1, 2 * w + s - 1], -inf)
""", """
input X: f32[1, 64, 56, 56]
P[n: 1, c: 64, h: 58, w: 58] = select(h >= 1 && h < 57 && w >= 1
  && w < 57, X[n, c, h - 1, w - 1], -inf)
output Y[n: 1, c: 64, h: 28, w: 28] = max(r: 3, s: 3)
  P[n, c, 2 * h + r, 2 * w + s]
""", pt_pool),
    "requant_i8": ("""
input A: i8[256, 256]
input B: i8[256, 256]
output Q[i: 256, j: 256]: i8 = i8(clamp(round(f32(sum(k: 256)
  i32(A[i, k]) * i32(B[k, j])) * 0.0125), -128.0, 127.0))
""", """
input A: i8[256, 256]
input B: i8[256, 256]
C[i: 256, j: 256] = sum(k: 256) i32(A[i, k]) * i32(B[k, j])
output Q[i: 256, j: 256]: i8 = i8(clamp(round(f32(C[i, j]) * 0.0125),
  -128.0, 127.0))
""", pt_requant),
}


def tessel_time(tessel, path, schedule, args):
    """Median seconds of FILE under SCHEDULE, checked; None on failure."""
    cmd = [tessel, "run", path, "--schedule", schedule, "--json",
           "--check", "--threads", str(args.threads),
           "--min-time", str(args.min_time)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.stderr.write("%s: %s\n" % (" ".join(cmd), p.stderr.strip()))
        return None, "error"
    ok = r.get("checked") and r.get("passed")
    return r["median_ms"] / 1e3, "ok" if p.returncode == 0 and ok else "FAIL"


def torch_time(fn, min_time):
    """Median seconds of fn over repeated calls lasting MIN_TIME."""
    fn()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    tessel = os.path.join(args.build, "tools", "tessel")
    if torch is not None:
        torch.set_num_threads(args.threads)
    tmp = tempfile.mkdtemp(prefix="tessel-styles-")
    print("%-16s %10s %10s %10s %10s %8s %8s %8s %8s  %s" % (
        "case", "one ms", "multi ms", "naive ms", "torch ms",
        "st/naive", "one/mul", "pt/ts", "mul/naive", "check"))
    for name in args.cases.split(","):
        one_src, multi_src, pt = CASES[name]
        paths = {}
        for form, src in (("one", one_src), ("multi", multi_src)):
            paths[form] = os.path.join(tmp, "%s_%s.tsl" % (name, form))
            with open(paths[form], "w") as f:
                f.write(src)
        fn = pt(torch) if torch is not None else None
        t = {k: [] for k in ("one", "multi", "naive", "mnaive", "torch")}
        checks = set()
        for _ in range(args.rounds):
            for key, form, sch in (("one", "one", "static"),
                                   ("naive", "one", "naive"),
                                   ("multi", "multi", "static"),
                                   ("mnaive", "multi", "naive")):
                s, c = tessel_time(tessel, paths[form], sch, args)
                checks.add(c)
                if s is not None:
                    t[key].append(s)
                if fn is not None and key in ("one", "multi"):
                    t["torch"].append(torch_time(fn, args.min_time))
        med = {k: statistics.median(v) if v else None for k, v in t.items()}

        def ratio(a, b):
            if med[a] is None or med[b] is None:
                return "-"
            return "%.2f" % (med[a] / med[b])

        def ms(k):
            return "%.4f" % (med[k] * 1e3) if med[k] is not None else "-"
        print("%-16s %10s %10s %10s %10s %8s %8s %8s %8s  %s" % (
            name, ms("one"), ms("multi"), ms("naive"), ms("torch"),
            ratio("naive", "one"), ratio("multi", "one"),
            ratio("torch", "one"), ratio("mnaive", "multi"),
            "ok" if checks == {"ok"} else ",".join(sorted(checks))))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
