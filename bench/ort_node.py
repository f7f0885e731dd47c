"""ONNX Runtime for the benchmark scripts, through Node.js.

ONNX Runtime's Python package is not in Debian; npm's onnxruntime-node
(its CPU library) is, once installed with `npm install --ignore-scripts
onnxruntime-node` in some folder (its install script fetches GPU
binaries, which fails offline and is not needed).  bench/ort_time.mjs
loads a model there, graph optimisations on, N intra-op threads and one
inter-op thread, and times it; this module finds the package and runs
that script.
"""
import base64
import json
import os
import shutil
import subprocess

import numpy as np

ENV_DIR = "TESSEL_ORT_DIR"
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "ort_time.mjs")


def find(folder=None):
    """(folder, None) for the first of folder and $TESSEL_ORT_DIR that holds
    node_modules/onnxruntime-node, with Node.js on the PATH; else (None,
    why), why being "no Node.js" or "no onnxruntime-node"."""
    if shutil.which("node") is None:
        return None, "no Node.js"
    for d in (folder, os.environ.get(ENV_DIR)):
        if d and os.path.isdir(os.path.join(d, "node_modules",
                                            "onnxruntime-node")):
            return d, None
    return None, "no onnxruntime-node"


def version(folder):
    """The version of the onnxruntime-node package in folder."""
    with open(os.path.join(folder, "node_modules", "onnxruntime-node",
                           "package.json")) as f:
        return json.load(f).get("version", "?")


def time_model(folder, model, x_npy, threads, min_time=1.0, cpu=False):
    """Median ms of ONNX Runtime's runs of the model over at least min_time
    seconds (the process's CPU clock if cpu, else the wall clock), its one
    input read from x_npy (f32), and its first output, flat f32.  Raises
    RuntimeError when Node.js or ONNX Runtime fails."""
    env = dict(os.environ, NODE_PATH=os.path.join(folder, "node_modules"))
    cmd = ["node", SCRIPT, model, x_npy, str(threads), str(min_time)]
    if cpu:
        cmd.append("cpu")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr[-2000:]))
    j = json.loads(r.stdout)
    out = np.frombuffer(base64.b64decode(j["output"]), dtype=np.float32)
    return j["median_ms"], out
