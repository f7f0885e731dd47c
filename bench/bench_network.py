#!/usr/bin/python3
"""End-to-end inference latency of whole networks: Tessel against PyTorch
(eager and torch.jit.optimize_for_inference) and ONNX Runtime.

For each case, bench/bench_network (built in BUILD) writes the network's
inputs and its own output as .npy files, then serves timing requests.  This
script loads the same inputs into PyTorch (functional form of the same
network, torch.no_grad(), the same number of threads) and compares the
outputs.  With the same weights held by a module as buffers, it traces
that network in eval mode and runs torch.jit.optimize_for_inference on
the trace (bench/torch_ofi.py, as bench/bench_onnx.py does: the trace is
frozen, then rewritten for inference), makes the first calls that
compile it, and compares its output too.  It exports the module with
torch.onnx.export (opset 13) and runs it in ONNX Runtime (npm's
onnxruntime-node through bench/ort_time.mjs: graph optimisations on,
--threads intra-op threads, one inter-op thread), whose output is compared
too.  It interleaves timing rounds of the four so that they share the
machine's load, and prints one table row per case with the medians of the
round medians and the ratios PyTorch eager time / Tessel time, ofi time /
Tessel time and ORT time / Tessel time, with their ranges over the rounds
(above 1: Tessel is faster), and the largest errors of Tessel's, ofi's
and ORT's outputs relative to eager PyTorch's largest magnitude.

usage: bench_network.py BUILD [--threads N] [--rounds R] [--topk K]
                        [--tune ROUNDS --trials N] [--records LOG]
                        [--ort DIR]
                        [--cases lenet:1,lenet:64,mlp:64,resnet18:1]

The transformer case is transformer:SEQ (BERT-base layer on SEQ tokens).
--records LOG applies the best record of each task in LOG (from tessel
tune --threads N), static where it has none.  ONNX Runtime is looked for
in DIR/node_modules/onnxruntime-node, then under $TESSEL_ORT_DIR (`npm
install --ignore-scripts onnxruntime-node` in such a folder); without it,
or without Node.js, its columns say so and the rest runs; so do the ofi
columns ("ofi failed", the reason on stderr) where tracing or
optimize_for_inference fails.  With BENCH_CPU_TIME set, all four are
timed with their process's CPU clock, which a shared, loaded machine
disturbs less than the wall clock.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings


def threads_of_argv(argv):
    """The value of --threads in argv, or None."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return None


# Debian's PyTorch does its matrix products with OpenBLAS, whose own
# thread pool ignores torch.set_num_threads: left alone, a one-thread run
# of ResNet-18 keeps a second thread busy (twice the CPU time for the same
# wall time).  Its size must be set before the library loads.
if threads_of_argv(sys.argv):
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(var, threads_of_argv(sys.argv))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import ort_node  # noqa: E402
import torch_ofi  # noqa: E402


def load(d, name):
    return torch.from_numpy(np.load(os.path.join(d, name + ".npy")))


# Each builder reads a case's .npy files from d and returns the network as
# a function of its input and a dict of its weights, with that input and
# those weights.


def lenet(d):
    w = {k: load(d, k) for k in
         ["W1", "B1", "W2", "B2", "W3", "B3", "W4", "B4"]}

    def f(x, w):
        h = F.max_pool2d(F.relu(F.conv2d(x, w["W1"], w["B1"])), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w["W2"], w["B2"])), 2)
        h = F.relu(F.linear(h.flatten(1), w["W3"].flatten(1), w["B3"]))
        return F.softmax(F.linear(h, w["W4"], w["B4"]), dim=1)
    return f, load(d, "X"), w


def mlp(d):
    w = {k: load(d, k) for k in ["W1", "B1", "W2", "B2", "W3", "B3"]}

    def f(x, w):
        h = F.relu(F.linear(x, w["W1"], w["B1"]))
        h = F.relu(F.linear(h, w["W2"], w["B2"]))
        return F.linear(h, w["W3"], w["B3"])
    return f, load(d, "X"), w


