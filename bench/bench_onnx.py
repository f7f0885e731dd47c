#!/usr/bin/python3
"""Real models from PyTorch through ONNX: Tessel against PyTorch.

Exports ResNet-18, MobileNetV2, SqueezeNet 1.1 (torchvision, random
weights: nothing is downloaded) and a TransformerEncoderLayer (d_model
768, 12 heads, 128 tokens) to ONNX with PyTorch's exporter, imports each
with `tessel run MODEL.onnx` (the importer runs on the way in), checks
Tessel's output against PyTorch's on the same input, and times, at each
thread count, in alternating rounds so that both share the machine's load:

  - Tessel static: `tessel run MODEL.onnx --threads N` (its median);
  - Tessel tuned (with --tune): after `tessel tune MODEL.onnx` with its
    default budget, `tessel run --records LOG`;
  - PyTorch eager, and `torch.jit.optimize_for_inference` of the traced
    module (torch.no_grad(), torch.set_num_threads(N); bench/torch_ofi.py,
    which makes the first calls, those that compile it, and whose output
    is compared with eager's);
  - ONNX Runtime on the same .onnx file (npm's onnxruntime-node, graph
    optimisations on, N intra-op threads; bench/ort_time.mjs), when Node.js
    and the package are found: `npm install --ignore-scripts
    onnxruntime-node` in the folder given by --ort or $TESSEL_ORT_DIR
    (the package's install script fetches GPU binaries, which fails
    offline and is not needed); bench/ort_node.py finds it and runs
    ort_time.mjs.

It prints one row per model and thread count: medians of the round
medians in ms, and the ratios PyTorch / Tessel (above 1: Tessel faster).

usage: bench_onnx.py BUILD [--threads 1,2] [--rounds 3] [--models ...]
                     [--tune] [--work DIR] [--ort NPM_DIR]

--work DIR keeps the exported models and inputs there; without it they go
to a temporary folder, removed at the end.
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
            return argv[i + 1].split(",")[0]
    return None


# Debian's PyTorch runs its matrix products with OpenBLAS, whose thread
# pool ignores torch.set_num_threads; its size is fixed before loading.
if threads_of_argv(sys.argv) == "1":
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import ort_node  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "onnx"))
from torch_models import calibrate  # noqa: E402
import torch_ofi  # noqa: E402

MODELS = {
    "resnet18": lambda: (torchvision.models.resnet18(), (1, 3, 224, 224)),
    "mobilenet_v2": lambda: (torchvision.models.mobilenet_v2(),
                             (1, 3, 224, 224)),
    "squeezenet1_1": lambda: (torchvision.models.squeezenet1_1(),
                              (1, 3, 224, 224)),
    "transformer": lambda: (torch.nn.TransformerEncoderLayer(
        d_model=768, nhead=12, batch_first=True), (1, 128, 768)),
}


def export(name, work):
    """The model in eval mode, its input, and the path of its ONNX file."""
    torch.manual_seed(0)
    model, shape = MODELS[name]()
    # Batch norms from a random batch, as the ONNX tests do: with their
    # defaults and random weights MobileNetV2's output was all zeros,
    # and comparing outputs checked nothing.
    x = torch.randn(*shape)
    calibrate(model, (x,))
    model.eval()
    path = os.path.join(work, name + ".onnx")
    # Not under no_grad: PyTorch's fast path of the encoder layer there
    # has no ONNX export.
    torch.onnx.export(model, x, path, opset_version=13,
                      input_names=["x"], output_names=["y"])
    return model, x, path


def tessel_run(build, path, threads, extra, inputs=None, out=None,
               min_time=1.0):
    """Median ms of `tessel run` on the model, and its JSON."""
    cmd = [os.path.join(build, "tools/tessel"), "run", path, "--threads",
           str(threads), "--json", "--min-time", str(min_time)] + extra
    if inputs:
        cmd += ["--inputs", inputs, "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr[-2000:]))
    j = json.loads(r.stdout)
    return j["median_ms"], j


def torch_time(fn, x, min_time=1.0):
    """Median ms of fn(x) over at least min_time seconds."""
    times = []
    with torch.no_grad():
        fn(x)
        start = time.perf_counter()
        while time.perf_counter() - start < min_time or len(times) < 3:
            t = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def check(build, model, x, path, work):
    """Compare Tessel's output with PyTorch's on input x."""
    d = tempfile.mkdtemp(dir=work)
    np.save(os.path.join(d, "x.npy"), x.numpy())
    tessel_run(build, path, 1, ["--min-time", "0"], inputs=d,
               out=os.path.join(d, "out"), min_time=0)
    got = np.load(os.path.join(d, "out", "y.npy"))
    with torch.no_grad():
        want = model(x).numpy()
    err = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    # An output of zeros would match anything that is zero too.
    ok = got.shape == want.shape and scale > 0 and \
        err <= 1e-3 * max(scale, 1.0)
    return ok, err, scale


def tune(build, path, threads, work):
    log = os.path.join(work, os.path.basename(path) + ".t%d.json" % threads)
    if not os.path.exists(log):
        subprocess.run([os.path.join(build, "tools/tessel"), "tune", path,
                        "--threads", str(threads), "--log", log],
                       check=True, stdout=subprocess.DEVNULL)
    return log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--work", default=None)
    ap.add_argument("--ort", default=None,
                    help="folder where npm installed onnxruntime-node "
                    "(default: $%s)" % ort_node.ENV_DIR)
    a = ap.parse_args()
    if a.work:
        os.makedirs(a.work, exist_ok=True)
        run(a, a.work)
        return
    # The exported models (about 70 MB for the three CNNs) go with the
    # folder unless --work names one to keep.
    with tempfile.TemporaryDirectory(prefix="tessel-onnx-") as work:
        run(a, work)


def run(a, work):
    """Export, check and time each model of "a" in the folder "work"."""
    ort_dir, no_ort = ort_node.find(a.ort)
    if not ort_dir:
        print("ONNX Runtime: %s (--ort %s, $%s %s): its column is left "
              "empty" % (no_ort, a.ort, ort_node.ENV_DIR,
                         os.environ.get(ort_node.ENV_DIR)))
    print("| model | threads | check (max abs err) | Tessel static ms | "
          "tuned ms | eager ms | optimize_for_inference ms | ORT ms | "
          "eager / static | ofi / static | ORT / static | ofi / tuned |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in a.models.split(","):
        model, x, path = export(name, work)
        ok, err, scale = check(a.build, model, x, path, work)
        x_npy = os.path.join(work, name + ".x.npy")
        np.save(x_npy, x.numpy())
        ofi, outs = torch_ofi.optimize(model, x)
        with torch.no_grad():
            want = model(x).numpy()
        tol = 1e-3 * max(float(np.max(np.abs(want))), 1.0)
        if any(y.shape != want.shape or float(np.max(np.abs(
                y.numpy() - want))) > tol for y in outs):
            print("optimize_for_inference's output differs from PyTorch's "
                  "on", name)
        for threads in [int(t) for t in a.threads.split(",")]:
            torch.set_num_threads(threads)
            log = tune(a.build, path, threads, work) if a.tune else None
            st, tu, ea, of, rt = [], [], [], [], []
            for _ in range(a.rounds):
                st.append(tessel_run(a.build, path, threads, [])[0])
                r = None
                if ort_dir:
                    try:
                        r = ort_node.time_model(ort_dir, path, x_npy,
                                                threads)
                    except RuntimeError as e:
                        print("ONNX Runtime failed: %s" % e, file=sys.stderr)
                if r:
                    rt.append(r[0])
                    with torch.no_grad():
                        want = model(x).numpy().ravel()
                    if float(np.max(np.abs(r[1] - want))) > \
                            1e-3 * max(float(np.max(np.abs(want))), 1.0):
                        print("ONNX Runtime's output differs from "
                              "PyTorch's on", name)
                if log:
                    tu.append(tessel_run(a.build, path, threads,
                                         ["--records", log])[0])
                ea.append(torch_time(model, x))
                of.append(torch_time(ofi, x))
            s, e, o = (statistics.median(v) for v in (st, ea, of))
            t = statistics.median(tu) if tu else None
            rm = statistics.median(rt) if rt else None
            print("| %s | %d | %s (%.1e of %.1f) | %.2f | %s | %.2f | %.2f | "
                  "%s | %.2f | %.2f | %s | %s |" % (
                      name, threads, "match" if ok else "DIFFER", err,
                      scale, s, "%.2f" % t if t else "-", e, o,
                      "%.2f" % rm if rm else "-", e / s, o / s,
                      "%.2f" % (rm / s) if rm else "-",
                      "%.2f" % (o / t) if t else "-"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