def resnet18(d):
    p = {}
    for fn in os.listdir(d):
        if fn.endswith(".npy") and fn[:-4] not in ("X", "Y"):
            p[fn[:-4]] = load(d, fn[:-4])

    def conv(h, p, pre, stride, pad):
        return F.conv2d(h, p[pre + "_W"], p[pre + "_B"], stride=stride,
                        padding=pad)

    def f(x, p):
        h = F.relu(conv(x, p, "S", 2, 3))
        h = F.max_pool2d(h, 3, stride=2, padding=1)
        for st in range(4):
            for bl in "ab":
                pre = "L%d%s" % (st + 1, bl)
                s = 2 if st > 0 and bl == "a" else 1
                sc = conv(h, p, pre + "_D", s, 0) if pre + "_D_W" in p \
                    else h
                y = F.relu(conv(h, p, pre + "_A", s, 1))
                h = F.relu(conv(y, p, pre + "_B", 1, 1) + sc)
        h = h.mean(dim=(2, 3))
        return F.linear(h, p["FC_W"], p["FC_B"])
    return f, load(d, "X"), p


def transformer(d):
    n = {k: load(d, k) for k in
         ["Wq", "Bq", "Wk", "Bk", "Wv", "Bv", "Wo", "Bo", "G1", "E1",
          "W1", "B1", "W2", "B2", "G2", "E2"]}
    heads = 12

    def f(x, n):
        s, hid = x.shape
        q = F.linear(x, n["Wq"], n["Bq"]).view(s, heads, -1).transpose(0, 1)
        k = F.linear(x, n["Wk"], n["Bk"]).view(s, heads, -1).transpose(0, 1)
        v = F.linear(x, n["Wv"], n["Bv"]).view(s, heads, -1).transpose(0, 1)
        a = torch.softmax(q @ k.transpose(1, 2) / (q.shape[-1] ** 0.5), -1)
        c = (a @ v).transpose(0, 1).reshape(s, hid)
        a1 = F.linear(c, n["Wo"], n["Bo"]) + x
        n1 = F.layer_norm(a1, (hid,), n["G1"], n["E1"], 1e-5)
        h = F.gelu(F.linear(n1, n["W1"], n["B1"]))
        a2 = F.linear(h, n["W2"], n["B2"]) + n1
        return F.layer_norm(a2, (hid,), n["G2"], n["E2"], 1e-5)
    return f, load(d, "X"), n


BUILDERS = {"lenet": lenet, "mlp": mlp, "resnet18": resnet18,
            "transformer": transformer}


class Twin(torch.nn.Module):
    """The network f of a builder as a module, its weights as buffers, for
    torch.onnx.export (which stores them as the model's initializers) and
    torch.jit.trace (freezing the trace makes them constants)."""

    def __init__(self, f, weights):
        super().__init__()
        self.f = f
        self.names = list(weights)
        for k, v in weights.items():
            self.register_buffer(k, v)

    def forward(self, x):
        return self.f(x, {k: getattr(self, k) for k in self.names})


def export_onnx(f, x, weights, path):
    """Write the network to path as ONNX (opset 13, input "x")."""
    with warnings.catch_warnings():
        # The tracer's warnings about shapes taken as constants: the
        # model is exported for this input's shape only.
        warnings.simplefilter("ignore")
        torch.onnx.export(Twin(f, weights).eval(), x, path, opset_version=13,
                          input_names=["x"], output_names=["y"])


CPU_CLOCK = bool(os.environ.get("BENCH_CPU_TIME"))
CLOCK = time.process_time if CPU_CLOCK else time.perf_counter


def time_torch(f, seconds):
    """Median and min of runs of f adding up to at least seconds."""
    f()
    samples = []
    total = 0.0
    while len(samples) < 3 or total < seconds:
        t0 = CLOCK()
        f()
        dt = CLOCK() - t0
        samples.append(dt)
        total += dt
    return statistics.median(samples), min(samples)


def time_ort(ort_dir, model, x_npy, args):
    """ONNX Runtime's median in seconds and its output (flat), or None after
    telling why on stderr."""
    try:
        ms, out = ort_node.time_model(ort_dir, model, x_npy, args.threads,
                                      args.seconds, cpu=CPU_CLOCK)
    except RuntimeError as e:
        print("ONNX Runtime failed: %s" % e, file=sys.stderr)
        return None
    return ms / 1e3, out


def optimize(f, x, weights, want, scale):
    """torch.jit.optimize_for_inference of the network, compiled by its
    first calls (bench/torch_ofi.py), and the largest error of their
    outputs against want relative to scale; or (None, None) after telling
    why on stderr."""
    try:
        ofi, outs = torch_ofi.optimize(Twin(f, weights), x)
    except Exception as e:  # the tracer and the optimiser raise many kinds
        print("optimize_for_inference failed: %s" % e, file=sys.stderr)
        return None, None
    err = 0.0
    for y in outs:
        y = y.detach().numpy()
        if y.shape != want.shape:
            return ofi, float("inf")
        err = max(err, float(np.max(np.abs(y - want))) / scale)
    return ofi, err


def run_case(build, net, batch, args, ort_dir):
    """Compile and check the case, then time Tessel, PyTorch eager,
    PyTorch's optimize_for_inference (where it succeeds) and (with
    ort_dir) ONNX Runtime in interleaved rounds."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [os.path.join(build, "bench", "bench_network"), net,
               str(batch), d, "--threads", str(args.threads)]
        if args.topk > 1:
            cmd += ["--topk", str(args.topk)]
        if args.tune > 0:
            cmd += ["--tune", str(args.tune), "--trials", str(args.trials)]
        if args.records:
            cmd += ["--records", args.records]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        ready = proc.stdout.readline().split()
        compile_s = time.perf_counter() - t0
        if not ready or ready[0] != "ready":
            proc.kill()
            raise RuntimeError("bench_network %s %d failed" % (net, batch))
        out_name, ntasks = ready[1], int(ready[2])
        f, x, w = BUILDERS[net](d)
        with torch.no_grad():
            want = f(x, w).numpy()
        got = np.load(os.path.join(d, out_name + ".npy"))
        err = float(np.max(np.abs(got - want)))
        scale = float(np.max(np.abs(want))) or 1.0
        ofi, ofi_err = optimize(f, x, w, want, scale)
        model = os.path.join(d, net + ".onnx")
        if ort_dir:
            try:
                export_onnx(f, x, w, model)
            except Exception as e:  # the exporter raises many kinds
                print("torch.onnx.export failed: %s" % e, file=sys.stderr)
                ort_dir = None
        ts, pt, ot, rt, ort_err = [], [], [], [], 0.0
        with torch.no_grad():
            for _ in range(args.rounds):
                proc.stdin.write("time %g\n" % args.seconds)
                proc.stdin.flush()
                ts.append(float(proc.stdout.readline().split()[0]))
                pt.append(time_torch(lambda: f(x, w), args.seconds)[0])
                if ofi is not None:
                    try:
                        ot.append(time_torch(lambda: ofi(x),
                                             args.seconds)[0])
                    except Exception as e:
                        print("optimize_for_inference failed: %s" % e,
                              file=sys.stderr)
                        ofi = None
                r = time_ort(ort_dir, model, os.path.join(d, "X.npy"),
                             args) if ort_dir else None
                if r is None:
                    ort_dir = None
                    continue
                rt.append(r[0])
                if r[1].size != want.size:
                    ort_err = float("inf")
                else:
                    ort_err = max(ort_err, float(np.max(np.abs(
                        r[1] - want.ravel()))) / scale)
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait()
    t, p = statistics.median(ts), statistics.median(pt)
    ratios = [a / b for a, b in zip(pt, ts)]
    res = {"net": net, "batch": batch, "tessel_ms": t * 1e3,
           "torch_ms": p * 1e3, "ratio": p / t,
           "ratio_lo": min(ratios), "ratio_hi": max(ratios),
           "rel_err": err / scale, "tasks": ntasks,
           "compile_s": compile_s, "arena_mib": float(ready[3]),
           "ofi_ms": None, "ort_ms": None}
    if ot and len(ot) == len(ts):
        ratios = [a / b for a, b in zip(ot, ts)]
        res.update(ofi_ms=statistics.median(ot) * 1e3,
                   ofi_ratio=statistics.median(ot) / t,
                   ofi_lo=min(ratios), ofi_hi=max(ratios), ofi_err=ofi_err)
    if rt and len(rt) == len(ts):
        ratios = [a / b for a, b in zip(rt, ts)]
        res.update(ort_ms=statistics.median(rt) * 1e3,
                   ort_ratio=statistics.median(rt) / t,
                   ort_lo=min(ratios), ort_hi=max(ratios), ort_err=ort_err)
    return res


def other_cells(r, key, failed):
    """The time, ratio and error cells of the library "key" ("ofi",
    "ort") in the result "r" of a case, with "failed" where it did not
    run, and whether its output matched."""
    if r[key + "_ms"] is None:
        return "%s | -" % failed, "-", True
    cells = "%.3f | %.3f (%.3f-%.3f)" % (r[key + "_ms"], r[key + "_ratio"],
                                        r[key + "_lo"], r[key + "_hi"])
    return cells, "%.1e" % r[key + "_err"], r[key + "_err"] < 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--topk", type=int, default=0)
    ap.add_argument("--tune", type=int, default=0,
                    help="rounds of tuning shared by the tasks (0: static)")
    ap.add_argument("--trials", type=int, default=16,
                    help="measurements per tuning round")
    ap.add_argument("--records", default=None,
                    help="records log: the best record of each task")
    ap.add_argument("--ort", default=None, metavar="DIR",
                    help="folder where npm installed onnxruntime-node "
                    "(default: $%s)" % ort_node.ENV_DIR)
    ap.add_argument("--cases", default="lenet:1,lenet:64,mlp:64,resnet18:1")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ort_dir, no_ort = ort_node.find(args.ort)
    mode = "static"
    if args.topk > 1:
        mode = "top-%d measured" % args.topk
    if args.tune > 0:
        mode = "tuned, %d rounds of %d trials" % (args.tune, args.trials)
    if args.records:
        mode += ", records of %s" % args.records
    print("# threads %d, %d interleaved rounds, torch %s, %s, %s, %s clock"
          % (args.threads, args.rounds, torch.__version__,
             "onnxruntime-node %s in %s" % (ort_node.version(ort_dir),
                                            ort_dir) if ort_dir else no_ort,
             mode, "CPU" if CPU_CLOCK else "wall"))
    print("| network | batch | tasks | arena MiB | Tessel ms | PyTorch ms "
          "| PyTorch/Tessel (range) | ofi ms | ofi/Tessel (range) "
          "| ORT ms | ORT/Tessel (range) | max rel. error "
          "| ofi rel. error | ORT rel. error | compile s |")
    print("|---" * 15 + "|")
    ok = True
    for case in args.cases.split(","):
        net, batch = case.split(":")
        r = run_case(args.build, net, int(batch), args, ort_dir)
        ok &= r["rel_err"] < 1e-3
        ofi, ofi_err, good = other_cells(r, "ofi", "ofi failed")
        ok &= good
        ort, ort_err, good = other_cells(r, "ort", no_ort or "ORT failed")
        ok &= good
        print("| %s | %d | %d | %.2f | %.3f | %.3f | %.3f (%.3f-%.3f) "
              "| %s | %s | %.1e | %s | %s | %.1f |" % (
                  r["net"], r["batch"], r["tasks"], r["arena_mib"],
                  r["tessel_ms"], r["torch_ms"], r["ratio"], r["ratio_lo"],
                  r["ratio_hi"], ofi, ort, r["rel_err"], ofi_err, ort_err,
                  r["compile_s"]), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
